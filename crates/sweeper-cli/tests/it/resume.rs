//! Never losing an evaluation, end to end through the `sweeper` binary: refusals that keep
//! a journal, the directory lock, kill -9 and resume with the default algorithm, torn
//! lines, a full disk, extending a finished sweep, and stopping a sweep whose evaluator
//! keeps failing.

use crate::common::{sweeper_cmd, sweeper_in as sweeper, text};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/evaluators/counting.py")
}

/// A pareto sweep with the default algorithm (GP-UCB-PE) and the counting evaluator.
fn write_config(dir: &Path, name: &str, sweep: &str, sleep: f64) -> PathBuf {
    let yaml = format!(
        "goal: {{target: pareto}}
workload: {{isl: 100, osl: 100, num_request_ratio: 2, kv_load_ratio: [0.05, 1.0]}}
search_space:
  gpu_budget: 8
  used_gpus: [tp, replicas]
  parameters:
    tp: {{values: [1, 2, 4]}}
    replicas: {{int: [1, 4]}}
evaluator:
  command: [python3, {script}]
  env: {{COUNT_LOG: {log}, EVAL_SLEEP: '{sleep}', BROKEN_FLAG: {flag}}}
sweep: {{{sweep}}}
",
        script = script().display(),
        log = dir.join("count.log").display(),
        flag = dir.join("broken").display(),
    );
    let path = dir.join(name);
    std::fs::write(&path, yaml).unwrap();
    path
}

const SWEEP: &str = "max_rounds: 3, candidates_per_round: 4, parallel_evals: 2, seed: 11";

fn invocations(dir: &Path) -> Vec<u64> {
    std::fs::read_to_string(dir.join("count.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

/// Trial ids whose evaluation finished and was journaled.
fn journaled_evaluations(journal: &Path) -> BTreeSet<u64> {
    let text = std::fs::read_to_string(journal).unwrap_or_default();
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let evaluated = v["kind"] == "outcome"
            && v["status"] != "cache_hit"
            && !v["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("over gpu_budget"));
        if evaluated {
            out.insert(v["trial"].as_u64().unwrap());
        }
    }
    out
}

fn result_json(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("result.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn wait_for(path: &Path) {
    let give_up = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(
            Instant::now() < give_up,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn kill(mut child: Child) {
    let _ = child.kill(); // SIGKILL
    let _ = child.wait();
}

#[test]
fn a_directory_that_holds_a_journal_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "c.yaml", SWEEP, 0.0);
    let cfg = cfg.to_str().unwrap();
    let first = sweeper(&["run", cfg, "--out", "o", "--no-progress"], dir.path());
    assert_eq!(first.status.code(), Some(0), "{}", text(&first.stderr));
    let journal = dir.path().join("o/journal.jsonl");
    let before = std::fs::read(&journal).unwrap();
    let again = sweeper(&["run", cfg, "--out", "o", "--no-progress"], dir.path());
    let stderr = text(&again.stderr);
    assert_eq!(again.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--resume"), "{stderr}");
    assert!(stderr.contains("--out"), "{stderr}");
    assert_eq!(
        std::fs::read(&journal).unwrap(),
        before,
        "the journal changed"
    );
}

#[test]
fn a_second_sweep_on_a_running_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "c.yaml", SWEEP, 0.3);
    let cfg = cfg.to_str().unwrap();
    let running = sweeper_cmd(&["run", cfg, "--out", "o", "--no-progress"], dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(&dir.path().join("count.log"));
    let second = sweeper(&["run", "--resume", "o", "--no-progress"], dir.path());
    let stderr = text(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("in use by another sweep"), "{stderr}");
    let third = sweeper(&["run", cfg, "--out", "o", "--no-progress"], dir.path());
    assert_eq!(third.status.code(), Some(2), "{}", text(&third.stderr));
    kill(running);
    // every line the first sweep wrote is whole (the refused ones wrote nothing)
    let journal = std::fs::read_to_string(dir.path().join("o/journal.jsonl")).unwrap();
    for line in journal.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
}

/// Delays of the kills, drawn from fixed seeds (xorshift), in milliseconds.
fn kill_delays() -> Vec<u64> {
    (1..=10_u64)
        .map(|seed| {
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            60 + x % 400
        })
        .collect()
}

#[test]
fn kill_nine_at_ten_moments_then_resume_gives_the_uninterrupted_result() {
    let base = tempfile::tempdir().unwrap();
    let whole_dir = base.path().join("whole");
    std::fs::create_dir(&whole_dir).unwrap();
    // long enough (about 3 s of evaluations) that ten kills of at most 0.46 s each all
    // land before the sweep ends
    let sweep = "max_rounds: 5, candidates_per_round: 4, parallel_evals: 2, seed: 11";
    let cfg = write_config(&whole_dir, "c.yaml", sweep, 0.3);
    let out = sweeper(
        &["run", cfg.to_str().unwrap(), "--out", "o", "--no-progress"],
        &whole_dir,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let whole = result_json(&whole_dir.join("o"));
    assert!(whole["trials"].as_array().unwrap().len() >= 8);

    let dir = base.path().join("killed");
    std::fs::create_dir(&dir).unwrap();
    let cfg = write_config(&dir, "c.yaml", sweep, 0.3);
    let cfg = cfg.to_str().unwrap();
    let journal = dir.join("o/journal.jsonl");
    let mut kills = 0;
    let mut segments = 0;
    for delay in kill_delays() {
        let args: Vec<&str> = if journal.exists() {
            vec!["run", cfg, "--resume", "o", "--no-progress"]
        } else {
            vec!["run", cfg, "--out", "o", "--no-progress"]
        };
        let finished_before = journaled_evaluations(&journal);
        let seen_before = invocations(&dir).len();
        let mut child = sweeper_cmd(&args, &dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        segments += 1;
        if child.try_wait().unwrap().is_none() {
            kill(child);
            kills += 1;
        } else {
            let status = child.wait().unwrap();
            assert!(status.success(), "segment {segments} failed");
        }
        // orphaned evaluators of the killed sweep finish within their sleep
        std::thread::sleep(Duration::from_millis(400));
        let rerun: Vec<u64> = invocations(&dir)[seen_before..]
            .iter()
            .copied()
            .filter(|id| finished_before.contains(id))
            .collect();
        assert!(
            rerun.is_empty(),
            "segment {segments}: finished evaluations ran again: {rerun:?}"
        );
    }
    assert!(
        kills >= 10,
        "only {kills} of {segments} segments were killed mid-sweep"
    );
    let finished_before = journaled_evaluations(&journal);
    let seen_before = invocations(&dir).len();
    let last = sweeper(&["run", cfg, "--resume", "o", "--no-progress"], &dir);
    assert_eq!(last.status.code(), Some(0), "{}", text(&last.stderr));
    assert!(
        invocations(&dir)[seen_before..]
            .iter()
            .all(|id| !finished_before.contains(id)),
        "the last resume ran finished evaluations again"
    );
    let mut resumed = result_json(&dir.join("o"));
    let mut whole = whole;
    // the evaluator's environment names each test's own directory
    resumed["config"]["evaluator"]["env"] = Value::Null;
    whole["config"]["evaluator"]["env"] = Value::Null;
    assert!(resumed == whole, "the resumed sweep ended elsewhere");
}

#[test]
fn a_journal_torn_mid_line_resumes_twice() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "c.yaml", SWEEP, 0.0);
    let cfg = cfg.to_str().unwrap();
    let out = sweeper(&["run", cfg, "--out", "o", "--no-progress"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let whole = result_json(&dir.path().join("o"));
    let journal = dir.path().join("o/journal.jsonl");
    let text_before = std::fs::read_to_string(&journal).unwrap();
    let lines: Vec<&str> = text_before.lines().collect();
    let cut = lines.len() * 2 / 3;
    let mut torn = lines[..cut].join("\n");
    torn.push('\n');
    torn.push_str(&lines[cut][..lines[cut].len() / 2]);
    std::fs::write(&journal, &torn).unwrap();
    let seen = invocations(dir.path()).len();
    for round in 0..2 {
        let out = sweeper(&["run", "--resume", "o", "--no-progress"], dir.path());
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "resume {round}: {stderr}");
        if round == 0 {
            assert!(stderr.contains("torn"), "{stderr}");
        }
        assert!(
            result_json(&dir.path().join("o")) == whole,
            "resume {round}"
        );
    }
    let finished: BTreeSet<u64> = journaled_evaluations(&journal);
    let kept = lines[..cut].join("\n");
    let kept_ids = journaled_evaluations_in(&kept);
    for id in &invocations(dir.path())[seen..] {
        assert!(!kept_ids.contains(id), "trial {id} was evaluated again");
        assert!(finished.contains(id));
    }
}

fn journaled_evaluations_in(text: &str) -> BTreeSet<u64> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j");
    std::fs::write(&path, text).unwrap();
    journaled_evaluations(&path)
}

#[test]
fn resume_says_which_evaluator_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write_config(dir.path(), "c.yaml", SWEEP, 0.0);
    let out = sweeper(
        &["run", cfg.to_str().unwrap(), "--out", "o", "--no-progress"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let again = sweeper(&["run", "--resume", "o", "--no-progress"], dir.path());
    let stderr = text(&again.stderr);
    assert_eq!(again.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("o/config.yaml"), "{stderr}");
    assert!(stderr.contains("evaluator: python3 "), "{stderr}");
    assert!(stderr.contains("counting.py"), "{stderr}");
}

#[test]
fn a_larger_budget_extends_a_finished_sweep_and_other_changes_are_named() {
    let base = tempfile::tempdir().unwrap();
    let long_sweep = "max_rounds: 5, candidates_per_round: 4, parallel_evals: 2, seed: 11";
    // the reference: five rounds in one go
    let whole_dir = base.path().join("whole");
    std::fs::create_dir(&whole_dir).unwrap();
    let cfg = write_config(&whole_dir, "long.yaml", long_sweep, 0.0);
    let out = sweeper(
        &["run", cfg.to_str().unwrap(), "--out", "o", "--no-progress"],
        &whole_dir,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let whole = result_json(&whole_dir.join("o"));

    let dir = base.path().join("extended");
    std::fs::create_dir(&dir).unwrap();
    let short = write_config(&dir, "short.yaml", SWEEP, 0.0);
    let out = sweeper(
        &[
            "run",
            short.to_str().unwrap(),
            "--out",
            "o",
            "--no-progress",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let short_trials = result_json(&dir.join("o"))["trials"]
        .as_array()
        .unwrap()
        .len();
    let first_evaluations = invocations(&dir).len();
    let long = write_config(&dir, "long.yaml", long_sweep, 0.0);
    let out = sweeper(
        &[
            "run",
            long.to_str().unwrap(),
            "--resume",
            "o",
            "--no-progress",
        ],
        &dir,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut extended = result_json(&dir.join("o"));
    assert!(extended["trials"].as_array().unwrap().len() > short_trials);
    let again: BTreeSet<u64> = invocations(&dir)[..first_evaluations]
        .iter()
        .copied()
        .collect();
    assert!(
        invocations(&dir)[first_evaluations..]
            .iter()
            .all(|id| !again.contains(id)),
        "extending re-ran evaluations"
    );
    let mut whole = whole;
    // the evaluator's environment names each test's own directory; the title, the config
    // file each sweep started from
    for v in [&mut extended, &mut whole] {
        v["config"]["evaluator"]["env"] = Value::Null;
        v["title"] = Value::Null;
    }
    let differing: Vec<&String> = extended
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| extended[k.as_str()] != whole[k.as_str()])
        .collect();
    assert!(
        differing.is_empty(),
        "the extended sweep differs from a long one in {differing:?}"
    );
    // the kept config now has the longer budget
    let kept = std::fs::read_to_string(dir.join("o/config.yaml")).unwrap();
    assert!(kept.contains("max_rounds: 5"), "{kept}");

    // what a trial means may not change
    let other = write_config(
        &dir,
        "other.yaml",
        "max_rounds: 5, candidates_per_round: 4, parallel_evals: 2, seed: 12, algorithm: random",
        0.0,
    );
    let out = sweeper(
        &[
            "run",
            other.to_str().unwrap(),
            "--resume",
            "o",
            "--no-progress",
        ],
        &dir,
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("sweep.algorithm, sweep.seed"), "{stderr}");
}

#[test]
fn an_evaluator_that_keeps_failing_stops_the_sweep_and_resume_goes_on_after_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let sweep =
        "max_rounds: 4, candidates_per_round: 4, parallel_evals: 2, seed: 11, algorithm: random";
    let cfg = write_config(dir.path(), "c.yaml", sweep, 0.0);
    let cfg = cfg.to_str().unwrap();
    std::fs::write(dir.path().join("broken"), "").unwrap();
    let out = sweeper(&["run", cfg, "--out", "o", "--no-progress"], dir.path());
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // the limit, plus the one evaluation already running beside the tenth (parallel_evals 2)
    let ran = invocations(dir.path()).len();
    assert!((10..=11).contains(&ran), "{ran} invocations");
    assert!(
        stderr.contains(&format!("failed {ran} evaluations in a row")),
        "{stderr}"
    );
    assert!(stderr.contains("broken while"), "{stderr}");
    assert!(stderr.contains("--resume o"), "{stderr}");
    // the fix, then resume: the sweep goes on and ends
    std::fs::remove_file(dir.path().join("broken")).unwrap();
    let out = sweeper(&["run", "--resume", "o", "--no-progress"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let result = result_json(&dir.path().join("o"));
    assert!(result["tallies"]["feasible"].as_u64().unwrap() > 0);
    assert_eq!(result["tallies"]["failed"].as_u64(), Some(ran as u64));
}

#[test]
fn a_program_that_cannot_run_is_refused_before_the_first_trial() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("c.yaml"),
        "search_space: {parameters: {tp: {values: [1, 2]}}}\nevaluator: {command: [no-such-program-here]}\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("plain.txt"), "not a program").unwrap();
    std::fs::write(
        dir.path().join("d.yaml"),
        "search_space: {parameters: {tp: {values: [1, 2]}}}\nevaluator: {command: [./plain.txt]}\n",
    )
    .unwrap();
    for (cfg, why) in [
        ("c.yaml", "was not found in any directory of PATH"),
        ("d.yaml", "not executable"),
    ] {
        for args in [vec!["validate", cfg], vec!["run", cfg, "--out", "o"]] {
            let out = sweeper(&args, dir.path());
            let stderr = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
            assert!(stderr.contains(why), "{args:?}: {stderr}");
        }
        assert!(!dir.path().join("o").exists(), "run created its directory");
    }
}

/// Mounts a tmpfs of `kib` KiB at `dir`; `None` when this process may not mount.
fn tmpfs(dir: &Path, kib: u32) -> Option<Mounted> {
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
        .arg(dir)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then(|| Mounted(dir.to_owned()))
}

struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_is_a_clear_error_that_loses_nothing_journaled() {
    let base = tempfile::tempdir().unwrap();
    let disk = base.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let Some(_mounted) = tmpfs(&disk, 256) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI runs as root and must be able to mount a tmpfs for this test"
        );
        #[allow(clippy::print_stderr)] // the printed reason of a skip outside CI
        {
            eprintln!("skipped: cannot mount a tmpfs here (not root)");
        }
        return;
    };
    let sweep =
        "max_rounds: 8, candidates_per_round: 4, parallel_evals: 2, seed: 11, algorithm: random";
    let cfg = write_config(base.path(), "c.yaml", sweep, 0.0);
    let cfg = cfg.to_str().unwrap();
    // leave three 4 KiB pages: config.yaml takes one, the journal fills two mid-sweep
    let filler = disk.join("filler");
    std::fs::write(&filler, vec![0u8; 244 * 1024]).unwrap();
    let out_dir = disk.join("o");
    let out = sweeper(
        &[
            "run",
            cfg,
            "--out",
            out_dir.to_str().unwrap(),
            "--no-progress",
        ],
        base.path(),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("No space left"), "{stderr}");
    assert!(stderr.contains("journal.jsonl"), "{stderr}");
    let journal = std::fs::read_to_string(out_dir.join("journal.jsonl")).unwrap();
    assert!(journal.ends_with('\n'), "the journal ends in a torn line");
    for line in journal.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
    let journaled = journaled_evaluations(&out_dir.join("journal.jsonl"));
    assert!(
        !journaled.is_empty(),
        "nothing was journaled before the disk filled"
    );
    let leftovers: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            Path::new(n)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("tmp"))
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // room again: the resume keeps every journaled evaluation
    std::fs::remove_file(&filler).unwrap();
    let seen = invocations(base.path()).len();
    let out = sweeper(
        &[
            "run",
            "--resume",
            out_dir.to_str().unwrap(),
            "--no-progress",
        ],
        base.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for id in &invocations(base.path())[seen..] {
        assert!(!journaled.contains(id), "trial {id} ran again");
    }

    // a full disk when the result files are written: exit 2, no temporary file left
    let free = fill(&disk, &filler);
    assert!(free < 4096, "{free} bytes left");
    let out = sweeper(
        &[
            "run",
            "--resume",
            out_dir.to_str().unwrap(),
            "--no-progress",
        ],
        base.path(),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("No space left"), "{stderr}");
    let leftovers: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            Path::new(n)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("tmp"))
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Fills the disk with `filler` until fewer than 4 KiB are left; returns what is left.
fn fill(disk: &Path, filler: &Path) -> u64 {
    use std::io::Write;
    let mut f = std::fs::File::create(filler).unwrap();
    let block = vec![0u8; 1024];
    while f.write_all(&block).is_ok() {}
    let _ = f.flush();
    drop(f);
    let out = Command::new("df")
        .args(["--output=avail", "-B1"])
        .arg(disk)
        .output()
        .unwrap();
    text(&out.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn max_consecutive_failures_sets_the_limit_and_may_change_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = "max_rounds: 4, candidates_per_round: 4, parallel_evals: 2, seed: 11, algorithm: random, max_consecutive_failures: 3";
    let cfg = write_config(dir.path(), "c.yaml", sweep, 0.0);
    std::fs::write(dir.path().join("broken"), "").unwrap();
    let out = sweeper(
        &["run", cfg.to_str().unwrap(), "--out", "o", "--no-progress"],
        dir.path(),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let ran = invocations(dir.path()).len();
    assert!((3..=4).contains(&ran), "{ran} invocations: {stderr}");
    // a larger limit is a budget change: the resume goes on (and stops again, later)
    let more = write_config(
        dir.path(),
        "more.yaml",
        &sweep.replace("failures: 3", "failures: 6"),
        0.0,
    );
    let out = sweeper(
        &[
            "run",
            more.to_str().unwrap(),
            "--resume",
            "o",
            "--no-progress",
        ],
        dir.path(),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let again = invocations(dir.path()).len() - ran;
    assert!(
        (6..=7).contains(&again),
        "{again} more invocations: {stderr}"
    );
}

/// The trials a journal's suggestion lines name.
fn suggested(journal: &Path) -> BTreeSet<u64> {
    std::fs::read_to_string(journal)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["kind"] == "suggest")
        .map(|v| v["trial"].as_u64().unwrap())
        .collect()
}

/// Outcome lines of a journal, in order: (trial, status).
fn outcomes(journal: &Path) -> Vec<(u64, String)> {
    std::fs::read_to_string(journal)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["kind"] == "outcome")
        .map(|v| {
            (
                v["trial"].as_u64().unwrap(),
                v["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn an_async_sweep_killed_at_six_moments_resumes_to_its_exact_budget() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let sweep = "schedule: async, max_trials: 18, parallel_evals: 3, seed: 11";
    let cfg = write_config(dir, "c.yaml", sweep, 0.3);
    let cfg = cfg.to_str().unwrap();
    let journal = dir.join("o/journal.jsonl");
    let mut kills = 0;
    let mut left_open: BTreeSet<u64> = BTreeSet::new();
    let delays = kill_delays();
    for (segment, delay) in delays[..6].iter().enumerate() {
        let args: Vec<&str> = if journal.exists() {
            vec!["run", cfg, "--resume", "o", "--no-progress"]
        } else {
            vec!["run", cfg, "--out", "o", "--no-progress"]
        };
        let finished_before = journaled_evaluations(&journal);
        let seen_before = invocations(dir).len();
        let child = sweeper_cmd(&args, dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(*delay));
        let mut child = child;
        if child.try_wait().unwrap().is_none() {
            kill(child);
            kills += 1;
        } else {
            assert!(child.wait().unwrap().success(), "segment {segment} failed");
        }
        // the killed sweep's evaluators die with it; wait as long as one would run
        std::thread::sleep(Duration::from_millis(400));
        // the trials suggested and not finished at the kill
        let finished: BTreeSet<u64> = outcomes(&journal).iter().map(|o| o.0).collect();
        left_open.extend(suggested(&journal).difference(&finished));
        let rerun: Vec<u64> = invocations(dir)[seen_before..]
            .iter()
            .copied()
            .filter(|id| finished_before.contains(id))
            .collect();
        assert!(
            rerun.is_empty(),
            "segment {segment}: finished evaluations ran again: {rerun:?}"
        );
        // what is journaled is whole, and no trial has two outcomes
        let ids: Vec<u64> = outcomes(&journal).iter().map(|o| o.0).collect();
        let distinct: BTreeSet<u64> = ids.iter().copied().collect();
        assert_eq!(distinct.len(), ids.len(), "segment {segment}: {ids:?}");
    }
    assert!(
        kills >= 5,
        "only {kills} of 6 segments were killed mid-sweep"
    );
    // trials suggested but unfinished at a kill were evaluated again after the resume
    // (their evaluators, killed with the driver, cannot be seen to start twice: the log is
    // written after the interpreter starts, which a kill may come before)
    assert!(!left_open.is_empty(), "no kill left a trial unfinished");
    let finished_before = journaled_evaluations(&journal);
    let seen_before = invocations(dir).len();
    let last = sweeper(&["run", cfg, "--resume", "o", "--no-progress"], dir);
    assert_eq!(last.status.code(), Some(0), "{}", text(&last.stderr));
    assert!(
        invocations(dir)[seen_before..]
            .iter()
            .all(|id| !finished_before.contains(id)),
        "the last resume ran finished evaluations again"
    );
    // the budget is exact: trials 0..18, one outcome each, and every evaluation ran to an
    // outcome at most once (a trial runs again only when its run was killed under it)
    let ids: BTreeSet<u64> = outcomes(&journal).iter().map(|o| o.0).collect();
    assert_eq!(ids, (0..18).collect::<BTreeSet<u64>>());
    assert!(left_open.is_subset(&ids), "{left_open:?}");
    assert_eq!(outcomes(&journal).len(), 18);
    let result = result_json(&dir.join("o"));
    assert_eq!(result["trials"].as_array().unwrap().len(), 18);
    let order: Vec<u64> = result["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["trial"].as_u64().unwrap())
        .collect();
    let journal_order: Vec<u64> = outcomes(&journal).iter().map(|o| o.0).collect();
    assert_eq!(
        order, journal_order,
        "trials are in the order outcomes were recorded"
    );
    // a resume of the finished sweep evaluates nothing and reproduces the result
    let journal_text = std::fs::read(&journal).unwrap();
    let seen = invocations(dir).len();
    let again = sweeper(&["run", "--resume", "o", "--no-progress"], dir);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stderr));
    assert_eq!(invocations(dir).len(), seen);
    assert_eq!(std::fs::read(&journal).unwrap(), journal_text);
    assert!(
        result_json(&dir.join("o")) == result,
        "the replayed result differs"
    );
}

#[test]
fn ctrl_c_stops_an_async_sweep_that_resumes_to_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let sweep = "schedule: async, max_trials: 10, parallel_evals: 3, seed: 5, algorithm: random";
    let cfg = write_config(dir, "c.yaml", sweep, 0.5);
    let cfg = cfg.to_str().unwrap();
    let child = sweeper_cmd(&["run", cfg, "--out", "o", "--no-progress"], dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // interrupt while the first evaluations run
    wait_for(&dir.join("count.log"));
    std::thread::sleep(Duration::from_millis(200));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("sweeper run --resume"), "{stderr}");
    let journal = dir.join("o/journal.jsonl");
    let before = outcomes(&journal).len();
    assert!(before < 10, "the sweep ended before the interrupt");
    let out = sweeper(&["run", "--resume", "o", "--no-progress"], dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let ids: BTreeSet<u64> = outcomes(&journal).iter().map(|o| o.0).collect();
    assert_eq!(ids, (0..10).collect::<BTreeSet<u64>>());
    assert_eq!(outcomes(&journal).len(), 10);
}

#[test]
fn retry_failed_evaluates_the_failed_trials_again_once_and_a_resume_replays_it() {
    for sweep in [
        "max_rounds: 3, candidates_per_round: 4, parallel_evals: 2, seed: 11, algorithm: random, max_consecutive_failures: 3",
        "schedule: async, max_trials: 10, parallel_evals: 2, seed: 11, algorithm: random, max_consecutive_failures: 3",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = write_config(dir.path(), "c.yaml", sweep, 0.0);
        std::fs::write(dir.path().join("broken"), "").unwrap();
        let out = sweeper(
            &["run", cfg.to_str().unwrap(), "--out", "o", "--no-progress"],
            dir.path(),
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{sweep}: {stderr}");
        assert!(stderr.contains("--retry-failed"), "{stderr}");
        let failed: BTreeSet<u64> = outcomes(&dir.path().join("o/journal.jsonl"))
            .into_iter()
            .filter(|(_, status)| status == "failed")
            .map(|(t, _)| t)
            .collect();
        assert!(failed.len() >= 3, "{sweep}: {failed:?}");
        // fixed: without --resume the option is a usage error
        std::fs::remove_file(dir.path().join("broken")).unwrap();
        let alone = sweeper(
            &["run", cfg.to_str().unwrap(), "--retry-failed", "--out", "p"],
            dir.path(),
        );
        assert_eq!(alone.status.code(), Some(2), "{}", text(&alone.stderr));
        let seen = invocations(dir.path()).len();
        let out = sweeper(
            &[
                "run",
                "--resume",
                "o",
                "--retry-failed",
                "--no-progress",
                "-q",
            ],
            dir.path(),
        );
        assert_eq!(out.status.code(), Some(0), "{sweep}: {}", text(&out.stderr));
        let again = &invocations(dir.path())[seen..];
        for id in &failed {
            assert_eq!(
                again.iter().filter(|a| *a == id).count(),
                1,
                "{sweep}: trial {id} evaluated again once: {again:?}"
            );
        }
        let result = result_json(&dir.path().join("o"));
        let trials = result["trials"].as_array().unwrap();
        assert!(
            trials.iter().all(|t| t["status"] != "failed"),
            "{sweep}: {trials:?}"
        );
        for id in &failed {
            assert_eq!(
                trials.iter().filter(|t| t["trial"] == *id).count(),
                1,
                "{sweep}: trial {id}"
            );
        }
        // a later resume replays the retry: nothing evaluated, the same result
        let seen = invocations(dir.path()).len();
        let replayed = sweeper(&["run", "--resume", "o", "--no-progress", "-q"], dir.path());
        assert_eq!(
            replayed.status.code(),
            Some(0),
            "{}",
            text(&replayed.stderr)
        );
        assert_eq!(invocations(dir.path()).len(), seen, "{sweep}");
        assert_eq!(
            result_json(&dir.path().join("o"))["trials"],
            result["trials"],
            "{sweep}"
        );
    }
}
