//! `sweeper validate`: exit codes, the stdout/stderr split, and the JSON shape.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `sweeper validate ARGS...` from the workspace root.
fn validate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweeper"))
        .arg("validate")
        .args(args)
        .current_dir(workspace())
        .env("NO_COLOR", "1")
        .output()
        .expect("the sweeper binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn write_config(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path.display().to_string()
}

const EXAMPLES: [&str; 4] = [
    "examples/throughput.yaml",
    "examples/goodput-sla.yaml",
    "examples/pareto-kv-range.yaml",
    "examples/pareto-three.yaml",
];

#[test]
fn valid_examples_exit_0_with_the_summary_on_stdout() {
    for example in EXAMPLES {
        let out = validate(&[example]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{example}: {}",
            text(&out.stderr)
        );
        assert!(out.stderr.is_empty(), "{example}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert!(
            stdout.starts_with(&format!("valid: {example}\n")),
            "{stdout}"
        );
        assert!(stdout.contains("objectives"), "{stdout}");
    }
}

#[test]
fn table_output_of_the_pareto_example() {
    let out = validate(&["examples/pareto-kv-range.yaml"]);
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!(text(&out.stdout));
}

#[test]
fn json_output_has_the_documented_shape() {
    let out = validate(&["examples/pareto-three.yaml", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["valid"], true);
    assert_eq!(v["target"], "pareto");
    let objectives: Vec<(String, String)> = v["objectives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["name"].as_str().unwrap().to_owned(),
                o["direction"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        objectives,
        [
            ("goodput_per_gpu".to_owned(), "maximize".to_owned()),
            ("e2e_latency".to_owned(), "minimize".to_owned()),
            ("throughput_per_user".to_owned(), "maximize".to_owned()),
        ]
    );
    assert_eq!(v["sla"], serde_json::json!({"e2e_ms": 20000.0}));
    assert_eq!(
        v["load"],
        serde_json::json!({"kind": "kv_load_range", "min": 0.05, "max": 1.0})
    );
    assert_eq!(v["sampler_metrics"].as_array().unwrap().len(), 3);
    assert_eq!(v["resolved"]["goal"]["target"], "pareto");

    let out = validate(&["examples/throughput.yaml", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["target"], "throughput");
    assert_eq!(
        v["objectives"],
        serde_json::json!([{"name": "throughput", "direction": "maximize", "unit": "tok/s"}])
    );
    assert_eq!(v["sla"], serde_json::Value::Null);
    assert_eq!(
        v["load"],
        serde_json::json!({"kind": "concurrency", "concurrency": 64})
    );
}

#[test]
fn a_pareto_workload_without_load_resolves_to_the_default_range() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "p.yaml",
        "goal: {target: pareto}\nworkload: {isl: 100, osl: 20, num_request_ratio: 4}\n",
    );
    let out = validate(&[&cfg, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["load"],
        serde_json::json!({"kind": "kv_load_range", "min": 0.0, "max": 1.0})
    );
    assert_eq!(v["objectives"][0]["name"], "throughput_per_gpu");
    assert_eq!(v["objectives"][1]["name"], "throughput_per_user");
}

#[test]
fn invalid_config_exits_1_with_nothing_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("goal: {target: goodput}\n", "goal.sla"),
        (
            "workload: {isl: 1, osl: 1, num_request_ratio: 1, concurrency: 1.9}\n",
            "workload.concurrency",
        ),
        (
            "workload: {isl: 1, osl: 1, num_request_ratio: 1, kv_load_ratio: [0.1, 1.0]}\n",
            "workload.kv_load_ratio",
        ),
        ("goal:\n  target: throughput\n  tagret: x\n", "goal.tagret"),
        ("goal: {sla: {e2e_ms: .nan}}\n", "goal.sla.e2e_ms"),
    ];
    for (i, (body, path)) in cases.iter().enumerate() {
        let cfg = write_config(dir.path(), &format!("bad{i}.yaml"), body);
        for format in ["table", "json"] {
            let out = validate(&[&cfg, "--format", format]);
            assert_eq!(out.status.code(), Some(1), "{body}");
            assert!(
                out.stdout.is_empty(),
                "{body}: stdout {}",
                text(&out.stdout)
            );
            let err = text(&out.stderr);
            assert!(err.starts_with("sweeper: error: "), "{err}");
            assert!(err.contains(path), "{body}: {err}");
            assert!(err.contains(&cfg), "{body}: {err}");
        }
    }
}

#[test]
fn yaml_syntax_error_names_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "s.yaml", "goal:\n  target: [x\n");
    let out = validate(&[&cfg]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert!(err.contains("line 3") && err.contains("column"), "{err}");
}

#[test]
fn missing_file_exits_2() {
    let out = validate(&["no/such/config.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert!(
        err.contains("cannot read") && err.contains("no/such/config.yaml"),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let out = validate(&[&dir.path().display().to_string()]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a directory is not readable as a config"
    );
}

#[test]
fn json_input_and_csv_output() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "c.json",
        r#"{"goal": {"target": "e2e_latency"}, "sweep": {"seed": 3}}"#,
    );
    let out = validate(&[&cfg, "--format", "csv"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("key,value\nvalid,true\n"), "{stdout}");
    assert!(
        stdout.contains("objectives,\"e2e_latency (minimize, ms)\""),
        "{stdout}"
    );
}

#[test]
fn every_failing_block_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "multi.yaml",
        "goal: {target: goodput}
search_space: {gpu_budget: 0}
sweep: {algorithm: tpe}
",
    );
    let out = validate(&[&cfg]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    assert!(err.contains("3 errors"), "{err}");
    for path in ["goal.sla", "search_space.gpu_budget", "sweep.algorithm"] {
        assert!(err.contains(path), "{path} missing in {err}");
    }
}

#[test]
fn error_output_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "bad.yaml",
        "goal:\n  target: pareto\n  pareto_objectives: [goodput, throughput_per_user]\n  tagret: x\nworkload: {isl: 10, osl: 10, num_request_ratio: 1, concurrency: [1, 2]}\nsweep: {max_eval_seconds: .inf}\n",
    );
    let out = validate(&[&cfg]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr).replace(&cfg, "[CONFIG]");
    insta::assert_snapshot!(err);

    let cfg = write_config(
        dir.path(),
        "multi.yaml",
        "goal: {target: goodput, sla: {ttft_ms: 100}}\nworkload: {isl: 10, osl: 10, num_request_ratio: 1, concurrency: 1.9}\nsearch_space: {used_gpus: [tp], parameters: {tp: {values: [0.5, 1]}}}\nsweep: {algorithm: bayes}\n",
    );
    let out = validate(&[&cfg]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr).replace(&cfg, "[CONFIG]");
    insta::assert_snapshot!("multi_error_output", err);
}

#[test]
fn validate_refuses_what_run_would_refuse_before_its_first_trial() {
    let dir = tempfile::tempdir().unwrap();
    for (body, why) in [
        (
            "evaluator: {builtin: {model: nope}}\n",
            "unknown model preset `nope`",
        ),
        (
            "evaluator: {builtin: {model: qwen3-32b-fp8, gpu: h200, bogus: 1}}\n",
            "evaluator.builtin.bogus: unknown key",
        ),
        (
            "search_space: {parameters: {x: {int: [1, 1e18]}}}\n",
            "search_space.parameters.x",
        ),
        (
            "evaluator: {command: [no-such-program-anywhere]}\n",
            "was not found in any directory of PATH",
        ),
    ] {
        let path = write_config(dir.path(), "c.yaml", body);
        let out = validate(&[&path]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{body}: {stderr}");
        assert!(stderr.contains(why), "{body}: {stderr}");
        assert!(out.stdout.is_empty(), "{body}");
    }
}

#[test]
fn one_pass_names_a_misspelt_target_a_misspelt_workload_key_and_an_unknown_gpu() {
    // Issue 36 item 5: three mistakes in three blocks, one a structure error (an unknown
    // key) and one only the evaluator's run-time check finds, all in one run.
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "three.yaml",
        "goal:\n  target: paretto\nworkload:\n  isl: 4000\n  osll: 500\n  num_request_ratio: 10\n  kv_load_ratio: [0.05, 1.0]\nsearch_space:\n  gpu_budget: 16\n  used_gpus: [tp]\n  parameters:\n    tp: {values: [1, 2, 4, 8]}\nevaluator:\n  builtin: {model: qwen3-32b-fp8, gpu: h2000}\n",
    );
    let out = validate(&[&cfg]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr).replace(&cfg, "[CONFIG]");
    assert_eq!(
        err,
        "sweeper: error: [CONFIG]: invalid config, 3 errors:\n  goal.target: unknown target \"paretto\"; did you mean `pareto`? expected one of throughput, throughput_per_gpu, throughput_per_user, e2e_latency, goodput, goodput_per_gpu, ttft, min_gpus, cost_per_mtok, pareto\n  workload.osll: unknown key `osll` (line 5, column 3); did you mean `osl`? expected `trace_path`, `replay_concurrency`, `isl`, `osl`, `num_request_ratio`, `request_rate`, `concurrency`, `kv_load_ratio`\n  evaluator.builtin.gpu: unknown gpu preset `h2000` (known: b200, b300, gb200, h100, h200, mi355x)\n"
    );
}

#[test]
fn the_built_in_model_refuses_to_search_what_it_does_not_read() {
    // Issue 36 item 3: `router` and `temperature` change nothing the model computes; a
    // constant (`backend`) is a label and passes.
    let dir = tempfile::tempdir().unwrap();
    let body = |ignore: &str| {
        format!(
            "goal: {{target: pareto}}\nworkload: {{isl: 1000, osl: 100, num_request_ratio: 2, kv_load_ratio: [0.1, 1.0]}}\nsearch_space:\n  gpu_budget: 8\n  used_gpus: [tp]\n  parameters:\n    tp: {{values: [1, 2]}}\n    router: {{choices: [round_robin, kv_aware]}}\n    temperature: {{float: [0.0, 1.0]}}\n    backend: {{choices: [trtllm]}}\nevaluator:\n  builtin: {{model: qwen3-32b-fp8, gpu: h200{ignore}}}\nsweep: {{max_rounds: 1, candidates_per_round: 2, parallel_evals: 2}}\n"
        )
    };
    let cfg = write_config(dir.path(), "noise.yaml", &body(""));
    let out = validate(&[&cfg]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr).replace(&cfg, "[CONFIG]");
    assert_eq!(
        err,
        "sweeper: error: [CONFIG]: invalid config: search_space.parameters: the built-in model does not read the searched parameters `router`, `temperature`, so they would only add noise to the front; remove them, or list them in evaluator.builtin.ignore to sweep them as labels (the model reads deployment_mode, backend, agg_max_batch_size, concurrency, kv_load_ratio, request_rate, tp, attention_dp, moe_ep, moe_tp, pp, replicas, max_batch_size and the same prefixed prefill_ or decode_)\n"
    );
    // `sweeper run` refuses it before its first trial, the same way
    let run = Command::new(env!("CARGO_BIN_EXE_sweeper"))
        .args(["run", &cfg, "--out"])
        .arg(dir.path().join("o"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert!(
        text(&run.stderr).contains("does not read the searched parameters `router`, `temperature`"),
        "{}",
        text(&run.stderr)
    );
    assert!(!dir.path().join("o/journal.jsonl").exists());
    // one named under `ignore`, one left: the message names the one left
    let cfg = write_config(dir.path(), "one.yaml", &body(", ignore: [router]"));
    let err = text(&validate(&[&cfg]).stderr);
    assert!(
        err.contains(
            "does not read the searched parameter `temperature`, so it would only add noise"
        ),
        "{err}"
    );
    // both listed: valid
    let cfg = write_config(
        dir.path(),
        "labels.yaml",
        &body(", ignore: [router, temperature]"),
    );
    let out = validate(&[&cfg]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}
