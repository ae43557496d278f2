//! Integration tests of `sweeper-topology`: pools counted by hand (dense, MoE, a pinned
//! menu, each backend filter, an infeasible model), the projection, and a property test
//! that every projection is a deployment of the pool within the budget.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use sweeper_goal::{Backend, DeploymentMode};
use sweeper_topology::{Pool, TopologyError};

fn pool(yaml: &str) -> Result<Pool, TopologyError> {
    Pool::build(&sweeper_goal::parse(yaml).unwrap())
}

fn config(budget: u64, extra: &str, topology: &str) -> String {
    format!(
        "workload: {{isl: 4000, osl: 1000, num_request_ratio: 4, concurrency: 8}}
search_space:
  gpu_budget: {budget}
  {extra}
  topology: {{{topology}}}
"
    )
}

fn count(p: &Pool, mode: DeploymentMode, backend: Backend) -> usize {
    p.deployments()
        .iter()
        .filter(|d| d.mode() == mode && d.backend == backend)
        .count()
}

#[test]
fn dense_agg_counted_by_hand() {
    // sizes 1, 2, 4, 8 (16 is over the budget): tp1 × 1..8, tp2 × 1..4, tp4 × 1..2, tp8 × 1
    let p = pool(&config(
        8,
        "",
        "model: llama3-8b-fp8, gpu: h200, deployment_mode: [agg]",
    ))
    .unwrap();
    assert_eq!(p.deployments().len(), 8 + 4 + 2 + 1);
    assert!(
        p.deployments()
            .iter()
            .all(|d| d.decode_worker().shape.attention_dp == 1
                && d.decode_worker().shape.moe_ep == 1)
    );
    assert_eq!(p.context_length(), 5000);
    // at least 4 GPUs: tp1 × 4..8, tp2 × 2..4, tp4 × 1..2, tp8 × 1
    let p = pool(&config(
        8,
        "min_gpu_budget: 4",
        "model: llama3-8b-fp8, gpu: h200, deployment_mode: [agg]",
    ))
    .unwrap();
    assert_eq!(p.deployments().len(), 5 + 3 + 2 + 1);
    assert!(
        p.deployments()
            .iter()
            .all(|d| (4..=8).contains(&d.used_gpus()))
    );
    assert_eq!(p.counts(), [(DeploymentMode::Agg, Backend::Vllm, 11)]);
}

#[test]
fn dense_disagg_pairs_counted_by_hand() {
    // per role within 4 GPUs: tp1 × 1..4 (1, 2, 3, 4 GPUs), tp2 × 1..2 (2, 4), tp4 × 1 (4);
    // pairs with prefill + decode <= 4: from 1 GPU 4, from the two 2-GPU pools 3 each,
    // from 3 GPUs 1: 11
    let p = pool(&config(
        4,
        "",
        "model: llama3-8b-fp8, gpu: h200, deployment_mode: [disagg]",
    ))
    .unwrap();
    assert_eq!(p.deployments().len(), 11);
    for d in p.deployments() {
        let flat = d.flat();
        assert_eq!(flat["deployment_mode"], "disagg");
        assert!(flat.contains_key("prefill_tp") && flat.contains_key("decode_replicas"));
        assert!(!flat.contains_key("tp") && !flat.contains_key("replicas"));
        let sum = flat["prefill_tp"].as_u64().unwrap() * flat["prefill_replicas"].as_u64().unwrap()
            + flat["decode_tp"].as_u64().unwrap() * flat["decode_replicas"].as_u64().unwrap();
        assert_eq!(flat["used_gpus"].as_u64(), Some(sum));
        assert!(sum <= 4);
    }
}

#[test]
fn moe_patterns_counted_by_hand() {
    // Qwen3-30B-A3B FP8 (768-wide experts, FP8 blocks of 128): moe_tp 2 keeps 384 = 3 × 128,
    // moe_tp 4 and 8 cut blocks. Sizes: 1 (one shape), 2 (TEP, DEP, TP, DTP), 4 and 8 (TEP,
    // DEP). Replicas within 8 GPUs: 8 + 4 × 4 + 2 × 2 + 2 × 1 = 30
    let text = config(
        8,
        "",
        "model: qwen3-30b-a3b-fp8, gpu: h200, deployment_mode: [agg], backend: [vllm, sglang, trtllm]",
    );
    let p = pool(&text).unwrap();
    assert_eq!(count(&p, DeploymentMode::Agg, Backend::Vllm), 30);
    // sglang: moe_tp 1 only, so no TP or DTP at 2 GPUs: 30 − 2 × 4
    assert_eq!(count(&p, DeploymentMode::Agg, Backend::Sglang), 22);
    // trtllm: the pure patterns never mix tp and attention_dp, so nothing is filtered
    assert_eq!(count(&p, DeploymentMode::Agg, Backend::Trtllm), 30);
    for d in p.deployments() {
        let s = d.decode_worker().shape;
        assert_eq!(s.tp * s.attention_dp, s.moe_tp * s.moe_ep);
        assert!(s.moe_tp <= 2, "{}", d.id());
        assert!(s.tp == 1 || s.attention_dp == 1);
    }
    let strategies: std::collections::BTreeSet<String> = p
        .deployments()
        .iter()
        .map(|d| d.flat()["strategy"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        strategies.into_iter().collect::<Vec<_>>(),
        ["dep", "dtp", "tep", "tp"]
    );
}

#[test]
fn trtllm_is_not_searched_in_disagg() {
    let text = config(
        4,
        "",
        "model: llama3-8b-fp8, gpu: h200, backend: [trtllm, vllm]",
    );
    let p = pool(&text).unwrap();
    assert_eq!(count(&p, DeploymentMode::Disagg, Backend::Trtllm), 0);
    assert_eq!(count(&p, DeploymentMode::Disagg, Backend::Vllm), 11);
    // agg: tp1 × 1..4, tp2 × 1..2, tp4 × 1 = 7 per backend
    assert_eq!(count(&p, DeploymentMode::Agg, Backend::Trtllm), 7);
    assert!(
        p.notes()
            .iter()
            .any(|n| n.contains("trtllm is not searched in disagg"))
    );
    assert!(p.summary().contains("agg trtllm: 7"), "{}", p.summary());
}

#[test]
fn expert_tp_keeps_whole_blocks_and_memory_bounds_the_smallest_worker() {
    let text = config(
        16,
        "",
        "model: qwen3-235b-a22b-fp8, gpu: h200, deployment_mode: [agg]",
    );
    let p = pool(&text).unwrap();
    let shapes: Vec<_> = p
        .deployments()
        .iter()
        .map(|d| d.decode_worker().shape)
        .collect();
    // 1536 / 8 = 192 and 1536 / 16 = 96 are no multiples of 128
    assert!(shapes.iter().all(|s| s.moe_tp <= 4));
    assert!(shapes.iter().any(|s| s.moe_tp == 4 && s.tp == 4));
    // 235 GB of FP8 weights do not fit one 141 GB GPU
    assert!(shapes.iter().all(|s| s.gpus() >= 2));
    assert!(shapes.iter().any(|s| s.gpus() == 8 && s.moe_ep == 8));
}

#[test]
fn an_infeasible_model_says_why() {
    let text = config(2, "", "model: qwen3-235b-a22b-fp8, gpu: h100");
    let e = pool(&text).unwrap_err().to_string();
    assert!(
        e.contains("qwen3-235b-a22b-fp8 does not fit on h100 within gpu_budget 2"),
        "{e}"
    );
    assert!(e.contains("raise gpu_budget"), "{e}");
    let text = config(
        2,
        "",
        "model: llama3-8b-fp8, gpu: h200, gpus_per_worker: [4, 8]",
    );
    let e = pool(&text).unwrap_err().to_string();
    assert!(e.contains("over gpu_budget 2"), "{e}");
    let text = config(
        8,
        "min_gpu_budget: 8",
        "model: llama3-8b-fp8, gpu: h200, gpus_per_worker: [16]",
    );
    assert!(pool(&text).is_err());
}

#[test]
fn a_pinned_menu_is_kept_per_backend_and_refused_when_legal_nowhere() {
    let text = config(
        8,
        "",
        "model: qwen3-32b-fp8, gpu: h200, deployment_mode: [agg], backend: [vllm, trtllm],
         parallel_configs: [{tp: 2, replicas: 2}, {tp: 4}]",
    );
    let p = pool(&text).unwrap();
    assert_eq!(p.deployments().len(), 4);
    let ids = p.ids();
    assert!(ids.contains(&"agg:vllm:tp2x2".to_owned()), "{ids:?}");
    assert!(ids.contains(&"agg:trtllm:tp4x1".to_owned()), "{ids:?}");
    for (menu, words) in [
        ("[{tp: 8, replicas: 2}]", "over gpu_budget 8"),
        ("[{tp: 3}]", "not on the gpus_per_worker ladder"),
        ("[{tp: 2, attention_dp: 2}]", "plain tensor parallelism"),
    ] {
        let text = config(
            8,
            "",
            &format!(
                "model: qwen3-32b-fp8, gpu: h200, deployment_mode: [agg], parallel_configs: {menu}"
            ),
        );
        let e = pool(&text).unwrap_err().to_string();
        assert!(
            e.contains("parallel_configs[0]: legal for no backend"),
            "{e}"
        );
        assert!(e.contains(words), "{e}");
    }
    // a disagg pair
    let text = config(
        16,
        "",
        "model: qwen3-30b-a3b-fp8, gpu: h200, deployment_mode: [disagg],
         parallel_configs: [{prefill: {tp: 4, moe_ep: 4}, decode: {tp: 1, attention_dp: 4, moe_ep: 4, replicas: 2}}]",
    );
    let p = pool(&text).unwrap();
    assert_eq!(p.ids(), ["disagg:vllm:tep4x1+dep4x2"]);
    assert_eq!(p.deployments()[0].used_gpus(), 12);
}

#[test]
fn each_backend_filter() {
    // one mixed shape per filter, pinned, searched on all three backends
    let text = config(
        8,
        "",
        "model: qwen3-30b-a3b-fp8, gpu: h200, deployment_mode: [agg], backend: [vllm, sglang, trtllm],
         parallel_configs: [
           {tp: 2, attention_dp: 2, moe_ep: 4},
           {tp: 2, moe_tp: 2},
           {tp: 1, attention_dp: 4, moe_tp: 2, moe_ep: 2}]",
    );
    let p = pool(&text).unwrap();
    let mut ids = p.ids();
    ids.sort();
    // trtllm refuses tp and attention_dp together; sglang refuses moe_tp > 1; vllm refuses
    // moe_tp and moe_ep together
    assert_eq!(
        ids,
        [
            "agg:sglang:mixed4x1",
            "agg:trtllm:mixed4x1",
            "agg:trtllm:tp2x1",
            "agg:vllm:mixed4x1",
            "agg:vllm:tp2x1",
        ]
    );
    let by = |id: &str| p.by_id(id).unwrap().decode_worker().shape;
    assert_eq!(by("agg:sglang:mixed4x1").tp, 2);
    assert_eq!(by("agg:trtllm:mixed4x1").moe_tp, 2);
}

#[test]
fn custom_cards_and_unknown_names() {
    let text = format!(
        "{}models:\n  tiny: {{layers: 2, hidden: 64, heads: 4, kv_heads: 2, head_dim: 16, intermediate: 128, vocab: 1000, dtype: bf16}}\n",
        config(2, "", "model: tiny, gpu: h100, deployment_mode: [agg]")
    );
    let p = pool(&text).unwrap();
    // tp1 × 1..2, tp2 × 1
    assert_eq!(p.deployments().len(), 3);
    let e = pool(&config(2, "", "model: llama-9, gpu: h100"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("search_space.topology.model: unknown model `llama-9`"),
        "{e}"
    );
    assert!(e.contains("qwen3-235b-a22b-fp8"), "{e}");
    let text = format!(
        "{}gpus:\n  g: {{hbm_gb: 0}}\n",
        config(2, "", "model: llama3-8b-fp8, gpu: g")
    );
    let e = pool(&text).unwrap_err().to_string();
    assert!(e.starts_with("gpus.g"), "{e}");
}

#[test]
fn projection_picks_the_requested_deployment_and_respects_modes_first() {
    let text = config(16, "", "model: qwen3-30b-a3b-fp8, gpu: h200");
    let p = pool(&text).unwrap();
    let names: Vec<&str> = p.latents().iter().map(|l| l.name).collect();
    assert!(
        names.contains(&"deployment_mode") && names.contains(&"topology_ffn"),
        "{names:?}"
    );
    // every deployment is the projection of its own features
    for d in p.deployments().iter().step_by(37) {
        let f = d.flat();
        let mut request = Map::new();
        request.insert("deployment_mode".into(), f["deployment_mode"].clone());
        request.insert(
            "topology_gpu_ratio".into(),
            json!(d.used_gpus() as f64 / 16.0),
        );
        let w = d.decode_worker().shape;
        request.insert("topology_worker_gpus".into(), json!(w.gpus()));
        request.insert(
            "topology_attention".into(),
            json!(sweeper_topology::attention_mode(w)),
        );
        request.insert("topology_ffn".into(), json!(sweeper_topology::ffn_mode(w)));
        if let Some(pw) = d.prefill_worker() {
            request.insert(
                "topology_prefill_share".into(),
                json!(pw.gpus() as f64 / d.used_gpus() as f64),
            );
            request.insert(
                "topology_prefill_worker_gpus".into(),
                json!(pw.shape.gpus()),
            );
            request.insert(
                "topology_prefill_attention".into(),
                json!(sweeper_topology::attention_mode(pw.shape)),
            );
            request.insert(
                "topology_prefill_ffn".into(),
                json!(sweeper_topology::ffn_mode(pw.shape)),
            );
        }
        let got = p.project(&request);
        // the same features (another deployment may share them: same strategy class and
        // sizes); the shape's modes and sizes must match
        assert_eq!(got.used_gpus(), d.used_gpus(), "{} -> {}", d.id(), got.id());
        assert_eq!(got.decode_worker().shape.gpus(), w.gpus());
        assert_eq!(
            sweeper_topology::attention_mode(got.decode_worker().shape),
            sweeper_topology::attention_mode(w)
        );
    }
    // a mode wins over a closer number: ask for DEP on 8 GPUs at a ratio that only TEP...
    let mut request = Map::new();
    request.insert("deployment_mode".into(), json!("agg"));
    request.insert("topology_attention".into(), json!("dp"));
    request.insert("topology_ffn".into(), json!("ep"));
    request.insert("topology_worker_gpus".into(), json!(1));
    let got = p.project(&request);
    assert_eq!(got.decode_worker().shape.attention_dp, 2, "{}", got.id());
    assert_eq!(got.decode_worker().shape.moe_ep, 2);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_projection_is_in_the_pool_and_within_budget(
        mode in prop::sample::select(vec!["agg", "disagg", "x"]),
        backend in prop::sample::select(vec!["vllm", "sglang", "trtllm", "x"]),
        ratio in -0.5f64..1.5,
        share in 0.0f64..1.0,
        worker in prop::sample::select(vec![0u64, 1, 2, 3, 4, 8, 16, 64]),
        prefill in prop::sample::select(vec![0u64, 1, 2, 4, 8]),
        attention in prop::sample::select(vec!["tp", "dp", "q"]),
        ffn in prop::sample::select(vec!["tp", "ep"]),
        budget in prop::sample::select(vec![4u64, 8, 12]),
    ) {
        let p = pool(&config(budget, "", "model: qwen3-30b-a3b-fp8, gpu: h200, backend: [vllm, sglang, trtllm]")).unwrap();
        let request: Map<String, Value> = [
            ("deployment_mode", json!(mode)),
            ("backend", json!(backend)),
            ("topology_gpu_ratio", json!(ratio)),
            ("topology_prefill_share", json!(share)),
            ("topology_worker_gpus", json!(worker)),
            ("topology_prefill_worker_gpus", json!(prefill)),
            ("topology_attention", json!(attention)),
            ("topology_ffn", json!(ffn)),
            ("topology_prefill_attention", json!(attention)),
            ("topology_prefill_ffn", json!(ffn)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let d = p.project(&request);
        prop_assert!(p.deployments().contains(d));
        prop_assert!(d.used_gpus() <= budget);
        prop_assert_eq!(p.by_id(&d.id()), Some(d));
        if mode != "x" {
            prop_assert_eq!(d.mode().as_str(), mode);
        }
    }
}

/// gpt-oss keeps 128 tokens in half its layers: a worker's KV tokens are counted in
/// sequences of the context length (4000 + 1000), about twice what the rank would hold if
/// every layer kept every token; `SGLang`'s window pool, sized at 0.8 of the full pool's
/// tokens, leaves it about 1.1 times.
#[test]
fn a_sliding_window_worker_counts_the_tokens_its_layers_keep() {
    let p = pool(&config(
        1,
        "",
        "model: gpt-oss-120b, gpu: h200, deployment_mode: [agg], backend: [vllm, sglang]",
    ))
    .unwrap();
    let model = &sweeper_cards::model_presets()["gpt-oss-120b"];
    let h200 = &sweeper_cards::gpu_presets()["h200"];
    for d in p.deployments() {
        let w = d.decode_worker();
        let plan = model.memory_plan(h200, w.shape, &sweeper_topology::memory_settings(d.backend));
        let gain = w.kv_tokens_per_rank as f64 / plan.kv_tokens_per_rank as f64;
        let want = match d.backend {
            Backend::Vllm => 36.0 * 5000.0 / (18.0 * 5000.0 + 18.0 * 128.0),
            _ => 36.0 / (18.0 + 0.8 * 18.0),
        };
        assert!(
            (gain / want - 1.0).abs() < 0.001,
            "{:?}: ×{gain}",
            d.backend
        );
    }
    assert_eq!(p.deployments().len(), 2);
}
