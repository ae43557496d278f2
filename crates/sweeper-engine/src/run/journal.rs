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
use std::collections::{HashMap, HashSet};
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

fn header(config: &SweepConfig, title: Option<&str>) -> Line {
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
fn parse(
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
fn list(ids: &[u64]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn config(extra: &str) -> SweepConfig {
        sweeper_goal::parse(&format!(
            "search_space: {{parameters: {{tp: {{values: [1, 2]}}}}}}\nsweep: {{parallel_evals: 2{extra}}}"
        ))
        .unwrap()
    }

    #[test]
    fn budget_keys_may_change_and_other_keys_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        drop(FileJournal::create(&path, &config("")).unwrap());
        FileJournal::open(&path, &config(", max_rounds: 90, max_trials: 7")).unwrap();
        let err = FileJournal::open(&path, &config(", seed: 2, algorithm: random")).unwrap_err();
        match &err {
            RunError::JournalMismatch { keys, .. } => {
                assert_eq!(keys, &["sweep.algorithm", "sweep.seed"]);
            }
            other => panic!("{other}"),
        }
        assert!(
            err.to_string().contains("sweep.algorithm, sweep.seed"),
            "{err}"
        );
    }

    #[test]
    fn a_journal_of_a_sweeper_without_schedule_resumes_under_rounds_only() {
        // the header as sweepers before `sweep.schedule` wrote it: no such key anywhere
        let rounds = config("");
        let mut old = rounds.to_json_value();
        let sweep = old["sweep"].as_object_mut().unwrap();
        for key in BUDGET_KEYS.iter().copied().chain(["schedule"]) {
            sweep.remove(key);
        }
        let header = serde_json::json!({
            "kind": "header", "sweeper": "0.1.0",
            "fingerprint": fingerprint(&old.to_string()), "seed": 42, "config": old,
        });
        let suggest = r#"{"kind":"suggest","trial":0,"batch":0,"count":2,"parameters":{"tp":1}}"#;
        let outcome = r#"{"kind":"outcome","trial":0,"status":"failed","reason":"x"}"#;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        std::fs::write(&path, format!("{header}\n{suggest}\n{outcome}\n")).unwrap();
        let j = FileJournal::open(&path, &rounds).unwrap();
        assert_eq!(j.finished_trials(), 1);
        assert_eq!(j.replay().batches, [2]);
        drop(j);
        let explicit = config(", schedule: rounds");
        drop(FileJournal::open(&path, &explicit).unwrap());
        // the same trials under another schedule mean another replay order: refused
        let err = FileJournal::open(&path, &config(", schedule: async")).unwrap_err();
        match &err {
            RunError::JournalMismatch { keys, .. } => assert_eq!(keys, &["sweep.schedule"]),
            other => panic!("{other}"),
        }
        // and the header of an async journal names its schedule
        let path = dir.path().join("a.jsonl");
        drop(FileJournal::create(&path, &config(", schedule: async")).unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(r#""schedule":"async""#), "{text}");
        let err = FileJournal::open(&path, &rounds).unwrap_err();
        assert!(err.to_string().contains("sweep.schedule"), "{err}");
    }

    #[test]
    fn create_never_replaces_and_a_second_open_is_locked_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let first = FileJournal::create(&path, &config("")).unwrap();
        let err = FileJournal::create(&path, &config("")).unwrap_err();
        assert!(matches!(err, RunError::JournalExists { .. }), "{err}");
        let err = FileJournal::open(&path, &config("")).unwrap_err();
        assert!(matches!(err, RunError::Locked { .. }), "{err}");
        drop(first);
        FileJournal::open(&path, &config("")).unwrap();
    }

    /// Appends the suggestion line of `trial` (a trial's other lines follow it).
    fn suggest(j: &mut FileJournal, trial: u64) {
        j.append(&Line::Suggest {
            trial,
            batch: None,
            count: None,
            parameters: Map::from_iter([("tp".to_owned(), Value::from(1))]),
        })
        .unwrap();
    }

    /// A journal of two batches (trials 0, 1 and 2) with outcomes, as a sweep writes it,
    /// then `extra` lines.
    fn journal_text(extra: &[&str]) -> String {
        let meaning = meaning(&config(""));
        let header = serde_json::to_string(&header(&config(""), None)).unwrap();
        assert!(header.contains(&meaning.to_string()));
        let mut lines = vec![
            header,
            r#"{"kind":"suggest","trial":0,"batch":0,"count":2,"parameters":{"tp":1}}"#.into(),
            r#"{"kind":"suggest","trial":1,"batch":0,"count":2,"parameters":{"tp":2}}"#.into(),
            r#"{"kind":"outcome","trial":0,"status":"failed","reason":"x"}"#.into(),
            r#"{"kind":"outcome","trial":1,"status":"feasible","report":{"output_throughput_tok_s":5}}"#.into(),
            r#"{"kind":"suggest","trial":2,"batch":1,"count":1,"parameters":{"tp":1}}"#.into(),
            r#"{"kind":"started","trial":2,"handle":"slurm:4"}"#.into(),
        ];
        lines.extend(extra.iter().map(|l| (*l).to_owned()));
        lines.join("\n") + "\n"
    }

    /// What reading `text` as a journal gives: by `score`/`plot` ([`read`]) and by a resume
    /// ([`FileJournal::open`]), which must agree, error for error.
    fn read_both(text: &str) -> Result<Replay, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        std::fs::write(&path, text).unwrap();
        let read = read(&path, None).map_err(|e| e.to_string());
        let opened = FileJournal::open(&path, &config(""))
            .map(|j| j.replay().clone())
            .map_err(|e| e.to_string());
        match (&read, &opened) {
            (Ok(a), Ok(b)) => assert_eq!(a.trials, b.trials),
            (Err(a), Err(b)) => assert_eq!(a, b),
            _ => panic!("score reads {read:?}, resume {opened:?}"),
        }
        read
    }

    #[test]
    fn every_reader_refuses_what_a_sweep_never_writes() {
        let fine = read_both(&journal_text(&[])).unwrap();
        assert_eq!(fine.order, [0, 1, 2]);
        assert_eq!(fine.members, [vec![(0, 2), (1, 3)], vec![(2, 6)]]);
        let refused = [
            // a second, conflicting outcome (the later line used to win)
            (
                r#"{"kind":"outcome","trial":1,"status":"feasible","report":{"output_throughput_tok_s":1e12}}"#,
                "line 8: a second outcome of trial 1; a sweep records one outcome per trial: keep the line the sweep wrote and remove the other",
            ),
            // an outcome of a trial never suggested (it used to become a row with no config)
            (
                r#"{"kind":"outcome","trial":9999,"status":"failed","reason":"x"}"#,
                "line 8: an outcome of trial 9999, which no suggestion before it proposed; a sweep writes a trial's outcome after its suggestion: remove this line",
            ),
            (
                r#"{"kind":"started","trial":9999,"handle":"slurm:5"}"#,
                "line 8: a started line of trial 9999, which no suggestion before it proposed",
            ),
            (
                r#"{"kind":"suggest","trial":2,"batch":1,"count":1,"parameters":{"tp":2}}"#,
                "line 8: a second suggestion of trial 2; a sweep suggests a trial once",
            ),
            // the largest id: it used to be dropped without a word on resume
            (
                r#"{"kind":"suggest","trial":18446744073709551615,"parameters":{"tp":2}}"#,
                "line 8: trial 18446744073709551615 is beyond the largest trial id, 9007199254740991",
            ),
            (
                r#"{"kind":"suggest","trial":9007199254740992,"batch":2,"count":1,"parameters":{"tp":2}}"#,
                "line 8: trial 9007199254740992 is beyond the largest trial id",
            ),
            (
                r#"{"kind":"suggest","trial":3,"batch":0,"count":2,"parameters":{"tp":2}}"#,
                "line 8: a suggestion of batch 0 after batch 1 began",
            ),
            (
                r#"{"kind":"suggest","trial":3,"batch":1,"count":1,"parameters":{"tp":2}}"#,
                "line 8: batch 1 asked for 1 trials and this is suggestion 2",
            ),
            (
                r#"{"kind":"suggest","trial":3,"batch":1,"count":2,"parameters":{"tp":2}}"#,
                "line 8: batch 1 asked for 1 trials, not 2",
            ),
        ];
        for (line, why) in refused {
            let err = read_both(&journal_text(&[line])).unwrap_err();
            assert!(err.contains(why), "{line}: {err}");
        }
        // the largest id that is not refused
        let top = r#"{"kind":"suggest","trial":9007199254740991,"batch":2,"count":1,"parameters":{"tp":2}}"#;
        let replay = read_both(&journal_text(&[top])).unwrap();
        assert_eq!(replay.order, [0, 1, 2, MAX_TRIAL]);
    }

    #[test]
    fn a_byte_order_mark_is_no_part_of_the_header() {
        let text = journal_text(&[]);
        let marked = format!("\u{feff}{text}");
        let replay = read_both(&marked).unwrap();
        assert_eq!(replay.order, [0, 1, 2]);
        assert_eq!(replay.finished(), 2);
        // a resume appends after it, and the journal reads the same again
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        std::fs::write(&path, &marked).unwrap();
        let mut j = FileJournal::open(&path, &config("")).unwrap();
        j.append(&Line::Outcome {
            trial: 2,
            status: Status::Failed,
            reason: Some("y".into()),
            report: None,
        })
        .unwrap();
        drop(j);
        assert_eq!(read(&path, None).unwrap().finished(), 3);
        // a mark and nothing else is a journal with no header
        let err = read_both("\u{feff}\n").unwrap_err();
        assert!(err.contains("line 1: the journal has no header"), "{err}");
    }

    #[test]
    fn a_resume_refuses_a_journaled_trial_the_study_does_not_propose_again() {
        let replay = read_both(&journal_text(&[])).unwrap();
        let path = Path::new("j.jsonl");
        check_call(path, &replay, 0, &[0, 1]).unwrap();
        check_call(path, &replay, 5, &[7]).unwrap();
        let err = check_call(path, &replay, 1, &[3]).unwrap_err().to_string();
        assert!(
            err.contains(
                "line 6: trial 2 of batch 1 is not one the study proposes again (it proposes 3)"
            ),
            "{err}"
        );
        check_last_call(path, &replay, 1).unwrap();
        let err = check_last_call(path, &replay, 0).unwrap_err().to_string();
        assert!(
            err.contains("line 6: trial 2 of batch 1 follows batch 0, after which the study has nothing more to propose"),
            "{err}"
        );
    }

    #[test]
    fn a_torn_last_line_is_cut_off_on_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let mut j = FileJournal::create(&path, &config("")).unwrap();
        suggest(&mut j, 0);
        j.append(&Line::Outcome {
            trial: 0,
            status: Status::Failed,
            reason: Some("x".into()),
            report: None,
        })
        .unwrap();
        drop(j);
        let whole = std::fs::read_to_string(&path).unwrap();
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(br#"{"kind":"outcome","tri"#).unwrap();
        drop(f);
        let j = FileJournal::open(&path, &config("")).unwrap();
        assert_eq!(j.torn_bytes(), 22);
        assert_eq!(j.finished_trials(), 1);
        drop(j);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), whole);
        // a complete line that is not a journal line is an error naming the line
        std::fs::write(&path, format!("{whole}garbage\n")).unwrap();
        let err = FileJournal::open(&path, &config("")).unwrap_err();
        assert!(err.to_string().contains("line 4"), "{err}");
    }

    #[test]
    fn a_retry_keeps_each_attempt_and_is_refused_for_a_trial_that_did_not_fail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let mut j = FileJournal::create(&path, &config("")).unwrap();
        let outcome = |trial, status| Line::Outcome {
            trial,
            status,
            reason: Some("x".into()),
            report: None,
        };
        for trial in 0..2 {
            j.append(&Line::Suggest {
                trial,
                batch: Some(0),
                count: Some(2),
                parameters: Map::new(),
            })
            .unwrap();
        }
        j.append(&outcome(0, Status::Failed)).unwrap();
        j.append(&outcome(1, Status::Infeasible)).unwrap();
        j.append(&Line::Retry { trials: vec![0] }).unwrap();
        drop(j);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(r#"{"kind":"retry","trials":[0]}"#), "{text}");
        let j = FileJournal::open(&path, &config("")).unwrap();
        let replay = j.replay().clone();
        drop(j);
        // the failure is the first attempt; the retry, not finished, is pending
        assert_eq!(replay.attempt(0, 0).unwrap().status, Status::Failed);
        assert_eq!(replay.attempt(0, 1).unwrap().status, Status::Pending);
        assert_eq!(replay.attempt(0, 2), None);
        assert_eq!(replay.retries[0].trials, [0]);
        let mut j = FileJournal::open(&path, &config("")).unwrap();
        j.append(&outcome(0, Status::Infeasible)).unwrap();
        drop(j);
        let replay = FileJournal::open(&path, &config(""))
            .unwrap()
            .replay()
            .clone();
        assert_eq!(replay.attempt(0, 0).unwrap().status, Status::Failed);
        assert_eq!(replay.attempt(0, 1).unwrap().status, Status::Infeasible);
        assert!(matches!(
            replay.events.last(),
            Some(Event::Outcome {
                trial: 0,
                attempt: 1,
                ..
            })
        ));
        // a retry of a trial whose last outcome is not a failure is refused
        let mut j = FileJournal::open(&path, &config("")).unwrap();
        j.append(&Line::Retry { trials: vec![1] }).unwrap();
        drop(j);
        let err = FileJournal::open(&path, &config("")).unwrap_err();
        assert!(
            err.to_string()
                .contains("a retry of trial 1, whose last outcome is not a failure"),
            "{err}"
        );
    }

    #[test]
    fn a_started_handle_is_kept_for_a_trial_without_an_outcome() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        let mut j = FileJournal::create(&path, &config("")).unwrap();
        suggest(&mut j, 0);
        suggest(&mut j, 1);
        for (trial, handle) in [(0, "slurm:7"), (1, "slurm:8"), (1, "slurm:9")] {
            j.append(&Line::Started {
                trial,
                handle: handle.into(),
            })
            .unwrap();
        }
        j.append(&Line::Outcome {
            trial: 0,
            status: Status::Failed,
            reason: Some("x".into()),
            report: None,
        })
        .unwrap();
        drop(j);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains(r#"{"kind":"started","trial":1,"handle":"slurm:9"}"#),
            "{text}"
        );
        let j = FileJournal::open(&path, &config("")).unwrap();
        let replay = j.replay();
        assert_eq!(replay.trials[&0].status, Status::Failed);
        // the last handle of a trial that did not finish is what a resume re-attaches to
        assert_eq!(replay.trials[&1].status, Status::Pending);
        assert_eq!(replay.trials[&1].handle.as_deref(), Some("slurm:9"));
        assert_eq!(j.finished_trials(), 1);
    }

    #[test]
    fn a_slurm_block_counts_by_its_presence_not_its_keys() {
        let with = |slurm: &str| {
            sweeper_goal::parse(&format!(
                "search_space: {{parameters: {{tp: {{values: [1, 2]}}}}}}\nevaluator: {{command: [x]{slurm}}}"
            ))
            .unwrap()
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.jsonl");
        drop(FileJournal::create(&path, &with(", slurm: {partition: a}")).unwrap());
        FileJournal::open(&path, &with(", slurm: {partition: b, time_limit: 90}")).unwrap();
        let err = FileJournal::open(&path, &with("")).unwrap_err();
        assert!(
            matches!(&err, RunError::JournalMismatch { keys, .. } if keys == &["evaluator.slurm"]),
            "{err}"
        );
    }

    #[test]
    fn infinite_metrics_round_trip_and_nan_is_refused() {
        let report = RawReport::from([
            ("mean_e2e_latency_ms".to_owned(), f64::INFINITY),
            ("x".to_owned(), f64::NEG_INFINITY),
        ])
        .with_label("note", "hello");
        let line = Line::Outcome {
            trial: 3,
            status: Status::Feasible,
            reason: None,
            report: Some(report.clone()),
        };
        let text = serde_json::to_string(&line).unwrap();
        assert!(text.contains(r#""mean_e2e_latency_ms":"inf""#), "{text}");
        assert!(text.contains(r#""x":"-inf""#), "{text}");
        assert_eq!(serde_json::from_str::<Line>(&text).unwrap(), line);
        let nan = text.replace(r#""inf""#, r#""nan""#);
        assert!(serde_json::from_str::<Line>(&nan).is_err());
    }
}
