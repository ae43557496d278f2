//! A result rebuilt from a journal without evaluating anything: `sweeper score` of a sweep
//! directory, `sweeper plot` of a running sweep, the fuzz target.

use super::{Entry, Ledger, RunError, RunResult, journal, replayed_source, space};
use std::collections::HashSet;
use std::path::Path;
use sweeper_goal::SweepConfig;

/// Rebuilds a result from a journal (a sweep still running, or killed): every finished
/// trial, the front or ranking of the feasible ones. The journal must belong to `config`
/// (budget keys aside).
pub fn result_from_journal(config: &SweepConfig, path: &Path) -> Result<RunResult, RunError> {
    replay_into_ledger(config, &journal::read(path, Some(config))?)
}

/// Re-scores the journal of a finished sweep under another goal and GPU budget (`config`
/// need not be the one that started it): every recorded report is scored again, nothing is
/// evaluated.
pub fn rescore_journal(config: &SweepConfig, path: &Path) -> Result<RunResult, RunError> {
    replay_into_ledger(config, &journal::read(path, None)?)
}

/// Replays journal text (no file) under `config`, unchecked: the fuzz target of the
/// journal reader.
#[doc(hidden)]
pub fn replay_journal_text(config: &SweepConfig, text: &str) -> Result<RunResult, RunError> {
    let complete = text.rfind('\n').map_or("", |i| &text[..=i]);
    let replay = journal::parse_text(Path::new("journal"), complete)?;
    replay_into_ledger(config, &replay)
}

pub(super) fn replay_into_ledger(
    config: &SweepConfig,
    replay: &journal::Replay,
) -> Result<RunResult, RunError> {
    let mut ledger = Ledger::new(config);
    // the ledger's order of the run that wrote the journal: trial order in rounds, the
    // order outcomes arrived in under `schedule: async`
    let order: Vec<u64> = if replay.asynchronous {
        let mut seen = HashSet::new();
        replay
            .events
            .iter()
            .filter_map(|e| match e {
                journal::Event::Outcome { trial, .. } => Some(*trial),
                journal::Event::Batch { .. } | journal::Event::Retry { .. } => None,
            })
            .filter(|t| seen.insert(*t))
            .collect()
    } else {
        replay.order.clone()
    };
    for id in &order {
        let rec = &replay.trials[id];
        let Some(source) = replayed_source(rec) else {
            continue;
        };
        let parameters = rec.parameters.clone().unwrap_or_default();
        let declared = space::declared_gpus(config, &parameters).ok().flatten();
        ledger.record(Entry::new(*id, parameters, declared, source))?;
    }
    ledger.into_result()
}
