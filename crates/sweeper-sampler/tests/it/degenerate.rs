//! The default algorithm on hostile observations: it must return, and learn from
//! infeasible trials. (Returning is asserted, never how fast.)

use sweeper_sampler::{Algorithm, Study};

use crate::{evaluate, mixed_space, objective, study, two_metrics, unit_space, values};

#[test]
fn constant_metrics_and_a_single_point() {
    let mut s = study(mixed_space(), two_metrics(), Algorithm::Default, 0);
    // a single observation, asked for more than the quasi-random start
    let t = s.suggest(1).unwrap().remove(0);
    s.observe(t.id, &evaluate(&t)).unwrap();
    for _ in 0..4 {
        let batch = s.suggest(4).unwrap();
        assert_eq!(batch.len(), 4);
        for t in batch {
            s.observe(t.id, &values(&[("a", 1.0), ("b", -2.0)]))
                .unwrap();
        }
    }
    assert_eq!(s.suggest(3).unwrap().len(), 3);
}

#[test]
fn duplicated_points_do_not_break_the_model() {
    // a saved study whose observations all sit on one point (as after a manual edit)
    let mut s = study(unit_space(2), objective(), Algorithm::Default, 0);
    let batch = s.suggest(12).unwrap();
    for (i, t) in batch.iter().enumerate() {
        s.observe(t.id, &values(&[("objective", (i % 3) as f64)]))
            .unwrap();
    }
    let mut saved = s.to_json();
    let first = saved["trials"][0].clone();
    for t in saved["trials"].as_array_mut().unwrap() {
        t["params"] = first["params"].clone();
        t["point"] = first["point"].clone();
    }
    let mut s = Study::from_json(&saved).unwrap();
    assert_eq!(s.suggest(3).unwrap().len(), 3);
}

#[test]
fn all_infeasible_still_suggests() {
    let mut s = study(mixed_space(), two_metrics(), Algorithm::Default, 0);
    for _ in 0..5 {
        let batch = s.suggest(4).unwrap();
        assert_eq!(batch.len(), 4);
        for t in batch {
            s.observe_infeasible(t.id, "out of memory").unwrap();
        }
    }
}

#[test]
fn the_study_stops_proposing_an_infeasible_region() {
    // maximize x + y, but x > 0.6 cannot run: the best points hug the boundary, so the
    // study may straddle it; it must stop going deep into the infeasible side
    let mut s = study(unit_space(2), objective(), Algorithm::Default, 5);
    let mut late_deep = 0;
    for i in 0..40 {
        let t = s.suggest(1).unwrap().remove(0);
        let x = t.params[0].1.as_f64().unwrap();
        let y = t.params[1].1.as_f64().unwrap();
        if x > 0.6 {
            s.observe_infeasible(t.id, "over budget").unwrap();
            if i >= 25 && x > 0.7 {
                late_deep += 1;
            }
        } else {
            s.observe(t.id, &values(&[("objective", x + y)])).unwrap();
        }
    }
    // random search would put ~4.5 of the last 15 beyond 0.7
    assert!(
        late_deep <= 1,
        "{late_deep} of the last 15 were deep in the infeasible region"
    );
    let best = s.best_trial().unwrap();
    assert!(best.trial.params[0].1.as_f64().unwrap() > 0.55, "{best:?}");
}
