//! The study contract: decoding, constants, determinism, save/restore, errors, grid.

use std::collections::BTreeSet;

use sweeper_goal::Direction;
use sweeper_sampler::{
    Algorithm, ParamSpec, ParamValue, SamplerError, SearchSpace, Study, TrialState,
};

use crate::{evaluate, metric, mixed_space, objective, study, two_metrics, unit_space, values};

/// Drives a study for `rounds` batches of `batch`, leaving the last batch pending.
fn drive(s: &mut Study, rounds: usize, batch: usize) -> Vec<String> {
    let mut log = Vec::new();
    for r in 0..rounds {
        let trials = s.suggest(batch).unwrap();
        for t in &trials {
            log.push(format!("{:?}", t.params));
            if r + 1 == rounds {
                continue;
            }
            if t.id % 7 == 3 {
                s.observe_infeasible(t.id, "over budget").unwrap();
            } else {
                s.observe(t.id, &evaluate(t)).unwrap();
            }
        }
    }
    log
}

#[test]
fn values_decode_to_their_native_types_and_constants_are_injected() {
    for algorithm in Algorithm::ALL {
        let mut s = study(mixed_space(), two_metrics(), algorithm, 1);
        let trials = s.suggest(12).unwrap();
        assert_eq!(trials.len(), 12, "{algorithm:?}");
        for t in &trials {
            let names: Vec<&str> = t.params.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(
                names,
                ["x", "lr", "n", "fixed", "tp", "frac", "router", "mode"]
            );
            let p = |i: usize| &t.params[i].1;
            assert!(matches!(p(0), ParamValue::Float(x) if (-1.0..=1.0).contains(x)));
            assert!(matches!(p(1), ParamValue::Float(x) if (1e-4..=1e-1).contains(x)));
            assert!(matches!(p(2), ParamValue::Int(1..=16)), "{:?}", p(2));
            assert_eq!(p(3), &ParamValue::Int(7));
            assert!(matches!(p(4), ParamValue::Int(1 | 2 | 4 | 8)), "{:?}", p(4));
            assert!(matches!(p(5), ParamValue::Float(x) if *x == 0.25 || *x == 0.5));
            assert!(matches!(p(6), ParamValue::Str(c) if ["a", "b", "c"].contains(&c.as_str())));
            assert_eq!(p(7), &ParamValue::Str("only".into()));
            assert_eq!(
                p(4).to_json(),
                serde_json::json!(p(4).as_f64().unwrap() as i64)
            );
        }
    }
}

#[test]
fn same_seed_and_calls_give_identical_suggestions() {
    for algorithm in [
        Algorithm::Default,
        Algorithm::Random,
        Algorithm::QuasiRandom,
    ] {
        let run = |seed| {
            let mut s = study(mixed_space(), two_metrics(), algorithm, seed);
            drive(&mut s, 5, 3)
        };
        assert_eq!(run(9), run(9), "{algorithm:?}");
        assert_ne!(run(9), run(10), "{algorithm:?}");
    }
}

#[test]
fn a_restored_study_continues_exactly_as_the_original() {
    for algorithm in Algorithm::ALL {
        let mut a = study(mixed_space(), two_metrics(), algorithm, 4);
        drive(&mut a, 4, 3); // the last batch stays pending
        let text = serde_json::to_string(&a.to_json()).unwrap();
        let mut b = Study::from_json(&serde_json::from_str(&text).unwrap()).unwrap();
        assert_eq!(a.trials(), b.trials());
        for s in [&mut a, &mut b] {
            let pending: Vec<u64> = s
                .trials()
                .iter()
                .filter(|r| r.state == TrialState::Pending)
                .map(|r| r.trial.id)
                .collect();
            for id in pending {
                let t = s.trials()[id as usize].trial.clone();
                s.observe(id, &evaluate(&t)).unwrap();
            }
        }
        assert_eq!(drive(&mut a, 3, 2), drive(&mut b, 3, 2), "{algorithm:?}");
        assert_eq!(a.to_json(), b.to_json());
    }
}

#[test]
fn infinite_measurements_round_trip() {
    let mut s = study(mixed_space(), two_metrics(), Algorithm::Default, 2);
    let t = s.suggest(1).unwrap().remove(0);
    s.observe(
        t.id,
        &values(&[("a", f64::INFINITY), ("b", f64::NEG_INFINITY)]),
    )
    .unwrap();
    let back = Study::from_json(&s.to_json()).unwrap();
    assert_eq!(back.trials(), s.trials());
    // the one encoding of infinities that the journal and result files use too
    let text = s.to_json().to_string();
    assert!(
        text.contains(r#""a":"inf""#) && text.contains(r#""b":"-inf""#),
        "{text}"
    );
}

#[test]
fn a_batch_never_repeats_itself_or_the_history() {
    let mut space = SearchSpace::new();
    space
        .add(
            "n",
            ParamSpec::Int {
                lo: 1,
                hi: 3,
                log: false,
            },
        )
        .unwrap();
    space
        .add(
            "c",
            ParamSpec::Categorical {
                choices: vec!["p".into(), "q".into()],
            },
        )
        .unwrap();
    for algorithm in Algorithm::ALL {
        let mut s = study(space.clone(), objective(), algorithm, 3);
        let mut seen = BTreeSet::new();
        let first = s.suggest(4).unwrap();
        for t in &first {
            assert!(
                seen.insert(format!("{:?}", t.params)),
                "{algorithm:?} repeated"
            );
        }
        s.observe(first[0].id, &values(&[("objective", 1.0)]))
            .unwrap();
        // two more points exist; asking for five returns exactly those
        let rest = s.suggest(5).unwrap();
        assert_eq!(rest.len(), 2, "{algorithm:?}");
        for t in &rest {
            assert!(
                seen.insert(format!("{:?}", t.params)),
                "{algorithm:?} repeated"
            );
        }
        assert!(s.suggest(3).unwrap().is_empty(), "{algorithm:?}");
    }
}

#[test]
fn grid_covers_every_point_once() {
    let mut space = SearchSpace::new();
    space
        .add(
            "n",
            ParamSpec::Int {
                lo: 1,
                hi: 3,
                log: false,
            },
        )
        .unwrap();
    space
        .add(
            "c",
            ParamSpec::Categorical {
                choices: vec!["p".into(), "q".into()],
            },
        )
        .unwrap();
    space
        .add(
            "d",
            ParamSpec::Discrete {
                values: vec![0.5, 1.5],
                log: false,
            },
        )
        .unwrap();
    let mut s = study(space, objective(), Algorithm::Grid, 0);
    let mut seen = BTreeSet::new();
    loop {
        let batch = s.suggest(5).unwrap();
        if batch.is_empty() {
            break;
        }
        for t in batch {
            assert!(seen.insert(format!("{:?}", t.params)));
        }
    }
    assert_eq!(seen.len(), 12);
    // floats get five levels
    let mut space = SearchSpace::new();
    space
        .add(
            "x",
            ParamSpec::Float {
                lo: 0.0,
                hi: 1.0,
                log: false,
            },
        )
        .unwrap();
    let mut s = study(space, objective(), Algorithm::Grid, 0);
    let xs: Vec<f64> = s
        .suggest(10)
        .unwrap()
        .iter()
        .map(|t| t.params[0].1.as_f64().unwrap())
        .collect();
    assert_eq!(xs, [0.0, 0.25, 0.5, 0.75, 1.0]);
}

#[test]
fn grid_refuses_a_huge_space() {
    let space = unit_space(12);
    assert!(matches!(
        Study::new(space, objective(), Algorithm::Grid, 0),
        Err(SamplerError::GridTooLarge { .. })
    ));
}

#[test]
fn empty_and_constant_spaces_work() {
    let mut only_constants = SearchSpace::new();
    only_constants
        .add(
            "k",
            ParamSpec::Float {
                lo: 2.5,
                hi: 2.5,
                log: false,
            },
        )
        .unwrap();
    for space in [SearchSpace::new(), only_constants] {
        for algorithm in Algorithm::ALL {
            let mut s = study(space.clone(), objective(), algorithm, 0);
            let t = s.suggest(3).unwrap();
            // the single point of the space, once
            assert_eq!(t.len(), 1, "{algorithm:?}");
            assert_eq!(t[0].params.len(), space.params().len());
            s.observe(t[0].id, &values(&[("objective", 1.0)])).unwrap();
            assert!(s.suggest(1).unwrap().is_empty());
            assert_eq!(s.best_trial().unwrap().trial.id, 0);
        }
    }
}

#[test]
fn errors_are_typed() {
    assert!(matches!(
        Study::new(mixed_space(), vec![], Algorithm::Default, 0),
        Err(SamplerError::InvalidMetrics { .. })
    ));
    let twice = vec![
        metric("a", Direction::Maximize),
        metric("a", Direction::Minimize),
    ];
    assert!(matches!(
        Study::new(mixed_space(), twice, Algorithm::Default, 0),
        Err(SamplerError::InvalidMetrics { .. })
    ));
    let mut s = study(mixed_space(), two_metrics(), Algorithm::Random, 0);
    let t = s.suggest(1).unwrap().remove(0);
    assert_eq!(
        s.observe(99, &evaluate(&t)),
        Err(SamplerError::UnknownTrial { trial_id: 99 })
    );
    assert_eq!(
        s.observe(t.id, &values(&[("a", 1.0)])),
        Err(SamplerError::MissingMetric {
            trial_id: 0,
            metric: "b".into()
        })
    );
    assert_eq!(
        s.observe(t.id, &values(&[("a", 1.0), ("b", f64::NAN)])),
        Err(SamplerError::NanMetric {
            trial_id: 0,
            metric: "b".into()
        })
    );
    assert_eq!(
        s.observe(t.id, &values(&[("a", 1.0), ("b", 2.0), ("c", 3.0)])),
        Err(SamplerError::UnknownMetric {
            trial_id: 0,
            metric: "c".into()
        })
    );
    assert_eq!(s.trials()[0].state, TrialState::Pending);
    s.observe(t.id, &values(&[("a", 1.0), ("b", 2.0)])).unwrap();
    assert_eq!(
        s.observe(t.id, &evaluate(&t)),
        Err(SamplerError::TrialClosed { trial_id: 0 })
    );
    assert_eq!(
        s.observe_infeasible(t.id, "x"),
        Err(SamplerError::TrialClosed { trial_id: 0 })
    );
    assert_eq!(
        s.observe_infeasible(5, "x"),
        Err(SamplerError::UnknownTrial { trial_id: 5 })
    );
    assert!(matches!(
        Study::from_json(&serde_json::json!({"format": 1})),
        Err(SamplerError::Restore { .. })
    ));
    assert_eq!(
        SamplerError::UnknownTrial { trial_id: 3 }.to_string(),
        "unknown trial id 3"
    );
}

#[test]
fn pareto_and_best_trials() {
    let mut s = study(mixed_space(), two_metrics(), Algorithm::Random, 0);
    let t = s.suggest(4).unwrap();
    // a maximized, b minimized
    let obs = [(1.0, 1.0), (2.0, 2.0), (0.5, 0.5), (1.0, 3.0)];
    for (t, (a, b)) in t.iter().zip(obs) {
        s.observe(t.id, &values(&[("a", a), ("b", b)])).unwrap();
    }
    let front: Vec<u64> = s
        .pareto_optimal_trials()
        .iter()
        .map(|r| r.trial.id)
        .collect();
    assert_eq!(front, [0, 1, 2]);
    assert_eq!(s.best_trial().unwrap().trial.id, 1);
}

#[test]
fn pareto_trials_keep_every_copy_of_a_tie_in_id_order() {
    let mut s = study(mixed_space(), two_metrics(), Algorithm::Random, 0);
    let t = s.suggest(7).unwrap();
    // a maximized, b minimized: 0, 2 and 5 are one point (-0.0 == 0.0); 3 ties them in a
    // and loses in b; 4 is infeasible, so never on the front; 6 repeats 1 exactly
    let obs = [
        Some((2.0, 0.0)),
        Some((3.0, 2.0)),
        Some((2.0, -0.0)),
        Some((2.0, 0.5)),
        None,
        Some((2.0, 0.0)),
        Some((3.0, 2.0)),
    ];
    for (t, o) in t.iter().zip(obs) {
        match o {
            Some((a, b)) => s.observe(t.id, &values(&[("a", a), ("b", b)])).unwrap(),
            None => s.observe_infeasible(t.id, "over budget").unwrap(),
        }
    }
    let front: Vec<u64> = s
        .pareto_optimal_trials()
        .iter()
        .map(|r| r.trial.id)
        .collect();
    assert_eq!(front, [0, 1, 2, 5, 6]);
}

#[test]
fn a_malformed_save_is_refused_not_trusted() {
    let mut s = study(mixed_space(), two_metrics(), Algorithm::Random, 0);
    let t = s.suggest(2).unwrap();
    s.observe(t[0].id, &evaluate(&t[0])).unwrap();
    let good = s.to_json();
    let mut bad_point = good.clone();
    bad_point["trials"][1]["point"][5] = serde_json::json!(9.0); // router index out of range
    let mut bad_values = good.clone();
    bad_values["trials"][0]["state"]["completed"]
        .as_object_mut()
        .unwrap()
        .remove("b");
    for bad in [bad_point, bad_values] {
        assert!(matches!(
            Study::from_json(&bad),
            Err(SamplerError::Restore { .. })
        ));
    }
    assert!(Study::from_json(&good).is_ok());
}

/// A count beyond what one call hands out is a typed error under every algorithm, before
/// anything is allocated or drawn: the study is unchanged and goes on as a fresh one would.
/// (`suggest(10**12)` from Python used to abort the interpreter on a 24 TB allocation.)
#[test]
fn a_count_beyond_the_cap_is_refused_under_every_algorithm() {
    assert_eq!(Study::MAX_SUGGEST, 1_000);
    assert_eq!(Study::MAX_GRID_SUGGEST, 1 << 20);
    for algorithm in Algorithm::ALL {
        let limit = study(mixed_space(), two_metrics(), algorithm, 5).max_suggest();
        let want = if algorithm == Algorithm::Grid {
            Study::MAX_GRID_SUGGEST
        } else {
            Study::MAX_SUGGEST
        };
        assert_eq!(limit, want, "{algorithm:?}");
        for count in [1_000_000_000_000, usize::MAX, limit + 1] {
            let mut s = study(mixed_space(), two_metrics(), algorithm, 5);
            let err = s.suggest(count).unwrap_err();
            assert_eq!(
                err,
                SamplerError::TooManyTrials {
                    count: count as u128,
                    limit,
                    algorithm
                },
                "{algorithm:?} {count}"
            );
            let msg = err.to_string();
            let says = format!(
                "cannot suggest {count} trials in one call: the {} algorithm suggests at most \
                 {limit} a call; ask for at most {limit} and call suggest again for more",
                algorithm.name()
            );
            assert_eq!(msg, says);
            assert!(s.trials().is_empty(), "{algorithm:?} {count}");
            // the refused call drew nothing: the next suggestion is a fresh study's
            let mut fresh = study(mixed_space(), two_metrics(), algorithm, 5);
            assert_eq!(s.suggest(3).unwrap(), fresh.suggest(3).unwrap());
        }
    }
}

/// The cap itself is accepted: a finite space hands out what it has (the grid, and the
/// random and quasi-random algorithms enumerate the points left) and the default
/// algorithm's first batch is its initial design and then whatever the space holds.
#[test]
fn a_count_at_the_cap_is_served() {
    let mut space = SearchSpace::new();
    let n = ParamSpec::Int {
        lo: 1,
        hi: 6,
        log: false,
    };
    space.add("n", n).unwrap();
    let tp = ParamSpec::Discrete {
        values: vec![1.0, 2.0, 4.0],
        log: false,
    };
    space.add("tp", tp).unwrap();
    for algorithm in Algorithm::ALL {
        let mut s = study(space.clone(), objective(), algorithm, 2);
        let trials = s.suggest(s.max_suggest()).unwrap();
        assert_eq!(trials.len(), 18, "{algorithm:?}");
        assert!(s.suggest(s.max_suggest()).unwrap().is_empty());
    }
}

/// The grid hands out a whole grid of more than [`Study::MAX_SUGGEST`] points in one call,
/// asked for with a round number above it (as the Slurm array recipe does).
#[test]
fn the_grid_hands_out_a_large_grid_in_one_call() {
    let mut space = SearchSpace::new();
    for (name, hi) in [("a", 40), ("b", 30)] {
        let spec = ParamSpec::Int {
            lo: 1,
            hi,
            log: false,
        };
        space.add(name, spec).unwrap();
    }
    let mut s = study(space, objective(), Algorithm::Grid, 0);
    let trials = s.suggest(1_000_000).unwrap();
    assert_eq!(trials.len(), 1200);
    let distinct: BTreeSet<String> = trials.iter().map(|t| format!("{:?}", t.params)).collect();
    assert_eq!(distinct.len(), 1200);
}

#[test]
fn an_infeasible_trial_reopens_to_pending_and_is_observed_anew() {
    let mut s = study(mixed_space(), two_metrics(), Algorithm::Random, 3);
    let trials = s.suggest(3).unwrap();
    s.observe_infeasible(trials[0].id, "evaluator broken")
        .unwrap();
    s.observe(trials[1].id, &evaluate(&trials[1])).unwrap();
    s.reopen(trials[0].id).unwrap();
    assert_eq!(s.trials()[0].state, TrialState::Pending);
    s.observe(trials[0].id, &evaluate(&trials[0])).unwrap();
    assert!(matches!(s.trials()[0].state, TrialState::Completed(_)));
    // only a trial closed as infeasible reopens
    for id in [trials[0].id, trials[1].id, trials[2].id] {
        assert!(
            matches!(s.reopen(id), Err(SamplerError::NotInfeasible { trial_id }) if trial_id == id),
            "{id}"
        );
    }
    assert!(matches!(
        s.reopen(99),
        Err(SamplerError::UnknownTrial { trial_id: 99 })
    ));
}

/// A parameter of 10^5 choices or values is checked in linear time (issue 30, item 4: the
/// duplicate check was quadratic, 10^5 choices took over a minute in `sweeper validate`),
/// and a repeat is still refused, `-0.0` being `0.0`.
#[test]
fn long_choice_and_value_lists_are_checked_in_linear_time() {
    let n = 100_000;
    let start = std::time::Instant::now();
    let mut space = SearchSpace::new();
    space
        .add(
            "c",
            ParamSpec::Categorical {
                choices: (0..n).map(|i| format!("c{i}")).collect(),
            },
        )
        .unwrap();
    space
        .add(
            "v",
            ParamSpec::Discrete {
                values: (0..n).map(f64::from).collect(),
                log: false,
            },
        )
        .unwrap();
    assert!(
        start.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let mut choices: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
    choices.push("c7".into());
    let err = SearchSpace::new()
        .add("c", ParamSpec::Categorical { choices })
        .unwrap_err();
    assert!(
        err.to_string().contains("choice `c7` is listed twice"),
        "{err}"
    );
    let err = SearchSpace::new()
        .add(
            "v",
            ParamSpec::Discrete {
                values: vec![0.0, 1.0, -0.0],
                log: false,
            },
        )
        .unwrap_err();
    assert!(err.to_string().contains("is listed twice"), "{err}");
}

#[test]
fn size_counts_the_points_of_a_finite_space_and_every_grid() {
    // integers 1..=4 and three values: 12 points under every algorithm
    let mut finite = SearchSpace::new();
    finite
        .add(
            "tp",
            ParamSpec::Int {
                lo: 1,
                hi: 4,
                log: false,
            },
        )
        .unwrap();
    finite
        .add(
            "batch",
            ParamSpec::Discrete {
                values: vec![8.0, 16.0, 32.0],
                log: false,
            },
        )
        .unwrap();
    for algorithm in Algorithm::ALL {
        let s = study(finite.clone(), objective(), algorithm, 0);
        assert_eq!(s.size(), Some(12), "{algorithm:?}");
    }
    // a float has no end, but for the grid, which walks it at fixed levels
    for algorithm in Algorithm::ALL {
        let s = study(unit_space(1), objective(), algorithm, 0);
        if algorithm == Algorithm::Grid {
            assert!(s.size().is_some_and(|n| n > 1), "{:?}", s.size());
        } else {
            assert_eq!(s.size(), None, "{algorithm:?}");
        }
    }
}
