//! The candidates the tests render: an aggregated dense one, an aggregated MoE one
//! (attention DP and expert parallelism) and a disaggregated MoE one (a TEP prefill pool, a
//! DEP decode pool spanning two 8-GPU nodes), on each backend.

use serde_json::{Map, Value, json};
use sweeper_export::{Api, Backend, ExportOptions};

pub(crate) const BACKENDS: [Backend; 3] = [Backend::Vllm, Backend::Sglang, Backend::Trtllm];

/// `(name, candidate)` for a backend, from `tests/cases.json` (which the peer comparison
/// `ci/export_peer.py` reads too).
pub(crate) fn cases(backend: Backend) -> Vec<(&'static str, Map<String, Value>)> {
    let all: Value = serde_json::from_str(include_str!("../cases.json")).unwrap();
    ["agg_dense", "agg_moe", "disagg_moe"]
        .into_iter()
        .map(|name| {
            let mut c = all[name].as_object().cloned().unwrap();
            c.insert("backend".to_owned(), json!(backend.name()));
            (name, c)
        })
        .collect()
}

/// Options with every name given.
pub(crate) fn named(api: Api, backend: Backend) -> ExportOptions {
    let engine = match backend {
        Backend::Vllm => "vllm",
        Backend::Sglang => "sglang",
        Backend::Trtllm => "tensorrtllm",
    };
    ExportOptions {
        api,
        model: Some("Qwen/Qwen3-235B-A22B-FP8".to_owned()),
        image: Some(format!("nvcr.io/nvidia/ai-dynamo/{engine}-runtime:0.9.0")),
        namespace: Some("serving".to_owned()),
        ..ExportOptions::default()
    }
}
