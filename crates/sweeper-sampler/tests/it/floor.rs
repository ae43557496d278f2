//! A study with a floor (`Study::with_floor`, the `min_gpus` goal): the default algorithm
//! finds the fewest-cost satisfying point sooner than the grid, stays deterministic across
//! save and restore, never stops exploring, and the floor is checked.

use std::collections::BTreeMap;

use sweeper_goal::Direction;
use sweeper_sampler::{Algorithm, Floor, ParamSpec, SamplerError, SearchSpace, Study, TrialState};

use crate::{metric, values};

const FLOOR: f64 = 11.4;

/// tp × replicas × batch cap: 4 × 8 × 7 = 224 points, like the built-in model's benchmark.
fn serving_space() -> SearchSpace {
    let mut s = SearchSpace::new();
    s.add(
        "tp",
        ParamSpec::Discrete {
            values: vec![1.0, 2.0, 4.0, 8.0],
            log: false,
        },
    )
    .unwrap();
    s.add(
        "replicas",
        ParamSpec::Int {
            lo: 1,
            hi: 8,
            log: false,
        },
    )
    .unwrap();
    s.add(
        "batch",
        ParamSpec::Discrete {
            values: vec![8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0],
            log: true,
        },
    )
    .unwrap();
    s
}

/// A toy serving model at 12 requests a second: a replica of `tp` GPUs serves
/// `2 tp^0.9 h(batch)` requests a second (`h` peaks at batch 32); a deployment that
/// cannot serve the rate queues, and only 60 % of what it serves meets the SLA.
fn toy(tp: f64, replicas: f64, batch: f64) -> (f64, f64) {
    let h = match batch as u32 {
        8 => 0.3,
        16 => 0.6,
        32 => 1.0,
        64 => 0.9,
        128 => 0.85,
        _ => 0.8,
    };
    let capacity = replicas * 2.0 * tp.powf(0.9) * h;
    let goodput = if capacity >= 12.0 {
        12.0
    } else {
        0.6 * capacity
    };
    (tp * replicas, goodput)
}

fn floor_study(algorithm: Algorithm, seed: u64) -> Study {
    Study::new(
        serving_space(),
        vec![
            metric("used_gpus", Direction::Minimize),
            metric("goodput", Direction::Maximize),
        ],
        algorithm,
        seed,
    )
    .unwrap()
    .with_floor(Floor::new("goodput", FLOOR))
    .unwrap()
}

fn num(t: &sweeper_sampler::Trial, i: usize) -> f64 {
    t.params[i].1.as_f64().unwrap()
}

/// Trials (in batches of 4) until the first satisfying point of `fewest` GPUs, at most
/// 224.
fn trials_to_minimum(study: &mut Study, fewest: f64) -> Option<usize> {
    let mut n = 0;
    while n < 224 {
        let batch = study.suggest(4).unwrap();
        if batch.is_empty() {
            return None;
        }
        let mut found = None;
        for t in batch {
            n += 1;
            let (gpus, goodput) = toy(num(&t, 0), num(&t, 1), num(&t, 2));
            study
                .observe(t.id, &values(&[("used_gpus", gpus), ("goodput", goodput)]))
                .unwrap();
            if goodput >= FLOOR && gpus == fewest && found.is_none() {
                found = Some(n);
            }
        }
        if found.is_some() {
            return found;
        }
    }
    None
}

#[test]
fn the_floor_study_reaches_the_fewest_gpus_before_the_grid() {
    // the oracle: every point of the space
    let mut fewest = f64::INFINITY;
    for tp in [1.0, 2.0, 4.0, 8.0] {
        for r in 1..=8 {
            for b in [8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0] {
                let (gpus, goodput) = toy(tp, f64::from(r), b);
                if goodput >= FLOOR {
                    fewest = fewest.min(gpus);
                }
            }
        }
    }
    assert_eq!(
        fewest, 6.0,
        "tp 1 × 6 replicas at batch 32 is the one answer"
    );
    let grid = trials_to_minimum(&mut floor_study(Algorithm::Grid, 1), fewest).unwrap();
    for seed in 1..=3 {
        let got = trials_to_minimum(&mut floor_study(Algorithm::Default, seed), fewest);
        assert!(
            got.is_some_and(|n| n < grid),
            "seed {seed}: {got:?} trials against the grid's {grid}"
        );
    }
}

#[test]
fn the_floor_study_is_deterministic_across_save_and_restore() {
    let run = |study: &mut Study, rounds: usize| {
        for _ in 0..rounds {
            for t in study.suggest(3).unwrap() {
                let (gpus, goodput) = toy(num(&t, 0), num(&t, 1), num(&t, 2));
                study
                    .observe(t.id, &values(&[("used_gpus", gpus), ("goodput", goodput)]))
                    .unwrap();
            }
        }
    };
    let mut a = floor_study(Algorithm::Default, 9);
    let mut b = floor_study(Algorithm::Default, 9);
    run(&mut a, 4);
    run(&mut b, 4);
    let saved = a.to_json();
    assert_eq!(saved["floor"]["metric"], "goodput");
    let mut c = Study::from_json(&saved).unwrap();
    assert_eq!(c.floor(), Some(&Floor::new("goodput", FLOOR)));
    run(&mut a, 2);
    run(&mut b, 2);
    run(&mut c, 2);
    assert_eq!(a.trials(), b.trials());
    assert_eq!(a.trials(), c.trials());
}

#[test]
fn the_floor_study_never_stops_exploring() {
    // nothing reaches the floor: every point is still proposed once, then none
    let mut s = SearchSpace::new();
    s.add(
        "tp",
        ParamSpec::Discrete {
            values: vec![1.0, 2.0, 4.0, 8.0],
            log: false,
        },
    )
    .unwrap();
    s.add(
        "replicas",
        ParamSpec::Int {
            lo: 1,
            hi: 3,
            log: false,
        },
    )
    .unwrap();
    let mut study = Study::new(
        s,
        vec![
            metric("used_gpus", Direction::Minimize),
            metric("goodput", Direction::Maximize),
        ],
        Algorithm::Default,
        2,
    )
    .unwrap()
    .with_floor(Floor::new("goodput", 100.0))
    .unwrap();
    let mut seen = Vec::new();
    loop {
        let batch = study.suggest(2).unwrap();
        if batch.is_empty() {
            break;
        }
        for t in batch {
            let point = (num(&t, 0), num(&t, 1));
            assert!(!seen.contains(&point), "{point:?} twice");
            seen.push(point);
            // a failed evaluation is learnt as missing the floor
            if point.0 == 8.0 {
                study.observe_infeasible(t.id, "out of memory").unwrap();
            } else {
                let gpus = point.0 * point.1;
                study
                    .observe(t.id, &values(&[("used_gpus", gpus), ("goodput", gpus)]))
                    .unwrap();
            }
        }
    }
    assert_eq!(seen.len(), 12);
    // with none satisfying, the best is the highest goodput
    let best = study.best_trial().unwrap();
    let TrialState::Completed(v) = &best.state else {
        panic!("completed")
    };
    assert_eq!(v["goodput"], 12.0);
}

#[test]
fn a_float_space_and_a_cost_that_is_no_product() {
    // cost = n + 3 (not linear in ln n: the residual model is used); goodput n (0.5 +
    // 0.5 x) must reach 4, so n = 5 with x >= 0.6 costs 8 and n = 4 needs x = 1
    let mut s = SearchSpace::new();
    s.add(
        "x",
        ParamSpec::Float {
            lo: 0.0,
            hi: 1.0,
            log: false,
        },
    )
    .unwrap();
    s.add(
        "n",
        ParamSpec::Int {
            lo: 1,
            hi: 16,
            log: false,
        },
    )
    .unwrap();
    let mut study = Study::new(
        s,
        vec![
            metric("cost", Direction::Minimize),
            metric("value", Direction::Maximize),
        ],
        Algorithm::Default,
        4,
    )
    .unwrap()
    .with_floor(Floor::new("value", 4.0))
    .unwrap();
    let mut best = f64::INFINITY;
    for _ in 0..10 {
        for t in study.suggest(3).unwrap() {
            let (x, n) = (num(&t, 0), num(&t, 1));
            let (cost, value) = (n + 3.0, n * (0.5 + 0.5 * x));
            if value >= 4.0 {
                best = best.min(cost);
            }
            study
                .observe(t.id, &values(&[("cost", cost), ("value", value)]))
                .unwrap();
        }
    }
    assert!(best <= 8.0, "best satisfying cost after 30 trials: {best}");
    let TrialState::Completed(v) = &study.best_trial().unwrap().state else {
        panic!("completed")
    };
    assert_eq!(v["cost"], best);
}

#[test]
fn a_floor_that_does_not_fit_the_study_is_refused_with_how_to_fix_it() {
    let fix = "a floor needs two metrics, the floored one maximized and the cost minimized, e.g. metrics [(used_gpus, min), (goodput, max)] with a floor on goodput";
    let study = |metrics: Vec<(&str, Direction)>| {
        Study::new(
            serving_space(),
            metrics.into_iter().map(|(n, d)| metric(n, d)).collect(),
            Algorithm::Default,
            1,
        )
        .unwrap()
    };
    let two = || {
        study(vec![
            ("used_gpus", Direction::Minimize),
            ("goodput", Direction::Maximize),
        ])
    };
    let cases: Vec<(Study, Floor, String)> = vec![
        (
            study(vec![("goodput", Direction::Maximize)]),
            Floor::new("goodput", 1.0),
            "the study has 1 metric(s)".to_owned(),
        ),
        (
            two(),
            Floor::new("goodput_rps", 1.0),
            "the floor names `goodput_rps`, which is not a metric of the study".to_owned(),
        ),
        (
            two(),
            Floor::new("used_gpus", 1.0),
            "`used_gpus` is minimized and `goodput` is maximized".to_owned(),
        ),
        (
            two(),
            Floor::new("goodput", f64::INFINITY),
            "the floor on `goodput` is inf, not a finite number".to_owned(),
        ),
    ];
    for (study, floor, what) in cases {
        assert_eq!(
            study.with_floor(floor).unwrap_err(),
            SamplerError::InvalidMetrics {
                reason: format!("{what}; {fix}")
            }
        );
    }
    let mut started = two();
    started.suggest(1).unwrap();
    let err = started.with_floor(Floor::new("goodput", 1.0)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "invalid metrics: the study has trials already, so a floor would change the past; {fix}"
        )
    );
}

#[test]
fn the_best_trial_under_a_floor_is_the_fewest_cost_that_satisfies() {
    let mut study = floor_study(Algorithm::Random, 5);
    let rows = [
        (8.0, 12.0),
        (4.0, 11.0),
        (6.0, 11.4),
        (6.0, 12.0),
        (2.0, 3.0),
    ];
    for (t, (gpus, goodput)) in study.suggest(5).unwrap().into_iter().zip(rows) {
        study
            .observe(t.id, &values(&[("used_gpus", gpus), ("goodput", goodput)]))
            .unwrap();
    }
    let best = study.best_trial().unwrap();
    assert_eq!(best.trial.id, 3, "6 GPUs, the higher goodput of the two");
    let m: BTreeMap<String, f64> = match &best.state {
        TrialState::Completed(v) => v.clone(),
        _ => panic!("completed"),
    };
    assert_eq!(m["used_gpus"], 6.0);
}
