//! The default algorithm's UCB suggestions (two metrics, batch 1) and the faces of the box:
//! they keep a margin inside a float's bound until a front point reaches it, then may go
//! there too.

use std::collections::BTreeMap;

use sweeper_goal::Direction;
use sweeper_sampler::{Algorithm, Study, Trial};

use crate::{metric, study, unit_space};

/// The margin of `EDGE_MARGIN` in the default algorithm.
const MARGIN: f64 = 0.01;

fn coords(t: &Trial) -> Vec<f64> {
    t.params.iter().map(|(_, v)| v.as_f64().unwrap()).collect()
}

fn near_bound(v: f64) -> bool {
    !(MARGIN..=1.0 - MARGIN).contains(&v)
}

/// Runs `trials` suggestions of one, each observed by `f` (`None`: infeasible); returns
/// every trial's coordinates and whether it was asked with an odd number of trials in the
/// study (the default alternates at batch 1: greedy at an even count, the UCB suggestion
/// at an odd one).
fn drive(
    s: &mut Study,
    trials: usize,
    f: impl Fn(&[f64]) -> Option<BTreeMap<String, f64>>,
) -> Vec<(Vec<f64>, bool)> {
    (0..trials)
        .map(|i| {
            let t = s.suggest(1).unwrap().remove(0);
            let x = coords(&t);
            match f(&x) {
                Some(v) => s.observe(t.id, &v).unwrap(),
                None => s.observe_infeasible(t.id, "out of range").unwrap(),
            }
            (x, i % 2 == 1)
        })
        .collect()
}

#[test]
fn ucb_suggestions_keep_off_the_bounds_the_front_never_reached() {
    // both metrics peak inside the square: the front is the segment between (0.3, 0.6)
    // and (0.7, 0.4), and every point on a face is dominated
    let f = |x: &[f64]| {
        let a = -(x[0] - 0.3).powi(2) - (x[1] - 0.6).powi(2);
        let b = -(x[0] - 0.7).powi(2) - (x[1] - 0.4).powi(2);
        Some(BTreeMap::from([("a".to_owned(), a), ("b".to_owned(), b)]))
    };
    let metrics = || {
        vec![
            metric("a", Direction::Maximize),
            metric("b", Direction::Maximize),
        ]
    };
    let mut ucb = 0;
    for seed in 0..3 {
        let mut s = study(unit_space(2), metrics(), Algorithm::Default, seed);
        // the first 4 are the quasi-random design
        for (i, (x, odd)) in drive(&mut s, 30, f).into_iter().enumerate().skip(4) {
            if odd {
                ucb += 1;
                assert!(
                    !x.iter().any(|&v| near_bound(v)),
                    "seed {seed}, trial {i}: a UCB suggestion on a face: {x:?}"
                );
            }
        }
    }
    assert_eq!(ucb, 39);
}

#[test]
fn a_bound_the_front_reaches_is_open_to_the_ucb_suggestions() {
    // ZDT1 in three dimensions: the front has x1 = x2 = 0 exactly; the trials with
    // x0 > 0.8 are infeasible, so the feasible observations are not every trial
    let f = |x: &[f64]| {
        let g = 1.0 + 4.5 * (x[1] + x[2]);
        let f2 = g * (1.0 - (x[0] / g).sqrt());
        (x[0] <= 0.8).then(|| BTreeMap::from([("f1".to_owned(), x[0]), ("f2".to_owned(), f2)]))
    };
    let metrics = vec![
        metric("f1", Direction::Minimize),
        metric("f2", Direction::Minimize),
    ];
    let mut s = study(unit_space(3), metrics, Algorithm::Default, 0);
    let run = drive(&mut s, 40, f);
    assert!(
        run.iter().any(|(x, _)| x[0] > 0.8),
        "no infeasible trial: {run:?}"
    );
    // the greedy suggestions (after the 5 of the quasi-random design) reach the face
    // x1 = 0 ...
    assert!(
        run.iter().skip(5).any(|(x, odd)| !odd && x[1] == 0.0),
        "{run:?}"
    );
    // ... and then the UCB suggestions may go there as well
    assert!(
        run.iter().skip(5).any(|(x, odd)| *odd && x[1] < MARGIN),
        "{run:?}"
    );
}
