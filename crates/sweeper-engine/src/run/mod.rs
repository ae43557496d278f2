//! The sweep engine (SPEC 7): rounds of suggest → build each candidate → evaluate → score →
//! feasibility → `observe` / `observe_infeasible`.
//!
//! [`Sweeper::builder`] takes the pieces — an [`Evaluator`], optionally a [`Proposer`] (the
//! config's study by default), a [`FileJournal`], a [`Provider`] and a [`RunObserver`] —
//! and [`SweeperBuilder::run`] returns the [`RunResult`]. The engine touches no file except
//! the journal it was given; writing `result.json`, the CSVs and the plot is
//! `sweeper_tables::write_outputs`, which the `sweeper` binary calls.
//!
//! ```no_run
//! use sweeper_engine::Sweeper;
//! # use sweeper_engine::{EvalOutcome, EvalRequest, Evaluator};
//! # struct MyBenchmark;
//! # impl Evaluator for MyBenchmark {
//! #     fn evaluate(&self, _: usize, _: &EvalRequest) -> EvalOutcome { unimplemented!() }
//! # }
//!
//! let config = sweeper_goal::from_path("examples/quickstart.yaml".as_ref())?;
//! // any `Evaluator`: yours, or one of `sweeper-eval` / `sweeper-model`
//! let result = Sweeper::builder(&config).evaluator(&MyBenchmark).run()?;
//! println!("{} candidates on the front", result.candidates.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `sweep.schedule` picks the loop: `rounds` (the default) is SPEC 7, with the decisions
//! below; `async` keeps every slot busy, with the decisions after them. Both feed the same
//! [`Ledger`] and journal.
//!
//! Decisions where the SPEC is silent:
//! - A round asks the proposer for as many trials as it still needs (at most the attempts
//!   and the `max_trials` left), evaluates them with up to `parallel_evals` at once, and then
//!   observes them **in trial order**, so that a run's result does not depend on which
//!   evaluation finished first: the same seed and evaluator give the same result, and a
//!   resumed run ends exactly where an uninterrupted one does.
//! - Resume replays the journal's calls of the proposer with the counts they asked for, so
//!   the study reaches the same state even when the budget keys changed (a longer
//!   `max_rounds`, another `candidates_per_round`): that is how a finished sweep is extended.
//! - "New successful evaluations" are feasible evaluations of configurations not seen
//!   before; cache hits, infeasible, failed and unsupported ones are attempts only.
//! - A failed or unsupported evaluation is closed with `observe_infeasible` (so the study
//!   moves on and is never steered towards it), and tallied under its own name.
//! - An evaluation that runs over `max_eval_seconds` is tallied infeasible (SPEC 6).
//! - `max_consecutive_failures` evaluations of this process failing in a row (in the order
//!   they finish) stop the sweep with [`RunError::TooManyFailures`]; evaluations already
//!   running finish and are journaled, no new one starts. Failures replayed from a journal
//!   do not count, so `--resume` after a fix goes on.
//! - With [`SweeperBuilder::retry_failed`] the trials whose last outcome is a failure are
//!   evaluated again once every recorded call of the proposer is replayed (under rounds,
//!   before the next call; under async, after the trials left running), outside the
//!   rounds' counts and the async budget; a `retry` journal line marks the place, where a
//!   resume replays it.
//! - A report holding NaN is a failed evaluation: NaN never reaches the journal.
//! - A sweep given a stop flag ([`SweeperBuilder::cancel`], set by a Ctrl-C handler, say)
//!   starts nothing new once it is set, lets the running evaluations finish and journals
//!   them, but for failures (perhaps the interrupt's doing: resume runs those again), and
//!   returns [`RunError::Interrupted`]; under both schedules.
//! - When the proposer cannot propose anything new (a finite space fully explored), the
//!   search ends after that batch.
//!
//! Under `sweep.schedule: async` (an extension beyond the SPEC):
//! - Whenever slots are free (and nothing is waiting for one), the proposer is asked once
//!   for as many trials as there are free slots, with every running trial still pending in
//!   it: at the start that is one batch of `parallel_evals`, then mostly `suggest(1)`.
//!   Outcomes that arrive together are each observed before the next call.
//! - Each outcome is journaled and observed the moment it arrives, in arrival order; the
//!   ledger records trials in that order too (so `RunResult::trials` is in outcome order).
//! - The budget is [`SweepSettings::trial_budget`](sweeper_goal::SweepSettings::trial_budget)
//!   trials, counted as the proposer returns them: cache hits and trials over the GPU
//!   budget count, so a sweep that ends normally has exactly that many trials.
//! - A duplicate of a configuration that is being evaluated waits for it and is answered
//!   from the cache when its outcome arrives (it takes no slot); a duplicate of one already
//!   evaluated is answered at once.
//! - `max_consecutive_failures` failed evaluations in a row (in arrival order) stop the
//!   sweep: nothing new starts, the running evaluations finish and are journaled.
//! - Resume replays the journal's lines in file order (each suggestion call with the count
//!   it asked for, each outcome where it was recorded), so the proposer reaches the state
//!   of the run that wrote them. Trials that were suggested but had not finished when that
//!   run died stay pending in the proposer, exactly as they were, and are **evaluated again
//!   first** (in trial id order), before anything new is suggested: they are part of the
//!   budget already, and re-suggesting them would change what the study has seen.
//! - The study knows every running trial as pending: it never proposes one again, and the
//!   default algorithm conditions its variance on them and, with several metrics, believes
//!   their posterior means into the front (see `sweeper-sampler`).
//! - Unlike rounds, the result depends on the order outcomes arrive in (the same seed gives
//!   the same first batch, not the same sweep); the journal records that order, so a
//!   resumed sweep, a resume of a finished one and [`result_from_journal`] reproduce it. A
//!   journal resumes only under the schedule that wrote it (`sweep.schedule` is not a
//!   budget key).

mod asynchronous;
mod journal;
mod ledger;
mod single;
mod space;

pub use journal::{BUDGET_KEYS, FileJournal};
pub use ledger::{Entry, Ledger, Source, Verdict};
pub use single::{SingleEvaluation, evaluate_candidate};
pub use space::{fill_used_gpus, search_space};

use crate::evaluator::{EvalContext, EvalOutcome, EvalRequest, Evaluator};
use crate::provider::{Provider, SweepContext};
use ledger::{classify, replayed_source};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use sweeper_goal::{Objective, Schedule, SweepConfig};
use sweeper_sampler::{Algorithm, ParamValue, Study, Trial};
use sweeper_score::Candidate;

/// How a trial ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// Suggested, not finished (only seen in a journal of a killed run).
    Pending,
    /// Evaluated, within the GPU budget: scored and observed.
    Feasible,
    /// Over the GPU budget, over `max_eval_seconds`, or declared infeasible by the evaluator.
    Infeasible,
    /// The evaluation failed (crash, non-zero exit, malformed report).
    Failed,
    /// The evaluator does not support this configuration.
    Unsupported,
    /// An exact duplicate of an evaluated candidate: its result was reused.
    CacheHit,
}

impl Status {
    /// The name used in the journal and result files (`feasible`, `cache_hit`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Feasible => "feasible",
            Status::Infeasible => "infeasible",
            Status::Failed => "failed",
            Status::Unsupported => "unsupported",
            Status::CacheHit => "cache_hit",
        }
    }
}

/// Every outcome of a run, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Tallies {
    /// Feasible evaluations.
    pub feasible: u64,
    /// Infeasible trials (budget, timeout, evaluator's verdict).
    pub infeasible: u64,
    /// Failed evaluations.
    pub failed: u64,
    /// Unsupported configurations.
    pub unsupported: u64,
    /// Duplicates answered from the cache.
    pub cache_hits: u64,
}

impl Tallies {
    /// Trials accounted for.
    pub fn total(&self) -> u64 {
        self.feasible + self.infeasible + self.failed + self.unsupported + self.cache_hits
    }

    fn count(&mut self, status: Status) {
        match status {
            Status::Feasible => self.feasible += 1,
            Status::Infeasible => self.infeasible += 1,
            Status::Failed => self.failed += 1,
            Status::Unsupported => self.unsupported += 1,
            Status::CacheHit => self.cache_hits += 1,
            Status::Pending => {}
        }
    }
}

/// What went wrong with a run as a whole (a single evaluation never aborts a sweep).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The config's search space cannot be turned into a study.
    #[error("search space: {key}: {detail}")]
    Space {
        /// The key path of the parameter at fault.
        key: String,
        /// What is wrong.
        detail: String,
        /// The sampler's refusal, when it was one.
        #[source]
        source: Option<sweeper_sampler::SamplerError>,
    },
    /// The config cannot be run as it is (no evaluator, an evaluator block that is wrong).
    #[error("{0}")]
    Setup(String),
    /// The study refused a call.
    #[error("sampler: {0}")]
    Sampler(#[from] sweeper_sampler::SamplerError),
    /// A proposer other than the study failed.
    #[error("proposer: {0}")]
    Proposer(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Scoring failed (a NaN that got through, a shape error).
    #[error("scoring: {0}")]
    Score(#[from] sweeper_score::ScoreError),
    /// Reading or writing a file failed (a full disk, a missing directory, permissions).
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A new sweep was asked to start where a journal already is.
    #[error(
        "{} already holds the journal of a sweep; continue it with `sweeper run --resume {}` or start a new sweep with another --out directory",
        path.display(),
        path.parent().map_or_else(|| ".".into(), |p| p.display().to_string())
    )]
    JournalExists {
        /// The journal file.
        path: PathBuf,
    },
    /// Another sweep holds the journal's lock.
    #[error(
        "{} is in use by another sweep that is still running; wait for it to end, or use another --out directory",
        path.display()
    )]
    Locked {
        /// The journal file.
        path: PathBuf,
    },
    /// The journal is unreadable.
    #[error("journal {}{}: {detail}", path.display(), line.map(|l| format!(" line {l}")).unwrap_or_default())]
    Journal {
        /// The journal file.
        path: PathBuf,
        /// The 1-based line, when one line is at fault.
        line: Option<usize>,
        /// What is wrong.
        detail: String,
    },
    /// The journal was written by a sweep whose trials mean something else.
    #[error(
        "journal {} was written by a sweep of another config{}; resume with the config that started it, or start afresh with another --out directory",
        path.display(),
        if keys.is_empty() { String::new() } else { format!(" (these keys differ: {})", keys.join(", ")) }
    )]
    JournalMismatch {
        /// The journal file.
        path: PathBuf,
        /// The key paths that differ (empty for a journal of an older format).
        keys: Vec<String>,
    },
    /// Replaying the journal proposed other trials than it records.
    #[error(
        "journal {}: trial {trial} was {recorded} in the journal but the study now proposes {now}; the journal does not belong to this sweeper version or config",
        path.display()
    )]
    JournalDiverged {
        /// The journal file.
        path: PathBuf,
        /// The trial id.
        trial: u64,
        /// The recorded parameters.
        recorded: String,
        /// The parameters proposed now.
        now: String,
    },
    /// The evaluator failed `count` evaluations in a row (`max_consecutive_failures`).
    #[error(
        "stopped: the evaluator failed {count} evaluations in a row (sweep.max_consecutive_failures); reasons: {}",
        reasons.iter().map(|(r, n)| format!("{r} ({n})")).collect::<Vec<_>>().join("; ")
    )]
    TooManyFailures {
        /// Failures in a row.
        count: u32,
        /// Their reasons, most frequent first.
        reasons: Vec<(String, u64)>,
    },
    /// The sweep was asked to stop ([`SweeperBuilder::cancel`]) before its end.
    #[error(
        "interrupted: no evaluation was started after the stop; the finished ones are in the journal, if the sweep has one, and a resume continues from there"
    )]
    Interrupted,
}

impl RunError {
    pub(crate) fn space(key: String, source: sweeper_sampler::SamplerError) -> RunError {
        RunError::Space {
            key,
            detail: source.to_string(),
            source: Some(source),
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> RunError {
        RunError::Io {
            path: path.to_owned(),
            source,
        }
    }

    /// Whether the error is the environment's (a file, a lock, a full disk) rather than the
    /// input's: the command line exits 2 for these, 1 for the others. A journal whose
    /// content is at fault (not UTF-8, a line that does not parse or contradicts another) is
    /// bad data, exit 1, as a bad row of a reports file is; the journal could be read.
    pub fn is_io(&self) -> bool {
        matches!(
            self,
            RunError::Io { .. } | RunError::JournalExists { .. } | RunError::Locked { .. }
        )
    }
}

/// Progress of a run, given to a [`RunObserver`] after every outcome.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Progress {
    /// Trials accounted for so far.
    pub done: u64,
    /// The budget of trials (`max_trials`, else `max_rounds * candidates_per_round`).
    pub budget: u64,
    /// The tallies so far.
    pub tallies: Tallies,
    /// The best score so far (scalar goals).
    pub best_score: Option<f64>,
    /// The size of the current front (pareto goals).
    pub front_size: Option<usize>,
    /// Whether this outcome was replayed from the journal rather than evaluated now.
    pub replayed: bool,
}

/// Receives progress; the command line draws a progress bar with it.
pub trait RunObserver {
    /// After every outcome (evaluated, cached, replayed or rejected before evaluation).
    fn progress(&mut self, progress: &Progress);
}

/// An observer that ignores everything.
#[derive(Debug, Default)]
pub struct Quiet;

impl RunObserver for Quiet {
    fn progress(&mut self, _progress: &Progress) {}
}

/// One trial as the run saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TrialResult {
    /// Trial id.
    pub trial: u64,
    /// The candidate's configuration (parameters, `used_gpus`, load).
    pub config: Map<String, Value>,
    /// How it ended.
    pub status: Status,
    /// Why, for everything but feasible.
    pub reason: Option<String>,
    /// The score, when feasible (`±inf` written as `"inf"` / `"-inf"`).
    #[serde(default, with = "sweeper_score::json_f64::option")]
    pub score: Option<f64>,
    /// Every number the evaluator reported, extras included.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        with = "sweeper_score::json_f64::map"
    )]
    pub metrics: BTreeMap<String, f64>,
    /// Every string the evaluator reported.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

/// What a run returns.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunResult {
    /// The front (pareto goal) or the ranking (scalar goal).
    pub candidates: Vec<Candidate>,
    /// Every feasible candidate, once per distinct configuration, in trial order.
    pub evaluated: Vec<Candidate>,
    /// Every trial in order.
    pub trials: Vec<TrialResult>,
    /// Counts of every outcome.
    pub tallies: Tallies,
    /// Failure reasons, most frequent first.
    pub reasons: Vec<(String, u64)>,
    /// Whether `candidates` is a front.
    pub pareto: bool,
    /// The effective objectives of the goal.
    pub objectives: Vec<Objective>,
}

/// A source of trials: the config's [`Study`] by default; a grid, a replayed list
/// ([`ListProposer`]) or a user's own sampler are others.
///
/// Under `schedule: rounds` the engine calls `suggest` for a batch, then `observe` or
/// `observe_infeasible` once per trial of the batch, in trial order, before the next
/// `suggest`. Under `schedule: async` it calls `suggest` whenever evaluation slots are free,
/// with the trials still running pending (never observed yet), and observes each trial when
/// its outcome arrives. A proposer that is deterministic in its call sequence makes sweeps
/// reproducible and resumable: resume repeats the recorded sequence.
pub trait Proposer {
    /// Up to `count` new trials; fewer (or none) when nothing new is left. Trial ids must be
    /// unique within a sweep.
    fn suggest(&mut self, count: usize) -> Result<Vec<Trial>, RunError>;
    /// A trial was evaluated: its measurement (one value per metric of the goal).
    fn observe(&mut self, trial: u64, measurement: &BTreeMap<String, f64>) -> Result<(), RunError>;
    /// A trial could not be evaluated, was over budget, or failed.
    fn observe_infeasible(&mut self, trial: u64, reason: &str) -> Result<(), RunError>;
    /// A trial closed with [`observe_infeasible`](Self::observe_infeasible) because its
    /// evaluation failed is evaluated again (`--retry-failed`): it is pending once more and
    /// will be observed anew. By default a proposer cannot do that.
    fn reopen(&mut self, trial: u64) -> Result<(), RunError> {
        Err(RunError::Setup(format!(
            "this proposer cannot evaluate trial {trial} again: --retry-failed needs a proposer that implements `reopen` (the built-in study does)"
        )))
    }
}

/// A proposer lent to a sweep: the caller keeps it (a study to save, to inspect or to run
/// on with) once the sweep ends.
impl<P: Proposer + ?Sized> Proposer for &mut P {
    fn suggest(&mut self, count: usize) -> Result<Vec<Trial>, RunError> {
        (**self).suggest(count)
    }
    fn observe(&mut self, trial: u64, measurement: &BTreeMap<String, f64>) -> Result<(), RunError> {
        (**self).observe(trial, measurement)
    }
    fn observe_infeasible(&mut self, trial: u64, reason: &str) -> Result<(), RunError> {
        (**self).observe_infeasible(trial, reason)
    }
    fn reopen(&mut self, trial: u64) -> Result<(), RunError> {
        (**self).reopen(trial)
    }
}

impl Proposer for Study {
    /// The study's suggestions, asked for in calls of at most [`Study::max_suggest`] each (a
    /// round of 2,000 candidates, or 2,000 free slots, is two calls); the same count gives
    /// the same calls, so a journal's replay reaches the same state.
    fn suggest(&mut self, count: usize) -> Result<Vec<Trial>, RunError> {
        let cap = self.max_suggest();
        if count <= cap {
            return Ok(Study::suggest(self, count)?);
        }
        let mut out = Vec::new();
        while out.len() < count {
            let ask = (count - out.len()).min(cap);
            let got = Study::suggest(self, ask)?;
            let short = got.len() < ask;
            out.extend(got);
            if short {
                break;
            }
        }
        Ok(out)
    }
    fn observe(&mut self, trial: u64, measurement: &BTreeMap<String, f64>) -> Result<(), RunError> {
        Ok(Study::observe(self, trial, measurement)?)
    }
    fn observe_infeasible(&mut self, trial: u64, reason: &str) -> Result<(), RunError> {
        Ok(Study::observe_infeasible(self, trial, reason)?)
    }
    fn reopen(&mut self, trial: u64) -> Result<(), RunError> {
        Ok(Study::reopen(self, trial)?)
    }
}

/// A proposer that hands out a fixed list of configurations in order (ids `0, 1, 2, ...`)
/// and ignores what it is told: a replayed sweep, an exhaustive grid written by hand.
///
/// ```
/// use sweeper_engine::{ListProposer, Proposer};
/// use sweeper_sampler::ParamValue;
///
/// let mut list = ListProposer::new(vec![
///     vec![("tp".to_owned(), ParamValue::Int(1))],
///     vec![("tp".to_owned(), ParamValue::Int(2))],
/// ]);
/// let batch = list.suggest(8)?;
/// assert_eq!(batch.len(), 2);
/// assert!(list.suggest(1)?.is_empty());
/// # Ok::<(), sweeper_engine::RunError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct ListProposer {
    queue: VecDeque<Vec<(String, ParamValue)>>,
    next_id: u64,
}

impl ListProposer {
    /// A proposer of these configurations, in this order.
    pub fn new(configurations: Vec<Vec<(String, ParamValue)>>) -> ListProposer {
        ListProposer {
            queue: configurations.into(),
            next_id: 0,
        }
    }
}

impl Proposer for ListProposer {
    fn suggest(&mut self, count: usize) -> Result<Vec<Trial>, RunError> {
        let mut out = Vec::new();
        while out.len() < count {
            let Some(params) = self.queue.pop_front() else {
                break;
            };
            out.push(Trial::new(self.next_id, params));
            self.next_id += 1;
        }
        Ok(out)
    }
    fn observe(&mut self, _trial: u64, _m: &BTreeMap<String, f64>) -> Result<(), RunError> {
        Ok(())
    }
    fn observe_infeasible(&mut self, _trial: u64, _reason: &str) -> Result<(), RunError> {
        Ok(())
    }
}

/// The config's own study: its search space, the goal's metrics, its algorithm and seed.
pub fn default_study(config: &SweepConfig) -> Result<Study, RunError> {
    let algorithm = match config.sweep.algorithm {
        sweeper_goal::AlgorithmName::Default => Algorithm::Default,
        sweeper_goal::AlgorithmName::Random => Algorithm::Random,
        sweeper_goal::AlgorithmName::QuasiRandom => Algorithm::QuasiRandom,
        sweeper_goal::AlgorithmName::Grid => Algorithm::Grid,
    };
    Ok(Study::new(
        search_space(config)?,
        config.goal.sampler_metrics(),
        algorithm,
        config.sweep.seed,
    )?)
}

/// The entry point of the engine: `Sweeper::builder(&config)`.
#[derive(Debug, Clone, Copy)]
pub struct Sweeper;

impl Sweeper {
    /// A builder of a sweep of `config`. Give it at least an evaluator.
    pub fn builder(config: &SweepConfig) -> SweeperBuilder<'_> {
        SweeperBuilder {
            config,
            evaluator: None,
            proposer: None,
            journal: None,
            provider: None,
            observer: None,
            cancel: None,
            retry_failed: false,
        }
    }
}

/// The pieces of a sweep; [`run`](Self::run) runs it to its end.
pub struct SweeperBuilder<'a> {
    config: &'a SweepConfig,
    evaluator: Option<&'a dyn Evaluator>,
    proposer: Option<Box<dyn Proposer + 'a>>,
    journal: Option<&'a mut FileJournal>,
    provider: Option<&'a mut dyn Provider>,
    observer: Option<&'a mut dyn RunObserver>,
    cancel: Option<&'a AtomicBool>,
    retry_failed: bool,
}

impl<'a> SweeperBuilder<'a> {
    /// What evaluates candidates (required).
    #[must_use]
    pub fn evaluator(mut self, evaluator: &'a dyn Evaluator) -> Self {
        self.evaluator = Some(evaluator);
        self
    }

    /// The source of trials [default: the config's study, [`default_study`]].
    #[must_use]
    pub fn proposer(mut self, proposer: impl Proposer + 'a) -> Self {
        self.proposer = Some(Box::new(proposer));
        self
    }

    /// Journal every suggestion and outcome to this file; when it was reopened with
    /// [`FileJournal::open`], what it records is replayed instead of evaluated again.
    #[must_use]
    pub fn journal(mut self, journal: &'a mut FileJournal) -> Self {
        self.journal = Some(journal);
        self
    }

    /// A provider, which sees the sweep context before the run and decorates every
    /// candidate.
    #[must_use]
    pub fn provider(mut self, provider: &'a mut dyn Provider) -> Self {
        self.provider = Some(provider);
        self
    }

    /// Receives progress after every outcome.
    #[must_use]
    pub fn observer(mut self, observer: &'a mut dyn RunObserver) -> Self {
        self.observer = Some(observer);
        self
    }

    /// A flag that stops the sweep when another thread (or a signal handler) sets it: no
    /// evaluation starts and no suggestion is asked for after it is seen; the evaluations
    /// running go on to their end, and what they return is journaled, but for a failure,
    /// which the same interrupt may have caused (a killed evaluator process): its trial
    /// stays unfinished in the journal, so a resume evaluates it again. [`run`](Self::run)
    /// then returns [`RunError::Interrupted`]; with a journal, reopening it with
    /// [`FileJournal::open`] continues the sweep where it stopped.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    /// use sweeper_engine::{EvalOutcome, EvalRequest, Evaluator};
    /// use sweeper_engine::{FileJournal, RawReport, RunError, Sweeper};
    ///
    /// /// A toy benchmark: throughput grows with tensor parallelism.
    /// struct Toy;
    /// impl Evaluator for Toy {
    ///     fn evaluate(&self, _worker: usize, request: &EvalRequest) -> EvalOutcome {
    ///         let tp = request.parameters["tp"].as_f64().unwrap_or(1.0);
    ///         let mut report = RawReport::new();
    ///         report.insert("output_throughput_tok_s".into(), 900.0 * tp.sqrt());
    ///         report.insert("mean_itl_ms".into(), 40.0 / tp);
    ///         report.insert("gpu_hours".into(), tp / 60.0);
    ///         report.insert("duration_ms".into(), 60_000.0);
    ///         EvalOutcome::Report(report)
    ///     }
    /// }
    ///
    /// /// Another evaluator, but the sweep is asked to stop during the third evaluation.
    /// struct StopsAtThird<'a> {
    ///     inner: &'a dyn Evaluator,
    ///     stop: &'a AtomicBool,
    ///     calls: AtomicUsize,
    /// }
    /// impl Evaluator for StopsAtThird<'_> {
    ///     fn evaluate(&self, worker: usize, request: &EvalRequest) -> EvalOutcome {
    ///         if self.calls.fetch_add(1, Ordering::SeqCst) == 2 {
    ///             self.stop.store(true, Ordering::SeqCst);
    ///         }
    ///         self.inner.evaluate(worker, request)
    ///     }
    /// }
    ///
    /// let config = sweeper_goal::parse(
    ///     "goal: {target: pareto}
    /// workload: {isl: 4000, osl: 500, num_request_ratio: 10, kv_load_ratio: [0.05, 1.0]}
    /// search_space:
    ///   gpu_budget: 8
    ///   used_gpus: [tp, replicas]
    ///   parameters: {tp: {values: [1, 2, 4]}, replicas: {int: [1, 4]}}
    /// sweep: {max_rounds: 3, candidates_per_round: 4, parallel_evals: 1, seed: 7}",
    /// )?;
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("journal.jsonl");
    ///
    /// let stop = AtomicBool::new(false);
    /// let stopping = StopsAtThird { inner: &Toy, stop: &stop, calls: AtomicUsize::new(0) };
    /// let mut journal = FileJournal::create(&path, &config)?;
    /// let outcome = Sweeper::builder(&config)
    ///     .evaluator(&stopping)
    ///     .journal(&mut journal)
    ///     .cancel(&stop)
    ///     .run();
    /// assert!(matches!(outcome, Err(RunError::Interrupted)));
    /// assert_eq!(stopping.calls.into_inner(), 3, "nothing started after the stop");
    /// drop(journal);
    ///
    /// // the three evaluations are in the journal; a resume goes on from there
    /// let mut journal = FileJournal::open(&path, &config)?;
    /// assert!(journal.finished_trials() >= 3);
    /// let result = Sweeper::builder(&config)
    ///     .evaluator(&Toy)
    ///     .journal(&mut journal)
    ///     .run()?;
    /// assert!(!result.candidates.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn cancel(mut self, flag: &'a AtomicBool) -> Self {
        self.cancel = Some(flag);
        self
    }

    /// Evaluates again, once every call the journal recorded is replayed, each trial whose
    /// last outcome is a failure (`sweeper run --resume DIR --retry-failed`, after the
    /// evaluator was fixed): a `retry` line in the journal names them, the proposer
    /// reopens them ([`Proposer::reopen`]) and observes their new outcomes, which replace
    /// the failures in the result. A later resume replays the retry where its line is.
    #[must_use]
    pub fn retry_failed(mut self, retry: bool) -> Self {
        self.retry_failed = retry;
        self
    }

    /// Runs the sweep to its end and returns its result. Writes nothing but the journal.
    pub fn run(self) -> Result<RunResult, RunError> {
        let SweeperBuilder {
            config,
            evaluator,
            proposer,
            journal,
            mut provider,
            observer,
            cancel,
            retry_failed,
        } = self;
        let evaluator = evaluator.ok_or_else(|| {
            RunError::Setup(
                "no evaluator: give one with Sweeper::builder(&config).evaluator(&evaluator)"
                    .into(),
            )
        })?;
        if let Some(p) = provider.as_deref_mut() {
            p.prepare(&SweepContext { config });
        }
        let mut proposer: Box<dyn Proposer + 'a> = match proposer {
            Some(p) => p,
            None => Box::new(default_study(config)?),
        };
        let replay = journal
            .as_deref()
            .map(|j| j.replay().clone())
            .unwrap_or_default();
        let mut quiet = Quiet;
        let mut engine = Engine {
            config,
            evaluator,
            provider: provider.as_deref(),
            journal,
            replay: &replay,
            ledger: Ledger::new(config),
            observer: observer.unwrap_or(&mut quiet),
            failures_in_row: Vec::new(),
            cancel,
            retry_failed,
            next_retry: 0,
            attempts: HashMap::new(),
            failed: BTreeMap::new(),
        };
        match config.sweep.schedule {
            Schedule::Rounds => engine.rounds(proposer.as_mut())?,
            Schedule::Async => engine.asynchronous(proposer.as_mut())?,
        }
        engine.ledger.into_result()
    }
}

/// The state of a running sweep.
struct Engine<'a, 'o> {
    config: &'a SweepConfig,
    evaluator: &'a dyn Evaluator,
    provider: Option<&'a dyn Provider>,
    journal: Option<&'a mut FileJournal>,
    replay: &'a journal::Replay,
    ledger: Ledger,
    observer: &'o mut dyn RunObserver,
    /// Reasons of the evaluations of this process that failed in a row, latest last.
    failures_in_row: Vec<String>,
    /// Set when the sweep is to stop ([`SweeperBuilder::cancel`]).
    cancel: Option<&'a AtomicBool>,
    /// `--retry-failed` is still to be done ([`SweeperBuilder::retry_failed`]).
    retry_failed: bool,
    /// The journal's next retry line to replay (an index of `replay.retries`).
    next_retry: usize,
    /// Per trial, the retries of it so far.
    attempts: HashMap<u64, usize>,
    /// The trials whose last outcome is a failure, prepared as they were: what a retry
    /// evaluates again.
    failed: BTreeMap<u64, Prepared>,
}

/// A trial of the current batch, prepared for evaluation.
#[derive(Clone)]
struct Prepared {
    trial: u64,
    parameters: Map<String, Value>,
    /// The cache key of `parameters`.
    key: String,
    declared_gpus: Option<u64>,
    request: Option<EvalRequest>,
    early: Option<(Status, String)>,
}

impl Engine<'_, '_> {
    /// Whether the sweep was asked to stop.
    fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::SeqCst))
    }

    fn log(&mut self, line: &journal::Line) -> Result<(), RunError> {
        match self.journal.as_deref_mut() {
            Some(j) => j.append(line),
            None => Ok(()),
        }
    }

    fn recorded(&self, trial: u64) -> Option<&journal::Recorded> {
        self.replay.trials.get(&trial)
    }

    /// [`journal::check_call`] of the `call`-th call of the proposer, which gave `batch`.
    fn check_call(&self, call: usize, batch: &[Trial]) -> Result<(), RunError> {
        let Some(journal) = self.journal.as_deref() else {
            return Ok(());
        };
        let ids: Vec<u64> = batch.iter().map(|t| t.id).collect();
        journal::check_call(journal.path(), self.replay, call, &ids)
    }

    /// What the journal recorded for the trial's current evaluation (its first, or the
    /// one after its latest retry).
    fn replayed_outcome(&self, trial: u64) -> Option<&journal::Recorded> {
        self.replay
            .attempt(trial, self.attempts.get(&trial).copied().unwrap_or(0))
    }

    /// Keeps a trial whose outcome is a failure for a retry; forgets one that has another.
    fn note_outcome(&mut self, status: Status, p: Prepared) {
        if status == Status::Failed {
            self.failed.insert(p.trial, p);
        } else {
            self.failed.remove(&p.trial);
        }
    }

    /// The retries due before call `batch_no` of the proposer: the next retry line of the
    /// journal if it was written there, else (once every recorded call and retry is
    /// replayed) the one `--retry-failed` asks for, journaled now. Each trial comes back
    /// reopened in the proposer, its failure taken back from the ledger.
    fn retry_due(
        &mut self,
        proposer: &mut dyn Proposer,
        batch_no: usize,
    ) -> Result<Option<Vec<Prepared>>, RunError> {
        let trials = match self.replay.retries.get(self.next_retry) {
            Some(retry) if retry.after_batches == batch_no => {
                self.next_retry += 1;
                retry.trials.clone()
            }
            None if self.retry_failed && batch_no >= self.replay.batches.len() => {
                self.retry_failed = false;
                let trials: Vec<u64> = self.failed.keys().copied().collect();
                if trials.is_empty() {
                    return Ok(None);
                }
                self.log(&journal::Line::Retry {
                    trials: trials.clone(),
                })?;
                trials
            }
            // a journaled retry due later, or none asked for
            _ => return Ok(None),
        };
        let mut prepared = Vec::with_capacity(trials.len());
        for trial in trials {
            prepared.push(self.reopen(proposer, trial)?);
        }
        Ok(Some(prepared))
    }

    /// Makes a failed trial pending again: out of the ledger, reopened in the proposer.
    fn reopen(&mut self, proposer: &mut dyn Proposer, trial: u64) -> Result<Prepared, RunError> {
        let p = self
            .failed
            .remove(&trial)
            .ok_or_else(|| RunError::Journal {
                path: self
                    .journal
                    .as_deref()
                    .map(|j| j.path().to_owned())
                    .unwrap_or_default(),
                line: None,
                detail: format!("a retry of trial {trial}, which has no failed outcome to retry"),
            })?;
        self.ledger.forget_failed(trial, &p.key);
        proposer.reopen(trial)?;
        *self.attempts.entry(trial).or_insert(0) += 1;
        Ok(p)
    }

    /// Runs the retries due before call `batch_no` (rounds): each retried trial is
    /// evaluated again (or its new outcome replayed), recorded and observed in trial
    /// order, outside the rounds' counts.
    fn retry_rounds(
        &mut self,
        proposer: &mut dyn Proposer,
        batch_no: usize,
        threads: usize,
    ) -> Result<(), RunError> {
        while let Some(prepared) = self.retry_due(proposer, batch_no)? {
            let mut outcomes: HashMap<usize, Source> = HashMap::new();
            let mut to_run: Vec<(usize, EvalRequest)> = Vec::new();
            for (i, p) in prepared.iter().enumerate() {
                if let Some(req) = &p.request {
                    match self.replayed_outcome(p.trial).and_then(replayed_source) {
                        Some(source) => {
                            outcomes.insert(i, source);
                        }
                        None => to_run.push((i, req.clone())),
                    }
                }
            }
            let stopped = self.evaluate(&prepared, &to_run, threads, &mut outcomes)?;
            if self.cancelled() {
                return Err(RunError::Interrupted);
            }
            if stopped {
                return Err(self.too_many_failures());
            }
            for (i, p) in prepared.into_iter().enumerate() {
                let replayed = self
                    .replayed_outcome(p.trial)
                    .is_some_and(|r| r.status != Status::Pending);
                let source = match (&p.early, outcomes.remove(&i)) {
                    (Some((status, reason)), _) => Source::Early(*status, reason.clone()),
                    (None, Some(source)) => source,
                    (None, None) => Source::Early(
                        Status::Failed,
                        "internal: a retried trial without an outcome".into(),
                    ),
                };
                let kept = p.clone();
                let verdict = self.ledger.record(Entry::new(
                    p.trial,
                    p.parameters,
                    p.declared_gpus,
                    source,
                ))?;
                if p.request.is_none() && !replayed {
                    self.log(&journal::Line::Outcome {
                        trial: p.trial,
                        status: verdict.status,
                        reason: verdict.reason.clone(),
                        report: None,
                    })?;
                }
                match &verdict.measurement {
                    Some(m) => proposer.observe(p.trial, m)?,
                    None => proposer.observe_infeasible(
                        p.trial,
                        verdict.reason.as_deref().unwrap_or("infeasible"),
                    )?,
                }
                self.note_outcome(verdict.status, kept);
                self.report_progress(replayed);
            }
        }
        Ok(())
    }

    /// The error of a sweep stopped by `max_consecutive_failures`: the failures in a row
    /// and their reasons, most frequent first.
    fn too_many_failures(&self) -> RunError {
        let mut reasons: HashMap<&str, u64> = HashMap::new();
        for r in &self.failures_in_row {
            *reasons.entry(r.as_str()).or_insert(0) += 1;
        }
        let mut reasons: Vec<(String, u64)> = reasons
            .into_iter()
            .map(|(r, n)| (r.to_owned(), n))
            .collect();
        reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        RunError::TooManyFailures {
            count: self.failures_in_row.len() as u32,
            reasons,
        }
    }

    /// Sends progress to the observer.
    fn report_progress(&mut self, replayed: bool) {
        let tallies = self.ledger.tallies();
        self.observer.progress(&Progress {
            done: tallies.total(),
            budget: self.config.sweep.trial_budget(),
            tallies,
            best_score: self.ledger.best_score(),
            front_size: self.ledger.front_size(),
            replayed,
        });
    }

    /// The rounds of SPEC 7.
    fn rounds(&mut self, proposer: &mut dyn Proposer) -> Result<(), RunError> {
        let settings = &self.config.sweep;
        let per_round = u64::from(settings.candidates_per_round);
        let max_trials = settings.max_trials.unwrap_or(u64::MAX);
        let threads = settings.parallel_evals.max(1) as usize;
        let mut suggested: u64 = 0;
        let mut batch_no: usize = 0;
        let mut exhausted = false;

        'rounds: for _round in 0..settings.max_rounds {
            let mut successes: u64 = 0;
            let mut attempts: u64 = 0;
            while successes < per_round && attempts < 11 * per_round {
                self.retry_rounds(proposer, batch_no, threads)?;
                let live = (per_round - successes)
                    .min(11 * per_round - attempts)
                    .min(max_trials.saturating_sub(suggested));
                // a call the journal recorded is made again with the count it asked for
                let ask = self
                    .replay
                    .batches
                    .get(batch_no)
                    .map_or(live, |&n| n as u64);
                if ask == 0 {
                    break;
                }
                if self.cancelled() {
                    return Err(RunError::Interrupted);
                }
                let batch = proposer.suggest(usize::try_from(ask).unwrap_or(usize::MAX))?;
                self.check_call(batch_no, &batch)?;
                let this_batch = batch_no as u64;
                batch_no += 1;
                if (batch.len() as u64) < ask {
                    exhausted = true;
                    if let Some(journal) = self.journal.as_deref() {
                        journal::check_last_call(journal.path(), self.replay, batch_no - 1)?;
                    }
                }
                if batch.is_empty() {
                    break 'rounds;
                }
                suggested += batch.len() as u64;
                attempts += batch.len() as u64;

                // Build every candidate of the batch; decide what needs an evaluation.
                let mut prepared = Vec::with_capacity(batch.len());
                let mut batch_keys: HashSet<String> = HashSet::new();
                for trial in &batch {
                    let p = self.prepare(trial, &mut batch_keys)?;
                    if self
                        .recorded(trial.id)
                        .is_none_or(|r| r.parameters.is_none())
                    {
                        self.log(&journal::Line::Suggest {
                            trial: trial.id,
                            batch: Some(this_batch),
                            count: Some(ask),
                            parameters: p.parameters.clone(),
                        })?;
                    }
                    prepared.push(p);
                }

                // Evaluate what needs it (or replay it from the journal), in parallel; each
                // outcome is journaled the moment it arrives.
                let mut outcomes: HashMap<usize, Source> = HashMap::new();
                let mut to_run: Vec<(usize, EvalRequest)> = Vec::new();
                for (i, p) in prepared.iter().enumerate() {
                    if let Some(req) = &p.request {
                        match self.replayed_outcome(p.trial).and_then(replayed_source) {
                            Some(source) => {
                                outcomes.insert(i, source);
                            }
                            None => to_run.push((i, req.clone())),
                        }
                    }
                }
                let stopped = self.evaluate(&prepared, &to_run, threads, &mut outcomes)?;
                if self.cancelled() {
                    return Err(RunError::Interrupted);
                }
                if stopped {
                    return Err(self.too_many_failures());
                }

                // Score and observe in trial order.
                for (i, p) in prepared.into_iter().enumerate() {
                    let replayed = self
                        .replayed_outcome(p.trial)
                        .is_some_and(|r| r.status != Status::Pending);
                    let kept = p.clone();
                    let source = if let Some((status, reason)) = p.early {
                        Source::Early(status, reason)
                    } else if let Some(source) = outcomes.remove(&i) {
                        source
                    } else {
                        Source::CacheHit
                    };
                    let journal_it = p.request.is_none() && !replayed;
                    let verdict = self.ledger.record(Entry::new(
                        p.trial,
                        p.parameters,
                        p.declared_gpus,
                        source,
                    ))?;
                    if journal_it {
                        self.log(&journal::Line::Outcome {
                            trial: p.trial,
                            status: verdict.status,
                            reason: verdict.reason.clone(),
                            report: None,
                        })?;
                    }
                    match &verdict.measurement {
                        Some(m) => proposer.observe(p.trial, m)?,
                        None => proposer.observe_infeasible(
                            p.trial,
                            verdict.reason.as_deref().unwrap_or("infeasible"),
                        )?,
                    }
                    if verdict.status == Status::Feasible {
                        successes += 1;
                    }
                    self.note_outcome(verdict.status, kept);
                    self.report_progress(replayed);
                }
                if exhausted {
                    break 'rounds;
                }
            }
            if successes < per_round {
                break;
            }
        }
        // a retry written after the last call of the proposer (or asked for now)
        self.retry_rounds(proposer, batch_no, threads)
    }

    /// Runs `to_run` and journals each outcome as it arrives; returns whether the sweep
    /// must stop (too many failures in a row).
    fn evaluate(
        &mut self,
        prepared: &[Prepared],
        to_run: &[(usize, EvalRequest)],
        threads: usize,
        outcomes: &mut HashMap<usize, Source>,
    ) -> Result<bool, RunError> {
        let budget = self.config.search_space.gpu_budget as f64;
        let limit = self.config.sweep.max_consecutive_failures.max(1) as usize;
        let stop = AtomicBool::new(false);
        let evaluator = self.evaluator;
        // the handle an earlier run journaled for a trial it did not finish (a batch job)
        let resumed: Vec<Option<String>> = to_run
            .iter()
            .map(|(i, _)| {
                self.replayed_outcome(prepared[*i].trial)
                    .and_then(|r| r.handle.clone())
            })
            .collect();
        let stops = [Some(&stop), self.cancel];
        let fresh = evaluate_parallel(
            evaluator,
            to_run,
            &resumed,
            threads,
            &stops,
            |job, event| {
                let p = &prepared[to_run[job].0];
                let outcome = match event {
                    JobEvent::Started(handle) => {
                        return self.log(&journal::Line::Started {
                            trial: p.trial,
                            handle: handle.to_owned(),
                        });
                    }
                    JobEvent::Finished(outcome) => outcome,
                };
                let (status, reason, report) = classify(outcome, p.declared_gpus, budget);
                if status == Status::Failed && self.cancelled() {
                    // perhaps killed by the interrupt: left unfinished, so resume runs it
                    return Ok(());
                }
                if status == Status::Failed {
                    self.failures_in_row
                        .push(reason.clone().unwrap_or_default());
                    if self.failures_in_row.len() >= limit {
                        stop.store(true, Ordering::SeqCst);
                    }
                } else {
                    self.failures_in_row.clear();
                }
                self.log(&journal::Line::Outcome {
                    trial: p.trial,
                    status,
                    reason,
                    report,
                })
            },
        )?;
        for ((i, _), outcome) in to_run.iter().zip(fresh) {
            if let Some(outcome) = outcome {
                outcomes.insert(*i, Source::Evaluated(outcome));
            }
        }
        Ok(stop.load(Ordering::SeqCst))
    }

    /// Builds one trial's candidate and decides whether it needs an evaluation: over the
    /// budget (known before evaluating) and duplicates do not.
    fn prepare(
        &self,
        trial: &Trial,
        batch_keys: &mut HashSet<String>,
    ) -> Result<Prepared, RunError> {
        self.prepare_with(trial, |key| {
            if self.ledger.has_cached_key(key) || batch_keys.contains(key) {
                false
            } else {
                batch_keys.insert(key.to_owned());
                true
            }
        })
    }

    /// Builds one trial's candidate; `evaluate(key)` says whether a trial that is not
    /// decided before evaluating (over the budget) gets a request.
    fn prepare_with(
        &self,
        trial: &Trial,
        mut evaluate: impl FnMut(&str) -> bool,
    ) -> Result<Prepared, RunError> {
        let config = self.config;
        let parameters = space::parameters(trial);
        let ratio = space::searched_ratio(trial);
        let mut all_params = parameters.clone();
        if let Some(r) = ratio {
            all_params.insert(space::KV_LOAD_RATIO.into(), Value::from(r));
        }
        if let Some(rec_params) = self.recorded(trial.id).and_then(|r| r.parameters.as_ref())
            && rec_params != &all_params
        {
            return Err(RunError::JournalDiverged {
                path: self
                    .journal
                    .as_deref()
                    .map(|j| j.path().to_owned())
                    .unwrap_or_default(),
                trial: trial.id,
                recorded: Value::Object(rec_params.clone()).to_string(),
                now: Value::Object(all_params).to_string(),
            });
        }
        let key = ledger::key_of(&all_params);
        let mut early = None;
        let mut request = None;
        let mut declared_gpus = None;
        match space::declared_gpus(config, &parameters) {
            Err(reason) => early = Some((Status::Failed, reason)),
            Ok(gpus) => {
                declared_gpus = gpus;
                match gpus {
                    Some(g) if g > config.search_space.gpu_budget => {
                        let budget = config.search_space.gpu_budget;
                        let why = format!("over gpu_budget: used_gpus={g} > gpu_budget={budget}");
                        early = Some((Status::Infeasible, why));
                    }
                    _ if !evaluate(&key) => {}
                    _ => {
                        let mut req = space::request(config, trial.id, parameters, ratio, gpus);
                        if let Some(p) = self.provider {
                            p.decorate(&mut req);
                        }
                        request = Some(req);
                    }
                }
            }
        }
        Ok(Prepared {
            trial: trial.id,
            parameters: all_params,
            key,
            declared_gpus,
            request,
            early,
        })
    }
}

/// A report holding NaN is a failure: NaN never enters the journal or the scoring.
fn without_nan(outcome: EvalOutcome) -> EvalOutcome {
    match &outcome {
        EvalOutcome::Report(r) => match r.metrics.iter().find(|(_, v)| v.is_nan()) {
            Some((key, _)) => EvalOutcome::Failed(format!("metric `{key}` is NaN")),
            None => outcome,
        },
        _ => outcome,
    }
}

/// What a running evaluation tells the engine, on the calling thread of
/// [`evaluate_parallel`].
enum JobEvent<'e> {
    /// It runs outside sweeper as this handle (journaled at once).
    Started(&'e str),
    /// It ended.
    Finished(&'e EvalOutcome),
}

/// A message from a worker thread.
enum Message {
    Started(usize, String),
    Finished(usize, EvalOutcome),
}

/// Evaluates `jobs` with up to `threads` workers; worker `w` always passes `w` to the
/// evaluator, so a persistent evaluator keeps one process per worker. Job `i` gets
/// `resumed[i]` as the handle of its earlier run, if any. `on_event` runs on the calling
/// thread for every handle an evaluation reports and as each outcome arrives (the journal
/// writes them there); outcomes come back in job order, `None` for jobs never started
/// because one of `stops` was set. A panicking evaluator is a failed evaluation, not a crashed
/// sweep.
fn evaluate_parallel(
    evaluator: &dyn Evaluator,
    jobs: &[(usize, EvalRequest)],
    resumed: &[Option<String>],
    threads: usize,
    stops: &[Option<&AtomicBool>],
    mut on_event: impl FnMut(usize, JobEvent<'_>) -> Result<(), RunError>,
) -> Result<Vec<Option<EvalOutcome>>, RunError> {
    let mut results: Vec<Option<EvalOutcome>> = vec![None; jobs.len()];
    if jobs.is_empty() {
        return Ok(results);
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Message>();
    let mut first_error = None;
    std::thread::scope(|scope| {
        for worker in 0..threads.min(jobs.len()) {
            let tx = tx.clone();
            let next = &next;
            let failed = &failed;
            scope.spawn(move || {
                loop {
                    if failed.load(Ordering::SeqCst)
                        || stops.iter().flatten().any(|s| s.load(Ordering::SeqCst))
                    {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some((_, request)) = jobs.get(i) else {
                        break;
                    };
                    let started = |handle: &str| {
                        let _ = tx.send(Message::Started(i, handle.to_owned()));
                    };
                    let context =
                        EvalContext::new(resumed.get(i).and_then(Option::as_deref), &started);
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        evaluator.evaluate_with(worker, request, &context)
                    }))
                    .unwrap_or_else(|_| EvalOutcome::Failed("the evaluator panicked".into()));
                    if tx.send(Message::Finished(i, without_nan(outcome))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for message in rx {
            let (i, event) = match &message {
                Message::Started(i, handle) => (*i, JobEvent::Started(handle)),
                Message::Finished(i, outcome) => (*i, JobEvent::Finished(outcome)),
            };
            if first_error.is_none()
                && let Err(e) = on_event(i, event)
            {
                // a journal that cannot be written: start nothing new
                failed.store(true, Ordering::SeqCst);
                first_error = Some(e);
            }
            if let Message::Finished(i, outcome) = message {
                results[i] = Some(outcome);
            }
        }
    });
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(results)
}

/// Rebuilds a result from a journal (a sweep still running, or killed): every finished
/// trial, the front or ranking of the feasible ones. The journal must belong to `config`
/// (budget keys aside).
pub fn result_from_journal(config: &SweepConfig, path: &Path) -> Result<RunResult, RunError> {
    replay_into_ledger(config, &journal::read(path, Some(config))?)
}

/// Re-scores the journal of a finished sweep under another goal and GPU budget (`config`
/// need not be the one that started it): every recorded report is scored again, nothing is
/// evaluated.
pub fn rescore_journal(config: &SweepConfig, path: &Path) -> Result<RunResult, RunError> {
    replay_into_ledger(config, &journal::read(path, None)?)
}

/// Replays journal text (no file) under `config`, unchecked: the fuzz target of the
/// journal reader.
#[doc(hidden)]
pub fn replay_journal_text(config: &SweepConfig, text: &str) -> Result<RunResult, RunError> {
    let complete = text.rfind('\n').map_or("", |i| &text[..=i]);
    let replay = journal::parse_text(Path::new("journal"), complete)?;
    replay_into_ledger(config, &replay)
}

fn replay_into_ledger(
    config: &SweepConfig,
    replay: &journal::Replay,
) -> Result<RunResult, RunError> {
    let mut ledger = Ledger::new(config);
    // the ledger's order of the run that wrote the journal: trial order in rounds, the
    // order outcomes arrived in under `schedule: async`
    let order: Vec<u64> = if replay.asynchronous {
        let mut seen = HashSet::new();
        replay
            .events
            .iter()
            .filter_map(|e| match e {
                journal::Event::Outcome { trial, .. } => Some(*trial),
                journal::Event::Batch { .. } | journal::Event::Retry { .. } => None,
            })
            .filter(|t| seen.insert(*t))
            .collect()
    } else {
        replay.order.clone()
    };
    for id in &order {
        let rec = &replay.trials[id];
        let Some(source) = replayed_source(rec) else {
            continue;
        };
        let parameters = rec.parameters.clone().unwrap_or_default();
        let declared = space::declared_gpus(config, &parameters).ok().flatten();
        ledger.record(Entry::new(*id, parameters, declared, source))?;
    }
    ledger.into_result()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_study_proposes_more_than_one_call_holds_in_several_calls() {
        let config = sweeper_goal::parse(
            r#"{"search_space": {"parameters": {"x": {"float": [0, 1]}, "y": {"int": [0, 1000000]}}},
                "sweep": {"algorithm": "random", "seed": 3}}"#,
        )
        .unwrap();
        let mut study = default_study(&config).unwrap();
        let count = 2 * study.max_suggest() + 7;
        let trials = Proposer::suggest(&mut study, count).unwrap();
        assert_eq!(trials.len(), count);
        let ids: HashSet<u64> = trials.iter().map(|t| t.id).collect();
        assert_eq!(ids.len(), count, "every trial once");
    }
    use std::sync::atomic::AtomicUsize;

    /// Hands out every trial of the study twice (the copy under a new id), as a sampler
    /// without deduplication would; observations of copies are dropped.
    struct Twice(Study);

    const COPY: u64 = 1_000_000;

    impl Proposer for Twice {
        fn suggest(&mut self, count: usize) -> Result<Vec<sweeper_sampler::Trial>, RunError> {
            let mut out = Vec::new();
            for t in self.0.suggest(count.div_ceil(2))? {
                let mut copy = t.clone();
                copy.id += COPY;
                out.push(t);
                out.push(copy);
            }
            out.truncate(count);
            Ok(out)
        }
        fn observe(&mut self, trial: u64, m: &BTreeMap<String, f64>) -> Result<(), RunError> {
            if trial < COPY {
                Ok(self.0.observe(trial, m)?)
            } else {
                Ok(())
            }
        }
        fn observe_infeasible(&mut self, trial: u64, reason: &str) -> Result<(), RunError> {
            if trial < COPY {
                Ok(self.0.observe_infeasible(trial, reason)?)
            } else {
                Ok(())
            }
        }
    }

    struct Count(AtomicUsize);

    impl Evaluator for Count {
        fn evaluate(&self, _worker: usize, request: &EvalRequest) -> EvalOutcome {
            self.0.fetch_add(1, Ordering::SeqCst);
            let tp = request.parameters["tp"].as_f64().unwrap_or(1.0);
            EvalOutcome::Report(
                BTreeMap::from([("output_throughput_tok_s".to_owned(), 10.0 * tp)]).into(),
            )
        }
    }

    /// Reports a handle per evaluation and remembers the handles a resume gave back.
    #[derive(Default)]
    struct Handles(std::sync::Mutex<Vec<(u64, Option<String>)>>);

    impl Evaluator for Handles {
        fn evaluate(&self, worker: usize, request: &EvalRequest) -> EvalOutcome {
            self.evaluate_with(worker, request, &EvalContext::detached())
        }
        fn evaluate_with(
            &self,
            _worker: usize,
            request: &EvalRequest,
            context: &EvalContext<'_>,
        ) -> EvalOutcome {
            context.started(&format!("job:{}", request.id));
            self.0
                .lock()
                .unwrap()
                .push((request.id, context.resumed().map(str::to_owned)));
            let tp = request.parameters["tp"].as_f64().unwrap_or(1.0);
            EvalOutcome::Report(BTreeMap::from([("output_throughput_tok_s".to_owned(), tp)]).into())
        }
    }

    #[test]
    fn a_handle_is_journaled_before_the_outcome_and_given_back_on_resume() {
        let config = sweeper_goal::parse(
            "search_space: {gpu_budget: 8, parameters: {tp: {values: [1, 2, 4, 8]}}}
sweep: {max_rounds: 1, candidates_per_round: 4, parallel_evals: 2, algorithm: grid}",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let mut journal = FileJournal::create(&path, &config).unwrap();
        let first = Handles::default();
        Sweeper::builder(&config)
            .evaluator(&first)
            .journal(&mut journal)
            .run()
            .unwrap();
        drop(journal);
        assert!(first.0.lock().unwrap().iter().all(|(_, r)| r.is_none()));
        let text = std::fs::read_to_string(&path).unwrap();
        for trial in 0..4 {
            let started = format!(r#"{{"kind":"started","trial":{trial},"handle":"job:{trial}"}}"#);
            let outcome = format!(r#"{{"kind":"outcome","trial":{trial},"#);
            let (s, o) = (text.find(&started), text.find(&outcome));
            assert!(s.is_some() && s < o, "trial {trial}:\n{text}");
        }
        // as if the driver died before trials 1 and 3 ended: their outcomes are lost
        let cut: String = text
            .split_inclusive('\n')
            .filter(|l| {
                !(l.starts_with(r#"{"kind":"outcome","trial":1,"#)
                    || l.starts_with(r#"{"kind":"outcome","trial":3,"#))
            })
            .collect();
        std::fs::write(&path, cut).unwrap();
        let mut journal = FileJournal::open(&path, &config).unwrap();
        let second = Handles::default();
        let result = Sweeper::builder(&config)
            .evaluator(&second)
            .journal(&mut journal)
            .run()
            .unwrap();
        assert_eq!(result.tallies.feasible, 4);
        let mut seen = second.0.lock().unwrap().clone();
        seen.sort();
        assert_eq!(
            seen,
            [(1, Some("job:1".to_owned())), (3, Some("job:3".to_owned()))]
        );
    }

    #[test]
    fn duplicates_are_answered_from_the_cache_and_observed_again() {
        let config = sweeper_goal::parse(
            "search_space: {gpu_budget: 8, parameters: {tp: {values: [1, 2, 4, 8]}}}
sweep: {max_rounds: 2, candidates_per_round: 2, parallel_evals: 2, algorithm: random}",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut journal = FileJournal::create(dir.path().join("journal.jsonl"), &config).unwrap();
        let evaluator = Count(AtomicUsize::new(0));
        let study = Study::new(
            space::search_space(&config).unwrap(),
            config.goal.sampler_metrics(),
            Algorithm::Random,
            1,
        )
        .unwrap();
        let result = Sweeper::builder(&config)
            .evaluator(&evaluator)
            .proposer(Twice(study))
            .journal(&mut journal)
            .run()
            .unwrap();
        let hits = result
            .trials
            .iter()
            .filter(|t| t.status == Status::CacheHit)
            .count();
        assert!(hits > 0, "{:?}", result.tallies);
        assert_eq!(result.tallies.cache_hits as usize, hits);
        assert_eq!(
            evaluator.0.load(Ordering::SeqCst),
            result.trials.len() - hits
        );
        // a cache hit is not a new success: each round needed more attempts than candidates
        assert!(result.trials.len() > 4);
        // duplicates appear once in the ranking
        let mut indices: Vec<usize> = result.candidates.iter().map(|c| c.index).collect();
        indices.dedup();
        assert_eq!(indices.len(), result.candidates.len());
        assert!(result.candidates.iter().all(|c| c.index < COPY as usize));
        let journal = std::fs::read_to_string(dir.path().join("journal.jsonl")).unwrap();
        assert_eq!(journal.matches("cache_hit").count(), hits);
    }
}
