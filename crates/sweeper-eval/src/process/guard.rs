//! The guard: evaluators die with the sweeper that started them, even one killed by
//! SIGKILL (or the OOM killer, or a crash), which runs no cleanup of its own.
//!
//! Evaluators run in process groups of their own (so that a Ctrl-C at the terminal reaches
//! sweeper alone), which also means nothing ends them when sweeper dies: a parent-death
//! signal would reach the direct child only, not the `sleep` its shell started. So with its
//! first evaluator, sweeper starts one small `sh` process, the guard, in a process group of
//! its own and deaf to the terminal's signals. Sweeper holds the write end of the guard's
//! stdin and tells it, one line each, every evaluator process group it starts (`+ PGID`)
//! and reaps (`- PGID`). The kernel closes that write end whatever way sweeper ends; the
//! guard then reads end of file and kills every group still on its list, and exits. The
//! pipe's write end is close-on-exec, so no evaluator holds it open.
//!
//! What left its process group (`setsid`) is out of the guard's reach; it carries the
//! sweep's mark ([`crate::RUN_MARK_VAR`]) in its environment, by which `sweeper run
//! --resume` finds and ends it before evaluating anything. The guard reports nothing: a
//! guard that cannot be started (no `sh`) leaves evaluators as they were before it.

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The guard's program: the groups it was told of, killed when its input ends.
const SCRIPT: &str = r#"trap '' INT TERM HUP QUIT PIPE
groups=' '
while read -r op group; do
  case $op in
    +) groups="$groups$group " ;;
    -) case $groups in *" $group "*) groups="${groups%% $group *} ${groups#* $group }" ;; esac ;;
  esac
done
for group in $groups; do kill -s KILL -- "-$group"; done 2>/dev/null
"#;

/// The write end of the guard's stdin; `None` before the first evaluator, or when the
/// guard could not be started.
enum State {
    NotStarted,
    /// The write end, and the guard's process group (its pid).
    Running(ChildStdin, Pid),
    Unavailable,
}

static GUARD: Mutex<State> = Mutex::new(State::NotStarted);

/// Tells the guard that process group `group` runs an evaluator (starting the guard first
/// if this is the first).
pub(super) fn watch(group: i32) {
    tell(&format!("+ {group}\n"), false);
}

/// Tells the guard that process group `group` is about to be reaped: it must no longer
/// be killed (its id may be reused).
pub(super) fn unwatch(group: i32) {
    tell(&format!("- {group}\n"), true);
}

/// How long a `- PGID` line may wait for room in the guard's pipe.
const UNWATCH_WAIT: Duration = Duration::from_secs(2);

/// Writes `line` to the guard. A line is far shorter than the pipe's atomic write size, so
/// it goes in whole or not at all. A `+` line that finds the pipe full is dropped (that
/// evaluator is then out of the guard's reach, never a blocked sweeper). A `-` line must
/// arrive, or the guard could later kill a reused group id: it waits for room, and a guard
/// that still takes nothing is killed, so that it kills nothing.
fn tell(line: &str, must_arrive: bool) {
    let mut state = GUARD.lock().unwrap_or_else(PoisonError::into_inner);
    if matches!(*state, State::NotStarted) {
        *state = start().map_or(State::Unavailable, |(stdin, pid)| {
            State::Running(stdin, pid)
        });
    }
    let State::Running(stdin, pid) = &mut *state else {
        return;
    };
    let deadline = Instant::now() + UNWATCH_WAIT;
    loop {
        match stdin.write_all(line.as_bytes()) {
            Ok(()) => return,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let left = deadline.saturating_duration_since(Instant::now());
                if !must_arrive {
                    return;
                }
                if left.is_zero() {
                    let _ = killpg(*pid, Signal::SIGKILL);
                    *state = State::Unavailable;
                    return;
                }
                let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLOUT)];
                let wait = PollTimeout::try_from(left.min(Duration::from_millis(100)))
                    .unwrap_or(PollTimeout::ZERO);
                let _ = poll(&mut fds, wait);
            }
            // the guard died: there is nothing left to tell
            Err(_) => {
                *state = State::Unavailable;
                return;
            }
        }
    }
}

fn start() -> Option<(ChildStdin, Pid)> {
    let mut child = Command::new("sh")
        .args(["-c", SCRIPT, "sweeper-guard"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    let stdin = child.stdin.take()?;
    let flags = fcntl(&stdin, FcntlArg::F_GETFL).ok()?;
    fcntl(
        &stdin,
        FcntlArg::F_SETFL(OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK),
    )
    .ok()?;
    let pid = Pid::from_raw(i32::try_from(child.id()).ok()?);
    // Never waited for: it lives as long as sweeper, and exits after it.
    drop(child);
    Some((stdin, pid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[cfg(target_os = "linux")]
    #[test]
    fn a_guard_kills_the_groups_it_was_told_of_at_end_of_input_only() {
        // A guard of its own (the shared one lives as long as the test binary).
        let mut guard = Command::new("sh")
            .args(["-c", SCRIPT, "sweeper-guard"])
            .stdin(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let spawn_group = || {
            Command::new("sh")
                .args(["-c", "sleep 60 & wait"])
                .process_group(0)
                .spawn()
                .unwrap()
        };
        let (mut kept, mut forgotten, mut unknown) = (spawn_group(), spawn_group(), spawn_group());
        let mut stdin = guard.stdin.take().unwrap();
        writeln!(stdin, "+ {}", kept.id()).unwrap();
        writeln!(stdin, "+ {}", forgotten.id()).unwrap();
        writeln!(stdin, "- {}", forgotten.id()).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert!(
            kept.try_wait().unwrap().is_none(),
            "killed before its input ended"
        );
        drop(stdin);
        guard.wait().unwrap();
        let give_up = Instant::now() + Duration::from_secs(5);
        let status = loop {
            if let Some(status) = kept.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < give_up, "the watched group lives on");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(!status.success());
        assert!(
            forgotten.try_wait().unwrap().is_none(),
            "an unwatched group was killed"
        );
        assert!(
            unknown.try_wait().unwrap().is_none(),
            "an unknown group was killed"
        );
        for child in [&mut forgotten, &mut unknown] {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(child.id().cast_signed()),
                nix::sys::signal::Signal::SIGKILL,
            );
            child.wait().unwrap();
        }
    }
}
