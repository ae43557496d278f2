//! Several sweeps on one chart: a front per sweep, each in its own colour with its own
//! legend entry, on shared axes (the way to compare GPUs, models or deployment modes).

use crate::axis::Axis;
use crate::context::Ctx;
use crate::frontier::{attainment_steps, axis_values, draw_bounds};
use crate::legend::{Entry, style_entries, write_legend};
use crate::parts::{draw_axes, draw_labels, line_boxes, mark_box, plot_area};
use crate::series::{Series, colour, draw_series_strip, label_of, merge, shared_options};
use crate::style::{HEADER, LEGEND_W, Rect, STRIP, TICK_FONT};
use crate::svg::{Shape, Svg};
use crate::{Chart, OUTCOMES, Outcome, PlotError, PlotOptions};

/// The default title of a comparison: the series' own title when they all share it (the
/// same model and GPU under two configs), else their names, `A vs B vs C`.
pub fn compare_title(series: &[Series]) -> String {
    let Some(first) = series.first().map(|s| &s.chart.title) else {
        return String::new();
    };
    if !first.is_empty() && series.iter().all(|s| &s.chart.title == first) {
        return first.clone();
    }
    series
        .iter()
        .map(|s| s.name.as_str())
        .collect::<Vec<_>>()
        .join(" vs ")
}

/// An objective list as `name:max, name:min`.
fn objectives_text(chart: &Chart) -> String {
    chart
        .objectives
        .iter()
        .map(|o| format!("{}:{}", o.name, if o.minimize { "min" } else { "max" }))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Several sweeps on one chart: every series' candidates and other trials in its colour
/// (the outcome still told by the mark's shape), its front as a step line (two objectives)
/// or ringed dots (a scatter matrix for three or more), a legend entry per series with its
/// front and feasible counts, and a tooltip on every mark that starts with the series'
/// name; a point over an SLA bound no axis shows ([`Chart::checks`]) ringed, each bound
/// counted in the legend; each series' points labelled by [`Series::labels`] when set.
/// `title` heads the chart; the subtitle is the series' own when they all share it.
/// Colours are the series': `options.color_by` is not used. When every series is a
/// `min_gpus` chart ([`Chart::floor`]), the chart is GPUs against goodput: each floor a
/// line, each series' fewest-GPU candidate over its floor ringed and named.
///
/// # Errors
/// [`PlotError::NoSeries`] for no series, [`PlotError::Floor`] for `min_gpus` series beside
/// others, [`PlotError::Scalar`] for a series with one objective (and no floor),
/// [`PlotError::Objectives`] for a series whose objectives (names, order and directions)
/// differ from the first one's.
pub fn compare_svg(
    title: &str,
    series: &[Series],
    options: &PlotOptions,
) -> Result<String, PlotError> {
    let first = series.first().ok_or(PlotError::NoSeries)?;
    let floors = series.iter().filter(|s| s.chart.floor.is_some()).count();
    if floors == series.len() {
        return Ok(crate::compare_gpus::min_gpus_compare_svg(
            title, series, options,
        ));
    }
    if floors > 0 {
        let sized = series.iter().find(|s| s.chart.floor.is_some());
        let other = series.iter().find(|s| s.chart.floor.is_none());
        if let (Some(sized), Some(other)) = (sized, other) {
            return Err(PlotError::Floor {
                name: sized.name.clone(),
                other: other.name.clone(),
            });
        }
    }
    for (k, s) in series.iter().enumerate() {
        if s.chart.objectives.len() == 1 {
            return Err(PlotError::Scalar {
                name: s.name.clone(),
                objective: objectives_text(&s.chart),
            });
        }
        let same = s.chart.objectives.len() == first.chart.objectives.len()
            && s.chart
                .objectives
                .iter()
                .zip(&first.chart.objectives)
                .all(|(a, b)| a.name == b.name && a.minimize == b.minimize);
        if !same {
            return Err(PlotError::Objectives {
                series: k,
                name: s.name.clone(),
                found: objectives_text(&s.chart),
                first: first.name.clone(),
                expected: objectives_text(&first.chart),
            });
        }
    }
    let (merged, owner) = merge(title, series);
    let shared = shared_options(series, options);
    let ctx = Ctx::new(&merged, &shared);
    let view = View {
        ctx: &ctx,
        series,
        owner: &owner,
    };
    let dims = merged.objectives.len();
    let unplaced: Vec<usize> = (0..merged.points.len())
        .filter(|&i| !merged.points[i].placed(dims))
        .collect();
    let strip = if unplaced.is_empty() { 0.0 } else { STRIP };
    let svg = if dims == 2 {
        let (width, plot_h) = (1000.0, 560.0);
        let mut svg = Svg::new(width, HEADER + plot_h + strip);
        svg.heading(&merged.title, &merged.subtitle);
        let frame = Rect {
            x: 0.0,
            y: HEADER,
            w: width - LEGEND_W,
            h: plot_h,
        };
        view.panel(&mut svg, frame, 0, 1, true);
        let legend = Rect {
            x: width - LEGEND_W + 4.0,
            y: HEADER + 24.0,
            w: LEGEND_W - 16.0,
            h: plot_h - 24.0,
        };
        write_legend(&mut svg, legend, &view.legend(None));
        view.strip(&mut svg, &unplaced, HEADER + plot_h, width);
        svg
    } else {
        // the scatter matrix of the frontier chart: the same cells, the legend bottom right
        let k = dims - 1;
        let (cw, ch) = (420.0, 380.0);
        let width = cw * k as f64;
        let mut svg = Svg::new(width, HEADER + ch * k as f64 + strip);
        svg.heading(&merged.title, &merged.subtitle);
        for r in 0..k {
            for c in 0..k - r {
                let frame = Rect {
                    x: cw * c as f64,
                    y: HEADER + ch * r as f64,
                    w: cw,
                    h: ch,
                };
                view.panel(&mut svg, frame, r, dims - 1 - c, false);
            }
        }
        let note = format!(
            "Each sweep's front is non-dominated in all {dims} objectives within that sweep: \
             in a panel of two, a front point can look dominated."
        );
        let legend = Rect {
            x: cw * (k - 1) as f64 + 40.0,
            y: HEADER + ch + 20.0,
            w: cw - 60.0,
            h: ch * (k - 1) as f64 - 30.0,
        };
        write_legend(&mut svg, legend, &view.legend(Some(&note)));
        view.strip(&mut svg, &unplaced, HEADER + ch * k as f64, width);
        svg
    };
    Ok(svg.finish())
}

/// What the panels of a comparison draw from.
struct View<'a> {
    /// The merged chart's context (axes, scales, SLA lines, labels).
    ctx: &'a Ctx<'a>,
    series: &'a [Series],
    /// The series of each point of the merged chart.
    owner: &'a [usize],
}

impl View<'_> {
    /// A point's tooltip: its series' name, then what a single chart's tooltip says.
    fn tooltip(&self, i: usize) -> String {
        let name = &self.series[self.owner[i]].name;
        format!("{name} · {}", self.ctx.tooltip(&self.ctx.chart.points[i]))
    }

    /// Objective `yi` against `xi` inside `frame`: shared axes and SLA lines, then each
    /// series' marks and front in its colour, then the labels of every front (placed
    /// together, so that they avoid one another across series).
    fn panel(&self, svg: &mut Svg, frame: Rect, yi: usize, xi: usize, line: bool) {
        let ctx = self.ctx;
        let (xo, yo) = (ctx.objective(xi), ctx.objective(yi));
        let (log_x, log_y) = (ctx.log[xi], ctx.log[yi]);
        let ys = axis_values(ctx, yi, xi);
        let xs = axis_values(ctx, xi, yi);
        let probe = Axis::fit(&ys, ((frame.h - 92.0) / 48.0).max(3.0), false, log_y);
        let plot = plot_area(frame, &probe);
        let y_axis = Axis::fit(&ys, (plot.h / 48.0).max(3.0), false, log_y);
        let x_axis = Axis::fit_width(&xs, plot.w, false, log_x, TICK_FONT);
        draw_axes(svg, plot, &x_axis, &y_axis, &xo, &yo);
        draw_bounds(svg, ctx, plot, &x_axis, xi, &y_axis, yi);
        let to_px = |(x, y): (f64, f64)| {
            (
                plot.x + x_axis.frac(x) * plot.w,
                plot.y + plot.h - y_axis.frac(y) * plot.h,
            )
        };
        let points = &ctx.chart.points;
        let at = |i: usize| points[i].pair(xi, yi).map(to_px);
        // everything off the fronts first, so that the fronts are drawn over it
        for (i, p) in points.iter().enumerate() {
            if p.outcome == Outcome::Feasible && p.on_front {
                continue;
            }
            if let Some((x, y)) = at(i) {
                let kind = format!("{} series-{}", p.outcome.as_str(), self.owner[i]);
                let c = colour(self.owner[i]);
                svg.mark(p.outcome.shape(), x, y, c, &kind, &self.tooltip(i), None);
            }
        }
        let mut labelled: Vec<((f64, f64), String)> = Vec::new();
        // what a label must not cover: every mark, and every front's line
        let mut obstacles: Vec<Rect> = (0..points.len())
            .filter_map(|i| at(i).map(|(x, y)| mark_box(x, y)))
            .collect();
        for k in 0..self.series.len() {
            let mut front: Vec<usize> = (0..points.len())
                .filter(|&i| {
                    self.owner[i] == k
                        && points[i].outcome == Outcome::Feasible
                        && points[i].on_front
                        && points[i].pair(xi, yi).is_some()
                })
                .collect();
            front.sort_by(|&a, &b| {
                let x = |i: usize| points[i].pair(xi, yi).map_or(0.0, |v| v.0);
                x(a).total_cmp(&x(b))
            });
            if line {
                // the attainment boundary of this series, as the frontier chart draws it
                let pts: Vec<(f64, f64)> = front
                    .iter()
                    .filter_map(|&i| points[i].pair(xi, yi))
                    .collect();
                let path: Vec<_> = attainment_steps(&pts, xo.minimize)
                    .into_iter()
                    .map(to_px)
                    .collect();
                svg.polyline(&path, colour(k), 2.2);
                obstacles.extend(line_boxes(&path));
            }
            for &i in &front {
                if let Some((x, y)) = at(i) {
                    let kind = format!("front series-{k}");
                    svg.mark(Shape::Ring, x, y, colour(k), &kind, &self.tooltip(i), None);
                    if let Some(text) = label_of(ctx, self.series, self.owner, i) {
                        labelled.push(((x, y), text));
                    }
                }
            }
        }
        crate::sla::draw_rings(svg, ctx.chart, |p| p.pair(xi, yi).map(to_px));
        draw_labels(svg, ctx, plot, &labelled, &obstacles);
    }

    /// The legend: a line per series (its colour, its front and feasible counts, its title
    /// when it says more than its name), a count per other outcome, the labels and the SLA
    /// lines, and a note.
    fn legend(&self, note: Option<&str>) -> Vec<Entry> {
        let mut entries = Vec::new();
        for (k, s) in self.series.iter().enumerate() {
            let count = |front: bool| {
                s.chart
                    .points
                    .iter()
                    .filter(|p| p.outcome == Outcome::Feasible && (p.on_front || !front))
                    .count()
            };
            let text = format!(
                "{}: front {} of {} feasible",
                s.name,
                count(true),
                count(false)
            );
            entries.push(Entry::Line(colour(k), text));
            let told = [s.name.as_str(), self.ctx.chart.title.as_str(), ""];
            if !told.contains(&s.chart.title.as_str()) {
                entries.push(Entry::Text(s.chart.title.clone(), false));
            }
        }
        for o in OUTCOMES.iter().skip(1) {
            let n = self.ctx.chart.count(*o);
            if n > 0 {
                let text = format!("{} ({n}, in its sweep's colour)", o.legend());
                entries.push(Entry::Mark(o.shape(), "#555555".into(), text, None));
            }
        }
        entries.extend(style_entries(self.ctx, "candidate"));
        if let Some(n) = note {
            entries.push(Entry::Text(n.to_owned(), false));
        }
        entries
    }

    /// The strip under the chart: a mark per point without a place on the axes, in its
    /// series' colour, with its tooltip; `+N more` past the width.
    fn strip(&self, svg: &mut Svg, unplaced: &[usize], top: f64, width: f64) {
        let points = &self.ctx.chart.points;
        draw_series_strip(svg, points, self.owner, unplaced, (top, width), |i| {
            self.tooltip(i)
        });
    }
}
