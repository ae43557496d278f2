//! One evaluator process in its own process group, with its pipes served by threads.
//!
//! Every pipe has its own thread so that no evaluator can deadlock sweeper by filling one
//! pipe while sweeper waits on another: a writer thread feeds stdin, a reader thread reads
//! stdout (whole, or line by line), a drain thread keeps a bounded tail of stderr, and a
//! waiter thread notices the exit. The threads report on one channel, so the caller waits on
//! a single receiver with a deadline. Everything they keep is bounded: the whole stdout of a
//! one-shot evaluator at [`MAX_STDOUT_BYTES`], the stderr tail, and the lines a persistent
//! worker printed that nobody has taken yet ([`MAX_QUEUED_LINES`], [`MAX_QUEUED_BYTES`];
//! the excess is dropped and counted).
//!
//! The waiter uses `waitid(WEXITED | WNOWAIT)`, which reports the exit without reaping the
//! process. The process is reaped only by [`Proc::finish`] (or on drop), after the last
//! `killpg`: an unreaped leader, even a zombie, keeps its process-group id from being reused,
//! so the group kill can never hit an unrelated process. What left the group is the
//! business of [`contain`].

mod contain;
mod guard;
mod sys;

pub(crate) use contain::Containment;
use contain::Jail;

use super::spec::{CommandSpec, EvaluatorError, RUN_MARK_VAR};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;
use std::collections::{BTreeSet, VecDeque};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Component, Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// The most an evaluator may print on stdout for one candidate (one-shot: the whole output;
/// persistent: one line).
pub(super) const MAX_STDOUT_BYTES: usize = 16 << 20;

/// How many lines of a persistent worker's stdout may wait to be taken; later ones are
/// dropped (and counted) until the queue shrinks. An answer is one line, so a worker that
/// needs more is printing something else.
pub(super) const MAX_QUEUED_LINES: usize = 1024;

/// How many bytes those waiting lines may hold, except that one line (up to
/// [`MAX_STDOUT_BYTES`]) is always let through when none waits.
pub(super) const MAX_QUEUED_BYTES: usize = 4 << 20;

/// How many bytes of stderr are kept (the last ones).
pub(super) const STDERR_KEEP_BYTES: usize = 16 << 10;

/// How many stderr lines a failure reason quotes.
pub(super) const REASON_LINES: usize = 5;

/// How many characters of one stderr line a failure reason quotes.
const REASON_LINE_CHARS: usize = 240;

/// What a pipe thread or the waiter saw.
#[derive(Debug)]
pub(super) enum Event {
    /// The leader process exited (not reaped yet).
    Exited,
    /// Stderr reached end of file.
    StderrClosed,
    /// The whole of stdout, at end of file (whole mode).
    StdoutAll(Vec<u8>),
    /// One line of stdout, without its newline (line mode).
    StdoutLine(Vec<u8>),
    /// Stdout reached end of file (line mode).
    StdoutClosed,
    /// Stdout went over [`MAX_STDOUT_BYTES`]; the reader stopped.
    StdoutTooLarge,
    /// Reading stdout failed.
    StdoutError(String),
    /// Writing to stdin failed (the process closed it, or died): what was sent after that
    /// never reached it. Sent again for each later send.
    StdinClosed,
}

/// How stdout is read.
#[derive(Debug, Clone)]
pub(super) enum StdoutMode {
    /// To end of file, as one report (one-shot evaluators).
    Whole,
    /// Line by line, one answer per line (persistent evaluators); lines over the queue
    /// bounds are dropped and counted in `dropped`.
    Lines {
        /// Where dropped lines are counted.
        dropped: Arc<AtomicU64>,
    },
}

/// The lines (and their bytes) that the line reader sent and nobody took yet.
#[derive(Debug, Default)]
struct LineQueue {
    lines: AtomicUsize,
    bytes: AtomicUsize,
}

impl LineQueue {
    /// Whether a line of `len` bytes may join the queue; if so it is counted in.
    fn admit(&self, len: usize) -> bool {
        let lines = self.lines.load(Ordering::Acquire);
        let bytes = self.bytes.load(Ordering::Acquire);
        if lines >= MAX_QUEUED_LINES || (lines > 0 && bytes + len > MAX_QUEUED_BYTES) {
            return false;
        }
        self.lines.fetch_add(1, Ordering::AcqRel);
        self.bytes.fetch_add(len, Ordering::AcqRel);
        true
    }

    /// A line of `len` bytes was taken.
    fn taken(&self, len: usize) {
        self.lines.fetch_sub(1, Ordering::AcqRel);
        self.bytes.fetch_sub(len, Ordering::AcqRel);
    }
}

/// How far stdin got: bytes handed to the writer thread, and bytes it wrote into the pipe.
#[derive(Debug, Default)]
struct InputProgress {
    queued: AtomicU64,
    written: AtomicU64,
    /// The writer thread is inside a `write` or has not yet counted what one wrote: until it
    /// clears, `written` may lag bytes the process already read.
    writing: AtomicBool,
    /// Tests only: how long the writer waits between a write and counting it, to widen the
    /// window a loaded machine opens by preempting it there.
    #[cfg(test)]
    pause_before_counting: std::sync::Mutex<Duration>,
}

/// How long [`Proc::unread_input`] waits for the writer thread to count its last write. It is
/// asked once the process is dead or has closed stdin, when a write returns at once; the
/// bound only matters if the thread is not scheduled for that long.
const WRITER_SETTLE: Duration = Duration::from_secs(2);

/// A running evaluator process, its process group and its containment.
pub(super) struct Proc {
    child: Child,
    group: Pid,
    stdin: Option<Sender<Vec<u8>>>,
    /// The write end of stdin, shared with the writer thread, to ask it what the process
    /// did not read; `None` once stdin is closed.
    stdin_pipe: Option<Arc<File>>,
    input: Arc<InputProgress>,
    stderr: Arc<Mutex<Tail>>,
    /// What stdout brought so far (whole mode).
    stdout_buf: Arc<Mutex<Vec<u8>>>,
    queue: Arc<LineQueue>,
    /// Events from the pipe threads and the waiter.
    events: Receiver<Event>,
    jail: Jail,
    reaped: bool,
}

impl Proc {
    /// Starts `spec`'s command in a new process group, contained as this process contains
    /// evaluations, with piped stdio served by threads.
    pub(super) fn spawn(spec: &CommandSpec, mode: StdoutMode) -> io::Result<Proc> {
        Proc::spawn_in(spec, mode, contain::containment())
    }

    /// As [`Proc::spawn`], with the containment given.
    pub(super) fn spawn_in(
        spec: &CommandSpec,
        mode: StdoutMode,
        containment: Containment,
    ) -> io::Result<Proc> {
        let (program, args) = spec
            .argv
            .split_first()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "empty command"))?;
        let mut command = Command::new(program);
        command
            .args(args)
            .envs(&spec.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(dir) = &spec.cwd {
            command.current_dir(dir);
        }
        let mut jail = Jail::prepare(&mut command, containment);
        let mut child = command.spawn()?;
        let pid = child.id();
        jail.started(pid);
        let (stdin, stdout, stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (tx, events) = mpsc::channel();
        live_groups().insert(pid.cast_signed());
        guard::watch(pid.cast_signed());
        // From here on, an early return drops `proc`, which kills the group and reaps.
        let mut proc = Proc {
            child,
            group: Pid::from_raw(pid.cast_signed()),
            stdin: None,
            stdin_pipe: None,
            input: Arc::new(InputProgress::default()),
            stderr: Arc::new(Mutex::new(Tail::default())),
            stdout_buf: Arc::new(Mutex::new(Vec::new())),
            queue: Arc::new(LineQueue::default()),
            events,
            jail,
            reaped: false,
        };
        let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            return Err(io::Error::other("evaluator pipes were not set up"));
        };
        let pipe = Arc::new(File::from(OwnedFd::from(stdin)));
        proc.stdin = Some(spawn_writer(
            Arc::clone(&pipe),
            Arc::clone(&proc.input),
            tx.clone(),
        )?);
        proc.stdin_pipe = Some(pipe);
        let tail = Arc::clone(&proc.stderr);
        let stderr_tx = tx.clone();
        thread::Builder::new()
            .name("sweeper-eval-stderr".to_owned())
            .spawn(move || drain_stderr(stderr, &tail, &stderr_tx))?;
        let stdout_tx = tx.clone();
        let buf = Arc::clone(&proc.stdout_buf);
        let queue = Arc::clone(&proc.queue);
        thread::Builder::new()
            .name("sweeper-eval-stdout".to_owned())
            .spawn(move || match mode {
                StdoutMode::Whole => read_whole(stdout, &buf, &stdout_tx),
                StdoutMode::Lines { dropped } => read_lines(stdout, &queue, &dropped, &stdout_tx),
            })?;
        thread::Builder::new()
            .name("sweeper-eval-wait".to_owned())
            .spawn(move || wait_for_exit(pid, &tx))?;
        Ok(proc)
    }

    /// Queues bytes for the process's stdin (dropped once stdin is closed; a write that
    /// fails is reported as [`Event::StdinClosed`]).
    pub(super) fn send(&self, bytes: Vec<u8>) {
        if let Some(stdin) = &self.stdin {
            let len = bytes.len() as u64;
            self.input.queued.fetch_add(len, Ordering::AcqRel);
            if stdin.send(bytes).is_err() {
                self.input.queued.fetch_sub(len, Ordering::AcqRel);
            }
        }
    }

    /// Closes stdin once the queued bytes are written: the process sees end of file.
    pub(super) fn close_stdin(&mut self) {
        self.stdin = None;
        self.stdin_pipe = None;
    }

    /// How many of the bytes sent to stdin the process has not read: those the writer has
    /// not written (it stops at a broken pipe) and, on Linux, those still in the pipe.
    /// `None` once stdin is closed.
    ///
    /// Asked after the process died or closed stdin: it first waits (up to
    /// [`WRITER_SETTLE`]) for the writer thread to count a write in progress, since a line
    /// the process read while its write was not yet counted would look unread and be sent
    /// to another worker a second time.
    pub(super) fn unread_input(&self) -> Option<u64> {
        let pipe = self.stdin_pipe.as_ref()?;
        let until = Instant::now() + WRITER_SETTLE;
        while self.input.writing.load(Ordering::Acquire) && Instant::now() < until {
            thread::sleep(Duration::from_millis(1));
        }
        let queued = self.input.queued.load(Ordering::Acquire);
        let written = self.input.written.load(Ordering::Acquire);
        let in_pipe = sys::unread_in_pipe(pipe.as_fd()).unwrap_or(0) as u64;
        Some(queued.saturating_sub(written) + in_pipe)
    }

    /// Whether the process no longer reads its stdin: nothing holds the pipe's read end
    /// (the process closed it or died). Checked now, without waiting.
    pub(super) fn input_closed(&self) -> bool {
        let Some(pipe) = &self.stdin_pipe else {
            return false;
        };
        let mut fds = [PollFd::new(pipe.as_fd(), PollFlags::POLLOUT)];
        match poll(&mut fds, PollTimeout::ZERO) {
            Ok(_) => fds[0]
                .revents()
                .is_some_and(|r| r.intersects(PollFlags::POLLERR | PollFlags::POLLHUP)),
            Err(_) => false,
        }
    }

    /// Waits up to `timeout` for the next event.
    pub(super) fn recv_timeout(&self, timeout: Duration) -> Result<Event, RecvTimeoutError> {
        let event = self.events.recv_timeout(timeout)?;
        Ok(self.took(event))
    }

    /// The next event, if one is there.
    pub(super) fn try_recv(&self) -> Result<Event, TryRecvError> {
        let event = self.events.try_recv()?;
        Ok(self.took(event))
    }

    fn took(&self, event: Event) -> Event {
        if let Event::StdoutLine(line) = &event {
            self.queue.taken(line.len());
        }
        event
    }

    /// What stdout brought so far (whole mode), taken: for an evaluator that exited while a
    /// process it left behind, out of reach, holds stdout open.
    pub(super) fn stdout_so_far(&self) -> Vec<u8> {
        std::mem::take(
            &mut *self
                .stdout_buf
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Sends SIGKILL to the whole process group (the leader and everything it started that
    /// stayed in the group) and to everything else its containment holds. Safe until
    /// [`Proc::finish`]: the unreaped leader pins the group id.
    pub(super) fn kill_all(&self) {
        if !self.reaped {
            // ESRCH (the group is already gone) is the expected failure; nothing to do.
            let _ = killpg(self.group, Signal::SIGKILL);
            self.jail.kill(self.child.id());
        }
    }

    /// Whether the leader has exited, checked now (the waiter thread's event may still be on
    /// its way).
    pub(super) fn has_exited(&self) -> bool {
        if self.reaped {
            return true;
        }
        let pid = Pid::from_raw(self.child.id().cast_signed());
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        loop {
            match waitid(Id::Pid(pid), flags) {
                Err(Errno::EINTR) => {}
                Ok(WaitStatus::StillAlive) => return false,
                _ => return true,
            }
        }
    }

    /// The last lines of stderr, trimmed and joined on one line, or `None` if stderr was
    /// empty: the context of a failure.
    pub(super) fn stderr_tail(&self) -> Option<String> {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .last_lines(REASON_LINES)
    }

    /// The last non-empty line of stderr: the reason an evaluator gives for an exit code
    /// that means something (unsupported, infeasible). One line, so that the same reason
    /// given after different log lines is tallied as one.
    pub(super) fn stderr_last_line(&self) -> Option<String> {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .last_lines(1)
    }

    /// Kills what is left of the process group and of the containment, reaps the leader,
    /// then kills and reaps what it left behind: its exit status, or `None` if it could not
    /// be had.
    pub(super) fn finish(&mut self) -> Option<ExitStatus> {
        self.kill_all();
        self.close_stdin();
        if self.reaped {
            return None;
        }
        self.reaped = true;
        // Out of the registry before the reap, under its lock: `kill_running_evaluators`
        // never signals a group whose id could have been reused.
        live_groups().remove(&self.group.as_raw());
        guard::unwatch(self.group.as_raw());
        let status = self.child.wait().ok();
        self.jail.release(self.child.id());
        status
    }
}

/// The process groups of the evaluators that are running (spawned and not reaped).
static LIVE_GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn live_groups() -> MutexGuard<'static, BTreeSet<i32>> {
    LIVE_GROUPS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Kills the process group of every evaluator this process is running (one-shot
/// evaluations in flight and persistent workers), and what their containment holds (their
/// cgroups, or the processes carrying their mark), and returns how many groups were
/// signalled.
///
/// Evaluators run in process groups of their own, so a Ctrl-C at the terminal reaches
/// sweeper only, and an evaluator outlives a sweeper that dies without unwinding. A binary
/// that handles SIGINT or SIGTERM calls this from its handler before exiting. The
/// evaluations in flight then end as failures (killed by SIGKILL). Safe to call from any
/// thread, at any time: a group is signalled only while its leader is unreaped.
pub fn kill_running_evaluators() -> usize {
    let signalled = {
        let groups = live_groups();
        for &group in groups.iter() {
            let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
        }
        groups.len()
    };
    // Not under the registry's lock: this waits (bounded) for the cgroups to empty, and the
    // evaluations it kills reap their leaders meanwhile.
    contain::kill_all_contained();
    signalled
}

/// The mark of the sweep whose output directory is `out_dir`: 16 hex digits of a hash of
/// its canonical path (what exists of it canonicalized, the rest appended with `..`
/// resolved), the same for `--out DIR` and `--resume DIR` however either is spelled.
pub fn run_mark(out_dir: &Path) -> String {
    let absolute = std::path::absolute(out_dir).unwrap_or_else(|_| out_dir.to_owned());
    // Component by component: what exists is canonicalized (links and `..` resolved by the
    // system); what does not exist yet holds no link, so `..` there is lexical. Either way
    // the mark is the one the created directory's canonical path gives on resume
    // (`--out new/../o` and `--resume o` agree).
    let mut canonical = PathBuf::new();
    for part in absolute.components() {
        let next = canonical.join(part);
        if let Ok(found) = next.canonicalize() {
            canonical = found;
        } else if part == Component::ParentDir {
            canonical.pop();
        } else if part != Component::CurDir {
            canonical = next;
        }
    }
    // FNV-1a: stable across builds, which a resume by a rebuilt sweeper needs.
    let hash = canonical
        .as_os_str()
        .as_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    format!("{hash:016x}")
}

/// Ends every process that carries `mark` ([`RUN_MARK_VAR`]) in its environment: what the
/// evaluators of an earlier run of the sweep left running when that run was killed (the
/// guard ends their process groups as the run dies; a process that left its group is ended
/// here). Sends SIGKILL and waits (up to 10 s) until none is left; returns how many were
/// ended, or [`EvaluatorError::LeftBehind`] naming those still alive. `sweeper run
/// --resume` calls it, holding the journal's lock, before anything is evaluated, so that a
/// trial is never evaluated beside its earlier evaluation. Only processes of this user that
/// keep their environment are found (`/proc`, Linux; elsewhere nothing is).
pub fn end_leftover_evaluators(mark: &str) -> Result<usize, EvaluatorError> {
    let entry = format!("{RUN_MARK_VAR}={mark}");
    let (ended, alive) = contain::end_marked(entry.as_bytes(), Duration::from_secs(10));
    if alive.is_empty() {
        Ok(ended)
    } else {
        Err(EvaluatorError::LeftBehind {
            mark: mark.to_owned(),
            pids: alive,
        })
    }
}

/// How this process contains the evaluations it starts (see the docs of [`contain`]).
pub(super) fn containment() -> Containment {
    contain::containment()
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// How a process ended, for a failure reason: `exited with code 2`, `killed by signal
/// SIGKILL`.
pub(super) fn describe_exit(status: Option<ExitStatus>) -> String {
    match status {
        Some(status) => match (status.code(), status.signal()) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(signal)) => match Signal::try_from(signal) {
                Ok(signal) => format!("killed by signal {}", signal.as_str()),
                Err(_) => format!("killed by signal {signal}"),
            },
            (None, None) => "ended with an unknown status".to_owned(),
        },
        None => "ended with an unknown status".to_owned(),
    }
}

fn spawn_writer(
    stdin: Arc<File>,
    progress: Arc<InputProgress>,
    tx: Sender<Event>,
) -> io::Result<Sender<Vec<u8>>> {
    let (to_writer, rx) = mpsc::channel::<Vec<u8>>();
    thread::Builder::new()
        .name("sweeper-eval-stdin".to_owned())
        .spawn(move || {
            let mut broken = false;
            for bytes in rx {
                let mut rest = &bytes[..];
                while !broken && !rest.is_empty() {
                    progress.writing.store(true, Ordering::Release);
                    match (&*stdin).write(rest) {
                        Ok(0) => broken = true,
                        Ok(n) => {
                            #[cfg(test)]
                            thread::sleep(
                                *progress
                                    .pause_before_counting
                                    .lock()
                                    .unwrap_or_else(PoisonError::into_inner),
                            );
                            progress.written.fetch_add(n as u64, Ordering::AcqRel);
                            rest = &rest[n..];
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        // The process closed stdin or died: nothing sent from now on can
                        // reach it. The waiter reports a death; this reports the pipe.
                        Err(_) => broken = true,
                    }
                    progress.writing.store(false, Ordering::Release);
                }
                if broken {
                    let _ = tx.send(Event::StdinClosed);
                }
            }
            // `stdin` drops here (with the `Proc`'s handle, closed first): the process sees
            // end of file.
        })?;
    Ok(to_writer)
}

fn read_whole(mut stdout: ChildStdout, buf: &Mutex<Vec<u8>>, tx: &Sender<Event>) {
    let mut chunk = vec![0_u8; 64 << 10];
    let event = loop {
        match stdout.read(&mut chunk) {
            Ok(0) => {
                break Event::StdoutAll(std::mem::take(
                    &mut *buf.lock().unwrap_or_else(PoisonError::into_inner),
                ));
            }
            Ok(n) => {
                let mut buf = buf.lock().unwrap_or_else(PoisonError::into_inner);
                if buf.len() + n > MAX_STDOUT_BYTES {
                    break Event::StdoutTooLarge;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => break Event::StdoutError(e.to_string()),
        }
    };
    let _ = tx.send(event);
}

fn read_lines(stdout: ChildStdout, queue: &LineQueue, dropped: &AtomicU64, tx: &Sender<Event>) {
    let mut reader = BufReader::with_capacity(64 << 10, stdout);
    loop {
        let mut line = Vec::new();
        let read = (&mut reader)
            .take(MAX_STDOUT_BYTES as u64 + 1)
            .read_until(b'\n', &mut line);
        let event = match read {
            Ok(0) => Event::StdoutClosed,
            Ok(_) if line.last() == Some(&b'\n') => {
                line.pop();
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                Event::StdoutLine(line)
            }
            Ok(_) if line.len() > MAX_STDOUT_BYTES => Event::StdoutTooLarge,
            // The last line, without a newline; the next read sees end of file.
            Ok(_) => Event::StdoutLine(line),
            Err(e) => Event::StdoutError(e.to_string()),
        };
        if let Event::StdoutLine(line) = &event
            && !queue.admit(line.len())
        {
            // Nobody takes lines this fast: the worker prints what answers nothing. It is
            // read all the same, so that the worker never blocks on a full pipe.
            dropped.fetch_add(1, Ordering::Relaxed);
            continue;
        }
        let last = matches!(
            event,
            Event::StdoutClosed | Event::StdoutTooLarge | Event::StdoutError(_)
        );
        if tx.send(event).is_err() || last {
            return;
        }
    }
}

fn drain_stderr(mut stderr: impl Read, tail: &Mutex<Tail>, tx: &Sender<Event>) {
    let mut buf = [0_u8; 8 << 10];
    loop {
        match stderr.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => tail
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let _ = tx.send(Event::StderrClosed);
}

fn wait_for_exit(pid: u32, tx: &Sender<Event>) {
    let pid = Pid::from_raw(pid.cast_signed());
    // WNOWAIT: see the exit, leave the zombie for `Proc::finish` to reap. Any other result
    // than EINTR is the exit, or ECHILD because `finish` already reaped it: either way the
    // leader is gone.
    while let Err(Errno::EINTR) = waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT)
    {
    }
    let _ = tx.send(Event::Exited);
}

/// The last bytes of a stream, bounded.
#[derive(Debug, Default)]
struct Tail {
    bytes: VecDeque<u8>,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        let chunk = &chunk[chunk.len().saturating_sub(STDERR_KEEP_BYTES)..];
        let overflow = (self.bytes.len() + chunk.len()).saturating_sub(STDERR_KEEP_BYTES);
        self.bytes.drain(..overflow);
        self.bytes.extend(chunk);
    }

    fn last_lines(&self, count: usize) -> Option<String> {
        let (front, back) = self.bytes.as_slices();
        last_lines(&[front, back].concat(), count)
    }
}

/// The last `count` non-empty lines of `bytes` (each trimmed and cut to 240 characters),
/// joined with ` | `: the stderr tail a failure reason quotes.
pub(super) fn last_lines(bytes: &[u8], count: usize) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines: Vec<String> = text
        .lines()
        .rev()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .take(count)
        .map(|line| {
            let mut short: String = line.chars().take(REASON_LINE_CHARS).collect();
            if short.len() < line.len() {
                short.push('…');
            }
            short
        })
        .collect();
    if lines.is_empty() {
        return None;
    }
    lines.reverse();
    Some(lines.join(" | "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_mark_is_the_same_however_the_directory_was_spelled_before_it_existed() {
        let dir = tempfile::tempdir().unwrap();
        let roundabout = dir.path().join("not-there/../sub/./out");
        let before = run_mark(&roundabout);
        std::fs::create_dir_all(&roundabout).unwrap();
        let created = dir.path().join("sub/out");
        assert_eq!(
            before,
            run_mark(&created),
            "the mark before and after creation"
        );
        assert_eq!(before, run_mark(&created.canonicalize().unwrap()));
        assert_ne!(before, run_mark(dir.path()));
    }
    use std::path::Path;

    // A loaded machine can preempt the writer thread between a write and counting it; if
    // the process reads the line and dies in that window, the line must not look unread
    // (the persistent evaluator would send the candidate to a new worker a second time:
    // the flake of `a_persistent_worker_that_dies_fails_its_candidate_and_is_restarted`).
    #[test]
    fn a_line_read_before_its_write_was_counted_is_not_unread() {
        let spec = CommandSpec::new(vec![
            "sh".to_owned(),
            "-c".to_owned(),
            "read line; exit 1".to_owned(),
        ]);
        let mut proc = Proc::spawn(
            &spec,
            StdoutMode::Lines {
                dropped: Arc::default(),
            },
        )
        .unwrap();
        *proc.input.pause_before_counting.lock().unwrap() = Duration::from_millis(500);
        proc.send(b"{\"id\": 1}\n".to_vec());
        loop {
            match proc.recv_timeout(Duration::from_secs(10)) {
                Ok(Event::Exited) => break,
                Ok(_) => {}
                Err(e) => panic!("the shell did not exit: {e:?}"),
            }
        }
        proc.kill_all();
        assert_eq!(proc.unread_input(), Some(0), "the shell read its line");
        proc.finish();
    }

    // Calling `kill_running_evaluators` here would also kill the evaluators of tests running
    // alongside; what it relies on is the registry, checked here.
    #[test]
    fn a_running_evaluator_is_registered_until_reaped() {
        let spec = CommandSpec::new(vec!["sleep".to_owned(), "60".to_owned()]);
        let mut proc = Proc::spawn(&spec, StdoutMode::Whole).unwrap();
        let group = proc.group.as_raw();
        assert!(live_groups().contains(&group));
        assert_eq!(describe_exit(proc.finish()), "killed by signal SIGKILL");
        assert!(!live_groups().contains(&group));
    }

    /// A shell that starts `sleep 30` in a session of its own (out of its process group),
    /// writes the sleeper's pid to `pid_file` and exits.
    fn detaching(pid_file: &Path) -> CommandSpec {
        let script = r#"setsid sh -c 'echo $$ > "$0.tmp" && mv "$0.tmp" "$0"; exec sleep 30' "$0" &
            while [ ! -e "$0" ]; do sleep 0.01; done"#;
        CommandSpec::new(vec![
            "sh".to_owned(),
            "-c".to_owned(),
            script.to_owned(),
            pid_file.to_string_lossy().into_owned(),
        ])
    }

    fn wait_exit(proc: &Proc) {
        loop {
            match proc.recv_timeout(Duration::from_secs(20)) {
                Ok(Event::Exited) => return,
                Ok(_) => {}
                Err(e) => panic!("the shell did not exit: {e}"),
            }
        }
    }

    /// The parent pid and the state letter of `/proc/PID/stat`, if the process exists.
    fn parent_and_state(pid: u32) -> Option<(u32, char)> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let mut fields = text.rsplit_once(')')?.1.split_whitespace();
        let state = fields.next()?.chars().next()?;
        Some((fields.next()?.parse().ok()?, state))
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn as_a_subreaper_sweeper_kills_and_reaps_what_left_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("sleeper.pid");
        let spec = detaching(&pid_file);
        let mut proc = Proc::spawn_in(&spec, StdoutMode::Whole, Containment::Subreaper).unwrap();
        proc.close_stdin();
        wait_exit(&proc);
        let sleeper: u32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Orphaned by the shell, it was re-parented to sweeper rather than to init.
        assert_eq!(
            parent_and_state(sleeper).map(|(parent, _)| parent),
            Some(std::process::id())
        );
        proc.finish();
        assert_eq!(
            parent_and_state(sleeper),
            None,
            "killed and reaped, no zombie"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn in_a_cgroup_what_left_the_group_is_killed_and_the_cgroup_removed() {
        // Only where sweeper may make cgroups (root, or a delegated subtree): elsewhere the
        // subreaper test above covers what runs instead.
        if containment() != Containment::Cgroup {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("sleeper.pid");
        let mut proc = Proc::spawn_in(
            &detaching(&pid_file),
            StdoutMode::Whole,
            Containment::Cgroup,
        )
        .unwrap();
        proc.close_stdin();
        wait_exit(&proc);
        let sleeper: u32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let cgroup = std::fs::read_to_string(format!("/proc/{sleeper}/cgroup")).unwrap();
        let name = cgroup
            .lines()
            .find_map(|l| l.strip_prefix("0::"))
            .and_then(|path| path.rsplit('/').next())
            .unwrap()
            .to_owned();
        assert!(name.starts_with("sweeper-"), "{cgroup}");
        proc.finish();
        // Killed; its new parent (init, or an outer subreaper) reaps it.
        assert!(
            parent_and_state(sleeper).is_none_or(|(_, state)| state == 'Z'),
            "{:?}",
            parent_and_state(sleeper)
        );
        let leftover = contain::cgroup_exists(&name);
        assert!(!leftover, "the cgroup {name} was removed");
    }

    #[test]
    fn the_tail_keeps_the_last_lines_trimmed_on_one_line() {
        let mut tail = Tail::default();
        for i in 1..=8 {
            tail.push(format!("  line {i}  \n\n").as_bytes());
        }
        assert_eq!(
            tail.last_lines(5).as_deref(),
            Some("line 4 | line 5 | line 6 | line 7 | line 8")
        );
    }

    #[test]
    fn the_tail_is_bounded() {
        let mut tail = Tail::default();
        for _ in 0..10 {
            tail.push(&vec![b'x'; STDERR_KEEP_BYTES / 3]);
        }
        tail.push(b"\nlast words\n");
        assert_eq!(tail.bytes.len(), STDERR_KEEP_BYTES);
        assert!(tail.last_lines(1).unwrap().starts_with("last words"));
        tail.push(&vec![b'y'; 3 * STDERR_KEEP_BYTES]);
        assert_eq!(tail.bytes.len(), STDERR_KEEP_BYTES);
    }

    #[test]
    fn an_empty_tail_has_no_lines() {
        let mut tail = Tail::default();
        assert_eq!(tail.last_lines(5), None);
        tail.push(b" \n\t\n");
        assert_eq!(tail.last_lines(5), None);
    }

    #[test]
    fn long_lines_are_shortened() {
        let mut tail = Tail::default();
        tail.push("é".repeat(1000).as_bytes());
        let line = tail.last_lines(1).unwrap();
        assert_eq!(line.chars().count(), REASON_LINE_CHARS + 1);
        assert!(line.ends_with('…'));
    }
}
