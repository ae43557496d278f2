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
            slots.suggested += batch.len() as u64;
            if (batch.len() as u64) < ask {
                slots.exhausted = true;
                // nothing new is left: the sweep has the trials it was given
                self.planned = slots.suggested;
                self.plan_final = true;
            }
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
mod tests;
