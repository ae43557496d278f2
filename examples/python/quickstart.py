#!/usr/bin/env python3
"""The quick start from Python: the sweep of examples/quickstart.yaml (the built-in serving
model), then the same search space with a Python function as the evaluator, then the
front of the evaluated points recomputed on numpy.

    pip install ./crates/sweeper-py
    python3 examples/python/quickstart.py
"""

import pathlib

import numpy as np

import sweeper

here = pathlib.Path(__file__).resolve().parent
config = sweeper.load_config(here.parent / "quickstart.yaml")
print(config)

# 1. The config's own evaluator (the built-in roofline model), as `sweeper run` runs it.
result = sweeper.run(config)
t = result["tallies"]
print(f"{sum(t.values())} trials: {t}")
print("front (tok/s/gpu, tok/s/user):")
for c in result["candidates"]:
    o = c["objectives"]
    print(f"  tp={c['config']['tp']} replicas={c['config']['replicas']:<2} "
          f"{o['throughput_per_gpu']:8.1f} {o['throughput_per_user']:7.2f}")


# 2. A Python evaluator: the candidate is the object the command protocol sends.
def toy_model(candidate):
    p, ratio = candidate["parameters"], candidate["kv_load_ratio"]
    if p["tp"] * p["replicas"] > 12:
        raise sweeper.Infeasible("this toy cluster has 12 GPUs")
    per_user = 120.0 / (1.0 + 3.0 * ratio) * p["tp"] ** 0.4
    gpus = p["tp"] * p["replicas"]
    return {
        "output_throughput_tok_s": per_user * ratio * p["max_batch_size"] * p["replicas"],
        "mean_output_token_throughput_per_user": per_user,
        "gpu_hours": float(gpus),  # one hour at `gpus` GPUs
        "duration_ms": 3_600_000.0,
    }


mine = sweeper.run(config, toy_model)
print(f"toy model: {len(mine['candidates'])} candidates on the front of {mine['tallies']['feasible']} feasible")

# 3. The same front from the numbers, with the numpy kernels.
X = np.array([[c["objectives"][k] for k in ("throughput_per_gpu", "throughput_per_user")]
              for c in mine["evaluated"]])
front = sweeper.pareto_front(X, ["max", "max"])
assert [mine["evaluated"][i]["index"] for i in front] == [c["index"] for c in mine["candidates"]]
print("hypervolume over (0, 0):", sweeper.hypervolume(X, [0.0, 0.0], ["max", "max"]))
