//! What a drawing needs besides the chart: the options, the colours, which axes are
//! logarithmic, and each point's tooltip and label.

use crate::style::Colorer;
use crate::{Chart, Outcome, Param, PlotObjective, PlotOptions, PlotPoint, Scale, precise};
use std::cell::Cell;
use std::fmt::Write as _;
use sweeper_goal::Direction;

/// Everything a drawing needs besides the chart.
pub(crate) struct Ctx<'a> {
    pub(crate) chart: &'a Chart,
    pub(crate) options: &'a PlotOptions,
    pub(crate) colors: Colorer,
    /// Per objective: a log axis?
    pub(crate) log: Vec<bool>,
    /// Labels left out for want of a free place, counted as the panels draw them (the
    /// legend, drawn after them, says how many).
    pub(crate) hidden_labels: Cell<usize>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(chart: &'a Chart, options: &'a PlotOptions) -> Ctx<'a> {
        let log = (0..chart.objectives.len())
            .map(|k| wants_log(chart, options, k))
            .collect();
        Ctx {
            chart,
            options,
            colors: Colorer::new(chart, options.color_by.as_deref()),
            log,
            hidden_labels: Cell::new(0),
        }
    }

    pub(crate) fn objective(&self, k: usize) -> PlotObjective {
        self.chart.objectives.get(k).cloned().unwrap_or_else(|| {
            PlotObjective::new(format!("objective {}", k + 1), "", Direction::Maximize)
        })
    }

    /// The tooltip of a point: id and standing, objective values, parameters, GPUs, reason;
    /// for a feasible trial, the command that exports it as a deployment.
    pub(crate) fn tooltip(&self, p: &PlotPoint) -> String {
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
        for line in crate::sla::tooltip_lines(self.chart, p) {
            let _ = write!(tip, "\n{line}");
        }
        if p.outcome == Outcome::Feasible && self.chart.id_label == "trial" {
            let _ = write!(
                tip,
                "\ndeploy it: sweeper export SWEEP_DIR --trial {}",
                p.id
            );
        }
        tip
    }

    /// The label of a point: its values of the label parameters, joined by `/`.
    pub(crate) fn label(&self, p: &PlotPoint) -> Option<String> {
        label_by(&self.options.labels, p)
    }
}

/// The label of a point by the parameters `keys` (none: no label).
pub(crate) fn label_by(keys: &[String], p: &PlotPoint) -> Option<String> {
    if keys.is_empty() {
        return None;
    }
    let parts: Vec<String> = keys
        .iter()
        .map(|k| p.param(k).map_or_else(|| "?".to_owned(), Param::text))
        .collect();
    Some(parts.join("/"))
}

/// Whether objective `k` gets a log axis (see [`Scale`]).
pub(crate) fn wants_log(chart: &Chart, options: &PlotOptions, k: usize) -> bool {
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

#[cfg(test)]
mod tests {
    use super::Ctx;
    use crate::{Chart, Outcome, PlotObjective, PlotOptions, PlotPoint};
    use sweeper_goal::Direction;

    #[test]
    fn a_feasible_trials_tooltip_names_the_command_that_exports_it() {
        let mut chart = Chart::new("t", vec![PlotObjective::new("y", "", Direction::Maximize)]);
        let options = PlotOptions::default();
        let feasible = PlotPoint::new(7, Outcome::Feasible, Some(vec![1.0]));
        let failed = PlotPoint::new(8, Outcome::Failed, None);
        let tip = Ctx::new(&chart, &options).tooltip(&feasible);
        assert!(tip.starts_with("trial 7"), "{tip}");
        assert!(
            tip.ends_with("\ndeploy it: sweeper export SWEEP_DIR --trial 7"),
            "{tip}"
        );
        assert!(
            !Ctx::new(&chart, &options)
                .tooltip(&failed)
                .contains("sweeper export")
        );
        // Rows of a table are not trials of a sweep: nothing to export.
        chart.id_label = "row".to_owned();
        assert!(
            !Ctx::new(&chart, &options)
                .tooltip(&feasible)
                .contains("sweeper export")
        );
    }
}
