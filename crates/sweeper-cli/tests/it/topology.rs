//! Topology sweeps end to end (SPEC 8): `validate` prints the pool per mode and backend,
//! an empty pool is refused with its reason, and a MoE sweep over both modes with an
//! external evaluator runs, resumes after kill -9, and plots.

use crate::common::{sweeper_cmd, sweeper_in as sweeper, text};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/evaluators/topology.py")
}

fn write_config(dir: &Path, topology: &str, sweep: &str) -> PathBuf {
    let yaml = format!(
        "goal: {{target: pareto}}
workload: {{isl: 2000, osl: 500, num_request_ratio: 2, concurrency: 16}}
search_space:
  gpu_budget: 16
  topology: {{{topology}}}
  parameters:
    max_batch_size: {{values: [64, 256]}}
    agg_max_num_seqs: {{values: [128, 512]}}
    decode_max_num_seqs: {{values: [64, 256]}}
evaluator:
  command: [python3, {script}]
  env: {{COUNT_LOG: {log}, EVAL_SLEEP: '0.05'}}
sweep: {{{sweep}}}
",
        script = script().display(),
        log = dir.join("count.log").display(),
    );
    let path = dir.join("c.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

#[test]
fn validate_prints_the_pool_per_mode_and_backend() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "model: qwen3-30b-a3b-fp8, gpu: h200, backend: [vllm, trtllm]",
        "max_trials: 8",
    );
    let out = sweeper(&["validate", cfg.to_str().unwrap()], dir.path());
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // agg within 16 GPUs: 1 GPU × 16; 2 GPUs TEP, DEP, TP, DTP × 8; 4, 8, 16 GPUs TEP, DEP
    // × 4, 2, 1 (expert TP 4 and up cuts the 768-wide experts' FP8 blocks)
    assert!(stdout.contains("agg vllm: 62 deployments"), "{stdout}");
    assert!(stdout.contains("agg trtllm: 62 deployments"), "{stdout}");
    assert!(stdout.contains("disagg vllm: "), "{stdout}");
    assert!(
        stdout.contains("note: trtllm is not searched in disagg"),
        "{stdout}"
    );
    assert!(stdout.contains("derived from each deployment"), "{stdout}");
    let json = sweeper(
        &["validate", cfg.to_str().unwrap(), "--format", "json"],
        dir.path(),
    );
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    let counts = v["pool"]["by_mode_and_backend"].as_array().unwrap();
    assert_eq!(counts.len(), 3, "{v}");
    assert_eq!(v["pool"]["context_length"], 2500);
}

#[test]
fn an_empty_pool_and_a_used_gpus_beside_a_topology_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "model: deepseek-r1-fp8, gpu: h100, gpus_per_worker: [1, 2, 4, 8]",
        "max_trials: 8",
    );
    let out = sweeper(&["validate", cfg.to_str().unwrap()], dir.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("deepseek-r1-fp8 does not fit on h100 within gpu_budget 16"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    let text_cfg = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("gpu_budget: 16", "gpu_budget: 16\n  used_gpus: 8")
        .replace("deepseek-r1-fp8, gpu: h100", "qwen3-30b-a3b-fp8, gpu: h200");
    std::fs::write(&cfg, text_cfg).unwrap();
    let out = sweeper(&["validate", cfg.to_str().unwrap()], dir.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("search_space.used_gpus: with a topology"),
        "{stderr}"
    );
}

fn trials(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("result.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["trials"].as_array().unwrap().clone()
}

#[test]
fn a_moe_sweep_over_both_modes_resumes_after_kill_nine_and_plots() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "model: qwen3-30b-a3b-fp8, gpu: h200",
        "max_trials: 24, candidates_per_round: 4, parallel_evals: 2, seed: 3",
    );
    let cfg = cfg.to_str().unwrap();
    let mut child = sweeper_cmd(&["run", cfg, "--out", "o", "--no-progress"], dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let log = dir.path().join("count.log");
    let give_up = Instant::now() + Duration::from_mins(1);
    while std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .count()
        < 6
    {
        assert!(Instant::now() < give_up, "the sweep never got going");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "finished before the kill"
    );
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
    let resumed = sweeper(&["run", cfg, "--resume", "o", "--no-progress"], dir.path());
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    let out = dir.path().join("o");
    let trials = trials(&out);
    assert!(trials.len() >= 20, "{}", trials.len());
    let mut modes = BTreeSet::new();
    for t in &trials {
        assert_ne!(
            t["status"], "failed",
            "an illegal candidate reached the evaluator: {t}"
        );
        let c = &t["config"];
        assert!(c["used_gpus"].as_u64().unwrap() <= 16, "{t}");
        modes.insert(c["deployment_mode"].as_str().unwrap().to_owned());
        assert!(
            c.as_object()
                .unwrap()
                .keys()
                .all(|k| !k.starts_with("topology_")),
            "{t}"
        );
    }
    assert_eq!(
        modes.into_iter().collect::<Vec<_>>(),
        ["agg", "disagg"],
        "both branches searched"
    );
    let csv = std::fs::read_to_string(out.join("trials.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    for column in [
        "deployment_mode",
        "backend",
        "strategy",
        "decode_moe_ep",
        "tp",
    ] {
        assert!(header.split(',').any(|h| h.contains(column)), "{header}");
    }
    let plot = sweeper(
        &["plot", out.to_str().unwrap(), "--out", "front.svg"],
        dir.path(),
    );
    assert_eq!(plot.status.code(), Some(0), "{}", text(&plot.stderr));
    let svg = std::fs::read_to_string(dir.path().join("front.svg")).unwrap();
    assert!(
        svg.contains("deployment_mode"),
        "tooltips name the flat keys"
    );
}

#[test]
fn evaluate_asks_a_topology_candidate_only_for_its_own_branch_knobs() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.yaml");
    std::fs::write(
        &cfg,
        "workload: {isl: 2000, osl: 500, num_request_ratio: 2, concurrency: 4}
search_space:
  gpu_budget: 16
  topology: {model: qwen3-30b-a3b-fp8, gpu: h200}
  parameters:
    agg_max_batch_size: {values: [64, 256]}
    decode_max_batch_size: {values: [64, 256]}
evaluator:
  builtin: {model: qwen3-30b-a3b-fp8, gpu: h200}
",
    )
    .unwrap();
    let cfg = cfg.to_str().unwrap();
    let agg = r#"{"deployment_mode": "agg", "tp": 2, "agg_max_batch_size": 64}"#;
    let disagg = r#"{"deployment_mode": "disagg", "prefill_tp": 1, "decode_tp": 2, "decode_max_batch_size": 64}"#;
    for (candidate, other) in [
        (agg, "decode_max_batch_size"),
        (disagg, "agg_max_batch_size"),
    ] {
        let out = sweeper(&["evaluate", cfg, "--candidate", candidate], dir.path());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{candidate}: {stderr}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["status"], "feasible", "{v}");
        assert!(v["request"]["parameters"].get(other).is_none(), "{v}");
    }
    // a knob of its own branch is still asked for
    let out = sweeper(
        &[
            "evaluate",
            cfg,
            "--candidate",
            r#"{"deployment_mode": "agg", "tp": 2}"#,
        ],
        dir.path(),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no value for parameter `agg_max_batch_size`"),
        "{stderr}"
    );
}
