//! Each backend's spelling of a worker's shape, batch caps and role.
//!
//! The three engines name the same shape differently (their own docs, read for this
//! crate: vLLM's `vllm serve --help` and its data-parallel deployment guide, SGLang's
//! server arguments, TensorRT-LLM's `LlmArgs`, and Dynamo's per-backend launch examples):
//!
//! | shape | vLLM | SGLang | TensorRT-LLM |
//! |---|---|---|---|
//! | attention TP `tp` | `--tensor-parallel-size tp` | `--tensor-parallel-size tp x attention_dp` | `--tensor-parallel-size tp x attention_dp` |
//! | attention DP | `--data-parallel-size attention_dp` | `--data-parallel-size attention_dp --enable-dp-attention` | `--enable-attention-dp` |
//! | expert parallel | `--enable-expert-parallel` (EP over all tp x dp ranks) | `--expert-parallel-size moe_ep` | `--expert-parallel-size moe_ep` |
//! | batch cap | `--max-num-seqs` | `--max-running-requests` | `--max-batch-size` |
//! | tokens per step | `--max-num-batched-tokens` | `--max-prefill-tokens` | `--max-num-tokens` |
//!
//! SGLang and TensorRT-LLM count a worker's ranks in `--tensor-parallel-size` and derive
//! the expert-TP split as that over `moe_ep`, so every split of the width rule is
//! expressible; vLLM shards experts over all `tp x dp` ranks either by TP (no flag) or by
//! EP (`--enable-expert-parallel`), so a mixed split (`moe_tp > 1` and `moe_ep > 1`) has no
//! vLLM flags and is refused, naming `moe_ep`.

use crate::shape::{Pool, Role};
use crate::{Backend, ExportError};

/// The module a Dynamo worker of `backend` runs (`python3 -m MODULE`).
pub(crate) fn worker_module(backend: Backend) -> &'static str {
    match backend {
        Backend::Vllm => "dynamo.vllm",
        Backend::Sglang => "dynamo.sglang",
        Backend::Trtllm => "dynamo.trtllm",
    }
}

/// The arguments of one worker: the model, its shape, its batch caps and its role.
pub(crate) fn worker_args(
    backend: Backend,
    pool: &Pool,
    role: Role,
    model: &str,
) -> Result<Vec<String>, ExportError> {
    let mut args: Vec<String> = Vec::new();
    let mut push = |flag: &str, value: Option<u64>| {
        args.push(flag.to_owned());
        if let Some(v) = value {
            args.push(v.to_string());
        }
    };
    let width = pool.tp * pool.attention_dp;
    let model_flag = match backend {
        Backend::Vllm => "--model",
        Backend::Sglang | Backend::Trtllm => "--model-path",
    };
    let mut out = vec![model_flag.to_owned(), model.to_owned()];
    match backend {
        Backend::Vllm => {
            push("--tensor-parallel-size", Some(pool.tp));
            if pool.pp > 1 {
                push("--pipeline-parallel-size", Some(pool.pp));
            }
            if pool.attention_dp > 1 {
                push("--data-parallel-size", Some(pool.attention_dp));
            }
            if let Some((moe_tp, moe_ep)) = pool.experts
                && moe_ep > 1
            {
                if moe_tp > 1 {
                    return Err(ExportError::Inexpressible {
                        backend,
                        key: format!("{}moe_ep", pool.prefix),
                        value: moe_ep.to_string(),
                        reason: format!(
                            "vLLM spreads experts over all {width} ranks of a worker, by expert parallelism or by tensor parallelism, not a mix of moe_tp {moe_tp} and moe_ep {moe_ep}; use moe_ep {width} (tep/dep) or moe_tp {width} (tp/dtp), or the sglang or trtllm backend"
                        ),
                    });
                }
                push("--enable-expert-parallel", None);
            }
            if let Some(b) = pool.max_batch_size {
                push("--max-num-seqs", Some(b));
            }
            if let Some(t) = pool.max_num_tokens {
                push("--max-num-batched-tokens", Some(t));
            }
        }
        Backend::Sglang => {
            push("--tensor-parallel-size", Some(width));
            if pool.pp > 1 {
                push("--pipeline-parallel-size", Some(pool.pp));
            }
            if pool.attention_dp > 1 {
                push("--data-parallel-size", Some(pool.attention_dp));
                push("--enable-dp-attention", None);
            }
            if let Some((_, moe_ep)) = pool.experts
                && moe_ep > 1
            {
                push("--expert-parallel-size", Some(moe_ep));
            }
            if let Some(b) = pool.max_batch_size {
                push("--max-running-requests", Some(b));
            }
            if let Some(t) = pool.max_num_tokens {
                push("--max-prefill-tokens", Some(t));
            }
        }
        Backend::Trtllm => {
            push("--tensor-parallel-size", Some(width));
            if pool.pp > 1 {
                push("--pipeline-parallel-size", Some(pool.pp));
            }
            if let Some((_, moe_ep)) = pool.experts
                && moe_ep > 1
            {
                push("--expert-parallel-size", Some(moe_ep));
            }
            if pool.attention_dp > 1 {
                push("--enable-attention-dp", None);
            }
            if let Some(b) = pool.max_batch_size {
                push("--max-batch-size", Some(b));
            }
            if let Some(t) = pool.max_num_tokens {
                push("--max-num-tokens", Some(t));
            }
        }
    }
    match role {
        Role::Worker => {}
        Role::Prefill | Role::Decode => {
            args.push("--disaggregation-mode".to_owned());
            args.push(role.name().to_owned());
        }
    }
    out.extend(args);
    Ok(out)
}

/// The frontend's arguments: its port and the candidate's router mode.
pub(crate) fn frontend_args(router_mode: Option<&str>) -> Vec<String> {
    let mut args = vec!["--http-port".to_owned(), "8000".to_owned()];
    if let Some(mode) = router_mode {
        args.push("--router-mode".to_owned());
        args.push(mode.to_owned());
    }
    args
}
