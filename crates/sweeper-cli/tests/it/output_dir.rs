//! The output directory of `sweeper run` (issue 36 item 6): `--force` moves an earlier
//! sweep aside (never deletes its journal) and says where; Ctrl-C leaves the result of the
//! trials that finished beside the journal.

use crate::common::{sweeper_cmd, sweeper_in as sweeper, text};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A small built-in sweep (a second or so in a debug build).
const BUILTIN: &str = "goal: {target: pareto}
workload: {isl: 1000, osl: 200, num_request_ratio: 2, kv_load_ratio: [0.1, 1.0]}
search_space:
  gpu_budget: 8
  used_gpus: [tp]
  parameters:
    tp: {values: [1, 2, 4, 8]}
evaluator:
  builtin: {model: qwen3-32b-fp8, gpu: h200}
sweep: {max_rounds: 2, candidates_per_round: 4, parallel_evals: 2, seed: 3}
";

#[test]
fn force_moves_the_earlier_sweep_aside_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(dir.join("q.yaml"), BUILTIN).unwrap();
    let first = sweeper(&["run", "q.yaml", "--no-progress"], dir);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let journal = std::fs::read(dir.join("sweeper-out/q/journal.jsonl")).unwrap();
    // the same command again is refused, and the refusal names the way on
    let again = sweeper(&["run", "q.yaml", "--no-progress"], dir);
    let stderr = text(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("start over with --force"), "{stderr}");
    // --force: the old directory is moved, whole, and the new sweep runs
    let forced = sweeper(&["run", "q.yaml", "--no-progress", "--force"], dir);
    let stderr = text(&forced.stderr);
    assert_eq!(forced.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.starts_with(
            "sweeper: --force: moved the earlier sweep in sweeper-out/q to sweeper-out/q.old (its journal is kept there)\n"
        ),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(dir.join("sweeper-out/q.old/journal.jsonl")).unwrap(),
        journal
    );
    assert!(dir.join("sweeper-out/q/journal.jsonl").is_file());
    assert!(dir.join("sweeper-out/q/result.json").is_file());
    // a second --force finds the next free name
    let forced = sweeper(&["run", "q.yaml", "--no-progress", "--force"], dir);
    let stderr = text(&forced.stderr);
    assert_eq!(forced.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("to sweeper-out/q.old-2 "), "{stderr}");
    assert!(dir.join("sweeper-out/q.old/journal.jsonl").is_file());
    assert!(dir.join("sweeper-out/q.old-2/journal.jsonl").is_file());
    // --force with nothing to move aside is a plain run
    let fresh = sweeper(
        &["run", "q.yaml", "--no-progress", "--force", "--out", "n"],
        dir,
    );
    assert_eq!(fresh.status.code(), Some(0), "{}", text(&fresh.stderr));
    assert!(!text(&fresh.stderr).contains("moved"));
    // --force and --resume contradict each other
    let both = sweeper(&["run", "--resume", "n", "--force"], dir);
    assert_eq!(both.status.code(), Some(2), "{}", text(&both.stderr));
}

#[test]
fn force_does_not_move_the_directory_of_a_running_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let cfg = slow_config(dir, 0.5);
    let mut running = sweeper_cmd(&["run", &cfg, "--out", "o", "--no-progress"], dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&dir.join("count.log"));
    let forced = sweeper(
        &["run", &cfg, "--out", "o", "--no-progress", "--force"],
        dir,
    );
    let _ = running.kill();
    let _ = running.wait();
    let stderr = text(&forced.stderr);
    assert_eq!(forced.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("still running; --force does not move it"),
        "{stderr}"
    );
    assert!(dir.join("o/journal.jsonl").is_file());
    assert!(!dir.join("o.old").exists());
}

/// A sweep of the counting evaluator, each evaluation `sleep` seconds.
fn slow_config(dir: &Path, sleep: f64) -> String {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/evaluators/counting.py");
    let yaml = format!(
        "goal: {{target: pareto}}
workload: {{isl: 100, osl: 100, num_request_ratio: 2, kv_load_ratio: [0.05, 1.0]}}
search_space:
  gpu_budget: 8
  used_gpus: [tp, replicas]
  parameters:
    tp: {{values: [1, 2, 4]}}
    replicas: {{int: [1, 4]}}
evaluator:
  command: [python3, {script}]
  env: {{COUNT_LOG: {log}, EVAL_SLEEP: '{sleep}'}}
sweep: {{max_rounds: 10, candidates_per_round: 2, parallel_evals: 2, seed: 11, algorithm: random}}
",
        script = script.display(),
        log = dir.join("count.log").display(),
    );
    std::fs::write(dir.join("c.yaml"), yaml).unwrap();
    "c.yaml".to_owned()
}

fn wait_for(path: &Path) {
    let give_up = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(
            Instant::now() < give_up,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The trial ids of the journal's outcome lines.
fn journaled(journal: &Path) -> Vec<u64> {
    std::fs::read_to_string(journal)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["kind"] == "outcome")
        .map(|v| v["trial"].as_u64().unwrap())
        .collect()
}

#[test]
fn ctrl_c_writes_the_result_of_the_finished_trials() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let cfg = slow_config(dir, 0.3);
    let child = sweeper_cmd(&["run", &cfg, "--out", "o", "--no-progress"], dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // interrupt once the first round has finished and the second runs
    let journal = dir.join("o/journal.jsonl");
    let give_up = Instant::now() + Duration::from_secs(30);
    while !journal.exists() || journaled(&journal).len() < 2 {
        assert!(Instant::now() < give_up, "no trial finished");
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let finished = journaled(&journal);
    assert!(finished.len() < 20, "the sweep ended before the interrupt");
    let n = finished.len();
    // off a terminal no empty line stands before it (the newline past a `^C` is a
    // terminal's): every line of stderr is a diagnostic
    assert!(
        stderr.lines().all(|l| l.starts_with("sweeper: ")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "sweeper: interrupted; the result of the {n} finished trials is in o (result.json, result.csv, trials.csv, front.svg); finished evaluations are in the journal: continue with `sweeper run --resume o`"
        )),
        "{stderr}"
    );
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("o/result.json")).unwrap()).unwrap();
    assert_eq!(result["trials"].as_array().unwrap().len(), n);
    for file in ["result.csv", "trials.csv", "front.svg"] {
        assert!(dir.join("o").join(file).is_file(), "{file}");
    }
    // the resume finishes the sweep and rewrites the result
    let out = sweeper(&["run", "--resume", "o", "--no-progress"], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("o/result.json")).unwrap()).unwrap();
    let all = journaled(&journal).len();
    assert!(all > n, "{all} trials after the resume, {n} before");
    assert_eq!(result["trials"].as_array().unwrap().len(), all);
}
