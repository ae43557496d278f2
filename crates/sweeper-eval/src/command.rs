//! External command evaluators: a program that reads a candidate as JSON on stdin and
//! answers a report as JSON on stdout.
//!
//! The protocol is documented on [`CommandEvaluator`].

use super::persistent::Workers;
use super::process::{self, Containment, Event, MAX_STDOUT_BYTES, Proc, StdoutMode};
use super::spec::{
    CommandSpec, EXIT_INFEASIBLE, EXIT_UNSUPPORTED, EvaluatorError, answer_outcome, deadline_after,
    start_failure, timeout_reason, with_tail,
};
use super::{EvalOutcome, EvalRequest, Evaluator};
use std::fmt;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

/// How long stdout and stderr may stay open once the evaluator exited and what it left was
/// killed (a process out of the containment's reach may hold them): the report and the
/// reason are then what was read by then.
const PIPES_GRACE: Duration = Duration::from_millis(500);

/// An [`Evaluator`] that runs an external command.
///
/// # Protocol
///
/// The candidate is the JSON object of [`EvalRequest`]. The answer is a **report**, one flat
/// JSON object of metric name → number (see [`parse_report`](sweeper_engine::parse_report)), or a
/// **status answer** `{"status": "unsupported" | "infeasible" | "failed", "reason": "..."}`.
///
/// - **One-shot** (`persistent: false`): one process per candidate. The candidate is written
///   to stdin, which is then closed; the whole of stdout is the answer. The exit code speaks
///   too: `0` the answer counts; [`EXIT_UNSUPPORTED`] (3) "this configuration is not
///   supported"; [`EXIT_INFEASIBLE`] (4) "this candidate is infeasible" (the way an evaluator
///   that converts a `kv_load_ratio` says the KV cache holds less than one request); any
///   other code, or a signal, is a failed evaluation. For 3 and 4 the reason is the last
///   non-empty stderr line; for a failure, the exit code or signal and the last (up to
///   five) stderr lines, joined with ` | `. The evaluator's exit decides the outcome: once
///   it has exited, what it left running is killed (see [Containment](#containment)),
///   stdout and stderr get 500 ms to reach their end, and what was read by then is the
///   answer, even if a process out of reach still holds stdout open. A one-shot report is
///   read as printed: an `id` in it is a metric like any other.
/// - **Persistent** (`persistent: true`): one long-lived process per worker, started on its
///   worker's first candidate. Each candidate is one JSON line on stdin and gets one answer
///   line on stdout, so a slow start-up (loading a performance database) is paid once per
///   worker. Every answer (report or status answer) should carry the candidate's **`id`**,
///   the number sent as the request's `id`: `{"id": 17, "output_throughput_tok_s": 1250.5}`,
///   `{"id": 17, "status": "infeasible", "reason": "..."}`. sweeper takes it out of the
///   answer (it is no metric and never reaches the report) and checks it: a line with
///   another candidate's `id` (a late second answer, an answer one candidate behind) is
///   not credited to the candidate that is out; it is dropped and the wait goes on, within
///   the limit. An `id` that is not a non-negative integer fails the candidate. Without an
///   `id` a line is credited to the candidate that is out, as it must be for workers
///   written before the `id` existed; a late line then cannot be told from an answer.
///   Lines printed while no candidate is out are dropped too. Every dropped line is
///   counted, nothing is logged: [`CommandEvaluator::dropped_lines`] says how many, so a
///   caller can warn once. Blank lines answer nothing and are skipped.
///
///   A worker that exits or is killed while a candidate is out is restarted on its next
///   candidate, and that candidate is failed (exit codes 3 and 4 still mean unsupported
///   and infeasible), unless the worker never read the candidate: a worker that exits
///   right after an answer (or one it sent before) is restarted and the candidate goes to
///   the new worker, once. On Linux, "never read" is the candidate's bytes still unread in
///   the stdin pipe (`FIONREAD`); elsewhere only a candidate that could not be written at
///   all counts as unread. A worker that closed its stdin but lives on (the write meets a
///   broken pipe, or nothing reads the pipe any more) fails the candidate at once with a
///   reason saying that the worker closed its input, and is restarted for the next one. A
///   worker whose answer is not even a JSON object is restarted too, since its lines may be
///   out of step. Persistent workers should answer unsupported and infeasible candidates
///   with a status answer, which keeps them alive. Closing stdin asks a worker to exit.
///   Worker indexes at or above `workers` share slots (modulo `workers`).
///
/// The limit (`max_eval_seconds`) covers one candidate from the moment it is sent; a
/// persistent worker's first candidate includes its start-up. Over the limit, everything
/// the evaluation started is killed and the candidate is [`EvalOutcome::TimedOut`]. More
/// than 16 MiB on stdout (for one candidate; for a persistent worker, in one line) is a
/// failure. What sweeper buffers of a worker's stdout is bounded: at most 1024 lines and
/// 4 MiB wait to be read (one line of up to 16 MiB always passes), and the lines over that
/// are dropped and counted, so stray output, however much, costs memory it cannot grow.
///
/// # Containment
///
/// Every evaluator runs in a process group of its own, with nothing passed through a shell:
/// the environment is sweeper's plus `env`, the working directory `cwd` (relative paths in
/// `argv` resolve against it). Because the group is not sweeper's, a Ctrl-C at the terminal
/// reaches sweeper only: dropping the [`CommandEvaluator`] is what stops its persistent
/// workers (and [`kill_running_evaluators`](super::kill_running_evaluators) what a signal
/// handler calls).
///
/// A process that leaves the group (`setsid`, a daemon's double fork) is contained too,
/// where the platform allows, in the first of these that works, chosen once per sweeper
/// process ([`CommandEvaluator::containment`] says which):
///
/// - **`cgroup`** (Linux, cgroup v2 with a writable cgroup for sweeper: root, or a
///   delegated subtree, and Linux 5.14 for `cgroup.kill`): each evaluator process starts in
///   a child cgroup of sweeper's own, `sweeper-<pid>-<n>`, joined before its first
///   instruction; nothing it starts can leave it. Ending the evaluation writes
///   `cgroup.kill`, and the empty cgroup is removed.
/// - **`subreaper`** (other Linux): sweeper makes itself a child subreaper
///   (`PR_SET_CHILD_SUBREAPER`), so orphaned descendants are re-parented to it instead of
///   init, and each evaluator's environment carries `SWEEPER_EVALUATION=<pid>-<n>`. Ending
///   the evaluation kills every process whose environment carries that mark and reaps those
///   re-parented to sweeper. A descendant that clears its environment escapes.
/// - **`process-group`** (other Unix systems): the process group alone. A child that left
///   it survives the evaluation; the report is still taken when the evaluator exits.
///
/// When a one-shot evaluator exits or runs over the limit, and when a persistent worker is
/// stopped (it died, ran over the limit, got out of step, or the evaluator was dropped),
/// whatever is left in its group and its containment is killed, so a stray background job
/// can neither hold the sweep up nor outlive it.
///
/// # Example
///
/// ```no_run
/// use sweeper_engine::{EvalOutcome, EvalRequest, Evaluator};
/// use sweeper_eval::{CommandEvaluator, CommandSpec};
///
/// let spec = CommandSpec::new(vec!["python3".into(), "my_eval.py".into()]);
/// let evaluator = CommandEvaluator::new(spec)?;
/// let mut request = EvalRequest::new(0, serde_json::Map::new());
/// request.concurrency = Some(64);
/// request.extra.insert("planner_target".into(), "throughput".into());
/// if let EvalOutcome::Report(report) = evaluator.evaluate(0, &request) {
///     println!("{report:?}");
/// }
/// # Ok::<(), sweeper_eval::EvaluatorError>(())
/// ```
pub struct CommandEvaluator {
    spec: CommandSpec,
    /// The persistent workers, `None` for a one-shot evaluator.
    workers: Option<Workers>,
}

impl CommandEvaluator {
    /// Checks `spec` (a non-empty command, a positive timeout, at least one worker when
    /// persistent). Starts nothing: persistent workers start on their first candidate.
    pub fn new(spec: CommandSpec) -> Result<CommandEvaluator, EvaluatorError> {
        if spec.argv.first().is_none_or(String::is_empty) {
            return Err(EvaluatorError::EmptyCommand);
        }
        if spec.timeout.is_zero() {
            return Err(EvaluatorError::ZeroTimeout);
        }
        let workers = if spec.persistent {
            if spec.workers == 0 {
                return Err(EvaluatorError::NoWorkers);
            }
            Some(Workers::new(spec.workers))
        } else {
            None
        };
        Ok(CommandEvaluator { spec, workers })
    }

    /// The spec this evaluator runs.
    pub fn spec(&self) -> &CommandSpec {
        &self.spec
    }

    /// How many stdout lines of its persistent workers were dropped, credited to no
    /// candidate, so far: answers carrying another candidate's `id`, lines printed while no
    /// candidate was out, and lines over the buffer bound. Always 0 for a one-shot
    /// evaluator. Nothing is logged when a line is dropped: a caller that wants to warn
    /// reads this (once a sweep is over, say), so the note comes once, not per line.
    pub fn dropped_lines(&self) -> u64 {
        self.workers.as_ref().map_or(0, Workers::dropped_lines)
    }

    /// How the processes of each evaluation are contained on this machine, decided once
    /// per process: `"cgroup"` (a cgroup v2 per evaluation), `"subreaper"` (sweeper as a
    /// child subreaper, marked processes killed and reaped) or `"process-group"` (the
    /// process group alone). See [Containment](CommandEvaluator#containment).
    pub fn containment() -> &'static str {
        process::containment().name()
    }
}

impl fmt::Debug for CommandEvaluator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandEvaluator")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl Evaluator for CommandEvaluator {
    fn evaluate(&self, worker: usize, request: &EvalRequest) -> EvalOutcome {
        let mut line = match serde_json::to_vec(request) {
            Ok(bytes) => bytes,
            Err(e) => return EvalOutcome::Failed(format!("cannot encode the candidate: {e}")),
        };
        line.push(b'\n');
        match &self.workers {
            Some(workers) => workers.evaluate(&self.spec, worker, request.id, &line),
            None => run_once(&self.spec, line),
        }
    }

    /// One note per persistent worker that had stdout lines dropped.
    fn notes(&self) -> Vec<String> {
        let Some(workers) = &self.workers else {
            return Vec::new();
        };
        workers
            .dropped_per_worker()
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(worker, &n)| {
                let lines = if n == 1 { "line" } else { "lines" };
                format!(
                    "persistent worker {worker} printed {n} stdout {lines} that answered no candidate (another candidate's `id`, a line while none was out, or over the buffer bound); they were dropped. Print logs on stderr, and answer each candidate once with its `id`"
                )
            })
            .collect()
    }
}

impl Drop for CommandEvaluator {
    fn drop(&mut self) {
        if let Some(workers) = &mut self.workers {
            workers.shut_down();
        }
    }
}

/// Runs one one-shot evaluation: spawn, write, collect, judge.
fn run_once(spec: &CommandSpec, input: Vec<u8>) -> EvalOutcome {
    run_once_in(spec, input, process::containment())
}

/// [`run_once`] with the containment given (the tests try each one).
fn run_once_in(spec: &CommandSpec, input: Vec<u8>, containment: Containment) -> EvalOutcome {
    let deadline = deadline_after(spec.timeout);
    let mut proc = match Proc::spawn_in(spec, StdoutMode::Whole, containment) {
        Ok(proc) => proc,
        Err(e) => return EvalOutcome::Failed(start_failure(spec, &e)),
    };
    proc.send(input);
    proc.close_stdin();

    let mut exited = false;
    let mut stdout = None;
    let mut stderr_closed = false;
    // Set when the evaluator exits: from then on its exit decides, not the limit.
    let mut pipes_deadline = deadline;
    while !(exited && stdout.is_some() && stderr_closed) {
        match proc.recv_timeout(pipes_deadline.saturating_duration_since(Instant::now())) {
            Ok(Event::Exited) => {
                exited = true;
                // The evaluation is over: what the evaluator left running (in its group or
                // its containment) would hold the pipes open and outlive the sweep.
                proc.kill_all();
                pipes_deadline = Instant::now() + PIPES_GRACE;
            }
            Ok(Event::StdoutAll(bytes)) => stdout = Some(Ok(bytes)),
            Ok(Event::StdoutError(e)) => stdout = Some(Err(e)),
            Ok(Event::StdoutTooLarge) => {
                let _ = proc.finish();
                return EvalOutcome::Failed(format!(
                    "evaluator printed more than {} MiB on stdout",
                    MAX_STDOUT_BYTES >> 20
                ));
            }
            Ok(Event::StderrClosed) => stderr_closed = true,
            // Line events only come in line mode, and stdin was closed after the candidate.
            Ok(Event::StdoutLine(_) | Event::StdoutClosed | Event::StdinClosed) => {}
            Err(RecvTimeoutError::Timeout) if exited => break,
            Err(RecvTimeoutError::Timeout) => {
                let _ = proc.finish();
                return EvalOutcome::TimedOut(timeout_reason(spec.timeout));
            }
            // Every thread is gone: nothing more can come.
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    if stdout.is_none() && exited {
        // A process out of the containment's reach still holds stdout: the evaluator has
        // exited, so what it printed is all in already.
        stdout = Some(Ok(proc.stdout_so_far()));
    }

    let status = proc.finish();
    let tail = proc.stderr_tail();
    let code = status.and_then(|s| s.code());
    match code {
        Some(0) => {}
        Some(EXIT_UNSUPPORTED) => {
            return EvalOutcome::Unsupported(proc.stderr_last_line().unwrap_or_else(|| {
                format!("evaluator exited with code {EXIT_UNSUPPORTED} (unsupported) and no reason on stderr")
            }));
        }
        Some(EXIT_INFEASIBLE) => {
            return EvalOutcome::Infeasible(proc.stderr_last_line().unwrap_or_else(|| {
                format!("evaluator exited with code {EXIT_INFEASIBLE} (infeasible) and no reason on stderr")
            }));
        }
        _ => {
            return EvalOutcome::Failed(with_tail(
                format!("evaluator {}", process::describe_exit(status)),
                tail,
            ));
        }
    }
    let bytes = match stdout {
        Some(Ok(bytes)) => bytes,
        Some(Err(e)) => return EvalOutcome::Failed(format!("cannot read evaluator output: {e}")),
        None => {
            return EvalOutcome::Failed(with_tail("evaluator output was lost".to_owned(), tail));
        }
    };
    answer_outcome(&bytes, tail).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// `tests/evaluators/detach.sh`: a one-shot evaluator whose `setsid` child keeps stdout
    /// open; with `hang` it never answers.
    fn detach(pid_file: &Path, hang: bool, timeout: Duration) -> CommandSpec {
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../sweeper-cli/tests/evaluators/detach.sh");
        let mut argv = vec![
            "sh".to_owned(),
            script.to_string_lossy().into_owned(),
            pid_file.to_string_lossy().into_owned(),
        ];
        if hang {
            argv.push("hang".to_owned());
        }
        CommandSpec {
            timeout,
            ..CommandSpec::new(argv)
        }
    }

    fn alive(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|text| {
            !text
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    }

    fn read_pid(path: &Path) -> u32 {
        std::fs::read_to_string(path)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn with_the_process_group_alone_the_exit_still_decides() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("detached.pid");
        let spec = detach(&pid_file, false, Duration::from_secs(20));
        let started = Instant::now();
        let outcome = run_once_in(&spec, b"{}".to_vec(), Containment::ProcessGroup);
        let took = started.elapsed();
        let EvalOutcome::Report(report) = outcome else {
            panic!("expected a report, got {outcome:?}");
        };
        assert_eq!(report["throughput"], 5.0);
        assert!(took < Duration::from_secs(5), "took {took:?}");
        // Out of the group's reach, the child survives (what the docs say of other Unix
        // systems); the test ends it.
        let detached = read_pid(&pid_file);
        assert!(alive(detached));
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(detached.cast_signed()),
            nix::sys::signal::Signal::SIGKILL,
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn as_a_subreaper_a_timeout_kills_the_detached_child() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("detached.pid");
        let spec = detach(&pid_file, true, Duration::from_secs(2));
        assert_eq!(
            run_once_in(&spec, b"{}".to_vec(), Containment::Subreaper),
            EvalOutcome::TimedOut(timeout_reason(Duration::from_secs(2)))
        );
        let detached = read_pid(&pid_file);
        assert!(
            !Path::new(&format!("/proc/{detached}")).exists(),
            "killed and reaped"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn as_a_subreaper_the_report_comes_at_the_exit_and_the_child_is_reaped() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("detached.pid");
        let spec = detach(&pid_file, false, Duration::from_secs(20));
        let started = Instant::now();
        let outcome = run_once_in(&spec, b"{}".to_vec(), Containment::Subreaper);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(matches!(outcome, EvalOutcome::Report(_)), "{outcome:?}");
        let detached = read_pid(&pid_file);
        assert!(
            !Path::new(&format!("/proc/{detached}")).exists(),
            "killed and reaped"
        );
    }
}
