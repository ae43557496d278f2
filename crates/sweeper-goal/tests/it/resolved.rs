//! What a valid config resolves to: objectives, directions, sampler metrics, loads, defaults.

use sweeper_goal::{
    AlgorithmName, Direction, EvaluatorKind, Goal, Load, Objective, ParameterSpec, SweepConfig,
    Target, UsedGpus, Workload, parse,
};

fn cfg(text: &str) -> SweepConfig {
    parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn defaults() {
    let c = cfg("");
    assert_eq!(c.goal, Goal::default());
    assert_eq!(c.goal.target(), Target::Scalar(Objective::Throughput));
    assert_eq!(c.goal.objectives(), &[Objective::Throughput]);
    assert!(c.goal.sla().is_none());
    assert!(!c.goal.is_pareto());
    assert_eq!(c.search_space.gpu_budget, 32);
    assert!(c.workload.is_none() && c.evaluator.is_none());
    let s = &c.sweep;
    assert_eq!(
        (
            s.max_rounds,
            s.candidates_per_round,
            s.parallel_evals,
            s.seed
        ),
        (20, 16, 16, 42)
    );
    assert_eq!(s.max_eval_seconds, 600.0);
    assert_eq!(s.max_trials, None);
    assert_eq!(s.max_consecutive_failures, 10);
    assert_eq!(
        s.max_consecutive_failures,
        sweeper_goal::DEFAULT_MAX_CONSECUTIVE_FAILURES
    );
    assert_eq!(s.algorithm, AlgorithmName::Default);
    assert_eq!(s.schedule, sweeper_goal::Schedule::Rounds);
    // a whole float is an integer
    assert_eq!(
        cfg("sweep: {max_consecutive_failures: 3.0}")
            .sweep
            .max_consecutive_failures,
        3
    );
    assert_eq!(
        cfg("sweep: {max_consecutive_failures: 1}")
            .sweep
            .max_consecutive_failures,
        1
    );
    // candidates_per_round follows parallel_evals
    assert_eq!(
        cfg("sweep: {parallel_evals: 3}").sweep.candidates_per_round,
        3
    );
}

#[test]
fn sampler_metrics_follow_the_goal() {
    let m = cfg("goal: {target: e2e_latency}").goal.sampler_metrics();
    assert_eq!(m.len(), 1);
    assert_eq!(
        (m[0].name.as_str(), m[0].direction),
        ("objective", Direction::Maximize)
    );

    let g = cfg("goal: {target: pareto, pareto_objectives: [goodput, e2e_latency, throughput_per_user], sla: {e2e_ms: 100}}").goal;
    let m = g.sampler_metrics();
    let got: Vec<(&str, Direction)> = m.iter().map(|x| (x.name.as_str(), x.direction)).collect();
    assert_eq!(
        got,
        [
            ("goodput", Direction::Maximize),
            ("e2e_latency", Direction::Minimize),
            ("throughput_per_user", Direction::Maximize),
        ]
    );
    assert!(g.target().direction().is_err());
    assert_eq!(g.sla().and_then(|s| s.e2e_ms), Some(100.0));
}

#[test]
fn loads_resolve() {
    let w = |text: &str| cfg(text).workload.unwrap();
    let c = w("workload: {isl: 100, osl: 10, num_request_ratio: 2.5, concurrency: 8}");
    assert_eq!(c.fixed_concurrency(), Some(8));
    assert_eq!(c.load(), Some(&Load::Concurrency(8)));
    assert_eq!(c.request_count_at(8.0), Some(20));
    let r = w("workload: {isl: 100, osl: 10, num_request_ratio: 0.5, request_rate: 5}");
    assert_eq!(r.fixed_concurrency(), None);
    assert_eq!(r.request_count_at(5.0), Some(2)); // 2.5 rounds to even
    let k = w("workload: {isl: 100, osl: 10, num_request_ratio: 1, kv_load_ratio: 0.25}");
    assert_eq!(k.load().and_then(Load::kv_load_ratio), Some(0.25));
    let p = w("goal: {target: pareto}\nworkload: {isl: 100, osl: 10, num_request_ratio: 1}");
    assert_eq!(p.load().and_then(Load::kv_load_range), Some((0.0, 1.0)));
    let t = w("workload: {trace_path: a/b.jsonl, replay_concurrency: 3}");
    assert_eq!(t.fixed_concurrency(), Some(3));
    assert!(matches!(t, Workload::Trace { .. }));
    // the block as configured, for evaluators
    let j = p.to_json_value();
    assert_eq!(j["kv_load_ratio"], serde_json::json!([0.0, 1.0]));
    assert_eq!(j["isl"], serde_json::json!(100));
    // a whole float is an integer
    assert_eq!(
        w("workload: {isl: 100.0, osl: 10, num_request_ratio: 1, concurrency: 64.0}")
            .fixed_concurrency(),
        Some(64)
    );
}

#[test]
fn search_space_resolves_in_written_order() {
    let c = cfg(
        "search_space:\n  gpu_budget: 16\n  used_gpus: [tp, replicas]\n  parameters:\n    tp: {values: [8, 1, 4, 2]}\n    replicas: {int: [1, 8]}\n    router: {choices: [round_robin, kv_aware]}\n    backend: {choices: [trtllm]}\n    t: {float: [0.5, 0.5]}\n",
    );
    let s = &c.search_space;
    let names: Vec<&str> = s.parameters.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["tp", "replicas", "router", "backend", "t"]);
    assert_eq!(
        s.parameter("tp"),
        Some(&ParameterSpec::Values {
            values: vec![1.0, 2.0, 4.0, 8.0],
            log: false
        })
    );
    assert_eq!(
        s.used_gpus,
        Some(UsedGpus::Product(vec![
            "tp".to_owned(),
            "replicas".to_owned()
        ]))
    );
    let backend = s.parameter("backend").unwrap();
    assert!(backend.is_constant());
    assert_eq!(backend.constant_value(), Some(serde_json::json!("trtllm")));
    assert!(s.parameter("t").unwrap().is_constant());
    assert!(!s.parameter("router").unwrap().is_constant());
    assert!(s.parameter("replicas").unwrap().is_integer_valued());
}

#[test]
fn evaluator_resolves() {
    let c = cfg("evaluator: {command: [python3, eval.py, --n, 5], env: {B: x, A: 1}, cwd: work}");
    let e = c.evaluator.unwrap();
    assert_eq!(
        e.kind,
        EvaluatorKind::Command {
            argv: vec!["python3".into(), "eval.py".into(), "--n".into(), "5".into()],
            persistent: false
        }
    );
    assert_eq!(e.env.get("A").map(String::as_str), Some("1"));
    assert_eq!(e.cwd.as_deref(), Some(std::path::Path::new("work")));
    let b = cfg("evaluator: {builtin: {model: m, gpu: h200, mem_fraction: 0.9}}")
        .evaluator
        .unwrap();
    assert_eq!(
        b.kind,
        EvaluatorKind::Builtin(
            serde_json::json!({"model": "m", "gpu": "h200", "mem_fraction": 0.9})
        )
    );
}

#[test]
fn goal_new_checks_the_same_rules() {
    use sweeper_goal::Sla;
    assert_eq!(
        Goal::new(Target::Pareto, Some(vec![Objective::Throughput]), None)
            .unwrap_err()
            .rule(),
        "too_few_pareto_objectives"
    );
    assert_eq!(
        Goal::new(Target::Scalar(Objective::Throughput), Some(vec![]), None)
            .unwrap_err()
            .rule(),
        "pareto_objectives_need_pareto_target"
    );
    let bad_sla = Sla {
        e2e_ms: Some(f64::NAN),
        ..Sla::default()
    };
    assert_eq!(
        Goal::new(Target::Scalar(Objective::Throughput), None, Some(bad_sla))
            .unwrap_err()
            .rule(),
        "not_finite"
    );
}
