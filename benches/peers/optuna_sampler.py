#!/usr/bin/env python3
"""Optuna peers on the `cargo xtask bench-sampler` problems (issue 4), same JSON lines.

Runs Optuna's TPE (multivariate and the default independent one) and its random sampler
on ZDT1, DTLZ2 and the serving problem, with the budgets, batches and seeds of the Rust
benchmark, and prints one JSON object per (problem, algorithm, trials, batch) cell:
{"problem", "algorithm", "trials", "batch", "seeds", "hv_median", "hv_min", "hv_max",
 "suggest_ms_median", "suggest_ms_max"}.

Like the Rust side, one run per seed at the largest budget; a budget's cell reads the first
`trials` trials. A batch is `ask()`ed whole (parameters sampled) before any `tell()`; its
suggest time is the time of those asks and parameter draws. Infeasible serving trials are
told as FAIL (Optuna's samplers then ignore them), not as fake values.

    pip install optuna
    python3 benches/peers/optuna_sampler.py --seeds 5 --trials 30,50,150 --batch 1,8
"""

import argparse
import json
import math
import statistics
import time

import optuna
from optuna.trial import TrialState

ROUTERS = ["round_robin", "kv_aware", "random"]


def zdt1(x):
    f1 = x[0]
    g = 1.0 + 9.0 * sum(x[1:]) / 5.0
    return [f1, g * (1.0 - math.sqrt(f1 / g))]


def dtlz2(x):
    g = sum((v - 0.5) ** 2 for v in x[2:])
    a = x[0] * math.pi / 2.0
    b = x[1] * math.pi / 2.0
    return [
        (1 + g) * math.cos(a) * math.cos(b),
        (1 + g) * math.cos(a) * math.sin(b),
        (1 + g) * math.sin(a),
    ]


def serving(tp, replicas, router, r):
    """(per_gpu, per_user), or None when over 16 GPUs."""
    gpus = tp * replicas
    if gpus > 16:
        return None
    imb = [1.10, 1.03, 1.25][router]
    u = 96.0 / replicas * imb
    kv = tp * 72.0 - 30.0
    cap = 1.0 + kv * r / 1.5
    b = (u ** -4 + cap ** -4) ** -0.25
    single = 60.0 * tp ** 0.7
    speed = single / (1.0 + b / 24.0)
    pre = 1.0 / (1.0 + math.exp((r - 0.92) / 0.02))
    hit = [0.10, 0.40, 0.05][router] * (1.0 - r)
    boost = (0.6 + 0.4 * pre) / (1.0 - 0.5 * hit)
    eff = [0.93, 0.99 - 0.015 * replicas, 0.85][router]
    per_gpu = replicas * b * speed * boost * eff / gpus
    lat = [1.0, 0.97, 1.0][router]
    per_user = speed * boost * lat * (b / u) ** 0.3
    return per_gpu, per_user


def hv2(points, ref):
    pts = sorted(p for p in points if p[0] < ref[0] and p[1] < ref[1])
    front = []
    for p in pts:
        if not front or p[1] < front[-1][1]:
            front.append(p)
    area = 0.0
    for i, (x, y) in enumerate(front):
        x_next = front[i + 1][0] if i + 1 < len(front) else ref[0]
        area += (x_next - x) * (ref[1] - y)
    return area


def hv3(points, ref):
    pts = sorted((p for p in points if all(a < r for a, r in zip(p, ref))), key=lambda p: p[2])
    vol = 0.0
    for i, p in enumerate(pts):
        z_next = pts[i + 1][2] if i + 1 < len(pts) else ref[2]
        if z_next > p[2]:
            vol += hv2([(q[0], q[1]) for q in pts[: i + 1]], ref[:2]) * (z_next - p[2])
    return vol


def hypervolume(points, ref):
    return hv2(points, ref) if len(ref) == 2 else hv3(points, ref)


class Problem:
    def __init__(self, name):
        self.name = name
        if name == "zdt1":
            self.directions = ["minimize"] * 2
            self.ref = (1.1, 3.0)
            self.true_hv = 3.3 - 1.0 / 3.0
        elif name == "dtlz2":
            self.directions = ["minimize"] * 3
            self.ref = (1.1, 1.1, 1.1)
            self.true_hv = 1.1 ** 3 - math.pi / 6.0
        elif name == "serving":
            self.directions = ["maximize"] * 2
            self.ref = (-0.1, -10.0 / 150.0)
            pts = []
            for tp in (1, 2, 4, 8):
                for replicas in range(1, 9):
                    for router in range(3):
                        for k in range(2001):
                            v = serving(tp, replicas, router, k / 2000.0)
                            if v is not None:
                                pts.append((-v[0] / 1000.0, -v[1] / 150.0))
            self.true_hv = hv2(pts, self.ref)
        else:
            raise SystemExit(f"unknown problem {name}")

    def suggest(self, trial):
        """Draws the parameters; returns what `evaluate` needs."""
        if self.name in ("zdt1", "dtlz2"):
            return [trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(6)]
        # tp: discrete {1, 2, 4, 8} on a log scale, as its exponent
        tp = 2 ** trial.suggest_int("tp_log2", 0, 3)
        replicas = trial.suggest_int("replicas", 1, 8)
        router = ROUTERS.index(trial.suggest_categorical("router", ROUTERS))
        r = trial.suggest_float("kv_load_ratio", 0.0, 1.0)
        return (tp, replicas, router, r)

    def evaluate(self, params):
        """(values to tell, point in the minimization space) or None when infeasible."""
        if self.name == "zdt1":
            v = zdt1(params)
            return v, v
        if self.name == "dtlz2":
            v = dtlz2(params)
            return v, v
        v = serving(*params)
        if v is None:
            return None
        return list(v), (-v[0] / 1000.0, -v[1] / 150.0)


def make_sampler(algorithm, seed):
    if algorithm == "optuna_tpe_multivariate":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True)
    if algorithm == "optuna_tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if algorithm == "optuna_random":
        return optuna.samplers.RandomSampler(seed=seed)
    raise SystemExit(f"unknown algorithm {algorithm}")


def run_one(problem, algorithm, batch, seed, budget):
    study = optuna.create_study(directions=problem.directions, sampler=make_sampler(algorithm, seed))
    points, hv, calls = [], [0.0], []
    done = 0
    while done < budget:
        k = min(batch, budget - done)
        t0 = time.perf_counter()
        asked = []
        for _ in range(k):
            trial = study.ask()
            asked.append((trial, problem.suggest(trial)))
        calls.append((done, (time.perf_counter() - t0) * 1e3))
        for trial, params in asked:
            result = problem.evaluate(params)
            if result is None:
                study.tell(trial, state=TrialState.FAIL)
            else:
                values, point = result
                study.tell(trial, values)
                points.append(point)
            done += 1
            hv.append(hypervolume(points, problem.ref) / problem.true_hv)
    return hv, calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", default="zdt1,dtlz2,serving")
    ap.add_argument("--trials", default="30,50,150")
    ap.add_argument("--batch", default="1,8")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--algorithm", default="optuna_tpe_multivariate,optuna_tpe,optuna_random")
    args = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    trials = [int(t) for t in args.trials.split(",")]
    budget = max(trials)
    for pname in args.problem.split(","):
        problem = Problem(pname)
        for algorithm in args.algorithm.split(","):
            for batch in (int(b) for b in args.batch.split(",")):
                runs = [run_one(problem, algorithm, batch, seed, budget) for seed in range(args.seeds)]
                for t in trials:
                    hvs = sorted(hv[min(t, len(hv) - 1)] for hv, _ in runs)
                    times = [ms for _, calls in runs for (before, ms) in calls if before < t]
                    print(json.dumps({
                        "problem": pname,
                        "algorithm": algorithm,
                        "trials": t,
                        "batch": batch,
                        "seeds": args.seeds,
                        "hv_median": statistics.median(hvs),
                        "hv_min": hvs[0],
                        "hv_max": hvs[-1],
                        "suggest_ms_median": statistics.median(times),
                        "suggest_ms_max": max(times),
                    }), flush=True)


if __name__ == "__main__":
    main()
