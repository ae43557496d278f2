//! Scoring against a whole goal (SPEC 9): the price of `cost_per_mtok`, the goodput floor of
//! `min_gpus` and the bounds of `strict_sla`, which [`objective_value`] alone cannot know.

use crate::ScoreError;
use crate::candidate::{Candidate, used_gpus};
use crate::report::{GOODPUT_RPS, Report};
use crate::scoring::{cost_per_mtok, objective_value};
use serde_json::{Map, Value};
use sweeper_goal::{Goal, Objective, Price, candidate_gpu};

/// Scores reports against a [`Goal`]: what every caller that has the goal uses (the run,
/// `sweeper score`, the Python package), so that a price, a floor and a strict SLA are read
/// in one place.
///
/// ```
/// use serde_json::json;
/// use sweeper_goal::parse;
/// use sweeper_score::{Report, Scorer};
/// let config = parse(r#"{"goal": {"target": "min_gpus", "min_goodput_rps": 10, "sla": {"ttft_ms": 500}}}"#)?;
/// let scorer = Scorer::new(&config.goal);
/// let report = Report::from_json(0, &json!({"goodput_request_throughput_rps": 12.0}))?;
/// let gpus = json!({"used_gpus": 4}).as_object().unwrap().clone();
/// let c = scorer.candidate(0, gpus, &report)?;
/// assert_eq!((c.score, c.satisfying), (12.0, Some(true)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Scorer<'g> {
    goal: &'g Goal,
    default_gpu: Option<String>,
}

impl<'g> Scorer<'g> {
    /// A scorer of `goal`.
    pub fn new(goal: &'g Goal) -> Scorer<'g> {
        Scorer {
            goal,
            default_gpu: None,
        }
    }

    /// The GPU of a candidate that has no `gpu` parameter (the built-in evaluator's
    /// `gpu:`), for a price map.
    #[must_use]
    pub fn with_default_gpu(mut self, gpu: Option<&str>) -> Scorer<'g> {
        self.default_gpu = gpu.map(str::to_owned);
        self
    }

    /// The goal this scorer reads.
    pub fn goal(&self) -> &Goal {
        self.goal
    }

    /// The price of a GPU-hour of this candidate, `None` when the goal has none.
    ///
    /// Errors: a price map without the candidate's GPU is [`ScoreError::Invalid`] naming
    /// the candidate and the GPU.
    pub fn price(
        &self,
        index: usize,
        config: &Map<String, Value>,
    ) -> Result<Option<f64>, ScoreError> {
        let Some(price) = self.goal.price_per_gpu_hour() else {
            return Ok(None);
        };
        let gpu = candidate_gpu(config, self.default_gpu.as_deref());
        match price.for_gpu(gpu) {
            Some(p) => Ok(Some(p)),
            None => Err(ScoreError::Invalid {
                candidate: index,
                key: "gpu".to_owned(),
                detail: match (price, gpu) {
                    (Price::PerGpu(_), Some(g)) => format!(
                        "goal.price_per_gpu_hour has no price for GPU `{g}`; add it to the map"
                    ),
                    _ => "the candidate names no GPU (a `gpu` parameter or the built-in evaluator's `gpu:`), so goal.price_per_gpu_hour's map has no price for it; add a `gpu` parameter or give one price".to_owned(),
                },
            }),
        }
    }

    /// The raw value of `objective` for this candidate: [`objective_value`], with
    /// `cost_per_mtok` at the goal's price for the candidate's GPU.
    ///
    /// Errors: see [`price`](Self::price).
    pub fn value(
        &self,
        index: usize,
        config: &Map<String, Value>,
        report: &Report,
        objective: Objective,
    ) -> Result<f64, ScoreError> {
        if objective == Objective::CostPerMtok {
            let price = self.price(index, config)?.unwrap_or(1.0);
            return Ok(cost_per_mtok(report, price));
        }
        Ok(objective_value(report, objective))
    }

    /// Scores one report and builds the candidate, as
    /// [`make_candidate`](crate::make_candidate) does, with the goal's price and, under
    /// `min_gpus`, `satisfying` set (goodput `>=` the floor) and `score` the goodput in
    /// requests/s.
    ///
    /// Errors: see [`price`](Self::price).
    pub fn candidate(
        &self,
        index: usize,
        config: Map<String, Value>,
        report: &Report,
    ) -> Result<Candidate, ScoreError> {
        let goal = self.goal;
        let used = used_gpus(index, &config).unwrap_or(f64::INFINITY);
        let (score, objectives) = if goal.is_pareto() {
            let values = goal
                .objectives()
                .iter()
                .map(|&o| Ok((o, self.value(index, &config, report, o)?)))
                .collect::<Result<Vec<_>, ScoreError>>()?;
            (values.first().map_or(0.0, |(_, v)| *v), Some(values))
        } else {
            let target = goal
                .objectives()
                .first()
                .copied()
                .unwrap_or(Objective::Throughput);
            let v = self.value(index, &config, report, target)?;
            (target.direction().sign() * v, None)
        };
        let satisfying = goal
            .min_goodput_rps()
            .map(|floor| report.get(GOODPUT_RPS).unwrap_or(0.0) >= floor);
        Ok(Candidate {
            index,
            config,
            used_gpus: used,
            score,
            metrics: report.known_metrics(),
            objectives,
            satisfying,
        })
    }

    /// Under `strict_sla`, why the report is over the SLA: the first bound whose latency
    /// (the mean, or the goal's percentile) exceeds it (a bound passes a value equal to
    /// it), or the key the report lacks. `None` when it is within every bound, or when the
    /// goal is not strict.
    ///
    /// ```
    /// use serde_json::json;
    /// use sweeper_goal::parse;
    /// use sweeper_score::{Report, Scorer};
    /// let c = parse(r#"{"goal": {"strict_sla": true, "sla": {"ttft_ms": 800, "itl_ms": 30}}}"#)?;
    /// let ok = Report::from_json(0, &json!({"mean_ttft_ms": 800.0, "mean_itl_ms": 30.0}))?;
    /// assert_eq!(Scorer::new(&c.goal).over_sla(&ok), None);
    /// let slow = Report::from_json(0, &json!({"mean_ttft_ms": 801.0, "mean_itl_ms": 30.0}))?;
    /// assert_eq!(
    ///     Scorer::new(&c.goal).over_sla(&slow).as_deref(),
    ///     Some("over sla: mean_ttft_ms=801 > ttft_ms=800")
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn over_sla(&self, report: &Report) -> Option<String> {
        let strict = self.goal.strict_sla()?;
        let sla = self.goal.sla()?;
        let keys = strict.keys();
        let bounds = [
            ("ttft_ms", sla.ttft_ms),
            ("itl_ms", sla.itl_ms),
            ("e2e_ms", sla.e2e_ms),
        ];
        for ((name, bound), key) in bounds.into_iter().zip(keys) {
            let Some(bound) = bound else { continue };
            match report.get(&key) {
                None => {
                    return Some(format!(
                        "over sla: the report has no {key} to check {name}={bound} against"
                    ));
                }
                Some(v) if v > bound => {
                    return Some(format!("over sla: {key}={v} > {name}={bound}"));
                }
                Some(_) => {}
            }
        }
        None
    }

    /// The number a scalar study maximizes for this candidate: its `score`, except under
    /// `min_gpus`, where the satisfying candidates get `1 + 1 / (1 + used_gpus)` (in
    /// `(1, 2]`, fewer GPUs higher) and the others `goodput / floor` (in `[0, 1)`), so that
    /// every satisfying candidate is above every other and the floor is approached from
    /// below.
    pub fn sampler_value(&self, candidate: &Candidate) -> f64 {
        match (candidate.satisfying, self.goal.min_goodput_rps()) {
            (Some(true), _) => 1.0 + 1.0 / (1.0 + candidate.used_gpus.max(0.0)),
            (Some(false), Some(floor)) => (candidate.score / floor).clamp(0.0, 1.0 - f64::EPSILON),
            _ => candidate.score,
        }
    }
}
