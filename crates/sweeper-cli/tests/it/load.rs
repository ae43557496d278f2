//! A load searched as a parameter (issue 36, item 1): concurrency levels swept as a list,
//! the way serving benchmarks do, end to end: `validate`, `run` (one column, the level as
//! the candidate's load and as the plot's label), `evaluate --candidate`, a command
//! evaluator's request, an open-loop `request_rate`, and the refusals.

use crate::common::{example, sweeper, sweeper_in, text};
use serde_json::Value;
use std::path::Path;

const LEVELS: [u64; 6] = [4, 8, 16, 32, 64, 128];

fn csv_rows(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let body = std::fs::read_to_string(path).unwrap();
    let mut lines = body.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_owned)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(str::to_owned).collect())
        .collect();
    (header, rows)
}

#[test]
fn validate_names_the_searched_concurrency_as_the_load() {
    let run = sweeper([
        "validate",
        example("concurrency-sweep.yaml").to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("  load") || l.starts_with("  workload"))
        .collect();
    assert_eq!(
        lines,
        [
            "  workload         synthetic isl=1024 osl=1024 num_request_ratio=10",
            "  load             concurrency [4..128] (searched)",
        ]
    );
    let run = sweeper([
        "validate",
        example("concurrency-sweep.yaml").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        v["load"],
        serde_json::json!({"kind": "searched", "parameter": "concurrency", "min": 4.0, "max": 128.0})
    );
}

#[test]
fn a_concurrency_sweep_runs_every_level_as_the_load_in_one_column() {
    let dir = tempfile::tempdir().unwrap();
    let config = example("concurrency-sweep.yaml");
    let out = sweeper_in(
        &[
            "run",
            config.to_str().unwrap(),
            "--out",
            "o",
            "--no-progress",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("24 trials: 24 feasible"),
        "{}",
        text(&out.stderr)
    );
    let o = dir.path().join("o");
    for file in ["trials.csv", "result.csv"] {
        let (header, rows) = csv_rows(&o.join(file));
        let columns: Vec<&String> = header.iter().filter(|h| *h == "concurrency").collect();
        assert_eq!(columns.len(), 1, "{file}: {header:?}");
        assert!(!header.iter().any(|h| h == "kv_load_ratio"), "{header:?}");
        let at = header.iter().position(|h| h == "concurrency").unwrap();
        let reported = header
            .iter()
            .position(|h| h == "report.concurrency")
            .unwrap();
        for row in &rows {
            let level: u64 = row[at].parse().unwrap();
            assert!(LEVELS.contains(&level), "{file}: {row:?}");
            // the built-in model ran the candidate at its level
            assert_eq!(
                row[reported].parse::<f64>().unwrap(),
                level as f64,
                "{row:?}"
            );
        }
        if file == "trials.csv" {
            // the grid: every tp at every level, once
            let tp = header.iter().position(|h| h == "tp").unwrap();
            let mut seen: Vec<(String, u64)> = rows
                .iter()
                .map(|r| (r[tp].clone(), r[at].parse().unwrap()))
                .collect();
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), 24);
        }
    }
    // the journal and result.json carry the level among the candidate's configuration
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(o.join("result.json")).unwrap()).unwrap();
    for c in result["candidates"].as_array().unwrap() {
        let level = c["config"]["concurrency"].as_u64().unwrap();
        assert!(LEVELS.contains(&level), "{c}");
    }
    assert_eq!(
        result["columns"],
        serde_json::json!(["tp", "concurrency", "kv_load_ratio", "kv_capacity_tokens"])
    );
    // the plot names the searched load and labels each front point with its level
    let svg = std::fs::read_to_string(o.join("front.svg")).unwrap();
    assert!(
        svg.contains("ISL 1024 · OSL 1024 · concurrency 4–128 (searched) · 24 trials"),
        "subtitle"
    );
    assert!(svg.contains("labels: concurrency"), "legend");
    let fronts = result["candidates"].as_array().unwrap().len();
    let labels = svg.matches("paint-order=\"stroke\">").count();
    assert!(
        labels >= fronts.min(3),
        "{labels} labels for {fronts} points"
    );
    // `--label` given by hand wins, and `--label ''` draws none
    let out = sweeper_in(
        &["plot", "o", "--out", "tp.svg", "--label", "tp"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let svg = std::fs::read_to_string(dir.path().join("tp.svg")).unwrap();
    assert!(svg.contains("labels: tp"));
    let out = sweeper_in(
        &["plot", "o", "--out", "none.svg", "--label", ""],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let svg = std::fs::read_to_string(dir.path().join("none.svg")).unwrap();
    assert!(!svg.contains("labels:"));
}

#[test]
fn evaluate_takes_the_level_from_the_candidate() {
    let run = sweeper([
        "evaluate",
        example("concurrency-sweep.yaml").to_str().unwrap(),
        "--candidate",
        r#"{"tp": 2, "concurrency": 64}"#,
    ]);
    // today's main: "no load: neither the request nor its workload sets concurrency, ..."
    assert_eq!(run.code, 0, "{}", run.stderr);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["status"], "feasible", "{v}");
    assert_eq!(v["request"]["concurrency"], 64);
    assert_eq!(v["request"]["parameters"], serde_json::json!({"tp": 2}));
    assert_eq!(
        v["request"]["workload"],
        serde_json::json!({"isl": 1024, "osl": 1024, "num_request_ratio": 10})
    );
    assert_eq!(v["candidate"]["config"]["concurrency"], 64);
    assert_eq!(v["report"]["concurrency"], 64.0);
    // a level that is no load is refused before evaluating, naming it
    let run = sweeper([
        "evaluate",
        example("concurrency-sweep.yaml").to_str().unwrap(),
        "--candidate",
        r#"{"tp": 2, "concurrency": 2.5}"#,
    ]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains(
            "concurrency = 2.5 is not a load: it is a whole number of requests in flight > 0"
        ),
        "{}",
        run.stderr
    );
}

/// A command evaluator that fails when a load arrives among the parameters and reports
/// the request's top-level load back.
const ECHO: &str = r#"import json, sys
c = json.load(sys.stdin)
p = c["parameters"]
for key in ("concurrency", "request_rate"):
    if key in p:
        print(f"{key} among the parameters", file=sys.stderr)
        sys.exit(1)
conc, rate = c.get("concurrency"), c.get("request_rate")
load = conc if conc is not None else rate
if load is None or c["workload"].get("concurrency") is not None:
    print("no top-level load", file=sys.stderr)
    sys.exit(1)
tp = int(p["tp"])
json.dump({
    "output_throughput_tok_s": 100.0 * tp * load / (1 + load / 16),
    "mean_output_token_throughput_per_user": 100.0 / (1 + load / 16),
    "gpu_hours": tp * 0.25, "duration_ms": 900000,
    "seen_concurrency": -1 if conc is None else conc,
    "seen_request_rate": -1 if rate is None else rate,
}, sys.stdout)
"#;

fn echo_config(dir: &Path, parameter: &str) -> String {
    std::fs::write(dir.join("echo.py"), ECHO).unwrap();
    let yaml = format!(
        "goal: {{target: pareto}}
workload: {{isl: 1000, osl: 200, num_request_ratio: 2}}
search_space:
  gpu_budget: 4
  used_gpus: [tp]
  parameters:
    tp: {{values: [1, 4]}}
    {parameter}
evaluator:
  command: [python3, echo.py]
sweep: {{algorithm: grid, parallel_evals: 2}}
"
    );
    std::fs::write(dir.join("c.yaml"), yaml).unwrap();
    "c.yaml".to_owned()
}

#[test]
fn a_command_evaluator_receives_the_level_as_the_request_load() {
    let dir = tempfile::tempdir().unwrap();
    let config = echo_config(dir.path(), "concurrency: {values: [2, 32]}");
    let out = sweeper_in(&["run", &config, "--out", "o", "--no-progress"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("4 trials: 4 feasible"),
        "{}",
        text(&out.stderr)
    );
    let (header, rows) = csv_rows(&dir.path().join("o/trials.csv"));
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(header.iter().filter(|h| *h == "concurrency").count(), 1);
    for row in rows {
        assert_eq!(
            row[col("concurrency")],
            row[col("seen_concurrency")].replace(".0", "")
        );
        assert_eq!(row[col("seen_request_rate")], "-1.0");
    }
}

#[test]
fn a_searched_request_rate_is_an_open_loop_load() {
    let dir = tempfile::tempdir().unwrap();
    let config = echo_config(dir.path(), "request_rate: {values: [0.5, 4]}");
    let out = sweeper_in(&["validate", &config], dir.path());
    assert!(
        text(&out.stdout)
            .contains("  load             request_rate [0.5..4] (searched, open loop)"),
        "{}",
        text(&out.stdout)
    );
    let out = sweeper_in(&["run", &config, "--out", "o", "--no-progress"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (header, rows) = csv_rows(&dir.path().join("o/trials.csv"));
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(header.iter().filter(|h| *h == "request_rate").count(), 1);
    assert_eq!(rows.len(), 4);
    for row in rows {
        assert_eq!(
            row[col("request_rate")].parse::<f64>().unwrap(),
            row[col("seen_request_rate")].parse::<f64>().unwrap()
        );
        assert_eq!(row[col("seen_concurrency")], "-1.0");
    }
    // the built-in model runs it as an open loop at the candidate's rate
    let builtin = "goal: {target: pareto}
workload: {isl: 1024, osl: 1024, num_request_ratio: 10}
search_space:
  gpu_budget: 8
  used_gpus: [tp]
  parameters:
    tp: {values: [1, 2]}
    request_rate: {values: [0.5, 2, 8]}
evaluator:
  builtin: {model: qwen3-32b-fp8, gpu: h200}
";
    std::fs::write(dir.path().join("b.yaml"), builtin).unwrap();
    let out = sweeper_in(
        &[
            "evaluate",
            "b.yaml",
            "--candidate",
            r#"{"tp": 2, "request_rate": 2}"#,
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["request"]["request_rate"], 2.0);
    assert_eq!(v["request"]["concurrency"], Value::Null);
    assert_eq!(v["candidate"]["config"]["request_rate"], 2);
    // the open loop's requests per second are the rate it was offered (below saturation)
    let rps = v["report"]["request_throughput_rps"].as_f64().unwrap();
    assert!((rps - 2.0).abs() < 0.05, "{rps}");
}

#[test]
fn a_fixed_load_beside_a_searched_one_is_refused_saying_which_to_drop() {
    let (_dir, path) = crate::common::temp_file(
        "c.yaml",
        "workload: {isl: 1024, osl: 1024, num_request_ratio: 10, concurrency: 64}
search_space:
  parameters:
    concurrency: {values: [4, 8, 16]}
",
    );
    let run = sweeper(["validate", path.to_str().unwrap()]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "workload.concurrency: the workload fixes the load and search_space.parameters.concurrency searches it; drop workload.concurrency to sweep the concurrency levels, or drop the parameter to run at one load"
        ),
        "{}",
        run.stderr
    );
}
