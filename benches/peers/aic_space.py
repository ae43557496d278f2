#!/usr/bin/env python3
"""Enumerates a small serving space exhaustively with NVIDIA aiconfigurator into a table.

Install (a separate venv; the table's data is aiconfigurator's, so it is not committed)::

    python3 -m venv .venv-aic && .venv-aic/bin/pip install aiconfigurator==0.12.0

Usage::

    .venv-aic/bin/python benches/peers/aic_space.py --model meta-llama/Meta-Llama-3.1-70B \\
        --system h100_sxm --backends trtllm,vllm,sglang --out target/aic/NAME.json

Every point of ``tp x replicas x batch x load`` (x ``backend`` when ``--backends`` lists
more than one, x ``moe`` when ``--moe`` does) gets exactly one row in ONE JSON file, the
table format that the Rust (``xtask/src/bench_sampler/table.rs``) and Python benchmark
harnesses read: ``name``, ``source``, ``params``, ``metrics``, ``rows`` (``"metrics": null``
for an infeasible point).

Parameters:

- ``tp``: tensor parallelism of one replica (aiconfigurator's ``tp_size``).
- ``replicas``: identical aggregated replicas; GPUs and throughput scale with it.
- ``batch``: the batch-slot cap of one replica (``max_batch_size``).
- ``load``: the closed-loop concurrency over the whole deployment (requests in flight the
  clients keep up).
- ``backend`` (categorical, with several ``--backends``): the serving engine whose
  performance database aiconfigurator uses (its newest shipped version for the system,
  unless ``--backend-version``).
- ``moe`` (categorical, with ``--moe``): how a MoE model's experts are split over the tp
  GPUs of a replica, ``tp`` (``moe_tp_size = tp``, ``moe_ep_size = 1``) or ``ep``
  (``moe_tp_size = 1``, ``moe_ep_size = tp``).

Load level -> throughput, the model of ``examples/evaluators/aiconfigurator_eval.py``
(aiconfigurator estimates one replica whose batch slots are all busy; agg mode, its
in-flight batching):

1. A row is infeasible (null) when ``tp * replicas`` exceeds ``--gpu-budget``.
2. KV capacity of one replica: ``aiconfigurator_core.sdk.memory.estimate_kv_cache``
   (``max_num_tokens = max(8192, isl)``, ``max_batch_size = batch``, the backend's memory
   fraction: TRT-LLM 90% of free memory, vLLM and SGLang 90% of total), rounded down to
   whole KV blocks (32 tokens TRT-LLM, 16 vLLM, 1 SGLang). Its slots are
   ``kv // (isl + osl // 2)``; null when the weights leave no KV budget or the cache holds
   less than one request.
3. Concurrency ``C = load`` over ``R = replicas``: each replica runs at batch
   ``b = max(1, min(batch, kv slots, ceil(C / R)))``; requests in flight are
   ``min(C, R * b)`` (the rest queue).
4. One ``aiconfigurator.cli.api.cli_estimate(model, system, mode="agg", batch_size=b, ...)``
   per replica; null on its OOM (or when it cannot estimate the configuration).
5. ``tok_s_gpu = tokens/s(b) * (in flight / b) / (num_total_gpus * R)``: the estimate's
   output tokens per second of one replica at batch ``b``, scaled to the requests in
   flight, over all GPUs used.
6. ``tok_s_user = 1000 / TPOT(b)`` (aiconfigurator's definition). Queueing shows in TTFT and
   end-to-end latency, which this table does not carry, so an oversubscribed load ties with
   the saturated one of the same batch.
7. Both metrics are rounded to 8 significant digits: without it, points that tie (the same
   batch at other replica counts) differ in the last bit and one dominates the other.

Every aiconfigurator answer (estimate and KV capacity, or the error) is cached in a JSON
file (``--cache``, default ``<out>.cache.json``) keyed by everything the call depends on,
so a rerun with the same arguments computes nothing and does not import aiconfigurator.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import itertools
import json
import math
import os
import sys
import time
from pathlib import Path

# KV block sizes of the serving engines' defaults (tokens per block), as the adapter uses.
DEFAULT_BLOCK = {"trtllm": 32, "vllm": 16, "sglang": 1}
# The memory-fraction convention of each backend in aiconfigurator's KV model.
FRACTION_KIND = {"trtllm": ("of_free", 0.9), "vllm": ("of_total", 0.9), "sglang": ("of_total", 0.9)}
MOE_MODES = ("tp", "ep")


def int_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from e
    if not values or min(values) < 1 or len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"expected distinct integers >= 1, got {text!r}")
    return values


def str_list(text: str) -> list[str]:
    values = [v.strip() for v in text.split(",") if v.strip()]
    if not values or len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(f"expected distinct comma-separated names, got {text!r}")
    return values


class Aic:
    """aiconfigurator behind a persistent cache; imported only on the first cache miss."""

    def __init__(self, cache_path: Path, model: str, system: str, isl: int, osl: int) -> None:
        self.cache_path = cache_path
        self.model, self.system, self.isl, self.osl = model, system, isl, osl
        self.cache: dict[str, dict] = {}
        if cache_path.exists():
            self.cache = json.loads(cache_path.read_text())
        self.hits = 0
        self.misses = 0
        self.tool_seconds = 0.0
        self._api = None

    def api(self):
        if self._api is None:
            from aiconfigurator.cli.api import cli_estimate
            from aiconfigurator_core.sdk.memory import estimate_kv_cache
            from aiconfigurator_core.sdk.perf_database import get_latest_database_version

            self._api = (cli_estimate, estimate_kv_cache, get_latest_database_version)
        return self._api

    def cached(self, key: str, compute) -> dict:
        if key in self.cache:
            self.hits += 1
            return self.cache[key]
        self.misses += 1
        start = time.perf_counter()
        value = compute()
        self.tool_seconds += time.perf_counter() - start
        self.cache[key] = value
        return value

    def save(self) -> None:
        self.cache_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.cache_path.with_suffix(self.cache_path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.cache, sort_keys=True))
        os.replace(tmp, self.cache_path)

    def version(self, backend: str) -> str:
        key = f"version|{self.system}|{backend}"

        def compute() -> dict:
            found = self.api()[2](system=self.system, backend=backend)
            if found is None:
                return {"error": f"no performance database for {self.system}/{backend}"}
            return {"version": found}

        answer = self.cached(key, compute)
        if "error" in answer:
            raise SystemExit(f"aic_space: aiconfigurator has {answer['error']}")
        return answer["version"]

    def _where(self, backend: str, version: str, tp: int, moe: dict) -> str:
        return (
            f"{self.model}|{self.system}|{backend}|{version}|isl{self.isl}|osl{self.osl}"
            f"|tp{tp}|moe_tp{moe.get('moe_tp_size')}|moe_ep{moe.get('moe_ep_size')}"
        )

    def kv_tokens(self, backend: str, version: str, tp: int, moe: dict, cap: int) -> dict:
        """``{"tokens": n}`` of one replica (per rank, tp ranks share it), or ``{"error": why}``."""
        key = f"kv|{self._where(backend, version, tp, moe)}|cap{cap}"

        def compute() -> dict:
            kind, fraction = FRACTION_KIND.get(backend, ("of_total", 0.9))
            try:
                est = self.api()[1](
                    self.model,
                    self.system,
                    backend,
                    version,
                    max_num_tokens=max(8192, self.isl),
                    max_batch_size=cap,
                    memory_fraction_kind=kind,
                    memory_fraction_value=fraction,
                    tp_size=tp,
                    pp_size=1,
                    attention_dp_size=1,
                    **moe,
                )
            except ValueError as e:
                return {"error": f"no KV estimate: {str(e).strip()}"}
            return {"tokens": int(est["total_kv_size_tokens"])}

        return self.cached(key, compute)

    def estimate(self, backend: str, version: str, tp: int, moe: dict, batch: int) -> dict:
        """``{"tok_s", "tpot_ms", "gpus"}`` of one replica at ``batch``, or ``{"error": why}``."""
        key = f"est|{self._where(backend, version, tp, moe)}|b{batch}"

        def compute() -> dict:
            try:
                result = self.api()[0](
                    self.model,
                    self.system,
                    mode="agg",
                    backend_name=backend,
                    backend_version=version,
                    isl=self.isl,
                    osl=self.osl,
                    batch_size=batch,
                    tp_size=tp,
                    pp_size=1,
                    attention_dp_size=1,
                    **moe,
                )
            except RuntimeError as e:
                if str(e).startswith("OOM"):
                    return {"error": "OOM"}
                raise
            except (ValueError, KeyError, NotImplementedError, AssertionError) as e:
                return {"error": f"cannot estimate: {type(e).__name__}: {str(e).strip()[:300]}"}
            raw = result.raw
            return {
                "tok_s": float(raw["tokens/s"]),
                "tpot_ms": float(result.tpot),
                "gpus": int(raw.get("num_total_gpus", tp)),
            }

        return self.cached(key, compute)


def short_model(model: str) -> str:
    return model.rstrip("/").rsplit("/", 1)[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--model", required=True, help="model path known to aiconfigurator")
    parser.add_argument("--system", required=True, help="GPU system (h100_sxm, b200_sxm, ...)")
    parser.add_argument("--out", required=True, type=Path, help="the table to write (JSON)")
    parser.add_argument("--name", help="table name (default aic-<model>-<system>)")
    parser.add_argument(
        "--backends",
        type=str_list,
        default=["trtllm"],
        help="trtllm, vllm, sglang (comma list; several make a categorical `backend` parameter)",
    )
    parser.add_argument("--backend-version", help="performance database version (one backend only)")
    parser.add_argument(
        "--moe",
        type=str_list,
        help="MoE expert split modes, from tp,ep (a categorical `moe` parameter; required for a MoE model)",
    )
    parser.add_argument("--tp", type=int_list, default=[1, 2, 4, 8], help="tp values (default 1,2,4,8)")
    parser.add_argument("--replicas-max", type=int, default=8, help="replicas 1..N (default 8)")
    parser.add_argument(
        "--batch", type=int_list, default=[8, 16, 32, 64, 128, 256], help="batch caps (default 8,...,256)"
    )
    parser.add_argument(
        "--loads",
        type=int_list,
        default=[4, 8, 16, 32, 64, 128, 256, 512],
        help="total concurrencies (default 4,8,...,512)",
    )
    parser.add_argument("--gpu-budget", type=int, default=16, help="tp * replicas above this is infeasible (default 16)")
    parser.add_argument("--isl", type=int, default=4000, help="input tokens per request (default 4000)")
    parser.add_argument("--osl", type=int, default=500, help="output tokens per request (default 500)")
    parser.add_argument("--kv-block-size", type=int, help="KV block size in tokens (default per backend)")
    parser.add_argument("--cache", type=Path, help="aiconfigurator answer cache (default <out>.cache.json)")
    opts = parser.parse_args()

    if opts.backend_version and len(opts.backends) > 1:
        parser.error("--backend-version needs exactly one backend")
    if opts.moe and any(m not in MOE_MODES for m in opts.moe):
        parser.error(f"--moe takes modes from {','.join(MOE_MODES)}")
    if opts.replicas_max < 1 or opts.gpu_budget < 1 or opts.isl < 1 or opts.osl < 1:
        parser.error("--replicas-max, --gpu-budget, --isl and --osl must be >= 1")

    start = time.perf_counter()
    aic_version = importlib.metadata.version("aiconfigurator")
    if aic_version != "0.12.0":
        print(f"aic_space: warning: aiconfigurator {aic_version}, not the 0.12.0 this was written for", file=sys.stderr)
    cache_path = opts.cache or opts.out.with_name(opts.out.name + ".cache.json")
    aic = Aic(cache_path, opts.model, opts.system, opts.isl, opts.osl)
    versions = {b: opts.backend_version or aic.version(b) for b in opts.backends}

    params = [
        {"name": "tp", "type": "discrete", "values": opts.tp, "log": True},
        {"name": "replicas", "type": "int", "lo": 1, "hi": opts.replicas_max, "log": False},
        {"name": "batch", "type": "discrete", "values": opts.batch, "log": True},
        {"name": "load", "type": "discrete", "values": opts.loads, "log": True},
    ]
    axes = [opts.tp, list(range(1, opts.replicas_max + 1)), opts.batch, opts.loads]
    if len(opts.backends) > 1:
        params.append({"name": "backend", "type": "categorical", "choices": opts.backends})
    axes.append(opts.backends)
    moe_modes = opts.moe or [None]
    if opts.moe:
        params.append({"name": "moe", "type": "categorical", "choices": opts.moe})
    axes.append(moe_modes)

    per_request = opts.isl + opts.osl // 2
    rows = []
    reasons: dict[str, int] = {}
    for tp, replicas, cap, load, backend, moe_mode in itertools.product(*axes):
        point = {"tp": tp, "replicas": replicas, "batch": cap, "load": load}
        if len(opts.backends) > 1:
            point["backend"] = backend
        if opts.moe:
            point["moe"] = moe_mode
        metrics, why = row_metrics(aic, opts, versions[backend], backend, moe_mode, tp, replicas, cap, load, per_request)
        if metrics is None:
            reasons[why] = reasons.get(why, 0) + 1
        rows.append({"params": point, "metrics": metrics})
    aic.save()

    backend_text = ", ".join(f"{b} {versions[b]}" for b in opts.backends)
    moe_text = f", MoE split {'/'.join(opts.moe)}" if opts.moe else ""
    source = (
        f"aiconfigurator {aic_version}, {backend_text}, {opts.system}{moe_text}: agg cli_estimate of one replica "
        f"(isl {opts.isl}, osl {opts.osl}) at batch min(batch, KV slots, ceil(load / replicas)), tokens/s scaled "
        f"by in-flight / batch over num_total_gpus * replicas, tok_s_user = 1000 / TPOT; null = tp * replicas > "
        f"{opts.gpu_budget}, no KV room for one request, or OOM"
    )
    table = {
        "name": opts.name or f"aic-{short_model(opts.model)}-{opts.system}",
        "source": source,
        "params": params,
        "metrics": [
            {"name": "tok_s_gpu", "direction": "maximize"},
            {"name": "tok_s_user", "direction": "maximize"},
        ],
        "rows": rows,
    }
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = opts.out.with_name(opts.out.name + ".tmp")
    tmp.write_text(json.dumps(table, indent=None, separators=(",", ":")) + "\n")
    os.replace(tmp, opts.out)

    feasible = sum(1 for r in rows if r["metrics"] is not None)
    front = pareto_front([(r["metrics"]["tok_s_gpu"], r["metrics"]["tok_s_user"]) for r in rows if r["metrics"]])
    elapsed = time.perf_counter() - start
    print(
        f"aic_space: {opts.out}: {len(rows)} points, {feasible} feasible, front {front[0]} rows "
        f"({front[1]} distinct points); aiconfigurator calls {aic.misses} computed, {aic.hits} cached "
        f"({aic.tool_seconds:.1f} s in the tool); {elapsed:.1f} s",
        file=sys.stderr,
    )
    for why, count in sorted(reasons.items(), key=lambda kv: -kv[1]):
        print(f"aic_space:   null x{count}: {why}", file=sys.stderr)
    return 0


def row_metrics(aic, opts, version, backend, moe_mode, tp, replicas, cap, load, per_request):
    """``(metrics, None)`` of one point, or ``(None, reason)`` when it is infeasible."""
    if tp * replicas > opts.gpu_budget:
        return None, f"over the GPU budget of {opts.gpu_budget}"
    moe = {}
    if moe_mode == "tp":
        moe = {"moe_tp_size": tp, "moe_ep_size": 1}
    elif moe_mode == "ep":
        moe = {"moe_tp_size": 1, "moe_ep_size": tp}
    kv = aic.kv_tokens(backend, version, tp, moe, cap)
    if "error" in kv:
        return None, kv["error"][:120]
    block = opts.kv_block_size or DEFAULT_BLOCK.get(backend, 1)
    kv_tokens = (kv["tokens"] // block) * block
    kv_slots = kv_tokens // per_request
    if kv_slots < 1:
        return None, "KV cache holds less than one request"
    batch = max(1, min(cap, kv_slots, math.ceil(load / replicas)))
    in_flight = min(load, replicas * batch)
    est = aic.estimate(backend, version, tp, moe, batch)
    if "error" in est:
        return None, est["error"][:120]
    if est["tpot_ms"] <= 0 or est["tok_s"] <= 0:
        return None, "non-positive estimate"
    tok_s = est["tok_s"] * in_flight / batch
    used_gpus = est["gpus"] * replicas
    return {"tok_s_gpu": sig(tok_s / used_gpus), "tok_s_user": sig(1000.0 / est["tpot_ms"])}, None


def sig(x: float) -> float:
    """``x`` to 8 significant digits, so that values equal but for rounding (a replica count
    multiplied in and divided out) tie exactly instead of one dominating the other by an ulp."""
    return float(f"{x:.8g}")


def pareto_front(points: list[tuple[float, float]]) -> tuple[int, int]:
    """Rows on the (maximize, maximize) front, ties included, and distinct front points."""
    front = set()
    best_y = -math.inf
    for x, y in sorted(set(points), key=lambda p: (-p[0], -p[1])):
        if y > best_y:
            front.add((x, y))
            best_y = y
    return sum(1 for p in points if p in front), len(front)


if __name__ == "__main__":
    sys.exit(main())
