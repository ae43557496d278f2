//! The output directory of a run: `result.json`, `result.csv` and the plot, each written to
//! a temporary name and renamed, so that a killed run never leaves a truncated file.

use super::{RunError, RunResult, Status, Tallies, TrialResult};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;
use sweeper_goal::SweepConfig;

/// One objective of the goal, as written in `result.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectiveInfo {
    /// The objective's name.
    pub name: String,
    /// `maximize` or `minimize`.
    pub direction: String,
    /// Units, for labels.
    pub unit: String,
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
    pub kind: String,
    /// The goal's target name.
    pub target: String,
    /// The effective objectives.
    pub objectives: Vec<ObjectiveInfo>,
    /// The front or the ranking, as candidates.
    pub candidates: Vec<Value>,
    /// Every feasible candidate (once per configuration), in trial order.
    pub evaluated: Vec<Value>,
    /// Every trial with its status.
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
        let to_values = |cands: &[sweeper_score::Candidate]| {
            cands
                .iter()
                .map(|c| serde_json::to_value(c).unwrap_or(Value::Null))
                .collect()
        };
        ResultFile {
            sweeper_version: env!("CARGO_PKG_VERSION").to_owned(),
            seed: config.sweep.seed,
            title: title.to_owned(),
            kind: if result.pareto { "front" } else { "ranking" }.to_owned(),
            target: config.goal.target().name().to_owned(),
            objectives: result
                .objectives
                .iter()
                .map(|o| ObjectiveInfo {
                    name: o.name().to_owned(),
                    direction: o.direction().as_str().to_owned(),
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
                        .map(str::to_owned),
                )
                .collect(),
        }
    }

    /// The configuration keys present in the candidates (GPU count aside), in the order of
    /// `columns`, then any others alphabetically.
    pub fn config_keys(&self) -> Vec<String> {
        let mut present: Vec<String> = Vec::new();
        for c in &self.candidates {
            if let Some(Value::Object(map)) = c.get("config") {
                for k in map.keys() {
                    if k != "used_gpus" && !present.contains(k) {
                        present.push(k.clone());
                    }
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

/// Writes `result.json`, `result.csv` and the plot (`front.svg` for a pareto goal,
/// `best.svg` for a scalar one) into `out_dir`.
pub fn write_outputs(
    out_dir: &Path,
    config: &SweepConfig,
    result: &RunResult,
    title: &str,
) -> Result<(), RunError> {
    let file = ResultFile::new(config, result, title);
    let json = serde_json::to_string_pretty(&file)
        .map_err(|e| RunError::io(&out_dir.join("result.json"), std::io::Error::other(e)))?;
    write_file_atomic(&out_dir.join("result.json"), json.as_bytes())?;
    write_file_atomic(
        &out_dir.join("result.csv"),
        candidates_csv(&file).as_bytes(),
    )?;
    let (name, svg) = plot_of(&file);
    write_file_atomic(&out_dir.join(name), svg.as_bytes())?;
    Ok(())
}

/// The plot of a result: the frontier for a front, the best score by trial for a ranking.
pub fn plot_of(file: &ResultFile) -> (&'static str, String) {
    if file.kind == "front" {
        let names: Vec<String> = file
            .objectives
            .iter()
            .map(|o| format!("{} ({})", o.name, o.unit))
            .collect();
        let values = |c: &Value| -> Option<Vec<f64>> {
            file.objectives
                .iter()
                .map(|o| c.get("objectives")?.get(&o.name)?.as_f64())
                .collect()
        };
        let points: Vec<Vec<f64>> = file.evaluated.iter().filter_map(values).collect();
        let front_keys: Vec<Option<u64>> = file
            .candidates
            .iter()
            .map(|c| c.get("index").and_then(Value::as_u64))
            .collect();
        let front: Vec<usize> = file
            .evaluated
            .iter()
            .filter(|c| values(c).is_some())
            .enumerate()
            .filter(|(_, c)| front_keys.contains(&c.get("index").and_then(Value::as_u64)))
            .map(|(i, _)| i)
            .collect();
        let series = crate::plot::PlotSeries {
            names,
            points: &points,
            front: &front,
        };
        ("front.svg", crate::plot::frontier_svg(&file.title, &series))
    } else {
        let scores: Vec<(u64, Option<f64>)> = file
            .trials
            .iter()
            .filter(|t| t.status != Status::CacheHit)
            .map(|t| (t.trial, t.score))
            .collect();
        let label = file.objectives.first().map_or_else(
            || "score".to_owned(),
            |o| format!("{} ({})", o.name, o.unit),
        );
        (
            "best.svg",
            crate::plot::best_by_trial_svg(&file.title, &label, &scores),
        )
    }
}

/// The candidates as CSV: position, trial, configuration keys, GPUs, score, objectives and
/// metrics, one column per key seen in any candidate.
pub fn candidates_csv(file: &ResultFile) -> String {
    let config_keys = file.config_keys();
    let mut metric_keys: Vec<String> = Vec::new();
    for c in &file.candidates {
        if let Some(Value::Object(map)) = c.get("metrics") {
            for k in map.keys() {
                if !metric_keys.contains(k) {
                    metric_keys.push(k.clone());
                }
            }
        }
    }
    let mut header: Vec<String> = vec!["position".into(), "trial".into()];
    header.extend(config_keys.iter().cloned());
    header.push("used_gpus".into());
    header.push("score".into());
    header.extend(
        file.objectives
            .iter()
            .filter(|_| file.kind == "front")
            .map(|o| o.name.clone()),
    );
    header.extend(metric_keys.iter().cloned());
    let rows = file.candidates.iter().enumerate().map(|(pos, c)| {
        let mut row: Vec<String> = vec![(pos + 1).to_string(), cell(c.get("index"))];
        for k in &config_keys {
            row.push(cell(c.get("config").and_then(|m| m.get(k))));
        }
        row.push(cell(c.get("used_gpus")));
        row.push(cell(c.get("score")));
        if file.kind == "front" {
            for o in &file.objectives {
                row.push(cell(c.get("objectives").and_then(|m| m.get(&o.name))));
            }
        }
        for k in &metric_keys {
            row.push(cell(c.get("metrics").and_then(|m| m.get(k))));
        }
        row
    });
    crate::csv_out::to_string(&header, rows)
}

fn cell(v: Option<&Value>) -> String {
    crate::csv_out::value(v)
}
