//! A `min_gpus` goal over a topology (issue 34): the floor algorithm's branch studies are
//! told at once what a candidate already measured scored, instead of handing out a trial
//! that the run's cache would answer, so no trial repeats a deployment measured in an
//! earlier round; and a sweep extended by `--resume` reaches the same trials as one run
//! straight through.

use crate::common::{sweeper_in, text};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// The problem of `crates/sweeper-sampler/bench/min_gpus_moe.yaml` (Qwen3-235B-A22B FP8 on
/// H200, both modes, 2,456 deployments) under the default algorithm, `max_trials` trials.
fn config(max_trials: u32) -> String {
    format!(
        "goal: {{target: min_gpus, min_goodput_rps: 19, sla: {{ttft_ms: 600, itl_ms: 30}}}}
workload: {{isl: 4000, osl: 1000, num_request_ratio: 10, request_rate: 20}}
search_space:
  gpu_budget: 32
  topology:
    model: qwen3-235b-a22b-fp8
    gpu: h200
    deployment_mode: [agg, disagg]
    backend: [vllm]
    context_length: 8192
evaluator: {{builtin: {{model: qwen3-235b-a22b-fp8, gpu: h200}}}}
sweep: {{max_rounds: 1000, max_trials: {max_trials}, candidates_per_round: 4, parallel_evals: 1, seed: 1}}
"
    )
}

fn run(dir: &Path, max_trials: u32, args: &[&str]) -> Value {
    std::fs::write(dir.join("c.yaml"), config(max_trials)).unwrap();
    let mut all = vec!["run", "c.yaml", "--no-progress"];
    all.extend_from_slice(args);
    let out = sweeper_in(&all, dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out_dir = args
        .windows(2)
        .find(|w| w[0] == "--out" || w[0] == "--resume")
        .map(|w| w[1])
        .unwrap();
    serde_json::from_slice(&std::fs::read(dir.join(out_dir).join("result.json")).unwrap()).unwrap()
}

/// Each trial's status and configuration.
fn trials(result: &Value) -> Vec<(String, String)> {
    result["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["status"].to_string(), t["config"].to_string()))
        .collect()
}

/// The trials that repeat a configuration measured in an earlier round (`trial: N`), from
/// the sweep's journal (a repeat within one round, of a trial still running, can remain).
fn repeats(dir: &Path) -> Vec<String> {
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    let mut seen: Vec<(u64, String)> = Vec::new();
    let mut out = Vec::new();
    for line in journal.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["kind"] != "suggest" {
            continue;
        }
        let (batch, params) = (v["batch"].as_u64().unwrap(), v["parameters"].to_string());
        if seen.iter().any(|(b, p)| *b < batch && *p == params) {
            out.push(format!("trial {}: {params}", v["trial"]));
        }
        seen.push((batch, params));
    }
    out
}

#[test]
fn a_min_gpus_topology_sweep_never_repeats_a_deployment_measured_in_an_earlier_round() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let result = run(d, 40, &["--out", "straight"]);
    let trials = trials(&result);
    assert_eq!(trials.len(), 40);
    // before: trials 28, 30, 36, ... repeated deployments measured rounds earlier (5 cache
    // hits in 40 trials)
    assert_eq!(repeats(&d.join("straight")), Vec::<String>::new());
    let hits = trials.iter().filter(|t| t.0 == "\"cache_hit\"").count();
    assert!(hits <= 1, "{hits} cache hits");
    let distinct: BTreeSet<&String> = trials.iter().map(|t| &t.1).collect();
    assert!(distinct.len() >= 39, "{}", distinct.len());
    // extended from 20 to 40 trials by --resume: the same trials as straight through
    run(d, 20, &["--out", "extended"]);
    let extended = run(d, 40, &["--resume", "extended"]);
    assert_eq!(self::trials(&extended), trials);
}
