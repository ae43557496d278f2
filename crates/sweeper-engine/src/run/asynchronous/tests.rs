//! The async schedule's tests: budgets, duplicates, replay to the live state, handles journaled
//! at once, failures in a row.

use super::super::{FileJournal, RunResult, Sweeper, default_study, result_from_journal};
use super::*;
use crate::evaluator::Evaluator;
use std::path::Path;
use std::time::Duration;
use sweeper_goal::SweepConfig;
use sweeper_sampler::{Study, Trial};

const CONFIG: &str = "goal: {target: pareto}
search_space:
  gpu_budget: 8
  used_gpus: [tp, replicas]
  parameters:
    tp: {values: [1, 2, 4]}
    replicas: {int: [1, 4]}
    x: {float: [0.0, 1.0]}
sweep: {schedule: async, parallel_evals: 3, max_trials: 14, seed: 5}";

fn config(sweep: &str) -> SweepConfig {
    let text = CONFIG.replace(
        "{schedule: async, parallel_evals: 3, max_trials: 14, seed: 5}",
        sweep,
    );
    sweeper_goal::parse(&text).unwrap()
}

fn study(config: &SweepConfig) -> Study {
    let mut s = default_study(config).unwrap();
    s.use_low_effort();
    s
}

/// Sleeps long for every third trial, so that outcomes arrive out of trial order, and
/// reports numbers that depend only on the parameters; remembers whom it evaluated.
#[derive(Default)]
struct Sleepy {
    calls: Mutex<Vec<u64>>,
    fail: bool,
}

impl Sleepy {
    fn calls(&self) -> Vec<u64> {
        self.calls.lock().unwrap().clone()
    }
}

impl Evaluator for Sleepy {
    fn evaluate(&self, _worker: usize, request: &EvalRequest) -> EvalOutcome {
        self.calls.lock().unwrap().push(request.id);
        let ms = if request.id.is_multiple_of(3) { 60 } else { 2 };
        std::thread::sleep(Duration::from_millis(ms));
        if self.fail {
            return EvalOutcome::Failed("broken".into());
        }
        let p = &request.parameters;
        let tp = p["tp"].as_f64().unwrap();
        let replicas = p["replicas"].as_f64().unwrap();
        let x = p["x"].as_f64().unwrap();
        let gpus = tp * replicas;
        EvalOutcome::Report(
            [
                (
                    "output_throughput_tok_s".to_owned(),
                    gpus * 100.0 * (0.2 + x) * (1.0 - 0.05 * tp),
                ),
                (
                    "mean_output_token_throughput_per_user".to_owned(),
                    200.0 / (1.0 + 8.0 * x) * tp.sqrt(),
                ),
                ("gpu_hours".to_owned(), gpus * 0.5),
                ("duration_ms".to_owned(), 1_800_000.0),
            ]
            .into(),
        )
    }
}

fn run(
    config: &SweepConfig,
    journal: &Path,
    evaluator: &Sleepy,
    study: &mut Study,
) -> Result<RunResult, RunError> {
    let mut j = if journal.exists() {
        FileJournal::open(journal, config)?
    } else {
        FileJournal::create(journal, config)?
    };
    Sweeper::builder(config)
        .evaluator(evaluator)
        .proposer(study)
        .journal(&mut j)
        .run()
}

/// A batch job's handle reaches the journal the moment the evaluator reports it, even
/// while the main thread is inside a long `suggest` (a kill then must not lose it).
#[test]
fn a_handle_is_journaled_while_the_proposer_is_busy() {
    use std::sync::atomic::{AtomicBool, Ordering};

    /// The first evaluation answers at once; a later one reports its handle only once the
    /// proposer is inside its second call.
    struct Submits<'f> {
        evaluations: std::sync::atomic::AtomicUsize,
        in_suggest: &'f AtomicBool,
        reported: &'f std::sync::atomic::AtomicU64,
    }
    impl Evaluator for Submits<'_> {
        fn evaluate(&self, worker: usize, request: &EvalRequest) -> EvalOutcome {
            self.evaluate_with(worker, request, &EvalContext::detached())
        }
        fn evaluate_with(
            &self,
            _worker: usize,
            request: &EvalRequest,
            context: &EvalContext<'_>,
        ) -> EvalOutcome {
            if self.evaluations.fetch_add(1, Ordering::SeqCst) > 0
                && self.reported.load(Ordering::SeqCst) == u64::MAX
            {
                wait_for(|| self.in_suggest.load(Ordering::SeqCst));
                context.started(&format!("job-{}", request.id));
                self.reported.store(request.id, Ordering::SeqCst);
            }
            EvalOutcome::Report(
                [
                    (
                        "output_throughput_tok_s".to_owned(),
                        100.0 + request.id as f64,
                    ),
                    ("mean_output_token_throughput_per_user".to_owned(), 10.0),
                    ("gpu_hours".to_owned(), 1.0),
                    ("duration_ms".to_owned(), 1000.0),
                ]
                .into(),
            )
        }
    }
    /// The study, but its second call waits for trial 1's handle, then looks for it in
    /// the journal before it answers.
    struct Slow<'f> {
        study: Study,
        calls: usize,
        journal: &'f Path,
        in_suggest: &'f AtomicBool,
        reported: &'f std::sync::atomic::AtomicU64,
        seen: &'f AtomicBool,
    }
    impl Proposer for Slow<'_> {
        fn suggest(&mut self, count: usize) -> Result<Vec<Trial>, RunError> {
            self.calls += 1;
            if self.calls == 2 {
                self.in_suggest.store(true, Ordering::SeqCst);
                wait_for(|| self.reported.load(Ordering::SeqCst) != u64::MAX);
                let trial = self.reported.load(Ordering::SeqCst);
                let text = std::fs::read_to_string(self.journal).unwrap();
                let line = format!(r#""kind":"started","trial":{trial},"handle":"job-{trial}""#);
                self.seen.store(text.contains(&line), Ordering::SeqCst);
            }
            Ok(self.study.suggest(count)?)
        }
        fn observe(
            &mut self,
            trial: u64,
            measurement: &std::collections::BTreeMap<String, f64>,
        ) -> Result<(), RunError> {
            Ok(self.study.observe(trial, measurement)?)
        }
        fn observe_infeasible(&mut self, trial: u64, reason: &str) -> Result<(), RunError> {
            Ok(self.study.observe_infeasible(trial, reason)?)
        }
    }
    fn wait_for(done: impl Fn() -> bool) {
        let start = std::time::Instant::now();
        while !done() && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    let config = config("{schedule: async, parallel_evals: 2, max_trials: 4, seed: 2}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let (in_suggest, seen) = (AtomicBool::new(false), AtomicBool::new(false));
    let reported = std::sync::atomic::AtomicU64::new(u64::MAX);
    let evaluator = Submits {
        evaluations: std::sync::atomic::AtomicUsize::new(0),
        in_suggest: &in_suggest,
        reported: &reported,
    };
    let proposer = Slow {
        study: study(&config),
        calls: 0,
        journal: &path,
        in_suggest: &in_suggest,
        reported: &reported,
        seen: &seen,
    };
    let mut journal = FileJournal::create(&path, &config).unwrap();
    Sweeper::builder(&config)
        .evaluator(&evaluator)
        .proposer(proposer)
        .journal(&mut journal)
        .run()
        .unwrap();
    assert_ne!(
        reported.load(Ordering::SeqCst),
        u64::MAX,
        "a second evaluation ran beside the first and reported its handle"
    );
    assert!(
        seen.load(Ordering::SeqCst),
        "the handle was in the journal while the proposer was still busy"
    );
}

fn outcome_lines(journal: &Path) -> Vec<u64> {
    std::fs::read_to_string(journal)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "outcome")
        .map(|v| v["trial"].as_u64().unwrap())
        .collect()
}

#[test]
fn replaying_an_async_journal_reaches_the_live_study_state() {
    let config = config("{schedule: async, parallel_evals: 3, max_trials: 14, seed: 5}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let live_eval = Sleepy::default();
    let mut live_study = study(&config);
    let live = run(&config, &path, &live_eval, &mut live_study).unwrap();
    // the budget is exact, each trial once
    assert_eq!(live.trials.len(), 14);
    let mut ids: Vec<u64> = live.trials.iter().map(|t| t.trial).collect();
    assert_ne!(
        ids,
        (0..14).collect::<Vec<u64>>(),
        "outcomes arrived in trial order: the test proves nothing"
    );
    ids.sort_unstable();
    assert_eq!(ids, (0..14).collect::<Vec<u64>>());
    assert!(
        live.tallies.infeasible > 0 && live.tallies.feasible > 0,
        "{:?}",
        live.tallies
    );
    let mut order = outcome_lines(&path);
    assert_eq!(
        order,
        live.trials.iter().map(|t| t.trial).collect::<Vec<_>>()
    );
    order.sort_unstable();
    order.dedup();
    assert_eq!(order.len(), 14);

    // resume of the finished sweep: nothing evaluated, nothing written, the same state
    let before = std::fs::read(&path).unwrap();
    let replay_eval = Sleepy::default();
    let mut replayed_study = study(&config);
    let replayed = run(&config, &path, &replay_eval, &mut replayed_study).unwrap();
    assert!(replay_eval.calls().is_empty(), "{:?}", replay_eval.calls());
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(replayed_study.to_json(), live_study.to_json());
    assert_eq!(replayed.trials, live.trials);
    assert_eq!(replayed.candidates, live.candidates);
    // and reading the journal alone gives the same result
    let read = result_from_journal(&config, &path).unwrap();
    assert_eq!(read.trials, live.trials);
    assert_eq!(read.candidates, live.candidates);
}

#[test]
fn a_journal_cut_anywhere_resumes_without_losing_or_repeating_an_evaluation() {
    let config = config("{schedule: async, parallel_evals: 3, max_trials: 12, seed: 9}");
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.jsonl");
    run(&config, &whole, &Sleepy::default(), &mut study(&config)).unwrap();
    let text = std::fs::read_to_string(&whole).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for cut in (1..lines.len()).step_by(2) {
        let path = dir.path().join(format!("cut{cut}.jsonl"));
        let mut kept = lines[..cut].join("\n");
        kept.push('\n');
        if cut % 4 == 1 {
            // a line torn by the kill
            kept.push_str(&lines[cut][..lines[cut].len() / 2]);
        }
        std::fs::write(&path, &kept).unwrap();
        let finished = outcome_lines(&path);
        let evaluator = Sleepy::default();
        let mut resumed_study = study(&config);
        let resumed = run(&config, &path, &evaluator, &mut resumed_study).unwrap();
        let again: Vec<u64> = evaluator
            .calls()
            .into_iter()
            .filter(|id| finished.contains(id))
            .collect();
        assert!(again.is_empty(), "cut {cut}: evaluated again: {again:?}");
        // the budget is exact, every trial has one outcome, in the journal as in the result
        let mut ids = outcome_lines(&path);
        assert_eq!(
            ids,
            resumed.trials.iter().map(|t| t.trial).collect::<Vec<_>>()
        );
        ids.sort_unstable();
        assert_eq!(ids, (0..12).collect::<Vec<u64>>(), "cut {cut}");
        // the resumed journal replays to the state the resumed run ended in
        let mut replayed_study = study(&config);
        let replayed = run(&config, &path, &Sleepy::default(), &mut replayed_study).unwrap();
        assert_eq!(
            replayed_study.to_json(),
            resumed_study.to_json(),
            "cut {cut}"
        );
        assert_eq!(replayed.trials, resumed.trials, "cut {cut}");
    }
}

/// Lends out a study and records, at every call of `suggest`, how many trials were
/// pending and how many were asked for.
struct Recording<'a> {
    study: &'a mut Study,
    pending: HashSet<u64>,
    calls: Vec<(usize, usize)>,
}

impl Proposer for Recording<'_> {
    fn suggest(&mut self, count: usize) -> Result<Vec<Trial>, RunError> {
        self.calls.push((self.pending.len(), count));
        let trials = self.study.suggest(count)?;
        self.pending.extend(trials.iter().map(|t| t.id));
        Ok(trials)
    }
    fn observe(
        &mut self,
        trial: u64,
        measurement: &std::collections::BTreeMap<String, f64>,
    ) -> Result<(), RunError> {
        assert!(self.pending.remove(&trial));
        Ok(self.study.observe(trial, measurement)?)
    }
    fn observe_infeasible(&mut self, trial: u64, reason: &str) -> Result<(), RunError> {
        assert!(self.pending.remove(&trial));
        Ok(self.study.observe_infeasible(trial, reason)?)
    }
}

#[test]
fn a_freed_slot_is_filled_at_once_with_the_running_trials_pending() {
    // no max_trials: the budget is max_rounds * candidates_per_round
    let config = config(
        "{schedule: async, parallel_evals: 3, max_rounds: 4, candidates_per_round: 4, seed: 2}",
    );
    let mut s = study(&config);
    let mut recording = Recording {
        study: &mut s,
        pending: HashSet::new(),
        calls: Vec::new(),
    };
    let evaluator = Sleepy::default();
    let result = Sweeper::builder(&config)
        .evaluator(&evaluator)
        .proposer(&mut recording)
        .run()
        .unwrap();
    assert_eq!(result.trials.len(), 16);
    let calls = &recording.calls;
    assert_eq!(calls[0], (0, 3));
    let mut asked = 0;
    for &(pending, count) in calls {
        asked += count;
        // every free slot is asked for, up to the budget; the running trials are pending
        assert!(pending + count == 3 || asked == 16, "{calls:?}");
    }
    assert_eq!(asked, 16);
    assert!(calls.iter().any(|&(pending, _)| pending == 2), "{calls:?}");
    assert!(recording.pending.is_empty());
}

/// Hands out every trial of the study twice (the copy under a new id, suggested later),
/// as a proposer without deduplication would; observations of copies are dropped.
struct Twice {
    study: Study,
    copies: VecDeque<Trial>,
}

const COPY: u64 = 1_000_000;

impl Proposer for Twice {
    fn suggest(&mut self, count: usize) -> Result<Vec<Trial>, RunError> {
        let mut out: Vec<Trial> = Vec::new();
        while out.len() < count {
            if let Some(t) = self.copies.pop_front() {
                out.push(t);
            } else {
                let t = self.study.suggest(1)?.remove(0);
                let mut copy = t.clone();
                copy.id += COPY;
                self.copies.push_back(copy);
                out.push(t);
            }
        }
        Ok(out)
    }
    fn observe(
        &mut self,
        trial: u64,
        m: &std::collections::BTreeMap<String, f64>,
    ) -> Result<(), RunError> {
        if trial < COPY {
            self.study.observe(trial, m)?;
        }
        Ok(())
    }
    fn observe_infeasible(&mut self, trial: u64, reason: &str) -> Result<(), RunError> {
        if trial < COPY {
            self.study.observe_infeasible(trial, reason)?;
        }
        Ok(())
    }
}

#[test]
fn a_duplicate_of_a_running_configuration_waits_for_its_outcome() {
    let config = config("{schedule: async, parallel_evals: 3, max_trials: 10, seed: 3}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let mut j = FileJournal::create(&path, &config).unwrap();
    let evaluator = Sleepy::default();
    let twice = Twice {
        study: study(&config),
        copies: VecDeque::new(),
    };
    let result = Sweeper::builder(&config)
        .evaluator(&evaluator)
        .proposer(twice)
        .journal(&mut j)
        .run()
        .unwrap();
    assert_eq!(result.trials.len(), 10);
    let journal = std::fs::read_to_string(&path).unwrap();
    let line_of = |kind: &str, trial: u64| {
        journal
            .lines()
            .position(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["kind"] == kind && v["trial"] == trial
            })
            .unwrap()
    };
    let over_budget = |t: &super::super::TrialResult| {
        t.reason
            .as_deref()
            .is_some_and(|r| r.starts_with("over gpu_budget"))
    };
    let mut waited = 0;
    for (at, copy) in result.trials.iter().enumerate() {
        if copy.trial < COPY {
            continue;
        }
        let original = result
            .trials
            .iter()
            .position(|t| t.trial == copy.trial - COPY)
            .unwrap();
        // answered after its original: from the cache, or over the budget like it
        assert!(original < at, "{copy:?}");
        if over_budget(&result.trials[original]) {
            assert!(over_budget(copy), "{copy:?}");
        } else {
            assert_eq!(copy.status, Status::CacheHit, "{copy:?}");
            if line_of("suggest", copy.trial) < line_of("outcome", copy.trial - COPY) {
                waited += 1;
            }
        }
    }
    assert!(waited > 0, "no copy was suggested while its original ran");
    // a copy is never evaluated; every other trial not over the budget is, once
    let calls = evaluator.calls();
    assert!(calls.iter().all(|&id| id < COPY));
    let evaluated = result
        .trials
        .iter()
        .filter(|t| t.status != Status::CacheHit && !over_budget(t))
        .count();
    assert_eq!(calls.len(), evaluated);
    assert_eq!(
        journal.matches("cache_hit").count() as u64,
        result.tallies.cache_hits
    );
}

fn run_retrying(
    config: &SweepConfig,
    journal: &Path,
    evaluator: &Sleepy,
    study: &mut Study,
) -> Result<RunResult, RunError> {
    let mut j = FileJournal::open(journal, config)?;
    Sweeper::builder(config)
        .evaluator(evaluator)
        .proposer(study)
        .journal(&mut j)
        .retry_failed(true)
        .run()
}

fn retry_lines(journal: &Path) -> Vec<Vec<u64>> {
    std::fs::read_to_string(journal)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "retry")
        .map(|v| serde_json::from_value(v["trials"].clone()).unwrap())
        .collect()
}

#[test]
fn retry_failed_evaluates_the_failed_trials_again_and_replays_to_the_same_state() {
    for sweep in [
        "{schedule: async, parallel_evals: 2, max_trials: 9, seed: 4, max_consecutive_failures: 3, algorithm: random}",
        "{parallel_evals: 2, max_rounds: 3, candidates_per_round: 3, seed: 4, max_consecutive_failures: 3, algorithm: random}",
    ] {
        let config = config(sweep);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let broken = Sleepy {
            fail: true,
            ..Sleepy::default()
        };
        let err = run(&config, &path, &broken, &mut study(&config)).unwrap_err();
        assert!(
            matches!(err, RunError::TooManyFailures { .. }),
            "{sweep}: {err}"
        );
        let mut failed = broken.calls();
        failed.sort_unstable();
        // fixed, and the failures evaluated again: each once, none failed any more
        let fixed = Sleepy::default();
        let mut retried_study = study(&config);
        let retried = run_retrying(&config, &path, &fixed, &mut retried_study).unwrap();
        assert_eq!(
            retried.tallies.failed,
            0,
            "{sweep}: {:?} {:?} failed first: {failed:?}",
            retried.tallies,
            retried
                .trials
                .iter()
                .filter(|t| t.status == Status::Failed)
                .collect::<Vec<_>>()
        );
        for id in &failed {
            assert_eq!(
                fixed.calls().iter().filter(|c| *c == id).count(),
                1,
                "{sweep}: trial {id}: {:?}",
                fixed.calls()
            );
            let t = retried.trials.iter().find(|t| t.trial == *id).unwrap();
            assert_ne!(t.status, Status::Failed, "{sweep}: {t:?}");
        }
        assert_eq!(retry_lines(&path), [failed.clone()], "{sweep}");
        let ids: HashSet<u64> = retried.trials.iter().map(|t| t.trial).collect();
        assert_eq!(ids.len(), retried.trials.len(), "{sweep}: a trial twice");
        if sweep.contains("async") {
            assert_eq!(retried.trials.len(), 9, "{sweep}: the budget");
        }
        // a resume replays the failures and the retry where they were: the same state,
        // nothing evaluated, nothing written (a second --retry-failed has no failure left)
        let before = std::fs::read(&path).unwrap();
        for retry in [false, true] {
            let again = Sleepy::default();
            let mut replayed_study = study(&config);
            let replayed = if retry {
                run_retrying(&config, &path, &again, &mut replayed_study)
            } else {
                run(&config, &path, &again, &mut replayed_study)
            }
            .unwrap();
            assert!(again.calls().is_empty(), "{sweep}: {:?}", again.calls());
            assert_eq!(std::fs::read(&path).unwrap(), before, "{sweep}");
            assert_eq!(replayed_study.to_json(), retried_study.to_json(), "{sweep}");
            assert_eq!(replayed.trials, retried.trials, "{sweep}");
            assert_eq!(replayed.candidates, retried.candidates, "{sweep}");
        }
        let read = result_from_journal(&config, &path).unwrap();
        assert_eq!(read.tallies.failed, 0, "{sweep}");
    }
}

#[test]
fn consecutive_failures_stop_the_slots_and_resume_goes_on_to_the_budget() {
    let config = config(
        "{schedule: async, parallel_evals: 2, max_trials: 9, seed: 4, max_consecutive_failures: 3, algorithm: random}",
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.jsonl");
    let broken = Sleepy {
        fail: true,
        ..Sleepy::default()
    };
    let err = run(&config, &path, &broken, &mut study(&config)).unwrap_err();
    let RunError::TooManyFailures { count, reasons } = &err else {
        panic!("{err}");
    };
    // the limit, plus the evaluation running beside the third
    assert!((3..=4).contains(count), "{err}");
    assert_eq!(reasons[0].0, "broken");
    assert_eq!(broken.calls().len(), *count as usize);
    let failed_before = outcome_lines(&path);
    // every failed evaluation is journaled
    for id in broken.calls() {
        assert!(failed_before.contains(&id));
    }
    let fixed = Sleepy::default();
    let result = run(&config, &path, &fixed, &mut study(&config)).unwrap();
    assert_eq!(result.trials.len(), 9);
    assert!(fixed.calls().iter().all(|id| !failed_before.contains(id)));
    assert_eq!(result.tallies.failed, u64::from(*count));
}
