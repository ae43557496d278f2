#!/usr/bin/env python3
"""Times non-dominated sorting (per row its front number) by sweeper, by sweeper before the
sweep and the tree (peeling), and by moocore, on the same .npy files in one run; prints a
table.

    pip install moocore numpy
    cargo build --release -p sweeper-benches --bin front-figures
    python3 benches/peers/time_ranks.py benches/data/{uniform,correlated,anticorrelated}-1*x[345].npy

    # the "before" column: front-figures built at the commit before the new kernels
    FRONT_FIGURES_BEFORE=/tmp/front-figures-before python3 benches/peers/time_ranks.py ...

The protocol is time_peers.py's (it is imported from there): one untimed warm-up call
(counted when it takes over 1 s), then calls until there are 7 and they took 0.25 s, or
until 2 s; each cell in --rounds interleaved rounds, the order turned each round, the
median over rounds; a tool whose first round took over 1 s is timed once. Tools, every
column maximized, time around the call only:
  sweeper   sweeper_score::front::nondominated_ranks, via `front-figures --ranks`
  before    the same binary built before the change ($FRONT_FIGURES_BEFORE), if given
  moocore   moocore.pareto_rank(X, maximise=True) (duplicates share a rank, as ours)
Every tool's number of fronts is checked against sweeper's. A tool whose time,
extrapolated from the previous size of the same distribution and d as n^1.5 (both
peelers do a front's work per front, and the fronts grow with n), exceeds --limit seconds
is shown as "gave up".
"""

import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from time_peers import ROUND_ONCE_MS, TARGET, cell_of, median_time, run_binary  # noqa: E402


def fmt(v):
    if v is None:
        return "gave up"
    return f"{v / 1e3:.2f} s" if v >= 1000 else f"{v:.3g} ms" if v >= 1 else f"{v * 1e3:.0f} µs"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--limit", type=float, default=120.0, help="give up above this many seconds")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per cell; the median is shown")
    args = ap.parse_args()

    import moocore

    ours = [os.environ.get("FRONT_FIGURES", os.path.join(TARGET, "release", "front-figures")),
            "--ranks", "--repeat", "7"]
    before = os.environ.get("FRONT_FIGURES_BEFORE")
    tools = ["sweeper"] + (["before"] if before else []) + ["moocore"]
    last = {}  # (tool, dist, d) -> (n, seconds or None)

    def skip(tool, dist, n, d):
        prev = last.get((tool, dist, d))
        if prev is None:
            return False
        pn, secs = prev
        return secs is None or secs * (n / pn) ** 1.5 > args.limit

    files = sorted(args.files, key=lambda p: (cell_of(p)[0], cell_of(p)[2], cell_of(p)[1]))
    head = "| n × d, distribution | fronts | sweeper |" + (" before (peeling) | before / sweeper |" if before else "")
    print(head + " moocore `pareto_rank` | moocore / sweeper |")
    print("|---" * (head.count("|") + 1) + "|")
    for path in files:
        dist, n, d = cell_of(path)
        X = np.load(path)
        fronts = {}

        def time_once(t):
            if t in ("sweeper", "before"):
                cmd = ours if t == "sweeper" else [before] + ours[1:]
                r = run_binary(cmd, path, timeout=args.limit * 4)
                if r is None:
                    return None
                fronts[t] = int(r[3])
                return float(r[4])
            ms, res = median_time(lambda: moocore.pareto_rank(X, maximise=True))
            fronts[t] = int(res.max()) + 1 if len(res) else 0
            return ms

        active = [t for t in tools if t == "sweeper" or not skip(t, dist, n, d)]
        times = {t: [] for t in active}
        for r in range(args.rounds):
            for t in active[r % len(active):] + active[:r % len(active)]:
                if r > 0 and (not times[t] or times[t][0] is None or times[t][0] > ROUND_ONCE_MS):
                    continue
                times[t].append(time_once(t))
        row = {t: (None if None in v else statistics.median(v)) for t, v in times.items()}
        for t in tools[1:]:
            last[(t, dist, d)] = (n, row[t] / 1e3 if row.get(t) is not None else None)
        for t, f in fronts.items():
            if f != fronts["sweeper"]:
                sys.exit(f"{path}: {t} found {f} fronts, sweeper {fronts['sweeper']}")

        def ratio(t):
            return f"{row[t] / row['sweeper']:.1f}×" if row.get(t) is not None and row["sweeper"] else "–"

        line = f"| {n:.0e} × {d}, {dist} | {fronts['sweeper']:,} | {fmt(row['sweeper'])} |"
        if before:
            line += f" {fmt(row.get('before'))} | {ratio('before')} |"
        print(line + f" {fmt(row.get('moocore'))} | {ratio('moocore')} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
