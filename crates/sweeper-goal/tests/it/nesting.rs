//! Hostile nesting and long lists (issue 30, item 4): refused or read in linear time, with
//! the key path of the value that nests too deep.

use std::fmt::Write as _;
use std::time::{Duration, Instant};
use sweeper_goal::{MAX_NESTING, parse};

/// Generous for a debug build on a loaded machine; the quadratic paths took minutes.
const FAST: Duration = Duration::from_secs(10);

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

#[test]
fn a_hundred_thousand_nested_brackets_fail_fast_with_the_key_path() {
    let n = 100_000;
    let text = format!("goal: {{target: {}{}}}\n", "[".repeat(n), "]".repeat(n));
    let (result, took) = timed(|| parse(&text));
    let err = result.unwrap_err();
    assert_eq!(err.rule(), "nesting_too_deep", "{err}");
    // top mapping, goal's mapping, then lists
    let path = format!("goal.target{}", "[0]".repeat(MAX_NESTING - 2));
    assert_eq!(err.path(), Some(path.as_str()));
    assert_eq!(err.location(), Some((1, 16 + MAX_NESTING - 2)));
    assert!(took < FAST, "{took:?}");
}

#[test]
fn fifty_thousand_nested_mappings_fail_fast_with_the_key_path() {
    let n = 50_000;
    let text = format!("{}1{}\n", "{a: ".repeat(n), "}".repeat(n));
    let (result, took) = timed(|| parse(&text));
    let err = result.unwrap_err();
    assert_eq!(err.rule(), "nesting_too_deep", "{err}");
    let path = vec!["a"; MAX_NESTING].join(".");
    assert_eq!(err.path(), Some(path.as_str()));
    assert!(
        err.to_string().starts_with(&format!(
            "{path} (line 1, column {}): nested deeper than 64 levels",
            4 * MAX_NESTING + 1
        )),
        "{err}"
    );
    assert!(took < FAST, "{took:?}");
}

#[test]
fn block_nesting_counts_too() {
    // `- - - x`: block lists nested on one line, which the parser reads without brackets
    let err = parse(&format!("{}x\n", "- ".repeat(MAX_NESTING + 1))).unwrap_err();
    assert_eq!(err.rule(), "nesting_too_deep", "{err}");
    assert_eq!(err.path(), Some("[0]".repeat(MAX_NESTING).as_str()));
    // block mappings, one per line
    let mut text = String::from("evaluator:\n  builtin:\n");
    for level in 2..=MAX_NESTING {
        let _ = writeln!(text, "{}k{level}:", "  ".repeat(level));
    }
    let err = parse(&text).unwrap_err();
    assert_eq!(err.rule(), "nesting_too_deep", "{err}");
    assert!(
        err.path().unwrap().starts_with("evaluator.builtin.k2.k3."),
        "{err}"
    );
    assert!(
        err.path()
            .unwrap()
            .ends_with(&format!(".k{}", MAX_NESTING - 1)),
        "{err}"
    );
}

#[test]
fn the_limit_itself_is_accepted() {
    // top mapping, evaluator, builtin, then lists down to the limit
    let lists = MAX_NESTING - 3;
    let at = format!(
        "evaluator:\n  builtin:\n    x: {}{}\n",
        "[".repeat(lists),
        "]".repeat(lists)
    );
    parse(&at).unwrap();
    let over = at.replacen('[', "[[", 1).replacen(']', "]]", 1);
    assert_eq!(parse(&over).unwrap_err().rule(), "nesting_too_deep");
}

#[test]
fn brackets_in_strings_comments_and_block_scalars_are_not_nesting() {
    let deep = "[{".repeat(MAX_NESTING);
    let text = format!(
        "# {deep}\n\
         evaluator:\n  \
           command: [bash, -c, \"echo {deep}\", '{deep}']\n  \
           env:\n    \
             PLAIN: x{deep} # {deep}\n    \
             SCRIPT: |\n      \
               {deep}\n      \
               {deep}\n    \
             FOLDED: >-\n      \
               {deep}\n"
    );
    let cfg = parse(&text).unwrap();
    assert!(cfg.evaluator.is_some());
}

#[test]
fn a_hundred_thousand_choices_are_checked_in_linear_time() {
    let n = 100_000;
    let choices: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
    let text = format!(
        "search_space:\n  parameters:\n    p: {{choices: [{}]}}\n",
        choices.join(", ")
    );
    let (result, took) = timed(|| parse(&text));
    let cfg = result.unwrap();
    assert!(took < FAST, "{took:?}");
    let p = cfg.search_space.parameter("p").unwrap();
    assert!(matches!(p, sweeper_goal::ParameterSpec::Choices(c) if c.len() == n));
    // a repeat at the very end is still found, at its own index
    let text = text.replace(&format!("c{}]", n - 1), "c17]");
    let err = parse(&text).unwrap_err();
    assert_eq!(err.rule(), "duplicate_value");
    assert_eq!(
        err.path(),
        Some(format!("search_space.parameters.p.choices[{}]", n - 1).as_str())
    );
}

#[test]
fn a_hundred_thousand_values_and_parameters_are_checked_in_linear_time() {
    let n = 100_000;
    let values: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let text = format!(
        "search_space:\n  parameters:\n    p: {{values: [{}]}}\n",
        values.join(", ")
    );
    let (result, took) = timed(|| parse(&text));
    result.unwrap();
    assert!(took < FAST, "{took:?}");
    let params: Vec<String> = (0..n / 4)
        .map(|i| format!("p{i}: {{values: [1]}}"))
        .collect();
    let names: Vec<String> = (0..n / 4).map(|i| format!("p{i}")).collect();
    let text = format!(
        "search_space:\n  used_gpus: [{}]\n  parameters: {{{}}}\n",
        names.join(", "),
        params.join(", ")
    );
    let (result, took) = timed(|| parse(&text));
    result.unwrap();
    assert!(took < FAST, "{took:?}");
}

#[test]
fn zero_and_negative_zero_are_still_one_value() {
    let err = parse("search_space: {parameters: {p: {values: [0, 1, -0.0]}}}").unwrap_err();
    assert_eq!(err.rule(), "duplicate_value");
    assert_eq!(err.path(), Some("search_space.parameters.p.values[2]"));
}
