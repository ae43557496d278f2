//! One source for every count (issue 36 item 4): the last progress line, the summary, the
//! table and result.json agree, and the progress total is the real one (a finite space's
//! size, the trials beyond the budget of evaluations).

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn sweeper(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sweeper"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run sweeper")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The `done/total` of each progress line, and whether the total carries the `+` of a
/// total that may still grow.
fn progress(stderr: &str) -> Vec<(u64, u64, bool)> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("sweeper: "))
        .filter_map(|l| l.split_once(" trials after "))
        .map(|(counts, _)| {
            let (done, total) = counts.split_once('/').unwrap();
            let open = total.ends_with('+');
            (
                done.parse().unwrap(),
                total.trim_end_matches('+').parse().unwrap(),
                open,
            )
        })
        .collect()
}

fn builtin(sweep: &str, load: &str, space: &str) -> String {
    format!(
        "goal: {{target: pareto}}
workload: {{isl: 4000, osl: 500, num_request_ratio: 10, kv_load_ratio: {load}}}
search_space:
  gpu_budget: 16
  used_gpus: [tp, replicas]
  parameters:
{space}
evaluator:
  builtin: {{model: qwen3-32b-fp8, gpu: h200}}
sweep: {{{sweep}}}
"
    )
}

#[test]
fn the_last_progress_line_the_summary_and_the_table_agree() {
    // the quick start's shape: candidates over the GPU budget are trials beyond the
    // rounds' evaluations
    let dir = tempfile::tempdir().unwrap();
    let cfg = builtin(
        "max_rounds: 4, candidates_per_round: 8, parallel_evals: 4, seed: 42",
        "[0.05, 1.0]",
        "    tp: {values: [1, 2, 4, 8]}\n    replicas: {int: [1, 8]}\n    max_batch_size: {values: [8, 32, 128, 512], log: true}",
    );
    std::fs::write(dir.path().join("c.yaml"), cfg).unwrap();
    let out = sweeper(
        &["run", "c.yaml", "--out", "o", "--format", "json"],
        dir.path(),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // the table printed on stdout is the front
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = std::fs::read_to_string(dir.path().join("o/result.json")).unwrap();
    let result: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        printed.as_array().unwrap().len(),
        result["candidates"].as_array().unwrap().len()
    );
    let trials = result["trials"].as_array().unwrap().len() as u64;
    let front = result["candidates"].as_array().unwrap().len();
    assert!(
        trials > 32,
        "the sweep had trials over the budget: {trials}"
    );
    let lines = progress(&stderr);
    let (done, total, open) = *lines.last().unwrap();
    assert_eq!((done, total, open), (trials, trials, false), "{stderr}");
    // no line ever shows more trials done than its total, nor a total above the end's
    assert!(
        lines.iter().all(|&(d, t, _)| d <= t && t <= trials),
        "{lines:?}"
    );
    // a total below the real one is marked as one that may grow (`1/32+ trials`): the
    // first line is never read as the sweep's whole
    assert!(
        lines.iter().all(|&(_, t, open)| t == trials || open),
        "{lines:?}"
    );
    assert!(lines.first().unwrap().2, "{lines:?}");
    assert_eq!(
        lines
            .iter()
            .filter(|&&(d, t, open)| d == t && !open)
            .count(),
        1,
        "the end's line once: {lines:?}"
    );
    let last = stderr
        .lines()
        .rfind(|l| l.contains(" trials after "))
        .unwrap();
    assert!(last.ends_with(&format!(" · front {front}")), "{last}");
    let feasible = result["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] == "feasible")
        .count();
    assert!(last.contains(&format!("· feasible {feasible} ·")), "{last}");
    assert!(
        stderr.contains(&format!("sweeper: {trials} trials: {feasible} feasible,")),
        "{stderr}"
    );
}

#[test]
fn a_grid_of_eight_candidates_counts_to_eight() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = builtin(
        "algorithm: grid, parallel_evals: 2, candidates_per_round: 2",
        "0.5",
        "    tp: {values: [1, 2, 4, 8]}\n    replicas: {values: [1, 2]}",
    );
    std::fs::write(dir.path().join("g.yaml"), cfg).unwrap();
    let out = sweeper(&["run", "g.yaml", "--out", "o", "-v"], dir.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // `-v`: a line per outcome, each out of the grid's eight
    let totals: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(" trials · ") || l.contains(" trials after "))
        .collect();
    assert!(!totals.is_empty(), "{stderr}");
    for l in &totals {
        // a finite space's size is the real total from the first line: no `+`
        assert!(l.contains("/8 trials"), "{l}");
    }
    assert!(stderr.contains("sweeper: 8 trials: 8 feasible"), "{stderr}");
}
