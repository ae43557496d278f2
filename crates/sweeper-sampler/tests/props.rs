//! Property tests: every algorithm's suggestions lie in the space, are distinct, and are
//! reproducible from the seed. `PROPTEST_CASES` raises the case count.

use std::collections::BTreeSet;

use proptest::prelude::*;
use sweeper_goal::{Direction, SamplerMetric};
use sweeper_sampler::{Algorithm, ParamSpec, ParamValue, SearchSpace, Study};

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
