//! Pieces every chart draws: the plot area inside a frame, the grid and ticks, the axis
//! titles, point labels, and where an SLA bound sits.

use crate::Bound;
use crate::PlotObjective;
use crate::axis::{Axis, text_width};
use crate::context::Ctx;
use crate::style::{GRID, LABEL_FONT, LABEL_SIZE, Rect, TICK_FONT};
use crate::svg::{INK, Svg};

/// The plot area inside a frame, leaving room for the y title above it, the y tick labels
/// left of it and the x tick labels and title below it.
pub(crate) fn plot_area(frame: Rect, y_axis: &Axis) -> Rect {
    let label_w = y_axis
        .labels
        .iter()
        .map(|l| text_width(l, TICK_FONT))
        .fold(0.0, f64::max);
    let left = 20.0 + label_w + 8.0;
    let (right, top, bottom) = (24.0, 30.0, 62.0);
    Rect {
        x: frame.x + left,
        y: frame.y + top,
        w: (frame.w - left - right).max(10.0),
        h: (frame.h - top - bottom).max(10.0),
    }
}

/// Whether a bound lies among or a little way outside the data `lo..=hi` of its axis (the
/// axis is stretched to show it), rather than far off the chart.
pub(crate) fn bound_near(ctx: &Ctx, b: &Bound, lo: f64, hi: f64) -> bool {
    if !b.value.is_finite() || lo > hi {
        return false;
    }
    if ctx.log.get(b.objective).copied().unwrap_or(false) && lo > 0.0 && b.value > 0.0 {
        (b.value / hi).max(lo / b.value) <= 1.5
    } else {
        let span = (hi - lo).max(f64::EPSILON);
        b.value >= lo - 0.3 * span && b.value <= hi + 0.3 * span
    }
}

/// A bound's legend text: its label, and when it lies off the chart whether every point
/// meets it or none does.
pub(crate) fn bound_text(ctx: &Ctx, b: &Bound) -> String {
    let values: Vec<f64> = ctx
        .chart
        .points
        .iter()
        .filter_map(|p| p.values.as_ref()?.get(b.objective).copied())
        .filter(|v| v.is_finite())
        .collect();
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, c), &v| {
            (a.min(v), c.max(v))
        });
    if values.is_empty() || bound_near(ctx, b, lo, hi) {
        return b.label.clone();
    }
    let minimize = ctx.objective(b.objective).minimize;
    let meets = |v: f64| if minimize { v <= b.value } else { v >= b.value };
    if values.iter().all(|&v| meets(v)) {
        format!("{} (off the chart: every point meets it)", b.label)
    } else {
        format!("{} (off the chart: no point meets it)", b.label)
    }
}

/// The grid, the ticks and their labels on both axes, and the frame: what every chart's axes
/// share (the titles differ).
pub(crate) fn draw_grid(svg: &mut Svg, plot: Rect, x: &Axis, y: &Axis) {
    let bottom = plot.y + plot.h;
    for (v, label) in x.ticks.iter().zip(&x.labels) {
        let px = plot.x + x.frac(*v) * plot.w;
        svg.line(px, plot.y, px, bottom, GRID, 1.0);
        svg.line(px, bottom, px, bottom + 5.0, INK, 1.0);
        svg.text(px, bottom + 19.0, label, TICK_FONT, "middle", INK);
    }
    for (v, label) in y.ticks.iter().zip(&y.labels) {
        let py = plot.y + plot.h - y.frac(*v) * plot.h;
        svg.line(plot.x, py, plot.x + plot.w, py, GRID, 1.0);
        svg.line(plot.x - 5.0, py, plot.x, py, INK, 1.0);
        svg.text(plot.x - 8.0, py + 4.0, label, TICK_FONT, "end", INK);
    }
    svg.frame(plot.x, plot.y, plot.w, plot.h);
}

/// The y axis's title above its top left corner: the objective, its scale and which way is
/// better.
pub(crate) fn draw_y_title(svg: &mut Svg, plot: Rect, y: &Axis, yo: &PlotObjective) {
    let scale = if y.log { ", log scale" } else { "" };
    let y_title = format!("{}{scale}   {}", yo.label(), yo.better(false));
    svg.text(
        plot.x - 8.0,
        plot.y - 12.0,
        &y_title,
        LABEL_FONT,
        "start",
        INK,
    );
}

/// Grid, frame, ticks, tick labels, and each axis's title with the way that is better.
pub(crate) fn draw_axes(
    svg: &mut Svg,
    plot: Rect,
    x: &Axis,
    y: &Axis,
    xo: &PlotObjective,
    yo: &PlotObjective,
) {
    draw_grid(svg, plot, x, y);
    let scale = if x.log { ", log scale" } else { "" };
    let x_title = format!("{}{scale}   {}", xo.label(), xo.better(true));
    svg.text(
        plot.x + plot.w / 2.0,
        plot.y + plot.h + 42.0,
        &x_title,
        LABEL_FONT,
        "middle",
        INK,
    );
    draw_y_title(svg, plot, y, yo);
}

/// Writes labels beside points (`labelled`: a point's pixel position and its text). Each
/// label goes to the first free place among eight around its point (the four corners, then
/// right, left, above, below), then among eight further out with a leader line to the
/// point; a place is free when the label's box stays inside the plot and overlaps no label
/// already written and none of `obstacles` (the marks and the front's line). A label with
/// no free place is left out and counted in `ctx` (the legend says how many; the tooltip
/// still has it); a label whose text an earlier one already writes at the same spot is
/// left out uncounted.
pub(crate) fn draw_labels(
    svg: &mut Svg,
    ctx: &Ctx,
    plot: Rect,
    labelled: &[((f64, f64), String)],
    obstacles: &[Rect],
) {
    let size = LABEL_SIZE;
    let mut taken: Vec<Rect> = Vec::new();
    let mut seen: Vec<((f64, f64), &str)> = Vec::new();
    for ((x, y), text) in labelled {
        let (x, y) = (*x, *y);
        if seen
            .iter()
            .any(|((sx, sy), t)| *t == text && (sx - x).abs() < 2.0 && (sy - y).abs() < 2.0)
        {
            continue;
        }
        seen.push(((x, y), text));
        let w = text_width(text, size);
        let h = size + 2.0;
        let free = |r: &Rect| {
            r.x >= plot.x
                && r.x + r.w <= plot.x + plot.w
                && r.y >= plot.y
                && r.y + r.h <= plot.y + plot.h
                && !taken.iter().chain(obstacles).any(|t| overlaps(r, t))
        };
        let place = [7.0, 24.0].iter().find_map(|&d| {
            let side = d + 1.0;
            let places = [
                (x + d, y - d - h),
                (x + d, y + d),
                (x - d - w, y - d - h),
                (x - d - w, y + d),
                (x + side, y - h / 2.0),
                (x - side - w, y - h / 2.0),
                (x - w / 2.0, y - side - h),
                (x - w / 2.0, y + side),
            ];
            places
                .iter()
                .map(|&(bx, by)| Rect { x: bx, y: by, w, h })
                .find(|r| free(r))
                .map(|r| (r, d > 7.0))
        });
        match place {
            Some((r, leader)) => {
                if leader {
                    // from the mark's edge to the nearest point of the label's box
                    let (tx, ty) = (x.clamp(r.x, r.x + r.w), y.clamp(r.y, r.y + r.h));
                    let len = ((tx - x).powi(2) + (ty - y).powi(2)).sqrt().max(1.0);
                    let (sx, sy) = (x + (tx - x) * 6.0 / len, y + (ty - y) * 6.0 / len);
                    svg.line(sx, sy, tx, ty, "#9ca3af", 0.8);
                }
                taken.push(r);
                svg.label(r.x, r.y + h - 2.5, text, size);
            }
            None => ctx.hidden_labels.set(ctx.hidden_labels.get() + 1),
        }
    }
}

/// Whether two boxes overlap (touching edges do not).
pub(crate) fn overlaps(a: &Rect, b: &Rect) -> bool {
    a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
}

/// The box a mark at `(x, y)` covers, with a pixel to spare.
pub(crate) fn mark_box(x: f64, y: f64) -> Rect {
    Rect {
        x: x - 6.0,
        y: y - 6.0,
        w: 12.0,
        h: 12.0,
    }
}

/// The boxes a polyline's segments cover (the step lines are horizontal and vertical, so a
/// segment's box is the segment itself), a little thicker than the line.
pub(crate) fn line_boxes(path: &[(f64, f64)]) -> Vec<Rect> {
    path.windows(2)
        .map(|s| {
            let ((x1, y1), (x2, y2)) = (s[0], s[1]);
            Rect {
                x: x1.min(x2) - 1.5,
                y: y1.min(y2) - 1.5,
                w: (x1 - x2).abs() + 3.0,
                h: (y1 - y2).abs() + 3.0,
            }
        })
        .collect()
}
