//! Every command that reads a journal (`score`, `plot`, `run --resume`) reads it with one
//! strictness: what a resume refuses, `score` refuses too, with the same message, so that a
//! hand-edited line cannot put a trial at the top of a ranking.

use crate::common::sweeper;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A sweep of the built-in model (four trials, all feasible) in `dir/NAME`, under the
/// `rounds` or the `async` schedule; returns its output directory and its config.
fn sweep(dir: &Path, name: &str, schedule: &str) -> (PathBuf, PathBuf) {
    let cfg = dir.join(format!("{name}.yaml"));
    std::fs::write(
        &cfg,
        format!(
            "goal: {{target: throughput}}
workload: {{isl: 4000, osl: 500, num_request_ratio: 10, kv_load_ratio: 0.5}}
search_space:
  gpu_budget: 8
  used_gpus: [tp, replicas]
  parameters:
    tp: {{values: [1, 2, 4]}}
    replicas: {{int: [1, 2]}}
evaluator:
  builtin: {{model: qwen3-32b-fp8, gpu: h200}}
sweep: {{max_rounds: 2, candidates_per_round: 2, parallel_evals: 2, seed: 3, schedule: {schedule}}}
"
        ),
    )
    .unwrap();
    let out = dir.join(name);
    let run = sweeper([
        "run".as_ref(),
        cfg.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--no-progress".as_ref(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    (out, cfg)
}

/// A copy of the sweep in `from` as `to`, its journal with `lines` appended.
fn tampered(from: &Path, to: &Path, lines: &[String]) -> PathBuf {
    std::fs::create_dir_all(to).unwrap();
    for name in ["config.yaml", "journal.jsonl"] {
        std::fs::copy(from.join(name), to.join(name)).unwrap();
    }
    let journal = to.join("journal.jsonl");
    let mut text = std::fs::read_to_string(&journal).unwrap();
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::write(&journal, text).unwrap();
    journal
}

/// The first feasible outcome line of a journal, and its trial.
fn a_feasible_outcome(journal: &Path) -> (u64, Value) {
    let text = std::fs::read_to_string(journal).unwrap();
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["kind"] == "outcome" && v["status"] == "feasible")
        .map(|v| (v["trial"].as_u64().unwrap(), v))
        .unwrap()
}

/// `score --config CFG JOURNAL`, `plot JOURNAL` and `run --resume DIR`: all refuse with
/// `why` (score and resume exit 1: the journal is bad data, as a bad reports row is).
fn both_refuse(cfg: &Path, journal: &Path, why: &str) {
    let score = sweeper([
        "score".as_ref(),
        "--config".as_ref(),
        cfg.as_os_str(),
        journal.as_os_str(),
    ]);
    assert_eq!(score.code, 1, "score: {}{}", score.stdout, score.stderr);
    assert!(score.stdout.is_empty(), "{}", score.stdout);
    assert!(score.stderr.contains(why), "score: {}", score.stderr);
    let plot = sweeper(["plot".as_ref(), journal.as_os_str()]);
    assert_ne!(plot.code, 0, "plot: {}", plot.stderr);
    assert!(plot.stderr.contains(why), "plot: {}", plot.stderr);
    let dir = journal.parent().unwrap();
    let resume = sweeper([
        "run".as_ref(),
        "--resume".as_ref(),
        dir.as_os_str(),
        "--no-progress".as_ref(),
    ]);
    assert_eq!(resume.code, 1, "resume: {}", resume.stderr);
    assert!(resume.stderr.contains(why), "resume: {}", resume.stderr);
    // one message: the same line and words, but for the path
    let tail = |s: &str| {
        let error = s.lines().find(|l| l.contains("error:")).unwrap().to_owned();
        error.split_once("journal.jsonl").unwrap().1.to_owned()
    };
    assert_eq!(tail(&score.stderr), tail(&resume.stderr));
}

#[test]
fn score_and_resume_refuse_a_second_outcome_and_an_outcome_of_a_trial_never_suggested() {
    let dir = tempfile::tempdir().unwrap();
    for schedule in ["rounds", "async"] {
        let (out, cfg) = sweep(dir.path(), schedule, schedule);
        let journal = out.join("journal.jsonl");
        let lines = std::fs::read_to_string(&journal).unwrap().lines().count();
        let (trial, mut outcome) = a_feasible_outcome(&journal);
        outcome["report"]["output_throughput_tok_s"] = Value::from(1e12);

        // the untouched journal scores
        let fine = sweeper([
            "score".as_ref(),
            "--config".as_ref(),
            cfg.as_os_str(),
            journal.as_os_str(),
        ]);
        assert_eq!(fine.code, 0, "{}", fine.stderr);
        assert!(!fine.stdout.contains("1000000000000"), "{}", fine.stdout);

        let second = tampered(
            &out,
            &dir.path().join(format!("{schedule}-second")),
            &[outcome.to_string()],
        );
        both_refuse(
            &cfg,
            &second,
            &format!(
                "line {}: a second outcome of trial {trial}; a sweep records one outcome per trial: keep the line the sweep wrote and remove the other",
                lines + 1
            ),
        );

        outcome["trial"] = Value::from(9999);
        let orphan = tampered(
            &out,
            &dir.path().join(format!("{schedule}-orphan")),
            &[outcome.to_string()],
        );
        both_refuse(
            &cfg,
            &orphan,
            &format!(
                "line {}: an outcome of trial 9999, which no suggestion before it proposed; a sweep writes a trial's outcome after its suggestion: remove this line",
                lines + 1
            ),
        );
    }
}

#[test]
fn a_suggestion_of_the_largest_trial_id_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let (out, cfg) = sweep(dir.path(), "o", "rounds");
    let lines = std::fs::read_to_string(out.join("journal.jsonl"))
        .unwrap()
        .lines()
        .count();
    let (_, mut outcome) = a_feasible_outcome(&out.join("journal.jsonl"));
    outcome["trial"] = Value::from(u64::MAX);
    let suggest = format!(
        r#"{{"kind":"suggest","trial":{},"parameters":{{"replicas":2,"tp":1}}}}"#,
        u64::MAX
    );
    let journal = tampered(
        &out,
        &dir.path().join("max"),
        &[suggest, outcome.to_string()],
    );
    both_refuse(
        &cfg,
        &journal,
        &format!(
            "line {}: trial 18446744073709551615 is beyond the largest trial id, 9007199254740991",
            lines + 1
        ),
    );
}

#[test]
fn a_resume_refuses_a_journaled_trial_the_study_does_not_propose_again() {
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = sweep(dir.path(), "o", "rounds");
    // a third batch, of one trial, that the study (whose next trial is 4) never proposed
    let (_, mut outcome) = a_feasible_outcome(&out.join("journal.jsonl"));
    outcome["trial"] = Value::from(9999);
    let suggest =
        r#"{"kind":"suggest","trial":9999,"batch":2,"count":1,"parameters":{"replicas":2,"tp":1}}"#;
    let journal = tampered(
        &out,
        &dir.path().join("extra"),
        &[suggest.to_owned(), outcome.to_string()],
    );
    let config = journal.with_file_name("config.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replace("max_rounds: 2", "max_rounds: 6")).unwrap();
    let resume = sweeper([
        "run".as_ref(),
        "--resume".as_ref(),
        journal.parent().unwrap().as_os_str(),
        "--no-progress".as_ref(),
    ]);
    assert_eq!(resume.code, 1, "{}{}", resume.stdout, resume.stderr);
    assert!(
        resume.stderr.contains(
            "line 10: trial 9999 of batch 2 is not one the study proposes again (it proposes 4)"
        ),
        "{}",
        resume.stderr
    );
}

#[test]
fn a_journal_saved_with_a_byte_order_mark_reads_as_without() {
    let dir = tempfile::tempdir().unwrap();
    let (out, cfg) = sweep(dir.path(), "o", "rounds");
    let journal = out.join("journal.jsonl");
    let score = |path: &Path| {
        sweeper([
            "score".as_ref(),
            "--config".as_ref(),
            cfg.as_os_str(),
            path.as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ])
    };
    let plain = score(&journal);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    let marked = tampered(&out, &dir.path().join("bom"), &[]);
    let text = std::fs::read(&marked).unwrap();
    std::fs::write(&marked, [b"\xef\xbb\xbf".as_slice(), &text].concat()).unwrap();
    let with_mark = score(&marked);
    assert_eq!(with_mark.code, 0, "{}", with_mark.stderr);
    assert_eq!(with_mark.stdout, plain.stdout);
    // a resume reads it too (and finds the sweep finished)
    let resume = sweeper([
        "run".as_ref(),
        "--resume".as_ref(),
        marked.parent().unwrap().as_os_str(),
        "--no-progress".as_ref(),
    ]);
    assert_eq!(resume.code, 0, "{}", resume.stderr);
    assert!(
        resume.stderr.contains("4 trials finished"),
        "{}",
        resume.stderr
    );
}
