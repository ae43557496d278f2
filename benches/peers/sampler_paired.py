#!/usr/bin/env python3
"""Compares two runs of the same sampler benchmark seed by seed (standard library only).

    python3 benches/peers/sampler_paired.py BASE.jsonl VARIANT.jsonl [--algorithm default]

Both files are `cargo xtask bench-sampler --format json` lines with `hv_seeds`. For each
(problem, trials, batch) cell in both, and the algorithm asked for (`default` unless
told), it prints the mean of VARIANT − BASE over the seeds the two share (seed i of one
against seed i of the other), its standard error and their ratio t. Two variants of one
sampler started from the same seed draw the same initial design, so their seeds are
pairs: the paired difference is far less noisy than the gap between two medians. With
60 seeds the default's medians move by ±0.02 between variants that change nothing
(|t| < 1), where a change of the number of weights a member draws shows up as t = −7.

A cell where both runs are identical prints t = 0. The last line counts the cells with
t ≥ 2 and t ≤ −2.
"""

import argparse
import json
import math


def load(path, algorithm):
    cells = {}
    with open(path) as f:
        for line in f:
            if not line.strip().startswith("{"):
                continue
            d = json.loads(line)
            if d.get("algorithm") != algorithm or "hv_seeds" not in d:
                continue
            batch = f"a{d['in_flight']}" if d.get("in_flight") else str(d["batch"])
            cells[(d["problem"], d["trials"], batch)] = d["hv_seeds"]
    return cells


def paired(base, variant):
    """(mean of variant − base, standard error, t) over the first min(len) seeds."""
    n = min(len(base), len(variant))
    if n == 0:
        raise ValueError("no seeds to compare")
    diffs = [variant[i] - base[i] for i in range(n)]
    mean = sum(diffs) / n
    if n < 2:
        return mean, float("nan"), float("nan")
    sd = math.sqrt(sum((x - mean) ** 2 for x in diffs) / (n - 1))
    se = sd / math.sqrt(n)
    if se == 0.0:
        return mean, 0.0, 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
    return mean, se, mean / se


def report(base_cells, variant_cells):
    lines = []
    up = down = 0
    for key in sorted(set(base_cells) & set(variant_cells)):
        a, b = base_cells[key], variant_cells[key]
        mean, se, t = paired(a, b)
        up += t >= 2
        down += t <= -2
        lines.append(
            f"{key[0]:10} {key[1]:>4} trials  batch {key[2]:>3}  "
            f"{mean:+.4f} ± {se:.4f}  t {t:+.1f}  ({min(len(a), len(b))} seeds)"
        )
    lines.append(f"cells: {len(lines)}; t >= 2: {up}; t <= -2: {down}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base")
    ap.add_argument("variant")
    ap.add_argument("--algorithm", default="default")
    args = ap.parse_args()
    base = load(args.base, args.algorithm)
    variant = load(args.variant, args.algorithm)
    if not set(base) & set(variant):
        raise SystemExit(f"no cell of `{args.algorithm}` with hv_seeds is in both files")
    print("\n".join(report(base, variant)))


if __name__ == "__main__":
    main()
