//! One study per deployment mode (SPEC 8): the trials of a topology sweep split evenly
//! between the aggregated and the disaggregated branch, each searched by a study of its own
//! latent features and knobs, so that neither branch starves while the other looks better.

use super::{Proposer, RunError, default_study};
use std::collections::{BTreeMap, BTreeSet};
use sweeper_goal::{AlgorithmName, DeploymentMode, SweepConfig};
use sweeper_sampler::{Algorithm, ParamValue, Study, Trial};
use sweeper_topology::Pool;

/// How many suggestions a branch study of a `min_gpus` goal may make in a row for one
/// trial that project onto candidates already measured (each told its known outcome at
/// once), before the last one is handed out all the same (and answered from the run's
/// cache).
pub(crate) const KNOWN_RETRIES: usize = 32;

/// The proposer of a topology sweep with both modes: a [`Study`] per mode over
/// [`search_space_of`](super::space::search_space_of) that mode, each seeded apart. A
/// `suggest(count)` gives each branch `count / modes` trials and the remainder in turn
/// (the turn moves on with every call), so the branches' shares differ by at most one
/// call's remainder. Each trial carries its branch as `deployment_mode` and a sweep-wide
/// id; what is observed goes to the study that proposed it. Deterministic in its call
/// sequence, so a journal's replay reaches the same state.
///
/// Under a `min_gpus` goal (studies with a floor) a suggestion whose latent features
/// project onto a candidate already measured is not handed out: its study is told that
/// candidate's outcome at once and asked again (at most 32 times a trial).
/// The floor algorithm tries cheaper points for as long as any is left, and in the
/// continuous latent space one always is: on `bench/min_gpus_moe.yaml` (2,456 deployments)
/// two thirds of its trials were cache hits of a few cheap and a few 32-GPU deployments,
/// and it had not found the answer after 427 trials.
#[derive(Debug)]
pub struct BranchStudies {
    branches: Vec<(DeploymentMode, Study)>,
    /// Sweep-wide trial id → (branch, the study's own id).
    owner: BTreeMap<u64, (usize, u64)>,
    next_id: u64,
    turn: usize,
    /// With a floor: the pool the trials project onto, and what each candidate measured.
    known: Option<Known>,
}

/// The outcomes of the candidates measured so far (by their flat configuration), the
/// candidate of each trial handed out, the candidates handed out and not yet told, and the
/// study trials (branch, local id) that projected onto one of those and wait for its
/// outcome.
#[derive(Debug)]
struct Known {
    pool: Pool,
    told: BTreeMap<String, Told>,
    key_of: BTreeMap<u64, String>,
    pending: BTreeSet<String>,
    waiting: BTreeMap<String, Vec<(usize, u64)>>,
}

/// What a candidate's trial was told.
#[derive(Debug, Clone)]
enum Told {
    Measured(BTreeMap<String, f64>),
    Infeasible(String),
}

impl Known {
    /// The candidate a trial of branch `mode` stands for, as text.
    fn key(&self, mode: DeploymentMode, trial: &Trial) -> String {
        let mut params = vec![(
            super::space::MODE.to_owned(),
            ParamValue::Str(mode.as_str().to_owned()),
        )];
        params.extend(trial.params.iter().cloned());
        let (candidate, _) =
            super::space::candidate(&Trial::new(trial.id, params), Some(&self.pool));
        serde_json::Value::Object(candidate).to_string()
    }
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
        let mut branches: Vec<(DeploymentMode, Study)> = Vec::with_capacity(modes.len());
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
        let floored = branches.iter().any(|(_, s)| s.floor().is_some());
        let known = match super::space::topology_pool(config)? {
            Some(pool) if floored && algorithm != Algorithm::Grid => Some(Known {
                pool,
                told: BTreeMap::new(),
                key_of: BTreeMap::new(),
                pending: BTreeSet::new(),
                waiting: BTreeMap::new(),
            }),
            _ => None,
        };
        Ok(BranchStudies {
            branches,
            owner: BTreeMap::new(),
            next_id: 0,
            turn: 0,
            known,
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
            for first in Proposer::suggest(study, share)? {
                let Some((trial, key)) = fresh(study, self.known.as_mut(), b, mode, first)? else {
                    continue;
                };
                let id = self.next_id;
                self.next_id += 1;
                self.owner.insert(id, (b, trial.id));
                if let (Some(known), Some(key)) = (self.known.as_mut(), key) {
                    known.pending.insert(key.clone());
                    known.key_of.insert(id, key);
                }
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
        self.branches[b].1.observe(local, measurement)?;
        self.remember(trial, Told::Measured(measurement.clone()))
    }
    fn observe_infeasible(&mut self, trial: u64, reason: &str) -> Result<(), RunError> {
        let (b, local) = self.owner(trial)?;
        self.branches[b].1.observe_infeasible(local, reason)?;
        self.remember(trial, Told::Infeasible(reason.to_owned()))
    }
    fn reopen(&mut self, trial: u64) -> Result<(), RunError> {
        let (b, local) = self.owner(trial)?;
        if let Some(known) = self.known.as_mut()
            && let Some(key) = known.key_of.get(&trial)
        {
            known.told.remove(key);
            known.pending.insert(key.clone());
        }
        Ok(self.branches[b].1.reopen(local)?)
    }
}

impl BranchStudies {
    /// Records what trial `trial`'s candidate was told (the first outcome of a candidate
    /// stands, as the run's cache keeps it), and tells it to the study trials that wait
    /// for it.
    fn remember(&mut self, trial: u64, told: Told) -> Result<(), RunError> {
        let Some(known) = self.known.as_mut() else {
            return Ok(());
        };
        let Some(key) = known.key_of.get(&trial).cloned() else {
            return Ok(());
        };
        known.pending.remove(&key);
        let told = known.told.entry(key.clone()).or_insert(told).clone();
        for (b, local) in known.waiting.remove(&key).unwrap_or_default() {
            let study = &mut self.branches[b].1;
            match &told {
                Told::Measured(m) => study.observe(local, m)?,
                Told::Infeasible(r) => study.observe_infeasible(local, r)?,
            }
        }
        Ok(())
    }
}

/// The trial to hand out for `first`, a suggestion of `study` (branch `b`, `mode`):
/// itself, or, while its candidate's outcome is `known` (told at once) or its candidate is
/// pending (the suggestion then waits for that outcome), the study's next suggestion (at
/// most [`KNOWN_RETRIES`] times; then the last suggestion all the same); with its
/// candidate's key when outcomes are kept. `None` when the study has nothing left.
fn fresh(
    study: &mut Study,
    known: Option<&mut Known>,
    b: usize,
    mode: DeploymentMode,
    first: Trial,
) -> Result<Option<(Trial, Option<String>)>, RunError> {
    let Some(known) = known else {
        return Ok(Some((first, None)));
    };
    let mut trial = first;
    for _ in 0..KNOWN_RETRIES {
        let key = known.key(mode, &trial);
        match known.told.get(&key) {
            Some(Told::Measured(m)) => study.observe(trial.id, m)?,
            Some(Told::Infeasible(r)) => study.observe_infeasible(trial.id, r)?,
            None if known.pending.contains(&key) => {
                known.waiting.entry(key).or_default().push((b, trial.id));
            }
            None => return Ok(Some((trial, Some(key)))),
        }
        match Proposer::suggest(study, 1)?.pop() {
            Some(next) => trial = next,
            None => return Ok(None),
        }
    }
    let key = known.key(mode, &trial);
    Ok(Some((trial, Some(key))))
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
