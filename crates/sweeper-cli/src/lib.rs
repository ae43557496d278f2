//! `sweeper-cli`: the sweep engine as a library (SPEC 7), and the `sweeper` binary.
//!
//! Layer 4 of sweeper, on top of `sweeper-goal`, `sweeper-score` and `sweeper-sampler`.
//! The library is the engine: the run loop ([`run`]), its journal, the evaluators (external
//! commands and the built-in serving model) and the providers. With
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
//! ```no_run
//! use sweeper_cli::run::{FileJournal, Sweeper, evaluator_for};
//!
//! let config = sweeper_goal::from_path("examples/quickstart.yaml".as_ref())?;
//! let setup = evaluator_for(&config, "quickstart")?;
//! std::fs::create_dir_all("sweeper-out/quickstart")?;
//! let mut journal = FileJournal::create("sweeper-out/quickstart/journal.jsonl", &config)?;
//! let result = Sweeper::builder(&config)
//!     .evaluator(setup.evaluator.as_ref())
//!     .journal(&mut journal)
//!     .run()?;
//! println!("{} candidates on the front", result.candidates.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod builtin;
#[cfg(feature = "files")]
pub mod csv_out;
pub mod evaluator;
#[cfg(feature = "files")]
pub mod input;
#[cfg(feature = "files")]
pub mod plot;
pub mod provider;
pub mod run;
pub mod text;

pub use run::{RunError, RunResult, Sweeper, SweeperBuilder};
