//! The run loop of SPEC 7 (`Sweeper::run`): rounds of suggest → build each candidate →
//! evaluate → score → feasibility → `observe` / `observe_infeasible`.
//!
//! Decisions where the SPEC is silent:
//! - A round asks the study for as many trials as it still needs (at most the attempts and
//!   the `max_trials` left), evaluates them with up to `parallel_evals` at once, and then
//!   observes them **in trial order**, so that a run's result does not depend on which
//!   evaluation finished first: the same seed and evaluator give the same result, and a
//!   resumed run ends exactly where an uninterrupted one does.
//! - "New successful evaluations" are feasible evaluations of configurations not seen
//!   before; cache hits, infeasible, failed and unsupported ones are attempts only.
//! - A failed or unsupported evaluation is closed with `observe_infeasible` (so the study
//!   moves on and is never steered towards it), and tallied under its own name.
//! - An evaluation that runs over `max_eval_seconds` is tallied infeasible (SPEC 6).
//! - When the study cannot propose anything new (a finite space fully explored), the search
//!   ends after that batch.

mod journal;
mod output;
mod setup;
mod space;

pub use output::{ResultFile, candidates_csv, plot_of, write_outputs};
pub use setup::{Setup, SingleEvaluation, evaluate_candidate, evaluator_for};

use crate::evaluator::{EvalOutcome, EvalRequest, Evaluator, RawReport};
use crate::provider::{Provider, SweepContext};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use sweeper_goal::{Objective, SweepConfig};
use sweeper_sampler::{Algorithm, Study};
use sweeper_score::{Candidate, Report};

/// How a trial ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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

/// Every outcome of a run, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    #[error("search space: {0}")]
    Space(String),
    /// The config cannot be run as it is (no evaluator, an evaluator block that is wrong).
    #[error("{0}")]
    Setup(String),
    /// The study refused a call.
    #[error("sampler: {0}")]
    Sampler(#[from] sweeper_sampler::SamplerError),
    /// Scoring failed (a NaN that got through, a shape error).
    #[error("scoring: {0}")]
    Score(#[from] sweeper_score::ScoreError),
    /// Reading or writing a file of the output directory failed.
    #[error("{path}: {detail}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        detail: String,
    },
    /// The journal is unreadable.
    #[error("journal {path}: {detail}")]
    Journal {
        /// The journal file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The journal was written by a run of another config.
    #[error(
        "journal {path} was written by a sweep of another config (or another seed); resume with the config that started it, or start afresh with another --out directory"
    )]
    JournalMismatch {
        /// The journal file.
        path: PathBuf,
    },
    /// Replaying the journal proposed other trials than it records.
    #[error(
        "journal {path}: trial {trial} was {recorded} in the journal but the study now proposes {now}; the journal does not belong to this sweeper version or config"
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
}

impl RunError {
    pub(crate) fn io(path: &Path, e: &std::io::Error) -> RunError {
        RunError::Io {
            path: path.to_owned(),
            detail: e.to_string(),
        }
    }
}

/// Progress of a run, given to a [`RunObserver`] after every outcome.
#[derive(Debug, Clone)]
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
}

/// Receives progress; the command line draws a progress bar with it.
pub trait RunObserver {
    /// After every outcome (evaluated, cached or rejected before evaluation).
    fn progress(&mut self, progress: &Progress);
}

/// An observer that ignores everything.
#[derive(Debug, Default)]
pub struct Quiet;

impl RunObserver for Quiet {
    fn progress(&mut self, _progress: &Progress) {}
}

/// Where a run writes, and whether it resumes.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The output directory: `journal.jsonl`, `result.json`, `result.csv`, the plot.
    pub out_dir: PathBuf,
    /// Continue the run whose journal is in `out_dir`.
    pub resume: bool,
    /// The plot title (e.g. the model, GPU and budget).
    pub title: String,
}

/// One trial as the run saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialResult {
    /// Trial id.
    pub trial: u64,
    /// The candidate's configuration (parameters, `used_gpus`, load).
    pub config: Map<String, Value>,
    /// How it ended.
    pub status: Status,
    /// Why, for everything but feasible.
    pub reason: Option<String>,
    /// The score, when feasible.
    pub score: Option<f64>,
}

/// What a run returns.
#[derive(Debug, Clone)]
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

impl RunResult {
    /// Assembles a result: the front (pareto goal) or ranking (scalar goal) of the feasible
    /// candidates, and the failure reasons most frequent first.
    fn collect(
        evaluated: Vec<Candidate>,
        trials: Vec<TrialResult>,
        tallies: Tallies,
        reasons: HashMap<String, u64>,
        pareto: bool,
        objectives: Vec<Objective>,
    ) -> Result<RunResult, RunError> {
        let candidates = if pareto {
            sweeper_score::pareto_front(&evaluated, &objectives)?
        } else {
            sweeper_score::rank(evaluated.clone())
        };
        let mut reasons: Vec<(String, u64)> = reasons.into_iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok(RunResult {
            candidates,
            evaluated,
            trials,
            tallies,
            reasons,
            pareto,
            objectives,
        })
    }
}

/// The sweep driver: a config, an evaluator, optionally a provider and an observer.
pub struct Sweeper<'a> {
    config: &'a SweepConfig,
    evaluator: &'a dyn Evaluator,
    provider: Option<&'a mut dyn Provider>,
    observer: &'a mut dyn RunObserver,
}

/// A trial of the current batch, prepared for evaluation.
struct Prepared {
    trial: u64,
    parameters: Map<String, Value>,
    config: Map<String, Value>,
    declared_gpus: Option<u64>,
    key: String,
    request: Option<EvalRequest>,
    early: Option<(Status, Option<String>)>,
}

/// The result an evaluated configuration came to, reused for duplicates.
#[derive(Clone)]
struct Cached {
    reason: Option<String>,
    measurement: Option<BTreeMap<String, f64>>,
}

impl<'a> Sweeper<'a> {
    /// A sweeper of `config` evaluating with `evaluator`, reporting to `observer`.
    pub fn new(
        config: &'a SweepConfig,
        evaluator: &'a dyn Evaluator,
        observer: &'a mut dyn RunObserver,
    ) -> Self {
        Sweeper {
            config,
            evaluator,
            provider: None,
            observer,
        }
    }

    /// Adds a provider, which sees the sweep context before the run and decorates every
    /// candidate.
    #[must_use]
    pub fn with_provider(mut self, provider: &'a mut dyn Provider) -> Self {
        self.provider = Some(provider);
        self
    }

    /// Runs the sweep to its end and writes the output directory.
    pub fn run(mut self, options: &RunOptions) -> Result<RunResult, RunError> {
        let config = self.config;
        let settings = &config.sweep;
        let goal = &config.goal;

        if let Some(provider) = self.provider.as_deref_mut() {
            provider.prepare(&SweepContext { config });
        }

        std::fs::create_dir_all(&options.out_dir)
            .map_err(|e| RunError::io(&options.out_dir, &e))?;
        let journal_path = options.out_dir.join("journal.jsonl");
        let fp = journal::fingerprint(&config.to_json_value().to_string());
        let (journal, recorded) = if options.resume {
            let recorded = journal::read(&journal_path, &fp)?;
            (journal::Journal::reopen(&journal_path)?, recorded)
        } else {
            let header = journal::Line::Header {
                sweeper: env!("CARGO_PKG_VERSION").to_owned(),
                fingerprint: fp,
                seed: settings.seed,
            };
            (
                journal::Journal::create(&journal_path, &header)?,
                HashMap::new(),
            )
        };

        let algorithm = match settings.algorithm {
            sweeper_goal::AlgorithmName::Default => Algorithm::Default,
            sweeper_goal::AlgorithmName::Random => Algorithm::Random,
            sweeper_goal::AlgorithmName::QuasiRandom => Algorithm::QuasiRandom,
            sweeper_goal::AlgorithmName::Grid => Algorithm::Grid,
        };
        let mut study = Study::new(
            space::search_space(config)?,
            goal.sampler_metrics(),
            algorithm,
            settings.seed,
        )?;
        self.run_with(&mut study, options, journal, &recorded, &journal_path)
    }

    /// The rounds, with any source of trials (the study; a repeating one in tests).
    fn run_with(
        self,
        study: &mut dyn Proposer,
        options: &RunOptions,
        mut journal: journal::Journal,
        recorded: &HashMap<u64, journal::Recorded>,
        journal_path: &Path,
    ) -> Result<RunResult, RunError> {
        let config = self.config;
        let settings = &config.sweep;
        let goal = &config.goal;
        let objectives: Vec<Objective> = goal.objectives().to_vec();
        let pareto = goal.is_pareto();
        let budget = config.search_space.gpu_budget as f64;

        let per_round = u64::from(settings.candidates_per_round);
        let max_trials = settings.max_trials.unwrap_or(u64::MAX);
        let progress_budget = settings
            .max_trials
            .unwrap_or(u64::from(settings.max_rounds) * per_round);
        let threads = settings.parallel_evals.max(1) as usize;

        let mut cache: HashMap<String, Cached> = HashMap::new();
        let mut tallies = Tallies::default();
        let mut reasons: HashMap<String, u64> = HashMap::new();
        let mut trials: Vec<TrialResult> = Vec::new();
        let mut evaluated: Vec<Candidate> = Vec::new();
        let mut suggested: u64 = 0;
        let mut best_score: Option<f64> = None;
        let mut exhausted = false;
        let mut front_len = 0;

        'rounds: for _round in 0..settings.max_rounds {
            let mut successes: u64 = 0;
            let mut attempts: u64 = 0;
            while successes < per_round && attempts < 11 * per_round {
                let ask = (per_round - successes)
                    .min(11 * per_round - attempts)
                    .min(max_trials.saturating_sub(suggested));
                if ask == 0 {
                    break;
                }
                let batch = study.suggest(usize::try_from(ask).unwrap_or(usize::MAX))?;
                if (batch.len() as u64) < ask {
                    exhausted = true;
                }
                if batch.is_empty() {
                    break 'rounds;
                }
                suggested += batch.len() as u64;
                attempts += batch.len() as u64;

                // Build every candidate of the batch; decide what needs an evaluation.
                let mut prepared = Vec::with_capacity(batch.len());
                let mut batch_keys: HashMap<String, usize> = HashMap::new();
                for trial in &batch {
                    let p = self.prepare(
                        trial,
                        recorded,
                        journal_path,
                        &cache,
                        &mut batch_keys,
                        prepared.len(),
                    )?;
                    if recorded
                        .get(&trial.id)
                        .is_none_or(|r| r.parameters.is_none())
                    {
                        journal.append(&journal::Line::Suggest {
                            trial: trial.id,
                            parameters: p.parameters.clone(),
                        })?;
                    }
                    prepared.push(p);
                }

                // Evaluate what needs it (or replay it from the journal), in parallel; each
                // outcome is journaled the moment it arrives.
                let mut outcomes: HashMap<usize, EvalOutcome> = HashMap::new();
                let mut to_run: Vec<(usize, EvalRequest)> = Vec::new();
                for (i, p) in prepared.iter().enumerate() {
                    if let Some(req) = &p.request {
                        match recorded.get(&p.trial).and_then(replayed_outcome) {
                            Some(outcome) => {
                                outcomes.insert(i, outcome);
                            }
                            None => to_run.push((i, req.clone())),
                        }
                    }
                }
                let fresh = evaluate_parallel(self.evaluator, &to_run, threads, |job, outcome| {
                    let p = &prepared[to_run[job].0];
                    let (status, reason, report) = classify(outcome, p.declared_gpus, budget);
                    journal.append(&journal::Line::Outcome {
                        trial: p.trial,
                        status,
                        reason,
                        report,
                    })
                })?;
                for ((i, _), outcome) in to_run.iter().zip(fresh) {
                    outcomes.insert(*i, outcome);
                }

                // Score and observe in trial order.
                for (i, p) in prepared.into_iter().enumerate() {
                    let trial = p.trial;
                    let mut config_map = p.config;
                    let mut score = None;
                    let (status, reason, measurement) = if let Some((status, reason)) = p.early {
                        (status, reason, None)
                    } else if let Some(outcome) = outcomes.remove(&i) {
                        let (mut status, mut reason, report) =
                            classify(&outcome, p.declared_gpus, budget);
                        let mut measurement = None;
                        if let Some(raw) = report {
                            record_load(&mut config_map, &raw);
                            if status == Status::Feasible {
                                let index = usize::try_from(trial).unwrap_or(usize::MAX);
                                match Report::from_map(index, raw) {
                                    Ok(report) => {
                                        let candidate = sweeper_score::make_candidate(
                                            index,
                                            config_map.clone(),
                                            &report,
                                            &objectives,
                                            pareto,
                                        );
                                        measurement = Some(measurement_of(&candidate, pareto));
                                        score = Some(candidate.score);
                                        evaluated.push(candidate);
                                    }
                                    Err(e) => {
                                        status = Status::Failed;
                                        reason = Some(e.to_string());
                                    }
                                }
                            }
                        }
                        cache.insert(
                            p.key.clone(),
                            Cached {
                                reason: reason.clone(),
                                measurement: measurement.clone(),
                            },
                        );
                        (status, reason, measurement)
                    } else if let Some(hit) = cache.get(&p.key) {
                        (
                            Status::CacheHit,
                            hit.reason.clone(),
                            hit.measurement.clone(),
                        )
                    } else {
                        let why = "internal: candidate was neither evaluated nor cached";
                        (Status::Failed, Some(why.to_owned()), None)
                    };

                    if p.request.is_none()
                        && !recorded
                            .get(&trial)
                            .is_some_and(|r| r.status != Status::Pending)
                    {
                        journal.append(&journal::Line::Outcome {
                            trial,
                            status,
                            reason: reason.clone(),
                            report: None,
                        })?;
                    }
                    match &measurement {
                        Some(m) => study.observe(trial, m)?,
                        None => study
                            .observe_infeasible(trial, reason.as_deref().unwrap_or("infeasible"))?,
                    }
                    if status == Status::Feasible {
                        successes += 1;
                        if let Some(s) = score {
                            best_score = Some(best_score.map_or(s, |b: f64| b.max(s)));
                        }
                    }
                    tallies.count(status);
                    if let Some(r) = &reason
                        && !matches!(status, Status::CacheHit | Status::Feasible)
                    {
                        *reasons.entry(reason_group(r)).or_insert(0) += 1;
                    }
                    trials.push(TrialResult {
                        trial,
                        config: config_map,
                        status,
                        reason,
                        score: if status == Status::Feasible {
                            score
                        } else {
                            None
                        },
                    });
                    let front_size = if pareto && status == Status::Feasible {
                        front_len = sweeper_score::pareto_front(&evaluated, &objectives)?.len();
                        Some(front_len)
                    } else if pareto {
                        Some(front_len)
                    } else {
                        None
                    };
                    self.observer.progress(&Progress {
                        done: tallies.total(),
                        budget: progress_budget,
                        tallies,
                        best_score: if pareto { None } else { best_score },
                        front_size,
                    });
                }
                if exhausted {
                    break 'rounds;
                }
            }
            if successes < per_round {
                break;
            }
        }

        let result = RunResult::collect(evaluated, trials, tallies, reasons, pareto, objectives)?;
        write_outputs(&options.out_dir, config, &result, &options.title)?;
        Ok(result)
    }
}

impl Sweeper<'_> {
    /// Builds one trial's candidate and decides whether it needs an evaluation: over the
    /// budget (known before evaluating) and duplicates do not.
    fn prepare(
        &self,
        trial: &sweeper_sampler::Trial,
        recorded: &HashMap<u64, journal::Recorded>,
        journal_path: &Path,
        cache: &HashMap<String, Cached>,
        batch_keys: &mut HashMap<String, usize>,
        position: usize,
    ) -> Result<Prepared, RunError> {
        let config = self.config;
        let parameters = space::parameters(trial);
        let ratio = space::searched_ratio(trial);
        let mut all_params = parameters.clone();
        if let Some(r) = ratio {
            all_params.insert(space::KV_LOAD_RATIO.into(), Value::from(r));
        }
        if let Some(rec_params) = recorded.get(&trial.id).and_then(|r| r.parameters.as_ref())
            && rec_params != &all_params
        {
            return Err(RunError::JournalDiverged {
                path: journal_path.to_owned(),
                trial: trial.id,
                recorded: Value::Object(rec_params.clone()).to_string(),
                now: Value::Object(all_params).to_string(),
            });
        }
        let key = Value::Object(all_params.clone()).to_string();
        let mut cfg = all_params.clone();
        let mut early = None;
        let mut request = None;
        let mut declared_gpus = None;
        match space::declared_gpus(config, &parameters) {
            Err(reason) => early = Some((Status::Failed, Some(reason))),
            Ok(gpus) => {
                declared_gpus = gpus;
                if let Some(g) = gpus {
                    cfg.insert("used_gpus".into(), Value::from(g));
                }
                match gpus {
                    Some(g) if g > config.search_space.gpu_budget => {
                        let budget = config.search_space.gpu_budget;
                        let why = format!("over gpu_budget: used_gpus={g} > gpu_budget={budget}");
                        early = Some((Status::Infeasible, Some(why)));
                    }
                    _ if cache.contains_key(&key) || batch_keys.contains_key(&key) => {}
                    _ => {
                        batch_keys.insert(key.clone(), position);
                        let mut req = space::request(config, trial.id, parameters, ratio, gpus);
                        if let Some(p) = self.provider.as_deref() {
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
            config: cfg,
            declared_gpus,
            key,
            request,
            early,
        })
    }
}

/// Copies what the evaluator reports about the load it ran (and the GPUs, when the search
/// space does not declare them) into the candidate's configuration.
fn record_load(config: &mut Map<String, Value>, report: &RawReport) {
    for key in ["concurrency", "kv_capacity_tokens"] {
        if let Some(v) = report.get(key) {
            config.insert(key.into(), json_number(*v));
        }
    }
    if !config.contains_key("used_gpus") {
        config.insert("used_gpus".into(), json_number(report_gpus(report)));
    }
}

/// The group a failure reason is counted under in the summary: over-budget reasons differ
/// only in the GPU count, so they count as one.
fn reason_group(reason: &str) -> String {
    match reason.split_once(" > ") {
        Some((head, budget)) if head.starts_with("over gpu_budget: used_gpus=") => {
            format!("over gpu_budget: used_gpus > {budget}")
        }
        _ => reason.to_owned(),
    }
}

/// A source of trials: the study, or (in tests) a wrapper that repeats its trials.
trait Proposer {
    fn suggest(&mut self, count: usize) -> Result<Vec<sweeper_sampler::Trial>, RunError>;
    fn observe(&mut self, trial: u64, measurement: &BTreeMap<String, f64>) -> Result<(), RunError>;
    fn observe_infeasible(&mut self, trial: u64, reason: &str) -> Result<(), RunError>;
}

impl Proposer for Study {
    fn suggest(&mut self, count: usize) -> Result<Vec<sweeper_sampler::Trial>, RunError> {
        Ok(Study::suggest(self, count)?)
    }
    fn observe(&mut self, trial: u64, measurement: &BTreeMap<String, f64>) -> Result<(), RunError> {
        Ok(Study::observe(self, trial, measurement)?)
    }
    fn observe_infeasible(&mut self, trial: u64, reason: &str) -> Result<(), RunError> {
        Ok(Study::observe_infeasible(self, trial, reason)?)
    }
}

/// The study measurement of a feasible candidate: the signed score under `objective` for a
/// scalar goal, every objective's raw value for a pareto goal.
fn measurement_of(candidate: &Candidate, pareto: bool) -> BTreeMap<String, f64> {
    if pareto {
        candidate
            .objectives
            .iter()
            .flatten()
            .map(|(o, v)| (o.name().to_owned(), *v))
            .collect()
    } else {
        BTreeMap::from([("objective".to_owned(), candidate.score)])
    }
}

/// The GPU count a report gives (`used_gpus`, else `total_gpus`, else 0).
fn report_gpus(report: &RawReport) -> f64 {
    report
        .get("used_gpus")
        .or_else(|| report.get("total_gpus"))
        .copied()
        .unwrap_or(0.0)
}

pub(crate) fn json_number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
    }
}

/// Turns an evaluation outcome into a status: feasibility checks only the GPU budget.
fn classify(
    outcome: &EvalOutcome,
    declared_gpus: Option<u64>,
    budget: f64,
) -> (Status, Option<String>, Option<RawReport>) {
    match outcome {
        EvalOutcome::Report(report) => {
            let used = declared_gpus.map_or_else(|| report_gpus(report), |g| g as f64);
            if sweeper_score::is_feasible(used, budget) {
                (Status::Feasible, None, Some(report.clone()))
            } else {
                (
                    Status::Infeasible,
                    Some(format!(
                        "over gpu_budget: used_gpus={used} > gpu_budget={budget}"
                    )),
                    Some(report.clone()),
                )
            }
        }
        EvalOutcome::Failed(r) => (Status::Failed, Some(r.clone()), None),
        EvalOutcome::Unsupported(r) => (Status::Unsupported, Some(r.clone()), None),
        EvalOutcome::TimedOut(r) | EvalOutcome::Infeasible(r) => {
            (Status::Infeasible, Some(r.clone()), None)
        }
    }
}

/// The outcome a journal recorded for a trial, if it finished.
fn replayed_outcome(rec: &journal::Recorded) -> Option<EvalOutcome> {
    let reason = rec.reason.clone().unwrap_or_default();
    match rec.status {
        Status::Pending | Status::CacheHit => None,
        Status::Feasible | Status::Infeasible => match &rec.report {
            Some(report) => Some(EvalOutcome::Report(report.clone())),
            None => Some(EvalOutcome::Infeasible(reason)),
        },
        Status::Failed => Some(EvalOutcome::Failed(reason)),
        Status::Unsupported => Some(EvalOutcome::Unsupported(reason)),
    }
}

/// Evaluates `jobs` with up to `threads` workers; worker `w` always passes `w` to the
/// evaluator, so a persistent evaluator keeps one process per worker. `on_done` runs on the
/// calling thread as each outcome arrives (the journal writes it there); outcomes come back
/// in job order. A panicking evaluator is a failed evaluation, not a crashed sweep.
fn evaluate_parallel(
    evaluator: &dyn Evaluator,
    jobs: &[(usize, EvalRequest)],
    threads: usize,
    mut on_done: impl FnMut(usize, &EvalOutcome) -> Result<(), RunError>,
) -> Result<Vec<EvalOutcome>, RunError> {
    let mut results: Vec<Option<EvalOutcome>> = vec![None; jobs.len()];
    if jobs.is_empty() {
        return Ok(Vec::new());
    }
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, EvalOutcome)>();
    let mut first_error = None;
    std::thread::scope(|scope| {
        for worker in 0..threads.min(jobs.len()) {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((_, request)) = jobs.get(i) else {
                        break;
                    };
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        evaluator.evaluate(worker, request)
                    }))
                    .unwrap_or_else(|_| EvalOutcome::Failed("the evaluator panicked".into()));
                    if tx.send((i, outcome)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (i, outcome) in rx {
            if first_error.is_none()
                && let Err(e) = on_done(i, &outcome)
            {
                first_error = Some(e);
            }
            results[i] = Some(outcome);
        }
    });
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(results
        .into_iter()
        .map(|o| o.unwrap_or_else(|| EvalOutcome::Failed("the evaluation did not return".into())))
        .collect())
}

/// Rebuilds a result from a journal (a sweep still running, or killed): every finished
/// trial, the front or ranking of the feasible ones. Reports are scored again under
/// `config`'s goal.
pub fn result_from_journal(config: &SweepConfig, path: &Path) -> Result<ResultFile, RunError> {
    let fp = journal::fingerprint(&config.to_json_value().to_string());
    let recorded = journal::read(path, &fp)?;
    let mut ids: Vec<u64> = recorded.keys().copied().collect();
    ids.sort_unstable();
    let objectives: Vec<Objective> = config.goal.objectives().to_vec();
    let pareto = config.goal.is_pareto();
    let mut tallies = Tallies::default();
    let mut reasons: HashMap<String, u64> = HashMap::new();
    let mut trials = Vec::new();
    let mut evaluated = Vec::new();
    for id in ids {
        let rec = &recorded[&id];
        if rec.status == Status::Pending {
            continue;
        }
        let mut cfg = rec.parameters.clone().unwrap_or_default();
        let mut score = None;
        if let Some(raw) = &rec.report {
            record_load(&mut cfg, raw);
            if rec.status == Status::Feasible {
                let index = usize::try_from(id).unwrap_or(usize::MAX);
                let report = Report::from_map(index, raw.clone())?;
                let c =
                    sweeper_score::make_candidate(index, cfg.clone(), &report, &objectives, pareto);
                score = Some(c.score);
                evaluated.push(c);
            }
        }
        tallies.count(rec.status);
        if let Some(r) = &rec.reason
            && !matches!(rec.status, Status::CacheHit | Status::Feasible)
        {
            *reasons.entry(reason_group(r)).or_insert(0) += 1;
        }
        trials.push(TrialResult {
            trial: id,
            config: cfg,
            status: rec.status,
            reason: rec.reason.clone(),
            score,
        });
    }
    let result = RunResult::collect(evaluated, trials, tallies, reasons, pareto, objectives)?;
    let title = format!("{} (from the journal)", path.display());
    Ok(ResultFile::new(config, &result, &title))
}

#[cfg(test)]
mod tests {
    use super::*;
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
            EvalOutcome::Report(BTreeMap::from([(
                "output_throughput_tok_s".to_owned(),
                10.0 * tp,
            )]))
        }
    }

    #[test]
    fn duplicates_are_answered_from_the_cache_and_observed_again() {
        let config = sweeper_goal::parse(
            "search_space: {gpu_budget: 8, parameters: {tp: {values: [1, 2, 4, 8]}}}
sweep: {max_rounds: 2, candidates_per_round: 2, parallel_evals: 2, algorithm: random}",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let options = RunOptions {
            out_dir: dir.path().to_owned(),
            resume: false,
            title: String::new(),
        };
        let header = journal::Line::Header {
            sweeper: String::new(),
            fingerprint: String::new(),
            seed: 0,
        };
        let journal = journal::Journal::create(&dir.path().join("journal.jsonl"), &header).unwrap();
        let evaluator = Count(AtomicUsize::new(0));
        let mut quiet = Quiet;
        let study = Study::new(
            space::search_space(&config).unwrap(),
            config.goal.sampler_metrics(),
            Algorithm::Random,
            1,
        )
        .unwrap();
        let result = Sweeper::new(&config, &evaluator, &mut quiet)
            .run_with(
                &mut Twice(study),
                &options,
                journal,
                &HashMap::new(),
                dir.path(),
            )
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
