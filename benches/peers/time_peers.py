#!/usr/bin/env python3
"""Times the front peers and sweeper on the same .npy files, in one run, and prints a table.

    pip install moocore paretoset numpy
    cargo build --release -p sweeper-benches --bin front-figures
    cargo build --release --manifest-path benches/peers/pareto-front-crate/Cargo.toml
    python3 benches/peers/time_peers.py benches/data/*.npy > table.md

Every tool gets the same protocol: one untimed warm-up call (counted as the first call when
it takes over 1 s), then calls until there are 7 and they took 0.25 s, or until 2 s of
calls, and the median. Each cell is timed in --rounds interleaved rounds (every tool once
a round, in turned order; the Rust tools in a new process each time), and the table shows
the median over rounds; a tool whose first round took over 1 s is timed once. Peers (every column
maximized, duplicates kept, time around the call only):
  moocore    moocore.is_nondominated(X, maximise=True, keep_weakly=True)
  paretoset  paretoset(X, sense=["max"] * d, distinct=False)  (numba; warmed up first)
  crate      the Rust `pareto_front` crate 1.2.1, via benches/peers/pareto-front-crate
  sweeper    sweeper_score::front::nondominated, via the front-figures binary
A peer whose extrapolated time (from the previous size of the same distribution and d:
quadratic for the list-based peers, n^1.1 for moocore) exceeds --limit seconds is skipped
and shown as "gave up".
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

TARGET = os.environ.get("CARGO_TARGET_DIR", "target")
# A tool whose first round on a cell took longer than this (ms) is not timed again.
ROUND_ONCE_MS = 1000.0


def median_time(fn, budget_s=2.0, min_reps=7, min_s=0.25):
    """Median wall time in ms over the calls made until there are min_reps of them and they
    took min_s, or until budget_s (fewer calls when a call is slow), after one untimed
    warm-up call; a warm-up that takes over 1 s counts as the first call instead. The Rust
    timing binaries follow the same protocol. (Microsecond calls get thousands of samples,
    as with timeit's autorange: a median of 7 such calls moved by 30-50% between runs.)"""
    times = []
    t = time.perf_counter()
    result = fn()
    first = (time.perf_counter() - t) * 1e3
    if first > 1e3:
        times.append(first)
    start = time.perf_counter()
    while time.perf_counter() - start <= budget_s and (
        len(times) < min_reps or time.perf_counter() - start < min_s
    ):
        t = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times), result


def run_binary(cmd, path, timeout):
    """Runs a timing binary on one file; returns (front, ms) or None on timeout."""
    try:
        out = subprocess.run(cmd + [path], capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return None
    line = [l for l in out.stdout.splitlines() if l and not l.startswith("file")][-1]
    return line.split("\t")


def cell_of(path):
    m = re.match(r"(\w+)-(\d+)x(\d+)\.npy$", os.path.basename(path))
    return m.group(1), int(m.group(2)), int(m.group(3))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--limit", type=float, default=60.0, help="give up above this many seconds")
    ap.add_argument("--peers", default="sweeper,moocore,paretoset,crate")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per cell; the median is shown")
    args = ap.parse_args()
    peers = args.peers.split(",")

    import moocore
    from paretoset import paretoset

    # numba compiles on first use: do it outside the timings.
    paretoset(np.random.rand(100, 3), sense=["max"] * 3, distinct=False)

    ours = [os.environ.get("FRONT_FIGURES", os.path.join(TARGET, "release", "front-figures")), "--repeat", "7"]
    crate = [os.path.join(TARGET, "release", "time-pareto-front-crate"), "--repeat", "7"]
    last = {}  # (peer, dist, d) -> (n, seconds)

    def skip(peer, dist, n, d):
        prev = last.get((peer, dist, d))
        if prev is None:
            return False
        pn, secs = prev
        # moocore is O(n log n); the list-based peers are quadratic on large fronts.
        power = 1.1 if peer == "moocore" else 2
        return secs is None or secs * (n / pn) ** power > args.limit

    files = sorted(args.files, key=lambda p: (cell_of(p)[0], cell_of(p)[2], cell_of(p)[1]))
    print("| n × d, distribution | front | sweeper | moocore | paretoset | `pareto_front` crate | best peer / sweeper |")
    print("|---|---|---|---|---|---|---|")
    for path in files:
        dist, n, d = cell_of(path)
        X = np.load(path)
        front = None

        def time_once(p):
            """One timing of tool p on this cell (the protocol of median_time): ms, or None
            when it timed out."""
            nonlocal front
            if p == "sweeper":
                r = run_binary(ours, path, timeout=600)
                front = int(r[3])
                return float(r[4])
            if p == "moocore":
                ms, res = median_time(lambda: moocore.is_nondominated(X, maximise=True, keep_weakly=True))
                front = int(res.sum()) if front is None else front
                return ms
            if p == "paretoset":
                return median_time(lambda: paretoset(X, sense=["max"] * d, distinct=False))[0]
            r = run_binary(crate, path, timeout=args.limit * 3)
            return float(r[2]) if r else None

        # Rounds: every tool once per round, the order turned by one each round, and the
        # median over rounds. The machine has slow spells of a second or more (the same
        # binary's median moves by 1.5x from one process to the next); interleaving gives
        # every tool the same chance of meeting one. A tool whose round took over
        # ROUND_ONCE_MS is timed in the first round only.
        tools = [p for p in ("sweeper", "moocore", "paretoset", "crate")
                 if p in peers and (p == "sweeper" or not skip(p, dist, n, d))]
        times = {p: [] for p in tools}
        for r in range(args.rounds):
            for p in tools[r % len(tools):] + tools[:r % len(tools)]:
                if r > 0 and (not times[p] or times[p][0] is None or times[p][0] > ROUND_ONCE_MS):
                    continue
                times[p].append(time_once(p))
        row = {p: (None if None in t else statistics.median(t)) for p, t in times.items()}
        for p in ("moocore", "paretoset", "crate"):
            if p in row:
                last[(p, dist, d)] = (n, None if row[p] is None else row[p] / 1e3)
            elif (p, dist, d) in last:
                last[(p, dist, d)] = (n, None)

        def fmt(p):
            v = row.get(p)
            if v is None:
                return "gave up" if p in peers else "–"
            return f"{v / 1e3:.2f} s" if v >= 1000 else f"{v:.3g} ms" if v >= 1 else f"{v * 1e3:.0f} µs"

        peer_times = [row[p] for p in ("moocore", "paretoset", "crate") if row.get(p) is not None]
        ratio = f"{min(peer_times) / row['sweeper']:.1f}×" if peer_times and row.get("sweeper") else "–"
        print(f"| {n:.0e} × {d}, {dist} | {front:,} | {fmt('sweeper')} | {fmt('moocore')} | "
              f"{fmt('paretoset')} | {fmt('crate')} | {ratio} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
