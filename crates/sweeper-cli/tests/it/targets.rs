//! SPEC 9 end to end on the built-in model: `sweeper recommend` against an exhaustive grid
//! evaluated candidate by candidate, and `strict_sla` in a run.

use crate::common::{example, sweeper};
use serde_json::{Map, Value, json};
use sweeper_engine::run::evaluate_candidate;
use sweeper_model::BuiltinEvaluator;

/// Every grid point of `examples/min-gpus.yaml`, evaluated one at a time: the fewest GPUs
/// whose goodput reaches `rate`, and the goodput of each.
fn grid_answer(rate: f64) -> Option<f64> {
    let cfg = sweeper_goal::from_path(&example("min-gpus.yaml")).unwrap();
    let model =
        BuiltinEvaluator::from_config(&json!({"model": "qwen3-32b-fp8", "gpu": "h200"})).unwrap();
    let mut best: Option<f64> = None;
    for tp in [1, 2, 4, 8] {
        for replicas in 1..=4 {
            for batch in [16, 64, 256] {
                let params: Map<String, Value> =
                    json!({"tp": tp, "replicas": replicas, "max_batch_size": batch})
                        .as_object()
                        .unwrap()
                        .clone();
                let one = evaluate_candidate(&cfg, &model, None, &params).unwrap();
                let Some(c) = one.candidate else { continue };
                let g = c
                    .metrics
                    .get("goodput_request_throughput_rps")
                    .copied()
                    .unwrap_or(0.0);
                if g >= rate * (1.0 - 1e-9) && c.used_gpus <= 32.0 {
                    best = Some(best.map_or(c.used_gpus, |b: f64| b.min(c.used_gpus)));
                }
            }
        }
    }
    best
}

#[test]
fn recommend_matches_the_exhaustive_grid_on_the_builtin_model() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let config = example("min-gpus.yaml");
    let run = sweeper([
        "run".as_ref(),
        config.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--no-progress".as_ref(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // the ranking's value column is the goodput the target reads, named so: beside `gpus`,
    // a column named `min_gpus` read as a second GPU count
    let header = run.stdout.lines().next().unwrap_or_default();
    let columns: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(columns.last(), Some(&"goodput_rps"), "{}", run.stdout);
    assert!(!columns.contains(&"min_gpus"), "{header}");
    for rate in [3.8, 1.0] {
        let want = grid_answer(rate);
        let rec = sweeper([
            "recommend".as_ref(),
            "--config".as_ref(),
            config.as_os_str(),
            out.as_os_str(),
            "--rate".as_ref(),
            rate.to_string().as_ref(),
            "--format".as_ref(),
            "json".as_ref(),
        ]);
        let answer: Value = serde_json::from_str(&rec.stdout).unwrap_or_else(|e| {
            panic!("{e}: {}{}", rec.stdout, rec.stderr);
        });
        let gpus = want.unwrap_or_else(|| panic!("the grid serves {rate} req/s"));
        assert_eq!(rec.code, 0, "{}", rec.stderr);
        assert_eq!(answer["outcome"], "found", "{answer}");
        assert_eq!(
            answer["best"]["gpus"].as_f64(),
            Some(gpus),
            "rate {rate}: {answer}"
        );
        assert!(answer["best"]["margin"].as_f64().unwrap() >= -1e-9);
        assert_eq!(answer["scaled"], false);
        for r in answer["runner_ups"].as_array().unwrap() {
            assert!(r["gpus"].as_f64().unwrap() >= gpus, "{r}");
        }
    }
    // far beyond any candidate: none serves it, and the answer says what was reached
    let rec = sweeper([
        "recommend".as_ref(),
        "--config".as_ref(),
        config.as_os_str(),
        out.as_os_str(),
        "--rate".as_ref(),
        "1000".as_ref(),
    ]);
    assert_eq!(rec.code, 1, "{}", rec.stderr);
    assert!(
        rec.stdout.contains("no candidate serves 1000 req/s"),
        "{}",
        rec.stdout
    );
    assert!(rec.stdout.contains("best goodput"), "{}", rec.stdout);
    // a derived load is shown as the tables show numbers, not with 13 decimals
    let best = rec.stdout.lines().find(|l| l.starts_with("best")).unwrap();
    let load = best
        .split("concurrency=")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    assert!(load.len() <= 7, "{best}");
    assert!(
        rec.stdout.contains("replica scaling: off"),
        "{}",
        rec.stdout
    );
    // with replica scaling, copies of a measured candidate serve it, and the answer says so
    let rec = sweeper([
        "recommend".as_ref(),
        "--config".as_ref(),
        config.as_os_str(),
        out.as_os_str(),
        "--rate".as_ref(),
        "20".as_ref(),
        "--scale-replicas".as_ref(),
    ]);
    assert_eq!(rec.code, 0, "{}{}", rec.stdout, rec.stderr);
    assert!(rec.stdout.contains("copies x"), "{}", rec.stdout);
    assert!(rec.stdout.contains("replica scaling: on"), "{}", rec.stdout);
}

const STRICT: &str = "
goal: {target: pareto, sla: {ttft_ms: 2000, itl_ms: 50}, strict_sla: true}
workload: {isl: 4000, osl: 500, num_request_ratio: 10, kv_load_ratio: 0.1}
search_space:
  gpu_budget: 16
  used_gpus: [tp, replicas]
  parameters:
    tp: {values: [1, 2, 4, 8]}
    replicas: {int: [1, 2]}
    max_batch_size: {values: [16, 64, 256, 512]}
evaluator:
  builtin: {model: qwen3-32b-fp8, gpu: h200}
sweep: {algorithm: grid, max_rounds: 8, candidates_per_round: 4, parallel_evals: 2, seed: 1}
";

fn run_builtin(yaml: &str) -> sweeper_engine::RunResult {
    let cfg = sweeper_goal::parse(yaml).unwrap();
    let model =
        BuiltinEvaluator::from_config(&json!({"model": "qwen3-32b-fp8", "gpu": "h200"})).unwrap();
    sweeper_engine::Sweeper::builder(&cfg)
        .evaluator(&model)
        .run()
        .unwrap()
}

#[test]
fn strict_sla_keeps_over_sla_candidates_off_the_front() {
    let strict = run_builtin(STRICT);
    let lax = run_builtin(&STRICT.replace(", strict_sla: true", ""));
    let over = |c: &sweeper_score::Candidate| {
        c.metrics["mean_ttft_ms"] > 2000.0 || c.metrics["mean_itl_ms"] > 50.0
    };
    // without strict_sla the SLA is no gate (SPEC 2 rule 5): the front keeps candidates
    // that miss it; with it, none
    assert!(
        lax.candidates.iter().any(over),
        "the test needs over-SLA points"
    );
    assert!(!strict.candidates.is_empty());
    assert!(!strict.candidates.iter().any(over));
    assert!(!strict.evaluated.iter().any(over));
    // every over-SLA trial is tallied with its reason and told to the sampler as infeasible
    let reasons: Vec<&str> = strict
        .trials
        .iter()
        .filter_map(|t| t.reason.as_deref())
        .filter(|r| r.starts_with("over sla: "))
        .collect();
    assert!(strict.tallies.over_sla > 0);
    assert_eq!(reasons.len() as u64, strict.tallies.over_sla);
    assert_eq!(
        strict.tallies.feasible + strict.tallies.over_sla,
        lax.tallies.feasible
    );
    assert!(
        strict
            .reasons
            .iter()
            .any(|(r, _)| r == "over sla: mean_ttft_ms > ttft_ms=2000"
                || r == "over sla: mean_itl_ms > itl_ms=50"),
        "{:?}",
        strict.reasons
    );
}

/// The built-in model reports percentiles (`p90_ttft_ms`, `p90_itl_ms`,
/// `p90_e2e_latency_ms`, ...), so `strict_sla: {percentile: 90}` ranks its candidates, and
/// holds them to more than the mean does.
#[test]
fn a_percentile_strict_sla_ranks_builtin_candidates() {
    let p90 = run_builtin(&STRICT.replace("strict_sla: true", "strict_sla: {percentile: 90}"));
    assert!(!p90.candidates.is_empty(), "{:?}", p90.reasons);
    let mut within = 0;
    for t in &p90.trials {
        let m = &t.metrics;
        if m.is_empty() {
            continue;
        }
        assert!(m["p50_ttft_ms"] <= m["p90_ttft_ms"] && m["p90_ttft_ms"] <= m["p99_ttft_ms"]);
        assert!(m["p50_itl_ms"] <= m["p90_itl_ms"] && m["p90_itl_ms"] <= m["p99_itl_ms"]);
        if t.reason.is_none() {
            within += 1;
            assert!(
                m["p90_ttft_ms"] <= 2000.0 && m["p90_itl_ms"] <= 50.0,
                "{m:?}"
            );
        } else {
            let reason = t.reason.as_deref().unwrap_or_default();
            assert!(reason.starts_with("over sla: p90_"), "{reason}");
        }
    }
    assert_eq!(within, p90.tallies.feasible);
    assert!(p90.tallies.over_sla > 0, "{:?}", p90.tallies);
    // the tail is held, not the mean: the ITL's tail (prompt chunks interleaved into
    // decode steps) is above its mean for every candidate (TTFT's mean, with the first
    // wave's prompts prefilled one after another, can be above its p90)
    assert!(
        p90.trials
            .iter()
            .filter(|t| !t.metrics.is_empty())
            .all(|t| t.metrics["p90_itl_ms"] > t.metrics["mean_itl_ms"])
    );
}
