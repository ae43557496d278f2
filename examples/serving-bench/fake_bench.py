#!/usr/bin/env python3
"""A stand-in for `vllm bench serve`, for testing bench.py: checks that the server answers
/health, then writes a result file with the keys `vllm bench serve --save-result` writes,
numbers made up from the concurrency."""
import argparse
import json
import urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--concurrency", type=int, required=True)
ap.add_argument("--result", required=True)
args = ap.parse_args()
with urllib.request.urlopen(f"http://127.0.0.1:{args.port}/health", timeout=5) as r:
    assert r.status == 200
c = args.concurrency
with open(args.result, "w") as f:
    json.dump({
        "duration": 60.0,
        "output_throughput": 40.0 * c,
        "mean_ttft_ms": 50.0 + c,
        "mean_tpot_ms": 20.0 + c / 4,
        "mean_itl_ms": 20.0 + c / 4,
        "mean_e2el_ms": 50.0 + c + 500 * (20.0 + c / 4),
    }, f)
print("fake benchmark done")
