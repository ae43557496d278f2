#!/usr/bin/env python3
"""aiconfigurator 0.12.0's `cli_estimate` on the three candidates of `benches/benches/model.rs`.

The peer of one built-in model evaluation: aiconfigurator estimates one deployment from
its measured kernel database (TensorRT-LLM, SILICON). Prints, per case, the median,
minimum and maximum wall time of N calls after a first (warm-up) call, in the same
process (imports and database loading excluded).

    python benches/peers/time_aic_estimate.py [N]     # needs `pip install aiconfigurator==0.12.0`
"""

import logging
import statistics
import sys
import time

logging.disable(logging.WARNING)

from aiconfigurator.cli.api import cli_estimate  # noqa: E402

CASES = [
    ("agg dense qwen3-32b-fp8 h200", dict(
        model_path="Qwen/Qwen3-32B-FP8", system_name="h200_sxm", mode="agg",
        tp_size=2, batch_size=64)),
    ("agg moe attention-dp deepseek-r1-fp8 b200", dict(
        model_path="deepseek-ai/DeepSeek-R1", system_name="b200_sxm", mode="agg",
        tp_size=1, attention_dp_size=8, moe_tp_size=1, moe_ep_size=8, batch_size=32)),
    ("disagg moe qwen3-235b-a22b-fp8 h200", dict(
        model_path="Qwen/Qwen3-235B-A22B-FP8", system_name="h200_sxm", mode="disagg",
        prefill_tp_size=1, prefill_attention_dp_size=4, prefill_moe_tp_size=4,
        prefill_moe_ep_size=1, prefill_batch_size=1, prefill_num_workers=2,
        decode_tp_size=1, decode_attention_dp_size=8, decode_moe_tp_size=1,
        decode_moe_ep_size=8, decode_batch_size=64, decode_num_workers=1)),
]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    for name, kwargs in CASES:
        args = dict(backend_name="trtllm", isl=4096, osl=512, **kwargs)
        cli_estimate(**args)
        times = []
        for _ in range(n):
            t = time.perf_counter()
            cli_estimate(**args)
            times.append(time.perf_counter() - t)
        print(f"{name}: median {statistics.median(times) * 1e3:.1f} ms "
              f"(min {min(times) * 1e3:.1f}, max {max(times) * 1e3:.1f}, {n} calls)")


if __name__ == "__main__":
    main()
