//! What a run reports: the status of each trial, the tallies, the result, the progress an
//! observer is told, and the errors that end a run.

use serde::Deserialize;
use serde::Serialize;
use serde_json::Map;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;
use sweeper_goal::Objective;
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
    /// Of the infeasible trials, those a strict SLA dropped (`goal.strict_sla`, SPEC 9):
    /// evaluated, but over a latency bound.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub over_sla: u64,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if hands a reference
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Tallies {
    /// Trials accounted for.
    pub fn total(&self) -> u64 {
        self.feasible + self.infeasible + self.failed + self.unsupported + self.cache_hits
    }

    pub(super) fn count(&mut self, status: Status) {
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
    /// The config's topology has no legal deployment, or names an unknown card.
    #[error("{0}")]
    Topology(#[source] sweeper_topology::TopologyError),
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
        "{} already holds the journal of a sweep; continue it with `sweeper run --resume {}`, start over with --force (which moves the old directory aside), or start a new sweep with another --out directory",
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
    /// The sweep was asked to stop ([`SweeperBuilder::cancel`](super::SweeperBuilder::cancel)) before its end.
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
    /// Whether `budget` is the sweep's real total. Under rounds it is the fewest trials the
    /// sweep can still come to, and grows as a round asks for a trial in place of one that
    /// was not feasible; `false` while it may still grow.
    pub budget_is_final: bool,
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
