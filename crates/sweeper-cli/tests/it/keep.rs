//! Everything a report says reaches the result files: labels (string values) and numeric
//! extras in `result.json`, `result.csv` and `trials.csv`; an infinite metric written as
//! `inf` / `-inf` in all of them, and a sweep holding one resumes.

use crate::common::sweeper;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn labels_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/evaluators/labels.py")
}

/// A grid of six configurations (tp 1, 2, 4 × replicas 1, 2), all within the budget.
fn write_config(dir: &Path, goal: &str, script_args: &str) -> PathBuf {
    let yaml = format!(
        "goal: {goal}
search_space:
  gpu_budget: 16
  used_gpus: [tp, replicas]
  parameters:
    tp: {{values: [1, 2, 4]}}
    replicas: {{values: [1, 2]}}
evaluator:
  command: [python3, {script}{script_args}]
sweep: {{max_rounds: 2, candidates_per_round: 4, parallel_evals: 2, seed: 3, algorithm: grid}}
",
        script = labels_script().display()
    );
    let path = dir.join("labels.yaml");
    std::fs::write(&path, yaml).unwrap();
    path
}

/// Runs `sweeper run CONFIG --out DIR/o`; returns the output directory.
fn run_sweep(dir: &Path, config: &Path) -> PathBuf {
    let out = dir.join("o");
    let run = sweeper([
        "run".as_ref(),
        config.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--no-progress".as_ref(),
    ]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    out
}

fn result_json(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap()
}

/// A CSV file as rows of column name → cell.
fn read_csv(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let mut names = header.clone();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), header.len(), "a column name twice: {header:?}");
    reader
        .records()
        .map(|r| {
            header
                .iter()
                .cloned()
                .zip(r.unwrap().iter().map(String::from))
                .collect()
        })
        .collect()
}

#[test]
fn labels_and_numeric_extras_reach_result_json_result_csv_and_trials_csv() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "{target: throughput}", "");
    let out = run_sweep(dir.path(), &config);
    let result = result_json(&out);

    // A string value is a label, not a malformed report: every trial is feasible.
    let trials = result["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 6, "{trials:?}");
    for t in trials {
        assert_eq!(t["status"], "feasible", "{t}");
        assert_eq!(t["metrics"]["my_extra"], 3.5, "{t}");
        assert_eq!(t["labels"]["note"], "hello", "{t}");
    }
    assert_eq!(result["tallies"]["feasible"], 6);
    assert_eq!(result["tallies"]["failed"], 0);

    // The ranking and every evaluated candidate carry the extra and the labels.
    for list in ["candidates", "evaluated"] {
        let cands = result[list].as_array().unwrap();
        assert_eq!(cands.len(), 6, "{list}");
        for c in cands {
            assert_eq!(c["extra"]["my_extra"], 3.5, "{c}");
            assert_eq!(c["labels"]["note"], "hello", "{c}");
            assert_eq!(c["labels"]["formula"], "=cmd|' /C calc'!A0", "{c}");
            // the known metrics stay where they were
            assert!(c["metrics"]["output_throughput_tok_s"].is_number(), "{c}");
            assert!(c["metrics"].get("my_extra").is_none(), "{c}");
        }
    }

    // result.csv: the ranking, with a column per extra and per label.
    let rows = read_csv(&out.join("result.csv"));
    assert_eq!(rows.len(), 6);
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(row["position"], (k + 1).to_string());
        assert_eq!(row["my_extra"], "3.5", "{row:?}");
        assert_eq!(row["note"], "hello", "{row:?}");
        // a formula from outside is neutralised with a leading quote
        assert_eq!(row["formula"], "'=cmd|' /C calc'!A0", "{row:?}");
    }
    // best first: tp 4 × replicas 2 is 800 tok/s
    assert_eq!(rows[0]["tp"], "4");
    assert_eq!(rows[0]["replicas"], "2");
    assert_eq!(rows[0]["output_throughput_tok_s"], "800.0");

    // trials.csv: one row per trial, in trial order.
    let rows = read_csv(&out.join("trials.csv"));
    assert_eq!(rows.len(), 6);
    for (row, t) in rows.iter().zip(trials) {
        assert_eq!(row["trial"], t["trial"].to_string());
        assert_eq!(row["status"], "feasible");
        assert_eq!(row["reason"], "");
        assert_eq!(row["tp"], t["config"]["tp"].to_string());
        assert_eq!(row["replicas"], t["config"]["replicas"].to_string());
        assert_eq!(row["used_gpus"], t["config"]["used_gpus"].to_string());
        assert_eq!(row["my_extra"], "3.5", "{row:?}");
        assert_eq!(row["note"], "hello", "{row:?}");
        assert_eq!(row["formula"], "'=cmd|' /C calc'!A0", "{row:?}");
        assert_eq!(
            row["score"].parse::<f64>().unwrap(),
            t["score"].as_f64().unwrap()
        );
    }
    let header = std::fs::read_to_string(out.join("trials.csv")).unwrap();
    assert!(
        header.starts_with("trial,status,reason,tp,replicas,used_gpus,score,"),
        "parameters in the search space's order: {header}"
    );
}

#[test]
fn an_infinite_latency_is_minus_inf_in_every_file_and_the_sweep_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), "{target: e2e_latency}", ", infinite");
    let out = run_sweep(dir.path(), &config);
    let result = result_json(&out);

    // tp=1 reported Infinity: its score reads back as the string "-inf", ranked last.
    let cands = result["candidates"].as_array().unwrap();
    assert_eq!(cands.len(), 6);
    let tp1: Vec<&Value> = cands.iter().filter(|c| c["config"]["tp"] == 1).collect();
    assert_eq!(tp1.len(), 2);
    for c in &tp1 {
        assert_eq!(c["score"], "-inf", "{c}");
        assert_eq!(c["metrics"]["mean_e2e_latency_ms"], "inf", "{c}");
    }
    assert!(
        cands[4..].iter().all(|c| c["config"]["tp"] == 1),
        "{cands:?}"
    );
    assert_eq!(cands[0]["score"], -250.0);
    for t in result["trials"].as_array().unwrap() {
        if t["config"]["tp"] == 1 {
            assert_eq!(t["score"], "-inf", "{t}");
            assert_eq!(t["metrics"]["mean_e2e_latency_ms"], "inf", "{t}");
        }
    }

    // The CSV cells say inf / -inf, untouched by the formula guard.
    let rows = read_csv(&out.join("result.csv"));
    for row in &rows[4..] {
        assert_eq!(row["score"], "-inf", "{row:?}");
        assert_eq!(row["mean_e2e_latency_ms"], "inf", "{row:?}");
    }
    assert_eq!(rows[0]["score"], "-250.0");
    let trials = read_csv(&out.join("trials.csv"));
    let tp1: Vec<_> = trials.iter().filter(|r| r["tp"] == "1").collect();
    assert_eq!(tp1.len(), 2);
    for row in tp1 {
        assert_eq!(row["score"], "-inf", "{row:?}");
        assert_eq!(row["mean_e2e_latency_ms"], "inf", "{row:?}");
    }

    // The journal holding the infinity resumes, evaluating nothing again, to the same result.
    let outcomes = |out: &Path| {
        std::fs::read_to_string(out.join("journal.jsonl"))
            .unwrap()
            .matches("\"kind\":\"outcome\"")
            .count()
    };
    let evaluated = outcomes(&out);
    assert_eq!(evaluated, 6);
    let again = sweeper([
        "run".as_ref(),
        "--resume".as_ref(),
        out.as_os_str(),
        "--no-progress".as_ref(),
        "--format".as_ref(),
        "csv".as_ref(),
    ]);
    assert_eq!(again.code, 0, "stderr: {}", again.stderr);
    assert!(again.stdout.contains(",-inf,"), "{}", again.stdout);
    assert_eq!(outcomes(&out), evaluated, "a trial was evaluated again");
    let mut after = result_json(&out);
    let mut before = result;
    // the title names the config file, which a resume reads from the directory's copy
    for v in [&mut before, &mut after] {
        v.as_object_mut().unwrap().remove("title");
    }
    assert!(before == after, "the resumed result differs");
}
