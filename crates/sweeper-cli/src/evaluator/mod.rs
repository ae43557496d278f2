//! Evaluators: what turns a candidate into a report (external commands, the built-in model).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A report: metric name → number, as an evaluator returned it.
pub type RawReport = BTreeMap<String, f64>;

/// The candidate object sent to an evaluator (one JSON object; the wire format of
/// external evaluators).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EvalRequest {
    /// Trial id, unique within a sweep.
    pub id: u64,
    /// Parameter values, constants included, in native types (integers stay integers).
    pub parameters: serde_json::Map<String, serde_json::Value>,
    /// The GPU count when the search space declares it, else `None`.
    pub used_gpus: Option<u64>,
    /// The fixed in-flight cap when the load is fixed, else `None`.
    pub concurrency: Option<u64>,
    /// The load as a KV ratio (the evaluator converts it), else `None`.
    pub kv_load_ratio: Option<f64>,
    /// The workload block as configured (`isl`, `osl`, `num_request_ratio`, ...).
    pub workload: serde_json::Value,
    /// The goal's SLA, if any.
    pub sla: Option<serde_json::Value>,
    /// The provider's mapping of the goal (e.g. `"throughput"`, `"latency"`, `"sla"`).
    pub planner_target: Option<String>,
}

/// What one evaluation came to.
#[derive(Debug, Clone, PartialEq)]
pub enum EvalOutcome {
    /// A report of finite numbers (already checked: no NaN, all numeric).
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

/// Something that evaluates candidates. Implementations must be callable from several
/// threads at once; `worker` (0-based, below the run's `parallel_evals`) lets an
/// implementation keep one long-lived process per worker.
pub trait Evaluator: Send + Sync {
    /// Evaluates one candidate. Never panics on bad evaluator behaviour: it returns
    /// `Failed` with a reason instead.
    fn evaluate(&self, worker: usize, request: &EvalRequest) -> EvalOutcome;
}

mod command;
mod persistent;
mod process;
mod report;

pub use command::{
    CommandEvaluator, CommandSpec, EXIT_INFEASIBLE, EXIT_UNSUPPORTED, EvaluatorError,
};
pub use process::kill_running_evaluators;
pub use report::parse_report;
