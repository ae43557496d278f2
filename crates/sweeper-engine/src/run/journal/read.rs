//! Reading a journal: every line checked as the sweep wrote it (one strictness for resume,
//! `score`, `plot` and the fuzz target), into the [`Replay`] the engine replays.

use super::super::{RunError, Status};
use super::{
    BOM, Event, Line, MAX_BATCH, MAX_TRIAL, Recorded, Replay, Retry, differing_keys, fingerprint,
    meaning,
};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;
use sweeper_goal::{Schedule, SweepConfig};
pub(super) fn header(config: &SweepConfig, title: Option<&str>) -> Line {
    let meaning = meaning(config);
    Line::Header {
        sweeper: env!("CARGO_PKG_VERSION").to_owned(),
        fingerprint: fingerprint(&meaning.to_string()),
        seed: config.sweep.seed,
        config: Some(meaning),
        title: title.map(str::to_owned),
    }
}

/// Reads a journal without locking or changing it (a sweep may be running): every complete
/// line; a torn last line is ignored. With `config`, the header is checked against it.
pub(crate) fn read(path: &Path, config: Option<&SweepConfig>) -> Result<Replay, RunError> {
    let bytes = std::fs::read(path).map_err(|e| RunError::io(path, e))?;
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let text = std::str::from_utf8(&bytes[..complete]).map_err(|e| RunError::Journal {
        path: path.to_owned(),
        line: None,
        detail: format!("not UTF-8 text: {e}"),
    })?;
    if text.trim().is_empty() {
        return Err(RunError::Journal {
            path: path.to_owned(),
            line: None,
            detail: "the journal is empty".into(),
        });
    }
    parse(path, text, config).map(|(replay, _)| replay)
}

/// The complete lines of journal text, unchecked against any config.
pub(crate) fn parse_text(path: &Path, text: &str) -> Result<Replay, RunError> {
    parse(path, text, None).map(|(replay, _)| replay)
}

/// Parses the complete lines of a journal: what it records, and its title.
pub(super) fn parse(
    path: &Path,
    text: &str,
    config: Option<&SweepConfig>,
) -> Result<(Replay, Option<String>), RunError> {
    let mut replay = Replay::default();
    let mut title = None;
    let bad = |number: usize, detail: String| RunError::Journal {
        path: path.to_owned(),
        line: Some(number + 1),
        detail,
    };
    // trials with an outcome line so far, and how many suggestions the latest call made
    let mut finished: HashSet<u64> = HashSet::new();
    let mut in_call: usize = 0;
    let mut seen_header = false;
    // a journal that an editor or another tool saved with a byte-order mark reads as the
    // same journal (the mark is no part of its first line)
    let text = text.strip_prefix(BOM).unwrap_or(text);
    for (number, text) in text.lines().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let line: Line = serde_json::from_str(text)
            .map_err(|e| bad(number, format!("not a journal line: {e}")))?;
        match line {
            Line::Header {
                fingerprint: found,
                config: recorded,
                title: recorded_title,
                ..
            } => {
                if number != 0 {
                    return Err(bad(number, "a second header".into()));
                }
                seen_header = true;
                title = recorded_title;
                replay.asynchronous = recorded.as_ref().is_some_and(|c| {
                    c.pointer("/sweep/schedule").and_then(Value::as_str)
                        == Some(Schedule::Async.name())
                });
                if let Some(config) = config {
                    check_header(path, config, &found, recorded.as_ref())?;
                }
            }
            _ if number == 0 => return Err(bad(0, "the journal has no header".into())),
            Line::Suggest {
                trial,
                batch,
                count,
                parameters,
            } => {
                if trial > MAX_TRIAL {
                    return Err(bad(
                        number,
                        format!(
                            "trial {trial} is beyond the largest trial id, {MAX_TRIAL} (2^53 - 1, the largest integer every JSON reader holds exactly); sweeper numbers trials from 0, so this line was not written by a sweep: remove it"
                        ),
                    ));
                }
                let entry = replay.trials.entry(trial).or_insert_with(Recorded::pending);
                if entry.parameters.is_some() {
                    return Err(bad(
                        number,
                        format!(
                            "a second suggestion of trial {trial}; a sweep suggests a trial once: remove one of its lines"
                        ),
                    ));
                }
                replay.order.push(trial);
                entry.parameters = Some(parameters);
                if let (Some(batch), Some(count)) = (batch, count) {
                    let (Ok(batch), Ok(count)) = (usize::try_from(batch), usize::try_from(count))
                    else {
                        return Err(bad(number, "batch or count out of range".into()));
                    };
                    // no round asks for more (11 × candidates_per_round at most, and the
                    // study would be asked for this many on resume)
                    if count > MAX_BATCH {
                        return Err(bad(
                            number,
                            format!("a batch of {count} trials is more than {MAX_BATCH}"),
                        ));
                    }
                    if batch == replay.batches.len() {
                        replay.batches.push(count);
                        replay.members.push(Vec::new());
                        replay.events.push(Event::Batch { count });
                        in_call = 0;
                    } else if batch > replay.batches.len() {
                        return Err(bad(
                            number,
                            format!("batch {batch} follows batch {}", replay.batches.len()),
                        ));
                    } else if batch + 1 < replay.batches.len() {
                        // the suggestion lines of a call are written before the next call
                        return Err(bad(
                            number,
                            format!(
                                "a suggestion of batch {batch} after batch {} began; the suggestions of a batch are written together",
                                replay.batches.len() - 1
                            ),
                        ));
                    } else if count != replay.batches[batch] {
                        return Err(bad(
                            number,
                            format!(
                                "batch {batch} asked for {} trials, not {count}",
                                replay.batches[batch]
                            ),
                        ));
                    }
                    in_call += 1;
                    if in_call > count {
                        return Err(bad(
                            number,
                            format!(
                                "batch {batch} asked for {count} trials and this is suggestion {in_call}"
                            ),
                        ));
                    }
                    replay.members[batch].push((trial, number + 1));
                }
            }
            Line::Started { trial, handle } => {
                let Some(entry) = replay.trials.get_mut(&trial) else {
                    return Err(bad(
                        number,
                        format!(
                            "a started line of trial {trial}, which no suggestion before it proposed"
                        ),
                    ));
                };
                entry.handle = Some(handle);
            }
            Line::Outcome {
                trial,
                status,
                reason,
                report,
            } => {
                // one strictness for every reader (resume, score, plot): the checks of
                // an async resume's replay, for any schedule
                let Some(entry) = replay.trials.get_mut(&trial) else {
                    return Err(bad(number, unsuggested_outcome(trial)));
                };
                if !finished.insert(trial) {
                    return Err(bad(number, second_outcome(trial)));
                }
                entry.status = status;
                entry.reason = reason;
                entry.report = report;
                replay.events.push(Event::Outcome {
                    trial,
                    line: number + 1,
                    attempt: replay.superseded.get(&trial).map_or(0, Vec::len),
                });
            }
            Line::Retry { trials } => {
                for &trial in &trials {
                    let Some(entry) = replay
                        .trials
                        .get_mut(&trial)
                        .filter(|r| r.status == Status::Failed)
                    else {
                        return Err(bad(
                            number,
                            format!(
                                "a retry of trial {trial}, whose last outcome is not a failure"
                            ),
                        ));
                    };
                    let earlier = std::mem::replace(
                        entry,
                        Recorded {
                            parameters: entry.parameters.clone(),
                            ..Recorded::pending()
                        },
                    );
                    replay.superseded.entry(trial).or_default().push(earlier);
                    // its next outcome is the retry's, not a second one
                    finished.remove(&trial);
                }
                replay.events.push(Event::Retry {
                    index: replay.retries.len(),
                });
                replay.retries.push(Retry {
                    after_batches: replay.batches.len(),
                    trials,
                });
            }
        }
    }
    if !seen_header {
        return Err(bad(0, "the journal has no header".into()));
    }
    Ok((replay, title))
}

/// Checks a call of the proposer replayed on resume against the journal: every trial the
/// journal records for the `call`-th call must be one the proposer gave again (`proposed`),
/// else the journal holds a trial that the replay would drop without a word.
pub(crate) fn check_call(
    path: &Path,
    replay: &Replay,
    call: usize,
    proposed: &[u64],
) -> Result<(), RunError> {
    let Some(members) = replay.members.get(call) else {
        return Ok(());
    };
    match members.iter().find(|(trial, _)| !proposed.contains(trial)) {
        None => Ok(()),
        Some(&(trial, line)) => Err(RunError::Journal {
            path: path.to_owned(),
            line: Some(line),
            detail: format!(
                "trial {trial} of batch {call} is not one the study proposes again (it proposes {}); the journal does not belong to this sweeper version or config, or the line was added by hand: remove it",
                list(proposed)
            ),
        }),
    }
}

/// Checks that the journal records no call after the `call`-th, in which the proposer ran
/// out of trials to propose (a rounds sweep stops there, so a later call's trials would be
/// dropped without a word).
pub(crate) fn check_last_call(path: &Path, replay: &Replay, call: usize) -> Result<(), RunError> {
    match replay.members.get(call + 1).and_then(|m| m.first()) {
        None => Ok(()),
        Some(&(trial, line)) => Err(RunError::Journal {
            path: path.to_owned(),
            line: Some(line),
            detail: format!(
                "trial {trial} of batch {} follows batch {call}, after which the study has nothing more to propose; the journal does not belong to this sweeper version or config, or the line was added by hand: remove it",
                call + 1
            ),
        }),
    }
}

/// Trial ids as a short list (`1, 2, 3`, cut after eight).
pub(super) fn list(ids: &[u64]) -> String {
    let shown: Vec<String> = ids.iter().take(8).map(u64::to_string).collect();
    let more = if ids.len() > 8 { ", ..." } else { "" };
    if shown.is_empty() {
        "none".to_owned()
    } else {
        format!("{}{more}", shown.join(", "))
    }
}

/// Why an outcome line of `trial` that follows no suggestion of it is refused.
pub(crate) fn unsuggested_outcome(trial: u64) -> String {
    format!(
        "an outcome of trial {trial}, which no suggestion before it proposed; a sweep writes a trial's outcome after its suggestion: remove this line"
    )
}

/// Why a second outcome line of `trial` is refused.
pub(crate) fn second_outcome(trial: u64) -> String {
    format!(
        "a second outcome of trial {trial}; a sweep records one outcome per trial: keep the line the sweep wrote and remove the other"
    )
}

fn check_header(
    path: &Path,
    config: &SweepConfig,
    found: &str,
    recorded: Option<&Value>,
) -> Result<(), RunError> {
    let now = meaning(config);
    let mismatch = |keys: Vec<String>| RunError::JournalMismatch {
        path: path.to_owned(),
        keys,
    };
    match recorded {
        Some(recorded) => {
            let mut keys = Vec::new();
            differing_keys(recorded, &now, "", &mut keys);
            if keys.is_empty() {
                Ok(())
            } else {
                Err(mismatch(keys))
            }
        }
        None if found == fingerprint(&now.to_string()) => Ok(()),
        None => Err(mismatch(Vec::new())),
    }
}
