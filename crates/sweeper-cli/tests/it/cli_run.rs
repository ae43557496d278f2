//! `sweeper run`, `sweeper evaluate` and `sweeper plot` end to end with a script evaluator.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sweeper(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweeper"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run sweeper")
}

fn toy_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/evaluators/toy_serving.py")
}

fn write_config(dir: &Path, goal: &str, extra_sweep: &str) -> PathBuf {
    let yaml = format!(
        "goal: {goal}
workload: {{isl: 1000, osl: 200, num_request_ratio: 2, concurrency: 16}}
search_space:
  gpu_budget: 16
  used_gpus: [tp, replicas]
  parameters:
    tp: {{values: [1, 2, 4, 8]}}
    replicas: {{int: [1, 4]}}
evaluator:
  command: [python3, {script}]
sweep: {{max_rounds: 3, candidates_per_round: 4, parallel_evals: 2, seed: 5{extra_sweep}}}
",
        script = toy_script().display()
    );
    let path = dir.join("toy.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

#[test]
fn run_with_a_command_evaluator_prints_the_front_and_writes_the_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "{target: pareto}", "");
    let out = sweeper(
        &[
            "run",
            cfg.to_str().unwrap(),
            "--out",
            "o",
            "--format",
            "json",
            "--no-progress",
        ],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let front: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let front = front.as_array().unwrap();
    assert!(!front.is_empty());
    for c in front {
        assert!(c["objectives"]["throughput_per_gpu"].is_number(), "{c}");
        assert!(c["used_gpus"].as_f64().unwrap() <= 16.0);
        assert_ne!(c["config"]["tp"], 8, "an unsupported config on the front");
    }
    assert!(stderr.contains("feasible"), "no summary line: {stderr}");
    for f in [
        "journal.jsonl",
        "result.json",
        "result.csv",
        "trials.csv",
        "front.svg",
        "config.yaml",
    ] {
        assert!(dir.path().join("o").join(f).is_file(), "{f} missing");
    }
    // the plot can be redrawn from the result and from the journal
    let out = sweeper(&["plot", "o", "--out", "again.svg"], dir.path());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_to_string(dir.path().join("again.svg"))
            .unwrap()
            .contains("<svg")
    );
    let out = sweeper(
        &["plot", "o/journal.jsonl", "--out", "live.svg"],
        dir.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn run_table_output_and_summary_name_the_failure_reasons() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(
        dir.path(),
        "{target: throughput_per_gpu}",
        ", algorithm: random",
    );
    let out = sweeper(
        &["run", cfg.to_str().unwrap(), "--out", "o", "--no-progress"],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert!(stdout.starts_with("rank"), "{stdout}");
    assert!(stdout.contains("throughput_per_gpu"), "{stdout}");
    assert!(!stdout.contains("sweeper:"), "diagnostics leaked to stdout");
    assert!(stderr.contains("top reasons"), "{stderr}");
}

#[test]
fn no_feasible_candidate_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "{target: throughput}", "");
    // the GPU count comes from the reports (tp × replicas >= 2), over a budget of 1
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("gpu_budget: 16", "gpu_budget: 1")
        .replace("  used_gpus: [tp, replicas]\n", "")
        .replace("values: [1, 2, 4, 8]", "values: [2, 4]");
    std::fs::write(&cfg, text).unwrap();
    let out = sweeper(
        &["run", cfg.to_str().unwrap(), "--out", "o", "--no-progress"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no candidate was feasible"));
}

#[test]
fn resume_continues_from_the_output_directory() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "{target: pareto}", "");
    let first = sweeper(
        &[
            "run",
            cfg.to_str().unwrap(),
            "--out",
            "o",
            "--format",
            "csv",
            "--no-progress",
        ],
        dir.path(),
    );
    assert_eq!(first.status.code(), Some(0));
    // drop the last outcomes, as a kill would, and resume
    let journal = dir.path().join("o/journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let keep: Vec<&str> = text.lines().take(text.lines().count() * 2 / 3).collect();
    std::fs::write(&journal, keep.join("\n") + "\n").unwrap();
    let again = sweeper(
        &["run", "--resume", "o", "--format", "csv", "--no-progress"],
        dir.path(),
    );
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(first.stdout, again.stdout);
}

#[test]
fn evaluate_prints_the_request_report_and_candidate() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "{target: goodput, sla: {e2e_ms: 20000}}", "");
    let out = sweeper(
        &[
            "evaluate",
            cfg.to_str().unwrap(),
            "--candidate",
            r#"{"tp": 2, "replicas": 2}"#,
        ],
        dir.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "feasible");
    assert_eq!(v["request"]["used_gpus"], 4);
    assert_eq!(v["request"]["concurrency"], 16);
    assert_eq!(v["request"]["planner_target"], "sla");
    assert_eq!(v["request"]["sla"]["e2e_ms"], 20000.0);
    assert!(v["report"]["output_throughput_tok_s"].is_number());
    let out = sweeper(
        &[
            "evaluate",
            cfg.to_str().unwrap(),
            "--candidate",
            r#"{"tp": 8, "replicas": 1}"#,
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "unsupported");
}

#[test]
fn run_says_once_how_many_lines_a_persistent_worker_printed_out_of_turn() {
    let dir = tempfile::tempdir().unwrap();
    // Before each answer the worker repeats its previous one, which names the previous
    // candidate's id: every such line is dropped, and the summary says so once.
    let worker = dir.path().join("behind.py");
    std::fs::write(
        &worker,
        "import json, sys\n\
         previous = None\n\
         for line in sys.stdin:\n\
         \x20   c = json.loads(line)\n\
         \x20   p = c['parameters']\n\
         \x20   answer = {'id': c['id'], 'output_throughput_tok_s': 100.0 * p['tp'] + p['replicas'],\n\
         \x20             'mean_output_token_throughput_per_user': 50.0 / p['tp']}\n\
         \x20   if previous is not None:\n\
         \x20       print(json.dumps(previous), flush=True)\n\
         \x20   print(json.dumps(answer), flush=True)\n\
         \x20   previous = answer\n",
    )
    .unwrap();
    let yaml = format!(
        "goal: {{target: pareto}}
search_space:
  gpu_budget: 16
  used_gpus: [tp, replicas]
  parameters:
    tp: {{values: [1, 2, 4, 8]}}
    replicas: {{int: [1, 4]}}
evaluator:
  command: [python3, {}]
  persistent: true
sweep: {{max_rounds: 2, candidates_per_round: 3, parallel_evals: 1, seed: 5}}
",
        worker.display()
    );
    std::fs::write(dir.path().join("behind.yaml"), yaml).unwrap();
    let out = sweeper(
        &["run", "behind.yaml", "--out", "o", "--no-progress"],
        dir.path(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let notes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("sweeper: note: persistent worker"))
        .collect();
    assert_eq!(notes.len(), 1, "one note for the one worker: {stderr}");
    let journal = std::fs::read_to_string(dir.path().join("o/journal.jsonl")).unwrap();
    let sent = journal.matches("\"feasible\"").count();
    assert!(sent >= 2, "{journal}");
    assert!(
        notes[0].contains(&format!("worker 0 printed {} stdout lines", sent - 1)),
        "every candidate after the first had one line repeated: {}",
        notes[0]
    );
    let results = std::fs::read_to_string(dir.path().join("o/result.json")).unwrap();
    assert!(
        !results.contains("\"id\""),
        "the protocol's id is no metric"
    );
}
