//! `sweeper.score`: rank (scalar goal) or front (pareto goal) reports you already have, as
//! `sweeper score` does with a JSON array of `{"config": ..., "report": ...}` rows.

use crate::config;
use crate::convert;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;
use sweeper_score::{Candidate, Report, Scorer, is_feasible, pareto_front, rank, used_gpus};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(score, m)?)?;
    Ok(())
}

/// A candidate as a dict: `index`, `config`, `used_gpus`, `score`, `metrics` and, for a
/// pareto goal, `objectives` (objective name → raw value, in the goal's order). Numbers
/// are Python floats (`inf` stays `inf`).
pub(crate) fn candidate_dict<'py>(py: Python<'py>, c: &Candidate) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("index", c.index)?;
    d.set_item("config", convert::map_to_py(py, &c.config)?)?;
    d.set_item("used_gpus", c.used_gpus)?;
    d.set_item("score", c.score)?;
    let metrics = PyDict::new(py);
    for (k, v) in &c.metrics {
        metrics.set_item(k, v)?;
    }
    d.set_item("metrics", metrics)?;
    if let Some(objectives) = &c.objectives {
        let o = PyDict::new(py);
        for (objective, v) in objectives {
            o.set_item(objective.name(), v)?;
        }
        d.set_item("objectives", o)?;
    }
    if let Some(satisfying) = c.satisfying {
        d.set_item("satisfying", satisfying)?;
    }
    Ok(d)
}

/// One `{"config": {...}, "report": {...}}` row, checked as `sweeper score` checks a JSON
/// row: only those two keys, `config` optional, `used_gpus` a count, no NaN in the report.
pub(crate) fn row(
    item: &Bound<'_, PyAny>,
    i: usize,
) -> PyResult<(serde_json::Map<String, Value>, Report)> {
    let at = |detail: String| PyValueError::new_err(format!("reports[{i}]: {detail}"));
    let d = item.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!(
            "reports[{i}] must be a dict {{\"config\": {{...}}, \"report\": {{...}}}}"
        ))
    })?;
    let mut object = convert::dict_to_json(d, &format!("reports[{i}]"))?;
    if let Some(key) = object.keys().find(|k| *k != "config" && *k != "report") {
        return Err(at(format!(
            "unknown key `{key}`; a row has only `config` and `report`"
        )));
    }
    let config = match object.remove("config") {
        None => serde_json::Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(at("`config` must be a dict".to_owned())),
    };
    let report = object
        .remove("report")
        .ok_or_else(|| at("missing `report`".to_owned()))?;
    let report = Report::from_json(i, &report).map_err(|e| at(e.to_string()))?;
    used_gpus(i, &config).map_err(|e| at(e.to_string()))?;
    Ok((config, report))
}

/// Scores reports you already have against a config's goal and GPU budget, as `sweeper
/// score` does: `reports` is a list of `{"config": {...}, "report": {...}}` dicts, each
/// row's `index` its position. Rows over `search_space.gpu_budget` are dropped (a row
/// without `used_gpus` gets the config's `search_space.used_gpus` rule, else 0). Returns
/// candidate dicts: ranked best first for a scalar goal (ties to fewer GPUs, then input
/// order; `min_gpus` puts the rows that reach its floor first, fewest GPUs first), or the
/// Pareto front sorted by the last objective for a pareto goal; empty when no row is
/// feasible. The goal's price (`cost_per_mtok`) is applied, and with `strict_sla` the rows
/// over a bound are dropped too.
#[pyfunction]
#[pyo3(signature = (config, reports))]
fn score<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyAny>,
    reports: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let cfg = config::load(py, config)?.config;
    let goal = &cfg.goal;
    let objectives = goal.objectives();
    let budget = cfg.search_space.gpu_budget as f64;
    let gpu = sweeper_engine::run::builtin_gpu(&cfg);
    let scorer = Scorer::new(goal).with_default_gpu(gpu.as_deref());
    let mut feasible = Vec::new();
    for (i, item) in reports.try_iter()?.enumerate() {
        let (mut config, report) = row(&item?, i)?;
        sweeper_engine::run::fill_used_gpus(&mut config, cfg.search_space.used_gpus.as_ref());
        let c = scorer
            .candidate(i, config, &report)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        if is_feasible(c.used_gpus, budget) && scorer.over_sla(&report).is_none() {
            feasible.push(c);
        }
    }
    let shown = if goal.is_pareto() {
        pareto_front(&feasible, objectives).map_err(|e| PyValueError::new_err(e.to_string()))?
    } else {
        rank(feasible)
    };
    let out = PyList::empty(py);
    for c in &shown {
        out.append(candidate_dict(py, c)?)?;
    }
    Ok(out)
}
