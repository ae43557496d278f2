//! `sweeper.plot`: the chart of a sweep, of reports you already have, or of several of
//! them on one chart, as `sweeper plot` draws it (the drawing is `sweeper-plot`'s).

use crate::config;
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use sweeper_goal::SweepConfig;
use sweeper_plot::{
    Chart, Outcome, Param, PlotObjective, PlotOptions, PlotPoint, ScaleRule, Series,
    best_by_trial_svg, compare_svg, compare_title, frontier_svg, png_from_svg, sla_bounds,
};
use sweeper_score::{Scorer, is_feasible, pareto_front};
use sweeper_tables::{ResultKind, chart_of, subtitle};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(plot, m)?)?;
    Ok(())
}

/// One input read: its chart, whether it is a front, and its default name.
struct Input {
    chart: Chart,
    front: bool,
    name: String,
}

/// Whether a Python value is a list of `{"config": ..., "report": ...}` rows (not a list
/// of inputs).
fn is_rows(obj: &Bound<'_, PyAny>) -> bool {
    obj.cast::<PyList>().is_ok_and(|l| {
        l.len() > 0
            && l.iter().all(|item| {
                item.cast::<PyDict>()
                    .is_ok_and(|d| d.contains("report").unwrap_or(false))
            })
    })
}

/// A sweep's name: its directory's (also for its result.json), else the file's stem.
fn name_of(path: &Path) -> String {
    let dir = if path.is_dir() {
        Some(path)
    } else if path.file_name().is_some_and(|f| f == "result.json") {
        path.parent()
    } else {
        None
    };
    let named = |p: &Path| {
        let p = if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        };
        p.canonicalize()
            .ok()
            .and_then(|c| c.file_name().map(|s| s.to_string_lossy().into_owned()))
            .unwrap_or_else(|| p.display().to_string())
    };
    match dir {
        Some(d) => named(d),
        None => path.file_stem().map_or_else(
            || path.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        ),
    }
}

/// Reads one input: a sweep (its directory or result.json, or that file's content as a
/// dict) or a list of report rows scored under `config`.
fn read(obj: &Bound<'_, PyAny>, config: Option<&SweepConfig>, k: usize) -> PyResult<Input> {
    if is_rows(obj) {
        let cfg = config.ok_or_else(|| {
            PyValueError::new_err(
                "a list of reports needs config=... (a sweep config or its path): its goal names the objectives and the budget",
            )
        })?;
        let (chart, front) = rows_chart(obj, cfg)?;
        return Ok(Input {
            chart,
            front,
            name: format!("reports {}", k + 1),
        });
    }
    let name = if obj.cast::<PyDict>().is_ok() {
        format!("sweep {}", k + 1)
    } else {
        let path: PathBuf = obj.extract().map_err(|_| {
            PyTypeError::new_err(
                "an input is a sweep's output directory or result.json (a path), a result.json's content (a dict), or a list of {\"config\": ..., \"report\": ...} rows",
            )
        })?;
        name_of(&path)
    };
    let (result, _) = crate::export::read_result(obj)?;
    Ok(Input {
        chart: chart_of(&result),
        front: result.kind == ResultKind::Front,
        name,
    })
}

/// Report rows scored as `sweeper.score` scores them: every row a point (over the budget,
/// over a strict SLA, or feasible), the feasible ones' front marked for a pareto goal.
fn rows_chart(rows: &Bound<'_, PyAny>, cfg: &SweepConfig) -> PyResult<(Chart, bool)> {
    let goal = &cfg.goal;
    let objectives = goal.objectives();
    let pareto = goal.is_pareto();
    let budget = cfg.search_space.gpu_budget as f64;
    let gpu = sweeper_engine::run::builtin_gpu(cfg);
    let scorer = Scorer::new(goal).with_default_gpu(gpu.as_deref());
    let mut points = Vec::new();
    let mut feasible = Vec::new();
    for (i, item) in rows.try_iter()?.enumerate() {
        let (mut config, report) = crate::score::row(&item?, i)?;
        sweeper_engine::run::fill_used_gpus(&mut config, cfg.search_space.used_gpus.as_ref());
        let c = scorer
            .candidate(i, config, &report)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let values = if pareto {
            c.objectives
                .as_ref()
                .map(|o| o.iter().map(|(_, v)| *v).collect())
        } else {
            // the score is signed so that higher is better: back to the raw value
            let sign = if objectives
                .first()
                .is_some_and(|o| o.direction() == sweeper_goal::Direction::Minimize)
            {
                -1.0
            } else {
                1.0
            };
            Some(vec![c.score * sign])
        };
        let (outcome, reason) = if !is_feasible(c.used_gpus, budget) {
            (
                Outcome::OverBudget,
                Some(format!(
                    "over gpu_budget: used_gpus={} > {budget}",
                    c.used_gpus
                )),
            )
        } else if let Some(r) = scorer.over_sla(&report) {
            (Outcome::Infeasible, Some(r))
        } else {
            (Outcome::Feasible, None)
        };
        let mut p = PlotPoint::new(i as u64, outcome, values);
        p.params = c
            .config
            .iter()
            .filter(|(k, _)| k.as_str() != "used_gpus")
            .filter_map(|(k, v)| Some((k.clone(), Param::from_json(v)?)))
            .collect();
        p.gpus = Some(c.used_gpus);
        p.reason = reason;
        points.push(p);
        if outcome == Outcome::Feasible {
            feasible.push(c);
        }
    }
    if pareto {
        let front = pareto_front(&feasible, objectives)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let on: HashSet<usize> = front.iter().map(|c| c.index).collect();
        for p in &mut points {
            p.on_front = on.contains(&(p.id as usize));
        }
    }
    let axes: Vec<PlotObjective> = objectives.iter().map(|o| PlotObjective::of(*o)).collect();
    let mut chart = Chart::new("reports", axes);
    "row".clone_into(&mut chart.id_label);
    chart.subtitle = subtitle(cfg, &chart.title, points.len());
    if let Some(sla) = goal.sla() {
        chart.bounds = sla_bounds(sla, &chart.objectives);
    }
    chart.points = points;
    Ok((chart, pareto))
}

/// Picks and orders a chart's axes by name (the last is x).
fn pick_axes(chart: &mut Chart, names: &[String]) -> PyResult<()> {
    let have: Vec<&str> = chart.objectives.iter().map(|o| o.name.as_str()).collect();
    let mut at = Vec::with_capacity(names.len());
    for n in names {
        let k = have.iter().position(|h| h == n).ok_or_else(|| {
            PyValueError::new_err(format!(
                "objectives: `{n}` is not an objective of the input; it has {}",
                have.join(", ")
            ))
        })?;
        at.push(k);
    }
    chart.objectives = at.iter().map(|&k| chart.objectives[k].clone()).collect();
    for p in &mut chart.points {
        if let Some(v) = &p.values {
            p.values = at.iter().map(|&k| v.get(k).copied()).collect();
        }
    }
    let bounds = std::mem::take(&mut chart.bounds);
    chart.bounds = bounds
        .into_iter()
        .filter_map(|mut b| {
            b.objective = at.iter().position(|&k| k == b.objective)?;
            Some(b)
        })
        .collect();
    Ok(())
}

/// A str or a list of str, as a list.
fn strings(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Vec<String>> {
    let Some(obj) = obj else {
        return Ok(Vec::new());
    };
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s
            .extract::<String>()?
            .split(',')
            .map(|k| k.trim().to_owned())
            .filter(|k| !k.is_empty())
            .collect());
    }
    obj.extract::<Vec<String>>()
        .map_err(|_| PyTypeError::new_err(format!("{what}: give a str or a list of str")))
}

/// Draws a sweep, reports or several of them as `sweeper plot` does; returns the SVG text,
/// or writes `out` (`.svg`, or `.png` for an image) and returns its path.
#[pyfunction]
#[pyo3(signature = (inputs, out=None, *, config=None, objectives=None, label=None, color_by=None, scale=None, title=None, names=None))]
#[allow(clippy::too_many_arguments)] // the keyword arguments of a Python signature
fn plot(
    py: Python<'_>,
    inputs: &Bound<'_, PyAny>,
    out: Option<PathBuf>,
    config: Option<&Bound<'_, PyAny>>,
    objectives: Option<&Bound<'_, PyAny>>,
    label: Option<&Bound<'_, PyAny>>,
    color_by: Option<String>,
    scale: Option<&Bound<'_, PyAny>>,
    title: Option<String>,
    names: Option<Vec<String>>,
) -> PyResult<String> {
    let png = match out
        .as_ref()
        .and_then(|o| o.extension())
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .as_deref()
    {
        None if out.is_none() => false,
        Some("svg") => false,
        Some("png") => true,
        _ => {
            return Err(PyValueError::new_err(format!(
                "out={}: give a file name ending in .svg (vector, with tooltips) or .png (an image), or None for the SVG text",
                out.as_ref()
                    .map_or_else(String::new, |o| o.display().to_string())
            )));
        }
    };
    let cfg = match config {
        Some(c) => Some(config::load(py, c)?.config),
        None => None,
    };
    // one input (a path, a result dict, a list of rows) or a list of inputs
    let many = inputs.cast::<PyList>().is_ok() && !is_rows(inputs)
        || inputs.cast::<pyo3::types::PyTuple>().is_ok();
    let mut read_inputs = Vec::new();
    if many {
        for (k, item) in inputs.try_iter()?.enumerate() {
            read_inputs.push(read(&item?, cfg.as_ref(), k)?);
        }
    } else {
        read_inputs.push(read(inputs, cfg.as_ref(), 0)?);
    }
    if read_inputs.is_empty() {
        return Err(PyValueError::new_err(
            "inputs: give a sweep, reports, or a list of them",
        ));
    }
    let axes = strings(objectives, "objectives")?;
    if !axes.is_empty() {
        for input in &mut read_inputs {
            pick_axes(&mut input.chart, &axes)?;
            input.front = input.front && axes.len() >= 2;
        }
    }
    let mut scales = Vec::new();
    for s in strings(scale, "scale")? {
        scales.push(
            s.parse::<ScaleRule>()
                .map_err(|e| PyValueError::new_err(format!("scale: {e}")))?,
        );
    }
    let options = PlotOptions {
        labels: strings(label, "label")?,
        color_by,
        scales,
    };
    let svg = if read_inputs.len() == 1 && names.is_none() {
        let mut input = read_inputs.remove(0);
        if let Some(t) = title {
            input.chart.title = t;
        }
        if input.front {
            frontier_svg(&input.chart, &options)
        } else {
            best_by_trial_svg(&input.chart, &options)
        }
    } else {
        let n = read_inputs.len();
        let names = match names {
            Some(names) if names.len() != n => {
                return Err(PyValueError::new_err(format!(
                    "names: give one per input, in their order ({n} inputs, {} names)",
                    names.len()
                )));
            }
            Some(names) => names,
            None => read_inputs.iter().map(|i| i.name.clone()).collect(),
        };
        if options.color_by.is_some() {
            return Err(PyValueError::new_err(
                "color_by: with two or more inputs each input has its own colour; plot one input to colour its points by a parameter",
            ));
        }
        let series: Vec<Series> = read_inputs
            .into_iter()
            .zip(names)
            .map(|(i, name)| Series::new(name, i.chart))
            .collect();
        let title = title.unwrap_or_else(|| compare_title(&series));
        compare_svg(&title, &series, &options).map_err(|e| PyValueError::new_err(e.to_string()))?
    };
    let Some(out) = out else {
        return Ok(svg);
    };
    let bytes = if png {
        png_from_svg(&svg).map_err(|e| PyValueError::new_err(format!("{}: {e}", out.display())))?
    } else {
        svg.into_bytes()
    };
    std::fs::write(&out, bytes)
        .map_err(|e| PyOSError::new_err(format!("{}: {e}", out.display())))?;
    Ok(out.display().to_string())
}
