//! Pareto-front kernels over row-major `n × d` matrices of `f64`.
//!
//! Every function takes the data row-major (`data.len() == n * d`, `d >= 1`) and one
//! [`Direction`] per column. A NaN anywhere is [`ScoreError::NanValue`]; shape problems are
//! [`ScoreError::Shape`]. `±inf` are ordinary values and `-0.0 == 0.0`.
//!
//! Dominance: row `a` dominates row `b` iff `a` is at least as good in every column (each in
//! its own direction) and strictly better in at least one. Equal rows do not dominate each
//! other, so every copy of a duplicate front row is kept.
//!
//! How [`nondominated`] works (every step exact; only the speed depends on the data):
//!
//! 0. **Small inputs** (under 65,536 rows): a plain block-nested loop whose window is the
//!    front of the rows seen so far, started from the largest-sum row of 64 spread over the
//!    input; it gives up (for the steps below) once that front outgrows 128 rows or a
//!    quarter of the rows seen. On one thread, inputs under 4,096 rows then go straight to
//!    step 2.
//! 1. **Prune** (`prune.rs`, one pass over the raw data, rayon tasks of up to 128k rows,
//!    signs applied on the fly, NaN noticed on the way): a strided sample's front, picked as
//!    a greedy set cover of the sample, seeds a window kept in move-to-front order. Each
//!    block of 64 rows is tested branch-free against the window's first one, two or four
//!    rows (a bit mask, vectorized across rows with the widest instructions the CPU has,
//!    see [`SimdLevel`]); only the rows those leave are tested one by one against the rest
//!    of the window, which is held column by column and scanned 16 rows at a time
//!    (`window.rs`). d = 2 keeps each task's exact running staircase instead. A task whose
//!    rows mostly survive computes its exact local front, or keeps its rows, when the front
//!    is large. Only rows dominated by a real row are dropped, so the front of the
//!    survivors is the front of the input. A light pass (the sample says the head leaves
//!    at most 2% of the rows) under 2^18 rows runs on one thread.
//! 2. **Exact front of the survivors** (their canonical rows are the one copy of the data):
//!    d = 1 a scan; d = 2 sort and sweep; d = 3 Kung's sweep with a staircase (`sweep.rs`);
//!    d >= 4 a sort-filter-skyline with the same column-major window while the front stays
//!    within 1,280 rows (or a quarter of the rows, up to 2,048), else a static k-d tree
//!    that every row queries for a dominator, in parallel (`kd.rs`).
//!
//! Inputs of at least 65,536 rows and 500,000 values use rayon; [`nondominated_sequential`]
//! never does, and
//! [`nondominated_with_threshold`] lets tests force the parallel path on small inputs.

mod brute;
mod hv;
mod kd;
mod prune;
mod ranks;
mod simd;
mod sweep;
mod window;

/// A small xorshift stream for the kernels' unit tests (no RNG crate needed).
#[cfg(test)]
pub(crate) fn xorshift(mut s: u64) -> impl FnMut() -> u64 {
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

pub use simd::{SimdLevel, limit_simd, simd_level};

use sweeper_goal::Direction;

use crate::ScoreError;

/// A validated matrix turned to "maximize every column" (minimized columns negated,
/// `-0.0` canonicalised to `0.0`), row-major.
#[derive(Debug, Clone)]
pub(crate) struct Canon {
    /// Row-major values, `n * d` of them.
    pub(crate) v: Vec<f64>,
    /// Rows.
    pub(crate) n: usize,
    /// Columns.
    pub(crate) d: usize,
}

impl Canon {
    /// Row `i`.
    pub(crate) fn row(&self, i: usize) -> &[f64] {
        &self.v[i * self.d..(i + 1) * self.d]
    }
}

/// Checks the shape of `data` against `d` and `directions`; returns the row count.
pub(crate) fn check_shape(
    data: &[f64],
    d: usize,
    directions: &[Direction],
) -> Result<usize, ScoreError> {
    if d == 0 {
        return Err(ScoreError::Shape {
            detail: "the dimension d must be at least 1".to_owned(),
        });
    }
    if directions.len() != d {
        return Err(ScoreError::Shape {
            detail: format!("{} directions for {d} columns", directions.len()),
        });
    }
    if !data.len().is_multiple_of(d) {
        return Err(ScoreError::Shape {
            detail: format!("{} values do not split into rows of {d}", data.len()),
        });
    }
    Ok(data.len() / d)
}

/// The first NaN in row-major order, as an error.
fn find_nan(data: &[f64], d: usize, row_offset: usize) -> Result<(), ScoreError> {
    match data.iter().position(|x| x.is_nan()) {
        None => Ok(()),
        Some(k) => Err(ScoreError::NanValue {
            row: row_offset + k / d,
            column: k % d,
        }),
    }
}

/// One column value turned to "maximize", with `-0.0` made `0.0`.
#[inline]
pub(crate) fn canon_value(x: f64, dir: Direction) -> f64 {
    match dir {
        Direction::Maximize => x + 0.0,
        Direction::Minimize => -x + 0.0,
    }
}

/// Validates and converts to the canonical maximized layout.
pub(crate) fn canonicalise(
    data: &[f64],
    d: usize,
    directions: &[Direction],
) -> Result<Canon, ScoreError> {
    let n = check_shape(data, d, directions)?;
    find_nan(data, d, 0)?;
    let v = data
        .chunks_exact(d)
        .flat_map(|row| {
            row.iter()
                .zip(directions)
                .map(|(&x, &dir)| canon_value(x, dir))
        })
        .collect();
    Ok(Canon { v, n, d })
}

/// Inputs of at least this many rows take the rayon path...
pub(crate) const PARALLEL_MIN_ROWS: usize = 1 << 16;
/// ...when they also hold at least this many values (4 MB of `f64`, one core's L2 cache on
/// the project's machine). Measured at 1e5 rows, min of three medians of 15 calls, one
/// thread against two: d = 2..4 ran 10–30% faster on one (uniform 1e5 × 3: 0.33 against
/// 0.42 ms), d = 5 faster on two (correlated 1e5 × 5: 0.97 against 0.65 ms).
const PARALLEL_MIN_VALUES: usize = 500_000;
/// Inputs of fewer rows (those that take no rayon) first try a plain block-nested loop,
/// exact while the front stays within `SMALL_MAX_FRONT` rows (no sampling or sorting: the
/// cheapest way for tiny fronts; at 1e4 rows it beat the seeded pass by 1.3–1.7× on uniform
/// and correlated data, d = 2..5).
const SMALL_ROWS: usize = PARALLEL_MIN_ROWS;
/// See [`SMALL_ROWS`].
const SMALL_MAX_FRONT: usize = 128;
/// Inputs of fewer rows skip the pruning pass...
const PRUNE_MIN_ROWS: usize = 64;
/// ...and on one thread, so do those of fewer rows than this whose front the block-nested
/// loop found too large: the pass keeps most of such a small input, and its seed alone
/// costs about as much as the exact kernel. One thread, median of 15: sphere 1e3 × 2 82
/// against 45 µs, sphere 1e3 × 3 174 against 102 µs, anticorrelated 1e3 × 3 113 against
/// 85 µs; at 1e4 rows neither way wins clearly.
const SEQ_PRUNE_MIN_ROWS: usize = 4096;
/// The d >= 4 kernel filters a sorted list (no tree) while the front stays within this many
/// rows, or within a quarter of the rows (but never fewer than [`SFS_MIN_FRONT`]): an
/// aborted filter wastes its work, and the tree wins on large all-front inputs (sphere
/// 1e4 × 5: 9–13 ms against 43 ms).
const SFS_MAX_FRONT: usize = 2048;
/// See [`SFS_MAX_FRONT`]. The tree loses on small inputs whose front is a large share of
/// them: one thread, min of three, survivors of the pass, the filter against the tree:
/// correlated 1e5 × 5 (441 rows, front 233) 35 against 160 µs, sphere 1e3 × 5 (all front)
/// 305 against 670 µs, uniform 1e5 × 5 (2,705 rows, front 1,036) 0.53 against 2.4 ms.
const SFS_MIN_FRONT: usize = 1280;

/// The exact front of canonical rows, a flag per row.
pub(crate) fn exact<const D: usize>(pts: &[[f64; D]], par: bool, level: SimdLevel) -> Vec<bool> {
    let flat = pts.as_flattened();
    match D {
        2 => sweep::front2(flat.as_chunks::<2>().0, par),
        3 => sweep::front3(flat.as_chunks::<3>().0, par),
        _ => kd::front_sfs(
            level,
            pts,
            SFS_MAX_FRONT.min((pts.len() / 4 + 64).max(SFS_MIN_FRONT)),
        )
        .unwrap_or_else(|| kd::front_tree(pts, par)),
    }
}

/// The exact front of a flat canonical buffer of any d, a flag per row (one thread).
pub(crate) fn exact_dyn(v: &[f64], d: usize) -> Vec<bool> {
    fn go<const D: usize>(v: &[f64]) -> Vec<bool> {
        exact::<D>(v.as_chunks::<D>().0, false, simd_level())
    }
    match d {
        1 => {
            let mut keep = vec![false; v.len()];
            for i in sweep::front1(v) {
                keep[i] = true;
            }
            keep
        }
        2 => go::<2>(v),
        3 => go::<3>(v),
        4 => go::<4>(v),
        5 => go::<5>(v),
        6 => go::<6>(v),
        7 => go::<7>(v),
        8 => go::<8>(v),
        _ => kd::front_sfs_dyn(v, d),
    }
}

/// Indices of the set flags.
fn flagged(keep: &[bool]) -> Vec<usize> {
    keep.iter()
        .enumerate()
        .filter(|(_, k)| **k)
        .map(|(i, _)| i)
        .collect()
}

/// The front of raw `data` with D columns: prune, then the exact kernel on the survivors.
fn run<const D: usize>(
    data: &[f64],
    directions: &[Direction],
    par: bool,
    level: SimdLevel,
) -> Result<Vec<usize>, ScoreError> {
    let n = data.len() / D;
    let sign: [f64; D] = std::array::from_fn(|j| directions[j].sign());
    // Only on the sequential path: with the default threshold that is every input under
    // `SMALL_ROWS`, and a forced parallel path (the tests) reaches the pass.
    if n < SMALL_ROWS
        && !par
        && let Some(front) = prune::small_front::<D>(level, data, &sign, SMALL_MAX_FRONT)
    {
        return Ok(front);
    }
    let prune_min = if par {
        PRUNE_MIN_ROWS
    } else {
        SEQ_PRUNE_MIN_ROWS
    };
    if n < prune_min || u32::try_from(n).is_err() {
        let c = canonicalise(data, D, directions)?;
        return Ok(flagged(&exact::<D>(c.v.as_chunks::<D>().0, par, level)));
    }
    match prune::pass::<D>(data, &sign, par, level) {
        prune::Pass::Nan => {
            find_nan(data, D, 0)?;
            unreachable!("the pass saw a NaN that the scan did not")
        }
        prune::Pass::Survivors(ids, vals) => {
            let keep = exact::<D>(&vals, par, level);
            Ok(ids
                .iter()
                .zip(keep)
                .filter(|(_, k)| *k)
                .map(|(&i, _)| i as usize)
                .collect())
        }
    }
}

/// Whether row `a` dominates row `b`: at least as good in every column, each in its own
/// direction, and strictly better in one. Rows of different lengths are compared over the
/// common prefix of `a`, `b` and `directions`; a NaN compares as neither better nor worse,
/// so a row holding one dominates nothing it differs from there.
pub fn dominates(a: &[f64], b: &[f64], directions: &[Direction]) -> bool {
    let mut strictly = false;
    for ((&x, &y), &dir) in a.iter().zip(b).zip(directions) {
        let (x, y) = (canon_value(x, dir), canon_value(y, dir));
        if x.is_nan() || y.is_nan() {
            return false;
        }
        if x < y {
            return false;
        }
        if x > y {
            strictly = true;
        }
    }
    strictly
}

/// Indices of the non-dominated rows, ascending; every copy of a duplicate front row is kept.
///
/// ```
/// use sweeper_goal::Direction::{Maximize, Minimize};
/// use sweeper_score::front::nondominated;
///
/// // (throughput, latency): row 1 is slower and has higher latency than row 0.
/// let data = [10.0, 1.0, 9.0, 2.0, 12.0, 3.0, 10.0, 1.0];
/// let front = nondominated(&data, 2, &[Maximize, Minimize]).unwrap();
/// assert_eq!(front, vec![0, 2, 3]);
/// ```
pub fn nondominated(
    data: &[f64],
    d: usize,
    directions: &[Direction],
) -> Result<Vec<usize>, ScoreError> {
    let min_rows = if data.len() >= PARALLEL_MIN_VALUES {
        PARALLEL_MIN_ROWS
    } else {
        usize::MAX
    };
    nondominated_with_level(data, d, directions, min_rows, simd_level())
}

/// [`nondominated`] with an explicit parallel threshold: inputs of at least
/// `min_parallel_rows` rows take the rayon path. Exposed so that tests can force the
/// parallel path on small inputs; use [`nondominated`] otherwise.
pub fn nondominated_with_threshold(
    data: &[f64],
    d: usize,
    directions: &[Direction],
    min_parallel_rows: usize,
) -> Result<Vec<usize>, ScoreError> {
    nondominated_with_level(data, d, directions, min_parallel_rows, simd_level())
}

/// [`nondominated_with_threshold`] with the hot loops built for `level` (or for the widest
/// level this CPU has, if that is lower) instead of [`simd_level`]; the result is the same
/// at every level. Exposed so that tests and benchmarks can run each level.
///
/// ```
/// use sweeper_goal::Direction::Maximize;
/// use sweeper_score::front::{SimdLevel, nondominated_with_level, simd_level};
///
/// let data = [1.0, 2.0, 2.0, 1.0, 0.5, 0.5];
/// println!("vector instructions: {}", simd_level().name());
/// for level in SimdLevel::ALL {
///     // Levels the CPU lacks run as its widest one.
///     let front = nondominated_with_level(&data, 2, &[Maximize; 2], usize::MAX, level).unwrap();
///     assert_eq!(front, vec![0, 1]);
/// }
/// ```
pub fn nondominated_with_level(
    data: &[f64],
    d: usize,
    directions: &[Direction],
    min_parallel_rows: usize,
    level: SimdLevel,
) -> Result<Vec<usize>, ScoreError> {
    let n = check_shape(data, d, directions)?;
    let par = n >= min_parallel_rows;
    match d {
        2 => run::<2>(data, directions, par, level),
        3 => run::<3>(data, directions, par, level),
        4 => run::<4>(data, directions, par, level),
        5 => run::<5>(data, directions, par, level),
        6 => run::<6>(data, directions, par, level),
        7 => run::<7>(data, directions, par, level),
        8 => run::<8>(data, directions, par, level),
        _ => {
            let c = canonicalise(data, d, directions)?;
            Ok(flagged(&exact_dyn(&c.v, d)))
        }
    }
}

/// [`nondominated`] on one thread (no rayon at any size).
pub fn nondominated_sequential(
    data: &[f64],
    d: usize,
    directions: &[Direction],
) -> Result<Vec<usize>, ScoreError> {
    nondominated_with_level(data, d, directions, usize::MAX, simd_level())
}

/// [`nondominated`] by comparing every pair of rows, O(n² d): the oracle of the tests.
pub fn nondominated_brute_force(
    data: &[f64],
    d: usize,
    directions: &[Direction],
) -> Result<Vec<usize>, ScoreError> {
    let c = canonicalise(data, d, directions)?;
    Ok(brute::nondominated(&c))
}

/// The rows of [`nondominated`] sorted by the last column's raw value ascending, ties by
/// row index (the order in which a 2-D front is drawn left to right).
pub fn pareto_front_sorted(
    data: &[f64],
    d: usize,
    directions: &[Direction],
) -> Result<Vec<usize>, ScoreError> {
    let mut front = nondominated(data, d, directions)?;
    // Stable sort on ascending indices: ties stay by row index. `-0.0` and `0.0` tie.
    front.sort_by(|&i, &j| {
        let (x, y) = (data[i * d + d - 1] + 0.0, data[j * d + d - 1] + 0.0);
        x.total_cmp(&y)
    });
    Ok(front)
}

/// Per row its front number (non-dominated sorting): 0 for the non-dominated rows, 1 for
/// the rows that are non-dominated once front 0 is removed, and so on. Copies of a row
/// share its front.
///
/// O(n log n) for d <= 2, O(n log n log F) for d = 3 with F fronts, and at most
/// O(d n^(2 - 1/(d - 1))) for d >= 4 (a k-d tree; far less on typical data), whatever the
/// number of fronts.
///
/// ```
/// use sweeper_goal::Direction::{Maximize, Minimize};
/// use sweeper_score::front::nondominated_ranks;
///
/// // (throughput, latency, cost): row 1 is worse than row 0 everywhere, row 2 than row 1.
/// let data = [10.0, 1.0, 5.0, 9.0, 2.0, 6.0, 8.0, 3.0, 7.0, 12.0, 3.0, 9.0];
/// let ranks = nondominated_ranks(&data, 3, &[Maximize, Minimize, Minimize]).unwrap();
/// assert_eq!(ranks, vec![0, 1, 2, 0]);
/// ```
///
/// # Panics
///
/// For d >= 4 with 2^32 rows or more.
pub fn nondominated_ranks(
    data: &[f64],
    d: usize,
    directions: &[Direction],
) -> Result<Vec<usize>, ScoreError> {
    let c = canonicalise(data, d, directions)?;
    Ok(ranks::ranks(&c))
}

/// Validates a reference point and turns it to the canonical layout.
fn canon_reference(reference: &[f64], directions: &[Direction]) -> Result<Vec<f64>, ScoreError> {
    if reference.len() != directions.len() {
        return Err(ScoreError::Reference {
            detail: format!(
                "{} values for {} columns",
                reference.len(),
                directions.len()
            ),
        });
    }
    if let Some(j) = reference.iter().position(|x| x.is_nan()) {
        return Err(ScoreError::Reference {
            detail: format!("column {j} is NaN"),
        });
    }
    Ok(reference
        .iter()
        .zip(directions)
        .map(|(&x, &dir)| canon_value(x, dir))
        .collect())
}

/// The dominated hypervolume: the measure of the union of the boxes spanned by each row and
/// `reference`, in raw units. Rows not strictly better than `reference` in every column
/// contribute nothing. Exact; an infinite coordinate makes the volume infinite.
pub fn hypervolume(
    data: &[f64],
    d: usize,
    directions: &[Direction],
    reference: &[f64],
) -> Result<f64, ScoreError> {
    let c = canonicalise(data, d, directions)?;
    let r = canon_reference(reference, directions)?;
    Ok(hv::hypervolume(&c.v, d, &r))
}

/// [`hypervolume`] by summing grid cells, O(n^(d+1)): the oracle of the tests.
pub fn hypervolume_brute_force(
    data: &[f64],
    d: usize,
    directions: &[Direction],
    reference: &[f64],
) -> Result<f64, ScoreError> {
    let c = canonicalise(data, d, directions)?;
    let r = canon_reference(reference, directions)?;
    Ok(brute::hypervolume(&c, &r))
}

/// [`nondominated_ranks`] by peeling fronts with the O(n²) test: the oracle of the tests.
pub fn nondominated_ranks_brute_force(
    data: &[f64],
    d: usize,
    directions: &[Direction],
) -> Result<Vec<usize>, ScoreError> {
    let c = canonicalise(data, d, directions)?;
    Ok(brute::ranks(&c))
}

/// The front of the union of two row sets, typically two fronts (shards of one sweep):
/// indices into the concatenation `[a rows..., b rows...]`, ascending. Correct for any two
/// inputs; a NaN is reported with its row in that concatenation.
pub fn merge_fronts(
    a: &[f64],
    b: &[f64],
    d: usize,
    directions: &[Direction],
) -> Result<Vec<usize>, ScoreError> {
    let na = check_shape(a, d, directions)?;
    check_shape(b, d, directions)?;
    find_nan(a, d, 0)?;
    find_nan(b, d, na)?;
    let mut all = Vec::with_capacity(a.len() + b.len());
    all.extend_from_slice(a);
    all.extend_from_slice(b);
    nondominated(&all, d, directions)
}
