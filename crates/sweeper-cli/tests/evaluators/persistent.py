"""A persistent test evaluator: one JSON candidate per stdin line, one answer line each.

Each start appends the pid to $SWEEPER_TEST_START_LOG. The candidate's `action` parameter
picks the behaviour; the default answer reports the pid and how many candidates it saw.
"""

import json
import os
import sys
import time

log = os.environ.get("SWEEPER_TEST_START_LOG")
if log:
    with open(log, "a") as f:
        f.write(f"{os.getpid()}\n")
sys.stderr.write("worker ready\n")
sys.stderr.flush()

calls = 0
for line in sys.stdin:
    calls += 1
    candidate = json.loads(line)
    action = candidate["parameters"].get("action", "report")
    if action == "die":
        sys.stderr.write("worker crashed on candidate\n")
        sys.stderr.flush()
        os._exit(1)
    elif action == "exit3":
        sys.stderr.write("backend trtllm is not installed\n")
        sys.exit(3)
    elif action == "quit":
        sys.exit(0)
    elif action == "hang":
        time.sleep(60)
    elif action == "unsupported":
        answer = {"status": "unsupported", "reason": "tp=8 is not supported"}
    elif action == "nan":
        answer = {"throughput": float("nan")}
    elif action == "wrong_id":
        answer = {"id": candidate["id"] + 1000, "throughput": 1.0}
    elif action == "garbage":
        print("loading tables...", flush=True)
        continue
    else:
        if action == "blank":
            print(flush=True)
        # `id` names the candidate answered (the protocol's); `candidate` repeats it as a
        # metric, which the tests read back.
        answer = {"pid": os.getpid(), "calls": calls, "id": candidate["id"],
                  "candidate": candidate["id"]}
    print(json.dumps(answer), flush=True)
    if action == "answer_and_exit":
        sys.exit(0)
