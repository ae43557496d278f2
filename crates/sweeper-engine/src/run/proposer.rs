//! Where trials come from: the [`Proposer`] seam, the study behind it by default, and a
//! fixed list.

use super::{RunError, search_space};
use std::collections::BTreeMap;
use std::collections::VecDeque;
use sweeper_goal::SweepConfig;
use sweeper_sampler::Algorithm;
use sweeper_sampler::ParamValue;
use sweeper_sampler::Study;
use sweeper_sampler::Trial;

/// A source of trials: the config's [`Study`] by default; a grid, a replayed list
/// ([`ListProposer`]) or a user's own sampler are others.
///
/// Under `schedule: rounds` the engine calls `suggest` for a batch, then `observe` or
/// `observe_infeasible` once per trial of the batch, in trial order, before the next
/// `suggest`. Under `schedule: async` it calls `suggest` whenever evaluation slots are free,
/// with the trials still running pending (never observed yet), and observes each trial when
/// its outcome arrives. A proposer that is deterministic in its call sequence makes sweeps
/// reproducible and resumable: resume repeats the recorded sequence.
pub trait Proposer {
    /// Up to `count` new trials; fewer (or none) when nothing new is left. Trial ids must be
    /// unique within a sweep.
    fn suggest(&mut self, count: usize) -> Result<Vec<Trial>, RunError>;
    /// A trial was evaluated: its measurement (one value per metric of the goal).
    fn observe(&mut self, trial: u64, measurement: &BTreeMap<String, f64>) -> Result<(), RunError>;
    /// A trial could not be evaluated, was over budget, or failed.
    fn observe_infeasible(&mut self, trial: u64, reason: &str) -> Result<(), RunError>;
    /// A trial closed with [`observe_infeasible`](Self::observe_infeasible) because its
    /// evaluation failed is evaluated again (`--retry-failed`): it is pending once more and
    /// will be observed anew. By default a proposer cannot do that.
    fn reopen(&mut self, trial: u64) -> Result<(), RunError> {
        Err(RunError::Setup(format!(
            "this proposer cannot evaluate trial {trial} again: --retry-failed needs a proposer that implements `reopen` (the built-in study does)"
        )))
    }
    /// How many trials it can propose in all, when that is finite (a grid, a space of
    /// integers and lists): the sweep's progress total never exceeds it. `None` by
    /// default.
    fn size_hint(&self) -> Option<u64> {
        None
    }
}

/// A proposer lent to a sweep: the caller keeps it (a study to save, to inspect or to run
/// on with) once the sweep ends.
impl<P: Proposer + ?Sized> Proposer for &mut P {
    fn suggest(&mut self, count: usize) -> Result<Vec<Trial>, RunError> {
        (**self).suggest(count)
    }
    fn observe(&mut self, trial: u64, measurement: &BTreeMap<String, f64>) -> Result<(), RunError> {
        (**self).observe(trial, measurement)
    }
    fn observe_infeasible(&mut self, trial: u64, reason: &str) -> Result<(), RunError> {
        (**self).observe_infeasible(trial, reason)
    }
    fn reopen(&mut self, trial: u64) -> Result<(), RunError> {
        (**self).reopen(trial)
    }
    fn size_hint(&self) -> Option<u64> {
        (**self).size_hint()
    }
}

impl Proposer for Study {
    /// The study's suggestions, asked for in calls of at most [`Study::max_suggest`] each (a
    /// round of 2,000 candidates, or 2,000 free slots, is two calls); the same count gives
    /// the same calls, so a journal's replay reaches the same state.
    fn suggest(&mut self, count: usize) -> Result<Vec<Trial>, RunError> {
        let cap = self.max_suggest();
        if count <= cap {
            return Ok(Study::suggest(self, count)?);
        }
        let mut out = Vec::new();
        while out.len() < count {
            let ask = (count - out.len()).min(cap);
            let got = Study::suggest(self, ask)?;
            let short = got.len() < ask;
            out.extend(got);
            if short {
                break;
            }
        }
        Ok(out)
    }
    fn observe(&mut self, trial: u64, measurement: &BTreeMap<String, f64>) -> Result<(), RunError> {
        Ok(Study::observe(self, trial, measurement)?)
    }
    fn observe_infeasible(&mut self, trial: u64, reason: &str) -> Result<(), RunError> {
        Ok(Study::observe_infeasible(self, trial, reason)?)
    }
    fn reopen(&mut self, trial: u64) -> Result<(), RunError> {
        Ok(Study::reopen(self, trial)?)
    }
    fn size_hint(&self) -> Option<u64> {
        self.size().map(|n| u64::try_from(n).unwrap_or(u64::MAX))
    }
}

/// A proposer that hands out a fixed list of configurations in order (ids `0, 1, 2, ...`)
/// and ignores what it is told: a replayed sweep, an exhaustive grid written by hand.
///
/// ```
/// use sweeper_engine::{ListProposer, Proposer};
/// use sweeper_sampler::ParamValue;
///
/// let mut list = ListProposer::new(vec![
///     vec![("tp".to_owned(), ParamValue::Int(1))],
///     vec![("tp".to_owned(), ParamValue::Int(2))],
/// ]);
/// let batch = list.suggest(8)?;
/// assert_eq!(batch.len(), 2);
/// assert!(list.suggest(1)?.is_empty());
/// # Ok::<(), sweeper_engine::RunError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct ListProposer {
    queue: VecDeque<Vec<(String, ParamValue)>>,
    next_id: u64,
}

impl ListProposer {
    /// A proposer of these configurations, in this order.
    pub fn new(configurations: Vec<Vec<(String, ParamValue)>>) -> ListProposer {
        ListProposer {
            queue: configurations.into(),
            next_id: 0,
        }
    }
}

impl Proposer for ListProposer {
    fn suggest(&mut self, count: usize) -> Result<Vec<Trial>, RunError> {
        let mut out = Vec::new();
        while out.len() < count {
            let Some(params) = self.queue.pop_front() else {
                break;
            };
            out.push(Trial::new(self.next_id, params));
            self.next_id += 1;
        }
        Ok(out)
    }
    fn observe(&mut self, _trial: u64, _m: &BTreeMap<String, f64>) -> Result<(), RunError> {
        Ok(())
    }
    fn observe_infeasible(&mut self, _trial: u64, _reason: &str) -> Result<(), RunError> {
        Ok(())
    }
    fn size_hint(&self) -> Option<u64> {
        Some(self.next_id + self.queue.len() as u64)
    }
}

/// The config's own study: its search space, the goal's metrics, its algorithm and seed.
pub fn default_study(config: &SweepConfig) -> Result<Study, RunError> {
    let algorithm = match config.sweep.algorithm {
        sweeper_goal::AlgorithmName::Default => Algorithm::Default,
        sweeper_goal::AlgorithmName::Random => Algorithm::Random,
        sweeper_goal::AlgorithmName::QuasiRandom => Algorithm::QuasiRandom,
        sweeper_goal::AlgorithmName::Grid => Algorithm::Grid,
    };
    goal_study(config, search_space(config)?, algorithm, config.sweep.seed)
}

/// A study of `space` for the config's goal: its metrics, and under `min_gpus` the goodput
/// floor (so that the default algorithm models the floor as a constraint and the GPU
/// count as a function of the parameters).
pub(crate) fn goal_study(
    config: &SweepConfig,
    space: sweeper_sampler::SearchSpace,
    algorithm: Algorithm,
    seed: u64,
) -> Result<Study, RunError> {
    let study = Study::new(space, config.goal.sampler_metrics(), algorithm, seed)?;
    Ok(match config.goal.sampler_floor() {
        Some((metric, floor)) => study.with_floor(sweeper_sampler::Floor::new(metric, floor))?,
        None => study,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluator::{EvalOutcome, EvalRequest, Evaluator};
    use crate::run::Sweeper;
    use std::sync::Mutex;
    use sweeper_sampler::TrialState;

    /// A toy serving model: each replica of `tp` GPUs serves `tp` requests a second, up to
    /// the offered 6; goodput is what is served.
    struct Toy;

    impl Evaluator for Toy {
        fn evaluate(&self, _worker: usize, request: &EvalRequest) -> EvalOutcome {
            let tp = request.parameters["tp"].as_f64().unwrap_or(1.0);
            let replicas = request.parameters["replicas"].as_f64().unwrap_or(1.0);
            let goodput = (tp * replicas).min(6.0);
            EvalOutcome::Report(
                BTreeMap::from([
                    ("goodput_request_throughput_rps".to_owned(), goodput),
                    ("output_throughput_tok_s".to_owned(), 100.0 * goodput),
                ])
                .into(),
            )
        }
    }

    /// Records every measurement the engine tells the study.
    struct Recording(Study, Mutex<Vec<BTreeMap<String, f64>>>);

    impl Proposer for Recording {
        fn suggest(&mut self, count: usize) -> Result<Vec<Trial>, RunError> {
            Proposer::suggest(&mut self.0, count)
        }
        fn observe(&mut self, trial: u64, m: &BTreeMap<String, f64>) -> Result<(), RunError> {
            self.1.lock().unwrap().push(m.clone());
            Ok(self.0.observe(trial, m)?)
        }
        fn observe_infeasible(&mut self, trial: u64, reason: &str) -> Result<(), RunError> {
            Ok(self.0.observe_infeasible(trial, reason)?)
        }
    }

    const MIN_GPUS: &str =
        "goal: {target: min_gpus, min_goodput_rps: 5.7, sla: {ttft_ms: 2000, itl_ms: 30}}
search_space:
  gpu_budget: 64
  used_gpus: [tp, replicas]
  parameters: {tp: {values: [1, 2, 4, 8]}, replicas: {int: [1, 8]}}
sweep: {max_trials: 12, candidates_per_round: 4, parallel_evals: 1, seed: 3}";

    #[test]
    fn a_min_gpus_study_has_the_floor_and_is_told_gpus_and_goodput() {
        let config = sweeper_goal::parse(MIN_GPUS).unwrap();
        let study = default_study(&config).unwrap();
        assert_eq!(
            study.floor(),
            Some(&sweeper_sampler::Floor::new(
                "goodput_request_throughput_rps",
                5.7
            ))
        );
        let names: Vec<&str> = study.metrics().iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["used_gpus", "goodput_request_throughput_rps"]);
        let mut proposer = Recording(study, Mutex::new(Vec::new()));
        let result = Sweeper::builder(&config)
            .evaluator(&Toy)
            .proposer(&mut proposer)
            .run()
            .unwrap();
        let told = proposer.1.lock().unwrap().clone();
        assert_eq!(told.len(), result.trials.len());
        for (m, t) in told.iter().zip(&result.trials) {
            let gpus = t.config["tp"].as_f64().unwrap() * t.config["replicas"].as_f64().unwrap();
            assert_eq!(m["used_gpus"], gpus, "{m:?}");
            assert_eq!(m["goodput_request_throughput_rps"], gpus.min(6.0), "{m:?}");
        }
        // the study's best is the satisfying trial of the fewest GPUs it saw
        let best = proposer.0.best_trial().unwrap();
        let TrialState::Completed(v) = &best.state else {
            panic!("the best trial is completed")
        };
        let fewest = told
            .iter()
            .filter(|m| m["goodput_request_throughput_rps"] >= 5.7)
            .map(|m| m["used_gpus"])
            .fold(f64::INFINITY, f64::min);
        assert_eq!(v["used_gpus"], fewest);
    }

    #[test]
    fn other_goals_keep_their_one_objective() {
        let config = sweeper_goal::parse(
            "search_space: {gpu_budget: 8, parameters: {tp: {values: [1, 2, 4, 8]}}}",
        )
        .unwrap();
        let study = default_study(&config).unwrap();
        assert_eq!(study.floor(), None);
        assert_eq!(study.metrics().len(), 1);
        assert_eq!(study.metrics()[0].name, "objective");
    }
}
