//! Turning a validated config into the pieces of a run: its evaluator and its plot title;
//! and evaluating one candidate exactly as a run would (`sweeper evaluate`).

use super::{RunError, Status, classify, json_number as number, record_load, space};
use crate::builtin::BuiltinEvaluator;
use crate::evaluator::{CommandEvaluator, CommandSpec, EvalOutcome, EvalRequest, Evaluator};
use crate::provider::{Provider, SweepContext};
use serde_json::{Map, Value};
use std::time::Duration;
use sweeper_goal::{EvaluatorKind, ParameterSpec, SweepConfig};
use sweeper_score::{Candidate, Report};

/// The evaluator a config declares, and the title of its plots.
pub struct Setup {
    /// The evaluator.
    pub evaluator: Box<dyn Evaluator>,
    /// A title naming what is swept (model, GPU and budget for the built-in model).
    pub title: String,
}

/// Builds the evaluator of a config. A config without an `evaluator:` block cannot run.
pub fn evaluator_for(config: &SweepConfig, name: &str) -> Result<Setup, RunError> {
    let budget = config.search_space.gpu_budget;
    let Some(ev) = &config.evaluator else {
        return Err(RunError::Setup(
            "the config has no `evaluator:` block; add `evaluator: {command: [prog, args...]}` for an external evaluator or `evaluator: {builtin: {model: qwen3-32b-fp8, gpu: h200}}` for the built-in serving model".into(),
        ));
    };
    match &ev.kind {
        EvaluatorKind::Command { argv, persistent } => {
            let spec = CommandSpec {
                argv: argv.clone(),
                persistent: *persistent,
                env: ev.env.clone(),
                cwd: ev.cwd.clone(),
                timeout: Duration::try_from_secs_f64(config.sweep.max_eval_seconds)
                    .unwrap_or(Duration::MAX),
                workers: config.sweep.parallel_evals.max(1) as usize,
            };
            let evaluator = CommandEvaluator::new(spec)
                .map_err(|e| RunError::Setup(format!("evaluator.command: {e}")))?;
            Ok(Setup {
                evaluator: Box::new(evaluator),
                title: format!("{name} · GPU budget {budget}"),
            })
        }
        EvaluatorKind::Builtin(block) => {
            let evaluator =
                BuiltinEvaluator::from_config(block).map_err(|e| RunError::Setup(e.to_string()))?;
            let title = format!(
                "{} on {} · GPU budget {budget} · built-in model",
                evaluator.model_name(),
                evaluator.gpu_name()
            );
            Ok(Setup {
                evaluator: Box::new(evaluator),
                title,
            })
        }
    }
}

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
    for (name, spec) in &config.search_space.parameters {
        if parameters.contains_key(name) {
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
    let declared = space::declared_gpus(config, &parameters).map_err(RunError::Space)?;
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
    if let Some(g) = declared {
        config_map.insert("used_gpus".into(), Value::from(g));
    }
    let mut request = space::request(config, 0, parameters, ratio, declared);
    if let Some(p) = provider {
        p.prepare(&SweepContext { config });
        p.decorate(&mut request);
    }
    let outcome = evaluator.evaluate(0, &request);
    let (status, reason, report) = classify(&outcome, declared, budget as f64);
    let candidate = match report {
        Some(raw) => {
            record_load(&mut config_map, &raw);
            let report = Report::from_map(0, raw)?;
            Some(sweeper_score::make_candidate(
                0,
                config_map,
                &report,
                config.goal.objectives(),
                config.goal.is_pareto(),
            ))
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
