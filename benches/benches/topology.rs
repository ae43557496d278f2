//! Suggestion latency of the default sampler at 150 observations: a flat serving space
//! (`tp × replicas`, batch, router) beside a topology space (Qwen3-235B-A22B FP8 on H200,
//! 32 GPUs, agg and disagg: the latent features of `sweeper-topology` plus the same batch
//! and router), in one study (a batch of 8 at 150 observations) and as the sweep runs it,
//! one study per mode (a batch of 4 in each at 75 observations each), each iteration on a
//! fresh copy of the saved study. The objectives are smooth functions of the trial's
//! numbers.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use std::collections::BTreeMap;
use sweeper_sampler::Study;

const FLAT: &str = r#"{"goal": {"target": "pareto"},
 "workload": {"isl": 4000, "osl": 1000, "num_request_ratio": 4, "concurrency": 64},
 "search_space": {"gpu_budget": 32, "used_gpus": ["tp", "replicas"],
   "parameters": {"tp": {"values": [1, 2, 4, 8]}, "replicas": {"int": [1, 8]},
     "max_batch_size": {"values": [16, 32, 64, 128, 256], "log": true},
     "router": {"choices": ["round_robin", "kv_aware"]}}}}"#;

const TOPOLOGY: &str = r#"{"goal": {"target": "pareto"},
 "workload": {"isl": 4000, "osl": 1000, "num_request_ratio": 4, "concurrency": 64},
 "search_space": {"gpu_budget": 32,
   "topology": {"model": "qwen3-235b-a22b-fp8", "gpu": "h200", "context_length": 8192},
   "parameters": {"max_batch_size": {"values": [16, 32, 64, 128, 256], "log": true},
     "router": {"choices": ["round_robin", "kv_aware"]}}}}"#;

/// A study of `config` (of one deployment mode's branch, or of the whole space) after
/// `observations`, saved as JSON.
fn study_at(
    config: &str,
    branch: Option<sweeper_goal::DeploymentMode>,
    observations: u64,
) -> serde_json::Value {
    let config = sweeper_goal::parse(config).unwrap();
    let space = sweeper_engine::search_space_of(&config, branch).unwrap();
    let mut study = Study::new(
        space,
        config.goal.sampler_metrics(),
        sweeper_sampler::Algorithm::Default,
        config.sweep.seed,
    )
    .unwrap();
    let mut n = 0_u64;
    while n < observations {
        for trial in study.suggest(8).unwrap() {
            let xs: Vec<f64> = trial
                .params
                .iter()
                .map(|(_, v)| v.as_f64().unwrap_or(1.0))
                .collect();
            let a: f64 = xs
                .iter()
                .enumerate()
                .map(|(i, x)| (x + i as f64).sin())
                .sum();
            let b: f64 = xs.iter().map(|x| (x * 0.3).cos()).sum();
            let m = BTreeMap::from([
                ("throughput_per_gpu".to_owned(), 100.0 + 10.0 * a),
                ("throughput_per_user".to_owned(), 50.0 + 5.0 * b),
            ]);
            study.observe(trial.id, &m).unwrap();
            n += 1;
        }
    }
    study.to_json()
}

fn bench(c: &mut Criterion) {
    use sweeper_goal::DeploymentMode::{Agg, Disagg};
    let mut group = c.benchmark_group("suggest_at_150");
    group.sample_size(10);
    // (name, config, branch, observations, batch): the flat space and the topology space
    // in one study, 8 at 150; the sweep's own path, one study per mode, is a batch of 4 in
    // each branch at 75 observations each
    for (name, config, branch, observations, batch) in [
        ("flat_serving_8", FLAT, None, 150, 8),
        ("topology_one_study_8", TOPOLOGY, None, 150, 8),
        ("topology_agg_branch_4_at_75", TOPOLOGY, Some(Agg), 75, 4),
        (
            "topology_disagg_branch_4_at_75",
            TOPOLOGY,
            Some(Disagg),
            75,
            4,
        ),
    ] {
        let saved = study_at(config, branch, observations);
        group.bench_function(name, |b| {
            b.iter_batched(
                || Study::from_json(&saved).unwrap(),
                |mut study| study.suggest(batch).unwrap(),
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
