//! `sweeper-engine`: the sweep run loop (SPEC 7) as a library.
//!
//! Layer 4 of sweeper, on `sweeper-goal` (the config, without YAML), `sweeper-score` (scoring
//! and fronts) and `sweeper-sampler` (the study). It holds the loop (rounds and the async
//! schedule), the [`Evaluator`], [`Proposer`], [`Provider`] and
//! [`RunObserver`] seams, the typed evaluation request and outcome, the journal
//! ([`FileJournal`]), the [`Ledger`](run::Ledger) both the live loop and a replay feed, and the result
//! types. It starts no process and writes no file but the journal it is handed: evaluators
//! (`sweeper-eval`, `sweeper-model`), result files (`sweeper-tables`) and plots
//! (`sweeper-plot`) are other crates, and the `sweeper` binary (`sweeper-cli`) ties them
//! together.
//!
//! Invariant: a single evaluation never aborts a sweep, and no finished evaluation is lost.
//! Every outcome is tallied with its reason and journaled before the next one is observed;
//! under `rounds`, observations reach the study in trial order, so the same seed and
//! evaluator give the same result, and a resumed run ends where an uninterrupted one does.
//!
//! A sweep with an evaluator of your own, journaled, then resumed (nothing is evaluated
//! again):
//!
//! ```
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use sweeper_engine::{EvalOutcome, EvalRequest, Evaluator, FileJournal, RawReport, Sweeper};
//!
//! /// A made-up serving benchmark: more tensor parallelism, faster users, fewer tok/s/gpu.
//! struct Bench(AtomicUsize);
//! impl Evaluator for Bench {
//!     fn evaluate(&self, _worker: usize, request: &EvalRequest) -> EvalOutcome {
//!         self.0.fetch_add(1, Ordering::SeqCst);
//!         let tp = request.parameters["tp"].as_f64().unwrap_or(1.0);
//!         let mut report = RawReport::new();
//!         report.insert("output_throughput_tok_s".into(), 1000.0 * tp.sqrt());
//!         report.insert("mean_itl_ms".into(), 40.0 / tp);
//!         report.insert("gpu_hours".into(), tp / 60.0);
//!         report.insert("duration_ms".into(), 60_000.0);
//!         EvalOutcome::Report(report)
//!     }
//! }
//!
//! let config = sweeper_goal::parse(
//!     r#"{"goal": {"target": "pareto"},
//!         "workload": {"isl": 4000, "osl": 500, "num_request_ratio": 10, "concurrency": 64},
//!         "search_space": {"gpu_budget": 8, "used_gpus": ["tp"],
//!                          "parameters": {"tp": {"values": [1, 2, 4, 8]}}},
//!         "sweep": {"max_rounds": 2, "candidates_per_round": 2, "seed": 7}}"#,
//! )?;
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("journal.jsonl");
//! let bench = Bench(AtomicUsize::new(0));
//!
//! let mut journal = FileJournal::create(&path, &config)?;
//! let result = Sweeper::builder(&config).evaluator(&bench).journal(&mut journal).run()?;
//! assert!(!result.candidates.is_empty());
//! drop(journal);
//!
//! let evaluated = bench.0.load(Ordering::SeqCst);
//! let mut journal = FileJournal::open(&path, &config)?;
//! let again = Sweeper::builder(&config).evaluator(&bench).journal(&mut journal).run()?;
//! assert_eq!(again.tallies, result.tallies);
//! assert_eq!(bench.0.load(Ordering::SeqCst), evaluated, "nothing evaluated twice");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod evaluator;
pub mod provider;
pub mod report;
pub mod run;
pub mod text;

// The layers below, re-exported so that an embedder depends on this crate alone and gets
// the versions it was built with (`sweeper_engine::sweeper_goal::parse`, say).
pub use sweeper_goal;
pub use sweeper_sampler;
pub use sweeper_score;
pub use sweeper_topology;

pub use evaluator::{EvalContext, EvalOutcome, EvalRequest, Evaluator, RawReport};
pub use provider::{Provider, SweepContext};
pub use report::parse_report;
pub use run::{
    BranchStudies, FileJournal, ListProposer, Proposer, RunError, RunObserver, RunResult, Status,
    Sweeper, SweeperBuilder, TOPOLOGY, default_proposer, default_study, search_space,
    search_space_of, topology_pool,
};
