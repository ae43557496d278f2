//! The best-by-trial chart of a scalar goal.

use crate::axis::Axis;
use crate::context::Ctx;
use crate::legend::{Entry, empty_svg, outcome_entries, style_entries, write_legend};
use crate::parts::{
    bound_near, draw_grid, draw_labels, draw_y_title, line_boxes, mark_box, plot_area,
};
use crate::style::{BEST, GREY, HEADER, LABEL_FONT, LEGEND_W, Rect, SLA, TICK_FONT};
use crate::svg::{INK, Shape, Svg};
use crate::{Chart, Outcome, PlotObjective, PlotOptions, PlotPoint};
use sweeper_goal::Direction;

/// The best score by trial of a scalar goal: each trial's value of the goal's objective
/// (the chart's one objective) and the best value so far, in the objective's direction.
/// Trials that are not feasible are drawn with their own marks (at their value when they
/// have one, else in the row under the axis at their trial number) and counted.
///
/// A chart with a goodput floor ([`Chart::floor`], a `min_gpus` goal) is drawn as
/// [`min_gpus_svg`](crate::min_gpus_svg) instead: GPUs against goodput.
pub fn best_by_trial_svg(chart: &Chart, options: &PlotOptions) -> String {
    if chart.floor.is_some() {
        return crate::sizing::min_gpus_svg(chart, options);
    }
    let ctx = Ctx::new(chart, options);
    let placed: Vec<&PlotPoint> = chart.points.iter().filter(|p| p.placed(1)).collect();
    if !placed.iter().any(|p| p.outcome == Outcome::Feasible) {
        return empty_svg(&ctx, false);
    }
    let objective = ctx.objective(0);
    let (width, plot_h) = (1000.0, 540.0);
    let mut svg = Svg::new(width, HEADER + plot_h);
    svg.heading(&chart.title, &chart.subtitle);
    let frame = Rect {
        x: 0.0,
        y: HEADER,
        w: width - LEGEND_W,
        h: plot_h,
    };
    let mut ys: Vec<f64> = placed
        .iter()
        .filter_map(|p| p.pair(0, 0).map(|v| v.0))
        .collect();
    let (lo, hi) = ys
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    for b in chart.bounds.iter().filter(|b| b.objective == 0) {
        if bound_near(&ctx, b, lo, hi) {
            ys.push(b.value);
        }
    }
    let log_y = ctx.log.first().copied().unwrap_or(false);
    let probe = Axis::fit(&ys, ((frame.h - 92.0) / 48.0).max(3.0), false, log_y);
    let mut plot = plot_area(frame, &probe);
    // room for the row of trials without a value, between the tick labels and the title
    plot.h -= 16.0;
    let y_axis = Axis::fit(&ys, (plot.h / 48.0).max(3.0), false, log_y);
    let xs: Vec<f64> = chart.points.iter().map(|p| p.id as f64).collect();
    let x_axis = Axis::fit_width(&xs, plot.w, true, false, TICK_FONT);
    let trial_axis = PlotObjective::new(chart.id_label.clone(), "", Direction::Maximize);
    draw_axes_trial(&mut svg, plot, &x_axis, &y_axis, &trial_axis, &objective);
    let to_px = |x: f64, y: f64| {
        (
            plot.x + x_axis.frac(x) * plot.w,
            plot.y + plot.h - y_axis.frac(y) * plot.h,
        )
    };
    for b in chart
        .bounds
        .iter()
        .filter(|b| b.objective == 0 && y_axis.contains(b.value))
    {
        let (_, py) = to_px(0.0, b.value);
        let (sy, sh) = if objective.minimize {
            (plot.y, py - plot.y)
        } else {
            (py, plot.y + plot.h - py)
        };
        svg.rect(plot.x, sy, plot.w, sh, SLA, 0.06);
        svg.dashed(plot.x, py, plot.x + plot.w, py, SLA);
        svg.halo_text(plot.x + plot.w - 5.0, py - 5.0, &b.label, 11.0, "end");
    }
    let mut sorted: Vec<&PlotPoint> = chart.points.iter().collect();
    sorted.sort_by_key(|p| p.id);
    let better = |a: f64, b: f64| if objective.minimize { a < b } else { a > b };
    let feasible: Vec<(&PlotPoint, f64)> = sorted
        .iter()
        .filter(|p| p.outcome == Outcome::Feasible)
        .filter_map(|p| p.pair(0, 0).map(|v| (*p, v.0)))
        .collect();
    let mut bests: Vec<(&PlotPoint, f64)> = Vec::new();
    for &(p, v) in &feasible {
        if bests.last().is_none_or(|&(_, b)| better(v, b)) {
            bests.push((p, v));
        }
    }
    for &(p, v) in &feasible {
        if !bests.iter().any(|(b, _)| std::ptr::eq(*b, p)) {
            let (x, y) = to_px(p.id as f64, v);
            let color = ctx.colors.color(p, GREY);
            svg.mark(Shape::Dot, x, y, &color, "feasible", &ctx.tooltip(p), None);
        }
    }
    // trials without a finite value: marks in a row under the axis, at their trial
    let rug_y = plot.y + plot.h + 30.0;
    for p in &sorted {
        let o = p.outcome;
        let (x, y) = match p.pair(0, 0) {
            Some(_) if o == Outcome::Feasible => continue,
            Some((v, _)) => to_px(p.id as f64, v),
            None => (to_px(p.id as f64, 0.0).0, rug_y),
        };
        let color = if o == Outcome::Feasible {
            GREY
        } else {
            o.color()
        };
        svg.mark(o.shape(), x, y, color, o.as_str(), &ctx.tooltip(p), None);
    }
    // Best so far: a step that holds its value until a trial beats it.
    let mut path: Vec<(f64, f64)> = Vec::new();
    for (k, &(p, v)) in bests.iter().enumerate() {
        if k > 0 {
            path.push(to_px(p.id as f64, bests[k - 1].1));
        }
        path.push(to_px(p.id as f64, v));
    }
    if let (Some(&(_, b)), Some(last)) = (bests.last(), sorted.last()) {
        path.push(to_px(last.id as f64, b));
    }
    svg.polyline(&path, BEST, 2.2);
    let outline = if ctx.colors.active() {
        Some("#111111")
    } else {
        None
    };
    for &(p, v) in &bests {
        let (x, y) = to_px(p.id as f64, v);
        let color = ctx.colors.color(p, BEST);
        svg.mark(Shape::Ring, x, y, &color, "best", &ctx.tooltip(p), outline);
    }
    crate::sla::draw_rings(&mut svg, chart, |p| {
        p.pair(0, 0).map(|(v, _)| to_px(p.id as f64, v))
    });
    let labelled: Vec<((f64, f64), String)> = bests
        .iter()
        .filter_map(|&(p, v)| Some((to_px(p.id as f64, v), ctx.label(p)?)))
        .collect();
    let mut obstacles: Vec<Rect> = sorted
        .iter()
        .filter_map(|p| {
            let (x, y) = to_px(p.id as f64, p.pair(0, 0)?.0);
            Some(mark_box(x, y))
        })
        .collect();
    obstacles.extend(line_boxes(&path));
    draw_labels(&mut svg, &ctx, plot, &labelled, &obstacles);

    let mut entries = vec![
        if ctx.colors.active() {
            Entry::Text(
                format!("{} value ({})", chart.id_label, feasible.len()),
                true,
            )
        } else {
            Entry::Mark(
                Shape::Dot,
                GREY.into(),
                format!("{} value ({})", chart.id_label, feasible.len()),
                None,
            )
        },
        Entry::Line(BEST, format!("best so far ({} improvements)", bests.len())),
    ];
    entries.extend(outcome_entries(chart, 1, "under the axis"));
    entries.extend(style_entries(&ctx, "trial"));
    let legend = Rect {
        x: width - LEGEND_W + 4.0,
        y: HEADER + 24.0,
        w: LEGEND_W - 16.0,
        h: plot_h - 24.0,
    };
    write_legend(&mut svg, legend, &entries);
    svg.finish()
}

/// [`draw_axes`] for a best-by-trial chart: the x axis is the trial number, its title
/// below the row of trials without a value.
pub(crate) fn draw_axes_trial(
    svg: &mut Svg,
    plot: Rect,
    x: &Axis,
    y: &Axis,
    xo: &PlotObjective,
    yo: &PlotObjective,
) {
    draw_grid(svg, plot, x, y);
    svg.text(
        plot.x + plot.w / 2.0,
        plot.y + plot.h + 56.0,
        &xo.name,
        LABEL_FONT,
        "middle",
        INK,
    );
    draw_y_title(svg, plot, y, yo);
}
