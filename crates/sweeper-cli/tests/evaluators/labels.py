#!/usr/bin/env python3
"""An evaluator whose reports say more than sweeper scores, for the tests that check that
every result file keeps it: a label ("note": "hello"), a label that a spreadsheet would run
as a formula, and a numeric extra ("my_extra": 3.5).

With the argument `infinite`, tp=1 reports an unbounded mean end-to-end latency, which
Python's json module writes as the bare token Infinity.
"""
import json
import sys

c = json.load(sys.stdin)
p = c["parameters"]
tp, replicas = int(p["tp"]), int(p["replicas"])
infinite = "infinite" in sys.argv[1:]
gpus = tp * replicas
report = {
    "output_throughput_tok_s": 100.0 * gpus,
    "mean_e2e_latency_ms": float("inf") if infinite and tp == 1 else 1000.0 / tp,
    "gpu_hours": gpus * 0.25,
    "duration_ms": 900000,
    "my_extra": 3.5,
    "note": "hello",
    "formula": "=cmd|' /C calc'!A0",
}
json.dump(report, sys.stdout)
