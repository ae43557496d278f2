#!/usr/bin/env python3
"""Merges `bench-sampler --format json` lines (ours and the peers') into a Markdown table.

    python3 benches/peers/sampler_table.py ours.jsonl bench-out/*.jsonl

One row per (problem, trials, batch): the five built-in problems in the order of
problems.rs, then the table problems by name; batches, then budgets, ascending. Cells are
the median normalized hypervolume [min, max] over seeds. "best peer" is the best median
of every column but sweeper's own `default` (sweeper's random and quasi-random included),
with its name; "verdict" compares `default`'s median with it (`**ours ≥**` or `loses`).
Where both sides carry per-seed values (`hv_seeds`), two more columns test the seeds
themselves, not only the medians (Mann–Whitney's rank-sum test, normal approximation with
the tie correction; the seeds of two algorithms are independent runs, not pairs):
"ours > best peer" is the share of (our seed, its seed) pairs in which ours is higher
(ties count half; 0.5 is a coin toss) with the two-sided p-value, and "peers ahead,
p < 0.05" names every peer whose seeds are higher than ours at that level, one-sided.
A header line says how many seeds each column ran when they differ (the slow peers'
`--slow-seeds`). A later line for the same cell replaces an earlier one.
"""

import json
import math
import sys

COLUMNS = [
    ("default", "sweeper default"),
    ("optuna_tpe_multivariate", "Optuna TPE multivariate"),
    ("optuna_tpe", "Optuna TPE independent"),
    ("optuna_nsga2", "Optuna NSGA-II"),
    ("optuna_gp", "Optuna GP"),
    ("optuna_qmc", "Optuna QMC (Sobol)"),
    ("optuna_tpe_multivariate_constrained", "Optuna TPE multivariate, constraints"),
    ("optuna_tpe_constrained", "Optuna TPE independent, constraints"),
    ("optuna_nsga2_constrained", "Optuna NSGA-II, constraints"),
    ("botorch_qlognehvi", "BoTorch qLogNEHVI"),
    ("optuna_random", "Optuna random"),
    ("random", "sweeper random"),
    ("quasi_random", "sweeper quasi-random"),
    ("grid", "sweeper grid"),
]
SHORT = {
    "optuna_tpe_multivariate": "TPE-mv",
    "optuna_tpe": "TPE",
    "optuna_nsga2": "NSGA-II",
    "optuna_gp": "GP",
    "optuna_qmc": "QMC",
    "optuna_tpe_multivariate_constrained": "TPE-mv-c",
    "optuna_tpe_constrained": "TPE-c",
    "optuna_nsga2_constrained": "NSGA-II-c",
    "botorch_qlognehvi": "BoTorch",
    "optuna_random": "random",
    "random": "sw-random",
    "quasi_random": "sw-quasi",
    "grid": "sw-grid",
}
PROBLEMS = ["zdt1", "dtlz2", "dtlz2_4", "serving", "kernel"]


def load(paths):
    cells = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.strip().startswith("{"):
                    d = json.loads(line)
                    batch = f"a{d['in_flight']}" if d.get("in_flight") else str(d["batch"])
                    cells[(d["problem"], d["trials"], batch, d["algorithm"])] = d
    return cells


def rank_test(a, b):
    """Mann–Whitney: (P(A > B) + P(A = B) / 2, z of A's rank sum); z > 0 when A is higher."""
    n, m = len(a), len(b)
    pooled = sorted((v, side) for side, vals in ((0, a), (1, b)) for v in vals)
    ranks = [0.0] * len(pooled)
    ties = 0.0
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for r in range(i, j + 1):
            ranks[r] = (i + j) / 2 + 1
        t = j - i + 1
        ties += t**3 - t
        i = j + 1
    ra = sum(r for r, (_, side) in zip(ranks, pooled) if side == 0)
    u = ra - n * (n + 1) / 2
    var = n * m / 12 * ((n + m + 1) - ties / ((n + m) * (n + m - 1)))
    z = (u - n * m / 2) / math.sqrt(var) if var > 0 else 0.0
    return u / (n * m), z


def two_sided(z):
    return math.erfc(abs(z) / math.sqrt(2))


def one_sided_below(z):
    """p of "A is lower than B" from A's z."""
    return 0.5 * math.erfc(-z / math.sqrt(2)) if z < 0 else 1 - 0.5 * math.erfc(z / math.sqrt(2))


def problem_order(p):
    return (0, PROBLEMS.index(p), "") if p in PROBLEMS else (1, 0, p)


def batch_order(b):
    return (1, int(b[1:])) if b.startswith("a") else (0, int(b))


def table(cells):
    """The Markdown lines."""
    known = [k for k, _ in COLUMNS]
    extra = sorted({c[3] for c in cells} - set(known))
    columns = [(k, t) for k, t in COLUMNS if any(c[3] == k for c in cells)] + [(k, k) for k in extra]
    out = []
    seeds = {}
    for (_, _, _, a), d in cells.items():
        seeds.setdefault(a, set()).add(d["seeds"])
    if len({s for v in seeds.values() for s in v}) > 1:
        parts = ", ".join(f"{k}: {'/'.join(map(str, sorted(seeds[k])))}" for k, _ in columns)
        out.append(f"Seeds per column (median and range over that many): {parts}.")
        out.append("")
    tested = any("hv_seeds" in d for d in cells.values())
    keys = sorted({c[:3] for c in cells}, key=lambda c: (problem_order(c[0]), batch_order(c[2]), c[1]))
    head = (
        ["problem", "trials", "batch"]
        + [t for _, t in columns]
        + ["best peer", "verdict"]
        + (["ours > best peer", "peers ahead, p < 0.05"] if tested else [])
        + ["ours: suggest ms median / max", "best peer: suggest ms median / max"]
    )
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for p, t, b in keys:
        row = [p, str(t), b]
        for k, _ in columns:
            d = cells.get((p, t, b, k))
            row.append("—" if d is None else f"{d['hv_median']:.3f} [{d['hv_min']:.2f}, {d['hv_max']:.2f}]")
        peers = [(cells[(p, t, b, k)]["hv_median"], k) for k, _ in columns if k != "default" and (p, t, b, k) in cells]
        ours = cells.get((p, t, b, "default"))
        if peers:
            best, best_k = max(peers, key=lambda p: p[0])
            row.append(f"{best:.3f} {SHORT.get(best_k, best_k)}")
        else:
            best, best_k = float("nan"), None
            row.append("—")
        if ours is None or not peers:
            row.append("—")
        else:
            row.append("**ours ≥**" if ours["hv_median"] >= best else "loses")
        if tested:
            bd = cells.get((p, t, b, best_k)) if best_k else None
            if ours is None or bd is None or "hv_seeds" not in ours or "hv_seeds" not in bd:
                row += ["—", "—"]
            else:
                share, z = rank_test(ours["hv_seeds"], bd["hv_seeds"])
                row.append(f"{share:.2f} (p {two_sided(z):.2f})")
                ahead = []
                for k, _ in columns:
                    d = cells.get((p, t, b, k))
                    if k == "default" or d is None or "hv_seeds" not in d:
                        continue
                    _, z = rank_test(ours["hv_seeds"], d["hv_seeds"])
                    if one_sided_below(z) < 0.05:
                        ahead.append(SHORT.get(k, k))
                row.append(", ".join(ahead) if ahead else "none")
        row.append("—" if ours is None else f"{ours['suggest_ms_median']:.1f} / {ours['suggest_ms_max']:.1f}")
        bd = cells.get((p, t, b, best_k)) if best_k else None
        row.append("—" if bd is None else f"{bd['suggest_ms_median']:.1f} / {bd['suggest_ms_max']:.1f}")
        out.append("| " + " | ".join(row) + " |")
    return out


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    print("\n".join(table(load(sys.argv[1:]))))


if __name__ == "__main__":
    main()
