//! The output directory of a run: `result.json`, `result.csv` (the front or ranking),
//! `trials.csv` (every trial) and the plot, each written to a temporary name and renamed,
//! so that a killed run never leaves a truncated file.
//!
//! Everything a report said is kept: a candidate of `result.json` carries, beside the
//! known metrics of [`sweeper_score::Candidate`], the other numbers of its trial's report
//! (`extra`) and its strings (`labels`); both CSVs have a column per metric and per label
//! seen. A report key whose name is already a column (a config key such as `concurrency`,
//! `used_gpus`, `score`) is written under `report.KEY`, so that column names stay unique and
//! nothing is dropped. Both CSVs are written by [`crate::csv_out`] (quoted by the `csv`
//! crate, cells neutralised against formula injection, `±inf` as `inf` / `-inf`).

use crate::plot::{Chart, Outcome, Param, PlotObjective, PlotOptions, PlotPoint};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use sweeper_engine::run::{RunError, RunResult, Status, Tallies, TrialResult};
use sweeper_goal::{Direction, Load, Objective, Price, SweepConfig, Workload};
use sweeper_score::{Candidate, Report, Scorer, objective_value};

/// One objective of the goal, as written in `result.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectiveInfo {
    /// The objective's name.
    pub name: String,
    /// `maximize` or `minimize` in the file.
    pub direction: Direction,
    /// Units, for labels.
    pub unit: String,
}

/// What the candidates of a `result.json` are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResultKind {
    /// The Pareto front of a pareto goal, `"front"` in the file.
    Front,
    /// The ranking of a scalar goal, `"ranking"` in the file.
    Ranking,
}

/// A failure reason and how often it occurred.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReasonCount {
    /// The reason.
    pub reason: String,
    /// How many trials it ended.
    pub count: u64,
}

/// The content of `result.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultFile {
    /// The sweeper version that wrote it.
    pub sweeper_version: String,
    /// The seed of the run.
    pub seed: u64,
    /// The plot title.
    pub title: String,
    /// `"front"` (pareto goal) or `"ranking"` (scalar goal).
    pub kind: ResultKind,
    /// The goal's target name.
    pub target: String,
    /// The effective objectives.
    pub objectives: Vec<ObjectiveInfo>,
    /// The front or the ranking: [`Candidate`] objects, each with `extra` (the numbers of
    /// its report beyond [`KNOWN_METRICS`](sweeper_score::KNOWN_METRICS), `±inf` as
    /// `"inf"` / `"-inf"`) and `labels` (the strings of its report) when it has any.
    pub candidates: Vec<Value>,
    /// Every feasible candidate (once per configuration), in trial order, as `candidates`.
    pub evaluated: Vec<Value>,
    /// Every trial with its status, its report's numbers (`metrics`) and strings (`labels`).
    pub trials: Vec<TrialResult>,
    /// Counts of every outcome.
    pub tallies: Tallies,
    /// The most frequent failure reasons.
    pub top_reasons: Vec<ReasonCount>,
    /// The resolved config.
    pub config: Value,
    /// Configuration keys in the order tables show them: the search space's parameters as
    /// written, then the load the candidate ran at.
    #[serde(default)]
    pub columns: Vec<String>,
}

impl ResultFile {
    /// Builds the file's content from a run's result.
    pub fn new(config: &SweepConfig, result: &RunResult, title: &str) -> ResultFile {
        // A candidate's index is the id of the trial that evaluated it.
        let evaluated_by: HashMap<u64, &TrialResult> = result
            .trials
            .iter()
            .filter(|t| t.status == Status::Feasible)
            .map(|t| (t.trial, t))
            .collect();
        let to_values = |cands: &[Candidate]| {
            cands
                .iter()
                .map(|c| candidate_value(c, evaluated_by.get(&(c.index as u64)).copied()))
                .collect()
        };
        ResultFile {
            sweeper_version: env!("CARGO_PKG_VERSION").to_owned(),
            seed: config.sweep.seed,
            title: title.to_owned(),
            kind: if result.pareto {
                ResultKind::Front
            } else {
                ResultKind::Ranking
            },
            target: config.goal.target().name().to_owned(),
            objectives: result
                .objectives
                .iter()
                .map(|o| ObjectiveInfo {
                    name: o.name().to_owned(),
                    direction: o.direction(),
                    unit: o.unit().to_owned(),
                })
                .collect(),
            candidates: to_values(&result.candidates),
            evaluated: to_values(&result.evaluated),
            trials: result.trials.clone(),
            tallies: result.tallies,
            top_reasons: result
                .reasons
                .iter()
                .map(|(reason, count)| ReasonCount {
                    reason: reason.clone(),
                    count: *count,
                })
                .collect(),
            config: config.to_json_value(),
            columns: config
                .search_space
                .parameters
                .iter()
                .map(|(name, _)| name.clone())
                .chain(
                    ["kv_load_ratio", "concurrency", "kv_capacity_tokens"]
                        .into_iter()
                        .filter(|k| !config.search_space.parameters.iter().any(|(n, _)| n == k))
                        .map(str::to_owned),
                )
                .collect(),
        }
    }

    /// The configuration keys present in the candidates (GPU count aside), in the order of
    /// `columns`, then any others alphabetically.
    pub fn config_keys(&self) -> Vec<String> {
        self.ordered_keys(
            self.candidates
                .iter()
                .filter_map(|c| c.get("config").and_then(Value::as_object)),
        )
    }

    /// The configuration keys present in any trial (GPU count aside), ordered as
    /// [`config_keys`](Self::config_keys).
    pub fn trial_config_keys(&self) -> Vec<String> {
        self.ordered_keys(self.trials.iter().map(|t| &t.config))
    }

    fn ordered_keys<'a>(
        &self,
        configs: impl Iterator<Item = &'a Map<String, Value>>,
    ) -> Vec<String> {
        let mut present: Vec<String> = Vec::new();
        for map in configs {
            for k in map.keys() {
                if k != "used_gpus" && !present.contains(k) {
                    present.push(k.clone());
                }
            }
        }
        let mut keys: Vec<String> = self
            .columns
            .iter()
            .filter(|k| present.contains(k))
            .cloned()
            .collect();
        present.sort();
        for k in present {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        keys
    }
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so
/// that a kill never leaves a truncated file; on an error (a full disk) the temporary file
/// is removed.
pub fn write_file_atomic(path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let written = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    written.map_err(|e| {
        // a full disk: leave no temporary file behind
        let _ = std::fs::remove_file(&tmp);
        RunError::io(path, e)
    })
}

/// Writes `result.json`, `result.csv` (the front or ranking, [`candidates_csv`]),
/// `trials.csv` (every trial, [`trials_csv`]) and the plot (`front.svg` for a pareto goal,
/// `best.svg` for a scalar one) into `out_dir`; the plot as [`write_outputs_with`] draws
/// it with default options.
pub fn write_outputs(
    out_dir: &Path,
    config: &SweepConfig,
    result: &RunResult,
    title: &str,
) -> Result<(), RunError> {
    write_outputs_with(out_dir, config, result, title, &PlotOptions::default())
}

/// [`write_outputs`] with the plot drawn under `options` (labels, colours, scales).
pub fn write_outputs_with(
    out_dir: &Path,
    config: &SweepConfig,
    result: &RunResult,
    title: &str,
    options: &PlotOptions,
) -> Result<(), RunError> {
    let file = ResultFile::new(config, result, title);
    let json = serde_json::to_string_pretty(&file)
        .map_err(|e| RunError::io(&out_dir.join("result.json"), std::io::Error::other(e)))?;
    write_file_atomic(&out_dir.join("result.json"), json.as_bytes())?;
    write_file_atomic(
        &out_dir.join("result.csv"),
        candidates_csv(&file).as_bytes(),
    )?;
    write_file_atomic(&out_dir.join("trials.csv"), trials_csv(&file).as_bytes())?;
    let (name, svg) = plot_of(&file, options);
    write_file_atomic(&out_dir.join(name), svg.as_bytes())?;
    Ok(())
}

/// The plot of a result, named as the output directory names it: the frontier
/// (`front.svg`) for a front, the best score by trial (`best.svg`) for a ranking.
pub fn plot_of(file: &ResultFile, options: &PlotOptions) -> (&'static str, String) {
    let chart = chart_of(file);
    if file.kind == ResultKind::Front {
        ("front.svg", crate::plot::frontier_svg(&chart, options))
    } else {
        ("best.svg", crate::plot::best_by_trial_svg(&chart, options))
    }
}

/// What the plot of a result shows: every trial but cache hits (which repeat one) with its
/// outcome, objective values (from its report, so that an over-budget trial that ran is
/// placed too), parameters and GPUs; the front; the SLA lines; and a subtitle of the
/// workload, load and SLA from the result's config.
pub fn chart_of(file: &ResultFile) -> Chart {
    let objectives: Vec<PlotObjective> = file
        .objectives
        .iter()
        .map(|o| PlotObjective::new(o.name.clone(), o.unit.clone(), o.direction))
        .collect();
    let goal_objectives: Vec<Option<Objective>> = file
        .objectives
        .iter()
        .map(|o| Objective::from_name(&o.name))
        .collect();
    let on_front: HashSet<u64> = file
        .candidates
        .iter()
        .filter_map(|c| c.get("index").and_then(Value::as_u64))
        .collect();
    let evaluated: HashMap<u64, &Value> = file
        .evaluated
        .iter()
        .filter_map(|c| Some((c.get("index")?.as_u64()?, c)))
        .collect();
    let keys = file.trial_config_keys();
    let front = file.kind == ResultKind::Front;
    let config = sweeper_goal::parse(&file.config.to_string()).ok();
    let value_of =
        |t: &TrialResult, report: &Report, o: Objective| goal_value(config.as_ref(), t, report, o);
    let checks = match &config {
        Some(c) => c.goal.sla().map_or_else(Vec::new, |sla| {
            crate::plot::sla_checks(sla, c.goal.strict_sla(), &objectives)
        }),
        None => Vec::new(),
    };
    let points = file
        .trials
        .iter()
        .filter(|t| !matches!(t.status, Status::CacheHit | Status::Pending))
        .map(|t| {
            let outcome = match t.status {
                Status::Feasible => Outcome::Feasible,
                Status::Infeasible
                    if t.reason
                        .as_deref()
                        .is_some_and(|r| r.starts_with("over gpu_budget")) =>
                {
                    Outcome::OverBudget
                }
                Status::Infeasible => Outcome::Infeasible,
                Status::Unsupported => Outcome::Unsupported,
                _ => Outcome::Failed,
            };
            let from_report = (!t.metrics.is_empty())
                .then(|| Report::from_map(0, t.metrics.clone()).ok())
                .flatten()
                .and_then(|report| {
                    goal_objectives
                        .iter()
                        .map(|o| o.map(|o| value_of(t, &report, o)))
                        .collect::<Option<Vec<f64>>>()
                });
            let from_candidate = || {
                let c = evaluated.get(&t.trial)?;
                file.objectives
                    .iter()
                    .map(|o| json_number_value(c.get("objectives")?.get(&o.name)?))
                    .collect::<Option<Vec<f64>>>()
            };
            let values = from_report.or_else(from_candidate);
            let mut point = PlotPoint::new(t.trial, outcome, values);
            point.on_front = front && outcome == Outcome::Feasible && on_front.contains(&t.trial);
            point.params = keys
                .iter()
                .filter_map(|k| Some((k.clone(), Param::from_json(t.config.get(k)?)?)))
                .collect();
            point.gpus = t.config.get("used_gpus").and_then(Value::as_f64);
            point.reason.clone_from(&t.reason);
            point.check_sla(&checks, |k| t.metrics.get(k).copied());
            point
        })
        .collect();
    let mut chart = Chart::new(file.title.clone(), objectives);
    chart.points = points;
    chart.checks = checks;
    if let Some(config) = &config {
        chart.subtitle = subtitle(config, &file.title, file.trials.len());
        if let Some(sla) = config.goal.sla() {
            chart.bounds = crate::plot::sla_bounds(sla, &chart.objectives);
        }
        if !front {
            chart.floor = config.goal.min_goodput_rps();
        }
    }
    chart
}

/// The value of a goal objective for a trial's report as the run scored it: with the
/// goal's price for `cost_per_mtok` (at the trial's GPU, or the built-in evaluator's), so
/// that the plot shows the dollars `result.json` holds; the value at $1 per GPU-hour when
/// the config is unreadable or has no price for the trial's GPU.
fn goal_value(
    config: Option<&SweepConfig>,
    trial: &TrialResult,
    report: &Report,
    objective: Objective,
) -> f64 {
    let Some(config) = config else {
        return objective_value(report, objective);
    };
    let gpu = sweeper_engine::run::builtin_gpu(config);
    let index = usize::try_from(trial.trial).unwrap_or(usize::MAX);
    Scorer::new(&config.goal)
        .with_default_gpu(gpu.as_deref())
        .value(index, &trial.config, report, objective)
        .unwrap_or_else(|_| objective_value(report, objective))
}

/// The line under a plot's title: ISL/OSL and load (or the trace), the GPU budget when the
/// title does not say it, the SLA, the number of trials.
pub fn subtitle(config: &SweepConfig, title: &str, trials: usize) -> String {
    let mut parts: Vec<String> = Vec::new();
    match &config.workload {
        Some(Workload::Synthetic { isl, osl, load, .. }) => {
            parts.push(format!("ISL {isl} · OSL {osl}"));
            parts.push(match load {
                Load::RequestRate(r) => format!("{r} requests/s"),
                Load::Concurrency(c) => format!("concurrency {c}"),
                Load::KvLoadRatio(r) => format!("load {r} of KV capacity"),
                Load::KvLoadRange { min, max } => {
                    format!("load {min}–{max} of KV capacity (searched)")
                }
                Load::Searched(l) => match config.searched_load_bounds() {
                    Some((_, lo, hi)) => format!("{} {lo}–{hi} (searched)", l.key()),
                    None => format!("{} (searched)", l.key()),
                },
            });
        }
        Some(Workload::Trace {
            trace_path,
            replay_concurrency,
        }) => {
            let name = trace_path.file_name().map_or_else(
                || trace_path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            parts.push(match replay_concurrency {
                Some(c) => format!("trace {name} at concurrency {c}"),
                None => format!("trace {name}"),
            });
        }
        None => {}
    }
    if !title.contains("GPU budget") {
        parts.push(format!("GPU budget {}", config.search_space.gpu_budget));
    }
    if let Some(sla) = config.goal.sla() {
        let text = crate::plot::sla_text(sla);
        if !text.is_empty() {
            parts.push(text);
        }
    }
    if let Some(floor) = config.goal.min_goodput_rps() {
        parts.push(format!("goodput floor {floor} req/s"));
    }
    if let Some(price) = config.goal.price_per_gpu_hour() {
        parts.push(price_text(price));
    }
    if trials > 0 {
        parts.push(format!("{trials} trials"));
    }
    parts.join(" · ")
}

/// The price `cost_per_mtok` is reckoned at, for a subtitle: `$3.5 per GPU-hour`, or
/// `$ per GPU-hour: b200 5, h200 3.5`.
fn price_text(price: &Price) -> String {
    match price {
        Price::Flat(p) => format!("${p} per GPU-hour"),
        Price::PerGpu(map) => {
            let each: Vec<String> = map.iter().map(|(gpu, p)| format!("{gpu} {p}")).collect();
            format!("$ per GPU-hour: {}", each.join(", "))
        }
    }
}

/// A candidate as `result.json` writes it: the [`Candidate`] object, and from the report of
/// the trial that evaluated it the numbers beyond the candidate's `metrics` (`extra`) and
/// the strings (`labels`), each only when there are some.
fn candidate_value(candidate: &Candidate, trial: Option<&TrialResult>) -> Value {
    let mut value = serde_json::to_value(candidate).unwrap_or(Value::Null);
    if let (Value::Object(object), Some(trial)) = (&mut value, trial) {
        let extra: Map<String, Value> = trial
            .metrics
            .iter()
            .filter(|(k, _)| !candidate.metrics.contains_key(*k))
            .map(|(k, x)| (k.clone(), sweeper_score::json_f64::to_value(*x)))
            .collect();
        if !extra.is_empty() {
            object.insert("extra".into(), Value::Object(extra));
        }
        if !trial.labels.is_empty() {
            let labels = trial
                .labels
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            object.insert("labels".into(), Value::Object(labels));
        }
    }
    value
}

/// Appends the column of report key `key`: its own name, or `report.KEY` when a column of
/// that name is there already (a config key, `used_gpus`, `score` ...).
fn push_report_column(header: &mut Vec<String>, key: &str) {
    let mut name = key.to_owned();
    while header.contains(&name) {
        name = format!("report.{name}");
    }
    header.push(name);
}

/// The keys of the JSON objects under `field` of `values`, sorted, each once.
fn object_keys<'a>(values: impl Iterator<Item = &'a Value>, fields: &[&str]) -> Vec<String> {
    let mut keys = BTreeSet::new();
    for v in values {
        for field in fields {
            if let Some(Value::Object(map)) = v.get(*field) {
                keys.extend(map.keys().cloned());
            }
        }
    }
    keys.into_iter().collect()
}

/// The candidates (the front or the ranking) as CSV: position, trial, configuration keys,
/// GPUs, score, objectives (front), then one column per metric (known or extra) and one per
/// label seen in any candidate, each sorted by name.
pub fn candidates_csv(file: &ResultFile) -> String {
    let config_keys = file.config_keys();
    let metric_keys = object_keys(file.candidates.iter(), &["metrics", "extra"]);
    let label_keys = object_keys(file.candidates.iter(), &["labels"]);
    let mut header: Vec<String> = vec!["position".into(), "trial".into()];
    header.extend(config_keys.iter().cloned());
    header.push("used_gpus".into());
    header.push("score".into());
    header.extend(
        file.objectives
            .iter()
            .filter(|_| file.kind == ResultKind::Front)
            .map(|o| o.name.clone()),
    );
    for k in metric_keys.iter().chain(&label_keys) {
        push_report_column(&mut header, k);
    }
    let rows = file.candidates.iter().enumerate().map(|(pos, c)| {
        let mut row: Vec<String> = vec![(pos + 1).to_string(), cell(c.get("index"))];
        for k in &config_keys {
            row.push(cell(c.get("config").and_then(|m| m.get(k))));
        }
        row.push(cell(c.get("used_gpus")));
        row.push(cell(c.get("score")));
        if file.kind == ResultKind::Front {
            for o in &file.objectives {
                row.push(cell(c.get("objectives").and_then(|m| m.get(&o.name))));
            }
        }
        for k in &metric_keys {
            let known = c.get("metrics").and_then(|m| m.get(k));
            row.push(cell(
                known.or_else(|| c.get("extra").and_then(|m| m.get(k))),
            ));
        }
        for k in &label_keys {
            row.push(cell(c.get("labels").and_then(|m| m.get(k))));
        }
        row
    });
    crate::csv_out::to_string(&header, rows)
}

/// Every trial as CSV, in trial order (feasible, infeasible, failed, unsupported and cache
/// hits alike): trial, status, reason, the configuration keys (the search space's
/// parameters in its order, then the load, then any others), GPUs, score, then one column
/// per metric and one per label seen in any trial, each sorted by name. A cache hit carries
/// the report of the trial it repeats.
pub fn trials_csv(file: &ResultFile) -> String {
    let config_keys = file.trial_config_keys();
    let mut metric_keys = BTreeSet::new();
    let mut label_keys = BTreeSet::new();
    for t in &file.trials {
        metric_keys.extend(t.metrics.keys());
        label_keys.extend(t.labels.keys());
    }
    let mut header: Vec<String> = vec!["trial".into(), "status".into(), "reason".into()];
    header.extend(config_keys.iter().cloned());
    header.push("used_gpus".into());
    header.push("score".into());
    for k in metric_keys.iter().chain(&label_keys) {
        push_report_column(&mut header, k);
    }
    let number = |x: Option<f64>| x.map(crate::csv_out::number).unwrap_or_default();
    let rows = file.trials.iter().map(|t| {
        let mut row: Vec<String> = vec![
            t.trial.to_string(),
            t.status.as_str().to_owned(),
            t.reason.clone().unwrap_or_default(),
        ];
        for k in &config_keys {
            row.push(cell(t.config.get(k)));
        }
        row.push(cell(t.config.get("used_gpus")));
        row.push(number(t.score));
        for k in &metric_keys {
            row.push(number(t.metrics.get(*k).copied()));
        }
        for k in &label_keys {
            row.push(t.labels.get(*k).cloned().unwrap_or_default());
        }
        row
    });
    crate::csv_out::to_string(&header, rows)
}

/// A number of a result file: a JSON number, or `"inf"` / `"-inf"`.
fn json_number_value(v: &Value) -> Option<f64> {
    v.as_f64().or_else(|| {
        v.as_str()
            .and_then(sweeper_score::json_f64::parse_non_finite)
    })
}

fn cell(v: Option<&Value>) -> String {
    crate::csv_out::value(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn trial(id: u64, status: Status, config: Value, report: Value) -> TrialResult {
        let mut metrics = BTreeMap::new();
        let mut labels = BTreeMap::new();
        let (Value::Object(config), Value::Object(report)) = (config, report) else {
            panic!("objects expected");
        };
        for (k, v) in report {
            match v {
                Value::String(s) => match sweeper_score::json_f64::parse_non_finite(&s) {
                    Some(x) => {
                        metrics.insert(k, x);
                    }
                    None => {
                        labels.insert(k, s);
                    }
                },
                other => {
                    metrics.insert(k, other.as_f64().unwrap());
                }
            }
        }
        // `TrialResult` is the engine's (non-exhaustive): built the way a reader of
        // `result.json` builds it
        let mut trial: TrialResult = serde_json::from_value(json!({
            "trial": id,
            "config": config,
            "status": status,
        }))
        .unwrap();
        trial.reason = (status != Status::Feasible).then(|| format!("{} reason", status.as_str()));
        trial.score = (status == Status::Feasible).then_some(f64::NEG_INFINITY);
        trial.metrics = metrics;
        trial.labels = labels;
        trial
    }

    fn candidate(trial: &TrialResult) -> Candidate {
        let report =
            sweeper_score::Report::from_map(trial.trial as usize, trial.metrics.clone()).unwrap();
        sweeper_score::make_candidate(
            trial.trial as usize,
            trial.config.clone(),
            &report,
            &[sweeper_goal::Objective::E2eLatency],
            false,
        )
    }

    /// A ranking of one candidate (trial 1) among trials of every status.
    fn file() -> ResultFile {
        let report = json!({
            "mean_e2e_latency_ms": "inf",
            "my_extra": 3.5,
            "concurrency": 16,
            "note": "=cmd|' /C calc'!A0",
        });
        let config = json!({"tp": 2, "used_gpus": 2, "concurrency": 16});
        let trials = vec![
            trial(
                0,
                Status::Failed,
                json!({"tp": 8, "used_gpus": 8}),
                json!({}),
            ),
            trial(1, Status::Feasible, config.clone(), report.clone()),
            trial(2, Status::CacheHit, config, report),
            trial(3, Status::Unsupported, json!({"tp": 4}), json!({})),
        ];
        let best = candidate(&trials[1]);
        let evaluated_by = HashMap::from([(1, &trials[1])]);
        let value = candidate_value(&best, evaluated_by.get(&1).copied());
        ResultFile {
            sweeper_version: "0".into(),
            seed: 1,
            title: "t".into(),
            kind: ResultKind::Ranking,
            target: "e2e_latency".into(),
            objectives: Vec::new(),
            candidates: vec![value.clone()],
            evaluated: vec![value],
            trials,
            tallies: Tallies::default(),
            top_reasons: Vec::new(),
            config: json!({}),
            columns: vec!["tp".into(), "kv_load_ratio".into(), "concurrency".into()],
        }
    }

    #[test]
    fn a_candidate_keeps_its_reports_extras_and_labels() {
        let c = &file().candidates[0];
        assert_eq!(c["metrics"], json!({"mean_e2e_latency_ms": "inf"}));
        assert_eq!(c["extra"], json!({"concurrency": 16.0, "my_extra": 3.5}));
        assert_eq!(c["labels"], json!({"note": "=cmd|' /C calc'!A0"}));
        assert_eq!(c["score"], json!("-inf"));
        // a candidate whose report holds only known metrics has neither
        let mut t = trial(5, Status::Feasible, json!({}), json!({"gpu_hours": 1}));
        let plain = candidate_value(&candidate(&t), Some(&t));
        assert!(plain.get("extra").is_none() && plain.get("labels").is_none());
        t.labels.insert("model".into(), "m".into());
        assert_eq!(
            candidate_value(&candidate(&t), Some(&t))["labels"],
            json!({"model": "m"})
        );
    }

    #[test]
    fn result_csv_has_every_metric_and_label_and_unique_columns() {
        let text = candidates_csv(&file());
        assert_eq!(
            text,
            "position,trial,tp,concurrency,used_gpus,score,report.concurrency,\
             mean_e2e_latency_ms,my_extra,note\n\
             1,1,2,16,2.0,-inf,16.0,inf,3.5,'=cmd|' /C calc'!A0\n"
        );
    }

    #[test]
    fn trials_csv_has_a_row_per_trial_of_every_status() {
        let text = trials_csv(&file());
        assert_eq!(
            text,
            "trial,status,reason,tp,concurrency,used_gpus,score,report.concurrency,\
             mean_e2e_latency_ms,my_extra,note\n\
             0,failed,failed reason,8,,8,,,,,\n\
             1,feasible,,2,16,2,-inf,16.0,inf,3.5,'=cmd|' /C calc'!A0\n\
             2,cache_hit,cache_hit reason,2,16,2,,16.0,inf,3.5,'=cmd|' /C calc'!A0\n\
             3,unsupported,unsupported reason,4,,,,,,,\n"
        );
    }

    #[test]
    fn the_chart_of_a_result_has_every_trial_but_cache_hits_with_its_outcome_and_values() {
        let mut f = file();
        f.objectives = vec![ObjectiveInfo {
            name: "e2e_latency".into(),
            direction: Direction::Minimize,
            unit: "ms".into(),
        }];
        let mut over = trial(
            4,
            Status::Infeasible,
            json!({"tp": 16, "used_gpus": 16}),
            json!({"mean_e2e_latency_ms": 900}),
        );
        over.reason = Some("over gpu_budget: used_gpus=16 > gpu_budget=8".into());
        f.trials.push(over);
        f.config = json!({"goal": {"target": "e2e_latency", "sla": {"e2e_ms": 1000}},
            "workload": {"isl": 100, "osl": 10, "num_request_ratio": 1, "concurrency": 4},
            "search_space": {"gpu_budget": 8}});
        let chart = chart_of(&f);
        let outcomes: Vec<(u64, Outcome)> =
            chart.points.iter().map(|p| (p.id, p.outcome)).collect();
        assert_eq!(
            outcomes,
            [
                (0, Outcome::Failed),
                (1, Outcome::Feasible),
                (3, Outcome::Unsupported),
                (4, Outcome::OverBudget)
            ]
        );
        // the over-budget trial ran: its report places it
        assert_eq!(chart.points[3].values, Some(vec![900.0]));
        assert_eq!(chart.points[1].values, Some(vec![f64::INFINITY]));
        assert_eq!(chart.points[0].values, None);
        assert_eq!(chart.points[3].gpus, Some(16.0));
        assert_eq!(
            chart.points[1].params,
            [
                ("tp".to_owned(), Param::Number(2.0)),
                ("concurrency".to_owned(), Param::Number(16.0))
            ]
        );
        assert_eq!(chart.bounds.len(), 1);
        assert_eq!(chart.bounds[0].value, 1000.0);
        assert_eq!(
            chart.subtitle,
            "ISL 100 · OSL 10 · concurrency 4 · GPU budget 8 · SLA e2e ≤ 1000 ms · 5 trials"
        );
    }

    #[test]
    fn report_columns_never_take_a_name_twice() {
        let mut header = vec!["score".to_owned(), "report.score".to_owned()];
        push_report_column(&mut header, "score");
        push_report_column(&mut header, "x");
        assert_eq!(
            header,
            ["score", "report.score", "report.report.score", "x"]
        );
    }
}
