//! Evaluators die with their driver: the `sweeper` binary is killed with SIGKILL while its
//! evaluators (and the processes they started) run, and no process of theirs may remain;
//! a `--resume` never evaluates a trial while its earlier evaluation still runs.
//!
//! Every evaluator process records its pid (and its child's) in `DIR/pids`; a process
//! counts as one of the test's while `/proc/PID/environ` holds the test's own
//! `ORPHAN_TEST=DIR`, so a reused pid is never mistaken for one.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A one-shot evaluator (`sh -c`) that reads its candidate, starts `sleep 1000` (a
/// grandchild of sweeper), and with `ESCAPE=1` a second one in a session of its own
/// (out of its process group), records the pids and waits. The escaped one records its
/// own pid once `setsid` has run: a pid written by the parent right after the fork could
/// be read (and the driver killed) while the process was still in the evaluator's group,
/// and the guard would rightly end it. Once `DIR/fast` exists it
/// answers at once instead, after noting in `DIR/overlap` every recorded process still
/// alive (an earlier evaluation running beside this one).
const ONE_SHOT: &str = r#"cat >/dev/null
if [ -e "$ORPHAN_TEST/fast" ]; then
  for p in $(cat "$ORPHAN_TEST/pids"); do
    if grep -q "ORPHAN_TEST=$ORPHAN_TEST" "/proc/$p/environ" 2>/dev/null; then
      case $(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null) in ''|Z) ;; *) echo "$p" >> "$ORPHAN_TEST/overlap" ;; esac
    fi
  done
  echo '{"output_throughput_tok_s": 1}'
  exit 0
fi
sleep 1000 &
echo "$$ $!" >> "$ORPHAN_TEST/pids"
if [ -n "$ESCAPE" ]; then setsid sh -c 'echo "$$" >> "$ORPHAN_TEST/pids"; exec sleep 1000' & fi
wait
"#;

/// A persistent evaluator: for each candidate line, `sleep 1000` in the background, its pid
/// and the worker's recorded, then a wait that never ends.
const PERSISTENT: &str = r#"while read -r line; do
  sleep 1000 &
  echo "$$ $!" >> "$ORPHAN_TEST/pids"
  wait
done
"#;

struct Sweep {
    dir: tempfile::TempDir,
}

impl Sweep {
    fn new(script: &str, persistent: bool, escape: bool, sweep: &str) -> Sweep {
        let dir = tempfile::tempdir().unwrap();
        let yaml = format!(
            "search_space:
  gpu_budget: 8
  parameters:
    x: {{int: [1, 1000]}}
evaluator:
  command: [sh, -c, {script}]
  persistent: {persistent}
  env: {{ORPHAN_TEST: {dir}, ESCAPE: '{escape}'}}
sweep: {{algorithm: random, seed: 3, {sweep}}}
",
            script = serde_json::to_string(script).unwrap(),
            dir = dir.path().display(),
            escape = if escape { "1" } else { "" },
        );
        std::fs::write(dir.path().join("c.yaml"), yaml).unwrap();
        Sweep { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sweeper"));
        cmd.args(args)
            .current_dir(self.path())
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    }

    fn start(&self) -> Child {
        self.command(&["run", "c.yaml", "--out", "o", "--no-progress"])
            .spawn()
            .unwrap()
    }

    fn resume(&self) -> Output {
        self.command(&["run", "--resume", "o", "--no-progress"])
            .stderr(Stdio::piped())
            .output()
            .unwrap()
    }

    /// Every pid the evaluators recorded.
    fn pids(&self) -> Vec<u32> {
        std::fs::read_to_string(self.path().join("pids"))
            .unwrap_or_default()
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect()
    }

    /// How many evaluations recorded their pids.
    fn evaluations(&self) -> usize {
        std::fs::read_to_string(self.path().join("pids"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(' '))
            .count()
    }

    /// The recorded processes that are still alive (not zombies) and the test's.
    fn alive(&self) -> Vec<u32> {
        let wanted = format!("ORPHAN_TEST={}", self.path().display());
        self.pids()
            .into_iter()
            .filter(|pid| {
                let ours = std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.split(|&b| b == 0).any(|e| e == wanted.as_bytes()));
                let running = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                    s.rsplit(')')
                        .next()
                        .is_some_and(|r| !r.trim_start().starts_with('Z'))
                });
                ours && running
            })
            .collect()
    }

    /// Kills what the test left (a failed assertion must not leave sleepers for ever).
    fn clean_up(&self) {
        for pid in self.alive() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    }
}

impl Drop for Sweep {
    fn drop(&mut self) {
        self.clean_up();
    }
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let give_up = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < give_up, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill9(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn path_of(sweep: &Sweep, name: &str) -> PathBuf {
    sweep.path().join(name)
}

#[test]
fn a_killed_driver_takes_its_command_evaluators_and_their_children_along() {
    let sweep = Sweep::new(
        ONE_SHOT,
        false,
        false,
        "schedule: async, parallel_evals: 8, max_trials: 16",
    );
    let child = sweep.start();
    wait_until("8 evaluations running", Duration::from_secs(30), || {
        sweep.evaluations() == 8
    });
    assert_eq!(sweep.alive().len(), 16, "8 shells and their 8 sleeps");
    kill9(child);
    wait_until(
        "every evaluator process ended after the driver's kill -9",
        Duration::from_secs(10),
        || sweep.alive().is_empty(),
    );
}

#[test]
fn a_killed_driver_takes_its_persistent_workers_and_their_children_along() {
    let sweep = Sweep::new(
        PERSISTENT,
        true,
        false,
        "parallel_evals: 4, candidates_per_round: 4, max_rounds: 2",
    );
    let child = sweep.start();
    wait_until("4 workers evaluating", Duration::from_secs(30), || {
        sweep.evaluations() == 4
    });
    assert_eq!(sweep.alive().len(), 8, "4 workers and their 4 sleeps");
    kill9(child);
    wait_until(
        "every worker process ended after the driver's kill -9",
        Duration::from_secs(10),
        || sweep.alive().is_empty(),
    );
}

#[test]
fn a_resume_ends_what_the_killed_run_left_before_evaluating_its_trials_again() {
    let sweep = Sweep::new(
        ONE_SHOT,
        false,
        true,
        "schedule: async, parallel_evals: 4, max_trials: 8",
    );
    let child = sweep.start();
    wait_until("4 evaluations running", Duration::from_secs(30), || {
        sweep.evaluations() == 4 && sweep.pids().len() == 12
    });
    kill9(child);
    // What stayed in the evaluators' process groups dies with the driver; the sleeps that
    // left theirs (setsid) are out of the guard's reach, and still run.
    let escaped: Vec<u32> = std::fs::read_to_string(path_of(&sweep, "pids"))
        .unwrap()
        .lines()
        .filter(|l| !l.contains(' '))
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(escaped.len(), 4);
    let alive = sweep.alive();
    assert!(
        escaped.iter().all(|p| alive.contains(p)),
        "the escaped sleeps {escaped:?} must run at the resume for this test to mean anything: {alive:?}"
    );
    std::fs::write(path_of(&sweep, "fast"), "").unwrap();
    let resumed = sweep.resume();
    let stderr = String::from_utf8_lossy(&resumed.stderr).into_owned();
    assert_eq!(resumed.status.code(), Some(0), "{stderr}");
    let overlap = std::fs::read_to_string(path_of(&sweep, "overlap")).unwrap_or_default();
    assert!(
        overlap.is_empty(),
        "the resume evaluated a trial while processes of its earlier evaluation ran: {overlap}"
    );
    assert!(sweep.alive().is_empty(), "{:?} still run", sweep.alive());
    assert!(stderr.contains("evaluator process"), "{stderr}");
}
