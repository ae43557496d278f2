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
    Ok(Study::new(
        search_space(config)?,
        config.goal.sampler_metrics(),
        algorithm,
        config.sweep.seed,
    )?)
}
