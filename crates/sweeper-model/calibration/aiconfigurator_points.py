#!/usr/bin/env python3
"""Estimates of aiconfigurator for the built-in model's comparison (`cargo xtask model-check`).

Runs aiconfigurator's `cli_estimate` (its Python API, the same code path as
`aiconfigurator cli estimate`) over a fixed grid of aggregated and disaggregated
deployments -- dense and mixture-of-experts models, H100/H200/B200/GB200, TensorRT-LLM,
batch 1 to 512 -- and writes one CSV row per point that it could estimate (points it
cannot estimate, e.g. out of memory or missing kernel data, go to the log on stderr).

Usage (aiconfigurator 0.12.0 from PyPI, `pip install aiconfigurator==0.12.0`):

    python aiconfigurator_points.py [PREVIOUS.csv] > aiconfigurator_points.csv

With PREVIOUS.csv, points already there are copied instead of estimated again (so a run
can be resumed; delete it to re-estimate everything, e.g. after an aiconfigurator upgrade).

The `split` column is fixed by the grid: every third point of a (model, system, mode,
isl/osl) group in grid order is `calibration`, the others `check`. The model may be tuned
on the calibration split only; the checked split measures it.
"""

import csv
import logging
import sys
import time

logging.disable(logging.WARNING)

import aiconfigurator  # noqa: E402
from aiconfigurator.cli.api import cli_estimate  # noqa: E402

BACKEND = "trtllm"
BATCHES = [1, 4, 16, 64, 256, 512]
DECODE_BATCHES = [1, 8, 32, 128, 512]
LENGTHS = [(1024, 1024), (4096, 512)]

# (aiconfigurator model, sweeper preset, systems, aggregated shapes); a shape is
# (tp, attention_dp, moe_tp, moe_ep); moe_* is None for dense models.
AGG = [
    ("Qwen/Qwen3-32B-FP8", "qwen3-32b-fp8", ["h100_sxm", "h200_sxm", "b200_sxm"],
     [(1, 1, None, None), (2, 1, None, None), (4, 1, None, None)]),
    ("nvidia/Llama-3.1-70B-Instruct-FP8", "llama3-70b-fp8", ["h100_sxm", "h200_sxm", "b200_sxm"],
     [(4, 1, None, None)]),
    ("Qwen/Qwen3-30B-A3B-FP8", "qwen3-30b-a3b-fp8", ["h200_sxm", "b200_sxm"],
     [(1, 1, 1, 1), (2, 1, 1, 2)]),
    ("Qwen/Qwen3-235B-A22B-FP8", "qwen3-235b-a22b-fp8", ["h200_sxm", "b200_sxm"],
     [(4, 1, 1, 4), (1, 8, 1, 8)]),
    ("openai/gpt-oss-120b", "gpt-oss-120b", ["h200_sxm", "b200_sxm"],
     [(1, 1, 1, 1), (4, 1, 1, 4)]),
    ("deepseek-ai/DeepSeek-R1", "deepseek-r1-fp8", ["h200_sxm", "b200_sxm", "gb200"],
     [(1, 8, 1, 8)]),
]

# (aiconfigurator model, sweeper preset, systems, prefill shape, prefill workers,
#  decode shape, decode workers)
DISAGG = [
    ("Qwen/Qwen3-32B-FP8", "qwen3-32b-fp8", ["h200_sxm", "b200_sxm"],
     (2, 1, None, None), 2, (4, 1, None, None), 1),
    ("Qwen/Qwen3-32B-FP8", "qwen3-32b-fp8", ["h100_sxm"],
     (1, 1, None, None), 3, (2, 1, None, None), 1),
    ("Qwen/Qwen3-235B-A22B-FP8", "qwen3-235b-a22b-fp8", ["h200_sxm", "b200_sxm"],
     (4, 1, 1, 4), 1, (1, 8, 1, 8), 1),
    ("deepseek-ai/DeepSeek-R1", "deepseek-r1-fp8", ["gb200", "b200_sxm"],
     (1, 8, 1, 8), 1, (1, 8, 1, 8), 1),
    ("Qwen/Qwen3-30B-A3B-FP8", "qwen3-30b-a3b-fp8", ["h200_sxm", "b200_sxm"],
     (1, 1, 1, 1), 2, (2, 1, 1, 2), 1),
]

COLUMNS = [
    "split", "mode", "aic_model", "model", "system", "isl", "osl",
    "tp", "attention_dp", "moe_tp", "moe_ep", "batch",
    "prefill_tp", "prefill_attention_dp", "prefill_moe_tp", "prefill_moe_ep", "prefill_workers",
    "decode_tp", "decode_attention_dp", "decode_moe_tp", "decode_moe_ep", "decode_workers",
    "used_gpus", "concurrency", "ttft_ms", "tpot_ms", "tok_s_gpu", "tok_s_user",
]


def shape_args(prefix, shape):
    tp, dp, moe_tp, moe_ep = shape
    args = {f"{prefix}tp_size": tp, f"{prefix}attention_dp_size": dp}
    if moe_tp is not None:
        args[f"{prefix}moe_tp_size"] = moe_tp
        args[f"{prefix}moe_ep_size"] = moe_ep
    return args


def shape_cols(prefix, shape):
    tp, dp, moe_tp, moe_ep = shape
    return {f"{prefix}tp": tp, f"{prefix}attention_dp": dp,
            f"{prefix}moe_tp": "" if moe_tp is None else moe_tp,
            f"{prefix}moe_ep": "" if moe_ep is None else moe_ep}


KEY = ["mode", "aic_model", "system", "isl", "osl", "tp", "attention_dp", "moe_tp", "moe_ep",
       "batch", "prefill_tp", "prefill_attention_dp", "prefill_moe_tp", "prefill_moe_ep",
       "prefill_workers", "decode_tp", "decode_attention_dp", "decode_moe_tp", "decode_moe_ep",
       "decode_workers"]


def key(row):
    return tuple(str(row.get(k, "")) for k in KEY)


def previous_rows():
    if len(sys.argv) < 2:
        return {}
    with open(sys.argv[1]) as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return {key(r): r for r in rows}


def main():
    done = previous_rows()
    out = csv.DictWriter(sys.stdout, fieldnames=COLUMNS, lineterminator="\n")
    print(f"# aiconfigurator {aiconfigurator.__version__}"
          f" cli_estimate, backend {BACKEND} (latest database version), database_mode SILICON;"
          f" written by crates/sweeper-model/calibration/aiconfigurator_points.py")
    out.writeheader()
    jobs = []
    for aic, preset, systems, shapes in AGG:
        for system in systems:
            for isl, osl in LENGTHS:
                group = []
                for shape in shapes:
                    for batch in BATCHES:
                        args = dict(mode="agg", batch_size=batch, isl=isl, osl=osl,
                                    **shape_args("", shape))
                        cols = dict(mode="agg", batch=batch, **shape_cols("", shape))
                        group.append((aic, preset, system, isl, osl, args, cols))
                jobs.append(group)
    for aic, preset, systems, pshape, pworkers, dshape, dworkers in DISAGG:
        for system in systems:
            for isl, osl in LENGTHS:
                group = []
                for batch in DECODE_BATCHES:
                    args = dict(mode="disagg", isl=isl, osl=osl, prefill_batch_size=1,
                                prefill_num_workers=pworkers, decode_batch_size=batch,
                                decode_num_workers=dworkers,
                                **shape_args("prefill_", pshape), **shape_args("decode_", dshape))
                    # tp_size is the fallback aiconfigurator requires; the pools override it
                    args["tp_size"] = pshape[0]
                    cols = dict(mode="disagg", batch=batch, prefill_workers=pworkers,
                                decode_workers=dworkers,
                                **shape_cols("prefill_", pshape), **shape_cols("decode_", dshape))
                    group.append((aic, preset, system, isl, osl, args, cols))
                jobs.append(group)
    for group in jobs:
        for i, (aic, preset, system, isl, osl, args, cols) in enumerate(group):
            known = done.get(key(dict(aic_model=aic, system=system, isl=isl, osl=osl, **cols)))
            if known is not None:
                out.writerow(known)
                continue
            started = time.time()
            try:
                r = cli_estimate(aic, system, backend_name=BACKEND, **args).raw
            except Exception as e:  # noqa: BLE001 -- logged and skipped
                print(f"skip {aic} {system} {args}: {str(e).splitlines()[0][:200]}", file=sys.stderr)
                continue
            row = dict(split="calibration" if i % 3 == 0 else "check", aic_model=aic,
                       model=preset, system=system, isl=isl, osl=osl,
                       used_gpus=int(r["num_total_gpus"]), concurrency=float(r["concurrency"]),
                       ttft_ms=round(float(r["ttft"]), 3), tpot_ms=round(float(r["tpot"]), 4),
                       tok_s_gpu=round(float(r["tokens/s/gpu"]), 3),
                       tok_s_user=round(float(r["tokens/s/user"]), 4), **cols)
            out.writerow(row)
            sys.stdout.flush()
            print(f"ok {time.time() - started:.1f}s {aic} {system} {cols}", file=sys.stderr)


if __name__ == "__main__":
    main()
