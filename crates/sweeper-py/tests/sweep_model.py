"""A deterministic Python evaluator for the sweep tests (imported by test_run.py and by
the child process it kills): a small serving-like model of the candidate's parameters."""

import os
import time

import sweeper

CONFIG = """\
goal: {target: pareto}
workload: {isl: 1000, osl: 200, num_request_ratio: 2, kv_load_ratio: [0.1, 1.0]}
search_space:
  gpu_budget: 64
  used_gpus: [tp, replicas]
  parameters:
    tp: {values: [1, 2, 4]}
    replicas: {int: [1, 4]}
    router: {choices: [round_robin, kv_aware]}
sweep: {max_rounds: 4, candidates_per_round: 4, parallel_evals: 2, seed: 11}
"""


def evaluate(candidate):
    """Report of a candidate; logs one line per call to $SWEEP_LOG when it is set."""
    log = os.environ.get("SWEEP_LOG")
    if log:
        with open(log, "a") as f:
            f.write(f"{candidate['id']}\n")
        time.sleep(float(os.environ.get("SWEEP_SLEEP", "0")))
    p = candidate["parameters"]
    ratio = candidate["kv_load_ratio"]
    gpus = candidate["used_gpus"]
    speed = 1.3 if p["router"] == "kv_aware" else 1.0
    per_user = 100.0 / (1.0 + 4.0 * ratio) * speed * p["tp"] ** 0.3
    tok_s = per_user * ratio * 64 * p["replicas"] / p["tp"] ** 0.2
    return {
        "output_throughput_tok_s": tok_s,
        "mean_output_token_throughput_per_user": per_user,
        "gpu_hours": float(gpus),
        "duration_ms": 3_600_000.0,
        "backend": "python-model",
    }


if __name__ == "__main__":
    import signal

    # Ctrl-C is what the tests send: a process started from a shell's background job
    # inherits SIGINT ignored, and Python then installs no KeyboardInterrupt for it
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import sys

    sweeper.run(CONFIG, evaluate, out=sys.argv[1])
