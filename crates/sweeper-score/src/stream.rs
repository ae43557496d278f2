//! [`rank`](crate::rank) and [`pareto_front`](crate::pareto_front) for rows that arrive one
//! at a time, holding only what the result can still need: a caller that reads millions of
//! rows from a file keeps a few numbers and a handle (`T`, e.g. where the row sits in the
//! file) per row that may still be shown, not the rows.
//!
//! - [`RankStream`] keeps, with a limit `N`, only the best `N` seen so far (plus a buffer it
//!   trims); without one, every row's two numbers and handle.
//! - [`FrontStream`] keeps the rows not yet known to be dominated: every so often it replaces
//!   its rows by their front ([`front::nondominated`]). The front of a union is the front of
//!   (the front of one part) ∪ (the other part), since dominance is transitive, so the
//!   result is the front of every row pushed; equal rows never dominate each other, so
//!   duplicates survive every step.
//!
//! Both give exactly what the batch functions give on the same rows in the same order,
//! ties included (the property tests check it against them).
//!
//! ```
//! use sweeper_goal::Direction::{Maximize, Minimize};
//! use sweeper_score::{FrontStream, RankStream};
//!
//! // (score, used_gpus) per row; the handle is the row number.
//! let mut top = RankStream::new(Some(2));
//! for (i, (score, gpus)) in [(1.0, 4.0), (3.0, 8.0), (3.0, 4.0), (2.0, 1.0)].into_iter().enumerate() {
//!     top.push(score, gpus, i);
//! }
//! assert_eq!(top.finish(), [2, 1]); // a tie at 3.0 goes to fewer GPUs
//!
//! // (throughput, latency) per row.
//! let mut front = FrontStream::new(&[Maximize, Minimize])?;
//! for (i, row) in [[10.0, 5.0], [9.0, 6.0], [12.0, 9.0], [10.0, 5.0]].iter().enumerate() {
//!     front.push(row, i)?;
//! }
//! assert_eq!(front.finish()?, [0, 3, 2]); // sorted by latency; row 1 is dominated by row 0
//! # Ok::<(), sweeper_score::ScoreError>(())
//! ```

use crate::ScoreError;
use crate::front;
use crate::rank::{RankKey, rank_order};
use sweeper_goal::Direction;

/// Rows a [`FrontStream`] buffers before its first reduction to the front. At 2 columns
/// this is 1 MiB of values; one reduction of that many rows takes about a millisecond.
pub const FRONT_STREAM_CHUNK: usize = 1 << 16;

/// Entries a limited [`RankStream`] holds at least before it trims back to its limit.
const RANK_STREAM_MIN_BUFFER: usize = 1024;

/// [`rank`](crate::rank) of rows pushed one at a time: best score first, ties to fewer
/// GPUs, then push order; with a limit, only the best `limit` are kept and returned.
///
/// Memory: with a limit `N`, at most `max(2N, 1024)` entries; without one, one entry (two
/// `f64` and a `T`) per row pushed.
#[derive(Debug, Clone)]
pub struct RankStream<T> {
    limit: Option<usize>,
    /// Entries in push order, except that a trimmed prefix is already in rank order (every
    /// entry after it was pushed later), so a stable sort keeps ties in push order.
    entries: Vec<(RankKey, T)>,
    trim_at: usize,
}

impl<T> RankStream<T> {
    /// A ranking of everything pushed (`None`), or of the best `limit` only.
    pub fn new(limit: Option<usize>) -> Self {
        Self::with_buffer(limit, RANK_STREAM_MIN_BUFFER)
    }

    /// [`new`](Self::new) that trims a limited ranking once it holds `max(2 * limit,
    /// buffer)` entries (tests use a small buffer to trim often).
    pub fn with_buffer(limit: Option<usize>, buffer: usize) -> Self {
        let trim_at = limit.map_or(usize::MAX, |n| n.saturating_mul(2).max(buffer).max(1));
        RankStream {
            limit,
            entries: Vec::new(),
            trim_at,
        }
    }

    /// Adds a row with its signed score (higher is better) and its GPU count.
    pub fn push(&mut self, score: f64, used_gpus: f64, item: T) {
        self.push_satisfying(score, used_gpus, None, item);
    }

    /// [`push`](Self::push) of a `min_gpus` row: `satisfying` says whether its goodput
    /// reached the floor (see [`rank`](crate::rank)).
    pub fn push_satisfying(
        &mut self,
        score: f64,
        used_gpus: f64,
        satisfying: Option<bool>,
        item: T,
    ) {
        if self.limit == Some(0) {
            return;
        }
        let key = RankKey {
            score,
            gpus: used_gpus,
            satisfying,
        };
        self.entries.push((key, item));
        if self.entries.len() >= self.trim_at {
            self.sort_and_cut();
        }
    }

    /// Entries held now.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn sort_and_cut(&mut self) {
        // Stable: equal entries stay in push order (see `entries`).
        self.entries.sort_by(|a, b| rank_order(&a.0, &b.0));
        if let Some(n) = self.limit {
            self.entries.truncate(n);
        }
    }

    /// The handles in rank order (at most `limit` of them).
    pub fn finish(mut self) -> Vec<T> {
        self.sort_and_cut();
        self.entries.into_iter().map(|(_, item)| item).collect()
    }
}

/// [`pareto_front`](crate::pareto_front) of rows pushed one at a time: the non-dominated
/// rows, sorted by the last column ascending, ties in push order.
///
/// Memory: the front of the rows pushed so far plus up to as many rows again (at least
/// [`FRONT_STREAM_CHUNK`]), `d` values and a `T` each. A front that keeps every row (all
/// rows on one frontier) keeps every row.
#[derive(Debug, Clone)]
pub struct FrontStream<T> {
    directions: Vec<Direction>,
    /// Row-major values of the rows held, in push order.
    data: Vec<f64>,
    items: Vec<T>,
    pushed: usize,
    reduce_at: usize,
    chunk: usize,
}

impl<T> FrontStream<T> {
    /// A front over one column per direction.
    ///
    /// Errors: no directions is [`ScoreError::Shape`].
    pub fn new(directions: &[Direction]) -> Result<Self, ScoreError> {
        Self::with_chunk(directions, FRONT_STREAM_CHUNK)
    }

    /// [`new`](Self::new) that first reduces after `chunk` rows (tests use a small chunk to
    /// reduce often).
    pub fn with_chunk(directions: &[Direction], chunk: usize) -> Result<Self, ScoreError> {
        if directions.is_empty() {
            return Err(ScoreError::Shape {
                detail: "a pareto front needs at least one objective".to_owned(),
            });
        }
        let chunk = chunk.max(1);
        Ok(FrontStream {
            directions: directions.to_vec(),
            data: Vec::new(),
            items: Vec::new(),
            pushed: 0,
            reduce_at: chunk,
            chunk,
        })
    }

    /// Adds a row: one value per direction.
    ///
    /// Errors: a row of the wrong length is [`ScoreError::Shape`]; a NaN is
    /// [`ScoreError::NanValue`] with the row's push number and the column, and the row is
    /// not added.
    pub fn push(&mut self, values: &[f64], item: T) -> Result<(), ScoreError> {
        let d = self.directions.len();
        if values.len() != d {
            return Err(ScoreError::Shape {
                detail: format!("a row of {} values for {d} objectives", values.len()),
            });
        }
        if let Some(column) = values.iter().position(|x| x.is_nan()) {
            return Err(ScoreError::NanValue {
                row: self.pushed,
                column,
            });
        }
        self.data.extend_from_slice(values);
        self.items.push(item);
        self.pushed += 1;
        if self.items.len() >= self.reduce_at {
            self.reduce()?;
        }
        Ok(())
    }

    /// Rows pushed in total.
    pub fn pushed(&self) -> usize {
        self.pushed
    }

    /// Rows held now (the front so far and the rows pushed since the last reduction).
    pub fn held(&self) -> usize {
        self.items.len()
    }

    /// Replaces the rows held by their front, in push order.
    fn reduce(&mut self) -> Result<(), ScoreError> {
        let d = self.directions.len();
        let keep = front::nondominated(&self.data, d, &self.directions)?;
        let mut flags = vec![false; self.items.len()];
        for (k, &i) in keep.iter().enumerate() {
            flags[i] = true;
            // `keep` ascends, so row k's slot is free (k <= i).
            self.data.copy_within(i * d..(i + 1) * d, k * d);
        }
        self.data.truncate(keep.len() * d);
        let mut flag = flags.iter();
        self.items.retain(|_| flag.next().copied().unwrap_or(false));
        self.reduce_at = self.chunk.max(keep.len().saturating_mul(2));
        Ok(())
    }

    /// The handles of the front, sorted by the last column ascending (ties in push order).
    pub fn finish(self) -> Result<Vec<T>, ScoreError> {
        let d = self.directions.len();
        let order = front::pareto_front_sorted(&self.data, d, &self.directions)?;
        let mut items: Vec<Option<T>> = self.items.into_iter().map(Some).collect();
        Ok(order.into_iter().filter_map(|i| items[i].take()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{Maximize, Minimize};

    #[test]
    fn a_limited_ranking_keeps_the_best_with_ties_in_push_order() {
        let mut r = RankStream::with_buffer(Some(3), 1);
        for (i, s) in [5.0, 7.0, 7.0, 1.0, 7.0, 9.0, 7.0].into_iter().enumerate() {
            r.push(s, 1.0, i);
            assert!(r.len() <= 6);
        }
        assert_eq!(r.finish(), [5, 1, 2]);
        let mut none = RankStream::new(Some(0));
        none.push(1.0, 1.0, 0);
        assert!(none.is_empty());
        assert!(none.finish().is_empty());
    }

    #[test]
    fn a_front_reduced_often_keeps_duplicates_and_input_order() {
        let mut f = FrontStream::with_chunk(&[Maximize, Minimize], 2).unwrap();
        let rows = [
            [1.0, 1.0],
            [0.0, 2.0],
            [1.0, 1.0],
            [2.0, 3.0],
            [1.0, 1.0],
            [2.0, 3.0],
        ];
        for (i, row) in rows.iter().enumerate() {
            f.push(row, i).unwrap();
            // the front so far (up to 4 rows) and the rows pushed since
            assert!(f.held() <= 5, "{}", f.held());
        }
        assert_eq!(f.pushed(), 6);
        assert_eq!(f.finish().unwrap(), [0, 2, 4, 3, 5]);
    }

    #[test]
    fn bad_rows_are_errors_naming_the_row() {
        assert!(matches!(
            FrontStream::<()>::new(&[]),
            Err(ScoreError::Shape { .. })
        ));
        let mut f = FrontStream::new(&[Maximize, Maximize]).unwrap();
        f.push(&[1.0, 2.0], ()).unwrap();
        assert_eq!(
            f.push(&[1.0, f64::NAN], ()),
            Err(ScoreError::NanValue { row: 1, column: 1 })
        );
        assert!(matches!(f.push(&[1.0], ()), Err(ScoreError::Shape { .. })));
        assert_eq!(f.finish().unwrap().len(), 1);
    }
}
