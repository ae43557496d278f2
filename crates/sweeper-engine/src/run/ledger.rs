//! The ledger: the one state of a sweep's outcomes (cache, tallies, reasons, trials, front),
//! fed by the live loop and by journal replay alike, so that scoring and tallying are
//! written once.

use super::{RunError, RunResult, Status, Tallies, TrialResult};
use crate::evaluator::{EvalOutcome, RawReport};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use sweeper_goal::{Direction, Goal, Objective, SweepConfig};
use sweeper_score::front::dominates;
use sweeper_score::{Candidate, Report, ScoreError, Scorer};

/// How a trial came to its outcome.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Source {
    /// The evaluator answered (or the journal recorded its answer).
    Evaluated(EvalOutcome),
    /// Decided before any evaluation (over the GPU budget, an unusable GPU count).
    Early(Status, String),
    /// A duplicate of an evaluated configuration: answered from the cache.
    CacheHit,
}

/// One trial handed to [`Ledger::record`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Entry {
    /// Trial id.
    pub trial: u64,
    /// The candidate's parameters, a searched `kv_load_ratio` included: what makes two
    /// trials the same configuration.
    pub parameters: Map<String, Value>,
    /// The GPU count the search space declares, if it does.
    pub declared_gpus: Option<u64>,
    /// How it ended.
    pub source: Source,
}

impl Entry {
    /// An entry for `trial` with these parameters and source.
    pub fn new(
        trial: u64,
        parameters: Map<String, Value>,
        declared_gpus: Option<u64>,
        source: Source,
    ) -> Entry {
        Entry {
            trial,
            parameters,
            declared_gpus,
            source,
        }
    }
}

/// What [`Ledger::record`] decided for a trial: what the proposer is told.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The trial's status.
    pub status: Status,
    /// Why, for everything but feasible.
    pub reason: Option<String>,
    /// The measurement to observe (feasible trials and their cache hits), else `None`
    /// (observe it as infeasible).
    pub measurement: Option<BTreeMap<String, f64>>,
}

/// The result an evaluated configuration came to, reused for its duplicates.
#[derive(Debug, Clone)]
struct Cached {
    reason: Option<String>,
    measurement: Option<BTreeMap<String, f64>>,
    report: Option<RawReport>,
}

/// Every outcome of a sweep so far.
#[derive(Debug, Clone)]
pub struct Ledger {
    goal: Goal,
    /// The built-in evaluator's GPU, for a price map (see [`sweeper_score::Scorer`]).
    default_gpu: Option<String>,
    objectives: Vec<Objective>,
    pareto: bool,
    budget: f64,
    cache: HashMap<String, Cached>,
    tallies: Tallies,
    reasons: HashMap<String, u64>,
    trials: Vec<TrialResult>,
    evaluated: Vec<Candidate>,
    best_score: Option<f64>,
    /// The current front's objective values (goal order), kept as feasible candidates
    /// arrive, so that the progress line's front size costs one pass over the front, not a
    /// front of every candidate so far.
    front: Vec<Vec<f64>>,
}

/// A feasible candidate's values of the goal's objectives, in goal order; the errors
/// [`sweeper_score::pareto_front`] would give for it (a missing value, a NaN).
fn front_values(candidate: &Candidate, objectives: &[Objective]) -> Result<Vec<f64>, ScoreError> {
    objectives
        .iter()
        .map(|&o| match candidate.objective(o) {
            None => Err(ScoreError::Shape {
                detail: format!(
                    "candidate {} carries no value for objective `{}`",
                    candidate.index,
                    o.name()
                ),
            }),
            Some(v) if v.is_nan() => Err(ScoreError::NanReport {
                candidate: candidate.index,
                key: o.name().to_owned(),
            }),
            Some(v) => Ok(v),
        })
        .collect()
}

/// Adds `point` to `front`, the non-dominated points seen so far: a point some member
/// dominates changes nothing; otherwise the members it dominates leave and it joins. Equal
/// points do not dominate each other (duplicates are all kept), as in
/// [`sweeper_score::pareto_front`], so the size is always that of the front of every point
/// added.
fn add_to_front(front: &mut Vec<Vec<f64>>, point: Vec<f64>, directions: &[Direction]) {
    if front.iter().any(|q| dominates(q, &point, directions)) {
        return;
    }
    front.retain(|q| !dominates(&point, q, directions));
    front.push(point);
}

/// The cache key of a configuration: its parameters as JSON (maps are ordered by key).
pub(crate) fn key_of(parameters: &Map<String, Value>) -> String {
    Value::Object(parameters.clone()).to_string()
}

impl Ledger {
    /// An empty ledger for `config`'s goal and GPU budget.
    pub fn new(config: &SweepConfig) -> Ledger {
        Ledger {
            goal: config.goal.clone(),
            default_gpu: builtin_gpu(config),
            objectives: config.goal.objectives().to_vec(),
            pareto: config.goal.is_pareto(),
            budget: config.search_space.gpu_budget as f64,
            cache: HashMap::new(),
            tallies: Tallies::default(),
            reasons: HashMap::new(),
            trials: Vec::new(),
            evaluated: Vec::new(),
            best_score: None,
            front: Vec::new(),
        }
    }

    /// Whether a configuration (its parameters) was evaluated already.
    pub fn has_cached(&self, parameters: &Map<String, Value>) -> bool {
        self.cache.contains_key(&key_of(parameters))
    }

    /// [`has_cached`](Self::has_cached) of a configuration's cache key.
    pub(crate) fn has_cached_key(&self, key: &str) -> bool {
        self.cache.contains_key(key)
    }

    /// Records one trial: classifies the outcome (feasibility checks only the GPU budget),
    /// scores a feasible report, answers a duplicate from the cache, and tallies it.
    pub fn record(&mut self, entry: Entry) -> Result<Verdict, RunError> {
        let Entry {
            trial,
            parameters,
            declared_gpus,
            source,
        } = entry;
        let key = key_of(&parameters);
        let mut config = parameters;
        if let Some(g) = declared_gpus {
            config.insert("used_gpus".into(), Value::from(g));
        }
        let mut score = None;
        let (status, reason, measurement, report) = match source {
            Source::Early(status, reason) => (status, Some(reason), None, None),
            Source::Evaluated(outcome) => {
                let (mut status, mut reason, report) =
                    classify(&outcome, declared_gpus, self.budget);
                let mut measurement = None;
                if let Some(raw) = &report {
                    record_load(&mut config, raw);
                    if status == Status::Feasible {
                        let index = usize::try_from(trial).unwrap_or(usize::MAX);
                        let scorer =
                            Scorer::new(&self.goal).with_default_gpu(self.default_gpu.as_deref());
                        let scored = Report::from_map(index, raw.metrics.clone()).and_then(|r| {
                            let over = scorer.over_sla(&r);
                            Ok((scorer.candidate(index, config.clone(), &r)?, over))
                        });
                        match scored {
                            Ok((_, Some(over))) => {
                                status = Status::Infeasible;
                                reason = Some(over);
                                self.tallies.over_sla += 1;
                            }
                            Ok((candidate, None)) => {
                                measurement = Some(match self.goal.sampler_floor() {
                                    Some((floor_metric, _)) => {
                                        floored_measurement(&candidate, floor_metric)
                                    }
                                    None => measurement_of(
                                        &candidate,
                                        self.pareto,
                                        scorer.sampler_value(&candidate),
                                    ),
                                });
                                score = Some(candidate.score);
                                self.evaluated.push(candidate);
                            }
                            Err(e) => {
                                status = Status::Failed;
                                reason = Some(e.to_string());
                            }
                        }
                    }
                }
                self.cache.insert(
                    key,
                    Cached {
                        reason: reason.clone(),
                        measurement: measurement.clone(),
                        report: report.clone(),
                    },
                );
                (status, reason, measurement, report)
            }
            Source::CacheHit => match self.cache.get(&key) {
                Some(hit) => (
                    Status::CacheHit,
                    hit.reason.clone(),
                    hit.measurement.clone(),
                    hit.report.clone(),
                ),
                None => (
                    Status::Failed,
                    Some("internal: a cache hit of a configuration never evaluated".to_owned()),
                    None,
                    None,
                ),
            },
        };
        if status == Status::Feasible
            && let Some(s) = score
        {
            self.best_score = Some(self.best_score.map_or(s, |b| b.max(s)));
            // a candidate without objectives is no point of the front (as in pareto_front)
            if self.pareto
                && let Some(candidate) = self.evaluated.last()
                && candidate.objectives.is_some()
            {
                let values = front_values(candidate, &self.objectives)?;
                let directions: Vec<Direction> =
                    self.objectives.iter().map(|o| o.direction()).collect();
                add_to_front(&mut self.front, values, &directions);
            }
        }
        self.tallies.count(status);
        if let Some(r) = &reason
            && !matches!(status, Status::CacheHit | Status::Feasible)
        {
            *self.reasons.entry(reason_group(r)).or_insert(0) += 1;
        }
        let (metrics, labels) = report.map(|r| (r.metrics, r.labels)).unwrap_or_default();
        self.trials.push(TrialResult {
            trial,
            config,
            status,
            reason: reason.clone(),
            score: if status == Status::Feasible {
                score
            } else {
                None
            },
            metrics,
            labels,
        });
        Ok(Verdict {
            status,
            reason,
            measurement,
        })
    }

    /// Takes back the failed outcome of `trial` (whose configuration has the cache key
    /// `key`), so that its evaluation again is recorded in its place (`--retry-failed`).
    /// Nothing happens when its last record is not a failure.
    pub(crate) fn forget_failed(&mut self, trial: u64, key: &str) {
        let Some(at) = self
            .trials
            .iter()
            .rposition(|r| r.trial == trial && r.status == Status::Failed)
        else {
            return;
        };
        let record = self.trials.remove(at);
        self.tallies.failed = self.tallies.failed.saturating_sub(1);
        if let Some(reason) = &record.reason {
            let group = reason_group(reason);
            if let Some(n) = self.reasons.get_mut(&group) {
                *n -= 1;
                if *n == 0 {
                    self.reasons.remove(&group);
                }
            }
        }
        self.cache.remove(key);
    }

    /// Counts of every outcome so far.
    pub fn tallies(&self) -> Tallies {
        self.tallies
    }

    /// The best score so far (a scalar goal's; `None` under a pareto goal).
    pub fn best_score(&self) -> Option<f64> {
        if self.pareto { None } else { self.best_score }
    }

    /// The size of the current front (pareto goals), else `None`.
    pub fn front_size(&self) -> Option<usize> {
        self.pareto.then_some(self.front.len())
    }

    /// Every trial recorded so far, in order.
    pub fn trials(&self) -> &[TrialResult] {
        &self.trials
    }

    /// The result: the front (pareto goal) or ranking (scalar goal) of the feasible
    /// candidates, and the failure reasons most frequent first.
    pub fn into_result(self) -> Result<RunResult, RunError> {
        let candidates = if self.pareto {
            sweeper_score::pareto_front(&self.evaluated, &self.objectives)?
        } else {
            sweeper_score::rank(self.evaluated.clone())
        };
        let mut reasons: Vec<(String, u64)> = self.reasons.into_iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok(RunResult {
            candidates,
            evaluated: self.evaluated,
            trials: self.trials,
            tallies: self.tallies,
            reasons,
            pareto: self.pareto,
            objectives: self.objectives,
        })
    }
}

/// Copies what the evaluator reports about the load it ran (and the GPUs, when the search
/// space does not declare them) into the candidate's configuration. A key the candidate
/// already has (a searched `concurrency` level) keeps its value: the report's stays in the
/// report (`report.concurrency` in the CSVs).
pub(crate) fn record_load(config: &mut Map<String, Value>, report: &RawReport) {
    for key in ["concurrency", "kv_capacity_tokens"] {
        if let Some(v) = report.get(key) {
            config
                .entry(key.to_owned())
                .or_insert_with(|| json_number(*v));
        }
    }
    if !config.contains_key("used_gpus") {
        config.insert("used_gpus".into(), json_number(report_gpus(report)));
    }
}

/// The GPU of every candidate without a `gpu` parameter (what a price map reads for it):
/// the topology's `gpu` (`search_space.topology.gpu`), else the built-in evaluator's
/// `gpu:` ([`sweeper_goal::default_gpu`]).
pub fn builtin_gpu(config: &SweepConfig) -> Option<String> {
    sweeper_goal::default_gpu(config).map(str::to_owned)
}

/// The group a failure reason is counted under in the summary: over-budget reasons differ
/// only in the GPU count, and over-SLA reasons only in the latency, so each bound counts as
/// one.
fn reason_group(reason: &str) -> String {
    if let Some(rest) = reason.strip_prefix("over sla: ")
        && let Some((head, bound)) = rest.split_once(" > ")
        && let Some((key, _)) = head.split_once('=')
    {
        return format!("over sla: {key} > {bound}");
    }
    match reason.split_once(" > ") {
        Some((head, budget)) if head.starts_with("over gpu_budget: used_gpus=") => {
            format!("over gpu_budget: used_gpus > {budget}")
        }
        _ => reason.to_owned(),
    }
}

/// The study measurement of a feasible candidate: `value` (the signed score, or the
/// scorer's number for `min_gpus`) for a scalar goal, every objective's raw value for a
/// pareto goal.
fn measurement_of(candidate: &Candidate, pareto: bool, value: f64) -> BTreeMap<String, f64> {
    if pareto {
        candidate
            .objectives
            .iter()
            .flatten()
            .map(|(o, v)| (o.name().to_owned(), *v))
            .collect()
    } else {
        BTreeMap::from([("objective".to_owned(), value)])
    }
}

/// The study measurement of a feasible candidate under `min_gpus`: its `used_gpus` (the
/// cost) and its goodput (`score`, the metric with the floor), raw.
fn floored_measurement(candidate: &Candidate, floor_metric: &str) -> BTreeMap<String, f64> {
    BTreeMap::from([
        ("used_gpus".to_owned(), candidate.used_gpus),
        (floor_metric.to_owned(), candidate.score),
    ])
}

/// The GPU count a report gives (`used_gpus`, else `total_gpus`, else 0).
fn report_gpus(report: &RawReport) -> f64 {
    report
        .get("used_gpus")
        .or_else(|| report.get("total_gpus"))
        .copied()
        .unwrap_or(0.0)
}

/// A number as JSON: whole numbers as integers, `±inf` as the strings of
/// [`sweeper_score::json_f64`].
pub(crate) fn json_number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        Value::from(v as i64)
    } else {
        sweeper_score::json_f64::to_value(v)
    }
}

/// Turns an evaluation outcome into a status: feasibility checks only the GPU budget.
pub(crate) fn classify(
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

/// The source a journal's record stands for: a cache hit, the recorded answer, or `None`
/// when the trial did not finish.
pub(crate) fn replayed_source(rec: &super::journal::Recorded) -> Option<Source> {
    let reason = rec.reason.clone().unwrap_or_default();
    Some(match rec.status {
        Status::Pending => return None,
        Status::CacheHit => Source::CacheHit,
        Status::Feasible | Status::Infeasible => match &rec.report {
            Some(report) => Source::Evaluated(EvalOutcome::Report(report.clone())),
            None => Source::Evaluated(EvalOutcome::Infeasible(reason)),
        },
        Status::Failed => Source::Evaluated(EvalOutcome::Failed(reason)),
        Status::Unsupported => Source::Evaluated(EvalOutcome::Unsupported(reason)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_price_map_reads_the_topology_gpu_before_the_builtin_one() {
        let config = |space: &str| {
            sweeper_goal::parse(&format!(
                "goal: {{target: cost_per_mtok, price_per_gpu_hour: {{b200: 5, h200: 3.5}}}}
search_space: {space}
evaluator: {{builtin: {{model: qwen3-32b-fp8, gpu: h200}}}}"
            ))
            .unwrap()
        };
        let topology = config("{gpu_budget: 8, topology: {model: qwen3-32b-fp8, gpu: b200}}");
        assert_eq!(builtin_gpu(&topology).as_deref(), Some("b200"));
        let flat = config("{gpu_budget: 8, parameters: {tp: {values: [1, 2]}}}");
        assert_eq!(builtin_gpu(&flat).as_deref(), Some("h200"));
    }

    #[test]
    fn the_front_kept_as_points_arrive_has_the_size_of_the_front_of_them_all() {
        // small integer grids force ties and duplicates; +-inf and -0.0 are values too
        let levels = [f64::NEG_INFINITY, -1.0, -0.0, 0.0, 1.0, 2.0, f64::INFINITY];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 33) % n as u64) as usize
        };
        for case in 0..300 {
            let d = 1 + case % 4;
            let directions: Vec<Direction> = (0..d)
                .map(|k| {
                    if (case + k) % 3 == 0 {
                        Direction::Minimize
                    } else {
                        Direction::Maximize
                    }
                })
                .collect();
            let mut front = Vec::new();
            let mut all: Vec<f64> = Vec::new();
            for _ in 0..(5 + next(40)) {
                let grid = 2 + case % 5;
                let point: Vec<f64> = (0..d)
                    .map(|_| levels[next(grid.min(levels.len()))])
                    .collect();
                all.extend_from_slice(&point);
                add_to_front(&mut front, point, &directions);
                let whole = sweeper_score::front::nondominated(&all, d, &directions).unwrap();
                assert_eq!(front.len(), whole.len(), "case {case}: {all:?}");
            }
        }
    }
}
