//! Config text from anywhere: a byte-order mark, and errors that quote at most a few
//! hundred characters of a huge input.

#[test]
fn a_byte_order_mark_is_not_part_of_the_config() {
    for text in [
        "\u{feff}goal: {target: pareto}\nsweep: {seed: 1}\n",
        "\u{feff}{\"goal\": {\"target\": \"pareto\"}, \"sweep\": {\"seed\": 1}}",
    ] {
        let cfg = sweeper_goal::parse(text).unwrap_or_else(|e| panic!("{e}: {text:?}"));
        assert!(cfg.goal.is_pareto());
        assert_eq!(cfg.sweep.seed, 1);
    }
}

#[test]
fn errors_about_huge_inputs_quote_a_few_hundred_characters() {
    let long = "x".repeat(5_000_000);
    for text in [
        format!("goal: {long}\n"),
        format!("goal: {{target: {long}}}\n"),
        format!("{long}: 1\n"),
        format!("goal: {{target: pareto}}\n{long}\n"),
    ] {
        let err = sweeper_goal::parse(&text).unwrap_err();
        let shown = err.to_string();
        assert!(
            shown.len() < 1_000,
            "{} bytes: {}",
            shown.len(),
            &shown[..200]
        );
    }
}
