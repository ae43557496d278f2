//! Pieces both charts draw: the plot area inside a frame, the grid and ticks, the y title,
//! point labels, and where an SLA bound sits.

use crate::Bound;
use crate::PlotObjective;
use crate::axis::{Axis, text_width};
use crate::context::Ctx;
use crate::style::{GRID, LABEL_FONT, Rect, TICK_FONT};
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

/// Writes labels beside points, each in the first of four places (right-above,
/// right-below, left-above, left-below) that overlaps no label already written and stays
/// inside the plot; a label with no free place is left out (the tooltip still has it).
pub(crate) fn draw_labels(svg: &mut Svg, plot: Rect, labelled: &[((f64, f64), String)]) {
    let size = 10.5;
    let mut taken: Vec<Rect> = Vec::new();
    for ((x, y), text) in labelled {
        let w = text_width(text, size);
        let h = size + 2.0;
        let places = [
            (x + 7.0, y - 6.0 - h),
            (x + 7.0, y + 6.0),
            (x - 7.0 - w, y - 6.0 - h),
            (x - 7.0 - w, y + 6.0),
        ];
        let free = places.iter().copied().find(|&(bx, by)| {
            let r = Rect { x: bx, y: by, w, h };
            r.x >= plot.x
                && r.x + r.w <= plot.x + plot.w
                && r.y >= plot.y
                && r.y + r.h <= plot.y + plot.h
                && !taken.iter().any(|t| {
                    r.x < t.x + t.w && t.x < r.x + r.w && r.y < t.y + t.h && t.y < r.y + r.h
                })
        });
        if let Some((bx, by)) = free {
            taken.push(Rect { x: bx, y: by, w, h });
            svg.halo_text(bx, by + h - 2.5, text, size, "start");
        }
    }
}
