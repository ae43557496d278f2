//! The [`Sampler`] trait and the simple algorithms behind a study.

use sweeper_goal::SamplerMetric;

use crate::space::{Domain, SearchSpace};
use crate::trial::{TrialRecord, TrialState};

pub(crate) mod default;
pub(crate) mod floor;
mod gp;
pub(crate) mod grid;
mod linalg;
pub(crate) mod quasi;
pub(crate) mod random;

/// What an algorithm sees of a study when asked for new points.
///
/// A *point* has one coordinate per searched parameter (constants excluded), in space
/// order: a float's position in `[0, 1]` (log space for a log-scaled float), an integer's
/// value, a discrete or categorical parameter's value index.
#[derive(Debug, Clone, Copy)]
pub struct History<'a> {
    pub(crate) domain: &'a Domain,
    pub(crate) space: &'a SearchSpace,
    pub(crate) metrics: &'a [SamplerMetric],
    pub(crate) records: &'a [TrialRecord],
    pub(crate) points: &'a [Vec<f64>],
}

impl<'a> History<'a> {
    /// The study's search space.
    pub fn space(&self) -> &'a SearchSpace {
        self.space
    }

    /// The study's metrics.
    pub fn metrics(&self) -> &'a [SamplerMetric] {
        self.metrics
    }

    /// Every trial so far, in id order.
    pub fn records(&self) -> &'a [TrialRecord] {
        self.records
    }

    /// The point of every trial, parallel to [`Self::records`].
    pub fn points(&self) -> &'a [Vec<f64>] {
        self.points
    }

    /// Whether `point` equals a trial's point (observed, infeasible or pending).
    pub fn is_taken(&self, point: &[f64]) -> bool {
        self.points.iter().any(|p| self.domain.same(p, point))
    }

    pub(crate) fn pending_points(&self) -> impl Iterator<Item = &'a Vec<f64>> {
        self.records
            .iter()
            .zip(self.points)
            .filter(|(r, _)| matches!(r.state, TrialState::Pending))
            .map(|(_, p)| p)
    }
}

/// An algorithm that proposes points; swappable behind a [`crate::Study`].
///
/// Implementations must be deterministic: the same construction and the same sequence of
/// calls give the same points. They should not repeat a point of the history or of the same
/// batch; they may return fewer than `count` points only when the space is exhausted.
pub trait Sampler: Send + std::fmt::Debug {
    /// Up to `count` new points.
    fn suggest(&mut self, history: &History<'_>, count: usize) -> Vec<Vec<f64>>;

    /// The algorithm's state (random stream position, fitted hyperparameters, ...), from
    /// which it is rebuilt by the study's restore.
    fn save(&self) -> serde_json::Value;
}

/// The most points one `suggest` call hands out: [`crate::Study::MAX_SUGGEST`], whose doc
/// says why.
pub(crate) const MAX_SUGGEST: usize = 1_000;
/// The most points one `suggest` call of the grid hands out:
/// [`crate::Study::MAX_GRID_SUGGEST`], the largest grid.
pub(crate) const MAX_GRID_SUGGEST: usize = 1 << 20;

/// Largest finite space that is enumerated to find points not yet taken.
const ENUMERATE_LIMIT: u128 = 1 << 20;

/// Draws points from `generate` until `count` new ones (not taken, not in `already`, not
/// repeated) are found;
/// after many misses in a finite space, enumerates the points not yet taken.
pub(crate) fn fill_unique(
    history: &History<'_>,
    already: &[Vec<f64>],
    count: usize,
    mut generate: impl FnMut() -> Vec<f64>,
) -> Vec<Vec<f64>> {
    let domain = history.domain;
    // the study caps `count` ([`MAX_SUGGEST`]); the capacity is capped too, so that no
    // other caller can size it
    let mut out: Vec<Vec<f64>> = Vec::with_capacity(count.min(MAX_SUGGEST));
    let fresh = |p: &[f64], out: &[Vec<f64>]| {
        !history.is_taken(p) && !out.iter().chain(already).any(|q| domain.same(q, p))
    };
    let mut misses = 0usize;
    while out.len() < count && misses < 64 + 8 * count {
        let p = generate();
        if fresh(&p, &out) {
            out.push(p);
        } else {
            misses += 1;
        }
    }
    if out.len() < count
        && let Some(card) = domain.cardinality()
        && card <= ENUMERATE_LIMIT
    {
        for k in 0..card {
            if out.len() == count {
                break;
            }
            let p = domain.discrete_combo(k, 0.5);
            if fresh(&p, &out) {
                out.push(p);
            }
        }
    }
    out
}
