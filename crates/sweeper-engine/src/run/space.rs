//! From a validated config to the sampler's search space, and from a trial to the candidate
//! sent to the evaluator.

use super::RunError;
use crate::evaluator::EvalRequest;
use serde_json::{Map, Value};
use sweeper_goal::{
    AlgorithmName, DeploymentMode, Load, ParameterSpec, SearchedLoad, SweepConfig, UsedGpus,
    Workload, concurrency_for_ratio,
};
use sweeper_sampler::{ParamSpec, SearchSpace, Trial};
use sweeper_topology::{Deployment, LatentKind, Pool};

/// The study parameter a grid searches a topology by: one choice per deployment of the
/// pool (its [`Deployment::id`]), so that the grid enumerates exactly the pool.
pub const TOPOLOGY: &str = "topology";

/// The latent feature of the deployment mode (also the candidate's flat key).
pub(crate) const MODE: &str = "deployment_mode";

/// The pool of the config's topology, if it has one (SPEC 8).
pub fn topology_pool(config: &SweepConfig) -> Result<Option<Pool>, RunError> {
    if config.search_space.topology.is_none() {
        return Ok(None);
    }
    Pool::build(config).map(Some).map_err(RunError::Topology)
}

/// Adds a topology's dimensions to the study: for a grid one categorical `topology` (the
/// pool's ids); for every other algorithm the pool's latent features, which
/// [`candidate`] projects onto the pool.
fn add_topology(
    space: &mut SearchSpace,
    pool: &Pool,
    grid: bool,
    branch: Option<DeploymentMode>,
) -> Result<(), RunError> {
    let key = |name: &str| format!("search_space.topology ({name})");
    if grid {
        return space
            .add(
                TOPOLOGY,
                ParamSpec::Categorical {
                    choices: pool.ids(),
                },
            )
            .map_err(|e| RunError::space(key(TOPOLOGY), e));
    }
    for latent in pool.latents_of(branch) {
        let spec = match latent.kind {
            LatentKind::Float { lo, hi } => ParamSpec::Float { lo, hi, log: false },
            LatentKind::Sizes(sizes) => ParamSpec::Discrete {
                values: sizes.iter().map(|&s| s as f64).collect(),
                log: true,
            },
            LatentKind::Choices(choices) => ParamSpec::Categorical { choices },
            _ => continue,
        };
        space
            .add(latent.name, spec)
            .map_err(|e| RunError::space(key(latent.name), e))?;
    }
    Ok(())
}

/// The candidate of a trial: its parameters, and with a topology its deployment (by id for
/// a grid, else the projection of its latent features) written as the flat keys of SPEC 8
/// in place of the latent features, without the other branch's knobs (`agg_*` in a
/// disaggregated candidate, `prefill_*` / `decode_*` in an aggregated one).
pub(crate) fn candidate(
    trial: &Trial,
    pool: Option<&Pool>,
) -> (Map<String, Value>, Option<Deployment>) {
    let raw = parameters(trial);
    let Some(pool) = pool else {
        return (raw, None);
    };
    let deployment = *raw
        .get(TOPOLOGY)
        .and_then(Value::as_str)
        .and_then(|id| pool.by_id(id))
        .unwrap_or_else(|| pool.project(&raw));
    let mut out: Map<String, Value> = raw
        .into_iter()
        .filter(|(name, _)| name != TOPOLOGY && !Pool::LATENT_NAMES.contains(&name.as_str()))
        .filter(|(name, _)| deployment.mode().has_key(name))
        .collect();
    out.extend(deployment.flat());
    (out, Some(deployment))
}

/// With a topology and a KV load ratio (SPEC 5): the concurrency the ratio converts to
/// against the deployment's decode pool (or its aggregated pool), attention-DP ranks and
/// replicas multiplying the per-rank KV tokens of the cards; `Err` (infeasible) when that
/// pool holds less than one request. `Ok(None)` without a ratio.
pub(crate) fn topology_concurrency(
    config: &SweepConfig,
    deployment: &Deployment,
    searched_ratio: Option<f64>,
) -> Result<Option<u64>, String> {
    let Some(Workload::Synthetic { isl, osl, load, .. }) = &config.workload else {
        return Ok(None);
    };
    let ratio = match load {
        Load::KvLoadRatio(r) => *r,
        Load::KvLoadRange { .. } => match searched_ratio {
            Some(r) => r,
            None => return Ok(None),
        },
        _ => return Ok(None),
    };
    let (role, kv) = deployment.load_role();
    concurrency_for_ratio(role, kv, *isl, *osl, ratio)
        .map(|l| Some(l.concurrency))
        .map_err(|e| e.to_string())
}

/// The name of the study parameter that carries a searched `kv_load_ratio` range.
pub(crate) const KV_LOAD_RATIO: &str = "kv_load_ratio";

/// Converts a config's search space into the sampler's: with a topology, first its
/// dimensions (the latent features of [`Pool::latents`], or for a grid one categorical
/// `topology` of the pool's deployments); then the parameters in the order
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
    search_space_of(config, None)
}

/// The search space of one deployment mode's study ([`search_space`] for `None`): the
/// latent features of that mode's deployments, and the parameters without the other
/// branch's knobs (`prefill_*` / `decode_*` for `agg`, `agg_*` for `disagg`).
pub fn search_space_of(
    config: &SweepConfig,
    branch: Option<DeploymentMode>,
) -> Result<SearchSpace, RunError> {
    let mut space = SearchSpace::new();
    if let Some(pool) = topology_pool(config)? {
        add_topology(
            &mut space,
            &pool,
            config.sweep.algorithm == AlgorithmName::Grid,
            branch,
        )?;
    }
    for (name, spec) in &config.search_space.parameters {
        if !in_branch(name, branch) {
            continue;
        }
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

/// Whether a parameter belongs to a branch: `agg_*` to `agg`, `prefill_*` and `decode_*` to
/// `disagg`, every other to both.
fn in_branch(name: &str, branch: Option<DeploymentMode>) -> bool {
    branch.is_none_or(|mode| mode.has_key(name))
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
    if config.search_space.topology.is_some() {
        return Ok(parameters.get("used_gpus").and_then(Value::as_u64));
    }
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

/// The level of a load searched as a parameter ([`SweepConfig::searched_load`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Level {
    /// In-flight requests, closed loop.
    Concurrency(u64),
    /// Requests per second, open loop.
    RequestRate(f64),
}

impl Level {
    /// The parameter's name and its value, as the candidate's configuration records it.
    pub(crate) fn entry(self) -> (String, Value) {
        match self {
            Level::Concurrency(c) => (SearchedLoad::Concurrency.key().to_owned(), Value::from(c)),
            Level::RequestRate(r) => (
                SearchedLoad::RequestRate.key().to_owned(),
                super::ledger::json_number(r),
            ),
        }
    }
}

/// Takes the searched load's level out of a candidate's parameters: it travels as the
/// request's load (`concurrency` or `request_rate`), not as a parameter. `Ok(None)` when
/// the config searches no load; an error names a level that is no load (a candidate given
/// by hand: `sweeper evaluate --candidate`).
pub(crate) fn take_level(
    config: &SweepConfig,
    parameters: &mut Map<String, Value>,
) -> Result<Option<Level>, String> {
    let Some(load) = config.searched_load() else {
        return Ok(None);
    };
    let key = load.key();
    let Some(value) = parameters.remove(key) else {
        return Ok(None);
    };
    let x = value.as_f64().filter(|x| x.is_finite() && *x > 0.0);
    match (load, x) {
        (SearchedLoad::Concurrency, Some(c)) if c.fract() == 0.0 && c < 9.0e15 => {
            Ok(Some(Level::Concurrency(c as u64)))
        }
        (SearchedLoad::RequestRate, Some(r)) => Ok(Some(Level::RequestRate(r))),
        (SearchedLoad::Concurrency, _) => Err(format!(
            "concurrency = {value} is not a load: it is a whole number of requests in flight > 0"
        )),
        (SearchedLoad::RequestRate, _) => Err(format!(
            "request_rate = {value} is not a load: it is a finite number of requests per second > 0"
        )),
    }
}

/// Builds the evaluator's candidate object for a set of parameters (and a searched ratio
/// or a searched load's level).
pub(crate) fn request(
    config: &SweepConfig,
    id: u64,
    parameters: Map<String, Value>,
    searched_ratio: Option<f64>,
    level: Option<Level>,
    used_gpus: Option<u64>,
) -> EvalRequest {
    let (concurrency, kv_load_ratio) = match &config.workload {
        None => (None, None),
        Some(Workload::Trace {
            replay_concurrency, ..
        }) => (*replay_concurrency, None),
        Some(Workload::Synthetic { load, .. }) => match load {
            Load::Concurrency(c) => (Some(*c), None),
            // an open loop, or a level the request gets below
            Load::RequestRate(_) | Load::Searched(_) => (None, None),
            Load::KvLoadRatio(r) => (None, Some(*r)),
            Load::KvLoadRange { .. } => (None, searched_ratio),
        },
    };
    let mut request = EvalRequest::new(id, parameters);
    request.used_gpus = used_gpus;
    request.concurrency = concurrency;
    request.kv_load_ratio = kv_load_ratio;
    match level {
        Some(Level::Concurrency(c)) => request.concurrency = Some(c),
        Some(Level::RequestRate(r)) => request.request_rate = Some(r),
        None => {}
    }
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

#[cfg(test)]
mod topology_tests {
    use super::*;
    use crate::{default_proposer, default_study};
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn config(model: &str, budget: u64, algorithm: &str, seed: u64) -> SweepConfig {
        sweeper_goal::parse(&format!(
            "goal: {{target: pareto}}
workload: {{isl: 2000, osl: 500, num_request_ratio: 2, concurrency: 8}}
search_space:
  gpu_budget: {budget}
  topology: {{model: {model}, gpu: h200, backend: [vllm, sglang, trtllm]}}
  parameters: {{max_batch_size: {{values: [64, 256]}}, agg_x: {{values: [1, 2]}}, decode_y: {{values: [3, 4]}}}}
sweep: {{algorithm: {algorithm}, seed: {seed}}}"
        ))
        .unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]

        /// Every suggestion of every algorithm is a deployment of the pool, within the
        /// budget, with only its own branch's knobs.
        #[test]
        fn every_suggestion_of_every_algorithm_is_in_the_pool(
            model in prop::sample::select(vec!["llama3-8b-fp8", "qwen3-30b-a3b-fp8"]),
            budget in prop::sample::select(vec![4_u64, 8, 12]),
            seed in 0_u64..1000,
        ) {
            for algorithm in ["default", "random", "quasi_random", "grid"] {
                let config = config(model, budget, algorithm, seed);
                let pool = topology_pool(&config).unwrap().unwrap();
                let flats: BTreeSet<String> = pool
                    .deployments()
                    .iter()
                    .map(|d| Value::Object(d.flat()).to_string())
                    .collect();
                let mut proposer = default_proposer(&config).unwrap();
                let trials = proposer.suggest(12).unwrap();
                if algorithm != "grid" {
                    // one study per mode: the 12 split 6 and 6
                    let disagg = trials
                        .iter()
                        .filter(|t| t.params.iter().any(|(n, v)| n == "deployment_mode" && *v == sweeper_sampler::ParamValue::Str("disagg".into())))
                        .count();
                    prop_assert_eq!(disagg, 6);
                }
                for trial in trials {
                    let (params, d) = candidate(&trial, Some(&pool));
                    let d = d.unwrap();
                    prop_assert!(flats.contains(&Value::Object(d.flat()).to_string()));
                    let used = declared_gpus(&config, &params).unwrap().unwrap();
                    prop_assert!(used <= budget && used == d.used_gpus());
                    for (k, v) in d.flat() {
                        prop_assert_eq!(&params[&k], &v);
                    }
                    let disagg = params["deployment_mode"] == "disagg";
                    prop_assert_eq!(params.contains_key("agg_x"), !disagg);
                    prop_assert_eq!(params.contains_key("decode_y"), disagg);
                    prop_assert!(params.keys().all(|k| !k.starts_with("topology")));
                }
            }
        }
    }

    #[test]
    fn branches_split_the_trials_whatever_they_are_told() {
        let config = config("qwen3-30b-a3b-fp8", 16, "default", 1);
        let mut proposer = default_proposer(&config).unwrap();
        let mut count = [0_usize; 2];
        for round in 0..6 {
            let trials = proposer.suggest(3).unwrap();
            for t in &trials {
                let disagg = t.params[0].1 == sweeper_sampler::ParamValue::Str("disagg".into());
                count[usize::from(disagg)] += 1;
                // the aggregated branch always scores better: a single study chases it
                let m = std::collections::BTreeMap::from([
                    (
                        "throughput_per_gpu".to_owned(),
                        if disagg { 1.0 } else { 100.0 },
                    ),
                    (
                        "throughput_per_user".to_owned(),
                        if disagg { 1.0 } else { 100.0 },
                    ),
                ]);
                proposer.observe(t.id, &m).unwrap();
            }
            assert_eq!(trials.len(), 3, "round {round}");
        }
        // 18 trials in calls of 3: the remainder's turn alternates, 9 and 9
        assert_eq!(count, [9, 9]);
    }

    #[test]
    fn grid_enumerates_exactly_the_pool_times_the_other_parameters() {
        let config = sweeper_goal::parse(
            "workload: {isl: 2000, osl: 500, num_request_ratio: 2, concurrency: 8}
search_space:
  gpu_budget: 4
  topology: {model: llama3-8b-fp8, gpu: h200}
  parameters: {max_batch_size: {values: [64, 256]}}
sweep: {algorithm: grid}",
        )
        .unwrap();
        let pool = topology_pool(&config).unwrap().unwrap();
        // hand-counted: agg tp1 × 1..4, tp2 × 1..2, tp4 × 1 = 7; disagg pairs within 4 = 11
        assert_eq!(pool.deployments().len(), 18);
        let mut study = default_study(&config).unwrap();
        let trials = study.suggest(100).unwrap();
        let seen: BTreeSet<String> = trials
            .iter()
            .map(|t| Value::Object(candidate(t, Some(&pool)).0).to_string())
            .collect();
        assert_eq!(trials.len(), 36);
        assert_eq!(seen.len(), 36);
    }

    #[test]
    fn a_kv_ratio_converts_against_the_decode_pool() {
        let config = sweeper_goal::parse(
            "workload: {isl: 1000, osl: 1000, num_request_ratio: 2, kv_load_ratio: 0.5}
search_space:
  gpu_budget: 8
  topology: {model: qwen3-30b-a3b-fp8, gpu: h200, deployment_mode: [disagg],
             parallel_configs: [{prefill: {tp: 2, moe_ep: 2}, decode: {tp: 1, attention_dp: 4, moe_ep: 4}}]}",
        )
        .unwrap();
        let pool = topology_pool(&config).unwrap().unwrap();
        let d = pool.deployments()[0];
        let decode = d.decode_worker();
        // SPEC 5: per-rank tokens rounded to vLLM's blocks of 16, times 4 attention-DP ranks
        let tokens = decode.kv_tokens_per_rank / 16 * 16 * 4;
        let expected = (tokens / 1500) / 2;
        assert_eq!(topology_concurrency(&config, &d, None), Ok(Some(expected)));
        assert!(expected > 1000, "{expected}");
    }
}
