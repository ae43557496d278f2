//! `sweeper-plot`: the plots of a sweep — the frontier of a pareto goal, the best score
//! by trial of a scalar one, GPUs against goodput for `min_gpus` — as self-contained SVG
//! documents, and (feature `png`) as PNG images.
//!
//! Layer 3 of sweeper, beside the sampler: on `sweeper-goal` (objectives, directions, the
//! SLA) and `sweeper-score` (the encoding of non-finite numbers) only; a [`Chart`] in, text
//! out, no file touched. Invariant: every trial of the chart is drawn or counted (a trial
//! without a place on the axes goes to the strip under it), and no value, however odd,
//! makes it panic.
//!
//! Written by hand (no plotting crate): plain SVG shapes and `<text>` with the family
//! `DejaVu Sans, Helvetica, Arial, sans-serif`, so that the files diff cleanly and open in any
//! browser. The PNG renderer (`png_from_svg`, feature `png`) embeds a subset of `DejaVu Sans` and uses
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
//! - optional labels (parameters written beside the front points, each in a free place
//!   around its point or further out with a leader line, never over another label or a
//!   mark; those with no free place counted in the legend) and a colour per value of one
//!   parameter ([`PlotOptions`]);
//! - the goal's SLA where an objective maps to it ([`sla_bounds`]): an ITL bound of 50 ms is
//!   the line at 20 tok/s/user, an end-to-end bound the line on the `e2e_latency` axis; the
//!   side that misses it is shaded; a bound no axis shows (TTFT on a tok/s/gpu ×
//!   tok/s/user chart, [`sla_checks`]) rings the points that break it and counts them in
//!   the legend (`over TTFT 2000 ms: 12`);
//! - with two objectives, the best corner marked (`best corner ↘` for a cost against
//!   tok/s/user); `cost_per_mtok`'s unit spelt out as `$ per 1M output tokens`;
//! - for a `min_gpus` goal ([`Chart::floor`]), GPUs against goodput instead of the best by
//!   trial ([`min_gpus_svg`]): the floor a line, the candidates that reach it apart, the
//!   fewest-GPU one that reaches it ringed;
//! - a title and a subtitle (model, GPU, ISL/OSL, load, budget, SLA, where known);
//! - a log axis for a latency or for any data spanning more than 100× (see [`Scale`]);
//!   each axis says which way is better (`↑ better`, `→ better`, ...);
//! - three or more objectives as a scatter matrix (one panel per pair, the front
//!   highlighted in each, and a line saying why a front point can look dominated in a
//!   2-D projection);
//! - when nothing can be placed, a message saying so and why, instead of empty axes;
//! - several sweeps on one chart ([`compare_svg`]): a front per [`Series`] in its own
//!   colour, a legend entry each, tooltips that name the series, each series' breaches of
//!   an SLA bound no axis shows ringed and counted, each series' own labels
//!   ([`Series::labels`]); series whose objectives differ are refused
//!   ([`PlotError::Objectives`]); `min_gpus` series ([`Chart::floor`]) are drawn together
//!   as GPUs against goodput, each floor a line and each series' answer ringed (beside
//!   another goal: [`PlotError::Floor`]).
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
mod best;
mod compare;
mod compare_gpus;
mod context;
mod corner;
mod error;
mod frontier;
mod legend;
mod parts;
#[cfg(feature = "png")]
mod png;
mod series;
mod sizing;
mod sla;
mod style;
mod svg;

#[cfg(feature = "png")]
pub use png::png_from_svg;

/// The error of [`png_from_svg`]: the crate's one error type, under its former name.
#[cfg(feature = "png")]
pub type PngError = PlotError;

pub use best::best_by_trial_svg;
pub use compare::{compare_svg, compare_title};
pub use error::PlotError;
pub use frontier::frontier_svg;
pub use series::Series;
pub use sizing::min_gpus_svg;
pub use sla::{SlaCheck, sla_checks};

use axis::compact;
use serde_json::Value;
use style::GREY;
use svg::Shape;
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

    /// The axis label: `name (unit)`, or the name alone; a unit in short (`$/Mtok`) is
    /// spelt out (`$ per 1M output tokens`).
    pub fn label(&self) -> String {
        if self.unit.is_empty() {
            self.name.clone()
        } else {
            format!("{} ({})", self.name, axis_unit(&self.unit))
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

/// A unit as an axis title spells it: `$/Mtok` (the unit of `cost_per_mtok`) is dollars
/// per million output tokens; every other unit is shown as it is.
fn axis_unit(unit: &str) -> &str {
    match unit {
        "$/Mtok" => "$ per 1M output tokens",
        other => other,
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
    /// The bounds of [`Chart::checks`] it breaks (their index) and its value of each: set
    /// by [`PlotPoint::check_sla`].
    pub over_sla: Vec<(usize, f64)>,
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
            over_sla: Vec::new(),
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
            "ttft" | "mean_ttft_ms" => sla
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
    /// The goodput floor (`min_goodput_rps`, requests/s) of a `min_gpus` goal: with it, a
    /// chart of one objective (the goodput) is drawn by [`min_gpus_svg`], GPUs against
    /// goodput.
    pub floor: Option<f64>,
    /// The SLA bounds no axis shows ([`sla_checks`]): a point that breaks one
    /// ([`PlotPoint::over_sla`]) gets a ring and a tooltip line, and each bound a count in
    /// the legend.
    pub checks: Vec<SlaCheck>,
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
            floor: None,
            checks: Vec::new(),
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
