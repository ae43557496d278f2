//! The asynchronous schedule (`sweep.schedule: async`): `parallel_evals` slots, each
//! refilled the moment its evaluation ends. Its decisions are listed in the docs of
//! [`crate::run`].

use super::journal::{Event, Line};
use super::ledger::{Entry, Source, classify, replayed_source};
use super::{Engine, Prepared, Proposer, RunError, Status, without_nan};
use crate::evaluator::{EvalContext, EvalOutcome, EvalRequest};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Mutex, mpsc};

/// Trials between the proposer and the evaluator.
#[derive(Default)]
struct Slots {
    /// Trials the proposer returned so far, replayed ones included (the budget counts them).
    suggested: u64,
    /// Calls of the proposer so far.
    calls: u64,
    /// The proposer returned fewer trials than asked: nothing new is left.
    exhausted: bool,
    /// Trials that need an evaluation and wait for a free slot, oldest first.
    ready: VecDeque<Prepared>,
    /// Trials being evaluated, by id.
    running: HashMap<u64, Prepared>,
    /// The cache keys of the trials in `ready` or `running`.
    evaluating: HashSet<String>,
    /// Duplicates of a configuration in `ready` or `running`, by its key: answered from
    /// the cache once it has its outcome.
    waiting: HashMap<String, Vec<Prepared>>,
}

/// One evaluation handed to a worker: the trial, its request, and the handle an earlier run
/// journaled for it (a batch job to re-attach to), if any.
type Job = (u64, EvalRequest, Option<String>);

/// What a worker tells the slots.
enum Done {
    /// A worker journaled a `started` line (the trial's evaluation runs outside sweeper as a
    /// handle, which a resume re-attaches to instead of starting it again); the error, if
    /// the line could not be written.
    Started(Option<RunError>),
    /// The trial's evaluation ended.
    Finished(u64, EvalOutcome),
}

/// Why the slots stop being filled.
#[derive(Default)]
struct End {
    /// `max_consecutive_failures` was reached.
    stopped: bool,
    /// The journal or the proposer failed: the sweep ends with this error.
    error: Option<RunError>,
}

/// Whether a trial's outcome still needs its journal line when it is closed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Journaled {
    /// Read from the journal (resume): nothing to write.
    Replayed,
    /// Written already, as the evaluator's outcome arrived.
    Written,
    /// Decided by the engine (over the GPU budget, a cache hit): written from the verdict.
    Now,
}

impl Engine<'_, '_> {
    /// Runs the asynchronous schedule to its end: replay, then the slots.
    pub(super) fn asynchronous(&mut self, proposer: &mut dyn Proposer) -> Result<(), RunError> {
        let mut slots = Slots::default();
        self.replay_async(proposer, &mut slots)?;
        let workers = self.slots;
        let evaluator = self.evaluator;
        let journal = self.journal;
        let (job_tx, job_rx) = mpsc::channel::<Job>();
        let job_rx = Mutex::new(job_rx);
        let (done_tx, done_rx) = mpsc::channel::<Done>();
        std::thread::scope(|scope| {
            // Worker `w` always passes `w` to the evaluator (one process per worker for a
            // persistent evaluator); at most `workers` jobs are ever sent unanswered, so a
            // job never waits for a worker.
            for worker in 0..workers {
                let done_tx = done_tx.clone();
                let job_rx = &job_rx;
                scope.spawn(move || {
                    loop {
                        let job = match job_rx.lock() {
                            Ok(rx) => rx.recv(),
                            Err(_) => break,
                        };
                        let Ok((trial, request, resumed)) = job else {
                            break;
                        };
                        // Journaled here, the moment the evaluator reports it (a batch job just
                        // submitted): the main thread may be in a long `suggest`, and a kill
                        // before it drained a message would lose the line, so that a resume
                        // submitted the job again.
                        let started = |handle: &str| {
                            let line = Line::Started {
                                trial,
                                handle: handle.to_owned(),
                            };
                            let written = super::rounds::append(journal, &line);
                            let _ = done_tx.send(Done::Started(written.err()));
                        };
                        let context = EvalContext::new(resumed.as_deref(), &started);
                        let outcome =
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                evaluator.evaluate_with(worker, &request, &context)
                            }))
                            .unwrap_or_else(|_| {
                                EvalOutcome::Failed("the evaluator panicked".into())
                            });
                        if done_tx
                            .send(Done::Finished(trial, without_nan(outcome)))
                            .is_err()
                        {
                            break;
                        }
                    }
                });
            }
            drop(done_tx);
            let result = self.run_slots(proposer, &mut slots, workers, &job_tx, &done_rx);
            // the workers end once their evaluation (if any) is done
            drop(job_tx);
            result
        })
    }

    /// Replays an async journal in line order; the trials it leaves unfinished are admitted
    /// again (evaluated first).
    fn replay_async(
        &mut self,
        proposer: &mut dyn Proposer,
        slots: &mut Slots,
    ) -> Result<(), RunError> {
        let replay = self.replay;
        let mut open: BTreeMap<u64, Prepared> = BTreeMap::new();
        let mut closed: HashSet<u64> = HashSet::new();
        for event in &replay.events {
            match *event {
                Event::Batch { count } => {
                    let batch = proposer.suggest(count)?;
                    self.check_call(usize::try_from(slots.calls).unwrap_or(usize::MAX), &batch)?;
                    let call = slots.calls;
                    slots.calls += 1;
                    if batch.len() < count {
                        slots.exhausted = true;
                    }
                    slots.suggested += batch.len() as u64;
                    for trial in &batch {
                        let p = self.prepare_with(trial, |_| true)?;
                        if self
                            .recorded(trial.id)
                            .is_none_or(|r| r.parameters.is_none())
                        {
                            // the run died between the suggestion lines of one call
                            self.log(&Line::Suggest {
                                trial: trial.id,
                                batch: Some(call),
                                count: Some(count as u64),
                                parameters: p.parameters.clone(),
                            })?;
                        }
                        open.insert(trial.id, p);
                    }
                }
                Event::Retry { index } => {
                    self.next_retry = index + 1;
                    let trials = replay.retries[index].trials.clone();
                    for trial in trials {
                        closed.remove(&trial);
                        let p = self.reopen(proposer, trial)?;
                        open.insert(trial, p);
                    }
                }
                Event::Outcome {
                    trial,
                    line,
                    attempt,
                } => {
                    let journal_error = |detail: String| RunError::Journal {
                        path: self.journal_path.clone(),
                        line: Some(line),
                        detail,
                    };
                    let Some(p) = open.remove(&trial) else {
                        return Err(journal_error(if closed.contains(&trial) {
                            super::journal::second_outcome(trial)
                        } else {
                            super::journal::unsuggested_outcome(trial)
                        }));
                    };
                    let source = match (
                        &p.early,
                        replay.attempt(trial, attempt).and_then(replayed_source),
                    ) {
                        (Some((status, reason)), _) => Source::Early(*status, reason.clone()),
                        (None, Some(source)) => source,
                        (None, None) => {
                            // recorded as pending: not finished
                            open.insert(trial, p);
                            continue;
                        }
                    };
                    closed.insert(trial);
                    self.close(proposer, p, source, Journaled::Replayed)?;
                }
            }
        }
        // suggested and never finished: pending in the proposer as in the run that died
        for (_, p) in open {
            self.admit(proposer, slots, p)?;
        }
        // --retry-failed: the failed trials are evaluated again, after those
        if let Some(retried) = self.retry_due(proposer, replay.batches.len())? {
            for p in retried {
                self.admit(proposer, slots, p)?;
            }
        }
        Ok(())
    }

    /// Keeps the slots busy until the budget is spent (or the proposer has nothing new, or
    /// too many evaluations failed in a row, or the sweep was cancelled), observing every
    /// outcome as it arrives.
    fn run_slots(
        &mut self,
        proposer: &mut dyn Proposer,
        slots: &mut Slots,
        workers: usize,
        jobs: &mpsc::Sender<Job>,
        done: &mpsc::Receiver<Done>,
    ) -> Result<(), RunError> {
        let mut end = End::default();
        loop {
            if end.error.is_none()
                && !end.stopped
                && !self.cancelled()
                && let Err(e) = self.fill(proposer, slots, workers, jobs)
            {
                end.error = Some(e);
            }
            if slots.running.is_empty() {
                break;
            }
            let Ok(first) = done.recv() else {
                break;
            };
            // outcomes that arrived together are all observed before the next suggestion
            let arrived: Vec<Done> = std::iter::once(first).chain(done.try_iter()).collect();
            for message in arrived {
                match message {
                    Done::Started(failed) => {
                        if let Some(e) = failed
                            && end.error.is_none()
                        {
                            end.error = Some(e);
                        }
                    }
                    Done::Finished(trial, outcome) => {
                        self.arrive(proposer, slots, trial, outcome, &mut end);
                    }
                }
            }
        }
        if let Some(e) = end.error {
            return Err(e);
        }
        if self.cancelled() {
            return Err(RunError::Interrupted);
        }
        if end.stopped {
            return Err(self.too_many_failures());
        }
        Ok(())
    }

    /// One evaluation's outcome: journaled, recorded, observed, and the duplicates that
    /// waited for it answered; once the sweep is ending on an error, only journaled.
    fn arrive(
        &mut self,
        proposer: &mut dyn Proposer,
        slots: &mut Slots,
        trial: u64,
        outcome: EvalOutcome,
        end: &mut End,
    ) {
        let Some(p) = slots.running.remove(&trial) else {
            return;
        };
        slots.evaluating.remove(&p.key);
        let gpu_budget = self.config.search_space.gpu_budget as f64;
        let (status, reason, report) = classify(&outcome, p.declared_gpus, gpu_budget);
        if status == Status::Failed && self.cancelled() {
            // perhaps killed by the interrupt: left unfinished, so resume runs it
            return;
        }
        let line = Line::Outcome {
            trial,
            status,
            reason: reason.clone(),
            report,
        };
        if end.error.is_some() {
            // keep what finished in the journal (resume replays it), tell nobody else
            let _ = self.log(&line);
            return;
        }
        if status == Status::Failed {
            self.failures_in_row.push(reason.unwrap_or_default());
            let limit = self.config.sweep.max_consecutive_failures.max(1) as usize;
            if self.failures_in_row.len() >= limit {
                end.stopped = true;
            }
        } else {
            self.failures_in_row.clear();
        }
        let key = p.key.clone();
        let finished = self
            .log(&line)
            .and_then(|()| self.close(proposer, p, Source::Evaluated(outcome), Journaled::Written))
            .and_then(|()| self.release(proposer, slots, &key));
        if let Err(e) = finished {
            end.error = Some(e);
        }
    }

    /// Fills the free slots: trials waiting for one first, then new suggestions.
    fn fill(
        &mut self,
        proposer: &mut dyn Proposer,
        slots: &mut Slots,
        workers: usize,
        jobs: &mpsc::Sender<Job>,
    ) -> Result<(), RunError> {
        let budget = self.config.sweep.trial_budget();
        while slots.running.len() < workers {
            // a stop asked for while the proposer was suggesting starts nothing more (the
            // suggested trials are journaled: a resume evaluates them)
            if self.cancelled() {
                break;
            }
            if let Some(p) = slots.ready.pop_front() {
                let Some(request) = p.request.clone() else {
                    continue;
                };
                // the handle an earlier run journaled for a trial it did not finish
                let resumed = self
                    .replayed_outcome(p.trial)
                    .and_then(|r| r.handle.clone());
                jobs.send((p.trial, request, resumed)).map_err(|_| {
                    RunError::Setup("internal: the evaluation workers ended early".into())
                })?;
                slots.running.insert(p.trial, p);
                continue;
            }
            if slots.exhausted || slots.suggested >= budget {
                break;
            }
            let ask = ((workers - slots.running.len()) as u64).min(budget - slots.suggested);
            let batch = proposer.suggest(usize::try_from(ask).unwrap_or(usize::MAX))?;
            let call = slots.calls;
            slots.calls += 1;
            if (batch.len() as u64) < ask {
                slots.exhausted = true;
            }
            slots.suggested += batch.len() as u64;
            // every suggestion line of the call before anything it leads to: resume repeats
            // the call where its first line is
            let mut prepared = Vec::with_capacity(batch.len());
            for trial in &batch {
                let p = self.prepare_with(trial, |_| true)?;
                self.log(&Line::Suggest {
                    trial: trial.id,
                    batch: Some(call),
                    count: Some(ask),
                    parameters: p.parameters.clone(),
                })?;
                prepared.push(p);
            }
            for p in prepared {
                self.admit(proposer, slots, p)?;
            }
        }
        Ok(())
    }

    /// Decides what a trial needs: an outcome now (over the GPU budget, a cache hit), to
    /// wait for a duplicate being evaluated, or an evaluation.
    fn admit(
        &mut self,
        proposer: &mut dyn Proposer,
        slots: &mut Slots,
        p: Prepared,
    ) -> Result<(), RunError> {
        if let Some((status, reason)) = p.early.clone() {
            return self.close(proposer, p, Source::Early(status, reason), Journaled::Now);
        }
        if self.ledger.has_cached_key(&p.key) {
            return self.close(proposer, p, Source::CacheHit, Journaled::Now);
        }
        if slots.evaluating.contains(&p.key) {
            slots.waiting.entry(p.key.clone()).or_default().push(p);
            return Ok(());
        }
        slots.evaluating.insert(p.key.clone());
        slots.ready.push_back(p);
        Ok(())
    }

    /// Answers the duplicates that waited for the configuration `key` from the cache.
    fn release(
        &mut self,
        proposer: &mut dyn Proposer,
        slots: &mut Slots,
        key: &str,
    ) -> Result<(), RunError> {
        for p in slots.waiting.remove(key).unwrap_or_default() {
            self.close(proposer, p, Source::CacheHit, Journaled::Now)?;
        }
        Ok(())
    }

    /// Records a trial's outcome in the ledger, journals it when that is still to do, and
    /// tells the proposer and the observer.
    fn close(
        &mut self,
        proposer: &mut dyn Proposer,
        p: Prepared,
        source: Source,
        journaled: Journaled,
    ) -> Result<(), RunError> {
        let trial = p.trial;
        let kept = p.clone();
        let verdict =
            self.ledger
                .record(Entry::new(trial, p.parameters, p.declared_gpus, source))?;
        self.note_outcome(verdict.status, kept);
        if journaled == Journaled::Now {
            self.log(&Line::Outcome {
                trial,
                status: verdict.status,
                reason: verdict.reason.clone(),
                report: None,
            })?;
        }
        match &verdict.measurement {
            Some(m) => proposer.observe(trial, m)?,
            None => proposer
                .observe_infeasible(trial, verdict.reason.as_deref().unwrap_or("infeasible"))?,
        }
        self.report_progress(journaled == Journaled::Replayed);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
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
                    let line =
                        format!(r#""kind":"started","trial":{trial},"handle":"job-{trial}""#);
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
}
