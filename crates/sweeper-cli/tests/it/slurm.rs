//! Sweeps through a real Slurm: the one-node cluster of `.ci/slurm/start.sh` (munged,
//! slurmctld and slurmd on localhost, 8 GPUs as GRES). Each test runs the `sweeper` binary
//! with `evaluator.slurm` and reads back what the jobs saw: the GPUs each job got, a job
//! waiting for busy GPUs, a timeout that cancels, kill -9 of the driver and `--resume`,
//! Ctrl-C, and jobs that fail in the ways Slurm reports.
//!
//! The tests share the cluster's 8 GPUs, so they take turns (one lock). Outside CI they
//! are skipped, with the reason printed, when `sbatch` is not installed or the Slurm it
//! talks to is not the test cluster (`ClusterName=sweeper-ci`, e.g. a real cluster's login
//! node, where no test job may go); in CI (`CI` set) either fails them.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

static CLUSTER: Mutex<()> = Mutex::new(());

/// `program`'s path in `PATH`.
fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// The cluster, for this test alone; `None` (the test is skipped) when Slurm is not
/// installed outside CI.
fn cluster() -> Option<MutexGuard<'static, ()>> {
    if which("sbatch").is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs the Slurm tests: .ci/slurm/start.sh installs and starts Slurm before the tests"
        );
        #[allow(clippy::print_stderr)] // the printed reason of a skip outside CI
        {
            eprintln!(
                "skipped: sbatch is not installed; `sudo .ci/slurm/start.sh` starts a one-node Slurm"
            );
        }
        return None;
    }
    // Outside CI only the test cluster is used: a login node of a real cluster has `sbatch`
    // too, and `cargo test` must neither submit jobs there nor fail because it is not the
    // one-node cluster of .ci/slurm/start.sh.
    if let Err(why) = test_cluster_is_up() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs the Slurm tests on the cluster of .ci/slurm/start.sh: {why}"
        );
        #[allow(clippy::print_stderr)] // the printed reason of a skip outside CI
        {
            eprintln!("skipped: {why}; `sudo .ci/slurm/start.sh` starts the one-node test Slurm");
        }
        return None;
    }
    let guard = CLUSTER.lock().unwrap_or_else(PoisonError::into_inner);
    let sinfo = Command::new("sinfo")
        .args(["-h", "-N", "-o", "%T %G"])
        .output()
        .expect("sinfo runs");
    let state = String::from_utf8_lossy(&sinfo.stdout).into_owned();
    assert!(
        sinfo.status.success() && state.contains("gpu:8"),
        "the Slurm of .ci/slurm/start.sh is not up (sinfo: {state:?} {}); run it as root",
        String::from_utf8_lossy(&sinfo.stderr)
    );
    Some(guard)
}

/// Whether the Slurm on PATH is the test cluster of .ci/slurm/start.sh (`ClusterName=sweeper-ci`)
/// and its controller answers.
fn test_cluster_is_up() -> Result<(), String> {
    let out = Command::new("scontrol")
        .args(["show", "config"])
        .output()
        .map_err(|e| format!("scontrol does not run: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "the Slurm controller does not answer ({})",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let config = String::from_utf8_lossy(&out.stdout);
    let name = config
        .lines()
        .find_map(|l| {
            let (key, value) = l.split_once('=')?;
            (key.trim() == "ClusterName").then(|| value.trim().to_owned())
        })
        .unwrap_or_default();
    if name == "sweeper-ci" {
        Ok(())
    } else {
        Err(format!(
            "the Slurm on PATH is cluster {name:?}, not the test cluster \"sweeper-ci\""
        ))
    }
}

/// A test's directory: its config, the sweep's output, and an `sbatch` on `PATH` that logs
/// each call before it runs the real one.
struct Sweep {
    dir: tempfile::TempDir,
}

impl Sweep {
    fn new() -> Sweep {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let real = which("sbatch").unwrap();
        let wrapper = format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\nexec '{}' \"$@\"\n",
            dir.path().join("sbatch.log").display(),
            real.display()
        );
        let path = bin.join("sbatch");
        std::fs::write(&path, wrapper).unwrap();
        Command::new("chmod").arg("+x").arg(&path).status().unwrap();
        Sweep { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn out(&self) -> PathBuf {
        self.path().join("o")
    }

    /// A job name that tells this test's jobs from any other's.
    fn job_name(&self) -> String {
        format!(
            "sweeper-test-{}",
            self.path().file_name().unwrap().to_string_lossy()
        )
    }

    /// Writes `c.yaml`: a grid of `parameters` (`tp` is the GPU count), `slurm_extra` keys
    /// beside the test's job name and a fast poll, and `sweep` keys.
    fn config(&self, parameters: &str, slurm_extra: &str, sweep: &str) -> PathBuf {
        self.config_sleeping(0.5, parameters, slurm_extra, sweep)
    }

    /// [`config`](Self::config) with jobs that sleep `per_gpu` seconds per GPU (when the
    /// grid has no `sleep` parameter).
    fn config_sleeping(
        &self,
        per_gpu: f64,
        parameters: &str,
        slurm_extra: &str,
        sweep: &str,
    ) -> PathBuf {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/evaluators/slurm_eval.py");
        let yaml = format!(
            "search_space:
  gpu_budget: 16
  used_gpus: [tp]
  parameters: {{{parameters}}}
evaluator:
  command: [python3, {script}]
  env: {{SLURM_EVAL_LOG: {log}, SLURM_EVAL_SLEEP_PER_GPU: '{per_gpu}'}}
  slurm: {{job_name: {name}, poll_seconds: 0.2{slurm_extra}}}
sweep: {{algorithm: grid, max_rounds: 1, {sweep}}}
",
            script = script.display(),
            log = self.path().join("eval.log").display(),
            name = self.job_name(),
        );
        let path = self.path().join("c.yaml");
        std::fs::write(&path, yaml).unwrap();
        path
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut path = std::ffi::OsString::from(self.path().join("bin"));
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_default());
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sweeper"));
        cmd.args(args)
            .current_dir(self.path())
            .env("PATH", path)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("sweeper runs")
    }

    /// `sweeper run c.yaml --out o`, which must exit 0.
    fn run_ok(&self) -> Output {
        let out = self.run(&["run", "c.yaml", "--out", "o", "--no-progress"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        out
    }

    /// `sbatch` calls so far.
    fn sbatch_calls(&self) -> usize {
        std::fs::read_to_string(self.path().join("sbatch.log"))
            .unwrap_or_default()
            .lines()
            .count()
    }

    /// `(trial, job id)` of every evaluation that started in a job.
    fn evaluations(&self) -> Vec<(u64, u64)> {
        std::fs::read_to_string(self.path().join("eval.log"))
            .unwrap_or_default()
            .lines()
            .map(|l| {
                let (t, j) = l.split_once(' ').unwrap();
                (t.parse().unwrap(), j.parse().unwrap())
            })
            .collect()
    }

    /// The trials of `result.json`, by trial id.
    fn trials(&self) -> BTreeMap<u64, Value> {
        let text = std::fs::read_to_string(self.out().join("result.json")).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        v["trials"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["trial"].as_u64().unwrap(), t.clone()))
            .collect()
    }

    /// The journal's `started` lines: trial → the job ids, in order.
    fn started(&self) -> BTreeMap<u64, Vec<u64>> {
        let text = std::fs::read_to_string(self.out().join("journal.jsonl")).unwrap_or_default();
        let mut out: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for line in text.lines() {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if v["kind"] == "started" {
                let handle = v["handle"].as_str().unwrap();
                let id = handle.strip_prefix("slurm:").unwrap().parse().unwrap();
                out.entry(v["trial"].as_u64().unwrap())
                    .or_default()
                    .push(id);
            }
        }
        out
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `(state, reason)` of each job of `name`, as squeue lists them (finished ones too).
fn jobs_named(name: &str) -> BTreeMap<u64, (String, String)> {
    let out = Command::new("squeue")
        .args(["-h", "-t", "all", "-n", name, "-o", "%i|%T|%r"])
        .output()
        .unwrap();
    text(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut cells = l.split('|');
            let id = cells.next()?.parse().ok()?;
            Some((id, (cells.next()?.to_owned(), cells.next()?.to_owned())))
        })
        .collect()
}

fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let give_up = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < give_up, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn kill9(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn each_job_gets_the_gpus_its_candidate_uses() {
    let Some(_cluster) = cluster() else { return };
    let sweep = Sweep::new();
    sweep.config(
        "tp: {values: [1, 2, 3, 8]}, sleep: {values: [0]}",
        "",
        "candidates_per_round: 4, parallel_evals: 4",
    );
    sweep.run_ok();
    let trials = sweep.trials();
    assert_eq!(trials.len(), 4);
    let mut jobs = BTreeSet::new();
    for t in trials.values() {
        assert_eq!(t["status"], "feasible", "{t}");
        let tp = t["config"]["tp"].as_f64().unwrap();
        // read back from the job's own environment
        assert_eq!(t["metrics"]["gpus_seen"].as_f64().unwrap(), tp, "{t}");
        let devices = t["labels"]["cuda_visible_devices"].as_str().unwrap();
        assert_eq!(devices.split(',').count() as f64, tp, "{t}");
        jobs.insert(t["labels"]["slurm_job_id"].as_str().unwrap().to_owned());
    }
    assert_eq!(jobs.len(), 4, "one job per candidate: {jobs:?}");
    assert_eq!(sweep.sbatch_calls(), 4);
    // the journal names each trial's job, and the trial's directory keeps its files
    let started = sweep.started();
    for (trial, t) in &trials {
        let job = t["labels"]["slurm_job_id"].as_str().unwrap();
        assert_eq!(started[trial], [job.parse::<u64>().unwrap()]);
        let dir = sweep.out().join("jobs").join(trial.to_string());
        for file in [
            "candidate.json",
            "job.sh",
            "stdout",
            "stderr",
            "exit_code",
            "job_id",
        ] {
            assert!(dir.join(file).is_file(), "{} lacks {file}", dir.display());
        }
    }
}

#[test]
fn a_job_waits_in_the_queue_while_the_gpus_are_busy() {
    let Some(_cluster) = cluster() else { return };
    let sweep = Sweep::new();
    // 6 + 4 GPUs do not fit on the 8 of the node at once
    sweep.config(
        "tp: {values: [6, 4]}, sleep: {values: [3]}",
        "",
        "candidates_per_round: 2, parallel_evals: 2",
    );
    let child = sweep
        .command(&["run", "c.yaml", "--out", "o", "--no-progress"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let name = sweep.job_name();
    let mut waiting_for_gpus = false;
    wait_until(
        "both jobs submitted, one of them pending",
        Duration::from_secs(30),
        || {
            let jobs = jobs_named(&name);
            waiting_for_gpus |= jobs
                .values()
                .any(|(state, reason)| state == "PENDING" && reason == "Resources")
                && jobs.values().any(|(state, _)| state == "RUNNING");
            waiting_for_gpus
        },
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let trials = sweep.trials();
    let span = |t: &Value| {
        (
            t["metrics"]["started_at"].as_f64().unwrap(),
            t["metrics"]["ended_at"].as_f64().unwrap(),
        )
    };
    let (a, b) = (span(&trials[&0]), span(&trials[&1]));
    let (first, second) = if a.0 < b.0 { (a, b) } else { (b, a) };
    assert!(
        second.0 >= first.1,
        "the second job started at {} before the first ended at {}",
        second.0,
        first.1
    );
}

#[test]
fn a_job_over_max_eval_seconds_is_cancelled_and_timed_out() {
    let Some(_cluster) = cluster() else { return };
    let sweep = Sweep::new();
    sweep.config(
        "tp: {values: [1]}, sleep: {values: [0, 300]}",
        "",
        "candidates_per_round: 2, parallel_evals: 2, max_eval_seconds: 3",
    );
    let started = Instant::now();
    sweep.run_ok();
    assert!(
        started.elapsed() < Duration::from_mins(1),
        "took {:?}",
        started.elapsed()
    );
    let trials = sweep.trials();
    let quick = trials.values().find(|t| t["config"]["sleep"] == 0).unwrap();
    let slow = trials
        .values()
        .find(|t| t["config"]["sleep"] == 300)
        .unwrap();
    assert_eq!(quick["status"], "feasible", "{quick}");
    assert_eq!(slow["status"], "infeasible", "{slow}");
    let reason = slow["reason"].as_str().unwrap();
    assert!(
        reason.contains("max_eval_seconds") && reason.contains("cancelled"),
        "{reason}"
    );
    // sweeper's scancel, not Slurm's own time limit, ended it
    let trial = slow["trial"].as_u64().unwrap();
    let job = sweep.started()[&trial][0];
    let jobs = jobs_named(&sweep.job_name());
    assert_eq!(jobs[&job].0, "CANCELLED", "{jobs:?}");
}

#[test]
fn kill_nine_then_resume_reattaches_to_the_jobs_and_submits_none_twice() {
    let Some(_cluster) = cluster() else { return };
    let sweep = Sweep::new();
    // 2 + 4 GPUs run at once for 2 and 4 s; the 8-GPU job waits for them, then runs 8 s
    sweep.config_sleeping(
        1.0,
        "tp: {values: [2, 4, 8]}",
        "",
        "candidates_per_round: 3, parallel_evals: 3",
    );
    let child = sweep
        .command(&["run", "c.yaml", "--out", "o", "--no-progress"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("three jobs journaled", Duration::from_secs(30), || {
        sweep.started().len() == 3
    });
    kill9(child);
    let started = sweep.started();
    // Whichever jobs Slurm starts first (the 8-GPU one alone, or the 2- and 4-GPU ones
    // together), one of them finishes while no sweeper watches and another is still queued
    // or running for at least 2 s more.
    let finished = || (0..3).any(|t| sweep.out().join(format!("jobs/{t}/exit_code")).exists());
    wait_until("a first job ends", Duration::from_secs(30), finished);
    let jobs = jobs_named(&sweep.job_name());
    assert_eq!(jobs.len(), 3, "{jobs:?}");
    assert!(
        jobs.values().any(|(s, _)| s == "PENDING" || s == "RUNNING"),
        "a job must still be queued or running at the resume: {jobs:?}"
    );
    let resumed = sweep.run(&["run", "--resume", "o", "--no-progress"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    assert_eq!(sweep.sbatch_calls(), 3, "a job was submitted twice");
    assert_eq!(sweep.started(), started, "the resume journaled other jobs");
    let trials = sweep.trials();
    assert_eq!(trials.len(), 3);
    for (trial, t) in &trials {
        assert_eq!(t["status"], "feasible", "{t}");
        let job: u64 = t["labels"]["slurm_job_id"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(started[trial], [job], "trial {trial} came from another job");
    }
    let mut ran: Vec<u64> = sweep.evaluations().iter().map(|(t, _)| *t).collect();
    ran.sort_unstable();
    assert_eq!(ran, [0, 1, 2], "each candidate ran exactly once");
}

#[test]
fn async_kill_nine_then_resume_reattaches_and_submits_each_trial_once() {
    let Some(_cluster) = cluster() else { return };
    let sweep = Sweep::new();
    // 8 one- or two-GPU trials, 4 slots: the first 4 jobs fit on the node together and run
    // 3 to 6 s, so they are queued or running when the driver dies
    sweep.config(
        "tp: {values: [1, 2]}, sleep: {values: [3, 4, 5, 6]}",
        "",
        "schedule: async, parallel_evals: 4, max_trials: 8",
    );
    let child = sweep
        .command(&["run", "c.yaml", "--out", "o", "--no-progress"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let name = sweep.job_name();
    wait_until("four jobs submitted", Duration::from_secs(30), || {
        jobs_named(&name).len() == 4 && sweep.sbatch_calls() == 4
    });
    // the handles reach the journal as the jobs are submitted, as under rounds
    wait_until("four jobs journaled", Duration::from_secs(10), || {
        sweep.started().len() == 4
    });
    kill9(child);
    let started = sweep.started();
    let jobs = jobs_named(&name);
    assert!(
        jobs.values().all(|(s, _)| s == "PENDING" || s == "RUNNING"),
        "the jobs must still be queued or running at the resume: {jobs:?}"
    );
    let resumed = sweep.run(&["run", "--resume", "o", "--no-progress"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    let trials = sweep.trials();
    assert_eq!(trials.len(), 8);
    assert_eq!(
        sweep.sbatch_calls(),
        trials.len(),
        "a job was submitted twice: {:?}",
        sweep.started()
    );
    for (trial, t) in &trials {
        assert_eq!(t["status"], "feasible", "{t}");
        let job: u64 = t["labels"]["slurm_job_id"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(
            sweep.started()[trial],
            [job],
            "trial {trial}: one job, its own"
        );
        if let Some(first) = started.get(trial) {
            assert_eq!(first, &[job], "trial {trial} was submitted again");
        }
    }
    let mut ran: Vec<u64> = sweep.evaluations().iter().map(|(t, _)| *t).collect();
    ran.sort_unstable();
    assert_eq!(
        ran,
        (0..8).collect::<Vec<u64>>(),
        "each candidate ran exactly once"
    );
}

#[test]
fn ctrl_c_cancels_every_job_and_resume_submits_them_again() {
    let Some(_cluster) = cluster() else { return };
    let sweep = Sweep::new();
    sweep.config(
        "tp: {values: [1]}, sleep: {values: [2, 300]}",
        "",
        "candidates_per_round: 2, parallel_evals: 2",
    );
    let child = sweep
        .command(&["run", "c.yaml", "--out", "o", "--no-progress"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("both jobs running", Duration::from_secs(30), || {
        let jobs = jobs_named(&sweep.job_name());
        jobs.len() == 2 && jobs.values().all(|(s, _)| s == "RUNNING")
    });
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id().cast_signed()),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("cancelled 2 Slurm jobs") && stderr.contains("sweeper run --resume o"),
        "{stderr}"
    );
    let first = sweep.started();
    wait_until("both jobs cancelled", Duration::from_secs(30), || {
        jobs_named(&sweep.job_name())
            .values()
            .all(|(s, _)| s == "CANCELLED")
    });
    // resumed with a limit (a budget key may change), so that the long candidate ends soon
    sweep.config(
        "tp: {values: [1]}, sleep: {values: [2, 300]}",
        "",
        "candidates_per_round: 2, parallel_evals: 2, max_eval_seconds: 3",
    );
    let resumed = sweep.run(&["run", "c.yaml", "--resume", "o", "--no-progress"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed.stderr));
    let again = sweep.started();
    assert_eq!(
        sweep.sbatch_calls(),
        4,
        "each cancelled job submitted once more"
    );
    for (trial, jobs) in &again {
        assert_eq!(jobs.len(), 2, "trial {trial}: {jobs:?}");
        assert_eq!(jobs[0], first[trial][0]);
        assert_ne!(jobs[1], jobs[0]);
    }
    let trials = sweep.trials();
    let quick = trials.values().find(|t| t["config"]["sleep"] == 2).unwrap();
    assert_eq!(quick["status"], "feasible", "{quick}");
    let job: u64 = quick["labels"]["slurm_job_id"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(job, again[&quick["trial"].as_u64().unwrap()][1]);
}

#[test]
fn jobs_that_fail_are_tallied_with_slurms_reason() {
    let Some(_cluster) = cluster() else { return };
    let sweep = Sweep::new();
    sweep.config(
        "tp: {values: [1]}, mode: {choices: [ok, fail, unsupported, infeasible, cancel]}",
        "",
        "candidates_per_round: 5, parallel_evals: 5",
    );
    let out = sweep.run_ok();
    let by_mode: BTreeMap<String, Value> = sweep
        .trials()
        .into_values()
        .map(|t| (t["config"]["mode"].as_str().unwrap().to_owned(), t))
        .collect();
    let reason = |mode: &str| by_mode[mode]["reason"].as_str().unwrap_or("").to_owned();
    assert_eq!(by_mode["ok"]["status"], "feasible");
    assert_eq!(by_mode["fail"]["status"], "failed");
    assert_eq!(
        reason("fail"),
        "slurm job FAILED (NonZeroExitCode): evaluator exited with code 7: slurm_eval.py: loading the model | slurm_eval.py: boom, out of device memory"
    );
    assert_eq!(by_mode["unsupported"]["status"], "unsupported");
    assert_eq!(
        reason("unsupported"),
        "slurm_eval.py: this mode is not supported"
    );
    assert_eq!(by_mode["infeasible"]["status"], "infeasible");
    assert_eq!(
        reason("infeasible"),
        "slurm_eval.py: the KV cache holds less than one request"
    );
    assert_eq!(by_mode["cancel"]["status"], "failed");
    assert_eq!(reason("cancel"), "slurm job CANCELLED");
    // the summary names Slurm's reasons
    let stderr = text(&out.stderr);
    assert!(stderr.contains("slurm job CANCELLED"), "{stderr}");
}

#[test]
fn a_job_slurm_refuses_fails_its_candidate_only() {
    let Some(_cluster) = cluster() else { return };
    let sweep = Sweep::new();
    // no node has 16 GPUs
    sweep.config(
        "tp: {values: [1, 16]}, sleep: {values: [0]}",
        "",
        "candidates_per_round: 2, parallel_evals: 2",
    );
    sweep.run_ok();
    let trials = sweep.trials();
    let big = trials.values().find(|t| t["config"]["tp"] == 16).unwrap();
    assert_eq!(big["status"], "failed", "{big}");
    let reason = big["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("sbatch refused the job") && reason.contains("node configuration"),
        "{reason}"
    );
    let small = trials.values().find(|t| t["config"]["tp"] == 1).unwrap();
    assert_eq!(small["status"], "feasible", "{small}");
}

/// Brings the node back (and waits until it takes jobs) when a test that downed it ends.
struct NodeBack(String);

impl Drop for NodeBack {
    fn drop(&mut self) {
        let give_up = Instant::now() + Duration::from_secs(30);
        loop {
            let _ = Command::new("scontrol")
                .args(["update", &format!("nodename={}", self.0), "state=resume"])
                .output();
            let state = Command::new("sinfo")
                .args(["-h", "-N", "-o", "%T"])
                .output()
                .map(|o| text(&o.stdout))
                .unwrap_or_default();
            if state.trim() == "idle" || Instant::now() > give_up {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

#[test]
fn a_node_failure_is_tallied_with_slurms_reason() {
    let Some(_cluster) = cluster() else { return };
    let sweep = Sweep::new();
    // without --no-requeue Slurm would requeue the job after the node failure
    sweep.config(
        "tp: {values: [1]}, sleep: {values: [60]}",
        ", sbatch_args: [--no-requeue]",
        "candidates_per_round: 1, parallel_evals: 1",
    );
    let child = sweep
        .command(&["run", "c.yaml", "--out", "o", "--no-progress"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the job running", Duration::from_secs(30), || {
        jobs_named(&sweep.job_name())
            .values()
            .any(|(s, _)| s == "RUNNING")
    });
    let node = text(
        &Command::new("sinfo")
            .args(["-h", "-N", "-o", "%N"])
            .output()
            .unwrap()
            .stdout,
    )
    .trim()
    .to_owned();
    let _back = NodeBack(node.clone());
    let down = Command::new("scontrol")
        .args([
            "update",
            &format!("nodename={node}"),
            "state=down",
            "reason=sweeper-node-failure-test",
        ])
        .output()
        .unwrap();
    assert!(down.status.success(), "{}", text(&down.stderr));
    let out = child.wait_with_output().unwrap();
    // no candidate was feasible: exit 1, with the trial tallied
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let trials = sweep.trials();
    assert_eq!(trials[&0]["status"], "failed", "{}", trials[&0]);
    assert_eq!(trials[&0]["reason"], "slurm job NODE_FAIL (NodeDown)");
}

/// The repository root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `PATH` with the built `sweeper` first, for the example scripts.
fn path_with_sweeper() -> std::ffi::OsString {
    let bin = Path::new(env!("CARGO_BIN_EXE_sweeper")).parent().unwrap();
    let mut path = std::ffi::OsString::from(bin);
    path.push(":");
    path.push(std::env::var_os("PATH").unwrap_or_default());
    path
}

#[test]
fn the_slurm_example_sweep_runs_each_candidate_on_its_gpus() {
    let Some(_cluster) = cluster() else { return };
    let out = tempfile::tempdir().unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_sweeper"))
        .args(["run", "examples/slurm/sweep.yaml", "--out"])
        .arg(out.path())
        .args(["--no-progress", "--format", "json"])
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let result: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("result.json")).unwrap())
            .unwrap();
    let trials = result["trials"].as_array().unwrap();
    assert!(trials.len() >= 12, "{}", trials.len());
    let mut feasible = 0;
    for t in trials.iter().filter(|t| t["status"] == "feasible") {
        feasible += 1;
        assert_eq!(
            t["metrics"]["gpus_seen"],
            t["config"]["used_gpus"].as_f64().unwrap(),
            "{t}"
        );
    }
    assert!(feasible >= 4, "{feasible} feasible");
}

#[test]
fn the_grid_array_recipe_runs_the_whole_grid_and_scores_it() {
    let Some(_cluster) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("grid.yaml");
    std::fs::write(
        &config,
        format!(
            "goal: {{target: throughput_per_gpu}}
workload: {{isl: 4000, osl: 500, num_request_ratio: 10, kv_load_ratio: 0.5}}
search_space:
  gpu_budget: 4
  used_gpus: [tp, replicas]
  parameters:
    tp: {{values: [1, 2, 4]}}
    replicas: {{values: [1, 2]}}
    max_batch_size: {{values: [16, 256]}}
evaluator:
  command: [python3, toy_bench.py]
  cwd: {}
  env: {{TOY_BENCH_SECONDS: '0'}}
  slurm: {{job_name: sweeper-grid-test}}
",
            repo().join("examples/slurm").display()
        ),
    )
    .unwrap();
    let recipe = repo().join("examples/slurm/grid_array.py");
    let grid = dir.path().join("g");
    let script = |action: &str, extra: &[&str]| {
        Command::new("python3")
            .arg(&recipe)
            .arg(action)
            .arg(&config)
            .arg(&grid)
            .args(extra)
            .env("PATH", path_with_sweeper())
            .output()
            .unwrap()
    };
    let submitted = script("submit", &[]);
    assert!(submitted.status.success(), "{}", text(&submitted.stderr));
    // tp × replicas within 4 GPUs: 1, 2 (twice), 4 (twice); × 2 batch sizes
    let lines: Vec<String> = text(&submitted.stdout)
        .lines()
        .map(|l| l.split(", array job").next().unwrap().to_owned())
        .collect();
    assert_eq!(
        lines,
        [
            "1 GPUs: 2 candidates",
            "2 GPUs: 4 candidates",
            "4 GPUs: 4 candidates"
        ]
    );
    let arrays: Value =
        serde_json::from_str(&std::fs::read_to_string(grid.join("arrays.json")).unwrap()).unwrap();
    let tasks: u64 = arrays
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["tasks"].as_u64().unwrap())
        .sum();
    assert_eq!(tasks, 10);
    // each task's script writes I.exit when its candidate is done
    let exits = || {
        std::fs::read_dir(&grid)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("gpus-"))
            .flat_map(|e| std::fs::read_dir(e.path()).unwrap().filter_map(Result::ok))
            .filter(|f| f.file_name().to_string_lossy().ends_with(".exit"))
            .count()
    };
    wait_until("every array task ends", Duration::from_mins(2), || {
        exits() == 10
    });
    let collected = script("collect", &["--format", "json"]);
    assert!(collected.status.success(), "{}", text(&collected.stderr));
    assert!(
        text(&collected.stderr).contains("10 reports"),
        "{}",
        text(&collected.stderr)
    );
    let ranking: Value = serde_json::from_slice(&collected.stdout).unwrap();
    assert_eq!(ranking.as_array().unwrap().len(), 10);
    let rows = std::fs::read_to_string(grid.join("rows.jsonl")).unwrap();
    for row in rows.lines() {
        let row: Value = serde_json::from_str(row).unwrap();
        assert_eq!(
            row["report"]["gpus_seen"].as_f64(),
            row["config"]["used_gpus"].as_f64(),
            "{row}"
        );
    }
}

/// A sweep's output directory that is not UTF-8 would be converted lossily into the job's
/// file names, so every trial would fail: refused when the evaluator is set up, before any
/// job (no Slurm needed).
#[cfg(unix)]
#[test]
fn a_non_utf8_output_directory_is_refused_up_front() {
    use std::os::unix::ffi::OsStrExt;
    let config = sweeper_goal::parse(
        "evaluator: {command: [python3, ev.py], slurm: {poll_seconds: 0.2}}\nsearch_space: {gpu_budget: 8}",
    )
    .unwrap();
    let out = std::env::temp_dir().join(std::ffi::OsStr::from_bytes(b"sweeper-out-\xff\xfe"));
    let Err(err) = sweeper_eval::evaluator_in(&config, "t", &out) else {
        panic!("a non-UTF-8 output directory was accepted");
    };
    let message = err.to_string();
    assert!(message.contains("is not valid UTF-8"), "{message}");
    assert!(message.contains("jobs directory"), "{message}");
    assert!(message.contains("whose path is UTF-8"), "{message}");
}
