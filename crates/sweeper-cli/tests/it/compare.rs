//! `sweeper plot A B [C...]`: several sweeps on one chart, a front per input in its own
//! colour and legend entry, tooltips that name the input, a clear error when the inputs'
//! objectives differ; and `compare_svg` itself (the scatter matrix, its errors).

use crate::common::{example, sweeper_in, text};
use crate::plot::assert_well_formed;
use std::path::Path;
use sweeper_goal::Objective;
use sweeper_plot::{
    Chart, Outcome, PlotError, PlotObjective, PlotOptions, PlotPoint, Series, compare_svg,
};

/// Runs the quick start on `gpu`, in five rounds (a front of a dozen points is enough
/// here), into `dir/GPU`.
fn sweep(dir: &Path, gpu: &str) {
    let config = std::fs::read_to_string(example("quickstart.yaml"))
        .unwrap()
        .replace("gpu: h200", &format!("gpu: {gpu}"))
        .replace("max_rounds: 15", "max_rounds: 5");
    let file = dir.join(format!("{gpu}.yaml"));
    std::fs::write(&file, config).unwrap();
    let out = sweeper_in(&["run", file.to_str().unwrap(), "--out", gpu, "-q"], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// How many candidates a sweep's result.json has on its front.
fn front_len(dir: &Path) -> usize {
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("result.json")).unwrap()).unwrap();
    result["candidates"].as_array().unwrap().len()
}

fn count(svg: &str, class: &str) -> usize {
    svg.matches(&format!("class=\"mark {class}\"")).count()
}

#[test]
fn two_sweeps_draw_one_chart_with_a_front_each_named_in_the_legend_and_tooltips() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    sweep(d, "h200");
    sweep(d, "b200");
    // no --out: front-compare.svg in the current directory
    let out = sweeper_in(&["plot", "h200", "b200/result.json", "--label", "tp"], d);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "sweeper: wrote front-compare.svg\n");
    let svg = std::fs::read_to_string(d.join("front-compare.svg")).unwrap();
    assert_well_formed(&svg);
    let (h200, b200) = (front_len(&d.join("h200")), front_len(&d.join("b200")));
    assert_eq!(count(&svg, "front series-0"), h200);
    assert_eq!(count(&svg, "front series-1"), b200);
    // a step line per front, in the series' colours (the first two of the palette)
    assert_eq!(svg.matches("<polyline ").count(), 2, "{svg}");
    assert!(svg.contains("stroke=\"#2b6cb0\" stroke-width=\"2.2\""));
    assert!(svg.contains("stroke=\"#dd6b20\" stroke-width=\"2.2\""));
    // named by the sweep's directory (a result.json's too), and the default title says so
    assert!(svg.contains(&format!(">h200: front {h200} of ")), "{svg}");
    assert!(svg.contains(&format!(">b200: front {b200} of ")), "{svg}");
    assert!(svg.contains(">h200 vs b200</text>"));
    // each sweep's own title in the legend, as the two differ
    assert!(svg.contains("on B200"));
    // every tooltip says which sweep and which trial
    for tip in svg.split("<title>").skip(1) {
        assert!(
            tip.starts_with("h200 · trial ") || tip.starts_with("b200 · trial "),
            "{tip}"
        );
    }
    assert!(svg.contains("<title>b200 · trial "));
    assert!(svg.contains("labels: tp"));

    // --name, one per input; a PNG as for one input
    let out = sweeper_in(
        &[
            "plot", "h200", "b200", "--name", "H200 SXM", "--name", "B200", "--out", "c.png",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(&std::fs::read(d.join("c.png")).unwrap()[1..4], b"PNG");
    let out = sweeper_in(
        &[
            "plot", "h200", "b200", "--name", "H200 SXM", "--name", "B200", "--out", "c.svg",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let svg = std::fs::read_to_string(d.join("c.svg")).unwrap();
    assert!(svg.contains(">H200 SXM: front ") && svg.contains("<title>B200 · trial "));
    assert!(svg.contains(">H200 SXM vs B200</text>"));

    // --name once per input, or not at all
    let out = sweeper_in(&["plot", "h200", "b200", "--name", "H200"], d);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "sweeper: error: --name: give one per input, in their order (2 inputs, 1 --name)\n"
    );
    let out = sweeper_in(&["plot", "h200", "--name", "H200"], d);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("give two or more inputs, or drop --name"));
    // the colour is the input's
    let out = sweeper_in(&["plot", "h200", "b200", "--color-by", "tp"], d);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("each input has its own colour"));
}

#[test]
fn inputs_with_other_objectives_are_refused_with_both_lists_and_the_way_out() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    sweep(d, "h200");
    let rows = example("serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv");
    let out = sweeper_in(
        &[
            "plot",
            "h200",
            rows.to_str().unwrap(),
            "-o",
            "output_throughput_tok_s:max",
            "-o",
            "mean_e2e_latency_ms:min",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "sweeper: error: `agentx_qwen3.5-397b-fp8_mi355x_sglang` has the objectives \
         output_throughput_tok_s:max, mean_e2e_latency_ms:min, `h200` has \
         throughput_per_gpu:max, throughput_per_user:max: a comparison draws sweeps with the \
         same objectives; plot them alone, or pick the same axes for each (with -o \
         NAME:max|min for tables and score/front output)\n"
    );
    assert!(!d.join("front-compare.svg").exists());
}

fn series(name: &str, objectives: &[Objective], rows: &[(Vec<f64>, bool)]) -> Series {
    let mut chart = Chart::new(
        format!("{name} title"),
        objectives.iter().map(|o| PlotObjective::of(*o)).collect(),
    );
    for (i, (values, front)) in rows.iter().enumerate() {
        let mut p = PlotPoint::new(i as u64, Outcome::Feasible, Some(values.clone()));
        p.on_front = *front;
        chart.points.push(p);
    }
    chart.points.push(PlotPoint::new(99, Outcome::Failed, None));
    Series::new(name, chart)
}

#[test]
fn compare_svg_draws_three_objectives_as_a_matrix_and_refuses_what_it_cannot_compare() {
    let three = [
        Objective::ThroughputPerGpu,
        Objective::E2eLatency,
        Objective::ThroughputPerUser,
    ];
    let a = series(
        "a",
        &three,
        &[
            (vec![900.0, 2000.0, 30.0], true),
            (vec![500.0, 3000.0, 20.0], false),
        ],
    );
    let b = series(
        "b",
        &three,
        &[
            (vec![1200.0, 2500.0, 25.0], true),
            (vec![300.0, 900.0, 60.0], true),
        ],
    );
    let svg = compare_svg("a vs b", &[a.clone(), b.clone()], &PlotOptions::default()).unwrap();
    assert_well_formed(&svg);
    // three panels: each front point ringed in each, in its series' class
    assert_eq!(count(&svg, "front series-0"), 3);
    assert_eq!(count(&svg, "front series-1"), 6);
    assert_eq!(count(&svg, "feasible series-0"), 3);
    // the failed trials of both, in the strip, in their series' colour, named
    assert_eq!(
        count(&svg, "failed series-0") + count(&svg, "failed series-1"),
        2
    );
    assert!(svg.contains("<title>b · trial 99 · failed"));
    assert!(
        svg.contains(">failed (2, in its sweep&#39;s colour)<"),
        "{svg}"
    );
    // no step line in a scatter matrix
    assert!(!svg.contains("<polyline "));

    let two = series("two", &three[..2], &[(vec![1.0, 2.0], true)]);
    let err = compare_svg("x", &[a.clone(), two], &PlotOptions::default()).unwrap_err();
    assert!(
        matches!(&err, PlotError::Objectives { series: 1, name, .. } if name == "two"),
        "{err:?}"
    );
    let scalar = series("s", &three[..1], &[(vec![1.0], true)]);
    let err = compare_svg("x", &[scalar, b], &PlotOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`s` has one objective (throughput_per_gpu:max): a comparison draws fronts of two or \
         more objectives; plot a scalar sweep alone"
    );
    assert!(matches!(
        compare_svg("x", &[], &PlotOptions::default()),
        Err(PlotError::NoSeries)
    ));
}
