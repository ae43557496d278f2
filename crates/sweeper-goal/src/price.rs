//! Which GPU a candidate runs on, for a price map (`goal.price_per_gpu_hour: {h200: 3.5}`).
//!
//! Kept apart and small on purpose: a candidate's GPU is its parameter named `gpu`, else
//! the topology's GPU (`search_space.topology.gpu`, the card every deployment of the pool
//! runs on), else the built-in evaluator's `gpu:`.

use crate::error::ConfigError;
use crate::evaluator::{EvaluatorConfig, EvaluatorKind};
use crate::goal::{Goal, Price};
use crate::space::{ParameterSpec, SearchSpaceConfig};

/// The candidate parameter that names its GPU.
pub const GPU_KEY: &str = "gpu";

/// The GPU of a candidate: its `gpu` parameter (a string), else `default_gpu` (the
/// built-in evaluator's `gpu:`); `None` when neither is known.
///
/// ```
/// use sweeper_goal::candidate_gpu;
/// let config = serde_json::json!({"gpu": "b200", "tp": 4});
/// assert_eq!(candidate_gpu(config.as_object().unwrap(), Some("h200")), Some("b200"));
/// assert_eq!(candidate_gpu(&serde_json::Map::new(), Some("h200")), Some("h200"));
/// ```
pub fn candidate_gpu<'a>(
    config: &'a serde_json::Map<String, serde_json::Value>,
    default_gpu: Option<&'a str>,
) -> Option<&'a str> {
    config
        .get(GPU_KEY)
        .and_then(serde_json::Value::as_str)
        .or(default_gpu)
}

/// The built-in evaluator's `gpu:`, if the evaluator is the built-in one and names it.
pub(crate) fn builtin_gpu(evaluator: Option<&EvaluatorConfig>) -> Option<&str> {
    match &evaluator?.kind {
        EvaluatorKind::Builtin(v) => v.get(GPU_KEY)?.as_str(),
        EvaluatorKind::Command { .. } => None,
    }
}

/// The GPU of every candidate without a `gpu` parameter: the topology's `gpu`
/// (`search_space.topology.gpu`), else the built-in evaluator's `gpu:`; `None` when neither
/// is set. The rule behind [`crate::default_gpu`], which reads it from a whole config.
pub(crate) fn fallback_gpu<'a>(
    space: &'a SearchSpaceConfig,
    evaluator: Option<&'a EvaluatorConfig>,
) -> Option<&'a str> {
    match &space.topology {
        Some(t) => Some(t.gpu.as_str()),
        None => builtin_gpu(evaluator),
    }
}

/// With a price map, every GPU the config can give a candidate has a price: each choice of
/// a `gpu` parameter, else the topology's `gpu`, else the built-in evaluator's `gpu:`.
pub(crate) fn check_gpus(
    goal: &Goal,
    space: &SearchSpaceConfig,
    evaluator: Option<&EvaluatorConfig>,
) -> Result<(), ConfigError> {
    let Some(Price::PerGpu(map)) = goal.price_per_gpu_hour() else {
        return Ok(());
    };
    let missing = |gpu: &str, source_path: String| ConfigError::PriceMissingGpu {
        path: "goal.price_per_gpu_hour".to_owned(),
        gpu: gpu.to_owned(),
        source_path,
    };
    let param = space.parameters.iter().find(|(name, _)| name == GPU_KEY);
    match param {
        Some((_, ParameterSpec::Choices(choices))) => {
            if let Some(gpu) = choices.iter().find(|g| !map.contains_key(*g)) {
                return Err(missing(gpu, "search_space.parameters.gpu".to_owned()));
            }
        }
        Some(_) => {}
        None if space.topology.is_some() => {
            let gpu = space
                .topology
                .as_ref()
                .map(|t| t.gpu.as_str())
                .unwrap_or_default();
            if !map.contains_key(gpu) {
                return Err(missing(gpu, "search_space.topology.gpu".to_owned()));
            }
        }
        None => {
            if let Some(gpu) = builtin_gpu(evaluator)
                && !map.contains_key(gpu)
            {
                return Err(missing(gpu, "evaluator.builtin.gpu".to_owned()));
            }
        }
    }
    Ok(())
}
