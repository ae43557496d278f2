//! Integration tests of `sweeper-cards`: the presets against their published sizes, the
//! shape rules, and the memory accounting against hand-computed figures.

use serde_json::{Value, json};
use sweeper_cards::{
    CardError, Dtype, FractionOf, MemorySettings, SGLANG_SWA_FULL_TOKENS_RATIO, Shape, Strategy,
    WindowCache, gpu_presets, model_presets, parse_gpu, parse_model,
};

fn shape(tp: u64, attention_dp: u64, moe_tp: u64, moe_ep: u64) -> Shape {
    Shape {
        tp,
        attention_dp,
        moe_tp,
        moe_ep,
    }
}

#[test]
fn every_preset_parses_and_checks() {
    let models = model_presets();
    for name in [
        "llama3-8b-fp8",
        "llama3-8b-bf16",
        "qwen3-32b-fp8",
        "qwen3-32b-bf16",
        "llama3-70b-fp8",
        "llama3-70b-bf16",
        "qwen3-30b-a3b-fp8",
        "qwen3-235b-a22b-fp8",
        "deepseek-r1-fp8",
        "gpt-oss-120b",
        "minimax-m2.5-fp8",
        "minimax-m2.5-mxfp4",
        "kimi-k2.5-nvfp4",
        "kimi-k2.5-mxfp4",
    ] {
        models[name].check(name).unwrap();
        if models[name].moe.is_some() {
            assert!(models[name].source.is_some(), "{name}");
        }
    }
    assert_eq!(models.len(), 14);
    let gpus = gpu_presets();
    for name in ["h100", "h200", "b200", "gb200", "b300", "mi355x"] {
        gpus[name].check(name).unwrap();
        assert!(gpus[name].source.is_some(), "{name}");
    }
    assert_eq!(gpus.len(), 6);
}

fn billions(x: f64) -> f64 {
    x / 1e9
}

#[test]
fn dense_presets_keep_their_sizes() {
    let models = model_presets();
    let q = &models["qwen3-32b-fp8"];
    assert!((32.0..34.0).contains(&billions(q.total_params())));
    assert_eq!(q.kv_bytes_per_token(), 131_072.0);
    assert_eq!(q.weight_bytes(), q.total_params());
    let l70 = &models["llama3-70b-bf16"];
    assert!((69.0..72.0).contains(&billions(l70.total_params())));
    assert_eq!(l70.weight_bytes(), 2.0 * l70.total_params());
    assert_eq!(q.active_params(), q.total_params() - q.head_params());
}

#[test]
fn moe_presets_match_their_published_sizes() {
    let models = model_presets();
    // (preset, total billions, active billions), as the model cards name them
    for (name, total, active) in [
        ("qwen3-30b-a3b-fp8", 30.5, 3.3),
        ("qwen3-235b-a22b-fp8", 235.0, 22.0),
        ("deepseek-r1-fp8", 671.0, 37.0),
        ("gpt-oss-120b", 117.0, 5.1),
        // MiniMax-M2.5: 229 B, 10 B active (MTP modules aside); Kimi-K2.5's text model:
        // 1.04 T, 32 B active
        ("minimax-m2.5-fp8", 229.0, 10.0),
        ("minimax-m2.5-mxfp4", 229.0, 10.0),
        ("kimi-k2.5-nvfp4", 1040.0, 32.0),
        ("kimi-k2.5-mxfp4", 1040.0, 32.0),
    ] {
        let m = &models[name];
        let t = billions(m.total_params());
        let a = billions(m.active_params());
        assert!((t / total - 1.0).abs() < 0.03, "{name}: total {t}");
        assert!((a / active - 1.0).abs() < 0.1, "{name}: active {a}");
    }
    // gpt-oss-120b: MXFP4 experts (4.25 bits), BF16 rest: about 65 GB of weights
    let oss = &models["gpt-oss-120b"];
    assert_eq!(oss.expert_dtype(), Dtype::Mxfp4);
    let gb = oss.weight_bytes() / 1e9;
    assert!((60.0..68.0).contains(&gb), "{gb}");
}

#[test]
fn mla_kv_cache_is_the_latent() {
    let models = model_presets();
    let r1 = &models["deepseek-r1-fp8"];
    // 61 layers × (512 latent + 64 rope) values × 1 byte (FP8 cache)
    assert_eq!(r1.kv_bytes_per_token(), 61.0 * 576.0);
    // every tensor-parallel rank holds the whole latent
    assert_eq!(
        r1.kv_bytes_per_token_per_rank(shape(8, 1, 1, 8)),
        61.0 * 576.0
    );
    // grouped-query attention: the KV heads split by tp, at least one per rank
    let q = &models["qwen3-235b-a22b-fp8"];
    let full = 94.0 * 2.0 * 4.0 * 128.0;
    assert_eq!(q.kv_bytes_per_token(), full);
    assert_eq!(q.kv_bytes_per_token_per_rank(shape(2, 1, 1, 2)), full / 2.0);
    assert_eq!(q.kv_bytes_per_token_per_rank(shape(8, 1, 1, 8)), full / 4.0);
}

#[test]
fn expert_tp_keeps_whole_fp8_blocks() {
    let models = model_presets();
    let q = &models["qwen3-235b-a22b-fp8"];
    // 1536 / 8 = 192, not a multiple of 128: aiconfigurator refuses it too
    let err = q.check_shape(shape(8, 1, 8, 1)).unwrap_err().to_string();
    assert!(err.contains("192") && err.contains("128"), "{err}");
    assert!(matches!(
        q.check_shape(shape(8, 1, 8, 1)),
        Err(CardError::Shape { .. })
    ));
    // 1536 / 4 = 384 = 3 × 128; 1536 / 2 = 768
    q.check_shape(shape(4, 1, 4, 1)).unwrap();
    q.check_shape(shape(1, 2, 2, 1)).unwrap();
    // MXFP4 experts have no FP8 block: gpt-oss splits 2880 / 8 = 360
    models["gpt-oss-120b"]
        .check_shape(shape(8, 1, 8, 1))
        .unwrap();
}

#[test]
fn shape_rules() {
    let models = model_presets();
    let q = &models["qwen3-235b-a22b-fp8"];
    q.check_shape(shape(8, 1, 1, 8)).unwrap();
    q.check_shape(shape(1, 8, 1, 8)).unwrap();
    let width = q.check_shape(shape(4, 1, 1, 8)).unwrap_err().to_string();
    assert!(width.contains("must equal moe_tp × moe_ep"), "{width}");
    // 64 heads do not divide by 128... nor 3
    let heads = q.check_shape(shape(3, 1, 3, 1)).unwrap_err().to_string();
    assert!(heads.contains("heads do not divide by tp 3"), "{heads}");
    let dense = &models["qwen3-32b-fp8"];
    dense.check_shape(Shape::dense(8)).unwrap();
    let dp = dense
        .check_shape(shape(1, 2, 1, 2))
        .unwrap_err()
        .to_string();
    assert!(dp.contains("plain tensor parallelism"), "{dp}");
    // 256 experts do not divide by 3 (a custom card)
    let r1 = &models["deepseek-r1-fp8"];
    assert!(r1.check_shape(shape(1, 3, 1, 3)).is_err());
    r1.check_shape(shape(1, 16, 1, 16)).unwrap();
}

#[test]
fn strategies() {
    assert_eq!(Shape::dense(1).strategy(), Strategy::Tp);
    assert_eq!(Shape::dense(4).strategy(), Strategy::Tp);
    assert_eq!(shape(4, 1, 4, 1).strategy(), Strategy::Tp);
    assert_eq!(shape(4, 1, 1, 4).strategy(), Strategy::Tep);
    assert_eq!(shape(1, 4, 1, 4).strategy(), Strategy::Dep);
    assert_eq!(shape(1, 4, 4, 1).strategy(), Strategy::Dtp);
    assert_eq!(shape(2, 2, 2, 2).strategy(), Strategy::Mixed);
    assert_eq!(shape(1, 4, 1, 4).strategy().as_str(), "dep");
    assert_eq!(shape(1, 4, 1, 4).gpus(), 4);
}

fn tiny() -> sweeper_cards::ModelSpec {
    parse_model(
        &json!({"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "head_dim": 16,
                "intermediate": 128, "vocab": 1000, "dtype": "bf16"}),
        "models.tiny",
    )
    .unwrap()
}

#[test]
fn memory_plan_by_hand() {
    let model = tiny();
    // attention 3 × 64 × 64 + 2 × 64 × 32 = 12288... per layer: q 4096 + kv 4096 + o 4096,
    // MLP 3 × 64 × 128 = 24576; 2 layers = 73728; head and embedding 64000 each
    assert_eq!(model.total_params(), 201_728.0);
    let gpu = parse_gpu(
        &json!({"hbm_gb": 0.001, "hbm_tb_s": 1, "fp8_tflops": 1, "bf16_tflops": 1, "nvlink_gb_s": 1}),
        "gpus.tiny",
    )
    .unwrap();
    let settings = MemorySettings::vllm()
        .with_fraction(0.5, FractionOf::Total)
        .with_max_num_tokens(10)
        .with_reserves(1000.0, 500.0);
    let plan = model.memory_plan(&gpu, Shape::dense(2), &settings);
    // 201728 values × 2 bytes / tp 2
    assert_eq!(plan.weight_bytes, 201_728.0);
    // 10 tokens × (4 × 64 + 2 × 128 / 2) values × 2 bytes
    assert_eq!(plan.activation_bytes, 7680.0);
    assert_eq!(plan.reserve_bytes, 1500.0);
    // 0.5 × 1e6 − 210908
    assert_eq!(plan.kv_budget_bytes, 289_092.0);
    // 2 layers × 2 (k, v) × 1 kv head per rank × 16 × 2 bytes
    assert_eq!(plan.kv_bytes_per_token, 128.0);
    assert_eq!(plan.kv_tokens_per_rank, 2258);
    assert_eq!(plan.kv_tokens_per_worker, 2258);
    assert!(plan.holds(2258));
    assert!(!plan.holds(2259));
    // TensorRT-LLM applies the fraction to what is free: 0.5 × (1e6 − 210908) / 128
    let free = model.memory_plan(
        &gpu,
        Shape::dense(2),
        &settings.with_fraction(0.5, FractionOf::Free),
    );
    assert_eq!(free.kv_tokens_per_rank, 3082);
    // one GPU: no communicator reserve, the whole model on it
    let one = model.memory_plan(&gpu, Shape::dense(1), &settings);
    assert_eq!(one.reserve_bytes, 1000.0);
    assert_eq!(one.weight_bytes, 403_456.0);
}

#[test]
fn attention_dp_ranks_each_hold_their_own_kv() {
    let models = model_presets();
    let q = &models["qwen3-235b-a22b-fp8"];
    let h200 = &gpu_presets()["h200"];
    let settings = MemorySettings::vllm();
    let dep = q.memory_plan(h200, shape(1, 8, 1, 8), &settings);
    assert_eq!(dep.kv_tokens_per_worker, 8 * dep.kv_tokens_per_rank);
    let tep = q.memory_plan(h200, shape(8, 1, 1, 8), &settings);
    assert_eq!(tep.kv_tokens_per_worker, tep.kv_tokens_per_rank);
    // DEP replicates attention: more weight per rank than TEP, the same experts per rank
    assert!(dep.weight_bytes > tep.weight_bytes);
    // all 128 experts stored once over the 8 ranks: about 227 GB / 8 of experts per rank
    let experts_per_rank = 94.0 * 128.0 * 3.0 * 4096.0 * 1536.0 / 8.0;
    assert!(tep.weight_bytes > experts_per_rank);
    assert!(
        tep.weight_bytes < experts_per_rank + 3e9,
        "{}",
        tep.weight_bytes
    );
    // one H200 cannot hold 235 B FP8 weights; four can
    assert!(!q.memory_plan(h200, Shape::dense(1), &settings).holds(1));
    assert!(
        q.memory_plan(h200, shape(4, 1, 1, 4), &settings)
            .holds(8192)
    );
}

#[test]
fn gpu_cards() {
    let gpus = gpu_presets();
    assert_eq!(gpus["gb200"].nvlink_domain(), 72);
    assert_eq!(gpus["gb200"].gpus_per_node, 4);
    assert_eq!(gpus["h200"].nvlink_domain(), 8);
    assert!(!gpus["h200"].supports_fp4());
    assert!(gpus["b300"].supports_fp4());
    // Hopper dequantizes 4-bit weights and runs BF16 GEMMs
    assert_eq!(gpus["h200"].tflops(Dtype::Mxfp4), 989.0);
    assert_eq!(gpus["b200"].tflops(Dtype::Fp4), 9000.0);
    assert_eq!(gpus["h100"].tflops(Dtype::Fp8), 1979.0);
}

#[test]
fn card_errors_name_the_path_and_the_fix() {
    let e = parse_model(&json!({"layers": 1, "colour": 3}), "models.m")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("models.m: "), "{e}");
    let e = parse_model(
        &json!({"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "head_dim": 16,
                "intermediate": 128, "vocab": 1000, "dtype": "bf16",
                "moe": {"experts": 4, "active_experts": 8, "expert_intermediate": 64}}),
        "models.m",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("models.m.moe.active_experts"), "{e}");
    assert!(e.contains("set at most `experts`"), "{e}");
    let e = parse_model(
        &json!({"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 3, "head_dim": 16,
                "intermediate": 128, "vocab": 1000, "dtype": "bf16"}),
        "models.m",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("models.m.kv_heads"), "{e}");
    let e = parse_gpu(
        &json!({"hbm_gb": 80, "hbm_tb_s": 1, "fp8_tflops": 1, "bf16_tflops": 1,
                "nvlink_gb_s": 1, "nvlink_domain": 12}),
        "gpus.g",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("gpus.g.nvlink_domain"), "{e}");
    let e = parse_gpu(
        &json!({"hbm_gb": 0, "hbm_tb_s": 1, "fp8_tflops": 1, "bf16_tflops": 1, "nvlink_gb_s": 1}),
        "gpus.g",
    )
    .unwrap_err()
    .to_string();
    assert_eq!(e, "gpus.g.hbm_gb: must be a finite number > 0");
}

/// `tiny()` with one of its two layers attending to a window of 100 tokens.
fn tiny_windowed() -> sweeper_cards::ModelSpec {
    parse_model(
        &json!({"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "head_dim": 16,
                "intermediate": 128, "vocab": 1000, "dtype": "bf16",
                "sliding_window": {"window": 100, "layers": 1}}),
        "models.tiny",
    )
    .unwrap()
}

#[test]
fn gpt_oss_alternates_full_and_sliding_window_layers() {
    let models = model_presets();
    let g = &models["gpt-oss-120b"];
    let w = g
        .sliding_window
        .as_ref()
        .expect("gpt-oss has sliding-window layers");
    assert_eq!((w.window, w.layers), (128, 18));
    assert_eq!(g.sliding_layer_count(), 18);
    // 18 layers × 8192 + 18 layers × 128 token-layers, 2 × 8 × 64 BF16 values each
    assert_eq!(g.kv_layer_tokens(8192.0), 18.0 * 8192.0 + 18.0 * 128.0);
    assert_eq!(g.kv_layer_tokens(100.0), 36.0 * 100.0);
    assert_eq!(
        g.kv_bytes_per_sequence(8192.0),
        (18.0 * 8192.0 + 18.0 * 128.0) * 2048.0
    );
    // every other card attends to the whole context in every layer
    for (name, m) in &models {
        if name != "gpt-oss-120b" {
            assert!(m.sliding_window.is_none(), "{name}");
            assert_eq!(
                m.kv_bytes_per_sequence(1000.0),
                1000.0 * m.kv_bytes_per_token()
            );
        }
    }
}

#[test]
fn a_sliding_window_memory_plan_by_hand() {
    let gpu = parse_gpu(
        &json!({"hbm_gb": 0.001, "hbm_tb_s": 1, "fp8_tflops": 1, "bf16_tflops": 1, "nvlink_gb_s": 1}),
        "gpus.tiny",
    )
    .unwrap();
    let settings = MemorySettings::vllm()
        .with_fraction(0.5, FractionOf::Total)
        .with_max_num_tokens(10)
        .with_reserves(1000.0, 500.0);
    let model = tiny_windowed();
    let plan = model.memory_plan(&gpu, Shape::dense(2), &settings);
    // the same budget as `memory_plan_by_hand`: 289,092 bytes, 128 a token in both layers
    assert_eq!(plan.kv_budget_bytes, 289_092.0);
    assert_eq!(plan.kv_bytes_per_token, 128.0);
    assert_eq!(plan.kv_window_bytes_per_token, 64.0);
    assert_eq!(plan.kv_window, Some(100));
    assert_eq!(plan.kv_tokens_per_rank, 2258);
    // sequences within the window keep every token in both layers
    assert_eq!(plan.tokens_at(100), 2258);
    // a 1000-token sequence takes 64 × 1000 + 64 × 100 bytes: 289092 × 1000 / 70400
    assert_eq!(plan.sequence_bytes(1000), 70_400.0);
    assert_eq!(plan.tokens_at(1000), 4106);
    // one sequence fits while 64 c + 6400 <= 289092
    assert!(plan.holds(4417));
    assert!(!plan.holds(4418));
    // without the window the same card holds 2258 tokens whatever the length
    let plain = tiny().memory_plan(&gpu, Shape::dense(2), &settings);
    assert_eq!(plain.kv_window, None);
    assert_eq!(plain.tokens_at(1000), 2258);
    assert_eq!(plain.tokens_at(1), 2258);
    assert!(plain.holds(2258) && !plain.holds(2259));
    // SGLang: the window pool holds 0.8 × the full pool's tokens, fixed at startup:
    // 289092 / (64 + 0.8 × 64) = 2509.5 full-pool tokens; a 50-token sequence keeps all
    // of its tokens in the window pool, which bounds it at 0.8 × 2509.5
    let sglang = model.memory_plan(
        &gpu,
        Shape::dense(2),
        &settings.with_window_cache(WindowCache::TokenRatio(SGLANG_SWA_FULL_TOKENS_RATIO)),
    );
    assert_eq!(sglang.tokens_at(1000), 2509);
    assert_eq!(sglang.tokens_at(50), 2007);
}

#[test]
fn sliding_window_errors_name_the_field_and_the_fix() {
    let card = |window: Value| {
        parse_model(
            &json!({"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "head_dim": 16,
                    "intermediate": 128, "vocab": 1000, "dtype": "bf16",
                    "sliding_window": window}),
            "models.m",
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    };
    let e = card(json!({"window": 0, "layers": 1})).unwrap_err();
    assert_eq!(
        e,
        "models.m.sliding_window.window: must be an integer > 0 (the tokens a sliding-window layer attends to)"
    );
    let e = card(json!({"window": 128, "layers": 3})).unwrap_err();
    assert!(e.starts_with("models.m.sliding_window.layers: "), "{e}");
    assert!(e.contains("from 1 to the card's 2 layers"), "{e}");
    assert!(e.contains("got 3"), "{e}");
    let e = card(json!({"window": 128, "layers": 0})).unwrap_err();
    assert!(e.contains("drop the `sliding_window` block"), "{e}");
    let e = card(json!({"window": 128})).unwrap_err();
    assert!(e.contains("missing field `layers`"), "{e}");
    let e = card(json!({"window": 128, "layers": 1, "every": 2})).unwrap_err();
    assert!(e.contains("unknown field `every`"), "{e}");
    assert_eq!(card(json!({"window": 128, "layers": 2})), Ok(()));
}
