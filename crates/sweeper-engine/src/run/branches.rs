//! One study per deployment mode (SPEC 8): the trials of a topology sweep split evenly
//! between the aggregated and the disaggregated branch, each searched by a study of its own
//! latent features and knobs, so that neither branch starves while the other looks better.

use super::{Proposer, RunError, default_study};
use std::collections::BTreeMap;
use sweeper_goal::{AlgorithmName, DeploymentMode, SweepConfig};
use sweeper_sampler::{Algorithm, ParamValue, Study, Trial};

/// The proposer of a topology sweep with both modes: a [`Study`] per mode over
/// [`search_space_of`](super::space::search_space_of) that mode, each seeded apart. A
/// `suggest(count)` gives each branch `count / modes` trials and the remainder in turn
/// (the turn moves on with every call), so the branches' shares differ by at most one
/// call's remainder. Each trial carries its branch as `deployment_mode` and a sweep-wide
/// id; what is observed goes to the study that proposed it. Deterministic in its call
/// sequence, so a journal's replay reaches the same state.
#[derive(Debug)]
pub struct BranchStudies {
    branches: Vec<(DeploymentMode, Study)>,
    /// Sweep-wide trial id → (branch, the study's own id).
    owner: BTreeMap<u64, (usize, u64)>,
    next_id: u64,
    turn: usize,
}

impl BranchStudies {
    /// A study per mode of `modes`, with the config's metrics and algorithm.
    pub fn new(config: &SweepConfig, modes: &[DeploymentMode]) -> Result<BranchStudies, RunError> {
        let algorithm = match config.sweep.algorithm {
            AlgorithmName::Random => Algorithm::Random,
            AlgorithmName::QuasiRandom => Algorithm::QuasiRandom,
            AlgorithmName::Grid => Algorithm::Grid,
            AlgorithmName::Default => Algorithm::Default,
        };
        let mut branches = Vec::with_capacity(modes.len());
        for (i, &mode) in modes.iter().enumerate() {
            let space = super::space::search_space_of(config, Some(mode))?;
            // seeds apart by a large odd step, so the branches' designs do not mirror
            let seed = config
                .sweep
                .seed
                .wrapping_add((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let study = super::proposer::goal_study(config, space, algorithm, seed)?;
            branches.push((mode, study));
        }
        Ok(BranchStudies {
            branches,
            owner: BTreeMap::new(),
            next_id: 0,
            turn: 0,
        })
    }

    /// The studies, by mode.
    pub fn studies(&self) -> impl Iterator<Item = (DeploymentMode, &Study)> {
        self.branches.iter().map(|(m, s)| (*m, s))
    }

    fn owner(&self, trial: u64) -> Result<(usize, u64), RunError> {
        self.owner.get(&trial).copied().ok_or_else(|| {
            RunError::Setup(format!(
                "trial {trial} was not proposed by this sweep's studies"
            ))
        })
    }
}

impl Proposer for BranchStudies {
    fn suggest(&mut self, count: usize) -> Result<Vec<Trial>, RunError> {
        let n = self.branches.len();
        let mut out = Vec::with_capacity(count);
        for k in 0..n {
            let b = (self.turn + k) % n;
            let share = count / n + usize::from(k < count % n);
            if share == 0 {
                continue;
            }
            let (mode, study) = &mut self.branches[b];
            let mode = *mode;
            for trial in Proposer::suggest(study, share)? {
                let id = self.next_id;
                self.next_id += 1;
                self.owner.insert(id, (b, trial.id));
                let mut params = vec![(
                    super::space::MODE.to_owned(),
                    ParamValue::Str(mode.as_str().to_owned()),
                )];
                params.extend(trial.params);
                out.push(Trial::new(id, params));
            }
        }
        self.turn = (self.turn + count % n) % n;
        Ok(out)
    }
    fn observe(&mut self, trial: u64, measurement: &BTreeMap<String, f64>) -> Result<(), RunError> {
        let (b, local) = self.owner(trial)?;
        Ok(self.branches[b].1.observe(local, measurement)?)
    }
    fn observe_infeasible(&mut self, trial: u64, reason: &str) -> Result<(), RunError> {
        let (b, local) = self.owner(trial)?;
        Ok(self.branches[b].1.observe_infeasible(local, reason)?)
    }
    fn reopen(&mut self, trial: u64) -> Result<(), RunError> {
        let (b, local) = self.owner(trial)?;
        Ok(self.branches[b].1.reopen(local)?)
    }
}

/// The proposer `sweeper run` uses for a config: one study per deployment mode for a
/// topology with both modes in its pool (except a grid, which enumerates the whole pool
/// in one study), else the config's [`Study`] ([`default_study`]).
pub fn default_proposer(config: &SweepConfig) -> Result<Box<dyn Proposer>, RunError> {
    if config.sweep.algorithm != AlgorithmName::Grid
        && let Some(pool) = super::space::topology_pool(config)?
    {
        let modes = pool.modes();
        if modes.len() > 1 {
            return Ok(Box::new(BranchStudies::new(config, &modes)?));
        }
    }
    Ok(Box::new(default_study(config)?))
}
