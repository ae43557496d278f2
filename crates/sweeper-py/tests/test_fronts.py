"""The front functions on numpy arrays: equal to brute-force oracles and to the command
line's kernels on random and tie-heavy data, every layout and dtype, and the error paths."""

import itertools

import numpy as np
import pytest

import sweeper
from conftest import cli_json


def dominates(a, b, signs):
    a, b = a * signs, b * signs
    return bool(np.all(a >= b) and np.any(a > b))


def brute_front(X, directions):
    """SPEC 3 by definition: the non-dominated rows, by last column ascending, ties by index."""
    signs = np.array([1.0 if d == "max" else -1.0 for d in directions])
    n = len(X)
    keep = [i for i in range(n) if not any(dominates(X[j], X[i], signs) for j in range(n))]
    return sorted(keep, key=lambda i: (X[i, -1] + 0.0, i))


def brute_ranks(X, directions):
    signs = np.array([1.0 if d == "max" else -1.0 for d in directions])
    left, rank, out = set(range(len(X))), 0, np.zeros(len(X), dtype=np.int64)
    while left:
        front = {i for i in left if not any(dominates(X[j], X[i], signs) for j in left)}
        for i in front:
            out[i] = rank
        left -= front
        rank += 1
    return out


def brute_hv_2d(X, ref, directions):
    """Sum of grid cells dominated by some row (exact for few rows)."""
    signs = np.array([1.0 if d == "max" else -1.0 for d in directions])
    P, r = X * signs, np.array(ref) * signs
    P = P[np.all(P > r, axis=1)]
    if len(P) == 0:
        return 0.0
    xs = np.unique(np.concatenate([P[:, 0], [r[0]]]))
    ys = np.unique(np.concatenate([P[:, 1], [r[1]]]))
    total = 0.0
    for (x0, x1), (y0, y1) in itertools.product(zip(xs, xs[1:]), zip(ys, ys[1:])):
        if np.any((P[:, 0] >= x1) & (P[:, 1] >= y1)):
            total += (x1 - x0) * (y1 - y0)
    return total


DATASETS = {
    # continuous values: almost no ties
    "random": lambda rng, n, d: rng.random((n, d)),
    # a small integer grid: many ties and exact duplicates
    "ties": lambda rng, n, d: rng.integers(0, 4, size=(n, d)).astype(np.float64),
    # with infinities, which are ordinary extreme values
    "inf": lambda rng, n, d: np.where(
        rng.random((n, d)) < 0.1, np.inf * rng.choice([-1, 1], size=(n, d)), rng.integers(0, 5, (n, d))
    ).astype(np.float64),
}


@pytest.mark.parametrize("kind", sorted(DATASETS))
@pytest.mark.parametrize("d", [1, 2, 3, 4, 5])
def test_front_and_ranks_equal_the_brute_force(kind, d):
    rng = np.random.default_rng(d * 7 + len(kind))
    for n in (0, 1, 2, 17, 150):
        X = DATASETS[kind](rng, n, d)
        directions = [("max", "min")[j % 2] for j in range(d)]
        assert sweeper.pareto_front(X, directions).tolist() == brute_front(X, directions)
        assert sweeper.nondominated_ranks(X, directions).tolist() == brute_ranks(X, directions).tolist()


def test_large_inputs_take_the_parallel_path_and_agree():
    # 200,000 rows x 3 columns is over the kernel's parallel threshold; the oracle is the
    # front of the front (the kernel must keep exactly the rows no front row dominates).
    rng = np.random.default_rng(1)
    X = rng.integers(0, 50, size=(200_000, 3)).astype(np.float64)
    front = sweeper.pareto_front(X, ["max", "max", "max"])
    F = X[front]
    assert brute_front(F, ["max"] * 3) == sorted(range(len(F)), key=lambda i: (F[i, -1], front[i]))
    # every row off the front is dominated by a front row
    off = np.setdiff1d(np.arange(len(X)), front)
    sample = rng.choice(off, size=200, replace=False)
    for i in sample:
        assert np.any(np.all(F >= X[i], axis=1) & np.any(F > X[i], axis=1))


def test_fronts_equal_the_command_line_kernels(cli, tmp_path):
    rng = np.random.default_rng(5)
    for kind, d in [("random", 2), ("ties", 3), ("ties", 5), ("random", 4)]:
        X = DATASETS[kind](rng, 300, d)
        path = tmp_path / f"{kind}{d}.npy"
        np.save(path, X)
        objectives = [f"-o{j}:{('max', 'min')[j % 2]}" for j in range(d)]
        directions = [("max", "min")[j % 2] for j in range(d)]
        rows = cli_json(cli, "front", path, *objectives)
        assert sweeper.pareto_front(X, directions).tolist() == [r["index"] for r in rows]
        ranks = cli_json(cli, "front", path, *objectives, "--ranks")
        assert sweeper.nondominated_ranks(X, directions).tolist() == [r["rank"] for r in ranks]
        ref = [0.0 if dd == "max" else 1.0 for dd in directions] if kind == "random" else [-1.0 if dd == "max" else 4.0 for dd in directions]
        hv = cli_json(cli, "front", path, *objectives, "--hypervolume", ",".join(map(str, ref)))
        assert sweeper.hypervolume(X, ref, directions) == pytest.approx(hv["hypervolume"], rel=1e-12)


def test_hypervolume_equals_the_grid_oracle():
    rng = np.random.default_rng(3)
    for _ in range(20):
        X = rng.integers(0, 6, size=(12, 2)).astype(np.float64)
        for directions, ref in [(["max", "max"], [0.0, 0.0]), (["min", "max"], [6.0, -1.0])]:
            assert sweeper.hypervolume(X, ref, directions) == pytest.approx(brute_hv_2d(X, ref, directions))
    assert sweeper.hypervolume(np.array([[1.0, 2.0]]), [0, 0], ["max", "max"]) == 2.0
    assert sweeper.hypervolume(np.array([[np.inf, 2.0]]), [0, 0], ["max", "max"]) == np.inf


def test_merge_fronts_is_the_front_of_the_concatenation():
    rng = np.random.default_rng(8)
    for d in (2, 3, 4):
        A = rng.integers(0, 5, size=(40, d)).astype(np.float64)
        B = rng.integers(0, 5, size=(30, d)).astype(np.float64)
        directions = ["max"] * d
        merged = sweeper.merge_fronts(A, B, directions).tolist()
        assert merged == sorted(sweeper.pareto_front(np.vstack([A, B]), directions).tolist())
    with pytest.raises(ValueError, match="A has 2 columns and B has 3"):
        sweeper.merge_fronts(np.ones((2, 2)), np.ones((2, 3)), ["max", "max"])
    with pytest.raises(ValueError, match="row 3, column 1"):
        B = np.ones((2, 2))
        B[1, 1] = np.nan
        sweeper.merge_fronts(np.ones((2, 2)), B, ["max", "max"])


def test_every_layout_and_numeric_dtype_gives_the_same_front():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 6, size=(64, 3)).astype(np.float64)
    directions = ["max", "min", "max"]
    want = sweeper.pareto_front(X, directions).tolist()
    readonly = X.copy()
    readonly.flags.writeable = False
    wide = np.zeros((64, 6))
    wide[:, ::2] = X
    variants = {
        "fortran": np.asfortranarray(X),
        "strided view": wide[:, ::2],
        "reversed rows": X[::-1][::-1],
        "int64": X.astype(np.int64),
        "int8": X.astype(np.int8),
        "uint16": X.astype(np.uint16),
        "float32": X.astype(np.float32),
        "list of lists": X.tolist(),
        "tuple of tuples": tuple(map(tuple, X.tolist())),
        "read-only": readonly,
    }
    for name, v in variants.items():
        assert sweeper.pareto_front(v, directions).tolist() == want, name
    b = np.array([[True, False], [False, True], [False, False]])
    assert sweeper.pareto_front(b, ["max", "max"]).tolist() == [0, 1]
    # the result is an int64 index array, usable to index X
    out = sweeper.pareto_front(X, directions)
    assert out.dtype == np.int64 and out.ndim == 1
    assert X[out].shape == (len(want), 3)


def test_input_errors_say_what_to_pass():
    good = ["max", "max"]
    with pytest.raises(ValueError, match=r"2-D array of shape \(n, d\).*reshape\(-1, 1\)"):
        sweeper.pareto_front(np.array([1.0, 2.0]), good)
    with pytest.raises(ValueError, match=r"2-D array.*got shape \(2, 2, 2\)"):
        sweeper.pareto_front(np.ones((2, 2, 2)), good)
    with pytest.raises(TypeError, match="dtype <U1; the front functions need real numbers"):
        sweeper.pareto_front(np.array([["a", "b"]]), good)
    with pytest.raises(TypeError, match="complex128"):
        sweeper.pareto_front(np.ones((2, 2), dtype=complex), good)
    with pytest.raises(TypeError, match="cannot be read as a float64 array"):
        sweeper.pareto_front([[1.0, "x"]], good)
    with pytest.raises(ValueError, match="must be 2-D"):
        sweeper.pareto_front([1.0, 2.0], good)
    with pytest.raises(ValueError, match="dimension d must be at least 1"):
        sweeper.pareto_front(np.ones((3, 0)), [])
    with pytest.raises(ValueError, match="directions has 1 entries for 2 columns"):
        sweeper.pareto_front(np.ones((3, 2)), ["max"])
    with pytest.raises(ValueError, match=r'directions\[1\] must be "max" or "min", got "up"'):
        sweeper.pareto_front(np.ones((3, 2)), ["max", "up"])
    with pytest.raises(TypeError, match="got a single string"):
        sweeper.pareto_front(np.ones((3, 2)), "max")
    with pytest.raises(ValueError, match="reference point: 1 values for 2 columns"):
        sweeper.hypervolume(np.ones((3, 2)), [0.0], good)


def test_nan_is_rejected_with_its_row_and_column():
    X = np.zeros((5, 3))
    X[3, 2] = np.nan
    for f in (sweeper.pareto_front, sweeper.nondominated_ranks):
        with pytest.raises(ValueError, match=r"^X: row 3, column 2: value is NaN"):
            f(X, ["max"] * 3)
    with pytest.raises(ValueError, match=r"row 3, column 2"):
        sweeper.hypervolume(X, [0, 0, 0], ["max"] * 3)
    # the converted copy reports the same place
    with pytest.raises(ValueError, match=r"row 3, column 2"):
        sweeper.pareto_front(np.asfortranarray(X).astype(np.float32), ["max"] * 3)
    with pytest.raises(ValueError, match="reference point: column 1 is NaN"):
        sweeper.hypervolume(np.ones((2, 2)), [0.0, np.nan], ["max", "max"])


def test_the_gil_is_released_while_the_kernel_runs():
    # Another Python thread records the time of every loop it runs. With the GIL held by
    # the kernel it could run no loop between the call's start and its end (give or take
    # one switch interval, 5 ms); with the GIL released it runs all along.
    import threading
    import time

    rng = np.random.default_rng(4)
    stamps, done, started = [], threading.Event(), threading.Event()

    def counter():
        started.set()
        while not done.is_set():
            stamps.append(time.perf_counter())

    t = threading.Thread(target=counter)
    t.start()
    started.wait()
    n = 50_000
    while True:
        # points on a plane: all on the front, so the exact kernel does real work
        X = rng.random((n, 4))
        X /= X.sum(axis=1, keepdims=True)
        t0 = time.perf_counter()
        sweeper.pareto_front(X, ["max"] * 4)
        t1 = time.perf_counter()
        if t1 - t0 > 0.3 or n >= 3_200_000:
            break
        n *= 2
    done.set()
    t.join()
    inside = [s for s in stamps if t0 + 0.05 < s < t1 - 0.05]
    assert t1 - t0 > 0.15, "the kernel call was too short to tell"
    assert len(inside) > 100, (len(inside), t1 - t0)
