#!/usr/bin/env python3
"""Wall time of the same budget under `sweep.schedule: rounds` and `async`.

    python3 benches/schedule/run.py BIN [--parallel 4] [--trials 48] [--seeds 0,1,2]
                                        [--algorithm default] [--scale 1] [--work DIR]

BIN is a release `sweeper` (e.g. target/release/sweeper). Each (seed, schedule) runs one
pareto sweep whose command evaluator (sleepy.py) sleeps 0.1-1.0 s per candidate, drawn
from a hash of the candidate. Both schedules get the same budget: max_trials = TRIALS and,
for rounds, candidates_per_round = PARALLEL with max_rounds = TRIALS / PARALLEL, so a round
is one batch of PARALLEL evaluations. Every candidate is within the GPU budget, so every
trial is evaluated. Prints one line per run (wall seconds, the evaluations' summed sleep, the
ideal wall time sum / PARALLEL, slot use = ideal / wall, and the sleep-only bound: the sum
over rounds of each round's slowest sleep for rounds, sum / PARALLEL for async) and, per
seed, rounds / async for the wall times and for the bounds (what an idle machine with free
process starts would show).

The output directories (journal included) go under --work, by default a fresh directory in
/dev/shm when it exists: the journal syncs every line, and on a shared virtual disk one
fdatasync can take a quarter of a second, which would time the disk instead of the schedule
(give --work /some/disk/dir to time that too).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

CONFIG = """goal: {{target: pareto}}
workload: {{isl: 100, osl: 100, num_request_ratio: 2, kv_load_ratio: [0.05, 1.0]}}
search_space:
  gpu_budget: 64
  used_gpus: [tp, replicas]
  parameters:
    tp: {{values: [1, 2, 4, 8]}}
    replicas: {{int: [1, 8]}}
evaluator:
  command: [python3, {script}]
  env: {{SLEEPY_SCALE: '{scale}'}}
sweep: {{schedule: {schedule}, parallel_evals: {parallel}, candidates_per_round: {parallel}, max_rounds: {rounds}, max_trials: {trials}, seed: {seed}, algorithm: {algorithm}}}
"""


def run(binary, work, schedule, seed, a):
    cfg = os.path.join(work, f"{schedule}-{seed}.yaml")
    with open(cfg, "w") as f:
        f.write(
            CONFIG.format(
                script=os.path.join(HERE, "sleepy.py"),
                scale=a.scale,
                schedule=schedule,
                parallel=a.parallel,
                rounds=-(-a.trials // a.parallel),
                trials=a.trials,
                seed=seed,
                algorithm=a.algorithm,
            )
        )
    out = os.path.join(work, f"{schedule}-{seed}")
    t0 = time.monotonic()
    done = subprocess.run(
        [binary, "run", cfg, "--out", out, "--no-progress", "--format", "json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wall = time.monotonic() - t0
    if done.returncode != 0:
        sys.exit(f"{schedule} seed {seed} failed: {done.stderr}")
    with open(os.path.join(out, "result.json")) as f:
        result = json.load(f)
    trials = result["trials"]
    sleeps = [t["metrics"]["eval_seconds"] for t in trials if "eval_seconds" in t.get("metrics", {})]
    slept = sum(sleeps)
    if schedule == "rounds":
        # trials in trial order, every one evaluated: round r is trials [r*P, (r+1)*P), and
        # it lasts as long as its slowest evaluation
        bound = sum(max(sleeps[i : i + a.parallel]) for i in range(0, len(sleeps), a.parallel))
    else:
        bound = slept / a.parallel
    return {"trials": len(trials), "evaluated": len(sleeps), "wall": wall, "slept": slept, "bound": bound}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--trials", type=int, default=48)
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--algorithm", default="default")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--work", default="/dev/shm" if os.path.isdir("/dev/shm") else None)
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    print(
        f"parallel_evals {a.parallel}, budget {a.trials} trials, algorithm {a.algorithm}, "
        f"sleep {0.1 * a.scale:.2f}-{1.0 * a.scale:.2f} s per candidate, "
        f"journals in {a.work or tempfile.gettempdir()}"
    )
    print(
        f"{'seed':>4} {'schedule':<8} {'trials':>6} {'evals':>5} {'wall s':>8} {'sleep sum s':>11} "
        f"{'ideal s':>8} {'slot use':>8} {'bound s':>8}"
    )
    ratios = []
    bound_ratios = []
    with tempfile.TemporaryDirectory(prefix="bench-schedule-", dir=a.work) as work:
        for seed in seeds:
            walls = {}
            bounds = {}
            # alternate which schedule runs first, so that a slow spell hurts both alike
            order = ["rounds", "async"] if seed % 2 == 0 else ["async", "rounds"]
            for schedule in order:
                r = run(a.binary, work, schedule, seed, a)
                ideal = r["slept"] / a.parallel
                walls[schedule] = r["wall"]
                bounds[schedule] = r["bound"]
                print(
                    f"{seed:>4} {schedule:<8} {r['trials']:>6} {r['evaluated']:>5} {r['wall']:>8.2f} "
                    f"{r['slept']:>11.2f} {ideal:>8.2f} {ideal / r['wall']:>8.0%} {r['bound']:>8.2f}"
                )
                if r["trials"] != a.trials:
                    sys.exit(f"{schedule} seed {seed}: {r['trials']} trials, not {a.trials}")
            ratios.append(walls["rounds"] / walls["async"])
            bound_ratios.append(bounds["rounds"] / bounds["async"])
            print(f"{seed:>4} rounds / async: wall time {ratios[-1]:.2f}x, bound {bound_ratios[-1]:.2f}x")
    for name, r in [("wall time", ratios), ("bound", bound_ratios)]:
        print(
            f"median rounds / async {name} over {len(seeds)} seeds: {statistics.median(r):.2f}x "
            f"(min {min(r):.2f}x, max {max(r):.2f}x)"
        )


if __name__ == "__main__":
    main()
