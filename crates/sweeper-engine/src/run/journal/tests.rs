use super::*;

fn config(extra: &str) -> SweepConfig {
    sweeper_goal::parse(&format!(
        "search_space: {{parameters: {{tp: {{values: [1, 2]}}}}}}\nsweep: {{parallel_evals: 2{extra}}}"
    ))
    .unwrap()
}

#[test]
fn budget_keys_may_change_and_other_keys_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    drop(FileJournal::create(&path, &config("")).unwrap());
    FileJournal::open(&path, &config(", max_rounds: 90, max_trials: 7")).unwrap();
    let err = FileJournal::open(&path, &config(", seed: 2, algorithm: random")).unwrap_err();
    match &err {
        RunError::JournalMismatch { keys, .. } => {
            assert_eq!(keys, &["sweep.algorithm", "sweep.seed"]);
        }
        other => panic!("{other}"),
    }
    assert!(
        err.to_string().contains("sweep.algorithm, sweep.seed"),
        "{err}"
    );
}

#[test]
fn a_journal_of_a_sweeper_without_schedule_resumes_under_rounds_only() {
    // the header as sweepers before `sweep.schedule` wrote it: no such key anywhere
    let rounds = config("");
    let mut old = rounds.to_json_value();
    let sweep = old["sweep"].as_object_mut().unwrap();
    for key in BUDGET_KEYS.iter().copied().chain(["schedule"]) {
        sweep.remove(key);
    }
    let header = serde_json::json!({
        "kind": "header", "sweeper": "0.1.0",
        "fingerprint": fingerprint(&old.to_string()), "seed": 42, "config": old,
    });
    let suggest = r#"{"kind":"suggest","trial":0,"batch":0,"count":2,"parameters":{"tp":1}}"#;
    let outcome = r#"{"kind":"outcome","trial":0,"status":"failed","reason":"x"}"#;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    std::fs::write(&path, format!("{header}\n{suggest}\n{outcome}\n")).unwrap();
    let j = FileJournal::open(&path, &rounds).unwrap();
    assert_eq!(j.finished_trials(), 1);
    assert_eq!(j.replay().batches, [2]);
    drop(j);
    let explicit = config(", schedule: rounds");
    drop(FileJournal::open(&path, &explicit).unwrap());
    // the same trials under another schedule mean another replay order: refused
    let err = FileJournal::open(&path, &config(", schedule: async")).unwrap_err();
    match &err {
        RunError::JournalMismatch { keys, .. } => assert_eq!(keys, &["sweep.schedule"]),
        other => panic!("{other}"),
    }
    // and the header of an async journal names its schedule
    let path = dir.path().join("a.jsonl");
    drop(FileJournal::create(&path, &config(", schedule: async")).unwrap());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(r#""schedule":"async""#), "{text}");
    let err = FileJournal::open(&path, &rounds).unwrap_err();
    assert!(err.to_string().contains("sweep.schedule"), "{err}");
}

#[test]
fn create_never_replaces_and_a_second_open_is_locked_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    let first = FileJournal::create(&path, &config("")).unwrap();
    let err = FileJournal::create(&path, &config("")).unwrap_err();
    assert!(matches!(err, RunError::JournalExists { .. }), "{err}");
    let err = FileJournal::open(&path, &config("")).unwrap_err();
    assert!(matches!(err, RunError::Locked { .. }), "{err}");
    drop(first);
    FileJournal::open(&path, &config("")).unwrap();
}

/// Appends the suggestion line of `trial` (a trial's other lines follow it).
fn suggest(j: &mut FileJournal, trial: u64) {
    j.append(&Line::Suggest {
        trial,
        batch: None,
        count: None,
        parameters: Map::from_iter([("tp".to_owned(), Value::from(1))]),
    })
    .unwrap();
}

/// A journal of two batches (trials 0, 1 and 2) with outcomes, as a sweep writes it,
/// then `extra` lines.
fn journal_text(extra: &[&str]) -> String {
    let meaning = meaning(&config(""));
    let header = serde_json::to_string(&header(&config(""), None)).unwrap();
    assert!(header.contains(&meaning.to_string()));
    let mut lines = vec![
        header,
        r#"{"kind":"suggest","trial":0,"batch":0,"count":2,"parameters":{"tp":1}}"#.into(),
        r#"{"kind":"suggest","trial":1,"batch":0,"count":2,"parameters":{"tp":2}}"#.into(),
        r#"{"kind":"outcome","trial":0,"status":"failed","reason":"x"}"#.into(),
        r#"{"kind":"outcome","trial":1,"status":"feasible","report":{"output_throughput_tok_s":5}}"#.into(),
        r#"{"kind":"suggest","trial":2,"batch":1,"count":1,"parameters":{"tp":1}}"#.into(),
        r#"{"kind":"started","trial":2,"handle":"slurm:4"}"#.into(),
    ];
    lines.extend(extra.iter().map(|l| (*l).to_owned()));
    lines.join("\n") + "\n"
}

/// What reading `text` as a journal gives: by `score`/`plot` ([`read`]) and by a resume
/// ([`FileJournal::open`]), which must agree, error for error.
fn read_both(text: &str) -> Result<Replay, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    std::fs::write(&path, text).unwrap();
    let read = read(&path, None).map_err(|e| e.to_string());
    let opened = FileJournal::open(&path, &config(""))
        .map(|j| j.replay().clone())
        .map_err(|e| e.to_string());
    match (&read, &opened) {
        (Ok(a), Ok(b)) => assert_eq!(a.trials, b.trials),
        (Err(a), Err(b)) => assert_eq!(a, b),
        _ => panic!("score reads {read:?}, resume {opened:?}"),
    }
    read
}

#[test]
fn every_reader_refuses_what_a_sweep_never_writes() {
    let fine = read_both(&journal_text(&[])).unwrap();
    assert_eq!(fine.order, [0, 1, 2]);
    assert_eq!(fine.members, [vec![(0, 2), (1, 3)], vec![(2, 6)]]);
    let refused = [
        // a second, conflicting outcome (the later line used to win)
        (
            r#"{"kind":"outcome","trial":1,"status":"feasible","report":{"output_throughput_tok_s":1e12}}"#,
            "line 8: a second outcome of trial 1; a sweep records one outcome per trial: keep the line the sweep wrote and remove the other",
        ),
        // an outcome of a trial never suggested (it used to become a row with no config)
        (
            r#"{"kind":"outcome","trial":9999,"status":"failed","reason":"x"}"#,
            "line 8: an outcome of trial 9999, which no suggestion before it proposed; a sweep writes a trial's outcome after its suggestion: remove this line",
        ),
        (
            r#"{"kind":"started","trial":9999,"handle":"slurm:5"}"#,
            "line 8: a started line of trial 9999, which no suggestion before it proposed",
        ),
        (
            r#"{"kind":"suggest","trial":2,"batch":1,"count":1,"parameters":{"tp":2}}"#,
            "line 8: a second suggestion of trial 2; a sweep suggests a trial once",
        ),
        // the largest id: it used to be dropped without a word on resume
        (
            r#"{"kind":"suggest","trial":18446744073709551615,"parameters":{"tp":2}}"#,
            "line 8: trial 18446744073709551615 is beyond the largest trial id, 9007199254740991",
        ),
        (
            r#"{"kind":"suggest","trial":9007199254740992,"batch":2,"count":1,"parameters":{"tp":2}}"#,
            "line 8: trial 9007199254740992 is beyond the largest trial id",
        ),
        (
            r#"{"kind":"suggest","trial":3,"batch":0,"count":2,"parameters":{"tp":2}}"#,
            "line 8: a suggestion of batch 0 after batch 1 began",
        ),
        (
            r#"{"kind":"suggest","trial":3,"batch":1,"count":1,"parameters":{"tp":2}}"#,
            "line 8: batch 1 asked for 1 trials and this is suggestion 2",
        ),
        (
            r#"{"kind":"suggest","trial":3,"batch":1,"count":2,"parameters":{"tp":2}}"#,
            "line 8: batch 1 asked for 1 trials, not 2",
        ),
    ];
    for (line, why) in refused {
        let err = read_both(&journal_text(&[line])).unwrap_err();
        assert!(err.contains(why), "{line}: {err}");
    }
    // the largest id that is not refused
    let top =
        r#"{"kind":"suggest","trial":9007199254740991,"batch":2,"count":1,"parameters":{"tp":2}}"#;
    let replay = read_both(&journal_text(&[top])).unwrap();
    assert_eq!(replay.order, [0, 1, 2, MAX_TRIAL]);
}

#[test]
fn a_byte_order_mark_is_no_part_of_the_header() {
    let text = journal_text(&[]);
    let marked = format!("\u{feff}{text}");
    let replay = read_both(&marked).unwrap();
    assert_eq!(replay.order, [0, 1, 2]);
    assert_eq!(replay.finished(), 2);
    // a resume appends after it, and the journal reads the same again
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    std::fs::write(&path, &marked).unwrap();
    let mut j = FileJournal::open(&path, &config("")).unwrap();
    j.append(&Line::Outcome {
        trial: 2,
        status: Status::Failed,
        reason: Some("y".into()),
        report: None,
    })
    .unwrap();
    drop(j);
    assert_eq!(read(&path, None).unwrap().finished(), 3);
    // a mark and nothing else is a journal with no header
    let err = read_both("\u{feff}\n").unwrap_err();
    assert!(err.contains("line 1: the journal has no header"), "{err}");
}

#[test]
fn a_resume_refuses_a_journaled_trial_the_study_does_not_propose_again() {
    let replay = read_both(&journal_text(&[])).unwrap();
    let path = Path::new("j.jsonl");
    check_call(path, &replay, 0, &[0, 1]).unwrap();
    check_call(path, &replay, 5, &[7]).unwrap();
    let err = check_call(path, &replay, 1, &[3]).unwrap_err().to_string();
    assert!(
        err.contains(
            "line 6: trial 2 of batch 1 is not one the study proposes again (it proposes 3)"
        ),
        "{err}"
    );
    check_last_call(path, &replay, 1).unwrap();
    let err = check_last_call(path, &replay, 0).unwrap_err().to_string();
    assert!(
        err.contains("line 6: trial 2 of batch 1 follows batch 0, after which the study has nothing more to propose"),
        "{err}"
    );
}

#[test]
fn a_torn_last_line_is_cut_off_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    let mut j = FileJournal::create(&path, &config("")).unwrap();
    suggest(&mut j, 0);
    j.append(&Line::Outcome {
        trial: 0,
        status: Status::Failed,
        reason: Some("x".into()),
        report: None,
    })
    .unwrap();
    drop(j);
    let whole = std::fs::read_to_string(&path).unwrap();
    let mut f = OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(br#"{"kind":"outcome","tri"#).unwrap();
    drop(f);
    let j = FileJournal::open(&path, &config("")).unwrap();
    assert_eq!(j.torn_bytes(), 22);
    assert_eq!(j.finished_trials(), 1);
    drop(j);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), whole);
    // a complete line that is not a journal line is an error naming the line
    std::fs::write(&path, format!("{whole}garbage\n")).unwrap();
    let err = FileJournal::open(&path, &config("")).unwrap_err();
    assert!(err.to_string().contains("line 4"), "{err}");
}

#[test]
fn a_retry_keeps_each_attempt_and_is_refused_for_a_trial_that_did_not_fail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    let mut j = FileJournal::create(&path, &config("")).unwrap();
    let outcome = |trial, status| Line::Outcome {
        trial,
        status,
        reason: Some("x".into()),
        report: None,
    };
    for trial in 0..2 {
        j.append(&Line::Suggest {
            trial,
            batch: Some(0),
            count: Some(2),
            parameters: Map::new(),
        })
        .unwrap();
    }
    j.append(&outcome(0, Status::Failed)).unwrap();
    j.append(&outcome(1, Status::Infeasible)).unwrap();
    j.append(&Line::Retry { trials: vec![0] }).unwrap();
    drop(j);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(r#"{"kind":"retry","trials":[0]}"#), "{text}");
    let j = FileJournal::open(&path, &config("")).unwrap();
    let replay = j.replay().clone();
    drop(j);
    // the failure is the first attempt; the retry, not finished, is pending
    assert_eq!(replay.attempt(0, 0).unwrap().status, Status::Failed);
    assert_eq!(replay.attempt(0, 1).unwrap().status, Status::Pending);
    assert_eq!(replay.attempt(0, 2), None);
    assert_eq!(replay.retries[0].trials, [0]);
    let mut j = FileJournal::open(&path, &config("")).unwrap();
    j.append(&outcome(0, Status::Infeasible)).unwrap();
    drop(j);
    let replay = FileJournal::open(&path, &config(""))
        .unwrap()
        .replay()
        .clone();
    assert_eq!(replay.attempt(0, 0).unwrap().status, Status::Failed);
    assert_eq!(replay.attempt(0, 1).unwrap().status, Status::Infeasible);
    assert!(matches!(
        replay.events.last(),
        Some(Event::Outcome {
            trial: 0,
            attempt: 1,
            ..
        })
    ));
    // a retry of a trial whose last outcome is not a failure is refused
    let mut j = FileJournal::open(&path, &config("")).unwrap();
    j.append(&Line::Retry { trials: vec![1] }).unwrap();
    drop(j);
    let err = FileJournal::open(&path, &config("")).unwrap_err();
    assert!(
        err.to_string()
            .contains("a retry of trial 1, whose last outcome is not a failure"),
        "{err}"
    );
}

#[test]
fn a_started_handle_is_kept_for_a_trial_without_an_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    let mut j = FileJournal::create(&path, &config("")).unwrap();
    suggest(&mut j, 0);
    suggest(&mut j, 1);
    for (trial, handle) in [(0, "slurm:7"), (1, "slurm:8"), (1, "slurm:9")] {
        j.append(&Line::Started {
            trial,
            handle: handle.into(),
        })
        .unwrap();
    }
    j.append(&Line::Outcome {
        trial: 0,
        status: Status::Failed,
        reason: Some("x".into()),
        report: None,
    })
    .unwrap();
    drop(j);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains(r#"{"kind":"started","trial":1,"handle":"slurm:9"}"#),
        "{text}"
    );
    let j = FileJournal::open(&path, &config("")).unwrap();
    let replay = j.replay();
    assert_eq!(replay.trials[&0].status, Status::Failed);
    // the last handle of a trial that did not finish is what a resume re-attaches to
    assert_eq!(replay.trials[&1].status, Status::Pending);
    assert_eq!(replay.trials[&1].handle.as_deref(), Some("slurm:9"));
    assert_eq!(j.finished_trials(), 1);
}

#[test]
fn a_slurm_block_counts_by_its_presence_not_its_keys() {
    let with = |slurm: &str| {
        sweeper_goal::parse(&format!(
            "search_space: {{parameters: {{tp: {{values: [1, 2]}}}}}}\nevaluator: {{command: [x]{slurm}}}"
        ))
        .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    drop(FileJournal::create(&path, &with(", slurm: {partition: a}")).unwrap());
    FileJournal::open(&path, &with(", slurm: {partition: b, time_limit: 90}")).unwrap();
    let err = FileJournal::open(&path, &with("")).unwrap_err();
    assert!(
        matches!(&err, RunError::JournalMismatch { keys, .. } if keys == &["evaluator.slurm"]),
        "{err}"
    );
}

#[test]
fn infinite_metrics_round_trip_and_nan_is_refused() {
    let report = RawReport::from([
        ("mean_e2e_latency_ms".to_owned(), f64::INFINITY),
        ("x".to_owned(), f64::NEG_INFINITY),
    ])
    .with_label("note", "hello");
    let line = Line::Outcome {
        trial: 3,
        status: Status::Feasible,
        reason: None,
        report: Some(report.clone()),
    };
    let text = serde_json::to_string(&line).unwrap();
    assert!(text.contains(r#""mean_e2e_latency_ms":"inf""#), "{text}");
    assert!(text.contains(r#""x":"-inf""#), "{text}");
    assert_eq!(serde_json::from_str::<Line>(&text).unwrap(), line);
    let nan = text.replace(r#""inf""#, r#""nan""#);
    assert!(serde_json::from_str::<Line>(&nan).is_err());
}
