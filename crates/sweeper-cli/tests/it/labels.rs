//! Point labels (`--label`) that do not collide: on the quick start's dense front and on a
//! crowded synthetic one, no two label boxes overlap, no label covers a mark, and every
//! label is either written or counted in the legend as left out.

use crate::common::{example, sweeper_in, text};
use crate::plot::assert_well_formed;
use sweeper_goal::Objective;
use sweeper_plot::{Chart, Outcome, Param, PlotObjective, PlotOptions, PlotPoint, frontier_svg};

/// A box in pixels: x, y, width, height.
type Box4 = (f64, f64, f64, f64);

fn attr(tag: &str, name: &str) -> f64 {
    let key = format!(" {name}=\"");
    let start = tag.find(&key).unwrap_or_else(|| panic!("{name} in {tag}")) + key.len();
    let end = start + tag[start..].find('"').unwrap();
    tag[start..end].parse().unwrap()
}

/// The width DejaVu Sans gives a label's characters (advance widths in em: digits 0.636,
/// `/` 0.337, `?` 0.531, lowercase letters at most 0.65), times the font size.
fn width(text: &str, size: f64) -> f64 {
    text.chars()
        .map(|c| match c {
            '0'..='9' => 0.636,
            '/' => 0.337,
            '?' => 0.531,
            _ => 0.65,
        })
        .sum::<f64>()
        * size
}

/// Every label's box (from its start, baseline and size) and text.
fn labels(svg: &str) -> Vec<(Box4, String)> {
    svg.lines()
        .filter(|l| l.starts_with("<text class=\"label\""))
        .map(|l| {
            let size = attr(l, "font-size");
            let content = l.split_once('>').unwrap().1.trim_end_matches("</text>");
            let (x, base) = (attr(l, "x"), attr(l, "y"));
            // ascent above the baseline, descent below it
            (
                (
                    x,
                    base - 0.76 * size,
                    width(content, size),
                    0.76 * size + 0.24 * size,
                ),
                content.to_owned(),
            )
        })
        .collect()
}

/// The centre of every circle mark (dots and front rings).
fn mark_centres(svg: &str) -> Vec<(f64, f64)> {
    svg.lines()
        .filter(|l| l.starts_with("<circle class=\"mark ") && !l.contains("mark legend"))
        .map(|l| (attr(l, "cx"), attr(l, "cy")))
        .collect()
}

fn overlap(a: Box4, b: Box4) -> bool {
    a.0 < b.0 + b.2 && b.0 < a.0 + a.2 && a.1 < b.1 + b.3 && b.1 < a.1 + a.3
}

/// Asserts that no two labels overlap and that no label covers a mark's centre (with the
/// mark's radius around it).
fn assert_no_collision(svg: &str) -> usize {
    let found = labels(svg);
    for (i, (a, ta)) in found.iter().enumerate() {
        for (b, tb) in &found[i + 1..] {
            assert!(!overlap(*a, *b), "`{ta}` {a:?} overlaps `{tb}` {b:?}");
        }
        for (cx, cy) in mark_centres(svg) {
            let mark = (cx - 3.0, cy - 3.0, 6.0, 6.0);
            assert!(
                !overlap(*a, mark),
                "`{ta}` {a:?} covers the mark at {cx},{cy}"
            );
        }
    }
    found.len()
}

/// The text of every `<text>` element, joined by spaces (a wrapped legend line reads as
/// one).
fn all_text(svg: &str) -> String {
    svg.split("<text ")
        .skip(1)
        .filter_map(|part| part.split_once('>')?.1.split("</text>").next())
        .collect::<Vec<_>>()
        .join(" ")
}

/// How many labels the legend says were left out.
fn left_out(svg: &str) -> usize {
    let svg = &all_text(svg);
    svg.split(" left out for want of room")
        .next()
        .filter(|head| head.len() < svg.len())
        .and_then(|head| head.rsplit('(').next())
        .map_or(0, |n| n.trim().parse().unwrap())
}

#[test]
fn the_quick_starts_front_with_tp_and_batch_labels_has_no_colliding_label() {
    let dir = tempfile::tempdir().unwrap();
    let config = example("quickstart.yaml");
    let run = sweeper_in(
        &["run", config.to_str().unwrap(), "--out", "q", "-q"],
        dir.path(),
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let plot = sweeper_in(
        &[
            "plot",
            "q",
            "--label",
            "tp,max_batch_size",
            "--out",
            "l.svg",
        ],
        dir.path(),
    );
    assert_eq!(plot.status.code(), Some(0), "{}", text(&plot.stderr));
    let svg = std::fs::read_to_string(dir.path().join("l.svg")).unwrap();
    assert_well_formed(&svg);
    let written = assert_no_collision(&svg);
    let front = svg.matches("class=\"mark front\"").count();
    assert!(front >= 20, "{front}");
    // every front point's label is written, left out and counted, or shares its spot and
    // its text with one written before it
    let hidden = left_out(&svg);
    assert!(written + hidden <= front, "{written} + {hidden} > {front}");
    assert!(
        written >= front / 2,
        "only {written} of {front} labels written"
    );
    for (_, t) in labels(&svg) {
        let (tp, batch) = t.split_once('/').unwrap();
        assert!(
            tp.parse::<u32>().is_ok() && batch.parse::<u32>().is_ok(),
            "{t}"
        );
    }
}

#[test]
fn a_crowded_front_places_labels_apart_with_leaders_and_counts_the_rest() {
    let mut chart = Chart::new(
        "crowded",
        vec![
            PlotObjective::of(Objective::ThroughputPerGpu),
            PlotObjective::of(Objective::ThroughputPerUser),
        ],
    );
    // 60 front points along a short diagonal, with a far one that stretches the axes
    for i in 0..60 {
        let t = f64::from(i);
        let mut p = PlotPoint::new(
            i as u64,
            Outcome::Feasible,
            Some(vec![1000.0 - t, 10.0 + 0.2 * t]),
        );
        p.on_front = true;
        p.params = vec![
            ("tp".into(), Param::Number(t)),
            ("batch".into(), Param::Number(256.0)),
        ];
        chart.points.push(p);
    }
    let mut far = PlotPoint::new(60, Outcome::Feasible, Some(vec![100.0, 200.0]));
    far.on_front = true;
    far.params = vec![("tp".into(), Param::Number(8.0))];
    chart.points.push(far);
    let options = PlotOptions {
        labels: vec!["tp".into(), "batch".into()],
        ..PlotOptions::default()
    };
    let svg = frontier_svg(&chart, &options);
    assert_well_formed(&svg);
    let written = assert_no_collision(&svg);
    let hidden = left_out(&svg);
    // every point has its own spot: each label is written or counted
    assert_eq!(written + hidden, 61, "{written} written, {hidden} left out");
    assert!(
        hidden > 0 && written > 10,
        "{written} written, {hidden} left out"
    );
    assert!(
        all_text(&svg).contains(&format!(
            "labels: tp/batch ({hidden} left out for want of room: hover their points)"
        )),
        "{svg}"
    );
    // the labels pushed further out are tied to their points by a leader line
    assert!(svg.contains("stroke=\"#9ca3af\" stroke-width=\"0.8\""));
    // a label missing a parameter says so with `?`
    assert!(svg.contains(">8/?</text>"));
}
