//! `sweeper-topology`: the serving topologies of a sweep (SPEC 8): the pool of legal,
//! KV-feasible deployments a `search_space.topology` block allows, and the deterministic
//! projection of a sampler's latent request onto that pool.
//!
//! Layer 2, on `sweeper-goal` (the validated config) and `sweeper-cards` (the model and GPU
//! cards and their memory accounting). Invariant: every [`Deployment`] of a [`Pool`] obeys
//! every rule below, and [`Pool::project`] and [`Pool::by_id`] only ever return one of them,
//! so a sampler that goes through them never proposes an illegal or over-budget shape.
//!
//! # The rules (as the upstream states them, `reference/spica/search-space.md`)
//!
//! 1. A worker spans `tp × attention_dp` GPUs (no pipeline parallelism), a size from
//!    `gpus_per_worker` (default 1, 2, 4, 8, 16) no larger than `gpu_budget`.
//! 2. A dense model uses plain TP. A MoE model uses the four pure patterns under the width
//!    rule `tp × attention_dp = moe_tp × moe_ep`: TEP (`tp > 1`, experts EP), DEP (attention
//!    DP, experts EP), TP (experts TP), DTP (attention DP, experts TP); one GPU is TP.
//! 3. The model must split that way ([`sweeper_cards::ModelSpec::check_shape`]): heads
//!    divisible by `tp`, experts by `moe_ep`, and an expert-TP split keeps whole FP8 blocks
//!    (Qwen3-235B-A22B-FP8 at `moe_tp` 8: 1536 / 8 = 192 is no multiple of 128, refused).
//! 4. Backend filters ([`backend_refuses`]): `trtllm` no `tp > 1` with `attention_dp > 1`;
//!    `sglang` `moe_tp == 1` for MoE; `vllm` no `moe_tp > 1` with `moe_ep > 1`. TensorRT-LLM
//!    is searched in aggregated branches only (Dynamo's replay rejects its disaggregation).
//! 5. KV feasibility: one attention rank's KV cache, after the weights it stores,
//!    activations, reserves and the engine's memory fraction ([`memory_settings`]), holds
//!    one `context_length` sequence (default: the workload's `isl + osl`).
//! 6. Replicas fill the budget: an aggregated deployment uses `g × r` GPUs in
//!    `[min_gpu_budget, gpu_budget]`; a disaggregated one pairs a prefill pool and a decode
//!    pool, each enumerated on its own, whose sum lies in that range.
//! 7. A pinned menu (`parallel_configs`) replaces the enumeration: each entry is checked
//!    against the same rules per backend, kept where legal, and refused when legal nowhere.
//!
//! An empty pool is [`TopologyError::EmptyPool`], naming why (the model does not fit the
//! GPU within the budget, say). A mode with no viable backend is skipped with a note in
//! [`Pool::notes`] while another mode has candidates.
//!
//! # The candidate
//!
//! [`Deployment::flat`] gives the flat keys of SPEC 8: `deployment_mode`, `backend`, `tp`,
//! `pp`, `attention_dp`, `moe_tp`, `moe_ep`, `strategy`, `replicas` (prefixed `prefill_` and
//! `decode_` for a disaggregated deployment; the other branch's keys absent) and
//! `used_gpus`, the sum over roles. [`Deployment::load_role`] is the pool a KV load ratio
//! converts against: the decode pool of a disaggregated deployment (SPEC 5).
//!
//! # The sampler's view
//!
//! [`Pool::latents`] lists the latent features a sampler searches instead of the shape:
//! the deployment mode and backend (categorical), the share of the budget used, the
//! prefill share of a disaggregated deployment, the GPUs per worker of each role (log
//! scale), and the attention (`tp`/`dp`) and FFN (`ep`/`tp`) modes of each role.
//! [`Pool::project`] maps a request to the nearest deployment of its mode and backend:
//! fewest mode mismatches first, then the smallest normalized squared distance, ties by the
//! pool's order, so it is a pure function of the request. [`Pool::ids`] and [`Pool::by_id`]
//! are the categorical view a grid enumerates (exactly the pool).
//!
//! ```
//! let config = sweeper_goal::parse(
//!     "workload: {isl: 4000, osl: 1000, num_request_ratio: 4, concurrency: 8}
//! search_space:
//!   gpu_budget: 16
//!   topology: {model: qwen3-235b-a22b-fp8, gpu: h200, deployment_mode: [agg]}",
//! )?;
//! let pool = sweeper_topology::Pool::build(&config)?;
//! assert!(pool.deployments().iter().all(|d| d.used_gpus() <= 16));
//! // expert TP 8 keeps no whole FP8 blocks of the 1,536-wide experts: never in the pool
//! assert!(pool.deployments().iter().all(|d| d.decode_worker().shape.moe_tp != 8));
//! let first = &pool.deployments()[0];
//! assert_eq!(pool.by_id(&first.id()), Some(first));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod pool;
mod project;

pub use pool::{
    Deployment, Roles, Worker, attention_mode, backend_refuses, backend_runs_mode, block_size,
    ffn_mode, memory_settings, patterns,
};
pub use project::{Latent, LatentKind};

use pool::Inputs;
use std::collections::BTreeMap;
use sweeper_cards::{CardError, GpuSpec, ModelSpec, gpu_presets, model_presets};
use sweeper_goal::{Backend, DeploymentMode, SweepConfig, TopologyConfig, Workload};

/// Why a topology cannot be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// The config has no `search_space.topology`.
    #[error("search_space.topology: missing; this config derives no shapes")]
    NoTopology,
    /// `model` or `gpu` names no preset and no card of the config.
    #[error(
        "{path}: unknown {kind} `{name}`; known: {known} (or add a card under the top-level {kind}s:)"
    )]
    UnknownCard {
        /// `search_space.topology.model` or `.gpu`.
        path: String,
        /// `model` or `gpu`.
        kind: &'static str,
        /// The name asked for.
        name: String,
        /// The presets and cards known, comma-separated.
        known: String,
    },
    /// A card of the config's `models:` / `gpus:` is malformed.
    #[error("{0}")]
    Card(#[from] CardError),
    /// No context length: a trace workload and no `topology.context_length`.
    #[error(
        "search_space.topology.context_length: missing; without a synthetic workload (isl + osl) the KV feasibility needs it, e.g. `context_length: 8192`"
    )]
    NoContextLength,
    /// A pinned `parallel_configs` entry legal for no backend.
    #[error("search_space.topology.parallel_configs[{index}]: legal for no backend listed: {why}")]
    Pinned {
        /// Index of the entry.
        index: usize,
        /// Why, for the first backend listed.
        why: String,
    },
    /// No deployment is legal and feasible.
    #[error("search_space.topology: no candidate deployment: {why}")]
    EmptyPool {
        /// Why, and what to change.
        why: String,
    },
}

/// The pool of a topology: its deployments in a fixed order (mode, backend, then shapes),
/// the counts per mode and backend, and the inputs it was built from.
#[derive(Debug, Clone)]
pub struct Pool {
    deployments: Vec<Deployment>,
    index: BTreeMap<String, usize>,
    gpu_budget: u64,
    min_gpu_budget: u64,
    context_length: u64,
    model_name: String,
    gpu_name: String,
    moe: bool,
    counts: Vec<(DeploymentMode, Backend, usize)>,
    notes: Vec<String>,
}

/// Resolves the topology's model and GPU: a card under the config's `models:` / `gpus:`
/// (which replaces a preset of the same name), else a preset.
pub fn resolve_cards(
    config: &SweepConfig,
    topology: &TopologyConfig,
) -> Result<(ModelSpec, GpuSpec), TopologyError> {
    fn pick<T>(
        presets: BTreeMap<String, T>,
        extra: Option<&serde_json::Value>,
        name: &str,
        kind: &'static str,
        parse: impl Fn(&serde_json::Value, &str) -> Result<T, CardError>,
    ) -> Result<T, TopologyError> {
        if let Some(card) = extra.and_then(|m| m.get(name)) {
            return Ok(parse(card, &format!("{kind}s.{name}"))?);
        }
        let mut known: Vec<String> = presets.keys().cloned().collect();
        if let Some(serde_json::Value::Object(m)) = extra {
            known.extend(m.keys().cloned());
        }
        presets
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
            .ok_or_else(|| TopologyError::UnknownCard {
                path: format!("search_space.topology.{kind}"),
                kind,
                name: name.to_owned(),
                known: known.join(", "),
            })
    }
    let model = pick(
        model_presets(),
        config.models.as_ref(),
        &topology.model,
        "model",
        sweeper_cards::parse_model,
    )?;
    let gpu = pick(
        gpu_presets(),
        config.gpus.as_ref(),
        &topology.gpu,
        "gpu",
        sweeper_cards::parse_gpu,
    )?;
    Ok((model, gpu))
}

impl Pool {
    /// Builds the pool of `config`'s topology (see the crate docs for the rules).
    pub fn build(config: &SweepConfig) -> Result<Pool, TopologyError> {
        let topology = config
            .search_space
            .topology
            .as_ref()
            .ok_or(TopologyError::NoTopology)?;
        let (model, gpu) = resolve_cards(config, topology)?;
        let context_length = match (topology.context_length, &config.workload) {
            (Some(c), _) => c,
            (None, Some(Workload::Synthetic { isl, osl, .. })) => isl + osl,
            (None, _) => return Err(TopologyError::NoContextLength),
        };
        let inputs = Inputs {
            model: &model,
            gpu: &gpu,
            topology,
            gpu_budget: config.search_space.gpu_budget,
            min_gpu_budget: config.search_space.min_gpu_budget.unwrap_or(1),
            context_length,
        };
        let mut deployments = Vec::new();
        let mut counts = Vec::new();
        let mut notes = Vec::new();
        let mut refusals = Vec::new();
        let mut pinned_errors: Vec<Option<String>> = vec![None; topology.parallel_configs.len()];
        let mut pinned_kept = vec![false; topology.parallel_configs.len()];
        for &mode in &topology.deployment_modes {
            for &backend in &topology.backends {
                if !backend_runs_mode(backend, mode) {
                    notes.push(format!(
                        "{} is not searched in {} (Dynamo's replay rejects TensorRT-LLM disaggregation)",
                        backend.as_str(),
                        mode.as_str()
                    ));
                    continue;
                }
                let found = if topology.parallel_configs.is_empty() {
                    let (shapes, refused) = pool::worker_shapes(&inputs, backend);
                    refusals.extend(refused);
                    pool::enumerate(&inputs, mode, backend, &shapes)
                } else {
                    let mut found = Vec::new();
                    for (i, entry) in topology.parallel_configs.iter().enumerate() {
                        match pool::pinned(&inputs, backend, entry) {
                            Ok(d) => {
                                pinned_kept[i] = true;
                                found.push(d);
                            }
                            Err(why) => {
                                pinned_errors[i]
                                    .get_or_insert(format!("{}: {why}", backend.as_str()));
                            }
                        }
                    }
                    found
                };
                if found.is_empty() {
                    notes.push(format!(
                        "{} {} has no candidate",
                        mode.as_str(),
                        backend.as_str()
                    ));
                }
                counts.push((mode, backend, found.len()));
                deployments.extend(found);
            }
        }
        if let Some(i) = pinned_kept.iter().position(|k| !k) {
            return Err(TopologyError::Pinned {
                index: i,
                why: pinned_errors[i]
                    .clone()
                    .unwrap_or_else(|| "no backend of this mode is searched".to_owned()),
            });
        }
        if deployments.is_empty() {
            return Err(TopologyError::EmptyPool {
                why: empty_reason(&inputs, &topology.model, &topology.gpu, &refusals),
            });
        }
        deployments.sort();
        deployments.dedup();
        let index = deployments
            .iter()
            .enumerate()
            .map(|(i, d)| (d.id(), i))
            .collect();
        Ok(Pool {
            deployments,
            index,
            gpu_budget: inputs.gpu_budget,
            min_gpu_budget: inputs.min_gpu_budget,
            context_length,
            model_name: topology.model.clone(),
            gpu_name: topology.gpu.clone(),
            moe: model.moe.is_some(),
            counts,
            notes,
        })
    }

    /// The deployments, in the pool's fixed order.
    pub fn deployments(&self) -> &[Deployment] {
        &self.deployments
    }

    /// The deployment of an id ([`Deployment::id`]).
    pub fn by_id(&self, id: &str) -> Option<&Deployment> {
        self.index.get(id).map(|&i| &self.deployments[i])
    }

    /// Every id, in the pool's order: the categorical view a grid enumerates.
    pub fn ids(&self) -> Vec<String> {
        self.deployments.iter().map(Deployment::id).collect()
    }

    /// The deployment modes the pool holds, agg first.
    pub fn modes(&self) -> Vec<DeploymentMode> {
        let mut modes: Vec<DeploymentMode> =
            self.deployments.iter().map(Deployment::mode).collect();
        modes.sort();
        modes.dedup();
        modes
    }

    /// How many deployments each searched mode and backend has, in the config's order.
    pub fn counts(&self) -> &[(DeploymentMode, Backend, usize)] {
        &self.counts
    }

    /// Modes or backends skipped, and why.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The GPU budget the pool fills.
    pub fn gpu_budget(&self) -> u64 {
        self.gpu_budget
    }

    /// The fewest GPUs a deployment uses (`min_gpu_budget`, 1 by default).
    pub fn min_gpu_budget(&self) -> u64 {
        self.min_gpu_budget
    }

    /// The sequence length one rank's KV cache holds in every deployment.
    pub fn context_length(&self) -> u64 {
        self.context_length
    }

    /// Whether the model is a mixture of experts.
    pub fn is_moe(&self) -> bool {
        self.moe
    }

    /// One line per mode and backend, for `sweeper validate`: `agg vllm: 12 candidates`.
    pub fn summary(&self) -> String {
        let parts: Vec<String> = self
            .counts
            .iter()
            .map(|(m, b, n)| format!("{} {}: {n}", m.as_str(), b.as_str()))
            .collect();
        format!(
            "topology: {} on {}, context {} tokens, {} to {} GPUs: {} deployments ({})",
            self.model_name,
            self.gpu_name,
            self.context_length,
            self.min_gpu_budget,
            self.gpu_budget,
            self.deployments.len(),
            parts.join(", ")
        )
    }
}

fn empty_reason(inputs: &Inputs<'_>, model: &str, gpu: &str, refusals: &[pool::Refusal]) -> String {
    let budget = inputs.gpu_budget;
    if inputs.topology.gpus_per_worker.iter().all(|&g| g > budget) {
        return format!(
            "every worker size of gpus_per_worker {:?} is over gpu_budget {budget}; raise gpu_budget or list smaller sizes",
            inputs.topology.gpus_per_worker
        );
    }
    if let Some(biggest) = refusals
        .iter()
        .filter(|r| r.memory)
        .max_by_key(|r| r.shape.gpus())
        && refusals
            .iter()
            .all(|r| r.memory || r.shape.gpus() < biggest.shape.gpus())
    {
        return format!(
            "{model} does not fit on {gpu} within gpu_budget {budget} for a {}-token context: even {}; raise gpu_budget, allow larger workers (gpus_per_worker), lower context_length, or pick a larger GPU",
            inputs.context_length, biggest.reason
        );
    }
    match refusals.first() {
        Some(r) => format!(
            "every shape is refused, e.g. {} GPUs as {}: {}; widen gpus_per_worker or the backends",
            r.shape.gpus(),
            r.shape.strategy().as_str(),
            r.reason
        ),
        None => format!(
            "no deployment uses between min_gpu_budget {} and gpu_budget {budget} GPUs; lower min_gpu_budget or raise gpu_budget",
            inputs.min_gpu_budget
        ),
    }
}
