//! The SVG plots: well-formed, labelled, robust to empty and non-finite input; and the
//! README's example front, drawn from the built-in model.

use serde_json::json;
use sweeper_cli::builtin::BuiltinEvaluator;
use sweeper_cli::evaluator::{EvalOutcome, EvalRequest, Evaluator};
use sweeper_cli::plot::{PlotSeries, best_by_trial_svg, frontier_svg};

/// Checks that every element opened is closed in order (a small XML well-formedness check:
/// tags balance, attributes are quoted, no stray `<` or `&` in text).
fn assert_well_formed(svg: &str) {
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

/// With `SWEEPER_PLOT_DIR` set, writes a rendered plot there for a person to look at.
fn keep(name: &str, svg: &str) {
    if let Some(dir) = std::env::var_os("SWEEPER_PLOT_DIR") {
        std::fs::write(std::path::Path::new(&dir).join(name), svg).unwrap();
    }
}

fn names() -> Vec<String> {
    vec![
        "throughput_per_gpu (tok/s/gpu)".to_owned(),
        "throughput_per_user (tok/s/user)".to_owned(),
    ]
}

#[test]
fn two_objectives_draw_axes_points_and_the_front() {
    let points = vec![
        vec![1300.0, 10.0],
        vec![900.0, 30.0],
        vec![400.0, 60.0],
        vec![500.0, 20.0],
        vec![30.0, 230.0],
    ];
    let svg = frontier_svg(
        "Qwen3 & friends <on> H200",
        &PlotSeries {
            names: names(),
            points: &points,
            front: &[4, 0, 2, 1],
        },
    );
    assert_well_formed(&svg);
    assert!(svg.contains("Qwen3 &amp; friends &lt;on&gt; H200"));
    assert!(svg.contains("throughput_per_gpu (tok/s/gpu)"));
    assert!(svg.contains("throughput_per_user (tok/s/user)"));
    assert!(svg.contains("Pareto front (4)"));
    assert!(svg.contains("feasible candidates (5)"));
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
    assert_eq!(svg.matches("<circle").count(), 5 + 4 + 2);
}

#[test]
fn empty_single_and_non_finite_inputs_do_not_panic() {
    let empty: Vec<Vec<f64>> = Vec::new();
    let svg = frontier_svg(
        "empty",
        &PlotSeries {
            names: names(),
            points: &empty,
            front: &[],
        },
    );
    assert_well_formed(&svg);
    let one = vec![vec![5.0, 5.0]];
    let svg = frontier_svg(
        "one",
        &PlotSeries {
            names: names(),
            points: &one,
            front: &[0],
        },
    );
    assert_well_formed(&svg);
    keep("one.svg", &svg);
    assert!(svg.contains("Pareto front (1)"));
    let odd = vec![
        vec![f64::NAN, 1.0],
        vec![f64::INFINITY, 2.0],
        vec![3.0, f64::NEG_INFINITY],
        vec![4.0],
        vec![5.0, 6.0],
    ];
    let svg = frontier_svg(
        "odd",
        &PlotSeries {
            names: names(),
            points: &odd,
            front: &[0, 1, 4, 99],
        },
    );
    assert_well_formed(&svg);
    assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    assert!(svg.contains("feasible candidates (1)") && svg.contains("Pareto front (1)"));
    let svg = frontier_svg(
        "no names",
        &PlotSeries {
            names: Vec::new(),
            points: &one,
            front: &[0],
        },
    );
    assert_well_formed(&svg);
    let svg = best_by_trial_svg("none", "score", &[]);
    assert_well_formed(&svg);
    keep("best-empty.svg", &svg);
    let svg = best_by_trial_svg(
        "odd",
        "score",
        &[(0, None), (1, Some(f64::NAN)), (2, Some(3.0))],
    );
    assert_well_formed(&svg);
    assert!(!svg.contains("NaN"));
}

#[test]
fn three_objectives_draw_pairwise_panels() {
    let points = vec![
        vec![1.0, 2.0, 3.0],
        vec![3.0, 2.0, 1.0],
        vec![2.0, 2.0, 2.0],
        vec![0.5, 0.5, 0.5],
    ];
    let names = vec![
        "a (x)".to_owned(),
        "b (y)".to_owned(),
        "e2e_latency (ms)".to_owned(),
    ];
    let svg = frontier_svg(
        "three",
        &PlotSeries {
            names,
            points: &points,
            front: &[0, 1, 2],
        },
    );
    assert_well_formed(&svg);
    keep("three.svg", &svg);
    // One frame per pair: (a, b), (a, e2e), (b, e2e).
    assert_eq!(svg.matches("fill=\"none\" stroke=\"#222222\"").count(), 3);
    assert_eq!(svg.matches(">e2e_latency (ms)</text>").count(), 2);
}

#[test]
fn best_by_trial_tracks_the_running_best() {
    let scores = [
        (3, Some(2.0)),
        (0, Some(1.0)),
        (1, None),
        (2, Some(0.5)),
        (4, Some(1.5)),
    ];
    let svg = best_by_trial_svg("goodput_per_gpu", "goodput_per_gpu (tok/s/gpu)", &scores);
    assert_well_formed(&svg);
    keep("best.svg", &svg);
    assert!(svg.contains(">trial</text>") && svg.contains("goodput_per_gpu (tok/s/gpu)"));
    assert!(svg.contains("infeasible or failed (1)"));
    assert!(svg.contains("trial score (4)"));
    // Best so far: 1.0 at trial 0, 2.0 at trial 3 — two highlighted points.
    assert_eq!(svg.matches("stroke=\"#ffffff\"").count(), 2);
}

/// A small sweep of the built-in model, evaluated directly, and its front by an O(n²)
/// filter. With `SWEEPER_WRITE_FRONT_EXAMPLE=1` it rewrites `docs/front-example.svg`.
#[test]
fn front_example_from_the_builtin_model() {
    let model =
        BuiltinEvaluator::from_config(&json!({"model": "qwen3-32b-fp8", "gpu": "h200"})).unwrap();
    let mut points = Vec::new();
    let mut latencies = Vec::new();
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
                        latencies.push(r["mean_e2e_latency_ms"] / 1000.0);
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
    let svg = frontier_svg(
        &title,
        &PlotSeries {
            names: names(),
            points: &points,
            front: &front,
        },
    );
    assert_well_formed(&svg);
    assert!(svg.contains("Qwen3-32B-like FP8 on H200 SXM"));
    keep("front.svg", &svg);

    // The same grid with a third, minimized objective: pairwise panels.
    let three: Vec<Vec<f64>> = points
        .iter()
        .zip(&latencies)
        .map(|(p, l)| vec![p[0], p[1], *l])
        .collect();
    let signed = |p: &Vec<f64>| vec![p[0], p[1], -p[2]];
    let front3: Vec<usize> = (0..three.len())
        .filter(|&i| {
            !three
                .iter()
                .any(|p| dominates(&signed(p), &signed(&three[i])))
        })
        .collect();
    let mut names3 = names();
    names3.push("e2e_latency (s)".to_owned());
    let svg3 = frontier_svg(
        &title,
        &PlotSeries {
            names: names3,
            points: &three,
            front: &front3,
        },
    );
    assert_well_formed(&svg3);
    keep("front3.svg", &svg3);
    if std::env::var_os("SWEEPER_WRITE_FRONT_EXAMPLE").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/front-example.svg");
        std::fs::create_dir_all(std::path::Path::new(path).parent().unwrap()).unwrap();
        std::fs::write(path, &svg).unwrap();
    }
}
