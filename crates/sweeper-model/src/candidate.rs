//! The candidate's deployment, from the flat keys of a topology (issue 32): the mode, the
//! backend, and per role the parallel shape, the replicas and the batch cap.

use super::spec::Settings;
use serde_json::Value;
use sweeper_cards::{FractionOf, MemoryPlan, MemorySettings, Shape};
use sweeper_engine::EvalOutcome;
use sweeper_goal::{AGG_PREFIX, DECODE_PREFIX, PREFILL_PREFIX};

type Params = serde_json::Map<String, Value>;

/// The serving engine a candidate names; it decides how the memory fraction applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    /// vLLM: `fraction × HBM − everything else` is the KV cache (also the default).
    Vllm,
    /// `SGLang`: as vLLM (`mem_fraction_static` of the total).
    Sglang,
    /// TensorRT-LLM: `fraction × (HBM − everything else)`.
    Trtllm,
}

/// One role of a deployment: its workers' shape, how many workers, and the batch cap of
/// one attention rank.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Role {
    pub(crate) shape: Shape,
    pub(crate) replicas: u64,
    pub(crate) max_batch: u64,
}

impl Role {
    /// GPUs of every worker of the role.
    pub(crate) fn gpus(&self) -> u64 {
        self.shape.gpus().saturating_mul(self.replicas)
    }
}

/// An aggregated deployment or a disaggregated pair of pools.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Deployment {
    Agg(Role),
    Disagg { prefill: Role, decode: Role },
}

/// Reads a positive integer parameter (integral floats such as `2.0` are accepted).
pub(crate) fn int_param(params: &Params, key: &str, default: u64) -> Result<u64, EvalOutcome> {
    let Some(value) = params.get(key) else {
        return Ok(default);
    };
    match sweeper_goal::whole_count(value) {
        Some(n) => Ok(n),
        None => Err(EvalOutcome::Failed(format!(
            "parameter {key} must be an integer >= 1, got {value}"
        ))),
    }
}

fn str_param<'a>(params: &'a Params, key: &str) -> Result<Option<&'a str>, EvalOutcome> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(v)) => Ok(Some(v.as_str())),
        Some(other) => Err(EvalOutcome::Failed(format!(
            "parameter {key} must be a string, got {other}"
        ))),
    }
}

pub(crate) fn backend(params: &Params) -> Result<Backend, EvalOutcome> {
    match str_param(params, "backend")? {
        None | Some("vllm") => Ok(Backend::Vllm),
        Some("sglang") => Ok(Backend::Sglang),
        Some("trtllm") => Ok(Backend::Trtllm),
        Some(other) => Err(EvalOutcome::Failed(format!(
            "parameter backend must be vllm, sglang or trtllm, got {other:?}"
        ))),
    }
}

/// One role's keys under `prefix` (`""`, `prefill_` or `decode_`).
fn role(s: &Settings, params: &Params, prefix: &str, batch: u64) -> Result<Role, EvalOutcome> {
    let key = |k: &str| format!("{prefix}{k}");
    let pp = int_param(params, &key("pp"), 1)?;
    if pp > 1 {
        return Err(EvalOutcome::Unsupported(format!(
            "the built-in model does not model pipeline parallelism ({} {pp}); set it to 1 or use an external evaluator",
            key("pp")
        )));
    }
    let tp = int_param(params, &key("tp"), 1)?;
    let attention_dp = int_param(params, &key("attention_dp"), 1)?;
    let (moe_tp, moe_ep) = if s.model.moe.is_some() {
        // the width rule fills in the expert split that is not given
        let width = tp.saturating_mul(attention_dp);
        let ep = int_param(params, &key("moe_ep"), 1)?;
        let mtp = int_param(params, &key("moe_tp"), (width / ep).max(1))?;
        (mtp, ep)
    } else {
        (
            int_param(params, &key("moe_tp"), 1)?,
            int_param(params, &key("moe_ep"), 1)?,
        )
    };
    let m = &s.model;
    if !m.heads.is_multiple_of(tp)
        || (m.mla.is_none() && !m.kv_heads.is_multiple_of(tp) && !tp.is_multiple_of(m.kv_heads))
    {
        return Err(EvalOutcome::Unsupported(format!(
            "{} {tp} does not divide the {} attention heads and {} kv heads of {}; pick a tp that divides both",
            key("tp"),
            m.heads,
            m.kv_heads,
            s.model_name
        )));
    }
    let shape = Shape {
        tp,
        attention_dp,
        moe_tp,
        moe_ep,
    };
    s.model.check_shape(shape).map_err(|e| {
        EvalOutcome::Unsupported(format!(
            "{} cannot run as this {}shape: {e}",
            s.model_name,
            if prefix.is_empty() {
                String::new()
            } else {
                format!("{} ", prefix.trim_end_matches('_'))
            }
        ))
    })?;
    // a topology passes the aggregated branch's knobs as `agg_*`; a decode pool without
    // its own cap takes a plain `max_batch_size`
    let fallback = match prefix {
        "" => int_param(params, &format!("{AGG_PREFIX}max_batch_size"), batch)?,
        DECODE_PREFIX => int_param(params, "max_batch_size", batch)?,
        _ => batch,
    };
    Ok(Role {
        shape,
        replicas: int_param(params, &key("replicas"), 1)?,
        max_batch: int_param(params, &key("max_batch_size"), fallback)?,
    })
}

pub(crate) fn deployment(s: &Settings, params: &Params) -> Result<Deployment, EvalOutcome> {
    match str_param(params, "deployment_mode")? {
        None | Some("agg") => Ok(Deployment::Agg(role(s, params, "", 256)?)),
        Some("disagg") => Ok(Deployment::Disagg {
            prefill: role(s, params, PREFILL_PREFIX, 1)?,
            decode: role(s, params, DECODE_PREFIX, 256)?,
        }),
        Some(other) => Err(EvalOutcome::Failed(format!(
            "parameter deployment_mode must be agg or disagg, got {other:?}"
        ))),
    }
}

/// The memory of one rank of `shape`, as `backend` accounts it with the block's
/// `memory_fraction` and `max_num_tokens`.
pub(crate) fn memory(s: &Settings, backend: Backend, shape: Shape) -> MemoryPlan {
    let of = match backend {
        Backend::Vllm | Backend::Sglang => FractionOf::Total,
        Backend::Trtllm => FractionOf::Free,
    };
    let defaults = match backend {
        Backend::Vllm | Backend::Trtllm => MemorySettings::vllm(),
        Backend::Sglang => MemorySettings::sglang(),
    };
    let settings = defaults
        .with_fraction(s.memory_fraction, of)
        .with_max_num_tokens(s.max_num_tokens);
    s.model.memory_plan(&s.gpu, shape, &settings)
}
