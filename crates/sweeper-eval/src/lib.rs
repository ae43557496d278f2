//! `sweeper-eval`: the evaluators a sweep config names, and the setup that builds them.
//!
//! Layer 5 of sweeper, on `sweeper-engine` (whose [`Evaluator`] trait every evaluator here
//! implements) and `sweeper-model` (the built-in serving model). It holds:
//!
//! - [`CommandEvaluator`]: an external program per candidate (one-shot: the candidate on
//!   stdin, the report on stdout, exit codes 3 and 4 for unsupported and infeasible) or a
//!   persistent worker answering one JSON line per candidate; every process in its own
//!   process group, its output drained and bounded, killed whole on a timeout;
//! - [`SlurmEvaluator`]: one `sbatch` job per candidate, watched with one `squeue` call per
//!   poll for all of a sweep's jobs, its job id handed to the engine for the journal so that
//!   a resume re-attaches instead of submitting again;
//! - [`evaluator_for`] / [`evaluator_in`]: the evaluator a validated config declares, and
//!   [`check_runnable`], every check a run makes before its first trial.
//!
//! Invariant: an evaluation never panics and never hangs the sweep: whatever a program
//! does (a crash, a hang, a flood of output, a detached child), the engine gets one
//! [`EvalOutcome`] with a reason within `max_eval_seconds`, and no process it started
//! outlives the evaluation.
//!
//! ```
//! use sweeper_eval::evaluator_for;
//!
//! let config = sweeper_goal::parse(
//!     "goal: {target: pareto}
//! workload: {isl: 4000, osl: 500, num_request_ratio: 10, concurrency: 64}
//! search_space:
//!   gpu_budget: 8
//!   used_gpus: [tp]
//!   parameters: {tp: {values: [1, 2, 4]}}
//! evaluator: {builtin: {model: qwen3-32b-fp8, gpu: h200}}",
//! )?;
//! sweeper_eval::check_runnable(&config)?;
//! let setup = evaluator_for(&config, "doc")?;
//! assert!(setup.describe.contains("built-in"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(unix)]
mod command;
#[cfg(unix)]
mod persistent;
#[cfg(unix)]
mod process;
mod setup;
#[cfg(unix)]
mod slurm;
#[cfg(unix)]
mod spec;

// The engine's side of an evaluation, and its one escaper, under the names the modules here
// use for them.
#[cfg(unix)]
use sweeper_engine::evaluator::{EvalContext, EvalOutcome, EvalRequest, Evaluator};
#[cfg(not(unix))]
use sweeper_engine::evaluator::{EvalOutcome, Evaluator};
use sweeper_engine::{report, text};

#[cfg(unix)]
pub use command::CommandEvaluator;
#[cfg(unix)]
pub use process::{end_leftover_evaluators, kill_running_evaluators, run_mark};
pub use setup::{
    Setup, check_runnable, check_runnable_partial, evaluator_for, evaluator_in, program_path,
};
#[cfg(unix)]
pub use slurm::{
    SlurmEvaluator, SlurmSpec, SlurmStats, cancel_slurm_jobs, resume_slurm_submissions,
};
#[cfg(unix)]
pub use spec::{CommandSpec, EXIT_INFEASIBLE, EXIT_UNSUPPORTED, EvaluatorError, RUN_MARK_VAR};
