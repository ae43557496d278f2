//! `sweeper.export`: trials of a finished sweep as deployments, as `sweeper export` writes
//! them (the rendering is `sweeper-export`'s).

use crate::convert;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::{Path, PathBuf};
use sweeper_export::{Api, Backend, ExportError, ExportOptions};
use sweeper_tables::ResultFile;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(export, m)?)?;
    Ok(())
}

fn export_error(e: &ExportError) -> PyErr {
    if e.is_io() {
        PyOSError::new_err(e.to_string())
    } else {
        PyValueError::new_err(e.to_string())
    }
}

/// Reads a sweep's result: its output directory or result.json (a path), or the content
/// of a result.json (a dict).
pub(crate) fn read_result(obj: &Bound<'_, PyAny>) -> PyResult<(ResultFile, String)> {
    if let Ok(d) = obj.cast::<PyDict>() {
        let value = serde_json::Value::Object(convert::dict_to_json(d, "the result")?);
        let result: ResultFile = serde_json::from_value(value).map_err(|e| {
            PyValueError::new_err(format!(
                "not the content of a sweeper result.json ({e}); give the sweep's output directory (sweeper.run(..., out=DIR)) or its result.json"
            ))
        })?;
        return Ok((result, "a result".to_owned()));
    }
    let path: PathBuf = obj.extract().map_err(|_| {
        PyValueError::new_err(
            "give a sweep's output directory or its result.json (a path), or a result.json's content (a dict)",
        )
    })?;
    let (file, name) = if path.is_dir() {
        (path.join("result.json"), path.display().to_string())
    } else {
        let dir = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
        (path.clone(), dir.display().to_string())
    };
    let text = std::fs::read_to_string(&file)
        .map_err(|e| PyOSError::new_err(format!("{}: {e}", file.display())))?;
    let result: ResultFile = serde_json::from_str(&text).map_err(|e| {
        PyValueError::new_err(format!(
            "{}: not a sweeper result.json: {e}",
            file.display()
        ))
    })?;
    Ok((result, name))
}

/// Writes `out/trial-ID/` (`dgd.yaml`, `launch.sh`, `candidate.json`) for each trial id,
/// as `sweeper export --trial ID` does; returns the folders. Every trial is rendered
/// before anything is written.
#[pyfunction]
#[pyo3(signature = (result_or_dir, trial_ids, out, *, api=None, backend=None, gpus_per_node=None, model=None, image=None, namespace=None, allow_unmapped=false))]
#[allow(clippy::too_many_arguments)] // the keyword arguments of a Python signature
fn export<'py>(
    py: Python<'py>,
    result_or_dir: &Bound<'py, PyAny>,
    trial_ids: Vec<u64>,
    out: PathBuf,
    api: Option<&str>,
    backend: Option<&str>,
    gpus_per_node: Option<u64>,
    model: Option<String>,
    image: Option<String>,
    namespace: Option<String>,
    allow_unmapped: bool,
) -> PyResult<Bound<'py, PyList>> {
    let (result, source) = read_result(result_or_dir)?;
    // The arguments over the sweep's `export:` block over the defaults.
    let mut options = ExportOptions::of_result(&result);
    match api {
        None => {}
        Some("v1beta1") => options.api = Api::V1beta1,
        Some("v1alpha1") => options.api = Api::V1alpha1,
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "api={other:?}: give \"v1beta1\" or \"v1alpha1\""
            )));
        }
    }
    if let Some(b) = backend {
        options.backend = Backend::parse(b).ok_or_else(|| {
            PyValueError::new_err(format!(
                "backend={b:?}: give \"vllm\", \"sglang\" or \"trtllm\""
            ))
        })?;
    }
    if let Some(n) = gpus_per_node {
        if n == 0 {
            return Err(PyValueError::new_err(
                "gpus_per_node=0: give the GPUs one node has, e.g. 8",
            ));
        }
        options.gpus_per_node = n;
    }
    if model.is_some() {
        options.model = model;
    }
    if image.is_some() {
        options.image = image;
    }
    if namespace.is_some() {
        options.namespace = namespace;
    }
    options.allow_unmapped = allow_unmapped;
    if trial_ids.is_empty() {
        return Err(PyValueError::new_err(
            "trial_ids is empty: give the ids to export (they are in trials.csv, the result's `trials` and the plot's tooltips)",
        ));
    }
    let selection = sweeper_export::Selection {
        trials: trial_ids,
        ..sweeper_export::Selection::default()
    };
    let ids = sweeper_export::select(&result, &selection).map_err(|e| export_error(&e))?;
    let bundles = ids
        .iter()
        .map(|id| {
            sweeper_export::export_trial(&result, *id, &options, &source)
                .map_err(|e| PyValueError::new_err(format!("trial {id}: {e}")))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let folders = PyList::empty(py);
    for bundle in &bundles {
        let folder = sweeper_export::write_bundle(&out, bundle).map_err(|e| export_error(&e))?;
        folders.append(folder.display().to_string())?;
    }
    Ok(folders)
}
