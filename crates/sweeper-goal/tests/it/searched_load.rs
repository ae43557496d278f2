//! A load searched as a parameter (issue 36, item 1): `search_space.parameters.concurrency`
//! or `.request_rate` is each candidate's load when the workload fixes none; SPEC 5's
//! workload block keeps every rule. JSON configs, so these run with and without `yaml`.

use sweeper_goal::{ConfigError, Load, SearchedLoad, Workload, parse, parse_all};

const WORKLOAD: &str = r#""isl": 1024, "osl": 1024, "num_request_ratio": 10"#;

fn config(target: &str, workload_extra: &str, parameters: &str) -> String {
    format!(
        r#"{{"goal": {{"target": "{target}"}},
            "workload": {{{WORKLOAD}{workload_extra}}},
            "search_space": {{"gpu_budget": 8, "used_gpus": ["tp"],
                              "parameters": {{"tp": {{"values": [1, 2, 4, 8]}}{parameters}}}}}}}"#
    )
}

fn error(text: &str) -> ConfigError {
    parse(text).expect_err("the config is refused")
}

#[test]
fn a_searched_concurrency_is_the_load_instead_of_the_default_ratio_range() {
    let c = parse(&config(
        "pareto",
        "",
        r#", "concurrency": {"values": [4, 8, 16, 32, 64, 128]}"#,
    ))
    .unwrap();
    // today's main gave the pareto default `kv_load_ratio: [0, 1]` here
    assert_eq!(
        c.workload.as_ref().and_then(Workload::load),
        Some(&Load::Searched(SearchedLoad::Concurrency))
    );
    assert_eq!(c.searched_load(), Some(SearchedLoad::Concurrency));
    assert_eq!(
        c.searched_load_bounds(),
        Some((SearchedLoad::Concurrency, 4.0, 128.0))
    );
    // the workload block is written as configured: no load key
    let w = c.workload.as_ref().unwrap().to_json_value();
    assert_eq!(
        w,
        serde_json::json!({"isl": 1024, "osl": 1024, "num_request_ratio": 10})
    );
    // and the whole config reads back to the same
    assert_eq!(parse(&c.to_json_string()).unwrap(), c);
}

#[test]
fn a_searched_load_needs_no_pareto_goal() {
    // a scalar goal without a load was `load_missing`; a searched one is its load
    let c = parse(&config(
        "throughput",
        "",
        r#", "concurrency": {"int": [1, 256], "log": true}"#,
    ))
    .unwrap();
    assert_eq!(c.searched_load(), Some(SearchedLoad::Concurrency));
    let c = parse(&config(
        "throughput",
        "",
        r#", "request_rate": {"float": [0.5, 8.0]}"#,
    ))
    .unwrap();
    assert_eq!(
        c.workload.as_ref().and_then(Workload::load),
        Some(&Load::Searched(SearchedLoad::RequestRate))
    );
    assert_eq!(
        c.searched_load_bounds(),
        Some((SearchedLoad::RequestRate, 0.5, 8.0))
    );
    // without one, the scalar goal still needs a load (SPEC 5)
    let e = error(&config("throughput", "", ""));
    assert_eq!(e.rule(), "load_missing");
    assert!(
        e.to_string()
            .contains("or a searched `search_space.parameters.concurrency` or `.request_rate`"),
        "{e}"
    );
}

#[test]
fn a_workload_that_fixes_a_load_and_a_searched_one_is_refused_naming_both() {
    for (fixed, value) in [
        ("concurrency", "64"),
        ("request_rate", "2"),
        ("kv_load_ratio", "0.5"),
        ("kv_load_ratio", "[0.1, 0.9]"),
    ] {
        for searched in ["concurrency", "request_rate"] {
            let text = config(
                "pareto",
                &format!(r#", "{fixed}": {value}"#),
                &format!(r#", "{searched}": {{"values": [1, 2, 4]}}"#),
            );
            let e = error(&text);
            assert_eq!(e.rule(), "load_fixed_and_searched", "{fixed} + {searched}");
            assert_eq!(e.path(), Some(format!("workload.{fixed}").as_str()));
            assert_eq!(
                e.to_string(),
                format!(
                    "workload.{fixed}: the workload fixes the load and search_space.parameters.{searched} searches it; drop workload.{fixed} to sweep the {searched} levels, or drop the parameter to run at one load"
                )
            );
        }
    }
}

#[test]
fn a_searched_load_takes_loads_only() {
    let cases = [
        (
            r#""concurrency": {"values": [0, 4, 8]}"#,
            "search_space.parameters.concurrency: a searched concurrency is the candidate's load, so its values are > 0, found 0; e.g. `concurrency: {values: [4, 8, 16, 32, 64, 128]}`",
        ),
        (
            r#""concurrency": {"values": [4, 8.5]}"#,
            "search_space.parameters.concurrency: a searched concurrency is the candidate's load, so its values are whole numbers of requests in flight, found 8.5; e.g. `concurrency: {values: [4, 8, 16, 32, 64, 128]}`",
        ),
        (
            r#""concurrency": {"float": [1, 64]}"#,
            "search_space.parameters.concurrency: a searched concurrency is the candidate's load, so it counts whole requests in flight: use `values` or `int`, not `float`; e.g. `concurrency: {values: [4, 8, 16, 32, 64, 128]}`",
        ),
        (
            r#""concurrency": {"choices": ["low", "high"]}"#,
            "search_space.parameters.concurrency: a searched concurrency is the candidate's load, so it takes numbers, not choices; e.g. `concurrency: {values: [4, 8, 16, 32, 64, 128]}`",
        ),
        (
            r#""request_rate": {"float": [0, 4]}"#,
            "search_space.parameters.request_rate: a searched request_rate is the candidate's load, so its values are > 0, found 0; e.g. `request_rate: {values: [0.5, 1, 2, 4]}`",
        ),
        (
            r#""concurrency": {"values": [4, 8]}, "request_rate": {"values": [1, 2]}"#,
            "search_space.parameters.request_rate: a searched request_rate is the candidate's load, so a sweep searches one load and `concurrency` is searched too; keep one of the two",
        ),
    ];
    for (parameters, message) in cases {
        let errors = parse_all(&config("pareto", "", &format!(", {parameters}")))
            .expect_err("the config is refused");
        let e = errors
            .iter()
            .find(|e| e.rule() == "load_parameter")
            .unwrap_or_else(|| panic!("{parameters}: {errors:?}"));
        assert_eq!(e.to_string(), message);
    }
    // a request rate may be fractional
    parse(&config(
        "pareto",
        "",
        r#", "request_rate": {"values": [0.25, 0.5, 1.5]}"#,
    ))
    .unwrap();
}

#[test]
fn a_trace_takes_a_searched_concurrency_as_its_replay_cap_and_no_rate() {
    let trace = |extra: &str, parameter: &str| {
        format!(
            r#"{{"workload": {{"trace_path": "t.jsonl"{extra}}},
                "search_space": {{"parameters": {{{parameter}}}}}}}"#
        )
    };
    let c = parse(&trace("", r#""concurrency": {"values": [8, 16]}"#)).unwrap();
    assert_eq!(c.searched_load(), Some(SearchedLoad::Concurrency));
    let e = error(&trace(
        r#", "replay_concurrency": 8"#,
        r#""concurrency": {"values": [8, 16]}"#,
    ));
    assert_eq!(e.rule(), "load_fixed_and_searched");
    assert_eq!(e.path(), Some("workload.replay_concurrency"));
    let e = error(&trace("", r#""request_rate": {"values": [1, 2]}"#));
    assert_eq!(e.rule(), "load_parameter");
    assert!(
        e.to_string()
            .contains("a trace replays its own arrival times; search `concurrency`"),
        "{e}"
    );
}

#[test]
fn parameters_of_other_names_are_no_load() {
    let c = parse(&config(
        "pareto",
        "",
        r#", "max_concurrency": {"values": [4, 8]}"#,
    ))
    .unwrap();
    assert_eq!(c.searched_load(), None);
    assert_eq!(
        c.workload.as_ref().and_then(Workload::load),
        Some(&Load::KvLoadRange { min: 0.0, max: 1.0 })
    );
}
