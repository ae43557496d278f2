//! One candidate evaluated exactly as a run would (`sweeper evaluate`): constants filled
//! in, the load resolved, the budget checked, the provider applied, and the outcome
//! classified and scored by the same steps the run loop takes.

use super::ledger::{classify, json_number as number, record_load};
use super::{RunError, Status, space, without_nan};
use crate::evaluator::{EvalOutcome, EvalRequest, Evaluator};
use crate::provider::{Provider, SweepContext};
use serde_json::{Map, Value};
use sweeper_goal::{DeploymentMode, ParameterSpec, SweepConfig};
use sweeper_score::{Candidate, Report};

/// One candidate evaluated as a run would evaluate it.
#[derive(Debug, Clone)]
pub struct SingleEvaluation {
    /// What was sent to the evaluator (`None` when rejected before evaluating).
    pub request: Option<EvalRequest>,
    /// What the evaluator answered.
    pub outcome: Option<EvalOutcome>,
    /// The verdict.
    pub status: Status,
    /// Why, for everything but feasible.
    pub reason: Option<String>,
    /// The scored candidate, when the evaluator gave a report.
    pub candidate: Option<Candidate>,
}

/// Evaluates one candidate given as parameter values: constants of the search space are
/// filled in, the load is resolved (a searched `kv_load_ratio` is read from the candidate),
/// the budget checked, the provider applied, and the report scored.
pub fn evaluate_candidate(
    config: &SweepConfig,
    evaluator: &dyn Evaluator,
    provider: Option<&mut dyn Provider>,
    candidate: &Map<String, Value>,
) -> Result<SingleEvaluation, RunError> {
    let mut parameters = candidate.clone();
    let ratio = parameters
        .remove(space::KV_LOAD_RATIO)
        .and_then(|v| v.as_f64());
    // With a topology, a run's candidate carries only its own branch's knobs (SPEC 8):
    // an aggregated one no `prefill_*`/`decode_*`, a disaggregated one no `agg_*`.
    let branch = config.search_space.topology.as_ref().map(|_| {
        match parameters.get(space::MODE).and_then(Value::as_str) {
            Some("disagg") => DeploymentMode::Disagg,
            _ => DeploymentMode::Agg,
        }
    });
    for (name, spec) in &config.search_space.parameters {
        if parameters.contains_key(name) || branch.is_some_and(|mode| !mode.has_key(name)) {
            continue;
        }
        let constant = match spec {
            ParameterSpec::Values { values, .. } if values.len() == 1 => Some(number(values[0])),
            ParameterSpec::Int { lo, hi, .. } if lo == hi => Some(Value::from(*lo)),
            ParameterSpec::Float { lo, hi, .. } if lo == hi => Some(number(*lo)),
            ParameterSpec::Choices(c) if c.len() == 1 => Some(Value::from(c[0].clone())),
            _ => None,
        };
        match constant {
            Some(v) => {
                parameters.insert(name.clone(), v);
            }
            None => {
                return Err(RunError::Setup(format!(
                    "the candidate has no value for parameter `{name}`; give it in --candidate"
                )));
            }
        }
    }
    let level = space::take_level(config, &mut parameters).map_err(|detail| RunError::Space {
        key: "--candidate".to_owned(),
        detail,
        source: None,
    })?;
    let declared = space::declared_gpus(config, &parameters).map_err(|detail| RunError::Space {
        key: "search_space.used_gpus".to_owned(),
        detail,
        source: None,
    })?;
    let budget = config.search_space.gpu_budget;
    if let Some(g) = declared
        && g > budget
    {
        return Ok(SingleEvaluation {
            request: None,
            outcome: None,
            status: Status::Infeasible,
            reason: Some(format!(
                "over gpu_budget: used_gpus={g} > gpu_budget={budget}"
            )),
            candidate: None,
        });
    }
    let mut config_map = parameters.clone();
    if let Some(r) = ratio {
        config_map.insert(space::KV_LOAD_RATIO.into(), number(r));
    }
    if let Some(l) = level {
        let (key, value) = l.entry();
        config_map.insert(key, value);
    }
    if let Some(g) = declared {
        config_map.insert("used_gpus".into(), Value::from(g));
    }
    let mut request = space::request(config, 0, parameters, ratio, level, declared);
    if let Some(p) = provider {
        p.prepare(&SweepContext { config });
        p.decorate(&mut request);
    }
    let outcome = without_nan(evaluator.evaluate(0, &request));
    let (status, reason, report) = classify(&outcome, declared, budget as f64);
    let candidate = match report {
        Some(raw) => {
            record_load(&mut config_map, &raw);
            let report = Report::from_map(0, raw.metrics)?;
            let gpu = super::ledger::builtin_gpu(config);
            let scorer = sweeper_score::Scorer::new(&config.goal).with_default_gpu(gpu.as_deref());
            Some(scorer.candidate(0, config_map, &report)?)
        }
        None => None,
    };
    Ok(SingleEvaluation {
        request: Some(request),
        outcome: Some(outcome),
        status,
        reason,
        candidate,
    })
}
