//! The run journal: JSON Lines, one line per suggestion and per outcome, flushed and synced
//! per line, so that a killed sweep resumes without evaluating again what finished.
//!
//! Lines:
//! - `{"kind":"header","sweeper":VERSION,"fingerprint":HEX,"seed":N,"config":{...}}` (first
//!   line; `config` is what a trial means: the config without its budget keys)
//! - `{"kind":"suggest","trial":ID,"batch":K,"count":N,"parameters":{...}}`: a trial of the
//!   `K`-th call of the proposer, which asked for `N` trials
//! - `{"kind":"started","trial":ID,"handle":"slurm:1234"}`: the evaluation of a trial runs
//!   outside sweeper as this handle (a batch job); `--resume` gives the handle back to the
//!   evaluator, which re-attaches instead of starting the trial again
//! - `{"kind":"outcome","trial":ID,"status":"feasible"|...,"reason":..,"report":{..}}`
//! - `{"kind":"retry","trials":[ID,...]}`: written by `--resume --retry-failed`: these
//!   trials, whose last outcome was a failure, are evaluated again; a later outcome line of
//!   one of them is its new outcome. A resume replays the failure where it was recorded and
//!   the retry where this line is, so the proposer reaches the same state
//!
//! Under `sweep.schedule: async` (the header's config says so) the lines are also the
//! order of the calls: the suggestion lines of a call are written before anything else
//! happens, and an outcome line just before its trial is observed, so resume replays the
//! lines in file order and reaches the study state of the run that wrote them. Under
//! `rounds` an outcome is written as it arrives and observed at the end of its round, in
//! trial order, which resume rebuilds from the batches.
//!
//! Numbers that may be infinite are written as `"inf"` / `"-inf"`
//! ([`sweeper_score::json_f64`]); NaN never enters (reports holding one are failures).
//!
//! Safety rules, each tested:
//! - [`FileJournal::create`] never replaces a journal: it fails when the file exists.
//! - A journal is locked (an advisory exclusive lock of the OS) for as long as its
//!   [`FileJournal`] lives, so two sweeps cannot append to one journal.
//! - A torn last line (a kill or a full disk mid-write) is cut off when the journal is
//!   reopened; a failed append truncates what it wrote, so a full disk leaves the journal as
//!   it was before the line.
//! - Every reader (a resume, `score`, `plot`) parses a journal with one function and one
//!   strictness: what a sweep never writes is refused with its line (a second outcome or
//!   suggestion of a trial, a line of a trial not suggested before it, a trial id past
//!   2^53 - 1, a batch out of order or beyond its count). A leading byte-order mark is
//!   no part of the header.

use super::{RunError, Status};
use crate::evaluator::RawReport;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use sweeper_goal::{Schedule, SweepConfig};

/// The keys of `sweep:` that only bound the budget of a sweep: a journal resumes under a
/// config where they differ (that extends or shortens the sweep), never where anything else
/// differs.
pub const BUDGET_KEYS: [&str; 6] = [
    "max_rounds",
    "max_trials",
    "candidates_per_round",
    "parallel_evals",
    "max_eval_seconds",
    "max_consecutive_failures",
];

/// The largest batch a journal may record.
const MAX_BATCH: usize = 1 << 24;

/// The largest trial id a journal may record: 2^53 - 1, the largest integer that every
/// JSON reader holds exactly (readers that keep numbers as doubles round anything larger,
/// so `result.json` and `score --format json` would name another trial). A study numbers
/// its trials from 0, one by one, so no sweep comes near it.
pub(crate) const MAX_TRIAL: u64 = (1 << 53) - 1;

/// The byte-order mark some editors and tools put at the start of a UTF-8 file.
const BOM: char = '\u{feff}';

/// One line of the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Line {
    /// Identifies the run: a journal resumes only under a config that means the same.
    Header {
        sweeper: String,
        fingerprint: String,
        seed: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        config: Option<Value>,
        /// What the sweep is called (its plot title), so that a resume keeps it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    /// A trial the proposer suggested, in the `batch`-th call, which asked for `count`.
    Suggest {
        trial: u64,
        #[serde(default)]
        batch: Option<u64>,
        #[serde(default)]
        count: Option<u64>,
        parameters: Map<String, Value>,
    },
    /// The evaluation of a trial runs outside sweeper as `handle` (a batch job's id).
    Started { trial: u64, handle: String },
    /// What a trial came to.
    Outcome {
        trial: u64,
        status: Status,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        report: Option<RawReport>,
    },
    /// These failed trials are evaluated again (`--retry-failed`), from here on.
    Retry { trials: Vec<u64> },
}

/// A recorded trial, reused on resume instead of evaluating again.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Recorded {
    pub(crate) parameters: Option<Map<String, Value>>,
    pub(crate) status: Status,
    pub(crate) reason: Option<String>,
    pub(crate) report: Option<RawReport>,
    /// The last handle its evaluation reported (`Line::Started`).
    pub(crate) handle: Option<String>,
}

impl Recorded {
    fn pending() -> Recorded {
        Recorded {
            parameters: None,
            status: Status::Pending,
            reason: None,
            report: None,
            handle: None,
        }
    }
}

/// One call of the proposer, as the lines of a journal record it, in line order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Event {
    /// The first suggestion line of a call of the proposer that asked for `count` trials.
    Batch { count: usize },
    /// An outcome line (`line` is 1-based); `attempt` counts the retries of the trial
    /// before it (0: its first outcome).
    Outcome {
        trial: u64,
        line: usize,
        attempt: usize,
    },
    /// A retry line: `Replay::retries[index]`.
    Retry { index: usize },
}

/// A retry line: the trials it names, and how many calls of the proposer came before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Retry {
    pub(crate) after_batches: usize,
    pub(crate) trials: Vec<u64>,
}

/// What a journal holds: every trial, the order of suggestions and the size of each call.
#[derive(Debug, Clone, Default)]
pub(crate) struct Replay {
    /// Per trial id.
    pub(crate) trials: HashMap<u64, Recorded>,
    /// Trial ids in the order they were suggested (every trial of a journal has a
    /// suggestion line before any other line of it).
    pub(crate) order: Vec<u64>,
    /// The count each call of the proposer asked for, in call order.
    pub(crate) batches: Vec<usize>,
    /// The trials each call's suggestion lines name, with their 1-based line, in call order.
    pub(crate) members: Vec<Vec<(u64, usize)>>,
    /// The calls and outcomes in line order: under `schedule: async` the order in which the
    /// proposer was called and told (each line is written before the next call).
    pub(crate) events: Vec<Event>,
    /// Whether the header says `schedule: async`.
    pub(crate) asynchronous: bool,
    /// The retry lines, in line order.
    pub(crate) retries: Vec<Retry>,
    /// Per retried trial, the outcomes a retry superseded, oldest first (`trials` holds the
    /// latest).
    pub(crate) superseded: HashMap<u64, Vec<Recorded>>,
}

impl Replay {
    /// What the journal recorded for a trial's `attempt`-th evaluation (0: the first; one
    /// more per retry).
    pub(crate) fn attempt(&self, trial: u64, attempt: usize) -> Option<&Recorded> {
        let earlier = self.superseded.get(&trial).map_or(&[][..], Vec::as_slice);
        match attempt.cmp(&earlier.len()) {
            std::cmp::Ordering::Less => earlier.get(attempt),
            std::cmp::Ordering::Equal => self.trials.get(&trial),
            // a retry this journal does not hold yet: nothing recorded
            std::cmp::Ordering::Greater => None,
        }
    }

    /// Trials with an outcome.
    pub(crate) fn finished(&self) -> usize {
        self.trials
            .values()
            .filter(|r| r.status != Status::Pending)
            .count()
    }
}

/// The append-only journal of one sweep, locked while this value lives.
///
/// ```no_run
/// use sweeper_engine::FileJournal;
///
/// let config = sweeper_goal::from_path("examples/quickstart.yaml".as_ref())?;
/// std::fs::create_dir_all("out")?;
/// // a new sweep: fails if out/journal.jsonl exists
/// let journal = FileJournal::create("out/journal.jsonl", &config)?;
/// drop(journal);
/// // a resumed one: checks that the config means the same trials
/// let journal = FileJournal::open("out/journal.jsonl", &config)?;
/// println!("{} trials already finished", journal.finished_trials());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct FileJournal {
    path: PathBuf,
    file: File,
    /// Bytes of complete lines: what a failed append truncates back to.
    len: u64,
    replay: Replay,
    torn: u64,
    title: Option<String>,
}

/// A stable 64-bit FNV-1a hash, hex: the fingerprint of a config (not cryptographic; it only
/// tells one config from another).
fn fingerprint(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// What a trial means: the config as JSON without the budget keys of `sweep:`, and with only
/// the presence of `evaluator.slurm`, not its keys: where the jobs run (a partition, a time
/// limit) does not change what they compute, so a sweep resumes on another partition or
/// with a longer limit; but a sweep of Slurm jobs does not resume as local processes, which
/// would run again what its jobs are still running.
///
/// `sweep.schedule` is part of the meaning (a journal replays in the order its schedule
/// wrote it), but only when it is `async`: the journals of sweepers older than the key
/// carry none, and must go on resuming under the default `rounds`.
pub(crate) fn meaning(config: &SweepConfig) -> Value {
    let mut v = config.to_json_value();
    if let Some(Value::Object(sweep)) = v.get_mut("sweep") {
        for key in BUDGET_KEYS {
            sweep.remove(key);
        }
        if config.sweep.schedule == Schedule::Rounds {
            sweep.remove("schedule");
        }
    }
    if let Some(Value::Object(evaluator)) = v.get_mut("evaluator")
        && let Some(slurm) = evaluator.get_mut("slurm")
    {
        *slurm = Value::Bool(true);
    }
    v
}

/// The key paths at which two JSON values differ (objects compared key by key; anything
/// else as a whole), sorted.
fn differing_keys(a: &Value, b: &Value, prefix: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => differing_keys(p, q, &path, out),
                    _ => out.push(path),
                }
            }
        }
        _ if a != b => out.push(if prefix.is_empty() {
            "(the whole config)".to_owned()
        } else {
            prefix.to_owned()
        }),
        _ => {}
    }
}

/// How long opening a journal waits for another process's lock to go: a sweep that was
/// just interrupted releases it when its last process is gone, which under load can take
/// a moment after its exit code is seen; a sweep that is still running holds it longer.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Locks `file` for this sweep, waiting up to [`LOCK_WAIT`] for another holder to let go.
fn lock(file: &File, path: &Path) -> Result<(), RunError> {
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(e) => return Err(lock_error(path, e)),
        }
    }
}

fn lock_error(path: &Path, e: std::fs::TryLockError) -> RunError {
    match e {
        std::fs::TryLockError::WouldBlock => RunError::Locked {
            path: path.to_owned(),
        },
        std::fs::TryLockError::Error(source) => RunError::io(path, source),
    }
}

impl FileJournal {
    /// Starts the journal of a new sweep at `path` (its directory must exist), with its
    /// header, and locks it. Fails with [`RunError::JournalExists`] when the file exists:
    /// a journal is never replaced.
    pub fn create(path: impl AsRef<Path>, config: &SweepConfig) -> Result<FileJournal, RunError> {
        FileJournal::create_titled(path, config, None)
    }

    /// [`create`](Self::create), recording a title (the plot title of the sweep) that
    /// [`title`](Self::title) gives back after [`open`](Self::open).
    pub fn create_titled(
        path: impl AsRef<Path>,
        config: &SweepConfig,
        title: Option<&str>,
    ) -> Result<FileJournal, RunError> {
        let path = path.as_ref();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => RunError::JournalExists {
                    path: path.to_owned(),
                },
                _ => RunError::io(path, e),
            })?;
        lock(&file, path)?;
        let mut journal = FileJournal {
            path: path.to_owned(),
            file,
            len: 0,
            replay: Replay::default(),
            torn: 0,
            title: title.map(str::to_owned),
        };
        let write = journal.append(&header(config, title));
        if let Err(e) = write {
            // a journal without its header cannot be resumed: leave nothing behind
            drop(journal);
            let _ = std::fs::remove_file(path);
            return Err(e);
        }
        Ok(journal)
    }

    /// Reopens the journal of a sweep to resume it, and locks it: reads every line, cuts
    /// off a torn last line, and checks that `config` means the same trials as the config
    /// that started it (budget keys may differ, see [`BUDGET_KEYS`]).
    ///
    /// Errors: [`RunError::Locked`] while another sweep holds it,
    /// [`RunError::JournalMismatch`] naming the keys that differ, [`RunError::Journal`] for
    /// a line that is not a journal line.
    pub fn open(path: impl AsRef<Path>, config: &SweepConfig) -> Result<FileJournal, RunError> {
        let path = path.as_ref();
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| RunError::io(path, e))?;
        lock(&file, path)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| RunError::io(path, e))?;
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let torn = (bytes.len() - complete) as u64;
        let text = std::str::from_utf8(&bytes[..complete]).map_err(|e| RunError::Journal {
            path: path.to_owned(),
            line: None,
            detail: format!("not UTF-8 text: {e}"),
        })?;
        let mut journal = FileJournal {
            path: path.to_owned(),
            file,
            len: complete as u64,
            replay: Replay::default(),
            torn,
            title: None,
        };
        if torn > 0 {
            // a kill or a full disk mid-line: the line's trial is simply not finished
            journal
                .file
                .set_len(complete as u64)
                .and_then(|()| journal.file.sync_data())
                .map_err(|e| RunError::io(path, e))?;
        }
        if text.trim().is_empty() {
            // killed while writing the header: nothing was recorded, start the journal again
            journal.append(&header(config, None))?;
            return Ok(journal);
        }
        let (replay, title) = parse(path, text, Some(config))?;
        journal.replay = replay;
        journal.title = title;
        journal
            .file
            .seek(SeekFrom::End(0))
            .map_err(|e| RunError::io(path, e))?;
        Ok(journal)
    }

    /// The title recorded by [`create_titled`](Self::create_titled), if any.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Trials the journal records as finished (on open).
    pub fn finished_trials(&self) -> usize {
        self.replay.finished()
    }

    /// Bytes of a torn last line cut off on open (0 when the journal ended cleanly).
    pub fn torn_bytes(&self) -> u64 {
        self.torn
    }

    pub(crate) fn replay(&self) -> &Replay {
        &self.replay
    }

    /// Appends one line, flushed and synced so that a kill never loses a finished outcome.
    /// A failed write (a full disk) is truncated away, so the journal stays whole.
    pub(crate) fn append(&mut self, line: &Line) -> Result<(), RunError> {
        let mut text = serde_json::to_string(line).map_err(|e| RunError::Journal {
            path: self.path.clone(),
            line: None,
            detail: format!("cannot encode a journal line: {e}"),
        })?;
        text.push('\n');
        let written = self
            .file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.flush())
            .and_then(|()| self.file.sync_data());
        match written {
            Ok(()) => {
                self.len += text.len() as u64;
                Ok(())
            }
            Err(e) => {
                let _ = self.file.set_len(self.len);
                let _ = self.file.seek(SeekFrom::Start(self.len));
                Err(RunError::io(&self.path, e))
            }
        }
    }
}

mod read;
#[cfg(test)]
mod tests;

pub(crate) use read::{
    check_call, check_last_call, parse_text, read, second_outcome, unsuggested_outcome,
};
use read::{header, parse};
