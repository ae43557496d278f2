//! The run journal: JSON Lines, one line per suggestion and per outcome, flushed and synced
//! per line, so that a killed sweep can be resumed without re-evaluating what finished.
//!
//! Lines:
//! - `{"kind":"header","sweeper":VERSION,"fingerprint":HEX,"seed":N}` (first line)
//! - `{"kind":"suggest","trial":ID,"parameters":{...}}`
//! - `{"kind":"outcome","trial":ID,"status":"feasible"|...,"reason":..,"report":{..}}`

use super::{RunError, Status};
use crate::evaluator::RawReport;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// One line of the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Line {
    /// Identifies the run: a journal resumes only under the same config.
    Header {
        sweeper: String,
        fingerprint: String,
        seed: u64,
    },
    /// A trial the study proposed.
    Suggest {
        trial: u64,
        parameters: Map<String, Value>,
    },
    /// What a trial came to.
    Outcome {
        trial: u64,
        status: Status,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        report: Option<RawReport>,
    },
}

/// A recorded evaluation, reused on resume instead of evaluating again.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Recorded {
    pub(crate) parameters: Option<Map<String, Value>>,
    pub(crate) status: Status,
    pub(crate) reason: Option<String>,
    pub(crate) report: Option<RawReport>,
}

/// The append-only journal file.
#[derive(Debug)]
pub(crate) struct Journal {
    path: PathBuf,
    file: File,
}

/// A stable 64-bit FNV-1a hash, hex: the fingerprint of a config (not cryptographic; it only
/// tells one config from another).
pub(crate) fn fingerprint(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

impl Journal {
    /// Starts a new journal (truncating an old one) with its header line.
    pub(crate) fn create(path: &Path, header: &Line) -> Result<Journal, RunError> {
        let file = File::create(path).map_err(|e| RunError::io(path, &e))?;
        let mut journal = Journal {
            path: path.to_owned(),
            file,
        };
        journal.append(header)?;
        Ok(journal)
    }

    /// Reopens a journal for appending after it was read by [`read`].
    pub(crate) fn reopen(path: &Path) -> Result<Journal, RunError> {
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| RunError::io(path, &e))?;
        Ok(Journal {
            path: path.to_owned(),
            file,
        })
    }

    /// Appends one line, flushed and synced so that a kill never loses a finished outcome.
    pub(crate) fn append(&mut self, line: &Line) -> Result<(), RunError> {
        let mut text = serde_json::to_string(line).map_err(|e| RunError::Journal {
            path: self.path.clone(),
            detail: format!("cannot encode a journal line: {e}"),
        })?;
        text.push('\n');
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.flush())
            .and_then(|()| self.file.sync_data())
            .map_err(|e| RunError::io(&self.path, &e))
    }
}

/// Reads a journal: checks its header against the config's fingerprint and returns what
/// was recorded per trial. A torn last line (a kill mid-write) is ignored.
pub(crate) fn read(path: &Path, fingerprint: &str) -> Result<HashMap<u64, Recorded>, RunError> {
    let file = File::open(path).map_err(|e| RunError::io(path, &e))?;
    let lines: Vec<String> = BufReader::new(file)
        .lines()
        .collect::<Result<_, _>>()
        .map_err(|e| RunError::io(path, &e))?;
    let mut recorded: HashMap<u64, Recorded> = HashMap::new();
    let last = lines.len().saturating_sub(1);
    for (number, text) in lines.iter().enumerate() {
        if text.trim().is_empty() {
            continue;
        }
        let line: Line = match serde_json::from_str(text) {
            Ok(line) => line,
            Err(_) if number == last => break, // torn by a kill: the evaluation re-runs
            Err(e) => {
                return Err(RunError::Journal {
                    path: path.to_owned(),
                    detail: format!("line {}: not a journal line: {e}", number + 1),
                });
            }
        };
        match line {
            Line::Header {
                fingerprint: found, ..
            } => {
                if number != 0 {
                    return Err(RunError::Journal {
                        path: path.to_owned(),
                        detail: format!("line {}: a second header", number + 1),
                    });
                }
                if found != fingerprint {
                    return Err(RunError::JournalMismatch {
                        path: path.to_owned(),
                    });
                }
            }
            _ if number == 0 => {
                return Err(RunError::Journal {
                    path: path.to_owned(),
                    detail: "line 1: the journal has no header".into(),
                });
            }
            Line::Suggest { trial, parameters } => {
                recorded
                    .entry(trial)
                    .or_insert(Recorded {
                        parameters: None,
                        status: Status::Pending,
                        reason: None,
                        report: None,
                    })
                    .parameters = Some(parameters);
            }
            Line::Outcome {
                trial,
                status,
                reason,
                report,
            } => {
                let entry = recorded.entry(trial).or_insert(Recorded {
                    parameters: None,
                    status: Status::Pending,
                    reason: None,
                    report: None,
                });
                entry.status = status;
                entry.reason = reason;
                entry.report = report;
            }
        }
    }
    if lines.is_empty() {
        return Err(RunError::Journal {
            path: path.to_owned(),
            detail: "the journal is empty".into(),
        });
    }
    Ok(recorded)
}
