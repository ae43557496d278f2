//! `sweeper.Study`: the ask/tell study of `sweeper-sampler`, and `sweeper.Trial`.

use crate::config::{self, Config, Space, direction_name};
use crate::fronts::direction;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use sweeper_goal::SamplerMetric;
use sweeper_sampler::{Algorithm, Floor, ParamValue, SamplerError, TrialRecord, TrialState};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Study>()?;
    m.add_class::<Trial>()?;
    Ok(())
}

/// A parameter value as Python: int, float or str.
pub(crate) fn param_to_py<'py>(py: Python<'py>, v: &ParamValue) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        ParamValue::Int(i) => i.into_pyobject(py)?.into_any(),
        ParamValue::Float(x) => x.into_pyobject(py)?.into_any(),
        ParamValue::Str(s) => PyString::new(py, s).into_any(),
        _ => py.None().into_bound(py),
    })
}

/// One trial of a study: its id, its parameters, and where it stands.
#[pyclass(module = "sweeper", frozen, name = "Trial")]
pub(crate) struct Trial {
    id: u64,
    params: Vec<(String, ParamValue)>,
    state: &'static str,
    values: Option<BTreeMap<String, f64>>,
    reason: Option<String>,
}

impl Trial {
    fn of(record: &TrialRecord) -> Trial {
        let (state, values, reason) = match &record.state {
            TrialState::Pending => ("pending", None, None),
            TrialState::Completed(v) => ("completed", Some(v.clone()), None),
            TrialState::Infeasible(r) => ("infeasible", None, Some(r.clone())),
            _ => ("unknown", None, None),
        };
        Trial {
            id: record.trial.id,
            params: record.trial.params.clone(),
            state,
            values,
            reason,
        }
    }
}

#[pymethods]
impl Trial {
    /// The study-wide id, 0, 1, 2, ... in suggestion order.
    #[getter]
    fn id(&self) -> u64 {
        self.id
    }

    /// Every parameter's value (int, float or str), in the space's order, constants
    /// included. A new dict on every access.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, v) in &self.params {
            d.set_item(name, param_to_py(py, v)?)?;
        }
        Ok(d)
    }

    /// `"pending"`, `"completed"` or `"infeasible"` (when this snapshot was taken).
    #[getter]
    fn state(&self) -> &'static str {
        self.state
    }

    /// The observed value of every metric, for a completed trial; else None.
    #[getter]
    fn values(&self) -> Option<BTreeMap<String, f64>> {
        self.values.clone()
    }

    /// Why the trial was closed as infeasible; else None.
    #[getter]
    fn reason(&self) -> Option<String> {
        self.reason.clone()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Trial(id={}, params={}, state={:?})",
            self.id,
            self.params(py)?.repr()?,
            self.state
        ))
    }
}

/// A trial id: an int, or a `Trial`.
fn trial_id(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(t) = obj.cast::<Trial>() {
        return Ok(t.get().id);
    }
    obj.extract::<u64>().map_err(|_| {
        PyTypeError::new_err("trial must be a trial id (an int >= 0) or a Trial from suggest()")
    })
}

fn sampler_error(e: &SamplerError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Parses `metrics`: `(name, "max" | "min")` pairs.
fn metrics(obj: &Bound<'_, PyAny>) -> PyResult<Vec<SamplerMetric>> {
    if obj.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "metrics must be a list of (name, \"max\" | \"min\") pairs, e.g. [(\"f1\", \"min\"), (\"f2\", \"min\")]",
        ));
    }
    let mut out = Vec::new();
    for (i, item) in obj.try_iter()?.enumerate() {
        let item = item?;
        let (name, dir): (String, String) = item.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "metrics[{i}] must be a (name, \"max\" | \"min\") pair, got {}",
                item.repr()
                    .map_or_else(|_| "?".to_owned(), |r| r.to_string())
            ))
        })?;
        let direction = direction(&dir).ok_or_else(|| {
            PyValueError::new_err(format!(
                "metrics[{i}] ({name:?}): the direction must be \"max\" or \"min\", got {dir:?}"
            ))
        })?;
        out.push(SamplerMetric { name, direction });
    }
    Ok(out)
}

/// A multi-metric ask/tell study (SPEC 4): `suggest`, then `observe` or
/// `observe_infeasible` each trial.
///
/// The study sits behind a mutex (a Python class must be shareable between threads):
/// `suggest` takes it only after releasing the GIL, so a thread waiting for the GIL never
/// holds it.
#[pyclass(module = "sweeper", name = "Study", frozen)]
pub(crate) struct Study {
    study: Mutex<sweeper_sampler::Study>,
}

impl Study {
    fn lock(&self) -> PyResult<MutexGuard<'_, sweeper_sampler::Study>> {
        self.study.lock().map_err(|_| {
            PyRuntimeError::new_err("the study was poisoned by a panic in another thread")
        })
    }
}

#[pymethods]
impl Study {
    /// The most trials one `suggest` call of the default, random and quasi-random
    /// algorithms hands out (1,000); call again for more.
    #[classattr]
    const MAX_SUGGEST: usize = sweeper_sampler::Study::MAX_SUGGEST;

    /// The most trials one `suggest` call of the grid hands out (2**20, the largest grid).
    #[classattr]
    const MAX_GRID_SUGGEST: usize = sweeper_sampler::Study::MAX_GRID_SUGGEST;

    /// The most trials one `suggest` call of this study hands out.
    #[getter]
    fn max_suggest(&self) -> PyResult<usize> {
        Ok(self.lock()?.max_suggest())
    }

    /// `space`: a dict in the config's syntax (`{"x": {"float": [0, 1]}, "tp": {"values":
    /// [1, 2, 4]}}`), a `Space`, or a `Config` (its sweep's space). `metrics`: `(name,
    /// "max" | "min")` pairs; with a `Config` they default to the goal's. `algorithm`:
    /// `"default"` (GP-UCB-PE), `"random"`, `"quasi_random"` or `"grid"`. `floor`: `(metric,
    /// value)`, a constrained study (two metrics: the cost, minimized, and `metric`,
    /// maximized, which satisfies at `value` or more; the study looks for the fewest cost
    /// that satisfies); a `Config` whose target is `min_gpus` gives its own
    /// (`goodput_request_throughput_rps`, `min_goodput_rps`).
    #[new]
    #[pyo3(signature = (space, metrics=None, algorithm="default", seed=42, floor=None))]
    fn new(
        py: Python<'_>,
        space: &Bound<'_, PyAny>,
        metrics: Option<&Bound<'_, PyAny>>,
        algorithm: &str,
        seed: u64,
        floor: Option<(String, f64)>,
    ) -> PyResult<Study> {
        let mut from_config = None;
        let mut config_floor = None;
        let search = if let Ok(d) = space.cast::<PyDict>() {
            config::space_from_dict(py, d)?
        } else if let Ok(s) = space.cast::<Space>() {
            s.get().space.clone()
        } else if let Ok(c) = space.cast::<Config>() {
            from_config = Some(c.get().config.goal.sampler_metrics());
            config_floor = c.get().config.goal.sampler_floor();
            c.get().search_space()?
        } else {
            return Err(PyTypeError::new_err(format!(
                "space must be a dict such as {{\"x\": {{\"float\": [0, 1]}}}}, a Space or a Config; got {}",
                space.get_type().name()?
            )));
        };
        let metrics_given = metrics.is_some();
        let metrics = match (metrics, from_config) {
            (Some(m), _) => self::metrics(m)?,
            (None, Some(m)) => m,
            (None, None) => {
                return Err(PyTypeError::new_err(
                    "Study needs metrics: a list of (name, \"max\" | \"min\") pairs, e.g. metrics=[(\"throughput\", \"max\")]",
                ));
            }
        };
        let algorithm = Algorithm::from_name(algorithm).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown algorithm {algorithm:?}; expected one of default, random, quasi_random, grid"
            ))
        })?;
        let floor = match (floor, config_floor, metrics_given) {
            (Some((metric, value)), _, _) => Some(Floor::new(metric, value)),
            (None, Some((metric, value)), false) => Some(Floor::new(metric, value)),
            _ => None,
        };
        let mut study = sweeper_sampler::Study::new(search, metrics, algorithm, seed)
            .map_err(|e| sampler_error(&e))?;
        if let Some(floor) = floor {
            study = study.with_floor(floor).map_err(|e| sampler_error(&e))?;
        }
        Ok(Study {
            study: Mutex::new(study),
        })
    }

    /// Up to `n` new trials, now pending; fewer only when a finite space is used up.
    /// The GIL is released while the algorithm runs. More than `max_suggest` in one call
    /// is a `ValueError`.
    #[pyo3(signature = (n=1))]
    fn suggest(&self, py: Python<'_>, n: u128) -> PyResult<Vec<Trial>> {
        // taken as u128 so that a count beyond the machine's word (10**20) is the same
        // ValueError as one beyond the cap, not an OverflowError of the conversion
        let Ok(n) = usize::try_from(n) else {
            let study = self.lock()?;
            return Err(sampler_error(&SamplerError::TooManyTrials {
                count: n,
                limit: study.max_suggest(),
                algorithm: study.algorithm(),
            }));
        };
        py.detach(|| {
            let mut study = self.lock()?;
            let trials = study.suggest(n).map_err(|e| sampler_error(&e))?;
            let records = study.trials();
            Ok(trials
                .iter()
                .map(|t| Trial::of(&records[t.id as usize]))
                .collect())
        })
    }

    /// Completes a pending trial with every metric's value: `{metric: value}`.
    fn observe(&self, trial: &Bound<'_, PyAny>, values: BTreeMap<String, f64>) -> PyResult<()> {
        let id = trial_id(trial)?;
        self.lock()?
            .observe(id, &values)
            .map_err(|e| sampler_error(&e))
    }

    /// Closes a pending trial that could not be evaluated or was over budget; the
    /// algorithm learns to avoid its region.
    fn observe_infeasible(&self, trial: &Bound<'_, PyAny>, reason: &str) -> PyResult<()> {
        let id = trial_id(trial)?;
        self.lock()?
            .observe_infeasible(id, reason)
            .map_err(|e| sampler_error(&e))
    }

    /// Every trial, in id order (snapshots: they do not change when the study does).
    #[getter]
    fn trials(&self) -> PyResult<Vec<Trial>> {
        Ok(self.lock()?.trials().iter().map(Trial::of).collect())
    }

    /// The completed trials no other completed trial dominates, in id order.
    fn pareto_optimal_trials(&self) -> PyResult<Vec<Trial>> {
        Ok(self
            .lock()?
            .pareto_optimal_trials()
            .into_iter()
            .map(Trial::of)
            .collect())
    }

    /// The completed trial best on the first metric (the earliest of equals), or None; with
    /// a floor, the satisfying trial of the fewest cost (while none satisfies, the highest
    /// floored metric).
    fn best_trial(&self) -> PyResult<Option<Trial>> {
        Ok(self.lock()?.best_trial().map(Trial::of))
    }

    /// The floor as `(metric, value)`, or None (see the constructor's `floor`).
    #[getter]
    fn floor(&self) -> PyResult<Option<(String, f64)>> {
        Ok(self.lock()?.floor().map(|f| (f.metric.clone(), f.value)))
    }

    /// The metrics as `(name, "max" | "min")` pairs.
    #[getter]
    fn metrics(&self) -> PyResult<Vec<(String, &'static str)>> {
        Ok(self
            .lock()?
            .metrics()
            .iter()
            .map(|m| (m.name.clone(), direction_name(m.direction)))
            .collect())
    }

    /// The search space.
    #[getter]
    fn space(&self) -> PyResult<Space> {
        Ok(Space {
            space: self.lock()?.space().clone(),
        })
    }

    /// The algorithm's name.
    #[getter]
    fn algorithm(&self) -> PyResult<&'static str> {
        Ok(self.lock()?.algorithm().name())
    }

    /// The whole study (space, metrics, trials, the algorithm's state) as JSON text;
    /// `Study.from_json` continues it exactly as this study would go on.
    fn to_json(&self) -> PyResult<String> {
        Ok(self.lock()?.to_json().to_string())
    }

    /// A study saved by `to_json`.
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Study> {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| PyValueError::new_err(format!("cannot restore study: not JSON: {e}")))?;
        let study = sweeper_sampler::Study::from_json(&value).map_err(|e| sampler_error(&e))?;
        Ok(Study {
            study: Mutex::new(study),
        })
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.lock()?.trials().len())
    }

    fn __repr__(&self) -> PyResult<String> {
        Ok(format!(
            "Study(algorithm={:?}, metrics={:?}, trials={})",
            self.algorithm()?,
            self.metrics()?,
            self.__len__()?
        ))
    }
}
