//! The hedge member of a two-metric batch on few observations (`HEDGE_UNTIL` in the default
//! algorithm): its first model member comes from models fitted under a long lengthscale
//! prior, which trust a trend on to the bound where the usual ones fall back to their mean.
//! On ZDT1 the front lies where five of six floats are exactly 0, so that member reaches it
//! from few observations.

use sweeper_goal::Direction;
use sweeper_sampler::Study;

use crate::lines::{coords, g, zdt1};
use crate::{metric, study, unit_space};

/// The distance term `g` of the first member of the batch of eight asked after `observed`
/// batches of eight.
fn first_member_g(seed: u64, observed: usize) -> f64 {
    let metrics = vec![
        metric("f1", Direction::Minimize),
        metric("f2", Direction::Minimize),
    ];
    let mut s: Study = study(
        unit_space(6),
        metrics,
        sweeper_sampler::Algorithm::Default,
        seed,
    );
    for _ in 0..observed {
        for t in s.suggest(8).unwrap() {
            s.observe(t.id, &zdt1(&coords(&t))).unwrap();
        }
    }
    g(&coords(&s.suggest(8).unwrap()[0]))
}

#[test]
fn first_member_of_a_batch_on_sixteen_observations_nears_the_front() {
    let mut gs: Vec<f64> = (0..16).map(|seed| first_member_g(seed, 2)).collect();
    gs.sort_by(f64::total_cmp);
    let median = f64::midpoint(gs[7], gs[8]);
    let at_front = gs.iter().filter(|&&v| v <= 1.05).count();
    // measured (these sixteen seeds): median 1.32, two at 1.00–1.02; with the hedge
    // taken out (HEDGE_UNTIL = 0) median 1.75 and none below 1.29
    assert!(median < 1.5, "median g {median}: {gs:?}");
    assert!(
        at_front >= 1,
        "{at_front} of 16 within 1.05 of the front: {gs:?}"
    );
}
