//! Evaluators: what turns a candidate into a report (external commands, the built-in model).
//!
//! The types here are the engine's side of an evaluation: a typed [`EvalRequest`] in, an
//! [`EvalOutcome`] out. They become JSON only where they cross a process boundary (the
//! command protocol) or a file (the journal).

use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};
use sweeper_goal::{Sla, Workload};

/// A report as an evaluator returned it: metric name → number, and the string values it
/// carried (a model name, a backend version) kept as labels.
///
/// It dereferences to its metrics, so `report["output_throughput_tok_s"]` reads a metric.
/// As JSON it is one flat object, numbers and labels together, as the evaluator printed it;
/// `±inf` are written as the strings `"inf"` / `"-inf"` (the one encoding of
/// [`sweeper_score::json_f64`]), so a report survives a round trip through the journal.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawReport {
    /// The numeric values: never NaN.
    pub metrics: BTreeMap<String, f64>,
    /// The string values, kept for inspection (never scored).
    pub labels: BTreeMap<String, String>,
}

impl RawReport {
    /// An empty report.
    pub fn new() -> RawReport {
        RawReport::default()
    }

    /// The report with one more label.
    #[must_use]
    pub fn with_label(mut self, key: impl Into<String>, value: impl Into<String>) -> RawReport {
        self.labels.insert(key.into(), value.into());
        self
    }
}

impl Deref for RawReport {
    type Target = BTreeMap<String, f64>;
    fn deref(&self) -> &Self::Target {
        &self.metrics
    }
}

impl DerefMut for RawReport {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.metrics
    }
}

impl From<BTreeMap<String, f64>> for RawReport {
    fn from(metrics: BTreeMap<String, f64>) -> RawReport {
        RawReport {
            metrics,
            labels: BTreeMap::new(),
        }
    }
}

impl<const N: usize> From<[(String, f64); N]> for RawReport {
    fn from(entries: [(String, f64); N]) -> RawReport {
        RawReport::from(BTreeMap::from(entries))
    }
}

impl FromIterator<(String, f64)> for RawReport {
    fn from_iter<I: IntoIterator<Item = (String, f64)>>(iter: I) -> RawReport {
        RawReport::from(iter.into_iter().collect::<BTreeMap<_, _>>())
    }
}

impl Serialize for RawReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.metrics.len() + self.labels.len()))?;
        for (k, v) in &self.metrics {
            m.serialize_entry(k, &sweeper_score::json_f64::to_value(*v))?;
        }
        for (k, v) in &self.labels {
            if !self.metrics.contains_key(k) {
                m.serialize_entry(k, v)?;
            }
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for RawReport {
    /// Reads the flat object written by [`Serialize`]: numbers (and the spellings of `±inf`)
    /// are metrics, other strings labels; NaN, `null`, booleans and nested values are
    /// errors.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawReport, D::Error> {
        use serde::de::Error;
        let object = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
        let mut report = RawReport::new();
        for (key, value) in object {
            match &value {
                serde_json::Value::Number(n) => {
                    let x = n
                        .as_f64()
                        .ok_or_else(|| D::Error::custom(format!("metric `{key}`: {n}")))?;
                    report.metrics.insert(key, x);
                }
                serde_json::Value::String(s) => {
                    match sweeper_score::json_f64::parse_non_finite(s) {
                        Some(x) if x.is_nan() => {
                            return Err(D::Error::custom(format!("metric `{key}` is NaN")));
                        }
                        Some(x) => {
                            report.metrics.insert(key, x);
                        }
                        None => {
                            report.labels.insert(key, s.clone());
                        }
                    }
                }
                other => {
                    return Err(D::Error::custom(format!(
                        "report value `{key}` must be a number or a string, got {other}"
                    )));
                }
            }
        }
        Ok(report)
    }
}

/// The candidate sent to an evaluator. Typed inside the engine; its JSON (the wire format of
/// external evaluators) is one object:
///
/// ```json
/// {"id": 17, "parameters": {"tp": 2, "router": "kv_aware"}, "used_gpus": 8,
///  "concurrency": null, "kv_load_ratio": 0.5,
///  "workload": {"isl": 4000, "osl": 500, "num_request_ratio": 10, "kv_load_ratio": [0.05, 1.0]},
///  "sla": {"ttft_ms": 2000, "itl_ms": 50}, "planner_target": "throughput"}
/// ```
///
/// What providers add (`planner_target` above) lives in [`extra`](Self::extra) and is
/// written at the top level of the object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct EvalRequest {
    /// Trial id, unique within a sweep.
    pub id: u64,
    /// Parameter values, constants included, in native types (integers stay integers).
    pub parameters: serde_json::Map<String, serde_json::Value>,
    /// The GPU count when the search space declares it, else `None`.
    pub used_gpus: Option<u64>,
    /// The in-flight cap when the load is fixed or searched as a `concurrency` parameter
    /// (the candidate's level), else `None`.
    pub concurrency: Option<u64>,
    /// The open-loop rate when the load is searched as a `request_rate` parameter (the
    /// candidate's level; a fixed rate stays in the workload), else `None` and left out of
    /// the JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_rate: Option<f64>,
    /// The load as a KV ratio (the evaluator converts it), else `None`.
    pub kv_load_ratio: Option<f64>,
    /// The workload block as configured (`isl`, `osl`, `num_request_ratio`, the load).
    pub workload: Option<Workload>,
    /// The goal's SLA, if any.
    pub sla: Option<Sla>,
    /// What providers add (e.g. `planner_target`), written at the top level of the JSON.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl EvalRequest {
    /// A request for candidate `id` with these parameters, and no load, workload or SLA.
    pub fn new(id: u64, parameters: serde_json::Map<String, serde_json::Value>) -> EvalRequest {
        EvalRequest {
            id,
            parameters,
            used_gpus: None,
            concurrency: None,
            request_rate: None,
            kv_load_ratio: None,
            workload: None,
            sla: None,
            extra: serde_json::Map::new(),
        }
    }

    /// The request as the JSON object external evaluators read.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// What one evaluation came to.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum EvalOutcome {
    /// A report (already checked: no NaN).
    Report(RawReport),
    /// The evaluation failed (non-zero exit, malformed report, crash); the reason says why.
    Failed(String),
    /// The evaluator does not support this configuration (exit code 3).
    Unsupported(String),
    /// The evaluation ran over `max_eval_seconds` and was killed: counted infeasible.
    TimedOut(String),
    /// The evaluator declared the candidate infeasible (e.g. KV capacity below one request).
    Infeasible(String),
}

/// What the engine tells one evaluation beside its request, and the way back: an
/// evaluator that hands its work to an outside system (a batch scheduler) reports the
/// **handle** of that work with [`started`](Self::started), the journal records it, and
/// after a crash `--resume` gives it back as [`resumed`](Self::resumed), so that the
/// evaluator re-attaches to the work instead of starting it twice.
pub struct EvalContext<'a> {
    resumed: Option<&'a str>,
    started: Option<&'a dyn Fn(&str)>,
}

impl<'a> EvalContext<'a> {
    /// A context giving the handle an earlier run of this trial recorded (if any), and
    /// calling `started` with every handle the evaluation reports.
    pub fn new(resumed: Option<&'a str>, started: &'a dyn Fn(&str)) -> EvalContext<'a> {
        EvalContext {
            resumed,
            started: Some(started),
        }
    }

    /// A context without an earlier run, in which handles go nowhere (an evaluation outside
    /// a journaled sweep).
    pub fn detached() -> EvalContext<'static> {
        EvalContext {
            resumed: None,
            started: None,
        }
    }

    /// The handle the journal recorded for this trial in a run that did not finish it.
    pub fn resumed(&self) -> Option<&str> {
        self.resumed
    }

    /// Reports that the evaluation now runs as `handle` (e.g. `slurm:1234`); the engine
    /// journals it before the outcome.
    pub fn started(&self, handle: &str) {
        if let Some(f) = self.started {
            f(handle);
        }
    }
}

impl std::fmt::Debug for EvalContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvalContext")
            .field("resumed", &self.resumed)
            .finish_non_exhaustive()
    }
}

/// Something that evaluates candidates. Implementations must be callable from several
/// threads at once; `worker` (0-based, below the run's `parallel_evals`) lets an
/// implementation keep one long-lived process per worker.
pub trait Evaluator: Send + Sync {
    /// Evaluates one candidate. Never panics on bad evaluator behaviour: it returns
    /// `Failed` with a reason instead.
    fn evaluate(&self, worker: usize, request: &EvalRequest) -> EvalOutcome;

    /// What the evaluator has to say once a sweep is over, one line a note: things that
    /// were counted rather than logged as they happened (a persistent worker's stdout lines
    /// that answered no candidate, say), so that each is said once. None by default.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// [`evaluate`](Self::evaluate) within a sweep's [`EvalContext`]: the engine calls
    /// this one. The default ignores the context; an evaluator whose work outlives
    /// sweeper (a batch job) reports its handle and re-attaches on resume.
    fn evaluate_with(
        &self,
        worker: usize,
        request: &EvalRequest,
        context: &EvalContext<'_>,
    ) -> EvalOutcome {
        let _ = context;
        self.evaluate(worker, request)
    }
}
