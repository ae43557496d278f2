//! The built-in serving model through its public API: calibration, outcomes, determinism.

use crate::common::{default_workload, synthetic};
use serde_json::{Value, json};
use std::fmt::Write as _;
use sweeper_engine::evaluator::{EvalOutcome, EvalRequest, Evaluator, RawReport};
use sweeper_goal::Load;
use sweeper_model::BuiltinEvaluator;

fn request(params: &Value, concurrency: Option<u64>, ratio: Option<f64>) -> EvalRequest {
    let mut r = EvalRequest::new(7, params.as_object().cloned().unwrap_or_default());
    r.concurrency = concurrency;
    r.kv_load_ratio = ratio;
    r.workload = default_workload();
    r
}

fn report(outcome: EvalOutcome) -> RawReport {
    match outcome {
        EvalOutcome::Report(r) => r,
        other => panic!("expected a report, got {other:?}"),
    }
}

/// One published aiconfigurator figure (Qwen3-32B FP8, H200, TensorRT-LLM, isl 4000,
/// osl 500, aggregated, every batch slot busy) and the model's value for it. The runs use
/// `num_request_ratio: 1000`: aiconfigurator estimates the steady state of a run, without
/// the first wave of simultaneous prompts a short benchmark starts with (its TTFT grows
/// with the batch and saturates, 88 ms at batch 1 to 319 ms at 512 for Qwen3-32B on two
/// H200s; see crates/sweeper-model/calibration), so the first wave must weigh next to
/// nothing. The full comparison is `cargo xtask model-check`.
struct Figure {
    name: &'static str,
    target: f64,
    ours: f64,
}

fn calibration_figures() -> Vec<Figure> {
    let model =
        BuiltinEvaluator::from_config(&json!({"model": "qwen3-32b-fp8", "gpu": "h200"})).unwrap();
    let run = |tp: u64, batch: u64| {
        let mut r = request(
            &json!({"tp": tp, "replicas": 1, "max_batch_size": batch}),
            Some(batch),
            None,
        );
        r.workload = synthetic(4000, 500, 1000.0, Load::Concurrency(batch));
        report(model.evaluate(0, &r))
    };
    let per_gpu = |r: &RawReport| r["output_throughput_tok_s"] / r["used_gpus"];
    let per_user = |r: &RawReport| r["mean_output_token_throughput_per_user"];
    let (a, b, c) = (run(1, 128), run(2, 64), run(8, 1));
    vec![
        Figure {
            name: "tp1 b128 tok/s/gpu",
            target: 1310.0,
            ours: per_gpu(&a),
        },
        Figure {
            name: "tp1 b128 tok/s/user",
            target: 10.4,
            ours: per_user(&a),
        },
        Figure {
            name: "tp2 b64 tok/s/gpu",
            target: 955.0,
            ours: per_gpu(&b),
        },
        Figure {
            name: "tp2 b64 tok/s/user",
            target: 30.7,
            ours: per_user(&b),
        },
        Figure {
            name: "tp2 b64 ttft ms",
            target: 690.0,
            ours: b["mean_ttft_ms"],
        },
        Figure {
            name: "tp2 b64 tpot ms",
            target: 33.0,
            ours: b["mean_tpot_ms"],
        },
        Figure {
            name: "tp8 b1 tok/s/gpu",
            target: 28.0,
            ours: per_gpu(&c),
        },
        Figure {
            name: "tp8 b1 tok/s/user",
            target: 234.0,
            ours: per_user(&c),
        },
    ]
}

#[test]
fn calibration_within_35_percent_of_aiconfigurator() {
    let figures = calibration_figures();
    let mut table = String::from("| figure | target | ours | ratio |\n|---|---|---|---|\n");
    for f in &figures {
        let _ = writeln!(
            table,
            "| {} | {} | {:.1} | {:.2} |",
            f.name,
            f.target,
            f.ours,
            f.ours / f.target
        );
    }
    // Shown with `cargo test -- --nocapture`: the calibration table of the docs.
    let mut out = std::io::stderr();
    std::io::Write::write_all(&mut out, table.as_bytes()).unwrap();
    for f in &figures {
        let ratio = f.ours / f.target;
        assert!(
            (0.65..=1.35).contains(&ratio),
            "{}: ours {} vs {} (ratio {ratio:.2})\n{table}",
            f.name,
            f.ours,
            f.target
        );
    }
}

const SPEC_KEYS: [&str; 8] = [
    "output_throughput_tok_s",
    "mean_output_token_throughput_per_user",
    "mean_ttft_ms",
    "mean_tpot_ms",
    "mean_e2e_latency_ms",
    "goodput_output_throughput_tok_s",
    "gpu_hours",
    "duration_ms",
];

#[test]
fn reports_every_key_with_a_static_gpu_count() {
    let model = BuiltinEvaluator::from_config(&json!({})).unwrap();
    let r = report(model.evaluate(
        3,
        &request(
            &json!({"tp": 2, "replicas": 3, "max_batch_size": 32}),
            Some(50),
            None,
        ),
    ));
    for key in SPEC_KEYS
        .iter()
        .chain(&["used_gpus", "concurrency", "kv_capacity_tokens"])
    {
        let v = r.get(*key).copied();
        assert!(v.is_some_and(|v| v.is_finite() && v > 0.0), "{key}: {v:?}");
    }
    assert_eq!(r["used_gpus"], 6.0);
    assert_eq!(r["concurrency"], 50.0);
    let avg_gpu = r["gpu_hours"] / (r["duration_ms"] / 3_600_000.0);
    assert!((avg_gpu - 6.0).abs() < 1e-9, "{avg_gpu}");
    assert!(r["mean_e2e_latency_ms"] > r["mean_ttft_ms"]);
}

#[test]
fn kv_load_ratio_converts_with_spec_5() {
    let model = BuiltinEvaluator::from_config(&json!({"block_size": 64})).unwrap();
    let params = json!({"tp": 2, "replicas": 2, "max_batch_size": 512});
    let half = report(model.evaluate(0, &request(&params, None, Some(0.5))));
    let full = report(model.evaluate(0, &request(&params, None, Some(1.0))));
    let kv_tokens = half["kv_capacity_tokens"];
    assert_eq!(kv_tokens % 64.0, 0.0);
    let capacity = (kv_tokens / 4250.0).floor();
    assert_eq!(full["concurrency"], capacity);
    assert_eq!(half["concurrency"], (0.5 * capacity).floor());
    // Oversubscribed: the KV cache caps the batch and the rest queue.
    let over = report(model.evaluate(0, &request(&params, None, Some(2.0))));
    assert!(over["mean_ttft_ms"] > full["mean_ttft_ms"]);
    let gain = over["output_throughput_tok_s"] / full["output_throughput_tok_s"];
    assert!((gain - 1.0).abs() < 1e-9, "{gain}");
}

#[test]
fn unsupported_and_infeasible_candidates() {
    let model = BuiltinEvaluator::from_config(&json!({})).unwrap();
    let outcome = model.evaluate(0, &request(&json!({"tp": 3}), Some(8), None));
    assert!(
        matches!(&outcome, EvalOutcome::Unsupported(m) if m.contains("tp 3") && m.contains("8 kv heads")),
        "{outcome:?}"
    );
    let big =
        BuiltinEvaluator::from_config(&json!({"model": "llama3-70b-bf16", "gpu": "h100"})).unwrap();
    let outcome = big.evaluate(0, &request(&json!({"tp": 1}), Some(8), None));
    assert!(
        matches!(&outcome, EvalOutcome::Unsupported(m) if m.contains("do not fit")),
        "{outcome:?}"
    );
    assert!(matches!(
        big.evaluate(0, &request(&json!({"tp": 4}), Some(8), None)),
        EvalOutcome::Report(_)
    ));
    // 33 GB of HBM leaves about 0.2 GB for the KV cache: less than one 4250-token request.
    let tight = BuiltinEvaluator::from_config(&json!({
        "gpu": "small",
        "gpus": {"small": {"hbm_gb": 33.0, "hbm_tb_s": 4.8, "fp8_tflops": 1979,
                           "bf16_tflops": 989, "nvlink_gb_s": 900}}
    }))
    .unwrap();
    for (concurrency, ratio) in [(None, Some(0.5)), (Some(4), None)] {
        let outcome = tight.evaluate(0, &request(&json!({"tp": 1}), concurrency, ratio));
        assert!(
            matches!(&outcome, EvalOutcome::Infeasible(m) if m.contains("aggregated") && m.contains("4250")),
            "{outcome:?}"
        );
    }
}

#[test]
fn workloads_it_cannot_model() {
    let model = BuiltinEvaluator::from_config(&json!({})).unwrap();
    let mut r = request(&json!({}), Some(4), None);
    r.workload = Some(sweeper_goal::Workload::Trace {
        trace_path: "x.jsonl".into(),
        replay_concurrency: None,
    });
    assert!(matches!(model.evaluate(0, &r), EvalOutcome::Unsupported(m) if m.contains("trace")));
    r.concurrency = None;
    r.workload = synthetic(0, 100, 10.0, Load::Concurrency(4));
    assert!(matches!(model.evaluate(0, &r), EvalOutcome::Failed(m) if m.contains("isl")));
    r.workload = synthetic(100, 100, 10.0, Load::Concurrency(4));
    assert_eq!(report(model.evaluate(0, &r))["concurrency"], 4.0);
    r.workload = synthetic(100, 100, 10.0, Load::KvLoadRange { min: 0.0, max: 1.0 });
    assert!(matches!(model.evaluate(0, &r), EvalOutcome::Failed(m) if m.contains("no load")));
}

#[test]
fn open_loop_request_rate() {
    let model = BuiltinEvaluator::from_config(&json!({})).unwrap();
    let mut r = request(&json!({"tp": 2, "max_batch_size": 64}), None, None);
    let at = |r: &mut EvalRequest, rate: f64| {
        r.workload = synthetic(4000, 500, 100.0, Load::RequestRate(rate));
        report(model.evaluate(0, r))
    };
    // Below saturation every arrival is served: throughput = rate × osl.
    let light = at(&mut r, 0.5);
    assert!((light["output_throughput_tok_s"] - 250.0).abs() < 1e-6);
    let busier = at(&mut r, 2.0);
    assert!((busier["output_throughput_tok_s"] - 1000.0).abs() < 1e-6);
    assert!(busier["concurrency"] > light["concurrency"]);
    assert!(busier["mean_tpot_ms"] > light["mean_tpot_ms"]);
    // Far past saturation throughput stops growing and the backlog shows in TTFT.
    let over = at(&mut r, 50.0);
    let over2 = at(&mut r, 100.0);
    assert!((over["output_throughput_tok_s"] - over2["output_throughput_tok_s"]).abs() < 1e-6);
    assert!(over["output_throughput_tok_s"] < 50.0 * 500.0);
    assert!(over["mean_ttft_ms"] > 10.0 * busier["mean_ttft_ms"]);
    r.workload = synthetic(100, 100, 10.0, Load::RequestRate(-1.0));
    assert!(matches!(model.evaluate(0, &r), EvalOutcome::Failed(m) if m.contains("request_rate")));
}

#[test]
fn a_candidate_is_deterministic_and_seeded() {
    let model = BuiltinEvaluator::from_config(&json!({"seed": 1})).unwrap();
    let other = BuiltinEvaluator::from_config(&json!({"seed": 2})).unwrap();
    let r = request(&json!({"tp": 1, "max_batch_size": 16}), Some(16), None);
    assert_eq!(model.evaluate(0, &r), model.evaluate(5, &r));
    let (a, b) = (report(model.evaluate(0, &r)), report(other.evaluate(0, &r)));
    assert_ne!(a["mean_ttft_ms"], b["mean_ttft_ms"]);
    // Without jitter the seed does not matter.
    let flat = BuiltinEvaluator::from_config(&json!({"seed": 1, "length_jitter": 0})).unwrap();
    let flat2 = BuiltinEvaluator::from_config(&json!({"seed": 2, "length_jitter": 0})).unwrap();
    assert_eq!(flat.evaluate(0, &r), flat2.evaluate(0, &r));
}

#[test]
fn more_gpus_trade_throughput_per_gpu_for_speed_per_user() {
    let model = BuiltinEvaluator::from_config(&json!({})).unwrap();
    let at = |tp: u64, batch: u64| {
        report(model.evaluate(
            0,
            &request(
                &json!({"tp": tp, "max_batch_size": batch}),
                Some(batch),
                None,
            ),
        ))
    };
    let (wide, narrow) = (at(8, 8), at(1, 128));
    assert!(
        wide["mean_output_token_throughput_per_user"]
            > 5.0 * narrow["mean_output_token_throughput_per_user"]
    );
    assert!(
        narrow["output_throughput_tok_s"] / narrow["used_gpus"]
            > 3.0 * wide["output_throughput_tok_s"] / wide["used_gpus"]
    );
    // Every preset pair evaluates.
    for m in [
        "llama3-8b-fp8",
        "llama3-8b-bf16",
        "qwen3-32b-bf16",
        "llama3-70b-fp8",
    ] {
        for g in ["h100", "h200", "b200"] {
            let e = BuiltinEvaluator::from_config(&json!({"model": m, "gpu": g})).unwrap();
            let outcome = e.evaluate(
                0,
                &request(&json!({"tp": 4, "max_batch_size": 64}), Some(32), None),
            );
            assert!(
                matches!(outcome, EvalOutcome::Report(_)),
                "{m} on {g}: {outcome:?}"
            );
        }
    }
}

#[test]
fn config_errors_name_the_key_path_and_the_presets() {
    let e = BuiltinEvaluator::from_config(&json!({"model": "gpt-5"}))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("evaluator.builtin.model"), "{e}");
    assert!(
        e.contains("qwen3-32b-fp8") && e.contains("llama3-70b-bf16"),
        "{e}"
    );
    let e = BuiltinEvaluator::from_config(&json!({"tp": 2}))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("evaluator.builtin.tp"), "{e}");
    let e = BuiltinEvaluator::from_config(&json!({"gpus": {"x": {"hbm_gb": -1.0, "hbm_tb_s": 1.0,
        "fp8_tflops": 1.0, "bf16_tflops": 1.0, "nvlink_gb_s": 1.0}}, "gpu": "x"}))
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("evaluator.builtin.gpus.x.hbm_gb"), "{e}");
    let ok = BuiltinEvaluator::from_config(&Value::Null).unwrap();
    assert_eq!(
        (ok.model_name(), ok.gpu_name()),
        ("Qwen3-32B-like FP8", "H200 SXM")
    );
}

#[test]
fn load_trades_throughput_for_latency_and_extremes_stay_finite() {
    let model = BuiltinEvaluator::from_config(&json!({"length_jitter": 0})).unwrap();
    for tp in [1u64, 2, 4, 8] {
        let mut previous: Option<RawReport> = None;
        for clients in [1u64, 4, 16, 64, 128] {
            let r = report(model.evaluate(
                0,
                &request(
                    &json!({"tp": tp, "max_batch_size": 128}),
                    Some(clients),
                    None,
                ),
            ));
            if let Some(p) = &previous {
                assert!(
                    r["output_throughput_tok_s"] > p["output_throughput_tok_s"],
                    "tp {tp}"
                );
                assert!(r["mean_tpot_ms"] > p["mean_tpot_ms"], "tp {tp}");
                assert!(
                    r["mean_output_token_throughput_per_user"]
                        < p["mean_output_token_throughput_per_user"]
                );
            }
            previous = Some(r);
        }
    }
    // Absurd sizes neither panic nor produce non-finite numbers.
    for params in [
        json!({"tp": 8, "replicas": u64::MAX, "max_batch_size": u64::MAX}),
        json!({"tp": 1, "replicas": 1, "max_batch_size": 1}),
    ] {
        for (c, ratio) in [(Some(u64::MAX), None), (None, Some(1e300)), (Some(1), None)] {
            match model.evaluate(0, &request(&params, c, ratio)) {
                EvalOutcome::Report(r) => assert!(r.values().all(|v| v.is_finite()), "{r:?}"),
                EvalOutcome::Infeasible(_) | EvalOutcome::Failed(_) => {}
                other => panic!("{params}: {other:?}"),
            }
        }
    }
}

/// Issue 30, item 11: the report records SPEC 5's capacity in requests (summed over the
/// replicas), which the per-replica rule of the model does not change.
#[test]
fn the_report_records_spec_5_capacity_in_requests() {
    let model = BuiltinEvaluator::from_config(&json!({"block_size": 64})).unwrap();
    for replicas in [1, 3] {
        let params = json!({"tp": 2, "replicas": replicas, "max_batch_size": 512});
        let r = report(model.evaluate(0, &request(&params, None, Some(0.5))));
        let capacity = (r["kv_capacity_tokens"] / 4250.0).floor();
        assert!(capacity >= 1.0);
        assert_eq!(r["kv_capacity_requests"], capacity, "replicas {replicas}");
        assert_eq!(r["concurrency"], (0.5 * capacity).floor());
    }
}

/// The MoE examples over both deployment modes run end to end with the built-in model
/// (`deepseek-r1-fp8` on `gb200`, `qwen3-235b-a22b-fp8` on `h200`; 24 trials each here, to
/// keep a debug build in seconds), and the front plotted by deployment mode colours each
/// mode and names each point's shape in its tooltip.
#[test]
fn moe_examples_over_both_modes_run_end_to_end_and_plot_by_mode() {
    use crate::common::{example, sweeper_in, text};
    for name in ["topology-deepseek-gb200.yaml", "topology-moe-builtin.yaml"] {
        let yaml = std::fs::read_to_string(example(name)).unwrap();
        assert!(yaml.contains("max_trials: 160"), "{name}");
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join(name);
        std::fs::write(&cfg, yaml.replace("max_trials: 160", "max_trials: 24")).unwrap();
        let out_dir = dir.path().join("out");
        let started = std::time::Instant::now();
        let run = sweeper_in(
            &[
                "run",
                "-q",
                cfg.to_str().unwrap(),
                "--out",
                out_dir.to_str().unwrap(),
            ],
            dir.path(),
        );
        assert_eq!(run.status.code(), Some(0), "{name}: {}", text(&run.stderr));
        assert!(
            started.elapsed().as_secs() < 60,
            "{name}: {:?}",
            started.elapsed()
        );
        let result: Value =
            serde_json::from_str(&std::fs::read_to_string(out_dir.join("result.json")).unwrap())
                .unwrap();
        let text_all = result.to_string();
        for mode in ["\"agg\"", "\"disagg\""] {
            assert!(text_all.contains(mode), "{name}: no {mode} candidate");
        }
        let plot = sweeper_in(
            &[
                "plot",
                out_dir.to_str().unwrap(),
                "--color-by",
                "deployment_mode",
            ],
            dir.path(),
        );
        assert_eq!(
            plot.status.code(),
            Some(0),
            "{name}: {}",
            text(&plot.stderr)
        );
        let svg = std::fs::read_to_string(out_dir.join("front.svg")).unwrap();
        // a legend entry per mode, and the shape of a disaggregated point in its tooltip
        for needle in [
            "deployment_mode = agg (",
            "deployment_mode = disagg (",
            "prefill_tp=",
            "decode_moe_ep=",
            "decode_replicas=",
        ] {
            assert!(svg.contains(needle), "{name}: {needle} not in the plot");
        }
    }
}
