//! The default algorithm's saved state: its random streams, work caps and the last
//! fitted hyperparameters.

use serde::{Deserialize, Serialize};

use crate::rng::Rng;
use crate::sampler::gp::{self, FitCaps};
use crate::sampler::quasi::QuasiSampler;

/// Work caps of the default algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Effort {
    /// Random candidates per suggestion.
    pub(crate) random: usize,
    /// Mutations of the best points per suggestion.
    pub(crate) mutations: usize,
    /// Pattern-search steps of the local refinement.
    pub(crate) refine_steps: usize,
    /// L-BFGS iterations, cold and warm.
    pub(crate) cold_iters: usize,
    pub(crate) warm_iters: usize,
}

impl Default for Effort {
    fn default() -> Self {
        Effort {
            random: 600,
            mutations: 900,
            refine_steps: 20,
            cold_iters: 60,
            warm_iters: 12,
        }
    }
}

/// The default algorithm's state: random streams and the last fitted hyperparameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct DefaultSampler {
    pub(super) rng: Rng,
    pub(super) quasi: QuasiSampler,
    /// Last fitted `θ` per metric (warm starts).
    pub(super) hyper: Vec<Option<Vec<f64>>>,
    /// Last fitted `θ` of the feasibility model.
    pub(super) feas_hyper: Option<Vec<f64>>,
    /// Number of observations at each metric's last fit (then the feasibility model's).
    pub(super) fitted_at: Vec<usize>,
    /// Last fitted `θ` per metric under the long lengthscale prior (see
    /// [`HEDGE_UNTIL`](super::tuning::HEDGE_UNTIL)), the next such fit's warm start, and
    /// the number of observations at each of those fits.
    #[serde(default)]
    pub(super) long_hyper: Vec<Option<Vec<f64>>>,
    #[serde(default)]
    pub(super) long_fitted_at: Vec<usize>,
    pub(super) effort: Effort,
}

impl DefaultSampler {
    pub(crate) fn new(seed: u64, metrics: usize) -> Self {
        DefaultSampler {
            rng: Rng::new(seed, 3),
            quasi: QuasiSampler::new(seed),
            hyper: vec![None; metrics],
            feas_hyper: None,
            fitted_at: vec![0; metrics + 1],
            long_hyper: vec![None; metrics],
            long_fitted_at: vec![0; metrics],
            effort: Effort::default(),
        }
    }

    pub(crate) fn set_effort(&mut self, effort: Effort) {
        self.effort = effort;
    }

    pub(super) fn caps(&self) -> FitCaps {
        FitCaps {
            cold_iters: self.effort.cold_iters,
            warm_iters: self.effort.warm_iters,
            restarts: 2,
            restart_below: 30,
            ls_mean: gp::LS_MEAN,
        }
    }
}
