//! Configs: `load_config`, `validate`, the `Config` and `Space` classes, and
//! `sweeper.ConfigError`.
//!
//! A config is read with the checks of `sweeper validate`, in one pass as it makes them:
//! `sweeper_goal::parse_partial` (every block's first failure) and
//! `sweeper_eval::check_runnable_partial` on the blocks that passed (the search space the
//! sampler can hold, the built-in model's presets, the command's program), so that a
//! misspelt target, a misspelt workload key and an unknown GPU come in one error. A failure
//! is one `ConfigError` whose message is the command's (`FILE: invalid config: ...`, one
//! line per failure) and whose attributes are the first failure's; `errors` lists them all.

use crate::ConfigError as PyConfigError;
use crate::convert;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use std::fmt::Write as _;
use std::path::PathBuf;
use sweeper_goal::{ConfigError, Direction, SweepConfig};
use sweeper_sampler::{ParamSpec, SearchSpace};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Config>()?;
    m.add_class::<Space>()?;
    m.add_function(wrap_pyfunction!(load_config, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    Ok(())
}

/// A validated sweep config (see `load_config`).
#[pyclass(module = "sweeper", frozen, name = "Config")]
pub(crate) struct Config {
    pub(crate) config: SweepConfig,
    /// The file it was read from, if any.
    pub(crate) path: Option<PathBuf>,
}

pub(crate) fn direction_name(d: Direction) -> &'static str {
    match d {
        Direction::Maximize => "max",
        Direction::Minimize => "min",
    }
}

impl Config {
    /// The sampler's search space of the sweep.
    pub(crate) fn search_space(&self) -> PyResult<SearchSpace> {
        sweeper_engine::search_space(&self.config).map_err(|e| not_runnable(&e, self.path.as_ref()))
    }
}

#[pymethods]
impl Config {
    /// The goal's target: `"throughput"`, ..., `"pareto"`.
    #[getter]
    fn target(&self) -> &'static str {
        self.config.goal.target().name()
    }

    /// Whether the goal is a pareto goal (the result is a front, not a ranking).
    #[getter]
    fn pareto(&self) -> bool {
        self.config.goal.is_pareto()
    }

    /// The effective objectives as `(name, "max" | "min")` pairs.
    #[getter]
    fn objectives(&self) -> Vec<(&'static str, &'static str)> {
        self.config
            .goal
            .objectives()
            .iter()
            .map(|o| (o.name(), direction_name(o.direction())))
            .collect()
    }

    /// The study's metrics as `(name, "max" | "min")` pairs: one `objective` (maximized)
    /// for a scalar goal, one per objective for a pareto goal; under `min_gpus`,
    /// `used_gpus` (min) and `goodput_request_throughput_rps` (max, the floored metric).
    #[getter]
    fn metrics(&self) -> Vec<(String, &'static str)> {
        self.config
            .goal
            .sampler_metrics()
            .into_iter()
            .map(|m| (m.name, direction_name(m.direction)))
            .collect()
    }

    /// `search_space.gpu_budget`.
    #[getter]
    fn gpu_budget(&self) -> u64 {
        self.config.search_space.gpu_budget
    }

    /// The search space the sweep's study searches (the parameters, plus `kv_load_ratio`
    /// when the workload searches a ratio range).
    #[getter]
    fn space(&self) -> PyResult<Space> {
        Ok(Space {
            space: self.search_space()?,
        })
    }

    /// The file the config was read from, or None for text.
    #[getter]
    fn path(&self) -> Option<String> {
        self.path.as_ref().map(|p| p.display().to_string())
    }

    /// The fully resolved config as a dict (every default written out).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v: serde_json::Value =
            serde_json::from_str(&self.config.to_json_string()).unwrap_or_default();
        convert::to_py(py, &v)
    }

    /// The fully resolved config as YAML; `load_config(c.to_yaml())` gives it back.
    fn to_yaml(&self) -> String {
        self.config.to_yaml()
    }

    /// The fully resolved config as JSON text.
    fn to_json(&self) -> String {
        self.config.to_json_string()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<Config>()
            .is_ok_and(|o| o.get().config == self.config)
    }

    fn __repr__(&self) -> String {
        format!(
            "Config(target={:?}, objectives={:?}, gpu_budget={}{})",
            self.target(),
            self.objectives(),
            self.gpu_budget(),
            self.path.as_ref().map_or_else(String::new, |p| format!(
                ", path={:?}",
                p.display().to_string()
            ))
        )
    }
}

/// A search space: the parameters a study searches.
#[pyclass(module = "sweeper", frozen, name = "Space")]
#[derive(Clone)]
pub(crate) struct Space {
    pub(crate) space: SearchSpace,
}

#[pymethods]
impl Space {
    /// The parameter names, in order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.space.params().iter().map(|(n, _)| n.clone()).collect()
    }

    /// The space in the config's syntax: `{"x": {"float": [0, 1]}, "tp": {"values": [1, 2]}}`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, spec) in self.space.params() {
            let p = PyDict::new(py);
            match spec {
                ParamSpec::Float { lo, hi, log } => {
                    p.set_item("float", vec![*lo, *hi])?;
                    if *log {
                        p.set_item("log", true)?;
                    }
                }
                ParamSpec::Int { lo, hi, log } => {
                    p.set_item("int", vec![*lo, *hi])?;
                    if *log {
                        p.set_item("log", true)?;
                    }
                }
                ParamSpec::Discrete { values, log } => {
                    let list = PyList::empty(py);
                    for &v in values {
                        if v.fract() == 0.0 && v.abs() < 9.0e15 {
                            list.append(v as i64)?;
                        } else {
                            list.append(v)?;
                        }
                    }
                    p.set_item("values", list)?;
                    if *log {
                        p.set_item("log", true)?;
                    }
                }
                ParamSpec::Categorical { choices } => p.set_item("choices", choices.clone())?,
                _ => {}
            }
            d.set_item(name, p)?;
        }
        Ok(d)
    }

    fn __len__(&self) -> usize {
        self.space.params().len()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("Space({})", self.to_dict(py)?.repr()?))
    }
}

/// What a `path_or_text` argument is.
enum Source {
    Path(PathBuf),
    Text(String),
}

/// A `pathlib.Path` (any `os.PathLike`) is a path; a `str` is a path when it is one line
/// that names an existing file or ends in `.yaml`, `.yml` or `.json`, and config text
/// otherwise.
fn source(obj: &Bound<'_, PyAny>) -> PyResult<Source> {
    if let Ok(s) = obj.cast::<PyString>() {
        let s: String = s.extract()?;
        let one_line = !s.contains('\n');
        let looks_like_file = [".yaml", ".yml", ".json"]
            .iter()
            .any(|ext| s.to_ascii_lowercase().ends_with(ext));
        if one_line
            && !s.trim().is_empty()
            && (looks_like_file || std::path::Path::new(&s).is_file())
        {
            return Ok(Source::Path(PathBuf::from(s)));
        }
        return Ok(Source::Text(s));
    }
    if obj.hasattr("__fspath__")? {
        return Ok(Source::Path(obj.extract::<PathBuf>()?));
    }
    Err(PyTypeError::new_err(format!(
        "expected a path (str or os.PathLike) or YAML/JSON config text, got {}",
        obj.get_type().name()?
    )))
}

/// One error as the dict of `ConfigError.errors`.
fn error_dict<'py>(py: Python<'py>, e: &ConfigError) -> PyResult<Bound<'py, PyDict>> {
    Failure::of_config(e).dict(py)
}

/// A `sweeper.ConfigError` with its attributes.
pub(crate) fn raise(
    py: Python<'_>,
    message: String,
    path: Option<&str>,
    rule: &str,
    location: Option<(usize, usize)>,
    errors: Vec<Bound<'_, PyDict>>,
) -> PyErr {
    let err = PyConfigError::new_err(message);
    let value = err.value(py);
    let (line, column) = location.unzip();
    let set = || -> PyResult<()> {
        value.setattr("path", path)?;
        value.setattr("rule", rule)?;
        value.setattr("line", line)?;
        value.setattr("column", column)?;
        value.setattr("errors", errors)?;
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// The prefix of `sweeper validate`'s messages: `FILE: invalid config` or `invalid config`.
fn prefix(path: Option<&PathBuf>) -> String {
    match path {
        Some(p) => format!("{}: invalid config", p.display()),
        None => "invalid config".to_owned(),
    }
}

/// One failure of a config as `ConfigError` reports it: its text, key path, rule and
/// location.
struct Failure {
    message: String,
    path: Option<String>,
    rule: &'static str,
    location: Option<(usize, usize)>,
}

impl Failure {
    fn of_config(e: &ConfigError) -> Failure {
        Failure {
            message: e.to_string(),
            path: e.path().map(str::to_owned),
            rule: e.rule(),
            location: e.location(),
        }
    }

    /// A config that parses but cannot run (`check_runnable`).
    fn of_run(e: &sweeper_engine::RunError) -> Failure {
        let (key, rule) = match e {
            sweeper_engine::RunError::Space { key, .. } => {
                (key.clone(), "search_space_not_representable")
            }
            _ => ("evaluator".to_owned(), "evaluator_not_runnable"),
        };
        Failure {
            message: e.to_string(),
            path: Some(key),
            rule,
            location: None,
        }
    }

    fn dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("message", &self.message)?;
        d.set_item("path", self.path.as_deref())?;
        d.set_item("rule", self.rule)?;
        let (line, column) = self.location.unzip();
        d.set_item("line", line)?;
        d.set_item("column", column)?;
        Ok(d)
    }
}

/// Every failure of a config as one `ConfigError`, worded as `sweeper validate` words it:
/// `FILE: invalid config: ...`, or `FILE: invalid config, N errors:` and one line each.
fn from_failures(py: Python<'_>, path: Option<&PathBuf>, failures: &[Failure]) -> PyErr {
    let message = match failures {
        [f] if f.rule == "io" => f.message.clone(),
        [f] => format!("{}: {}", prefix(path), f.message),
        _ => {
            let mut m = format!("{}, {} errors:", prefix(path), failures.len());
            for f in failures {
                let _ = write!(m, "\n  {}", f.message);
            }
            m
        }
    };
    let dicts = failures.iter().filter_map(|f| f.dict(py).ok()).collect();
    let first = &failures[0];
    raise(
        py,
        message,
        first.path.as_deref(),
        first.rule,
        first.location,
        dicts,
    )
}

/// A config that parses but cannot run (`check_runnable`), as a `ConfigError`.
/// Its `rule` is `search_space_not_representable` (with the parameter's key path) or
/// `evaluator_not_runnable` (path `evaluator`).
pub(crate) fn not_runnable(e: &sweeper_engine::RunError, path: Option<&PathBuf>) -> PyErr {
    Python::attach(|py| from_failures(py, path, &[Failure::of_run(e)]))
}

/// Reads and checks a config from a path or text.
pub(crate) fn load(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Config> {
    if let Ok(c) = obj.cast::<Config>() {
        let c = c.get();
        return Ok(Config {
            config: c.config.clone(),
            path: c.path.clone(),
        });
    }
    let (text, path) = match source(obj)? {
        Source::Path(p) => match std::fs::read_to_string(&p) {
            Ok(text) => (text, Some(p)),
            Err(e) => {
                let e = ConfigError::Io {
                    path: p.clone(),
                    source: e.into(),
                };
                return Err(from_failures(py, Some(&p), &[Failure::of_config(&e)]));
            }
        },
        Source::Text(t) => (t, None),
    };
    // As `sweeper validate` does: every block on its own, then what a run checks before its
    // first trial on the blocks that passed, all failures in one error.
    let partial = sweeper_goal::parse_partial(&text);
    let mut failures: Vec<Failure> = partial.errors.iter().map(Failure::of_config).collect();
    failures.extend(
        sweeper_eval::check_runnable_partial(&partial)
            .iter()
            .map(Failure::of_run),
    );
    if !failures.is_empty() {
        return Err(from_failures(py, path.as_ref(), &failures));
    }
    Ok(Config {
        config: partial.config,
        path,
    })
}

/// Reads a sweep config (YAML or JSON) from a path or from text, with every check of
/// `sweeper validate`, and returns it as a `Config`. A `pathlib.Path` is always a path; a
/// `str` is a path when it is one line naming an existing file or ending in `.yaml`,
/// `.yml` or `.json`, and config text otherwise. Raises `sweeper.ConfigError`.
#[pyfunction]
#[pyo3(signature = (path_or_text))]
fn load_config(py: Python<'_>, path_or_text: &Bound<'_, PyAny>) -> PyResult<Config> {
    load(py, path_or_text)
}

/// The checks of `load_config`; returns the fully resolved config as a dict (what
/// `sweeper validate --format json` prints under `resolved`). Raises `sweeper.ConfigError`.
#[pyfunction]
#[pyo3(signature = (path_or_text))]
fn validate<'py>(py: Python<'py>, path_or_text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    load(py, path_or_text)?.to_dict(py)
}

/// A space given to `Study` as a dict in the config's syntax (`{"x": {"float": [0, 1]}}`),
/// checked as a config's `search_space.parameters` is.
pub(crate) fn space_from_dict(py: Python<'_>, d: &Bound<'_, PyDict>) -> PyResult<SearchSpace> {
    // Written entry by entry: a JSON map here would sort the keys, and the order of the
    // parameters is the order of the space.
    let mut entries = Vec::new();
    for (k, v) in d.iter() {
        let name: String = k
            .extract()
            .map_err(|_| PyTypeError::new_err("space: parameter names must be strings"))?;
        let spec = convert::to_json(&v, &format!("space[{name:?}]"))?;
        entries.push(format!("{}: {spec}", serde_json::Value::String(name)));
    }
    let text = format!(
        "{{\"search_space\": {{\"parameters\": {{{}}}}}}}",
        entries.join(", ")
    );
    let config = sweeper_goal::parse_all(&text).map_err(|errors| {
        // Line and column point into the JSON written here, not into anything the caller
        // wrote: drop them.
        let dicts = errors
            .iter()
            .filter_map(|e| {
                let d = error_dict(py, e).ok()?;
                d.set_item("line", py.None()).ok()?;
                d.set_item("column", py.None()).ok()?;
                Some(d)
            })
            .collect();
        let first = &errors[0];
        let mut message = "invalid space".to_owned();
        for e in &errors {
            let _ = write!(message, ": {e}");
        }
        raise(py, message, first.path(), first.rule(), None, dicts)
    })?;
    sweeper_engine::search_space(&config).map_err(|e| not_runnable(&e, None))
}
