//! Containment: every process an evaluation starts is found and killed when it ends, even
//! one that left the evaluator's process group.
//!
//! The process group catches what an evaluator starts in the ordinary way. A child started
//! with `setsid` (or any new session or group) escapes it: it outlives a timeout, and if it
//! holds stdout, the report waits for it. Where the platform allows, each evaluation gets a
//! container that such a child cannot leave, chosen once per sweeper process:
//!
//! 1. **cgroup v2** (Linux, when sweeper's own cgroup is writable, e.g. as root or in a
//!    delegated subtree): each evaluator process starts in a child cgroup of sweeper's own,
//!    `sweeper-<pid>-<n>`, joined between `fork` and `exec`, so everything it starts is in
//!    it too, whatever its session. Writing `1` to `cgroup.kill` (Linux 5.14) kills them
//!    all; the empty cgroup is then removed. The same idea as systemd's scopes.
//! 2. **child subreaper** (other Linux): sweeper marks itself with
//!    `prctl(PR_SET_CHILD_SUBREAPER)`, so that orphaned descendants are re-parented to it
//!    rather than to init, and each evaluation's environment carries
//!    `SWEEPER_EVALUATION=<pid>-<n>`. The end of an evaluation kills every process whose
//!    environment carries its mark (read from `/proc/PID/environ`) and reaps the ones that
//!    were re-parented to sweeper. A process that clears its environment escapes this. The
//!    idea of container init processes such as tini, which reap what they adopt.
//! 3. **process group only** (other Unix systems): a child that leaves the group survives
//!    the evaluation; the report is still taken when the evaluator exits.
//!
//! A process is only ever signalled by pid right after its start time was read along with
//! that pid, and only reaped when it is sweeper's own zombie: a pid reused by an unrelated
//! process is never hit.

use std::process::Command;
#[cfg(target_os = "linux")]
use {
    nix::sys::signal::{Signal, kill},
    nix::sys::wait::{WaitPidFlag, waitpid},
    nix::unistd::Pid,
    std::collections::{BTreeSet, HashMap},
    std::fs::{self, File},
    std::path::{Path, PathBuf},
    std::sync::atomic::{AtomicBool, AtomicU64, Ordering},
    std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError},
    std::thread,
    std::time::{Duration, Instant},
};

/// How each evaluation is contained in this process (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Containment {
    /// A cgroup v2 per evaluation, killed with `cgroup.kill`.
    Cgroup,
    /// sweeper is a child subreaper; marked descendants are killed and reaped.
    Subreaper,
    /// The process group alone.
    ProcessGroup,
}

impl Containment {
    /// A short name, for docs, logs and tests: `cgroup`, `subreaper`, `process-group`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Containment::Cgroup => "cgroup",
            Containment::Subreaper => "subreaper",
            Containment::ProcessGroup => "process-group",
        }
    }
}

/// The environment variable that marks an evaluation's processes in subreaper mode.
#[cfg(target_os = "linux")]
const MARK_VAR: &str = "SWEEPER_EVALUATION";

/// How long the end of an evaluation waits for its processes to die and be removed.
#[cfg(target_os = "linux")]
const KILL_WAIT: Duration = Duration::from_secs(2);

/// The containment new evaluations get.
pub(crate) fn containment() -> Containment {
    #[cfg(target_os = "linux")]
    {
        if cgroup_base().is_some() && !CGROUP_FAILED.load(Ordering::Relaxed) {
            return Containment::Cgroup;
        }
        if subreaper() {
            return Containment::Subreaper;
        }
    }
    Containment::ProcessGroup
}

/// The container of one evaluator process.
pub(super) struct Jail {
    kind: Kind,
}

enum Kind {
    #[cfg(target_os = "linux")]
    Cgroup {
        dir: PathBuf,
    },
    #[cfg(target_os = "linux")]
    Subreaper {
        mark: String,
        /// The evaluator's start time (clock ticks since boot): its descendants start later.
        since: u64,
        /// The processes seen carrying the mark, by pid and start time: once they are
        /// zombies (their environment unreadable) this is how they are known.
        known: Mutex<HashMap<i32, u64>>,
    },
    ProcessGroup,
}

impl Jail {
    /// Prepares `command` for containment `want`: the cgroup it joins at `exec`, or the
    /// mark in its environment. What `want` asks and the platform cannot give falls back
    /// (cgroup → subreaper → process group).
    pub(super) fn prepare(command: &mut Command, want: Containment) -> Jail {
        #[cfg(target_os = "linux")]
        {
            let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
            if want == Containment::Cgroup
                && let Some(base) = cgroup_base()
            {
                let dir = base.join(format!("sweeper-{}-{n}", std::process::id()));
                let procs = fs::create_dir(&dir)
                    .and_then(|()| File::options().write(true).open(dir.join("cgroup.procs")));
                match procs {
                    Ok(procs) => {
                        super::sys::join_cgroup_at_exec(command, Arc::new(procs));
                        live_cgroups().insert(dir.clone());
                        return Jail {
                            kind: Kind::Cgroup { dir },
                        };
                    }
                    Err(_) => {
                        let _ = fs::remove_dir(&dir);
                    }
                }
            }
            if want != Containment::ProcessGroup && subreaper() {
                let mark = format!("{}-{n}", std::process::id());
                command.env(MARK_VAR, &mark);
                return Jail {
                    kind: Kind::Subreaper {
                        mark,
                        since: 0,
                        known: Mutex::new(HashMap::new()),
                    },
                };
            }
        }
        let _ = (command, want);
        Jail {
            kind: Kind::ProcessGroup,
        }
    }

    /// Called once the evaluator `leader` runs: checks that it did join its cgroup (if not,
    /// cgroups are given up for this process, and this evaluation keeps its process group
    /// alone), and notes its start time.
    pub(super) fn started(&mut self, leader: u32) {
        #[cfg(target_os = "linux")]
        {
            let pid = leader.cast_signed();
            match &mut self.kind {
                Kind::Cgroup { dir } => {
                    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
                    let joined = fs::read_to_string(format!("/proc/{pid}/cgroup"))
                        .ok()
                        .and_then(|text| {
                            text.lines()
                                .find_map(|l| l.strip_prefix("0::").map(str::to_owned))
                        })
                        .zip(name)
                        .is_some_and(|(path, name)| {
                            path.split('/').any(|part| part == name.as_str())
                        });
                    if !joined {
                        CGROUP_FAILED.store(true, Ordering::Relaxed);
                        self.remove_cgroup();
                        self.kind = Kind::ProcessGroup;
                    }
                }
                Kind::Subreaper { since, .. } => {
                    *since = stat(pid).map_or(0, |s| s.start);
                }
                Kind::ProcessGroup => {}
            }
        }
        let _ = leader;
    }

    /// Kills every process of the evaluation but `leader`, which its owner kills with its
    /// group and reaps (in cgroup mode the leader dies too, when it still runs).
    pub(super) fn kill(&self, leader: u32) {
        #[cfg(target_os = "linux")]
        match &self.kind {
            Kind::Cgroup { dir } => cgroup_kill(dir),
            Kind::Subreaper { mark, since, known } => {
                let wanted = format!("{MARK_VAR}={mark}");
                let mut known = known.lock().unwrap_or_else(PoisonError::into_inner);
                sweep(
                    &|entry| entry == wanted.as_bytes(),
                    leader.cast_signed(),
                    *since,
                    &mut known,
                );
            }
            Kind::ProcessGroup => {}
        }
        let _ = leader;
    }

    /// The end, after the leader was reaped: kills what is left, waits (bounded) until it
    /// is gone, removes the cgroup.
    pub(super) fn release(&mut self, leader: u32) {
        self.kill(leader);
        #[cfg(target_os = "linux")]
        if let Kind::Cgroup { dir } = &self.kind {
            let give_up = Instant::now() + KILL_WAIT;
            while !cgroup_empty(dir) && Instant::now() < give_up {
                thread::sleep(Duration::from_millis(2));
                cgroup_kill(dir);
            }
            self.remove_cgroup();
            self.kind = Kind::ProcessGroup;
            if let Some(base) = cgroup_base() {
                remove_stale_cgroups(base);
            }
        }
    }

    #[cfg(target_os = "linux")]
    fn remove_cgroup(&self) {
        if let Kind::Cgroup { dir } = &self.kind {
            // Fails while a process in uninterruptible sleep is still in it: left behind.
            if fs::remove_dir(dir).is_ok() {
                live_cgroups().remove(dir);
            }
        }
    }
}

impl Drop for Jail {
    fn drop(&mut self) {
        // Only reached before `release` when the spawn itself failed: nothing runs in it.
        #[cfg(target_os = "linux")]
        self.remove_cgroup();
    }
}

/// Kills every process in every container of this process (the Ctrl-C path): the live
/// cgroups, and in subreaper mode every process carrying one of this process's marks.
pub(super) fn kill_all_contained() {
    #[cfg(target_os = "linux")]
    {
        let dirs: Vec<PathBuf> = live_cgroups().iter().cloned().collect();
        for dir in &dirs {
            cgroup_kill(dir);
        }
        // The caller is about to exit: nobody else would remove them.
        let give_up = Instant::now() + KILL_WAIT;
        for dir in &dirs {
            while !cgroup_empty(dir) && Instant::now() < give_up {
                thread::sleep(Duration::from_millis(2));
            }
            if fs::remove_dir(dir).is_ok() {
                live_cgroups().remove(dir);
            }
        }
        if SUBREAPER.get() == Some(&true) {
            let prefix = format!("{MARK_VAR}={}-", std::process::id());
            let since = stat(std::process::id().cast_signed()).map_or(0, |s| s.start);
            sweep(
                &|entry| entry.starts_with(prefix.as_bytes()),
                0,
                since,
                &mut HashMap::new(),
            );
        }
    }
}

/// Kills every process (but this one) whose environment holds the entry `entry` exactly,
/// again and again until none is left alive or `wait` has passed: how many were seen, and
/// the pids still alive at the end. Zombies are dead already and do not count.
pub(super) fn end_marked(entry: &[u8], wait: std::time::Duration) -> (usize, Vec<i32>) {
    #[cfg(target_os = "linux")]
    {
        let me = std::process::id().cast_signed();
        let give_up = Instant::now() + wait;
        let mut seen: BTreeSet<(i32, u64)> = BTreeSet::new();
        loop {
            let mut alive = Vec::new();
            let Ok(entries) = fs::read_dir("/proc") else {
                return (seen.len(), alive);
            };
            for pid in entries.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()) {
                if pid == me {
                    continue;
                }
                let Some(stat) = stat(pid) else { continue };
                if stat.zombie {
                    continue;
                }
                let known = seen.contains(&(pid, stat.start));
                if !known && !environment_has(pid, &|e| e == entry) {
                    continue;
                }
                seen.insert((pid, stat.start));
                alive.push(pid);
                // The start time was read with this pid a moment ago: it is the same process.
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
            if alive.is_empty() || Instant::now() >= give_up {
                return (seen.len(), alive);
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (entry, wait);
        (0, Vec::new())
    }
}

/// Whether a cgroup of that name is still under sweeper's own (for the tests).
#[cfg(all(test, target_os = "linux"))]
pub(super) fn cgroup_exists(name: &str) -> bool {
    cgroup_base().is_some_and(|base| base.join(name).exists())
}

#[cfg(target_os = "linux")]
static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// Set when a process did not land in its cgroup: cgroups are not used again.
#[cfg(target_os = "linux")]
static CGROUP_FAILED: AtomicBool = AtomicBool::new(false);

/// Whether sweeper is a child subreaper (set on first need, never unset).
#[cfg(target_os = "linux")]
static SUBREAPER: OnceLock<bool> = OnceLock::new();

#[cfg(target_os = "linux")]
fn subreaper() -> bool {
    *SUBREAPER.get_or_init(|| nix::sys::prctl::set_child_subreaper(true).is_ok())
}

/// The cgroups of evaluations that run (created and not removed).
#[cfg(target_os = "linux")]
static LIVE_CGROUPS: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

#[cfg(target_os = "linux")]
fn live_cgroups() -> MutexGuard<'static, BTreeSet<PathBuf>> {
    LIVE_CGROUPS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// sweeper's own cgroup v2 directory, if evaluations can get child cgroups there (found
/// once: a probe cgroup is made and removed).
#[cfg(target_os = "linux")]
fn cgroup_base() -> Option<&'static Path> {
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASE.get_or_init(|| {
        let dir = own_cgroup_dir()?;
        let probe = dir.join(format!("sweeper-{}-probe", std::process::id()));
        fs::create_dir(&probe).ok()?;
        // `cgroup.kill` came with Linux 5.14; without it there is no way to kill them all.
        let usable = probe.join("cgroup.kill").exists();
        let _ = fs::remove_dir(&probe);
        if usable {
            remove_stale_cgroups(&dir);
        }
        usable.then_some(dir)
    })
    .as_deref()
}

/// Where sweeper's own cgroup v2 is mounted: the cgroup2 mount of `/proc/self/mountinfo`
/// joined with the `0::` line of `/proc/self/cgroup`.
#[cfg(target_os = "linux")]
fn own_cgroup_dir() -> Option<PathBuf> {
    let cgroups = fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = cgroups.lines().find_map(|line| line.strip_prefix("0::"))?;
    let mounts = fs::read_to_string("/proc/self/mountinfo").ok()?;
    mounts.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        if after.split_whitespace().next() != Some("cgroup2") {
            return None;
        }
        let fields: Vec<&str> = before.split_whitespace().collect();
        let (root, mount_point) = (*fields.get(3)?, *fields.get(4)?);
        let relative = if root == "/" {
            own
        } else {
            own.strip_prefix(root)?
        };
        // A cgroup outside this mount's view (`/../x` under a cgroup namespace) is not ours.
        if relative.split('/').any(|part| part == "..") {
            return None;
        }
        Some(Path::new(&unescape_mount(mount_point)).join(relative.trim_start_matches('/')))
    })
}

/// `mountinfo` writes space, tab, newline and backslash as octal escapes (`\040`).
#[cfg(target_os = "linux")]
fn unescape_mount(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        if let Some(d) = octal {
            let value = d.iter().fold(0_u32, |v, c| v * 8 + u32::from(c - b'0'));
            out.push(u8::try_from(value).unwrap_or(b'?'));
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Removes the empty cgroups that a sweeper which is gone left under `base` (one killed by
/// SIGKILL cleans up nothing). Only `sweeper-<pid>-…` entries whose pid has no process
/// here are tried, and `rmdir` refuses a cgroup that still holds a process: what a dead
/// sweeper's evaluators still run is left alone, to be removed by a later pass.
#[cfg(target_os = "linux")]
fn remove_stale_cgroups(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(owner) = name
            .to_str()
            .and_then(|n| n.strip_prefix("sweeper-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{owner}")).exists() {
            let _ = fs::remove_dir(entry.path());
        }
    }
}

#[cfg(target_os = "linux")]
fn cgroup_kill(dir: &Path) {
    // Fails only when the cgroup is already gone.
    let _ = fs::write(dir.join("cgroup.kill"), "1");
}

/// Whether no process is left in the cgroup (zombies do not count).
#[cfg(target_os = "linux")]
fn cgroup_empty(dir: &Path) -> bool {
    fs::read_to_string(dir.join("cgroup.events"))
        .map_or(true, |events| events.lines().any(|l| l == "populated 0"))
}

/// The fields of `/proc/PID/stat` that containment reads.
#[cfg(target_os = "linux")]
#[derive(Debug, Clone, Copy)]
struct Stat {
    zombie: bool,
    parent: i32,
    /// Clock ticks since boot: with the pid, it names one process.
    start: u64,
}

#[cfg(target_os = "linux")]
fn stat(pid: i32) -> Option<Stat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold anything: the fields follow the last `)`.
    let fields: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
    Some(Stat {
        zombie: *fields.first()? == "Z",
        parent: fields.get(1)?.parse().ok()?,
        // Field 22 of the stat line; the first after the name is field 3.
        start: fields.get(19)?.parse().ok()?,
    })
}

/// Whether one entry of process `pid`'s initial environment satisfies `wanted`.
#[cfg(target_os = "linux")]
fn environment_has(pid: i32, wanted: &dyn Fn(&[u8]) -> bool) -> bool {
    fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|environ| environ.split(|&b| b == 0).any(wanted))
}

/// Kills every process but `spare` that started at or after `since` and whose environment
/// has an entry `wanted`, until none is left (or [`KILL_WAIT`] passed), and reaps those of
/// them that became sweeper's children. Rounds repeat because a kill re-parents the
/// victim's children to sweeper, and because a process may fork while the round runs.
/// `known` (pid → start time) carries what was seen from one sweep to the next.
#[cfg(target_os = "linux")]
fn sweep(wanted: &dyn Fn(&[u8]) -> bool, spare: i32, since: u64, known: &mut HashMap<i32, u64>) {
    let me = std::process::id().cast_signed();
    let give_up = Instant::now() + KILL_WAIT;
    loop {
        let mut alive = false;
        let Ok(entries) = fs::read_dir("/proc") else {
            return;
        };
        for pid in entries.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()) {
            if pid == spare || pid == me {
                continue;
            }
            let Some(stat) = stat(pid) else { continue };
            if stat.start < since {
                continue;
            }
            let is_known = known.get(&pid) == Some(&stat.start);
            if stat.zombie {
                // A zombie's environment cannot be read: only one seen alive is reaped, and
                // only by its parent, which sweeper is once it was re-parented.
                if is_known && stat.parent == me {
                    let _ = waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
                }
                continue;
            }
            if !is_known && !environment_has(pid, wanted) {
                continue;
            }
            known.insert(pid, stat.start);
            alive = true;
            // The start time was read with this pid a moment ago: it is the same process.
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        if !alive || Instant::now() >= give_up {
            return;
        }
        thread::sleep(Duration::from_millis(2));
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn mount_points_are_unescaped() {
        assert_eq!(unescape_mount(r"/sys/fs/cgroup"), "/sys/fs/cgroup");
        assert_eq!(unescape_mount(r"/mnt/my\040cgroups"), "/mnt/my cgroups");
        assert_eq!(unescape_mount(r"/odd\\x\04"), r"/odd\\x\04");
    }

    #[test]
    fn the_empty_cgroups_of_a_gone_sweeper_are_removed() {
        // Only where cgroups are made (the subreaper has nothing to leave behind).
        let Some(base) = cgroup_base() else {
            return;
        };
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let dead = gone.id();
        gone.wait().unwrap();
        let stale = base.join(format!("sweeper-{dead}-0"));
        let ours = base.join(format!("sweeper-{}-stale-test", std::process::id()));
        fs::create_dir(&stale).unwrap();
        fs::create_dir(&ours).unwrap();
        remove_stale_cgroups(base);
        let (stale_left, ours_left) = (stale.exists(), ours.exists());
        let _ = fs::remove_dir(&stale);
        fs::remove_dir(&ours).unwrap();
        assert!(!stale_left, "the dead sweeper's cgroup is removed");
        assert!(ours_left, "a live sweeper's cgroup is not");
    }

    #[test]
    fn this_process_has_a_stat_with_a_parent_and_a_start() {
        let stat = stat(std::process::id().cast_signed()).unwrap();
        assert!(!stat.zombie);
        assert!(stat.parent > 0);
        assert!(stat.start > 0);
    }
}
