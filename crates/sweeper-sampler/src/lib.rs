//! `sweeper-sampler`: the multi-metric ask/tell study and its algorithms (SPEC 4).
//!
//! Layer 3 of sweeper, on top of `sweeper-goal` (which builds the study's metrics from a
//! goal; without its `yaml` feature) and `sweeper-score` (whose front kernel is the one
//! dominance test of the study and of the default algorithm), and below the CLI's run
//! loop. A [`Study`] holds a [`SearchSpace`], one
//! [`SamplerMetric`](sweeper_goal::SamplerMetric) per objective, the trials and an
//! [`Algorithm`]: [`Algorithm::Default`] (GP-UCB-PE with random hypervolume scalarization
//! and a feasibility model), [`Algorithm::Random`], [`Algorithm::QuasiRandom`] (scrambled
//! Halton) and [`Algorithm::Grid`].
//!
//! Invariant: a study is deterministic. The same space, metrics, algorithm, seed and
//! sequence of `suggest` / `observe` / `observe_infeasible` calls give bit-identical trials,
//! also across [`Study::to_json`] / [`Study::from_json`]; every call does bounded work (at
//! most [`Study::max_suggest`] trials a call).
//!
//! ```
//! use std::collections::BTreeMap;
//! use sweeper_goal::{Direction, SamplerMetric};
//! use sweeper_sampler::{Algorithm, ParamSpec, SearchSpace, Study};
//!
//! let mut space = SearchSpace::new();
//! space.add("x", ParamSpec::Float { lo: -2.0, hi: 2.0, log: false })?;
//! space.add("n", ParamSpec::Int { lo: 1, hi: 8, log: false })?;
//! let metrics = vec![SamplerMetric { name: "objective".into(), direction: Direction::Maximize }];
//! let mut study = Study::new(space, metrics, Algorithm::QuasiRandom, 42)?;
//! for _ in 0..5 {
//!     for trial in study.suggest(2)? {
//!         let x = trial.params[0].1.as_f64().unwrap_or(0.0);
//!         let value = BTreeMap::from([("objective".to_owned(), -x * x)]);
//!         study.observe(trial.id, &value)?;
//!     }
//! }
//! assert_eq!(study.trials().len(), 10);
//! assert!(study.best_trial().is_some());
//! # Ok::<(), sweeper_sampler::SamplerError>(())
//! ```

mod algorithm;
mod error;
mod rng;
mod sampler;
mod space;
mod study;
mod trial;

pub use algorithm::Algorithm;
pub use error::SamplerError;
pub use sampler::{History, Sampler};
pub use space::{ParamSpec, ParamValue, SearchSpace};
pub use study::{Floor, Study};
pub use trial::{Trial, TrialRecord, TrialState};
