//! Persistent evaluators: one long-lived process per worker, speaking JSON Lines.
//!
//! Each worker slot has its own lock, so workers run in parallel and a slot's process only
//! ever has one candidate out. That alone does not keep answers apart: a worker that
//! answers twice, or late, would have its extra line read as the next candidate's answer.
//! So an answer names its candidate (`id`), and a line naming another candidate the worker
//! was sent is dropped and counted, as are lines printed while no candidate is out; a line
//! naming an id the worker was never sent fails the candidate at once (the worker answers
//! with ids it makes up, and would otherwise be waited for until `max_eval_seconds`). The same idea as a process
//! pool that keeps interpreters warm between tasks (Python's `multiprocessing.Pool`), with
//! a restart instead of a pool-wide failure when one dies; matching replies to requests by
//! id is what JSON-RPC does.

use super::EvalOutcome;
use super::process::{self, Event, MAX_STDOUT_BYTES, Proc, StdoutMode};
use super::report::{LineAnswer, Malformed, parse_line_answer};
use super::spec::{
    CommandSpec, EXIT_INFEASIBLE, EXIT_UNSUPPORTED, answer_outcome, deadline_after, start_failure,
    timeout_reason, with_tail,
};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How long a dying worker's remaining output may take to arrive once its group is killed.
const DEATH_GRACE: Duration = Duration::from_secs(1);

/// How long workers get to exit by themselves after their stdin is closed, before the kill.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How long a worker that stopped reading its input (a broken pipe) may take to exit: one
/// that exits was on its way out, one that lives on is deaf.
const DEAF_GRACE: Duration = Duration::from_millis(250);

/// How often a wait for an answer checks whether the worker still reads its input.
const INPUT_CHECK: Duration = Duration::from_millis(100);

/// The worker slots of one persistent evaluator; a slot is `None` until its first candidate
/// and after its process died.
pub(super) struct Workers {
    slots: Vec<Mutex<Option<Proc>>>,
    /// Per slot, its stdout lines credited to no candidate.
    dropped: Vec<Arc<AtomicU64>>,
    /// Per slot, the ids of the candidates sent to its current process (taken under the
    /// slot's lock; emptied when the process is replaced).
    sent: Vec<Mutex<HashSet<u64>>>,
}

/// The candidate out on a worker.
struct Out {
    id: u64,
    /// The length of its line, newline included.
    len: u64,
}

/// How waiting for an answer ended.
enum Awaited {
    /// The candidate's outcome, and whether the worker may be kept.
    Outcome(EvalOutcome, bool),
    /// The worker died or stopped reading before it read the candidate: the candidate did
    /// not cause that. The outcome is what the death would have meant for it.
    NotRead(EvalOutcome),
}

impl Workers {
    pub(super) fn new(count: usize) -> Workers {
        let count = count.max(1);
        Workers {
            slots: (0..count).map(|_| Mutex::new(None)).collect(),
            dropped: (0..count).map(|_| Arc::new(AtomicU64::new(0))).collect(),
            sent: (0..count).map(|_| Mutex::new(HashSet::new())).collect(),
        }
    }

    /// How many stdout lines were credited to no candidate, over all workers.
    pub(super) fn dropped_lines(&self) -> u64 {
        self.dropped_per_worker().iter().sum()
    }

    /// Per worker slot, how many of its stdout lines were credited to no candidate.
    pub(super) fn dropped_per_worker(&self) -> Vec<u64> {
        self.dropped
            .iter()
            .map(|d| d.load(Ordering::Relaxed))
            .collect()
    }

    /// Sends `line` (candidate `id` as one JSON line and its newline) to worker `worker`
    /// (modulo the slot count), starting or restarting its process as needed, and waits
    /// for the answer.
    pub(super) fn evaluate(
        &self,
        spec: &CommandSpec,
        worker: usize,
        id: u64,
        line: &[u8],
    ) -> EvalOutcome {
        let index = worker % self.slots.len();
        let mut slot = lock(&self.slots[index]);
        let dropped = &*self.dropped[index];
        let mut sent = self.sent[index]
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // A worker that died while idle is replaced before the candidate goes out: that is
        // not this candidate's failure.
        if slot
            .as_mut()
            .is_some_and(|proc| !idle_and_alive(proc, dropped))
        {
            *slot = None;
        }
        let out = Out {
            id,
            len: line.len() as u64,
        };
        loop {
            let deadline = deadline_after(spec.timeout);
            let fresh = slot.is_none();
            if fresh {
                let mode = StdoutMode::Lines {
                    dropped: Arc::clone(&self.dropped[index]),
                };
                sent.clear();
                match Proc::spawn(spec, mode) {
                    Ok(proc) => *slot = Some(proc),
                    Err(e) => return EvalOutcome::Failed(start_failure(spec, &e)),
                }
            }
            let Some(proc) = slot.as_mut() else {
                return EvalOutcome::Failed("persistent evaluator worker did not start".to_owned());
            };
            sent.insert(id);
            proc.send(line.to_vec());
            match await_answer(proc, spec, &out, &sent, deadline, dropped) {
                Awaited::Outcome(outcome, keep) => {
                    if !keep {
                        // Dropping the process kills its group and reaps it; the next
                        // candidate restarts.
                        *slot = None;
                    }
                    return outcome;
                }
                // A worker that ran before this candidate and ended without reading it
                // (it exited right after its last answer, say) is restarted, and the
                // candidate goes to the new one, once. A fresh worker that dies unread
                // failed to start: that is the outcome.
                Awaited::NotRead(outcome) => {
                    *slot = None;
                    if fresh {
                        return outcome;
                    }
                }
            }
        }
    }

    /// Closes every worker's stdin, gives them [`SHUTDOWN_GRACE`] to exit together, then
    /// kills what is left of their groups.
    pub(super) fn shut_down(&mut self) {
        let mut procs: Vec<Proc> = self
            .slots
            .iter_mut()
            .filter_map(|slot| {
                slot.get_mut()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take()
            })
            .collect();
        for proc in &mut procs {
            proc.close_stdin();
        }
        let deadline = Instant::now() + SHUTDOWN_GRACE;
        for proc in &procs {
            loop {
                match proc.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                    Ok(Event::Exited) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        }
        // Each drop kills the rest of the group and reaps the leader.
        drop(procs);
    }
}

/// Locks a slot; a lock poisoned by a panic elsewhere drops its worker, whose state is
/// unknown.
fn lock(slot: &Mutex<Option<Proc>>) -> MutexGuard<'_, Option<Proc>> {
    match slot.lock() {
        Ok(guard) => guard,
        Err(poisoned) => {
            let mut guard = poisoned.into_inner();
            *guard = None;
            slot.clear_poison();
            guard
        }
    }
}

/// Discards (and counts) the stray stdout lines printed since the last answer; false if
/// the worker has exited or its stdout ended.
fn idle_and_alive(proc: &Proc, dropped: &AtomicU64) -> bool {
    if proc.has_exited() {
        return false;
    }
    loop {
        match proc.try_recv() {
            Ok(Event::StdoutLine(bytes)) => {
                if !bytes.trim_ascii().is_empty() {
                    dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
            // A broken pipe shows again when the candidate is sent, and is judged then.
            Ok(Event::StderrClosed | Event::StdoutAll(_) | Event::StdinClosed) => {}
            Ok(
                Event::Exited | Event::StdoutClosed | Event::StdoutTooLarge | Event::StdoutError(_),
            )
            | Err(TryRecvError::Disconnected) => return false,
            Err(TryRecvError::Empty) => return true,
        }
    }
}

/// Whether the worker never read any of the candidate's line: at least its length is still
/// unread (not written, or in the pipe), and a worker reads its input in order.
fn not_read(proc: &Proc, out: &Out) -> bool {
    proc.unread_input().is_some_and(|unread| unread >= out.len)
}

/// Waits for the answer line to the candidate just sent.
fn await_answer(
    proc: &mut Proc,
    spec: &CommandSpec,
    out: &Out,
    sent: &HashSet<u64>,
    deadline: Instant,
    dropped: &AtomicU64,
) -> Awaited {
    let mut stderr_open = true;
    // Once the worker is seen to have read the candidate, its input is not checked again.
    let mut read_it = false;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match proc.recv_timeout(left.min(INPUT_CHECK)) {
            // A blank line answers nothing (a stray `print()`): keep waiting.
            Ok(Event::StdoutLine(bytes)) if bytes.trim_ascii().is_empty() => {}
            Ok(Event::StdoutLine(bytes)) => match judge_line(&bytes, out.id) {
                Ok(LineAnswer::Answer(outcome)) => return Awaited::Outcome(outcome, true),
                Ok(LineAnswer::OtherCandidate(other)) if sent.contains(&other) => {
                    dropped.fetch_add(1, Ordering::Relaxed);
                }
                Ok(LineAnswer::OtherCandidate(other)) => {
                    let reason = with_tail(unknown_id(other, out.id), proc.stderr_tail());
                    return Awaited::Outcome(EvalOutcome::Failed(reason), false);
                }
                Err(Malformed(reason)) => {
                    let reason = with_tail(
                        format!(
                            "{reason} (a persistent evaluator answers each candidate with one line)"
                        ),
                        proc.stderr_tail(),
                    );
                    return Awaited::Outcome(EvalOutcome::Failed(reason), false);
                }
            },
            Ok(Event::StderrClosed) => stderr_open = false,
            Ok(Event::StdoutAll(_)) => {}
            Ok(Event::StdoutTooLarge) => {
                let reason = format!(
                    "evaluator printed a line of more than {} MiB on stdout",
                    MAX_STDOUT_BYTES >> 20
                );
                return Awaited::Outcome(EvalOutcome::Failed(reason), false);
            }
            Ok(Event::Exited) => {
                return died(proc, out, sent, deadline, true, stderr_open, dropped);
            }
            Ok(Event::StdoutClosed | Event::StdoutError(_)) => {
                return died(proc, out, sent, deadline, false, stderr_open, dropped);
            }
            Ok(Event::StdinClosed) => {
                if let Some(awaited) = deaf(proc, out, sent, deadline, stderr_open, dropped) {
                    return awaited;
                }
                read_it = true;
            }
            Err(RecvTimeoutError::Disconnected) => {
                return died(proc, out, sent, deadline, false, false, dropped);
            }
            Err(RecvTimeoutError::Timeout) if Instant::now() >= deadline => {
                return Awaited::Outcome(
                    EvalOutcome::TimedOut(timeout_reason(spec.timeout)),
                    false,
                );
            }
            Err(RecvTimeoutError::Timeout) => {
                if !read_it && proc.input_closed() {
                    if let Some(awaited) = deaf(proc, out, sent, deadline, stderr_open, dropped) {
                        return awaited;
                    }
                    read_it = true;
                }
            }
        }
    }
}

/// A worker's stdin is closed at its end (a write failed, or nothing reads the pipe). If it
/// read the candidate first, `None`: its answer may still come. If not, the worker either
/// exits within [`DEAF_GRACE`] (it was on its way out: the candidate goes to a new worker)
/// or lives on without reading, and the candidate fails at once.
fn deaf(
    proc: &mut Proc,
    out: &Out,
    sent: &HashSet<u64>,
    deadline: Instant,
    stderr_open: bool,
    dropped: &AtomicU64,
) -> Option<Awaited> {
    if !not_read(proc, out) {
        return None;
    }
    let until = deadline.min(Instant::now() + DEAF_GRACE);
    let mut stderr_open = stderr_open;
    loop {
        match proc.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok(Event::Exited) => {
                return Some(died(proc, out, sent, deadline, true, stderr_open, dropped));
            }
            Ok(Event::StdoutClosed | Event::StdoutError(_) | Event::StdoutTooLarge) => {
                return Some(died(proc, out, sent, deadline, false, stderr_open, dropped));
            }
            // It never read the candidate: nothing it prints now answers it.
            Ok(Event::StdoutLine(bytes)) => {
                if !bytes.trim_ascii().is_empty() {
                    dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
            Ok(Event::StderrClosed) => stderr_open = false,
            Ok(Event::StdoutAll(_) | Event::StdinClosed) => {}
            Err(_) => break,
        }
    }
    let reason = with_tail(
        "persistent evaluator closed its input (stdin) without reading the candidate, and \
         is still running; it is restarted for the next candidate"
            .to_owned(),
        proc.stderr_tail(),
    );
    Some(Awaited::Outcome(EvalOutcome::Failed(reason), false))
}

/// Why an answer naming `other`, an id this worker was never sent, fails candidate `id`.
fn unknown_id(other: u64, id: u64) -> String {
    format!(
        "the answer names candidate id {other}, which was never sent to this worker (candidate {id} was out); answer with the `id` of the candidate read, or leave `id` out"
    )
}

/// Reads a line as an answer to candidate `id`: not UTF-8 is malformed.
fn judge_line(bytes: &[u8], id: u64) -> Result<LineAnswer, Malformed> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| Malformed("evaluator output is not UTF-8".to_owned()))?;
    parse_line_answer(text, id)
}

/// The outcome of a candidate whose worker exited (or closed stdout) before answering;
/// `stdout_open` and `stderr_open` say which pipes have not reached their end yet.
fn died(
    proc: &mut Proc,
    out: &Out,
    sent: &HashSet<u64>,
    deadline: Instant,
    stdout_open: bool,
    stderr_open: bool,
    dropped: &AtomicU64,
) -> Awaited {
    // The answer may have raced the exit. Killing the rest of the group and containment
    // ends the pipes, so whatever is still in them arrives, then end of file.
    proc.kill_all();
    // Final now that nothing runs: a worker that never read the candidate cannot have
    // answered it, whatever it printed.
    let unread = not_read(proc, out);
    let until = deadline.min(Instant::now() + DEATH_GRACE);
    let (mut stdout_open, mut stderr_open) = (stdout_open, stderr_open);
    while stdout_open || stderr_open {
        match proc.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok(Event::StdoutLine(bytes)) if bytes.trim_ascii().is_empty() => {}
            Ok(Event::StdoutLine(_)) if unread => {
                dropped.fetch_add(1, Ordering::Relaxed);
            }
            Ok(Event::StdoutLine(bytes)) => match judge_line(&bytes, out.id) {
                Ok(LineAnswer::Answer(outcome)) => return Awaited::Outcome(outcome, false),
                Ok(LineAnswer::OtherCandidate(other)) if sent.contains(&other) => {
                    dropped.fetch_add(1, Ordering::Relaxed);
                }
                Ok(LineAnswer::OtherCandidate(other)) => {
                    let reason = with_tail(unknown_id(other, out.id), proc.stderr_tail());
                    return Awaited::Outcome(EvalOutcome::Failed(reason), false);
                }
                Err(Malformed(_)) => {
                    return Awaited::Outcome(answer_outcome(&bytes, proc.stderr_tail()).0, false);
                }
            },
            Ok(Event::StdoutClosed | Event::StdoutTooLarge | Event::StdoutError(_)) => {
                stdout_open = false;
            }
            Ok(Event::StderrClosed) => stderr_open = false,
            Ok(Event::Exited | Event::StdoutAll(_) | Event::StdinClosed) => {}
            Err(_) => break,
        }
    }
    let status = proc.finish();
    let tail = proc.stderr_tail();
    let outcome = match status.and_then(|s| s.code()) {
        Some(EXIT_UNSUPPORTED) => EvalOutcome::Unsupported(proc.stderr_last_line().unwrap_or_else(|| {
            format!("evaluator exited with code {EXIT_UNSUPPORTED} (unsupported) and no reason on stderr")
        })),
        Some(EXIT_INFEASIBLE) => EvalOutcome::Infeasible(proc.stderr_last_line().unwrap_or_else(|| {
            format!("evaluator exited with code {EXIT_INFEASIBLE} (infeasible) and no reason on stderr")
        })),
        _ => EvalOutcome::Failed(with_tail(
            format!(
                "persistent evaluator {} before answering",
                process::describe_exit(status)
            ),
            tail,
        )),
    };
    if unread {
        Awaited::NotRead(outcome)
    } else {
        Awaited::Outcome(outcome, false)
    }
}
