#!/usr/bin/env python3
"""sweeper evaluator: NVIDIA Dynamo's offline replay (``dynamo.replay``).

Install (a plain ``pip install ai-dynamo`` fails, one of its dependencies is not on the
package index)::

    pip install ai-dynamo-runtime==1.6.1
    pip install --no-deps ai-dynamo==1.6.1

Each candidate becomes one ``run_synthetic_trace_replay`` (or ``run_trace_replay`` for a
``trace_path`` workload) call; the replay's ``summary`` already carries sweeper's report
keys (SPEC 3), per-request goodput included when the goal has an SLA.

Candidate parameters it maps (anything else fails unless ``--ignore NAME``):

=============================  =============================================================
``tp``                         ``tensor_parallel_size`` of each worker
``replicas``                   ``num_workers`` (aggregated)
``router``                     ``router_mode``: ``round_robin``, or ``kv_aware`` /
                               ``kv_router`` / ``kv`` -> ``kv_router``
``max_batch_size``             engine ``max_num_seqs`` (also accepted under that name)
``max_num_batched_tokens``,    engine settings of the same name
``num_gpu_blocks``,
``block_size``,
``enable_prefix_caching``,
``enable_chunked_prefill``,
``speedup_ratio``,
``decode_speedup_ratio``
``dp`` / ``attention_dp``      ``dp_size`` (attention data-parallel ranks per worker)
``backend``                    engine ``backend`` (``vllm``, ``sglang``, ``trtllm``)
``prefill_tp``,                disaggregated deployment: setting any of these four switches
``prefill_replicas``,          to prefill/decode pools (``num_prefill_workers``,
``decode_tp``,                 ``num_decode_workers``; engine args per pool); ``tp`` and
``decode_replicas``            ``replicas`` are then not allowed
``deployment_mode``,           a topology candidate (SPEC 8): ``disagg`` selects the pools;
``prefill_attention_dp``,      each pool's ``dp_size`` from its own ``*_attention_dp``;
``decode_attention_dp``,       ``pp`` must be 1; ``moe_tp``, ``moe_ep`` (and their
``pp``, ``moe_tp``,            ``prefill_``/``decode_`` forms), ``strategy`` and
``moe_ep``, ``strategy``,      ``used_gpus`` are accepted and not passed on: the mocker has
``used_gpus``                  no expert parallelism (its GPU count is ``tp × dp``)
``shared_prefix_ratio``,       synthetic-workload options of the replay
``num_prefix_groups``,
``arrival_seed``
=============================  =============================================================

The timing model is the replay's generic one unless ``--engine-args FILE`` gives a mocker
engine-args JSON (e.g. with a profiled ``timing_model``); candidate values are laid over it.
The generic model does not slow down or speed up with ``tp``: only the GPU count (and so
``gpu_hours``) follows it. KV capacity for a ``kv_load_ratio`` is the engine's
``num_gpu_blocks * block_size`` per attention-DP rank, times ``dp_size`` and the replicas of
the load role (the decode pool when disaggregated).
"""

from __future__ import annotations

import copy
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sweeper_eval as se  # noqa: E402

# Candidate parameters passed to the engine args under the same name.
ENGINE_KEYS = (
    "max_num_batched_tokens",
    "num_gpu_blocks",
    "block_size",
    "enable_prefix_caching",
    "enable_chunked_prefill",
    "speedup_ratio",
    "decode_speedup_ratio",
    "backend",
)
BATCH_KEYS = ("max_batch_size", "max_num_seqs")
DP_KEYS = ("dp", "attention_dp", "dp_size")
DISAGG_KEYS = ("prefill_tp", "prefill_replicas", "decode_tp", "decode_replicas")
REPLAY_KEYS = ("shared_prefix_ratio", "num_prefix_groups", "arrival_seed")
# The flat keys of a topology candidate (SPEC 8) the mocker takes no setting for.
SHAPE_KEYS = ("pp", "moe_tp", "moe_ep", "strategy")
TOPOLOGY_KEYS = (
    ("deployment_mode", "used_gpus", "prefill_attention_dp", "decode_attention_dp")
    + SHAPE_KEYS
    + tuple(f"{role}_{k}" for role in ("prefill", "decode") for k in SHAPE_KEYS)
)
KNOWN = (
    ("tp", "replicas", "router")
    + TOPOLOGY_KEYS
    + tuple(ENGINE_KEYS)
    + BATCH_KEYS
    + DP_KEYS
    + DISAGG_KEYS
    + REPLAY_KEYS
)
ROUTERS = {
    "round_robin": "round_robin",
    "kv_aware": "kv_router",
    "kv_router": "kv_router",
    "kv": "kv_router",
}
WALL_CLOCK_KEYS = ("wall_time_ms", "processed_tokens_per_s", "processed_output_tokens_per_s")


def engine_args_for(base: dict, params: dict, tp: int, dp: int, worker_type: str | None) -> dict:
    """The mocker engine args of one pool: the base file, then the candidate's values."""
    args = copy.deepcopy(base)
    engine = args.setdefault("engine", {})
    args["tensor_parallel_size"] = tp
    args["dp_size"] = dp
    for name in ENGINE_KEYS:
        if name in params:
            engine[name] = params[name]
    batch = se.int_param(params, BATCH_KEYS)
    if batch is not None:
        engine["max_num_seqs"] = batch
    if worker_type is not None:
        engine["worker_type"] = worker_type
    return args


def make_evaluate(opts):
    """Imports the replay (after stdout is claimed) and returns the evaluate function."""
    os.environ.setdefault("DYN_LOG", "error")
    try:
        from dynamo._core import _normalize_mocker_config
        from dynamo.replay import run_synthetic_trace_replay, run_trace_replay
    except ImportError as e:
        raise se.Failed(
            f"dynamo replay is not importable ({e}): pip install ai-dynamo-runtime==1.6.1 "
            "&& pip install --no-deps ai-dynamo==1.6.1"
        ) from e
    base = {}
    if opts.engine_args:
        base = json.loads(Path(opts.engine_args).read_text())

    def kv_tokens_of(normalized: dict, workers: int) -> int:
        engine = normalized["engine"]
        per_rank = int(engine["num_gpu_blocks"]) * int(engine["block_size"])
        return per_rank * int(normalized.get("dp_size") or 1) * workers

    def evaluate(candidate: dict) -> dict:
        params = dict(candidate.get("parameters") or {})
        se.check_known(params, KNOWN, opts.ignore)
        router = str(params.get("router", "round_robin"))
        if router not in ROUTERS:
            raise se.Unsupported(f"router `{router}` is not a dynamo router mode (known: {', '.join(ROUTERS)})")
        dp = se.int_param(params, DP_KEYS, int(base.get("dp_size", 1)))
        base_tp = int(base.get("tensor_parallel_size", 1))
        for key in ("pp", "prefill_pp", "decode_pp"):
            if se.int_param(params, (key,), 1) != 1:
                raise se.Unsupported(f"{key} > 1: the replay has no pipeline parallelism")
        mode = params.get("deployment_mode")
        if mode not in (None, "agg", "disagg"):
            raise se.Failed(f"deployment_mode `{mode}` is neither agg nor disagg")
        disagg = mode == "disagg" or any(k in params for k in DISAGG_KEYS)
        kwargs: dict = {"router_mode": ROUTERS[router]}
        if disagg:
            if "tp" in params or "replicas" in params:
                raise se.Failed("set either tp/replicas (aggregated) or prefill_*/decode_* (disaggregated), not both")
            p_tp = se.int_param(params, ("prefill_tp",), base_tp)
            d_tp = se.int_param(params, ("decode_tp",), base_tp)
            p_n = se.int_param(params, ("prefill_replicas",), 1)
            d_n = se.int_param(params, ("decode_replicas",), 1)
            p_dp = se.int_param(params, ("prefill_attention_dp",), dp)
            d_dp = se.int_param(params, ("decode_attention_dp",), dp)
            prefill = engine_args_for(base, params, p_tp, p_dp, "prefill")
            decode = engine_args_for(base, params, d_tp, d_dp, "decode")
            kwargs.update(
                prefill_engine_args=prefill,
                decode_engine_args=decode,
                num_prefill_workers=p_n,
                num_decode_workers=d_n,
            )
            load_args, load_workers, role = decode, d_n, "decode"
            used_gpus = p_n * p_tp * p_dp + d_n * d_tp * d_dp
        else:
            tp = se.int_param(params, ("tp",), base_tp)
            replicas = se.int_param(params, ("replicas",), 1)
            agg = engine_args_for(base, params, tp, dp, None)
            kwargs.update(extra_engine_args=agg, num_workers=replicas)
            load_args, load_workers, role = agg, replicas, "aggregated"
            used_gpus = replicas * tp * dp
        if used_gpus < 1:
            raise se.Unsupported(f"a deployment of {used_gpus} GPUs")

        def kv_tokens() -> int:
            try:
                normalized = _normalize_mocker_config(load_args)
            except Exception as e:  # the mocker's own validation message
                raise se.Unsupported(f"engine args rejected: {e}") from e
            return kv_tokens_of(normalized, load_workers)

        load = se.resolve_load(candidate, kv_tokens, role)
        sla = candidate.get("sla") or {}
        for key in ("ttft_ms", "itl_ms", "e2e_ms"):
            if sla.get(key) is not None:
                kwargs[f"sla_{key}"] = float(sla[key])
        start = time.perf_counter()
        if load.trace_path is not None:
            result = run_trace_replay(load.trace_path, replay_concurrency=load.concurrency, **kwargs)
        else:
            kwargs["arrival_seed"] = se.int_param(params, ("arrival_seed",), opts.seed)
            for key in ("shared_prefix_ratio", "num_prefix_groups"):
                if key in params:
                    kwargs[key] = params[key]
            if load.concurrency is not None:
                kwargs["replay_concurrency"] = load.concurrency
            else:
                kwargs["request_rate"] = load.request_rate
            result = run_synthetic_trace_replay(load.isl, load.osl, load.request_count, **kwargs)
        elapsed_ms = (time.perf_counter() - start) * 1000.0
        summary = dict(result.summary)
        if summary.get("completed_requests", 1) == 0:
            raise se.Failed("the replay completed no request")
        # Keys measured on the wall clock would make equal candidates differ: left out.
        report = {k: v for k, v in summary.items() if k not in WALL_CLOCK_KEYS}
        report["used_gpus"] = used_gpus
        if load.concurrency is not None:
            report["concurrency"] = load.concurrency
        if load.request_count is not None:
            report["request_count"] = load.request_count
        if load.kv_capacity_tokens is not None:
            report["kv_capacity_tokens"] = load.kv_capacity_tokens
            report["kv_load_ratio"] = load.kv_load_ratio
        print(
            f"candidate {candidate.get('id')}: replayed {summary.get('completed_requests')} requests "
            f"in {elapsed_ms:.0f} ms",
            file=sys.stderr,
        )
        return report

    return evaluate


def main() -> int:
    parser = se.base_parser(__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--engine-args",
        metavar="FILE",
        help="base mocker engine-args JSON (timing model, KV blocks, ...); candidate values override it",
    )
    parser.add_argument("--seed", type=int, default=42, help="arrival seed of synthetic requests (default 42)")
    opts = parser.parse_args()
    return se.serve(lambda: make_evaluate(opts), opts.persistent, opts.debug)


if __name__ == "__main__":
    sys.exit(main())
