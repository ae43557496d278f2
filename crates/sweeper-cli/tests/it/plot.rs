//! The SVG plots: well-formed, labelled, every mark with a tooltip, every outcome drawn and
//! counted, SLA lines, log axes, the scatter matrix, the empty state, robust to non-finite
//! input; the README's example front, drawn from the built-in model; and `sweeper plot` on
//! every input it takes, SVG and PNG.

use serde_json::json;
use sweeper_engine::{EvalOutcome, EvalRequest, Evaluator};
use sweeper_goal::{Direction, Objective, Sla};
use sweeper_model::BuiltinEvaluator;
use sweeper_plot::{
    Bound, Chart, Outcome, Param, PlotObjective, PlotOptions, PlotPoint, Scale, ScaleRule,
    best_by_trial_svg, frontier_svg, sla_bounds,
};

/// Checks that every element opened is closed in order (a small XML well-formedness check:
/// tags balance, attributes are quoted, no stray `<` or `&` in text).
pub(crate) fn assert_well_formed(svg: &str) {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = svg;
    while let Some(open) = rest.find('<') {
        let text = &rest[..open];
        assert!(!text.contains('>'), "stray '>' in text: {text:?}");
        for (i, _) in text.match_indices('&') {
            let entity = &text[i..];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"]
                    .iter()
                    .any(|e| entity.starts_with(e)),
                "bare '&' in text: {text:?}"
            );
        }
        let close = rest[open..].find('>').expect("unterminated tag") + open;
        let tag = &rest[open + 1..close];
        assert!(!tag.contains('<'), "'<' inside a tag: {tag:?}");
        assert_eq!(
            tag.matches('"').count() % 2,
            0,
            "unbalanced quotes: {tag:?}"
        );
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(
                stack.pop().as_deref(),
                Some(name.trim()),
                "mismatched </{name}>"
            );
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().unwrap_or_default().to_owned();
            stack.push(name);
        }
        rest = &rest[close + 1..];
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    assert!(svg.trim_start().starts_with("<svg"));
}

/// With `SWEEPER_PLOT_DIR` set, writes a plot there for a person to look at: the SVG and
/// its PNG.
fn keep(name: &str, svg: &str) {
    if let Some(dir) = std::env::var_os("SWEEPER_PLOT_DIR") {
        let path = std::path::Path::new(&dir).join(name);
        std::fs::write(&path, svg).unwrap();
        let png = sweeper_plot::png_from_svg(svg).unwrap();
        std::fs::write(path.with_extension("png"), png).unwrap();
    }
}

/// The two default objectives: tok/s/gpu (y) and tok/s/user (x).
fn pair() -> Vec<PlotObjective> {
    vec![
        PlotObjective::of(Objective::ThroughputPerGpu),
        PlotObjective::of(Objective::ThroughputPerUser),
    ]
}

/// A chart of `values` (feasible), the indices in `front` on the front, with `tp` and
/// `batch` parameters.
fn chart(objectives: Vec<PlotObjective>, values: &[Vec<f64>], front: &[usize]) -> Chart {
    let mut c = Chart::new("Qwen3 & friends <on> H200", objectives);
    for (i, v) in values.iter().enumerate() {
        let mut p = PlotPoint::new(i as u64, Outcome::Feasible, Some(v.clone()));
        p.on_front = front.contains(&i);
        p.params = vec![
            ("tp".into(), Param::Number([1.0, 2.0, 4.0][i % 3])),
            ("router".into(), Param::Text(["rr", "kv"][i % 2].into())),
        ];
        p.gpus = Some([1.0, 2.0, 4.0][i % 3]);
        c.points.push(p);
    }
    c
}

/// The text of every `<text>` element, joined by spaces (wrapped legend lines read as one).
pub(crate) fn words(svg: &str) -> String {
    let mut out = Vec::new();
    for part in svg.split("<text ").skip(1) {
        let content = part.split_once('>').map(|x| x.1).unwrap_or_default();
        out.push(content.split("</text>").next().unwrap_or_default());
    }
    out.join(" ")
}

/// Marks of a class (`feasible`, `front`, `over-budget`, ...).
pub(crate) fn marks(svg: &str, kind: &str) -> usize {
    svg.matches(&format!("class=\"mark {kind}\"")).count()
}

/// The tooltips of the document, in order.
pub(crate) fn tooltips(svg: &str) -> Vec<&str> {
    svg.split("<title>")
        .skip(1)
        .map(|t| t.split("</title>").next().unwrap())
        .collect()
}

fn five() -> Vec<Vec<f64>> {
    vec![
        vec![1300.0, 10.0],
        vec![900.0, 30.0],
        vec![400.0, 60.0],
        vec![500.0, 20.0],
        vec![30.0, 230.0],
    ]
}

#[test]
fn two_objectives_draw_axes_points_the_front_and_a_tooltip_on_every_mark() {
    let svg = frontier_svg(
        &chart(pair(), &five(), &[4, 0, 2, 1]),
        &PlotOptions::default(),
    );
    assert_well_formed(&svg);
    keep("two.svg", &svg);
    assert!(svg.contains("Qwen3 &amp; friends &lt;on&gt; H200"));
    assert!(svg.contains("throughput_per_gpu (tok/s/gpu)   ↑ better"));
    assert!(svg.contains("throughput_per_user (tok/s/user)   → better"));
    assert!(svg.contains("Pareto front (4)"));
    assert!(svg.contains("feasible candidates (5)"));
    assert_eq!((marks(&svg, "feasible"), marks(&svg, "front")), (1, 4));
    // The front's step line: 4 points and 3 corners.
    let line = svg
        .lines()
        .find(|l| l.starts_with("<polyline"))
        .expect("a front line");
    let coords = line
        .split("points=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    assert_eq!(coords.split_whitespace().count(), 7);
    // every mark but the legend's has a tooltip: trial, standing, values, parameters, GPUs
    let tips = tooltips(&svg);
    assert_eq!(tips.len(), 5);
    let first = tips.iter().find(|t| t.starts_with("trial 0 ")).unwrap();
    assert_eq!(
        *first,
        "trial 0 · on the Pareto front\nthroughput_per_gpu = 1300 tok/s/gpu\n\
         throughput_per_user = 10 tok/s/user\ntp=1 · router=rr\nGPUs: 1\n\
         deploy it: sweeper export SWEEP_DIR --trial 0"
    );
}

#[test]
fn every_outcome_has_its_mark_and_count_and_trials_without_a_report_go_to_the_strip() {
    let mut c = chart(pair(), &five(), &[4, 0, 2, 1]);
    let mut over = PlotPoint::new(7, Outcome::OverBudget, Some(vec![1500.0, 40.0]));
    over.reason = Some("over gpu_budget: used_gpus=32 > gpu_budget=16".into());
    c.points.push(over);
    c.points.push(PlotPoint::new(8, Outcome::OverBudget, None));
    let mut failed = PlotPoint::new(9, Outcome::Failed, None);
    failed.reason = Some("exit status 3 <stderr: boom>".into());
    c.points.push(failed);
    c.points.push(PlotPoint::new(10, Outcome::Infeasible, None));
    c.points
        .push(PlotPoint::new(11, Outcome::Unsupported, None));
    let svg = frontier_svg(&c, &PlotOptions::default());
    assert_well_formed(&svg);
    keep("outcomes.svg", &svg);
    assert_eq!(marks(&svg, "over-budget"), 2);
    assert_eq!(
        (
            marks(&svg, "failed"),
            marks(&svg, "infeasible"),
            marks(&svg, "unsupported")
        ),
        (1, 1, 1)
    );
    // the placed over-budget trial is a square in the plot; the others sit in the strip
    assert!(
        words(&svg).contains("over the GPU budget (2, 1 with no report)"),
        "{svg}"
    );
    assert!(words(&svg).contains("failed (1, no report)"));
    assert!(words(&svg).contains("infeasible (1, no report)"));
    assert!(words(&svg).contains("unsupported (1, no report)"));
    assert!(svg.contains("no report, so no place on the axes:"));
    let tips = tooltips(&svg);
    assert!(
        tips.contains(&"trial 9 · failed\nreason: exit status 3 &lt;stderr: boom&gt;"),
        "{tips:?}"
    );
    assert!(
        tips.iter()
            .any(|t| t.starts_with("trial 7 · over the GPU budget\nthroughput_per_gpu = 1500"))
    );
}

#[test]
fn empty_single_and_non_finite_inputs_do_not_panic() {
    let empty = frontier_svg(&Chart::new("empty", pair()), &PlotOptions::default());
    assert_well_formed(&empty);
    keep("empty.svg", &empty);
    assert!(empty.contains("Nothing to plot yet: no trial finished"));
    // no axes: no tick labels, no frame
    assert!(!empty.contains("stroke=\"#222222\" stroke-width=\"1\""));

    let one = frontier_svg(
        &chart(pair(), &[vec![5.0, 5.0]], &[0]),
        &PlotOptions::default(),
    );
    assert_well_formed(&one);
    keep("one.svg", &one);
    assert!(one.contains("Pareto front (1)"));

    let odd = chart(
        pair(),
        &[
            vec![f64::NAN, 1.0],
            vec![f64::INFINITY, 2.0],
            vec![3.0, f64::NEG_INFINITY],
            vec![4.0],
            vec![5.0, 6.0],
        ],
        &[0, 1, 4, 99],
    );
    let svg = frontier_svg(&odd, &PlotOptions::default());
    assert_well_formed(&svg);
    // non-finite values are never placed; their points are in the strip, hoverable
    assert!(!svg.contains("NaN\"") && !svg.contains("=\"inf"), "{svg}");
    assert_eq!(marks(&svg, "front"), 1);
    assert!(svg.contains("feasible candidates (5)"));
    assert!(words(&svg).contains("4 feasible with a value ±inf or missing, in the strip below"));

    let infinite = frontier_svg(
        &chart(pair(), &[vec![f64::INFINITY, 1.0]], &[0]),
        &PlotOptions::default(),
    );
    assert_well_formed(&infinite);
    assert!(infinite.contains("No feasible point has finite values on every axis"));
    let none = frontier_svg(
        &chart(Vec::new(), &[vec![1.0]], &[0]),
        &PlotOptions::default(),
    );
    assert_well_formed(&none);
    let svg = best_by_trial_svg(
        &Chart::new(
            "none",
            vec![PlotObjective::new("score", "", Direction::Maximize)],
        ),
        &PlotOptions::default(),
    );
    assert_well_formed(&svg);
    keep("best-empty.svg", &svg);
}

#[test]
fn a_sweep_with_no_feasible_candidate_says_so_instead_of_drawing_empty_axes() {
    let mut c = Chart::new("no feasible", pair());
    for t in 0..6 {
        let mut p = PlotPoint::new(t, Outcome::OverBudget, None);
        p.reason = Some(format!(
            "over gpu_budget: used_gpus={} > gpu_budget=4",
            8 + t
        ));
        c.points.push(p);
    }
    let mut p = PlotPoint::new(6, Outcome::Failed, None);
    p.reason = Some("exit status 1".into());
    c.points.push(p);
    let svg = frontier_svg(&c, &PlotOptions::default());
    assert_well_formed(&svg);
    keep("no-feasible.svg", &svg);
    assert!(svg.contains("No feasible candidate to plot"));
    assert!(svg.contains("7 trials: 6 over the GPU budget, 1 failed"));
    assert!(svg.contains("most frequent reason: over gpu_budget: used_gpus &gt; gpu_budget=4 (6)"));
    // the trials can still be hovered
    assert_eq!(marks(&svg, "over-budget") + marks(&svg, "failed"), 7);
    assert!(!svg.contains(">0.2<") && !svg.contains(">1.0<"));
}

#[test]
fn the_sla_is_drawn_where_an_objective_maps_to_it() {
    let sla = Sla {
        ttft_ms: Some(1000.0),
        itl_ms: Some(50.0),
        e2e_ms: None,
    };
    let mut c = chart(pair(), &five(), &[4, 0, 2, 1]);
    c.bounds = sla_bounds(&sla, &c.objectives);
    assert_eq!(
        c.bounds,
        [Bound {
            objective: 1,
            value: 20.0,
            label: "SLA ITL ≤ 50 ms (≥ 20 tok/s/user)".into()
        }]
    );
    let svg = frontier_svg(&c, &PlotOptions::default());
    assert_well_formed(&svg);
    keep("sla.svg", &svg);
    assert_eq!(
        svg.matches("stroke-dasharray").count(),
        2,
        "the line and its legend entry"
    );
    assert!(svg.contains(">SLA ITL ≤ 50 ms (≥ 20 tok/s/user)</text>"));
    // the line is vertical, at x = 20 tok/s/user: between the ticks 0 and 50 of the x axis
    let line = svg
        .lines()
        .find(|l| l.contains("stroke-dasharray"))
        .unwrap();
    let x1 = attr(line, "x1");
    assert_eq!(x1, attr(line, "x2"));
    // two x ticks: their labels are numbers centred under the axis
    let ticks: Vec<(f64, f64)> = svg
        .lines()
        .filter(|l| l.contains("text-anchor=\"middle\"") && l.contains("font-size=\"12\""))
        .filter_map(|l| {
            let label = l.rsplit_once("\">")?.1.strip_suffix("</text>")?;
            Some((label.parse::<f64>().ok()?, attr(l, "x")))
        })
        .collect();
    assert!(ticks.len() >= 3, "{ticks:?}");
    let ((v0, x0), (v1, x1t)) = (ticks[0], ticks[1]);
    let expected = x0 + (x1t - x0) * (20.0 - v0) / (v1 - v0);
    assert!((x1 - expected).abs() < 1.0, "{x1} {expected} {ticks:?}");
    // a bound far off the data: not drawn, and the legend says which side the points are on
    let mut far = chart(pair(), &five(), &[4, 0, 2, 1]);
    far.bounds = sla_bounds(
        &Sla {
            itl_ms: Some(1.0),
            ..Sla::default()
        },
        &far.objectives,
    );
    let svg = frontier_svg(&far, &PlotOptions::default());
    assert_eq!(
        svg.matches("stroke-dasharray").count(),
        1,
        "the legend's only"
    );
    assert!(words(&svg).contains("(off the chart: no point meets it)"));
    let e2e = sla_bounds(
        &Sla {
            e2e_ms: Some(20_000.0),
            ..Sla::default()
        },
        &[PlotObjective::of(Objective::E2eLatency)],
    );
    assert_eq!(e2e[0].value, 20_000.0);
}

fn attr(line: &str, name: &str) -> f64 {
    line.split(&format!(" {name}=\""))
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{name} in {line}"))
}

#[test]
fn latency_and_wide_spans_get_log_axes_unless_told_otherwise() {
    let objectives = vec![
        PlotObjective::of(Objective::Throughput),
        PlotObjective::of(Objective::E2eLatency),
    ];
    let values = vec![
        vec![900.0, 4000.0],
        vec![1200.0, 60_000.0],
        vec![1300.0, 600_000.0],
    ];
    let c = chart(objectives, &values, &[0, 1, 2]);
    let svg = frontier_svg(&c, &PlotOptions::default());
    assert_well_formed(&svg);
    keep("log.svg", &svg);
    assert!(svg.contains("e2e_latency (ms), log scale   ← better"));
    assert!(svg.contains("throughput (tok/s)   ↑ better"));
    for tick in [">10k</text>", ">100k</text>"] {
        assert!(svg.contains(tick), "{tick}");
    }
    let linear = PlotOptions {
        scales: vec!["e2e_latency=linear".parse().unwrap()],
        ..PlotOptions::default()
    };
    let svg = frontier_svg(&c, &linear);
    assert!(svg.contains("e2e_latency (ms)   ← better") && !svg.contains("log scale"));
    let all_log = PlotOptions {
        scales: vec![ScaleRule {
            objective: None,
            scale: Scale::Log,
        }],
        ..PlotOptions::default()
    };
    assert_eq!(frontier_svg(&c, &all_log).matches(", log scale").count(), 2);
    assert!("e2e_latency=wide".parse::<ScaleRule>().is_err());
}

#[test]
fn labels_and_colours_by_a_parameter() {
    let options = PlotOptions {
        labels: vec!["tp".into(), "router".into()],
        color_by: Some("tp".into()),
        ..PlotOptions::default()
    };
    let svg = frontier_svg(&chart(pair(), &five(), &[4, 0, 2, 1]), &options);
    assert_well_formed(&svg);
    keep("labels.svg", &svg);
    assert!(
        svg.contains(">1/rr</text>") && svg.contains(">4/rr</text>"),
        "{svg}"
    );
    assert!(svg.contains("labels: tp/router"));
    for entry in ["tp = 1 (2)", "tp = 2 (2)", "tp = 4 (1)"] {
        assert!(svg.contains(entry), "{entry}");
    }
    // three colours among the points
    let fills: std::collections::BTreeSet<&str> = svg
        .lines()
        .filter(|l| l.contains("class=\"mark f"))
        .filter_map(|l| l.split("fill=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(fills.len(), 3, "{fills:?}");
    let missing = frontier_svg(
        &chart(pair(), &five(), &[0]),
        &PlotOptions {
            color_by: Some("nope".into()),
            ..PlotOptions::default()
        },
    );
    assert!(words(&missing).contains("colour: no candidate has `nope`"));
}

/// Colours by a parameter with many distinct text values: each value's count in the
/// legend, one colour per value of the palette in the order first met, the rest grey.
#[test]
fn colours_by_a_parameter_with_many_distinct_values() {
    let distinct = 400;
    let mut c = Chart::new("many", pair());
    for i in 0..3 * distinct {
        let x = i as f64;
        let mut p = PlotPoint::new(i as u64, Outcome::Feasible, Some(vec![x, 3000.0 - x]));
        p.on_front = true;
        // value k is met first at point k, and then twice more; v7 once more besides
        let k = if i == 3 * distinct - 1 {
            7
        } else {
            i % distinct
        };
        p.params = vec![("name".into(), Param::Text(format!("v{k}")))];
        c.points.push(p);
    }
    let options = PlotOptions {
        color_by: Some("name".into()),
        ..PlotOptions::default()
    };
    let svg = frontier_svg(&c, &options);
    assert_well_formed(&svg);
    keep("many-colours.svg", &svg);
    let text = words(&svg);
    assert!(text.contains("name = v0 (3)"), "{text}");
    // the fill of each point's mark, by trial (its tooltip's first words)
    let mut fills = vec![""; 3 * distinct];
    for line in svg.lines().filter(|l| l.contains("class=\"mark f")) {
        let fill = line
            .split("fill=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let trial = line.split("<title>trial ").nth(1).unwrap();
        let id: usize = trial.split(' ').next().unwrap().parse().unwrap();
        assert_eq!(fills[id], "", "trial {id} drawn twice");
        fills[id] = fill;
    }
    assert!(fills.iter().all(|f| !f.is_empty()));
    let palette: std::collections::BTreeSet<&str> = fills[..10].iter().copied().collect();
    assert_eq!(palette.len(), 10, "{fills:?}");
    let grey = fills[10];
    assert!(!palette.contains(grey));
    assert!(fills[10..distinct].iter().all(|f| *f == grey));
    for i in 0..3 * distinct - 1 {
        assert_eq!(fills[i], fills[i % distinct], "point {i}");
    }
    assert_eq!(fills[3 * distinct - 1], fills[7]);
}

#[test]
fn three_objectives_draw_a_scatter_matrix_with_the_front_in_every_panel() {
    let points = vec![
        vec![1.0, 2.0, 3.0],
        vec![3.0, 2.0, 1.0],
        vec![2.0, 2.0, 2.0],
        vec![0.5, 0.5, 0.5],
    ];
    let objectives = vec![
        PlotObjective::new("a", "x", Direction::Maximize),
        PlotObjective::new("b", "y", Direction::Maximize),
        PlotObjective::of(Objective::E2eLatency),
    ];
    let svg = frontier_svg(
        &chart(objectives, &points, &[0, 1, 2]),
        &PlotOptions::default(),
    );
    assert_well_formed(&svg);
    keep("three.svg", &svg);
    // One frame per pair: (a, e2e), (a, b), (b, e2e); the front in each.
    assert_eq!(svg.matches("fill=\"none\" stroke=\"#222222\"").count(), 3);
    assert_eq!(marks(&svg, "front"), 9);
    assert_eq!(marks(&svg, "feasible"), 3);
    assert_eq!(
        svg.matches("e2e_latency (ms), log scale   ← better")
            .count(),
        2
    );
    assert!(svg.contains("a (x)   ↑ better"));
    assert!(words(&svg).contains("Front points are non-dominated in all 3 objectives"));
    // no step line in a projection
    assert!(!svg.contains("<polyline"));
}

#[test]
fn best_by_trial_tracks_the_running_best_in_the_objectives_direction() {
    let objective = PlotObjective::of(Objective::E2eLatency);
    let mut c = Chart::new("latency", vec![objective]);
    for (t, v) in [
        (3, Some(2.0)),
        (0, Some(1.5)),
        (1, None),
        (2, Some(0.5)),
        (4, Some(1.0)),
    ] {
        let outcome = if v.is_some() {
            Outcome::Feasible
        } else {
            Outcome::Failed
        };
        c.points
            .push(PlotPoint::new(t, outcome, v.map(|v| vec![v * 1000.0])));
    }
    c.bounds = sla_bounds(
        &Sla {
            e2e_ms: Some(1200.0),
            ..Sla::default()
        },
        &c.objectives,
    );
    let svg = best_by_trial_svg(&c, &PlotOptions::default());
    assert_well_formed(&svg);
    keep("best.svg", &svg);
    assert!(
        svg.contains(">trial</text>") && svg.contains("e2e_latency (ms), log scale   ↓ better")
    );
    assert!(words(&svg).contains("failed (1, no report)"));
    assert!(svg.contains("trial value (4)"));
    // lower is better: 1.5 s at trial 0, then 0.5 s at trial 2 — two bests
    assert_eq!(marks(&svg, "best"), 2);
    assert_eq!(marks(&svg, "feasible"), 2);
    assert_eq!(marks(&svg, "failed"), 1);
    assert!(svg.contains(">SLA e2e ≤ 1200 ms</text>"));
    assert_eq!(tooltips(&svg).len(), 5);
}

/// A small sweep of the built-in model, evaluated directly, and its front by an O(n²)
/// filter. With `SWEEPER_WRITE_FRONT_EXAMPLE=1` it rewrites `docs/front-example.svg`.
#[test]
fn front_example_from_the_builtin_model() {
    let model =
        BuiltinEvaluator::from_config(&json!({"model": "qwen3-32b-fp8", "gpu": "h200"})).unwrap();
    let mut points = Vec::new();
    let mut latencies = Vec::new();
    let mut params = Vec::new();
    for tp in [1u64, 2, 4, 8] {
        for replicas in [1u64, 2, 4, 8] {
            if tp * replicas > 16 {
                continue;
            }
            for batch in [8u64, 16, 32, 64, 128, 256, 512] {
                for ratio in [0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0] {
                    let mut request = EvalRequest::new(
                        0,
                        json!({"tp": tp, "replicas": replicas, "max_batch_size": batch})
                            .as_object()
                            .cloned()
                            .unwrap(),
                    );
                    request.kv_load_ratio = Some(ratio);
                    request.workload = crate::common::default_workload();
                    if let EvalOutcome::Report(r) = model.evaluate(0, &request) {
                        let avg_gpu = r["gpu_hours"] / (r["duration_ms"] / 3_600_000.0);
                        points.push(vec![
                            r["output_throughput_tok_s"] / avg_gpu,
                            r["mean_output_token_throughput_per_user"],
                        ]);
                        latencies.push(r["mean_e2e_latency_ms"]);
                        params.push(vec![
                            ("tp".to_owned(), Param::Number(tp as f64)),
                            ("replicas".to_owned(), Param::Number(replicas as f64)),
                            ("max_batch_size".to_owned(), Param::Number(batch as f64)),
                            ("kv_load_ratio".to_owned(), Param::Number(ratio)),
                        ]);
                    }
                }
            }
        }
    }
    assert!(points.len() > 300, "{}", points.len());
    let dominates = |a: &Vec<f64>, b: &Vec<f64>| {
        a.iter().zip(b).all(|(x, y)| x >= y) && a.iter().zip(b).any(|(x, y)| x > y)
    };
    let front: Vec<usize> = (0..points.len())
        .filter(|&i| !points.iter().any(|p| dominates(p, &points[i])))
        .collect();
    assert!(front.len() >= 5, "{}", front.len());
    let title = format!(
        "{} on {} · GPU budget 16",
        model.model_name(),
        model.gpu_name()
    );
    let with_params = |mut c: Chart| {
        for (p, params) in c.points.iter_mut().zip(&params) {
            p.gpus = Some(params[0].1.number() * params[1].1.number());
            p.params.clone_from(params);
        }
        c.title.clone_from(&title);
        c.subtitle = "ISL 4000 · OSL 500 · load 0.05–1 of KV capacity".into();
        c
    };
    let c = with_params(chart(pair(), &points, &front));
    let options = PlotOptions {
        labels: vec!["tp".into(), "max_batch_size".into()],
        color_by: Some("tp".into()),
        ..PlotOptions::default()
    };
    let svg = frontier_svg(&c, &options);
    assert_well_formed(&svg);
    assert!(svg.contains("Qwen3-32B-like FP8 on H200 SXM"));
    assert_eq!(tooltips(&svg).len(), points.len());
    keep("front.svg", &svg);

    // The same grid with a third, minimized objective: a scatter matrix.
    let three: Vec<Vec<f64>> = points
        .iter()
        .zip(&latencies)
        .map(|(p, l)| vec![p[0], *l, p[1]])
        .collect();
    let signed = |p: &Vec<f64>| vec![p[0], -p[1], p[2]];
    let front3: Vec<usize> = (0..three.len())
        .filter(|&i| {
            !three
                .iter()
                .any(|p| dominates(&signed(p), &signed(&three[i])))
        })
        .collect();
    let objectives3 = vec![
        PlotObjective::of(Objective::ThroughputPerGpu),
        PlotObjective::of(Objective::E2eLatency),
        PlotObjective::of(Objective::ThroughputPerUser),
    ];
    let c3 = with_params(chart(objectives3, &three, &front3));
    let svg3 = frontier_svg(&c3, &PlotOptions::default());
    assert_well_formed(&svg3);
    assert_eq!(marks(&svg3, "front"), 3 * front3.len());
    keep("front3.svg", &svg3);
    if std::env::var_os("SWEEPER_WRITE_FRONT_EXAMPLE").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/front-example.svg");
        std::fs::create_dir_all(std::path::Path::new(path).parent().unwrap()).unwrap();
        std::fs::write(path, &svg).unwrap();
    }
}

/// The copied serving rows and the pareto goal beside them.
fn serving(name: &str) -> String {
    crate::common::example(&format!("serving/{name}"))
        .display()
        .to_string()
}

#[test]
fn plot_draws_score_and_front_json_output_and_tables_with_objective_columns() {
    let dir = tempfile::tempdir().unwrap();
    let rows = serving("agentx_qwen3.5-397b-fp8_mi355x_sglang.csv");
    let goal = serving("pareto.yaml");
    let score = crate::common::sweeper(["score", "--config", &goal, &rows, "--format", "json"]);
    assert_eq!(score.code, 0, "{}", score.stderr);
    let front_len = serde_json::from_str::<serde_json::Value>(&score.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .len();
    let score_json = dir.path().join("score.json");
    std::fs::write(&score_json, &score.stdout).unwrap();
    let out = dir.path().join("score.svg");
    let run = crate::common::sweeper([
        "plot",
        score_json.to_str().unwrap(),
        "--config",
        &goal,
        "--color-by",
        "tp",
        "--label",
        "conc",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let svg = std::fs::read_to_string(&out).unwrap();
    assert_well_formed(&svg);
    keep("score-json.svg", &svg);
    assert_eq!(marks(&svg, "front"), front_len);
    assert!(svg.contains("throughput_per_gpu (tok/s/gpu)   ↑ better"));
    assert!(words(&svg).contains("the front only"));
    assert!(svg.contains("colour: tp"));
    assert!(
        tooltips(&svg)
            .iter()
            .all(|t| t.starts_with("row ") && t.contains("conc="))
    );

    // a ranking: each row's value and the best so far
    let ranking = crate::common::sweeper([
        "score",
        "--config",
        &serving("throughput-per-gpu.yaml"),
        &rows,
        "--format",
        "json",
        "--top",
        "10",
    ]);
    assert_eq!(ranking.code, 0, "{}", ranking.stderr);
    let ranking_json = dir.path().join("ranking.json");
    std::fs::write(&ranking_json, &ranking.stdout).unwrap();
    let run = crate::common::sweeper([
        "plot",
        ranking_json.to_str().unwrap(),
        "--config",
        &serving("throughput-per-gpu.yaml"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let svg = std::fs::read_to_string(dir.path().join("ranking.svg")).unwrap();
    assert_well_formed(&svg);
    assert!(svg.contains(">row</text>") && svg.contains("throughput_per_gpu (tok/s/gpu)"));
    assert_eq!(tooltips(&svg).len(), 10);

    // `sweeper front --format json`: the axes in the order it wrote them
    let cols = [
        "-o",
        "output_throughput_tok_s:max",
        "-o",
        "mean_e2e_latency_ms:min",
    ];
    let front = crate::common::sweeper(
        ["front", rows.as_str()]
            .into_iter()
            .chain(cols)
            .chain(["--format", "json"]),
    );
    assert_eq!(front.code, 0, "{}", front.stderr);
    let front_json = dir.path().join("front.json");
    std::fs::write(&front_json, &front.stdout).unwrap();
    let run = crate::common::sweeper(["plot", front_json.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("-o output_throughput_tok_s:max -o mean_e2e_latency_ms:min"),
        "{}",
        run.stderr
    );
    let svg = std::fs::read_to_string(dir.path().join("front.svg")).unwrap();
    assert_well_formed(&svg);
    assert!(svg.contains("mean_e2e_latency_ms, log scale   ← better"));

    // the table itself with -o: every row, the front computed, the other columns in tooltips
    let out = dir.path().join("table.svg");
    let run = crate::common::sweeper(["plot", rows.as_str()].into_iter().chain(cols).chain([
        "--out",
        out.to_str().unwrap(),
        "--config",
        &goal,
    ]));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let svg = std::fs::read_to_string(&out).unwrap();
    assert_well_formed(&svg);
    keep("table.svg", &svg);
    let expected = front
        .stdout
        .lines()
        .filter(|l| l.contains("\"index\""))
        .count();
    assert_eq!(marks(&svg, "front"), expected);
    assert_eq!(marks(&svg, "front") + marks(&svg, "feasible"), 41);
    assert!(tooltips(&svg).iter().all(|t| t.contains("tp=")));

    // an input that is none of these says what to give
    let run = crate::common::sweeper(["plot", rows.as_str()]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("-o NAME:max|min"), "{}", run.stderr);
    let run = crate::common::sweeper(["plot", rows.as_str(), "-o", "mystery"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("-o mystery:max or -o mystery:min"),
        "{}",
        run.stderr
    );
}

#[test]
fn plot_writes_png_for_a_png_path_and_refuses_other_extensions() {
    let dir = tempfile::tempdir().unwrap();
    let rows = serving("agentx_qwen3.5-397b-fp8_mi355x_sglang.csv");
    let png = dir.path().join("front.png");
    let args = |out: &str| {
        vec![
            "plot".to_owned(),
            rows.clone(),
            "-o".into(),
            "throughput_per_gpu_col:max".into(),
            "--out".into(),
            out.to_owned(),
        ]
    };
    // a column that is not there is the table reader's error, naming it
    let run = crate::common::sweeper(args(png.to_str().unwrap()));
    assert_eq!(run.code, 1, "{}", run.stderr);
    let run = crate::common::sweeper([
        "plot",
        rows.as_str(),
        "-o",
        "output_throughput_tok_s:max",
        "-o",
        "mean_output_token_throughput_per_user:max",
        "--out",
        png.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    // twice the SVG's 1000 pixels
    assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 2000);
    let run = crate::common::sweeper(args(dir.path().join("plot.txt").to_str().unwrap()));
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("ending in .svg") && run.stderr.contains(".png"),
        "{}",
        run.stderr
    );
}

#[test]
fn run_draws_its_plot_with_the_plot_flags_and_a_budget_overrun_in_the_strip() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("small.yaml");
    std::fs::write(
        &config,
        "goal: {target: pareto, sla: {ttft_ms: 2000, itl_ms: 50}}
workload: {isl: 4000, osl: 500, num_request_ratio: 2, kv_load_ratio: [0.05, 1.0]}
search_space:
  gpu_budget: 4
  used_gpus: [tp, replicas]
  parameters: {tp: {values: [1, 2, 4, 8]}, replicas: {int: [1, 2]}}
evaluator: {builtin: {model: qwen3-32b-fp8, gpu: h200}}
sweep: {max_rounds: 1, candidates_per_round: 6, parallel_evals: 2, seed: 3}
",
    )
    .unwrap();
    let out = dir.path().join("o");
    let run = crate::common::sweeper([
        "run",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--no-progress",
        "--label",
        "tp",
        "--color-by",
        "replicas",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let svg = std::fs::read_to_string(out.join("front.svg")).unwrap();
    assert_well_formed(&svg);
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    let trials = result["trials"].as_array().unwrap();
    let over = trials
        .iter()
        .filter(|t| {
            t["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("over gpu_budget"))
        })
        .count();
    assert!(over > 0, "the seed should propose a trial over 4 GPUs");
    // every trial is a mark with a tooltip; the over-budget ones without a report in the strip
    assert_eq!(tooltips(&svg).len(), trials.len());
    assert_eq!(marks(&svg, "over-budget"), over);
    assert!(words(&svg).contains(&format!("over the GPU budget ({over}, no report)")));
    assert!(svg.contains("labels: tp") && svg.contains("colour: replicas"));
    assert!(svg.contains("SLA ITL ≤ 50 ms (≥ 20 tok/s/user)"));
    assert!(svg.contains("ISL 4000 · OSL 500 · load 0.05–1 of KV capacity (searched)"));
}
