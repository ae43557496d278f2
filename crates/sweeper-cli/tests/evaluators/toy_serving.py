#!/usr/bin/env python3
"""A toy serving evaluator for sweeper's end-to-end tests.

Reads one candidate JSON object on stdin, prints one report on stdout. tp=8 is
"unsupported" (exit 3); replicas=3 fails (exit 1 with a message on stderr).
"""
import json
import sys

c = json.load(sys.stdin)
p = c["parameters"]
tp, replicas = int(p["tp"]), int(p["replicas"])
if tp == 8:
    print("tp=8 is not supported by this toy", file=sys.stderr)
    sys.exit(3)
if replicas == 3:
    print("toy crashed on replicas=3", file=sys.stderr)
    sys.exit(1)
gpus = tp * replicas
conc = c.get("concurrency") or 8
per_user = 120.0 * tp ** 0.5 / (1 + conc / 32)
report = {
    "output_throughput_tok_s": per_user * conc * replicas,
    "mean_output_token_throughput_per_user": per_user,
    "mean_e2e_latency_ms": 500 * 1000 / per_user,
    "gpu_hours": gpus * 0.25,
    "duration_ms": 900000,
}
if c.get("used_gpus") is None:
    report["used_gpus"] = gpus
json.dump(report, sys.stdout)
