//! The sweep engine (SPEC 7): rounds of suggest → build each candidate → evaluate → score →
//! feasibility → `observe` / `observe_infeasible`.
//!
//! [`Sweeper::builder`] takes the pieces — an [`Evaluator`], optionally a [`Proposer`] (the
//! config's study by default), a [`FileJournal`], a [`Provider`] and a [`RunObserver`] —
//! and [`SweeperBuilder::run`] returns the [`RunResult`]. The engine touches no file except
//! the journal it was given; writing `result.json`, the CSVs and the plot is
//! `sweeper_tables::write_outputs`, which the `sweeper` binary calls.
//!
//! ```no_run
//! use sweeper_engine::Sweeper;
//! # use sweeper_engine::{EvalOutcome, EvalRequest, Evaluator};
//! # struct MyBenchmark;
//! # impl Evaluator for MyBenchmark {
//! #     fn evaluate(&self, _: usize, _: &EvalRequest) -> EvalOutcome { unimplemented!() }
//! # }
//!
//! let config = sweeper_goal::from_path("examples/quickstart.yaml".as_ref())?;
//! // any `Evaluator`: yours, or one of `sweeper-eval` / `sweeper-model`
//! let result = Sweeper::builder(&config).evaluator(&MyBenchmark).run()?;
//! println!("{} candidates on the front", result.candidates.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `sweep.schedule` picks the loop: `rounds` (the default) is SPEC 7, with the decisions
//! below; `async` keeps every slot busy, with the decisions after them. Both feed the same
//! [`Ledger`] and journal.
//!
//! Decisions where the SPEC is silent:
//! - A round asks the proposer for as many trials as it still needs (at most the attempts
//!   and the `max_trials` left), evaluates them with up to `parallel_evals` at once, and then
//!   observes them **in trial order**, so that a run's result does not depend on which
//!   evaluation finished first: the same seed and evaluator give the same result, and a
//!   resumed run ends exactly where an uninterrupted one does.
//! - Resume replays the journal's calls of the proposer with the counts they asked for, so
//!   the study reaches the same state even when the budget keys changed (a longer
//!   `max_rounds`, another `candidates_per_round`): that is how a finished sweep is extended.
//! - "New successful evaluations" are feasible evaluations of configurations not seen
//!   before; cache hits, infeasible, failed and unsupported ones are attempts only.
//! - A failed or unsupported evaluation is closed with `observe_infeasible` (so the study
//!   moves on and is never steered towards it), and tallied under its own name.
//! - An evaluation that runs over `max_eval_seconds` is tallied infeasible (SPEC 6).
//! - `max_consecutive_failures` evaluations of this process failing in a row (in the order
//!   they finish) stop the sweep with [`RunError::TooManyFailures`]; evaluations already
//!   running finish and are journaled, no new one starts. Failures replayed from a journal
//!   do not count, so `--resume` after a fix goes on.
//! - With [`SweeperBuilder::retry_failed`] the trials whose last outcome is a failure are
//!   evaluated again once every recorded call of the proposer is replayed (under rounds,
//!   before the next call; under async, after the trials left running), outside the
//!   rounds' counts and the async budget; a `retry` journal line marks the place, where a
//!   resume replays it.
//! - A report holding NaN is a failed evaluation: NaN never reaches the journal.
//! - A sweep given a stop flag ([`SweeperBuilder::cancel`], set by a Ctrl-C handler, say)
//!   starts nothing new once it is set, lets the running evaluations finish and journals
//!   them, but for failures (perhaps the interrupt's doing: resume runs those again), and
//!   returns [`RunError::Interrupted`]; under both schedules.
//! - When the proposer cannot propose anything new (a finite space fully explored), the
//!   search ends after that batch.
//!
//! Under `sweep.schedule: async` (an extension beyond the SPEC):
//! - Whenever slots are free (and nothing is waiting for one), the proposer is asked once
//!   for as many trials as there are free slots, with every running trial still pending in
//!   it: at the start that is one batch of `parallel_evals`, then mostly `suggest(1)`.
//!   Outcomes that arrive together are each observed before the next call.
//! - Each outcome is journaled and observed the moment it arrives, in arrival order; the
//!   ledger records trials in that order too (so `RunResult::trials` is in outcome order).
//! - The budget is [`SweepSettings::trial_budget`](sweeper_goal::SweepSettings::trial_budget)
//!   trials, counted as the proposer returns them: cache hits and trials over the GPU
//!   budget count, so a sweep that ends normally has exactly that many trials.
//! - A duplicate of a configuration that is being evaluated waits for it and is answered
//!   from the cache when its outcome arrives (it takes no slot); a duplicate of one already
//!   evaluated is answered at once.
//! - `max_consecutive_failures` failed evaluations in a row (in arrival order) stop the
//!   sweep: nothing new starts, the running evaluations finish and are journaled.
//! - Resume replays the journal's lines in file order (each suggestion call with the count
//!   it asked for, each outcome where it was recorded), so the proposer reaches the state
//!   of the run that wrote them. Trials that were suggested but had not finished when that
//!   run died stay pending in the proposer, exactly as they were, and are **evaluated again
//!   first** (in trial id order), before anything new is suggested: they are part of the
//!   budget already, and re-suggesting them would change what the study has seen.
//! - The study knows every running trial as pending: it never proposes one again, and the
//!   default algorithm conditions its variance on them and, with several metrics, believes
//!   their posterior means into the front (see `sweeper-sampler`).
//! - Unlike rounds, the result depends on the order outcomes arrive in (the same seed gives
//!   the same first batch, not the same sweep); the journal records that order, so a
//!   resumed sweep, a resume of a finished one and [`result_from_journal`] reproduce it. A
//!   journal resumes only under the schedule that wrote it (`sweep.schedule` is not a
//!   budget key).

mod asynchronous;
mod branches;
pub mod journal;
mod ledger;
mod proposer;
mod replay;
mod result;
mod rounds;
mod single;
mod space;

pub use branches::{BranchStudies, default_proposer};
pub use journal::{BUDGET_KEYS, FileJournal};
pub use ledger::{Entry, Ledger, Source, Verdict, builtin_gpu};
pub use proposer::{ListProposer, Proposer, default_study};
pub use replay::{replay_journal_text, rescore_journal, result_from_journal};
pub use result::{Progress, Quiet, RunError, RunObserver, RunResult, Status, Tallies, TrialResult};
pub use single::{SingleEvaluation, evaluate_candidate};
pub use space::{TOPOLOGY, fill_used_gpus, search_space, search_space_of, topology_pool};

use crate::evaluator::{EvalRequest, Evaluator};
use crate::provider::{Provider, SweepContext};
use ledger::{classify, replayed_source};
use rounds::without_nan;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use sweeper_goal::{Schedule, SweepConfig};

/// The entry point of the engine: `Sweeper::builder(&config)`.
#[derive(Debug, Clone, Copy)]
pub struct Sweeper;

impl Sweeper {
    /// A builder of a sweep of `config`. Give it at least an evaluator.
    pub fn builder(config: &SweepConfig) -> SweeperBuilder<'_> {
        SweeperBuilder {
            config,
            evaluator: None,
            proposer: None,
            journal: None,
            provider: None,
            observer: None,
            cancel: None,
            retry_failed: false,
        }
    }
}

/// The pieces of a sweep; [`run`](Self::run) runs it to its end.
pub struct SweeperBuilder<'a> {
    config: &'a SweepConfig,
    evaluator: Option<&'a dyn Evaluator>,
    proposer: Option<Box<dyn Proposer + 'a>>,
    journal: Option<&'a mut FileJournal>,
    provider: Option<&'a mut dyn Provider>,
    observer: Option<&'a mut dyn RunObserver>,
    cancel: Option<&'a AtomicBool>,
    retry_failed: bool,
}

impl<'a> SweeperBuilder<'a> {
    /// What evaluates candidates (required).
    #[must_use]
    pub fn evaluator(mut self, evaluator: &'a dyn Evaluator) -> Self {
        self.evaluator = Some(evaluator);
        self
    }

    /// The source of trials [default: the config's study, [`default_proposer`]].
    #[must_use]
    pub fn proposer(mut self, proposer: impl Proposer + 'a) -> Self {
        self.proposer = Some(Box::new(proposer));
        self
    }

    /// Journal every suggestion and outcome to this file; when it was reopened with
    /// [`FileJournal::open`], what it records is replayed instead of evaluated again.
    #[must_use]
    pub fn journal(mut self, journal: &'a mut FileJournal) -> Self {
        self.journal = Some(journal);
        self
    }

    /// A provider, which sees the sweep context before the run and decorates every
    /// candidate.
    #[must_use]
    pub fn provider(mut self, provider: &'a mut dyn Provider) -> Self {
        self.provider = Some(provider);
        self
    }

    /// Receives progress after every outcome.
    #[must_use]
    pub fn observer(mut self, observer: &'a mut dyn RunObserver) -> Self {
        self.observer = Some(observer);
        self
    }

    /// A flag that stops the sweep when another thread (or a signal handler) sets it: no
    /// evaluation starts and no suggestion is asked for after it is seen; the evaluations
    /// running go on to their end, and what they return is journaled, but for a failure,
    /// which the same interrupt may have caused (a killed evaluator process): its trial
    /// stays unfinished in the journal, so a resume evaluates it again. [`run`](Self::run)
    /// then returns [`RunError::Interrupted`]; with a journal, reopening it with
    /// [`FileJournal::open`] continues the sweep where it stopped.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    /// use sweeper_engine::{EvalOutcome, EvalRequest, Evaluator};
    /// use sweeper_engine::{FileJournal, RawReport, RunError, Sweeper};
    ///
    /// /// A toy benchmark: throughput grows with tensor parallelism.
    /// struct Toy;
    /// impl Evaluator for Toy {
    ///     fn evaluate(&self, _worker: usize, request: &EvalRequest) -> EvalOutcome {
    ///         let tp = request.parameters["tp"].as_f64().unwrap_or(1.0);
    ///         let mut report = RawReport::new();
    ///         report.insert("output_throughput_tok_s".into(), 900.0 * tp.sqrt());
    ///         report.insert("mean_itl_ms".into(), 40.0 / tp);
    ///         report.insert("gpu_hours".into(), tp / 60.0);
    ///         report.insert("duration_ms".into(), 60_000.0);
    ///         EvalOutcome::Report(report)
    ///     }
    /// }
    ///
    /// /// Another evaluator, but the sweep is asked to stop during the third evaluation.
    /// struct StopsAtThird<'a> {
    ///     inner: &'a dyn Evaluator,
    ///     stop: &'a AtomicBool,
    ///     calls: AtomicUsize,
    /// }
    /// impl Evaluator for StopsAtThird<'_> {
    ///     fn evaluate(&self, worker: usize, request: &EvalRequest) -> EvalOutcome {
    ///         if self.calls.fetch_add(1, Ordering::SeqCst) == 2 {
    ///             self.stop.store(true, Ordering::SeqCst);
    ///         }
    ///         self.inner.evaluate(worker, request)
    ///     }
    /// }
    ///
    /// let config = sweeper_goal::parse(
    ///     "goal: {target: pareto}
    /// workload: {isl: 4000, osl: 500, num_request_ratio: 10, kv_load_ratio: [0.05, 1.0]}
    /// search_space:
    ///   gpu_budget: 8
    ///   used_gpus: [tp, replicas]
    ///   parameters: {tp: {values: [1, 2, 4]}, replicas: {int: [1, 4]}}
    /// sweep: {max_rounds: 3, candidates_per_round: 4, parallel_evals: 1, seed: 7}",
    /// )?;
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("journal.jsonl");
    ///
    /// let stop = AtomicBool::new(false);
    /// let stopping = StopsAtThird { inner: &Toy, stop: &stop, calls: AtomicUsize::new(0) };
    /// let mut journal = FileJournal::create(&path, &config)?;
    /// let outcome = Sweeper::builder(&config)
    ///     .evaluator(&stopping)
    ///     .journal(&mut journal)
    ///     .cancel(&stop)
    ///     .run();
    /// assert!(matches!(outcome, Err(RunError::Interrupted)));
    /// assert_eq!(stopping.calls.into_inner(), 3, "nothing started after the stop");
    /// drop(journal);
    ///
    /// // the three evaluations are in the journal; a resume goes on from there
    /// let mut journal = FileJournal::open(&path, &config)?;
    /// assert!(journal.finished_trials() >= 3);
    /// let result = Sweeper::builder(&config)
    ///     .evaluator(&Toy)
    ///     .journal(&mut journal)
    ///     .run()?;
    /// assert!(!result.candidates.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn cancel(mut self, flag: &'a AtomicBool) -> Self {
        self.cancel = Some(flag);
        self
    }

    /// Evaluates again, once every call the journal recorded is replayed, each trial whose
    /// last outcome is a failure (`sweeper run --resume DIR --retry-failed`, after the
    /// evaluator was fixed): a `retry` line in the journal names them, the proposer
    /// reopens them ([`Proposer::reopen`]) and observes their new outcomes, which replace
    /// the failures in the result. A later resume replays the retry where its line is.
    #[must_use]
    pub fn retry_failed(mut self, retry: bool) -> Self {
        self.retry_failed = retry;
        self
    }

    /// Runs the sweep to its end and returns its result. Writes nothing but the journal.
    pub fn run(self) -> Result<RunResult, RunError> {
        let SweeperBuilder {
            config,
            evaluator,
            proposer,
            journal,
            mut provider,
            observer,
            cancel,
            retry_failed,
        } = self;
        let evaluator = evaluator.ok_or_else(|| {
            RunError::Setup(
                "no evaluator: give one with Sweeper::builder(&config).evaluator(&evaluator)"
                    .into(),
            )
        })?;
        if let Some(p) = provider.as_deref_mut() {
            p.prepare(&SweepContext { config });
        }
        let mut proposer: Box<dyn Proposer + 'a> = match proposer {
            Some(p) => p,
            None => default_proposer(config)?,
        };
        let replay = journal
            .as_deref()
            .map(|j| j.replay().clone())
            .unwrap_or_default();
        let journal_path = journal
            .as_deref()
            .map(|j| j.path().to_owned())
            .unwrap_or_default();
        let journal = journal.map(Mutex::new);
        let mut quiet = Quiet;
        let mut engine = Engine {
            config,
            topology: space::topology_pool(config)?,
            evaluator,
            provider: provider.as_deref(),
            journal: journal.as_ref(),
            journal_path,
            replay: &replay,
            ledger: Ledger::new(config),
            observer: observer.unwrap_or(&mut quiet),
            failures_in_row: Vec::new(),
            slots: config.sweep.slots(),
            cancel,
            retry_failed,
            planned: 0,
            plan_cap: 0,
            plan_final: false,
            next_retry: 0,
            attempts: HashMap::new(),
            failed: BTreeMap::new(),
        };
        // The most trials the sweep can have: the budget of trials, and the proposer's
        // size when its space is finite.
        let size = proposer.size_hint().unwrap_or(u64::MAX);
        engine.plan_cap = match config.sweep.schedule {
            Schedule::Rounds => config.sweep.max_trials.unwrap_or(u64::MAX),
            Schedule::Async => config.sweep.trial_budget(),
        }
        .min(size);
        engine.planned = config.sweep.trial_budget().min(size);
        match config.sweep.schedule {
            Schedule::Rounds => engine.rounds(proposer.as_mut())?,
            Schedule::Async => engine.asynchronous(proposer.as_mut())?,
        }
        engine.ledger.into_result()
    }
}

/// The state of a running sweep.
struct Engine<'a, 'o> {
    config: &'a SweepConfig,
    /// The pool of the config's topology (SPEC 8), built once: a trial's latent features
    /// project onto it.
    topology: Option<sweeper_topology::Pool>,
    evaluator: &'a dyn Evaluator,
    provider: Option<&'a dyn Provider>,
    /// Behind a lock: the async schedule's workers journal a job's handle themselves, the
    /// moment the evaluator reports it, so that a kill right after a submission cannot lose
    /// its `started` line.
    journal: Option<&'a Mutex<&'a mut FileJournal>>,
    /// The journal's path, for messages (empty without a journal).
    journal_path: PathBuf,
    replay: &'a journal::Replay,
    ledger: Ledger,
    observer: &'o mut dyn RunObserver,
    /// Reasons of the evaluations of this process that failed in a row, latest last.
    failures_in_row: Vec<String>,
    /// Evaluations at once ([`SweepSettings::slots`](sweeper_goal::SweepSettings::slots)),
    /// read once here for both schedules.
    slots: usize,
    /// Set when the sweep is to stop ([`SweeperBuilder::cancel`]).
    cancel: Option<&'a AtomicBool>,
    /// `--retry-failed` is still to be done ([`SweeperBuilder::retry_failed`]).
    retry_failed: bool,
    /// The trials the sweep will have, as far as known now: the progress total. Under
    /// rounds the fewest it can still come to (each trial from now on feasible), raised as
    /// trials fall short; exact under async, and at the end.
    planned: u64,
    /// The most trials the sweep can have (`max_trials`, the proposer's size).
    plan_cap: u64,
    /// The proposer ran out of candidates: `planned` is the total, whatever the cap.
    plan_final: bool,
    /// The journal's next retry line to replay (an index of `replay.retries`).
    next_retry: usize,
    /// Per trial, the retries of it so far.
    attempts: HashMap<u64, usize>,
    /// The trials whose last outcome is a failure, prepared as they were: what a retry
    /// evaluates again.
    failed: BTreeMap<u64, Prepared>,
}

/// A trial of the current batch, prepared for evaluation.
#[derive(Clone)]
struct Prepared {
    trial: u64,
    parameters: Map<String, Value>,
    /// The cache key of `parameters`.
    key: String,
    declared_gpus: Option<u64>,
    request: Option<EvalRequest>,
    early: Option<(Status, String)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluator::{EvalContext, EvalOutcome};
    use std::collections::HashSet;
    use std::sync::atomic::Ordering;
    use sweeper_sampler::{Algorithm, Study};

    #[test]
    fn a_study_proposes_more_than_one_call_holds_in_several_calls() {
        let config = sweeper_goal::parse(
            r#"{"search_space": {"parameters": {"x": {"float": [0, 1]}, "y": {"int": [0, 1000000]}}},
                "sweep": {"algorithm": "random", "seed": 3}}"#,
        )
        .unwrap();
        let mut study = default_study(&config).unwrap();
        let count = 2 * study.max_suggest() + 7;
        let trials = Proposer::suggest(&mut study, count).unwrap();
        assert_eq!(trials.len(), count);
        let ids: HashSet<u64> = trials.iter().map(|t| t.id).collect();
        assert_eq!(ids.len(), count, "every trial once");
    }
    use std::sync::atomic::AtomicUsize;

    /// Hands out every trial of the study twice (the copy under a new id), as a sampler
    /// without deduplication would; observations of copies are dropped.
    struct Twice(Study);

    const COPY: u64 = 1_000_000;

    impl Proposer for Twice {
        fn suggest(&mut self, count: usize) -> Result<Vec<sweeper_sampler::Trial>, RunError> {
            let mut out = Vec::new();
            for t in self.0.suggest(count.div_ceil(2))? {
                let mut copy = t.clone();
                copy.id += COPY;
                out.push(t);
                out.push(copy);
            }
            out.truncate(count);
            Ok(out)
        }
        fn observe(&mut self, trial: u64, m: &BTreeMap<String, f64>) -> Result<(), RunError> {
            if trial < COPY {
                Ok(self.0.observe(trial, m)?)
            } else {
                Ok(())
            }
        }
        fn observe_infeasible(&mut self, trial: u64, reason: &str) -> Result<(), RunError> {
            if trial < COPY {
                Ok(self.0.observe_infeasible(trial, reason)?)
            } else {
                Ok(())
            }
        }
    }

    struct Count(AtomicUsize);

    impl Evaluator for Count {
        fn evaluate(&self, _worker: usize, request: &EvalRequest) -> EvalOutcome {
            self.0.fetch_add(1, Ordering::SeqCst);
            let tp = request.parameters["tp"].as_f64().unwrap_or(1.0);
            EvalOutcome::Report(
                BTreeMap::from([("output_throughput_tok_s".to_owned(), 10.0 * tp)]).into(),
            )
        }
    }

    /// Reports a handle per evaluation and remembers the handles a resume gave back.
    #[derive(Default)]
    struct Handles(std::sync::Mutex<Vec<(u64, Option<String>)>>);

    impl Evaluator for Handles {
        fn evaluate(&self, worker: usize, request: &EvalRequest) -> EvalOutcome {
            self.evaluate_with(worker, request, &EvalContext::detached())
        }
        fn evaluate_with(
            &self,
            _worker: usize,
            request: &EvalRequest,
            context: &EvalContext<'_>,
        ) -> EvalOutcome {
            context.started(&format!("job:{}", request.id));
            self.0
                .lock()
                .unwrap()
                .push((request.id, context.resumed().map(str::to_owned)));
            let tp = request.parameters["tp"].as_f64().unwrap_or(1.0);
            EvalOutcome::Report(BTreeMap::from([("output_throughput_tok_s".to_owned(), tp)]).into())
        }
    }

    #[test]
    fn a_handle_is_journaled_before_the_outcome_and_given_back_on_resume() {
        let config = sweeper_goal::parse(
            "search_space: {gpu_budget: 8, parameters: {tp: {values: [1, 2, 4, 8]}}}
sweep: {max_rounds: 1, candidates_per_round: 4, parallel_evals: 2, algorithm: grid}",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.jsonl");
        let mut journal = FileJournal::create(&path, &config).unwrap();
        let first = Handles::default();
        Sweeper::builder(&config)
            .evaluator(&first)
            .journal(&mut journal)
            .run()
            .unwrap();
        drop(journal);
        assert!(first.0.lock().unwrap().iter().all(|(_, r)| r.is_none()));
        let text = std::fs::read_to_string(&path).unwrap();
        for trial in 0..4 {
            let started = format!(r#"{{"kind":"started","trial":{trial},"handle":"job:{trial}"}}"#);
            let outcome = format!(r#"{{"kind":"outcome","trial":{trial},"#);
            let (s, o) = (text.find(&started), text.find(&outcome));
            assert!(s.is_some() && s < o, "trial {trial}:\n{text}");
        }
        // as if the driver died before trials 1 and 3 ended: their outcomes are lost
        let cut: String = text
            .split_inclusive('\n')
            .filter(|l| {
                !(l.starts_with(r#"{"kind":"outcome","trial":1,"#)
                    || l.starts_with(r#"{"kind":"outcome","trial":3,"#))
            })
            .collect();
        std::fs::write(&path, cut).unwrap();
        let mut journal = FileJournal::open(&path, &config).unwrap();
        let second = Handles::default();
        let result = Sweeper::builder(&config)
            .evaluator(&second)
            .journal(&mut journal)
            .run()
            .unwrap();
        assert_eq!(result.tallies.feasible, 4);
        let mut seen = second.0.lock().unwrap().clone();
        seen.sort();
        assert_eq!(
            seen,
            [(1, Some("job:1".to_owned())), (3, Some("job:3".to_owned()))]
        );
    }

    #[test]
    fn duplicates_are_answered_from_the_cache_and_observed_again() {
        let config = sweeper_goal::parse(
            "search_space: {gpu_budget: 8, parameters: {tp: {values: [1, 2, 4, 8]}}}
sweep: {max_rounds: 2, candidates_per_round: 2, parallel_evals: 2, algorithm: random}",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut journal = FileJournal::create(dir.path().join("journal.jsonl"), &config).unwrap();
        let evaluator = Count(AtomicUsize::new(0));
        let study = Study::new(
            space::search_space(&config).unwrap(),
            config.goal.sampler_metrics(),
            Algorithm::Random,
            1,
        )
        .unwrap();
        let result = Sweeper::builder(&config)
            .evaluator(&evaluator)
            .proposer(Twice(study))
            .journal(&mut journal)
            .run()
            .unwrap();
        let hits = result
            .trials
            .iter()
            .filter(|t| t.status == Status::CacheHit)
            .count();
        assert!(hits > 0, "{:?}", result.tallies);
        assert_eq!(result.tallies.cache_hits as usize, hits);
        assert_eq!(
            evaluator.0.load(Ordering::SeqCst),
            result.trials.len() - hits
        );
        // a cache hit is not a new success: each round needed more attempts than candidates
        assert!(result.trials.len() > 4);
        // duplicates appear once in the ranking
        let mut indices: Vec<usize> = result.candidates.iter().map(|c| c.index).collect();
        indices.dedup();
        assert_eq!(indices.len(), result.candidates.len());
        assert!(result.candidates.iter().all(|c| c.index < COPY as usize));
        let journal = std::fs::read_to_string(dir.path().join("journal.jsonl")).unwrap();
        assert_eq!(journal.matches("cache_hit").count(), hits);
    }
}
