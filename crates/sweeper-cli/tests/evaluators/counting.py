#!/usr/bin/env python3
"""A toy serving evaluator that counts its invocations, for the kill/resume tests.

Appends the candidate's id to the file named by $COUNT_LOG when it starts, sleeps
$EVAL_SLEEP seconds (default 0.05), and prints a report that depends only on the
parameters. While the file named by $BROKEN_FLAG exists, it crashes instead (exit 1).
"""
import json
import os
import sys
import time

c = json.load(sys.stdin)
log = os.environ.get("COUNT_LOG")
if log:
    with open(log, "a") as f:
        f.write(f"{c['id']}\n")
flag = os.environ.get("BROKEN_FLAG")
if flag and os.path.exists(flag):
    print(f"counting.py: broken while {flag} exists", file=sys.stderr)
    sys.exit(1)
time.sleep(float(os.environ.get("EVAL_SLEEP", "0.05")))
p = c["parameters"]
tp, replicas = int(p["tp"]), int(p["replicas"])
ratio = c.get("kv_load_ratio")
if ratio is None:
    ratio = 0.5
gpus = tp * replicas
per_user = 200.0 / (1.0 + 8.0 * ratio) * tp ** 0.5
report = {
    "output_throughput_tok_s": gpus * 100.0 * (0.2 + ratio) * (1.0 - 0.05 * tp),
    "mean_output_token_throughput_per_user": per_user,
    "mean_e2e_latency_ms": 100000.0 / per_user,
    "gpu_hours": gpus * 0.5,
    "duration_ms": 1800000,
}
json.dump(report, sys.stdout)
