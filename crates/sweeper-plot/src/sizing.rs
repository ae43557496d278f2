//! The min-GPU chart of a `min_gpus` goal: each candidate's GPUs (y) against its goodput
//! (x), the goodput floor as a line with the side that misses it shaded, the candidates
//! that reach the floor marked apart from those that do not, and the fewest-GPU one that
//! reaches it (the answer) highlighted.

use crate::axis::{Axis, text_width};
use crate::context::Ctx;
use crate::legend::{Entry, draw_strip, empty_svg, outcome_entries, style_entries, write_legend};
use crate::parts::{draw_axes, draw_labels, plot_area};
use crate::style::{BEST, GREY, HEADER, LEGEND_W, Rect, SLA, STRIP, TICK_FONT};
use crate::svg::{Shape, Svg};
use crate::{Chart, Outcome, PlotObjective, PlotOptions, PlotPoint, precise};
use std::fmt::Write as _;
use sweeper_goal::Direction;

/// The colour of a candidate that reaches the goodput floor.
pub(crate) const SATISFYING: &str = "#2f855a";

/// The chart of a `min_gpus` goal ([`Chart::floor`] set): GPUs (y, fewer better) against
/// goodput in requests/s (x, the chart's one objective), the floor `min_goodput_rps` as a
/// dashed line with the side below it shaded; candidates that reach it as green dots,
/// those that do not as grey ones, the fewest-GPU candidate that reaches it (ties: the
/// higher goodput, then the lower trial) ringed and labelled. Every trial is counted; a
/// trial without GPUs or a finite goodput goes to the strip under the chart.
pub fn min_gpus_svg(chart: &Chart, options: &PlotOptions) -> String {
    let ctx = Ctx::new(chart, options);
    let floor = chart.floor.unwrap_or(f64::NAN);
    let placed: Vec<&PlotPoint> = chart.points.iter().filter(|p| at(p).is_some()).collect();
    if !placed.iter().any(|p| p.outcome == Outcome::Feasible) {
        return empty_svg(&ctx, false);
    }
    let unplaced: Vec<&PlotPoint> = chart.points.iter().filter(|p| at(p).is_none()).collect();
    let (width, plot_h) = (1000.0, 560.0);
    let strip = if unplaced.is_empty() { 0.0 } else { STRIP };
    let mut svg = Svg::new(width, HEADER + plot_h + strip);
    svg.heading(&chart.title, &chart.subtitle);
    let frame = Rect {
        x: 0.0,
        y: HEADER,
        w: width - LEGEND_W,
        h: plot_h,
    };
    let ys: Vec<f64> = placed.iter().filter_map(|p| at(p).map(|v| v.1)).collect();
    let mut xs: Vec<f64> = placed.iter().filter_map(|p| at(p).map(|v| v.0)).collect();
    if floor.is_finite() {
        xs.push(floor);
    }
    let frame = GpuAxes::draw(&mut svg, &ctx, frame, &xs, &ys);
    let plot = frame.plot;
    let to_px = |xy| frame.to_px(xy);
    let floor_label = format!("goodput floor {} req/s (min_goodput_rps)", precise(floor));
    if floor.is_finite() {
        frame.floor(&mut svg, floor, &floor_label, true, 0);
    }
    let satisfies = |p: &PlotPoint| at(p).is_some_and(|(g, _)| g >= floor);
    let best = answer(chart);
    let (mut reach, mut below) = (0, 0);
    for p in placed.iter().filter(|p| p.outcome == Outcome::Feasible) {
        let Some(xy) = at(p) else { continue };
        let (x, y) = to_px(xy);
        let tip = tooltip(&ctx, p, floor);
        if satisfies(p) {
            reach += 1;
            if best.is_some_and(|b| std::ptr::eq(b, *p)) {
                continue;
            }
            let color = ctx.colors.color(p, SATISFYING);
            svg.mark(Shape::Dot, x, y, &color, "satisfying", &tip, None);
        } else {
            below += 1;
            let color = ctx.colors.color(p, GREY);
            svg.mark(Shape::Dot, x, y, &color, "unsatisfying", &tip, None);
        }
    }
    for p in placed.iter().filter(|p| p.outcome != Outcome::Feasible) {
        let Some(xy) = at(p) else { continue };
        let (x, y) = to_px(xy);
        let o = p.outcome;
        let tip = tooltip(&ctx, p, floor);
        svg.mark(o.shape(), x, y, o.color(), o.as_str(), &tip, None);
    }
    crate::sla::draw_rings(&mut svg, chart, |p| at(p).map(to_px));
    let mut entries = vec![
        Entry::Mark(
            Shape::Dot,
            SATISFYING.into(),
            format!(
                "reach the floor: goodput ≥ {} req/s ({reach})",
                precise(floor)
            ),
            None,
        ),
        Entry::Mark(
            Shape::Dot,
            GREY.into(),
            format!("below the floor ({below})"),
            None,
        ),
    ];
    if let Some(b) = best {
        if let Some(xy) = at(b) {
            let (x, y) = to_px(xy);
            let color = ctx.colors.color(b, BEST);
            let outline = ctx.colors.active().then_some("#111111");
            let tip = tooltip(&ctx, b, floor);
            svg.mark(Shape::Ring, x, y, &color, "best", &tip, outline);
            let gpus = precise(xy.1);
            let text = match ctx.label(b) {
                Some(label) => format!("fewest GPUs: {gpus}, {label}"),
                None => format!("fewest GPUs: {gpus} ({} {})", chart.id_label, b.id),
            };
            draw_labels(&mut svg, &ctx, plot, &[((x, y), text)], &[]);
        }
        entries.push(Entry::Mark(
            Shape::Ring,
            BEST.into(),
            format!(
                "fewest GPUs that reach it: {} {}, {} GPUs",
                chart.id_label,
                b.id,
                precise(b.gpus.unwrap_or(f64::NAN))
            ),
            None,
        ));
    } else {
        let top = placed
            .iter()
            .filter(|p| p.outcome == Outcome::Feasible)
            .filter_map(|p| at(p).map(|v| (v.0, p.id)))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((g, id)) = top {
            entries.push(Entry::Text(
                format!(
                    "no candidate reaches the floor: the best goodput is {} req/s ({} {id})",
                    precise(g),
                    chart.id_label
                ),
                true,
            ));
        }
    }
    entries.push(Entry::Dashed(SLA, floor_label));
    entries.extend(outcome_entries(chart, 1, "in the strip below"));
    entries.extend(style_entries(&ctx, "candidate"));
    let legend = Rect {
        x: width - LEGEND_W + 4.0,
        y: HEADER + 24.0,
        w: LEGEND_W - 16.0,
        h: plot_h - 24.0,
    };
    write_legend(&mut svg, legend, &entries);
    draw_strip(&mut svg, &ctx, &unplaced, HEADER + plot_h, width);
    svg.finish()
}

/// A point's place: (goodput, GPUs), both finite.
pub(crate) fn at(p: &PlotPoint) -> Option<(f64, f64)> {
    let goodput = *p.values.as_ref()?.first()?;
    let gpus = p.gpus?;
    (goodput.is_finite() && gpus.is_finite()).then_some((goodput, gpus))
}

/// The fewest-GPU feasible candidate whose goodput reaches the floor; ties go to the
/// higher goodput, then to the lower id (as `min_gpus` ranks them).
pub(crate) fn answer(chart: &Chart) -> Option<&PlotPoint> {
    let floor = chart.floor?;
    chart
        .points
        .iter()
        .filter(|p| p.outcome == Outcome::Feasible)
        .filter_map(|p| at(p).map(|(g, n)| (p, g, n)))
        .filter(|(_, g, _)| *g >= floor)
        .min_by(|a, b| {
            a.2.total_cmp(&b.2)
                .then(b.1.total_cmp(&a.1))
                .then(a.0.id.cmp(&b.0.id))
        })
        .map(|(p, _, _)| p)
}

/// The axes: goodput on x (more is better), GPUs on y (fewer is better).
/// The plot area and the axes of a chart of GPUs (up, from zero) against goodput (across),
/// drawn: the single sweep's min-GPU chart and the comparison of several share it.
pub(crate) struct GpuAxes {
    pub(crate) plot: Rect,
    x_axis: Axis,
    y_axis: Axis,
}

impl GpuAxes {
    /// Fits the axes to goodputs `xs` (the floors among them) and GPU counts `ys` inside
    /// `frame` and draws them.
    pub(crate) fn draw(svg: &mut Svg, ctx: &Ctx, frame: Rect, xs: &[f64], ys: &[f64]) -> Self {
        let probe = Axis::fit(ys, ((frame.h - 92.0) / 48.0).max(3.0), true, false);
        let plot = plot_area(frame, &probe);
        let y_axis = Axis::fit(ys, (plot.h / 48.0).max(3.0), true, false);
        let x_axis = Axis::fit_width(xs, plot.w, false, false, TICK_FONT);
        let (xo, yo) = axes(ctx);
        draw_axes(svg, plot, &x_axis, &y_axis, &xo, &yo);
        GpuAxes {
            plot,
            x_axis,
            y_axis,
        }
    }

    /// A (goodput, GPUs) point in pixels.
    pub(crate) fn to_px(&self, (x, y): (f64, f64)) -> (f64, f64) {
        let plot = self.plot;
        (
            plot.x + self.x_axis.frac(x) * plot.w,
            plot.y + plot.h - self.y_axis.frac(y) * plot.h,
        )
    }

    /// A goodput floor: a dashed line with its label, `row` label lines below the top (so
    /// that several floors' labels do not overlap), the region short of it shaded when
    /// `shade`; nothing where the axis does not reach it.
    pub(crate) fn floor(&self, svg: &mut Svg, floor: f64, label: &str, shade: bool, row: usize) {
        if !self.x_axis.contains(floor) {
            return;
        }
        let plot = self.plot;
        let px = self.to_px((floor, 0.0)).0;
        if shade {
            svg.rect(plot.x, plot.y, px - plot.x, plot.h, SLA, 0.06);
        }
        svg.dashed(px, plot.y, px, plot.y + plot.h, SLA);
        let right = px + 6.0 + text_width(label, 11.0) < plot.x + plot.w;
        let (tx, anchor) = if right {
            (px + 5.0, "start")
        } else {
            (px - 5.0, "end")
        };
        svg.halo_text(tx, plot.y + 15.0 + 15.0 * row as f64, label, 11.0, anchor);
    }
}

pub(crate) fn axes(ctx: &Ctx) -> (PlotObjective, PlotObjective) {
    let unit = ctx.objective(0).unit;
    let unit = if unit.is_empty() {
        "req/s".to_owned()
    } else {
        unit
    };
    (
        PlotObjective::new(
            "goodput (requests within the SLA)",
            unit,
            Direction::Maximize,
        ),
        PlotObjective::new("GPUs", "", Direction::Minimize),
    )
}

/// The shape of a candidate: its parameters, `tp=2 · replicas=2`.
fn shape_text(p: &PlotPoint) -> String {
    let parts: Vec<String> = p
        .params
        .iter()
        .map(|(k, v)| format!("{k}={}", v.text()))
        .collect();
    if parts.is_empty() {
        format!("{} GPUs", precise(p.gpus.unwrap_or(f64::NAN)))
    } else {
        parts.join(" · ")
    }
}

/// The tooltip of a point: the trial, GPUs and goodput against the floor, the shape, the
/// rest as every chart's tooltip has it.
pub(crate) fn tooltip(ctx: &Ctx, p: &PlotPoint, floor: f64) -> String {
    let general = ctx.tooltip(p);
    let (head, rest) = general.split_once('\n').unwrap_or((&general, ""));
    let mut tip = head.to_owned();
    if let Some((g, n)) = at(p) {
        let verdict = if g >= floor {
            format!("reaches the floor of {} req/s", precise(floor))
        } else {
            format!("below the floor of {} req/s", precise(floor))
        };
        let _ = write!(
            tip,
            "\n{} GPUs · goodput {} req/s: {verdict}",
            precise(n),
            precise(g)
        );
    }
    let _ = write!(tip, "\nshape: {}", shape_text(p));
    // the general lines but the objective value (said above) and the parameters (the shape)
    let params = p
        .params
        .iter()
        .map(|(k, v)| format!("{k}={}", v.text()))
        .collect::<Vec<_>>()
        .join(" · ");
    for line in rest.lines() {
        let objective = ctx.objective(0);
        if line.starts_with(&format!("{} = ", objective.name))
            || (!params.is_empty() && line == params)
            || line.starts_with("GPUs: ")
        {
            continue;
        }
        let _ = write!(tip, "\n{line}");
    }
    tip
}
