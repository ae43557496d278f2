//! The `sweep:` block (SPEC 6): rounds, parallelism, time limit, budget, failure limit,
//! seed, algorithm, schedule.

use crate::error::ConfigError;
use crate::raw::{self, RawSweep, RawValue};
use serde::Serialize;
use std::fmt;

/// The sampler algorithm of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AlgorithmName {
    /// The Bayesian optimizer (GP-UCB-PE family), the same for every study.
    #[default]
    Default,
    /// Uniform random search.
    Random,
    /// A low-discrepancy sequence (an extension beyond the SPEC).
    QuasiRandom,
    /// Grid search over the space (an extension beyond the SPEC).
    Grid,
}

impl AlgorithmName {
    /// Every accepted name.
    pub const ALL: [AlgorithmName; 4] = [
        AlgorithmName::Default,
        AlgorithmName::Random,
        AlgorithmName::QuasiRandom,
        AlgorithmName::Grid,
    ];

    /// The name used in configs.
    pub fn name(self) -> &'static str {
        match self {
            AlgorithmName::Default => "default",
            AlgorithmName::Random => "random",
            AlgorithmName::QuasiRandom => "quasi_random",
            AlgorithmName::Grid => "grid",
        }
    }

    /// Parses a config name.
    pub fn from_name(name: &str) -> Option<AlgorithmName> {
        AlgorithmName::ALL.into_iter().find(|a| a.name() == name)
    }
}

impl fmt::Display for AlgorithmName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the engine keeps its `parallel_evals` slots busy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// The rounds of SPEC 7: a round's evaluations all finish before the next suggestion,
    /// and are observed in trial order.
    #[default]
    Rounds,
    /// A slot that frees is filled at once: the study suggests with every pending trial
    /// known to it, each outcome is observed the moment it arrives, and the budget is
    /// counted in trials (an extension beyond the SPEC).
    Async,
}

impl Schedule {
    /// Every accepted schedule.
    pub const ALL: [Schedule; 2] = [Schedule::Rounds, Schedule::Async];

    /// The name used in configs.
    pub fn name(self) -> &'static str {
        match self {
            Schedule::Rounds => "rounds",
            Schedule::Async => "async",
        }
    }

    /// Parses a config name.
    pub fn from_name(name: &str) -> Option<Schedule> {
        Schedule::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The validated `sweep:` block.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepSettings {
    /// Rounds of suggest → evaluate → observe; `>= 1`, default 20.
    pub max_rounds: u32,
    /// New successful evaluations a round asks for; `>= 1`, default `parallel_evals`.
    pub candidates_per_round: u32,
    /// Evaluations running at once; `>= 1`, default 16.
    pub parallel_evals: u32,
    /// An evaluation running longer is stopped and counted infeasible; finite `> 0`,
    /// default 600.
    pub max_eval_seconds: f64,
    /// Exact budget of suggestions; `>= 1` when set. Under `schedule: async` the budget is
    /// this, else `max_rounds * candidates_per_round` trials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_trials: Option<u64>,
    /// A sweep stops once the evaluator failed this many trials in a row: it exits with
    /// status 1 and keeps its journal, so that `--resume` continues it (after the evaluator
    /// is fixed). "Failed" means the evaluation itself failed (a crash, a non-zero exit, a
    /// malformed report, a program that cannot be run), not a candidate found infeasible or
    /// unsupported. `>= 1`, default [`DEFAULT_MAX_CONSECUTIVE_FAILURES`].
    pub max_consecutive_failures: u32,
    /// Same seed and inputs give the same suggestions; default 42.
    pub seed: u64,
    /// The sampler algorithm; default `default`.
    pub algorithm: AlgorithmName,
    /// `rounds` (SPEC 7, the default) or `async`.
    pub schedule: Schedule,
}

impl SweepSettings {
    /// The evaluation slots, `parallel_evals` as a count: the one place it is read, by the
    /// engine (its workers) and by the evaluators that keep a process per slot; at least 1
    /// even for a hand-built value (a validated config always has `parallel_evals >= 1`).
    pub fn slots(&self) -> usize {
        self.parallel_evals.max(1) as usize
    }

    /// The number of trials a sweep may suggest: `max_trials`, else `max_rounds *
    /// candidates_per_round`. Exact under `schedule: async`; under `rounds` an upper bound
    /// (a round that falls short of its successes ends the search sooner, and one with
    /// failures or cache hits asks for more, up to `max_trials` when set).
    pub fn trial_budget(&self) -> u64 {
        self.max_trials
            .unwrap_or(u64::from(self.max_rounds) * u64::from(self.candidates_per_round))
    }
}

/// Default `max_rounds`.
pub const DEFAULT_MAX_ROUNDS: u32 = 20;
/// Default `parallel_evals`.
pub const DEFAULT_PARALLEL_EVALS: u32 = 16;
/// Default `max_eval_seconds`.
pub const DEFAULT_MAX_EVAL_SECONDS: f64 = 600.0;
/// Default `seed`.
pub const DEFAULT_SEED: u64 = 42;
/// Default `max_consecutive_failures`.
pub const DEFAULT_MAX_CONSECUTIVE_FAILURES: u32 = 10;

impl Default for SweepSettings {
    fn default() -> Self {
        SweepSettings {
            max_rounds: DEFAULT_MAX_ROUNDS,
            candidates_per_round: DEFAULT_PARALLEL_EVALS,
            parallel_evals: DEFAULT_PARALLEL_EVALS,
            max_eval_seconds: DEFAULT_MAX_EVAL_SECONDS,
            max_trials: None,
            max_consecutive_failures: DEFAULT_MAX_CONSECUTIVE_FAILURES,
            seed: DEFAULT_SEED,
            algorithm: AlgorithmName::Default,
            schedule: Schedule::Rounds,
        }
    }
}

fn count_u32(v: Option<&RawValue>, key: &str, default: u32) -> Result<u32, ConfigError> {
    match v {
        None => Ok(default),
        Some(v) => raw::int_in(
            v,
            &format!("sweep.{key}"),
            1,
            i128::from(u32::MAX),
            &format!("{key} is an integer >= 1 (at most {})", u32::MAX),
            "",
        )
        .map(|i| i as u32),
    }
}

/// Validates a raw `sweep:` block.
pub(crate) fn from_raw(s: &RawSweep) -> Result<SweepSettings, ConfigError> {
    let max_rounds = count_u32(s.max_rounds.as_ref(), "max_rounds", DEFAULT_MAX_ROUNDS)?;
    let parallel_evals = count_u32(
        s.parallel_evals.as_ref(),
        "parallel_evals",
        DEFAULT_PARALLEL_EVALS,
    )?;
    let candidates_per_round = count_u32(
        s.candidates_per_round.as_ref(),
        "candidates_per_round",
        parallel_evals,
    )?;
    let max_eval_seconds = match &s.max_eval_seconds {
        None => DEFAULT_MAX_EVAL_SECONDS,
        Some(v) => raw::positive(
            v,
            "sweep.max_eval_seconds",
            "max_eval_seconds is a finite number of seconds > 0",
        )?,
    };
    let max_trials = s
        .max_trials
        .as_ref()
        .map(|v| {
            raw::int_in(
                v,
                "sweep.max_trials",
                1,
                i128::from(u64::MAX),
                "max_trials is an integer >= 1 (or leave it out for no cap)",
                "",
            )
            .map(|i| i as u64)
        })
        .transpose()?;
    let max_consecutive_failures = count_u32(
        s.max_consecutive_failures.as_ref(),
        "max_consecutive_failures",
        DEFAULT_MAX_CONSECUTIVE_FAILURES,
    )?;
    let seed = match &s.seed {
        None => DEFAULT_SEED,
        Some(v) => raw::int_in(
            v,
            "sweep.seed",
            0,
            i128::from(u64::MAX),
            "seed is an integer from 0 to 2^64-1",
            "",
        )? as u64,
    };
    let algorithm = match &s.algorithm {
        None => AlgorithmName::Default,
        Some(v) => {
            let name = raw::string(v, "sweep.algorithm", "e.g. `algorithm: default`")?;
            AlgorithmName::from_name(name).ok_or_else(|| ConfigError::UnknownAlgorithm {
                path: "sweep.algorithm".to_owned(),
                value: v.show(),
            })?
        }
    };
    let schedule = match &s.schedule {
        None => Schedule::Rounds,
        Some(v) => {
            let name = raw::string(v, "sweep.schedule", "e.g. `schedule: async`")?;
            Schedule::from_name(name).ok_or_else(|| ConfigError::UnknownSchedule {
                path: "sweep.schedule".to_owned(),
                value: v.show(),
            })?
        }
    };
    Ok(SweepSettings {
        max_rounds,
        candidates_per_round,
        parallel_evals,
        max_eval_seconds,
        max_trials,
        max_consecutive_failures,
        seed,
        algorithm,
        schedule,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithm_names_round_trip() {
        for a in AlgorithmName::ALL {
            assert_eq!(AlgorithmName::from_name(a.name()), Some(a));
            assert_eq!(
                serde_json::to_value(a).unwrap(),
                serde_json::json!(a.name())
            );
        }
        assert_eq!(AlgorithmName::from_name("DEFAULT"), None);
    }

    #[test]
    fn defaults_follow_the_spec() {
        let s = SweepSettings::default();
        assert_eq!(
            (s.max_rounds, s.parallel_evals, s.candidates_per_round),
            (20, 16, 16)
        );
        assert_eq!((s.max_eval_seconds, s.seed), (600.0, 42));
        assert_eq!(s.max_consecutive_failures, 10);
        assert_eq!(s.schedule, Schedule::Rounds);
        assert_eq!(s.trial_budget(), 20 * 16);
    }

    #[test]
    fn schedule_names_round_trip() {
        for s in Schedule::ALL {
            assert_eq!(Schedule::from_name(s.name()), Some(s));
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::json!(s.name())
            );
        }
        assert_eq!(Schedule::from_name("Async"), None);
    }
}
