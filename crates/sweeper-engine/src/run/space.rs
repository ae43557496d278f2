//! From a validated config to the sampler's search space, and from a trial to the candidate
//! sent to the evaluator.

use super::RunError;
use crate::evaluator::EvalRequest;
use serde_json::{Map, Value};
use sweeper_goal::{Load, ParameterSpec, SweepConfig, UsedGpus, Workload};
use sweeper_sampler::{ParamSpec, SearchSpace, Trial};

/// The name of the study parameter that carries a searched `kv_load_ratio` range.
pub(crate) const KV_LOAD_RATIO: &str = "kv_load_ratio";

/// Converts a config's search space into the sampler's: the parameters in the order
/// written (`values` → discrete, `int` → integer, `float` → float, `choices` →
/// categorical, `log` kept), plus `kv_load_ratio` as a continuous parameter when the
/// workload searches a ratio range. An error names the key the sampler cannot represent
/// (e.g. an integer range wider than 2^52).
///
/// ```
/// use sweeper_sampler::ParamSpec;
///
/// let config = sweeper_goal::parse(
///     "goal: {target: pareto}\n\
///      workload: {isl: 100, osl: 100, num_request_ratio: 1}\n\
///      search_space: {parameters: {tp: {values: [1, 2, 4]}, router: {choices: [a, b]}}}",
/// )?;
/// let space = sweeper_engine::search_space(&config)?;
/// let names: Vec<&str> = space.params().iter().map(|(n, _)| n.as_str()).collect();
/// assert_eq!(names, ["tp", "router", "kv_load_ratio"]);
/// assert!(matches!(space.params()[2].1, ParamSpec::Float { lo: 0.0, hi: 1.0, log: false }));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn search_space(config: &SweepConfig) -> Result<SearchSpace, RunError> {
    let mut space = SearchSpace::new();
    for (name, spec) in &config.search_space.parameters {
        let param = match spec {
            ParameterSpec::Values { values, log } => ParamSpec::Discrete {
                values: values.clone(),
                log: *log,
            },
            ParameterSpec::Int { lo, hi, log } => ParamSpec::Int {
                lo: *lo,
                hi: *hi,
                log: *log,
            },
            ParameterSpec::Float { lo, hi, log } => ParamSpec::Float {
                lo: *lo,
                hi: *hi,
                log: *log,
            },
            ParameterSpec::Choices(choices) => ParamSpec::Categorical {
                choices: choices.clone(),
            },
        };
        space
            .add(name.clone(), param)
            .map_err(|e| RunError::space(format!("search_space.parameters.{name}"), e))?;
    }
    if let Some((min, max)) = ratio_range(config) {
        if config
            .search_space
            .parameters
            .iter()
            .any(|(name, _)| name == KV_LOAD_RATIO)
        {
            return Err(RunError::Space {
                key: format!("search_space.parameters.{KV_LOAD_RATIO}"),
                detail: format!(
                    "the workload already searches kv_load_ratio [{min}, {max}]; remove one of the two"
                ),
                source: None,
            });
        }
        space
            .add(
                KV_LOAD_RATIO,
                ParamSpec::Float {
                    lo: min,
                    hi: max,
                    log: false,
                },
            )
            .map_err(|e| RunError::space("workload.kv_load_ratio".to_owned(), e))?;
    }
    Ok(space)
}

/// The searched ratio range, if the workload has one.
fn ratio_range(config: &SweepConfig) -> Option<(f64, f64)> {
    match &config.workload {
        Some(Workload::Synthetic {
            load: Load::KvLoadRange { min, max },
            ..
        }) => Some((*min, *max)),
        _ => None,
    }
}

/// The trial's parameters as a JSON object (native types), without the searched ratio.
pub(crate) fn parameters(trial: &Trial) -> Map<String, Value> {
    trial
        .params
        .iter()
        .filter(|(name, _)| name != KV_LOAD_RATIO)
        .map(|(name, value)| (name.clone(), value.to_json()))
        .collect()
}

/// The GPU count the search space declares for a candidate, if it declares one.
pub(crate) fn declared_gpus(
    config: &SweepConfig,
    parameters: &Map<String, Value>,
) -> Result<Option<u64>, String> {
    match &config.search_space.used_gpus {
        None => Ok(None),
        Some(UsedGpus::Fixed(n)) => Ok(Some(*n)),
        Some(UsedGpus::Product(names)) => {
            let mut product: u64 = 1;
            for name in names {
                let value = parameters.get(name).ok_or_else(|| {
                    format!(
                        "search_space.used_gpus names `{name}`, which the candidate does not have"
                    )
                })?;
                let n = value
                    .as_u64()
                    .or_else(|| {
                        value
                            .as_f64()
                            .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                            .map(|f| f as u64)
                    })
                    .ok_or_else(|| {
                        format!("search_space.used_gpus: parameter `{name}` = {value} is not a whole number of GPUs")
                    })?;
                product = product.saturating_mul(n);
            }
            Ok(Some(product))
        }
    }
}

/// Builds the evaluator's candidate object for a set of parameters (and a searched ratio).
pub(crate) fn request(
    config: &SweepConfig,
    id: u64,
    parameters: Map<String, Value>,
    searched_ratio: Option<f64>,
    used_gpus: Option<u64>,
) -> EvalRequest {
    let (concurrency, kv_load_ratio) = match &config.workload {
        None => (None, None),
        Some(Workload::Trace {
            replay_concurrency, ..
        }) => (*replay_concurrency, None),
        Some(Workload::Synthetic { load, .. }) => match load {
            Load::Concurrency(c) => (Some(*c), None),
            Load::RequestRate(_) => (None, None),
            Load::KvLoadRatio(r) => (None, Some(*r)),
            Load::KvLoadRange { .. } => (None, searched_ratio),
        },
    };
    let mut request = EvalRequest::new(id, parameters);
    request.used_gpus = used_gpus;
    request.concurrency = concurrency;
    request.kv_load_ratio = kv_load_ratio;
    request.workload.clone_from(&config.workload);
    request.sla = config.goal.sla().copied();
    request
}

/// The ratio a trial searched, if any.
pub(crate) fn searched_ratio(trial: &Trial) -> Option<f64> {
    trial
        .params
        .iter()
        .find(|(name, _)| name == KV_LOAD_RATIO)
        .and_then(|(_, v)| v.as_f64())
}

/// Applies the search space's GPU-count rule to a row whose config has no `used_gpus`:
/// a fixed count, or the product of integer parameters when the row has all of them
/// (`sweeper score`, and the Python `sweeper.score`, read reports this way).
pub fn fill_used_gpus(config: &mut Map<String, Value>, rule: Option<&UsedGpus>) {
    if config.contains_key(sweeper_score::USED_GPUS) {
        return;
    }
    let count = match rule {
        Some(UsedGpus::Fixed(n)) => Some(*n),
        Some(UsedGpus::Product(names)) => names.iter().try_fold(1_u64, |acc, name| {
            config
                .get(name)
                .and_then(Value::as_u64)
                .and_then(|v| acc.checked_mul(v))
        }),
        None => None,
    };
    if let Some(n) = count {
        config.insert(sweeper_score::USED_GPUS.to_owned(), Value::from(n));
    }
}
