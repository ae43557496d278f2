#!/usr/bin/env python3
"""A command evaluator for the schedule benchmark: sleeps a time drawn per candidate.

The sleep is 0.1-1.0 s (a 10x range; scaled by $SLEEPY_SCALE, default 1), drawn uniformly
from a hash of the candidate's parameters, so the same candidate always takes the same
time whichever schedule proposed it. The report is a smooth serving-like function of the
parameters, plus `eval_seconds` (the time slept), which the benchmark sums.
"""
import hashlib
import json
import os
import sys
import time

c = json.load(sys.stdin)
p = c["parameters"]
key = json.dumps(p, sort_keys=True).encode()
u = int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / 2.0**64
seconds = (0.1 + 0.9 * u) * float(os.environ.get("SLEEPY_SCALE", "1"))
time.sleep(seconds)
tp, replicas = int(p["tp"]), int(p["replicas"])
ratio = c.get("kv_load_ratio")
if ratio is None:
    ratio = 0.5
gpus = tp * replicas
per_user = 200.0 / (1.0 + 8.0 * ratio) * tp**0.5
json.dump(
    {
        "output_throughput_tok_s": gpus * 100.0 * (0.2 + ratio) * (1.0 - 0.05 * tp),
        "mean_output_token_throughput_per_user": per_user,
        "gpu_hours": gpus * 0.5,
        "duration_ms": 1800000,
        "eval_seconds": seconds,
    },
    sys.stdout,
)
