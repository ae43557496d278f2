//! `sweeper-score`: report metrics, scoring, dominance, ranking and Pareto fronts (SPEC 3).
//!
//! Layer 2 of sweeper, on top of `sweeper-goal` (without its `yaml` feature, so no YAML
//! crate is compiled); uses rayon, reads no file format (callers hand in JSON values, maps
//! and row-major `&[f64]` matrices).
//!
//! Invariant: no NaN ever reaches a ranking or a front. A [`Report`] rejects NaN when it is
//! built, scores are never NaN (missing keys and zero GPU counts read the SPEC's defaults),
//! and the [`front`] kernels reject NaN with the row and column. `±inf` are ordinary
//! extreme values.
//!
//! - [`Report`]: one evaluation's metrics; [`avg_gpu`], [`objective_value`], [`score`] read
//!   it per SPEC 2's table; [`is_feasible`] is the GPU-budget rule.
//! - [`Candidate`] / [`make_candidate`]: a scored configuration; [`rank`] orders the
//!   candidates of a scalar goal, [`pareto_front`] extracts the front of a pareto goal.
//! - [`RankStream`] / [`FrontStream`]: the same ranking and front for rows pushed one at a
//!   time, holding only what the result can still need (the best `N`, the front so far).
//! - [`front`]: the numeric kernels (non-dominated rows, ranks, hypervolume, merging).
//!
//! Decisions where the SPEC is silent: non-numeric report values are skipped under keys the
//! scorer does not read and rejected under keys it reads ([`Report::from_json`]); an
//! invalid `used_gpus` reads `+inf`, so it is never feasible ([`make_candidate`]); infinite
//! numbers serialize as `"inf"` / `"-inf"` ([`json_f64`]).
//!
//! ```
//! use serde_json::json;
//! use sweeper_goal::Objective;
//! use sweeper_score::{Report, is_feasible, make_candidate, pareto_front, rank};
//!
//! let rows = [
//!     // (used_gpus, output tok/s, tok/s/user): static deployments over one hour.
//!     (4.0, 1000.0, 20.0),
//!     (8.0, 1600.0, 30.0),
//!     (4.0, 600.0, 50.0),
//!     (64.0, 9000.0, 60.0),
//! ];
//! let objectives = [Objective::ThroughputPerGpu, Objective::ThroughputPerUser];
//! let mut scalar = Vec::new();
//! let mut multi = Vec::new();
//! for (i, &(gpus, tok_s, per_user)) in rows.iter().enumerate() {
//!     let config = json!({"used_gpus": gpus}).as_object().unwrap().clone();
//!     let report = Report::from_json(i, &json!({
//!         "output_throughput_tok_s": tok_s,
//!         "mean_output_token_throughput_per_user": per_user,
//!         "gpu_hours": gpus,
//!         "duration_ms": 3_600_000.0,
//!     }))?;
//!     let c = make_candidate(i, config.clone(), &report, &objectives[..1], false);
//!     if is_feasible(c.used_gpus, 32.0) {
//!         scalar.push(c);
//!         multi.push(make_candidate(i, config, &report, &objectives, true));
//!     }
//! }
//! // Scalar goal `throughput_per_gpu`: 250, 200, 150 tok/s/gpu (row 3 is over budget).
//! let ranked = rank(scalar);
//! assert_eq!(ranked.iter().map(|c| c.index).collect::<Vec<_>>(), [0, 1, 2]);
//! // Pareto goal: every feasible row is on the front, sorted by tok/s/user.
//! let front = pareto_front(&multi, &objectives)?;
//! assert_eq!(front.iter().map(|c| c.index).collect::<Vec<_>>(), [0, 1, 2]);
//! # Ok::<(), sweeper_score::ScoreError>(())
//! ```

mod candidate;
mod error;
pub mod front;
mod goal_score;
pub mod json_f64;
mod rank;
mod recommend;
mod report;
mod scoring;
mod stream;

pub use candidate::{Candidate, USED_GPUS, make_candidate, used_gpus};
pub use error::ScoreError;
pub use goal_score::Scorer;
pub use rank::{pareto_front, rank};
pub use recommend::{Pick, RecommendOptions, Recommendation, recommend};
pub use report::{
    DURATION_MS, E2E_LATENCY, GOODPUT, GOODPUT_RPS, GPU_HOURS, ITL, KNOWN_METRICS,
    OUTPUT_THROUGHPUT, Report, THROUGHPUT_PER_USER, TTFT,
};
pub use scoring::{avg_gpu, cost_per_mtok, is_feasible, objective_key, objective_value, score};
pub use stream::{FRONT_STREAM_CHUNK, FrontStream, RankStream};
