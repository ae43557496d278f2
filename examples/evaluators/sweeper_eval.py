"""The sweeper evaluator protocol, shared by the adapters in this folder.

Standard library only. An adapter supplies one function, ``evaluate(candidate) -> report``,
and calls :func:`main`; this module does the rest:

- **One-shot** (default): read ONE candidate JSON object from stdin (sweeper closes stdin
  after it), print ONE flat JSON report (metric name -> number) on stdout, exit 0. A
  candidate the tool does not support exits 3, an infeasible one (e.g. the KV cache holds
  less than one request) exits 4, anything else that goes wrong exits 1 with the reason as
  the last stderr line.
- **Persistent** (``--persistent``, for ``evaluator: {persistent: true}``): read JSON Lines,
  one candidate per line, and answer exactly one line per candidate, flushed at once. A
  candidate that cannot be scored is still answered with one line, a status object
  ``{"status": "unsupported" | "infeasible" | "failed", "reason": "..."}``, so the
  process stays alive (its start-up, e.g. loading a performance database, is paid once).
  Every answer, report or status, carries the candidate's ``id`` as it came in the
  request: sweeper credits a line with another candidate's ``id`` to no candidate, so a
  late or repeated answer can never land on the next one. sweeper takes the ``id`` out of
  the report (it is no metric).

stdout belongs to the protocol alone: before the wrapped tool is imported, file descriptor 1
is pointed at stderr, so whatever the tool (or its native code) prints lands in stderr and
can never corrupt a report line.

Load resolution follows SPEC 5 of sweeper (``request_count = max(1,
round_half_even(num_request_ratio * load))``; a KV ratio becomes a concurrency through the
deployment's KV capacity: ``capacity = floor(kv_tokens / (isl + floor(osl / 2)))``,
``concurrency = max(1, floor(ratio * capacity))``, infeasible when ``capacity < 1``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

STATUS_KEY = "status"

# The name of a searched KV load ratio, should it arrive among the parameters.
LOAD_PARAMETER = "kv_load_ratio"

EXIT_FAILED = 1
EXIT_UNSUPPORTED = 3
EXIT_INFEASIBLE = 4

# The keys sweeper scores (SPEC 3) and the extra ones it reads back; a report must carry
# these as finite numbers or not at all.
SPEC_KEYS = (
    "output_throughput_tok_s",
    "mean_output_token_throughput_per_user",
    "mean_e2e_latency_ms",
    "goodput_output_throughput_tok_s",
    "goodput_request_throughput_rps",
    "gpu_hours",
    "duration_ms",
    "used_gpus",
    "mean_ttft_ms",
    "mean_tpot_ms",
    "mean_itl_ms",
    "concurrency",
    "kv_capacity_tokens",
)


class EvalStatus(Exception):
    """A candidate that gets no report: its status, exit code and reason."""

    status = "failed"
    exit_code = EXIT_FAILED

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Unsupported(EvalStatus):
    """The wrapped tool cannot evaluate this configuration (exit 3)."""

    status = "unsupported"
    exit_code = EXIT_UNSUPPORTED


class Infeasible(EvalStatus):
    """The configuration cannot serve even one request (exit 4)."""

    status = "infeasible"
    exit_code = EXIT_INFEASIBLE


class Failed(EvalStatus):
    """The evaluation went wrong (exit 1)."""


# ---------------------------------------------------------------------------------------
# SPEC 5: load and request count


def round_half_even(x: float) -> int:
    """Rounds to the nearest integer, ties to even (2.5 -> 2, 3.5 -> 4).

    Python's ``round`` on a float already rounds ties to even on the exact binary value,
    which is what an f64 ``round_ties_even`` does in sweeper.
    """
    if not math.isfinite(x):
        raise Failed(f"cannot round a non-finite number ({x})")
    return int(round(x))


def request_count(num_request_ratio: float, load: float) -> int:
    """``max(1, round_half_even(num_request_ratio * load))``."""
    return max(1, round_half_even(float(num_request_ratio) * float(load)))


def tokens_per_request(isl: int, osl: int) -> int:
    """What one in-flight request holds in the KV cache: ``isl + floor(osl / 2)``."""
    return int(isl) + int(osl) // 2


def kv_capacity(kv_tokens: int, isl: int, osl: int, role: str = "aggregated") -> int:
    """Requests the KV cache holds at once; raises :class:`Infeasible` below one."""
    per_request = tokens_per_request(isl, osl)
    capacity = int(kv_tokens) // per_request
    if capacity < 1:
        raise Infeasible(
            f"kv capacity below one request: {role} pool holds {int(kv_tokens)} kv tokens, "
            f"one request needs {per_request} (isl {isl} + floor(osl {osl} / 2))"
        )
    return capacity


def concurrency_for_ratio(ratio: float, capacity: int) -> int:
    """``max(1, floor(ratio * capacity))``, no upper clamp (a ratio above 1 oversubscribes)."""
    if not math.isfinite(ratio) or ratio < 0:
        raise Failed(f"kv_load_ratio must be finite and >= 0, got {ratio}")
    return max(1, math.floor(float(ratio) * capacity))


def whole_blocks(tokens: int, block_size: int) -> int:
    """Tokens rounded down to whole KV blocks."""
    if block_size <= 0:
        return int(tokens)
    return (int(tokens) // int(block_size)) * int(block_size)


@dataclass(frozen=True)
class Load:
    """The load one candidate runs at, resolved from the candidate and its workload.

    Exactly one of ``concurrency`` (closed loop) and ``request_rate`` (open loop) is set,
    except for a trace replayed without a concurrency cap (both ``None``).
    ``request_count`` is ``None`` for a trace (the trace decides).
    """

    concurrency: int | None
    request_rate: float | None
    request_count: int | None
    kv_load_ratio: float | None = None
    kv_capacity_tokens: int | None = None
    trace_path: str | None = None
    isl: int | None = None
    osl: int | None = None


def workload_of(candidate: Mapping[str, Any]) -> dict:
    """The candidate's workload block; a failure when there is none."""
    workload = candidate.get("workload")
    if not isinstance(workload, dict):
        raise Failed("the candidate has no workload block: add `workload:` to the sweep config")
    return workload


def resolve_load(
    candidate: Mapping[str, Any],
    kv_tokens: Callable[[], int] | None = None,
    role: str = "aggregated",
) -> Load:
    """Resolves the candidate's load (SPEC 5).

    The candidate's own ``concurrency`` (fixed, or the level of a searched ``concurrency``
    parameter) or ``request_rate`` (a searched level) comes first, then a KV ratio, then the
    workload's request rate.

    ``kv_tokens`` returns the deployment's KV capacity in tokens (load role only, whole
    blocks, times attention-DP ranks and replicas); it is called only for a KV ratio.
    """
    workload = workload_of(candidate)
    concurrency = candidate.get("concurrency")
    ratio = candidate.get("kv_load_ratio")
    if ratio is None and concurrency is None:
        # A searched ratio travels as a top-level field; accept it among the parameters too.
        ratio = (candidate.get("parameters") or {}).get(LOAD_PARAMETER)
    if workload.get("trace_path") is not None:
        cap = concurrency if concurrency is not None else workload.get("replay_concurrency")
        return Load(
            concurrency=None if cap is None else int(cap),
            request_rate=None,
            request_count=None,
            trace_path=str(workload["trace_path"]),
        )
    try:
        isl = int(workload["isl"])
        osl = int(workload["osl"])
        ratio_per_load = float(workload["num_request_ratio"])
    except (KeyError, TypeError, ValueError) as e:
        raise Failed(f"synthetic workload needs isl, osl and num_request_ratio ({e!r})") from e
    if concurrency is not None:
        c = int(concurrency)
        return Load(c, None, request_count(ratio_per_load, c), isl=isl, osl=osl)
    if ratio is not None:
        if kv_tokens is None:
            raise Unsupported("this evaluator cannot convert a kv_load_ratio into a concurrency")
        tokens = int(kv_tokens())
        capacity = kv_capacity(tokens, isl, osl, role)
        c = concurrency_for_ratio(float(ratio), capacity)
        return Load(
            c,
            None,
            request_count(ratio_per_load, c),
            kv_load_ratio=float(ratio),
            kv_capacity_tokens=tokens,
            isl=isl,
            osl=osl,
        )
    # A searched request_rate travels as a top-level field; a fixed one stays in the workload.
    rate = candidate.get("request_rate")
    if rate is None:
        rate = workload.get("request_rate")
    if rate is not None:
        r = float(rate)
        return Load(None, r, request_count(ratio_per_load, r), isl=isl, osl=osl)
    raise Failed(
        "the candidate sets no load: expected `concurrency`, `kv_load_ratio` or "
        "workload.request_rate"
    )


# ---------------------------------------------------------------------------------------
# Parameters


def int_param(params: Mapping[str, Any], names: Iterable[str], default: int | None = None) -> int | None:
    """The first of ``names`` present in ``params``, as a whole number."""
    for name in names:
        if name in params and params[name] is not None:
            value = params[name]
            if isinstance(value, bool) or not float(value).is_integer():
                raise Failed(f"parameter `{name}` must be a whole number, got {value!r}")
            return int(value)
    return default


def check_known(params: Mapping[str, Any], known: Iterable[str], ignored: Iterable[str]) -> None:
    """Fails on a parameter the adapter does not map (a silent ignore would mislead the sweep)."""
    known_set = set(known) | set(ignored) | {LOAD_PARAMETER}
    unknown = sorted(k for k in params if k not in known_set)
    if unknown:
        raise Failed(
            f"unknown parameter(s) {', '.join(unknown)}: this adapter maps "
            f"{', '.join(sorted(set(known)))} (pass --ignore NAME for a label-only parameter)"
        )


# ---------------------------------------------------------------------------------------
# Reports


def finish_report(raw: Mapping[str, Any]) -> dict:
    """A flat report of numbers: booleans and ``None`` dropped, integers kept.

    A NaN in a SPEC key is a failure naming the key; a NaN elsewhere (an informational
    extra) is dropped. ``inf`` is kept (sweeper reads ``Infinity`` as an extreme value).
    """
    out: dict[str, float | int] = {}
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if isinstance(value, float) and math.isnan(value):
            if key in SPEC_KEYS:
                raise Failed(f"the tool reported NaN for `{key}`")
            continue
        out[str(key)] = value
    return out


def status_object(err: EvalStatus) -> dict:
    """The one-line answer of a persistent worker for a candidate without a report."""
    return {STATUS_KEY: err.status, "reason": err.reason}


ID_KEY = "id"


def with_id(answer: dict, candidate: Any) -> dict:
    """A persistent answer naming the candidate it answers: the request's ``id``, echoed.

    Left out when the candidate has none (a line that was not even a JSON object): such an
    answer is credited to the candidate that is out, which is the one that line carried.
    """
    if isinstance(candidate, dict) and isinstance(candidate.get(ID_KEY), int):
        return {**answer, ID_KEY: candidate[ID_KEY]}
    return answer


# ---------------------------------------------------------------------------------------
# The loop


def claim_stdout():
    """Keeps a private handle on the real stdout and points fd 1 (and ``sys.stdout``) at stderr.

    Called before the wrapped tool is imported, so that nothing it prints, from Python or
    from native code, can reach the protocol stream.
    """
    sys.stdout.flush()
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().replace("\n", " ")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _evaluate_one(evaluate: Callable[[dict], dict], candidate: Any) -> dict:
    if not isinstance(candidate, dict):
        raise Failed(f"a candidate must be a JSON object, got {type(candidate).__name__}")
    return finish_report(evaluate(candidate))


def serve(make_evaluate: Callable[[], Callable[[dict], dict]], persistent: bool, debug: bool = False) -> int:
    """Runs the protocol; returns the process exit code.

    ``make_evaluate`` is called once, after stdout is claimed (so its imports are safe); if
    it raises, every candidate fails with its reason (persistent) or the process exits 1.
    """
    proto = claim_stdout()
    try:
        evaluate = make_evaluate()
        setup_error: EvalStatus | None = None
    except EvalStatus as e:
        evaluate, setup_error = None, e
    except Exception as e:  # noqa: BLE001 - any start-up error becomes the reason
        if debug:
            traceback.print_exc()
        evaluate, setup_error = None, Failed(f"evaluator start-up failed: {_describe(e)}")

    def answer(candidate: Any) -> tuple[dict | None, EvalStatus | None]:
        if setup_error is not None:
            return None, setup_error
        try:
            return _evaluate_one(evaluate, candidate), None
        except EvalStatus as e:
            return None, e
        except Exception as e:  # noqa: BLE001 - a failing tool never kills the worker
            if debug:
                traceback.print_exc()
            return None, Failed(_describe(e))

    if not persistent:
        text = sys.stdin.read()
        try:
            candidate = json.loads(text)
        except json.JSONDecodeError as e:
            print(f"malformed candidate on stdin: {e}", file=sys.stderr)
            return EXIT_FAILED
        report, err = answer(candidate)
        if err is not None:
            print(f"{err.status}: {err.reason}", file=sys.stderr)
            return err.exit_code
        proto.write(json.dumps(report) + "\n")
        proto.flush()
        return 0

    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            candidate = json.loads(line)
        except json.JSONDecodeError as e:
            candidate = None
            report, err = None, Failed(f"malformed candidate line: {e}")
        else:
            report, err = answer(candidate)
        if err is not None:
            print(f"{err.status}: {err.reason}", file=sys.stderr)
            out = status_object(err)
        else:
            out = report
        proto.write(json.dumps(with_id(out, candidate)) + "\n")
        proto.flush()
    return 0


def base_parser(description: str) -> argparse.ArgumentParser:
    """An argument parser with the options every adapter shares."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--persistent",
        action="store_true",
        help="JSON Lines mode: one candidate per stdin line, one answer line each "
        "(use with `persistent: true` in the sweep config)",
    )
    parser.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="NAME",
        help="a candidate parameter to ignore (a label the tool does not know); repeatable",
    )
    parser.add_argument("--debug", action="store_true", help="print tracebacks on stderr")
    return parser
