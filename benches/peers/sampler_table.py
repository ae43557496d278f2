#!/usr/bin/env python3
"""Merges `bench-sampler --format json` lines (ours and Optuna's) into a Markdown table.

    python3 benches/peers/sampler_table.py ours.jsonl optuna.jsonl
"""

import json
import sys

COLUMNS = [
    ("default", "sweeper default"),
    ("optuna_tpe_multivariate", "Optuna TPE multivariate"),
    ("optuna_tpe", "Optuna TPE independent"),
    ("optuna_random", "Optuna random"),
    ("random", "sweeper random"),
    ("quasi_random", "sweeper quasi-random"),
]


def main():
    cells = {}
    for path in sys.argv[1:]:
        with open(path) as f:
            for line in f:
                if line.strip():
                    d = json.loads(line)
                    cells[(d["problem"], d["trials"], d["batch"], d["algorithm"])] = d
    present = [(k, t) for k, t in COLUMNS if any(c[3] == k for c in cells)]
    keys = sorted({c[:3] for c in cells}, key=lambda c: (["zdt1", "dtlz2", "serving"].index(c[0]), c[2], c[1]))
    head = ["problem", "trials", "batch"] + [t for _, t in present] + ["best peer", "verdict", "ours: suggest ms median / max"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for p, t, b in keys:
        row = [p, str(t), str(b)]
        for k, _ in present:
            d = cells.get((p, t, b, k))
            row.append("—" if d is None else f"{d['hv_median']:.3f} [{d['hv_min']:.2f}, {d['hv_max']:.2f}]")
        peers = [cells[(p, t, b, k)]["hv_median"] for k, _ in present if k != "default" and (p, t, b, k) in cells]
        ours = cells.get((p, t, b, "default"))
        best = max(peers) if peers else float("nan")
        row.append(f"{best:.3f}")
        row.append("—" if ours is None else ("**ours ≥**" if ours["hv_median"] >= best else "loses"))
        row.append("—" if ours is None else f"{ours['suggest_ms_median']:.1f} / {ours['suggest_ms_max']:.1f}")
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
