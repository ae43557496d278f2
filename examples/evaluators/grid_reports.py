#!/usr/bin/env python3
"""Evaluate a full grid through an adapter (persistent mode) and write `sweeper score` input.

Standard library only. Useful to look at a whole grid, or to cross-check a sweep, without
`sweeper run`: every combination of the given parameter values (and load values) becomes
one candidate line; the answers are written as JSON Lines
``{"config": {...parameters, used_gpus, concurrency, kv_load_ratio}, "report": {...}}``,
which ``sweeper score --config SWEEP.yaml FILE`` ranks or reduces to a front. Candidates
answered with a status object are listed on stderr and left out.

Example (the adapter command follows ``--``; it must accept ``--persistent``)::

    python3 examples/evaluators/grid_reports.py --out /tmp/aic.jsonl \\
        --param tp=1,2,4,8 --param replicas=1,2 --param max_batch_size=8,32,128,512 \\
        --kv-load-ratio 0.1,0.5,1.0 --workload '{"isl": 4000, "osl": 500, "num_request_ratio": 10}' \\
        --gpus tp,replicas -- python3 examples/evaluators/aiconfigurator_eval.py --backend-version 1.3.0rc20
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sweeper_eval as se  # noqa: E402


def value(text: str):
    """A grid value: a JSON number or literal when it parses, else the string itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def main() -> int:
    argv = sys.argv[1:]
    if "--" not in argv:
        print("usage: grid_reports.py [options] -- ADAPTER COMMAND...", file=sys.stderr)
        return 2
    cut = argv.index("--")
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--param", action="append", default=[], metavar="NAME=V1,V2", help="a grid axis")
    parser.add_argument("--workload", required=True, help="the workload block as JSON")
    parser.add_argument("--kv-load-ratio", help="comma-separated ratios (else the workload's load applies)")
    parser.add_argument("--concurrency", help="comma-separated concurrencies")
    parser.add_argument("--sla", help="the SLA block as JSON")
    parser.add_argument("--gpus", help="comma-separated parameter names whose product is used_gpus")
    parser.add_argument("--out", required=True, help="JSON Lines for `sweeper score`")
    opts = parser.parse_args(argv[:cut])
    command = argv[cut + 1 :] + ["--persistent"]

    axes = []
    for spec in opts.param:
        name, _, values = spec.partition("=")
        axes.append((name, [value(v) for v in values.split(",")]))
    loads: list[tuple[str | None, object]] = [(None, None)]
    if opts.kv_load_ratio:
        loads = [("kv_load_ratio", float(v)) for v in opts.kv_load_ratio.split(",")]
    elif opts.concurrency:
        loads = [("concurrency", int(v)) for v in opts.concurrency.split(",")]
    workload = json.loads(opts.workload)
    sla = json.loads(opts.sla) if opts.sla else None
    gpu_names = opts.gpus.split(",") if opts.gpus else []

    candidates = []
    for combo in itertools.product(*[values for _, values in axes]):
        params = dict(zip([name for name, _ in axes], combo))
        used = None
        if gpu_names:
            used = 1
            for name in gpu_names:
                used *= int(params[name])
        for key, load in loads:
            candidates.append(
                {
                    "id": len(candidates),
                    "parameters": params,
                    "used_gpus": used,
                    "concurrency": load if key == "concurrency" else workload.get("concurrency"),
                    "kv_load_ratio": load if key == "kv_load_ratio" else None,
                    "workload": workload,
                    "sla": sla,
                    "planner_target": None,
                }
            )
    start = time.perf_counter()
    done = subprocess.run(
        command,
        input="".join(json.dumps(c) + "\n" for c in candidates),
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    answers = done.stdout.splitlines()
    if len(answers) != len(candidates):
        sys.stderr.write(done.stderr[-4000:])
        print(f"{len(candidates)} candidates but {len(answers)} answers (exit {done.returncode})", file=sys.stderr)
        return 1
    kept = 0
    with open(opts.out, "w", encoding="utf-8") as out:
        for cand, line in zip(candidates, answers):
            report = json.loads(line)
            if se.STATUS_KEY in report:
                print(f"candidate {cand['id']} {cand['parameters']}: {report}", file=sys.stderr)
                continue
            kept += 1
            config = dict(cand["parameters"])
            for key in ("used_gpus", "concurrency", "kv_load_ratio"):
                if report.get(key, cand.get(key)) is not None:
                    config[key] = report.get(key, cand.get(key))
            out.write(json.dumps({"config": config, "report": report}) + "\n")
    print(f"{len(candidates)} candidates, {kept} reports, adapter exit {done.returncode}, {wall:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
