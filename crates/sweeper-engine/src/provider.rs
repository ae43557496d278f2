//! Providers: optional plug-ins that receive the whole sweep context before a run and map
//! the goal onto their own settings (SPEC 7: any feature-specific mapping of the goal
//! belongs to the provider, not to the core).

use crate::evaluator::EvalRequest;
use sweeper_goal::{Objective, SweepConfig, Target};

/// What a provider sees before the run: the whole validated config (goal, workload, search
/// space, evaluator and sweep settings).
#[derive(Debug, Clone, Copy)]
pub struct SweepContext<'a> {
    /// The validated config of the sweep.
    pub config: &'a SweepConfig,
}

/// A plug-in of the run loop.
pub trait Provider: Send + Sync {
    /// A short name for logs and results.
    fn name(&self) -> &str;

    /// Called once before the first suggestion, with the whole sweep context.
    fn prepare(&mut self, context: &SweepContext<'_>);

    /// Adjusts each candidate before it goes to the evaluator.
    fn decorate(&self, request: &mut EvalRequest);
}

/// The serving-planner mapping: turns the goal into the planner's own target setting,
/// sent to evaluators as `planner_target` (an entry of [`EvalRequest::extra`]).
///
/// - `throughput`, `throughput_per_gpu`, `throughput_per_user` → `"throughput"`
/// - `cost_per_mtok` → `"throughput"` (tokens per GPU-hour is what it prices)
/// - `e2e_latency`, `ttft` → `"latency"`
/// - `goodput`, `goodput_per_gpu`, `min_gpus` → `"sla"`
/// - `pareto` → `"sla"` when its objectives include a goodput objective, else `"throughput"`
#[derive(Debug, Clone, Default)]
pub struct ServingPlanner {
    target: Option<&'static str>,
}

impl ServingPlanner {
    /// A planner provider that has not seen a context yet.
    pub fn new() -> Self {
        ServingPlanner::default()
    }

    /// The mapping of one goal (target and its effective objectives).
    pub fn planner_target(target: Target, objectives: &[Objective]) -> &'static str {
        match target {
            Target::Scalar(o) => match o {
                Objective::Throughput
                | Objective::ThroughputPerGpu
                | Objective::ThroughputPerUser
                | Objective::CostPerMtok => "throughput",
                Objective::E2eLatency | Objective::Ttft => "latency",
                Objective::Goodput | Objective::GoodputPerGpu | Objective::MinGpus => "sla",
            },
            Target::Pareto => {
                if objectives.iter().any(|o| o.needs_sla()) {
                    "sla"
                } else {
                    "throughput"
                }
            }
        }
    }
}

impl Provider for ServingPlanner {
    fn name(&self) -> &'static str {
        "serving-planner"
    }

    fn prepare(&mut self, context: &SweepContext<'_>) {
        let goal = &context.config.goal;
        self.target = Some(Self::planner_target(goal.target(), goal.objectives()));
    }

    fn decorate(&self, request: &mut EvalRequest) {
        if let Some(target) = self.target {
            request
                .extra
                .insert("planner_target".to_owned(), target.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_follows_the_issue() {
        use Objective as O;
        let cases = [
            (
                Target::Scalar(O::Throughput),
                vec![O::Throughput],
                "throughput",
            ),
            (
                Target::Scalar(O::ThroughputPerGpu),
                vec![O::ThroughputPerGpu],
                "throughput",
            ),
            (
                Target::Scalar(O::ThroughputPerUser),
                vec![O::ThroughputPerUser],
                "throughput",
            ),
            (
                Target::Scalar(O::E2eLatency),
                vec![O::E2eLatency],
                "latency",
            ),
            (Target::Scalar(O::Goodput), vec![O::Goodput], "sla"),
            (
                Target::Scalar(O::GoodputPerGpu),
                vec![O::GoodputPerGpu],
                "sla",
            ),
            (
                Target::Pareto,
                vec![O::ThroughputPerGpu, O::ThroughputPerUser],
                "throughput",
            ),
            (
                Target::Pareto,
                vec![O::GoodputPerGpu, O::ThroughputPerUser],
                "sla",
            ),
            (Target::Pareto, vec![O::E2eLatency, O::Goodput], "sla"),
            (
                Target::Pareto,
                vec![O::E2eLatency, O::Throughput],
                "throughput",
            ),
        ];
        for (target, objectives, want) in cases {
            assert_eq!(
                ServingPlanner::planner_target(target, &objectives),
                want,
                "{target} {objectives:?}"
            );
        }
    }
}
