//! `sweeper-score`: report metrics, scoring, dominance, ranking and Pareto fronts (SPEC 3).
//!
//! Layer 2 of sweeper, on top of `sweeper-goal`; uses rayon, reads no file format.

mod error;
pub mod front;

pub use error::ScoreError;
