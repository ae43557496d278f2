//! `sweeper-cards`: the model and GPU cards of sweeper, and the memory accounting of one
//! rank of a parallel shape.
//!
//! Layer 1, beside `sweeper-goal`: it depends on no sweeper crate (serde, `serde_json` and
//! thiserror only), so the config's topology rules, the shape enumeration and the built-in
//! model all read the same cards. Invariant: every figure of a preset comes from a cited
//! published source (`data/README.md`), and every function is a pure function of the cards
//! and its arguments, deterministic and panic-free.
//!
//! - [`ModelSpec`]: a decoder-only transformer, dense or mixture-of-experts ([`MoeSpec`]:
//!   experts, active experts, expert intermediate size, shared experts, leading dense
//!   layers), with grouped-query or multi-head latent attention ([`MlaSpec`]: `DeepSeek`'s KV
//!   cache per token and layer is the latent, `kv_lora_rank + rope_dim` values, not heads ×
//!   `head_dim`), optionally with sliding-window attention in some layers
//!   ([`SlidingWindowSpec`]: gpt-oss keeps 128 tokens in every other layer), weights in
//!   [`Dtype`] `fp8`, `bf16`, `fp4` (NVFP4) or `mxfp4`, and the FP8 block size that an
//!   expert tensor-parallel split must keep whole.
//! - [`GpuSpec`]: HBM, bandwidth, dense tensor throughput per format (FP4 only where the GPU
//!   runs it natively), `NVLink` bandwidth, GPUs per node and per `NVLink` domain.
//! - [`model_presets`] and [`gpu_presets`]: the compiled-in presets (`data/*.json`).
//! - [`Shape`] and [`ModelSpec::memory_plan`]: for a worker shape `(tp, attention_dp,
//!   moe_tp, moe_ep)`, the weight bytes one rank stores (attention split by `tp`, all routed
//!   experts stored and split by `moe_tp × moe_ep`), activations, runtime and communicator
//!   reserves, the engine's memory fraction, and the KV tokens left per rank and per worker
//!   (each attention-DP rank holds its own KV). A shape is feasible for a context length when
//!   one rank holds one sequence of it ([`MemoryPlan::holds`]). With sliding-window layers
//!   the tokens a rank holds depend on the sequences' length ([`MemoryPlan::tokens_at`]),
//!   as the engine keeps them ([`WindowCache`]: the window per request for vLLM and
//!   TensorRT-LLM, a pool sized at startup for `SGLang`).
//! - [`ModelSpec::check_shape`]: the splits a model allows (heads by `tp`, the width rule
//!   `tp × attention_dp = moe_tp × moe_ep`, experts by `moe_ep`, whole FP8 blocks per
//!   expert-TP rank).
//!
//! The accounting follows the engines' budget as aiconfigurator 0.12.0 writes it
//! (`sdk/memory.py`, `kv_cache_budget_bytes`): vLLM and `SGLang` give the KV cache
//! `fraction × HBM − (weights + activations + reserves)`, TensorRT-LLM `fraction × (HBM −
//! those)`. The activations are an estimate (see [`ModelSpec::activation_bytes`]); the
//! reserves are aiconfigurator's per-GPU figures ([`RUNTIME_RESERVE_BYTES`],
//! [`COMM_RESERVE_BYTES`]).
//!
//! ```
//! use sweeper_cards::{MemorySettings, Shape, gpu_presets, model_presets};
//!
//! let models = model_presets();
//! let gpus = gpu_presets();
//! let model = &models["qwen3-235b-a22b-fp8"];
//! let h200 = &gpus["h200"];
//! // TEP on 8 GPUs: attention TP 8, experts spread 8 ways
//! let tep8 = Shape { tp: 8, attention_dp: 1, moe_tp: 1, moe_ep: 8 };
//! model.check_shape(tep8).unwrap();
//! let plan = model.memory_plan(h200, tep8, &MemorySettings::vllm());
//! assert!(plan.holds(8192));
//! // expert TP 8 would cut the FP8 blocks of the 1,536-wide experts (192 per rank)
//! let tp8 = Shape { tp: 8, attention_dp: 1, moe_tp: 8, moe_ep: 1 };
//! assert!(model.check_shape(tp8).is_err());
//! // one H200 cannot hold the 235 B weights
//! assert!(!model.memory_plan(h200, Shape::dense(1), &MemorySettings::vllm()).holds(1));
//! ```

mod card;
mod memory;

pub use card::{Dtype, GpuSpec, MlaSpec, ModelSpec, MoeSpec, SlidingWindowSpec};
pub use memory::{
    COMM_RESERVE_BYTES, FractionOf, MemoryPlan, MemorySettings, RUNTIME_RESERVE_BYTES,
    SGLANG_SWA_FULL_TOKENS_RATIO, Shape, Strategy, WindowCache,
};

use std::collections::BTreeMap;

const MODELS_JSON: &str = include_str!("../data/models.json");
const GPUS_JSON: &str = include_str!("../data/gpus.json");

/// Why a card or a shape is refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CardError {
    /// A card's field is missing, zero, out of range or inconsistent.
    #[error("{path}: {message}")]
    Invalid {
        /// Key path of the field (as the caller named the card).
        path: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A parallel shape this model cannot be split into.
    #[error(
        "shape tp {} attention_dp {} moe_tp {} moe_ep {}: {reason}",
        shape.tp, shape.attention_dp, shape.moe_tp, shape.moe_ep
    )]
    Shape {
        /// The shape refused.
        shape: Shape,
        /// Which rule it breaks.
        reason: String,
    },
    /// A card does not parse (unknown key, wrong type).
    #[error("{path}: {source}")]
    Parse {
        /// Key path of the card.
        path: String,
        /// The JSON error.
        #[source]
        source: Box<serde_json::Error>,
    },
}

impl CardError {
    pub(crate) fn invalid(path: String, message: impl Into<String>) -> CardError {
        CardError::Invalid {
            path,
            message: message.into(),
        }
    }
}

/// The built-in model presets (parsed from the compiled-in data file).
pub fn model_presets() -> BTreeMap<String, ModelSpec> {
    serde_json::from_str(MODELS_JSON).unwrap_or_default()
}

/// The built-in GPU presets (parsed from the compiled-in data file).
pub fn gpu_presets() -> BTreeMap<String, GpuSpec> {
    serde_json::from_str(GPUS_JSON).unwrap_or_default()
}

/// Parses and checks one model card from JSON; `path` names it in errors.
pub fn parse_model(value: &serde_json::Value, path: &str) -> Result<ModelSpec, CardError> {
    let spec = ModelSpec::deserialize_value(value, path)?;
    spec.check(path)?;
    Ok(spec)
}

/// Parses and checks one GPU card from JSON; `path` names it in errors.
pub fn parse_gpu(value: &serde_json::Value, path: &str) -> Result<GpuSpec, CardError> {
    let spec = GpuSpec::deserialize_value(value, path)?;
    spec.check(path)?;
    Ok(spec)
}

trait FromValue: Sized {
    fn deserialize_value(value: &serde_json::Value, path: &str) -> Result<Self, CardError>;
}

impl<T: serde::de::DeserializeOwned> FromValue for T {
    fn deserialize_value(value: &serde_json::Value, path: &str) -> Result<T, CardError> {
        T::deserialize(value).map_err(|e| CardError::Parse {
            path: path.to_owned(),
            source: Box::new(e),
        })
    }
}
