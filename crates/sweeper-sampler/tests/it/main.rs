//! Integration tests of the study and its algorithms.

mod degenerate;
mod edges;
mod floor;
mod hedge;
mod lines;
mod study;

use std::collections::BTreeMap;

use sweeper_goal::{Direction, SamplerMetric};
use sweeper_sampler::{Algorithm, ParamSpec, SearchSpace, Study, Trial};

pub(crate) fn metric(name: &str, direction: Direction) -> SamplerMetric {
    SamplerMetric {
        name: name.to_owned(),
        direction,
    }
}

pub(crate) fn objective() -> Vec<SamplerMetric> {
    vec![metric("objective", Direction::Maximize)]
}

pub(crate) fn values(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
}

/// A mixed space: float, log float, int, discrete, categorical, and two constants.
pub(crate) fn mixed_space() -> SearchSpace {
    let mut s = SearchSpace::new();
    s.add(
        "x",
        ParamSpec::Float {
            lo: -1.0,
            hi: 1.0,
            log: false,
        },
    )
    .unwrap();
    s.add(
        "lr",
        ParamSpec::Float {
            lo: 1e-4,
            hi: 1e-1,
            log: true,
        },
    )
    .unwrap();
    s.add(
        "n",
        ParamSpec::Int {
            lo: 1,
            hi: 16,
            log: true,
        },
    )
    .unwrap();
    s.add(
        "fixed",
        ParamSpec::Int {
            lo: 7,
            hi: 7,
            log: false,
        },
    )
    .unwrap();
    s.add(
        "tp",
        ParamSpec::Discrete {
            values: vec![1.0, 2.0, 4.0, 8.0],
            log: true,
        },
    )
    .unwrap();
    s.add(
        "frac",
        ParamSpec::Discrete {
            values: vec![0.25, 0.5],
            log: false,
        },
    )
    .unwrap();
    s.add(
        "router",
        ParamSpec::Categorical {
            choices: vec!["a".into(), "b".into(), "c".into()],
        },
    )
    .unwrap();
    s.add(
        "mode",
        ParamSpec::Categorical {
            choices: vec!["only".into()],
        },
    )
    .unwrap();
    s
}

/// `dims` floats on [0, 1], named `x0`, `x1`, ….
pub(crate) fn unit_space(dims: usize) -> SearchSpace {
    let mut s = SearchSpace::new();
    for i in 0..dims {
        s.add(
            format!("x{i}"),
            ParamSpec::Float {
                lo: 0.0,
                hi: 1.0,
                log: false,
            },
        )
        .unwrap();
    }
    s
}

/// A study with the default algorithm's work caps lowered for debug builds.
pub(crate) fn study(
    space: SearchSpace,
    metrics: Vec<SamplerMetric>,
    algorithm: Algorithm,
    seed: u64,
) -> Study {
    let mut s = Study::new(space, metrics, algorithm, seed).unwrap();
    s.use_low_effort();
    s
}

/// A smooth two-metric toy objective of the mixed space.
pub(crate) fn evaluate(trial: &Trial) -> BTreeMap<String, f64> {
    let num = |i: usize| trial.params[i].1.as_f64().unwrap();
    let (x, lr, n) = (num(0), num(1), num(2));
    values(&[
        (
            "a",
            -(x - 0.3) * (x - 0.3) - (lr.log10() + 2.0).powi(2) + n / 16.0,
        ),
        ("b", x + num(4) / 8.0),
    ])
}

pub(crate) fn two_metrics() -> Vec<SamplerMetric> {
    vec![
        metric("a", Direction::Maximize),
        metric("b", Direction::Minimize),
    ]
}
