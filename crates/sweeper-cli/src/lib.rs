//! `sweeper-cli`: the `sweeper` binary, and the sweep run loop as a library (SPEC 7).
//!
//! Layer 4 of sweeper, on top of `sweeper-goal`, `sweeper-score` and `sweeper-sampler`.
//! The library part holds what other tools may call: the run loop, the evaluators (external
//! commands and the built-in serving model) and the frontier plot.
//!
//! Invariant: a single evaluation never aborts a sweep. Every outcome is tallied with its
//! reason, and observations reach the study in trial order, so the same seed and
//! evaluator give the same result, and a resumed run ends where an uninterrupted one does.
//!
//! ```no_run
//! use sweeper_cli::run::{Quiet, RunOptions, Sweeper, evaluator_for};
//!
//! let config = sweeper_goal::from_path("examples/quickstart.yaml".as_ref())?;
//! let setup = evaluator_for(&config, "quickstart")?;
//! let options = RunOptions {
//!     out_dir: "sweeper-out/quickstart".into(),
//!     resume: false,
//!     title: setup.title.clone(),
//! };
//! let result = Sweeper::new(&config, setup.evaluator.as_ref(), &mut Quiet).run(&options)?;
//! println!("{} candidates on the front", result.candidates.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod builtin;
pub mod evaluator;
pub mod input;
pub mod plot;
pub mod provider;
pub mod run;

pub use run::{RunError, RunOptions, RunResult, Sweeper};
