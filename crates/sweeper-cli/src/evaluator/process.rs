//! One evaluator process in its own process group, with its pipes served by threads.
//!
//! Every pipe has its own thread so that no evaluator can deadlock sweeper by filling one
//! pipe while sweeper waits on another: a writer thread feeds stdin, a reader thread reads
//! stdout (whole, or line by line), a drain thread keeps a bounded tail of stderr, and a
//! waiter thread notices the exit. The threads report on one channel, so the caller waits on
//! a single receiver with a deadline.
//!
//! The waiter uses `waitid(WEXITED | WNOWAIT)`, which reports the exit without reaping the
//! process. The process is reaped only by [`Proc::finish`] (or on drop), after the last
//! `killpg`: an unreaped leader, even a zombie, keeps its process-group id from being reused,
//! so the group kill can never hit an unrelated process.

use super::command::CommandSpec;
use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;
use std::collections::{BTreeSet, VecDeque};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;

/// The most an evaluator may print on stdout for one candidate (one-shot: the whole output;
/// persistent: one line).
pub(super) const MAX_STDOUT_BYTES: usize = 16 << 20;

/// How many bytes of stderr are kept (the last ones).
const STDERR_KEEP_BYTES: usize = 16 << 10;

/// How many stderr lines a failure reason quotes.
const REASON_LINES: usize = 5;

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
}

/// How stdout is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StdoutMode {
    /// To end of file, as one report (one-shot evaluators).
    Whole,
    /// Line by line, one answer per line (persistent evaluators).
    Lines,
}

/// A running evaluator process and its process group.
pub(super) struct Proc {
    child: Child,
    group: Pid,
    stdin: Option<Sender<Vec<u8>>>,
    stderr: Arc<Mutex<Tail>>,
    /// Events from the pipe threads and the waiter.
    pub(super) events: Receiver<Event>,
    reaped: bool,
}

impl Proc {
    /// Starts `spec`'s command in a new process group, with piped stdio served by threads.
    pub(super) fn spawn(spec: &CommandSpec, mode: StdoutMode) -> io::Result<Proc> {
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
        let mut child = command.spawn()?;
        let pid = child.id();
        let (stdin, stdout, stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let (tx, events) = mpsc::channel();
        live_groups().insert(pid as i32);
        // From here on, an early return drops `proc`, which kills the group and reaps.
        let mut proc = Proc {
            child,
            group: Pid::from_raw(pid as i32),
            stdin: None,
            stderr: Arc::new(Mutex::new(Tail::default())),
            events,
            reaped: false,
        };
        let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            return Err(io::Error::other("evaluator pipes were not set up"));
        };
        proc.stdin = Some(spawn_writer(stdin)?);
        let tail = Arc::clone(&proc.stderr);
        let stderr_tx = tx.clone();
        thread::Builder::new()
            .name("sweeper-eval-stderr".to_owned())
            .spawn(move || drain_stderr(stderr, &tail, &stderr_tx))?;
        let stdout_tx = tx.clone();
        thread::Builder::new()
            .name("sweeper-eval-stdout".to_owned())
            .spawn(move || match mode {
                StdoutMode::Whole => read_whole(stdout, &stdout_tx),
                StdoutMode::Lines => read_lines(stdout, &stdout_tx),
            })?;
        thread::Builder::new()
            .name("sweeper-eval-wait".to_owned())
            .spawn(move || wait_for_exit(pid, &tx))?;
        Ok(proc)
    }

    /// Queues bytes for the process's stdin (dropped silently once stdin is closed or the
    /// process stopped reading: the process's exit tells the rest).
    pub(super) fn send(&self, bytes: Vec<u8>) {
        if let Some(stdin) = &self.stdin {
            let _ = stdin.send(bytes);
        }
    }

    /// Closes stdin once the queued bytes are written: the process sees end of file.
    pub(super) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Sends SIGKILL to the whole process group (the leader and everything it started that
    /// stayed in the group). Safe until [`Proc::finish`]: the unreaped leader pins the id.
    pub(super) fn kill_group(&self) {
        if !self.reaped {
            // ESRCH (the group is already gone) is the expected failure; nothing to do.
            let _ = killpg(self.group, Signal::SIGKILL);
        }
    }

    /// Whether the leader has exited, checked now (the waiter thread's event may still be on
    /// its way).
    pub(super) fn has_exited(&self) -> bool {
        if self.reaped {
            return true;
        }
        let pid = Pid::from_raw(self.child.id() as i32);
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

    /// Kills what is left of the process group and reaps the leader: its exit status, or
    /// `None` if it could not be had.
    pub(super) fn finish(&mut self) -> Option<ExitStatus> {
        self.kill_group();
        self.close_stdin();
        if self.reaped {
            return None;
        }
        self.reaped = true;
        // Out of the registry before the reap, under its lock: `kill_running_evaluators`
        // never signals a group whose id could have been reused.
        live_groups().remove(&self.group.as_raw());
        self.child.wait().ok()
    }
}

/// The process groups of the evaluators that are running (spawned and not reaped).
static LIVE_GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn live_groups() -> MutexGuard<'static, BTreeSet<i32>> {
    LIVE_GROUPS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Kills the process group of every evaluator this process is running (one-shot
/// evaluations in flight and persistent workers) and returns how many groups were
/// signalled.
///
/// Evaluators run in process groups of their own, so a Ctrl-C at the terminal reaches
/// sweeper only, and an evaluator outlives a sweeper that dies without unwinding. A binary
/// that handles SIGINT or SIGTERM calls this from its handler before exiting. The
/// evaluations in flight then end as failures (killed by SIGKILL). Safe to call from any
/// thread, at any time: a group is signalled only while its leader is unreaped.
pub fn kill_running_evaluators() -> usize {
    let groups = live_groups();
    for &group in groups.iter() {
        let _ = killpg(Pid::from_raw(group), Signal::SIGKILL);
    }
    groups.len()
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

fn spawn_writer(mut stdin: ChildStdin) -> io::Result<Sender<Vec<u8>>> {
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    thread::Builder::new()
        .name("sweeper-eval-stdin".to_owned())
        .spawn(move || {
            for bytes in rx {
                // A write error means the process closed stdin or died; the reader and the
                // waiter report that, so the writer just stops.
                if stdin
                    .write_all(&bytes)
                    .and_then(|()| stdin.flush())
                    .is_err()
                {
                    break;
                }
            }
            // `stdin` drops here: the process sees end of file.
        })?;
    Ok(tx)
}

fn read_whole(stdout: ChildStdout, tx: &Sender<Event>) {
    let mut buf = Vec::new();
    let event = match stdout
        .take(MAX_STDOUT_BYTES as u64 + 1)
        .read_to_end(&mut buf)
    {
        Ok(_) if buf.len() > MAX_STDOUT_BYTES => Event::StdoutTooLarge,
        Ok(_) => Event::StdoutAll(buf),
        Err(e) => Event::StdoutError(e.to_string()),
    };
    let _ = tx.send(event);
}

fn read_lines(stdout: ChildStdout, tx: &Sender<Event>) {
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
    let pid = Pid::from_raw(pid as i32);
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
        let text = String::from_utf8_lossy(&[front, back].concat()).into_owned();
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
