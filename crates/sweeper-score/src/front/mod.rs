//! Pareto-front kernels over row-major `n × d` matrices of `f64`.
//!
//! Every function takes the data row-major (`data.len() == n * d`, `d >= 1`) and one
//! [`Direction`] per column. A NaN anywhere is [`ScoreError::NanValue`]; shape problems are
//! [`ScoreError::Shape`]. `±inf` are ordinary values and `-0.0 == 0.0`.
//!
//! Dominance: row `a` dominates row `b` iff `a` is at least as good in every column (each in
//! its own direction) and strictly better in at least one. Equal rows do not dominate each
//! other, so every copy of a duplicate front row is kept.

mod brute;

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
    nondominated_brute_force(data, d, directions)
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
    let _ = min_parallel_rows;
    nondominated_brute_force(data, d, directions)
}

/// [`nondominated`] on one thread (no rayon at any size).
pub fn nondominated_sequential(
    data: &[f64],
    d: usize,
    directions: &[Direction],
) -> Result<Vec<usize>, ScoreError> {
    nondominated_brute_force(data, d, directions)
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
/// the rows that are non-dominated once front 0 is removed, and so on.
pub fn nondominated_ranks(
    data: &[f64],
    d: usize,
    directions: &[Direction],
) -> Result<Vec<usize>, ScoreError> {
    let c = canonicalise(data, d, directions)?;
    Ok(brute::ranks(&c))
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
    Ok(brute::hypervolume(&c, &r))
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
