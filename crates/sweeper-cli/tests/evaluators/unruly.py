"""A persistent test evaluator that breaks the line protocol on purpose (issue 13).

One JSON candidate per stdin line. Every answer carries the candidate's `id` (the
protocol's) and the same number again as the metric `candidate`, so that a test can tell
which candidate an answer was meant for. The candidate's `action` parameter picks the
misbehaviour:

- `late`: answers, then 0.3 s later answers the same candidate again (with `late: 1`).
- `behind`: first repeats its answer to the previous candidate, then answers this one.
- `status_id`: answers with a status object that carries the id.
- `flood`: answers, then prints $UNRULY_FLOOD_MB MiB of stray lines (default 200) before
  reading on, and writes how many into the file named by $UNRULY_FLOODED when done.
- `status_then_exit`: answers with a status object, then exits 50 ms later.
- `answer_then_close`: answers, closes its stdin, and lives on for a minute.
- anything else: answers.
"""

import json
import os
import sys
import time

calls = 0
previous = None


def say(answer):
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    calls += 1
    candidate = json.loads(line)
    ident = candidate["id"]
    action = candidate["parameters"].get("action", "report")
    answer = {"id": ident, "candidate": ident, "calls": calls, "pid": os.getpid(), "late": 0}
    if action == "behind" and previous is not None:
        say(previous)
    if action in ("status_id", "status_then_exit"):
        say({"status": "infeasible", "reason": "kv cache too small", "id": ident})
    else:
        say(answer)
    previous = answer
    if action == "late":
        time.sleep(0.3)
        say(dict(answer, late=1))
    elif action == "flood":
        stray = json.dumps({"id": ident, "log": "x" * 80}) + "\n"
        chunk = stray * ((1 << 20) // len(stray))
        megabytes = int(os.environ.get("UNRULY_FLOOD_MB", "200"))
        for _ in range(megabytes):
            sys.stdout.write(chunk)
        sys.stdout.flush()
        # How many stray lines, written to a name that appears whole.
        done = os.environ["UNRULY_FLOODED"]
        with open(done + ".tmp", "w") as f:
            f.write(str(megabytes * ((1 << 20) // len(stray))))
        os.rename(done + ".tmp", done)
    elif action == "status_then_exit":
        time.sleep(0.05)
        sys.exit(0)
    elif action == "answer_then_close":
        sys.stdin.close()
        os.close(0)
        time.sleep(60)
        sys.exit(0)
