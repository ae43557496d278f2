//! `sweeper.read_reports`: the rows `sweeper score` reads from result files (sweeper's own
//! reports, `vllm bench serve`, SGLang `bench_serving`, genai-perf), read by the same reader
//! with the same options ([`sweeper_tables::input::ReportTable`]).

use crate::config;
use crate::convert;
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use std::path::PathBuf;
use sweeper_tables::input::{Gpus, InputError, InputFormat, ReadOptions, ReportTable};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_reports, m)?)?;
    Ok(())
}

/// Reads result files as `sweeper score` reads them and returns their rows as the
/// `[{"config": {...}, "report": {...}}, ...]` that `score` and `recommend` take.
///
/// `paths`: a path, or a list of paths read as one table (shards), each sweeper's reports
/// (CSV, JSON Lines, a JSON array) or a benchmark's result file, told from its content:
/// `vllm bench serve --save-result`, SGLang `bench_serving --output-file` (its bare
/// `Infinity` read as infinity), genai-perf's `profile_export_genai_perf.json`.
/// `input_format`: `"reports"`, `"vllm"`, `"sglang"` or `"genai-perf"` to say which instead.
/// `map`: `{FROM: TO}`, read the key FROM as TO (`--map FROM=TO`). `gpus`: the GPU count of
/// rows without `gpu_hours`, a number or the key that holds it (`--gpus`): it fills
/// `gpu_hours` from the run's duration (a row without one gets one nominal hour).
/// `per_user_from_tpot`: tok/s/user = 1000 / `mean_tpot_ms` in sweeper's reports too (always
/// done for a benchmark's file). `config`: a config whose `search_space.used_gpus` rule
/// counts a benchmark row's GPUs. What the command line notes on stderr (rows given the
/// nominal hour, empty cells) is a `UserWarning`. Raises `OSError` when a file cannot be
/// read and `ValueError` naming the file, line and key for bad content.
#[pyfunction]
#[pyo3(signature = (paths, *, input_format=None, map=None, gpus=None, per_user_from_tpot=false, config=None))]
fn read_reports<'py>(
    py: Python<'py>,
    paths: &Bound<'py, PyAny>,
    input_format: Option<&str>,
    map: Option<&Bound<'py, PyDict>>,
    gpus: Option<&Bound<'py, PyAny>>,
    per_user_from_tpot: bool,
    config: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let paths = path_list(paths)?;
    let format = input_format
        .map(|name| {
            InputFormat::from_name(name).ok_or_else(|| {
                let names: Vec<&str> = InputFormat::ALL.iter().map(|f| f.name()).collect();
                PyValueError::new_err(format!(
                    "input_format: unknown format {}; give one of {}",
                    sweeper_engine::text::quote(name),
                    names.join(", ")
                ))
            })
        })
        .transpose()?;
    let map = match map {
        None => Vec::new(),
        Some(d) => {
            let mut pairs = Vec::with_capacity(d.len());
            for (from, to) in d.iter() {
                let (Ok(from), Ok(to)) = (from.extract::<String>(), to.extract::<String>()) else {
                    return Err(PyTypeError::new_err(
                        "map: give {FROM: TO} with string keys and values",
                    ));
                };
                let pair = ReadOptions::parse_map(&format!("{from}={to}"))
                    .map_err(|e| PyValueError::new_err(format!("map: {e}")))?;
                pairs.push(pair);
            }
            pairs
        }
    };
    let gpus = gpus.map(gpu_count).transpose()?;
    let used_gpus = match config {
        Some(c) => config::load(py, c)?.config.search_space.used_gpus,
        None => None,
    };
    let options = ReadOptions {
        format,
        map,
        gpus,
        per_user_from_tpot,
        used_gpus,
    };
    let mut rows = Vec::new();
    let notes = ReportTable::open(&paths)
        .map(|t| t.with_options(options))
        .and_then(|mut table| table.scan(|row, _| rows.push(row)))
        .map_err(|e| input_error(&e))?;
    for note in notes {
        PyErr::warn(
            py,
            &py.get_type::<pyo3::exceptions::PyUserWarning>(),
            &std::ffi::CString::new(note.replace('\0', " ")).unwrap_or_default(),
            1,
        )?;
    }
    let out = PyList::empty(py);
    for row in rows {
        let d = PyDict::new(py);
        d.set_item("config", convert::map_to_py(py, &row.config)?)?;
        let report = PyDict::new(py);
        for (k, v) in row.report.iter() {
            report.set_item(k, v)?;
        }
        d.set_item("report", report)?;
        out.append(d)?;
    }
    Ok(out)
}

/// One path or a list of them.
fn path_list(paths: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
    if paths.is_instance_of::<PyString>() {
        return Ok(vec![paths.extract()?]);
    }
    if let Ok(one) = paths.extract::<PathBuf>() {
        return Ok(vec![one]);
    }
    let mut out = Vec::new();
    for item in paths.try_iter().map_err(|_| not_paths())? {
        out.push(item?.extract::<PathBuf>().map_err(|_| not_paths())?);
    }
    if out.is_empty() {
        return Err(PyValueError::new_err("paths: give at least one file"));
    }
    Ok(out)
}

fn not_paths() -> PyErr {
    PyTypeError::new_err("paths: give a path (str or os.PathLike) or a list of paths")
}

/// `gpus=`: a positive number, or the key that holds each row's count.
fn gpu_count(v: &Bound<'_, PyAny>) -> PyResult<Gpus> {
    let text = if v.is_instance_of::<PyString>() {
        v.extract::<String>()?
    } else if let Ok(n) = v.extract::<f64>() {
        if v.is_instance_of::<pyo3::types::PyBool>() {
            return Err(PyTypeError::new_err(
                "gpus: give a GPU count or the key that holds it, not a bool",
            ));
        }
        n.to_string()
    } else {
        return Err(PyTypeError::new_err(
            "gpus: give a GPU count (a number) or the key that holds it (a str)",
        ));
    };
    Gpus::parse(&text).map_err(|e| PyValueError::new_err(format!("gpus: {e}")))
}

fn input_error(e: &InputError) -> PyErr {
    if e.is_io() {
        PyOSError::new_err(e.to_string())
    } else {
        PyValueError::new_err(e.to_string())
    }
}
