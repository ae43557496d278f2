//! The two system calls that neither std nor a safe `nix` function makes for the evaluator
//! runner, each behind a safe function: the only `unsafe` code of the crate.
//!
//! Why it pays:
//!
//! - Joining a cgroup between `fork` and `exec` (a `pre_exec` hook) is the one way to have
//!   an evaluator contained from its first instruction. Moving it after `spawn` returns
//!   races with the evaluator's own first `fork`: a child started in that window would
//!   escape the containment, which is the whole point of it.
//! - `FIONREAD` on the write end of a worker's stdin tells whether the worker read the
//!   candidate it was sent before it exited. That decides between "this candidate made the
//!   worker die" (a failure) and "the worker was already on its way out" (a restart, and
//!   the candidate goes to the new worker), which no timing can tell apart.

#![allow(unsafe_code)]

use std::fs::File;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::process::Command;
use std::sync::Arc;

/// Makes the child of `command` write `0` to `procs` (a cgroup's `cgroup.procs`, opened
/// before the fork) just before `exec`: the kernel then moves it into that cgroup. A failed
/// write is left for the parent to notice (it checks `/proc/PID/cgroup`): the child cannot
/// report anything useful.
#[cfg(target_os = "linux")]
pub(super) fn join_cgroup_at_exec(command: &mut Command, procs: Arc<File>) {
    use std::os::unix::process::CommandExt;
    let hook = move || {
        // Writing "0" to `cgroup.procs` moves the writing process (cgroup v2).
        let _ = nix::unistd::write(&*procs, b"0");
        Ok(())
    };
    // SAFETY: the hook runs in the child between fork and exec, where only
    // async-signal-safe calls are sound. It makes one write(2) on a descriptor that was
    // opened before the fork, reads errno, and neither allocates nor takes a lock (the
    // `Arc` is only dereferenced, its count untouched).
    unsafe {
        command.pre_exec(hook);
    }
}

/// How many bytes sit unread in the pipe behind `fd`, or `None` where that cannot be told.
///
/// On Linux both ends of a pipe share one buffer, so asked on the write end this is what
/// the reader has not read yet. Elsewhere (the BSDs and macOS keep a buffer per end) the
/// answer on the write end means nothing, so it is not asked.
#[cfg(target_os = "linux")]
pub(super) fn unread_in_pipe(fd: BorrowedFd<'_>) -> Option<usize> {
    let mut count: nix::libc::c_int = 0;
    // SAFETY: FIONREAD writes one `int` through its argument, which points at a live local
    // of that type; the descriptor is borrowed, hence open for the whole call.
    let result = unsafe { nix::libc::ioctl(fd.as_raw_fd(), nix::libc::FIONREAD, &raw mut count) };
    if result < 0 {
        return None;
    }
    usize::try_from(count).ok()
}

/// See the Linux version: elsewhere the count cannot be had.
#[cfg(not(target_os = "linux"))]
pub(super) fn unread_in_pipe(_fd: BorrowedFd<'_>) -> Option<usize> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsFd;

    #[test]
    fn the_write_end_tells_what_the_reader_left() {
        let (mut reader, writer) = std::io::pipe().unwrap();
        let mut writer = File::from(std::os::fd::OwnedFd::from(writer));
        assert_eq!(unread_in_pipe(writer.as_fd()), Some(0));
        writer.write_all(b"0123456789").unwrap();
        assert_eq!(unread_in_pipe(writer.as_fd()), Some(10));
        let mut four = [0; 4];
        reader.read_exact(&mut four).unwrap();
        assert_eq!(unread_in_pipe(writer.as_fd()), Some(6));
        // With the reader gone the bytes are still counted: they were never read.
        drop(reader);
        assert_eq!(unread_in_pipe(writer.as_fd()), Some(6));
    }
}
