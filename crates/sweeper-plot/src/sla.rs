//! The SLA bounds no axis shows (a TTFT bound on a tok/s/gpu × tok/s/user chart): each is
//! checked against every point's report, and the points that break it get a ring of their
//! own, a line in their tooltip and a count in the legend.

use crate::style::SLA;
use crate::svg::{Shape, Svg};
use crate::{Chart, PlotObjective, PlotPoint, precise};
use sweeper_goal::{Sla, StrictSla};

/// An SLA bound that no axis of a chart shows, checked point by point.
#[derive(Debug, Clone, PartialEq)]
pub struct SlaCheck {
    /// What it is, as the legend counts it: `over TTFT 2000 ms`, `over ITL 30 ms (p90)`.
    pub label: String,
    /// The report key it reads: `mean_ttft_ms`, or `p90_ttft_ms` under
    /// `strict_sla: {percentile: 90}` (the key a strict SLA checks, so that the marks and
    /// the over-SLA trials agree).
    pub key: String,
    /// The bound, in ms: a value above it breaks it, a value equal to it passes.
    pub limit: f64,
}

impl SlaCheck {
    /// Whether `value` breaks the bound.
    pub fn broken_by(&self, value: f64) -> bool {
        value > self.limit
    }
}

/// The axis names on which a bound is drawn as a line by [`crate::sla_bounds`]: TTFT,
/// ITL (as itself, or as tokens a second per user), end-to-end latency.
const AXES: [(&str, &[&str]); 3] = [
    ("TTFT", &["ttft", "mean_ttft_ms"]),
    (
        "ITL",
        &[
            "throughput_per_user",
            "mean_output_token_throughput_per_user",
            "mean_itl_ms",
        ],
    ),
    ("e2e", &["e2e_latency", "mean_e2e_latency_ms"]),
];

/// The bounds of `sla` that no objective of `objectives` shows as a line (see
/// [`crate::sla_bounds`]), each with the report key it is checked against: the mean's
/// (`mean_ttft_ms`, `mean_itl_ms`, `mean_e2e_latency_ms`), or under `strict` the keys the
/// strict SLA reads (a percentile's, `p90_ttft_ms`, ...).
///
/// ```
/// use sweeper_goal::{Objective, Sla};
/// use sweeper_plot::{PlotObjective, sla_checks};
/// let sla = Sla { ttft_ms: Some(2000.0), itl_ms: Some(50.0), e2e_ms: None };
/// let axes = [
///     PlotObjective::of(Objective::ThroughputPerGpu),
///     PlotObjective::of(Objective::ThroughputPerUser),
/// ];
/// // ITL is the line at 20 tok/s/user; TTFT has no axis: it is checked point by point
/// let checks = sla_checks(&sla, None, &axes);
/// assert_eq!(checks.len(), 1);
/// assert_eq!((checks[0].label.as_str(), checks[0].key.as_str()), ("over TTFT 2000 ms", "mean_ttft_ms"));
/// assert!(checks[0].broken_by(2000.5) && !checks[0].broken_by(2000.0));
/// ```
pub fn sla_checks(
    sla: &Sla,
    strict: Option<StrictSla>,
    objectives: &[PlotObjective],
) -> Vec<SlaCheck> {
    let keys = strict.unwrap_or_default().keys();
    let suffix = strict
        .and_then(|s| s.percentile)
        .map_or_else(String::new, |p| format!(" (p{p})"));
    let limits = [sla.ttft_ms, sla.itl_ms, sla.e2e_ms];
    AXES.iter()
        .zip(limits)
        .zip(keys)
        .filter_map(|(((name, axes), limit), key)| {
            let limit = limit?;
            let shown = objectives.iter().any(|o| axes.contains(&o.name.as_str()));
            (!shown).then(|| SlaCheck {
                label: format!("over {name} {} ms{suffix}", precise(limit)),
                key,
                limit,
            })
        })
        .collect()
}

impl PlotPoint {
    /// Checks the point against `checks` with its report's values (`value_of(key)`),
    /// recording each bound it breaks and by what value in [`PlotPoint::over_sla`]; a key
    /// the report lacks breaks nothing here (a strict SLA fails such a trial by itself).
    pub fn check_sla(&mut self, checks: &[SlaCheck], value_of: impl Fn(&str) -> Option<f64>) {
        self.over_sla = checks
            .iter()
            .enumerate()
            .filter_map(|(k, c)| {
                let v = value_of(&c.key)?;
                c.broken_by(v).then_some((k, v))
            })
            .collect();
    }
}

impl Chart {
    /// How many points break check `k`.
    pub(crate) fn over_count(&self, k: usize) -> usize {
        self.points
            .iter()
            .filter(|p| p.over_sla.iter().any(|(i, _)| *i == k))
            .count()
    }
}

/// The tooltip lines of a point's broken bounds: `over SLA: mean_ttft_ms = 2680 > 2000 ms`.
pub(crate) fn tooltip_lines(chart: &Chart, p: &PlotPoint) -> Vec<String> {
    p.over_sla
        .iter()
        .filter_map(|&(k, v)| {
            let c = chart.checks.get(k)?;
            Some(format!(
                "over SLA: {} = {} > {} ms",
                c.key,
                precise(v),
                precise(c.limit)
            ))
        })
        .collect()
}

/// A ring (no tooltip: the point's own mark has it) around each point at `place` that
/// breaks a bound no axis shows.
pub(crate) fn draw_rings(
    svg: &mut Svg,
    chart: &Chart,
    place: impl Fn(&PlotPoint) -> Option<(f64, f64)>,
) {
    for p in chart.points.iter().filter(|p| !p.over_sla.is_empty()) {
        if let Some((x, y)) = place(p) {
            svg.mark(Shape::Breach, x, y, SLA, "over-sla", "", None);
        }
    }
}
