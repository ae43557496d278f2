//! What `sweeper plot A B` draws besides the fronts (issue 34): an SLA bound no axis shows
//! rings each input's points over it, as the single-sweep chart does; `min_gpus` sweeps are
//! compared as GPUs against goodput with each floor drawn and each answer ringed; each
//! input's front points are labelled by the load it searched, as `plot DIR` labels one.

use crate::common::{sweeper_in, text};
use crate::plot::{assert_well_formed, marks, tooltips, words};
use serde_json::Value;
use std::path::Path;
use sweeper_goal::Objective;
use sweeper_plot::{
    Chart, Outcome, PlotError, PlotObjective, PlotOptions, PlotPoint, Series, compare_svg,
};

/// Runs `config` (YAML text) as `dir/NAME`; returns its result.json.
fn sweep(dir: &Path, name: &str, config: &str) -> Value {
    let file = dir.join(format!("{name}.yaml"));
    std::fs::write(&file, config).unwrap();
    let out = sweeper_in(&["run", file.to_str().unwrap(), "--out", name, "-q"], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&std::fs::read(dir.join(name).join("result.json")).unwrap()).unwrap()
}

/// The centre of a circle mark's element.
fn centre(element: &str) -> (String, String) {
    let attr = |name: &str| {
        element
            .split(&format!(" {name}=\""))
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap_or_default()
            .to_owned()
    };
    (attr("cx"), attr("cy"))
}

/// The elements of the document (an element starts at a line that starts with `<`).
fn elements(svg: &str) -> Vec<&str> {
    svg.split("\n<").collect()
}

/// `NAME · trial N` of every mark with a tooltip centred where an `over-sla` ring is.
fn ringed(svg: &str) -> Vec<String> {
    let rings: Vec<_> = elements(svg)
        .into_iter()
        .filter(|e| e.contains("class=\"mark over-sla\""))
        .map(centre)
        .collect();
    let mut ids: Vec<String> = elements(svg)
        .into_iter()
        .filter(|e| e.contains("class=\"mark ") && e.contains("<title>"))
        .filter(|e| rings.contains(&centre(e)))
        .filter_map(|e| {
            let tip = e.split("<title>").nth(1)?;
            let head = tip.split('\n').next()?;
            // `h200 · trial 3 · on the Pareto front` → `h200 · trial 3`
            Some(head.split(" · ").take(2).collect::<Vec<_>>().join(" · "))
        })
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

/// A pareto sweep of the built-in model on `gpu` whose TTFT bound (no axis on the default
/// pair) splits its trials.
fn ttft_config(gpu: &str, seed: u32) -> String {
    format!(
        "goal: {{target: pareto, sla: {{ttft_ms: 15000, itl_ms: 50}}}}
workload: {{isl: 4000, osl: 500, num_request_ratio: 2, kv_load_ratio: [0.05, 1.0]}}
search_space:
  gpu_budget: 8
  used_gpus: [tp, replicas]
  parameters: {{tp: {{values: [1, 2, 4]}}, replicas: {{int: [1, 2]}}, max_batch_size: {{values: [16, 64, 256]}}}}
evaluator: {{builtin: {{model: qwen3-32b-fp8, gpu: {gpu}}}}}
sweep: {{max_rounds: 1, candidates_per_round: 8, parallel_evals: 2, seed: {seed}}}
"
    )
}

/// `NAME · trial N` of each trial of a result whose mean TTFT is over `limit`.
fn over(name: &str, result: &Value, limit: f64) -> Vec<String> {
    result["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| {
            t["metrics"]["mean_ttft_ms"]
                .as_f64()
                .is_some_and(|v| v > limit)
        })
        .map(|t| format!("{name} · trial {}", t["trial"]))
        .collect()
}

#[test]
fn a_comparison_rings_each_inputs_points_over_an_sla_bound_no_axis_shows() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let h200 = sweep(d, "h200", &ttft_config("h200", 11));
    let b200 = sweep(d, "b200", &ttft_config("b200", 11));
    let mut slow = over("h200", &h200, 15000.0);
    slow.extend(over("b200", &b200, 15000.0));
    slow.sort();
    let trials =
        h200["trials"].as_array().unwrap().len() + b200["trials"].as_array().unwrap().len();
    assert!(
        !slow.is_empty() && slow.len() < trials,
        "the bound should split the trials: {slow:?} of {trials}"
    );
    let out = sweeper_in(&["plot", "h200", "b200", "--out", "c.svg"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let svg = std::fs::read_to_string(d.join("c.svg")).unwrap();
    assert_well_formed(&svg);
    // exactly the trials over the bound are ringed, one ring each, in both inputs
    assert_eq!(ringed(&svg), slow);
    assert_eq!(marks(&svg, "over-sla"), slow.len());
    // the legend counts them, as the single-sweep chart's does
    let text = words(&svg);
    assert!(
        text.contains(&format!("over TTFT 15000 ms: {}", slow.len())),
        "{text}"
    );
    // each ringed trial's tooltip says by how much, under its input's name
    for id in &slow {
        let tip = tooltips(&svg)
            .into_iter()
            .find(|t| t.starts_with(&format!("{id} ")) || t.starts_with(&format!("{id}\n")))
            .unwrap();
        assert!(tip.contains("\nover SLA: mean_ttft_ms = "), "{tip}");
    }
}

/// A `min_gpus` sweep of the built-in model on `gpu` at 4 req/s, floor `floor`.
fn min_gpus_config(gpu: &str, floor: f64) -> String {
    format!(
        "goal: {{target: min_gpus, min_goodput_rps: {floor}, sla: {{ttft_ms: 2000, itl_ms: 30}}}}
workload: {{isl: 4000, osl: 500, num_request_ratio: 4, request_rate: 4}}
search_space:
  gpu_budget: 8
  used_gpus: [tp, replicas]
  parameters: {{tp: {{values: [1, 2, 4]}}, replicas: {{int: [1, 2]}}}}
evaluator: {{builtin: {{model: qwen3-32b-fp8, gpu: {gpu}}}}}
sweep: {{algorithm: grid, max_rounds: 2, candidates_per_round: 3, parallel_evals: 2, seed: 1}}
"
    )
}

/// The element of the one mark of class `kind`.
fn the_mark<'a>(svg: &'a str, kind: &str) -> &'a str {
    let found: Vec<&str> = elements(svg)
        .into_iter()
        .filter(|e| e.contains(&format!("class=\"mark {kind}\"")))
        .collect();
    assert_eq!(found.len(), 1, "{kind}: {found:?}");
    found[0]
}

#[test]
fn min_gpus_sweeps_are_compared_as_gpus_against_goodput_with_each_floor_and_answer() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let h200 = sweep(d, "h200", &min_gpus_config("h200", 3.8));
    let b200 = sweep(d, "b200", &min_gpus_config("b200", 3.8));
    let out = sweeper_in(&["plot", "h200", "b200", "--out", "c.svg"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let svg = std::fs::read_to_string(d.join("c.svg")).unwrap();
    assert_well_formed(&svg);
    let said = words(&svg);
    assert!(said.contains("GPUs   ↓ better"), "{said}");
    assert!(
        said.contains("goodput floor 3.8 req/s (min_goodput_rps)"),
        "{said}"
    );
    for (k, (name, result)) in [("h200", &h200), ("b200", &b200)].into_iter().enumerate() {
        // the ringed answer is the first of the input's ranking, named in the legend
        let first = &result["candidates"][0];
        assert_eq!(first["satisfying"], Value::Bool(true), "{first}");
        let best = the_mark(&svg, &format!("best series-{k}"));
        assert!(
            best.contains(&format!("<title>{name} · trial {}\n", first["index"])),
            "{best}"
        );
        let gpus = first["config"]["used_gpus"].as_f64().unwrap();
        assert!(
            said.contains(&format!(
                "{name}: fewest GPUs that reach 3.8 req/s: {gpus} (trial {})",
                first["index"]
            )),
            "{said}"
        );
        assert!(
            said.contains(&format!("{name}: fewest GPUs {gpus}")),
            "{said}"
        );
        // every trial of the input is drawn once, with its tooltip
        let trials = result["trials"].as_array().unwrap();
        let drawn = tooltips(&svg)
            .iter()
            .filter(|t| t.starts_with(&format!("{name} · ")))
            .count();
        assert_eq!(drawn, trials.len());
        let reach = trials
            .iter()
            .filter(|t| {
                t["status"] == "feasible"
                    && t["metrics"]["goodput_request_throughput_rps"]
                        .as_f64()
                        .is_some_and(|g| g >= 3.8)
            })
            .count();
        assert_eq!(marks(&svg, &format!("satisfying series-{k}")) + 1, reach);
    }
    // one floor, drawn once
    let floors = svg
        .lines()
        .filter(|l| {
            l.starts_with("<line") && l.contains("stroke-dasharray") && l.contains("#c2410c")
        })
        .count();
    assert_eq!(floors, 2, "the plot's floor line and the legend's");

    // two floors: a line each, named by the inputs that set it
    sweep(d, "strict", &min_gpus_config("h200", 3.95));
    let out = sweeper_in(&["plot", "h200", "strict", "--out", "two.svg"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = words(&std::fs::read_to_string(d.join("two.svg")).unwrap());
    assert!(said.contains("goodput floor 3.8 req/s (h200)"), "{said}");
    assert!(said.contains("goodput floor 3.95 req/s (strict)"), "{said}");

    // a min_gpus sweep beside a pareto one is refused, saying why
    sweep(d, "front", &ttft_config("h200", 3));
    let out = sweeper_in(&["plot", "h200", "front"], d);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "sweeper: error: `h200` is a `min_gpus` sweep (GPUs against goodput) and `front` is \
         not: a comparison draws `min_gpus` sweeps only with other `min_gpus` sweeps; plot \
         them apart\n"
    );
}

#[test]
fn compare_svg_marks_below_the_floor_open_and_says_when_no_candidate_reaches_it() {
    let chart = |floor: f64, rows: &[(f64, f64)]| {
        let mut c = Chart::new("sizing", vec![PlotObjective::of(Objective::MinGpus)]);
        c.floor = Some(floor);
        for (i, &(gpus, goodput)) in rows.iter().enumerate() {
            let mut p = PlotPoint::new(i as u64, Outcome::Feasible, Some(vec![goodput]));
            p.gpus = Some(gpus);
            c.points.push(p);
        }
        c.points.push(PlotPoint::new(9, Outcome::Failed, None));
        c
    };
    let a = Series::new(
        "a",
        chart(4.0, &[(1.0, 2.0), (2.0, 4.5), (2.0, 4.0), (4.0, 8.0)]),
    );
    let b = Series::new("b", chart(6.0, &[(1.0, 2.5), (2.0, 5.0)]));
    let svg = compare_svg("a vs b", &[a.clone(), b], &PlotOptions::default()).unwrap();
    assert_well_formed(&svg);
    // a: the 2-GPU trial of higher goodput is the answer; b reaches nothing
    assert!(the_mark(&svg, "best series-0").contains("<title>a · trial 1\n"));
    assert_eq!(marks(&svg, "best series-1"), 0);
    assert_eq!(marks(&svg, "satisfying series-0"), 2);
    assert_eq!(marks(&svg, "unsatisfying series-0"), 1);
    assert_eq!(marks(&svg, "unsatisfying series-1"), 2);
    // below the floor is an open dot
    let open = elements(&svg)
        .into_iter()
        .find(|e| e.contains("class=\"mark unsatisfying series-1\""))
        .unwrap();
    assert!(open.contains("fill=\"#ffffff\""), "{open}");
    let text = words(&svg);
    assert!(
        text.contains("b: no candidate reaches 6 req/s: the best goodput is 5 req/s (trial 1)"),
        "{text}"
    );
    assert!(
        text.contains("a: fewest GPUs that reach 4 req/s: 2 (trial 1); 3 of 4 reach it"),
        "{text}"
    );
    // the failed trials in the strip, named
    assert!(svg.contains("<title>b · trial 9 · failed"));
    // the tooltip judges each point by its own input's floor
    let tip = tooltips(&svg)
        .into_iter()
        .find(|t| t.starts_with("b · trial 1\n"))
        .unwrap();
    assert!(
        tip.contains("goodput 5 req/s: below the floor of 6 req/s"),
        "{tip}"
    );
    // a min_gpus series beside a pareto one
    let pareto = Chart::new(
        "p",
        vec![
            PlotObjective::of(Objective::ThroughputPerGpu),
            PlotObjective::of(Objective::ThroughputPerUser),
        ],
    );
    let err =
        compare_svg("x", &[Series::new("p", pareto), a], &PlotOptions::default()).unwrap_err();
    assert!(
        matches!(&err, PlotError::Floor { name, other } if name == "a" && other == "p"),
        "{err:?}"
    );
}

#[test]
fn each_input_of_a_comparison_is_labelled_by_the_load_it_searched() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let config = |gpu: &str| {
        format!(
            "goal: {{target: pareto}}
workload: {{isl: 1024, osl: 1024, num_request_ratio: 4}}
search_space:
  gpu_budget: 8
  used_gpus: [tp]
  parameters: {{tp: {{values: [1, 2]}}, concurrency: {{values: [4, 16, 64]}}}}
evaluator: {{builtin: {{model: qwen3-32b-fp8, gpu: {gpu}}}}}
sweep: {{algorithm: grid, parallel_evals: 2}}
"
        )
    };
    let h200 = sweep(d, "h200", &config("h200"));
    let b200 = sweep(d, "b200", &config("b200"));
    let out = sweeper_in(&["plot", "h200", "b200", "--out", "c.svg"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let svg = std::fs::read_to_string(d.join("c.svg")).unwrap();
    assert_well_formed(&svg);
    assert!(svg.contains("labels: concurrency"), "legend");
    // every label written is the concurrency of a front point of one of the inputs
    let levels: Vec<String> = [&h200, &b200]
        .iter()
        .flat_map(|r| r["candidates"].as_array().unwrap().iter())
        .map(|c| c["config"]["concurrency"].to_string())
        .collect();
    let labels: Vec<&str> = svg
        .split("<text class=\"label\"")
        .skip(1)
        .filter_map(|t| t.split_once('>')?.1.split("</text>").next())
        .collect();
    assert!(labels.len() >= 3, "{labels:?}");
    for l in &labels {
        assert!(levels.contains(&(*l).to_owned()), "{l} not in {levels:?}");
    }
    // --label given by hand wins, and --label '' draws none
    let out = sweeper_in(
        &["plot", "h200", "b200", "--out", "tp.svg", "--label", "tp"],
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let svg = std::fs::read_to_string(d.join("tp.svg")).unwrap();
    assert!(svg.contains("labels: tp") && !svg.contains("labels: concurrency"));
    let out = sweeper_in(
        &["plot", "h200", "b200", "--out", "none.svg", "--label", ""],
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let svg = std::fs::read_to_string(d.join("none.svg")).unwrap();
    assert!(!svg.contains("labels:") && !svg.contains("<text class=\"label\""));
}
