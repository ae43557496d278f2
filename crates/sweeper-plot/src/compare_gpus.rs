//! Several `min_gpus` sweeps on one chart: each candidate's GPUs (y) against its goodput
//! (x) in its sweep's colour, every sweep's goodput floor as a line, and each sweep's
//! answer (its fewest-GPU candidate that reaches its floor) ringed and labelled.

use crate::context::Ctx;
use crate::legend::{Entry, empty_svg, style_entries, write_legend};
use crate::parts::{draw_labels, mark_box};
use crate::series::{Series, colour, draw_series_strip, label_of, merge, shared_options};
use crate::sizing::{GpuAxes, answer, at, tooltip};
use crate::style::{HEADER, LEGEND_W, Rect, SLA, STRIP};
use crate::svg::{Shape, Svg};
use crate::{OUTCOMES, Outcome, PlotOptions, precise};

/// The min-GPU chart of several `min_gpus` sweeps (every series has [`crate::Chart::floor`]):
/// as [`crate::min_gpus_svg`] draws one, with each series in its own colour (a filled dot
/// for a candidate that reaches its sweep's floor, an open one below it, other outcomes by
/// their shapes), each distinct floor a dashed line (the goodput left of the lowest
/// shaded), each series' answer ringed and labelled with its name, the SLA bounds no axis
/// shows ringed on the points that break them, and a legend line per series with its
/// answer or, when none reaches its floor, the best goodput it reached.
pub(crate) fn min_gpus_compare_svg(
    title: &str,
    series: &[Series],
    options: &PlotOptions,
) -> String {
    let (merged, owner) = merge(title, series);
    let shared = shared_options(series, options);
    let ctx = Ctx::new(&merged, &shared);
    let points = &merged.points;
    let floor_of = |i: usize| series[owner[i]].chart.floor.unwrap_or(f64::NAN);
    let placed: Vec<usize> = (0..points.len())
        .filter(|&i| at(&points[i]).is_some())
        .collect();
    if !placed
        .iter()
        .any(|&i| points[i].outcome == Outcome::Feasible)
    {
        return empty_svg(&ctx, false);
    }
    let unplaced: Vec<usize> = (0..points.len())
        .filter(|&i| at(&points[i]).is_none())
        .collect();
    // each distinct floor once, lowest first, with the series that set it
    let mut floors: Vec<(f64, Vec<&str>)> = Vec::new();
    for s in series {
        let Some(f) = s.chart.floor.filter(|f| f.is_finite()) else {
            continue;
        };
        match floors.iter_mut().find(|(v, _)| *v == f) {
            Some((_, names)) => names.push(&s.name),
            None => floors.push((f, vec![&s.name])),
        }
    }
    floors.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (width, plot_h) = (1000.0, 560.0);
    let strip = if unplaced.is_empty() { 0.0 } else { STRIP };
    let mut svg = Svg::new(width, HEADER + plot_h + strip);
    svg.heading(&merged.title, &merged.subtitle);
    let frame = Rect {
        x: 0.0,
        y: HEADER,
        w: width - LEGEND_W,
        h: plot_h,
    };
    let ys: Vec<f64> = placed
        .iter()
        .filter_map(|&i| at(&points[i]).map(|v| v.1))
        .collect();
    let mut xs: Vec<f64> = placed
        .iter()
        .filter_map(|&i| at(&points[i]).map(|v| v.0))
        .collect();
    xs.extend(floors.iter().map(|f| f.0));
    let frame = GpuAxes::draw(&mut svg, &ctx, frame, &xs, &ys);
    let plot = frame.plot;
    let to_px = |xy| frame.to_px(xy);
    let floor_label = |f: f64, names: &[&str]| {
        if floors.len() == 1 {
            format!("goodput floor {} req/s (min_goodput_rps)", precise(f))
        } else {
            format!("goodput floor {} req/s ({})", precise(f), names.join(", "))
        }
    };
    let mut legend: Vec<Entry> = Vec::new();
    for (k, (f, names)) in floors.iter().enumerate() {
        let label = floor_label(*f, names);
        // the first floor shades what falls short of it; the others' labels stack below
        frame.floor(&mut svg, *f, &label, k == 0, k);
        legend.push(Entry::Dashed(SLA, label));
    }
    let tip = |i: usize| {
        let name = &series[owner[i]].name;
        format!("{name} · {}", tooltip(&ctx, &points[i], floor_of(i)))
    };
    // the answer of each series, as an index into the merged points
    let mut offset = 0;
    let answers: Vec<Option<usize>> = series
        .iter()
        .map(|s| {
            let found = answer(&s.chart).and_then(|b| {
                s.chart
                    .points
                    .iter()
                    .position(|p| std::ptr::eq(p, b))
                    .map(|j| offset + j)
            });
            offset += s.chart.points.len();
            found
        })
        .collect();
    for &i in &placed {
        let p = &points[i];
        let Some(xy) = at(p) else { continue };
        let (x, y) = to_px(xy);
        let (k, c) = (owner[i], colour(owner[i]));
        if p.outcome != Outcome::Feasible {
            let kind = format!("{} series-{k}", p.outcome.as_str());
            svg.mark(p.outcome.shape(), x, y, c, &kind, &tip(i), None);
        } else if answers[k] == Some(i) {
            // drawn ringed below
        } else if xy.0 >= floor_of(i) {
            let kind = format!("satisfying series-{k}");
            svg.mark(Shape::Dot, x, y, c, &kind, &tip(i), None);
        } else {
            let kind = format!("unsatisfying series-{k}");
            svg.mark(Shape::Hollow, x, y, c, &kind, &tip(i), None);
        }
    }
    crate::sla::draw_rings(&mut svg, &merged, |p| at(p).map(to_px));
    let obstacles: Vec<_> = placed
        .iter()
        .filter_map(|&i| at(&points[i]).map(to_px))
        .map(|(x, y)| mark_box(x, y))
        .collect();
    let mut labelled = Vec::new();
    let mut answer_entries = Vec::new();
    for (k, s) in series.iter().enumerate() {
        let c = colour(k);
        let floor = s.chart.floor.unwrap_or(f64::NAN);
        let feasible: Vec<usize> = placed
            .iter()
            .copied()
            .filter(|&i| owner[i] == k && points[i].outcome == Outcome::Feasible)
            .collect();
        let reach = feasible
            .iter()
            .filter(|&&i| at(&points[i]).is_some_and(|v| v.0 >= floor))
            .count();
        if let Some((i, xy)) = answers[k].and_then(|i| Some((i, at(&points[i])?))) {
            let (x, y) = to_px(xy);
            let kind = format!("best series-{k}");
            svg.mark(Shape::Ring, x, y, c, &kind, &tip(i), Some("#111111"));
            let gpus = precise(xy.1);
            let text = match label_of(&ctx, series, &owner, i) {
                Some(label) => format!("{}: fewest GPUs {gpus}, {label}", s.name),
                None => format!("{}: fewest GPUs {gpus}", s.name),
            };
            labelled.push(((x, y), text));
            answer_entries.push(Entry::Mark(
                Shape::Ring,
                c.into(),
                format!(
                    "{}: fewest GPUs that reach {} req/s: {gpus} ({} {}); {reach} of {} reach it",
                    s.name,
                    precise(floor),
                    merged.id_label,
                    points[i].id,
                    feasible.len()
                ),
                Some("#111111"),
            ));
        } else {
            let top = feasible
                .iter()
                .filter_map(|&i| at(&points[i]).map(|v| (v.0, points[i].id)))
                .max_by(|a, b| a.0.total_cmp(&b.0));
            let text = match top {
                Some((g, id)) => format!(
                    "{}: no candidate reaches {} req/s: the best goodput is {} req/s ({} {id})",
                    s.name,
                    precise(floor),
                    precise(g),
                    merged.id_label
                ),
                None => format!("{}: no candidate to place", s.name),
            };
            answer_entries.push(Entry::Mark(Shape::Hollow, c.into(), text, None));
        }
    }
    draw_labels(&mut svg, &ctx, plot, &labelled, &obstacles);
    let mut entries = answer_entries;
    entries.push(Entry::Mark(
        Shape::Dot,
        "#555555".into(),
        "filled: reaches its sweep's floor (in its sweep's colour)".into(),
        None,
    ));
    entries.push(Entry::Mark(
        Shape::Hollow,
        "#555555".into(),
        "open: below its sweep's floor".into(),
        None,
    ));
    entries.extend(legend);
    for o in OUTCOMES.iter().skip(1) {
        let n = merged.count(*o);
        if n > 0 {
            let text = format!("{} ({n}, in its sweep's colour)", o.legend());
            entries.push(Entry::Mark(o.shape(), "#555555".into(), text, None));
        }
    }
    entries.extend(style_entries(&ctx, "candidate"));
    let area = Rect {
        x: width - LEGEND_W + 4.0,
        y: HEADER + 24.0,
        w: LEGEND_W - 16.0,
        h: plot_h - 24.0,
    };
    write_legend(&mut svg, area, &entries);
    draw_series_strip(
        &mut svg,
        points,
        &owner,
        &unplaced,
        (HEADER + plot_h, width),
        tip,
    );
    svg.finish()
}
