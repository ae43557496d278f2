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

/// How the engine keeps the KV cache of sliding-window layers (see
/// [`crate::SlidingWindowSpec`]); nothing changes for a model without them.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum WindowCache {
    /// A sequence keeps at most the window in each sliding-window layer, so it takes
    /// `(full layers × context + sliding layers × min(context, window))` token-layers.
    /// vLLM's hybrid KV cache manager reserves slots for the latest window only in those
    /// layers (`docs/design/hybrid_kv_cache_manager.md`); TensorRT-LLM keeps one pool per
    /// window size, split at startup in proportion to window × layers (its
    /// `BlockManager::calculateWindowSizeToShare`, the full layers' window being the
    /// longest sequence), which is this when requests are about that long, and
    /// aiconfigurator 0.12.0 counts gpt-oss's KV this way for every backend
    /// (`get_kvcache_bytes_per_sequence`). Some TensorRT-LLM versions still size their
    /// block count as if every layer were full attention (a note beside that function),
    /// so there the gain may be smaller.
    PerRequest,
    /// The sliding-window layers have their own pool, holding `ratio ×` the tokens of the
    /// full-attention layers' pool, split once at startup whatever the requests' length:
    /// `SGLang`'s `--swa-full-tokens-ratio` (0.8 by default, `server_args.py`).
    TokenRatio(f64),
}

/// `SGLang`'s default `--swa-full-tokens-ratio`.
pub const SGLANG_SWA_FULL_TOKENS_RATIO: f64 = 0.8;

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
    /// How sliding-window layers keep their KV cache.
    pub window_cache: WindowCache,
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
            window_cache: WindowCache::PerRequest,
        }
    }

    /// `SGLang`'s defaults: vLLM's, with the sliding-window layers' pool sized at
    /// [`SGLANG_SWA_FULL_TOKENS_RATIO`] of the full-attention pool's tokens.
    pub fn sglang() -> MemorySettings {
        MemorySettings::vllm()
            .with_window_cache(WindowCache::TokenRatio(SGLANG_SWA_FULL_TOKENS_RATIO))
    }

    /// The same with another way of keeping sliding-window layers' KV cache.
    #[must_use]
    pub fn with_window_cache(mut self, window_cache: WindowCache) -> MemorySettings {
        self.window_cache = window_cache;
        self
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
    /// KV-cache bytes one token takes on one rank in every layer.
    pub kv_bytes_per_token: f64,
    /// The part of `kv_bytes_per_token` in sliding-window layers (0 without them).
    pub kv_window_bytes_per_token: f64,
    /// Tokens a sliding-window layer keeps of a sequence (`None` without them).
    pub kv_window: Option<u64>,
    /// How the engine keeps the sliding-window layers' KV cache.
    pub window_cache: WindowCache,
    /// Tokens one rank's KV cache holds when every layer keeps every token: one
    /// attention-DP rank's capacity (the ranks of its tensor-parallel group hold the same
    /// tokens). With sliding-window layers the capacity depends on the sequences' length:
    /// [`MemoryPlan::tokens_at`].
    pub kv_tokens_per_rank: u64,
    /// Tokens the worker holds: `kv_tokens_per_rank × attention_dp` (each attention-DP rank
    /// holds its own requests).
    pub kv_tokens_per_worker: u64,
}

impl MemoryPlan {
    /// KV-cache bytes one sequence of `context` tokens takes on one rank, each
    /// sliding-window layer keeping at most its window ([`WindowCache::PerRequest`]).
    pub fn sequence_bytes(&self, context: u64) -> f64 {
        let c = context as f64;
        match self.kv_window {
            None => c * self.kv_bytes_per_token,
            Some(w) => {
                (self.kv_bytes_per_token - self.kv_window_bytes_per_token) * c
                    + self.kv_window_bytes_per_token * c.min(w as f64)
            }
        }
    }

    /// Tokens one rank's KV cache holds in sequences of `context` tokens each (what a
    /// request of that length counts against; SPEC 5's capacity divides it by the tokens
    /// of one request). Without sliding-window layers, `kv_tokens_per_rank` whatever the
    /// length; with them, a sequence longer than the window takes fewer bytes a token, so
    /// more tokens fit ([`WindowCache::PerRequest`]), or the two pools split at startup
    /// bound it ([`WindowCache::TokenRatio`]: the full-attention pool's tokens, or the
    /// sliding-window pool's when the sequences are shorter than `window / ratio`).
    pub fn tokens_at(&self, context: u64) -> u64 {
        let Some(window) = self.kv_window else {
            return self.kv_tokens_per_rank;
        };
        let c = context.max(1) as f64;
        let window_bytes = self.kv_window_bytes_per_token;
        let full_bytes = self.kv_bytes_per_token - window_bytes;
        let tokens = match self.window_cache {
            WindowCache::PerRequest => {
                if context <= window {
                    return self.kv_tokens_per_rank;
                }
                self.kv_budget_bytes * c / self.sequence_bytes(context)
            }
            WindowCache::TokenRatio(ratio) => {
                let per_full_token = full_bytes + ratio * window_bytes;
                if !(ratio > 0.0 && per_full_token > 0.0) {
                    return 0;
                }
                let full_pool = self.kv_budget_bytes / per_full_token;
                // a sequence of `c` tokens keeps min(c, window) in the other pool
                full_pool.min(ratio * full_pool * c / c.min(window as f64))
            }
        };
        if tokens.is_finite() && tokens > 0.0 {
            tokens.floor() as u64
        } else {
            0
        }
    }

    /// Whether one sequence of `context_length` tokens fits one attention rank's KV cache.
    pub fn holds(&self, context_length: u64) -> bool {
        self.tokens_at(context_length) >= context_length
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
        let window_per_token = per_token * self.sliding_layer_count() as f64 / self.layers as f64;
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
            kv_window_bytes_per_token: window_per_token,
            kv_window: self.sliding_window.as_ref().map(|w| w.window),
            window_cache: settings.window_cache,
            kv_tokens_per_rank: tokens,
            kv_tokens_per_worker: tokens * shape.attention_dp,
        }
    }
}
