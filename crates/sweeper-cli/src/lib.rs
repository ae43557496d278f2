//! `sweeper-cli`: the `sweeper` binary, and the sweep run loop as a library (SPEC 7).
//!
//! Layer 4 of sweeper, on top of `sweeper-goal`, `sweeper-score` and `sweeper-sampler`.
//! The library part holds what other tools may call: the run loop, the evaluators (external
//! commands and the built-in serving model) and the frontier plot.

pub mod builtin;
pub mod evaluator;
pub mod input;
pub mod plot;
pub mod provider;
pub mod run;

pub use run::{RunError, RunOptions, RunResult, Sweeper};
