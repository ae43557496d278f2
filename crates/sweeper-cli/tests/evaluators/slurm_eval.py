#!/usr/bin/env python3
"""The evaluator of the Slurm tests (tests/it/slurm.rs), run inside a batch job.

Reads the candidate on stdin, appends "<trial> <job id>" to the file named by
$SLURM_EVAL_LOG, sleeps $SLURM_EVAL_SLEEP_PER_GPU seconds per used GPU (or the `sleep`
parameter, when the candidate has one), and answers what the job saw: how many GPUs
CUDA_VISIBLE_DEVICES lists (`gpus_seen`, and the list itself as a label), the job id, and
when it started and ended (seconds since the epoch). The `mode` parameter, when present,
picks a misbehaviour instead: `fail` (a message on stderr, exit 7), `unsupported` (exit 3),
`infeasible` (exit 4), `cancel` (the job cancels itself with scancel, then waits).
"""
import json
import os
import subprocess
import sys
import time

started = time.time()
c = json.load(sys.stdin)
p = c["parameters"]
job = os.environ.get("SLURM_JOB_ID", "")
log = os.environ.get("SLURM_EVAL_LOG")
if log:
    with open(log, "a") as f:
        f.write(f"{c['id']} {job}\n")
mode = p.get("mode", "ok")
if mode == "fail":
    print("slurm_eval.py: loading the model", file=sys.stderr)
    print("slurm_eval.py: boom, out of device memory", file=sys.stderr)
    sys.exit(7)
if mode == "unsupported":
    print("slurm_eval.py: this mode is not supported", file=sys.stderr)
    sys.exit(3)
if mode == "infeasible":
    print("slurm_eval.py: the KV cache holds less than one request", file=sys.stderr)
    sys.exit(4)
if mode == "cancel":
    subprocess.run(["scancel", job], check=False)
    time.sleep(60)
gpus = c.get("used_gpus") or 0
if "sleep" in p:
    time.sleep(float(p["sleep"]))
else:
    time.sleep(float(os.environ.get("SLURM_EVAL_SLEEP_PER_GPU", "0")) * gpus)
cvd = os.environ.get("CUDA_VISIBLE_DEVICES", "")
print(json.dumps({
    "output_throughput_tok_s": 100.0 * gpus + 1.0,
    "gpus_seen": len([d for d in cvd.split(",") if d]),
    "cuda_visible_devices": cvd,
    "slurm_job_id": job,
    "started_at": started,
    "ended_at": time.time(),
}))
