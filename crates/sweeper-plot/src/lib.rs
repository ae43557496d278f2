//! `sweeper-plot`: the plots of a sweep — the frontier of a pareto goal and the best score
//! by trial of a scalar one — as self-contained SVG documents, and (feature `png`) as PNG
//! images.
//!
//! Layer 3 of sweeper, beside the sampler: on `sweeper-goal` (objectives, directions, the
//! SLA) and `sweeper-score` (the encoding of non-finite numbers) only; a [`Chart`] in, text
//! out, no file touched. Invariant: every trial of the chart is drawn or counted (a trial
//! without a place on the axes goes to the strip under it), and no value, however odd,
//! makes it panic.
//!
//! Written by hand (no plotting crate): plain SVG shapes and `<text>` with the family
//! `DejaVu Sans, Helvetica, Arial, sans-serif`, so that the files diff cleanly and open in any
//! browser. The PNG renderer ([`png_from_svg`]) embeds a subset of `DejaVu Sans` and uses
//! no system font, so a PNG looks the same on every machine.
//!
//! What a [`Chart`] shows:
//! - every trial as a mark of its [`Outcome`]: feasible candidates as dots, the front as
//!   ringed dots (and, with two objectives, a step line), over-budget trials as hollow
//!   squares, infeasible ones as diamonds, failed ones as crosses, unsupported ones as
//!   plus signs; each outcome counted in the legend. A trial without a report (over the
//!   budget before it ran, failed) has no place on the axes: its mark goes to the strip
//!   under the chart, one per trial, so it is counted and can still be hovered;
//! - a tooltip (`<title>`, shown on hover) on every mark: the trial, its parameters, its
//!   objective values, its GPUs and, when it did not count, why;
//! - optional labels (parameters written beside the front points) and a colour per value of
//!   one parameter ([`PlotOptions`]);
//! - the goal's SLA where an objective maps to it ([`sla_bounds`]): an ITL bound of 50 ms is
//!   the line at 20 tok/s/user, an end-to-end bound the line on the `e2e_latency` axis; the
//!   side that misses it is shaded;
//! - a title and a subtitle (model, GPU, ISL/OSL, load, budget, SLA, where known);
//! - a log axis for a latency or for any data spanning more than 100× (see [`Scale`]);
//!   each axis says which way is better (`↑ better`, `→ better`, ...);
//! - three or more objectives as a scatter matrix (one panel per pair, the front
//!   highlighted in each, and a line saying why a front point can look dominated in a
//!   2-D projection);
//! - when nothing can be placed, a message saying so and why, instead of empty axes.
//!
//! Values that are not finite are never placed and never a panic.
//!
//! ```
//! use sweeper_plot::{Chart, Outcome, PlotObjective, PlotOptions, PlotPoint, frontier_svg};
//! use sweeper_goal::Objective;
//!
//! let mut chart = Chart::new(
//!     "Qwen3-32B-like FP8 on H200",
//!     vec![
//!         PlotObjective::of(Objective::ThroughputPerGpu),
//!         PlotObjective::of(Objective::ThroughputPerUser),
//!     ],
//! );
//! for (trial, values, front) in [(0, [900.0, 30.0], true), (1, [500.0, 12.0], false)] {
//!     let mut point = PlotPoint::new(trial, Outcome::Feasible, Some(values.to_vec()));
//!     point.on_front = front;
//!     chart.points.push(point);
//! }
//! chart.points.push(PlotPoint::new(2, Outcome::OverBudget, None));
//! let svg = frontier_svg(&chart, &PlotOptions::default());
//! assert!(svg.starts_with("<svg") && svg.contains("tok/s/gpu"));
//! assert!(svg.contains("over the GPU budget (1, no report)"));
//! ```

mod axis;
#[cfg(feature = "png")]
mod png;
mod svg;

#[cfg(feature = "png")]
pub use png::{PngError, png_from_svg};

use axis::{Axis, compact, text_width};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;
use svg::{INK, Shape, Svg};
use sweeper_goal::{Direction, Objective, Sla};

/// One objective of a chart: an axis.
#[derive(Debug, Clone, PartialEq)]
pub struct PlotObjective {
    /// Its name (`throughput_per_gpu`, a column name).
    pub name: String,
    /// Its unit (`tok/s/gpu`, `ms`), empty when unknown.
    pub unit: String,
    /// Whether lower is better.
    pub minimize: bool,
}

impl PlotObjective {
    /// An objective with a name, a unit (may be empty) and a direction.
    pub fn new(name: impl Into<String>, unit: impl Into<String>, direction: Direction) -> Self {
        PlotObjective {
            name: name.into(),
            unit: unit.into(),
            minimize: direction == Direction::Minimize,
        }
    }

    /// A goal's objective, with its unit and direction.
    pub fn of(objective: Objective) -> Self {
        PlotObjective::new(objective.name(), objective.unit(), objective.direction())
    }

    /// The axis label: `name (unit)`, or the name alone.
    pub fn label(&self) -> String {
        if self.unit.is_empty() {
            self.name.clone()
        } else {
            format!("{} ({})", self.name, self.unit)
        }
    }

    /// Whether the objective is a latency (a minimized time, or a name that says so): its
    /// axis is logarithmic by default.
    pub fn is_latency(&self) -> bool {
        let n = self.name.to_ascii_lowercase();
        self.minimize
            && (matches!(self.unit.as_str(), "ms" | "s")
                || ["latency", "ttft", "tpot", "itl", "e2e"]
                    .iter()
                    .any(|k| n.contains(k)))
    }

    fn better(&self, horizontal: bool) -> &'static str {
        match (horizontal, self.minimize) {
            (true, false) => "→ better",
            (true, true) => "← better",
            (false, false) => "↑ better",
            (false, true) => "↓ better",
        }
    }
}

/// An axis label for a goal target: its name and its unit, e.g. `throughput_per_gpu`
/// → `throughput_per_gpu (tok/s/gpu)`. Unknown names are returned as they are.
pub fn objective_label(target: &str) -> String {
    match Objective::from_name(target) {
        Some(o) => PlotObjective::of(o).label(),
        None => target.to_owned(),
    }
}

/// How a trial ended, as a chart draws it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Outcome {
    /// Evaluated within the GPU budget: a candidate.
    Feasible,
    /// Over the GPU budget (placed when it still has a report).
    OverBudget,
    /// Declared infeasible by the evaluator, or over `max_eval_seconds`.
    Infeasible,
    /// The evaluation failed.
    Failed,
    /// The evaluator does not support the configuration.
    Unsupported,
}

const OUTCOMES: [Outcome; 5] = [
    Outcome::Feasible,
    Outcome::OverBudget,
    Outcome::Infeasible,
    Outcome::Failed,
    Outcome::Unsupported,
];

impl Outcome {
    /// The class of its marks in the SVG (`mark over-budget`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Feasible => "feasible",
            Outcome::OverBudget => "over-budget",
            Outcome::Infeasible => "infeasible",
            Outcome::Failed => "failed",
            Outcome::Unsupported => "unsupported",
        }
    }

    fn legend(self) -> &'static str {
        match self {
            Outcome::Feasible => "feasible candidates",
            Outcome::OverBudget => "over the GPU budget",
            Outcome::Infeasible => "infeasible",
            Outcome::Failed => "failed",
            Outcome::Unsupported => "unsupported",
        }
    }

    fn shape(self) -> Shape {
        match self {
            Outcome::Feasible => Shape::Dot,
            Outcome::OverBudget => Shape::Square,
            Outcome::Infeasible => Shape::Diamond,
            Outcome::Failed => Shape::Cross,
            Outcome::Unsupported => Shape::Plus,
        }
    }

    fn color(self) -> &'static str {
        match self {
            Outcome::Feasible => GREY,
            Outcome::OverBudget => "#d97706",
            Outcome::Infeasible => "#7c3aed",
            Outcome::Failed => "#b91c1c",
            Outcome::Unsupported => "#6b7280",
        }
    }
}

/// A parameter value of a point (for tooltips, labels and colours).
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    /// A number.
    Number(f64),
    /// Anything else, as text.
    Text(String),
}

impl Param {
    /// A configuration value from JSON: numbers as numbers (`"inf"` too), the rest as text;
    /// `null` is `None`.
    pub fn from_json(value: &Value) -> Option<Param> {
        match value {
            Value::Null => None,
            Value::Number(n) => n.as_f64().map(Param::Number),
            Value::String(s) => Some(
                sweeper_score::json_f64::parse_non_finite(s)
                    .map_or_else(|| Param::Text(s.clone()), Param::Number),
            ),
            Value::Bool(b) => Some(Param::Text(b.to_string())),
            other => Some(Param::Text(other.to_string())),
        }
    }

    /// The value as a label shows it.
    pub fn text(&self) -> String {
        match self {
            Param::Number(v) => precise(*v),
            Param::Text(s) => s.clone(),
        }
    }

    /// The number, or NaN for text.
    pub fn number(&self) -> f64 {
        match self {
            Param::Number(v) => *v,
            Param::Text(_) => f64::NAN,
        }
    }
}

/// One trial (or row) of a chart.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PlotPoint {
    /// The trial id (or the row number of a table).
    pub id: u64,
    /// How it ended.
    pub outcome: Outcome,
    /// One raw value per objective of the chart, or `None` without a report.
    pub values: Option<Vec<f64>>,
    /// Whether it is on the Pareto front (feasible points only).
    pub on_front: bool,
    /// Its configuration, in the order tooltips list it.
    pub params: Vec<(String, Param)>,
    /// The GPUs it used, when known.
    pub gpus: Option<f64>,
    /// Why it did not count (everything but feasible).
    pub reason: Option<String>,
}

impl PlotPoint {
    /// A point with no parameters, GPUs or reason, not on the front.
    pub fn new(id: u64, outcome: Outcome, values: Option<Vec<f64>>) -> PlotPoint {
        PlotPoint {
            id,
            outcome,
            values,
            on_front: false,
            params: Vec::new(),
            gpus: None,
            reason: None,
        }
    }

    fn param(&self, key: &str) -> Option<&Param> {
        self.params.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The values at objectives `i` and `j`, when both are finite.
    fn pair(&self, i: usize, j: usize) -> Option<(f64, f64)> {
        let v = self.values.as_ref()?;
        let (a, b) = (*v.get(i)?, *v.get(j)?);
        (a.is_finite() && b.is_finite()).then_some((a, b))
    }

    /// Whether every objective's value is there and finite (the point can be placed in
    /// any panel).
    fn placed(&self, dims: usize) -> bool {
        self.values
            .as_ref()
            .is_some_and(|v| v.len() >= dims && v[..dims].iter().all(|x| x.is_finite()))
    }
}

/// A line at a value of one objective: where the goal's SLA lies on that axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// The objective (index into the chart's objectives).
    pub objective: usize,
    /// The value on its axis.
    pub value: f64,
    /// What it is (`SLA ITL ≤ 50 ms (≥ 20 tok/s/user)`).
    pub label: String,
}

/// The lines of an SLA on the axes of `objectives`: `e2e_ms` on `e2e_latency` (or a column
/// `mean_e2e_latency_ms`), `itl_ms` as `1000 / itl_ms` on `throughput_per_user` (or
/// `mean_output_token_throughput_per_user`: a user receiving a token every ITL ms gets
/// 1000/ITL tokens a second), or as itself on a column `mean_itl_ms`; `ttft_ms` on a column
/// `mean_ttft_ms`. An SLA bound with no such axis is not drawn (the subtitle names it).
pub fn sla_bounds(sla: &Sla, objectives: &[PlotObjective]) -> Vec<Bound> {
    let mut out = Vec::new();
    for (k, o) in objectives.iter().enumerate() {
        let bound = match o.name.as_str() {
            "e2e_latency" | "mean_e2e_latency_ms" => sla
                .e2e_ms
                .map(|e| (e, format!("SLA e2e ≤ {} ms", precise(e)))),
            "throughput_per_user" | "mean_output_token_throughput_per_user" => {
                sla.itl_ms.map(|itl| {
                    let rate = 1000.0 / itl;
                    (
                        rate,
                        format!(
                            "SLA ITL ≤ {} ms (≥ {} tok/s/user)",
                            precise(itl),
                            compact(rate)
                        ),
                    )
                })
            }
            "mean_itl_ms" => sla
                .itl_ms
                .map(|itl| (itl, format!("SLA ITL ≤ {} ms", precise(itl)))),
            "mean_ttft_ms" => sla
                .ttft_ms
                .map(|t| (t, format!("SLA TTFT ≤ {} ms", precise(t)))),
            _ => None,
        };
        if let Some((value, label)) = bound {
            out.push(Bound {
                objective: k,
                value,
                label,
            });
        }
    }
    out
}

/// The SLA in words, for a subtitle: `SLA TTFT ≤ 1000 ms, ITL ≤ 50 ms`.
pub fn sla_text(sla: &Sla) -> String {
    let parts: Vec<String> = [
        ("TTFT", sla.ttft_ms),
        ("ITL", sla.itl_ms),
        ("e2e", sla.e2e_ms),
    ]
    .iter()
    .filter_map(|(name, v)| v.map(|v| format!("{name} ≤ {} ms", precise(v))))
    .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("SLA {}", parts.join(", "))
    }
}

/// What a plot shows: the objectives (axes), every point, and the SLA lines.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Chart {
    /// The title (model, GPU).
    pub title: String,
    /// The line under it (workload, load, budget, SLA); may be empty.
    pub subtitle: String,
    /// What a point's id is: `trial` or `row`.
    pub id_label: String,
    /// The objectives: with two, the first is y and the last x; a best-by-trial chart has
    /// one.
    pub objectives: Vec<PlotObjective>,
    /// Every trial or row.
    pub points: Vec<PlotPoint>,
    /// SLA lines.
    pub bounds: Vec<Bound>,
}

impl Chart {
    /// A chart with no points, no subtitle and no SLA; ids are trials.
    pub fn new(title: impl Into<String>, objectives: Vec<PlotObjective>) -> Chart {
        Chart {
            title: title.into(),
            subtitle: String::new(),
            id_label: "trial".to_owned(),
            objectives,
            points: Vec::new(),
            bounds: Vec::new(),
        }
    }

    fn count(&self, outcome: Outcome) -> usize {
        self.points.iter().filter(|p| p.outcome == outcome).count()
    }
}

/// The scale of an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scale {
    /// Logarithmic for a latency or for positive data spanning more than 100×, else
    /// linear.
    #[default]
    Auto,
    /// Linear.
    Linear,
    /// Logarithmic (linear after all when a value is zero or negative).
    Log,
}

/// A scale for every axis (`log`) or for one objective's axis (`e2e_latency=linear`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleRule {
    /// The objective it applies to; `None`: every axis.
    pub objective: Option<String>,
    /// The scale.
    pub scale: Scale,
}

impl std::str::FromStr for ScaleRule {
    type Err = String;

    /// `auto`, `linear`, `log`, or `NAME=auto|linear|log`.
    fn from_str(text: &str) -> Result<ScaleRule, String> {
        let (objective, scale) = match text.rsplit_once('=') {
            Some((name, scale)) if !name.trim().is_empty() => (Some(name.trim().to_owned()), scale),
            Some(_) => return Err(format!("`{text}`: the objective name before `=` is empty")),
            None => (None, text),
        };
        let scale = match scale.trim().to_ascii_lowercase().as_str() {
            "auto" => Scale::Auto,
            "linear" | "lin" => Scale::Linear,
            "log" => Scale::Log,
            other => {
                return Err(format!(
                    "`{other}` is not a scale: use auto, linear or log, alone or as OBJECTIVE=log"
                ));
            }
        };
        Ok(ScaleRule { objective, scale })
    }
}

/// How to draw: labels, colours, scales.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PlotOptions {
    /// Parameters written beside each front point (best-by-trial: each new best), their
    /// values joined by `/`.
    pub labels: Vec<String>,
    /// A parameter whose values colour the candidates.
    pub color_by: Option<String>,
    /// Axis scales; the last rule that names an axis (or names none) wins.
    pub scales: Vec<ScaleRule>,
}

impl PlotOptions {
    fn scale_of(&self, name: &str) -> Scale {
        self.scales
            .iter()
            .rev()
            .find(|r| r.objective.as_deref().is_none_or(|o| o == name))
            .map_or(Scale::Auto, |r| r.scale)
    }
}

/// A number for tooltips and labels: whole numbers as integers, others with 6 significant
/// digits at most.
fn precise(v: f64) -> String {
    if !v.is_finite() {
        return compact(v);
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    let digits = (5 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
    let mut s = format!("{v:.digits$}");
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    s
}

const GREY: &str = "#8a9096";
const FRONT: &str = "#d1495b";
const BEST: &str = "#1f6fb2";
const GRID: &str = "#e6e6e6";
const SLA: &str = "#c2410c";
const TICK_FONT: f64 = 12.0;
const LABEL_FONT: f64 = 13.0;
const LEGEND_FONT: f64 = 12.0;
/// Height of the title and subtitle.
const HEADER: f64 = 62.0;
/// Width of the legend column right of a single panel.
const LEGEND_W: f64 = 260.0;
/// Height of the strip of marks of trials that have no place on the axes.
const STRIP: f64 = 30.0;
/// Colours of categories, in order of first appearance.
const PALETTE: [&str; 10] = [
    "#2b6cb0", "#dd6b20", "#2f855a", "#b83280", "#6b46c1", "#c53030", "#0987a0", "#975a16",
    "#4a5568", "#b7791f",
];
/// A sequential ramp (dark blue → teal → yellow) for numeric colours with many values.
const RAMP: [(f64, [f64; 3]); 3] = [
    (0.0, [44.0, 62.0, 158.0]),
    (0.5, [31.0, 161.0, 135.0]),
    (1.0, [222.0, 190.0, 30.0]),
];
/// More distinct numeric values than this are coloured on the ramp, not as categories.
const MAX_CATEGORIES: usize = 10;

/// A rectangle in pixels.
#[derive(Debug, Clone, Copy)]
struct Rect {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

/// Colours of points by one parameter.
enum Colorer {
    /// No colouring: every candidate grey.
    Off,
    /// The parameter is in no point.
    Missing(String),
    /// One colour per value (text, or few numbers), with each value's count.
    Categories {
        key: String,
        values: Vec<(String, &'static str, usize)>,
        /// Each value's colour, to look a point's up at once.
        colour_of: HashMap<String, &'static str>,
    },
    /// Numbers on a ramp from `lo` to `hi`.
    Ramp { key: String, lo: f64, hi: f64 },
}

impl Colorer {
    fn new(chart: &Chart, key: Option<&str>) -> Colorer {
        let Some(key) = key else {
            return Colorer::Off;
        };
        let found: Vec<&Param> = chart
            .points
            .iter()
            .filter(|p| p.outcome == Outcome::Feasible)
            .filter_map(|p| p.param(key))
            .collect();
        if found.is_empty() {
            return Colorer::Missing(key.to_owned());
        }
        let numbers: Vec<f64> = found
            .iter()
            .filter_map(|p| match p {
                Param::Number(v) if v.is_finite() => Some(*v),
                _ => None,
            })
            .collect();
        // Each distinct text once, in the order first met, with how many points have it:
        // one hash look-up per point, so that many distinct values stay linear.
        let mut count_of: HashMap<String, usize> = HashMap::new();
        let mut distinct: Vec<String> = Vec::new();
        for p in &found {
            let t = p.text();
            if let Some(n) = count_of.get_mut(&t) {
                *n += 1;
            } else {
                count_of.insert(t.clone(), 1);
                distinct.push(t);
            }
        }
        if numbers.len() == found.len() && distinct.len() > MAX_CATEGORIES {
            let lo = numbers.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = numbers.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            return Colorer::Ramp {
                key: key.to_owned(),
                lo,
                hi,
            };
        }
        if numbers.len() == found.len() {
            distinct.sort_by(|a, b| {
                let n = |s: &str| s.parse::<f64>().unwrap_or(f64::NAN);
                n(a).total_cmp(&n(b))
            });
        }
        let values: Vec<(String, &'static str, usize)> = distinct
            .into_iter()
            .enumerate()
            .map(|(i, t)| {
                let n = count_of.get(&t).copied().unwrap_or(0);
                // beyond the palette, the rest share grey
                (t, PALETTE.get(i).copied().unwrap_or(GREY), n)
            })
            .collect();
        let colour_of = values.iter().map(|(t, c, _)| (t.clone(), *c)).collect();
        Colorer::Categories {
            key: key.to_owned(),
            values,
            colour_of,
        }
    }

    /// The fill of a feasible point: its value's colour, `default` when uncoloured.
    fn color(&self, p: &PlotPoint, default: &str) -> String {
        let Some(v) = (match self {
            Colorer::Categories { key, .. } | Colorer::Ramp { key, .. } => p.param(key),
            _ => None,
        }) else {
            return default.to_owned();
        };
        match self {
            Colorer::Categories { colour_of, .. } => {
                (*colour_of.get(&v.text()).unwrap_or(&GREY)).to_owned()
            }
            Colorer::Ramp { lo, hi, .. } => match v {
                Param::Number(x) if x.is_finite() => {
                    ramp(if hi > lo { (x - lo) / (hi - lo) } else { 0.5 })
                }
                _ => GREY.to_owned(),
            },
            _ => default.to_owned(),
        }
    }

    fn active(&self) -> bool {
        matches!(self, Colorer::Categories { .. } | Colorer::Ramp { .. })
    }
}

/// The ramp's colour at `t` in [0, 1].
fn ramp(t: f64) -> String {
    let t = t.clamp(0.0, 1.0);
    let k = RAMP.windows(2).position(|w| t <= w[1].0).unwrap_or(0);
    let ((t0, a), (t1, b)) = (RAMP[k], RAMP[k + 1]);
    let u = (t - t0) / (t1 - t0);
    let c: Vec<u8> = (0..3)
        .map(|i| (a[i] + (b[i] - a[i]) * u).round().clamp(0.0, 255.0) as u8)
        .collect();
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}

/// Everything a drawing needs besides the chart.
struct Ctx<'a> {
    chart: &'a Chart,
    options: &'a PlotOptions,
    colors: Colorer,
    /// Per objective: a log axis?
    log: Vec<bool>,
}

impl<'a> Ctx<'a> {
    fn new(chart: &'a Chart, options: &'a PlotOptions) -> Ctx<'a> {
        let log = (0..chart.objectives.len())
            .map(|k| wants_log(chart, options, k))
            .collect();
        Ctx {
            chart,
            options,
            colors: Colorer::new(chart, options.color_by.as_deref()),
            log,
        }
    }

    fn objective(&self, k: usize) -> PlotObjective {
        self.chart.objectives.get(k).cloned().unwrap_or_else(|| {
            PlotObjective::new(format!("objective {}", k + 1), "", Direction::Maximize)
        })
    }

    /// The tooltip of a point: id and standing, objective values, parameters, GPUs, reason.
    fn tooltip(&self, p: &PlotPoint) -> String {
        let mut tip = format!("{} {}", self.chart.id_label, p.id);
        match p.outcome {
            Outcome::Feasible if p.on_front => tip.push_str(" · on the Pareto front"),
            Outcome::Feasible => {}
            other => {
                let _ = write!(tip, " · {}", other.legend());
            }
        }
        if let Some(values) = &p.values {
            for (k, v) in values.iter().enumerate() {
                let o = self.objective(k);
                let _ = write!(tip, "\n{} = {}", o.name, precise(*v));
                if !o.unit.is_empty() {
                    let _ = write!(tip, " {}", o.unit);
                }
            }
        }
        let params: Vec<String> = p
            .params
            .iter()
            .map(|(k, v)| format!("{k}={}", v.text()))
            .collect();
        if !params.is_empty() {
            let _ = write!(tip, "\n{}", params.join(" · "));
        }
        if let Some(g) = p.gpus {
            let _ = write!(tip, "\nGPUs: {}", precise(g));
        }
        if let Some(r) = &p.reason {
            let _ = write!(tip, "\nreason: {r}");
        }
        tip
    }

    /// The label of a point: its values of the label parameters, joined by `/`.
    fn label(&self, p: &PlotPoint) -> Option<String> {
        if self.options.labels.is_empty() {
            return None;
        }
        let parts: Vec<String> = self
            .options
            .labels
            .iter()
            .map(|k| p.param(k).map_or_else(|| "?".to_owned(), Param::text))
            .collect();
        Some(parts.join("/"))
    }
}

/// Whether objective `k` gets a log axis (see [`Scale`]).
fn wants_log(chart: &Chart, options: &PlotOptions, k: usize) -> bool {
    let Some(o) = chart.objectives.get(k) else {
        return false;
    };
    let values: Vec<f64> = chart
        .points
        .iter()
        .filter_map(|p| p.values.as_ref().and_then(|v| v.get(k)).copied())
        .filter(|v| v.is_finite())
        .collect();
    let positive = !values.is_empty() && values.iter().all(|&v| v > 0.0);
    match options.scale_of(&o.name) {
        Scale::Linear => false,
        Scale::Log => positive,
        Scale::Auto => {
            let (lo, hi) = values
                .iter()
                .fold((f64::INFINITY, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
            positive && (o.is_latency() || hi / lo > 100.0)
        }
    }
}

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

/// The plot area inside a frame, leaving room for the y title above it, the y tick labels
/// left of it and the x tick labels and title below it.
fn plot_area(frame: Rect, y_axis: &Axis) -> Rect {
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

/// The values an axis must show: the placed points' and the bounds' that are near them.
fn axis_values(ctx: &Ctx, k: usize, other: usize) -> Vec<f64> {
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

/// Whether a bound lies among or a little way outside the data `lo..=hi` of its axis (the
/// axis is stretched to show it), rather than far off the chart.
fn bound_near(ctx: &Ctx, b: &Bound, lo: f64, hi: f64) -> bool {
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
fn bound_text(ctx: &Ctx, b: &Bound) -> String {
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

/// Draws objective `yi` against objective `xi` inside `frame`; `line` draws the front's
/// step line (a 2-objective plot).
fn draw_panel(svg: &mut Svg, ctx: &Ctx, frame: Rect, yi: usize, xi: usize, line: bool) {
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
    if line {
        // The attainment boundary: between two front points the step keeps the worse
        // value of the y objective; a minimized x (a latency) turns the corner first.
        let mut path = Vec::with_capacity(front.len() * 2);
        let pts: Vec<(f64, f64)> = front.iter().filter_map(|p| p.pair(xi, yi)).collect();
        for (k, &p) in pts.iter().enumerate() {
            if k > 0 {
                let prev = pts[k - 1];
                let corner = if xo.minimize {
                    (p.0, prev.1)
                } else {
                    (prev.0, p.1)
                };
                path.push(to_px(corner));
            }
            path.push(to_px(p));
        }
        svg.polyline(&path, FRONT, 2.2);
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
    let labelled: Vec<((f64, f64), String)> = front
        .iter()
        .filter_map(|p| Some((at(p)?, ctx.label(p)?)))
        .collect();
    draw_labels(svg, plot, &labelled);
}

/// Grid, frame, ticks, tick labels, and each axis's title with the way that is better.
fn draw_axes(
    svg: &mut Svg,
    plot: Rect,
    x: &Axis,
    y: &Axis,
    xo: &PlotObjective,
    yo: &PlotObjective,
) {
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
    let scale = |log: bool| if log { ", log scale" } else { "" };
    let x_title = format!("{}{}   {}", xo.label(), scale(x.log), xo.better(true));
    svg.text(
        plot.x + plot.w / 2.0,
        bottom + 42.0,
        &x_title,
        LABEL_FONT,
        "middle",
        INK,
    );
    let y_title = format!("{}{}   {}", yo.label(), scale(y.log), yo.better(false));
    svg.text(
        plot.x - 8.0,
        plot.y - 12.0,
        &y_title,
        LABEL_FONT,
        "start",
        INK,
    );
}

/// The SLA lines on either axis, the side that misses them lightly shaded, and their labels.
fn draw_bounds(svg: &mut Svg, ctx: &Ctx, plot: Rect, x: &Axis, xi: usize, y: &Axis, yi: usize) {
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

/// Writes labels beside points, each in the first of four places (right-above,
/// right-below, left-above, left-below) that overlaps no label already written and stays
/// inside the plot; a label with no free place is left out (the tooltip still has it).
fn draw_labels(svg: &mut Svg, plot: Rect, labelled: &[((f64, f64), String)]) {
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

/// One line of a legend.
enum Entry {
    Mark(Shape, String, String, Option<&'static str>),
    Line(&'static str, String),
    Dashed(&'static str, String),
    Text(String, bool),
}

/// The legend: a count per outcome, the front, colours, labels, SLA lines, and a note,
/// top-down inside `area`; lines that do not fit are left out.
fn draw_legend(svg: &mut Svg, ctx: &Ctx, area: Rect, front_line: bool, note: Option<&str>) {
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
fn outcome_entries(chart: &Chart, dims: usize, place: &str) -> Vec<Entry> {
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
fn style_entries(ctx: &Ctx, what: &str) -> Vec<Entry> {
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
        let text = format!("labels: {}", ctx.options.labels.join("/"));
        entries.push(Entry::Text(text, false));
    }
    for b in &ctx.chart.bounds {
        entries.push(Entry::Dashed(SLA, bound_text(ctx, b)));
    }
    entries
}

/// Writes legend entries top-down, wrapping long text to the width.
fn write_legend(svg: &mut Svg, area: Rect, entries: &[Entry]) {
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
                    svg::FONT,
                    svg::escape(line)
                );
            } else {
                svg.text(x, ty, line, LEGEND_FONT, "start", INK);
            }
        }
        y += row * lines.len() as f64;
    }
}

/// Splits text into lines of at most `width` pixels, at spaces.
fn wrap(text: &str, width: f64, size: f64) -> Vec<String> {
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
fn draw_strip(svg: &mut Svg, ctx: &Ctx, points: &[&PlotPoint], top: f64, width: f64) {
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
fn empty_svg(ctx: &Ctx, pareto: bool) -> String {
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
        svg::FONT,
        svg::escape(&headline)
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

/// The best score by trial of a scalar goal: each trial's value of the goal's objective
/// (the chart's one objective) and the best value so far, in the objective's direction.
/// Trials that are not feasible are drawn with their own marks (at their value when they
/// have one, else in the row under the axis at their trial number) and counted.
pub fn best_by_trial_svg(chart: &Chart, options: &PlotOptions) -> String {
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
    let labelled: Vec<((f64, f64), String)> = bests
        .iter()
        .filter_map(|&(p, v)| Some((to_px(p.id as f64, v), ctx.label(p)?)))
        .collect();
    draw_labels(&mut svg, plot, &labelled);

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
fn draw_axes_trial(
    svg: &mut Svg,
    plot: Rect,
    x: &Axis,
    y: &Axis,
    xo: &PlotObjective,
    yo: &PlotObjective,
) {
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
    svg.text(
        plot.x + plot.w / 2.0,
        bottom + 56.0,
        &xo.name,
        LABEL_FONT,
        "middle",
        INK,
    );
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
