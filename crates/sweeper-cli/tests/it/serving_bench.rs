//! The worked benchmark evaluator of docs/large-sweeps.md (`examples/serving-bench/bench.py`,
//! issue 36 item 8) against a fake server: it starts the server on a free port, waits for
//! its health check, benchmarks it, stops it, and sweeper scores its report.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/serving-bench")
        .join(name)
}

fn config(dir: &Path, server: &str) -> PathBuf {
    let yaml = format!(
        "goal: {{target: pareto}}
workload: {{isl: 100, osl: 50, num_request_ratio: 2, concurrency: 16}}
search_space:
  gpu_budget: 8
  used_gpus: [tp]
  parameters:
    tp: {{values: [1, 2]}}
evaluator:
  command: [python3, {bench}, --model, fake, --stop-grace, '5',
            --server-cmd, '{server}',
            --bench-cmd, 'python3 {fake_bench} --port {{port}} --concurrency {{concurrency}} --result {{result}}']
",
        bench = example("bench.py").display(),
        fake_bench = example("fake_bench.py").display(),
    );
    let path = dir.join("bench.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

fn evaluate(dir: &Path, cfg: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweeper"))
        .args([
            "evaluate",
            cfg.to_str().unwrap(),
            "--candidate",
            r#"{"tp": 2}"#,
        ])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn bench_py_starts_checks_benchmarks_and_stops_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = format!(
        "python3 {} --port {{port}} --warmup 1.5",
        example("fake_server.py").display()
    );
    let out = evaluate(dir.path(), &config(dir.path(), &server));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "feasible", "{v}");
    let report = &v["report"];
    assert_eq!(report["output_throughput_tok_s"], 640.0, "{v}");
    assert_eq!(report["mean_ttft_ms"], 66.0);
    // tok/s/user from TPOT; GPU-hours from the candidate's GPUs and the run's duration
    assert_eq!(
        report["mean_output_token_throughput_per_user"],
        1000.0 / 24.0
    );
    assert_eq!(report["gpu_hours"], 2.0 * 60.0 / 3600.0);
    // the server was started, found healthy and stopped (its log says so)
    let log = std::fs::read_to_string(dir.path().join("server.log")).unwrap();
    assert!(log.contains("fake server up on"), "{log}");
    assert!(log.contains("fake server stopped"), "{log}");
}

#[test]
fn a_server_that_dies_of_oom_at_start_is_an_infeasible_candidate() {
    let dir = tempfile::tempdir().unwrap();
    let server = format!(
        "python3 {} --port {{port}} --fail",
        example("fake_server.py").display()
    );
    let out = evaluate(dir.path(), &config(dir.path(), &server));
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "infeasible", "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("out of memory"),
        "{v}"
    );
}
