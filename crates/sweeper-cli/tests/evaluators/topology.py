#!/usr/bin/env python3
"""A toy serving evaluator for topology sweeps (SPEC 8), for the end-to-end tests.

Reads a candidate with the flat keys of a deployment (agg: tp, attention_dp, moe_tp, moe_ep,
strategy, replicas; disagg: the same prefixed prefill_/decode_), checks that it is legal
(width rule, no key of the other branch, used_gpus the sum over its pools) and exits 1 when
it is not, appends the candidate's id to $COUNT_LOG, sleeps $EVAL_SLEEP seconds (default
0.02), and prints a report that depends only on the shape.
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
p = c["parameters"]
SHAPE = ("tp", "pp", "attention_dp", "moe_tp", "moe_ep", "strategy", "replicas")


def fail(why):
    print(f"topology.py: illegal candidate: {why}: {json.dumps(p)}", file=sys.stderr)
    sys.exit(1)


def pool(prefix):
    s = {k: p[prefix + k] for k in SHAPE}
    if s["pp"] != 1:
        fail("pp != 1")
    if s["tp"] * s["attention_dp"] != s["moe_tp"] * s["moe_ep"] and not (
        s["moe_tp"] == 1 and s["moe_ep"] == 1
    ):
        fail("width rule")
    return s, s["tp"] * s["attention_dp"] * s["replicas"]


mode = p["deployment_mode"]
if mode == "agg":
    if any(k.startswith(("prefill_", "decode_")) for k in p):
        fail("disagg keys in an agg candidate")
    s, gpus = pool("")
    prefill_gpus, decode = 0, s
elif mode == "disagg":
    if any(k in p for k in SHAPE) or any(k.startswith("agg_") for k in p):
        fail("agg keys in a disagg candidate")
    ps, prefill_gpus = pool("prefill_")
    decode, decode_gpus = pool("decode_")
    gpus = prefill_gpus + decode_gpus
else:
    fail(f"deployment_mode {mode!r}")
if p["used_gpus"] != gpus or c.get("used_gpus") != gpus:
    fail(f"used_gpus {p['used_gpus']} / {c.get('used_gpus')} != {gpus}")
time.sleep(float(os.environ.get("EVAL_SLEEP", "0.02")))
width = decode["tp"] * decode["attention_dp"]
dp_bonus = 1.3 if decode["attention_dp"] > 1 else 1.0
ep_bonus = 1.2 if decode["moe_ep"] > 1 else 1.0
split = 1.15 if mode == "disagg" else 1.0
per_gpu = 300.0 * dp_bonus * ep_bonus * split / (1.0 + 0.1 * width)
per_user = 40.0 * width ** 0.5 * (1.1 if mode == "disagg" else 1.0) / dp_bonus
report = {
    "output_throughput_tok_s": per_gpu * gpus,
    "mean_output_token_throughput_per_user": per_user,
    "mean_e2e_latency_ms": 100000.0 / per_user,
    "gpu_hours": gpus * 0.5,
    "duration_ms": 1800000,
}
json.dump(report, sys.stdout)
