#!/usr/bin/env python3
"""A stand-in for a serving benchmark, run inside a Slurm job (standard library only).

Reads one candidate (sweeper's one-shot protocol) on stdin and prints a report whose numbers
follow a made-up but smooth model of tensor parallelism, replicas, batch size and load. It
also reports what the job was given: `gpus_seen` (the GPUs in CUDA_VISIBLE_DEVICES) and the
Slurm job id as a label, so that a sweep's result shows each job got its candidate's GPUs.
Exit 4 (infeasible) when the load asks for more KV cache than the toy model has.
"""
import json
import os
import sys
import time

c = json.load(sys.stdin)
p = c["parameters"]
tp = int(p.get("tp", 1))
replicas = int(p.get("replicas", 1))
batch = int(p.get("max_batch_size", 64))
ratio = c.get("kv_load_ratio")
ratio = 0.5 if ratio is None else float(ratio)
if ratio * batch > 240 * tp:
    print(f"toy_bench: {ratio * batch:.0f} sequences do not fit the KV cache of tp={tp}", file=sys.stderr)
    sys.exit(4)
time.sleep(float(os.environ.get("TOY_BENCH_SECONDS", "1")))
gpus = tp * replicas
per_user = 90.0 * tp ** 0.6 / (1.0 + 3.0 * ratio * batch / 256.0)
users = max(1.0, ratio * batch) * replicas
duration_ms = 60_000.0
cvd = os.environ.get("CUDA_VISIBLE_DEVICES", "")
print(json.dumps({
    "output_throughput_tok_s": per_user * users,
    "mean_output_token_throughput_per_user": per_user,
    "gpu_hours": gpus * duration_ms / 3_600_000.0,
    "duration_ms": duration_ms,
    "gpus_seen": len([d for d in cvd.split(",") if d]),
    "slurm_job_id": os.environ.get("SLURM_JOB_ID", ""),
}))
