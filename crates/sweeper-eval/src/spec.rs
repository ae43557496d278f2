//! The command protocol shared by every external evaluator (one-shot, persistent, Slurm):
//! how a program is run ([`CommandSpec`]), the exit codes it answers with, how its answer is
//! judged, and the reasons a run ends with.

use super::EvalOutcome;
use super::report::{Malformed, parse_answer};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The environment variable that marks every process of a sweep's evaluators (set by
/// [`crate::evaluator_in`] to [`run_mark`](crate::run_mark) of the sweep's output directory), so that
/// `sweeper run --resume` finds what a killed run left behind.
pub const RUN_MARK_VAR: &str = "SWEEPER_RUN";

/// The exit code by which a one-shot evaluator says "this configuration is not supported".
pub const EXIT_UNSUPPORTED: i32 = 3;

/// The exit code by which a one-shot evaluator says "this candidate is infeasible" (e.g. the
/// KV cache holds less than one request at the candidate's workload).
pub const EXIT_INFEASIBLE: i32 = 4;

/// How an external evaluator is run.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandSpec {
    /// The program and its arguments, never passed through a shell.
    pub argv: Vec<String>,
    /// One long-lived process per worker (JSON Lines), instead of one process per candidate.
    pub persistent: bool,
    /// Variables added to (or overriding) sweeper's environment.
    pub env: BTreeMap<String, String>,
    /// The working directory, or sweeper's own when `None`.
    pub cwd: Option<PathBuf>,
    /// The limit for one candidate (`max_eval_seconds`).
    pub timeout: Duration,
    /// How many persistent workers at most (the run's `parallel_evals`); unused one-shot.
    pub workers: usize,
}

impl CommandSpec {
    /// A one-shot spec for `argv`: sweeper's environment and directory, a 600 s limit, one
    /// worker.
    pub fn new(argv: Vec<String>) -> CommandSpec {
        CommandSpec {
            argv,
            persistent: false,
            env: BTreeMap::new(),
            cwd: None,
            timeout: Duration::from_mins(10),
            workers: 1,
        }
    }
}

/// A spec that cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EvaluatorError {
    /// `argv` is empty, or its program is the empty string.
    #[error("evaluator command is empty: give at least the program to run")]
    EmptyCommand,
    /// `workers` is 0 for a persistent evaluator.
    #[error("a persistent evaluator needs at least one worker")]
    NoWorkers,
    /// `timeout` is zero.
    #[error("evaluator timeout must be greater than zero")]
    ZeroTimeout,
    /// A Slurm evaluator that cannot submit jobs as configured.
    #[error("evaluator.slurm: {detail}")]
    Slurm {
        /// What is wrong and how to fix it.
        detail: String,
    },
    /// Evaluator processes that an earlier run of the sweep left behind still run after
    /// SIGKILL (in uninterruptible sleep, or traced).
    #[error(
        "evaluator processes left by an earlier run of this sweep still run after SIGKILL (pids {}): end them (they carry {var}={mark} in their environment), then resume again",
        pids.iter().map(i32::to_string).collect::<Vec<_>>().join(", "),
        var = RUN_MARK_VAR
    )]
    LeftBehind {
        /// The sweep's mark.
        mark: String,
        /// The processes still alive.
        pids: Vec<i32>,
    },
}

/// Judges an answer: the outcome, and whether the answer was malformed (not even an object).
pub(super) fn answer_outcome(bytes: &[u8], tail: Option<String>) -> (EvalOutcome, bool) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return (
            EvalOutcome::Failed("evaluator output is not UTF-8".to_owned()),
            true,
        );
    };
    match parse_answer(text) {
        Ok(outcome) => (outcome, false),
        // The stderr tail often says why the report is missing or broken.
        Err(Malformed(reason)) => (EvalOutcome::Failed(with_tail(reason, tail)), true),
    }
}

/// `reason`, followed by the stderr tail when there is one.
pub(super) fn with_tail(reason: String, tail: Option<String>) -> String {
    match tail {
        Some(tail) => format!("{reason}: {tail}"),
        None => reason,
    }
}

/// The instant `limit` from now; a limit too large to represent (`Duration::MAX`) is as
/// good as none.
pub(super) fn deadline_after(limit: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(limit)
        .or_else(|| now.checked_add(FOREVER))
        .unwrap_or(now)
}

/// A deadline that never comes in practice (about 30 years).
const FOREVER: Duration = Duration::from_secs(1 << 30);

pub(super) fn timeout_reason(limit: Duration) -> String {
    format!("evaluation ran over the {limit:?} limit (max_eval_seconds) and was killed")
}

pub(super) fn start_failure(spec: &CommandSpec, error: &std::io::Error) -> String {
    let program = spec.argv.first().map_or("", String::as_str);
    match &spec.cwd {
        Some(dir) => format!(
            "cannot start evaluator `{program}` in `{}`: {error}",
            dir.display()
        ),
        None => format!("cannot start evaluator `{program}`: {error}"),
    }
}
