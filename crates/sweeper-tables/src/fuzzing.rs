//! One entry point per hand-written parser, for the fuzz targets under `fuzz/` and for the
//! test that replays their corpus on the stable toolchain. Each takes arbitrary bytes and
//! must return (an error is fine) without panicking, overflowing the stack or allocating
//! without bound.

use std::path::Path;

const LABEL: &str = "fuzz-input";

/// The `.npy` reader (header literal parser, shapes, data).
pub fn npy(data: &[u8]) {
    let _ = crate::input::parse_npy(Path::new(LABEL), data);
}

/// An evaluator's answer: reports, labels, non-finite tokens.
pub fn report(data: &[u8]) {
    let _ = sweeper_engine::parse_report(&String::from_utf8_lossy(data));
}

/// Report tables: CSV, JSON Lines and JSON arrays of `{"config", "report"}` rows.
pub fn reports(data: &[u8]) {
    let _ = crate::input::parse_reports(Path::new(LABEL), data);
}

/// Numeric columns of a table (`sweeper front`): the first bytes name the columns asked for.
pub fn numeric(data: &[u8]) {
    let (head, rest) = data.split_at(data.len().min(1));
    let wanted = head.first().copied().unwrap_or(0) % 4;
    let columns: Vec<String> = (0..=wanted).map(|i| i.to_string()).collect();
    let _ = crate::input::parse_numeric_columns(Path::new(LABEL), rest, &columns);
}

/// A sweep config (YAML or JSON).
pub fn config(data: &[u8]) {
    let _ = sweeper_goal::parse(&String::from_utf8_lossy(data));
}

/// A run journal, replayed into a result under a small fixed config.
pub fn journal(data: &[u8]) {
    let Ok(config) = sweeper_goal::parse(
        "goal: {target: pareto}\nworkload: {isl: 100, osl: 100, num_request_ratio: 1}\nsearch_space: {gpu_budget: 8, parameters: {tp: {values: [1, 2]}}}",
    ) else {
        return;
    };
    let _ = sweeper_engine::run::replay_journal_text(&config, &String::from_utf8_lossy(data));
}

/// A fuzz target: arbitrary bytes in, nothing out.
pub type Target = fn(&[u8]);

/// Every target by name, as the fuzz crate and the corpus test list them.
pub const TARGETS: [(&str, Target); 6] = [
    ("npy", npy),
    ("report", report),
    ("reports", reports),
    ("numeric", numeric),
    ("config", config),
    ("journal", journal),
];
