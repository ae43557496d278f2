//! The sweeps of a comparison and what their one chart shares: each sweep's [`Series`], its
//! colour, the merged chart of every point and the options every series draws with. Both
//! comparison charts (fronts, and GPUs against goodput) draw from these.

use crate::axis::text_width;
use crate::context::Ctx;
use crate::style::{LEGEND_FONT, PALETTE, STRIP};
use crate::svg::Svg;
use crate::{Chart, PlotOptions, PlotPoint};

/// One sweep of a comparison: its chart and the name its legend entry and tooltips give it.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The name in the legend and in every tooltip (a directory name, `H200`, `disagg`).
    pub name: String,
    /// Its chart: objectives, points (with `on_front` set per sweep), SLA bounds, the SLA
    /// checks no axis shows and the goodput floor of a `min_gpus` goal; its title is written
    /// under its name in the legend when it says more than the name.
    pub chart: Chart,
    /// The parameters written beside this series' points, in place of
    /// [`PlotOptions::labels`] (`sweeper plot A B` sets each sweep's searched load, as
    /// `sweeper plot DIR` does for one); `None`: the options' labels.
    pub labels: Option<Vec<String>>,
}

impl Series {
    /// A series of a chart under a name, labelled by the options.
    pub fn new(name: impl Into<String>, chart: Chart) -> Series {
        Series {
            name: name.into(),
            chart,
            labels: None,
        }
    }
}

/// The colour of series `k`: the category palette, repeated past its end.
pub(crate) fn colour(k: usize) -> &'static str {
    PALETTE[k % PALETTE.len()]
}

/// One chart of every point, for what is shared: the axes' ranges and scales, the SLA
/// lines and the SLA checks no axis shows (each distinct one once, every point's breaches
/// renumbered onto the shared list), the legend's option lines; and each point's series.
pub(crate) fn merge(title: &str, series: &[Series]) -> (Chart, Vec<usize>) {
    let Some(first) = series.first() else {
        return (Chart::new(title, Vec::new()), Vec::new());
    };
    let mut merged = Chart::new(title, first.chart.objectives.clone());
    merged.id_label.clone_from(&first.chart.id_label);
    let mut owner: Vec<usize> = Vec::new();
    for (k, s) in series.iter().enumerate() {
        // where each of this series' checks is in the shared list
        let at: Vec<usize> = s
            .chart
            .checks
            .iter()
            .map(|c| {
                let same = |m: &&crate::SlaCheck| m.key == c.key && m.limit == c.limit;
                merged
                    .checks
                    .iter()
                    .position(|m| same(&m))
                    .unwrap_or_else(|| {
                        merged.checks.push(c.clone());
                        merged.checks.len() - 1
                    })
            })
            .collect();
        merged.points.extend(s.chart.points.iter().map(|p| {
            let mut p = p.clone();
            p.over_sla = p
                .over_sla
                .iter()
                .filter_map(|&(i, v)| Some((*at.get(i)?, v)))
                .collect();
            p
        }));
        owner.extend(std::iter::repeat_n(k, s.chart.points.len()));
        for b in &s.chart.bounds {
            if !merged
                .bounds
                .iter()
                .any(|m| m.objective == b.objective && m.value == b.value)
            {
                merged.bounds.push(b.clone());
            }
        }
    }
    if series
        .iter()
        .all(|s| s.chart.subtitle == first.chart.subtitle)
    {
        merged.subtitle.clone_from(&first.chart.subtitle);
    }
    (merged, owner)
}

/// The options every series shares: no colour by parameter (the colour is the series'),
/// and, when series have labels of their own, every one of them named (for the legend).
pub(crate) fn shared_options(series: &[Series], options: &PlotOptions) -> PlotOptions {
    let mut shared = PlotOptions {
        color_by: None,
        ..options.clone()
    };
    for keys in series.iter().filter_map(|s| s.labels.as_ref()) {
        for k in keys {
            if !shared.labels.contains(k) {
                shared.labels.push(k.clone());
            }
        }
    }
    shared
}

/// The label of point `i` of a merged chart: its series' own label parameters when it has
/// some, else the options'.
pub(crate) fn label_of(ctx: &Ctx, series: &[Series], owner: &[usize], i: usize) -> Option<String> {
    let p = &ctx.chart.points[i];
    match series.get(owner[i]).and_then(|s| s.labels.as_deref()) {
        Some(keys) => crate::context::label_by(keys, p),
        None => ctx.label(p),
    }
}

/// The strip under a comparison chart (its top edge at `top`): a mark per point of the
/// merged chart without a place on the axes (`unplaced`, indices into `points`), in its
/// series' colour (`owner`), with its tooltip (`tip`); `+N more` past the width.
pub(crate) fn draw_series_strip(
    svg: &mut Svg,
    points: &[PlotPoint],
    owner: &[usize],
    unplaced: &[usize],
    (top, width): (f64, f64),
    tip: impl Fn(usize) -> String,
) {
    if unplaced.is_empty() {
        return;
    }
    let y = top + STRIP / 2.0;
    let lead = "no report, so no place on the axes:";
    svg.text(16.0, y + 4.0, lead, LEGEND_FONT, "start", "#555555");
    let mut x = 16.0 + text_width(lead, LEGEND_FONT) + 10.0;
    for (j, &i) in unplaced.iter().enumerate() {
        if x > width - 90.0 {
            let more = format!("+{} more", unplaced.len() - j);
            svg.text(x, y + 4.0, &more, LEGEND_FONT, "start", "#555555");
            break;
        }
        let p = &points[i];
        let kind = format!("{} series-{}", p.outcome.as_str(), owner[i]);
        svg.mark(
            p.outcome.shape(),
            x,
            y,
            colour(owner[i]),
            &kind,
            &tip(i),
            None,
        );
        x += 11.0;
    }
}
