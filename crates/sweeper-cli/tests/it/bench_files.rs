//! `sweeper score` on serving benchmarks' own result files and on the user's own benchmark
//! rows (issue 36 item 2): the vLLM, SGLang and genai-perf readers, `--gpus`, `--map` and
//! `--per-user-from-tpot`. The sample files are `examples/bench-results/` (see its README).
//!
//! Expected values are computed here from the sample files' own numbers, by SPEC 2's
//! formulas: tok/s/gpu = output tok/s / `avg_gpu`, `avg_gpu` = `gpu_hours` / (`duration_ms`
//! / 3,600,000), and tok/s/user = 1000 / TPOT when a file has no per-user rate.

use crate::common::{sweeper, temp_file};
use serde_json::Value;

const PARETO: &str = "../../examples/serving/pareto.yaml";
const VLLM_C8: &str = "../../examples/bench-results/vllm/openai-c8-tp2.json";
const SGLANG: &str = "../../examples/bench-results/sglang-runs.jsonl";
const GENAI_C16: &str =
    "../../examples/bench-results/genai-perf/c16/profile_export_genai_perf.json";

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn file_json(path: &str) -> Value {
    let dir = env!("CARGO_MANIFEST_DIR");
    json(&std::fs::read_to_string(format!("{dir}/{path}")).unwrap())
}

/// `score --format json` of `args` under the pareto config: (candidates, stderr).
fn front(args: &[&str]) -> (Vec<Value>, String) {
    let mut all = vec!["score", "--config", PARETO, "--format", "json"];
    all.extend_from_slice(args);
    let run = sweeper(&all);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let list = json(&run.stdout).as_array().unwrap().clone();
    (list, run.stderr)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs()
}

#[test]
fn a_vllm_result_is_read_with_its_gpu_count_from_metadata() {
    let (list, stderr) = front(&[VLLM_C8]);
    assert!(
        stderr.starts_with(
            "sweeper: ../../examples/bench-results/vllm/openai-c8-tp2.json: read as vllm bench serve --save-result (--input-format vllm)\n"
        ),
        "{stderr}"
    );
    let file = file_json(VLLM_C8);
    let c = &list[0];
    // `--metadata used_gpus=2 tp=2` wrote strings; they are read as numbers
    assert_eq!(c["config"]["used_gpus"], 2);
    assert_eq!(c["config"]["tp"], 2);
    assert_eq!(c["config"]["max_concurrency"], 8);
    assert_eq!(c["config"]["request_rate"], "inf");
    let tok_s = file["output_throughput"].as_f64().unwrap();
    let m = &c["metrics"];
    assert_eq!(m["output_throughput_tok_s"].as_f64(), Some(tok_s));
    assert_eq!(
        m["duration_ms"].as_f64(),
        Some(file["duration"].as_f64().unwrap() * 1000.0)
    );
    assert_eq!(m["mean_ttft_ms"], file["mean_ttft_ms"]);
    assert_eq!(m["mean_itl_ms"], file["mean_itl_ms"]);
    let per_gpu = c["objectives"]["throughput_per_gpu"].as_f64().unwrap();
    assert!(close(per_gpu, tok_s / 2.0), "{per_gpu} vs {}", tok_s / 2.0);
    let per_user = c["objectives"]["throughput_per_user"].as_f64().unwrap();
    assert!(close(
        per_user,
        1000.0 / file["mean_tpot_ms"].as_f64().unwrap()
    ));
}

#[test]
fn the_vllm_runs_make_a_front_table() {
    let run = sweeper([
        "score",
        "--config",
        PARETO,
        "../../examples/bench-results/vllm/openai-c128-tp2.json",
        "../../examples/bench-results/vllm/openai-c32-tp2.json",
        VLLM_C8,
        "--show",
        "tp,max_concurrency",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "\
index  used_gpus  throughput_per_gpu (tok/s/gpu)  throughput_per_user (tok/s/user)  tp  max_concurrency
    0          2                         4119.73                             31.70   2              128
    1          2                         2446.95                             67.02   2               32
    2          2                         1080.90                            101.63   2                8
"
    );
}

#[test]
fn sglang_lines_with_python_infinity_are_read() {
    let (list, stderr) = front(&[SGLANG, "--gpus", "2"]);
    assert!(
        stderr.contains(
            "sweeper: ../../examples/bench-results/sglang-runs.jsonl: read as SGLang bench_serving --output-file (--input-format sglang)\n"
        ),
        "{stderr}"
    );
    assert_eq!(list.len(), 3, "every run is on the front");
    let text = std::fs::read_to_string(format!("{}/{SGLANG}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    assert!(
        text.contains("\"request_rate\": Infinity"),
        "the sample has Python's token"
    );
    // the unbounded run: no max_concurrency (null), rate `inf`
    let unbounded = list.iter().find(|c| c["index"] == 2).unwrap();
    assert_eq!(unbounded["config"]["request_rate"], "inf");
    assert!(unbounded["config"].get("max_concurrency").is_none());
    for c in &list {
        let m = &c["metrics"];
        let per_gpu = c["objectives"]["throughput_per_gpu"].as_f64().unwrap();
        let tok_s = m["output_throughput_tok_s"].as_f64().unwrap();
        assert!(close(per_gpu, tok_s / 2.0), "{c}");
        assert!(m["mean_e2e_latency_ms"].as_f64().unwrap() > 0.0);
        assert_eq!(c["used_gpus"], 2.0);
    }
}

#[test]
fn a_genai_perf_export_gets_a_nominal_hour_from_gpus() {
    let (list, stderr) = front(&[GENAI_C16, "--gpus", "8"]);
    assert!(
        stderr.contains(
            "read as genai-perf profile_export_genai_perf.json (--input-format genai-perf)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "sweeper: warning: 1 row has no run duration: each is given one nominal hour (duration_ms 3600000, gpu_hours = its GPU count), so that avg_gpu is its GPU count exactly; that duration_ms is not the run's\n"
        ),
        "{stderr}"
    );
    let file = file_json(GENAI_C16);
    let c = &list[0];
    let tok_s = file["output_token_throughput"]["avg"].as_f64().unwrap();
    // one nominal hour: avg_gpu is 8 exactly, so tok/s/gpu is exact too
    assert_eq!(
        c["objectives"]["throughput_per_gpu"].as_f64(),
        Some(tok_s / 8.0)
    );
    assert_eq!(
        c["objectives"]["throughput_per_user"],
        file["output_token_throughput_per_request"]["avg"]
    );
    assert_eq!(
        c["metrics"]["mean_ttft_ms"],
        file["time_to_first_token"]["avg"]
    );
    assert_eq!(
        c["metrics"]["mean_e2e_latency_ms"],
        file["request_latency"]["avg"]
    );
    assert_eq!(c["config"]["concurrency"], 16);
    assert_eq!(c["config"]["model"], "meta-llama/Llama-3.1-8B-Instruct");
}

#[test]
fn without_a_gpu_count_a_benchmark_file_is_warned_about() {
    let (list, stderr) = front(&[GENAI_C16]);
    assert_eq!(list[0]["objectives"]["throughput_per_gpu"], 0.0);
    assert!(
        stderr.contains("1 of 1 reports lack a positive gpu_hours or duration_ms"),
        "{stderr}"
    );
}

/// The rows: a CSV of the user's own benchmark.
const ROWS: &str = "tp,conc,used_gpus,output_throughput_tok_s,mean_ttft_ms,mean_tpot_ms\n1,8,1,900,120,20\n2,16,2,1500,150,25\n4,8,4,1200,90,8\n";

#[test]
fn the_users_rows_get_tok_s_gpu_and_tok_s_user_when_asked() {
    let (_d, rows) = temp_file("rows.csv", ROWS);
    let run = sweeper([
        "score",
        "--config",
        PARETO,
        rows.to_str().unwrap(),
        "--gpus",
        "used_gpus",
        "--per-user-from-tpot",
        "--map",
        "conc=concurrency",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // tok/s/gpu = tok/s / used_gpus; tok/s/user = 1000 / mean_tpot_ms; `mean_tpot_ms` is
    // a report key, not a config column; `conc` is shown as `concurrency`
    assert_eq!(
        run.stdout,
        "\
index  used_gpus  throughput_per_gpu (tok/s/gpu)  throughput_per_user (tok/s/user)  concurrency  tp
    0          1                             900                                50            8   1
    2          4                             300                               125            8   4
"
    );
    assert!(
        run.stderr.contains(
            "sweeper: warning: 3 rows have no run duration: each is given one nominal hour"
        ),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("no row has"), "{}", run.stderr);
}

#[test]
fn a_duration_in_the_rows_gives_gpu_hours() {
    let (_d, rows) = temp_file(
        "rows.csv",
        "tp,output_throughput_tok_s,duration_ms\n2,1000,1800000\n",
    );
    let (list, stderr) = front(&[rows.to_str().unwrap(), "--gpus", "tp"]);
    assert!(!stderr.contains("nominal hour"), "{stderr}");
    let c = &list[0];
    assert_eq!(c["metrics"]["gpu_hours"], 1.0); // 2 GPUs for half an hour
    assert_eq!(c["used_gpus"], 2.0);
    assert_eq!(c["objectives"]["throughput_per_gpu"], 500.0);
}

#[test]
fn the_hints_name_the_flags() {
    let (_d, rows) = temp_file("rows.csv", ROWS);
    let run = sweeper(["score", "--config", PARETO, rows.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("sweeper: hint: --per-user-from-tpot derives it from mean_tpot_ms\n"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("--gpus used_gpus derives it"),
        "{}",
        run.stderr
    );
    let (_d, lines) = temp_file(
        "v.jsonl",
        "{\"config\": {\"used_gpus\": 1}, \"report\": {\"output_throughput\": 900, \"duration_ms\": 60000}}\n",
    );
    let run = sweeper(["score", "--config", PARETO, lines.to_str().unwrap()]);
    assert!(
        run.stderr.contains(
            "sweeper: hint: --map output_throughput=output_throughput_tok_s reads that key as `output_throughput_tok_s`\n"
        ),
        "{}",
        run.stderr
    );
}

#[test]
fn vllm_output_throughput_in_json_lines_is_read_through_map() {
    let (_d, lines) = temp_file(
        "v.jsonl",
        "{\"config\": {\"used_gpus\": 2}, \"report\": {\"output_throughput\": 900, \"duration_ms\": 60000}}\n",
    );
    let (list, stderr) = front(&[
        lines.to_str().unwrap(),
        "--map",
        "output_throughput=output_throughput_tok_s",
        "--gpus",
        "used_gpus",
    ]);
    assert!(
        !stderr.contains("no row has `output_throughput_tok_s`"),
        "{stderr}"
    );
    assert_eq!(list[0]["metrics"]["output_throughput_tok_s"], 900.0);
    assert!(close(
        list[0]["objectives"]["throughput_per_gpu"]
            .as_f64()
            .unwrap(),
        450.0
    ));
}

#[test]
fn a_map_of_a_key_no_input_has_names_the_ones_there_are() {
    let (_d, rows) = temp_file("rows.csv", ROWS);
    let run = sweeper([
        "score",
        "--config",
        PARETO,
        rows.to_str().unwrap(),
        "--map",
        "cnc=concurrency",
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "sweeper: error: map cnc=concurrency: no input has a column or key `cnc`; the input has: `conc`, `mean_tpot_ms`, `mean_ttft_ms`, `output_throughput_tok_s`, `tp`, `used_gpus`\n"
    );
    let run = sweeper([
        "score",
        "--config",
        PARETO,
        rows.to_str().unwrap(),
        "--map",
        "conc",
    ]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("expected FROM=TO"), "{}", run.stderr);
    let run = sweeper([
        "score",
        "--config",
        PARETO,
        rows.to_str().unwrap(),
        "--map",
        "conc=tp",
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("after --map the header names `tp` twice"),
        "{}",
        run.stderr
    );
}

#[test]
fn formats_that_cannot_be_told_or_do_not_fit_are_refused() {
    let (_d, one) = temp_file(
        "r.json",
        "{\"output_throughput\": 10, \"duration\": 5, \"completed\": 3}\n",
    );
    let run = sweeper(["score", "--config", PARETO, one.to_str().unwrap()]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("give --input-format vllm or --input-format sglang"),
        "{}",
        run.stderr
    );
    let (list, _) = front(&[
        one.to_str().unwrap(),
        "--input-format",
        "sglang",
        "--gpus",
        "1",
    ]);
    assert_eq!(list[0]["metrics"]["output_throughput_tok_s"], 10.0);
    assert_eq!(list[0]["metrics"]["duration_ms"], 5000.0);
    let (_d, rows) = temp_file("rows.csv", ROWS);
    let run = sweeper([
        "score",
        "--config",
        PARETO,
        rows.to_str().unwrap(),
        "--input-format",
        "vllm",
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "--input-format vllm reads the JSON that vllm bench serve --save-result writes"
        ),
        "{}",
        run.stderr
    );
    let run = sweeper(["score", "--config", PARETO, GENAI_C16, "--gpus", "0"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("positive"), "{}", run.stderr);
}

#[test]
fn front_reads_a_column_under_the_name_map_gives_it() {
    let (_d, rows) = temp_file("rows.csv", ROWS);
    let run = sweeper([
        "front",
        rows.to_str().unwrap(),
        "--map",
        "mean_tpot_ms=tpot_ms",
        "-o",
        "output_throughput_tok_s:max",
        "-o",
        "tpot_ms:min",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // row 2 (1200 tok/s at 8 ms) dominates row 0 (900 at 20); 1 (1500 at 25) trades off
    assert_eq!(
        run.stdout,
        "\
index  output_throughput_tok_s  tpot_ms
    2                   1200.0      8.0
    1                   1500.0     25.0
"
    );
    // the column's own name no longer exists once renamed; an unused map is refused
    for (map, want) in [
        ("conc=t", "no -o objective names `t`"),
        ("output_throughput_tok_s=x", "name it `x` in -o"),
    ] {
        let run = sweeper([
            "front",
            rows.to_str().unwrap(),
            "--map",
            map,
            "-o",
            "output_throughput_tok_s:max",
            "-o",
            "mean_tpot_ms:min",
        ]);
        assert_eq!(run.code, 2, "{map}");
        assert!(run.stderr.contains(want), "{map}: {}", run.stderr);
    }
    // a FROM the input lacks: the reader names the columns there are
    let run = sweeper([
        "front",
        rows.to_str().unwrap(),
        "--map",
        "tpot=tpot_ms",
        "-o",
        "output_throughput_tok_s:max",
        "-o",
        "tpot_ms:min",
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("column `tpot` not found; the input has: tp, conc, used_gpus"),
        "{}",
        run.stderr
    );
}

#[test]
fn plot_reads_a_column_under_the_name_map_gives_it() {
    let (dir, rows) = temp_file("rows.csv", ROWS);
    let out = dir.path().join("rows.svg");
    let run = sweeper([
        "plot",
        rows.to_str().unwrap(),
        "--map",
        "mean_tpot_ms=tpot_ms",
        "-o",
        "output_throughput_tok_s:max",
        "-o",
        "tpot_ms:min",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.contains("tpot_ms"), "the axis is named as renamed");
}

/// A vLLM result of `tp` GPUs (given by `--metadata tp=N`) that met the SLA at `goodput`
/// requests/s over a 125 s run.
fn vllm_run(tp: u32, goodput: f64) -> String {
    serde_json::json!({
        "date": "20261201-101500", "endpoint_type": "openai", "backend": "openai",
        "model_id": "m", "tokenizer_id": "m", "num_prompts": 500, "tp": tp.to_string(),
        "request_rate": 4.0, "burstiness": 1.0, "max_concurrency": null, "duration": 125.0,
        "completed": 500, "failed": 0, "request_throughput": 4.0, "request_goodput": goodput,
        "output_throughput": 1024.0, "mean_ttft_ms": 300.0, "mean_tpot_ms": 20.0,
        "mean_itl_ms": 19.0, "p99_ttft_ms": 900.0
    })
    .to_string()
}

#[test]
fn the_configs_used_gpus_rule_counts_a_benchmarks_gpus_and_recommend_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("c.yaml");
    std::fs::write(
        &config,
        "goal:\n  target: min_gpus\n  min_goodput_rps: 3.8\n  sla: {ttft_ms: 2000, itl_ms: 30}\n\
         search_space:\n  gpu_budget: 8\n  used_gpus: [tp]\n  parameters:\n    tp: {values: [1, 2]}\n",
    )
    .unwrap();
    let (one, two) = (dir.path().join("tp1.json"), dir.path().join("tp2.json"));
    std::fs::write(&one, vllm_run(1, 2.0)).unwrap();
    std::fs::write(&two, vllm_run(2, 5.0)).unwrap();
    let run = sweeper([
        "score",
        "--config",
        config.to_str().unwrap(),
        one.to_str().unwrap(),
        two.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for c in json(&run.stdout).as_array().unwrap() {
        let tp = c["config"]["tp"].as_f64().unwrap();
        assert_eq!(c["used_gpus"].as_f64(), Some(tp), "{c}");
        let gpu_hours = c["metrics"]["gpu_hours"].as_f64().unwrap();
        assert!(close(gpu_hours, tp * 125.0 / 3600.0), "{c}");
        // vLLM's request_goodput is the requests/s that met the SLA: min_gpus reads it
        assert!(
            c["metrics"]["goodput_request_throughput_rps"]
                .as_f64()
                .unwrap()
                > 0.0
        );
    }
    let run = sweeper([
        "recommend",
        "--config",
        config.to_str().unwrap(),
        two.to_str().unwrap(),
        "--rate",
        "4",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("read as vllm bench serve --save-result"),
        "{}",
        run.stderr
    );
    let answer = json(&run.stdout);
    assert_eq!(answer["outcome"], "found");
    assert_eq!(answer["best"]["candidate"]["config"]["tp"], 2);
    assert_eq!(answer["best"]["candidate"]["used_gpus"], 2.0);
}
