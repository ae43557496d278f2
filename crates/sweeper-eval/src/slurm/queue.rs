//! Watching the jobs of a sweep: one poller thread asks `squeue` about **every** watched job
//! in one call per poll (`squeue --jobs=ID,ID,...`), however many there are, and hands
//! each job's end to the worker thread that waits for it. It also cancels the jobs that
//! ran over `max_eval_seconds` (one `scancel` for all of them) and, for jobs `squeue` no
//! longer knows, reads the exit code file the job script wrote, then `sacct` (one call for
//! all of them) when the cluster keeps accounting.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long one call of a Slurm tool may take before it is killed: `squeue` and `sbatch`
/// retry on their own while the controller is busy, so this is generous.
pub(super) const TOOL_TIMEOUT: Duration = Duration::from_mins(2);

/// How long `squeue` may fail in a row (the controller down or unreachable) before every
/// watched job is failed: long enough for a controller restart or fail-over.
const SQUEUE_OUTAGE: Duration = Duration::from_mins(15);

/// How many polls in a row a job must be missing from `squeue` before it counts as gone
/// (so that a job is never judged on one odd answer).
const MISSING_POLLS: u32 = 2;

/// The columns asked of `squeue`, each ended by `|` (a suffix, so no column is cut to a
/// width).
const SQUEUE_FORMAT: &str = "JobID:|,State:|,Reason:|,exit_code:|,TimeUsed:|";

/// How a job's script ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Exit {
    /// Exited with this code.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

impl Exit {
    /// From a wait status as `squeue`'s `exit_code` column gives it.
    fn from_wait_status(raw: i64) -> Exit {
        let signal = (raw & 0x7f) as i32;
        if signal == 0 {
            Exit::Code(((raw >> 8) & 0xff) as i32)
        } else {
            Exit::Signal(signal)
        }
    }

    /// From `sacct`'s `ExitCode` column, `CODE:SIGNAL`.
    fn from_sacct(text: &str) -> Option<Exit> {
        let (code, signal) = text.trim().split_once(':')?;
        let (code, signal): (i32, i32) = (code.parse().ok()?, signal.parse().ok()?);
        Some(if signal == 0 {
            Exit::Code(code)
        } else {
            Exit::Signal(signal)
        })
    }
}

/// One job as `squeue` reported it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Row {
    /// `PENDING`, `RUNNING`, `COMPLETED`, `TIMEOUT`, ...
    pub(super) state: String,
    /// Slurm's reason (`Resources`, `NonZeroExitCode`, `TimeLimit`, `None`).
    pub(super) reason: String,
    /// The batch script's wait status, meaningful once the job ended.
    pub(super) exit: Option<Exit>,
    /// Run time so far (pending time not included).
    pub(super) used: Option<Duration>,
}

/// Whether a job in `state` will not run again (a requeued job goes back to `PENDING`).
pub(super) fn is_final(state: &str) -> bool {
    matches!(
        state,
        "COMPLETED"
            | "CANCELLED"
            | "FAILED"
            | "TIMEOUT"
            | "NODE_FAIL"
            | "PREEMPTED"
            | "BOOT_FAIL"
            | "DEADLINE"
            | "OUT_OF_MEMORY"
            | "SPECIAL_EXIT"
            | "REVOKED"
    )
}

/// A duration as `squeue` writes run times: `S`, `M:SS`, `H:MM:SS`, `D-HH:MM:SS`.
pub(super) fn parse_time_used(text: &str) -> Option<Duration> {
    let text = text.trim();
    let (days, rest) = match text.split_once('-') {
        Some((d, rest)) => (d.parse::<u64>().ok()?, rest),
        None => (0, text),
    };
    let mut seconds: u64 = 0;
    let parts: Vec<&str> = rest.split(':').collect();
    if parts.len() > 3 {
        return None;
    }
    for part in parts {
        seconds = seconds * 60 + part.parse::<u64>().ok()?;
    }
    Some(Duration::from_secs(days * 86_400 + seconds))
}

/// The rows of `squeue --noheader --Format=SQUEUE_FORMAT`, by job id; lines that do not
/// parse are skipped.
pub(super) fn parse_squeue(text: &str) -> HashMap<u64, Row> {
    let mut rows = HashMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let [id, state, reason, exit, used, ..] = cells.as_slice() else {
            continue;
        };
        let Ok(id) = id.parse::<u64>() else {
            continue;
        };
        rows.insert(
            id,
            Row {
                state: (*state).to_owned(),
                reason: (*reason).to_owned(),
                exit: exit.parse::<i64>().ok().map(Exit::from_wait_status),
                used: parse_time_used(used),
            },
        );
    }
    rows
}

/// The rows of `sacct --noheader --parsable2 --allocations --format=JobID,State,ExitCode,Reason`
/// (`12|CANCELLED by 0|0:15|None`), by job id.
pub(super) fn parse_sacct(text: &str) -> HashMap<u64, Row> {
    let mut rows = HashMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let [id, state, exit, reason, ..] = cells.as_slice() else {
            continue;
        };
        let Ok(id) = id.parse::<u64>() else {
            continue;
        };
        let state = state.split_whitespace().next().unwrap_or_default();
        rows.insert(
            id,
            Row {
                state: state.to_owned(),
                reason: (*reason).to_owned(),
                exit: Exit::from_sacct(exit),
                used: None,
            },
        );
    }
    rows
}

/// How a watched job ended, as the worker waiting for it is told.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct JobEnd {
    /// The final state (`COMPLETED`, `FAILED`, `TIMEOUT`, ...), or `UNKNOWN`.
    pub(super) state: String,
    /// Slurm's reason, or what sweeper knows when Slurm said nothing.
    pub(super) reason: String,
    /// The batch script's exit, when known.
    pub(super) exit: Option<Exit>,
    /// The run time at which sweeper cancelled the job for `max_eval_seconds`, if it did.
    pub(super) over_limit: Option<Duration>,
}

/// The exit code the job script wrote, if it wrote one.
pub(super) fn read_exit_file(path: &std::path::Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Runs one Slurm tool to its end (at most [`TOOL_TIMEOUT`]), its output captured.
pub(super) fn run_tool(program: &str, args: &[String]) -> Result<Output, String> {
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                format!("`{program}` was not found in PATH: run sweeper where Slurm's commands are (a login node)")
            }
            _ => format!("cannot run `{program}`: {e}"),
        })?;
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Ok(output) = rx.recv_timeout(TOOL_TIMEOUT) else {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid.cast_signed()),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = rx.recv();
        return Err(format!(
            "`{program}` did not answer within {}s and was killed",
            TOOL_TIMEOUT.as_secs()
        ));
    };
    output.map_err(|e| format!("cannot run `{program}`: {e}"))
}

/// The last non-empty stderr lines of a tool, for a message.
pub(super) fn tool_error(program: &str, output: &Output) -> String {
    let tail = super::super::process::last_lines(&output.stderr, 3)
        .or_else(|| super::super::process::last_lines(&output.stdout, 3))
        .unwrap_or_else(|| "no message".to_owned());
    format!("`{program}` {}: {tail}", describe_status(output.status))
}

fn describe_status(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        _ => "failed".to_owned(),
    }
}

/// `ids` as one `--jobs` list.
fn id_list(ids: &[u64]) -> String {
    ids.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

/// Counts of the Slurm calls of one evaluator.
#[derive(Debug, Default)]
pub(super) struct Counters {
    pub(super) polls: AtomicU64,
    pub(super) squeue: AtomicU64,
    pub(super) scancel: AtomicU64,
    pub(super) sacct: AtomicU64,
}

struct Watch {
    tx: Sender<JobEnd>,
    exit_file: PathBuf,
    /// The run time at which it was cancelled for the limit.
    cancelled: Option<Duration>,
    /// Polls in a row that did not list it.
    missing: u32,
}

#[derive(Default)]
struct Inner {
    watched: HashMap<u64, Watch>,
    stop: bool,
}

struct Shared {
    inner: Mutex<Inner>,
    wake: Condvar,
    interval: Duration,
    limit: Option<Duration>,
    counters: Arc<Counters>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The poller of one evaluator: a thread that sleeps while nothing is watched.
pub(super) struct Queue {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Queue {
    /// A poller asking every `interval`; jobs running longer than `limit` are cancelled.
    /// Fails only when the thread cannot be started.
    pub(super) fn start(
        interval: Duration,
        limit: Option<Duration>,
        counters: Arc<Counters>,
    ) -> std::io::Result<Queue> {
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner::default()),
            wake: Condvar::new(),
            interval,
            limit,
            counters,
        });
        let for_thread = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("sweeper-slurm-poll".into())
            .spawn(move || poll_loop(&for_thread))?;
        Ok(Queue {
            shared,
            thread: Some(thread),
        })
    }

    /// Watches job `id` until it ends; the end comes on the returned channel.
    pub(super) fn watch(&self, id: u64, exit_file: PathBuf) -> Receiver<JobEnd> {
        let (tx, rx) = mpsc::channel();
        let mut inner = self.shared.lock();
        inner.watched.insert(
            id,
            Watch {
                tx,
                exit_file,
                cancelled: None,
                missing: 0,
            },
        );
        self.shared.wake.notify_all();
        rx
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What one poll found.
enum Polled {
    Rows(HashMap<u64, Row>),
    Failed(String),
}

fn squeue(ids: &[u64], counters: &Counters) -> Polled {
    counters.squeue.fetch_add(1, Ordering::Relaxed);
    let args = vec![
        "--noheader".to_owned(),
        "--states=all".to_owned(),
        format!("--jobs={}", id_list(ids)),
        format!("--Format={SQUEUE_FORMAT}"),
    ];
    match run_tool("squeue", &args) {
        Ok(out) if out.status.success() => {
            Polled::Rows(parse_squeue(&String::from_utf8_lossy(&out.stdout)))
        }
        // every id unknown (all purged after MinJobAge): an empty answer, not a failure
        Ok(out) if String::from_utf8_lossy(&out.stderr).contains("Invalid job id") => {
            Polled::Rows(HashMap::new())
        }
        Ok(out) => Polled::Failed(tool_error("squeue", &out)),
        Err(e) => Polled::Failed(e),
    }
}

/// Cancels `ids` in one call; returns the error text when `scancel` failed.
pub(super) fn scancel(ids: &[u64]) -> Result<(), String> {
    let args: Vec<String> = ids.iter().map(u64::to_string).collect();
    match run_tool("scancel", &args) {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(tool_error("scancel", &out)),
        Err(e) => Err(e),
    }
}

/// What accounting says of `ids`, when the cluster keeps it (an empty map otherwise).
fn sacct(ids: &[u64], counters: &Counters) -> HashMap<u64, Row> {
    counters.sacct.fetch_add(1, Ordering::Relaxed);
    let args = vec![
        "--noheader".to_owned(),
        "--parsable2".to_owned(),
        "--allocations".to_owned(),
        format!("--jobs={}", id_list(ids)),
        "--format=JobID,State,ExitCode,Reason".to_owned(),
    ];
    match run_tool("sacct", &args) {
        Ok(out) if out.status.success() => parse_sacct(&String::from_utf8_lossy(&out.stdout)),
        _ => HashMap::new(),
    }
}

fn end_of(row: &Row, over_limit: Option<Duration>) -> JobEnd {
    JobEnd {
        state: row.state.clone(),
        reason: row.reason.clone(),
        exit: row.exit,
        over_limit,
    }
}

fn poll_loop(shared: &Shared) {
    let mut failing_since: Option<Instant> = None;
    loop {
        let ids: Vec<u64> = {
            let mut inner = shared.lock();
            while inner.watched.is_empty() && !inner.stop {
                inner = shared
                    .wake
                    .wait(inner)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if inner.stop {
                return;
            }
            inner.watched.keys().copied().collect()
        };
        shared.counters.polls.fetch_add(1, Ordering::Relaxed);
        let polled = squeue(&ids, &shared.counters);
        let asked: HashSet<u64> = ids.iter().copied().collect();
        let mut ended: Vec<(u64, JobEnd)> = Vec::new();
        let mut cancel: Vec<u64> = Vec::new();
        let mut gone: Vec<(u64, PathBuf, Option<Duration>)> = Vec::new();
        {
            let mut inner = shared.lock();
            match polled {
                Polled::Rows(rows) => {
                    failing_since = None;
                    for (&id, watch) in &mut inner.watched {
                        if !asked.contains(&id) {
                            continue; // watched since the call
                        }
                        match rows.get(&id) {
                            Some(row) if is_final(&row.state) => {
                                ended.push((id, end_of(row, watch.cancelled)));
                            }
                            Some(row) => {
                                watch.missing = 0;
                                if let (Some(limit), Some(used)) = (shared.limit, row.used)
                                    && used > limit
                                    && watch.cancelled.is_none()
                                {
                                    watch.cancelled = Some(used);
                                    cancel.push(id);
                                }
                            }
                            None => {
                                watch.missing += 1;
                                if watch.missing >= MISSING_POLLS {
                                    gone.push((id, watch.exit_file.clone(), watch.cancelled));
                                }
                            }
                        }
                    }
                }
                Polled::Failed(why) => {
                    let since = *failing_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= SQUEUE_OUTAGE {
                        for &id in &ids {
                            ended.push((
                                id,
                                JobEnd {
                                    state: "UNKNOWN".into(),
                                    reason: format!(
                                        "squeue failed for {} min: {why}",
                                        SQUEUE_OUTAGE.as_secs() / 60
                                    ),
                                    exit: None,
                                    over_limit: None,
                                },
                            ));
                        }
                    }
                }
            }
        }
        if !cancel.is_empty() {
            shared.counters.scancel.fetch_add(1, Ordering::Relaxed);
            // a failure shows at the next poll: the job is still running, or has ended
            let _ = scancel(&cancel);
        }
        if !gone.is_empty() {
            ended.extend(resolve_gone(&gone, &shared.counters));
        }
        if !ended.is_empty() {
            let mut inner = shared.lock();
            for (id, end) in ended {
                if let Some(watch) = inner.watched.remove(&id) {
                    let _ = watch.tx.send(end);
                }
            }
        }
        let inner = shared.lock();
        if inner.stop {
            return;
        }
        let _ = shared
            .wake
            .wait_timeout_while(inner, shared.interval, |inner| !inner.stop)
            .unwrap_or_else(PoisonError::into_inner);
    }
}

/// The ends of jobs `squeue` no longer lists (purged after the cluster's `MinJobAge`):
/// the exit code file of the job script first, then accounting (one `sacct` call).
fn resolve_gone(
    gone: &[(u64, PathBuf, Option<Duration>)],
    counters: &Counters,
) -> Vec<(u64, JobEnd)> {
    let mut ended = Vec::new();
    let mut ask: Vec<u64> = Vec::new();
    for (id, exit_file, over_limit) in gone {
        match read_exit_file(exit_file) {
            Some(code) => ended.push((
                *id,
                JobEnd {
                    state: if code == 0 { "COMPLETED" } else { "FAILED" }.into(),
                    reason: "no longer listed by squeue; exit code from the job script".into(),
                    exit: Some(Exit::Code(code)),
                    over_limit: *over_limit,
                },
            )),
            None => ask.push(*id),
        }
    }
    if ask.is_empty() {
        return ended;
    }
    let rows = sacct(&ask, counters);
    for (id, _, over_limit) in gone.iter().filter(|(id, ..)| ask.contains(id)) {
        let end = match rows.get(id) {
            Some(row) if is_final(&row.state) => end_of(row, *over_limit),
            _ => JobEnd {
                state: "UNKNOWN".into(),
                reason: "squeue no longer lists it, sacct does not know it, and the job script wrote no exit code (it was cancelled, timed out or lost its node)".into(),
                exit: None,
                over_limit: *over_limit,
            },
        };
        ended.push((*id, end));
    }
    ended
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squeue_rows_parse_with_their_exit_and_run_time() {
        let text = "5|CANCELLED|None|15|0:03|\n\
                    3|FAILED|NonZeroExitCode|1792|1:02:03|\n\
                    8|PENDING|(Resources)|0|0:00|\n\
                    9|RUNNING|None|0|2-01:00:05|\n\
                    garbage\n\
                    x|RUNNING|None|0|0:00|\n";
        let rows = parse_squeue(text);
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[&5].exit, Some(Exit::Signal(15)));
        assert_eq!(rows[&3].exit, Some(Exit::Code(7)));
        assert_eq!(rows[&3].reason, "NonZeroExitCode");
        assert_eq!(rows[&3].used, Some(Duration::from_secs(3723)));
        assert_eq!(rows[&8].state, "PENDING");
        assert_eq!(rows[&9].used, Some(Duration::from_secs(2 * 86_400 + 3605)));
        assert!(is_final("TIMEOUT") && is_final("NODE_FAIL") && !is_final("COMPLETING"));
    }

    #[test]
    fn sacct_rows_parse_with_their_exit() {
        let rows = parse_sacct("12|CANCELLED by 0|0:15|None\n13|COMPLETED|3:0|None\n");
        assert_eq!(rows[&12].state, "CANCELLED");
        assert_eq!(rows[&12].exit, Some(Exit::Signal(15)));
        assert_eq!(rows[&13].exit, Some(Exit::Code(3)));
        assert!(parse_sacct("Slurm accounting storage is disabled\n").is_empty());
    }

    #[test]
    fn run_times_parse_in_every_squeue_form() {
        assert_eq!(parse_time_used("45"), Some(Duration::from_secs(45)));
        assert_eq!(parse_time_used("1:05"), Some(Duration::from_secs(65)));
        assert_eq!(parse_time_used("10:00:00"), Some(Duration::from_hours(10)));
        assert_eq!(parse_time_used("INVALID"), None);
        assert_eq!(parse_time_used("1:2:3:4"), None);
    }
}
