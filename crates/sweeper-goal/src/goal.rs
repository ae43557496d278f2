//! The `goal:` block (SPEC 2): target, resolved objectives, SLA, and the sampler metrics.

use crate::error::ConfigError;
use crate::objective::{Direction, Objective, SamplerMetric, Target};
use crate::raw::{self, RawGoal, RawSla, RawValue};
use serde::Serialize;

/// The objectives a pareto goal gets when `pareto_objectives` is absent or null: the
/// `InferenceX` frontier, tok/s/gpu (y) against tok/s/user (x).
pub const DEFAULT_PARETO_OBJECTIVES: [Objective; 2] =
    [Objective::ThroughputPerGpu, Objective::ThroughputPerUser];

/// The SLA of a goal, in milliseconds. Each field is a finite number `> 0` when set. It is
/// never a feasibility gate: it lives inside the goodput metric (SPEC 2 rule 5).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Sla {
    /// Time-to-first-token bound; pairs with `itl_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<f64>,
    /// Inter-token-latency bound; pairs with `ttft_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub itl_ms: Option<f64>,
    /// End-to-end bound; the standalone alternative.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub e2e_ms: Option<f64>,
}

impl Sla {
    /// Whether it can stand behind a goodput objective: `e2e_ms`, or both `ttft_ms` and
    /// `itl_ms` (SPEC 2 rule 4).
    pub fn is_sufficient(&self) -> bool {
        self.e2e_ms.is_some() || (self.ttft_ms.is_some() && self.itl_ms.is_some())
    }

    /// The SLA as a JSON object (unset fields left out), as sent to evaluators.
    pub fn to_json_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// A validated optimization goal: what "better" means. Built only by [`Goal::new`] or the
/// config parser, so it always satisfies SPEC 2's rules.
#[derive(Debug, Clone, PartialEq)]
pub struct Goal {
    target: Target,
    objectives: Vec<Objective>,
    sla: Option<Sla>,
}

impl Default for Goal {
    /// `target: throughput`, no SLA (the goal of a config without a `goal:` block).
    fn default() -> Goal {
        Goal {
            target: Target::Scalar(Objective::Throughput),
            objectives: vec![Objective::Throughput],
            sla: None,
        }
    }
}

impl Goal {
    /// Builds a goal from typed parts, checking SPEC 2's rules.
    ///
    /// `pareto_objectives` is `None` for "absent" (a pareto goal then gets
    /// [`DEFAULT_PARETO_OBJECTIVES`]); an explicit list is kept as written and must have
    /// `>= 2` distinct entries, and is legal only when `target` is [`Target::Pareto`]. SLA
    /// fields must be finite and `> 0`; an SLA is required iff a goodput objective is in the
    /// effective set.
    ///
    /// ```
    /// use sweeper_goal::{Goal, Objective, Sla, Target};
    /// let goal = Goal::new(Target::Pareto, None, None).unwrap();
    /// assert_eq!(goal.objectives(), &[Objective::ThroughputPerGpu, Objective::ThroughputPerUser]);
    /// let err = Goal::new(Target::Scalar(Objective::Goodput), None, None).unwrap_err();
    /// assert_eq!(err.rule(), "sla_missing");
    /// let sla = Sla { e2e_ms: Some(20_000.0), ..Sla::default() };
    /// assert!(Goal::new(Target::Scalar(Objective::Goodput), None, Some(sla)).is_ok());
    /// ```
    pub fn new(
        target: Target,
        pareto_objectives: Option<Vec<Objective>>,
        sla: Option<Sla>,
    ) -> Result<Goal, ConfigError> {
        if let Some(sla) = &sla {
            for (name, value) in [
                ("ttft_ms", sla.ttft_ms),
                ("itl_ms", sla.itl_ms),
                ("e2e_ms", sla.e2e_ms),
            ] {
                if let Some(x) = value {
                    let path = format!("goal.sla.{name}");
                    raw::positive(&RawValue::Float(x), &path, SLA_EXPECTED)?;
                }
            }
        }
        let objectives = match (target, pareto_objectives) {
            (Target::Scalar(o), None) => vec![o],
            (Target::Scalar(o), Some(_)) => {
                return Err(ConfigError::ParetoObjectivesNeedParetoTarget {
                    path: "goal.pareto_objectives".to_owned(),
                    target: o.name().to_owned(),
                });
            }
            (Target::Pareto, None) => DEFAULT_PARETO_OBJECTIVES.to_vec(),
            (Target::Pareto, Some(list)) => {
                for (i, o) in list.iter().enumerate() {
                    if list[..i].contains(o) {
                        return Err(ConfigError::DuplicateParetoObjective {
                            path: format!("goal.pareto_objectives[{i}]"),
                            name: o.name().to_owned(),
                        });
                    }
                }
                if list.len() < 2 {
                    return Err(ConfigError::TooFewParetoObjectives {
                        path: "goal.pareto_objectives".to_owned(),
                        count: list.len(),
                    });
                }
                list
            }
        };
        let needed_by: Vec<String> = objectives
            .iter()
            .filter(|o| o.needs_sla())
            .map(|o| o.name().to_owned())
            .collect();
        if !needed_by.is_empty() {
            match &sla {
                None => {
                    return Err(ConfigError::SlaMissing {
                        path: "goal.sla".to_owned(),
                        needed_by,
                    });
                }
                Some(s) if !s.is_sufficient() => {
                    let missing = match (s.ttft_ms, s.itl_ms) {
                        (Some(_), None) => {
                            "ttft_ms is set but itl_ms is not: add itl_ms, or set e2e_ms"
                        }
                        (None, Some(_)) => {
                            "itl_ms is set but ttft_ms is not: add ttft_ms, or set e2e_ms"
                        }
                        _ => "the SLA sets no bound: add e2e_ms, or ttft_ms and itl_ms",
                    };
                    return Err(ConfigError::SlaIncomplete {
                        path: "goal.sla".to_owned(),
                        needed_by,
                        missing: missing.to_owned(),
                    });
                }
                Some(_) => {}
            }
        }
        Ok(Goal {
            target,
            objectives,
            sla,
        })
    }

    /// The target as configured.
    pub fn target(&self) -> Target {
        self.target
    }

    /// The effective objective set: `[target]` for a scalar goal, the resolved objectives for
    /// a pareto goal (in the order written; the last one is the front's x-axis).
    pub fn objectives(&self) -> &[Objective] {
        &self.objectives
    }

    /// Whether the goal traces a Pareto front.
    pub fn is_pareto(&self) -> bool {
        self.target == Target::Pareto
    }

    /// The SLA, if any.
    pub fn sla(&self) -> Option<&Sla> {
        self.sla.as_ref()
    }

    /// The metrics of the sampler study this goal implies: one maximized `"objective"` (the
    /// caller reports the signed score) for a scalar goal, else one per resolved objective,
    /// named after it, with its direction.
    pub fn sampler_metrics(&self) -> Vec<SamplerMetric> {
        match self.target {
            Target::Scalar(_) => vec![SamplerMetric {
                name: "objective".to_owned(),
                direction: Direction::Maximize,
            }],
            Target::Pareto => self
                .objectives
                .iter()
                .map(|o| SamplerMetric {
                    name: o.name().to_owned(),
                    direction: o.direction(),
                })
                .collect(),
        }
    }

    /// The goal block as YAML/JSON would write it (pareto objectives always explicit).
    pub fn to_json_value(&self) -> serde_json::Value {
        serde_json::to_value(GoalOut::from(self)).unwrap_or(serde_json::Value::Null)
    }
}

const SLA_EXPECTED: &str =
    "an SLA bound is a finite number of milliseconds > 0, e.g. `e2e_ms: 20000`";

/// Serialized shape of a goal.
#[derive(Serialize)]
pub(crate) struct GoalOut {
    target: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pareto_objectives: Option<Vec<&'static str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sla: Option<Sla>,
}

impl From<&Goal> for GoalOut {
    fn from(g: &Goal) -> GoalOut {
        GoalOut {
            target: g.target.name(),
            pareto_objectives: g
                .is_pareto()
                .then(|| g.objectives.iter().map(|o| o.name()).collect()),
            sla: g.sla,
        }
    }
}

fn target_at(v: &RawValue, path: &str, scalar_only: bool) -> Result<Target, ConfigError> {
    let name = raw::string(v, path, "write a target name such as `throughput`")?;
    let accepted = || -> Vec<String> {
        Target::all_names()
            .into_iter()
            .filter(|n| !scalar_only || *n != "pareto")
            .map(str::to_owned)
            .collect()
    };
    Target::from_name(name).ok_or_else(|| {
        let accepted = accepted();
        ConfigError::UnknownTarget {
            path: path.to_owned(),
            value: v.show(),
            did_you_mean: crate::raw::closest_of(name, accepted.iter().map(String::as_str)),
            accepted,
        }
    })
}

fn sla_from_raw(s: &RawSla) -> Result<Sla, ConfigError> {
    let field = |v: &Option<RawValue>, name: &str| -> Result<Option<f64>, ConfigError> {
        v.as_ref()
            .map(|v| raw::positive(v, &format!("goal.sla.{name}"), SLA_EXPECTED))
            .transpose()
    };
    Ok(Sla {
        ttft_ms: field(&s.ttft_ms, "ttft_ms")?,
        itl_ms: field(&s.itl_ms, "itl_ms")?,
        e2e_ms: field(&s.e2e_ms, "e2e_ms")?,
    })
}

/// A goal with this target and no other checks, for validating the workload of a config
/// whose goal block failed for another reason (the workload only needs the target).
pub(crate) fn stand_in(g: Option<&RawGoal>) -> Option<Goal> {
    let target = match g.and_then(|g| g.target.as_ref()) {
        None => Target::Scalar(Objective::Throughput),
        Some(v) => target_at(v, "goal.target", false).ok()?,
    };
    let objectives = match target {
        Target::Scalar(o) => vec![o],
        Target::Pareto => DEFAULT_PARETO_OBJECTIVES.to_vec(),
    };
    Some(Goal {
        target,
        objectives,
        sla: None,
    })
}

/// Validates a raw `goal:` block.
pub(crate) fn from_raw(g: &RawGoal) -> Result<Goal, ConfigError> {
    let target = match &g.target {
        None => Target::Scalar(Objective::Throughput),
        Some(v) => target_at(v, "goal.target", false)?,
    };
    let sla = g.sla.as_ref().map(sla_from_raw).transpose()?;
    let objectives = match (&g.pareto_objectives, target) {
        (None, _) => None,
        (Some(_), Target::Scalar(o)) => {
            return Err(ConfigError::ParetoObjectivesNeedParetoTarget {
                path: "goal.pareto_objectives".to_owned(),
                target: o.name().to_owned(),
            });
        }
        (Some(v), Target::Pareto) => {
            let path = "goal.pareto_objectives";
            let items = raw::seq(
                v,
                path,
                "a list of scalar targets",
                "e.g. `pareto_objectives: [throughput_per_gpu, throughput_per_user]`",
            )?;
            let mut list = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let p = raw::index(path, i);
                match target_at(item, &p, true)? {
                    Target::Pareto => {
                        return Err(ConfigError::ParetoInParetoObjectives { path: p });
                    }
                    Target::Scalar(o) => list.push(o),
                }
            }
            Some(list)
        }
    };
    Goal::new(target, objectives, sla)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_goal_is_throughput_without_sla() {
        let g = Goal::default();
        assert_eq!(g.objectives(), &[Objective::Throughput]);
        assert_eq!(g.sampler_metrics().len(), 1);
        assert_eq!(
            g.to_json_value(),
            serde_json::json!({"target": "throughput"})
        );
    }

    #[test]
    fn sla_sufficiency() {
        let s = |t: Option<f64>, i: Option<f64>, e: Option<f64>| Sla {
            ttft_ms: t,
            itl_ms: i,
            e2e_ms: e,
        };
        assert!(s(None, None, Some(1.0)).is_sufficient());
        assert!(s(Some(1.0), Some(1.0), None).is_sufficient());
        assert!(!s(Some(1.0), None, None).is_sufficient());
        assert!(!s(None, None, None).is_sufficient());
        assert_eq!(
            s(Some(1.5), None, None).to_json_value(),
            serde_json::json!({"ttft_ms": 1.5})
        );
    }

    #[test]
    fn pareto_goal_writes_its_objectives_out() {
        let g = Goal::new(Target::Pareto, None, None).unwrap();
        assert_eq!(
            g.to_json_value(),
            serde_json::json!({"target": "pareto", "pareto_objectives": ["throughput_per_gpu", "throughput_per_user"]})
        );
        let m = g.sampler_metrics();
        assert_eq!(m[1].name, "throughput_per_user");
    }
}
