//! Evaluators that misbehave on purpose (issue 13): answers out of step, floods of stray
//! output, detached children, workers that exit or stop reading. Each must cost the sweep
//! at most its own candidate, never the next one's answer, its memory or the limit.

use crate::evaluator::{action, assert_dies, failed, read_pid, report, request, script};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};
use sweeper_engine::{EvalOutcome, Evaluator};
use sweeper_eval::{CommandEvaluator, CommandSpec};

/// One persistent worker running `unruly.py`, with a limit that a test notices when it is
/// waited out.
fn unruly(env: BTreeMap<String, String>) -> CommandSpec {
    CommandSpec {
        persistent: true,
        env,
        timeout: Duration::from_secs(20),
        ..CommandSpec::new(vec!["python3".into(), script("unruly.py")])
    }
}

fn unruly_evaluator() -> CommandEvaluator {
    CommandEvaluator::new(unruly(BTreeMap::new())).unwrap()
}

#[test]
fn a_late_second_answer_is_not_credited_to_the_next_candidate() {
    let evaluator = unruly_evaluator();
    let first = report(evaluator.evaluate(0, &action(1, "late")));
    assert_eq!(first["candidate"], 1.0);
    assert_eq!(first["late"], 0.0);
    assert!(
        !first.contains_key("id"),
        "the protocol's id is not a metric: {first:?}"
    );
    // Sent at once; the worker's second answer to candidate 1 comes 0.3 s later.
    let second = report(evaluator.evaluate(0, &request(2)));
    assert_eq!(second["candidate"], 2.0, "{second:?}");
    assert_eq!(second["late"], 0.0, "{second:?}");
    assert_eq!(second["calls"], 2.0, "the same worker answered");
    assert_eq!(evaluator.dropped_lines(), 1, "the late line, counted");
}

#[test]
fn an_answer_one_candidate_behind_is_not_credited() {
    let evaluator = unruly_evaluator();
    for id in 1..=3 {
        let answer = report(evaluator.evaluate(0, &action(id, "behind")));
        assert_eq!(answer["candidate"], id as f64, "{answer:?}");
        assert_eq!(answer["calls"], id as f64, "the same worker answered");
    }
    assert_eq!(evaluator.dropped_lines(), 2, "the two repeated answers");
    let notes = evaluator.notes();
    assert_eq!(notes.len(), 1, "one note for the one worker: {notes:?}");
    assert!(
        notes[0].starts_with("persistent worker 0 printed 2 stdout lines"),
        "{notes:?}"
    );
}

#[test]
fn a_status_answer_may_carry_the_id() {
    let evaluator = unruly_evaluator();
    assert_eq!(
        evaluator.evaluate(0, &action(1, "status_id")),
        EvalOutcome::Infeasible("kv cache too small".into())
    );
    assert_eq!(report(evaluator.evaluate(0, &request(2)))["calls"], 2.0);
}

/// A line of `/proc/self/status` in KiB (`VmRSS`, `VmHWM`).
fn status_kib(key: &str) -> u64 {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with(key))
        .unwrap_or_else(|| panic!("no {key} in /proc/self/status"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn wait_for(path: &Path, limit: Duration) {
    let give_up = Instant::now() + limit;
    while !path.exists() {
        assert!(
            Instant::now() < give_up,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_flood_of_stray_lines_is_bounded_and_the_next_candidate_answered() {
    let dir = tempfile::tempdir().unwrap();
    let flooded = dir.path().join("flooded");
    let env = BTreeMap::from([
        ("UNRULY_FLOOD_MB".to_owned(), "200".to_owned()),
        (
            "UNRULY_FLOODED".to_owned(),
            flooded.to_string_lossy().into_owned(),
        ),
    ]);
    let evaluator = CommandEvaluator::new(unruly(env)).unwrap();
    // The peak is measured from here on: "5" resets VmHWM to the current RSS.
    fs::write("/proc/self/clear_refs", "5").unwrap();
    let before = status_kib("VmRSS:");
    assert_eq!(
        report(evaluator.evaluate(0, &action(1, "flood")))["calls"],
        1.0
    );
    // 200 MiB of stray lines while no candidate is out, all read by sweeper before the
    // next candidate goes out.
    wait_for(&flooded, Duration::from_mins(1));
    std::thread::sleep(Duration::from_millis(500));
    let peak = status_kib("VmHWM:");
    let grown_mib = peak.saturating_sub(before) >> 10;
    assert!(
        grown_mib < 64,
        "sweeper grew by {grown_mib} MiB while the worker flooded 200 MiB"
    );
    let next = report(evaluator.evaluate(0, &request(2)));
    assert_eq!(next["candidate"], 2.0, "{next:?}");
    assert_eq!(next["calls"], 2.0, "the same worker answered");
    let stray: u64 = fs::read_to_string(&flooded).unwrap().parse().unwrap();
    assert!(stray > 1_000_000, "{stray}");
    assert_eq!(
        evaluator.dropped_lines(),
        stray,
        "every stray line, counted"
    );
}

/// `detach.sh PID_FILE [hang]` as a one-shot evaluator.
fn detach(pid_file: &Path, hang: bool, timeout: Duration) -> CommandSpec {
    let mut argv = vec![
        "sh".to_owned(),
        script("detach.sh"),
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

#[test]
fn a_detached_child_holding_stdout_does_not_hold_the_report_back() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("detached.pid");
    let evaluator =
        CommandEvaluator::new(detach(&pid_file, false, Duration::from_secs(20))).unwrap();
    let started = Instant::now();
    let outcome = evaluator.evaluate(0, &request(1));
    let took = started.elapsed();
    assert_eq!(report(outcome)["throughput"], 5.0);
    assert!(
        took < Duration::from_secs(5),
        "the evaluator exited at once, the outcome took {took:?}"
    );
    assert_dies(read_pid(&pid_file));
}

#[test]
fn a_timeout_kills_a_detached_child_too() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("detached.pid");
    let evaluator = CommandEvaluator::new(detach(&pid_file, true, Duration::from_secs(2))).unwrap();
    assert_eq!(
        evaluator.evaluate(0, &request(1)),
        EvalOutcome::TimedOut(
            "evaluation ran over the 2s limit (max_eval_seconds) and was killed".into()
        )
    );
    assert_dies(read_pid(&pid_file));
}

#[test]
fn a_worker_that_exits_after_answering_is_restarted_before_the_next_candidate() {
    let evaluator = unruly_evaluator();
    for round in 0..3 {
        let id = 10 * round;
        assert_eq!(
            evaluator.evaluate(0, &action(id, "status_then_exit")),
            EvalOutcome::Infeasible("kv cache too small".into())
        );
        // Sent while the worker is still exiting: it never reads this candidate.
        let next = report(evaluator.evaluate(0, &request(id + 1)));
        assert_eq!(next["candidate"], (id + 1) as f64, "{next:?}");
        assert_eq!(next["calls"], 1.0, "a fresh worker");
    }
}

#[test]
fn a_worker_that_closes_its_input_fails_the_next_candidate_at_once() {
    let evaluator = unruly_evaluator();
    let first = report(evaluator.evaluate(0, &action(1, "answer_then_close")));
    let started = Instant::now();
    let reason = failed(evaluator.evaluate(0, &request(2)));
    let took = started.elapsed();
    assert!(reason.contains("closed its input"), "{reason}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
    // The deaf worker is replaced for the candidate after.
    let after = report(evaluator.evaluate(0, &request(3)));
    assert_ne!(after["pid"], first["pid"]);
    assert_eq!(after["calls"], 1.0);
}
