//! Uniform random search (seeded).

use serde::{Deserialize, Serialize};

use super::{History, Sampler, fill_unique};
use crate::rng::Rng;

/// Independent uniform draws per coordinate (log-uniform for log-scaled parameters).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RandomSampler {
    rng: Rng,
}

impl RandomSampler {
    pub(crate) fn new(seed: u64) -> Self {
        RandomSampler {
            rng: Rng::new(seed, 1),
        }
    }
}

impl Sampler for RandomSampler {
    fn suggest(&mut self, history: &History<'_>, count: usize) -> Vec<Vec<f64>> {
        let rng = &mut self.rng;
        fill_unique(history, &[], count, || history.domain.random(rng))
    }

    fn save(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}
