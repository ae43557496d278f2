//! `sweeper-cli`: the sweep engine as a library (SPEC 7), and the `sweeper` binary.
//!
//! Layer 4 of sweeper, on top of `sweeper-goal`, `sweeper-score` and `sweeper-sampler`.
//! The library is the engine: the run loop ([`run`]), its journal, the evaluators (external
//! commands, Slurm batch jobs and the built-in serving model) and the providers. With
//! `default-features = false` it is the engine alone; the features add the rest:
//!
//! - `files`: readers of report tables (CSV, JSON Lines, `.npy`), the result files of a
//!   run (`result.json`, `result.csv`, `trials.csv`), the one CSV writer ([`csv_out`]) and
//!   the plots;
//! - `cli` (default, implies `files`): the `sweeper` binary and its terminal output.
//!
//! Invariant: a single evaluation never aborts a sweep, and no finished evaluation is lost.
//! Every outcome is tallied with its reason and journaled before the next one is observed;
//! observations reach the study in trial order, so the same seed and evaluator give the
//! same result, and a resumed run ends where an uninterrupted one does.
//!
//! A sweep with the built-in serving model, journaled, then resumed (nothing is evaluated
//! again):
//!
//! ```
//! use sweeper_cli::run::{FileJournal, Sweeper, evaluator_for, write_outputs};
//!
//! let config = sweeper_goal::parse(
//!     "goal: {target: pareto}
//! workload: {isl: 4000, osl: 500, num_request_ratio: 10, kv_load_ratio: [0.05, 1.0]}
//! search_space:
//!   gpu_budget: 8
//!   used_gpus: [tp, replicas]
//!   parameters: {tp: {values: [1, 2, 4]}, replicas: {int: [1, 4]}}
//! evaluator: {builtin: {model: qwen3-32b-fp8, gpu: h200}}
//! sweep: {max_rounds: 3, candidates_per_round: 4, seed: 7}",
//! )?;
//! let setup = evaluator_for(&config, "doc")?;
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("journal.jsonl");
//!
//! let mut journal = FileJournal::create(&path, &config)?;
//! let result = Sweeper::builder(&config)
//!     .evaluator(setup.evaluator.as_ref())
//!     .journal(&mut journal)
//!     .run()?;
//! assert!(!result.candidates.is_empty());
//! // the engine wrote only the journal; result files are the caller's choice
//! write_outputs(dir.path(), &config, &result, &setup.title)?;
//! drop(journal);
//!
//! let mut journal = FileJournal::open(&path, &config)?;
//! assert_eq!(journal.finished_trials(), result.trials.len());
//! let again = Sweeper::builder(&config)
//!     .evaluator(setup.evaluator.as_ref())
//!     .journal(&mut journal)
//!     .run()?;
//! assert_eq!(again.tallies, result.tallies);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod builtin;
#[cfg(feature = "files")]
pub mod csv_out;
pub mod evaluator;
#[cfg(feature = "files")]
#[doc(hidden)]
pub mod fuzzing;
#[cfg(feature = "files")]
pub mod input;
#[cfg(feature = "files")]
pub mod plot;
pub mod provider;
pub mod run;
pub mod text;

pub use run::{RunError, RunResult, Sweeper, SweeperBuilder};
