//! JSON configs: the same rules and key paths with or without the `yaml` feature (the
//! table runs in both builds), and what only a JSON-only build does (`--no-default-features`).

use sweeper_goal::{SweepConfig, parse, parse_all};

/// `(case, JSON text, None for valid or Some((rule, path)))`.
type Row = (
    &'static str,
    &'static str,
    Option<(&'static str, &'static str)>,
);

const TABLE: &[Row] = &[
    ("empty object", "{}", None),
    ("null document", "null", None),
    (
        "blocks set to null are absent",
        r#"{"goal": null, "sweep": null}"#,
        None,
    ),
    (
        "a full config",
        r#"{"goal": {"target": "goodput", "sla": {"e2e_ms": 2e4}},
            "workload": {"isl": 10, "osl": 10, "num_request_ratio": 1, "concurrency": 4},
            "search_space": {"gpu_budget": 8, "used_gpus": ["tp"],
                             "parameters": {"tp": {"values": [1, 2, 4]}, "r": {"choices": ["a", "b"]}}},
            "evaluator": {"command": ["python3", "eval.py"], "env": {"X": "1"}},
            "sweep": {"max_rounds": 3, "seed": 18446744073709551615, "algorithm": "random"}}"#,
        None,
    ),
    (
        "whole floats are integers",
        r#"{"sweep": {"max_rounds": 5.0, "parallel_evals": 2.0}}"#,
        None,
    ),
    (
        "unknown top-level key",
        r#"{"goals": {}}"#,
        Some(("unknown_key", "goals")),
    ),
    (
        "unknown goal key",
        r#"{"goal": {"target": "throughput", "extra": 1}}"#,
        Some(("unknown_key", "goal.extra")),
    ),
    (
        "unknown sla key",
        r#"{"goal": {"sla": {"p99_ms": 5}}}"#,
        Some(("unknown_key", "goal.sla.p99_ms")),
    ),
    (
        "unknown parameter key",
        r#"{"search_space": {"parameters": {"tp": {"values": [1], "step": 1}}}}"#,
        Some(("unknown_key", "search_space.parameters.tp.step")),
    ),
    (
        "unknown sweep key",
        r#"{"sweep": {"rounds": 3}}"#,
        Some(("unknown_key", "sweep.rounds")),
    ),
    (
        "target not a string",
        r#"{"goal": {"target": 3}}"#,
        Some(("wrong_type", "goal.target")),
    ),
    (
        "fractional integer",
        r#"{"sweep": {"parallel_evals": 2.5}}"#,
        Some(("wrong_type", "sweep.parallel_evals")),
    ),
    (
        "number written as a string",
        r#"{"sweep": {"max_rounds": "64"}}"#,
        Some(("wrong_type", "sweep.max_rounds")),
    ),
    (
        "seed a string",
        r#"{"sweep": {"seed": "abc"}}"#,
        Some(("wrong_type", "sweep.seed")),
    ),
    (
        "objectives not a list",
        r#"{"goal": {"target": "pareto", "pareto_objectives": "throughput"}}"#,
        Some(("wrong_type", "goal.pareto_objectives")),
    ),
    (
        "concurrency 1.9",
        r#"{"workload": {"isl": 10, "osl": 10, "num_request_ratio": 1, "concurrency": 1.9}}"#,
        Some(("wrong_type", "workload.concurrency")),
    ),
    ("the document is a list", "[1, 2]", Some(("structure", ""))),
    (
        "goal is a number",
        r#"{"goal": 5}"#,
        Some(("structure", "goal")),
    ),
    (
        "sla is a list",
        r#"{"goal": {"sla": [1]}}"#,
        Some(("structure", "goal.sla")),
    ),
    // serde_json alone would fill a struct from a list of its fields in order
    (
        "the document is a list of the blocks",
        r#"[null, null, null, null, {"seed": 1}]"#,
        Some(("structure", "")),
    ),
    (
        "goal is a list of its fields",
        r#"{"goal": ["throughput", null, null]}"#,
        Some(("structure", "goal")),
    ),
    (
        "sla is a list of its fields",
        r#"{"goal": {"sla": [100, 10, 20000]}}"#,
        Some(("structure", "goal.sla")),
    ),
    (
        "a parameter is a list of its fields",
        r#"{"search_space": {"parameters": {"tp": [[1, 2], null, null, null, null]}}}"#,
        Some(("structure", "search_space.parameters.tp")),
    ),
    (
        "sweep is a list of its fields",
        r#"{"sweep": [1, 1, 1, 1, null, 1, "grid"]}"#,
        Some(("structure", "sweep")),
    ),
    (
        "parameters is a list",
        r#"{"search_space": {"parameters": [1]}}"#,
        Some(("structure", "search_space.parameters")),
    ),
    (
        "duplicate key in a block",
        r#"{"goal": {"target": "throughput", "target": "goodput"}}"#,
        Some(("duplicate_key", "goal.target")),
    ),
    (
        "duplicate parameter",
        r#"{"search_space": {"parameters": {"tp": {"values": [1]}, "tp": {"values": [2]}}}}"#,
        Some(("duplicate_key", "search_space.parameters.tp")),
    ),
    (
        "duplicate key in the builtin block",
        r#"{"evaluator": {"builtin": {"gpu": "a", "gpu": "b"}}}"#,
        Some(("duplicate_key", "evaluator.builtin.gpu")),
    ),
    (
        "max_rounds zero",
        r#"{"sweep": {"max_rounds": 0}}"#,
        Some(("out_of_range", "sweep.max_rounds")),
    ),
    (
        "sla missing",
        r#"{"goal": {"target": "goodput"}}"#,
        Some(("sla_missing", "goal.sla")),
    ),
    (
        "max_consecutive_failures whole float",
        r#"{"sweep": {"max_consecutive_failures": 2.0}}"#,
        None,
    ),
    (
        "max_consecutive_failures zero",
        r#"{"sweep": {"max_consecutive_failures": 0}}"#,
        Some(("out_of_range", "sweep.max_consecutive_failures")),
    ),
    (
        "max_consecutive_failures fractional",
        r#"{"sweep": {"max_consecutive_failures": 1.9}}"#,
        Some(("wrong_type", "sweep.max_consecutive_failures")),
    ),
    (
        "unknown algorithm",
        r#"{"sweep": {"algorithm": "tpe"}}"#,
        Some(("unknown_algorithm", "sweep.algorithm")),
    ),
    (
        "unknown schedule",
        r#"{"sweep": {"schedule": "later"}}"#,
        Some(("unknown_schedule", "sweep.schedule")),
    ),
    (
        "unclosed object",
        r#"{"goal": {"target": "x""#,
        Some(("syntax", "")),
    ),
    ("trailing text", "{} {}", Some(("syntax", ""))),
];

#[test]
fn json_rules_and_paths() {
    let mut failures = Vec::new();
    for (name, text, want) in TABLE {
        match (want, parse(text)) {
            (None, Ok(_)) => {}
            (None, Err(e)) => failures.push(format!("{name}: expected valid, got {e}")),
            (Some(_), Ok(_)) => failures.push(format!("{name}: expected an error, got Ok")),
            (Some((rule, path)), Err(e)) => {
                let got_path = e.path().unwrap_or("");
                if e.rule() != *rule || got_path != *path {
                    failures.push(format!(
                        "{name}: expected {rule} at {path:?}, got {} at {got_path:?}: {e}",
                        e.rule()
                    ));
                }
                let msg = e.to_string();
                assert!(!msg.ends_with('.'), "{name}: ends with a period: {msg}");
                assert!(msg.contains(path), "{name}: does not name {path}: {msg}");
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn json_output_parses_back() {
    for (_, text, want) in TABLE {
        if want.is_none() {
            let cfg = parse(text).unwrap();
            let json = cfg.to_json_string();
            assert_eq!(parse(&json), Ok(cfg), "{json}");
        }
    }
    assert_eq!(
        parse(&SweepConfig::default().to_json_string()),
        Ok(SweepConfig::default())
    );
}

#[test]
fn json_parse_all_reports_each_block() {
    let errors = parse_all(
        r#"{"goal": {"target": "goodput"}, "search_space": {"gpu_budget": 0}, "sweep": {"seed": -1}}"#,
    )
    .unwrap_err();
    let got: Vec<(&str, Option<&str>)> = errors.iter().map(|e| (e.rule(), e.path())).collect();
    assert_eq!(
        got,
        [
            ("sla_missing", Some("goal.sla")),
            ("out_of_range", Some("search_space.gpu_budget")),
            ("out_of_range", Some("sweep.seed")),
        ]
    );
}

/// What only a build without the `yaml` feature does.
#[cfg(not(feature = "yaml"))]
mod json_only {
    use std::path::PathBuf;
    use sweeper_goal::{SweepConfig, from_path, from_path_all, parse};

    #[test]
    fn empty_and_blank_documents_are_the_default() {
        for text in ["", "  \n\t\n"] {
            assert_eq!(parse(text), Ok(SweepConfig::default()), "{text:?}");
        }
    }

    #[test]
    fn yaml_text_is_a_syntax_error_that_says_json_only() {
        for text in ["goal: {target: pareto}", "goal:\n  target: throughput\n"] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.rule(), "syntax", "{e}");
            assert_eq!(e.path(), None);
            assert_eq!(e.location(), Some((1, 1)), "{e}");
            let m = e.to_string();
            assert!(
                m.contains("JSON only") && m.contains("`yaml` feature"),
                "{m}"
            );
            assert!(!m.ends_with('.'), "{m}");
        }
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let e = parse("{\n  \"goal\": {\"target\": \"throughput\",}\n}").unwrap_err();
        assert_eq!(e.rule(), "syntax");
        assert_eq!(e.location(), Some((2, 35)), "{e}");
        let m = e.to_string();
        assert!(m.contains("(line 2, column 35)"), "{m}");
        // serde_json's own suffix is not repeated in the message
        assert!(!m.contains("at line"), "{m}");
        // an unfinished document ends on a line of its own: column 0 is reported as 1
        let e = parse("{\"goal\": {\n").unwrap_err();
        assert_eq!(e.rule(), "syntax");
        assert_eq!(e.location(), Some((2, 1)), "{e}");
    }

    #[test]
    fn unknown_keys_carry_line_column_and_a_suggestion() {
        let e =
            parse("{\n  \"goal\": {\n    \"target\": \"throughput\",\n    \"tagret\": 1\n  }\n}")
                .unwrap_err();
        assert_eq!(e.rule(), "unknown_key");
        assert_eq!(e.path(), Some("goal.tagret"));
        assert_eq!(e.location(), Some((4, 12)), "{e}");
        let m = e.to_string();
        assert!(m.contains("did you mean `target`?"), "{m}");
        assert!(m.contains("`sla`"), "{m}");
    }

    #[test]
    fn wrong_shapes_carry_line_and_column() {
        let e = parse("{\"goal\":\n 5}").unwrap_err();
        assert_eq!((e.rule(), e.path()), ("structure", Some("goal")));
        assert_eq!(e.location(), Some((2, 2)), "{e}");
        let m = e.to_string();
        assert!(m.contains("found integer `5`"), "{m}");
    }

    #[test]
    fn messages_name_the_value() {
        let e = parse(
            r#"{"workload": {"isl": 10, "osl": 10, "num_request_ratio": 1, "concurrency": 1.9}}"#,
        )
        .unwrap_err();
        let m = e.to_string();
        assert!(m.contains("1.9") && m.contains("integer"), "{m}");
        let e = parse(r#"{"goal": {"target": "throughput", "target": "goodput"}}"#).unwrap_err();
        assert!(e.to_string().contains("does not report where"), "{e}");
    }

    #[test]
    fn files_are_read_as_json() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.json");
        std::fs::write(&good, r#"{"sweep": {"seed": 7}}"#).unwrap();
        assert_eq!(from_path(&good).unwrap().sweep.seed, 7);
        assert_eq!(from_path_all(&good).unwrap().sweep.seed, 7);
        let yaml =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/pareto-three.yaml");
        assert_eq!(from_path(&yaml).unwrap_err().rule(), "syntax");
        let missing = dir.path().join("missing.json");
        assert_eq!(from_path(&missing).unwrap_err().rule(), "io");
        assert_eq!(from_path_all(&missing).unwrap_err()[0].rule(), "io");
    }
}

/// JSON nested over the limit: refused with its key path before any parser reads it, in
/// both builds, and the limit itself is accepted.
#[test]
fn json_nesting_limit_names_the_key_path() {
    use sweeper_goal::MAX_NESTING;
    // three mappings (top, evaluator, builtin) then lists
    let nested = |lists: usize| {
        format!(
            r#"{{"evaluator": {{"builtin": {{"x": {}{}}}}}}}"#,
            "[".repeat(lists),
            "]".repeat(lists)
        )
    };
    parse(&nested(MAX_NESTING - 3)).unwrap();
    let err = parse(&nested(MAX_NESTING - 2)).unwrap_err();
    assert_eq!(err.rule(), "nesting_too_deep", "{err}");
    let path = format!("evaluator.builtin.x{}", "[0]".repeat(MAX_NESTING - 3));
    assert_eq!(err.path(), Some(path.as_str()), "{err}");
    assert_eq!(err.location(), Some((1, 33 + MAX_NESTING - 3)), "{err}");
    assert!(
        err.to_string().contains("nested deeper than 64 levels"),
        "{err}"
    );
}
