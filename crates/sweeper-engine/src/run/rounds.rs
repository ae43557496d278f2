//! The rounds schedule (SPEC 7): suggest a batch, evaluate it `parallel_evals` at a time,
//! observe in trial order; and the pieces the async schedule shares with it.

use super::FileJournal;
use super::{
    Engine, Entry, Prepared, Progress, Proposer, RunError, Source, Status, classify, journal,
    ledger, replayed_source, space,
};
use crate::evaluator::EvalContext;
use crate::evaluator::EvalOutcome;
use crate::evaluator::EvalRequest;
use crate::evaluator::Evaluator;
use serde_json::Value;
use std::collections::HashMap;
use std::collections::HashSet;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::{Mutex, PoisonError};
use sweeper_sampler::Trial;

impl Engine<'_, '_> {
    /// Whether the sweep was asked to stop.
    pub(super) fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::SeqCst))
    }

    pub(super) fn log(&mut self, line: &journal::Line) -> Result<(), RunError> {
        append(self.journal, line)
    }

    pub(super) fn recorded(&self, trial: u64) -> Option<&journal::Recorded> {
        self.replay.trials.get(&trial)
    }

    /// [`journal::check_call`] of the `call`-th call of the proposer, which gave `batch`.
    pub(super) fn check_call(&self, call: usize, batch: &[Trial]) -> Result<(), RunError> {
        if self.journal.is_none() {
            return Ok(());
        }
        let ids: Vec<u64> = batch.iter().map(|t| t.id).collect();
        journal::check_call(&self.journal_path, self.replay, call, &ids)
    }

    /// What the journal recorded for the trial's current evaluation (its first, or the
    /// one after its latest retry).
    pub(super) fn replayed_outcome(&self, trial: u64) -> Option<&journal::Recorded> {
        self.replay
            .attempt(trial, self.attempts.get(&trial).copied().unwrap_or(0))
    }

    /// Keeps a trial whose outcome is a failure for a retry; forgets one that has another.
    pub(super) fn note_outcome(&mut self, status: Status, p: Prepared) {
        if status == Status::Failed {
            self.failed.insert(p.trial, p);
        } else {
            self.failed.remove(&p.trial);
        }
    }

    /// The retries due before call `batch_no` of the proposer: the next retry line of the
    /// journal if it was written there, else (once every recorded call and retry is
    /// replayed) the one `--retry-failed` asks for, journaled now. Each trial comes back
    /// reopened in the proposer, its failure taken back from the ledger.
    pub(super) fn retry_due(
        &mut self,
        proposer: &mut dyn Proposer,
        batch_no: usize,
    ) -> Result<Option<Vec<Prepared>>, RunError> {
        let trials = match self.replay.retries.get(self.next_retry) {
            Some(retry) if retry.after_batches == batch_no => {
                self.next_retry += 1;
                retry.trials.clone()
            }
            None if self.retry_failed && batch_no >= self.replay.batches.len() => {
                self.retry_failed = false;
                let trials: Vec<u64> = self.failed.keys().copied().collect();
                if trials.is_empty() {
                    return Ok(None);
                }
                self.log(&journal::Line::Retry {
                    trials: trials.clone(),
                })?;
                trials
            }
            // a journaled retry due later, or none asked for
            _ => return Ok(None),
        };
        let mut prepared = Vec::with_capacity(trials.len());
        for trial in trials {
            prepared.push(self.reopen(proposer, trial)?);
        }
        Ok(Some(prepared))
    }

    /// Makes a failed trial pending again: out of the ledger, reopened in the proposer.
    pub(super) fn reopen(
        &mut self,
        proposer: &mut dyn Proposer,
        trial: u64,
    ) -> Result<Prepared, RunError> {
        let p = self
            .failed
            .remove(&trial)
            .ok_or_else(|| RunError::Journal {
                path: self.journal_path.clone(),
                line: None,
                detail: format!("a retry of trial {trial}, which has no failed outcome to retry"),
            })?;
        self.ledger.forget_failed(trial, &p.key);
        proposer.reopen(trial)?;
        *self.attempts.entry(trial).or_insert(0) += 1;
        Ok(p)
    }

    /// The outcomes of a prepared batch, by index: replayed from the journal where it
    /// holds them, else evaluated `threads` at a time (each journaled as it arrives). The
    /// sweep ends here when it was asked to stop or failed too often in a row.
    pub(super) fn outcomes_of(
        &mut self,
        prepared: &[Prepared],
        threads: usize,
    ) -> Result<HashMap<usize, Source>, RunError> {
        let mut outcomes: HashMap<usize, Source> = HashMap::new();
        let mut to_run: Vec<(usize, EvalRequest)> = Vec::new();
        for (i, p) in prepared.iter().enumerate() {
            if let Some(req) = &p.request {
                match self.replayed_outcome(p.trial).and_then(replayed_source) {
                    Some(source) => {
                        outcomes.insert(i, source);
                    }
                    None => to_run.push((i, req.clone())),
                }
            }
        }
        let stopped = self.evaluate(prepared, &to_run, threads, &mut outcomes)?;
        if self.cancelled() {
            return Err(RunError::Interrupted);
        }
        if stopped {
            return Err(self.too_many_failures());
        }
        Ok(outcomes)
    }

    /// Runs the retries due before call `batch_no` (rounds): each retried trial is
    /// evaluated again (or its new outcome replayed), recorded and observed in trial
    /// order, outside the rounds' counts.
    pub(super) fn retry_rounds(
        &mut self,
        proposer: &mut dyn Proposer,
        batch_no: usize,
        threads: usize,
    ) -> Result<(), RunError> {
        while let Some(prepared) = self.retry_due(proposer, batch_no)? {
            let mut outcomes = self.outcomes_of(&prepared, threads)?;
            for (i, p) in prepared.into_iter().enumerate() {
                let source = match (&p.early, outcomes.remove(&i)) {
                    (Some((status, reason)), _) => Source::Early(*status, reason.clone()),
                    (None, Some(source)) => source,
                    (None, None) => Source::Early(
                        Status::Failed,
                        "internal: a retried trial without an outcome".into(),
                    ),
                };
                self.settle(proposer, p, source)?;
            }
        }
        Ok(())
    }

    /// Records a trial's outcome in the ledger, journals it when the engine decided it
    /// (over the budget, a cache hit) and the journal does not hold it yet, tells the
    /// proposer, and reports progress; the trial's status.
    fn settle(
        &mut self,
        proposer: &mut dyn Proposer,
        p: Prepared,
        source: Source,
    ) -> Result<Status, RunError> {
        let replayed = self
            .replayed_outcome(p.trial)
            .is_some_and(|r| r.status != Status::Pending);
        let kept = p.clone();
        let verdict =
            self.ledger
                .record(Entry::new(p.trial, p.parameters, p.declared_gpus, source))?;
        if p.request.is_none() && !replayed {
            self.log(&journal::Line::Outcome {
                trial: p.trial,
                status: verdict.status,
                reason: verdict.reason.clone(),
                report: None,
            })?;
        }
        match &verdict.measurement {
            Some(m) => proposer.observe(p.trial, m)?,
            None => proposer
                .observe_infeasible(p.trial, verdict.reason.as_deref().unwrap_or("infeasible"))?,
        }
        self.note_outcome(verdict.status, kept);
        self.report_progress(replayed);
        Ok(verdict.status)
    }

    /// The error of a sweep stopped by `max_consecutive_failures`: the failures in a row
    /// and their reasons, most frequent first.
    pub(super) fn too_many_failures(&self) -> RunError {
        let mut reasons: HashMap<&str, u64> = HashMap::new();
        for r in &self.failures_in_row {
            *reasons.entry(r.as_str()).or_insert(0) += 1;
        }
        let mut reasons: Vec<(String, u64)> = reasons
            .into_iter()
            .map(|(r, n)| (r.to_owned(), n))
            .collect();
        reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        RunError::TooManyFailures {
            count: self.failures_in_row.len() as u32,
            reasons,
        }
    }

    /// Sends progress to the observer.
    pub(super) fn report_progress(&mut self, replayed: bool) {
        let tallies = self.ledger.tallies();
        self.observer.progress(&Progress {
            done: tallies.total(),
            budget: self.planned.max(tallies.total()),
            budget_is_final: self.plan_final || self.planned >= self.plan_cap,
            tallies,
            best_score: self.ledger.best_score(),
            front_size: self.ledger.front_size(),
            replayed,
        });
    }

    /// The rounds of SPEC 7.
    pub(super) fn rounds(&mut self, proposer: &mut dyn Proposer) -> Result<(), RunError> {
        let settings = &self.config.sweep;
        let per_round = u64::from(settings.candidates_per_round);
        let max_trials = settings.max_trials.unwrap_or(u64::MAX);
        let threads = self.slots;
        let mut suggested: u64 = 0;
        let mut batch_no: usize = 0;
        let mut exhausted = false;

        'rounds: for round in 0..settings.max_rounds {
            let rounds_after = u64::from(settings.max_rounds - round - 1);
            let mut successes: u64 = 0;
            let mut attempts: u64 = 0;
            while successes < per_round && attempts < 11 * per_round {
                self.retry_rounds(proposer, batch_no, threads)?;
                let live = (per_round - successes)
                    .min(11 * per_round - attempts)
                    .min(max_trials.saturating_sub(suggested));
                // a call the journal recorded is made again with the count it asked for
                let ask = self
                    .replay
                    .batches
                    .get(batch_no)
                    .map_or(live, |&n| n as u64);
                if ask == 0 {
                    break;
                }
                if self.cancelled() {
                    return Err(RunError::Interrupted);
                }
                let batch = proposer.suggest(usize::try_from(ask).unwrap_or(usize::MAX))?;
                self.check_call(batch_no, &batch)?;
                let this_batch = batch_no as u64;
                batch_no += 1;
                if (batch.len() as u64) < ask {
                    exhausted = true;
                    if self.journal.is_some() {
                        journal::check_last_call(&self.journal_path, self.replay, batch_no - 1)?;
                    }
                }
                if batch.is_empty() {
                    break 'rounds;
                }
                suggested += batch.len() as u64;
                attempts += batch.len() as u64;
                // the fewest trials the sweep comes to: this batch, then full rounds
                self.plan_final = exhausted;
                self.planned = if exhausted {
                    suggested
                } else {
                    (suggested + per_round * rounds_after).min(self.plan_cap)
                };

                // Build every candidate of the batch; decide what needs an evaluation.
                let mut prepared = Vec::with_capacity(batch.len());
                let mut batch_keys: HashSet<String> = HashSet::new();
                for trial in &batch {
                    let p = self.prepare(trial, &mut batch_keys)?;
                    if self
                        .recorded(trial.id)
                        .is_none_or(|r| r.parameters.is_none())
                    {
                        self.log(&journal::Line::Suggest {
                            trial: trial.id,
                            batch: Some(this_batch),
                            count: Some(ask),
                            parameters: p.parameters.clone(),
                        })?;
                    }
                    prepared.push(p);
                }

                // Evaluate what needs it (or replay it from the journal), in parallel; each
                // outcome is journaled the moment it arrives.
                let mut outcomes = self.outcomes_of(&prepared, threads)?;

                // Score and observe in trial order.
                for (i, p) in prepared.into_iter().enumerate() {
                    let source = if let Some((status, reason)) = p.early.clone() {
                        Source::Early(status, reason)
                    } else if let Some(source) = outcomes.remove(&i) {
                        source
                    } else {
                        Source::CacheHit
                    };
                    if self.settle(proposer, p, source)? == Status::Feasible {
                        successes += 1;
                    } else if !exhausted && attempts < 11 * per_round {
                        // the round asks for another trial in its place
                        self.planned = (self.planned + 1).min(self.plan_cap);
                    }
                }
                if exhausted {
                    break 'rounds;
                }
            }
            if successes < per_round {
                break;
            }
        }
        // a retry written after the last call of the proposer (or asked for now)
        self.retry_rounds(proposer, batch_no, threads)
    }

    /// Runs `to_run` and journals each outcome as it arrives; returns whether the sweep
    /// must stop (too many failures in a row).
    pub(super) fn evaluate(
        &mut self,
        prepared: &[Prepared],
        to_run: &[(usize, EvalRequest)],
        threads: usize,
        outcomes: &mut HashMap<usize, Source>,
    ) -> Result<bool, RunError> {
        let budget = self.config.search_space.gpu_budget as f64;
        let limit = self.config.sweep.max_consecutive_failures.max(1) as usize;
        let stop = AtomicBool::new(false);
        let evaluator = self.evaluator;
        // the handle an earlier run journaled for a trial it did not finish (a batch job)
        let resumed: Vec<Option<String>> = to_run
            .iter()
            .map(|(i, _)| {
                self.replayed_outcome(prepared[*i].trial)
                    .and_then(|r| r.handle.clone())
            })
            .collect();
        let stops = [Some(&stop), self.cancel];
        let fresh = evaluate_parallel(
            evaluator,
            to_run,
            &resumed,
            threads,
            &stops,
            |job, event| {
                let p = &prepared[to_run[job].0];
                let outcome = match event {
                    JobEvent::Started(handle) => {
                        return self.log(&journal::Line::Started {
                            trial: p.trial,
                            handle: handle.to_owned(),
                        });
                    }
                    JobEvent::Finished(outcome) => outcome,
                };
                let (status, reason, report) = classify(outcome, p.declared_gpus, budget);
                if status == Status::Failed && self.cancelled() {
                    // perhaps killed by the interrupt: left unfinished, so resume runs it
                    return Ok(());
                }
                if status == Status::Failed {
                    self.failures_in_row
                        .push(reason.clone().unwrap_or_default());
                    if self.failures_in_row.len() >= limit {
                        stop.store(true, Ordering::SeqCst);
                    }
                } else {
                    self.failures_in_row.clear();
                }
                self.log(&journal::Line::Outcome {
                    trial: p.trial,
                    status,
                    reason,
                    report,
                })
            },
        )?;
        for ((i, _), outcome) in to_run.iter().zip(fresh) {
            if let Some(outcome) = outcome {
                outcomes.insert(*i, Source::Evaluated(outcome));
            }
        }
        Ok(stop.load(Ordering::SeqCst))
    }

    /// Builds one trial's candidate and decides whether it needs an evaluation: over the
    /// budget (known before evaluating) and duplicates do not.
    pub(super) fn prepare(
        &self,
        trial: &Trial,
        batch_keys: &mut HashSet<String>,
    ) -> Result<Prepared, RunError> {
        self.prepare_with(trial, |key| {
            if self.ledger.has_cached_key(key) || batch_keys.contains(key) {
                false
            } else {
                batch_keys.insert(key.to_owned());
                true
            }
        })
    }

    /// Builds one trial's candidate; `evaluate(key)` says whether a trial that is not
    /// decided before evaluating (over the budget) gets a request.
    pub(super) fn prepare_with(
        &self,
        trial: &Trial,
        mut evaluate: impl FnMut(&str) -> bool,
    ) -> Result<Prepared, RunError> {
        let config = self.config;
        let (mut parameters, deployment) = space::candidate(trial, self.topology.as_ref());
        let ratio = space::searched_ratio(trial);
        // A searched load's level is the candidate's load, not a parameter the evaluator maps.
        let level = space::take_level(config, &mut parameters);
        let topology_load = deployment
            .map(|d| space::topology_concurrency(config, &d, ratio))
            .transpose()
            .map(Option::flatten);
        let mut all_params = parameters.clone();
        if let Some(r) = ratio {
            all_params.insert(space::KV_LOAD_RATIO.into(), Value::from(r));
        }
        if let Ok(Some(l)) = level {
            let (key, value) = l.entry();
            all_params.insert(key, value);
        }
        if let Some(rec_params) = self.recorded(trial.id).and_then(|r| r.parameters.as_ref())
            && rec_params != &all_params
        {
            return Err(RunError::JournalDiverged {
                path: self.journal_path.clone(),
                trial: trial.id,
                recorded: Value::Object(rec_params.clone()).to_string(),
                now: Value::Object(all_params).to_string(),
            });
        }
        let key = ledger::key_of(&all_params);
        let mut early = None;
        let mut request = None;
        let mut declared_gpus = None;
        match space::declared_gpus(config, &parameters) {
            Err(reason) => early = Some((Status::Failed, reason)),
            Ok(_) if level.is_err() => {
                early = Some((Status::Failed, level.clone().err().unwrap_or_default()));
            }
            Ok(gpus) => {
                declared_gpus = gpus;
                match gpus {
                    Some(g) if g > config.search_space.gpu_budget => {
                        let budget = config.search_space.gpu_budget;
                        let why = format!("over gpu_budget: used_gpus={g} > gpu_budget={budget}");
                        early = Some((Status::Infeasible, why));
                    }
                    _ if topology_load.is_err() => {
                        let why = topology_load.clone().err().unwrap_or_default();
                        early = Some((Status::Infeasible, why));
                    }
                    _ if !evaluate(&key) => {}
                    _ => {
                        let mut req = space::request(
                            config,
                            trial.id,
                            parameters,
                            ratio,
                            level.clone().ok().flatten(),
                            gpus,
                        );
                        if let Ok(Some(c)) = topology_load {
                            req.concurrency = Some(c);
                        }
                        if let Some(p) = self.provider {
                            p.decorate(&mut req);
                        }
                        request = Some(req);
                    }
                }
            }
        }
        Ok(Prepared {
            trial: trial.id,
            parameters: all_params,
            key,
            declared_gpus,
            request,
            early,
        })
    }
}

/// Appends `line` to the journal, if the sweep has one (its lock held for the one line).
pub(super) fn append(
    journal: Option<&Mutex<&mut FileJournal>>,
    line: &journal::Line,
) -> Result<(), RunError> {
    match journal {
        Some(j) => j
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .append(line),
        None => Ok(()),
    }
}

/// A report holding NaN is a failure: NaN never enters the journal or the scoring.
pub(super) fn without_nan(outcome: EvalOutcome) -> EvalOutcome {
    match &outcome {
        EvalOutcome::Report(r) => match r.metrics.iter().find(|(_, v)| v.is_nan()) {
            Some((key, _)) => EvalOutcome::Failed(format!("metric `{key}` is NaN")),
            None => outcome,
        },
        _ => outcome,
    }
}

/// What a running evaluation tells the engine, on the calling thread of
/// [`evaluate_parallel`].
pub(super) enum JobEvent<'e> {
    /// It runs outside sweeper as this handle (journaled at once).
    Started(&'e str),
    /// It ended.
    Finished(&'e EvalOutcome),
}

/// A message from a worker thread.
pub(super) enum Message {
    Started(usize, String),
    Finished(usize, EvalOutcome),
}

/// Evaluates `jobs` with up to `threads` workers; worker `w` always passes `w` to the
/// evaluator, so a persistent evaluator keeps one process per worker. Job `i` gets
/// `resumed[i]` as the handle of its earlier run, if any. `on_event` runs on the calling
/// thread for every handle an evaluation reports and as each outcome arrives (the journal
/// writes them there); outcomes come back in job order, `None` for jobs never started
/// because one of `stops` was set. A panicking evaluator is a failed evaluation, not a crashed
/// sweep.
pub(super) fn evaluate_parallel(
    evaluator: &dyn Evaluator,
    jobs: &[(usize, EvalRequest)],
    resumed: &[Option<String>],
    threads: usize,
    stops: &[Option<&AtomicBool>],
    mut on_event: impl FnMut(usize, JobEvent<'_>) -> Result<(), RunError>,
) -> Result<Vec<Option<EvalOutcome>>, RunError> {
    let mut results: Vec<Option<EvalOutcome>> = vec![None; jobs.len()];
    if jobs.is_empty() {
        return Ok(results);
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<Message>();
    let mut first_error = None;
    std::thread::scope(|scope| {
        for worker in 0..threads.min(jobs.len()) {
            let tx = tx.clone();
            let next = &next;
            let failed = &failed;
            scope.spawn(move || {
                loop {
                    if failed.load(Ordering::SeqCst)
                        || stops.iter().flatten().any(|s| s.load(Ordering::SeqCst))
                    {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some((_, request)) = jobs.get(i) else {
                        break;
                    };
                    let started = |handle: &str| {
                        let _ = tx.send(Message::Started(i, handle.to_owned()));
                    };
                    let context =
                        EvalContext::new(resumed.get(i).and_then(Option::as_deref), &started);
                    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        evaluator.evaluate_with(worker, request, &context)
                    }))
                    .unwrap_or_else(|_| EvalOutcome::Failed("the evaluator panicked".into()));
                    if tx.send(Message::Finished(i, without_nan(outcome))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for message in rx {
            let (i, event) = match &message {
                Message::Started(i, handle) => (*i, JobEvent::Started(handle)),
                Message::Finished(i, outcome) => (*i, JobEvent::Finished(outcome)),
            };
            if first_error.is_none()
                && let Err(e) = on_event(i, event)
            {
                // a journal that cannot be written: start nothing new
                failed.store(true, Ordering::SeqCst);
                first_error = Some(e);
            }
            if let Message::Finished(i, outcome) = message {
                results[i] = Some(outcome);
            }
        }
    });
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(results)
}
