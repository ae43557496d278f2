//! `sweeper score` end to end, on copied real serving rows.
//!
//! Expected orders were computed independently (a short Python script over the same CSV,
//! applying SPEC 3 literally) and are written down here.

use crate::common::{KIMI, example, fixture, sweeper, temp_file};
use serde_json::Value;

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn indices(list: &Value) -> Vec<u64> {
    list.as_array()
        .expect("a JSON array")
        .iter()
        .map(|c| c["index"].as_u64().expect("an index"))
        .collect()
}

fn score_json(config: &str, reports: &std::path::Path) -> (Value, String) {
    let run = sweeper([
        "score".as_ref(),
        "--config".as_ref(),
        fixture(config).as_os_str(),
        reports.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    (json(&run.stdout), run.stderr)
}

#[test]
fn ranks_by_throughput_per_gpu_within_the_budget() {
    let (list, stderr) = score_json("kimi-throughput-per-gpu-4.yaml", &fixture(KIMI));
    assert_eq!(
        indices(&list),
        [7, 6, 5, 2, 3, 4, 0, 1, 8, 13, 12, 11, 9, 10]
    );
    assert!(
        stderr.contains("22 candidates, 14 feasible, 8 over the GPU budget of 4 (dropped)"),
        "{stderr}"
    );
    let first = &list[0];
    // Row 7: 4 GPUs, output tok/s / avg_gpu equals the source's own output tok/s/gpu.
    assert_eq!(first["used_gpus"], 4.0);
    assert!((first["score"].as_f64().unwrap() - 65.635_727_689_465_81).abs() < 1e-9);
    assert!(first.get("objectives").is_none());
    assert_eq!(first["config"]["tp"], 4);
    assert_eq!(first["config"]["offloading"], "lmcache");
    let metrics = first["metrics"].as_object().unwrap();
    assert!(metrics.contains_key("output_throughput_tok_s"));
    assert!(!metrics.contains_key("src_output_tput_per_gpu"));
    let scores: Vec<f64> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
}

#[test]
fn ranks_latency_lowest_first() {
    let (list, _) = score_json("kimi-latency.yaml", &fixture(KIMI));
    assert_eq!(
        indices(&list),
        [
            17, 18, 16, 19, 14, 20, 21, 2, 8, 0, 1, 3, 4, 5, 6, 9, 10, 11, 7, 12, 13, 15
        ]
    );
    // The score of a minimized objective is the negated latency.
    assert!(list[0]["score"].as_f64().unwrap() < 0.0);
}

#[test]
fn pareto_front_sorted_by_tok_s_user() {
    let (list, stderr) = score_json("kimi-pareto.yaml", &fixture(KIMI));
    assert_eq!(indices(&list), [7, 2, 0, 19, 18, 17, 16]);
    assert!(
        stderr.contains("front: 7 of 22 feasible candidates"),
        "{stderr}"
    );
    let mut last_x = f64::NEG_INFINITY;
    for c in list.as_array().unwrap() {
        let objectives = c["objectives"].as_object().expect("objectives for pareto");
        let keys: Vec<&str> = objectives.keys().map(String::as_str).collect();
        assert_eq!(keys, ["throughput_per_gpu", "throughput_per_user"]);
        let x = objectives["throughput_per_user"].as_f64().unwrap();
        assert!(x >= last_x);
        last_x = x;
        // The headline score is the first objective's raw value.
        assert_eq!(c["score"], objectives["throughput_per_gpu"]);
    }
}

#[test]
fn readme_example_table() {
    let run = sweeper([
        "score".as_ref(),
        "--config".as_ref(),
        example("serving/throughput-per-gpu.yaml").as_os_str(),
        example("serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv").as_os_str(),
        "--show".as_ref(),
        "config_id,tp,offloading,conc".as_ref(),
        "--top".as_ref(),
        "5".as_ref(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!("score_readme_example", run.stdout);
    assert!(
        run.stderr.contains("41 candidates, 41 feasible"),
        "{}",
        run.stderr
    );
}

#[test]
fn pareto_table_on_the_example_rows() {
    let run = sweeper([
        "score".as_ref(),
        "-c".as_ref(),
        example("serving/pareto.yaml").as_os_str(),
        example("serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv").as_os_str(),
        "--show".as_ref(),
        "config_id,tp,offloading,conc".as_ref(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!("score_pareto_example", run.stdout);
}

#[test]
fn csv_output_has_header_and_ranks() {
    let run = sweeper([
        "score".as_ref(),
        "--config".as_ref(),
        fixture("kimi-throughput-per-gpu-4.yaml").as_os_str(),
        fixture(KIMI).as_os_str(),
        "--format".as_ref(),
        "csv".as_ref(),
        "--top".as_ref(),
        "3".as_ref(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut rdr = csv::Reader::from_reader(run.stdout.as_bytes());
    let headers = rdr.headers().unwrap().clone();
    assert_eq!(&headers[0], "rank");
    assert_eq!(&headers[1], "index");
    assert_eq!(&headers[3], "score");
    assert!(headers.iter().any(|h| h == "tp"));
    assert_eq!(headers.iter().filter(|h| *h == "used_gpus").count(), 1);
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(
        rows.iter().map(|r| r[1].to_owned()).collect::<Vec<_>>(),
        ["7", "6", "5"]
    );
}

#[test]
fn json_lines_and_arrays_with_missing_keys() {
    // Row 1 has no latency: it scores -inf for e2e_latency and ranks last, written "-inf".
    let lines = "\
{\"config\": {\"used_gpus\": 2, \"name\": \"a\"}, \"report\": {\"mean_e2e_latency_ms\": 900}}
{\"config\": {\"used_gpus\": 1, \"name\": \"b\"}, \"report\": {\"output_throughput_tok_s\": 1e6}}
{\"config\": {\"used_gpus\": 1, \"name\": \"c\"}, \"report\": {\"mean_e2e_latency_ms\": 900, \"model\": \"m\"}}
";
    let (_d, path) = temp_file("r.jsonl", lines);
    let (list, _) = score_json("kimi-latency.yaml", &path);
    // 0 and 2 tie at 900 ms: fewer GPUs first.
    assert_eq!(indices(&list), [2, 0, 1]);
    assert_eq!(list[2]["score"], "-inf");
    let array = format!(
        "[{}]",
        lines.trim_end().lines().collect::<Vec<_>>().join(",")
    );
    let (_d, path) = temp_file("r.json", array);
    let (list2, _) = score_json("kimi-latency.yaml", &path);
    assert_eq!(list2, list);
}

#[test]
fn used_gpus_from_the_search_space_rule() {
    let csv = "tp,replicas,output_throughput_tok_s\n4,2,100\n4,4,500\n2,1,50\n";
    let (_d, path) = temp_file("r.csv", csv);
    let (list, stderr) = score_json("product-gpus.yaml", &path);
    assert_eq!(indices(&list), [0, 2]);
    assert_eq!(list[0]["used_gpus"], 8.0);
    assert!(stderr.contains("1 over the GPU budget of 8"), "{stderr}");
}

#[test]
fn no_feasible_candidate_exits_1() {
    let run = sweeper([
        "score".as_ref(),
        "--config".as_ref(),
        fixture("budget-1.yaml").as_os_str(),
        fixture(KIMI).as_os_str(),
    ]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.is_empty());
    assert!(
        run.stderr
            .contains("no feasible candidate: all 22 use more than 1 GPUs"),
        "{}",
        run.stderr
    );
}

#[test]
fn top_is_for_rankings_only() {
    let run = sweeper([
        "score".as_ref(),
        "--config".as_ref(),
        fixture("kimi-pareto.yaml").as_os_str(),
        fixture(KIMI).as_os_str(),
        "--top".as_ref(),
        "2".as_ref(),
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("--top applies to rankings"),
        "{}",
        run.stderr
    );
}

fn score_error(config: &str, reports_name: &str, reports: &str) -> (i32, String) {
    let (_d, path) = temp_file(reports_name, reports);
    let run = sweeper([
        "score".as_ref(),
        "--config".as_ref(),
        fixture(config).as_os_str(),
        path.as_os_str(),
    ]);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    (run.code, run.stderr)
}

#[test]
fn bad_inputs_exit_1_naming_row_and_column() {
    let cases = [
        (
            "r.csv",
            "# c\nused_gpus,mean_e2e_latency_ms\n1,5\n1,nan\n",
            "line 4 (row 1), column `mean_e2e_latency_ms`: value is NaN",
        ),
        (
            "r.csv",
            "used_gpus,gpu_hours\n1,2\n1\n",
            "line 3 (row 1): 1 fields where the header has 2",
        ),
        (
            "r.csv",
            "used_gpus,gpu_hours\n1,two\n",
            "line 2 (row 0), column `gpu_hours`: not a number: \"two\"",
        ),
        (
            "r.csv",
            "used_gpus,gpu_hours\nfour,2\n",
            "line 2 (row 0), column `used_gpus`: must be a number",
        ),
        ("r.csv", "# nothing here\n", "no data rows"),
        ("r.jsonl", "", "no data rows"),
        (
            "r.jsonl",
            "{\"report\": {}}\n{\"report\": {\"gpu_hours\": true}}\n",
            "line 2 (row 1), column `gpu_hours`: must be a number, got a bool",
        ),
        (
            "r.jsonl",
            "{\"report\": {}}\n{\"report\": \n",
            "line 2 (row 1): invalid JSON",
        ),
        (
            "r.jsonl",
            "{\"report\": {}, \"trial\": 3}\n",
            "line 1 (row 0): unknown key `trial`",
        ),
    ];
    for (name, text, want) in cases {
        let (code, stderr) = score_error("kimi-latency.yaml", name, text);
        assert_eq!(code, 1, "{text:?}: {stderr}");
        assert!(stderr.contains(want), "{text:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn config_and_file_errors() {
    let (code, stderr) = score_error("invalid-goal.yaml", "r.csv", "used_gpus\n1\n");
    assert_eq!(code, 1);
    assert!(stderr.contains("invalid config"), "{stderr}");
    let (code, stderr) = score_error("missing.yaml", "r.csv", "used_gpus\n1\n");
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot read config"), "{stderr}");
    let run = sweeper([
        "score".as_ref(),
        "--config".as_ref(),
        fixture("kimi-latency.yaml").as_os_str(),
        "no/such/file.csv".as_ref(),
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("cannot read no/such/file.csv"),
        "{}",
        run.stderr
    );
}

#[test]
fn help_teaches_with_examples() {
    let run = sweeper(["score", "--help"]);
    assert_eq!(run.code, 0);
    for want in [
        "Examples",
        "JSON Lines",
        "--top",
        "Exit status",
        "runs/quickstart/journal.jsonl",
        "runs/quickstart/result.json",
    ] {
        assert!(run.stdout.contains(want), "{want}: {}", run.stdout);
    }
}

#[test]
fn silent_zeros_and_empty_cells_are_warned_about_once() {
    // no gpu_hours/duration_ms in two rows: their throughput_per_gpu reads 0 (SPEC 3)
    let (_d, path) = temp_file(
        "r.csv",
        "used_gpus,output_throughput_tok_s,gpu_hours,duration_ms,mean_e2e_latency_ms\n\
         4,400,4,3600000,\n\
         2,300,,,10\n\
         1,100,,,\n",
    );
    let (list, stderr) = score_json("kimi-throughput-per-gpu-4.yaml", &path);
    assert_eq!(list.as_array().unwrap().len(), 3);
    let per_gpu: Vec<&str> = stderr.lines().filter(|l| l.contains("read 0")).collect();
    assert_eq!(per_gpu.len(), 1, "{stderr}");
    assert!(per_gpu[0].contains("2 of 3 reports"), "{stderr}");
    assert!(per_gpu[0].contains("gpu_hours or duration_ms"), "{stderr}");
    assert!(per_gpu[0].contains("2 of them give used_gpus"), "{stderr}");
    // one line per column with empty cells, with the count
    let empty: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("empty cell"))
        .collect();
    assert_eq!(empty.len(), 3, "{stderr}");
    assert!(
        stderr.contains("column `gpu_hours`: 2 empty cells"),
        "{stderr}"
    );
    assert!(
        stderr.contains("column `mean_e2e_latency_ms`: 2 empty cells"),
        "{stderr}"
    );
    // a goal that does not divide by GPUs says nothing about them
    let run = sweeper([
        "score".as_ref(),
        "--config".as_ref(),
        fixture("kimi-latency.yaml").as_os_str(),
        path.as_os_str(),
    ]);
    assert!(!run.stderr.contains("read 0"), "{}", run.stderr);
}

/// A named pipe (as `<(zcat rows.csv.gz)` gives) cannot be read twice: it is copied to a
/// temporary file as it is read, so the shown rows can be read again from there.
#[cfg(unix)]
#[test]
fn reads_a_named_pipe_like_a_file() {
    // 100, 125 and 25 tok/s/gpu over one hour
    let csv = "tp,used_gpus,output_throughput_tok_s,gpu_hours,duration_ms\n\
               1,1,100,1,3600000\n4,4,500,4,3600000\n2,2,50,2,3600000\n";
    let (dir, path) = temp_file("r.csv", csv);
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, csv).unwrap())
    };
    let (piped, _) = score_json("kimi-throughput-per-gpu-4.yaml", &fifo);
    writer.join().unwrap();
    let (file, _) = score_json("kimi-throughput-per-gpu-4.yaml", &path);
    assert_eq!(piped, file);
    assert_eq!(indices(&piped), [1, 0, 2]);
}

#[test]
fn an_objective_whose_key_no_row_has_is_named_with_the_keys_that_look_like_it() {
    // Issue 36 item 2: the user's own benchmark rows, with TPOT where tok/s/user should be
    let (_dir, rows) = temp_file(
        "rows.csv",
        "tp,conc,used_gpus,output_throughput_tok_s,mean_ttft_ms,mean_tpot_ms\n1,8,1,900,120,20\n2,16,2,1500,150,25\n",
    );
    let run = sweeper([
        "score",
        "--config",
        example("serving/pareto.yaml").to_str().unwrap(),
        rows.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "sweeper: warning: no row has `mean_output_token_throughput_per_user`, the report key of throughput_per_user, so throughput_per_user reads 0 in all 2 rows; keys that look like it: mean_tpot_ms; rename or convert one to `mean_output_token_throughput_per_user` in the reports (tok/s/user is 1000 / mean_tpot_ms)\n"
        ),
        "{}",
        run.stderr
    );
    // the key that is there draws no warning
    assert!(
        !run.stderr.contains("no row has `output_throughput_tok_s`"),
        "{}",
        run.stderr
    );
}
