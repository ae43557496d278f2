//! External command evaluators, driven through the library API with the tiny scripts under
//! `tests/evaluators/`.

use serde_json::json;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use sweeper_engine::{EvalOutcome, EvalRequest, Evaluator, RawReport, parse_report};
use sweeper_eval::{CommandEvaluator, CommandSpec, EvaluatorError};

pub(crate) fn script(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/evaluators")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// A one-shot spec running `oneshot.py MODE`.
fn oneshot(mode: &str) -> CommandSpec {
    CommandSpec {
        timeout: Duration::from_secs(30),
        ..CommandSpec::new(vec!["python3".into(), script("oneshot.py"), mode.into()])
    }
}

fn persistent(workers: usize, start_log: &Path) -> CommandSpec {
    CommandSpec {
        persistent: true,
        workers,
        env: BTreeMap::from([(
            "SWEEPER_TEST_START_LOG".to_owned(),
            start_log.to_string_lossy().into_owned(),
        )]),
        timeout: Duration::from_secs(30),
        ..CommandSpec::new(vec!["python3".into(), script("persistent.py")])
    }
}

/// The candidate object of the issue's example.
pub(crate) fn request(id: u64) -> EvalRequest {
    let parameters = json!({"tp": 2, "replicas": 4, "router": "kv_aware", "backend": "trtllm"});
    let mut r = EvalRequest::new(id, parameters.as_object().unwrap().clone());
    r.used_gpus = Some(8);
    r.concurrency = Some(64);
    r.workload = crate::common::synthetic(4000, 500, 10.0, sweeper_goal::Load::Concurrency(64));
    r.sla = Some(sweeper_goal::Sla {
        e2e_ms: Some(20000.0),
        ..sweeper_goal::Sla::default()
    });
    r.extra
        .insert("planner_target".to_owned(), json!("throughput"));
    r
}

/// A request whose `action` parameter tells `persistent.py` what to do.
pub(crate) fn action(id: u64, action: &str) -> EvalRequest {
    let mut request = request(id);
    request
        .parameters
        .insert("action".to_owned(), json!(action));
    request
}

fn run(spec: CommandSpec) -> EvalOutcome {
    CommandEvaluator::new(spec)
        .unwrap()
        .evaluate(0, &request(1))
}

pub(crate) fn report(outcome: EvalOutcome) -> RawReport {
    match outcome {
        EvalOutcome::Report(report) => report,
        other => panic!("expected a report, got {other:?}"),
    }
}

pub(crate) fn failed(outcome: EvalOutcome) -> String {
    match outcome {
        EvalOutcome::Failed(reason) => reason,
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// Waits (bounded) until process `pid` is gone or a zombie: it can run no more code.
pub(crate) fn assert_dies(pid: u32) {
    let stat = format!("/proc/{pid}/stat");
    let give_up = Instant::now() + Duration::from_secs(20);
    loop {
        match fs::read_to_string(&stat) {
            Err(_) => return,
            // The state follows the parenthesised command name.
            Ok(text)
                if text
                    .rsplit(')')
                    .next()
                    .is_some_and(|s| s.trim_start().starts_with('Z')) =>
            {
                return;
            }
            Ok(_) if Instant::now() > give_up => panic!("process {pid} is still running"),
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

pub(crate) fn read_pid(path: &Path) -> u32 {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .trim()
        .parse()
        .unwrap()
}

fn start_log(path: &Path) -> Vec<String> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_candidate_serializes_to_the_issue_shape() {
    let value = serde_json::to_value(request(17)).unwrap();
    assert_eq!(
        value,
        json!({"id": 17,
               "parameters": {"tp": 2, "replicas": 4, "router": "kv_aware", "backend": "trtllm"},
               "used_gpus": 8,
               "concurrency": 64,
               "kv_load_ratio": null,
               "workload": {"isl": 4000, "osl": 500, "num_request_ratio": 10, "concurrency": 64},
               "sla": {"e2e_ms": 20000.0},
               "planner_target": "throughput"})
    );
}

#[test]
fn an_unbounded_limit_is_no_limit() {
    let spec = CommandSpec {
        timeout: Duration::MAX,
        ..oneshot("good")
    };
    assert_eq!(report(run(spec))["throughput"], 1250.5);
}

#[test]
fn a_good_report_comes_back_with_its_numbers() {
    let report = report(run(oneshot("good")));
    assert_eq!(
        report,
        RawReport::from([
            ("throughput".to_owned(), 1250.5),
            ("ttft_ms".to_owned(), 42.0),
            ("tpot_ms".to_owned(), f64::INFINITY),
        ])
    );
}

#[test]
fn the_evaluator_reads_the_candidate_from_stdin() {
    let evaluator = CommandEvaluator::new(oneshot("echo")).unwrap();
    let report = report(evaluator.evaluate(0, &request(17)));
    let expected = [
        ("keys_exact", 1.0),
        ("id", 17.0),
        ("tp", 2.0),
        ("tp_is_int", 1.0),
        ("replicas", 4.0),
        ("router_kv_aware", 1.0),
        ("backend_trtllm", 1.0),
        ("used_gpus", 8.0),
        ("concurrency", 64.0),
        ("kv_load_ratio", -1.0),
        ("isl", 4000.0),
        ("osl", 500.0),
        ("num_request_ratio", 10.0),
        ("e2e_ms", 20000.0),
        ("planner_throughput", 1.0),
    ];
    assert_eq!(
        report,
        expected
            .iter()
            .map(|&(k, v)| (k.to_owned(), v))
            .collect::<RawReport>()
    );

    // A ratio load: no concurrency, the ratio for the evaluator to convert.
    let mut ratio = request(18);
    ratio.concurrency = None;
    ratio.kv_load_ratio = Some(0.5);
    let report = self::report(evaluator.evaluate(0, &ratio));
    assert_eq!(report["concurrency"], -1.0);
    assert_eq!(report["kv_load_ratio"], 0.5);
}

#[test]
fn a_failing_evaluator_gives_its_exit_code_and_last_stderr_lines() {
    let reason = failed(run(oneshot("fail")));
    assert_eq!(
        reason,
        "evaluator exited with code 2: trace line 4 | trace line 5 | trace line 6 | trace line 7 | trace line 8"
    );
}

#[test]
fn exit_code_3_is_unsupported_with_the_stderr_reason() {
    assert_eq!(
        run(oneshot("unsupported")),
        EvalOutcome::Unsupported("tp=8 is not supported on this system".into())
    );
}

#[test]
fn exit_code_4_is_infeasible_with_the_stderr_reason() {
    assert_eq!(
        run(oneshot("infeasible")),
        EvalOutcome::Infeasible("kv cache holds 120 tokens, one request needs 4250".into())
    );
}

#[test]
fn a_status_answer_is_an_outcome() {
    assert_eq!(
        run(oneshot("status")),
        EvalOutcome::Unsupported("no data for this backend".into())
    );
}

#[test]
fn a_nan_report_fails_naming_the_metric() {
    assert_eq!(failed(run(oneshot("nan"))), "metric `ttft_ms` is NaN");
}

#[test]
fn a_string_value_is_kept_as_a_label() {
    let report = report(run(oneshot("string")));
    assert!(report.metrics.is_empty(), "{report:?}");
    assert_eq!(report.labels["throughput"], "fast");
}

#[test]
fn a_string_under_a_scored_metric_fails_naming_it() {
    assert_eq!(
        failed(run(oneshot("string_metric"))),
        "metric `output_throughput_tok_s` is not a number (got a string)"
    );
}

#[test]
fn a_malformed_report_fails_quoting_the_output() {
    let reason = failed(run(oneshot("malformed")));
    assert!(reason.starts_with("malformed report: "), "{reason}");
    assert!(reason.contains("throughput"), "{reason}");
}

#[test]
fn no_report_fails_with_the_stderr_tail() {
    assert_eq!(
        failed(run(oneshot("empty"))),
        "evaluator printed no report: database not found"
    );
}

#[test]
fn a_signal_is_a_failure_naming_it() {
    assert_eq!(
        failed(run(oneshot("signal"))),
        "evaluator killed by signal SIGKILL: about to crash"
    );
}

#[test]
fn a_chatty_stderr_does_not_block_the_evaluator() {
    assert_eq!(report(run(oneshot("chatty")))["throughput"], 7.0);
}

#[test]
fn too_much_stdout_is_a_failure() {
    assert_eq!(
        failed(run(oneshot("huge"))),
        "evaluator printed more than 16 MiB on stdout"
    );
}

#[test]
fn a_missing_program_is_a_failure_not_a_panic() {
    let reason = failed(run(CommandSpec::new(vec![
        "/nonexistent/sweeper-evaluator".into(),
    ])));
    assert!(
        reason.starts_with("cannot start evaluator `/nonexistent/sweeper-evaluator`: "),
        "{reason}"
    );
}

#[test]
fn env_is_added_and_cwd_applied() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("cwd-marker.txt"), "").unwrap();
    let spec = CommandSpec {
        env: BTreeMap::from([("SWEEPER_TEST_VALUE".to_owned(), "42.5".to_owned())]),
        cwd: Some(dir.path().to_path_buf()),
        ..oneshot("env")
    };
    let report = report(run(spec));
    assert_eq!(report["value"], 42.5);
    assert_eq!(report["has_path"], 1.0, "the environment is inherited");
    assert_eq!(report["in_cwd"], 1.0);
}

#[test]
fn a_missing_working_directory_is_named_in_the_failure() {
    let spec = CommandSpec {
        cwd: Some(PathBuf::from("/nonexistent/sweeper-dir")),
        ..oneshot("good")
    };
    let reason = failed(run(spec));
    assert!(
        reason.starts_with("cannot start evaluator `python3` in `/nonexistent/sweeper-dir`: "),
        "{reason}"
    );
}

#[test]
fn a_bad_spec_is_refused() {
    assert_eq!(
        CommandEvaluator::new(CommandSpec::new(Vec::new())).unwrap_err(),
        EvaluatorError::EmptyCommand
    );
    assert_eq!(
        CommandEvaluator::new(CommandSpec::new(vec![String::new()])).unwrap_err(),
        EvaluatorError::EmptyCommand
    );
    let zero = CommandSpec {
        timeout: Duration::ZERO,
        ..oneshot("good")
    };
    assert_eq!(
        CommandEvaluator::new(zero).unwrap_err(),
        EvaluatorError::ZeroTimeout
    );
    let no_workers = CommandSpec {
        persistent: true,
        workers: 0,
        ..oneshot("good")
    };
    assert_eq!(
        CommandEvaluator::new(no_workers).unwrap_err(),
        EvaluatorError::NoWorkers
    );
}

/// Paths of the marker and pid files used by the process-group scripts.
fn group_files(dir: &Path) -> (PathBuf, PathBuf) {
    (dir.join("marker"), dir.join("background.pid"))
}

fn sh(name: &str, marker: &Path, pid_file: &Path) -> Vec<String> {
    vec![
        "sh".into(),
        script(name),
        marker.to_string_lossy().into_owned(),
        pid_file.to_string_lossy().into_owned(),
    ]
}

#[test]
fn a_timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let (marker, pid_file) = group_files(dir.path());
    let spec = CommandSpec {
        timeout: Duration::from_secs(2),
        ..CommandSpec::new(sh("hang.sh", &marker, &pid_file))
    };
    let outcome = run(spec);
    assert_eq!(
        outcome,
        EvalOutcome::TimedOut(
            "evaluation ran over the 2s limit (max_eval_seconds) and was killed".into()
        )
    );
    // The background job, which would touch the marker later, is dead: it never will.
    assert_dies(read_pid(&pid_file));
    assert!(!marker.exists());
}

#[test]
fn what_an_evaluator_leaves_behind_is_killed_when_it_exits() {
    let dir = tempfile::tempdir().unwrap();
    let (marker, pid_file) = group_files(dir.path());
    // The background job holds stdout open: waiting for it would run into the limit.
    let spec = CommandSpec {
        timeout: Duration::from_mins(1),
        ..CommandSpec::new(sh("straggler.sh", &marker, &pid_file))
    };
    assert_eq!(report(run(spec))["throughput"], 3.0);
    assert_dies(read_pid(&pid_file));
    assert!(!marker.exists());
}

#[test]
fn persistent_workers_start_once_and_answer_many_candidates() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("starts.log");
    let evaluator = CommandEvaluator::new(persistent(2, &log)).unwrap();
    let pids: Vec<Vec<f64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2_usize)
            .map(|worker| {
                let evaluator = &evaluator;
                scope.spawn(move || {
                    (0..3_u64)
                        .map(|i| {
                            let id = worker as u64 * 10 + i;
                            let report = report(evaluator.evaluate(worker, &request(id)));
                            // The protocol's `id` is checked by sweeper and taken out;
                            // the worker echoes it as a metric too.
                            assert_eq!(report["candidate"], id as f64);
                            assert!(!report.contains_key("id"), "{report:?}");
                            assert_eq!(report["calls"], (i + 1) as f64);
                            report["pid"]
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for worker in &pids {
        assert!(worker.iter().all(|&pid| pid == worker[0]), "{pids:?}");
    }
    assert_ne!(pids[0][0], pids[1][0]);
    assert_eq!(start_log(&log).len(), 2, "one start per worker");

    drop(evaluator);
    for worker in &pids {
        assert!(
            !Path::new(&format!("/proc/{}", worker[0] as u32)).exists(),
            "dropping the evaluator stops and reaps its workers"
        );
    }
}

#[test]
fn a_persistent_worker_that_dies_fails_its_candidate_and_is_restarted() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("starts.log");
    let evaluator = CommandEvaluator::new(persistent(1, &log)).unwrap();
    let first = report(evaluator.evaluate(0, &request(1)))["pid"];

    let reason = failed(evaluator.evaluate(0, &action(2, "die")));
    assert_eq!(
        reason,
        "persistent evaluator exited with code 1 before answering: worker ready | worker crashed on candidate"
    );

    let after = report(evaluator.evaluate(0, &request(3)));
    assert_ne!(after["pid"], first);
    assert_eq!(after["calls"], 1.0);
    assert_eq!(start_log(&log).len(), 2);
}

#[test]
fn a_persistent_worker_that_exits_cleanly_before_answering_fails_the_candidate() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("starts.log");
    let evaluator = CommandEvaluator::new(persistent(1, &log)).unwrap();
    assert_eq!(
        failed(evaluator.evaluate(0, &action(1, "quit"))),
        "persistent evaluator exited with code 0 before answering: worker ready"
    );
    // An answer followed at once by an exit still counts, whichever the sweep sees first.
    let answer = report(evaluator.evaluate(0, &action(2, "answer_and_exit")));
    assert_eq!(answer["calls"], 1.0);
    // A worker that died between candidates is replaced before the next one goes out.
    assert_dies(answer["pid"] as u32);
    assert_eq!(report(evaluator.evaluate(0, &request(3)))["calls"], 1.0);
    assert_eq!(start_log(&log).len(), 3);
}

#[test]
fn a_persistent_worker_exiting_with_code_3_is_unsupported_and_restarted() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("starts.log");
    let evaluator = CommandEvaluator::new(persistent(1, &log)).unwrap();
    assert_eq!(
        evaluator.evaluate(0, &action(1, "exit3")),
        EvalOutcome::Unsupported("backend trtllm is not installed".into())
    );
    assert_eq!(report(evaluator.evaluate(0, &request(2)))["calls"], 1.0);
    assert_eq!(start_log(&log).len(), 2);
}

#[test]
fn a_persistent_worker_that_hangs_times_out_and_is_restarted() {
    // A shell worker: its start-up, which the first candidate's limit includes, is quick.
    let spec = CommandSpec {
        persistent: true,
        timeout: Duration::from_secs(2),
        ..CommandSpec::new(vec!["sh".into(), script("persistent.sh")])
    };
    let evaluator = CommandEvaluator::new(spec).unwrap();
    let first = report(evaluator.evaluate(0, &request(1)))["pid"];
    assert_eq!(
        evaluator.evaluate(0, &action(2, "hang")),
        EvalOutcome::TimedOut(
            "evaluation ran over the 2s limit (max_eval_seconds) and was killed".into()
        )
    );
    assert_dies(first as u32);
    let after = report(evaluator.evaluate(0, &request(3)));
    assert_ne!(after["pid"], first);
    assert_eq!(after["calls"], 1.0, "a fresh worker");
}

#[test]
fn persistent_answers_can_be_statuses_and_bad_reports_keep_the_worker() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("starts.log");
    let evaluator = CommandEvaluator::new(persistent(1, &log)).unwrap();
    assert_eq!(
        evaluator.evaluate(0, &action(1, "unsupported")),
        EvalOutcome::Unsupported("tp=8 is not supported".into())
    );
    assert_eq!(
        failed(evaluator.evaluate(0, &action(2, "nan"))),
        "metric `throughput` is NaN"
    );
    // A blank line before the answer is not an answer.
    assert_eq!(
        report(evaluator.evaluate(0, &action(3, "blank")))["calls"],
        3.0
    );
    let report = report(evaluator.evaluate(0, &request(4)));
    assert_eq!(report["calls"], 4.0, "the same worker answered all four");
    assert_eq!(start_log(&log).len(), 1);
}

#[test]
fn a_persistent_answer_naming_an_id_never_sent_fails_at_once_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("starts");
    let evaluator = CommandEvaluator::new(persistent(1, &log)).unwrap();
    // a late answer to a candidate the worker was sent is still dropped and counted
    report(evaluator.evaluate(0, &action(5, "report")));
    let started = Instant::now();
    let reason = failed(evaluator.evaluate(0, &action(7, "wrong_id")));
    // not a wait for max_eval_seconds (30 s) and a timeout
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(reason.contains("1007"), "{reason}");
    assert!(reason.contains("never sent"), "{reason}");
    assert!(reason.contains("candidate 7 was out"), "{reason}");
    // the worker that made up an id is replaced; the next candidate is answered
    let next = report(evaluator.evaluate(0, &action(8, "report")));
    assert_eq!(next["candidate"], 8.0);
    assert_eq!(start_log(&log).len(), 2);
}

#[test]
fn a_persistent_answer_that_is_not_json_restarts_the_worker() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("starts.log");
    let evaluator = CommandEvaluator::new(persistent(1, &log)).unwrap();
    let reason = failed(evaluator.evaluate(0, &action(1, "garbage")));
    assert!(reason.starts_with("malformed report: "), "{reason}");
    assert!(reason.contains("loading tables"), "{reason}");
    assert!(
        reason.contains("answers each candidate with one line"),
        "{reason}"
    );
    let report = report(evaluator.evaluate(0, &request(2)));
    assert_eq!(report["calls"], 1.0, "a fresh worker");
    assert_eq!(start_log(&log).len(), 2);
}

#[test]
fn a_persistent_worker_that_cannot_start_fails_each_candidate() {
    let spec = CommandSpec {
        persistent: true,
        ..CommandSpec::new(vec!["/nonexistent/sweeper-evaluator".into()])
    };
    let evaluator = CommandEvaluator::new(spec).unwrap();
    for id in 0..2 {
        let reason = failed(evaluator.evaluate(0, &request(id)));
        assert!(reason.starts_with("cannot start evaluator"), "{reason}");
    }
}

#[test]
fn parse_report_is_public_and_shared() {
    assert_eq!(
        parse_report(r#"{"x": -Infinity}"#).unwrap()["x"],
        f64::NEG_INFINITY
    );
}
