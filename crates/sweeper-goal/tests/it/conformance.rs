//! One row per rule of SPEC 2, 5 and 6 (and the schema around them): a config, and either
//! "valid" or the rule that must fire with the key path it must name.

use sweeper_goal::parse;

use crate::conformance_rows::Want::{Invalid, Valid};
use crate::conformance_rows::table;

#[test]
fn conformance_table() {
    let rows = table();
    assert!(rows.len() >= 60, "only {} rows", rows.len());
    let mut failures = Vec::new();
    for (name, text, want) in &rows {
        let got = parse(text);
        match (want, &got) {
            (Valid, Ok(_)) => {}
            (Valid, Err(e)) => failures.push(format!("{name}: expected valid, got {e}")),
            (Invalid { .. }, Ok(_)) => failures.push(format!("{name}: expected an error, got Ok")),
            (Invalid { rule, path }, Err(e)) => {
                let got_path = e.path().unwrap_or("");
                if e.rule() != *rule || got_path != *path {
                    failures.push(format!(
                        "{name}: expected {rule} at {path:?}, got {} at {got_path:?}: {e}",
                        e.rule()
                    ));
                }
                let msg = e.to_string();
                assert!(
                    !msg.ends_with('.'),
                    "{name}: message ends with a period: {msg}"
                );
                if !path.is_empty() {
                    assert!(
                        msg.contains(path),
                        "{name}: message does not name {path}: {msg}"
                    );
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn messages_show_the_value_and_the_fix() {
    let e =
        parse("workload: {isl: 10, osl: 10, num_request_ratio: 1, concurrency: 1.9}").unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("1.9") && m.contains("integer") && m.contains("kv_load_ratio"),
        "{m}"
    );

    let e = parse("workload: {isl: 10, osl: 10, num_request_ratio: 1, concurrency: [1, 2]}")
        .unwrap_err();
    assert!(e.to_string().contains("[1, 2]"), "{e}");

    let e = parse("goal: {sla: {e2e_ms: -3}}").unwrap_err();
    let m = e.to_string();
    assert!(m.contains("-3") && m.contains("> 0"), "{m}");

    let e = parse("goal: {target: goodput, sla: {ttft_ms: 5}}").unwrap_err();
    let m = e.to_string();
    assert!(m.contains("goodput") && m.contains("itl_ms"), "{m}");

    let e = parse("goal: {target: speed}").unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("\"speed\"") && m.contains("throughput_per_gpu"),
        "{m}"
    );

    let e = parse("goal:\n  target: throughput\n  bogus: 1\n").unwrap_err();
    assert_eq!(e.location(), Some((3, 3)), "{e}");
    let m = e.to_string();
    assert!(m.contains("bogus") && m.contains("`target`"), "{m}");

    let e = parse("sweep: {max_consecutive_failures: 1.9}").unwrap_err();
    let m = e.to_string();
    assert!(
        m.starts_with("sweep.max_consecutive_failures: ")
            && m.contains("1.9")
            && m.contains("an integer"),
        "{m}"
    );
    let e = parse("sweep: {max_consecutive_failures: 0}").unwrap_err();
    let m = e.to_string();
    assert!(
        m.starts_with("sweep.max_consecutive_failures: 0 is out of range") && m.contains(">= 1"),
        "{m}"
    );
    let e = parse("sweep: {max_consecutive_failure: 3}").unwrap_err();
    assert!(
        e.to_string()
            .contains("did you mean `max_consecutive_failures`?"),
        "{e}"
    );

    let e = parse("goal:\n  target: throughput\n  target: goodput\n").unwrap_err();
    assert!(e.to_string().contains("does not report where"), "{e}");
}

#[test]
fn slurm_messages_say_how_to_fix_the_block() {
    let m = |text: &str| parse(text).unwrap_err().to_string();
    let e = m("evaluator: {command: [x], slurm: {gpus_per_node: 0}}");
    assert!(
        e.starts_with("evaluator.slurm.gpus_per_node: 0 is out of range")
            && e.contains("remove the key"),
        "{e}"
    );
    let e = m("evaluator: {command: [x], slurm: {time_limit: 2h}}");
    assert!(
        e.contains("\"2h\"") && e.contains("\"HH:MM:SS\"") && e.contains("minutes (90)"),
        "{e}"
    );
    let e = m("evaluator: {command: [x], slurm: {partiton: gpu}}");
    assert!(e.contains("did you mean `partition`?"), "{e}");
    let e = m("evaluator: {command: [x], slurm: {sbatch_args: [\"--output=o.txt\"]}}");
    assert_eq!(
        e,
        "evaluator.slurm.sbatch_args[0]: sweeper sets --output=o.txt itself (the job's stdout is its report, kept in the sweep's output directory); remove it from sbatch_args"
    );
    let e = m("evaluator: {command: [x], slurm: {sbatch_args: [-p, gpu]}}");
    assert!(e.contains("use evaluator.slurm.partition"), "{e}");
    let e = m("evaluator: {command: [x], persistent: true, slurm: {}}");
    assert!(e.contains("remove `persistent: true`"), "{e}");
}

#[test]
fn syntax_errors_carry_line_and_column() {
    let e = parse("goal:\n  target: [throughput\nsweep: {}\n").unwrap_err();
    assert_eq!(e.rule(), "syntax");
    let (line, column) = e.location().expect("a location");
    assert!(line >= 2 && column >= 1, "{e}");
    assert!(e.to_string().contains("line"), "{e}");
}

#[test]
fn parse_all_reports_one_error_per_failing_block() {
    let rules = |text: &str| -> Vec<(&'static str, String)> {
        sweeper_goal::parse_all(text)
            .unwrap_err()
            .iter()
            .map(|e| (e.rule(), e.path().unwrap_or("").to_owned()))
            .collect()
    };
    let all = "goal: {target: goodput}\nworkload: {isl: 0}\nsearch_space: {gpu_budget: 0}\nevaluator: {}\nsweep: {seed: -1}\n";
    let want = |xs: &[(&'static str, &str)]| -> Vec<(&'static str, String)> {
        xs.iter().map(|(r, p)| (*r, (*p).to_owned())).collect()
    };
    // the goal fails on its SLA, but its target is readable: the workload is checked too
    assert_eq!(
        rules(all),
        want(&[
            ("sla_missing", "goal.sla"),
            ("out_of_range", "workload.isl"),
            ("out_of_range", "search_space.gpu_budget"),
            ("evaluator_kind", "evaluator"),
            ("out_of_range", "sweep.seed"),
        ])
    );
    // an unreadable target skips the workload: its range rule needs the target
    assert_eq!(
        rules(&all.replace("goodput", "speed")),
        want(&[
            ("unknown_target", "goal.target"),
            ("out_of_range", "search_space.gpu_budget"),
            ("evaluator_kind", "evaluator"),
            ("out_of_range", "sweep.seed"),
        ])
    );
    // the range rule uses the target of a goal that failed on its SLA
    assert_eq!(
        rules(
            "goal: {target: goodput}\nworkload: {isl: 10, osl: 1, num_request_ratio: 1, kv_load_ratio: [0, 1]}"
        ),
        want(&[
            ("sla_missing", "goal.sla"),
            ("kv_range_needs_pareto", "workload.kv_load_ratio"),
        ])
    );
    // parse gives the first of them
    assert_eq!(parse(all).unwrap_err().rule(), "sla_missing");
    // a syntax error comes alone
    assert_eq!(rules("goal: [\nsweep: {seed: -1}"), want(&[("syntax", "")]));
}

/// Issue 30, item 11: the upstream's own cases, rewritten as checks of the message.
#[test]
fn replay_concurrency_is_for_trace_workloads_and_request_counts_must_fit() {
    let err = sweeper_goal::parse(
        "workload: {isl: 1, osl: 1, num_request_ratio: 1, concurrency: 1, replay_concurrency: 8}",
    )
    .unwrap_err();
    assert_eq!(err.rule(), "replay_concurrency_needs_trace", "{err}");
    assert_eq!(err.path(), Some("workload.replay_concurrency"));
    let m = err.to_string();
    assert!(
        m.contains("replay_concurrency is for trace workloads"),
        "{m}"
    );
    assert!(!m.contains("trace_path"), "{m}");
    for load in ["request_rate: 1e300", "concurrency: 1000000000"] {
        let err = sweeper_goal::parse(&format!(
            "workload: {{isl: 1, osl: 1, num_request_ratio: 1e300, {load}}}"
        ))
        .unwrap_err();
        assert_eq!(err.rule(), "out_of_range", "{load}: {err}");
        assert_eq!(err.path(), Some("workload.num_request_ratio"), "{err}");
        assert!(err.to_string().contains("below 2^64"), "{err}");
    }
    // the largest count that fits is still accepted
    let cfg = sweeper_goal::parse(
        "workload: {isl: 1, osl: 1, num_request_ratio: 1e9, request_rate: 1e9}",
    )
    .unwrap();
    assert_eq!(
        cfg.workload.unwrap().request_count_at(1e9),
        Some(1_000_000_000_000_000_000)
    );
}

#[test]
fn parse_all_reports_a_structure_error_beside_other_blocks_errors() {
    // An unknown key in one block used to stop the read: the other blocks' errors came one
    // run later (issue 36 item 5).
    let errors = sweeper_goal::parse_all(
        "goal: {target: paretto}\nworkload: {isl: 10, osll: 10}\nsweep: {seed: -1, bogus: 1}\nsearch_space: {gpu_budget: 0}\n",
    )
    .unwrap_err();
    let got: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| (e.rule(), e.path().unwrap_or("")))
        .collect();
    assert_eq!(
        got,
        [
            ("unknown_target", "goal.target"),
            ("unknown_key", "workload.osll"),
            ("out_of_range", "search_space.gpu_budget"),
            ("unknown_key", "sweep.bogus"),
        ]
    );
    // a misspelt key beside a readable target: the workload is still checked against it
    let errors = sweeper_goal::parse_all(
        "goal: {target: goodput, tagret: x}\nworkload: {isl: 10, osl: 10, num_request_ratio: 1}\n",
    )
    .unwrap_err();
    let got: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| (e.rule(), e.path().unwrap_or("")))
        .collect();
    assert_eq!(
        got,
        [("unknown_key", "goal.tagret"), ("load_missing", "workload")]
    );
    // an unknown top-level block comes alone, as before
    let errors = sweeper_goal::parse_all("goal: {target: paretto}\nworkloads: {}\n").unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].rule(), "unknown_key");
    // the blocks that passed are kept
    let partial = sweeper_goal::parse_partial(
        "goal: {target: paretto}\nevaluator: {builtin: {model: qwen3-32b-fp8, gpu: h200}}\n",
    );
    assert!(partial.failed(sweeper_goal::Block::Goal));
    assert!(!partial.failed(sweeper_goal::Block::Evaluator));
    assert!(partial.config.evaluator.is_some());
}
