//! Property tests: arbitrary goal/workload/search-space/sweep maps never panic the parser,
//! and whatever it accepts round-trips through YAML (feature `yaml`) and JSON. Maps written
//! as YAML need the feature; the same maps written as JSON run in every build.
//!
//! The in-code case count is small; `PROPTEST_CASES` raises it.

use proptest::prelude::*;
#[cfg(feature = "yaml")]
use std::fmt::Write as _;
use sweeper_goal::{SweepConfig, parse};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(96)
}

/// Every key of the schema, plus a few unknown ones, so that generated maps hit real rules.
const KEYS: &[&str] = &[
    "target",
    "sla",
    "pareto_objectives",
    "ttft_ms",
    "itl_ms",
    "e2e_ms",
    "trace_path",
    "replay_concurrency",
    "isl",
    "osl",
    "num_request_ratio",
    "request_rate",
    "concurrency",
    "kv_load_ratio",
    "gpu_budget",
    "used_gpus",
    "parameters",
    "values",
    "int",
    "float",
    "choices",
    "log",
    "tp",
    "replicas",
    "max_rounds",
    "candidates_per_round",
    "parallel_evals",
    "max_eval_seconds",
    "max_trials",
    "max_consecutive_failures",
    "seed",
    "algorithm",
    "schedule",
    "command",
    "builtin",
    "persistent",
    "env",
    "cwd",
    "x",
    "",
];

/// Bare words: YAML reads them as strings, JSON needs them quoted.
const WORDS: &[&str] = &[
    "throughput",
    "throughput_per_gpu",
    "throughput_per_user",
    "e2e_latency",
    "goodput",
    "goodput_per_gpu",
    "pareto",
    "random",
    "grid",
    "rounds",
    "async",
    "tp",
    "replicas",
];

/// A scalar as YAML text (`yaml`) or as JSON text.
fn scalar(yaml: bool) -> impl Strategy<Value = String> {
    let mut numbers = vec![
        "0.0",
        "0.5",
        "1.9",
        "-1.0",
        "1e3",
        "2.0",
        "99999999999",
        "18446744073709551616",
        "-0.0",
    ];
    if yaml {
        numbers.extend([".nan", ".inf", "-.inf"]);
    }
    prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("false".to_owned()),
        (-3i64..12).prop_map(|i| i.to_string()),
        prop::sample::select(numbers).prop_map(str::to_owned),
        prop::sample::select(WORDS).prop_map(move |w| if yaml {
            w.to_owned()
        } else {
            format!("\"{w}\"")
        }),
        "[a-z_]{0,6}".prop_map(|s| format!("\"{s}\"")),
        Just("\"5\"".to_owned()),
    ]
}

/// A value in flow style: valid JSON unless `yaml`.
fn value(yaml: bool) -> impl Strategy<Value = String> {
    scalar(yaml).prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..4).prop_map(|kv| {
                let body: Vec<String> = kv
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\": {v}"))
                    .collect();
                format!("{{{}}}", body.join(", "))
            }),
        ]
    })
}

/// One block's key-value pairs as a flow mapping `{"k": v, ...}`.
fn body(yaml: bool) -> impl Strategy<Value = String> {
    prop::collection::vec((prop::sample::select(KEYS), value(yaml)), 0..5).prop_map(|kv| {
        let body: Vec<String> = kv
            .into_iter()
            .map(|(k, v)| format!("\"{k}\": {v}"))
            .collect();
        format!("{{{}}}", body.join(", "))
    })
}

const BLOCKS: [&str; 5] = ["goal", "workload", "search_space", "evaluator", "sweep"];

/// A YAML document of block-style top-level keys over flow-style blocks.
#[cfg(feature = "yaml")]
fn config() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::option::of(body(true)), 5).prop_map(|blocks| {
        BLOCKS
            .iter()
            .zip(blocks)
            .filter_map(|(name, b)| b.map(|b| format!("{name}: {b}\n")))
            .collect()
    })
}

/// The same kind of document as one JSON object.
fn config_json() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::option::of(body(false)), 5).prop_map(|blocks| {
        let entries: Vec<String> = BLOCKS
            .iter()
            .zip(blocks)
            .filter_map(|(name, b)| b.map(|b| format!("\"{name}\": {b}")))
            .collect();
        format!("{{{}}}", entries.join(", "))
    })
}

/// An accepted config comes back equal from its YAML (with the feature) and JSON text.
fn round_trips(cfg: &SweepConfig) -> Result<(), TestCaseError> {
    #[cfg(feature = "yaml")]
    {
        let yaml = cfg.to_yaml();
        prop_assert_eq!(parse(&yaml), Ok(cfg.clone()), "yaml:\n{}", yaml);
    }
    let json = cfg.to_json_string();
    prop_assert_eq!(parse(&json), Ok(cfg.clone()), "json:\n{}", json);
    Ok(())
}

/// Parses `text`: an accepted config round-trips, a rejection has a well-formed message.
fn never_panics_and_round_trips(text: &str) -> Result<(), TestCaseError> {
    match parse(text) {
        Ok(cfg) => round_trips(&cfg)?,
        Err(e) => {
            let msg = e.to_string();
            prop_assert!(!msg.is_empty());
            prop_assert!(!msg.ends_with('.'), "{}", msg);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[cfg(feature = "yaml")]
    #[test]
    fn arbitrary_maps_never_panic_and_accepted_configs_round_trip(text in config()) {
        never_panics_and_round_trips(&text)?;
    }

    #[test]
    fn arbitrary_json_maps_never_panic_and_accepted_configs_round_trip(text in config_json()) {
        never_panics_and_round_trips(&text)?;
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,64}") {
        let _ = parse(&text);
    }

    #[test]
    fn goal_rules_agree_with_a_brute_force_oracle(
        target in prop::sample::select(vec![
            "throughput", "throughput_per_gpu", "throughput_per_user", "e2e_latency",
            "goodput", "goodput_per_gpu", "pareto",
        ]),
        objectives in prop::option::of(prop::collection::vec(prop::sample::select(vec![
            "throughput", "throughput_per_gpu", "throughput_per_user", "e2e_latency",
            "goodput", "goodput_per_gpu", "pareto",
        ]), 0..4)),
        ttft in any::<bool>(),
        itl in any::<bool>(),
        e2e in any::<bool>(),
    ) {
        let mut sla = Vec::new();
        if ttft { sla.push(("ttft_ms", 100)); }
        if itl { sla.push(("itl_ms", 10)); }
        if e2e { sla.push(("e2e_ms", 1000)); }
        let mut texts = Vec::new();
        #[cfg(feature = "yaml")]
        {
            let mut text = format!("goal:\n  target: {target}\n");
            if let Some(list) = &objectives {
                let _ = writeln!(text, "  pareto_objectives: [{}]", list.join(", "));
            }
            if !sla.is_empty() {
                let pairs: Vec<String> = sla.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                let _ = writeln!(text, "  sla: {{{}}}", pairs.join(", "));
            }
            texts.push(text);
        }
        let mut goal = vec![format!("\"target\": \"{target}\"")];
        if let Some(list) = &objectives {
            let names: Vec<String> = list.iter().map(|o| format!("\"{o}\"")).collect();
            goal.push(format!("\"pareto_objectives\": [{}]", names.join(", ")));
        }
        if !sla.is_empty() {
            let pairs: Vec<String> = sla.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
            goal.push(format!("\"sla\": {{{}}}", pairs.join(", ")));
        }
        texts.push(format!("{{\"goal\": {{{}}}}}", goal.join(", ")));
        // the oracle, straight from SPEC 2
        let resolved: Vec<&str> = match (target, &objectives) {
            ("pareto", None) => vec!["throughput_per_gpu", "throughput_per_user"],
            ("pareto", Some(l)) => l.clone(),
            (t, _) => vec![t],
        };
        let mut want_ok = true;
        if target != "pareto" && objectives.is_some() { want_ok = false; }
        if target == "pareto" && objectives.is_some() {
            let l = objectives.as_ref().unwrap();
            let distinct = l.iter().enumerate().all(|(i, a)| !l[..i].contains(a));
            if l.len() < 2 || !distinct || l.contains(&"pareto") { want_ok = false; }
        }
        let needs_sla = resolved.iter().any(|o| *o == "goodput" || *o == "goodput_per_gpu");
        if needs_sla && !(e2e || (ttft && itl)) { want_ok = false; }
        for text in &texts {
            let got = parse(text);
            prop_assert_eq!(got.is_ok(), want_ok, "{}: {:?}", text, got.err().map(|e| e.to_string()));
            if let Ok(cfg) = got {
                let names: Vec<&str> = cfg.goal.objectives().iter().map(|o| o.name()).collect();
                prop_assert_eq!(names, resolved.clone());
            }
        }
    }
}

fn tricky_string() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "yes", "no", "on", "1", "1.5", "null", "~", "true", ".nan", "- x", "a: b", "#c", "[x]",
            "{y}", "'q'", "\"d\"", " lead", "trail ", "", "0x1F", "1e3", "é ü", "a\nb",
        ])
        .prop_map(str::to_owned),
        "[a-zA-Z0-9_ :#-]{1,8}",
    ]
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("finite", |x| x.is_finite()),
        (-1000i32..1000).prop_map(f64::from),
        (1u32..1000).prop_map(|x| f64::from(x) / 7.0),
    ]
}

fn positive() -> impl Strategy<Value = f64> {
    prop_oneof![
        (1u32..100_000).prop_map(|x| f64::from(x) / 3.0),
        any::<f64>().prop_filter("positive finite", |x| x.is_finite() && *x > 0.0),
    ]
}

/// One parameter as JSON text (JSON is YAML), always valid.
fn parameter() -> impl Strategy<Value = String> {
    prop_oneof![
        (prop::collection::btree_set(-50i64..50, 1..5), any::<bool>()).prop_map(|(v, log)| {
            let v: Vec<String> = v
                .into_iter()
                .map(|x| if log { x.abs() + 1 } else { x })
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .map(|x| x.to_string())
                .collect();
            format!("{{\"values\": [{}], \"log\": {log}}}", v.join(", "))
        }),
        (-100i64..100, 0i64..100, any::<bool>()).prop_map(|(lo, w, log)| {
            let lo = if log { lo.abs() + 1 } else { lo };
            format!("{{\"int\": [{lo}, {}], \"log\": {log}}}", lo + w)
        }),
        (finite(), finite()).prop_map(|(a, b)| {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            format!("{{\"float\": [{lo:?}, {hi:?}]}}")
        }),
        prop::collection::btree_set(tricky_string(), 1..4).prop_map(|c| {
            let c: Vec<String> = c.iter().map(|s| json_str(s)).collect();
            format!("{{\"choices\": [{}]}}", c.join(", "))
        }),
    ]
}

fn valid_config() -> impl Strategy<Value = String> {
    // (the load as JSON, the fixed load that the request count multiplies, 0 for a ratio)
    let load = prop_oneof![
        positive().prop_map(|r| (format!("\"request_rate\": {r:?}"), r)),
        (1u64..100_000).prop_map(|c| (format!("\"concurrency\": {c}"), c as f64)),
        positive().prop_map(|r| (format!("\"kv_load_ratio\": {r:?}"), 0.0)),
        (positive(), positive()).prop_filter_map("min < max", |(a, b)| {
            (a < b).then(|| (format!("\"kv_load_ratio\": [{a:?}, {b:?}]"), 0.0))
        }),
    ];
    (
        any::<bool>(),
        load,
        (1u64..10_000, 1u64..10_000, positive()),
        prop::collection::vec(("[a-z]{1,6}", parameter()), 0..5),
        prop::collection::btree_map("[A-Z]{1,4}", tricky_string(), 0..3),
        tricky_string(),
        any::<u64>(),
        positive(),
    )
        // a fixed load's request count must fit in a u64 (issue 30; a scalar goal's range
        // becomes concurrency 8 below)
        .prop_filter("request count below 2^64", |(_, (_, fixed), (_, _, nrr), ..)| {
            (nrr * if *fixed == 0.0 { 8.0 } else { *fixed }).round() < 1.8e19
        })
        .prop_map(|(pareto, (load, _), (isl, osl, nrr), params, env, cwd, seed, secs)| {
            let load = if !pareto && load.contains('[') {
                "\"concurrency\": 8".to_owned()
            } else {
                load
            };
            let mut seen = std::collections::BTreeSet::new();
            let params: Vec<String> = params
                .into_iter()
                .filter(|(n, _)| seen.insert(n.clone()) && n != "kv_load_ratio")
                .map(|(n, p)| format!("{}: {p}", json_str(&n)))
                .collect();
            let env: Vec<String> = env
                .iter()
                .map(|(k, v)| format!("{}: {}", json_str(k), json_str(v)))
                .collect();
            let cwd = if cwd.is_empty() { "w".to_owned() } else { cwd };
            format!(
                "{{\"goal\": {{\"target\": \"{}\"}}, \
                  \"workload\": {{\"isl\": {isl}, \"osl\": {osl}, \"num_request_ratio\": {nrr:?}, {load}}}, \
                  \"search_space\": {{\"parameters\": {{{}}}}}, \
                  \"evaluator\": {{\"command\": [\"prog\", {}], \"env\": {{{}}}, \"cwd\": {}}}, \
                  \"sweep\": {{\"seed\": {seed}, \"max_eval_seconds\": {secs:?}}}}}",
                if pareto { "pareto" } else { "throughput" },
                params.join(", "),
                json_str(&cwd),
                env.join(", "),
                json_str(&cwd),
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn valid_configs_round_trip_exactly(text in valid_config()) {
        let cfg = parse(&text).map_err(|e| TestCaseError::fail(format!("{text}\n{e}")))?;
        round_trips(&cfg)?;
    }
}
