//! The `goal:` block (SPEC 2): target, resolved objectives, SLA, and the sampler metrics.

use crate::error::ConfigError;
use crate::objective::{Direction, Objective, SamplerMetric, Target};
use crate::raw::{self, RawGoal, RawSla, RawValue};
use serde::Serialize;
use std::collections::BTreeMap;

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

impl Sla {
    /// Whether it sets at least one bound (what `min_gpus` and `strict_sla` need).
    pub fn has_bound(&self) -> bool {
        self.e2e_ms.is_some() || self.ttft_ms.is_some() || self.itl_ms.is_some()
    }
}

/// `goal.price_per_gpu_hour`: dollars per GPU-hour, one for every GPU or one per GPU name.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Price {
    /// The same price for every candidate.
    Flat(f64),
    /// A price per GPU name (`h200`, `b200`), read against the candidate's GPU.
    PerGpu(BTreeMap<String, f64>),
}

impl Price {
    /// The price of a candidate on `gpu` (`None` when it is unknown): the flat price
    /// whatever the GPU, or the map's entry for it (`None` when the map has none or no GPU
    /// is known).
    pub fn for_gpu(&self, gpu: Option<&str>) -> Option<f64> {
        match self {
            Price::Flat(p) => Some(*p),
            Price::PerGpu(map) => gpu.and_then(|g| map.get(g).copied()),
        }
    }
}

/// `goal.strict_sla`: candidates whose latency exceeds a bound of the SLA (inclusive: a
/// bound of 800 ms passes 800) are over SLA and leave the ranking and the front (SPEC 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct StrictSla {
    /// The latency statistic checked: the mean (`None`, `strict_sla: true`) or this
    /// percentile (`strict_sla: {percentile: 90}` reads `p90_ttft_ms`, `p90_itl_ms`,
    /// `p90_e2e_latency_ms`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentile: Option<u8>,
}

impl StrictSla {
    /// The report keys checked against the SLA's TTFT, ITL and end-to-end bounds.
    pub fn keys(self) -> [String; 3] {
        match self.percentile {
            None => [
                "mean_ttft_ms".to_owned(),
                "mean_itl_ms".to_owned(),
                "mean_e2e_latency_ms".to_owned(),
            ],
            Some(p) => [
                format!("p{p}_ttft_ms"),
                format!("p{p}_itl_ms"),
                format!("p{p}_e2e_latency_ms"),
            ],
        }
    }
}

/// The goal's settings beyond target, objectives and SLA (SPEC 9), for [`Goal::with_options`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GoalOptions {
    /// `min_goodput_rps`: the goodput floor of `target: min_gpus` (requests/s, `> 0`).
    pub min_goodput_rps: Option<f64>,
    /// `price_per_gpu_hour`: what `cost_per_mtok` prices a GPU-hour at.
    pub price_per_gpu_hour: Option<Price>,
    /// `strict_sla`: drop candidates over the SLA's bounds.
    pub strict_sla: Option<StrictSla>,
}

/// A validated optimization goal: what "better" means. Built only by [`Goal::new`],
/// [`Goal::with_options`] or the config parser, so it always satisfies SPEC 2's and 9's
/// rules.
#[derive(Debug, Clone, PartialEq)]
pub struct Goal {
    target: Target,
    objectives: Vec<Objective>,
    sla: Option<Sla>,
    options: GoalOptions,
}

impl Default for Goal {
    /// `target: throughput`, no SLA (the goal of a config without a `goal:` block).
    fn default() -> Goal {
        Goal {
            target: Target::Scalar(Objective::Throughput),
            objectives: vec![Objective::Throughput],
            sla: None,
            options: GoalOptions::default(),
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
        Goal::with_options(target, pareto_objectives, sla, GoalOptions::default())
    }

    /// [`Goal::new`] with the settings of SPEC 9: the `min_gpus` floor, the price of a
    /// GPU-hour and `strict_sla`, each checked against its rule.
    ///
    /// ```
    /// use sweeper_goal::{Goal, GoalOptions, Objective, Price, Sla, Target};
    /// let sla = Sla { ttft_ms: Some(2000.0), itl_ms: Some(30.0), ..Sla::default() };
    /// let floor = GoalOptions { min_goodput_rps: Some(40.0), ..GoalOptions::default() };
    /// let goal = Goal::with_options(Target::Scalar(Objective::MinGpus), None, Some(sla), floor);
    /// assert_eq!(goal.unwrap().min_goodput_rps(), Some(40.0));
    /// let err = Goal::new(Target::Scalar(Objective::CostPerMtok), None, None).unwrap_err();
    /// assert_eq!(err.rule(), "cost_needs_price");
    /// let price = GoalOptions { price_per_gpu_hour: Some(Price::Flat(2.5)), ..GoalOptions::default() };
    /// assert!(Goal::with_options(Target::Scalar(Objective::CostPerMtok), None, None, price).is_ok());
    /// ```
    pub fn with_options(
        target: Target,
        pareto_objectives: Option<Vec<Objective>>,
        sla: Option<Sla>,
        options: GoalOptions,
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
                    if !o.is_pareto_objective() {
                        return Err(ConfigError::NotAParetoObjective {
                            path: format!("goal.pareto_objectives[{i}]"),
                            name: o.name().to_owned(),
                        });
                    }
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
        check_options(target, &objectives, sla.as_ref(), &options)?;
        Ok(Goal {
            target,
            objectives,
            sla,
            options,
        })
    }

    /// `min_goodput_rps`: the floor of a `min_gpus` goal (requests/s), else `None`.
    pub fn min_goodput_rps(&self) -> Option<f64> {
        self.options.min_goodput_rps
    }

    /// `price_per_gpu_hour`, if set.
    pub fn price_per_gpu_hour(&self) -> Option<&Price> {
        self.options.price_per_gpu_hour.as_ref()
    }

    /// `strict_sla`, if on: the SLA's bounds then drop the candidates that exceed them.
    pub fn strict_sla(&self) -> Option<StrictSla> {
        self.options.strict_sla
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
    /// named after it, with its direction. `min_gpus` is the exception: `used_gpus`
    /// (minimized, the cost) and `goodput_request_throughput_rps` (maximized, with the
    /// floor of [`Self::sampler_floor`]), so that the study can model the floor as a
    /// constraint and the GPU count as a function of the parameters.
    pub fn sampler_metrics(&self) -> Vec<SamplerMetric> {
        if self.sampler_floor().is_some() {
            return vec![
                SamplerMetric {
                    name: "used_gpus".to_owned(),
                    direction: Direction::Minimize,
                },
                SamplerMetric {
                    name: FLOOR_METRIC.to_owned(),
                    direction: Direction::Maximize,
                },
            ];
        }
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

    /// The floor of the sampler study under `min_gpus`: the metric
    /// (`goodput_request_throughput_rps`) and `min_goodput_rps`; `None` for other goals.
    pub fn sampler_floor(&self) -> Option<(&'static str, f64)> {
        match self.target {
            Target::Scalar(Objective::MinGpus) => self.min_goodput_rps().map(|f| (FLOOR_METRIC, f)),
            _ => None,
        }
    }

    /// The goal block as YAML/JSON would write it (pareto objectives always explicit).
    pub fn to_json_value(&self) -> serde_json::Value {
        serde_json::to_value(GoalOut::from(self)).unwrap_or(serde_json::Value::Null)
    }
}

/// The study metric with the floor under `min_gpus` (the report key of the goodput in
/// requests per second).
const FLOOR_METRIC: &str = "goodput_request_throughput_rps";

const SLA_EXPECTED: &str =
    "an SLA bound is a finite number of milliseconds > 0, e.g. `e2e_ms: 20000`";
const FLOOR_EXPECTED: &str =
    "min_goodput_rps is a finite number of requests per second > 0, e.g. `min_goodput_rps: 40`";
const PRICE_EXPECTED: &str =
    "a price is a finite number of dollars per GPU-hour > 0, e.g. `price_per_gpu_hour: 2.5`";
const PERCENTILE_EXPECTED: &str = "a percentile is a whole number from 1 to 99, e.g. 90";

/// SPEC 9's rules on `min_goodput_rps`, `price_per_gpu_hour` and `strict_sla`.
fn check_options(
    target: Target,
    objectives: &[Objective],
    sla: Option<&Sla>,
    options: &GoalOptions,
) -> Result<(), ConfigError> {
    let floor_path = "goal.min_goodput_rps";
    if let Some(x) = options.min_goodput_rps {
        raw::positive(&RawValue::Float(x), floor_path, FLOOR_EXPECTED)?;
    }
    match (target, options.min_goodput_rps) {
        (Target::Scalar(Objective::MinGpus), None) => {
            return Err(ConfigError::MinGpusNeedsFloor {
                path: floor_path.to_owned(),
            });
        }
        (Target::Scalar(Objective::MinGpus), Some(_)) | (_, None) => {}
        (other, Some(_)) => {
            return Err(ConfigError::MinGoodputNeedsMinGpus {
                path: floor_path.to_owned(),
                target: other.name().to_owned(),
            });
        }
    }
    if target == Target::Scalar(Objective::MinGpus) {
        let needed_by = vec![Objective::MinGpus.name().to_owned()];
        match sla {
            None => {
                return Err(ConfigError::SlaMissing {
                    path: "goal.sla".to_owned(),
                    needed_by,
                });
            }
            Some(s) if !s.has_bound() => {
                return Err(ConfigError::SlaEmpty {
                    path: "goal.sla".to_owned(),
                    needed_by,
                });
            }
            Some(_) => {}
        }
    }
    match &options.price_per_gpu_hour {
        Some(Price::Flat(p)) => {
            raw::positive(
                &RawValue::Float(*p),
                "goal.price_per_gpu_hour",
                PRICE_EXPECTED,
            )?;
        }
        Some(Price::PerGpu(map)) => {
            if map.is_empty() {
                return Err(raw::out_of_range(
                    "goal.price_per_gpu_hour",
                    &RawValue::Map(Vec::new()),
                    "a map of GPU name to dollars per GPU-hour with at least one entry, e.g. `{h200: 3.5}`",
                ));
            }
            for (gpu, p) in map {
                let path = format!("goal.price_per_gpu_hour.{gpu}");
                raw::positive(&RawValue::Float(*p), &path, PRICE_EXPECTED)?;
            }
        }
        None => {
            if objectives.contains(&Objective::CostPerMtok) {
                return Err(ConfigError::CostNeedsPrice {
                    path: "goal.price_per_gpu_hour".to_owned(),
                });
            }
        }
    }
    if let Some(strict) = options.strict_sla {
        if let Some(p) = strict.percentile
            && !(1..=99).contains(&p)
        {
            return Err(raw::out_of_range(
                "goal.strict_sla.percentile",
                &RawValue::Int(i128::from(p)),
                PERCENTILE_EXPECTED,
            ));
        }
        if !sla.is_some_and(Sla::has_bound) {
            return Err(ConfigError::StrictSlaNeedsSla {
                path: "goal.strict_sla".to_owned(),
            });
        }
    }
    Ok(())
}

/// Serialized shape of a goal.
#[derive(Serialize)]
pub(crate) struct GoalOut {
    target: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pareto_objectives: Option<Vec<&'static str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sla: Option<Sla>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_goodput_rps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    price_per_gpu_hour: Option<Price>,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict_sla: Option<StrictSlaOut>,
}

/// `strict_sla` as written: `true`, or `{percentile: N}`.
#[derive(Serialize)]
#[serde(untagged)]
enum StrictSlaOut {
    On(bool),
    Percentile(StrictSla),
}

impl From<&Goal> for GoalOut {
    fn from(g: &Goal) -> GoalOut {
        GoalOut {
            target: g.target.name(),
            pareto_objectives: g
                .is_pareto()
                .then(|| g.objectives.iter().map(|o| o.name()).collect()),
            sla: g.sla,
            min_goodput_rps: g.options.min_goodput_rps,
            price_per_gpu_hour: g.options.price_per_gpu_hour.clone(),
            strict_sla: g.options.strict_sla.map(|s| match s.percentile {
                None => StrictSlaOut::On(true),
                Some(_) => StrictSlaOut::Percentile(s),
            }),
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
        options: GoalOptions::default(),
    })
}

fn price_from_raw(v: &RawValue) -> Result<Price, ConfigError> {
    let path = "goal.price_per_gpu_hour";
    match v {
        RawValue::Map(entries) => {
            let mut map = BTreeMap::new();
            for (k, value) in entries {
                let gpu = raw::string(k, path, "a GPU name such as `h200`")?;
                let p = raw::join(path, gpu);
                map.insert(gpu.to_owned(), raw::positive(value, &p, PRICE_EXPECTED)?);
            }
            Ok(Price::PerGpu(map))
        }
        _ => Ok(Price::Flat(raw::positive(v, path, PRICE_EXPECTED)?)),
    }
}

fn strict_from_raw(v: &RawValue) -> Result<Option<StrictSla>, ConfigError> {
    let path = "goal.strict_sla";
    match v {
        RawValue::Bool(on) => Ok(on.then_some(StrictSla::default())),
        RawValue::Map(entries) => {
            let mut strict = StrictSla::default();
            for (k, value) in entries {
                let key = raw::string(k, path, "")?;
                let p = raw::join(path, key);
                if key != "percentile" {
                    return Err(ConfigError::UnknownKey {
                        path: p,
                        key: key.to_owned(),
                        expected: "percentile".to_owned(),
                        did_you_mean: None,
                        location: None,
                    });
                }
                let n = raw::int_in(value, &p, 1, 99, PERCENTILE_EXPECTED, "")?;
                strict.percentile = u8::try_from(n).ok();
            }
            Ok(Some(strict))
        }
        _ => Err(raw::wrong(
            path,
            "true, false or a mapping `{percentile: N}`",
            v,
            "e.g. `strict_sla: true` or `strict_sla: {percentile: 90}`",
        )),
    }
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
    let options = GoalOptions {
        min_goodput_rps: g
            .min_goodput_rps
            .as_ref()
            .map(|v| raw::positive(v, "goal.min_goodput_rps", FLOOR_EXPECTED))
            .transpose()?,
        price_per_gpu_hour: g
            .price_per_gpu_hour
            .as_ref()
            .map(price_from_raw)
            .transpose()?,
        strict_sla: g
            .strict_sla
            .as_ref()
            .map(strict_from_raw)
            .transpose()?
            .flatten(),
    };
    Goal::with_options(target, objectives, sla, options)
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
        assert_eq!(g.sampler_floor(), None);
    }

    #[test]
    fn min_gpus_gives_the_study_its_cost_and_its_floor() {
        let sla = Sla {
            ttft_ms: Some(2000.0),
            itl_ms: Some(30.0),
            e2e_ms: None,
        };
        let options = GoalOptions {
            min_goodput_rps: Some(11.4),
            ..GoalOptions::default()
        };
        let g = Goal::with_options(Target::Scalar(Objective::MinGpus), None, Some(sla), options)
            .unwrap();
        let m = g.sampler_metrics();
        let named: Vec<(&str, Direction)> =
            m.iter().map(|m| (m.name.as_str(), m.direction)).collect();
        assert_eq!(
            named,
            vec![
                ("used_gpus", Direction::Minimize),
                ("goodput_request_throughput_rps", Direction::Maximize)
            ]
        );
        assert_eq!(
            g.sampler_floor(),
            Some(("goodput_request_throughput_rps", 11.4))
        );
        assert_eq!(Goal::default().sampler_floor(), None);
    }
}
