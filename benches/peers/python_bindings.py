#!/usr/bin/env python3
"""The Python bindings (`pip install sweeper`, crates/sweeper-py) against their Python peers,
side by side in one run. Not a test: it prints two markdown tables.

    pip install maturin moocore paretoset optuna numpy   # + torch for optuna's GPSampler
    maturin develop --release -m crates/sweeper-py/Cargo.toml
    cargo build --release -p sweeper-benches --bin front-figures   # optional: the Rust column
    python3 benches/peers/python_bindings.py [--quick] [--limit 20]

1. Pareto fronts of seeded float64 arrays (every column maximized, duplicates kept):
     sweeper    sweeper.pareto_front(X, ["max"] * d)  (the front, sorted as SPEC 3 says)
     rust       the same kernel without Python, sweeper_score::front::nondominated timed
                inside the front-figures binary on the same data (when it is built)
     moocore    moocore.is_nondominated(X, maximise=True, keep_weakly=True)
     paretoset  paretoset(X, sense=["max"] * d, distinct=False)  (numba; warmed up first)
   Every call is timed with the protocol of time_peers.py (median_time: one warm-up, then
   calls until 7 of them took 0.25 s, or 2 s), in --rounds interleaved rounds per cell
   (every tool once a round, in turned order; the median over rounds; a tool whose first
   round took over 1 s is timed once). A peer whose time, extrapolated from the previous
   size of the same distribution and d (or from a pilot call on a tenth of the rows;
   quadratic for paretoset, n^1.1 for moocore), exceeds --limit seconds is shown as
   "gave up". The per-call overhead of the
   binding is sweeper.pareto_front on a 1-row array, and on 1e3 rows against the rust
   column.
2. Suggest latency of a study driven from one Python loop on ZDT1 (6 floats, 2 minimized
   objectives), one suggestion per call (ask for the peers), seeds 0..2: sweeper.Study
   (default GP-UCB-PE), Optuna's TPE (multivariate) and Optuna's GPSampler (when torch is
   installed). Also the normalized hypervolume at the end, as cargo xtask bench-sampler
   reports it.
"""

import argparse
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from time_peers import median_time  # noqa: E402  (one timing protocol for every table)

import sweeper  # noqa: E402


def data(dist, n, d, seed=0):
    """The distributions of BENCHMARKS.md, seeded."""
    rng = np.random.default_rng(seed)
    if dist == "uniform":
        return rng.random((n, d))
    if dist == "anticorrelated":
        X = rng.random((n, d))
        X += (d / 2 - X.sum(axis=1, keepdims=True)) / d
        return X + rng.normal(0.0, 0.01, size=(n, d))
    if dist == "sphere":
        X = np.abs(rng.normal(size=(n, d)))
        return X / np.linalg.norm(X, axis=1, keepdims=True)
    raise ValueError(dist)


def fmt_ms(ms):
    if ms is None:
        return "gave up"
    if ms < 1:
        return f"{ms * 1e3:.1f} µs"
    if ms < 1e3:
        return f"{ms:.1f} ms"
    return f"{ms / 1e3:.2f} s"


def rust_kernel_ms(binary, X, tmp):
    """The kernel's own time in the front-figures binary on the same data, or None."""
    if binary is None:
        return None
    path = os.path.join(tmp, "cell.npy")
    np.save(path, X)
    out = subprocess.run([binary, "--npy", path], capture_output=True, text=True, check=True, timeout=600)
    line = [l for l in out.stdout.splitlines() if l and not l.startswith("file")][-1].split("\t")
    # columns: file, n, d, front, median_ms, min_ms
    return float(line[4])


def fronts(args):
    import moocore
    from paretoset import paretoset

    target = os.environ.get("CARGO_TARGET_DIR", "target")
    binary = os.path.join(target, "release", "front-figures")
    binary = binary if os.path.isfile(binary) else None
    cells = [
        ("uniform", 1_000, 2), ("uniform", 100_000, 2), ("uniform", 1_000_000, 2),
        ("uniform", 100_000, 3), ("uniform", 1_000_000, 3), ("uniform", 10_000_000, 3),
        ("uniform", 100_000, 5), ("uniform", 1_000_000, 5), ("uniform", 10_000_000, 5),
        ("anticorrelated", 100_000, 3), ("anticorrelated", 1_000_000, 3),
        ("anticorrelated", 100_000, 4), ("anticorrelated", 1_000_000, 4),
        ("sphere", 100_000, 2), ("sphere", 1_000_000, 2),
        ("sphere", 100_000, 5), ("sphere", 1_000_000, 5),
    ]
    if args.quick:
        cells = [c for c in cells if c[1] <= 1_000_000 and c[2] != 5]
    if args.dist:
        cells = [c for c in cells if c[0] in args.dist]
    # numba compiles on the first call
    paretoset(np.random.default_rng(0).random((100, 2)), sense=["max", "max"], distinct=False)
    one = np.array([[1.0, 2.0]])
    overhead = statistics.median(
        median_time(lambda: sweeper.pareto_front(one, ["max", "max"]))[0] for _ in range(args.rounds)
    )
    print(f"sweeper.pareto_front on a 1-row array (per-call overhead): {fmt_ms(overhead)}\n")
    print("| n × d, distribution | front | sweeper.pareto_front | rust kernel alone | moocore | paretoset | moocore / sweeper | paretoset / sweeper |")
    print("|---|---|---|---|---|---|---|---|")
    last = {}
    tmp = tempfile.mkdtemp()
    power = {"moocore": 1.1, "paretoset": 2.0}
    try:
        for dist, n, d in cells:
            X = data(dist, n, d)
            dirs = ["max"] * d
            tools = {
                "sweeper": lambda: sweeper.pareto_front(X, dirs),
                "rust": None,
                "moocore": lambda: moocore.is_nondominated(X, maximise=True, keep_weakly=True),
                "paretoset": lambda: paretoset(X, sense=dirs, distinct=False),
            }
            if binary is None:
                del tools["rust"]
            front = sweeper.pareto_front(X, dirs)
            skipped = set()
            for peer in ("moocore", "paretoset"):
                prev = last.get((peer, dist, d))
                if prev is None:
                    # a pilot call on a tenth of the rows, to extrapolate from
                    k = max(n // 10, 1)
                    t0 = time.perf_counter()
                    if peer == "moocore":
                        moocore.is_nondominated(X[:k], maximise=True, keep_weakly=True)
                    else:
                        paretoset(X[:k], sense=dirs, distinct=False)
                    prev = (k, (time.perf_counter() - t0) * 1e3)
                if prev[1] is None or prev[1] / 1e3 * (n / prev[0]) ** power[peer] > args.limit:
                    skipped.add(peer)
            times = {t: [] for t in tools}
            for r in range(args.rounds):
                order = list(tools)
                order = order[r % len(order):] + order[: r % len(order)]
                for tool in order:
                    if tool in skipped or (r > 0 and times[tool] and times[tool][0] > 1e3):
                        continue
                    if tool == "rust":
                        times[tool].append(rust_kernel_ms(binary, X, tmp))
                        continue
                    ms, out = median_time(tools[tool])
                    times[tool].append(ms)
                    if tool != "sweeper":
                        assert int(np.count_nonzero(out)) == len(front), (tool, dist, n, d)
            row = {t: (statistics.median(v) if v else None) for t, v in times.items()}
            for peer in ("moocore", "paretoset"):
                last[(peer, dist, d)] = (n, row[peer])
            ratio = lambda p: "" if row[p] is None else f"{row[p] / row['sweeper']:.1f}×"
            print(
                f"| {n:.0e} × {d}, {dist} | {len(front):,} | {fmt_ms(row['sweeper'])} | {fmt_ms(row['rust']) if binary else 'not built'} "
                f"| {fmt_ms(row['moocore'])} | {fmt_ms(row['paretoset'])} | {ratio('moocore')} | {ratio('paretoset')} |",
                flush=True,
            )
    finally:
        shutil.rmtree(tmp)


def zdt1(x):
    f1 = x[0]
    g = 1.0 + 9.0 * sum(x[1:]) / 5.0
    return f1, g * (1.0 - math.sqrt(f1 / g))


def normalized_hv(points):
    return sweeper.hypervolume(np.array(points), [1.1, 3.0], ["min", "min"]) / (3.3 - 1.0 / 3.0)


def drive_sweeper(seed, trials):
    s = sweeper.Study({f"x{i}": {"float": [0, 1]} for i in range(6)}, [("f1", "min"), ("f2", "min")], seed=seed)
    times, points = [], []
    for _ in range(trials):
        t0 = time.perf_counter()
        (t,) = s.suggest(1)
        times.append((time.perf_counter() - t0) * 1e3)
        f = zdt1([t.params[f"x{i}"] for i in range(6)])
        s.observe(t.id, {"f1": f[0], "f2": f[1]})
        points.append(f)
    return times, normalized_hv(points)


def drive_optuna(sampler, trials):
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=sampler)
    dists = {f"x{i}": optuna.distributions.FloatDistribution(0.0, 1.0) for i in range(6)}
    times, points = [], []
    for _ in range(trials):
        t0 = time.perf_counter()
        trial = study.ask(dists)  # the sampler runs here for fixed distributions
        times.append((time.perf_counter() - t0) * 1e3)
        f = zdt1([trial.params[f"x{i}"] for i in range(6)])
        study.tell(trial, list(f))
        points.append(f)
    return times, normalized_hv(points)


def suggest(args):
    import optuna

    trials, seeds = (20, [0]) if args.quick else (args.trials, [0, 1, 2])
    samplers = [
        ("sweeper.Study (default)", lambda s: drive_sweeper(s, trials)),
        ("Optuna TPE, multivariate", lambda s: drive_optuna(optuna.samplers.TPESampler(seed=s, multivariate=True), trials)),
    ]
    try:
        import torch  # noqa: F401

        samplers.append(("Optuna GPSampler", lambda s: drive_optuna(optuna.samplers.GPSampler(seed=s), trials)))
    except ImportError:
        print("(Optuna's GPSampler needs torch, which is not installed: row left out)\n")
    print(f"ZDT1, {trials} trials, batch 1, seeds {seeds}; optuna {optuna.__version__}\n")
    print("| sampler | suggest median | suggest p90 | suggest max | normalized HV at the end (median) |")
    print("|---|---|---|---|---|")
    for name, drive in samplers:
        times, hvs = [], []
        for seed in seeds:
            t, hv = drive(seed)
            times += t
            hvs.append(hv)
        times.sort()
        p90 = times[int(0.9 * (len(times) - 1))]
        print(f"| {name} | {fmt_ms(statistics.median(times))} | {fmt_ms(p90)} | {fmt_ms(times[-1])} | {statistics.median(hvs):.3f} |", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="small cells and one seed (a smoke run)")
    p.add_argument("--limit", type=float, default=20.0, help="seconds a peer may be extrapolated to take")
    p.add_argument("--trials", type=int, default=50)
    p.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds per cell (median)")
    p.add_argument("--only", choices=["fronts", "suggest"])
    p.add_argument("--dist", nargs="+", choices=["uniform", "anticorrelated", "sphere"], help="front cells of these distributions only")
    args = p.parse_args()
    print(f"sweeper {sweeper.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}\n")
    if args.only in (None, "fronts"):
        fronts(args)
        print()
    if args.only in (None, "suggest"):
        suggest(args)


if __name__ == "__main__":
    main()
