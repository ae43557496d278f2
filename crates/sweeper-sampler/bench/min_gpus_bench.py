"""Trials each sampler needs to find the fewest-GPU satisfying configuration of
`min_gpus.yaml` (the built-in model; or of another config of the same shape, such as
`min_gpus_dense.yaml`, or `min_gpus_moe.yaml` over a topology), over 20 seeds: sweeper's algorithms through `sweeper run`, and
Optuna's TPE with `constraints_func` over the same points (read from an exhaustive grid
run, so both see identical numbers). Each run is capped at the grid's size.

    python3 crates/sweeper-sampler/bench/min_gpus_bench.py SWEEPER_BINARY [SEEDS] [CONFIG]

A config with `search_space.topology` (a pool of deployments, not a box) has no
tp/replicas/batch table: its Optuna row and the table are skipped, and the table's last
row is what a grid in a random order needs on average, (N + 1) / (k + 1) for k answers
among N points. There `MIN_GPUS_CAP=N` caps each run at N trials instead of the grid's
size, and `MIN_GPUS_ALGORITHMS=default,random` picks the algorithms.

Optuna is optional (`pip install optuna`); without it its rows are skipped. Prints a
markdown table. With `MIN_GPUS_TABLE=PATH` it also writes the grid's numbers there, which
`cargo run --release -p sweeper-sampler --example min_gpus_replay` replays in process.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "min_gpus.yaml")
FLOOR = 11.4


def use_config(path):
    """Benchmarks `path` instead: its floor is its `min_goodput_rps`."""
    global CONFIG, FLOOR
    CONFIG = path
    with open(path) as f:
        for line in f:
            if line.strip().startswith("min_goodput_rps:"):
                FLOOR = float(line.split(":", 1)[1])


def run(binary, algorithm, seed, out, trials):
    with open(CONFIG) as f:
        text = f.read()
    text = text.replace("algorithm: grid", f"algorithm: {algorithm}")
    text = text.replace("seed: 1", f"seed: {seed}")
    text = text.replace("parallel_evals: 1", f"parallel_evals: 1\n  max_trials: {trials}")
    path = os.path.join(out, f"{algorithm}-{seed}.yaml")
    with open(path, "w") as f:
        f.write(text)
    subprocess.run(
        [binary, "-q", "run", path, "--out", os.path.join(out, f"{algorithm}-{seed}")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    with open(os.path.join(out, f"{algorithm}-{seed}", "result.json")) as f:
        return json.load(f)["trials"]


def satisfying(t):
    return t["status"] == "feasible" and t["metrics"].get(
        "goodput_request_throughput_rps", 0.0
    ) >= FLOOR


def first_at(trials, best):
    for k, t in enumerate(trials):
        if satisfying(t) and t["config"]["used_gpus"] == best:
            return k + 1
    return None


def optuna_runs(table, best, seeds, cap):
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    tps = sorted({k[0] for k in table})
    reps = sorted({k[1] for k in table})
    batches = sorted({k[2] for k in table})
    out = []
    for seed in seeds:
        def objective(trial):
            key = (
                trial.suggest_categorical("tp", tps),
                trial.suggest_int("replicas", min(reps), max(reps)),
                trial.suggest_categorical("max_batch_size", batches),
            )
            gpus, goodput = table[key]
            trial.set_user_attr("c", [FLOOR - goodput])
            return gpus

        sampler = optuna.samplers.TPESampler(
            seed=seed, constraints_func=lambda t: t.user_attrs["c"]
        )
        study = optuna.create_study(direction="minimize", sampler=sampler)
        found = None
        for n in range(1, cap + 1):
            study.optimize(objective, n_trials=1)
            t = study.trials[-1]
            if t.user_attrs["c"][0] <= 0 and t.value == best:
                found = n
                break
        out.append(found)
    return out


def row(name, counts, cap):
    got = [c for c in counts if c is not None]
    missed = len(counts) - len(got)
    if not got:
        return f"| {name} | - | - | - | {missed} |"
    return (
        f"| {name} | {statistics.median(got):g} | {statistics.mean(got):.1f} | {max(got)} | {missed} |"
    )


def topology_main(binary, seeds, out, grid):
    """The rows of a topology config: no table, no Optuna."""
    cap = int(os.environ.get("MIN_GPUS_CAP", len(grid)))
    best = min(t["config"]["used_gpus"] for t in grid if satisfying(t))
    answers = sum(1 for t in grid if satisfying(t) and t["config"]["used_gpus"] == best)
    print(f"{len(grid)} points; fewest GPUs reaching {FLOOR} req/s: {best} ({answers} points)")
    print()
    print(f"| sampler | median trials | mean | worst | not found in {cap} |")
    print("|---|---|---|---|---|")
    print(row("exhaustive grid (sweeper `grid`)", [first_at(grid, best)], len(grid)))
    algorithms = os.environ.get("MIN_GPUS_ALGORITHMS", "default,random,quasi_random")
    for algorithm in algorithms.split(","):
        counts = [first_at(run(binary, algorithm, s, out, cap), best) for s in seeds]
        print(row(f"sweeper `{algorithm}`", counts, cap), flush=True)
    expected = (len(grid) + 1) / (answers + 1)
    print(f"| a grid in a random order (expected) | | {expected:.1f} | | |")


def main():
    binary = sys.argv[1]
    seeds = range(1, int(sys.argv[2]) + 1 if len(sys.argv) > 2 else 21)
    if len(sys.argv) > 3:
        use_config(sys.argv[3])
    with tempfile.TemporaryDirectory() as out:
        grid = run(binary, "grid", 1, out, 100_000)
        with open(CONFIG) as f:
            if "topology:" in f.read():
                return topology_main(binary, seeds, out, grid)
        cap = len(grid)
        table = {
            (t["config"]["tp"], t["config"]["replicas"], t["config"]["max_batch_size"]): (
                t["config"]["used_gpus"],
                t["metrics"].get("goodput_request_throughput_rps", 0.0),
            )
            for t in grid
        }
        best = min(t["config"]["used_gpus"] for t in grid if satisfying(t))
        if os.environ.get("MIN_GPUS_TABLE"):
            # the grid's numbers, for the in-process replay (examples/min_gpus_replay.rs)
            with open(os.environ["MIN_GPUS_TABLE"], "w") as f:
                json.dump([[*k, *v] for k, v in sorted(table.items())], f)
        print(f"{len(table)} points; fewest GPUs reaching {FLOOR} req/s: {best}")
        print()
        print(f"| sampler | median trials | mean | worst | not found in {cap} |")
        print("|---|---|---|---|---|")
        print(row("exhaustive grid (sweeper `grid`)", [first_at(grid, best)], cap))
        for algorithm in ["default", "random", "quasi_random"]:
            counts = [first_at(run(binary, algorithm, s, out, cap), best) for s in seeds]
            print(row(f"sweeper `{algorithm}`", counts, cap), flush=True)
        try:
            counts = optuna_runs(table, best, seeds, cap)
            print(row("Optuna TPE + constraints_func", counts, cap))
        except ImportError:
            print("| Optuna TPE + constraints_func | (optuna not installed) | | | |")


if __name__ == "__main__":
    main()
