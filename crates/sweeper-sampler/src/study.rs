//! The study: its trials, and the algorithm that proposes them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sweeper_goal::{Direction, SamplerMetric};

use crate::algorithm::Algorithm;
use crate::error::SamplerError;
use crate::sampler::default::{DefaultSampler, Effort};
use crate::sampler::floor::FloorSampler;
use crate::sampler::grid::GridSampler;
use crate::sampler::quasi::QuasiSampler;
use crate::sampler::random::RandomSampler;
use crate::sampler::{History, Sampler};
use crate::space::{Domain, ParamValue, SearchSpace};
use crate::trial::{Trial, TrialRecord, TrialState};

/// A multi-metric ask/tell study.
#[derive(Debug)]
pub struct Study {
    space: SearchSpace,
    domain: Domain,
    metrics: Vec<SamplerMetric>,
    algorithm: Algorithm,
    seed: u64,
    records: Vec<TrialRecord>,
    points: Vec<Vec<f64>>,
    sampler: Box<dyn Sampler>,
    floor: Option<Floor>,
}

/// A floor on one of a study's two metrics, which makes it a constrained study: a trial
/// *satisfies* when that metric (maximized) is at least `value`, and the study looks for
/// the satisfying trial of the fewest of the other metric (minimized, the cost). The
/// `min_gpus` goal is one: `goodput_request_throughput_rps` at least `min_goodput_rps`,
/// the fewest `used_gpus`.
///
/// The default algorithm then models the floor metric as a constraint and the cost as a
/// function of the parameters, and proposes the points most likely to lower the best
/// satisfying cost (`src/sampler/floor.rs`); the other algorithms do not read metrics and
/// are unchanged. [`Study::best_trial`] is the satisfying trial of the fewest cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Floor {
    /// The metric with the floor (maximized).
    pub metric: String,
    /// The floor: a trial satisfies when the metric is at least this.
    pub value: f64,
}

impl Floor {
    /// A floor of `value` on `metric`.
    pub fn new(metric: impl Into<String>, value: f64) -> Floor {
        Floor {
            metric: metric.into(),
            value,
        }
    }
}

fn make_sampler(
    algorithm: Algorithm,
    domain: &Domain,
    metrics: usize,
    seed: u64,
) -> Result<Box<dyn Sampler>, SamplerError> {
    Ok(match algorithm {
        Algorithm::Default => Box::new(DefaultSampler::new(seed, metrics)),
        Algorithm::Random => Box::new(RandomSampler::new(seed)),
        Algorithm::QuasiRandom => Box::new(QuasiSampler::new(seed)),
        Algorithm::Grid => Box::new(GridSampler::new(domain)?),
    })
}

fn restore_sampler(
    algorithm: Algorithm,
    floor: bool,
    state: &serde_json::Value,
) -> Result<Box<dyn Sampler>, SamplerError> {
    fn de<T: for<'de> Deserialize<'de>>(v: &serde_json::Value) -> Result<T, SamplerError> {
        T::deserialize(v).map_err(|e| SamplerError::Restore {
            reason: format!("sampler state: {e}"),
        })
    }
    Ok(match algorithm {
        Algorithm::Default if floor => Box::new(de::<FloorSampler>(state)?),
        Algorithm::Default => Box::new(de::<DefaultSampler>(state)?),
        Algorithm::Random => Box::new(de::<RandomSampler>(state)?),
        Algorithm::QuasiRandom => Box::new(de::<QuasiSampler>(state)?),
        Algorithm::Grid => Box::new(de::<GridSampler>(state)?),
    })
}

/// How the study is saved (`to_json`); measurements keep infinities as strings.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Saved {
    format: u32,
    space: SearchSpace,
    metrics: Vec<SamplerMetric>,
    algorithm: Algorithm,
    seed: u64,
    trials: Vec<SavedTrial>,
    sampler: serde_json::Value,
    /// Absent in a study without a floor (and in those saved before floors existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    floor: Option<Floor>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedTrial {
    id: u64,
    params: Vec<(String, ParamValue)>,
    point: Vec<f64>,
    state: SavedState,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum SavedState {
    Pending,
    /// `±inf` as `"inf"` / `"-inf"`: the one encoding of [`sweeper_score::json_f64`].
    Completed(#[serde(with = "sweeper_score::json_f64::map")] BTreeMap<String, f64>),
    Infeasible(String),
}

/// Format 2 writes metric values with `sweeper_score::json_f64` (format 1 had its own
/// encoding of infinities).
const FORMAT: u32 = 2;

impl Study {
    /// A study over `space` optimizing `metrics` with `algorithm`, seeded by `seed`.
    pub fn new(
        space: SearchSpace,
        metrics: Vec<SamplerMetric>,
        algorithm: Algorithm,
        seed: u64,
    ) -> Result<Study, SamplerError> {
        if metrics.is_empty() {
            return Err(SamplerError::InvalidMetrics {
                reason: "a study needs at least one metric".to_owned(),
            });
        }
        for (i, m) in metrics.iter().enumerate() {
            if metrics[..i].iter().any(|o| o.name == m.name) {
                return Err(SamplerError::InvalidMetrics {
                    reason: format!("metric `{}` is listed twice", m.name),
                });
            }
        }
        let domain = Domain::new(&space);
        let sampler = make_sampler(algorithm, &domain, metrics.len(), seed)?;
        Ok(Study {
            space,
            domain,
            metrics,
            algorithm,
            seed,
            records: Vec::new(),
            points: Vec::new(),
            sampler,
            floor: None,
        })
    }

    /// This study with a [`Floor`]: it must have two metrics, the floor's (maximized) and
    /// the cost (minimized), and no trial yet.
    ///
    /// # Errors
    ///
    /// [`SamplerError::InvalidMetrics`] when the metrics do not fit, the floor is not
    /// finite, or trials were suggested already.
    pub fn with_floor(mut self, floor: Floor) -> Result<Study, SamplerError> {
        let fix = "a floor needs two metrics, the floored one maximized and the cost minimized, e.g. metrics [(used_gpus, min), (goodput, max)] with a floor on goodput";
        let invalid = |what: String| SamplerError::InvalidMetrics {
            reason: format!("{what}; {fix}"),
        };
        if !floor.value.is_finite() {
            return Err(invalid(format!(
                "the floor on `{}` is {}, not a finite number",
                floor.metric, floor.value
            )));
        }
        if self.metrics.len() != 2 {
            return Err(invalid(format!(
                "the study has {} metric(s)",
                self.metrics.len()
            )));
        }
        let Some(m) = self.metrics.iter().find(|m| m.name == floor.metric) else {
            return Err(invalid(format!(
                "the floor names `{}`, which is not a metric of the study",
                floor.metric
            )));
        };
        let cost = self
            .metrics
            .iter()
            .find(|c| c.name != floor.metric)
            .expect("two distinct metrics");
        if m.direction != Direction::Maximize || cost.direction != Direction::Minimize {
            return Err(invalid(format!(
                "`{}` is {} and `{}` is {}",
                m.name,
                direction_word(m.direction),
                cost.name,
                direction_word(cost.direction)
            )));
        }
        if !self.records.is_empty() {
            return Err(invalid(
                "the study has trials already, so a floor would change the past".to_owned(),
            ));
        }
        if self.algorithm == Algorithm::Default {
            self.sampler = Box::new(FloorSampler::new(
                self.seed,
                &floor.metric,
                &cost.name,
                floor.value,
            ));
        }
        self.floor = Some(floor);
        Ok(self)
    }

    /// The study's [`Floor`], if it has one.
    pub fn floor(&self) -> Option<&Floor> {
        self.floor.as_ref()
    }

    /// Lowers the default algorithm's work caps (candidates, fit iterations), for fast
    /// tests in debug builds. Results stay deterministic; suggestions differ from the
    /// standard caps. No effect on other algorithms.
    #[doc(hidden)]
    pub fn use_low_effort(&mut self) {
        if self.algorithm == Algorithm::Default && self.floor.is_none() {
            let mut s = DefaultSampler::new(self.seed, self.metrics.len());
            s.set_effort(Effort {
                random: 150,
                mutations: 150,
                refine_steps: 5,
                cold_iters: 15,
                warm_iters: 5,
            });
            self.sampler = Box::new(s);
        }
    }

    /// The search space.
    pub fn space(&self) -> &SearchSpace {
        &self.space
    }

    /// The metrics.
    pub fn metrics(&self) -> &[SamplerMetric] {
        &self.metrics
    }

    /// The algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The most trials one [`Self::suggest`] call of the searching algorithms (default,
    /// random, quasi-random) hands out: 1,000. The grid's is [`Self::MAX_GRID_SUGGEST`].
    ///
    /// Why a cap: a count from outside (a config's `candidates_per_round`, Python's
    /// `suggest(n)`) must not size an allocation or a loop unchecked (`suggest(10**12)`
    /// aborted the process on a 24 TB allocation, `suggest(10**8)` with random search ran
    /// over 30 s), and a call's time grows with the square of the count: every
    /// algorithm checks each new point against the others of the call, and the default
    /// algorithm conditions its models on every member. Why 1,000: a batch is what runs at
    /// once, and a thousand evaluations at once is beyond any sweep here. Measured at the
    /// cap (release build, four parameters, two metrics, 30 observations): 1 ms with random
    /// search, 2 ms quasi-random, 2.1 s with the default algorithm (100 members: 0.32 s).
    /// A cap of 10,000 was tried first: 0.13 s with random search, but 29 s with the default
    /// algorithm on a fresh study, and on observations (not measured) about a hundred times
    /// the 2.1 s, the square of ten. A caller wanting more trials calls again, which
    /// continues the same sequence.
    pub const MAX_SUGGEST: usize = crate::sampler::MAX_SUGGEST;

    /// The most trials one [`Self::suggest`] call of the grid hands out: the largest grid a
    /// study accepts (2^20 points), so that a whole grid comes in one call (the Slurm
    /// array recipe, `examples/slurm/grid_array.py`, enumerates it so). The grid's work is
    /// a walk of its points, linear in the count, and a grid never holds more.
    pub const MAX_GRID_SUGGEST: usize = crate::sampler::MAX_GRID_SUGGEST;

    /// How many distinct trials this study can hand out in all, when that is finite: the
    /// grid's points, or the points of a space without a float parameter (every algorithm
    /// stops once each is observed or pending). `None` when it has no end.
    pub fn size(&self) -> Option<u128> {
        if self.algorithm == Algorithm::Grid {
            return Some(crate::sampler::grid::grid_size(&self.domain));
        }
        self.domain
            .dims
            .iter()
            .map(|(_, d)| d.levels())
            .try_fold(1u128, |n, l| l.map(|l| n.saturating_mul(l)))
    }

    /// The most trials one [`Self::suggest`] call of this study hands out:
    /// [`Self::MAX_GRID_SUGGEST`] for the grid, [`Self::MAX_SUGGEST`] otherwise.
    pub fn max_suggest(&self) -> usize {
        if self.algorithm == Algorithm::Grid {
            Self::MAX_GRID_SUGGEST
        } else {
            Self::MAX_SUGGEST
        }
    }

    /// Up to `count` new trials, now pending. Fewer only when the space is exhausted
    /// (grid done, or every point of a finite space observed or pending).
    ///
    /// # Errors
    ///
    /// [`SamplerError::TooManyTrials`] when `count` exceeds [`Self::max_suggest`]; the
    /// study is then unchanged.
    pub fn suggest(&mut self, count: usize) -> Result<Vec<Trial>, SamplerError> {
        if count > self.max_suggest() {
            return Err(SamplerError::TooManyTrials {
                count: count as u128,
                limit: self.max_suggest(),
                algorithm: self.algorithm,
            });
        }
        let history = History {
            domain: &self.domain,
            space: &self.space,
            metrics: &self.metrics,
            records: &self.records,
            points: &self.points,
        };
        let points = self.sampler.suggest(&history, count);
        let mut out = Vec::with_capacity(points.len());
        for p in points.into_iter().take(count) {
            let trial = Trial {
                id: self.records.len() as u64,
                params: self.domain.decode(&p),
            };
            self.records.push(TrialRecord {
                trial: trial.clone(),
                state: TrialState::Pending,
            });
            self.points.push(p);
            out.push(trial);
        }
        Ok(out)
    }

    fn pending_index(&self, trial_id: u64) -> Result<usize, SamplerError> {
        let i = usize::try_from(trial_id)
            .ok()
            .filter(|&i| i < self.records.len())
            .ok_or(SamplerError::UnknownTrial { trial_id })?;
        if self.records[i].state != TrialState::Pending {
            return Err(SamplerError::TrialClosed { trial_id });
        }
        Ok(i)
    }

    /// Completes a pending trial with every metric's raw value (finite or infinite).
    pub fn observe(
        &mut self,
        trial_id: u64,
        measurement: &BTreeMap<String, f64>,
    ) -> Result<(), SamplerError> {
        let i = self.pending_index(trial_id)?;
        let mut values = BTreeMap::new();
        for m in &self.metrics {
            let v = *measurement
                .get(&m.name)
                .ok_or_else(|| SamplerError::MissingMetric {
                    trial_id,
                    metric: m.name.clone(),
                })?;
            if v.is_nan() {
                return Err(SamplerError::NanMetric {
                    trial_id,
                    metric: m.name.clone(),
                });
            }
            values.insert(m.name.clone(), v);
        }
        if let Some(extra) = measurement.keys().find(|k| !values.contains_key(*k)) {
            return Err(SamplerError::UnknownMetric {
                trial_id,
                metric: extra.clone(),
            });
        }
        self.records[i].state = TrialState::Completed(values);
        Ok(())
    }

    /// Closes a pending trial that could not be evaluated or was over budget; the
    /// algorithm learns to avoid its region.
    pub fn observe_infeasible(&mut self, trial_id: u64, reason: &str) -> Result<(), SamplerError> {
        let i = self.pending_index(trial_id)?;
        self.records[i].state = TrialState::Infeasible(reason.to_owned());
        Ok(())
    }

    /// Makes a trial closed as infeasible pending again, so that it can be observed anew:
    /// an evaluation that failed for a reason since fixed is evaluated again (`sweeper run
    /// --resume DIR --retry-failed`). A trial that is pending or completed is refused.
    pub fn reopen(&mut self, trial_id: u64) -> Result<(), SamplerError> {
        let i = usize::try_from(trial_id)
            .ok()
            .filter(|&i| i < self.records.len())
            .ok_or(SamplerError::UnknownTrial { trial_id })?;
        if !matches!(self.records[i].state, TrialState::Infeasible(_)) {
            return Err(SamplerError::NotInfeasible { trial_id });
        }
        self.records[i].state = TrialState::Pending;
        Ok(())
    }

    /// Every trial, in id order.
    pub fn trials(&self) -> &[TrialRecord] {
        &self.records
    }

    fn signed(&self, r: &TrialRecord) -> Option<Vec<f64>> {
        match &r.state {
            TrialState::Completed(v) => Some(
                self.metrics
                    .iter()
                    .map(|m| m.direction.sign() * v[&m.name])
                    .collect(),
            ),
            _ => None,
        }
    }

    /// The completed trials that no other completed trial dominates, in id order, every
    /// copy of a duplicate kept (`sweeper_score`'s front kernel, each metric in its own
    /// direction).
    pub fn pareto_optimal_trials(&self) -> Vec<&TrialRecord> {
        let mut completed = Vec::new();
        let mut data = Vec::new();
        for r in &self.records {
            if let TrialState::Completed(v) = &r.state {
                completed.push(r);
                data.extend(self.metrics.iter().map(|m| v[&m.name]));
            }
        }
        let directions: Vec<Direction> = self.metrics.iter().map(|m| m.direction).collect();
        // `observe` and `from_json` refuse NaN and need every metric; a study has a metric.
        sweeper_score::front::nondominated(&data, directions.len(), &directions)
            .expect("completed trials hold one non-NaN value per metric")
            .into_iter()
            .map(|i| completed[i])
            .collect()
    }

    /// The completed trial best on the first metric (the earliest of equals). With a
    /// [`Floor`]: the satisfying trial of the fewest cost (then the highest floored
    /// metric, then the earliest); while none satisfies, the trial with the highest floored
    /// metric.
    pub fn best_trial(&self) -> Option<&TrialRecord> {
        if let Some(floor) = &self.floor {
            return self.best_with_floor(floor);
        }
        let mut best: Option<(&TrialRecord, f64)> = None;
        for r in &self.records {
            if let Some(v) = self.signed(r)
                && best.is_none_or(|(_, b)| v[0] > b)
            {
                best = Some((r, v[0]));
            }
        }
        best.map(|(r, _)| r)
    }

    fn best_with_floor(&self, floor: &Floor) -> Option<&TrialRecord> {
        let cost = &self.metrics.iter().find(|m| m.name != floor.metric)?.name;
        // (satisfying, −cost, value): larger is better
        let mut best: Option<(&TrialRecord, (bool, f64, f64))> = None;
        for r in &self.records {
            if let TrialState::Completed(v) = &r.state {
                let value = v[&floor.metric];
                let sat = value >= floor.value;
                let key = (sat, if sat { -v[cost] } else { 0.0 }, value);
                let better = best.as_ref().is_none_or(|(_, b)| {
                    key.0
                        .cmp(&b.0)
                        .then(key.1.total_cmp(&b.1))
                        .then(key.2.total_cmp(&b.2))
                        .is_gt()
                });
                if better {
                    best = Some((r, key));
                }
            }
        }
        best.map(|(r, _)| r)
    }

    /// The whole study (space, metrics, trials, algorithm state) as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        let saved = Saved {
            format: FORMAT,
            space: self.space.clone(),
            metrics: self.metrics.clone(),
            algorithm: self.algorithm,
            seed: self.seed,
            trials: self
                .records
                .iter()
                .zip(&self.points)
                .map(|(r, p)| SavedTrial {
                    id: r.trial.id,
                    params: r.trial.params.clone(),
                    point: p.clone(),
                    state: match &r.state {
                        TrialState::Pending => SavedState::Pending,
                        TrialState::Infeasible(s) => SavedState::Infeasible(s.clone()),
                        TrialState::Completed(v) => SavedState::Completed(v.clone()),
                    },
                })
                .collect(),
            sampler: self.sampler.save(),
            floor: self.floor.clone(),
        };
        serde_json::to_value(saved).unwrap_or_default()
    }

    /// A study saved by [`Self::to_json`]; it continues exactly as the original would.
    pub fn from_json(v: &serde_json::Value) -> Result<Study, SamplerError> {
        let saved = Saved::deserialize(v).map_err(|e| SamplerError::Restore {
            reason: e.to_string(),
        })?;
        if saved.format != FORMAT {
            return Err(SamplerError::Restore {
                reason: format!(
                    "unknown format {} (this sweeper reads format {FORMAT})",
                    saved.format
                ),
            });
        }
        let mut study = Study::new(saved.space, saved.metrics, saved.algorithm, saved.seed)?;
        if let Some(floor) = saved.floor {
            study = study.with_floor(floor)?;
        }
        study.sampler = restore_sampler(saved.algorithm, study.floor.is_some(), &saved.sampler)?;
        for (i, t) in saved.trials.into_iter().enumerate() {
            if t.id != i as u64 || !study.domain.contains(&t.point) {
                return Err(SamplerError::Restore {
                    reason: format!("trial {} is out of order or its point is malformed", t.id),
                });
            }
            let state = match t.state {
                SavedState::Pending => TrialState::Pending,
                SavedState::Infeasible(s) => TrialState::Infeasible(s),
                SavedState::Completed(v) => TrialState::Completed(v),
            };
            if let TrialState::Completed(v) = &state
                && let Some(m) = study
                    .metrics
                    .iter()
                    .find(|m| v.get(&m.name).is_none_or(|x| x.is_nan()))
            {
                return Err(SamplerError::Restore {
                    reason: format!("trial {i}: metric `{}` is missing or nan", m.name),
                });
            }
            study.records.push(TrialRecord {
                trial: Trial {
                    id: t.id,
                    params: t.params,
                },
                state,
            });
            study.points.push(t.point);
        }
        Ok(study)
    }
}

fn direction_word(d: Direction) -> &'static str {
    match d {
        Direction::Maximize => "maximized",
        Direction::Minimize => "minimized",
    }
}
