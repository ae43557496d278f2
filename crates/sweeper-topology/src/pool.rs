//! The pool: every legal, KV-feasible deployment of a topology within the GPU budget.

use serde_json::{Map, Value};
use sweeper_cards::{FractionOf, GpuSpec, MemorySettings, ModelSpec, Shape, Strategy};
use sweeper_goal::{Backend, DeploymentMode, KvRole, PinnedConfig, PinnedShape, TopologyConfig};

/// One pool of workers: a shape, its replicas, and the KV tokens one of its ranks holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Worker {
    /// The parallel shape of one worker.
    pub shape: Shape,
    /// Workers of this shape.
    pub replicas: u64,
    /// KV tokens one attention rank holds in sequences of the context length (the memory
    /// plan of the cards).
    pub kv_tokens_per_rank: u64,
}

impl Worker {
    /// GPUs of the pool: `tp × attention_dp × replicas`.
    pub fn gpus(&self) -> u64 {
        self.shape.gpus() * self.replicas
    }

    fn label(&self) -> String {
        format!(
            "{}{}x{}",
            self.shape.strategy().as_str(),
            self.shape.gpus(),
            self.replicas
        )
    }

    fn flat_into(&self, prefix: &str, m: &mut Map<String, Value>) {
        let s = self.shape;
        for (key, value) in [
            ("tp", Value::from(s.tp)),
            ("pp", Value::from(1)),
            ("attention_dp", Value::from(s.attention_dp)),
            ("moe_tp", Value::from(s.moe_tp)),
            ("moe_ep", Value::from(s.moe_ep)),
            ("strategy", Value::from(s.strategy().as_str())),
            ("replicas", Value::from(self.replicas)),
        ] {
            m.insert(format!("{prefix}{key}"), value);
        }
    }
}

/// The pools of one deployment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Roles {
    /// Aggregated: one pool.
    Agg(Worker),
    /// Disaggregated: a prefill pool and a decode pool.
    Disagg {
        /// The prefill pool.
        prefill: Worker,
        /// The decode pool.
        decode: Worker,
    },
}

/// One candidate deployment of the pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Deployment {
    /// The serving engine.
    pub backend: Backend,
    /// Its pools.
    pub roles: Roles,
}

impl Deployment {
    /// `agg` or `disagg`.
    pub fn mode(&self) -> DeploymentMode {
        match self.roles {
            Roles::Agg(_) => DeploymentMode::Agg,
            Roles::Disagg { .. } => DeploymentMode::Disagg,
        }
    }

    /// GPUs of the deployment: the sum over its pools.
    pub fn used_gpus(&self) -> u64 {
        match self.roles {
            Roles::Agg(w) => w.gpus(),
            Roles::Disagg { prefill, decode } => prefill.gpus() + decode.gpus(),
        }
    }

    /// The pool that holds the requests' KV cache while they decode: the decode pool, else
    /// the aggregated one.
    pub fn decode_worker(&self) -> Worker {
        match self.roles {
            Roles::Agg(w) | Roles::Disagg { decode: w, .. } => w,
        }
    }

    /// The prefill pool of a disaggregated deployment.
    pub fn prefill_worker(&self) -> Option<Worker> {
        match self.roles {
            Roles::Agg(_) => None,
            Roles::Disagg { prefill, .. } => Some(prefill),
        }
    }

    /// A stable, readable name: `agg:vllm:tep8x2` (strategy, GPUs per worker, replicas),
    /// `disagg:vllm:tep8x1+dep8x2` (prefill + decode).
    pub fn id(&self) -> String {
        let roles = match self.roles {
            Roles::Agg(w) => w.label(),
            Roles::Disagg { prefill, decode } => format!("{}+{}", prefill.label(), decode.label()),
        };
        format!("{}:{}:{roles}", self.mode().as_str(), self.backend.as_str())
    }

    /// The candidate's flat keys (SPEC 8): `deployment_mode`, `backend`, then `tp`, `pp`,
    /// `attention_dp`, `moe_tp`, `moe_ep`, `strategy`, `replicas` (prefixed `prefill_` and
    /// `decode_` for a disaggregated deployment), and `used_gpus`.
    pub fn flat(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("deployment_mode".into(), self.mode().as_str().into());
        m.insert("backend".into(), self.backend.as_str().into());
        match self.roles {
            Roles::Agg(w) => w.flat_into("", &mut m),
            Roles::Disagg { prefill, decode } => {
                prefill.flat_into(sweeper_goal::PREFILL_PREFIX, &mut m);
                decode.flat_into(sweeper_goal::DECODE_PREFIX, &mut m);
            }
        }
        m.insert("used_gpus".into(), self.used_gpus().into());
        m
    }

    /// The role a KV load ratio converts against (SPEC 5): `decode` for a disaggregated
    /// deployment, else `aggregated`, with its KV cache (attention-DP ranks multiply it).
    pub fn load_role(&self) -> (&'static str, KvRole) {
        let w = self.decode_worker();
        let name = match self.roles {
            Roles::Agg(_) => "aggregated",
            Roles::Disagg { .. } => "decode",
        };
        (
            name,
            KvRole {
                kv_tokens_per_rank: w.kv_tokens_per_rank,
                block_size: block_size(self.backend),
                attention_dp: w.shape.attention_dp,
                replicas: w.replicas,
            },
        )
    }
}

/// Tokens per KV block of each engine's default (vLLM 16, `SGLang` pages of 1, TensorRT-LLM
/// 32): SPEC 5 rounds a rank's tokens down to whole blocks.
pub fn block_size(backend: Backend) -> u64 {
    match backend {
        Backend::Vllm => 16,
        Backend::Sglang => 1,
        Backend::Trtllm => 32,
    }
}

/// How each engine applies its memory fraction (vLLM `gpu_memory_utilization` and `SGLang`
/// `mem_fraction_static` of the total, TensorRT-LLM `free_gpu_memory_fraction` of what is
/// left; 0.9 each), and how `SGLang` sizes the pool of sliding-window layers.
pub fn memory_settings(backend: Backend) -> MemorySettings {
    match backend {
        Backend::Vllm => MemorySettings::vllm(),
        Backend::Sglang => MemorySettings::sglang(),
        Backend::Trtllm => MemorySettings::vllm().with_fraction(0.9, FractionOf::Free),
    }
}

/// Whether a backend runs a shape, as the upstream states its filters: TensorRT-LLM
/// refuses `tp > 1` with `attention_dp > 1`; `SGLang`'s expert-parallel MoE backends need
/// `moe_tp == 1` (for a MoE model); vLLM refuses `moe_tp > 1` with `moe_ep > 1`.
pub fn backend_refuses(backend: Backend, shape: Shape, moe: bool) -> Option<&'static str> {
    match backend {
        Backend::Trtllm if shape.tp > 1 && shape.attention_dp > 1 => {
            Some("trtllm does not run tp > 1 together with attention_dp > 1")
        }
        Backend::Sglang if moe && shape.moe_tp > 1 => {
            Some("sglang's expert-parallel MoE backends need moe_tp 1")
        }
        Backend::Vllm if shape.moe_tp > 1 && shape.moe_ep > 1 => {
            Some("vllm does not run moe_tp > 1 together with moe_ep > 1")
        }
        _ => None,
    }
}

/// Whether a backend is replayed in a mode: Dynamo's replay rejects TensorRT-LLM
/// disaggregation, so it is searched in aggregated branches only.
pub fn backend_runs_mode(backend: Backend, mode: DeploymentMode) -> bool {
    !(backend == Backend::Trtllm && mode == DeploymentMode::Disagg)
}

/// The worker shapes of one size: dense plain TP; MoE the pure patterns TEP, DEP, TP, DTP.
pub fn patterns(model: &ModelSpec, gpus: u64) -> Vec<Shape> {
    let shape = |tp, attention_dp, moe_tp, moe_ep| Shape {
        tp,
        attention_dp,
        moe_tp,
        moe_ep,
    };
    if model.moe.is_none() {
        return vec![Shape::dense(gpus)];
    }
    if gpus == 1 {
        return vec![shape(1, 1, 1, 1)];
    }
    vec![
        shape(gpus, 1, 1, gpus), // TEP
        shape(1, gpus, 1, gpus), // DEP
        shape(gpus, 1, gpus, 1), // TP
        shape(1, gpus, gpus, 1), // DTP
    ]
}

/// Why one shape is out, for the message of an empty pool.
#[derive(Debug, Clone)]
pub(crate) struct Refusal {
    pub(crate) shape: Shape,
    pub(crate) reason: String,
    /// Whether it is the memory (the shape is legal but its KV holds too little).
    pub(crate) memory: bool,
}

/// The checks of one worker shape for a backend: the model's splits, the backend filter,
/// the KV feasibility. `Ok(kv tokens per rank)` when kept.
pub(crate) fn check_worker(
    model: &ModelSpec,
    gpu: &GpuSpec,
    backend: Backend,
    shape: Shape,
    context_length: u64,
) -> Result<u64, Refusal> {
    let refuse = |reason: String, memory| Refusal {
        shape,
        reason,
        memory,
    };
    model
        .check_shape(shape)
        .map_err(|e| refuse(e.to_string(), false))?;
    if let Some(why) = backend_refuses(backend, shape, model.moe.is_some()) {
        return Err(refuse(why.to_owned(), false));
    }
    let plan = model.memory_plan(gpu, shape, &memory_settings(backend));
    if !plan.holds(context_length) {
        return Err(refuse(
            format!(
                "{} GPUs as {}: {:.1} GB of weights per rank leave KV room for {} tokens, fewer than one {context_length}-token sequence",
                shape.gpus(),
                shape.strategy().as_str(),
                plan.weight_bytes / 1e9,
                plan.tokens_at(context_length)
            ),
            true,
        ));
    }
    // in sequences of the context length (sliding-window layers keep at most their window)
    Ok(plan.tokens_at(context_length))
}

/// Everything the enumeration needs.
pub(crate) struct Inputs<'a> {
    pub(crate) model: &'a ModelSpec,
    pub(crate) gpu: &'a GpuSpec,
    pub(crate) topology: &'a TopologyConfig,
    pub(crate) gpu_budget: u64,
    pub(crate) min_gpu_budget: u64,
    pub(crate) context_length: u64,
}

/// The kept worker shapes of one backend (sorted), and the refusals.
pub(crate) fn worker_shapes(
    inputs: &Inputs<'_>,
    backend: Backend,
) -> (Vec<(Shape, u64)>, Vec<Refusal>) {
    let mut kept = Vec::new();
    let mut refused = Vec::new();
    for &g in &inputs.topology.gpus_per_worker {
        if g > inputs.gpu_budget {
            continue;
        }
        for shape in patterns(inputs.model, g) {
            match check_worker(
                inputs.model,
                inputs.gpu,
                backend,
                shape,
                inputs.context_length,
            ) {
                Ok(tokens) => kept.push((shape, tokens)),
                Err(r) => refused.push(r),
            }
        }
    }
    (kept, refused)
}

/// The enumerated deployments of one mode and backend.
pub(crate) fn enumerate(
    inputs: &Inputs<'_>,
    mode: DeploymentMode,
    backend: Backend,
    shapes: &[(Shape, u64)],
) -> Vec<Deployment> {
    let (lo, hi) = (inputs.min_gpu_budget, inputs.gpu_budget);
    // every (shape, replicas) of one role within the budget
    let mut workers = Vec::new();
    for &(shape, kv) in shapes {
        for replicas in 1..=hi / shape.gpus() {
            workers.push(Worker {
                shape,
                replicas,
                kv_tokens_per_rank: kv,
            });
        }
    }
    let mut out = Vec::new();
    match mode {
        DeploymentMode::Agg => {
            for w in workers {
                if (lo..=hi).contains(&w.gpus()) {
                    out.push(Deployment {
                        backend,
                        roles: Roles::Agg(w),
                    });
                }
            }
        }
        DeploymentMode::Disagg => {
            for &prefill in &workers {
                for &decode in &workers {
                    let used = prefill.gpus() + decode.gpus();
                    if (lo..=hi).contains(&used) {
                        out.push(Deployment {
                            backend,
                            roles: Roles::Disagg { prefill, decode },
                        });
                    }
                }
            }
        }
    }
    out
}

fn to_shape(p: &PinnedShape) -> Shape {
    Shape {
        tp: p.tp,
        attention_dp: p.attention_dp,
        moe_tp: p.moe_tp,
        moe_ep: p.moe_ep,
    }
}

/// The pinned menu for one backend: the entries legal and feasible there (`Err` with the
/// reason of the first entry refused, for the message when no backend takes it).
pub(crate) fn pinned(
    inputs: &Inputs<'_>,
    backend: Backend,
    entry: &PinnedConfig,
) -> Result<Deployment, String> {
    let worker = |p: &PinnedShape| -> Result<Worker, String> {
        let shape = to_shape(p);
        if !inputs.topology.gpus_per_worker.contains(&shape.gpus()) {
            return Err(format!(
                "a worker of {} GPUs is not on the gpus_per_worker ladder {:?}",
                shape.gpus(),
                inputs.topology.gpus_per_worker
            ));
        }
        let kv = check_worker(
            inputs.model,
            inputs.gpu,
            backend,
            shape,
            inputs.context_length,
        )
        .map_err(|r| r.reason)?;
        Ok(Worker {
            shape,
            replicas: p.replicas,
            kv_tokens_per_rank: kv,
        })
    };
    let roles = match entry {
        PinnedConfig::Agg(p) => Roles::Agg(worker(p)?),
        PinnedConfig::Disagg { prefill, decode } => Roles::Disagg {
            prefill: worker(prefill).map_err(|e| format!("prefill: {e}"))?,
            decode: worker(decode).map_err(|e| format!("decode: {e}"))?,
        },
    };
    let d = Deployment { backend, roles };
    let used = d.used_gpus();
    if used > inputs.gpu_budget {
        return Err(format!(
            "it uses {used} GPUs, over gpu_budget {}",
            inputs.gpu_budget
        ));
    }
    if used < inputs.min_gpu_budget {
        return Err(format!(
            "it uses {used} GPUs, under min_gpu_budget {}",
            inputs.min_gpu_budget
        ));
    }
    Ok(d)
}

/// `tp` or `dp`: the attention mode of a shape (a one-GPU shape is `tp`).
pub fn attention_mode(shape: Shape) -> &'static str {
    if shape.attention_dp > 1 { "dp" } else { "tp" }
}

/// `ep` or `tp`: the FFN mode of a shape (dense and one-GPU shapes are `tp`).
pub fn ffn_mode(shape: Shape) -> &'static str {
    if shape.moe_ep > 1 { "ep" } else { "tp" }
}

/// Whether a strategy is of a MoE shape with experts split (for the latent FFN mode).
pub(crate) fn is_moe_split(shape: Shape) -> bool {
    matches!(
        shape.strategy(),
        Strategy::Tep | Strategy::Dep | Strategy::Dtp
    ) || (shape.moe_tp > 1)
}
