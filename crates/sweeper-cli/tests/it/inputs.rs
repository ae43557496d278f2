//! What the readers of `score` and `front` refuse rather than change silently, and which
//! exit code says so: a number too large to hold, a key named twice, a wide header with a
//! column named twice, bytes that are not UTF-8 and a journal line that does not parse (all
//! bad data: exit 1).

use crate::common::{fixture, sweeper, temp_file};
use std::ffi::OsStr;
use std::path::Path;

fn score(config: &Path, reports: &Path) -> crate::common::Run {
    sweeper([
        OsStr::new("score"),
        OsStr::new("--config"),
        config.as_os_str(),
        reports.as_os_str(),
    ])
}

fn front(input: &Path) -> crate::common::Run {
    sweeper([
        OsStr::new("front"),
        input.as_os_str(),
        OsStr::new("-o"),
        OsStr::new("output_throughput_tok_s:max"),
        OsStr::new("-o"),
        OsStr::new("mean_output_token_throughput_per_user:max"),
    ])
}

const HEADER: &str = "used_gpus,output_throughput_tok_s,mean_output_token_throughput_per_user";

#[test]
fn a_csv_number_too_large_is_refused_with_its_row_and_column_not_read_as_inf() {
    let text = format!("{HEADER}\n1,100,10\n1,1e400,5\n");
    let (_d, csv) = temp_file("r.csv", &text);
    let want = "line 3 (row 1), column `output_throughput_tok_s`: number out of range: `1e400`";
    for run in [score(&fixture("kimi-pareto.yaml"), &csv), front(&csv)] {
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert!(run.stderr.contains(want), "{}", run.stderr);
        assert!(
            run.stderr.contains("write `inf` or `-inf`"),
            "{}",
            run.stderr
        );
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    }
    // the same rows as JSON Lines were refused already; `inf` written as such is a number
    let (_d, jsonl) = temp_file(
        "r.jsonl",
        "{\"output_throughput_tok_s\": 100, \"mean_output_token_throughput_per_user\": 10}\n\
         {\"output_throughput_tok_s\": 1e400, \"mean_output_token_throughput_per_user\": 5}\n",
    );
    assert_eq!(front(&jsonl).code, 1);
    let (_d, csv) = temp_file("r.csv", format!("{HEADER}\n1,100,10\n1,inf,5\n"));
    let run = front(&csv);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("inf"), "{}", run.stdout);
}

#[test]
fn a_json_lines_key_named_twice_is_refused_like_a_csv_column_named_twice() {
    let rows = "{\"config\": {\"used_gpus\": 1}, \"report\": {\"output_throughput_tok_s\": 5, \
                \"mean_output_token_throughput_per_user\": 1}}\n\
                {\"config\": {\"used_gpus\": 1}, \"report\": {\"output_throughput_tok_s\": 6, \
                \"mean_output_token_throughput_per_user\": 2, \"output_throughput_tok_s\": 1e12}}\n";
    let (_d, jsonl) = temp_file("r.jsonl", rows);
    let run = score(&fixture("kimi-pareto.yaml"), &jsonl);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("line 2 (row 1): invalid JSON: an object names the key `output_throughput_tok_s` twice; keep one"),
        "{}",
        run.stderr
    );
    let flat = "{\"output_throughput_tok_s\": 5, \"mean_output_token_throughput_per_user\": 1, \
                \"mean_output_token_throughput_per_user\": 9}\n";
    let (_d, jsonl) = temp_file("f.jsonl", flat);
    let run = front(&jsonl);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("the key `mean_output_token_throughput_per_user` twice"),
        "{}",
        run.stderr
    );
    // and the CSV header that names a column twice, for comparison
    let (_d, csv) = temp_file("r.csv", format!("{HEADER},used_gpus\n1,5,1,1\n"));
    let run = score(&fixture("kimi-pareto.yaml"), &csv);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("`used_gpus` twice (columns 1 and 4)"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_column_named_twice_is_found_in_a_header_of_many_columns() {
    let extra = 30_000;
    let mut header: Vec<String> = (0..extra).map(|k| format!("label_{k}")).collect();
    header.push(HEADER.to_owned());
    let row = format!("{}1,5,1", "x,".repeat(extra));
    let wide = format!("{}\n{row}\n", header.join(","));
    let (_d, csv) = temp_file("wide.csv", &wide);
    // without a repeat both commands read it
    let run = front(&csv);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = score(&fixture("kimi-pareto.yaml"), &csv);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // with one, far from its first copy, both refuse it and name both places
    let twice = wide.replacen(&format!("label_{},", extra - 1), "label_17,", 1);
    let (_d, csv) = temp_file("twice.csv", &twice);
    let want = format!("`label_17` twice (columns 18 and {extra})");
    for run in [front(&csv), score(&fixture("kimi-pareto.yaml"), &csv)] {
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert!(run.stderr.contains(&want), "{}", run.stderr);
    }
}

/// A sweep of the built-in model small enough to run in a test; returns its directory.
fn small_sweep(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let cfg = dir.join("c.yaml");
    std::fs::write(
        &cfg,
        "goal: {target: throughput}
workload: {isl: 1000, osl: 100, num_request_ratio: 2, concurrency: 8}
search_space:
  gpu_budget: 8
  used_gpus: [tp]
  parameters:
    tp: {values: [1, 2, 4]}
    max_batch_size: {values: [16, 64]}
evaluator:
  builtin: {model: qwen3-32b-fp8, gpu: h200}
sweep: {max_rounds: 1, candidates_per_round: 3, parallel_evals: 1, seed: 3, algorithm: random}
",
    )
    .unwrap();
    let out = dir.join("o");
    let run = sweeper([
        OsStr::new("run"),
        cfg.as_os_str(),
        OsStr::new("--out"),
        out.as_os_str(),
        OsStr::new("--no-progress"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    (cfg, out)
}

/// README: exit 1 for input checked and found wanting (bad data), 2 for usage or I/O
/// errors. Bytes that are not UTF-8 in a reports file and a journal line that does not
/// parse are both bad data in a file that could be read: exit 1, in `score` and `run
/// --resume` alike (a bad journal line exited 2).
#[test]
fn bad_data_exits_1_in_a_reports_file_and_in_a_journal() {
    let (_d, csv) = temp_file("r.csv", b"used_gpus,note\n1,ok\n2,\xff\n");
    let run = score(&fixture("kimi-latency.yaml"), &csv);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("invalid UTF-8"), "{}", run.stderr);

    let dir = tempfile::tempdir().unwrap();
    let (cfg, out) = small_sweep(dir.path());
    let journal = out.join("journal.jsonl");
    let whole = std::fs::read_to_string(&journal).unwrap();
    let lines = whole.lines().count();
    std::fs::write(&journal, format!("{whole}{{\"kind\": \"outcome\", \n")).unwrap();
    let run = score(&cfg, &journal);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("line {}", lines + 1)),
        "{}",
        run.stderr
    );
    let resumed = sweeper([
        OsStr::new("run"),
        OsStr::new("--resume"),
        out.as_os_str(),
        OsStr::new("--no-progress"),
    ]);
    assert_eq!(resumed.code, 1, "{}", resumed.stderr);
    assert!(resumed.stderr.contains("journal"), "{}", resumed.stderr);
    // a journal that cannot be read at all is still an I/O error
    let missing = sweeper([
        OsStr::new("run"),
        OsStr::new("--resume"),
        dir.path().join("nowhere").as_os_str(),
    ]);
    assert_eq!(missing.code, 2, "{}", missing.stderr);
}
