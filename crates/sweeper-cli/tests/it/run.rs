//! The run loop (SPEC 7) with an in-process fake evaluator.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use sweeper_engine::provider::ServingPlanner;
use sweeper_engine::{EvalOutcome, EvalRequest, Evaluator};
use sweeper_engine::{FileJournal, RunError, Status, Sweeper};
use sweeper_score::front::dominates;
use sweeper_tables::write_outputs;

/// A toy serving model: throughput grows with GPUs and falls with router imbalance;
/// per-user speed falls with replicas' load. Deterministic in the parameters.
struct Toy {
    calls: AtomicUsize,
    seen: Mutex<Vec<EvalRequest>>,
    fail_tp: Option<i64>,
    unsupported_tp: Option<i64>,
}

impl Toy {
    fn new() -> Toy {
        Toy {
            calls: AtomicUsize::new(0),
            seen: Mutex::new(Vec::new()),
            fail_tp: None,
            unsupported_tp: None,
        }
    }
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Evaluator for Toy {
    fn evaluate(&self, _worker: usize, request: &EvalRequest) -> EvalOutcome {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.seen.lock().unwrap().push(request.clone());
        let p = &request.parameters;
        let tp = p.get("tp").and_then(serde_json::Value::as_i64).unwrap_or(1);
        let replicas = p
            .get("replicas")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(1);
        if Some(tp) == self.fail_tp {
            return EvalOutcome::Failed("toy: tp rejected by the fake".into());
        }
        if Some(tp) == self.unsupported_tp {
            return EvalOutcome::Unsupported("toy: tp not supported".into());
        }
        let ratio = request.kv_load_ratio.unwrap_or(0.5);
        let gpus = (tp * replicas) as f64;
        let per_user = 200.0 / (1.0 + 8.0 * ratio) * (tp as f64).powf(0.5);
        let throughput = gpus * 100.0 * (0.2 + ratio) * (1.0 - 0.05 * tp as f64);
        let mut r = BTreeMap::new();
        r.insert("output_throughput_tok_s".to_owned(), throughput);
        r.insert("mean_output_token_throughput_per_user".to_owned(), per_user);
        r.insert("mean_e2e_latency_ms".to_owned(), 1000.0 / per_user * 100.0);
        r.insert("gpu_hours".to_owned(), gpus * 0.5);
        r.insert("duration_ms".to_owned(), 1_800_000.0);
        if request.used_gpus.is_none() {
            r.insert("used_gpus".to_owned(), gpus);
        }
        EvalOutcome::Report(r.into())
    }
}

fn config(yaml: &str) -> sweeper_goal::SweepConfig {
    sweeper_goal::parse(yaml).unwrap_or_else(|e| panic!("test config invalid: {e}\n{yaml}"))
}

/// Runs a sweep with a file journal in `dir` (reopened when `resume`), and writes its
/// result files there, as `sweeper run` does.
fn sweep(
    cfg: &sweeper_goal::SweepConfig,
    evaluator: &dyn Evaluator,
    dir: &std::path::Path,
    resume: bool,
) -> Result<sweeper_engine::RunResult, RunError> {
    let path = dir.join("journal.jsonl");
    let mut journal = if resume {
        FileJournal::open(&path, cfg)?
    } else {
        FileJournal::create(&path, cfg)?
    };
    let result = Sweeper::builder(cfg)
        .evaluator(evaluator)
        .journal(&mut journal)
        .run()?;
    write_outputs(dir, cfg, &result, "toy")?;
    Ok(result)
}

const SCALAR: &str = "
goal: {target: throughput_per_gpu}
search_space:
  gpu_budget: 8
  used_gpus: [tp, replicas]
  parameters:
    tp: {values: [1, 2, 4, 8]}
    replicas: {int: [1, 4]}
evaluator: {command: [unused]}
sweep: {max_rounds: 3, candidates_per_round: 4, parallel_evals: 2, seed: 7, algorithm: random}
";

const PARETO: &str = "
goal: {target: pareto}
workload: {isl: 100, osl: 100, num_request_ratio: 2, kv_load_ratio: [0.05, 1.0]}
search_space:
  gpu_budget: 8
  used_gpus: [tp, replicas]
  parameters:
    tp: {values: [1, 2, 4]}
    replicas: {int: [1, 4]}
    backend: {choices: [trtllm]}
evaluator: {command: [unused]}
sweep: {max_rounds: 4, candidates_per_round: 5, parallel_evals: 3, seed: 3, algorithm: random}
";

#[test]
fn scalar_goal_returns_a_ranking_best_first_within_budget() {
    let cfg = config(SCALAR);
    let toy = Toy::new();
    let dir = tempfile::tempdir().unwrap();
    let result = sweep(&cfg, &toy, dir.path(), false).unwrap();
    assert!(!result.pareto);
    assert!(!result.candidates.is_empty());
    for pair in result.candidates.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        assert!(
            a.score > b.score || (a.score == b.score && a.used_gpus <= b.used_gpus),
            "ranking out of order: {} then {}",
            a.score,
            b.score
        );
    }
    for c in &result.candidates {
        assert!(c.used_gpus <= 8.0, "over budget candidate in the ranking");
        assert!(c.objectives.is_none());
    }
    // every trial over the budget was rejected without an evaluation
    let over = result
        .trials
        .iter()
        .filter(|t| {
            t.reason
                .as_deref()
                .is_some_and(|r| r.starts_with("over gpu_budget"))
        })
        .count();
    let evaluated = result
        .trials
        .iter()
        .filter(|t| t.status == Status::Feasible)
        .count();
    assert_eq!(
        toy.calls(),
        evaluated,
        "over-budget or cached trials were evaluated"
    );
    assert_eq!(result.tallies.infeasible as usize, over);
    for file in ["journal.jsonl", "result.json", "result.csv", "best.svg"] {
        assert!(dir.path().join(file).is_file(), "{file} missing");
    }
}

#[test]
fn pareto_goal_returns_the_sorted_nondominated_set() {
    let cfg = config(PARETO);
    let toy = Toy::new();
    let dir = tempfile::tempdir().unwrap();
    let result = sweep(&cfg, &toy, dir.path(), false).unwrap();
    assert!(result.pareto);
    let dirs = [
        sweeper_goal::Direction::Maximize,
        sweeper_goal::Direction::Maximize,
    ];
    let point = |c: &sweeper_score::Candidate| -> Vec<f64> {
        c.objectives
            .as_ref()
            .unwrap()
            .iter()
            .map(|(_, v)| *v)
            .collect()
    };
    assert!(!result.candidates.is_empty());
    for f in &result.candidates {
        for e in &result.evaluated {
            assert!(
                !dominates(&point(e), &point(f), &dirs),
                "a front point is dominated"
            );
        }
    }
    for e in &result.evaluated {
        let on_front = result.candidates.iter().any(|f| f.index == e.index);
        if !on_front {
            assert!(
                result
                    .candidates
                    .iter()
                    .any(|f| dominates(&point(f), &point(e), &dirs)),
                "a dominated point is missing its dominator"
            );
        }
    }
    for pair in result.candidates.windows(2) {
        assert!(
            point(&pair[0])[1] <= point(&pair[1])[1],
            "front not sorted by the last objective"
        );
    }
    // the ratio was searched and sent to the evaluator; constants were injected
    let seen = toy.seen.lock().unwrap();
    assert!(
        seen.iter()
            .all(|r| r.kv_load_ratio.is_some_and(|x| (0.05..=1.0).contains(&x)))
    );
    assert!(seen.iter().all(|r| r.concurrency.is_none()));
    assert!(
        seen.iter()
            .all(|r| r.parameters.get("backend") == Some(&serde_json::json!("trtllm")))
    );
    assert!(dir.path().join("front.svg").is_file());
}

#[test]
fn everything_over_budget_gives_an_empty_result() {
    // the GPU count is not declared: the evaluator reports tp × replicas >= 2 > 1
    let cfg = config(
        &SCALAR
            .replace("gpu_budget: 8", "gpu_budget: 1")
            .replace("  used_gpus: [tp, replicas]\n", "")
            .replace("tp: {values: [1, 2, 4, 8]}", "tp: {values: [2, 4, 8]}"),
    );
    let toy = Toy::new();
    let dir = tempfile::tempdir().unwrap();
    let result = sweep(&cfg, &toy, dir.path(), false).unwrap();
    assert!(result.candidates.is_empty());
    assert_eq!(toy.calls() as u64, result.tallies.infeasible);
    assert_eq!(result.tallies.feasible, 0);
    assert!(result.tallies.infeasible > 0);
    // a round that falls short ends the search: 11 × 4 attempts at most
    assert!(result.trials.len() <= 44, "{} trials", result.trials.len());
    assert_eq!(
        result.reasons[0].0.split(':').next(),
        Some("over gpu_budget")
    );
}

#[test]
fn failures_and_unsupported_are_tallied_with_reasons_and_never_abort() {
    let cfg = config(SCALAR);
    let mut toy = Toy::new();
    toy.fail_tp = Some(1);
    toy.unsupported_tp = Some(2);
    let dir = tempfile::tempdir().unwrap();
    let result = sweep(&cfg, &toy, dir.path(), false).unwrap();
    assert!(result.tallies.failed > 0, "{:?}", result.tallies);
    assert!(result.tallies.unsupported > 0, "{:?}", result.tallies);
    let reasons: Vec<&str> = result.reasons.iter().map(|(r, _)| r.as_str()).collect();
    assert!(
        reasons.contains(&"toy: tp rejected by the fake"),
        "{reasons:?}"
    );
    assert!(reasons.contains(&"toy: tp not supported"), "{reasons:?}");
    assert!(
        result
            .candidates
            .iter()
            .all(|c| c.config["tp"] == serde_json::json!(4)
                || c.config["tp"] == serde_json::json!(8))
    );
}

#[test]
fn a_finite_space_is_explored_once_and_the_search_ends() {
    // 2 × 2 = 4 configurations and 12 trials allowed: the study proposes each once, then
    // has nothing new, and the search ends without evaluating a duplicate
    let yaml = "
goal: {target: throughput}
search_space:
  gpu_budget: 100
  parameters:
    tp: {values: [1, 2]}
    replicas: {int: [1, 2]}
evaluator: {command: [unused]}
sweep: {max_rounds: 3, candidates_per_round: 4, parallel_evals: 2, seed: 1, algorithm: random, max_trials: 12}
";
    let cfg = config(yaml);
    let toy = Toy::new();
    let dir = tempfile::tempdir().unwrap();
    let result = sweep(&cfg, &toy, dir.path(), false).unwrap();
    let distinct: std::collections::BTreeSet<String> = result
        .trials
        .iter()
        .map(|t| serde_json::to_string(&t.config).unwrap())
        .collect();
    assert_eq!(distinct.len(), 4);
    assert_eq!(toy.calls(), 4, "a configuration was evaluated twice");
    assert_eq!(result.candidates.len(), 4);
}

#[test]
fn max_trials_caps_suggestions_exactly() {
    // 3 rounds × 4 candidates could take 12 trials; the cap stops the study before that
    for max in [1_usize, 5, 7, 12] {
        let cfg = config(&SCALAR.replace("gpu_budget: 8", "gpu_budget: 100").replace(
            "algorithm: random}",
            &format!("algorithm: random, max_trials: {max}}}"),
        ));
        let toy = Toy::new();
        let dir = tempfile::tempdir().unwrap();
        let result = sweep(&cfg, &toy, dir.path(), false).unwrap();
        assert_eq!(result.trials.len(), max, "max_trials {max}");
    }
}

#[test]
fn the_provider_maps_the_goal_into_every_candidate() {
    let cfg = config(&SCALAR.replace("target: throughput_per_gpu", "target: e2e_latency"));
    let toy = Toy::new();
    let mut planner = ServingPlanner::new();
    Sweeper::builder(&cfg)
        .evaluator(&toy)
        .provider(&mut planner)
        .run()
        .unwrap();
    let seen = toy.seen.lock().unwrap();
    assert!(!seen.is_empty());
    assert!(
        seen.iter()
            .all(|r| r.extra.get("planner_target") == Some(&serde_json::json!("latency")))
    );
}

fn summary(result: &sweeper_engine::RunResult) -> String {
    let cands: Vec<String> = result
        .candidates
        .iter()
        .map(|c| serde_json::to_string(c).unwrap())
        .collect();
    format!("{:?}\n{}", result.tallies, cands.join("\n"))
}

#[test]
fn resume_after_a_kill_gives_the_uninterrupted_result_without_reevaluating() {
    let cfg = config(PARETO);
    let full_dir = tempfile::tempdir().unwrap();
    let full_toy = Toy::new();
    let full = sweep(&cfg, &full_toy, full_dir.path(), false).unwrap();
    let journal = std::fs::read_to_string(full_dir.path().join("journal.jsonl")).unwrap();
    let lines: Vec<&str> = journal.lines().collect();
    // kill points: after the header, in the middle, near the end, and a torn last line
    for cut in [1, lines.len() / 3, lines.len() / 2, lines.len() - 2] {
        let dir = tempfile::tempdir().unwrap();
        let mut text = lines[..cut].join("\n");
        text.push('\n');
        text.push_str(&lines[cut][..lines[cut].len() / 2]); // torn by the kill
        std::fs::write(dir.path().join("journal.jsonl"), text).unwrap();
        let finished_before = lines[..cut]
            .iter()
            .filter(|l| {
                l.contains("\"kind\":\"outcome\"")
                    && !l.contains("cache_hit")
                    && !l.contains("over gpu_budget")
            })
            .count();
        let toy = Toy::new();
        let resumed = sweep(&cfg, &toy, dir.path(), true).unwrap();
        assert_eq!(summary(&resumed), summary(&full), "cut at line {cut}");
        assert_eq!(
            toy.calls(),
            full_toy.calls() - finished_before,
            "cut at line {cut}: finished evaluations were repeated or lost"
        );
    }
}

/// The toy, which sets the sweep's stop flag during its `at`-th evaluation (counted from
/// 1) and fails that evaluation, as one killed by the same Ctrl-C would.
struct StopsAt<'a> {
    toy: Toy,
    stop: &'a AtomicBool,
    at: usize,
}

impl Evaluator for StopsAt<'_> {
    fn evaluate(&self, worker: usize, request: &EvalRequest) -> EvalOutcome {
        if self.toy.calls() + 1 == self.at {
            self.toy.calls.fetch_add(1, Ordering::SeqCst);
            self.stop.store(true, Ordering::SeqCst);
            return EvalOutcome::Failed("killed by signal SIGKILL".into());
        }
        self.toy.evaluate(worker, request)
    }
}

/// Runs `cfg` with a journal in `dir` and a stop flag that `StopsAt` sets at evaluation
/// `at`; returns the outcome and the number of evaluations started.
fn sweep_stopped_at(
    cfg: &sweeper_goal::SweepConfig,
    dir: &std::path::Path,
    at: usize,
) -> (Result<sweeper_engine::RunResult, RunError>, usize) {
    let stop = AtomicBool::new(false);
    let evaluator = StopsAt {
        toy: Toy::new(),
        stop: &stop,
        at,
    };
    let mut journal = FileJournal::create(dir.join("journal.jsonl"), cfg).unwrap();
    let outcome = Sweeper::builder(cfg)
        .evaluator(&evaluator)
        .journal(&mut journal)
        .cancel(&stop)
        .run();
    (outcome, evaluator.toy.calls())
}

/// The journal's outcome lines of evaluations (not cache hits, not over the budget).
fn evaluated_outcomes(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("journal.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| {
            l.contains("\"kind\":\"outcome\"")
                && !l.contains("cache_hit")
                && !l.contains("over gpu_budget")
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_cancelled_sweep_starts_nothing_new_and_resumes_to_the_uninterrupted_result() {
    let cfg = config(&PARETO.replace("parallel_evals: 3", "parallel_evals: 1"));
    let full_toy = Toy::new();
    let full = sweep(&cfg, &full_toy, tempfile::tempdir().unwrap().path(), false).unwrap();
    for at in [1, 4, full_toy.calls()] {
        let dir = tempfile::tempdir().unwrap();
        let (outcome, started) = sweep_stopped_at(&cfg, dir.path(), at);
        assert!(
            matches!(outcome, Err(RunError::Interrupted)),
            "stop at {at}: {outcome:?}"
        );
        assert_eq!(started, at, "an evaluation started after the stop");
        let kept = evaluated_outcomes(dir.path());
        assert_eq!(kept.len(), at - 1, "stop at {at}: {kept:?}");
        assert!(
            kept.iter().all(|l| !l.contains("SIGKILL")),
            "the failure the interrupt caused was journaled: {kept:?}"
        );
        let toy = Toy::new();
        let resumed = sweep(&cfg, &toy, dir.path(), true).unwrap();
        assert_eq!(summary(&resumed), summary(&full), "stop at {at}");
        assert_eq!(
            toy.calls(),
            full_toy.calls() - (at - 1),
            "stop at {at}: finished evaluations were repeated or lost"
        );
    }
}

#[test]
fn a_cancelled_async_sweep_lets_the_running_finish_and_resumes_to_its_budget() {
    let cfg = config(&PARETO.replace(
        "sweep: {max_rounds: 4, candidates_per_round: 5, parallel_evals: 3,",
        "sweep: {schedule: async, max_trials: 20, parallel_evals: 3,",
    ));
    let dir = tempfile::tempdir().unwrap();
    let (outcome, started) = sweep_stopped_at(&cfg, dir.path(), 6);
    assert!(matches!(outcome, Err(RunError::Interrupted)), "{outcome:?}");
    // the two other slots may each have been given a trial before the stop was seen
    assert!((6..=8).contains(&started), "{started} evaluations started");
    let kept = evaluated_outcomes(dir.path());
    assert_eq!(kept.len(), started - 1, "{kept:?}");
    assert!(kept.iter().all(|l| !l.contains("SIGKILL")), "{kept:?}");
    let toy = Toy::new();
    let resumed = sweep(&cfg, &toy, dir.path(), true).unwrap();
    assert_eq!(resumed.trials.len(), 20);
    let evaluated_then = evaluated_outcomes(dir.path()).len();
    assert_eq!(
        evaluated_then,
        kept.len() + toy.calls(),
        "an evaluation was repeated or lost"
    );
}

#[test]
fn a_journal_of_another_config_is_refused() {
    let cfg = config(PARETO);
    let dir = tempfile::tempdir().unwrap();
    sweep(&cfg, &Toy::new(), dir.path(), false).unwrap();
    let other = config(&PARETO.replace("seed: 3", "seed: 4"));
    let err = sweep(&other, &Toy::new(), dir.path(), true).unwrap_err();
    assert!(err.to_string().contains("another config"), "{err}");
}

#[test]
fn the_same_seed_gives_the_same_result() {
    let cfg = config(PARETO);
    let a = sweep(
        &cfg,
        &Toy::new(),
        tempfile::tempdir().unwrap().path(),
        false,
    )
    .unwrap();
    let b = sweep(
        &cfg,
        &Toy::new(),
        tempfile::tempdir().unwrap().path(),
        false,
    )
    .unwrap();
    assert_eq!(summary(&a), summary(&b));
}

#[test]
fn resume_under_another_round_size_replays_the_recorded_calls() {
    // the default algorithm: its suggestions depend on every call's count, so a resume must
    // repeat the recorded calls rather than compute them from the new budget
    let base = PARETO.replace("algorithm: random", "algorithm: default");
    let cfg = config(&base);
    let dir = tempfile::tempdir().unwrap();
    let first = sweep(&cfg, &Toy::new(), dir.path(), false).unwrap();
    let bigger = config(
        &base
            .replace("max_rounds: 4", "max_rounds: 6")
            .replace("candidates_per_round: 5", "candidates_per_round: 7")
            .replace("parallel_evals: 3", "parallel_evals: 2"),
    );
    let toy = Toy::new();
    let more = sweep(&bigger, &toy, dir.path(), true).unwrap();
    assert!(more.trials.len() > first.trials.len());
    assert_eq!(more.trials[..first.trials.len()], first.trials[..]);
    let last_recorded = first.trials.iter().map(|t| t.trial).max().unwrap();
    let seen = toy.seen.lock().unwrap();
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|r| r.id > last_recorded),
        "a recorded trial was evaluated again"
    );
}

#[test]
fn the_search_space_converts_every_kind_in_order() {
    use sweeper_sampler::ParamSpec;
    let cfg = config(
        "goal: {target: pareto}
workload: {isl: 100, osl: 100, num_request_ratio: 1, kv_load_ratio: [0.1, 0.9]}
search_space:
  parameters:
    batch: {values: [8, 16, 32], log: true}
    replicas: {int: [1, 8], log: true}
    temperature: {float: [0.0, 1.0]}
    router: {choices: [round_robin, kv_aware]}
    backend: {choices: [trtllm]}
",
    );
    let space = sweeper_engine::search_space(&cfg).unwrap();
    let got: Vec<(&str, &ParamSpec)> = space
        .params()
        .iter()
        .map(|(n, s)| (n.as_str(), s))
        .collect();
    assert_eq!(got.len(), 6);
    let names: Vec<&str> = got.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "batch",
            "replicas",
            "temperature",
            "router",
            "backend",
            "kv_load_ratio"
        ]
    );
    assert!(
        matches!(got[0].1, ParamSpec::Discrete { values, log: true } if values == &[8.0, 16.0, 32.0])
    );
    assert!(matches!(
        got[1].1,
        ParamSpec::Int {
            lo: 1,
            hi: 8,
            log: true
        }
    ));
    assert!(
        matches!(got[2].1, ParamSpec::Float { lo, hi, log: false } if *lo == 0.0 && *hi == 1.0)
    );
    assert!(
        matches!(got[3].1, ParamSpec::Categorical { choices } if choices == &["round_robin", "kv_aware"])
    );
    assert!(matches!(got[4].1, ParamSpec::Categorical { choices } if choices == &["trtllm"]));
    assert!(
        matches!(got[5].1, ParamSpec::Float { lo, hi, log: false } if *lo == 0.1 && *hi == 0.9)
    );
    // a range the sampler cannot represent names its key, and keeps the sampler's error
    let wide = config("search_space: {parameters: {x: {int: [1, 1e18]}}}");
    let err = sweeper_engine::search_space(&wide).unwrap_err();
    assert!(
        err.to_string().contains("search_space.parameters.x"),
        "{err}"
    );
    assert!(std::error::Error::source(&err).is_some());
}
