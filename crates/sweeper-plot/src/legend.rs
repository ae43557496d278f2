//! The legend, the strip of trials without a place on the axes, and the chart drawn when
//! nothing can be placed.

use crate::axis::{compact, text_width};
use crate::context::Ctx;
use crate::parts::bound_text;
use crate::style::{Colorer, FRONT, GREY, HEADER, LEGEND_FONT, Rect, SLA, STRIP, ramp};
use crate::svg::{INK, Shape, Svg};
use crate::{Chart, OUTCOMES, Outcome, PlotPoint};
use std::fmt::Write as _;

/// One line of a legend.
pub(crate) enum Entry {
    Mark(Shape, String, String, Option<&'static str>),
    Line(&'static str, String),
    Dashed(&'static str, String),
    Text(String, bool),
}

/// The legend: a count per outcome, the front, colours, labels, SLA lines, and a note,
/// top-down inside `area`; lines that do not fit are left out.
pub(crate) fn draw_legend(
    svg: &mut Svg,
    ctx: &Ctx,
    area: Rect,
    front_line: bool,
    note: Option<&str>,
) {
    let chart = ctx.chart;
    let mut entries: Vec<Entry> = Vec::new();
    let dims = chart.objectives.len().max(1);
    let feasible = chart.count(Outcome::Feasible);
    let front = chart
        .points
        .iter()
        .filter(|p| p.outcome == Outcome::Feasible && p.on_front)
        .count();
    if ctx.colors.active() {
        entries.push(Entry::Text(
            format!("feasible candidates ({feasible})"),
            true,
        ));
    } else {
        entries.push(Entry::Mark(
            Shape::Dot,
            GREY.into(),
            format!("feasible candidates ({feasible})"),
            None,
        ));
    }
    if chart.points.iter().any(|p| p.on_front) {
        let text = format!("Pareto front ({front})");
        if front_line {
            entries.push(Entry::Line(FRONT, text));
        } else {
            let fill = if ctx.colors.active() {
                "#ffffff"
            } else {
                FRONT
            };
            let outline = ctx.colors.active().then_some("#111111");
            entries.push(Entry::Mark(Shape::Ring, fill.into(), text, outline));
        }
    }
    entries.extend(outcome_entries(chart, dims, "in the strip below"));
    entries.extend(style_entries(ctx, "candidate"));
    if let Some(n) = note {
        entries.push(Entry::Text(n.to_owned(), false));
    }
    write_legend(svg, area, &entries);
}

/// A legend line per outcome but feasible that occurs, with its count and how many of
/// them have no place on the axes (`place` says where those are drawn); and one for the
/// feasible points without a finite value.
pub(crate) fn outcome_entries(chart: &Chart, dims: usize, place: &str) -> Vec<Entry> {
    let mut entries = Vec::new();
    let unplaced = |o: Outcome| {
        chart
            .points
            .iter()
            .filter(|p| p.outcome == o && !p.placed(dims))
            .count()
    };
    let feasible = unplaced(Outcome::Feasible);
    if feasible > 0 {
        entries.push(Entry::Text(
            format!("{feasible} feasible with a value ±inf or missing, {place}"),
            false,
        ));
    }
    for o in OUTCOMES.iter().skip(1) {
        let n = chart.count(*o);
        let text = match unplaced(*o) {
            0 => format!("{} ({n})", o.legend()),
            u if u == n => format!("{} ({n}, no report)", o.legend()),
            u => format!("{} ({n}, {u} with no report)", o.legend()),
        };
        if n > 0 {
            entries.push(Entry::Mark(o.shape(), o.color().into(), text, None));
        }
    }
    entries
}

/// The legend lines of the options: the colours, the labels, the SLA lines.
pub(crate) fn style_entries(ctx: &Ctx, what: &str) -> Vec<Entry> {
    let mut entries = Vec::new();
    match &ctx.colors {
        Colorer::Categories { key, values, .. } => {
            entries.push(Entry::Text(format!("colour: {key}"), true));
            for (v, c, n) in values {
                let text = format!("{key} = {v} ({n})");
                entries.push(Entry::Mark(Shape::Dot, (*c).into(), text, None));
            }
        }
        Colorer::Ramp { key, lo, hi } => {
            entries.push(Entry::Text(format!("colour: {key}"), true));
            for t in [0.0, 0.5, 1.0] {
                let text = format!("{key} = {}", compact(lo + (hi - lo) * t));
                entries.push(Entry::Mark(Shape::Dot, ramp(t), text, None));
            }
        }
        Colorer::Missing(key) => {
            entries.push(Entry::Text(format!("colour: no {what} has `{key}`"), false));
        }
        Colorer::Off => {}
    }
    if !ctx.options.labels.is_empty() {
        let mut text = format!("labels: {}", ctx.options.labels.join("/"));
        match ctx.hidden_labels.get() {
            0 => {}
            1 => text.push_str(" (1 left out for want of room: hover its point)"),
            n => {
                let _ = write!(text, " ({n} left out for want of room: hover their points)");
            }
        }
        entries.push(Entry::Text(text, false));
    }
    for b in &ctx.chart.bounds {
        entries.push(Entry::Dashed(SLA, bound_text(ctx, b)));
    }
    for (k, c) in ctx.chart.checks.iter().enumerate() {
        let text = format!("{}: {}", c.label, ctx.chart.over_count(k));
        entries.push(Entry::Mark(Shape::Breach, SLA.into(), text, None));
    }
    entries
}

/// Writes legend entries top-down, wrapping long text to the width.
pub(crate) fn write_legend(svg: &mut Svg, area: Rect, entries: &[Entry]) {
    let row = 19.0;
    let mut y = area.y;
    let (sx, tx) = (area.x + 12.0, area.x + 28.0);
    let wrap_w = area.w - 30.0;
    for e in entries {
        let (text, bold) = match e {
            Entry::Mark(_, _, t, _) | Entry::Line(_, t) | Entry::Dashed(_, t) => (t, false),
            Entry::Text(t, b) => (t, *b),
        };
        let lines = wrap(text, wrap_w, LEGEND_FONT);
        if y + row * lines.len() as f64 > area.y + area.h {
            break;
        }
        let cy = y + row / 2.0;
        match e {
            Entry::Mark(shape, color, _, outline) => {
                svg.mark(*shape, sx, cy, color, "legend", "", *outline);
            }
            Entry::Line(color, _) => {
                svg.line(sx - 10.0, cy, sx + 10.0, cy, color, 2.2);
                svg.mark(Shape::Ring, sx, cy, color, "legend", "", None);
            }
            Entry::Dashed(color, _) => svg.dashed(sx - 10.0, cy, sx + 10.0, cy, color),
            Entry::Text(..) => {}
        }
        let x = if matches!(e, Entry::Text(..)) {
            area.x
        } else {
            tx
        };
        for (k, line) in lines.iter().enumerate() {
            let ty = cy + 4.0 + row * k as f64;
            if bold {
                let _ = writeln!(
                    svg.body,
                    "<text x=\"{x:.1}\" y=\"{ty:.1}\" {} font-size=\"{LEGEND_FONT}\" font-weight=\"bold\" fill=\"{INK}\">{}</text>",
                    crate::svg::FONT,
                    crate::svg::escape(line)
                );
            } else {
                svg.text(x, ty, line, LEGEND_FONT, "start", INK);
            }
        }
        y += row * lines.len() as f64;
    }
}

/// Splits text into lines of at most `width` pixels, at spaces.
pub(crate) fn wrap(text: &str, width: f64, size: f64) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let candidate = if line.is_empty() {
            word.to_owned()
        } else {
            format!("{line} {word}")
        };
        if text_width(&candidate, size) > width && !line.is_empty() {
            lines.push(std::mem::take(&mut line));
            word.clone_into(&mut line);
        } else {
            line = candidate;
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// The strip under the chart: one mark per trial that has no place on the axes (no
/// report, or a value ±inf), in id order, each with its tooltip; `+N more` when they do
/// not fit the width.
pub(crate) fn draw_strip(svg: &mut Svg, ctx: &Ctx, points: &[&PlotPoint], top: f64, width: f64) {
    if points.is_empty() {
        return;
    }
    let y = top + STRIP / 2.0;
    let lead = "no report, so no place on the axes:";
    svg.text(16.0, y + 4.0, lead, LEGEND_FONT, "start", "#555555");
    let mut x = 16.0 + text_width(lead, LEGEND_FONT) + 10.0;
    let room = width - 90.0;
    let mut sorted: Vec<&&PlotPoint> = points.iter().collect();
    sorted.sort_by_key(|p| p.id);
    for (k, p) in sorted.iter().enumerate() {
        if x > room {
            svg.text(
                x,
                y + 4.0,
                &format!("+{} more", sorted.len() - k),
                LEGEND_FONT,
                "start",
                "#555555",
            );
            break;
        }
        let o = p.outcome;
        let color = if o == Outcome::Feasible {
            GREY
        } else {
            o.color()
        };
        svg.mark(o.shape(), x, y, color, o.as_str(), &ctx.tooltip(p), None);
        x += 11.0;
    }
}

/// The chart when nothing can be placed: the title, a message that says why, the counts.
pub(crate) fn empty_svg(ctx: &Ctx, pareto: bool) -> String {
    let chart = ctx.chart;
    let (width, height) = (1000.0, 380.0);
    let mut svg = Svg::new(width, height);
    svg.heading(&chart.title, &chart.subtitle);
    let _ = writeln!(
        svg.body,
        "<rect x=\"40\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"6\" fill=\"#f7f7f8\" stroke=\"#d4d4d8\"/>",
        HEADER + 10.0,
        width - 80.0,
        height - HEADER - 30.0 - STRIP
    );
    let headline = if chart.points.is_empty() {
        format!("Nothing to plot yet: no {} finished", chart.id_label)
    } else if chart.count(Outcome::Feasible) > 0 {
        "No feasible point has finite values on every axis".to_owned()
    } else if pareto {
        "No feasible candidate to plot".to_owned()
    } else {
        "No feasible trial to plot".to_owned()
    };
    let cy = HEADER + 90.0;
    let _ = writeln!(
        svg.body,
        "<text x=\"{:.1}\" y=\"{cy:.1}\" {} font-size=\"20\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"{INK}\">{}</text>",
        width / 2.0,
        crate::svg::FONT,
        crate::svg::escape(&headline)
    );
    let counts: Vec<String> = OUTCOMES
        .iter()
        .filter_map(|o| {
            let n = chart.count(*o);
            (n > 0).then(|| format!("{n} {}", o.legend()))
        })
        .collect();
    let mut lines = Vec::new();
    if !counts.is_empty() {
        lines.push(format!(
            "{} {}s: {}",
            chart.points.len(),
            chart.id_label,
            counts.join(", ")
        ));
    }
    let mut reasons: Vec<(String, usize)> = Vec::new();
    for p in &chart.points {
        if let Some(r) = p.reason.as_deref() {
            // over-budget reasons differ only in the GPU count: one group
            let group = match r.split_once(" > ") {
                Some((head, budget)) if head.starts_with("over gpu_budget: used_gpus=") => {
                    format!("over gpu_budget: used_gpus > {budget}")
                }
                _ => r.to_owned(),
            };
            match reasons.iter_mut().find(|(x, _)| *x == group) {
                Some(e) => e.1 += 1,
                None => reasons.push((group, 1)),
            }
        }
    }
    reasons.sort_by_key(|r| std::cmp::Reverse(r.1));
    if let Some((r, n)) = reasons.first() {
        lines.push(format!("most frequent reason: {r} ({n})"));
    }
    if chart.points.is_empty() {
        lines.push("Plot again once trials have finished.".to_owned());
    } else if chart.id_label == "trial" {
        if 2 * chart.count(Outcome::OverBudget) > chart.points.len() {
            lines.push(
                "Most trials needed more GPUs than search_space.gpu_budget: raise it, or narrow the parallelism ranges."
                    .to_owned(),
            );
        }
        lines.push(
            "Every trial and its reason are in trials.csv; hover the marks below.".to_owned(),
        );
    }
    for (k, line) in lines.iter().enumerate() {
        let y = cy + 40.0 + 24.0 * k as f64;
        svg.text(width / 2.0, y, line, 14.0, "middle", "#444444");
    }
    let marks: Vec<&PlotPoint> = chart.points.iter().collect();
    draw_strip(&mut svg, ctx, &marks, height - STRIP - 6.0, width);
    svg.finish()
}
