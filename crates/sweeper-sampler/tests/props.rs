//! Property tests: every algorithm's suggestions lie in the space, are distinct, and are
//! reproducible from the seed; the Pareto-optimal trials are those of a brute-force
//! oracle. `PROPTEST_CASES` raises the case count.

use std::collections::BTreeSet;

use proptest::prelude::*;
use sweeper_goal::{Direction, SamplerMetric};
use sweeper_sampler::{Algorithm, ParamSpec, ParamValue, SearchSpace, Study, TrialState};

fn spec() -> impl Strategy<Value = ParamSpec> {
    prop_oneof![
        (-5i64..5, 0i64..4).prop_map(|(lo, w)| ParamSpec::Int {
            lo,
            hi: lo + w,
            log: false
        }),
        (1i64..4, 0i64..6).prop_map(|(lo, w)| ParamSpec::Int {
            lo,
            hi: lo + w,
            log: true
        }),
        (1usize..4).prop_map(|k| ParamSpec::Discrete {
            values: (0..k).map(|i| f64::from(i as u8) * 1.5).collect(),
            log: false
        }),
        (1usize..4).prop_map(|k| ParamSpec::Categorical {
            choices: (0..k).map(|i| format!("c{i}")).collect()
        }),
        (-1.0f64..1.0, 0.0f64..2.0).prop_map(|(lo, w)| ParamSpec::Float {
            lo,
            hi: lo + w,
            log: false
        }),
    ]
}

fn in_spec(v: &ParamValue, s: &ParamSpec) -> bool {
    match (s, v) {
        (ParamSpec::Int { lo, hi, .. }, ParamValue::Int(x)) => lo <= x && x <= hi,
        (ParamSpec::Float { lo, hi, .. }, ParamValue::Float(x)) => lo <= x && x <= hi,
        (ParamSpec::Discrete { values, .. }, v) => v.as_f64().is_some_and(|x| values.contains(&x)),
        (ParamSpec::Categorical { choices }, ParamValue::Str(c)) => choices.contains(c),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn suggestions_are_valid_distinct_and_reproducible(
        specs in proptest::collection::vec(spec(), 0..4),
        seed in 0u64..1000,
        algorithm in prop_oneof![Just(Algorithm::Random), Just(Algorithm::QuasiRandom), Just(Algorithm::Grid)],
    ) {
        let mut space = SearchSpace::new();
        for (i, s) in specs.iter().enumerate() {
            space.add(format!("p{i}"), s.clone()).unwrap();
        }
        let metrics = vec![SamplerMetric { name: "objective".into(), direction: Direction::Maximize }];
        let run = || {
            let mut study = Study::new(space.clone(), metrics.clone(), algorithm, seed).unwrap();
            let mut all = Vec::new();
            for _ in 0..3 {
                let batch = study.suggest(5).unwrap();
                for t in &batch {
                    study.observe(t.id, &[("objective".to_owned(), t.id as f64)].into()).unwrap();
                }
                all.extend(batch);
            }
            all
        };
        let a = run();
        prop_assert_eq!(&a, &run());
        let mut seen = BTreeSet::new();
        for t in &a {
            for ((n, v), (m, s)) in t.params.iter().zip(space.params()) {
                prop_assert_eq!(n, m);
                prop_assert!(in_spec(v, s), "{v:?} not in {s:?}");
            }
            prop_assert!(seen.insert(format!("{:?}", t.params)), "repeated {:?}", t.params);
        }
    }
}

/// A metric value on a grid of three levels and the infinities, so that ties, duplicates
/// and extreme values are common.
fn grid_value() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => (0u8..3).prop_map(f64::from),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
    ]
}

/// `PROPTEST_CASES`, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(48), ..ProptestConfig::default() })]

    #[test]
    fn pareto_optimal_trials_match_a_brute_force_oracle(
        directions in proptest::collection::vec(
            prop_oneof![Just(Direction::Maximize), Just(Direction::Minimize)], 1..5),
        // (values, observed or left infeasible) per trial; the values are cut to the metrics
        trials in proptest::collection::vec(
            (proptest::collection::vec(grid_value(), 4), any::<bool>()), 0..24),
    ) {
        let metrics: Vec<SamplerMetric> = directions
            .iter()
            .enumerate()
            .map(|(i, &direction)| SamplerMetric { name: format!("m{i}"), direction })
            .collect();
        let mut space = SearchSpace::new();
        space.add("x", ParamSpec::Float { lo: 0.0, hi: 1.0, log: false }).unwrap();
        let mut study = Study::new(space, metrics.clone(), Algorithm::Random, 1).unwrap();
        let batch = study.suggest(trials.len()).unwrap();
        prop_assert_eq!(batch.len(), trials.len());
        for (t, (values, feasible)) in batch.iter().zip(&trials) {
            if *feasible {
                let m = metrics.iter().zip(values).map(|(m, &v)| (m.name.clone(), v)).collect();
                study.observe(t.id, &m).unwrap();
            } else {
                study.observe_infeasible(t.id, "left out").unwrap();
            }
        }
        // the oracle: each metric turned to "larger is better", every pair compared
        let rows: Vec<(u64, Vec<f64>)> = batch
            .iter()
            .zip(&trials)
            .filter(|(_, (_, feasible))| *feasible)
            .map(|(t, (values, _))| {
                let v = directions.iter().zip(values).map(|(d, &x)| d.sign() * x).collect();
                (t.id, v)
            })
            .collect();
        let dominates = |a: &[f64], b: &[f64]| {
            a.iter().zip(b).all(|(x, y)| x >= y) && a.iter().zip(b).any(|(x, y)| x > y)
        };
        let want: Vec<u64> = rows
            .iter()
            .filter(|(_, b)| !rows.iter().any(|(_, a)| dominates(a, b)))
            .map(|(id, _)| *id)
            .collect();
        let got: Vec<u64> = study.pareto_optimal_trials().iter().map(|r| r.trial.id).collect();
        prop_assert_eq!(&got, &want);
        prop_assert!(study
            .pareto_optimal_trials()
            .iter()
            .all(|r| matches!(r.state, TrialState::Completed(_))));
    }
}
