//! `sweeper.recommend`: the fewest-GPU configuration that serves a request rate under the
//! SLA, from a sweep or from reports, as `sweeper recommend --format json` answers
//! ([`sweeper_score::recommend`]).

use crate::config;
use crate::convert;
use crate::score::row;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::path::PathBuf;
use sweeper_score::{Candidate, RecommendOptions, Scorer, is_feasible, recommend as answer};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(recommend, m)?)?;
    Ok(())
}

/// The fewest-GPU way to serve `rate` requests a second under the config's SLA, as
/// `sweeper recommend --config CONFIG SOURCE --rate RATE --format json` answers (the same
/// dict). `source`: a sweep's output directory or its `journal.jsonl` (its feasible trials,
/// re-scored under `config`), or a list of `{"config": ..., "report": ...}` rows as
/// `score` takes (those over the GPU budget or a strict SLA are left out).
/// `scale_replicas`: let k copies of a candidate serve k times its goodput with k times its
/// GPUs (only when the evaluator is linear in replicas). The answer's `outcome` is
/// `"found"` (`best`, `runner_ups`) or `"none_serves"` (`best_goodput`, `failed_bounds`).
#[pyfunction]
#[pyo3(signature = (config, source, rate, scale_replicas=false, runner_ups=3))]
fn recommend<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyAny>,
    source: &Bound<'py, PyAny>,
    rate: f64,
    scale_replicas: bool,
    runner_ups: usize,
) -> PyResult<Bound<'py, PyAny>> {
    if !(rate.is_finite() && rate > 0.0) {
        return Err(PyValueError::new_err(format!(
            "rate must be a number of requests per second > 0, got {rate}"
        )));
    }
    let cfg = config::load(py, config)?.config;
    let candidates = match source.extract::<PathBuf>() {
        Ok(path) => from_sweep(&cfg, path)?,
        Err(_) => from_rows(&cfg, source)?,
    };
    let options = RecommendOptions {
        rate_rps: rate,
        scale_replicas,
        runner_ups,
    };
    let json = serde_json::to_value(answer(&candidates, cfg.goal.sla(), options))
        .map_err(|e| PyRuntimeError::new_err(format!("cannot convert the answer: {e}")))?;
    convert::to_py(py, &json)
}

/// A sweep's feasible candidates, re-scored under `cfg`.
fn from_sweep(cfg: &sweeper_goal::SweepConfig, path: PathBuf) -> PyResult<Vec<Candidate>> {
    let journal = if path.is_dir() {
        path.join("journal.jsonl")
    } else {
        path
    };
    let result = sweeper_engine::run::rescore_journal(cfg, &journal).map_err(|e| {
        if e.is_io() {
            PyOSError::new_err(e.to_string())
        } else {
            PyValueError::new_err(e.to_string())
        }
    })?;
    Ok(result.evaluated)
}

/// Report rows scored under `cfg`, those within the budget and the strict SLA.
fn from_rows(cfg: &sweeper_goal::SweepConfig, rows: &Bound<'_, PyAny>) -> PyResult<Vec<Candidate>> {
    let gpu = sweeper_engine::run::builtin_gpu(cfg);
    let scorer = Scorer::new(&cfg.goal).with_default_gpu(gpu.as_deref());
    let budget = cfg.search_space.gpu_budget as f64;
    let mut out = Vec::new();
    for (i, item) in rows.try_iter()?.enumerate() {
        let (mut config, report) = row(&item?, i)?;
        sweeper_engine::run::fill_used_gpus(&mut config, cfg.search_space.used_gpus.as_ref());
        let c = scorer
            .candidate(i, config, &report)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        if is_feasible(c.used_gpus, budget) && scorer.over_sla(&report).is_none() {
            out.push(c);
        }
    }
    Ok(out)
}
