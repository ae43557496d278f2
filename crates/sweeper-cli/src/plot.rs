//! The frontier plot and the best-by-trial plot, as self-contained SVG documents.
//!
//! Written by hand (no plotting crate): plain SVG shapes and `<text>` elements with a generic
//! `sans-serif` family, so the files embed no fonts, need none at render time beyond what
//! any viewer has, and diff cleanly. Axes get "nice" tick steps (1, 2 or 5 times a power of
//! ten, after Heckbert's *Nice numbers for graph labels*, Graphics Gems, 1990), as many as
//! fit without their labels overlapping. Values that are not finite are skipped, never
//! drawn and never a panic; empty inputs give empty axes.
//!
//! - [`frontier_svg`]: two objectives put the first on y and the last on x (tok/s/gpu
//!   against tok/s/user by default), every candidate in grey, the front as a highlighted
//!   step line through its points; three or more draw one panel per pair of objectives.
//! - [`best_by_trial_svg`]: a scalar goal's score per trial and the best score so far.
//! - [`objective_label`]: a target's axis label with its unit.
//!
//! The step line needs to know which way the x objective points: labels naming a latency
//! (`latency`, `ttft`, `tpot`, `itl`) are taken as minimized, everything else as maximized,
//! as in SPEC 2 where `e2e_latency` is the only minimized target.
//!
//! ```
//! use sweeper_cli::plot::{PlotSeries, frontier_svg};
//! let points = vec![vec![900.0, 30.0], vec![1300.0, 10.0], vec![500.0, 12.0]];
//! let series = PlotSeries {
//!     names: vec!["throughput_per_gpu (tok/s/gpu)".into(), "throughput_per_user (tok/s/user)".into()],
//!     points: &points,
//!     front: &[1, 0],
//! };
//! let svg = frontier_svg("Qwen3-32B-like FP8 on H200", &series);
//! assert!(svg.starts_with("<svg") && svg.contains("tok/s/gpu"));
//! ```

use std::fmt::Write as _;

/// What a frontier plot shows.
#[derive(Debug, Clone)]
pub struct PlotSeries<'a> {
    /// Axis labels, one per objective, with units (e.g. `throughput_per_gpu (tok/s/gpu)`).
    pub names: Vec<String>,
    /// Every feasible candidate, one value per objective.
    pub points: &'a [Vec<f64>],
    /// Indices into `points` of the candidates on the front.
    pub front: &'a [usize],
}

/// An axis label for a goal target: its name and its unit, e.g. `throughput_per_gpu`
/// → `throughput_per_gpu (tok/s/gpu)`. Unknown names are returned as they are.
pub fn objective_label(target: &str) -> String {
    let unit = match target {
        "throughput" | "goodput" => "tok/s",
        "throughput_per_gpu" | "goodput_per_gpu" => "tok/s/gpu",
        "throughput_per_user" => "tok/s/user",
        "e2e_latency" => "ms",
        _ => return target.to_owned(),
    };
    format!("{target} ({unit})")
}

const FONT: &str = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\"";
const GREY: &str = "#9aa0a6";
const FRONT: &str = "#d1495b";
const BEST: &str = "#1f6fb2";
const INK: &str = "#222222";
const GRID: &str = "#e6e6e6";
const TICK_FONT: f64 = 12.0;
const LABEL_FONT: f64 = 13.0;
/// Average advance of a sans-serif glyph, in ems (to keep labels apart).
const GLYPH_EM: f64 = 0.6;

/// The frontier plot of a pareto goal (see the module docs).
pub fn frontier_svg(title: &str, series: &PlotSeries) -> String {
    let dims = series.names.len().max(2);
    if dims == 2 {
        let (width, height) = (820.0, 560.0);
        let mut svg = Svg::new(width, height);
        svg.title(title, width);
        let frame = Rect {
            x: 0.0,
            y: 40.0,
            w: width,
            h: height - 40.0,
        };
        draw_pair(&mut svg, frame, series, 0, dims - 1, true);
        return svg.finish();
    }
    let pairs: Vec<(usize, usize)> = (0..dims)
        .flat_map(|i| (i + 1..dims).map(move |j| (i, j)))
        .collect();
    let cols = pairs.len().min(3);
    let rows = pairs.len().div_ceil(cols);
    let (pw, ph) = (430.0, 360.0);
    let width = pw * cols as f64;
    let height = 40.0 + ph * rows as f64;
    let mut svg = Svg::new(width, height);
    svg.title(title, width);
    for (k, &(i, j)) in pairs.iter().enumerate() {
        let frame = Rect {
            x: pw * (k % cols) as f64,
            y: 40.0 + ph * (k / cols) as f64,
            w: pw,
            h: ph,
        };
        draw_pair(&mut svg, frame, series, i, j, k == 0);
    }
    svg.finish()
}

/// The best score by trial of a scalar goal: each trial's score (`None`: infeasible or
/// failed), and the best score so far (scores are signed so that higher is better).
pub fn best_by_trial_svg(title: &str, score_label: &str, scores: &[(u64, Option<f64>)]) -> String {
    let (width, height) = (820.0, 520.0);
    let mut svg = Svg::new(width, height);
    svg.title(title, width);
    let mut trials: Vec<(u64, Option<f64>)> = scores.to_vec();
    trials.sort_by_key(|t| t.0);
    let scored: Vec<(f64, f64)> = trials
        .iter()
        .filter_map(|&(t, s)| s.filter(|v| v.is_finite()).map(|v| (t as f64, v)))
        .collect();
    let failed: Vec<f64> = trials
        .iter()
        .filter(|t| t.1.is_none())
        .map(|t| t.0 as f64)
        .collect();
    let xs: Vec<f64> = trials.iter().map(|t| t.0 as f64).collect();
    let ys: Vec<f64> = scored.iter().map(|p| p.1).collect();
    let frame = Rect {
        x: 0.0,
        y: 40.0,
        w: width,
        h: height - 40.0,
    };
    let y_axis = Axis::fit(&ys, (frame.h / 55.0).max(3.0), false);
    let plot = plot_area(frame, &y_axis);
    let x_axis = Axis::fit_width(&xs, plot.w, true);
    draw_axes(&mut svg, plot, &x_axis, &y_axis, "trial", score_label);
    let to_px = |x: f64, y: f64| (x_axis.px(x, plot), y_axis.py(y, plot));

    for &(t, s) in &scored {
        let (px, py) = to_px(t, s);
        svg.circle(px, py, 3.2, GREY, 0.8);
    }
    // Best so far: a step that holds its value until a trial beats it.
    let mut best: Option<f64> = None;
    let mut path: Vec<(f64, f64)> = Vec::new();
    for &(t, s) in &scored {
        if best.is_none_or(|b| s > b) {
            if let Some(b) = best {
                path.push(to_px(t, b));
            }
            best = Some(s);
            path.push(to_px(t, s));
        }
    }
    if let (Some(b), Some(&last)) = (best, xs.last()) {
        path.push(to_px(last, b));
    }
    svg.polyline(&path, BEST, 2.2);
    let path = densify(&path);
    let mut best = f64::NEG_INFINITY;
    for &(t, s) in &scored {
        if s > best {
            best = s;
            let (px, py) = to_px(t, s);
            svg.circle_outlined(px, py, 4.2, BEST);
        }
    }
    for &t in &failed {
        let px = x_axis.px(t, plot);
        svg.cross(px, plot.y + plot.h - 6.0, 3.5, FRONT);
    }
    let mut legend = vec![
        LegendEntry::Dot(GREY, format!("trial score ({})", scored.len())),
        LegendEntry::Line(BEST, "best so far".to_owned()),
    ];
    if !failed.is_empty() {
        legend.push(LegendEntry::Cross(
            FRONT,
            format!("infeasible or failed ({})", failed.len()),
        ));
    }
    if scored.is_empty() {
        svg.text(
            plot.x + plot.w / 2.0,
            plot.y + plot.h / 2.0,
            "no feasible trial yet",
            LABEL_FONT,
            "middle",
            GREY,
        );
    }
    let mut pixels: Vec<(f64, f64)> = scored.iter().map(|&(t, s)| to_px(t, s)).collect();
    pixels.extend(path.iter().copied());
    pixels.extend(
        failed
            .iter()
            .map(|&t| (x_axis.px(t, plot), plot.y + plot.h - 6.0)),
    );
    draw_legend(&mut svg, plot, &legend, &pixels);
    svg.finish()
}

/// A rectangle in pixels.
#[derive(Debug, Clone, Copy)]
struct Rect {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

/// Draws objective `yi` against objective `xi` inside `frame`.
fn draw_pair(svg: &mut Svg, frame: Rect, series: &PlotSeries, yi: usize, xi: usize, legend: bool) {
    let name = |i: usize| {
        series
            .names
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("objective {}", i + 1))
    };
    let get = |p: &Vec<f64>| -> Option<(f64, f64)> {
        let (x, y) = (*p.get(xi)?, *p.get(yi)?);
        (x.is_finite() && y.is_finite()).then_some((x, y))
    };
    let all: Vec<(f64, f64)> = series.points.iter().filter_map(get).collect();
    let mut front: Vec<(f64, f64)> = series
        .front
        .iter()
        .filter_map(|&i| series.points.get(i).and_then(get))
        .collect();
    front.sort_by(|a, b| a.0.total_cmp(&b.0));

    let xs: Vec<f64> = all.iter().chain(&front).map(|p| p.0).collect();
    let ys: Vec<f64> = all.iter().chain(&front).map(|p| p.1).collect();
    let y_axis = Axis::fit(&ys, (frame.h / 55.0).max(3.0), false);
    let plot = plot_area(frame, &y_axis);
    let x_axis = Axis::fit_width(&xs, plot.w, false);
    draw_axes(svg, plot, &x_axis, &y_axis, &name(xi), &name(yi));
    let to_px = |p: (f64, f64)| (x_axis.px(p.0, plot), y_axis.py(p.1, plot));

    for &p in &all {
        let (x, y) = to_px(p);
        svg.circle(x, y, 3.0, GREY, 0.75);
    }
    let mut line = Vec::new();
    if series.names.len() <= 2 {
        // The attainment boundary: between two front points the step keeps the worse
        // value of the y objective; a minimized x (a latency) turns the corner first.
        let x_minimized = is_minimized(&name(xi));
        let mut path = Vec::with_capacity(front.len() * 2);
        for (k, &p) in front.iter().enumerate() {
            if k > 0 {
                let prev = front[k - 1];
                let corner = if x_minimized {
                    (p.0, prev.1)
                } else {
                    (prev.0, p.1)
                };
                path.push(to_px(corner));
            }
            path.push(to_px(p));
        }
        svg.polyline(&path, FRONT, 2.2);
        line = densify(&path);
    }
    for &p in &front {
        let (x, y) = to_px(p);
        svg.circle_outlined(x, y, 4.5, FRONT);
    }
    if legend {
        let entries = [
            LegendEntry::Dot(GREY, format!("feasible candidates ({})", all.len())),
            LegendEntry::Front(FRONT, format!("Pareto front ({})", front.len())),
        ];
        let mut pixels: Vec<(f64, f64)> = all.iter().chain(&front).map(|&p| to_px(p)).collect();
        pixels.extend(line);
        draw_legend(svg, plot, &entries, &pixels);
    }
}

/// Points every few pixels along a polyline (so that the legend can avoid the line).
fn densify(path: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for w in path.windows(2) {
        let (a, b) = (w[0], w[1]);
        let steps = ((b.0 - a.0).hypot(b.1 - a.1) / 4.0)
            .ceil()
            .clamp(1.0, 1000.0) as usize;
        for k in 0..=steps {
            let t = k as f64 / steps as f64;
            out.push((a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t));
        }
    }
    out
}

/// Whether an objective's label names a minimized target (only latencies are).
fn is_minimized(label: &str) -> bool {
    let l = label.to_ascii_lowercase();
    ["latency", "ttft", "tpot", "itl"]
        .iter()
        .any(|k| l.contains(k))
}

/// The plot area inside a frame, leaving room for the y tick labels and the axis labels.
fn plot_area(frame: Rect, y_axis: &Axis) -> Rect {
    let label_w = y_axis
        .labels
        .iter()
        .map(|l| text_width(l, TICK_FONT))
        .fold(0.0, f64::max);
    let left = 16.0 + LABEL_FONT + 12.0 + label_w + 8.0;
    let (right, top, bottom) = (28.0, 14.0, 58.0);
    Rect {
        x: frame.x + left,
        y: frame.y + top,
        w: (frame.w - left - right).max(10.0),
        h: (frame.h - top - bottom).max(10.0),
    }
}

fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * GLYPH_EM
}

/// Grid, frame, ticks, tick labels and axis labels.
fn draw_axes(svg: &mut Svg, plot: Rect, x: &Axis, y: &Axis, x_label: &str, y_label: &str) {
    let bottom = plot.y + plot.h;
    for (v, label) in x.ticks.iter().zip(&x.labels) {
        let px = x.px(*v, plot);
        svg.line(px, plot.y, px, bottom, GRID, 1.0);
        svg.line(px, bottom, px, bottom + 5.0, INK, 1.0);
        svg.text(px, bottom + 19.0, label, TICK_FONT, "middle", INK);
    }
    for (v, label) in y.ticks.iter().zip(&y.labels) {
        let py = y.py(*v, plot);
        svg.line(plot.x, py, plot.x + plot.w, py, GRID, 1.0);
        svg.line(plot.x - 5.0, py, plot.x, py, INK, 1.0);
        svg.text(plot.x - 8.0, py + 4.0, label, TICK_FONT, "end", INK);
    }
    let _ = writeln!(
        svg.body,
        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"{INK}\" stroke-width=\"1\"/>",
        plot.x, plot.y, plot.w, plot.h
    );
    svg.text(
        plot.x + plot.w / 2.0,
        bottom + 44.0,
        x_label,
        LABEL_FONT,
        "middle",
        INK,
    );
    let label_w = y
        .labels
        .iter()
        .map(|l| text_width(l, TICK_FONT))
        .fold(0.0, f64::max);
    let lx = plot.x - 8.0 - label_w - 12.0;
    let ly = plot.y + plot.h / 2.0;
    let _ = writeln!(
        svg.body,
        "<text x=\"{lx:.1}\" y=\"{ly:.1}\" {FONT} font-size=\"{LABEL_FONT}\" text-anchor=\"middle\" fill=\"{INK}\" transform=\"rotate(-90 {lx:.1} {ly:.1})\">{}</text>",
        escape(y_label)
    );
}

enum LegendEntry {
    Dot(&'static str, String),
    Front(&'static str, String),
    Line(&'static str, String),
    Cross(&'static str, String),
}

/// Draws the legend in the corner of the plot area that hides the fewest of `points`
/// (pixel positions), preferring top right, then top left, bottom right, bottom left.
fn draw_legend(svg: &mut Svg, plot: Rect, entries: &[LegendEntry], points: &[(f64, f64)]) {
    let row = 20.0;
    let text_w = entries
        .iter()
        .map(|e| match e {
            LegendEntry::Dot(_, t)
            | LegendEntry::Front(_, t)
            | LegendEntry::Line(_, t)
            | LegendEntry::Cross(_, t) => text_width(t, TICK_FONT),
        })
        .fold(0.0, f64::max);
    let w = 40.0 + text_w + 12.0;
    let h = row * entries.len() as f64 + 10.0;
    let (left, right) = (plot.x + 10.0, plot.x + plot.w - w - 10.0);
    let (top, bottom) = (plot.y + 10.0, plot.y + plot.h - h - 18.0);
    let hidden = |(x, y): (f64, f64)| {
        points
            .iter()
            .filter(|p| {
                p.0 >= x - 6.0 && p.0 <= x + w + 6.0 && p.1 >= y - 6.0 && p.1 <= y + h + 6.0
            })
            .count()
    };
    let corners = [(right, top), (left, top), (right, bottom), (left, bottom)];
    let (x, y) = corners
        .iter()
        .copied()
        .min_by_key(|&c| hidden(c))
        .unwrap_or((right, top));
    let _ = writeln!(
        svg.body,
        "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" rx=\"3\" fill=\"#ffffff\" fill-opacity=\"0.92\" stroke=\"#cccccc\"/>"
    );
    for (k, e) in entries.iter().enumerate() {
        let cy = y + 5.0 + row * (k as f64 + 0.5);
        let (sx, tx) = (x + 20.0, x + 38.0);
        let text = match e {
            LegendEntry::Dot(c, t) => {
                svg.circle(sx, cy, 3.0, c, 0.75);
                t
            }
            LegendEntry::Front(c, t) => {
                svg.line(sx - 11.0, cy, sx + 11.0, cy, c, 2.2);
                svg.circle_outlined(sx, cy, 4.5, c);
                t
            }
            LegendEntry::Line(c, t) => {
                svg.line(sx - 11.0, cy, sx + 11.0, cy, c, 2.2);
                t
            }
            LegendEntry::Cross(c, t) => {
                svg.cross(sx, cy, 3.5, c);
                t
            }
        };
        svg.text(tx, cy + 4.0, text, TICK_FONT, "start", INK);
    }
}

/// One axis: its domain (the outer ticks) and labelled ticks.
#[derive(Debug, Clone)]
struct Axis {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
    labels: Vec<String>,
}

impl Axis {
    /// An axis over `values` (finite ones) with about `target` ticks.
    fn fit(values: &[f64], target: f64, integer: bool) -> Axis {
        let (lo, hi) = data_range(values);
        let mut step = nice((hi - lo) / (target - 1.0).max(1.0), true);
        if integer {
            step = step.max(1.0).round();
        }
        // Snap the domain out to the next tick when that wastes little room; else keep the
        // padded data range and label only the ticks inside it.
        let slack = 0.12 * (hi - lo);
        let floor = (lo / step).floor() * step;
        let ceil = (hi / step).ceil() * step;
        let lo = if lo - floor <= slack { floor } else { lo };
        let hi = if ceil - hi <= slack { ceil } else { hi };
        let first = (lo / step - 1e-9).ceil() as i64;
        let last = (hi / step + 1e-9).floor() as i64;
        let ticks: Vec<f64> = (first..=last).map(|k| k as f64 * step).collect();
        let labels = tick_labels(&ticks, step);
        Axis {
            lo,
            hi: if hi > lo { hi } else { lo + step },
            ticks,
            labels,
        }
    }

    /// A horizontal axis with as many ticks as fit `width` pixels without label overlap.
    fn fit_width(values: &[f64], width: f64, integer: bool) -> Axis {
        let mut target = 10.0;
        loop {
            let axis = Axis::fit(values, target, integer);
            let widest = axis
                .labels
                .iter()
                .map(|l| text_width(l, TICK_FONT))
                .fold(0.0, f64::max);
            let room = width / axis.ticks.len().max(1) as f64;
            if widest + 14.0 <= room || target <= 3.0 {
                return axis;
            }
            target -= 1.0;
        }
    }

    fn px(&self, v: f64, r: Rect) -> f64 {
        r.x + (v - self.lo) / (self.hi - self.lo) * r.w
    }

    fn py(&self, v: f64, r: Rect) -> f64 {
        r.y + r.h - (v - self.lo) / (self.hi - self.lo) * r.h
    }
}

/// The range to show: the finite values, padded; from zero when the data sit near it.
fn data_range(values: &[f64]) -> (f64, f64) {
    let (mut lo, mut hi) = values
        .iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        return (0.0, 1.0);
    }
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        let pad = (lo.abs() * 0.1).max(1.0);
        return (lo - pad, hi + pad);
    }
    if lo >= 0.0 && lo <= 0.3 * hi {
        lo = 0.0;
    } else {
        lo -= 0.04 * (hi - lo);
    }
    hi += 0.04 * (hi - lo);
    (lo, hi)
}

/// The nice number near `x`: 1, 2, 5 or 10 times a power of ten (rounded or ceiled).
fn nice(x: f64, round: bool) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let exp = x.log10().floor();
    let base = 10f64.powf(exp);
    let f = x / base;
    let nf = if round {
        if f < 1.5 {
            1.0
        } else if f < 3.0 {
            2.0
        } else if f < 7.0 {
            5.0
        } else {
            10.0
        }
    } else if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nf * base
}

/// Labels with as many decimals as the step needs; thousands as `k`, millions as `M`.
fn tick_labels(ticks: &[f64], step: f64) -> Vec<String> {
    let top = ticks.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let (scale, suffix) = if top >= 1e6 && step >= 1e5 {
        (1e6, "M")
    } else if top >= 1e4 && step >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let scaled = step / scale;
    let decimals = if scaled >= 1.0 {
        0
    } else {
        (-scaled.log10().floor()) as usize
    };
    ticks
        .iter()
        .map(|&v| {
            let s = format!("{:.*}", decimals, v / scale);
            if s.trim_start_matches('-')
                .chars()
                .all(|c| c == '0' || c == '.')
            {
                "0".to_owned()
            } else {
                format!("{s}{suffix}")
            }
        })
        .collect()
}

/// Escapes text for SVG content and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// A minimal SVG writer.
struct Svg {
    width: f64,
    height: f64,
    body: String,
}

impl Svg {
    fn new(width: f64, height: f64) -> Svg {
        Svg {
            width,
            height,
            body: String::new(),
        }
    }

    fn title(&mut self, title: &str, width: f64) {
        // Shrink a long title to fit the width.
        let size = (16.0f64).min((width - 40.0) / (title.chars().count().max(1) as f64 * GLYPH_EM));
        let _ = writeln!(
            self.body,
            "<text x=\"{:.1}\" y=\"27\" {FONT} font-size=\"{size:.1}\" font-weight=\"bold\" text-anchor=\"middle\" fill=\"{INK}\">{}</text>",
            width / 2.0,
            escape(title)
        );
    }

    fn text(&mut self, x: f64, y: f64, text: &str, size: f64, anchor: &str, color: &str) {
        let _ = writeln!(
            self.body,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" {FONT} font-size=\"{size}\" text-anchor=\"{anchor}\" fill=\"{color}\">{}</text>",
            escape(text)
        );
    }

    fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, color: &str, width: f64) {
        let _ = writeln!(
            self.body,
            "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke=\"{color}\" stroke-width=\"{width}\"/>"
        );
    }

    fn polyline(&mut self, points: &[(f64, f64)], color: &str, width: f64) {
        if points.len() < 2 {
            return;
        }
        let mut pts = String::new();
        for (x, y) in points {
            let _ = write!(pts, "{x:.1},{y:.1} ");
        }
        let _ = writeln!(
            self.body,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"{width}\" stroke-linejoin=\"round\"/>",
            pts.trim_end()
        );
    }

    fn circle(&mut self, x: f64, y: f64, r: f64, color: &str, opacity: f64) {
        let _ = writeln!(
            self.body,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r}\" fill=\"{color}\" fill-opacity=\"{opacity}\"/>"
        );
    }

    fn circle_outlined(&mut self, x: f64, y: f64, r: f64, color: &str) {
        let _ = writeln!(
            self.body,
            "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{r}\" fill=\"{color}\" stroke=\"#ffffff\" stroke-width=\"1.2\"/>"
        );
    }

    fn cross(&mut self, x: f64, y: f64, r: f64, color: &str) {
        self.line(x - r, y - r, x + r, y + r, color, 1.6);
        self.line(x - r, y + r, x + r, y - r, color, 1.6);
    }

    fn finish(self) -> String {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n{}</svg>\n",
            self.body,
            w = self.width,
            h = self.height
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps() {
        assert_eq!(nice(0.13, true), 0.1);
        assert_eq!(nice(2.4, true), 2.0);
        assert_eq!(nice(4.0, true), 5.0);
        assert_eq!(nice(8.0, true), 10.0);
        assert_eq!(nice(340.0, true), 500.0);
        assert_eq!(nice(f64::NAN, true), 1.0);
    }

    #[test]
    fn axes_cover_the_data_with_round_ticks() {
        let a = Axis::fit(&[13.0, 1290.0], 6.0, false);
        assert_eq!(a.lo, 0.0);
        assert!(a.hi >= 1290.0);
        assert_eq!(a.labels.first().map(String::as_str), Some("0"));
        let b = Axis::fit(&[0.12, 0.31], 5.0, false);
        assert!(
            b.labels.iter().all(|l| l.starts_with("0.")),
            "{:?}",
            b.labels
        );
        let c = Axis::fit(&[20_000.0, 90_000.0], 5.0, false);
        assert!(
            c.labels.iter().all(|l| l == "0" || l.ends_with('k')),
            "{:?}",
            c.labels
        );
        let d = Axis::fit(&[5.0], 5.0, false);
        assert!(d.lo < 5.0 && d.hi > 5.0);
        let e = Axis::fit(&[-1.0, 1.0], 5.0, false);
        assert!(
            !e.labels.iter().any(|l| l == "-0" || l == "-0.0"),
            "{:?}",
            e.labels
        );
    }

    #[test]
    fn labels_carry_units() {
        assert_eq!(
            objective_label("throughput_per_gpu"),
            "throughput_per_gpu (tok/s/gpu)"
        );
        assert_eq!(objective_label("e2e_latency"), "e2e_latency (ms)");
        assert_eq!(objective_label("custom"), "custom");
        assert!(is_minimized(&objective_label("e2e_latency")));
        assert!(!is_minimized(&objective_label("throughput_per_user")));
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
