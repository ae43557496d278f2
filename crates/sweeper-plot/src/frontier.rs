//! The frontier chart of a pareto goal: one panel for two objectives, a scatter matrix
//! for three or more, each with its axes, SLA bounds and labels.

use crate::axis::{Axis, text_width};
use crate::best::best_by_trial_svg;
use crate::context::Ctx;
use crate::legend::{draw_legend, draw_strip, empty_svg};
use crate::parts::{bound_near, draw_axes, draw_labels, line_boxes, mark_box, plot_area};
use crate::style::{FRONT, GREY, HEADER, LEGEND_W, Rect, SLA, STRIP, TICK_FONT};
use crate::svg::{Shape, Svg};
use crate::{Chart, Outcome, PlotOptions, PlotPoint};

/// The frontier plot of a pareto goal: with two objectives the first on y and the last on
/// x, every candidate, the front as a step line; with three or more a scatter matrix.
/// A chart of one objective is drawn as [`best_by_trial_svg`].
pub fn frontier_svg(chart: &Chart, options: &PlotOptions) -> String {
    let ctx = Ctx::new(chart, options);
    let dims = chart.objectives.len();
    if dims == 1 {
        return best_by_trial_svg(chart, options);
    }
    let placed = chart
        .points
        .iter()
        .filter(|p| p.placed(dims.max(2)))
        .count();
    if dims == 0 || placed == 0 {
        return empty_svg(&ctx, dims >= 2);
    }
    let unplaced: Vec<&PlotPoint> = chart.points.iter().filter(|p| !p.placed(dims)).collect();
    if dims == 2 {
        let (width, plot_h) = (1000.0, 560.0);
        let strip = if unplaced.is_empty() { 0.0 } else { STRIP };
        let height = HEADER + plot_h + strip;
        let mut svg = Svg::new(width, height);
        svg.heading(&chart.title, &chart.subtitle);
        let frame = Rect {
            x: 0.0,
            y: HEADER,
            w: width - LEGEND_W,
            h: plot_h,
        };
        draw_panel(&mut svg, &ctx, frame, 0, 1, true);
        let legend = Rect {
            x: width - LEGEND_W + 4.0,
            y: HEADER + 24.0,
            w: LEGEND_W - 16.0,
            h: plot_h - 24.0,
        };
        draw_legend(&mut svg, &ctx, legend, true, None);
        draw_strip(&mut svg, &ctx, &unplaced, HEADER + plot_h, width);
        return svg.finish();
    }
    // The scatter matrix: rows are objectives 0..dims-1 on y, columns the objectives from
    // the last one backwards on x, so that the top-left panel is the first objective
    // against the last (the panel a 2-objective plot would show). The upper-left triangle
    // holds every pair once; the legend and the note go to the empty cells bottom right.
    let k = dims - 1;
    let (cw, ch) = (420.0, 380.0);
    let strip = if unplaced.is_empty() { 0.0 } else { STRIP };
    let width = cw * k as f64;
    let height = HEADER + ch * k as f64 + strip;
    let mut svg = Svg::new(width, height);
    svg.heading(&chart.title, &chart.subtitle);
    for r in 0..k {
        for c in 0..k - r {
            let frame = Rect {
                x: cw * c as f64,
                y: HEADER + ch * r as f64,
                w: cw,
                h: ch,
            };
            draw_panel(&mut svg, &ctx, frame, r, dims - 1 - c, false);
        }
    }
    let note = format!(
        "Front points are non-dominated in all {dims} objectives: in a panel of two, a front \
         point can look dominated by a point it beats on an objective the panel does not show."
    );
    let legend = Rect {
        x: cw * (k - 1) as f64 + 40.0,
        y: HEADER + ch + 20.0,
        w: cw - 60.0,
        h: ch * (k - 1) as f64 - 30.0,
    };
    draw_legend(&mut svg, &ctx, legend, false, Some(&note));
    draw_strip(&mut svg, &ctx, &unplaced, HEADER + ch * k as f64, width);
    svg.finish()
}

/// The values an axis must show: the placed points' and the bounds' that are near them.
pub(crate) fn axis_values(ctx: &Ctx, k: usize, other: usize) -> Vec<f64> {
    let mut values: Vec<f64> = ctx
        .chart
        .points
        .iter()
        .filter_map(|p| p.pair(k, other).map(|v| v.0))
        .collect();
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    for b in ctx.chart.bounds.iter().filter(|b| b.objective == k) {
        if bound_near(ctx, b, lo, hi) {
            values.push(b.value);
        }
    }
    values
}

/// Draws objective `yi` against objective `xi` inside `frame`; `line` draws the front's
/// step line (a 2-objective plot).
pub(crate) fn draw_panel(svg: &mut Svg, ctx: &Ctx, frame: Rect, yi: usize, xi: usize, line: bool) {
    let (xo, yo) = (ctx.objective(xi), ctx.objective(yi));
    let (log_x, log_y) = (ctx.log[xi], ctx.log[yi]);
    let ys = axis_values(ctx, yi, xi);
    let xs = axis_values(ctx, xi, yi);
    let probe = Axis::fit(&ys, ((frame.h - 92.0) / 48.0).max(3.0), false, log_y);
    let plot = plot_area(frame, &probe);
    let y_axis = Axis::fit(&ys, (plot.h / 48.0).max(3.0), false, log_y);
    let x_axis = Axis::fit_width(&xs, plot.w, false, log_x, TICK_FONT);
    draw_axes(svg, plot, &x_axis, &y_axis, &xo, &yo);
    let to_px = |(x, y): (f64, f64)| {
        (
            plot.x + x_axis.frac(x) * plot.w,
            plot.y + plot.h - y_axis.frac(y) * plot.h,
        )
    };
    draw_bounds(svg, ctx, plot, &x_axis, xi, &y_axis, yi);
    if line {
        crate::corner::draw_best_corner(svg, plot, &xo, &yo);
    }

    let at = |p: &PlotPoint| p.pair(xi, yi).map(to_px);
    for p in ctx
        .chart
        .points
        .iter()
        .filter(|p| p.outcome == Outcome::Feasible && !p.on_front)
    {
        if let Some((x, y)) = at(p) {
            let color = ctx.colors.color(p, GREY);
            svg.mark(Shape::Dot, x, y, &color, "feasible", &ctx.tooltip(p), None);
        }
    }
    for p in ctx
        .chart
        .points
        .iter()
        .filter(|p| p.outcome != Outcome::Feasible)
    {
        if let Some((x, y)) = at(p) {
            let o = p.outcome;
            svg.mark(
                o.shape(),
                x,
                y,
                o.color(),
                o.as_str(),
                &ctx.tooltip(p),
                None,
            );
        }
    }
    let mut front: Vec<&PlotPoint> = ctx
        .chart
        .points
        .iter()
        .filter(|p| p.outcome == Outcome::Feasible && p.on_front && p.pair(xi, yi).is_some())
        .collect();
    front.sort_by(|a, b| {
        let (pa, pb) = (a.pair(xi, yi), b.pair(xi, yi));
        pa.map(|v| v.0)
            .unwrap_or_default()
            .total_cmp(&pb.map(|v| v.0).unwrap_or_default())
    });
    // what a label must not cover: every mark, and the front's line
    let mut obstacles: Vec<Rect> = ctx
        .chart
        .points
        .iter()
        .filter_map(|p| at(p).map(|(x, y)| mark_box(x, y)))
        .collect();
    if line {
        let pts: Vec<(f64, f64)> = front.iter().filter_map(|p| p.pair(xi, yi)).collect();
        let path: Vec<_> = attainment_steps(&pts, xo.minimize)
            .into_iter()
            .map(to_px)
            .collect();
        svg.polyline(&path, FRONT, 2.2);
        obstacles.extend(line_boxes(&path));
    }
    let outline = if ctx.colors.active() {
        Some("#111111")
    } else {
        None
    };
    for p in &front {
        if let Some((x, y)) = at(p) {
            let color = ctx.colors.color(p, FRONT);
            svg.mark(Shape::Ring, x, y, &color, "front", &ctx.tooltip(p), outline);
        }
    }
    crate::sla::draw_rings(svg, ctx.chart, at);
    let labelled: Vec<((f64, f64), String)> = front
        .iter()
        .filter_map(|p| Some((at(p)?, ctx.label(p)?)))
        .collect();
    draw_labels(svg, ctx, plot, &labelled, &obstacles);
}

/// The SLA lines on either axis, the side that misses them lightly shaded, and their labels.
pub(crate) fn draw_bounds(
    svg: &mut Svg,
    ctx: &Ctx,
    plot: Rect,
    x: &Axis,
    xi: usize,
    y: &Axis,
    yi: usize,
) {
    for b in &ctx.chart.bounds {
        if b.objective == xi && x.contains(b.value) {
            let px = plot.x + x.frac(b.value) * plot.w;
            let minimize = ctx.objective(xi).minimize;
            // a maximized x misses the bound left of the line, a minimized one right of it
            let (sx, sw) = if minimize {
                (px, plot.x + plot.w - px)
            } else {
                (plot.x, px - plot.x)
            };
            svg.rect(sx, plot.y, sw, plot.h, SLA, 0.06);
            svg.dashed(px, plot.y, px, plot.y + plot.h, SLA);
            let right = px + 6.0 + text_width(&b.label, 11.0) < plot.x + plot.w;
            let (tx, anchor) = if right {
                (px + 5.0, "start")
            } else {
                (px - 5.0, "end")
            };
            svg.halo_text(tx, plot.y + 15.0, &b.label, 11.0, anchor);
        }
        if b.objective == yi && y.contains(b.value) {
            let py = plot.y + plot.h - y.frac(b.value) * plot.h;
            let minimize = ctx.objective(yi).minimize;
            let (sy, sh) = if minimize {
                (plot.y, py - plot.y)
            } else {
                (py, plot.y + plot.h - py)
            };
            svg.rect(plot.x, sy, plot.w, sh, SLA, 0.06);
            svg.dashed(plot.x, py, plot.x + plot.w, py, SLA);
            svg.halo_text(plot.x + plot.w - 5.0, py - 5.0, &b.label, 11.0, "end");
        }
    }
}

/// The attainment boundary through front points sorted along x, in data space: between two
/// points the step keeps the worse value of the y objective; a minimized x (a latency)
/// turns the corner first. The frontier chart and the comparison draw it alike.
pub(crate) fn attainment_steps(pts: &[(f64, f64)], minimize_x: bool) -> Vec<(f64, f64)> {
    let mut path = Vec::with_capacity(pts.len() * 2);
    for (k, &p) in pts.iter().enumerate() {
        if k > 0 {
            let prev = pts[k - 1];
            path.push(if minimize_x {
                (p.0, prev.1)
            } else {
                (prev.0, p.1)
            });
        }
        path.push(p);
    }
    path
}
