//! The `search_space.topology` block (SPEC 8): defaults, the pinned menu, and every refusal
//! with its key path.

use sweeper_goal::{
    Backend, ConfigError, DeploymentMode, PinnedConfig, PinnedShape, TopologyConfig, parse,
};

fn topology(text: &str) -> TopologyConfig {
    parse(text).unwrap().search_space.topology.unwrap()
}

fn refused(text: &str) -> ConfigError {
    parse(text).unwrap_err()
}

#[test]
fn defaults() {
    let t = topology("search_space: {topology: {model: qwen3-32b-fp8, gpu: h200}}");
    assert_eq!(t.model, "qwen3-32b-fp8");
    assert_eq!(t.gpu, "h200");
    assert_eq!(
        t.deployment_modes,
        [DeploymentMode::Agg, DeploymentMode::Disagg]
    );
    assert_eq!(t.backends, [Backend::Vllm]);
    assert_eq!(t.gpus_per_worker, [1, 2, 4, 8, 16]);
    assert_eq!(t.context_length, None);
    assert!(t.parallel_configs.is_empty());
}

#[test]
fn every_key() {
    let config = parse(
        "search_space:
  gpu_budget: 32
  min_gpu_budget: 8
  topology:
    model: my-moe
    gpu: h200
    deployment_mode: disagg
    backend: [sglang, vllm]
    gpus_per_worker: [8, 2, 4]
    context_length: 8192
    parallel_configs:
      - prefill: {tp: 8, moe_ep: 8}
        decode: {attention_dp: 8, moe_ep: 8, tp: 1, replicas: 2}
  parameters: {max_batch_size: {values: [64, 256]}}
models: {my-moe: {layers: 2}}
gpus: {}
",
    )
    .unwrap();
    assert_eq!(config.search_space.min_gpu_budget, Some(8));
    assert_eq!(config.models.unwrap()["my-moe"]["layers"], 2);
    let t = config.search_space.topology.unwrap();
    assert_eq!(t.deployment_modes, [DeploymentMode::Disagg]);
    assert_eq!(t.backends, [Backend::Sglang, Backend::Vllm]);
    assert_eq!(t.gpus_per_worker, [2, 4, 8]);
    assert_eq!(t.context_length, Some(8192));
    let shape = |tp, attention_dp, moe_ep, replicas| PinnedShape {
        tp,
        pp: 1,
        attention_dp,
        moe_tp: 1,
        moe_ep,
        replicas,
    };
    assert_eq!(
        t.parallel_configs,
        [PinnedConfig::Disagg {
            prefill: shape(8, 1, 8, 1),
            decode: shape(1, 8, 8, 2),
        }]
    );
}

#[test]
fn round_trips_through_yaml() {
    let config = parse(
        "search_space:
  gpu_budget: 16
  min_gpu_budget: 4
  topology:
    model: qwen3-32b-fp8
    gpu: h200
    deployment_mode: [agg]
    parallel_configs: [{tp: 4, replicas: 2}, {tp: 8}]
models: {x: {a: 1}}
",
    )
    .unwrap();
    assert_eq!(parse(&config.to_yaml()).unwrap(), config);
    assert_eq!(
        sweeper_goal::parse(&config.to_json_string()).unwrap(),
        config
    );
}

#[test]
fn refusals_name_the_key_and_the_fix() {
    let base = "topology: {model: m, gpu: g}";
    for (text, path, words) in [
        (
            format!("search_space: {{{base}, used_gpus: [tp]}}"),
            "search_space.used_gpus",
            "derived from its shape",
        ),
        (
            format!("search_space: {{{base}, min_gpu_budget: 40}}"),
            "search_space.min_gpu_budget",
            "[1, gpu_budget = 32]",
        ),
        (
            "search_space: {min_gpu_budget: 4}".to_owned(),
            "search_space.min_gpu_budget",
            "add a topology block",
        ),
        (
            "search_space: {topology: {gpu: h200}}".to_owned(),
            "search_space.topology.model",
            "missing",
        ),
        (
            "search_space: {topology: {model: m, gpu: g, backend: [tensorrt]}}".to_owned(),
            "search_space.topology.backend[0]",
            "expected one of vllm, sglang, trtllm",
        ),
        (
            "search_space: {topology: {model: m, gpu: g, deployment_mode: []}}".to_owned(),
            "search_space.topology.deployment_mode",
            "agg, disagg",
        ),
        (
            "search_space: {topology: {model: m, gpu: g, gpus_per_worker: [2, 2]}}".to_owned(),
            "search_space.topology.gpus_per_worker[1]",
            "",
        ),
        (
            "search_space: {topology: {model: m, gpu: g, context_length: 0}}".to_owned(),
            "search_space.topology.context_length",
            ">= 1",
        ),
        (
            "search_space: {topology: {model: m, gpu: g, parallel_configs: [{tp: 2}]}}".to_owned(),
            "search_space.topology.parallel_configs",
            "exactly one deployment_mode",
        ),
        (
            "search_space: {topology: {model: m, gpu: g, deployment_mode: [agg], parallel_configs: [{tp: 2, pp: 2}]}}".to_owned(),
            "search_space.topology.parallel_configs[0].pp",
            "pipeline parallelism is not searched",
        ),
        (
            "search_space: {topology: {model: m, gpu: g, deployment_mode: [agg], parallel_configs: [{replicas: 2}]}}".to_owned(),
            "search_space.topology.parallel_configs[0]",
            "needs tp",
        ),
        (
            "search_space: {topology: {model: m, gpu: g, deployment_mode: [agg], parallel_configs: [{tp: 2, ep: 2}]}}".to_owned(),
            "search_space.topology.parallel_configs[0].ep",
            "unknown key",
        ),
        (
            "search_space: {topology: {model: m, gpu: g, deployment_mode: [agg], parallel_configs: [{prefill: {tp: 1}, decode: {tp: 1}}]}}".to_owned(),
            "search_space.topology.parallel_configs[0]",
            "one flat shape",
        ),
        (
            "search_space: {topology: {model: m, gpu: g, deployment_mode: [disagg], parallel_configs: [{tp: 1}]}}".to_owned(),
            "search_space.topology.parallel_configs[0]",
            "{prefill: {...}, decode: {...}}",
        ),
        (
            "search_space: {topology: {model: m, gpu: g, deployment_mode: [disagg], parallel_configs: [{prefill: {tp: 1}}]}}".to_owned(),
            "search_space.topology.parallel_configs[0]",
            "both prefill and decode",
        ),
        (
            format!("search_space: {{{base}, parameters: {{tp: {{values: [1, 2]}}}}}}"),
            "search_space.parameters.tp",
            "parallel_configs",
        ),
        (
            format!("search_space: {{{base}, parameters: {{decode_replicas: {{values: [1, 2]}}}}}}"),
            "search_space.parameters.decode_replicas",
            "reserved",
        ),
        (
            "models: {m: {layers: 1}}".to_owned(),
            "models",
            "cards for search_space.topology",
        ),
        (
            format!("search_space: {{{base}}}\ngpus: [h200]"),
            "gpus",
            "a mapping from a name to a card",
        ),
    ] {
        let e = refused(&text);
        assert_eq!(e.path(), Some(path), "{text}: {e}");
        let m = e.to_string();
        assert!(m.contains(words), "{text}: {m}");
        assert!(!m.ends_with('.'), "{m}");
    }
}

#[test]
fn prefixed_knobs_of_a_branch_are_allowed() {
    let config = parse(
        "search_space:
  topology: {model: m, gpu: g}
  parameters:
    agg_max_num_seqs: {values: [64, 256]}
    prefill_max_num_batched_tokens: {values: [8192, 16384]}
    max_batch_size: {values: [64]}
",
    )
    .unwrap();
    assert_eq!(config.search_space.parameters.len(), 3);
}
