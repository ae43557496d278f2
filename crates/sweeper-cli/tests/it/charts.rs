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

/// The centre of a mark's element: a circle's `cx`/`cy`, or a diamond's (its path starts
/// at the top corner, 4.5 above the centre).
fn centre(element: &str) -> (f64, f64) {
    let attr = |name: &str| -> Option<f64> {
        let at = element.find(&format!(" {name}=\""))? + name.len() + 3;
        element[at..].split('"').next()?.parse().ok()
    };
    if let (Some(x), Some(y)) = (attr("cx"), attr("cy")) {
        return (x, y);
    }
    let d = element.split(" d=\"M").nth(1).unwrap_or_default();
    let mut start = d
        .split(['L', ' ', '"'])
        .filter_map(|v| v.parse::<f64>().ok());
    let (x, y) = (
        start.next().unwrap_or(f64::NAN),
        start.next().unwrap_or(f64::NAN),
    );
    (x, y + 4.5)
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
    // and `sweeper score` output with the config: the same answer, by row
    let config = dir.path().join("c.yaml");
    let config = config.to_str().unwrap();
    let journal = out.join("journal.jsonl");
    let score = crate::common::sweeper([
        "score",
        "--config",
        config,
        journal.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(score.code, 0, "{}", score.stderr);
    let ranking = dir.path().join("ranking.json");
    std::fs::write(&ranking, &score.stdout).unwrap();
    let from_score = dir.path().join("ranking.svg");
    let plot = crate::common::sweeper([
        "plot",
        ranking.to_str().unwrap(),
        "--config",
        config,
        "--out",
        from_score.to_str().unwrap(),
    ]);
    assert_eq!(plot.code, 0, "{}", plot.stderr);
    let svg = std::fs::read_to_string(&from_score).unwrap();
    assert_well_formed(&svg);
    let best = mark_lines(&svg, "best");
    assert_eq!(best.len(), 1, "{svg}");
    assert!(
        best[0].contains(&format!("<title>row {}\n", first["index"])),
        "{}",
        best[0]
    );
}

/// The trials whose mark (a dot, ring or diamond with a tooltip) has an `over-sla` ring
/// centred on it.
fn ringed(svg: &str) -> Vec<u64> {
    let rings: Vec<(f64, f64)> = mark_lines(svg, "over-sla")
        .iter()
        .map(|m| centre(m))
        .collect();
    let mut ids: Vec<u64> = svg
        .split("\n<")
        .filter(|m| m.contains("class=\"mark ") && m.contains("<title>"))
        .filter(|m| rings.contains(&centre(m)))
        .filter_map(|m| {
            let tip = m.split("<title>").nth(1)?;
            tip.split([' ', '\n']).nth(1)?.parse().ok()
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

#[test]
fn a_bound_no_axis_shows_rings_the_points_that_break_it_and_counts_them() {
    let sla = sweeper_goal::Sla {
        ttft_ms: Some(2000.0),
        itl_ms: Some(50.0),
        e2e_ms: Some(9000.0),
    };
    let axes = vec![
        PlotObjective::of(Objective::ThroughputPerGpu),
        PlotObjective::of(Objective::ThroughputPerUser),
    ];
    let mut chart = Chart::new("sla", axes);
    chart.bounds = sweeper_plot::sla_bounds(&sla, &chart.objectives);
    chart.checks = sweeper_plot::sla_checks(&sla, None, &chart.objectives);
    // ITL is a line on the tok/s/user axis; TTFT and e2e are checked point by point
    let labels: Vec<&str> = chart.checks.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["over TTFT 2000 ms", "over e2e 9000 ms"]);
    // (tok/s/gpu, tok/s/user, mean TTFT, mean e2e): TTFT 2000 passes (inclusive)
    let rows = [
        (900.0, 30.0, 2500.0, 8000.0),
        (700.0, 40.0, 2000.0, 9500.0),
        (500.0, 60.0, 300.0, 4000.0),
        (300.0, 90.0, 2600.0, 9100.0),
    ];
    for (i, &(tpg, tpu, ttft, e2e)) in rows.iter().enumerate() {
        let mut p = PlotPoint::new(i as u64, Outcome::Feasible, Some(vec![tpg, tpu]));
        p.on_front = true;
        let metrics = [("mean_ttft_ms", ttft), ("mean_e2e_latency_ms", e2e)];
        p.check_sla(&chart.checks, |k| {
            metrics.iter().find(|(m, _)| *m == k).map(|(_, v)| *v)
        });
        chart.points.push(p);
    }
    // an infeasible trial (over the SLA under strict_sla) is ringed like the others
    let mut strict = PlotPoint::new(4, Outcome::Infeasible, Some(vec![200.0, 20.0]));
    strict.reason = Some("over sla: mean_ttft_ms=3000 > ttft_ms=2000".into());
    strict.check_sla(&chart.checks, |k| (k == "mean_ttft_ms").then_some(3000.0));
    chart.points.push(strict);
    let svg = sweeper_plot::frontier_svg(&chart, &PlotOptions::default());
    assert_well_formed(&svg);
    assert_eq!(marks(&svg, "over-sla"), 4);
    let text = words(&svg);
    assert!(text.contains("over TTFT 2000 ms: 3"), "{text}");
    assert!(text.contains("over e2e 9000 ms: 2"), "{text}");
    // the ITL bound stays a shaded line on its axis
    assert!(text.contains("SLA ITL ≤ 50 ms (≥ 20 tok/s/user)"));
    // the rings have no tooltip of their own: each point's tooltip says what it breaks
    assert_eq!(tooltips(&svg).len(), 5);
    let tips = tooltips(&svg);
    let tip3 = tips.iter().find(|t| t.starts_with("trial 3 ")).unwrap();
    assert!(
        tip3.contains("\nover SLA: mean_ttft_ms = 2600 &gt; 2000 ms\nover SLA: mean_e2e_latency_ms = 9100 &gt; 9000 ms"),
        "{tip3}"
    );
    let tip1 = tips.iter().find(|t| t.starts_with("trial 1 ")).unwrap();
    assert!(!tip1.contains("mean_ttft_ms"), "{tip1}");
    // each ring is centred on its point
    let ring_at: Vec<(f64, f64)> = mark_lines(&svg, "over-sla")
        .iter()
        .map(|m| centre(m))
        .collect();
    for m in mark_lines(&svg, "front") {
        if m.contains("<title>trial 0 ") {
            assert!(ring_at.contains(&centre(m)), "{m}");
        }
    }
    // a percentile under strict_sla reads its own key and says so
    let p90 = sweeper_plot::sla_checks(
        &sla,
        Some(sweeper_goal::StrictSla {
            percentile: Some(90),
        }),
        &chart.objectives,
    );
    assert_eq!(
        (p90[0].label.as_str(), p90[0].key.as_str()),
        ("over TTFT 2000 ms (p90)", "p90_ttft_ms")
    );
}

/// A sweep of the built-in model whose TTFT bound (no axis on the default pair) splits its
/// trials; `strict` adds `strict_sla: true`. Returns its plot, `result.json` and the trials
/// whose mean TTFT breaks the bound.
fn ttft_sweep(strict: bool) -> (String, Value, Vec<u64>) {
    let (_dir, out, result) = run_sweep(&format!(
        "goal: {{target: pareto, sla: {{ttft_ms: 15000, itl_ms: 50}}{}}}
workload: {{isl: 4000, osl: 500, num_request_ratio: 2, kv_load_ratio: [0.05, 1.0]}}
search_space:
  gpu_budget: 8
  used_gpus: [tp, replicas]
  parameters: {{tp: {{values: [1, 2, 4]}}, replicas: {{int: [1, 2]}}, max_batch_size: {{values: [16, 64, 256]}}}}
evaluator: {{builtin: {{model: qwen3-32b-fp8, gpu: h200}}}}
sweep: {{max_rounds: 1, candidates_per_round: 8, parallel_evals: 2, seed: 11}}
",
        if strict { ", strict_sla: true" } else { "" }
    ));
    let svg = std::fs::read_to_string(out.join("front.svg")).unwrap();
    assert_well_formed(&svg);
    let slow: Vec<u64> = result["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| {
            t["metrics"]["mean_ttft_ms"]
                .as_f64()
                .is_some_and(|v| v > 15000.0)
        })
        .map(|t| t["trial"].as_u64().unwrap())
        .collect();
    let trials = result["trials"].as_array().unwrap().len();
    assert!(
        !slow.is_empty() && slow.len() < trials,
        "the bound should split the trials: {slow:?} of {trials}"
    );
    (svg, result, slow)
}

#[test]
fn a_ttft_bound_off_the_axes_rings_the_trials_over_it_with_or_without_strict_sla() {
    let (svg, _, slow) = ttft_sweep(false);
    assert_eq!(ringed(&svg), slow);
    assert_eq!(marks(&svg, "over-sla"), slow.len());
    let text = words(&svg);
    assert!(
        text.contains(&format!("over TTFT 15000 ms: {}", slow.len())),
        "{text}"
    );
    // under strict_sla the same rule: the ringed trials are those over the SLA for TTFT
    // (TTFT is checked first), infeasible, each tooltip saying both
    let (svg, strict, slow) = ttft_sweep(true);
    let over: Vec<u64> = strict["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| {
            t["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("over sla: mean_ttft_ms="))
        })
        .map(|t| t["trial"].as_u64().unwrap())
        .collect();
    assert_eq!(over, slow);
    assert_eq!(ringed(&svg), slow);
    assert_eq!(marks(&svg, "over-sla"), slow.len());
    assert!(words(&svg).contains(&format!("over TTFT 15000 ms: {}", slow.len())));
    let tips = tooltips(&svg);
    for id in &slow {
        let tip = tips
            .iter()
            .find(|t| t.starts_with(&format!("trial {id} ·")))
            .unwrap();
        assert!(
            tip.contains("· infeasible") && tip.contains("\nover SLA: mean_ttft_ms = "),
            "{tip}"
        );
    }
}
