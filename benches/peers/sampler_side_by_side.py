#!/usr/bin/env python3
"""Runs sweeper's bench-sampler and every peer sampler in one go, then prints the merged table.

Same flags for both sides: `--problem`, `--table`, `--trials`, `--batch`, `--seeds`. The Rust
side is `cargo run --release -p xtask -- bench-sampler ... --format json` with
`--algorithm` from `--ours` (default `default`; empty to skip it); the peers are
`sampler_peers.py` run by `--python` (default: this interpreter), one process per peer in
the order of `--peers`, the slow ones (GP, BoTorch) with `--slow-seeds` seeds when given.
Every JSON line goes to `--out` as it arrives (flushed, so a cut run keeps what it had),
then `sampler_table.py`'s table of the file is printed; its header line states the seeds
of each column when they differ.

`--table` is forwarded to the Rust side too (its bench-sampler must know that flag).

    OMP_NUM_THREADS=1 nice -n 10 .venv-peers/bin/python benches/peers/sampler_side_by_side.py \\
        --seeds 5 --slow-seeds 1 --trials 30,50,150 --batch 1,8 --out bench-out/all.jsonl
"""

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import sampler_peers  # noqa: E402
import sampler_table  # noqa: E402


def stream(cmd, out, what):
    """Runs `cmd`, appending its JSON lines to `out` as they come; stderr passes through."""
    t0 = time.perf_counter()
    print(f"sampler_side_by_side: {what}: {' '.join(cmd)}", file=sys.stderr, flush=True)
    with subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True) as proc:
        for line in proc.stdout:
            if line.lstrip().startswith("{"):
                out.write(line)
                out.flush()
    print(
        f"sampler_side_by_side: {what}: exit {proc.returncode} after {time.perf_counter() - t0:.0f} s",
        file=sys.stderr,
        flush=True,
    )
    return proc.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", default=None, help="comma list (default: all five, or none with --table)")
    ap.add_argument("--table", action="append", default=[], help="a JSON table problem (comma list or repeated)")
    ap.add_argument("--trials", default="30,50,150")
    ap.add_argument("--batch", default="1,8")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--slow-seeds", type=int, default=None, help="seeds for optuna_gp and botorch_qlognehvi")
    ap.add_argument("--ours", default="default", help="sweeper's algorithms (bench-sampler --algorithm); '' skips")
    ap.add_argument("--peers", default=",".join(sampler_peers.ALGORITHMS))
    ap.add_argument("--python", default=sys.executable, help="interpreter with optuna (and torch, botorch)")
    ap.add_argument("--out", required=True, help="JSON-lines file, overwritten")
    args = ap.parse_args()

    common = ["--trials", args.trials, "--batch", args.batch, "--seeds", str(args.seeds)]
    if args.problem is not None:
        common += ["--problem", args.problem]
    for t in args.table:
        common += ["--table", t]
    failed = []
    with open(args.out, "w") as out:
        if args.ours:
            rust = ["cargo", "run", "--release", "-q", "-p", "xtask", "--", "bench-sampler", *common,
                    "--algorithm", args.ours, "--format", "json"]
            if stream(rust, out, "sweeper") != 0:
                failed.append("sweeper")
        for peer in [p for p in args.peers.split(",") if p]:
            cmd = [args.python, os.path.join(HERE, "sampler_peers.py"), *common, "--algorithm", peer]
            if args.slow_seeds and peer in sampler_peers.SLOW:
                cmd += ["--slow-seeds", str(args.slow_seeds)]
            if stream(cmd, out, peer) != 0:
                failed.append(peer)
    print("\n".join(sampler_table.table(sampler_table.load([args.out]))))
    if failed:
        print(f"sampler_side_by_side: failed: {', '.join(failed)}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
