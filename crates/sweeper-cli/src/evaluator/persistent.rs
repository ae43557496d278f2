//! Persistent evaluators: one long-lived process per worker, speaking JSON Lines.
//!
//! Each worker slot has its own lock, so workers run in parallel and a slot's process only
//! ever has one candidate out: answers cannot be confused between candidates. The same idea
//! as a process pool that keeps interpreters warm between tasks (Python's
//! `multiprocessing.Pool`), with a restart instead of a pool-wide failure when one dies.

use super::EvalOutcome;
use super::command::{
    CommandSpec, EXIT_INFEASIBLE, EXIT_UNSUPPORTED, answer_outcome, deadline_after, start_failure,
    timeout_reason, with_tail,
};
use super::process::{self, Event, MAX_STDOUT_BYTES, Proc, StdoutMode};
use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How long a dying worker's remaining output may take to arrive once its group is killed.
const DEATH_GRACE: Duration = Duration::from_secs(1);

/// How long workers get to exit by themselves after their stdin is closed, before the kill.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// The worker slots of one persistent evaluator; a slot is `None` until its first candidate
/// and after its process died.
pub(super) struct Workers {
    slots: Vec<Mutex<Option<Proc>>>,
}

impl Workers {
    pub(super) fn new(count: usize) -> Workers {
        Workers {
            slots: (0..count.max(1)).map(|_| Mutex::new(None)).collect(),
        }
    }

    /// Sends `line` (one JSON candidate and its newline) to worker `worker` (modulo the slot
    /// count), starting or restarting its process as needed, and waits for the answer.
    pub(super) fn evaluate(&self, spec: &CommandSpec, worker: usize, line: Vec<u8>) -> EvalOutcome {
        let mut slot = lock(&self.slots[worker % self.slots.len()]);
        // A worker that died while idle is replaced before the candidate goes out: that is
        // not this candidate's failure.
        if slot.as_mut().is_some_and(|proc| !idle_and_alive(proc)) {
            *slot = None;
        }
        let deadline = deadline_after(spec.timeout);
        if slot.is_none() {
            match Proc::spawn(spec, StdoutMode::Lines) {
                Ok(proc) => *slot = Some(proc),
                Err(e) => return EvalOutcome::Failed(start_failure(spec, &e)),
            }
        }
        let Some(proc) = slot.as_mut() else {
            return EvalOutcome::Failed("persistent evaluator worker did not start".to_owned());
        };
        proc.send(line);
        let (outcome, keep) = await_answer(proc, spec, deadline);
        if !keep {
            // Dropping the process kills its group and reaps it; the next candidate restarts.
            *slot = None;
        }
        outcome
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
                match proc
                    .events
                    .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                {
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

/// Discards stray stdout lines printed between candidates; false if the worker has exited
/// or its stdout ended.
fn idle_and_alive(proc: &Proc) -> bool {
    if proc.has_exited() {
        return false;
    }
    loop {
        match proc.events.try_recv() {
            Ok(Event::StdoutLine(_) | Event::StderrClosed | Event::StdoutAll(_)) => {}
            Ok(
                Event::Exited | Event::StdoutClosed | Event::StdoutTooLarge | Event::StdoutError(_),
            )
            | Err(TryRecvError::Disconnected) => return false,
            Err(TryRecvError::Empty) => return true,
        }
    }
}

/// Waits for the answer line to the candidate just sent: the outcome, and whether the
/// worker may be kept for the next candidate.
fn await_answer(proc: &mut Proc, spec: &CommandSpec, deadline: Instant) -> (EvalOutcome, bool) {
    let mut stderr_open = true;
    loop {
        match proc
            .events
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            // A blank line answers nothing (a stray `print()`): keep waiting.
            Ok(Event::StdoutLine(bytes)) if bytes.trim_ascii().is_empty() => {}
            Ok(Event::StdoutLine(bytes)) => {
                let (outcome, malformed) = answer_outcome(&bytes, None);
                let outcome = match outcome {
                    EvalOutcome::Failed(reason) if malformed => EvalOutcome::Failed(with_tail(
                        format!(
                            "{reason} (a persistent evaluator answers each candidate with one line)"
                        ),
                        proc.stderr_tail(),
                    )),
                    other => other,
                };
                return (outcome, !malformed);
            }
            Ok(Event::StderrClosed) => stderr_open = false,
            Ok(Event::StdoutAll(_)) => {}
            Ok(Event::StdoutTooLarge) => {
                let reason = format!(
                    "evaluator printed a line of more than {} MiB on stdout",
                    MAX_STDOUT_BYTES >> 20
                );
                return (EvalOutcome::Failed(reason), false);
            }
            Ok(Event::Exited) => return (died(proc, deadline, true, stderr_open), false),
            Ok(Event::StdoutClosed | Event::StdoutError(_)) => {
                return (died(proc, deadline, false, stderr_open), false);
            }
            Err(RecvTimeoutError::Disconnected) => {
                return (died(proc, deadline, false, false), false);
            }
            Err(RecvTimeoutError::Timeout) => {
                return (EvalOutcome::TimedOut(timeout_reason(spec.timeout)), false);
            }
        }
    }
}

/// The outcome of a candidate whose worker exited (or closed stdout) before answering;
/// `stdout_open` and `stderr_open` say which pipes have not reached their end yet.
fn died(proc: &mut Proc, deadline: Instant, stdout_open: bool, stderr_open: bool) -> EvalOutcome {
    // The answer may have raced the exit. Killing the rest of the group ends the pipes, so
    // whatever is still in them arrives, then end of file.
    proc.kill_group();
    let until = deadline.min(Instant::now() + DEATH_GRACE);
    let (mut stdout_open, mut stderr_open) = (stdout_open, stderr_open);
    while stdout_open || stderr_open {
        match proc
            .events
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            Ok(Event::StdoutLine(bytes)) if bytes.trim_ascii().is_empty() => {}
            Ok(Event::StdoutLine(bytes)) => {
                return answer_outcome(&bytes, proc.stderr_tail()).0;
            }
            Ok(Event::StdoutClosed | Event::StdoutTooLarge | Event::StdoutError(_)) => {
                stdout_open = false;
            }
            Ok(Event::StderrClosed) => stderr_open = false,
            Ok(Event::Exited | Event::StdoutAll(_)) => {}
            Err(_) => break,
        }
    }
    let status = proc.finish();
    let tail = proc.stderr_tail();
    match status.and_then(|s| s.code()) {
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
    }
}
