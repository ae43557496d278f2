//! The charts of the sizing and cost targets (issue 34): the cost chart (dollars per
//! million output tokens against tok/s/user, at the goal's price) from a sweep and from a
//! table, and the min-GPU chart of a `min_gpus` goal (GPUs against goodput, the floor
//! drawn, the answer highlighted).

use crate::plot::{assert_well_formed, marks, tooltips, words};
use serde_json::Value;
use sweeper_goal::Objective;
use sweeper_plot::{Chart, Outcome, Param, PlotObjective, PlotOptions, PlotPoint, min_gpus_svg};

/// Runs a sweep of `config` (YAML text) in a temporary directory; returns the directory,
/// the output directory and `result.json`.
fn run_sweep(config: &str) -> (tempfile::TempDir, std::path::PathBuf, Value) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.yaml");
    std::fs::write(&path, config).unwrap();
    let out = dir.path().join("o");
    let run = crate::common::sweeper([
        "run",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let result =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    (dir, out, result)
}

/// The number after `name = ` in a tooltip.
fn tip_value(tip: &str, name: &str) -> Option<f64> {
    let rest = tip.split(&format!("\n{name} = ")).nth(1)?;
    rest.split([' ', '\n']).next()?.parse().ok()
}

/// The centre of a mark's element (`cx`/`cy`, or the start of a path).
fn centre(element: &str) -> (f64, f64) {
    let attr = |name: &str| -> f64 {
        let at = element.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        element[at..].split('"').next().unwrap().parse().unwrap()
    };
    (attr("cx"), attr("cy"))
}

/// The elements of the marks of a class, each with its tooltip (which spans lines: an
/// element starts at a line that starts with `<`, as no escaped tooltip line does).
fn mark_lines<'a>(svg: &'a str, kind: &str) -> Vec<&'a str> {
    svg.split("\n<")
        .filter(|l| l.contains(&format!("class=\"mark {kind}\"")))
        .collect()
}

const COST_SWEEP: &str = "goal:
  target: pareto
  pareto_objectives: [cost_per_mtok, throughput_per_user]
  price_per_gpu_hour: 3.5
workload: {isl: 4000, osl: 500, num_request_ratio: 2, kv_load_ratio: [0.05, 1.0]}
search_space:
  gpu_budget: 8
  used_gpus: [tp, replicas]
  parameters: {tp: {values: [1, 2, 4]}, replicas: {int: [1, 2]}, max_batch_size: {values: [16, 64, 256]}}
evaluator: {builtin: {model: qwen3-32b-fp8, gpu: h200}}
sweep: {max_rounds: 2, candidates_per_round: 6, parallel_evals: 2, seed: 5}
";

#[test]
fn a_cost_sweep_draws_dollars_per_million_tokens_at_the_goals_price_against_tok_s_user() {
    let (_dir, out, result) = run_sweep(COST_SWEEP);
    let svg = std::fs::read_to_string(out.join("front.svg")).unwrap();
    assert_well_formed(&svg);
    let text = words(&svg);
    // cost on y, lower better, its unit spelt out; tok/s/user on x; the price said
    assert!(
        text.contains("cost_per_mtok ($ per 1M output tokens)   ↓ better"),
        "{text}"
    );
    assert!(text.contains("throughput_per_user (tok/s/user)   → better"));
    assert!(text.contains("$3.5 per GPU-hour"), "{text}");
    // every front point shows the dollars result.json holds (the goal's price, not $1)
    let front = result["candidates"].as_array().unwrap();
    assert!(front.len() >= 2, "a front of one point tests little");
    let tips = tooltips(&svg);
    for c in front {
        let id = c["index"].as_u64().unwrap();
        let tip = tips
            .iter()
            .find(|t| t.starts_with(&format!("trial {id} ·")))
            .unwrap_or_else(|| panic!("no tooltip for trial {id}"));
        let want = c["objectives"]["cost_per_mtok"].as_f64().unwrap();
        let shown = tip_value(tip, "cost_per_mtok").unwrap();
        assert!(
            (shown - want).abs() <= 1e-4 * want,
            "trial {id}: {shown} drawn, {want} in result.json"
        );
        assert!(tip.contains(" $/Mtok"), "{tip}");
    }
    // lower cost is lower on the chart: the cheapest front point is the lowest ring, and
    // the best corner (cheap and fast) is bottom right
    let rings = mark_lines(&svg, "front");
    let lowest = rings
        .iter()
        .max_by(|a, b| centre(a).1.total_cmp(&centre(b).1))
        .unwrap();
    let cheapest = front
        .iter()
        .min_by(|a, b| {
            let v = |c: &Value| c["objectives"]["cost_per_mtok"].as_f64().unwrap();
            v(a).total_cmp(&v(b))
        })
        .unwrap();
    assert!(
        lowest.contains(&format!("<title>trial {} ·", cheapest["index"])),
        "{lowest}"
    );
    let corner = svg
        .lines()
        .find(|l| l.contains(">best corner ↘</text>"))
        .expect("the best corner marked");
    assert!(corner.contains("text-anchor=\"end\""), "{corner}");
}

#[test]
fn a_table_is_priced_by_the_config_for_a_cost_axis_and_matches_score() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("cost.yaml");
    std::fs::write(
        &config,
        "goal:
  target: pareto
  pareto_objectives: [cost_per_mtok, throughput_per_user]
  price_per_gpu_hour: 2.5
search_space: {gpu_budget: 8}
",
    )
    .unwrap();
    let table = crate::common::example("serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv");
    let svg_path = dir.path().join("cost.svg");
    let (table, config, svg_s) = (
        table.to_str().unwrap(),
        config.to_str().unwrap(),
        svg_path.to_str().unwrap(),
    );
    let plot = crate::common::sweeper([
        "plot",
        table,
        "-o",
        "cost_per_mtok",
        "-o",
        "throughput_per_user",
        "--config",
        config,
        "--out",
        svg_s,
    ]);
    assert_eq!(plot.code, 0, "{}", plot.stderr);
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    assert_well_formed(&svg);
    assert!(words(&svg).contains("cost_per_mtok ($ per 1M output tokens)   ↓ better"));
    // the front drawn is the front `sweeper score` finds, at the same dollars
    let score = crate::common::sweeper(["score", "--config", config, table, "--format", "json"]);
    assert_eq!(score.code, 0, "{}", score.stderr);
    let scored: Vec<Value> = serde_json::from_str(&score.stdout).unwrap();
    let tips = tooltips(&svg);
    let on_front: Vec<&&str> = tips
        .iter()
        .filter(|t| t.contains("on the Pareto front"))
        .collect();
    assert_eq!(on_front.len(), scored.len(), "{on_front:?}");
    for c in &scored {
        let row = c["index"].as_u64().unwrap();
        let tip = on_front
            .iter()
            .find(|t| t.starts_with(&format!("row {row} ·")))
            .unwrap_or_else(|| panic!("row {row} of score's front is not on the plot's"));
        let want = c["objectives"]["cost_per_mtok"].as_f64().unwrap();
        let shown = tip_value(tip, "cost_per_mtok").unwrap();
        assert!(
            (shown - want).abs() <= 1e-4 * want,
            "row {row}: {shown} vs {want}"
        );
    }
    // without a price there is no cost: the message says what to give
    let bare = crate::common::sweeper([
        "plot",
        table,
        "-o",
        "cost_per_mtok",
        "-o",
        "throughput_per_user",
        "--out",
        svg_s,
    ]);
    assert_eq!(bare.code, 1);
    assert_eq!(
        bare.stderr,
        "sweeper: error: -o cost_per_mtok: a table has no cost column; give --config CONFIG \
         whose goal has `price_per_gpu_hour: 2.5` (dollars per GPU-hour, or a map by GPU) to \
         price its rows\n"
    );
}

/// A min-GPU chart: (GPUs, goodput) per trial, a floor of 4 req/s.
fn sizing_chart(points: &[(f64, f64)]) -> Chart {
    let mut c = Chart::new("sizing", vec![PlotObjective::of(Objective::MinGpus)]);
    c.floor = Some(4.0);
    for (i, &(gpus, goodput)) in points.iter().enumerate() {
        let mut p = PlotPoint::new(i as u64, Outcome::Feasible, Some(vec![goodput]));
        p.gpus = Some(gpus);
        p.params = vec![
            ("tp".into(), Param::Number(gpus)),
            ("replicas".into(), Param::Number(1.0)),
        ];
        c.points.push(p);
    }
    c
}

#[test]
fn the_min_gpu_chart_draws_gpus_against_goodput_with_the_floor_and_the_answer() {
    // trial 3 and 4 both reach the floor with 2 GPUs: the higher goodput (4) is the answer
    let mut chart = sizing_chart(&[
        (1.0, 1.5),
        (8.0, 9.0),
        (4.0, 6.0),
        (2.0, 4.0),
        (2.0, 4.5),
        (4.0, 3.0),
    ]);
    let mut over = PlotPoint::new(6, Outcome::OverBudget, None);
    over.reason = Some("over gpu_budget: used_gpus=16 > gpu_budget=8".into());
    chart.points.push(over);
    let svg = min_gpus_svg(&chart, &PlotOptions::default());
    assert_well_formed(&svg);
    let text = words(&svg);
    assert!(text.contains("GPUs   ↓ better"), "{text}");
    assert!(text.contains("goodput (requests within the SLA) (req/s)   → better"));
    assert!(text.contains("goodput floor 4 req/s (min_goodput_rps)"));
    // satisfying apart from unsatisfying; the answer ringed once, not drawn twice
    assert_eq!(marks(&svg, "satisfying"), 3);
    assert_eq!(marks(&svg, "unsatisfying"), 2);
    assert_eq!(marks(&svg, "best"), 1);
    assert!(
        text.contains("reach the floor: goodput ≥ 4 req/s (4)"),
        "{text}"
    );
    assert!(text.contains("below the floor (2)"));
    assert!(
        text.contains("fewest GPUs that reach it: trial 4, 2 GPUs"),
        "{text}"
    );
    assert!(text.contains("fewest GPUs: 2 (trial 4)"));
    assert!(text.contains("over the GPU budget (1, no report)"));
    // every trial has a tooltip; the answer's names its GPUs, goodput and shape
    assert_eq!(tooltips(&svg).len(), 7);
    let best = mark_lines(&svg, "best")[0];
    assert!(
        best.contains(
            "<title>trial 4\n2 GPUs · goodput 4.5 req/s: reaches the floor of 4 req/s\nshape: tp=2 · replicas=1"
        ),
        "{best}"
    );
    // fewer GPUs are lower: the 8-GPU trial above the answer; the floor line left of the
    // satisfying marks and right of the unsatisfying ones, the side that misses it shaded
    let y_of = |kind: &str, id: u64| {
        mark_lines(&svg, kind)
            .iter()
            .find(|l| l.contains(&format!("<title>trial {id}\n")))
            .map(|l| centre(l))
            .unwrap()
    };
    assert!(y_of("satisfying", 1).1 < y_of("best", 4).1);
    let floor_x: f64 = svg
        .lines()
        .find(|l| l.starts_with("<line") && l.contains("stroke-dasharray") && l.contains("#c2410c"))
        .and_then(|l| l.split("x1=\"").nth(1)?.split('"').next()?.parse().ok())
        .unwrap();
    assert!(y_of("satisfying", 2).0 > floor_x && y_of("unsatisfying", 5).0 < floor_x);
    // the same chart with nothing reaching the floor says the best goodput reached
    let none = sizing_chart(&[(1.0, 1.5), (2.0, 3.5)]);
    let text = words(&min_gpus_svg(&none, &PlotOptions::default()));
    assert!(
        text.contains("no candidate reaches the floor: the best goodput is 3.5 req/s (trial 1)"),
        "{text}"
    );
}

#[test]
fn a_min_gpus_sweep_is_plotted_as_gpus_against_goodput_with_its_answer_ringed() {
    let (dir, out, result) = run_sweep(
        "goal: {target: min_gpus, min_goodput_rps: 3.8, sla: {ttft_ms: 2000, itl_ms: 30}}
workload: {isl: 4000, osl: 500, num_request_ratio: 4, request_rate: 4}
search_space:
  gpu_budget: 8
  used_gpus: [tp, replicas]
  parameters: {tp: {values: [1, 2, 4]}, replicas: {int: [1, 2]}}
evaluator: {builtin: {model: qwen3-32b-fp8, gpu: h200}}
sweep: {algorithm: grid, max_rounds: 2, candidates_per_round: 3, parallel_evals: 2, seed: 1}
",
    );
    let svg = std::fs::read_to_string(out.join("best.svg")).unwrap();
    assert_well_formed(&svg);
    assert!(words(&svg).contains("goodput floor 3.8 req/s (min_goodput_rps)"));
    // the ringed one is the first of the ranking, which satisfies
    let first = &result["candidates"][0];
    assert_eq!(first["satisfying"], Value::Bool(true), "{first}");
    let best = mark_lines(&svg, "best");
    assert_eq!(best.len(), 1);
    assert!(
        best[0].contains(&format!("<title>trial {}\n", first["index"])),
        "{}",
        best[0]
    );
    let trials = result["trials"].as_array().unwrap().len();
    assert_eq!(tooltips(&svg).len(), trials);
    // `sweeper plot` draws the same from the directory
    let again = dir.path().join("again.svg");
    let plot = crate::common::sweeper([
        "plot",
        out.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert_eq!(plot.code, 0, "{}", plot.stderr);
    assert_eq!(std::fs::read_to_string(&again).unwrap(), svg);
}
