//! Several inputs read as one table (the shards of an array job): `front A B C` and
//! `score --config C A B C` give what they give for one file holding every row, with rows
//! numbered across the inputs, ties in that order, and errors that name the file.

use crate::common::{Run, example, fixture, run_with_stdin, sweeper};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Writes the named files into a fresh directory.
fn files(named: &[(&str, &str)]) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let paths = named
        .iter()
        .map(|(name, text)| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
    (dir, paths)
}

fn run(args: &[&str], inputs: &[PathBuf], extra: &[&str]) -> Run {
    let mut all: Vec<OsString> = args.iter().map(Into::into).collect();
    all.extend(inputs.iter().map(|p| p.as_os_str().to_owned()));
    all.extend(extra.iter().map(Into::into));
    sweeper(all)
}

fn indices(json: &str) -> Vec<u64> {
    let list: serde_json::Value = serde_json::from_str(json).unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .map(|c| c["index"].as_u64().unwrap())
        .collect()
}

/// (x, y) rows spread over three inputs of three formats and an input with a header only:
/// duplicates and equal x across shards, so ties must follow the order of the inputs.
const FRONT_A: &str = "# shard a\nx,y,label\n1,5,a0\n3,3,a1\n2,2,a2\n";
const FRONT_B: &str = "{\"x\": 3, \"y\": 3, \"host\": \"n2\"}\n\n{\"y\": 1, \"x\": 5}\n";
const FRONT_EMPTY: &str = "x,y\n";
const FRONT_C: &str = "[{\"x\": 1, \"y\": 5}, {\"x\": 4, \"y\": 1}, {\"x\": 0, \"y\": 6}]";
/// The same rows in one file.
const FRONT_ALL: &str = "x,y\n1,5\n3,3\n2,2\n3,3\n5,1\n1,5\n4,1\n0,6\n";

#[test]
fn front_of_shards_is_the_front_of_their_concatenation() {
    let (_dir, paths) = files(&[
        ("a.csv", FRONT_A),
        ("b.jsonl", FRONT_B),
        ("empty.csv", FRONT_EMPTY),
        ("c.json", FRONT_C),
        ("all.csv", FRONT_ALL),
    ]);
    let (shards, all) = (&paths[..4], &paths[4..]);
    let xy = ["-o", "x:max", "-o", "y:max"];
    for extra in [
        &["--format", "json"][..],
        &["--format", "csv"],
        &["--format", "table"],
        &["--ranks", "--format", "csv"],
        &["--hypervolume", "0,0", "--format", "json"],
    ] {
        let mut args = vec!["front"];
        args.extend(xy);
        let whole = run(&args, all, extra);
        let parts = run(&args, shards, extra);
        assert_eq!(whole.code, 0, "{}", whole.stderr);
        assert_eq!(parts.code, 0, "{}", parts.stderr);
        assert_eq!(parts.stdout, whole.stdout, "{extra:?}");
        assert!(whole.stderr.is_empty(), "{}", whole.stderr);
        // the header-only shard is the one thing said
        assert_eq!(
            parts.stderr.trim(),
            format!(
                "sweeper: warning: {}: no data rows; the other inputs are read",
                shards[2].display()
            )
        );
    }
    // (1, 5) is in a.csv (row 0) and c.json (row 5): both, in input order; the two copies
    // of (3, 3) (rows 1 and 3) likewise. Sorted by y: (5, 1) first ((4, 1) is dominated by
    // it), (0, 6) last.
    let front = run(
        &["front", "-o", "x:max", "-o", "y:max", "--format", "json"],
        shards,
        &[],
    );
    assert_eq!(indices(&front.stdout), [4, 1, 3, 0, 5, 7]);
}

#[test]
fn front_errors_name_the_file_its_line_and_the_row_of_the_table() {
    let (_dir, paths) = files(&[
        ("a.csv", "x,y\n1,2\n3,4\n"),
        ("b.csv", "# c\nx,y\n1,2\n\n5,nan\n"),
        ("c.jsonl", "{\"x\": 1, \"y\": 2}\n{\"x\": 1}\n"),
        ("d.csv", "x,z\n1,2\n"),
    ]);
    let xy = ["front", "-o", "x:max", "-o", "y:max"];
    let cases = [
        (
            &paths[..2],
            format!(
                "sweeper: error: {}: line 5 (row 3), column `y`: value is NaN",
                paths[1].display()
            ),
        ),
        (
            &[paths[0].clone(), paths[2].clone()][..],
            format!(
                "sweeper: error: {}: line 2 (row 3): column `y` not found; the input has: x",
                paths[2].display()
            ),
        ),
        (
            &[paths[0].clone(), paths[3].clone()][..],
            format!(
                "sweeper: error: {}: column `y` not found; the input has: x, z",
                paths[3].display()
            ),
        ),
    ];
    for (inputs, want) in cases {
        let r = run(&xy, inputs, &[]);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(
            r.stderr.starts_with(&want),
            "want {want:?}, got {}",
            r.stderr
        );
        assert!(r.stdout.is_empty());
    }
    let (_dir, empty) = files(&[("e.csv", "x,y\n"), ("f.jsonl", "\n# nothing\n")]);
    let r = run(&xy, &empty, &[]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("no data rows in any of the 2 inputs (") && r.stderr.contains("e.csv, "),
        "{}",
        r.stderr
    );
}

/// Scored rows over three CSV shards (columns in another order, comment lines, a shard
/// without rows), with ties across shards: per GPU, rows 1, 3 and 5 score 250 (3 on fewer
/// GPUs), rows 0 and 7 score 200 on as many GPUs.
const SCORE_A: &str = "\
# shard a: tp, gpus, throughput, tok/s/user, one hour each
tp,used_gpus,output_throughput_tok_s,mean_output_token_throughput_per_user,gpu_hours,duration_ms,note
2,2,400,30,2,3600000,a0
4,4,1000,20,4,3600000,a1
8,8,1600,10,8,3600000,a2
";
const SCORE_EMPTY: &str = "tp,used_gpus,output_throughput_tok_s,mean_output_token_throughput_per_user,gpu_hours,duration_ms,note\n";
const SCORE_B: &str = "\
note,duration_ms,gpu_hours,mean_output_token_throughput_per_user,output_throughput_tok_s,used_gpus,tp
b3,3600000,1,50,250,1,1
b4,3600000,16,5,4000,16,16

b5,3600000,4,12,1000,4,4
";
const SCORE_C: &str = "\
tp,used_gpus,output_throughput_tok_s,mean_output_token_throughput_per_user,gpu_hours,duration_ms,note
4,4,,40,4,3600000,c6
2,2,400,30,2,3600000,c7
";

#[test]
fn score_of_shards_is_the_score_of_their_concatenation() {
    // One file: shard a whole, then the rows of b back in a's column order, then c's rows.
    let mut all = SCORE_A.to_owned();
    for line in SCORE_B.lines().skip(1).filter(|l| !l.is_empty()) {
        let c: Vec<&str> = line.split(',').collect();
        let reordered = [c[6], c[5], c[4], c[3], c[2], c[1], c[0]];
        all.push_str(&reordered.join(","));
        all.push('\n');
    }
    for line in SCORE_C.lines().skip(1) {
        all.push_str(line);
        all.push('\n');
    }
    let (_dir, paths) = files(&[
        ("a.csv", SCORE_A),
        ("empty.csv", SCORE_EMPTY),
        ("b.csv", SCORE_B),
        ("c.csv", SCORE_C),
        ("all.csv", &all),
    ]);
    let (shards, whole) = (&paths[..4], &paths[4..]);
    for (config, extra) in [
        ("kimi-throughput-per-gpu-4.yaml", &["--format", "json"][..]),
        ("kimi-throughput-per-gpu-4.yaml", &["--format", "csv"]),
        (
            "kimi-throughput-per-gpu-4.yaml",
            &["--format", "table", "--top", "3"],
        ),
        ("kimi-pareto.yaml", &["--format", "json"]),
        ("kimi-pareto.yaml", &["--format", "csv"]),
        ("kimi-pareto.yaml", &["--format", "table"]),
        ("kimi-latency.yaml", &["--format", "csv", "--top", "4"]),
    ] {
        let cfg = fixture(config);
        let args = ["score", "--config", cfg.to_str().unwrap()];
        let one = run(&args, whole, extra);
        let parts = run(&args, shards, extra);
        assert_eq!(one.code, 0, "{}", one.stderr);
        assert_eq!(parts.code, 0, "{}", parts.stderr);
        assert_eq!(parts.stdout, one.stdout, "{config} {extra:?}");
        // the same notes, and one more: the shard without rows
        let warning = format!(
            "sweeper: warning: {}: no data rows; the other inputs are read\n",
            shards[1].display()
        );
        assert_eq!(
            parts.stderr.replacen(&warning, "", 1),
            one.stderr,
            "{config}"
        );
    }
    // throughput per GPU (budget 4): 250 (row 3 on 1 GPU, then rows 1 and 5 on 4, in input
    // order across shards), 200 (rows 0 and 7 on 2), 0 (row 6: no throughput); rows 2 and
    // 4 are over the budget.
    let cfg = fixture("kimi-throughput-per-gpu-4.yaml");
    let r = run(
        &["score", "--config", cfg.to_str().unwrap()],
        shards,
        &["--format", "json"],
    );
    assert_eq!(indices(&r.stdout), [3, 1, 5, 0, 7, 6]);
    assert!(
        r.stderr
            .contains("8 candidates, 6 feasible, 2 over the GPU budget of 4"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("column `output_throughput_tok_s`: 1 empty cell, each read"),
        "{}",
        r.stderr
    );
}

#[test]
fn score_reads_shards_of_every_format_and_standard_input_as_one() {
    // The rows of SCORE_A and SCORE_C as JSON Lines and a JSON array.
    let lines = "\
{\"config\": {\"tp\": 2, \"used_gpus\": 2, \"note\": \"a0\"}, \"report\": {\"output_throughput_tok_s\": 400, \"mean_output_token_throughput_per_user\": 30, \"gpu_hours\": 2, \"duration_ms\": 3600000}}
{\"config\": {\"tp\": 4, \"used_gpus\": 4, \"note\": \"a1\"}, \"report\": {\"output_throughput_tok_s\": 1000, \"mean_output_token_throughput_per_user\": 20, \"gpu_hours\": 4, \"duration_ms\": 3600000}}
{\"config\": {\"tp\": 8, \"used_gpus\": 8, \"note\": \"a2\"}, \"report\": {\"output_throughput_tok_s\": 1600, \"mean_output_token_throughput_per_user\": 10, \"gpu_hours\": 8, \"duration_ms\": 3600000}}
";
    let array = "[
{\"config\": {\"tp\": 4, \"used_gpus\": 4, \"note\": \"c6\"}, \"report\": {\"mean_output_token_throughput_per_user\": 40, \"gpu_hours\": 4, \"duration_ms\": 3600000}},
{\"config\": {\"tp\": 2, \"used_gpus\": 2, \"note\": \"c7\"}, \"report\": {\"output_throughput_tok_s\": 400, \"mean_output_token_throughput_per_user\": 30, \"gpu_hours\": 2, \"duration_ms\": 3600000}}
]";
    let (_dir, paths) = files(&[
        ("a.jsonl", lines),
        ("b.csv", SCORE_B),
        ("c.json", array),
        ("a.csv", SCORE_A),
        ("c.csv", SCORE_C),
    ]);
    let cfg = fixture("kimi-pareto.yaml");
    let csv_only = run(
        &["score", "--config", cfg.to_str().unwrap()],
        &[paths[3].clone(), paths[1].clone(), paths[4].clone()],
        &["--format", "json"],
    );
    assert_eq!(csv_only.code, 0, "{}", csv_only.stderr);
    let mixed = run(
        &["score", "--config", cfg.to_str().unwrap()],
        &paths[..3],
        &["--format", "json"],
    );
    assert_eq!(mixed.code, 0, "{}", mixed.stderr);
    assert_eq!(mixed.stdout, csv_only.stdout);
    // The middle shard from standard input, spooled and read again.
    let args: Vec<OsString> = vec![
        "score".into(),
        "--config".into(),
        cfg.into(),
        paths[0].clone().into(),
        "-".into(),
        paths[2].clone().into(),
        "--format".into(),
        "json".into(),
    ];
    let piped = run_with_stdin(&args, SCORE_B);
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert_eq!(piped.stdout, csv_only.stdout);
}

#[test]
fn score_shard_errors_name_the_file() {
    let cfg = fixture("kimi-latency.yaml");
    let cfg = cfg.to_str().unwrap();
    let (_dir, paths) = files(&[
        ("a.csv", "used_gpus,mean_e2e_latency_ms\n1,5\n2,6\n"),
        ("b.csv", "# c\nused_gpus,mean_e2e_latency_ms\n1,5\n1,nan\n"),
        ("c.csv", "used_gpus,gpu_hours,mean_e2e_latency_ms\n1,2,3\n"),
        (
            "d.jsonl",
            "{\"report\": {}}\n{\"report\": {\"gpu_hours\": true}}\n",
        ),
        ("e.jsonl", "{\"report\": {}, \"trial\": 3}\n"),
    ]);
    let pair = |k: usize| [paths[0].clone(), paths[k].clone()];
    let cases = [
        (
            pair(1),
            format!(
                "{}: line 4 (row 3), column `mean_e2e_latency_ms`: value is NaN",
                paths[1].display()
            ),
        ),
        (
            pair(2),
            format!(
                "{}: the CSV header differs from {}'s: `gpu_hours` is not in {}",
                paths[2].display(),
                paths[0].display(),
                paths[0].display()
            ),
        ),
        (
            pair(3),
            format!(
                "{}: line 2 (row 3), column `gpu_hours`: must be a number, got a bool",
                paths[3].display()
            ),
        ),
        (
            pair(4),
            format!(
                "{}: line 1 (row 2): unknown key `trial`",
                paths[4].display()
            ),
        ),
    ];
    for (inputs, want) in cases {
        let r = run(&["score", "--config", cfg], &inputs, &[]);
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(r.stderr.contains(&want), "want {want:?}, got {}", r.stderr);
        assert!(r.stdout.is_empty());
    }
    let r = run(
        &["score", "--config", cfg],
        &[paths[2].clone(), paths[0].clone()],
        &[],
    );
    assert!(
        r.stderr.contains("it lacks `gpu_hours`") && r.stderr.contains("same columns"),
        "{}",
        r.stderr
    );
    // standard input once; a sweep's files alone
    let r = run(&["score", "--config", cfg, "-", "-"], &[], &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("given twice"), "{}", r.stderr);
    let (_dir, sweep) = files(&[(
        "result.json",
        "{\"sweeper_version\": \"0.1.0\", \"trials\": []}",
    )]);
    let r = run(
        &["score", "--config", cfg],
        &[paths[0].clone(), sweep[0].clone()],
        &[],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("is scored alone"), "{}", r.stderr);
    let r = run(&["front", "-o", "x:max", "-", "-"], &[], &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("give `-` at most once"), "{}", r.stderr);
}

/// The example shards are the rows of `examples/serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv`,
/// split in three: what `docs/large-sweeps.md` shows.
#[test]
fn the_example_shards_reduce_to_the_whole_file() {
    let shards: Vec<PathBuf> = (1..=3)
        .map(|k| example(&format!("shards/part-{k}.csv")))
        .collect();
    let whole = [example("serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv")];
    for config in ["serving/pareto.yaml", "serving/throughput-per-gpu.yaml"] {
        let cfg = example(config);
        let args = ["score", "--config", cfg.to_str().unwrap()];
        let show = ["--show", "config_id,tp,conc"];
        let parts = run(&args, &shards, &show);
        let one = run(&args, &whole, &show);
        assert_eq!(parts.code, 0, "{}", parts.stderr);
        assert_eq!(parts.stdout, one.stdout, "{config}");
        assert_eq!(parts.stderr, one.stderr, "{config}");
    }
    let objectives = [
        "-o",
        "output_throughput_tok_s:max",
        "-o",
        "mean_output_token_throughput_per_user:max",
    ];
    let mut args = vec!["front"];
    args.extend(objectives);
    let parts = run(&args, &shards, &[]);
    let one = run(&args, &whole, &[]);
    assert_eq!(parts.code, 0, "{}", parts.stderr);
    assert_eq!(parts.stdout, one.stdout);
    assert!(Path::new(&shards[0]).exists());
}

#[test]
fn help_shows_a_shard_reduce() {
    for command in ["front", "score"] {
        let r = sweeper([command, "--help"]);
        assert_eq!(r.code, 0);
        for want in ["Several", "read as one table", "examples/shards/part-*.csv"] {
            assert!(r.stdout.contains(want), "{command}: {want}: {}", r.stdout);
        }
    }
}
