//! Grid search: every point of a small space once, in a fixed order.

use serde::{Deserialize, Serialize};

use super::{History, Sampler};
use crate::error::SamplerError;
use crate::space::{Dim, Domain};

/// Levels given to a searched float parameter in a grid.
pub(crate) const FLOAT_LEVELS: u128 = 5;
/// Largest grid accepted.
pub(crate) const GRID_LIMIT: u128 = super::MAX_GRID_SUGGEST as u128;

/// Walks the grid in mixed-radix order (first parameter slowest).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct GridSampler {
    next: u64,
}

/// Number of grid points of a domain (floats at [`FLOAT_LEVELS`] levels).
pub(crate) fn grid_size(domain: &Domain) -> u128 {
    domain
        .dims
        .iter()
        .map(|(_, d)| d.levels().unwrap_or(FLOAT_LEVELS))
        .fold(1u128, u128::saturating_mul)
}

fn grid_point(domain: &Domain, mut k: u128) -> Vec<f64> {
    let mut p = vec![0.0; domain.dims.len()];
    for (j, (_, d)) in domain.dims.iter().enumerate().rev() {
        let l = d.levels().unwrap_or(FLOAT_LEVELS);
        let idx = k % l;
        k /= l;
        p[j] = match d {
            Dim::Float { .. } => idx as f64 / (FLOAT_LEVELS - 1) as f64,
            Dim::Int { lo, .. } => (i128::from(*lo) + idx as i128) as f64,
            _ => idx as f64,
        };
    }
    p
}

impl GridSampler {
    pub(crate) fn new(domain: &Domain) -> Result<Self, SamplerError> {
        let points = grid_size(domain);
        if points > GRID_LIMIT {
            return Err(SamplerError::GridTooLarge {
                points,
                limit: GRID_LIMIT,
            });
        }
        Ok(GridSampler { next: 0 })
    }
}

impl Sampler for GridSampler {
    fn suggest(&mut self, history: &History<'_>, count: usize) -> Vec<Vec<f64>> {
        let total = grid_size(history.domain);
        let mut out = Vec::with_capacity(count.min(super::MAX_GRID_SUGGEST));
        while out.len() < count && u128::from(self.next) < total {
            let p = grid_point(history.domain, u128::from(self.next));
            self.next += 1;
            if !history.is_taken(&p) {
                out.push(p);
            }
        }
        out
    }

    fn save(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}
