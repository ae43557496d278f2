//! Unit tests of the default algorithm's private parts.

use super::models::{edge_bounds, nondominated_columns, powi};
use super::state::DefaultSampler;
use super::tuning::{EDGE_MARGIN, LINE_POINTS};
use crate::rng::Rng;
use crate::sampler::History;
use crate::space::{Domain, ParamSpec, SearchSpace};

/// A state saved before the hedge member's long models existed (no `long_hyper`,
/// no `long_fitted_at`) still loads, and resumes with no long fit cached.
#[test]
fn a_state_saved_without_the_long_models_loads() {
    let mut saved = crate::sampler::Sampler::save(&DefaultSampler::new(3, 2));
    let obj = saved.as_object_mut().expect("the state is an object");
    assert!(obj.remove("long_hyper").is_some());
    assert!(obj.remove("long_fitted_at").is_some());
    let back: DefaultSampler = serde_json::from_value(saved).expect("loads");
    assert!(back.long_hyper.is_empty() && back.long_fitted_at.is_empty());
}

/// Every point of the lines is a point of the space that differs from the member in
/// one coordinate at most, and a log integer's line is spread over its log range.
#[test]
fn lines_are_points_of_the_space_one_coordinate_away() {
    let mut space = SearchSpace::new();
    let specs = [
        (
            "f",
            ParamSpec::Float {
                lo: -2.0,
                hi: 3.0,
                log: false,
            },
        ),
        (
            "lr",
            ParamSpec::Float {
                lo: 1e-4,
                hi: 1e-1,
                log: true,
            },
        ),
        (
            "batch",
            ParamSpec::Int {
                lo: 1,
                hi: 1024,
                log: true,
            },
        ),
        (
            "offset",
            ParamSpec::Int {
                lo: -7,
                hi: 5,
                log: false,
            },
        ),
        (
            "tp",
            ParamSpec::Discrete {
                values: vec![1.0, 2.0, 4.0, 8.0],
                log: true,
            },
        ),
        (
            "router",
            ParamSpec::Categorical {
                choices: vec!["a".into(), "b".into(), "c".into()],
            },
        ),
    ];
    for (name, spec) in specs {
        space.add(name, spec).unwrap();
    }
    let domain = Domain::new(&space);
    let mut sampler = DefaultSampler::new(11, 2);
    let mut rng = Rng::new(4, 4);
    let mut low_draws = 0;
    for _ in 0..3 {
        let member = domain.random(&mut rng);
        let lines = sampler.lines_through(&domain, &member);
        assert_eq!(lines.len(), 6 * LINE_POINTS);
        for (i, p) in lines.iter().enumerate() {
            assert!(domain.contains(p), "{p:?} is not a point of the space");
            let changed: Vec<usize> = (0..p.len()).filter(|&j| p[j] != member[j]).collect();
            assert!(
                changed.iter().all(|&j| j == i / LINE_POINTS),
                "{changed:?} at {i}"
            );
            if i / LINE_POINTS == 2 && p[2] <= 32.0 {
                low_draws += 1;
            }
        }
    }
    // log-uniform over 1..=1024 puts about 55% of the draws at 32 or below (48 draws:
    // about 26); uniform over the values would put 3% there (about 1.5)
    assert!(
        low_draws >= 12,
        "{low_draws} of 48 batch draws at 32 or below"
    );
}

#[test]
fn edge_bounds_open_only_the_faces_a_front_point_lies_at() {
    let mut space = SearchSpace::new();
    for name in ["x", "y"] {
        let unit = ParamSpec::Float {
            lo: 0.0,
            hi: 1.0,
            log: false,
        };
        space.add(name, unit).expect("valid");
    }
    let n = ParamSpec::Int {
        lo: 1,
        hi: 4,
        log: false,
    };
    space.add("n", n).expect("valid");
    let domain = Domain::new(&space);
    // trial 1 is infeasible and sits at x = 0; trial 3 is dominated and sits at
    // y = 0; trial 2, on the front, at y = 1 (x within the margin of 1)
    let points = vec![
        vec![0.5, 0.5, 1.0],
        vec![0.0, 0.5, 1.0],
        vec![0.995, 1.0, 4.0],
        vec![0.5, 0.0, 2.0],
    ];
    let feasible = [0, 2, 3];
    // two maximized metrics of the feasible trials: 0 and 2 on the front, 3 dominated
    let z = vec![vec![1.0, 0.0, 0.5], vec![0.0, 1.0, -1.0]];
    let history = History {
        domain: &domain,
        space: &space,
        metrics: &[],
        records: &[],
        points: &points,
    };
    let b = edge_bounds(&history, &feasible, &z);
    assert_eq!(
        b,
        vec![
            (EDGE_MARGIN, 1.0),
            (EDGE_MARGIN, 1.0),
            (f64::NEG_INFINITY, f64::INFINITY)
        ]
    );
}

/// The pairwise loop the sampler used before, as the oracle.
fn oracle(z: &[Vec<f64>]) -> Vec<usize> {
    let (k, n) = (z.len(), z[0].len());
    (0..n)
        .filter(|&j| {
            !(0..n).any(|i| {
                i != j && (0..k).all(|m| z[m][i] >= z[m][j]) && (0..k).any(|m| z[m][i] > z[m][j])
            })
        })
        .collect()
}

#[test]
fn inlined_powi_is_bit_identical() {
    for x in [0.0, 1e-300, 0.3, 0.7, 1.0, 1.5, 3.0, 1e10, f64::INFINITY] {
        for k in 0..=9 {
            let want = x.powi(i32::try_from(k).expect("small"));
            assert_eq!(powi(x, k).to_bits(), want.to_bits(), "{x}^{k}");
        }
    }
}

#[test]
fn ties_duplicates_and_nan_as_the_pairwise_loop() {
    let cases: Vec<Vec<Vec<f64>>> = vec![
        // duplicates of a front row, and of a dominated row
        vec![
            vec![1.0, 1.0, 0.0, 0.0, 2.0],
            vec![1.0, 1.0, 0.0, 0.0, -1.0],
        ],
        // ties in one column only
        vec![vec![1.0, 1.0, 1.0], vec![0.0, 2.0, 2.0]],
        // -0.0 and 0.0 are equal
        vec![vec![0.0, -0.0], vec![-0.0, 0.0]],
        // three metrics, all equal
        vec![vec![3.0; 4], vec![3.0; 4], vec![3.0; 4]],
        // a NaN row is kept and dominates nothing
        vec![vec![f64::NAN, 1.0, 0.5], vec![9.0, 1.0, 2.0]],
        // one observation
        vec![vec![0.3], vec![0.7]],
    ];
    for z in &cases {
        assert_eq!(nondominated_columns(z), oracle(z), "{z:?}");
    }
    assert_eq!(nondominated_columns(&[vec![], vec![]]), Vec::<usize>::new());
}

#[test]
fn small_integer_grids_as_the_pairwise_loop() {
    // Every value on a 3-level grid, so that ties and duplicates are the rule.
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % 3) as f64
    };
    for k in 2..=4 {
        for n in [0, 1, 2, 5, 17, 60] {
            let z: Vec<Vec<f64>> = (0..k).map(|_| (0..n).map(|_| next()).collect()).collect();
            if n > 0 {
                assert_eq!(nondominated_columns(&z), oracle(&z), "{z:?}");
            }
        }
    }
}
