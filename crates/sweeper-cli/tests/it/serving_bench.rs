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
    config_with(dir, server, "tp: {values: [1, 2]}", "", "")
}

/// The test config with other `parameters`, more arguments for bench.py and a `sweep` block.
fn config_with(dir: &Path, server: &str, parameters: &str, args: &str, sweep: &str) -> PathBuf {
    let yaml = format!(
        "goal: {{target: pareto}}
workload: {{isl: 100, osl: 50, num_request_ratio: 2, concurrency: 16}}
search_space:
  gpu_budget: 8
  used_gpus: [tp]
  parameters: {{{parameters}}}
evaluator:
  command: [python3, {bench}, --model, fake, --stop-grace, '5',{args}
            --server-cmd, '{server}',
            --bench-cmd, 'python3 {fake_bench} --port {{port}} --concurrency {{concurrency}} --result {{result}}']
{sweep}",
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
    // the server was started, found healthy and stopped (its log, named after the trial, says so)
    let log = std::fs::read_to_string(dir.path().join("server-trial-0.log")).unwrap();
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

/// Evaluations that run at once (jobs sharing a node, or a shared working directory) each
/// keep their server's log: one file per trial, never one file that every server truncates.
#[test]
fn servers_started_at_once_each_keep_their_own_log() {
    let dir = tempfile::tempdir().unwrap();
    let server = format!(
        "python3 {} --port {{port}} --warmup 1.5",
        example("fake_server.py").display()
    );
    let cfg = config_with(
        dir.path(),
        &server,
        "tp: {values: [1, 2, 4, 8]}",
        "",
        "sweep: {algorithm: grid, parallel_evals: 4, max_rounds: 1, candidates_per_round: 4}\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_sweeper"))
        .args(["run", cfg.to_str().unwrap(), "-q", "--format", "json"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut ports = Vec::new();
    for trial in 0..4 {
        let path = dir.path().join(format!("server-trial-{trial}.log"));
        let log =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let lines: Vec<&str> = log.lines().collect();
        assert_eq!(lines.len(), 2, "{}: {log}", path.display());
        let port = lines[0].strip_prefix("fake server up on ").unwrap();
        assert_eq!(lines[1], "fake server stopped");
        ports.push(port.to_owned());
    }
    ports.sort();
    ports.dedup();
    assert_eq!(
        ports.len(),
        4,
        "each server had a port of its own: {ports:?}"
    );
    assert!(!dir.path().join("server.log").exists());
}

/// A parameter the server command does not read fails the candidate, naming it (as the
/// adapters do), unless `--ignore` lets it pass as a label.
#[test]
fn a_parameter_bench_py_does_not_map_fails_the_candidate_unless_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let server = format!(
        "python3 {} --port {{port}} --warmup 0.2",
        example("fake_server.py").display()
    );
    let params = "tp: {values: [1, 2]}, router: {choices: [round_robin, kv_aware]}";
    let candidate = r#"{"tp": 2, "router": "kv_aware"}"#;
    let run = |cfg: &Path| {
        Command::new(env!("CARGO_BIN_EXE_sweeper"))
            .args(["evaluate", cfg.to_str().unwrap(), "--candidate", candidate])
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = run(&config_with(dir.path(), &server, params, "", ""));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "failed", "{v}");
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.contains("router are not mapped to the server") && reason.contains("--ignore NAME"),
        "{reason}"
    );
    assert!(
        !dir.path().join("server-trial-0.log").exists(),
        "no server was started"
    );

    let out = run(&config_with(
        dir.path(),
        &server,
        params,
        " --ignore, router,",
        "",
    ));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "feasible", "{v}");
}

/// The sweep the docs hand a cluster user, `examples/serving-bench/bench.yaml`, validates as
/// written from the repository root (with an `sbatch` on PATH, as on a login node).
#[test]
fn the_shipped_bench_sweep_validates() {
    let bin = tempfile::tempdir().unwrap();
    let sbatch = bin.path().join("sbatch");
    std::fs::write(&sbatch, "#!/bin/sh\nexit 1\n").unwrap();
    let mut perms = std::fs::metadata(&sbatch).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&sbatch, perms).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_sweeper"))
        .args(["validate", "examples/serving-bench/bench.yaml"])
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("target           pareto"), "{stdout}");
    assert!(
        stdout.contains("load             concurrency [8..128] (searched)"),
        "{stdout}"
    );
    // the jobs go to Slurm, with the options sweeper gives sbatch
    assert!(
        stdout.contains(
            "\n  slurm            one batch job per evaluation partition=gpu time_limit=01:00:00 gpus_per_node=8 gpu_flag=gpus poll_seconds=5\n"
        ),
        "{stdout}"
    );
}

/// `validate` shows a Slurm evaluator's block, and the time limit a job gets when the
/// config leaves it to `max_eval_seconds` (plus a minute, in whole minutes).
#[test]
fn validate_shows_the_slurm_block_and_the_derived_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let sbatch = dir.path().join("sbatch");
    std::fs::write(&sbatch, "#!/bin/sh\nexit 1\n").unwrap();
    let mut perms = std::fs::metadata(&sbatch).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&sbatch, perms).unwrap();
    std::fs::write(
        dir.path().join("s.yaml"),
        "workload: {isl: 100, osl: 50, num_request_ratio: 2, concurrency: 16}
search_space:
  gpu_budget: 16
  used_gpus: [tp]
  parameters: {tp: {values: [1, 16]}}
evaluator:
  command: [python3, bench.py]
  slurm: {account: lab, gpu_flag: gres, gpu_type: h100, sbatch_args: [--exclusive]}
sweep: {max_eval_seconds: 3000}
",
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(env!("CARGO_BIN_EXE_sweeper"))
        .args(["validate", "s.yaml"])
        .current_dir(dir.path())
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "\n  slurm            one batch job per evaluation account=lab gpu_type=h100 time_limit=00:51:00 (max_eval_seconds plus a minute) gpu_flag=gres sbatch_args=[--exclusive] poll_seconds=5\n"
        ),
        "{stdout}"
    );
}
