//! Parallel shapes and the memory accounting of one rank, as serving engines do it.

use crate::{CardError, Dtype, GpuSpec, ModelSpec};

/// The parallel shape of one worker (one engine instance): `tp × attention_dp` GPUs, with
/// the experts split `moe_tp × moe_ep` ways over the same GPUs (no pipeline parallelism).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shape {
    /// Attention tensor-parallel ranks (heads split `tp` ways).
    pub tp: u64,
    /// Attention data-parallel ranks (each holds its own requests and KV cache).
    pub attention_dp: u64,
    /// Expert tensor-parallel ranks (each expert's intermediate split `moe_tp` ways).
    pub moe_tp: u64,
    /// Expert-parallel ranks (the experts spread `moe_ep` ways).
    pub moe_ep: u64,
}

/// The name of a shape's pattern, as the upstream writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Strategy {
    /// Plain tensor parallelism (attention TP, experts TP or a dense MLP), or one GPU.
    Tp,
    /// Attention TP, experts EP.
    Tep,
    /// Attention DP, experts EP.
    Dep,
    /// Attention DP, experts TP.
    Dtp,
    /// Any other mix (the enumeration never emits one).
    Mixed,
}

impl Strategy {
    /// The lowercase name (`tp`, `tep`, `dep`, `dtp`, `mixed`).
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Tp => "tp",
            Strategy::Tep => "tep",
            Strategy::Dep => "dep",
            Strategy::Dtp => "dtp",
            Strategy::Mixed => "mixed",
        }
    }
}

impl Shape {
    /// A dense tensor-parallel shape of `tp` GPUs.
    pub fn dense(tp: u64) -> Shape {
        Shape {
            tp,
            attention_dp: 1,
            moe_tp: 1,
            moe_ep: 1,
        }
    }

    /// GPUs of one worker: `tp × attention_dp`.
    pub fn gpus(&self) -> u64 {
        self.tp * self.attention_dp
    }

    /// The pattern: TEP, DEP, TP, DTP (dense and one-GPU shapes are TP), else mixed.
    pub fn strategy(&self) -> Strategy {
        let (tp, dp, mtp, mep) = (self.tp, self.attention_dp, self.moe_tp, self.moe_ep);
        match (tp > 1, dp > 1, mtp > 1, mep > 1) {
            (_, false, _, false) if mtp == tp || mtp == 1 => Strategy::Tp,
            (true, false, false, true) => Strategy::Tep,
            (false, true, false, true) => Strategy::Dep,
            (false, true, true, false) => Strategy::Dtp,
            _ => Strategy::Mixed,
        }
    }
}

/// How the engine's memory fraction is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FractionOf {
    /// vLLM and `SGLang`: `fraction × HBM − everything else` is the KV cache.
    Total,
    /// TensorRT-LLM: `fraction × (HBM − everything else)` is the KV cache.
    Free,
}

/// The engine settings the memory accounting needs.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct MemorySettings {
    /// Share of memory the engine may use (`gpu_memory_utilization`, 0.9 by default in vLLM).
    pub fraction: f64,
    /// How the fraction applies.
    pub fraction_of: FractionOf,
    /// Tokens of one engine step (`max_num_batched_tokens`): sizes the activations.
    pub max_num_tokens: u64,
    /// Bytes every rank reserves for the runtime (CUDA graphs, workspaces, the CUDA context).
    pub runtime_reserve_bytes: f64,
    /// Bytes a rank of a multi-GPU worker adds for the NCCL communicators.
    pub comm_reserve_bytes: f64,
}

/// aiconfigurator 0.12.0, `systems/*.yaml` `misc.other_mem`: 3.5 GiB per GPU "for safer
/// deployment" (runtime, CUDA graphs, workspaces).
pub const RUNTIME_RESERVE_BYTES: f64 = 3_758_096_384.0;
/// aiconfigurator 0.12.0, `systems/*.yaml` `misc.nccl_mem` for 4 and 8 GPUs: 392 MB.
pub const COMM_RESERVE_BYTES: f64 = 411_041_792.0;

impl MemorySettings {
    /// vLLM's defaults: 90% of total memory, 8,192 tokens a step, aiconfigurator's reserves.
    pub fn vllm() -> MemorySettings {
        MemorySettings {
            fraction: 0.9,
            fraction_of: FractionOf::Total,
            max_num_tokens: 8192,
            runtime_reserve_bytes: RUNTIME_RESERVE_BYTES,
            comm_reserve_bytes: COMM_RESERVE_BYTES,
        }
    }

    /// The same with another fraction and way of applying it (TensorRT-LLM: `Free`).
    #[must_use]
    pub fn with_fraction(mut self, fraction: f64, fraction_of: FractionOf) -> MemorySettings {
        self.fraction = fraction;
        self.fraction_of = fraction_of;
        self
    }

    /// The same with other reserves (runtime per rank; communicators per rank of a
    /// multi-GPU worker), in bytes.
    #[must_use]
    pub fn with_reserves(mut self, runtime_bytes: f64, comm_bytes: f64) -> MemorySettings {
        self.runtime_reserve_bytes = runtime_bytes;
        self.comm_reserve_bytes = comm_bytes;
        self
    }

    /// The same with another step token budget.
    #[must_use]
    pub fn with_max_num_tokens(mut self, max_num_tokens: u64) -> MemorySettings {
        self.max_num_tokens = max_num_tokens;
        self
    }
}

impl Default for MemorySettings {
    fn default() -> Self {
        MemorySettings::vllm()
    }
}

/// What one rank of a shape holds, in bytes, and the KV tokens that are left.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct MemoryPlan {
    /// HBM of one GPU.
    pub capacity_bytes: f64,
    /// Weights one rank stores: attention, dense MLPs, embeddings and output head split by
    /// `tp`; routed experts (all of them stored) split by `moe_tp × moe_ep`; shared experts
    /// by `tp`.
    pub weight_bytes: f64,
    /// Activations of one step of `max_num_tokens` tokens (BF16).
    pub activation_bytes: f64,
    /// Runtime and communicator reserves.
    pub reserve_bytes: f64,
    /// KV-cache bytes left on one rank (0 when nothing is left).
    pub kv_budget_bytes: f64,
    /// KV-cache bytes one token takes on one rank.
    pub kv_bytes_per_token: f64,
    /// Tokens one rank's KV cache holds: one attention-DP rank's capacity (the ranks of its
    /// tensor-parallel group hold the same tokens).
    pub kv_tokens_per_rank: u64,
    /// Tokens the worker holds: `kv_tokens_per_rank × attention_dp` (each attention-DP rank
    /// holds its own requests).
    pub kv_tokens_per_worker: u64,
}

impl MemoryPlan {
    /// Whether one sequence of `context_length` tokens fits one attention rank's KV cache.
    pub fn holds(&self, context_length: u64) -> bool {
        self.kv_tokens_per_rank >= context_length
    }
}

impl ModelSpec {
    /// Refuses a shape this model cannot be split into: the width rule `tp × attention_dp =
    /// moe_tp × moe_ep` (a dense model: `moe_tp = moe_ep = 1`), heads divisible by `tp`, KV
    /// heads divisible by `tp` or replicated evenly, experts divisible by `moe_ep`, and an
    /// expert-TP split that keeps whole FP8 blocks (`expert_intermediate / moe_tp` a multiple
    /// of `weight_block` when the experts are FP8).
    pub fn check_shape(&self, shape: Shape) -> Result<(), CardError> {
        let refuse = |reason: String| Err(CardError::Shape { shape, reason });
        if shape.tp == 0 || shape.attention_dp == 0 || shape.moe_tp == 0 || shape.moe_ep == 0 {
            return refuse("every size must be an integer >= 1".to_owned());
        }
        if !self.heads.is_multiple_of(shape.tp) {
            return refuse(format!(
                "{} attention heads do not divide by tp {}",
                self.heads, shape.tp
            ));
        }
        if self.mla.is_none()
            && !(self.kv_heads.is_multiple_of(shape.tp) || shape.tp.is_multiple_of(self.kv_heads))
        {
            return refuse(format!(
                "{} kv heads neither divide by tp {} nor replicate evenly over it",
                self.kv_heads, shape.tp
            ));
        }
        let Some(moe) = &self.moe else {
            if shape.attention_dp != 1 || shape.moe_tp != 1 || shape.moe_ep != 1 {
                return refuse(
                    "a dense model takes plain tensor parallelism (attention_dp, moe_tp and moe_ep 1)"
                        .to_owned(),
                );
            }
            return Ok(());
        };
        if shape.tp * shape.attention_dp != shape.moe_tp * shape.moe_ep {
            return refuse(format!(
                "tp × attention_dp ({}) must equal moe_tp × moe_ep ({})",
                shape.tp * shape.attention_dp,
                shape.moe_tp * shape.moe_ep
            ));
        }
        if !moe.experts.is_multiple_of(shape.moe_ep) {
            return refuse(format!(
                "{} experts do not divide by moe_ep {}",
                moe.experts, shape.moe_ep
            ));
        }
        if !moe.expert_intermediate.is_multiple_of(shape.moe_tp) {
            return refuse(format!(
                "the expert intermediate size {} does not divide by moe_tp {}",
                moe.expert_intermediate, shape.moe_tp
            ));
        }
        if let Some(block) = self.weight_block
            && self.expert_dtype() == Dtype::Fp8
            && shape.moe_tp > 1
            && !(moe.expert_intermediate / shape.moe_tp).is_multiple_of(block)
        {
            return refuse(format!(
                "moe_tp {} splits the expert intermediate size {} into {}, not a multiple of the FP8 block of {block}",
                shape.moe_tp,
                moe.expert_intermediate,
                moe.expert_intermediate / shape.moe_tp
            ));
        }
        Ok(())
    }

    /// Weight bytes one rank of `shape` stores (see [`MemoryPlan::weight_bytes`]).
    pub fn weight_bytes_per_rank(&self, shape: Shape) -> f64 {
        let tp = shape.tp as f64;
        let dense = self.layers as f64 * self.attention_params()
            + self.dense_layer_count() as f64 * self.dense_mlp_params()
            + self.head_params()
            + self.embedding_params();
        let mut bytes = dense / tp * self.dtype.bytes();
        if let Some(moe) = &self.moe {
            let moe_layers = self.moe_layer_count() as f64;
            let routed =
                moe.experts as f64 * self.expert_params() / (shape.moe_tp * shape.moe_ep) as f64;
            let shared = moe.shared_experts as f64 * self.expert_params() / tp;
            bytes += moe_layers * (routed + shared) * self.expert_dtype().bytes();
            // the router is replicated, in the card's format
            bytes += moe_layers * (self.hidden * moe.experts) as f64 * self.dtype.bytes();
        }
        bytes
    }

    /// KV-cache bytes one token takes on one rank of `shape`: grouped-query KV heads split
    /// by `tp` (at least one head per rank); an MLA latent is held whole by every rank.
    pub fn kv_bytes_per_token_per_rank(&self, shape: Shape) -> f64 {
        if self.mla.is_some() {
            return self.kv_bytes_per_token();
        }
        let per_rank = (self.kv_heads / shape.tp.max(1)).max(1);
        self.kv_bytes_per_token() * per_rank as f64 / self.kv_heads as f64
    }

    /// Activation bytes of one step of `tokens` tokens on one rank of `shape`: BF16 hidden
    /// states (four live copies: residual, normed input, attention output, MLP output) and
    /// the gated MLP's intermediate (twice: gate and up) at the rank's widest MLP.
    pub fn activation_bytes(&self, shape: Shape, tokens: u64) -> f64 {
        let dense_width = if self.dense_layer_count() > 0 {
            self.intermediate / shape.tp.max(1)
        } else {
            0
        };
        let expert_width = self.moe.as_ref().map_or(0, |m| {
            // tokens reach `active_experts` experts; a rank computes its share of them
            m.active_experts * m.expert_intermediate / (shape.moe_tp * shape.moe_ep).max(1)
        });
        let width = dense_width.max(expert_width);
        tokens as f64 * (4 * self.hidden + 2 * width) as f64 * Dtype::Bf16.bytes()
    }

    /// The memory of one rank of `shape` on `gpu` under `settings`.
    pub fn memory_plan(
        &self,
        gpu: &GpuSpec,
        shape: Shape,
        settings: &MemorySettings,
    ) -> MemoryPlan {
        let capacity = gpu.hbm_bytes();
        let weights = self.weight_bytes_per_rank(shape);
        let activations = self.activation_bytes(shape, settings.max_num_tokens);
        let comm = if shape.gpus() > 1 {
            settings.comm_reserve_bytes
        } else {
            0.0
        };
        let reserve = settings.runtime_reserve_bytes + comm;
        let non_kv = weights + activations + reserve;
        let budget = match settings.fraction_of {
            FractionOf::Total => capacity * settings.fraction - non_kv,
            FractionOf::Free => (capacity - non_kv) * settings.fraction,
        }
        .max(0.0);
        let per_token = self.kv_bytes_per_token_per_rank(shape);
        let tokens = if per_token > 0.0 {
            (budget / per_token).floor() as u64
        } else {
            0
        };
        MemoryPlan {
            capacity_bytes: capacity,
            weight_bytes: weights,
            activation_bytes: activations,
            reserve_bytes: reserve,
            kv_budget_bytes: budget,
            kv_bytes_per_token: per_token,
            kv_tokens_per_rank: tokens,
            kv_tokens_per_worker: tokens * shape.attention_dp,
        }
    }
}
