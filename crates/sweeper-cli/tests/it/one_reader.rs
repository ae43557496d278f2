//! Every command that reads rows reads a benchmark's result file as `sweeper score` does
//! (issue 36 item 2): `front` and `plot` on SGLang's `bench_serving` JSON Lines, whose
//! unbounded request rate is Python's bare `Infinity`, get the rows and keys `score` gets,
//! say which format they read, and take the same reading flags.

use crate::common::{run_with_stdin, sweeper, temp_file};
use crate::plot::tooltips;
use serde_json::Value;

const SGLANG: &str = "../../examples/bench-results/sglang-runs.jsonl";
const VLLM_C8: &str = "../../examples/bench-results/vllm/openai-c8-tp2.json";
const NOTE: &str = "sweeper: ../../examples/bench-results/sglang-runs.jsonl: read as SGLang bench_serving --output-file (--input-format sglang)\n";

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// `score --format json` of the SGLang runs: each candidate's metrics, by index.
fn scored_metrics() -> Vec<(u64, Value)> {
    let run = sweeper([
        "score",
        "--config",
        "../../examples/serving/pareto.yaml",
        SGLANG,
        "--gpus",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let list = json(&run.stdout);
    list.as_array()
        .unwrap()
        .iter()
        .map(|c| (c["index"].as_u64().unwrap(), c["metrics"].clone()))
        .collect()
}

#[test]
fn front_reads_an_sglang_file_with_python_infinity_as_score_does() {
    let run = sweeper([
        "front",
        SGLANG,
        "-o",
        "output_throughput_tok_s:max",
        "-o",
        "mean_e2e_latency_ms:min",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, NOTE);
    let front = json(&run.stdout);
    let front = front.as_array().unwrap();
    assert_eq!(front.len(), 3, "each run trades throughput for latency");
    // the same numbers, under the same keys, as `score` reads
    for (index, metrics) in scored_metrics() {
        let row = front.iter().find(|r| r["index"] == index).unwrap();
        for key in ["output_throughput_tok_s", "mean_e2e_latency_ms"] {
            assert_eq!(row["values"][key], metrics[key], "row {index} {key}");
        }
    }
    // the exact table: the run with `request_rate: Infinity` is row 2
    let run = sweeper([
        "front",
        SGLANG,
        "-o",
        "output_throughput_tok_s:max",
        "-o",
        "request_rate:min",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "\
index  output_throughput_tok_s  request_rate
    0        3872.919818456884           8.0
    1        8858.131487889274          32.0
    2       11962.616822429907           inf
"
    );
}

#[test]
fn front_reads_an_sglang_file_from_standard_input() {
    let text = std::fs::read_to_string(format!("{}/{SGLANG}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let run = run_with_stdin(
        &[
            "front",
            "-",
            "-o",
            "output_throughput_tok_s:max",
            "-o",
            "mean_tpot_ms:min",
        ],
        &text,
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "sweeper: -: read as SGLang bench_serving --output-file (--input-format sglang)\n"
    );
    assert_eq!(
        run.stdout,
        "\
index  output_throughput_tok_s  mean_tpot_ms
    0        3872.919818456884          12.4
    1        8858.131487889274          22.7
    2       11962.616822429907          41.3
"
    );
}

#[test]
fn plot_draws_an_sglang_file_with_python_infinity() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sglang.svg");
    let run = sweeper([
        "plot",
        SGLANG,
        "-o",
        "output_throughput_tok_s:max",
        "-o",
        "mean_ttft_ms:min",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.starts_with(NOTE), "{}", run.stderr);
    let svg = std::fs::read_to_string(&out).unwrap();
    let tips = tooltips(&svg);
    assert_eq!(tips.len(), 3, "a mark per run");
    let unbounded = tips.iter().find(|t| t.starts_with("row 2 ")).unwrap();
    assert!(unbounded.contains("request_rate=inf"), "{unbounded}");
    assert!(
        unbounded.contains("output_throughput_tok_s = 11962.6"),
        "{unbounded}"
    );
}

#[test]
fn front_and_plot_take_the_reading_flags_of_score() {
    // --gpus fills gpu_hours from the run's duration, as for `score`
    let run = sweeper([
        "front",
        SGLANG,
        "--gpus",
        "2",
        "-o",
        "output_throughput_tok_s:max",
        "-o",
        "gpu_hours:min",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let front = json(&run.stdout);
    let file = std::fs::read_to_string(format!("{}/{SGLANG}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    // the shortest run (the unbounded one) uses the fewest GPU-hours: the front is it alone
    let [row] = front.as_array().unwrap().as_slice() else {
        panic!("one row: {front}")
    };
    assert_eq!(row["index"], 2);
    let run2 = json(
        file.lines()
            .nth(2)
            .unwrap()
            .replace("Infinity", "null")
            .as_str(),
    );
    let want = 2.0 * (run2["duration"].as_f64().unwrap() * 1000.0) / 3_600_000.0;
    assert_eq!(row["values"]["gpu_hours"].as_f64(), Some(want));
    // --per-user-from-tpot on a plain table: the derived key is a column
    let (dir, rows) = temp_file(
        "rows.csv",
        "tp,output_throughput_tok_s,mean_tpot_ms\n1,900,20\n2,1500,25\n",
    );
    let run = sweeper([
        "front",
        rows.to_str().unwrap(),
        "--per-user-from-tpot",
        "-o",
        "output_throughput_tok_s:max",
        "-o",
        "mean_output_token_throughput_per_user:max",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "\
index  output_throughput_tok_s  mean_output_token_throughput_per_user
    1                   1500.0                                   40.0
    0                    900.0                                   50.0
"
    );
    // --input-format forces the reader, as for `score`
    let out = dir.path().join("forced.svg");
    let run = sweeper([
        "plot",
        SGLANG,
        "--input-format",
        "sglang",
        "-o",
        "output_throughput_tok_s:max",
        "-o",
        "mean_ttft_ms:min",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = sweeper([
        "front",
        rows.to_str().unwrap(),
        "--input-format",
        "vllm",
        "-o",
        "tp:max",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "--input-format vllm reads the JSON that vllm bench serve --save-result writes"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn a_benchmark_key_its_reader_renames_is_named_in_the_error() {
    let run = sweeper([
        "front",
        VLLM_C8,
        "-o",
        "output_throughput:max",
        "-o",
        "mean_ttft_ms:min",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "sweeper: error: line 1 (row 0), column `output_throughput`: vllm bench serve --save-result writes `output_throughput`, which is read as `output_throughput_tok_s` (as `sweeper score` reads it); name `output_throughput_tok_s`\n"
    );
    let run = sweeper([
        "front",
        VLLM_C8,
        "-o",
        "output_throughput_tok_s:max",
        "-o",
        "no_such_key:min",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("column `no_such_key` not found; the input has: backend, burstiness"),
        "{}",
        run.stderr
    );
}
