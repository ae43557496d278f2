//! One evaluation of the built-in serving model (`sweeper-model`), the work a sweep does per
//! candidate: a dense aggregated worker (Qwen3-32B FP8 on H200, tp 2, 64 clients), a
//! mixture-of-experts worker with attention data parallelism (DeepSeek-R1 FP8 on B200,
//! attention-DP 8 × expert-parallel 8, 256 clients) and a disaggregated deployment
//! (Qwen3-235B-A22B FP8 on H200: two attention-DP prefill workers of 4 GPUs, one of 8 for
//! decode, 512 clients). The contract is microseconds an evaluation; the peer it is
//! checked against, aiconfigurator 0.12.0's `cli_estimate`, takes 1–4 s a point on this
//! machine (`crates/sweeper-model/calibration/README.md`).

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use std::hint::black_box;
use sweeper_engine::{EvalRequest, Evaluator};
use sweeper_goal::{Load, Workload};
use sweeper_model::BuiltinEvaluator;

fn request(params: &Value, clients: u64, isl: u64, osl: u64) -> EvalRequest {
    let mut r = EvalRequest::new(1, params.as_object().cloned().unwrap_or_default());
    r.concurrency = Some(clients);
    r.workload = Some(Workload::Synthetic {
        isl,
        osl,
        num_request_ratio: 10.0,
        load: Load::Concurrency(clients),
    });
    r
}

fn bench(c: &mut Criterion) {
    let cases = [
        (
            "agg dense qwen3-32b-fp8 h200",
            json!({"model": "qwen3-32b-fp8", "gpu": "h200"}),
            json!({"tp": 2, "replicas": 1, "max_batch_size": 64}),
            64,
        ),
        (
            "agg moe attention-dp deepseek-r1-fp8 b200",
            json!({"model": "deepseek-r1-fp8", "gpu": "b200"}),
            json!({"tp": 1, "attention_dp": 8, "moe_tp": 1, "moe_ep": 8,
                   "max_batch_size": 32, "backend": "trtllm"}),
            256,
        ),
        (
            "disagg moe qwen3-235b-a22b-fp8 h200",
            json!({"model": "qwen3-235b-a22b-fp8", "gpu": "h200"}),
            json!({"deployment_mode": "disagg",
                   "prefill_tp": 1, "prefill_attention_dp": 4, "prefill_moe_tp": 4,
                   "prefill_moe_ep": 1, "prefill_replicas": 2,
                   "decode_tp": 1, "decode_attention_dp": 8, "decode_moe_tp": 1,
                   "decode_moe_ep": 8, "decode_replicas": 1, "decode_max_batch_size": 64}),
            512,
        ),
    ];
    let mut group = c.benchmark_group("builtin model: one evaluation");
    for (name, config, params, clients) in cases {
        let model = BuiltinEvaluator::from_config(&config).expect("a preset pair");
        let req = request(&params, clients, 4096, 512);
        assert!(
            matches!(
                model.evaluate(0, &req),
                sweeper_engine::EvalOutcome::Report(_)
            ),
            "{name}: the bench's candidate is feasible"
        );
        group.bench_function(name, |b| b.iter(|| model.evaluate(0, black_box(&req))));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
