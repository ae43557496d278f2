#!/usr/bin/env python3
"""sweeper evaluator: turn aiperf's ``profile_export_aiperf.json`` into a sweeper report.

Standard library only (aiperf itself is needed only to produce the export:
``pip install aiperf``). Two uses:

1. Convert one export (prints the report)::

       python3 aiperf_to_report.py --gpus 8 artifacts/run1/profile_export_aiperf.json

2. Be a sweep's evaluator: each candidate names its export through a path template, filled
   from the candidate's parameters plus ``id``, ``concurrency``, ``kv_load_ratio`` and
   ``used_gpus``; an optional benchmark command (after ``--``, same placeholders, run
   without a shell) produces it first::

       python3 aiperf_to_report.py --export 'runs/tp{tp}-r{replicas}-c{concurrency}/profile_export_aiperf.json' \
           -- ./bench.sh {tp} {replicas} {concurrency}

   Without a command, a candidate whose export does not exist is *unsupported* (it was
   never benchmarked). The command's exit code 3 or 4 is passed on (unsupported,
   infeasible); any other non-zero exit fails the candidate.

Mapping (``.avg`` of each tag; time tags converted to ms from their ``unit``):

====================================  ===========================================================
``output_throughput_tok_s``           ``output_token_throughput``
``mean_output_token_throughput_per_user``  ``output_token_throughput_per_user``
``mean_ttft_ms``                      ``time_to_first_token``
``mean_tpot_ms``, ``mean_itl_ms``     ``inter_token_latency``
``mean_e2e_latency_ms``               ``request_latency``
``goodput_output_throughput_tok_s``   ``goodput`` (requests/s, under the SLO given to aiperf's
                                      ``--goodput``) x mean ``output_sequence_length``
``duration_ms``                       ``benchmark_duration`` (seconds) x 1000
``gpu_hours``                         GPUs x duration in hours; GPUs from ``--gpus N``, else
                                      the candidate's ``used_gpus``
====================================  ===========================================================

aiperf's per-user throughput is its own definition (a mean over requests); compare it only
with other aiperf runs, not with another evaluator's.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from string import Formatter
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sweeper_eval as se  # noqa: E402

TIME_UNITS_MS = {"ms": 1.0, "msec": 1.0, "s": 1000.0, "sec": 1000.0, "secs": 1000.0, "us": 1e-3, "ns": 1e-6}


def tag(export: dict, name: str) -> dict | None:
    """One metric of the export: a top-level tag, or one under ``records`` (older layouts)."""
    found = export.get(name)
    if found is None and isinstance(export.get("records"), dict):
        found = export["records"].get(name)
    if found is None and isinstance(export.get("records"), list):
        found = next((r for r in export["records"] if isinstance(r, dict) and r.get("tag") == name), None)
    return found if isinstance(found, dict) else None


def avg(export: dict, name: str, required: bool = False) -> float | None:
    """The ``avg`` of a tag, or ``None`` when the tag (or its value) is absent."""
    metric = tag(export, name)
    value = None if metric is None else metric.get("avg")
    if value is None:
        if required:
            raise se.Failed(f"the aiperf export has no `{name}.avg`")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise se.Failed(f"`{name}.avg` is not a number: {value!r}")
    return float(value)


def in_ms(export: dict, name: str, default_unit: str, required: bool = False) -> float | None:
    """A time tag's ``avg`` in milliseconds, converted from the tag's ``unit``."""
    value = avg(export, name, required)
    if value is None:
        return None
    unit = str((tag(export, name) or {}).get("unit") or default_unit).strip().lower()
    if unit not in TIME_UNITS_MS:
        raise se.Failed(f"`{name}` has an unknown time unit `{unit}`")
    return value * TIME_UNITS_MS[unit]


def convert(export: dict, gpus: float | None) -> dict:
    """The sweeper report of one aiperf export."""
    if not isinstance(export, dict):
        raise se.Failed("the aiperf export is not a JSON object")
    if export.get("was_cancelled") is True:
        print("aiperf: the benchmark was cancelled before it finished", file=sys.stderr)
    report: dict[str, Any] = {
        "output_throughput_tok_s": avg(export, "output_token_throughput", required=True),
        "mean_output_token_throughput_per_user": avg(export, "output_token_throughput_per_user"),
        "mean_ttft_ms": in_ms(export, "time_to_first_token", "ms"),
        "mean_tpot_ms": in_ms(export, "inter_token_latency", "ms"),
        "mean_itl_ms": in_ms(export, "inter_token_latency", "ms"),
        "mean_e2e_latency_ms": in_ms(export, "request_latency", "ms", required=True),
        "request_throughput_rps": avg(export, "request_throughput"),
        "request_count": avg(export, "request_count"),
        "mean_output_sequence_length": avg(export, "output_sequence_length"),
        "mean_input_sequence_length": avg(export, "input_sequence_length"),
        "error_request_count": avg(export, "error_request_count"),
    }
    goodput = avg(export, "goodput")
    if goodput is not None:
        unit = str((tag(export, "goodput") or {}).get("unit") or "requests/sec").lower()
        osl = report["mean_output_sequence_length"]
        if "/s" not in unit and "per s" not in unit:
            print(f"aiperf: goodput unit `{unit}` is not a request rate; goodput left out", file=sys.stderr)
        elif osl is None:
            raise se.Failed("`goodput` needs `output_sequence_length.avg` to become tokens/s")
        else:
            report["goodput_output_throughput_tok_s"] = goodput * osl
    duration_ms = in_ms(export, "benchmark_duration", "sec", required=True)
    report["duration_ms"] = duration_ms
    if gpus is not None:
        if not math.isfinite(gpus) or gpus <= 0:
            raise se.Failed(f"the GPU count must be > 0, got {gpus}")
        report["used_gpus"] = int(gpus) if float(gpus).is_integer() else gpus
        report["gpu_hours"] = gpus * duration_ms / 3_600_000.0
    else:
        print("aiperf: no GPU count (--gpus or the candidate's used_gpus): gpu_hours left out", file=sys.stderr)
    loadgen = ((export.get("input_config") or {}).get("loadgen") or {}) if isinstance(export.get("input_config"), dict) else {}
    if isinstance(loadgen.get("concurrency"), (int, float)) and not isinstance(loadgen.get("concurrency"), bool):
        report["concurrency"] = loadgen["concurrency"]
    return {k: v for k, v in report.items() if v is not None}


def read_export(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise se.Failed(f"{path} is not valid JSON: {e}") from e


def fill(template: str, fields: dict) -> str:
    """``template`` with ``{name}`` placeholders filled; a missing field is a failure naming it."""
    for _, name, _, _ in Formatter().parse(template):
        if name is not None and name not in fields:
            raise se.Failed(f"placeholder `{{{name}}}` is not a parameter of the candidate (known: {', '.join(sorted(fields))})")
        if name is not None and fields[name] is None:
            raise se.Failed(f"placeholder `{{{name}}}` is null for this candidate")
    return template.format_map(fields)


def make_evaluate(opts):
    def evaluate(candidate: dict) -> dict:
        fields = dict(candidate.get("parameters") or {})
        for key in ("id", "concurrency", "kv_load_ratio", "used_gpus"):
            fields.setdefault(key, candidate.get(key))
        export_path = Path(fill(opts.export, fields))
        if opts.command:
            argv = [fill(arg, fields) for arg in opts.command]
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, check=False)
            if done.returncode == se.EXIT_UNSUPPORTED:
                raise se.Unsupported(f"benchmark command exited 3: {' '.join(argv)}")
            if done.returncode == se.EXIT_INFEASIBLE:
                raise se.Infeasible(f"benchmark command exited 4: {' '.join(argv)}")
            if done.returncode != 0:
                raise se.Failed(f"benchmark command exited {done.returncode}: {' '.join(argv)}")
        if not export_path.is_file():
            if opts.command:
                raise se.Failed(f"the benchmark command wrote no export at {export_path}")
            raise se.Unsupported(f"no aiperf export for this candidate at {export_path}")
        gpus = opts.gpus if opts.gpus is not None else candidate.get("used_gpus")
        return convert(read_export(export_path), None if gpus is None else float(gpus))

    return evaluate


def main() -> int:
    parser = se.base_parser(__doc__.split("\n", 1)[0])
    parser.add_argument("path", nargs="?", help="one profile_export_aiperf.json to convert (no sweep protocol)")
    parser.add_argument("--gpus", type=float, help="GPUs the benchmarked deployment used")
    parser.add_argument("--export", metavar="TEMPLATE", help="per-candidate export path, e.g. 'runs/tp{tp}/profile_export_aiperf.json'")
    argv = sys.argv[1:]
    command: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1 :]
    opts = parser.parse_args(argv)
    opts.command = command
    if opts.path is not None:
        if opts.export or command or opts.persistent:
            parser.error("give either one export path or --export TEMPLATE, not both")
        try:
            report = se.finish_report(convert(read_export(Path(opts.path)), opts.gpus))
        except se.EvalStatus as e:
            print(f"{e.status}: {e.reason}", file=sys.stderr)
            return e.exit_code
        print(json.dumps(report))
        return 0
    if not opts.export:
        parser.error("give one export path, or --export TEMPLATE to act as a sweep evaluator")
    return se.serve(lambda: make_evaluate(opts), opts.persistent, opts.debug)


if __name__ == "__main__":
    sys.exit(main())
