#!/usr/bin/env python3
"""sweeper evaluator: NVIDIA aiconfigurator's single-configuration estimate.

Install::

    pip install aiconfigurator==0.12.0

Each candidate is one ``aiconfigurator.cli.api.cli_estimate(...)`` call (aggregated serving,
the tool's in-flight-batching model) for ONE replica, scaled to ``replicas``. Loading the
performance database takes seconds, so run it persistent (``--persistent`` with
``persistent: true``); the backend version is resolved once per (system, backend) and
passed explicitly, which keeps each later call in the tens of milliseconds.

Candidate parameters it maps (anything else fails unless ``--ignore NAME``):

==========================  ================================================================
``tp``, ``pp``              ``tp_size``, ``pp_size``
``attention_dp`` / ``dp``   ``attention_dp_size``
``moe_tp``, ``moe_ep``      ``moe_tp_size``, ``moe_ep_size``
``replicas``                identical replicas; throughput and GPUs scale with it
``max_batch_size``          the batch-slot cap of one replica (``batch_size``)
``ctx_tokens``,             passed through
``free_gpu_memory_fraction``,
``gemm_quant_mode``,
``kvcache_quant_mode``,
``fmha_quant_mode``,
``moe_quant_mode``
``deployment_mode``,         a topology candidate (SPEC 8); ``strategy`` and ``used_gpus``
``strategy``, ``used_gpus``  are derived from the shape and not passed on
``prefill_*``, ``decode_*``  a disaggregated candidate (``deployment_mode: disagg``): each
                            pool's ``tp``, ``pp``, ``attention_dp``, ``moe_tp``, ``moe_ep``,
                            ``replicas`` (its worker count) and ``max_batch_size``, passed as
                            aiconfigurator's ``prefill_*_size``/``decode_*_size``,
                            ``*_num_workers`` and ``*_batch_size`` (``mode="disagg"``); the shared ``max_batch_size`` caps the decode pool
``model``, ``system``,      override the command-line defaults per candidate
``backend``,
``backend_version``
==========================  ================================================================

How a load becomes an estimate (aiconfigurator models a replica whose batch slots are all
busy, so the adapter maps sweeper's closed-loop load onto that and says what it adds):

- KV capacity (for ``kv_load_ratio``, and as a cap on the batch) comes from aiconfigurator's
  own memory model (``aiconfigurator_core.sdk.memory.estimate_kv_cache``: tokens per rank,
  rounded down to ``--kv-block-size`` blocks, times ``attention_dp`` and ``replicas``).
- ``concurrency`` C over R replicas runs each replica at batch
  ``b = min(max_batch_size, kv slots, ceil(C / R))``; requests in flight are
  ``min(C, R * b)``. Output throughput is the estimate's ``tokens/s`` at batch ``b``, times
  in-flight / b. Requests beyond the slots queue: by Little's law the mean end-to-end
  latency is ``C / request_rate``, and the wait over the estimate's request latency is
  added to TTFT.
- ``tokens/s/user`` is aiconfigurator's ``1000 / TPOT``.
- Goodput is mean-based: the model has no per-request spread, so every request meets the
  SLA or none does (TTFT and TPOT against ``ttft_ms`` and ``itl_ms``, e2e against
  ``e2e_ms``).
- ``duration_ms`` is the time to serve the workload's request count at that throughput;
  ``gpu_hours = used_gpus * duration``.
- An open-loop ``request_rate`` and a trace are not modeled here (exit 3, unsupported).

A disaggregated candidate is one ``cli_estimate(mode="disagg", ...)`` call: the decode pool
holds the requests in flight, so the KV capacity (for ``kv_load_ratio``) is the decode pool's
(tokens per rank × its attention DP × its replicas) and the concurrency is spread over the
decode workers exactly as over an aggregated candidate's replicas; prefill workers run at
batch ``prefill_max_batch_size`` (default 1). aiconfigurator's own rate matching of the two
pools gives the throughput, TTFT and TPOT; the GPU count is its ``num_total_gpus`` (both
pools).
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sweeper_eval as se  # noqa: E402

PASS_THROUGH = {
    "ctx_tokens": "ctx_tokens",
    "free_gpu_memory_fraction": "free_gpu_memory_fraction",
    "gemm_quant_mode": "gemm_quant_mode",
    "kvcache_quant_mode": "kvcache_quant_mode",
    "fmha_quant_mode": "fmha_quant_mode",
    "moe_quant_mode": "moe_quant_mode",
}
IDENTITY = ("model", "system", "backend", "backend_version")
DP_KEYS = ("attention_dp", "dp")
BATCH_KEYS = ("max_batch_size", "batch_size")
TOPOLOGY_KEYS = ("deployment_mode", "strategy", "used_gpus")
ROLES = ("prefill", "decode")
ROLE_KEYS = ("tp", "pp", "attention_dp", "moe_tp", "moe_ep", "strategy", "replicas", "max_batch_size")
DISAGG_KNOWN = (
    tuple(f"{role}_{key}" for role in ROLES for key in ROLE_KEYS)
    + BATCH_KEYS
    + tuple(PASS_THROUGH)
    + IDENTITY
    + TOPOLOGY_KEYS
)
KNOWN = (
    ("tp", "pp", "moe_tp", "moe_ep", "replicas")
    + DP_KEYS
    + BATCH_KEYS
    + tuple(PASS_THROUGH)
    + IDENTITY
    + TOPOLOGY_KEYS
)
# KV block sizes of the serving engines' defaults (tokens per block).
DEFAULT_BLOCK = {"trtllm": 32, "vllm": 16, "sglang": 1}
# The memory-fraction convention of each backend in aiconfigurator's KV model.
FRACTION_KIND = {"trtllm": ("of_free", 0.9), "vllm": ("of_total", 0.9), "sglang": ("of_total", 0.9)}


def make_evaluate(opts):
    """Imports aiconfigurator (after stdout is claimed) and returns the evaluate function."""
    try:
        from aiconfigurator.cli.api import cli_estimate
        from aiconfigurator_core.sdk.memory import estimate_kv_cache
        from aiconfigurator_core.sdk.perf_database import get_latest_database_version
    except ImportError as e:
        raise se.Failed(f"aiconfigurator is not importable ({e}): pip install aiconfigurator==0.12.0") from e

    versions: dict[tuple[str, str], str] = {}

    def version_for(system: str, backend: str, explicit: str | None) -> str:
        if explicit:
            return explicit
        key = (system, backend)
        if key not in versions:
            found = get_latest_database_version(system=system, backend=backend)
            if found is None:
                raise se.Unsupported(f"aiconfigurator has no performance database for {system}/{backend}")
            versions[key] = found
            print(f"aiconfigurator: {system}/{backend} uses database version {found}", file=sys.stderr)
        return versions[key]

    def kv_tokens_per_replica(model, system, backend, version, kw, batch_cap, isl) -> tuple[int | None, str]:
        """KV tokens of one replica (whole blocks, times attention DP), or None and why not."""
        kind, fraction = FRACTION_KIND.get(backend, ("of_total", 0.9))
        if kw.get("free_gpu_memory_fraction") is not None:
            fraction = float(kw["free_gpu_memory_fraction"])
        try:
            est = estimate_kv_cache(
                model,
                system,
                backend,
                version,
                max_num_tokens=int(kw.get("ctx_tokens") or max(8192, isl)),
                max_batch_size=int(batch_cap),
                memory_fraction_kind=kind,
                memory_fraction_value=fraction,
                tp_size=kw["tp_size"],
                pp_size=kw["pp_size"],
                attention_dp_size=kw["attention_dp_size"],
                moe_tp_size=kw.get("moe_tp_size"),
                moe_ep_size=kw.get("moe_ep_size"),
                kvcache_quant_mode=kw.get("kvcache_quant_mode"),
            )
        except ValueError as e:
            print(f"aiconfigurator: no KV estimate ({e})", file=sys.stderr)
            return None, str(e).strip()
        block = opts.kv_block_size or DEFAULT_BLOCK.get(backend, 1)
        per_rank = se.whole_blocks(int(est["total_kv_size_tokens"]), block)
        return per_rank * kw["attention_dp_size"], ""

    def estimate(model, system, kw, batch, mode="agg"):
        try:
            if mode == "disagg":
                return cli_estimate(model, system, mode="disagg", decode_batch_size=batch, **kw)
            return cli_estimate(model, system, mode="agg", batch_size=batch, **kw)
        except RuntimeError as e:
            if str(e).startswith("OOM"):
                raise se.Infeasible(str(e)) from e
            raise
        except (ValueError, KeyError, NotImplementedError, AssertionError) as e:
            raise se.Unsupported(f"aiconfigurator cannot estimate this configuration: {e}") from e

    def evaluate(candidate: dict) -> dict:
        params = dict(candidate.get("parameters") or {})
        disagg = params.get("deployment_mode") == "disagg"
        se.check_known(params, DISAGG_KNOWN if disagg else KNOWN, opts.ignore)
        workload = se.workload_of(candidate)
        if workload.get("trace_path") is not None:
            raise se.Unsupported("aiconfigurator estimates synthetic workloads only (isl/osl), not a trace")
        model = str(params.get("model", opts.model))
        system = str(params.get("system", opts.system))
        backend = str(params.get("backend", opts.backend))
        explicit = params.get("backend_version") or (opts.backend_version if backend == opts.backend else None)
        version = version_for(system, backend, explicit)
        isl, osl = int(workload["isl"]), int(workload["osl"])
        common = {"backend_name": backend, "backend_version": version, "isl": isl, "osl": osl}
        for name, key in PASS_THROUGH.items():
            if params.get(name) is not None:
                common[key] = params[name]
        mode = "disagg" if disagg else "agg"
        if disagg:
            # the decode pool holds the requests in flight: its workers play the replicas
            decode = pool_shape(params, "decode_", opts.max_batch_size)
            prefill = pool_shape(params, "prefill_", 1, shared_batch=False)
            kw = dict(common)
            for role, shape in (("prefill", prefill), ("decode", decode)):
                kw.update({f"{role}_{k}": v for k, v in shape["sizes"].items()})
                kw[f"{role}_num_workers"] = shape["replicas"]
            kw["prefill_batch_size"] = prefill["batch_cap"]
            kw["tp_size"] = prefill["sizes"]["tp_size"]  # aiconfigurator's required fallback
            kv_kw = dict(common, **decode["sizes"])
            tp, pp, dp = (decode["sizes"][k] for k in ("tp_size", "pp_size", "attention_dp_size"))
            replicas, batch_cap = decode["replicas"], decode["batch_cap"]
        else:
            shape = pool_shape(params, "", opts.max_batch_size)
            kw = dict(common, **shape["sizes"])
            kv_kw = kw
            tp, pp, dp = (shape["sizes"][k] for k in ("tp_size", "pp_size", "attention_dp_size"))
            replicas, batch_cap = shape["replicas"], shape["batch_cap"]

        start = time.perf_counter()
        kv_replica, kv_error = kv_tokens_per_replica(model, system, backend, version, kv_kw, batch_cap, isl)

        def kv_tokens() -> int:
            if kv_replica is None:
                raise se.Unsupported(f"aiconfigurator has no KV-cache estimate for this configuration: {kv_error}")
            return kv_replica * replicas

        load = se.resolve_load(candidate, kv_tokens)
        if load.concurrency is None:
            raise se.Unsupported("aiconfigurator's estimate models a closed loop: set concurrency or kv_load_ratio")
        slots = batch_cap
        if kv_replica is not None:
            kv_slots = kv_replica // se.tokens_per_request(isl, osl)
            if kv_slots < 1:
                se.kv_capacity(kv_replica, isl, osl)  # raises Infeasible with the numbers
            slots = min(slots, kv_slots)
        conc = load.concurrency
        batch = max(1, min(slots, math.ceil(conc / replicas)))
        in_flight = min(conc, replicas * batch)
        result = estimate(model, system, kw, batch, mode)
        raw = result.raw
        per_replica_tok_s = float(raw["tokens/s"])
        per_replica_seq_s = float(raw["seq/s"])
        # an aggregated estimate is of one replica; a disaggregated one of the whole
        # deployment (both pools, every worker, at decode batch `batch` a worker)
        scale = in_flight / (batch * replicas if disagg else batch)
        tok_s = per_replica_tok_s * scale
        seq_s = per_replica_seq_s * scale
        ttft, tpot = float(result.ttft), float(result.tpot)
        e2e = float(raw.get("request_latency", ttft + tpot * max(osl - 1, 0)))
        queue_ms = 0.0
        if conc > in_flight and seq_s > 0:
            queue_ms = max(0.0, conc / seq_s * 1000.0 - e2e)
        ttft_q, e2e_q = ttft + queue_ms, e2e + queue_ms
        if disagg:
            used_gpus = int(raw["num_total_gpus"])
        else:
            used_gpus = int(raw.get("num_total_gpus", tp * pp * dp)) * replicas
        duration_ms = load.request_count / seq_s * 1000.0 if seq_s > 0 else math.inf
        sla = candidate.get("sla") or {}
        meets = True
        if sla.get("ttft_ms") is not None and ttft_q > float(sla["ttft_ms"]):
            meets = False
        if sla.get("itl_ms") is not None and tpot > float(sla["itl_ms"]):
            meets = False
        if sla.get("e2e_ms") is not None and e2e_q > float(sla["e2e_ms"]):
            meets = False
        elapsed_ms = (time.perf_counter() - start) * 1000.0
        print(
            f"candidate {candidate.get('id')}: {model} {system}/{backend} {version} {'disagg decode ' if disagg else ''}tp{tp} pp{pp} dp{dp} "
            f"x{replicas} batch {batch} ({in_flight} in flight of {conc}) in {elapsed_ms:.0f} ms",
            file=sys.stderr,
        )
        if result.kv_cache_warning:
            print(f"aiconfigurator: {result.kv_cache_warning}", file=sys.stderr)
        report = {
            "output_throughput_tok_s": tok_s,
            "mean_output_token_throughput_per_user": 1000.0 / tpot if tpot > 0 else 0.0,
            "mean_ttft_ms": ttft_q,
            "mean_tpot_ms": tpot,
            # aiconfigurator's TPOT is its steady-state inter-token latency: one decode step
            "mean_itl_ms": tpot,
            "mean_e2e_latency_ms": e2e_q,
            "goodput_output_throughput_tok_s": tok_s if (sla and meets) else 0.0,
            # a steady-state estimate: every request meets the SLA or none does, so goodput
            # in requests a second (what `min_gpus` and `recommend` read) is all or nothing
            "goodput_request_throughput_rps": seq_s if (sla and meets) else 0.0,
            "used_gpus": used_gpus,
            "duration_ms": duration_ms,
            "gpu_hours": used_gpus * duration_ms / 3_600_000.0,
            "concurrency": conc,
            "batch_size": batch,
            "request_count": load.request_count,
            "request_throughput_rps": seq_s,
            "queue_wait_ms": queue_ms,
            "memory_gb": float(raw.get("memory", raw.get("(d)memory", 0.0)) or 0.0),
        }
        if kv_replica is not None:
            report["kv_capacity_tokens"] = kv_replica * replicas
        if load.kv_load_ratio is not None:
            report["kv_load_ratio"] = load.kv_load_ratio
        if not sla:
            del report["goodput_output_throughput_tok_s"]
            del report["goodput_request_throughput_rps"]
        return report

    return evaluate


def pool_shape(params: dict, prefix: str, default_batch: int, shared_batch: bool = True) -> dict:
    """One pool's parallel shape (aiconfigurator's ``*_size`` arguments, prefixed for a
    disaggregated pool), its worker count and its batch cap, from the candidate's flat keys
    (``tp``, ``attention_dp``, ... or ``prefill_tp``, ``decode_tp``, ...)."""
    dp_keys = tuple(prefix + k for k in DP_KEYS) if not prefix else (prefix + "attention_dp",)
    # a pool's own cap first; the candidate's shared ``max_batch_size`` caps the decode pool
    # (and an aggregated worker), never a prefill pool's batch of whole prompts
    batch_keys = tuple(prefix + k for k in BATCH_KEYS) + (BATCH_KEYS if prefix and shared_batch else ())
    sizes = {
        "tp_size": se.int_param(params, (prefix + "tp",), 1),
        "pp_size": se.int_param(params, (prefix + "pp",), 1),
        "attention_dp_size": se.int_param(params, dp_keys, 1),
    }
    for key in ("moe_tp", "moe_ep"):
        if prefix + key in params:
            sizes[f"{key}_size"] = se.int_param(params, (prefix + key,))
    replicas = se.int_param(params, (prefix + "replicas",), 1)
    batch_cap = se.int_param(params, batch_keys, default_batch)
    if min(list(sizes.values()) + [replicas, batch_cap]) < 1:
        raise se.Unsupported(
            f"{prefix}tp, {prefix}pp, {prefix}attention_dp, {prefix}moe_tp, {prefix}moe_ep, "
            f"{prefix}replicas and {prefix}max_batch_size must be >= 1"
        )
    return {"sizes": sizes, "replicas": replicas, "batch_cap": batch_cap}


def main() -> int:
    parser = se.base_parser(__doc__.split("\n", 1)[0])
    parser.add_argument("--model", default="Qwen/Qwen3-32B-FP8", help="model path known to aiconfigurator")
    parser.add_argument("--system", default="h200_sxm", help="GPU system (h200_sxm, h100_sxm, b200_sxm, ...)")
    parser.add_argument("--backend", default="trtllm", help="trtllm, vllm or sglang")
    parser.add_argument(
        "--backend-version",
        help="performance database version (default: resolved once per system/backend at start-up)",
    )
    parser.add_argument("--max-batch-size", type=int, default=256, help="batch cap when the candidate sets none")
    parser.add_argument("--kv-block-size", type=int, help="KV block size in tokens (default per backend)")
    opts = parser.parse_args()
    return se.serve(lambda: make_evaluate(opts), opts.persistent, opts.debug)


if __name__ == "__main__":
    sys.exit(main())
