//! The later members of a two-metric batch and the lines through its first member: the
//! first member changed in one coordinate joins their candidates (`LINE_POINTS` in the
//! default algorithm), so on ZDT1, whose front lies where the distance coordinates are all
//! exactly 0, they reach the front the refined first member found.

use std::collections::BTreeMap;

use sweeper_goal::Direction;
use sweeper_sampler::{Algorithm, Study, Trial};

use crate::{metric, study, unit_space};

pub(crate) fn coords(t: &Trial) -> Vec<f64> {
    t.params.iter().map(|(_, v)| v.as_f64().unwrap()).collect()
}

/// ZDT1's distance term: 1 on the front, more away from it.
pub(crate) fn g(x: &[f64]) -> f64 {
    1.0 + 9.0 * x[1..].iter().sum::<f64>() / (x.len() - 1) as f64
}

pub(crate) fn zdt1(x: &[f64]) -> BTreeMap<String, f64> {
    let f1 = x[0];
    let g = g(x);
    BTreeMap::from([
        ("f1".to_owned(), f1),
        ("f2".to_owned(), g * (1.0 - (f1 / g).sqrt())),
    ])
}

/// Three batches of eight observed, then the batch of six a 30-trial sweep asks last.
fn last_batch(seed: u64) -> Vec<Vec<f64>> {
    let metrics = vec![
        metric("f1", Direction::Minimize),
        metric("f2", Direction::Minimize),
    ];
    let mut s: Study = study(unit_space(6), metrics, Algorithm::Default, seed);
    for _ in 0..3 {
        for t in s.suggest(8).unwrap() {
            s.observe(t.id, &zdt1(&coords(&t))).unwrap();
        }
    }
    s.suggest(6).unwrap().iter().map(coords).collect()
}

#[test]
fn later_members_of_a_two_metric_batch_take_the_first_members_lines() {
    let mut on_line = 0;
    let mut at_front = 0;
    let seeds = 0..4;
    for seed in seeds.clone() {
        let batch = last_batch(seed);
        let first = &batch[0];
        for x in &batch[1..] {
            let changed = x.iter().zip(first).filter(|(a, b)| a != b).count();
            // a point of the first member's lines differs from it in one coordinate (so
            // can a mutation of the observation it was refined from, which is rarer)
            if changed == 1 {
                on_line += 1;
                if g(x) <= g(first) + 1e-9 {
                    at_front += 1;
                }
            }
        }
    }
    let later = 5 * seeds.count();
    // measured: 14 of the 20 later members lie on a line, all at most at the first
    // member's g; with the lines taken out of the default, none of these seeds' (the
    // count is what these seeds give, not a bound)
    assert!(
        on_line >= later / 4,
        "{on_line} of {later} later members on a line through the first"
    );
    assert_eq!(
        at_front, on_line,
        "no line member lies further from the front than the first member"
    );
}
