//! SPEC 9: the `ttft`, `min_gpus` and `cost_per_mtok` targets and `strict_sla`: a table of
//! configs with the rule each must fire (and the path it names), and each new rule's
//! message, which must say how to fix the input.

use sweeper_goal::{Objective, Price, StrictSla, Target, parse};

const SLA: &str = "sla: {ttft_ms: 2000, itl_ms: 30}";

fn goal(body: &str) -> String {
    format!("goal: {{{body}}}")
}

/// The rule a row must fire and the path it must name; `None` for a valid config.
type Want = Option<(&'static str, &'static str)>;

/// (name, config, what it must come to).
fn rows() -> Vec<(&'static str, String, Want)> {
    vec![
        ("ttft needs no sla", goal("target: ttft"), None),
        (
            "ttft is a pareto objective",
            goal("target: pareto, pareto_objectives: [throughput_per_gpu, ttft]"),
            None,
        ),
        (
            "min_gpus with floor and a ttft/itl sla",
            goal(&format!("target: min_gpus, min_goodput_rps: 40, {SLA}")),
            None,
        ),
        (
            "min_gpus with one bound is enough",
            goal("target: min_gpus, min_goodput_rps: 40, sla: {ttft_ms: 2000}"),
            None,
        ),
        (
            "min_gpus without floor",
            goal(&format!("target: min_gpus, {SLA}")),
            Some(("min_gpus_needs_floor", "goal.min_goodput_rps")),
        ),
        (
            "min_gpus without sla",
            goal("target: min_gpus, min_goodput_rps: 40"),
            Some(("sla_missing", "goal.sla")),
        ),
        (
            "min_gpus with an empty sla",
            goal("target: min_gpus, min_goodput_rps: 40, sla: {}"),
            Some(("sla_empty", "goal.sla")),
        ),
        (
            "floor without min_gpus",
            goal(&format!("target: goodput, min_goodput_rps: 40, {SLA}")),
            Some(("min_goodput_needs_min_gpus", "goal.min_goodput_rps")),
        ),
        (
            "floor must be positive",
            goal(&format!("target: min_gpus, min_goodput_rps: 0, {SLA}")),
            Some(("out_of_range", "goal.min_goodput_rps")),
        ),
        (
            "min_gpus is not a pareto objective",
            goal("target: pareto, pareto_objectives: [min_gpus, throughput]"),
            Some(("not_a_pareto_objective", "goal.pareto_objectives[0]")),
        ),
        (
            "cost with one price",
            goal("target: cost_per_mtok, price_per_gpu_hour: 2.5"),
            None,
        ),
        (
            "cost with a price map",
            goal("target: cost_per_mtok, price_per_gpu_hour: {h200: 3.5, b200: 5}"),
            None,
        ),
        (
            "cost as a pareto objective",
            goal(
                "target: pareto, pareto_objectives: [cost_per_mtok, throughput_per_user], price_per_gpu_hour: 2",
            ),
            None,
        ),
        (
            "cost without price",
            goal("target: cost_per_mtok"),
            Some(("cost_needs_price", "goal.price_per_gpu_hour")),
        ),
        (
            "cost in a front without price",
            goal("target: pareto, pareto_objectives: [cost_per_mtok, throughput_per_user]"),
            Some(("cost_needs_price", "goal.price_per_gpu_hour")),
        ),
        (
            "price must be positive",
            goal("target: cost_per_mtok, price_per_gpu_hour: -1"),
            Some(("out_of_range", "goal.price_per_gpu_hour")),
        ),
        (
            "a map price must be positive",
            goal("target: cost_per_mtok, price_per_gpu_hour: {h200: 0}"),
            Some(("out_of_range", "goal.price_per_gpu_hour.h200")),
        ),
        (
            "an empty price map",
            goal("target: cost_per_mtok, price_per_gpu_hour: {}"),
            Some(("out_of_range", "goal.price_per_gpu_hour")),
        ),
        (
            "a price that is text",
            goal("target: cost_per_mtok, price_per_gpu_hour: cheap"),
            Some(("wrong_type", "goal.price_per_gpu_hour")),
        ),
        (
            "strict sla on",
            goal(&format!("target: throughput, strict_sla: true, {SLA}")),
            None,
        ),
        (
            "strict sla off needs nothing",
            goal("target: throughput, strict_sla: false"),
            None,
        ),
        (
            "strict sla on a percentile",
            goal(&format!(
                "target: pareto, strict_sla: {{percentile: 90}}, {SLA}"
            )),
            None,
        ),
        (
            "strict sla without sla",
            goal("target: throughput, strict_sla: true"),
            Some(("strict_sla_needs_sla", "goal.strict_sla")),
        ),
        (
            "strict sla with an empty sla",
            goal("target: throughput, strict_sla: true, sla: {}"),
            Some(("strict_sla_needs_sla", "goal.strict_sla")),
        ),
        (
            "strict sla percentile out of range",
            goal(&format!("strict_sla: {{percentile: 100}}, {SLA}")),
            Some(("out_of_range", "goal.strict_sla.percentile")),
        ),
        (
            "strict sla percentile not whole",
            goal(&format!("strict_sla: {{percentile: 90.5}}, {SLA}")),
            Some(("wrong_type", "goal.strict_sla.percentile")),
        ),
        (
            "strict sla unknown key",
            goal(&format!("strict_sla: {{pct: 90}}, {SLA}")),
            Some(("unknown_key", "goal.strict_sla.pct")),
        ),
        (
            "strict sla as text",
            goal(&format!("strict_sla: yes please, {SLA}")),
            Some(("wrong_type", "goal.strict_sla")),
        ),
        (
            "price map covers the gpu choices",
            format!(
                "{}\nsearch_space: {{parameters: {{gpu: {{choices: [h200, b200]}}}}}}",
                goal("target: cost_per_mtok, price_per_gpu_hour: {h200: 3.5, b200: 5}")
            ),
            None,
        ),
        (
            "price map misses a gpu choice",
            format!(
                "{}\nsearch_space: {{parameters: {{gpu: {{choices: [h200, b200]}}}}}}",
                goal("target: cost_per_mtok, price_per_gpu_hour: {h200: 3.5}")
            ),
            Some(("price_missing_gpu", "goal.price_per_gpu_hour")),
        ),
        (
            "price map covers the topology gpu",
            format!(
                "{}\n{TOPOLOGY}\nevaluator: {{builtin: {{model: qwen3-32b-fp8, gpu: h100}}}}",
                goal("target: cost_per_mtok, price_per_gpu_hour: {b200: 5}")
            ),
            None,
        ),
        (
            "price map misses the topology gpu",
            format!(
                "{}\n{TOPOLOGY}\nevaluator: {{builtin: {{model: qwen3-32b-fp8, gpu: b200}}}}",
                goal("target: cost_per_mtok, price_per_gpu_hour: {h200: 3.5}")
            ),
            Some(("price_missing_gpu", "goal.price_per_gpu_hour")),
        ),
        (
            "price map misses the builtin gpu",
            format!(
                "{}\nevaluator: {{builtin: {{model: qwen3-32b-fp8, gpu: h100}}}}",
                goal("target: cost_per_mtok, price_per_gpu_hour: {h200: 3.5}")
            ),
            Some(("price_missing_gpu", "goal.price_per_gpu_hour")),
        ),
    ]
}

/// A topology block on B200s (the candidates' GPU for a price map).
const TOPOLOGY: &str = "search_space: {gpu_budget: 8, topology: {model: qwen3-32b-fp8, gpu: b200}}";

#[test]
fn spec9_rules_table() {
    let mut failures = Vec::new();
    for (name, text, want) in rows() {
        match (want, parse(&text)) {
            (None, Ok(_)) => {}
            (None, Err(e)) => failures.push(format!("{name}: expected valid, got {e}")),
            (Some(_), Ok(_)) => failures.push(format!("{name}: expected an error, got Ok")),
            (Some((rule, path)), Err(e)) => {
                let msg = e.to_string();
                if e.rule() != rule || e.path() != Some(path) {
                    failures.push(format!(
                        "{name}: expected {rule} at {path}, got {} at {:?}: {msg}",
                        e.rule(),
                        e.path()
                    ));
                }
                if !msg.contains(path) || msg.ends_with('.') {
                    failures.push(format!("{name}: message: {msg}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn message(body: &str) -> String {
    parse(body).unwrap_err().to_string()
}

#[test]
fn each_new_rule_says_how_to_fix_it() {
    assert_eq!(
        message(&goal(&format!("target: min_gpus, {SLA}"))),
        "goal.min_goodput_rps: the min_gpus target looks for the fewest GPUs that serve a load, so the goal needs `min_goodput_rps` (requests per second that must meet the SLA); add e.g. `min_goodput_rps: 40`"
    );
    assert_eq!(
        message(&goal(&format!(
            "target: goodput, min_goodput_rps: 4, {SLA}"
        ))),
        "goal.min_goodput_rps: min_goodput_rps is legal only with `target: min_gpus`, but the target is goodput; remove min_goodput_rps or set `target: min_gpus`"
    );
    assert_eq!(
        message(&goal("target: min_gpus, min_goodput_rps: 4, sla: {}")),
        "goal.sla: min_gpus counts only requests that meet an SLA, but the SLA sets no bound; add ttft_ms, itl_ms or e2e_ms"
    );
    assert!(
        message(&goal("target: min_gpus, min_goodput_rps: 4"))
            .starts_with("goal.sla: min_gpus counts only requests that meet an SLA"),
    );
    assert_eq!(
        message(&goal("strict_sla: true")),
        "goal.strict_sla: strict_sla drops candidates whose latency exceeds an SLA bound, but the goal sets no bound; add `sla: {ttft_ms: ..., itl_ms: ...}` (or e2e_ms), or remove strict_sla"
    );
    assert_eq!(
        message(&goal(
            "target: pareto, pareto_objectives: [throughput, min_gpus]"
        )),
        "goal.pareto_objectives[1]: min_gpus cannot be a pareto objective: it is a goodput floor with a ranking, not a value to trade off; use `target: min_gpus`, or list other objectives"
    );
    assert_eq!(
        message(&goal("target: cost_per_mtok")),
        "goal.price_per_gpu_hour: cost_per_mtok needs a price; add `price_per_gpu_hour: 2.5` (dollars per GPU-hour) or a map by GPU such as `price_per_gpu_hour: {h200: 3.5, b200: 5.0}`"
    );
    assert_eq!(
        message(&format!(
            "{}\nsearch_space: {{parameters: {{gpu: {{choices: [h200, b200]}}}}}}",
            goal("target: cost_per_mtok, price_per_gpu_hour: {h200: 3.5}")
        )),
        "goal.price_per_gpu_hour: no price for GPU `b200` (used by search_space.parameters.gpu); add `b200: <dollars per GPU-hour>` to the map, or give one price for every GPU"
    );
    assert_eq!(
        message(&format!(
            "{}\n{TOPOLOGY}",
            goal("target: cost_per_mtok, price_per_gpu_hour: {h200: 3.5}")
        )),
        "goal.price_per_gpu_hour: no price for GPU `b200` (used by search_space.topology.gpu); add `b200: <dollars per GPU-hour>` to the map, or give one price for every GPU"
    );
    let m = message(&goal(&format!("strict_sla: {{percentile: 0}}, {SLA}")));
    assert!(
        m.contains("a percentile is a whole number from 1 to 99"),
        "{m}"
    );
    let m = message(&goal("target: nope"));
    for name in ["ttft", "min_gpus", "cost_per_mtok"] {
        assert!(m.contains(name), "{m}");
    }
}

#[test]
fn the_new_settings_are_read_and_written_back() {
    let c = parse(&goal(&format!(
        "target: min_gpus, min_goodput_rps: 40, strict_sla: {{percentile: 90}}, price_per_gpu_hour: {{h200: 3.5}}, {SLA}"
    )))
    .unwrap();
    let g = &c.goal;
    assert_eq!(g.target(), Target::Scalar(Objective::MinGpus));
    assert_eq!(g.min_goodput_rps(), Some(40.0));
    assert_eq!(
        g.strict_sla(),
        Some(StrictSla {
            percentile: Some(90)
        })
    );
    assert_eq!(
        g.price_per_gpu_hour().and_then(|p| p.for_gpu(Some("h200"))),
        Some(3.5)
    );
    assert_eq!(
        g.price_per_gpu_hour().and_then(|p| p.for_gpu(Some("b200"))),
        None
    );
    assert_eq!(Price::Flat(2.0).for_gpu(None), Some(2.0));
    let out = g.to_json_value();
    assert_eq!(out["strict_sla"], serde_json::json!({"percentile": 90}));
    assert_eq!(out["min_goodput_rps"], serde_json::json!(40.0));
    assert_eq!(out["price_per_gpu_hour"], serde_json::json!({"h200": 3.5}));
    // written back, it reads the same goal
    let again = parse(&format!("goal: {out}")).unwrap();
    assert_eq!(&again.goal, g);
    let on = parse(&goal(&format!("strict_sla: true, {SLA}"))).unwrap();
    assert_eq!(
        on.goal.to_json_value()["strict_sla"],
        serde_json::json!(true)
    );
    assert_eq!(
        on.goal.strict_sla().map(StrictSla::keys),
        Some([
            "mean_ttft_ms".to_owned(),
            "mean_itl_ms".to_owned(),
            "mean_e2e_latency_ms".to_owned()
        ])
    );
    let off = parse(&goal(&format!("strict_sla: false, {SLA}"))).unwrap();
    assert_eq!(off.goal.strict_sla(), None);
}
