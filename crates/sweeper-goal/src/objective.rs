//! The optimization vocabulary: directions, scalar objectives and targets (SPEC 2).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Whether larger or smaller values of a metric are better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Larger is better.
    Maximize,
    /// Smaller is better.
    Minimize,
}

impl Direction {
    /// `"maximize"` or `"minimize"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Maximize => "maximize",
            Direction::Minimize => "minimize",
        }
    }

    /// `+1.0` for maximize, `-1.0` for minimize: multiply a raw value by it to get a
    /// higher-is-better value.
    pub fn sign(self) -> f64 {
        match self {
            Direction::Maximize => 1.0,
            Direction::Minimize => -1.0,
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A scalar optimization objective: one number read from a trace report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Objective {
    /// `output_throughput_tok_s`, maximized.
    Throughput,
    /// `output_throughput_tok_s / avg_gpu`, maximized.
    ThroughputPerGpu,
    /// `mean_output_token_throughput_per_user`, maximized (already a rate).
    ThroughputPerUser,
    /// `mean_e2e_latency_ms`, minimized; a missing key reads `+inf`.
    E2eLatency,
    /// `goodput_output_throughput_tok_s`, maximized; needs an SLA.
    Goodput,
    /// `goodput_output_throughput_tok_s / avg_gpu`, maximized; needs an SLA.
    GoodputPerGpu,
    /// `mean_ttft_ms`, minimized; a missing key reads `+inf`. Needs no SLA.
    Ttft,
    /// A constrained target (SPEC 9): a candidate whose `goodput_request_throughput_rps`
    /// reaches `goal.min_goodput_rps` is *satisfying*; satisfying candidates rank by fewest
    /// `used_gpus`, then by goodput, the others after them by goodput. Its raw value is
    /// that goodput (requests/s), maximized. Needs an SLA with a bound; never a pareto
    /// objective.
    MinGpus,
    /// Dollars per million output tokens, minimized:
    /// `price_per_gpu_hour × gpu_hours / (output tokens / 1e6)`; needs
    /// `goal.price_per_gpu_hour`. Missing or zero throughput reads `+inf`.
    CostPerMtok,
}

impl Objective {
    /// Every scalar objective, in the order of the SPEC's table.
    pub const ALL: [Objective; 9] = [
        Objective::Throughput,
        Objective::ThroughputPerGpu,
        Objective::ThroughputPerUser,
        Objective::E2eLatency,
        Objective::Goodput,
        Objective::GoodputPerGpu,
        Objective::Ttft,
        Objective::MinGpus,
        Objective::CostPerMtok,
    ];

    /// The name used in configs, reports and sampler metrics (`"throughput_per_gpu"`).
    pub fn name(self) -> &'static str {
        match self {
            Objective::Throughput => "throughput",
            Objective::ThroughputPerGpu => "throughput_per_gpu",
            Objective::ThroughputPerUser => "throughput_per_user",
            Objective::E2eLatency => "e2e_latency",
            Objective::Goodput => "goodput",
            Objective::GoodputPerGpu => "goodput_per_gpu",
            Objective::Ttft => "ttft",
            Objective::MinGpus => "min_gpus",
            Objective::CostPerMtok => "cost_per_mtok",
        }
    }

    /// Parses a name as written in a config; `None` for anything else (including `pareto`).
    pub fn from_name(name: &str) -> Option<Objective> {
        Objective::ALL.into_iter().find(|o| o.name() == name)
    }

    /// Every scalar objective has exactly one direction; `e2e_latency`, `ttft` and
    /// `cost_per_mtok` are minimized. `min_gpus` reads its goodput, maximized (its ranking
    /// puts fewest GPUs first among the candidates that reach the floor).
    pub fn direction(self) -> Direction {
        match self {
            Objective::E2eLatency | Objective::Ttft | Objective::CostPerMtok => Direction::Minimize,
            _ => Direction::Maximize,
        }
    }

    /// Whether this objective's metric only exists under an SLA of `e2e_ms` or of both
    /// `ttft_ms` and `itl_ms` (the goodput pair, SPEC 2 rules 3-4).
    pub fn needs_sla(self) -> bool {
        matches!(self, Objective::Goodput | Objective::GoodputPerGpu)
    }

    /// Whether it may be one of `pareto_objectives` (every objective but `min_gpus`, which
    /// is a constraint and a ranking, not a value to trade off).
    pub fn is_pareto_objective(self) -> bool {
        self != Objective::MinGpus
    }

    /// Units for axis labels and tables.
    pub fn unit(self) -> &'static str {
        match self {
            Objective::Throughput | Objective::Goodput => "tok/s",
            Objective::ThroughputPerGpu | Objective::GoodputPerGpu => "tok/s/gpu",
            Objective::ThroughputPerUser => "tok/s/user",
            Objective::E2eLatency | Objective::Ttft => "ms",
            Objective::MinGpus => "req/s",
            Objective::CostPerMtok => "$/Mtok",
        }
    }
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The `target:` of a goal: a scalar objective, or `pareto` (one value per objective).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// Rank candidates by one objective.
    Scalar(Objective),
    /// Trace the Pareto front of the resolved objectives.
    Pareto,
}

/// The typed error for asking the `pareto` target for a single direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the pareto target has no single direction: each of its objectives has its own")]
pub struct ParetoHasNoDirection;

impl Target {
    /// The name used in configs (`"pareto"` or the objective's name).
    pub fn name(self) -> &'static str {
        match self {
            Target::Scalar(o) => o.name(),
            Target::Pareto => "pareto",
        }
    }

    /// Parses a target name; `None` for an unknown one.
    pub fn from_name(name: &str) -> Option<Target> {
        if name == "pareto" {
            Some(Target::Pareto)
        } else {
            Objective::from_name(name).map(Target::Scalar)
        }
    }

    /// The direction of a scalar target; the pareto target has none.
    pub fn direction(self) -> Result<Direction, ParetoHasNoDirection> {
        match self {
            Target::Scalar(o) => Ok(o.direction()),
            Target::Pareto => Err(ParetoHasNoDirection),
        }
    }

    /// Every target name accepted in a config, for error messages.
    pub fn all_names() -> [&'static str; 10] {
        [
            "throughput",
            "throughput_per_gpu",
            "throughput_per_user",
            "e2e_latency",
            "goodput",
            "goodput_per_gpu",
            "ttft",
            "min_gpus",
            "cost_per_mtok",
            "pareto",
        ]
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One metric of a sampler study: a name and the direction it is optimized in.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SamplerMetric {
    /// `"objective"` for a scalar goal, else the objective's name.
    pub name: String,
    /// Maximize or minimize.
    pub direction: Direction,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_latencies_and_cost_are_minimized() {
        for o in Objective::ALL {
            let want = if matches!(
                o,
                Objective::E2eLatency | Objective::Ttft | Objective::CostPerMtok
            ) {
                Direction::Minimize
            } else {
                Direction::Maximize
            };
            assert_eq!(o.direction(), want, "{o}");
            assert_eq!(Objective::from_name(o.name()), Some(o));
        }
        assert_eq!(Target::Pareto.direction(), Err(ParetoHasNoDirection));
        assert_eq!(Objective::from_name("pareto"), None);
    }
}
