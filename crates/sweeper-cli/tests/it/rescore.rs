//! `sweeper score` of a sweep's `journal.jsonl` and `result.json`: a pareto sweep of the toy
//! script re-scored under a throughput goal and under a smaller GPU budget, evaluating
//! nothing.
//!
//! The expected orders come from the toy's formula (`tests/evaluators/toy_serving.py`) at
//! the configured concurrency of 16, applied to the configurations the sweep tried:
//! `tok/s = 120 √tp / 1.5 × 16 × replicas` on `tp × replicas` GPUs, so tok/s/gpu is
//! `1280 / √tp`, the same for every replica count (ties go to fewer GPUs, then trial order).

use crate::common::sweeper;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn toy_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/evaluators/toy_serving.py")
}

/// The toy sweep's config under `goal` and `budget`; tp=8 is unsupported, replicas=3 fails.
fn config(dir: &Path, name: &str, goal: &str, budget: u64) -> PathBuf {
    let yaml = format!(
        "goal: {goal}
workload: {{isl: 1000, osl: 200, num_request_ratio: 2, concurrency: 16}}
search_space:
  gpu_budget: {budget}
  used_gpus: [tp, replicas]
  parameters:
    tp: {{values: [1, 2, 4, 8]}}
    replicas: {{int: [1, 4]}}
evaluator:
  command: [python3, {script}]
sweep: {{max_rounds: 3, candidates_per_round: 4, parallel_evals: 2, seed: 5}}
",
        script = toy_script().display()
    );
    let path = dir.join(name);
    std::fs::write(&path, yaml).unwrap();
    path
}

/// A feasible evaluation of the pareto sweep: trial id, tp, replicas.
#[derive(Debug, Clone, Copy)]
struct Evaluated {
    trial: u64,
    tp: u64,
    replicas: u64,
}

impl Evaluated {
    fn gpus(self) -> u64 {
        self.tp * self.replicas
    }
    fn throughput(self) -> f64 {
        120.0 * (self.tp as f64).sqrt() / 1.5 * 16.0 * self.replicas as f64
    }
}

/// Runs the pareto sweep in `dir/o`; returns the directory and its feasible evaluations.
fn pareto_sweep(dir: &Path) -> (PathBuf, Vec<Evaluated>) {
    let cfg = config(dir, "pareto.yaml", "{target: pareto}", 16);
    let out = dir.join("o");
    let run = sweeper([
        "run".as_ref(),
        cfg.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--no-progress".as_ref(),
    ]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    let evaluated: Vec<Evaluated> = result["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] == "feasible")
        .map(|t| Evaluated {
            trial: t["trial"].as_u64().unwrap(),
            tp: t["config"]["tp"].as_u64().unwrap(),
            replicas: t["config"]["replicas"].as_u64().unwrap(),
        })
        .collect();
    // the sweep tried enough to make the re-scoring mean something
    assert!(evaluated.len() >= 6, "{evaluated:?}");
    (out, evaluated)
}

/// `sweeper score --config CONFIG INPUT --format FORMAT`: exit code, stdout, stderr.
fn score(config: &Path, input: &Path, format: &str) -> (i32, String, String) {
    let run = sweeper([
        "score".as_ref(),
        "--config".as_ref(),
        config.as_os_str(),
        input.as_os_str(),
        "--format".as_ref(),
        format.as_ref(),
    ]);
    (run.code, run.stdout, run.stderr)
}

fn indices(json: &str) -> Vec<u64> {
    let list: Value = serde_json::from_str(json).unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .map(|c| c["index"].as_u64().unwrap())
        .collect()
}

#[test]
fn a_pareto_sweep_is_re_ranked_by_throughput_from_its_journal_and_its_result_json() {
    let dir = tempfile::tempdir().unwrap();
    let (out, evaluated) = pareto_sweep(dir.path());
    let throughput = config(dir.path(), "throughput.yaml", "{target: throughput}", 16);

    let mut expected = evaluated.clone();
    expected.sort_by(|a, b| {
        b.throughput()
            .total_cmp(&a.throughput())
            .then(a.gpus().cmp(&b.gpus()))
            .then(a.trial.cmp(&b.trial))
    });
    let expected_ids: Vec<u64> = expected.iter().map(|e| e.trial).collect();
    let n = evaluated.len();

    let (code, journal_json, stderr) = score(&throughput, &out.join("journal.jsonl"), "json");
    assert_eq!(code, 0, "stderr: {stderr}");
    assert_eq!(indices(&journal_json), expected_ids);
    assert!(
        stderr.contains(&format!(
            "goal: throughput (maximize throughput, tok/s); {n} candidates, {n} feasible, 0 over the GPU budget of 16 (dropped)"
        )),
        "{stderr}"
    );
    let list: Value = serde_json::from_str(&journal_json).unwrap();
    for (c, e) in list.as_array().unwrap().iter().zip(&expected) {
        let score = c["score"].as_f64().unwrap();
        assert!(
            (score - e.throughput()).abs() < 1e-9 * e.throughput(),
            "{c}"
        );
        assert_eq!(c["used_gpus"].as_f64().unwrap(), e.gpus() as f64, "{c}");
        assert_eq!(c["config"]["tp"], e.tp, "{c}");
        assert!(c.get("objectives").is_none(), "a ranking, not a front: {c}");
    }

    // result.json holds the same trials: the same ranking, printed the same way.
    for format in ["json", "csv", "table"] {
        let (code, from_journal, _) = score(&throughput, &out.join("journal.jsonl"), format);
        assert_eq!(code, 0);
        let (code, from_result, stderr_result) =
            score(&throughput, &out.join("result.json"), format);
        assert_eq!(code, 0, "stderr: {stderr_result}");
        assert_eq!(from_journal, from_result, "{format}");
        assert_eq!(stderr_result, stderr, "{format}");
    }
}

#[test]
fn a_smaller_gpu_budget_drops_the_larger_configurations() {
    let dir = tempfile::tempdir().unwrap();
    let (out, evaluated) = pareto_sweep(dir.path());
    let per_gpu = config(
        dir.path(),
        "per-gpu.yaml",
        "{target: throughput_per_gpu}",
        4,
    );

    // tok/s/gpu is 1280/√tp: smaller tp first, then fewer GPUs, then trial order.
    let mut expected: Vec<Evaluated> = evaluated
        .iter()
        .copied()
        .filter(|e| e.gpus() <= 4)
        .collect();
    expected.sort_by_key(|e| (e.tp, e.gpus(), e.trial));
    let expected_ids: Vec<u64> = expected.iter().map(|e| e.trial).collect();
    assert!(
        expected.len() < evaluated.len(),
        "nothing over 4 GPUs: {evaluated:?}"
    );
    let (n, kept) = (evaluated.len(), expected.len());

    for input in ["journal.jsonl", "result.json"] {
        let (code, json, stderr) = score(&per_gpu, &out.join(input), "json");
        assert_eq!(code, 0, "{input}: {stderr}");
        assert_eq!(indices(&json), expected_ids, "{input}");
        assert!(
            stderr.contains(&format!(
                "{n} candidates, {kept} feasible, {} over the GPU budget of 4 (dropped)",
                n - kept
            )),
            "{input}: {stderr}"
        );
        let list: Value = serde_json::from_str(&json).unwrap();
        for (c, e) in list.as_array().unwrap().iter().zip(&expected) {
            let want = 1280.0 / (e.tp as f64).sqrt();
            assert!(
                (c["score"].as_f64().unwrap() - want).abs() < 1e-9 * want,
                "{c}"
            );
        }

        // CSV: rank, then the trial id as index, in the same order.
        let (code, csv, _) = score(&per_gpu, &out.join(input), "csv");
        assert_eq!(code, 0);
        let mut lines = csv.lines();
        assert!(
            lines
                .next()
                .unwrap()
                .starts_with("rank,index,used_gpus,score,"),
            "{csv}"
        );
        let ids: Vec<u64> = lines
            .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
            .collect();
        assert_eq!(ids, expected_ids, "{input}");
    }
}

#[test]
fn a_running_sweeps_journal_is_scored_as_far_as_it_goes() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = pareto_sweep(dir.path());
    let text = std::fs::read_to_string(out.join("journal.jsonl")).unwrap();
    // the first two thirds of the lines, and half of the next one being written
    let lines: Vec<&str> = text.lines().collect();
    let keep = lines.len() * 2 / 3;
    let mut partial = lines[..keep].join("\n") + "\n";
    partial.push_str(&lines[keep][..lines[keep].len() / 2]);
    let running = dir.path().join("running.jsonl");
    std::fs::write(&running, &partial).unwrap();
    let finished = lines[..keep]
        .iter()
        .filter(|l| l.contains("\"kind\":\"outcome\"") && l.contains("\"status\":\"feasible\""))
        .count();
    assert!(finished > 0);

    let throughput = config(dir.path(), "throughput.yaml", "{target: throughput}", 16);
    let (code, json, stderr) = score(&throughput, &running, "json");
    assert_eq!(code, 0, "stderr: {stderr}");
    assert_eq!(indices(&json).len(), finished);
    assert!(
        stderr.contains(&format!("{finished} candidates, {finished} feasible")),
        "{stderr}"
    );

    // a journal on standard input is refused with a usage error naming the fix
    let mut child = Command::new(env!("CARGO_BIN_EXE_sweeper"))
        .args(["score", "--config"])
        .arg(&throughput)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), text.as_bytes()).unwrap();
    let piped = child.wait_with_output().unwrap();
    assert_eq!(piped.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&piped.stderr).contains("journal.jsonl"),
        "{}",
        String::from_utf8_lossy(&piped.stderr)
    );
}
