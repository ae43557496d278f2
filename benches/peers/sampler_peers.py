#!/usr/bin/env python3
"""Peer samplers on the `cargo xtask bench-sampler` problems (issues 4 and 16), same JSON lines.

Runs Optuna's and BoTorch's samplers on the problems of `xtask/src/bench_sampler/problems.rs`
(zdt1, dtlz2, dtlz2_4, serving, kernel, the same parameter names, specs, formulas,
hypervolume point mapping, reference point and true hypervolume) and on table problems
(`--table FILE.json`), with the budgets, batches and seeds of the Rust benchmark, and prints
one JSON object per (problem, algorithm, trials, batch) cell, the keys bench-sampler prints:
{"problem", "algorithm", "trials", "batch", "seeds", "hv_median", "hv_min", "hv_max",
 "hv_seeds", "suggest_ms_median", "suggest_ms_max"} (`hv_seeds`: one value a seed, in seed
order, as bench-sampler has it, for tests between columns). Each line is flushed as its cell is done.

Like the Rust side, one run per seed (seeds 0..N-1) at the largest budget; a budget's cell
reads the first `trials` trials. A batch is asked whole (parameters drawn) before any
result is told; its suggest time is the wall time of producing the whole batch (for
Optuna the `ask()`s and parameter draws, for BoTorch the model fit and the acquisition
optimization). `suggest_ms_*` are over the calls made before the cell's budget.

Algorithms (`--algorithm a,b,c`):

- `optuna_tpe_multivariate`: `TPESampler(seed=s, multivariate=True)`.
- `optuna_tpe`: `TPESampler(seed=s)` (independent, Optuna's default).
- `optuna_random`: `RandomSampler(seed=s)`.
- `optuna_nsga2`: `NSGAIISampler(seed=s)` (its default population of 50: at 30 and 50
  trials it has only drawn its random first generation).
- `optuna_gp`: `GPSampler(seed=s)`; with several objectives Optuna 5.0 uses logEHVI, and
  qLogEHVI over the running trials when a batch is asked before its results are told.
  Its default 10 random startup trials.
- `optuna_qmc`: `QMCSampler(qmc_type="sobol", scramble=True, seed=s)`.
- `optuna_tpe_multivariate_constrained`, `optuna_tpe_constrained`,
  `optuna_nsga2_constrained`: the same samplers given `constraints_func`: an infeasible
  trial is told COMPLETE with placeholder values 0 and a violated constraint (user
  attribute `violation` 1), a feasible one with `violation` 0, so that the sampler models
  infeasibility instead of ignoring the trial (with FAIL, independent TPE can propose the
  same infeasible point again and again). TPE and NSGA-II rank a violating trial below
  every feasible one whatever its values; the GP sampler would fit its objective models on
  the placeholders, so it has no constrained variant.
- `botorch_qlognehvi`: this file's BoTorch loop, see `BotorchSampler`.

Infeasible trials (serving over 16 GPUs, a kernel block that does not fit, a table's
`"metrics": null` or a point missing from the table) are told to Optuna as FAIL (its samplers
then ignore them), except by the `_constrained` variants (above), and skipped by the BoTorch
models; they still count as trials.

How Optuna sees a spec (`optuna_distribution`): float -> `suggest_float(lo, hi, log)`, int
-> `suggest_int(lo, hi, log)`, categorical -> `suggest_categorical`, discrete -> `suggest_int`
with `step` when its values are an evenly spaced integer range; a `log: true` discrete set
whose values are a geometric progression (powers of two: tile sizes, tp) -> `suggest_int`
over the exponent index, parameter `<name>_log_index` (ordered on the log scale, as
`log: true` says, and as the serving problem's `tp` was always given to Optuna); any other
discrete set -> `suggest_categorical` over its values. `--optuna-discrete categorical` gives
every discrete set that is not an evenly spaced integer range to `suggest_categorical`
instead.

Tables (`--table FILE.json`, comma-separated or repeated; with `--table` and no
`--problem` only the tables run): `{"name", "source", "params": [{"name", "type":
"discrete"|"int"|"categorical"|"float", ...}], "metrics": [{"name", "direction"}], "rows":
[{"params": {...}, "metrics": {...} | null}]}`. The problem's name is the table's `name`.
Hypervolume space: each metric over the feasible rows, turned to minimization and scaled to
[0, 1] by the feasible min and max (0 best); reference 1.1 in every coordinate; the true
hypervolume is that of all feasible rows. A suggested point with no row is infeasible (the
loader says on stderr how many points of the space have no row).

Installed and measured with (venv .venv-peers, Python 3.11.7; torch from the default
index, whose Linux wheel pulls the CUDA libraries but runs on the CPU; the CPU-only index was
not reachable here): optuna 5.0.0, scipy 1.17.1, numpy 2.4.6, torch 2.15.0, botorch 0.18.1,
gpytorch 1.15.2.

    python3 -m venv .venv-peers
    .venv-peers/bin/pip install optuna scipy torch botorch
    OMP_NUM_THREADS=1 .venv-peers/bin/python benches/peers/sampler_peers.py \\
        --seeds 5 --trials 30,50,150 --batch 1,8 --algorithm optuna_tpe,optuna_random
"""

import argparse
import itertools
import json
import math
import statistics
import sys
import time
import warnings

import numpy as np

ALGORITHMS = [
    "optuna_tpe_multivariate",
    "optuna_tpe",
    "optuna_random",
    "optuna_nsga2",
    "optuna_gp",
    "optuna_qmc",
    "botorch_qlognehvi",
]
# Optuna's samplers with infeasible trials told through `constraints_func` instead of FAIL
# (not the GP sampler: it fits its objective models on every COMPLETE trial, so the
# infeasible trials' placeholder values would become training data)
ALGORITHMS += [f"{a}_constrained" for a in ("optuna_tpe_multivariate", "optuna_tpe", "optuna_nsga2")]
# the peers that `--slow-seeds` applies to
SLOW = {"optuna_gp", "botorch_qlognehvi"}
BUILTIN = ["zdt1", "dtlz2", "dtlz2_4", "serving", "kernel"]

# ---------------------------------------------------------------------------------------
# The problems of problems.rs

ROUTERS = ["round_robin", "kv_aware", "random"]
TILES = [16.0, 32.0, 64.0, 128.0, 256.0]
TILE_K = [16.0, 32.0, 64.0]
WARPS = [1.0, 2.0, 4.0, 8.0]
SWIZZLE = ["none", "xor", "diagonal"]
EPILOGUE = ["direct", "staged", "split_k"]
KERNEL_PEAK = 400.0


def zdt1(x):
    f1 = x[0]
    g = 1.0 + 9.0 * sum(x[1:]) / 5.0
    return [f1, g * (1.0 - math.sqrt(f1 / g))]


def dtlz2(x, m):
    """DTLZ2 with `m` objectives: the first m-1 coordinates place the point on the front,
    the rest are distance variables (best at 0.5)."""
    g = sum((v - 0.5) * (v - 0.5) for v in x[m - 1:])
    out = []
    for i in range(m):
        upto = m - 1 - i
        f = 1.0 + g
        for v in x[:upto]:
            f *= math.cos(v * math.pi / 2.0)
        if i > 0:
            f *= math.sin(x[upto] * math.pi / 2.0)
        out.append(f)
    return out


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


def kernel(tm, tn, tk, stages, warps, swizzle, epilogue):
    """(TFLOP/s, shared memory KiB per block) of the tiled matmul model, or None when the
    block does not fit (shared memory, or 1..=255 accumulators a thread)."""
    smem = (tm + tn) * tk * 2.0 * stages / 1024.0
    if epilogue == 1:
        smem += tm * tn * 2.0 / 1024.0
    threads = warps * 32.0
    acc = tm * tn / threads
    if smem > 160.0 or not 1.0 <= acc <= 255.0:
        return None
    intensity = tm * tn / (tm + tn)
    feed = min(intensity / 40.0, 1.0)
    hide = 1.0 - 0.55 ** (stages * tk / 32.0)
    if swizzle == 0:
        bank = 0.72
    elif swizzle == 1:
        bank = 1.0
    else:
        bank = 1.02 if tk <= 16.0 else 0.9
    per_thread = acc / (acc + 12.0)
    blocks_per_sm = max(min(math.floor(160.0 / smem), 32.0 / warps), 1.0)
    tiles = math.ceil(4096.0 / tm) * math.ceil(4096.0 / tn)
    split = 4.0 if epilogue == 2 else 1.0
    slots = 108.0 * blocks_per_sm
    work = tiles * split
    waves = math.ceil(work / slots)
    wave_eff = work / (waves * slots)
    occupancy = math.sqrt(min(blocks_per_sm * warps / 8.0, 1.0))
    epi = [1.0, 1.06, 0.98 if tm * tn <= 4096.0 else 0.93][epilogue]
    tflops = KERNEL_PEAK * feed * hide * bank * per_thread * wave_eff * occupancy * epi
    return tflops, smem


# ---------------------------------------------------------------------------------------
# Hypervolume (every objective minimized), exact


def _nondominated(p):
    """Rows of `p` (n x d, minimized) that no other row dominates (duplicates: one kept)."""
    if len(p) <= 1:
        return p
    p = np.unique(p, axis=0)
    keep = np.ones(len(p), dtype=bool)
    for i in range(len(p)):
        if keep[i]:
            dominated = np.all(p[i] <= p, axis=1) & np.any(p[i] < p, axis=1)
            keep &= ~dominated
    return p[keep]


def _hv2(p, ref):
    if len(p) == 0:
        return 0.0
    p = p[np.lexsort((p[:, 1], p[:, 0]))]
    ymin = np.minimum.accumulate(p[:, 1])
    x_next = np.append(p[1:, 0], ref[0])
    return float(np.sum((x_next - p[:, 0]) * (ref[1] - ymin)))


def _hv(p, ref):
    d = len(ref)
    if len(p) == 0:
        return 0.0
    if d == 1:
        return float(ref[0] - p[:, 0].min())
    if d == 2:
        return _hv2(p, ref)
    # slices along the last objective: the (d-1)-volume of the points below each slice
    p = p[np.argsort(p[:, -1], kind="stable")]
    vol = 0.0
    for i in range(len(p)):
        z_next = p[i + 1, -1] if i + 1 < len(p) else ref[-1]
        if z_next > p[i, -1]:
            vol += _hv(_nondominated(p[: i + 1, :-1]), ref[:-1]) * (z_next - p[i, -1])
    return vol


def hypervolume(points, ref):
    """Points that do not beat the reference in every objective contribute nothing."""
    ref = np.asarray(ref, dtype=float)
    if len(points) == 0:
        return 0.0
    p = np.asarray(points, dtype=float)
    p = p[np.all(p < ref, axis=1)]
    return _hv(_nondominated(p), ref)


# ---------------------------------------------------------------------------------------
# Problems


class Param:
    """One parameter spec as problems.rs and the table format state it."""

    def __init__(self, name, kind, lo=None, hi=None, log=False, values=None, choices=None):
        self.name, self.kind, self.lo, self.hi, self.log = name, kind, lo, hi, log
        self.values = values
        self.choices = choices

    @staticmethod
    def from_json(d):
        kind = d["type"]
        if kind == "discrete":
            values = list(d["values"])
            if values != sorted(values) or len(set(values)) != len(values):
                values = sorted(set(values))
            return Param(d["name"], kind, values=values, log=bool(d.get("log", False)))
        if kind == "categorical":
            return Param(d["name"], kind, choices=list(d["choices"]))
        if kind in ("int", "float"):
            return Param(d["name"], kind, lo=d["lo"], hi=d["hi"], log=bool(d.get("log", False)))
        raise SystemExit(f"param {d.get('name')}: unknown type {kind!r}")

    def evenly_spaced_ints(self):
        v = self.values
        if len(v) < 2 or not all(float(x).is_integer() for x in v):
            return None
        step = v[1] - v[0]
        if all(v[i + 1] - v[i] == step for i in range(len(v) - 1)):
            return int(v[0]), int(v[-1]), int(step)
        return None

    def geometric(self):
        v = self.values
        if not self.log or len(v) < 2 or v[0] <= 0:
            return False
        ratio = v[1] / v[0]
        return all(abs(v[i + 1] / v[i] - ratio) < 1e-9 * ratio for i in range(len(v) - 1))

    def grid(self):
        """Every value, or None for a float."""
        if self.kind == "float":
            return None
        if self.kind == "int":
            return list(range(self.lo, self.hi + 1))
        if self.kind == "discrete":
            return list(self.values)
        return list(self.choices)


def optuna_suggest(trial, param, discrete_mode):
    """The value of `param` drawn through `trial` (see the module docstring)."""
    if param.kind == "float":
        return trial.suggest_float(param.name, param.lo, param.hi, log=param.log)
    if param.kind == "int":
        return trial.suggest_int(param.name, param.lo, param.hi, log=param.log)
    if param.kind == "categorical":
        return trial.suggest_categorical(param.name, param.choices)
    if len(param.values) == 1:
        return param.values[0]
    ints = param.evenly_spaced_ints()
    if ints is not None:
        lo, hi, step = ints
        v = trial.suggest_int(param.name, lo, hi, step=step)
        return type(param.values[0])(v)
    if discrete_mode == "ordinal" and param.geometric():
        return param.values[trial.suggest_int(f"{param.name}_log_index", 0, len(param.values) - 1)]
    return trial.suggest_categorical(param.name, param.values)


class Problem:
    """name, params, metrics [(name, direction)], evaluate, hv_point, ref, true_hv."""

    def __init__(self, name):
        self.name = name
        unit = lambda n: Param(n, "float", 0.0, 1.0)  # noqa: E731
        if name in ("zdt1", "dtlz2", "dtlz2_4"):
            n_unit = 7 if name == "dtlz2_4" else 6
            m = {"zdt1": 2, "dtlz2": 3, "dtlz2_4": 4}[name]
            self.params = [unit(f"x{i}") for i in range(n_unit)]
            self.metrics = [(f"f{i + 1}", "minimize") for i in range(m)]
            if name == "zdt1":
                self.ref = [1.1, 3.0]
                self.true_hv = 3.3 - 1.0 / 3.0
            elif name == "dtlz2":
                self.ref = [1.1] * 3
                self.true_hv = 1.1 ** 3 - math.pi / 6.0
            else:
                self.ref = [1.1] * 4
                # the front is the unit sphere's positive orthant: 1/16 of the 4-ball, pi^2/32
                self.true_hv = 1.1 ** 4 - math.pi ** 2 / 32.0
        elif name == "serving":
            self.params = [
                Param("tp", "discrete", values=[1.0, 2.0, 4.0, 8.0], log=True),
                Param("replicas", "int", 1, 8),
                Param("router", "categorical", choices=list(ROUTERS)),
                unit("kv_load_ratio"),
            ]
            self.metrics = [("per_gpu", "maximize"), ("per_user", "maximize")]
            self.ref = [-0.1, -10.0 / 150.0]
            pts = []
            for tp in (1.0, 2.0, 4.0, 8.0):
                for replicas in range(1, 9):
                    for router in range(3):
                        for k in range(2001):
                            v = serving(tp, float(replicas), router, k / 2000.0)
                            if v is not None:
                                pts.append((-v[0] / 1000.0, -v[1] / 150.0))
            self.true_hv = hypervolume(pts, self.ref)
        elif name == "kernel":
            self.params = [
                Param("tile_m", "discrete", values=list(TILES), log=True),
                Param("tile_n", "discrete", values=list(TILES), log=True),
                Param("tile_k", "discrete", values=list(TILE_K), log=True),
                Param("stages", "int", 1, 5),
                Param("warps", "discrete", values=list(WARPS), log=True),
                Param("swizzle", "categorical", choices=list(SWIZZLE)),
                Param("epilogue", "categorical", choices=list(EPILOGUE)),
            ]
            self.metrics = [("tflops", "maximize"), ("smem_kib", "minimize")]
            self.ref = [0.0, 1.0]
            pts = []
            for tm, tn, tk, st, w, sw, ep in itertools.product(
                TILES, TILES, TILE_K, range(1, 6), WARPS, range(3), range(3)
            ):
                v = kernel(tm, tn, tk, float(st), w, sw, ep)
                if v is not None:
                    pts.append((-v[0] / KERNEL_PEAK, v[1] / 256.0))
            self.true_hv = hypervolume(pts, self.ref)
        else:
            raise SystemExit(f"unknown problem {name!r} (known: {', '.join(BUILTIN)}; tables via --table)")

    def evaluate(self, p):
        """{metric: value} of the parameter dict `p`, or None when infeasible."""
        if self.name == "zdt1":
            v = zdt1([p[f"x{i}"] for i in range(6)])
        elif self.name in ("dtlz2", "dtlz2_4"):
            n = len(self.params)
            v = dtlz2([p[f"x{i}"] for i in range(n)], len(self.metrics))
        elif self.name == "serving":
            v = serving(float(p["tp"]), float(p["replicas"]), ROUTERS.index(p["router"]), p["kv_load_ratio"])
        else:
            v = kernel(
                float(p["tile_m"]), float(p["tile_n"]), float(p["tile_k"]), float(p["stages"]),
                float(p["warps"]), SWIZZLE.index(p["swizzle"]), EPILOGUE.index(p["epilogue"]),
            )
        if v is None:
            return None
        return {name: float(x) for (name, _), x in zip(self.metrics, v)}

    def hv_point(self, m):
        values = [m[name] for name, _ in self.metrics]
        if self.name == "serving":
            return (-values[0] / 1000.0, -values[1] / 150.0)
        if self.name == "kernel":
            return (-values[0] / KERNEL_PEAK, values[1] / 256.0)
        return tuple(values)


def _key(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


class TableProblem:
    """A problem whose every point is a row of a JSON table (module docstring)."""

    def __init__(self, path):
        with open(path) as f:
            t = json.load(f)
        self.name = t["name"]
        self.params = [Param.from_json(d) for d in t["params"]]
        self.metrics = [(d["name"], d["direction"]) for d in t["metrics"]]
        for name, direction in self.metrics:
            if direction not in ("minimize", "maximize"):
                raise SystemExit(f"{path}: metric {name}: direction {direction!r}")
        self.rows = {}
        for row in t["rows"]:
            key = tuple(_key(row["params"][p.name]) for p in self.params)
            self.rows[key] = row["metrics"]
        feasible = [m for m in self.rows.values() if m is not None]
        if not feasible:
            raise SystemExit(f"{path}: no feasible row")
        self.lo = [min(m[n] for m in feasible) for n, _ in self.metrics]
        self.hi = [max(m[n] for m in feasible) for n, _ in self.metrics]
        self.ref = [1.1] * len(self.metrics)
        self.true_hv = hypervolume([self.hv_point(m) for m in feasible], self.ref)
        size = math.prod(len(p.grid()) for p in self.params) if all(p.kind != "float" for p in self.params) else None
        missing = None if size is None else size - sum(
            1 for k in itertools.product(*(map(_key, p.grid()) for p in self.params)) if k in self.rows
        )
        print(
            f"sampler_peers: table {self.name}: {len(self.rows)} rows, {len(feasible)} feasible, "
            f"space {size}, {missing} points without a row (infeasible), true hv {self.true_hv:.6g}",
            file=sys.stderr,
        )

    def evaluate(self, p):
        m = self.rows.get(tuple(_key(p[q.name]) for q in self.params))
        return None if m is None else {n: float(m[n]) for n, _ in self.metrics}

    def hv_point(self, m):
        out = []
        for (name, direction), lo, hi in zip(self.metrics, self.lo, self.hi):
            span = hi - lo if hi > lo else 1.0
            v = m[name]
            out.append((hi - v) / span if direction == "maximize" else (v - lo) / span)
        return tuple(out)


# ---------------------------------------------------------------------------------------
# Samplers: ask(k) -> [(handle, params)], tell(handle, metrics or None)


class OptunaDriver:
    def __init__(self, problem, algorithm, seed, discrete_mode):
        import optuna

        self.optuna = optuna
        self.problem = problem
        self.discrete_mode = discrete_mode
        self.constrained = algorithm.endswith("_constrained")
        self.study = optuna.create_study(
            directions=[d for _, d in problem.metrics],
            sampler=self.make_sampler(algorithm.removesuffix("_constrained"), seed),
        )

    def make_sampler(self, algorithm, seed):
        s = self.optuna.samplers
        # `_constrained`: the trial's `violation` user attribute (0 feasible, 1 not) is its
        # one constraint, so the sampler models infeasibility instead of ignoring the trial
        c = {"constraints_func": lambda t: [t.user_attrs["violation"]]} if self.constrained else {}
        if algorithm == "optuna_tpe_multivariate":
            return s.TPESampler(seed=seed, multivariate=True, **c)
        if algorithm == "optuna_tpe":
            return s.TPESampler(seed=seed, **c)
        if algorithm == "optuna_random":
            return s.RandomSampler(seed=seed)
        if algorithm == "optuna_nsga2":
            return s.NSGAIISampler(seed=seed, **c)
        if algorithm == "optuna_gp":
            return s.GPSampler(seed=seed)
        if algorithm == "optuna_qmc":
            return s.QMCSampler(qmc_type="sobol", scramble=True, seed=seed)
        raise SystemExit(f"unknown algorithm {algorithm}")

    def ask(self, k):
        out = []
        for _ in range(k):
            trial = self.study.ask()
            out.append((trial, {p.name: optuna_suggest(trial, p, self.discrete_mode) for p in self.problem.params}))
        return out

    def tell(self, trial, metrics):
        from optuna.trial import TrialState

        if self.constrained:
            # an infeasible trial completes with placeholder values: a violated constraint
            # ranks it below every feasible trial whatever its values
            trial.set_user_attr("violation", 0.0 if metrics is not None else 1.0)
            values = [metrics[n] if metrics is not None else 0.0 for n, _ in self.problem.metrics]
            self.study.tell(trial, values)
        elif metrics is None:
            self.study.tell(trial, state=TrialState.FAIL)
        else:
            self.study.tell(trial, [metrics[n] for n, _ in self.problem.metrics])


class Dim:
    """One parameter in the model's input space.

    float: [0, 1] linear or log; int (not log) and discrete: equal-width bins over the
    ordered values, each value at its bin's centre (a log-spaced geometric set is then
    uniform on the log scale); int with log: [0, 1] over log(value); categorical: the
    index, a categorical dimension of the GP.
    """

    def __init__(self, param):
        self.p = param
        self.cat = param.kind == "categorical"
        if param.kind == "float":
            self.kind = "cont"
        elif param.kind == "int" and param.log and param.hi > param.lo:
            self.kind = "logint"
        elif self.cat:
            self.kind = "cat"
        else:
            self.kind = "bins"
            self.values = param.grid()

    def encode(self, v):
        p = self.p
        if self.kind == "cont":
            if p.log:
                return (math.log(v) - math.log(p.lo)) / (math.log(p.hi) - math.log(p.lo))
            return (v - p.lo) / (p.hi - p.lo) if p.hi > p.lo else 0.5
        if self.kind == "logint":
            return (math.log(v) - math.log(p.lo)) / (math.log(p.hi) - math.log(p.lo))
        if self.kind == "cat":
            return float(p.choices.index(v))
        i = [_key(x) for x in self.values].index(_key(v))
        return (i + 0.5) / len(self.values)

    def decode(self, u):
        """The value at model coordinate `u` (rounded to the nearest allowed value)."""
        p = self.p
        if self.kind == "cont":
            u = min(max(u, 0.0), 1.0)
            if p.log:
                return math.exp(math.log(p.lo) + u * (math.log(p.hi) - math.log(p.lo)))
            return p.lo + u * (p.hi - p.lo)
        if self.kind == "logint":
            u = min(max(u, 0.0), 1.0)
            v = round(math.exp(math.log(p.lo) + u * (math.log(p.hi) - math.log(p.lo))))
            return min(max(v, p.lo), p.hi)
        if self.kind == "cat":
            return p.choices[min(max(int(round(u)), 0), len(p.choices) - 1)]
        n = len(self.values)
        return self.values[min(max(int(math.floor(u * n)), 0), n - 1)]

    def from_unit(self, u):
        """The value at a unit-cube coordinate (the Sobol initial design)."""
        if self.kind == "cat":
            n = len(self.p.choices)
            return self.p.choices[min(int(math.floor(u * n)), n - 1)]
        return self.decode(u)

    def grid(self):
        """Model coordinates of every value, or None when continuous."""
        if self.kind == "cont":
            return None
        return [self.encode(v) for v in self.p.grid()]

    def bound_hi(self):
        return float(len(self.p.choices) - 1) if self.cat else 1.0


class BotorchSampler:
    """qLogNoisyExpectedHypervolumeImprovement over a ModelListGP, one GP per objective.

    - Inputs in the unit cube (`Dim`); categorical coordinates hold their index and the
      GP is then BoTorch's `MixedSingleTaskGP` (its categorical kernel), otherwise
      `SingleTaskGP`; each with BoTorch's default priors and outcome standardization, fit by
      `fit_gpytorch_mll` on the sum of the marginal log likelihoods, refit from scratch at
      every suggest.
    - Objectives: the metric values, negated when minimized (BoTorch maximizes); the
      reference point is BoTorch's `infer_reference_point` of the observed Pareto front
      (the benchmark's own reference is not given to the sampler, as it is not to Optuna's).
    - Initial design: the first 2·(d+1) points of a scrambled Sobol sequence in [0, 1]^d
      (d = number of parameters), each coordinate decoded to its parameter (rounded, binned),
      asked in whole batches, so a batch that reaches past 2·(d+1) is all Sobol; also while
      fewer than two trials are feasible.
    - Infeasible trials are skipped by the models (they are not fed fake values; with no
      feasibility model the sampler may propose near them again).
    - Acquisition optimization, batch q = the bench batch (sequential greedy, each member
      conditioned on the ones before as pending points), 64 quasi-MC samples:
      - all-continuous spaces: `optimize_acqf(num_restarts=4, raw_samples=128,
        sequential=True)`;
      - mixed spaces (serving): `optimize_acqf_mixed` with one fixed-feature set per
        combination of the categorical values (at most 32, a seeded subset beyond), the
        int and discrete coordinates relaxed to [0, 1] and rounded to their bins after
        the optimization (the same 4 restarts and 128 raw samples per combination);
      - spaces of integers, discrete sets and categoricals only (kernel, tables): a
        discrete candidate set, `optimize_acqf_discrete` over it: the whole space when it
        has at most 4,096 points, else 2,048 seeded uniform points of it plus every
        one-coordinate neighbour (the next value up or down, another category) of the
        observed Pareto-optimal points; points already asked are never proposed again.
    """

    RESTARTS = 4
    RAW = 128
    MC = 64
    FULL_SPACE = 4096
    SAMPLED = 2048
    MAX_COMBOS = 32

    def __init__(self, problem, seed, batch):
        import torch
        from torch.quasirandom import SobolEngine

        self.torch = torch
        torch.manual_seed(seed)
        self.problem = problem
        self.dims = [Dim(p) for p in problem.params]
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        d = len(self.dims)
        self.n_init = 2 * (d + 1)
        self.sobol = SobolEngine(d, scramble=True, seed=seed)
        self.X, self.Y = [], []  # feasible observations
        self.asked = set()  # encoded points asked (discrete spaces: never asked again)
        self.observed = 0
        self.sign = [1.0 if dirn == "maximize" else -1.0 for _, dirn in problem.metrics]
        self.cat_dims = [i for i, dm in enumerate(self.dims) if dm.cat]
        self.grids = [dm.grid() for dm in self.dims]
        self.discrete = all(g is not None for g in self.grids)
        self.space_size = math.prod(len(g) for g in self.grids) if self.discrete else None

    def ask(self, k):
        if self.observed < self.n_init or len(self.Y) < 2:
            pts = []
            for row in self.sobol.draw(k).tolist():
                pts.append({dm.p.name: dm.from_unit(u) for dm, u in zip(self.dims, row)})
        else:
            pts = self._acquire(k)
        out = []
        for p in pts:
            x = tuple(dm.encode(p[dm.p.name]) for dm in self.dims)
            self.asked.add(x)
            out.append((x, p))
        return out

    def tell(self, x, metrics):
        self.observed += 1
        if metrics is not None:
            self.X.append(list(x))
            self.Y.append([s * metrics[n] for s, (n, _) in zip(self.sign, self.problem.metrics)])

    def _model(self, X, Y):
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import MixedSingleTaskGP, ModelListGP, SingleTaskGP
        from gpytorch.mlls import SumMarginalLogLikelihood

        models = []
        for j in range(Y.shape[1]):
            y = Y[:, j : j + 1]
            if self.cat_dims:
                models.append(MixedSingleTaskGP(X, y, cat_dims=self.cat_dims))
            else:
                models.append(SingleTaskGP(X, y))
        model = ModelListGP(*models)
        mll = SumMarginalLogLikelihood(model.likelihood, model)
        try:
            fit_gpytorch_mll(mll)
        except Exception as e:  # noqa: BLE001 - a failed fit keeps the initial hyperparameters
            print(f"sampler_peers: botorch fit failed ({e}); using unfitted hyperparameters", file=sys.stderr)
        return model

    def _acquire(self, k):
        torch = self.torch
        from botorch.acquisition.multi_objective.logei import qLogNoisyExpectedHypervolumeImprovement
        from botorch.optim import optimize_acqf, optimize_acqf_discrete, optimize_acqf_mixed
        from botorch.sampling import SobolQMCNormalSampler
        from botorch.utils.multi_objective.hypervolume import infer_reference_point
        from botorch.utils.multi_objective.pareto import is_non_dominated

        X = torch.tensor(self.X, dtype=torch.double)
        Y = torch.tensor(self.Y, dtype=torch.double)
        model = self._model(X, Y)
        front = Y[is_non_dominated(Y)]
        ref = infer_reference_point(front)
        acq = qLogNoisyExpectedHypervolumeImprovement(
            model=model,
            ref_point=ref.tolist(),
            X_baseline=X,
            sampler=SobolQMCNormalSampler(sample_shape=torch.Size([self.MC]), seed=self.seed + self.observed),
            prune_baseline=True,
        )
        if self.discrete:
            choices = self._candidates(X[is_non_dominated(Y)].tolist())
            if len(choices) == 0:  # the whole space has been asked
                return [{dm.p.name: dm.from_unit(u) for dm, u in zip(self.dims, row)} for row in self.sobol.draw(k).tolist()]
            q = min(k, len(choices))
            cand, _ = optimize_acqf_discrete(acq, q=q, choices=torch.tensor(choices, dtype=torch.double), unique=True)
            pts = cand.tolist()
            # a batch larger than what is left of the space: fill with Sobol points
            pts += [list(r) for r in self.sobol.draw(k - q).tolist()] if k > q else []
            return [self._decode(r) if i < q else {dm.p.name: dm.from_unit(u) for dm, u in zip(self.dims, r)} for i, r in enumerate(pts)]
        bounds = torch.tensor([[0.0] * len(self.dims), [dm.bound_hi() for dm in self.dims]], dtype=torch.double)
        if self.cat_dims:
            combos = list(itertools.product(*(range(len(self.dims[i].p.choices)) for i in self.cat_dims)))
            if len(combos) > self.MAX_COMBOS:
                idx = self.rng.choice(len(combos), size=self.MAX_COMBOS, replace=False)
                combos = [combos[i] for i in sorted(idx)]
            fixed = [{i: float(c) for i, c in zip(self.cat_dims, combo)} for combo in combos]
            cand, _ = optimize_acqf_mixed(
                acq, bounds=bounds, q=k, num_restarts=self.RESTARTS, raw_samples=self.RAW, fixed_features_list=fixed
            )
        else:
            cand, _ = optimize_acqf(
                acq, bounds=bounds, q=k, num_restarts=self.RESTARTS, raw_samples=self.RAW, sequential=True
            )
        return [self._decode(r) for r in cand.tolist()]

    def _decode(self, row):
        return {dm.p.name: dm.decode(u) for dm, u in zip(self.dims, row)}

    def _candidates(self, front_x):
        """Model coordinates of the discrete candidate set (class docstring), unasked only."""
        if self.space_size <= self.FULL_SPACE:
            pts = set(itertools.product(*self.grids))
        else:
            pts = set()
            for _ in range(self.SAMPLED):
                pts.add(tuple(g[self.rng.integers(len(g))] for g in self.grids))
            for x in front_x:
                for i, g in enumerate(self.grids):
                    j = min(range(len(g)), key=lambda j: abs(g[j] - x[i]))
                    near = range(len(g)) if self.dims[i].cat else (j - 1, j + 1)
                    for jj in near:
                        if 0 <= jj < len(g) and jj != j:
                            y = list(x)
                            y[i] = g[jj]
                            pts.add(tuple(y))
        return sorted(p for p in pts if p not in self.asked)


def make_driver(problem, algorithm, seed, batch, discrete_mode):
    if algorithm == "botorch_qlognehvi":
        return BotorchSampler(problem, seed, batch)
    return OptunaDriver(problem, algorithm, seed, discrete_mode)


# ---------------------------------------------------------------------------------------


def run_one(problem, algorithm, batch, seed, budget, cuts, discrete_mode):
    """Normalized hypervolume at each budget in `cuts`, and (trials before, ms) per call."""
    driver = make_driver(problem, algorithm, seed, batch, discrete_mode)
    points, hv, calls = [], {}, []
    done = 0
    while done < budget:
        k = min(batch, budget - done)
        t0 = time.perf_counter()
        asked = driver.ask(k)
        calls.append((done, (time.perf_counter() - t0) * 1e3))
        for handle, params in asked:
            metrics = problem.evaluate(params)
            driver.tell(handle, metrics)
            if metrics is not None:
                points.append(problem.hv_point(metrics))
            done += 1
            if done in cuts:
                hv[done] = hypervolume(points, problem.ref) / problem.true_hv
    return hv, calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", default=None, help=f"comma list of {','.join(BUILTIN)} (default all, or none with --table)")
    ap.add_argument("--table", action="append", default=[], help="a JSON table problem (comma list or repeated)")
    ap.add_argument("--trials", default="30,50,150")
    ap.add_argument("--batch", default="1,8")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--slow-seeds", type=int, default=None, help=f"seeds for {', '.join(sorted(SLOW))} (default --seeds)")
    ap.add_argument("--algorithm", default="optuna_tpe_multivariate,optuna_tpe,optuna_random")
    ap.add_argument("--optuna-discrete", choices=["ordinal", "categorical"], default="ordinal")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    if SLOW & set(args.algorithm.split(",")):
        # import torch, BoTorch and Optuna's GP modules before any timing: one-time import
        # costs (tens of seconds on a cold cache here) are not suggestion costs
        import botorch.acquisition.multi_objective.logei  # noqa: F401
        import botorch.optim  # noqa: F401
        import optuna._gp.gp  # noqa: F401
        import torch  # noqa: F401
    trials = [int(t) for t in args.trials.split(",")]
    budget = max(trials)
    algorithms = [a for a in args.algorithm.split(",") if a]
    for a in algorithms:
        if a not in ALGORITHMS:
            raise SystemExit(f"unknown algorithm {a!r} (known: {', '.join(ALGORITHMS)})")
    names = args.problem.split(",") if args.problem is not None else ([] if args.table else BUILTIN)
    sources = [("builtin", n) for n in names if n] + [
        ("table", path) for arg in args.table for path in arg.split(",") if path
    ]
    for kind, what in sources:
        problem = Problem(what) if kind == "builtin" else TableProblem(what)
        for algorithm in algorithms:
            seeds = args.slow_seeds if (algorithm in SLOW and args.slow_seeds) else args.seeds
            for batch in (int(b) for b in args.batch.split(",")):
                runs = []
                for seed in range(seeds):
                    t0 = time.perf_counter()
                    runs.append(run_one(problem, algorithm, batch, seed, budget, set(trials), args.optuna_discrete))
                    print(
                        f"sampler_peers: {problem.name} {algorithm} batch {batch} seed {seed}: "
                        f"{time.perf_counter() - t0:.1f} s",
                        file=sys.stderr,
                        flush=True,
                    )
                for t in trials:
                    per_seed = [hv[t] for hv, _ in runs]
                    hvs = sorted(per_seed)
                    times = [ms for _, calls in runs for (before, ms) in calls if before < t]
                    print(json.dumps({
                        "problem": problem.name,
                        "algorithm": algorithm,
                        "trials": t,
                        "batch": batch,
                        "seeds": seeds,
                        "hv_median": statistics.median(hvs),
                        "hv_min": hvs[0],
                        "hv_max": hvs[-1],
                        "hv_seeds": per_seed,
                        "suggest_ms_median": statistics.median(times),
                        "suggest_ms_max": max(times),
                    }), flush=True)


if __name__ == "__main__":
    main()
