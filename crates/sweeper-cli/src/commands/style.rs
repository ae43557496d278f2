//! The plot style options `sweeper plot` and `sweeper run` share (`--label`, `--color-by`,
//! `--scale`).

use sweeper_plot::{Chart, PlotOptions, ScaleRule};

/// How a plot is drawn; shared by `sweeper plot` and `sweeper run`.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct StyleArgs {
    /// Write these parameters' values beside each front point (a scalar goal: each new
    /// best), comma-separated, e.g. `tp,max_batch_size` [default: the searched load,
    /// `concurrency` or `request_rate`, when the sweep searches one; `--label ''` for none].
    #[arg(long, value_name = "KEYS", value_delimiter = ',')]
    label: Vec<String>,
    /// Colour the candidates by this parameter's value (a colour per value, or a ramp for
    /// a number with many values).
    #[arg(long, value_name = "KEY")]
    color_by: Option<String>,
    /// Axis scale: `auto` (log for a latency or data spanning over 100x), `linear`, `log`,
    /// or `OBJECTIVE=SCALE` for one axis. Repeatable; the last that applies wins.
    #[arg(long, value_name = "SCALE", value_parser = parse_scale)]
    scale: Vec<ScaleRule>,
}

fn parse_scale(text: &str) -> Result<ScaleRule, String> {
    text.parse()
}

impl StyleArgs {
    /// The options, labelling the points by `searched_load` (the parameter a sweep searches
    /// its load by, if any) unless `--label` was given.
    pub(crate) fn options_or(&self, searched_load: Option<&str>) -> PlotOptions {
        let mut options = self.options();
        if self.label.is_empty()
            && let Some(key) = searched_load
        {
            options.labels = vec![key.to_owned()];
        }
        options
    }

    /// Whether `--label` was left out (so a sweep's searched load labels its points).
    pub(crate) fn label_unset(&self) -> bool {
        self.label.is_empty()
    }

    pub(crate) fn options(&self) -> PlotOptions {
        PlotOptions {
            labels: self
                .label
                .iter()
                .map(|k| k.trim().to_owned())
                .filter(|k| !k.is_empty())
                .collect(),
            color_by: self.color_by.clone(),
            scales: self.scale.clone(),
        }
    }

    /// Warns about --label / --color-by / --scale names the chart does not have, listing
    /// the ones it has.
    pub(crate) fn check(&self, chart: &Chart) {
        let mut known: Vec<&str> = Vec::new();
        for p in &chart.points {
            for (k, _) in &p.params {
                if !known.contains(&k.as_str()) {
                    known.push(k);
                }
            }
        }
        let list = if known.is_empty() {
            "the points have no parameters".to_owned()
        } else {
            format!("parameters: {}", known.join(", "))
        };
        for key in self.label.iter().chain(&self.color_by) {
            if !known.contains(&key.trim()) {
                super::print_stderr(&format!(
                    "sweeper: warning: no point has a parameter `{}`; {list}\n",
                    key.trim()
                ));
            }
        }
        for rule in &self.scale {
            if let Some(name) = &rule.objective
                && !chart.objectives.iter().any(|o| &o.name == name)
            {
                let names: Vec<&str> = chart.objectives.iter().map(|o| o.name.as_str()).collect();
                super::print_stderr(&format!(
                    "sweeper: warning: --scale {name}=...: no axis `{name}`; the axes are {}\n",
                    names.join(", ")
                ));
            }
        }
    }
}
