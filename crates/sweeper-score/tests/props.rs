//! Property suite of the front kernels: the dominance invariants, the fast kernels against
//! the O(n²) oracles, merging, ranks and hypervolume. `PROPTEST_CASES` raises the case count
//! (`cargo xtask check-frontier --cases N` sets it).

use proptest::prelude::*;
use sweeper_goal::Direction;
use sweeper_score::front::{
    SimdLevel, dominates, hypervolume, hypervolume_brute_force, merge_fronts, nondominated,
    nondominated_brute_force, nondominated_ranks, nondominated_ranks_brute_force,
    nondominated_sequential, nondominated_with_level, nondominated_with_threshold,
    pareto_front_sorted,
};

/// Cases per property: small in code, `PROPTEST_CASES` from outside.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(48);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

/// A value from a small grid (forcing ties and duplicates), sometimes ±inf or -0.0.
fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        8 => (-3i32..=3).prop_map(f64::from),
        1 => Just(-0.0),
        1 => prop_oneof![Just(f64::INFINITY), Just(f64::NEG_INFINITY)],
        2 => -1.0e3..1.0e3f64,
    ]
}

fn direction() -> impl Strategy<Value = Direction> {
    prop_oneof![Just(Direction::Maximize), Just(Direction::Minimize)]
}

/// (d, directions, row-major data of up to `max_n` rows).
fn matrix(max_d: usize, max_n: usize) -> impl Strategy<Value = (usize, Vec<Direction>, Vec<f64>)> {
    (1..=max_d).prop_flat_map(move |d| {
        (
            Just(d),
            proptest::collection::vec(direction(), d),
            (0..=max_n).prop_flat_map(move |n| proptest::collection::vec(value(), n * d)),
        )
    })
}

/// Like [`matrix`] but with many rows drawn from a grid, clustered so that fronts are
/// moderate: large enough for the pruning pass, the chunked parallel pass and the tree.
fn big_matrix() -> impl Strategy<Value = (usize, Vec<Direction>, Vec<f64>)> {
    (1..=6usize, 300..1400usize, 2..40i32).prop_flat_map(|(d, n, levels)| {
        (
            Just(d),
            proptest::collection::vec(direction(), d),
            proptest::collection::vec(
                prop_oneof![
                    40 => (0..levels).prop_map(f64::from),
                    1 => Just(-0.0),
                    1 => prop_oneof![Just(f64::INFINITY), Just(f64::NEG_INFINITY)],
                ],
                n * d,
            ),
        )
    })
}

/// (d, directions, data) for the ranks: d in `dims`, up to `max_n` rows on a grid of
/// `levels` integers per column (ties and duplicates everywhere), with some ±inf and -0.0.
fn rank_matrix(
    dims: std::ops::RangeInclusive<usize>,
    max_n: usize,
) -> impl Strategy<Value = (usize, Vec<Direction>, Vec<f64>)> {
    (dims, 1..=max_n, 2..12i32).prop_flat_map(|(d, n, levels)| {
        (
            Just(d),
            proptest::collection::vec(direction(), d),
            proptest::collection::vec(
                prop_oneof![
                    30 => (0..levels).prop_map(f64::from),
                    1 => Just(-0.0),
                    1 => prop_oneof![Just(f64::INFINITY), Just(f64::NEG_INFINITY)],
                    2 => -1.0e3..1.0e3f64,
                ],
                n * d,
            ),
        )
    })
}

fn row(data: &[f64], d: usize, i: usize) -> &[f64] {
    &data[i * d..(i + 1) * d]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn dominance_is_irreflexive_asymmetric_transitive(
        (d, dirs, a) in (1..=5usize).prop_flat_map(|d| (
            Just(d),
            proptest::collection::vec(direction(), d),
            proptest::collection::vec((-1i32..=1).prop_map(f64::from), 3 * d),
        ))
    ) {
        let (x, y, z) = (&a[..d], &a[d..2 * d], &a[2 * d..]);
        prop_assert!(!dominates(x, x, &dirs));
        if dominates(x, y, &dirs) {
            prop_assert!(!dominates(y, x, &dirs));
            if dominates(y, z, &dirs) {
                prop_assert!(dominates(x, z, &dirs));
            }
        }
    }

    #[test]
    fn front_rows_are_undominated_and_others_dominated_by_a_front_row(
        (d, dirs, data) in matrix(6, 40)
    ) {
        let n = data.len() / d;
        let front = nondominated(&data, d, &dirs).unwrap();
        for i in 0..n {
            if front.contains(&i) {
                for j in 0..n {
                    prop_assert!(!dominates(row(&data, d, j), row(&data, d, i), &dirs));
                }
            } else {
                prop_assert!(front.iter().any(|&f| dominates(row(&data, d, f), row(&data, d, i), &dirs)));
            }
        }
    }

    #[test]
    fn parallel_sequential_and_brute_force_agree_small((d, dirs, data) in matrix(6, 90)) {
        let brute = nondominated_brute_force(&data, d, &dirs).unwrap();
        prop_assert_eq!(&nondominated_sequential(&data, d, &dirs).unwrap(), &brute);
        prop_assert_eq!(&nondominated_with_threshold(&data, d, &dirs, 1).unwrap(), &brute);
        prop_assert_eq!(&nondominated(&data, d, &dirs).unwrap(), &brute);
        for level in SimdLevel::ALL {
            prop_assert_eq!(&nondominated_with_level(&data, d, &dirs, 1, level).unwrap(), &brute);
        }
    }

    #[test]
    fn parallel_sequential_and_brute_force_agree_large((d, dirs, data) in big_matrix()) {
        let brute = nondominated_brute_force(&data, d, &dirs).unwrap();
        prop_assert_eq!(&nondominated_sequential(&data, d, &dirs).unwrap(), &brute);
        prop_assert_eq!(&nondominated_with_threshold(&data, d, &dirs, 1).unwrap(), &brute);
        for level in SimdLevel::ALL {
            prop_assert_eq!(&nondominated_with_level(&data, d, &dirs, 1, level).unwrap(), &brute);
            prop_assert_eq!(&nondominated_with_level(&data, d, &dirs, usize::MAX, level).unwrap(), &brute);
        }
    }

    #[test]
    fn front_is_invariant_under_row_permutation(
        ((d, dirs, data), seed) in (matrix(6, 60), any::<u64>())
    ) {
        let n = data.len() / d;
        // A seeded permutation: rows sorted by a hash of (seed, row).
        let mut perm: Vec<usize> = (0..n).collect();
        perm.sort_by_key(|&i| (i as u64 ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17));
        let shuffled: Vec<f64> = perm.iter().flat_map(|&i| row(&data, d, i).iter().copied()).collect();
        let mut back: Vec<usize> = nondominated(&shuffled, d, &dirs).unwrap().iter().map(|&k| perm[k]).collect();
        back.sort_unstable();
        prop_assert_eq!(back, nondominated(&data, d, &dirs).unwrap());
    }

    #[test]
    fn front_is_invariant_under_sign_and_direction_flip(
        ((d, dirs, data), col) in (matrix(6, 60), 0..6usize)
    ) {
        let col = col % d;
        let mut flipped_dirs = dirs.clone();
        flipped_dirs[col] = match dirs[col] {
            Direction::Maximize => Direction::Minimize,
            Direction::Minimize => Direction::Maximize,
        };
        let flipped: Vec<f64> = data.iter().enumerate().map(|(k, &x)| if k % d == col { -x } else { x }).collect();
        prop_assert_eq!(
            nondominated(&flipped, d, &flipped_dirs).unwrap(),
            nondominated(&data, d, &dirs).unwrap()
        );
    }

    #[test]
    fn front_of_a_front_is_itself((d, dirs, data) in matrix(6, 60)) {
        let front = nondominated(&data, d, &dirs).unwrap();
        let sub: Vec<f64> = front.iter().flat_map(|&i| row(&data, d, i).iter().copied()).collect();
        let again = nondominated(&sub, d, &dirs).unwrap();
        prop_assert_eq!(again, (0..front.len()).collect::<Vec<_>>());
    }

    #[test]
    fn merge_of_fronts_is_front_of_union(
        ((d, dirs, a), b_rows) in matrix(6, 50).prop_flat_map(|(d, dirs, a)| {
            let b = proptest::collection::vec(value(), 0..=50 * d)
                .prop_map(move |mut v| { v.truncate(v.len() / d * d); v });
            (Just((d, dirs, a)), b)
        })
    ) {
        let b = b_rows;
        let na = a.len() / d;
        let fa = nondominated(&a, d, &dirs).unwrap();
        let fb = nondominated(&b, d, &dirs).unwrap();
        let ra: Vec<f64> = fa.iter().flat_map(|&i| row(&a, d, i).iter().copied()).collect();
        let rb: Vec<f64> = fb.iter().flat_map(|&i| row(&b, d, i).iter().copied()).collect();
        let merged: Vec<usize> = merge_fronts(&ra, &rb, d, &dirs).unwrap().iter().map(|&k| {
            if k < fa.len() { fa[k] } else { na + fb[k - fa.len()] }
        }).collect();
        let mut union = a.clone();
        union.extend_from_slice(&b);
        prop_assert_eq!(merged, nondominated(&union, d, &dirs).unwrap());
    }

    #[test]
    fn ranks_match_peeling((d, dirs, data) in matrix(5, 60)) {
        prop_assert_eq!(
            nondominated_ranks(&data, d, &dirs).unwrap(),
            nondominated_ranks_brute_force(&data, d, &dirs).unwrap()
        );
    }

    #[test]
    fn ranks_match_peeling_on_grids_of_three_to_six_columns(
        (d, dirs, data) in rank_matrix(3..=6, 300)
    ) {
        prop_assert_eq!(
            nondominated_ranks(&data, d, &dirs).unwrap(),
            nondominated_ranks_brute_force(&data, d, &dirs).unwrap()
        );
    }

    #[test]
    fn ranks_match_peeling_past_eight_columns((d, dirs, data) in rank_matrix(7..=11, 80)) {
        prop_assert_eq!(
            nondominated_ranks(&data, d, &dirs).unwrap(),
            nondominated_ranks_brute_force(&data, d, &dirs).unwrap()
        );
    }

    #[test]
    fn ranks_are_invariant_under_power_of_two_column_scales(
        ((d, dirs, data), shifts) in (
            rank_matrix(1..=8, 150),
            proptest::collection::vec(-60i32..=60, 8),
        )
    ) {
        // Exact strictly increasing maps of each column: the same order, the same fronts.
        let scaled: Vec<f64> = data
            .iter()
            .enumerate()
            .map(|(k, &x)| x * 2f64.powi(shifts[k % d]))
            .collect();
        prop_assert_eq!(
            nondominated_ranks(&scaled, d, &dirs).unwrap(),
            nondominated_ranks(&data, d, &dirs).unwrap()
        );
    }

    #[test]
    fn ranks_are_invariant_under_row_permutation(
        ((d, dirs, data), seed) in (rank_matrix(1..=6, 120), any::<u64>())
    ) {
        let n = data.len() / d;
        let mut perm: Vec<usize> = (0..n).collect();
        perm.sort_by_key(|&i| (i as u64 ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17));
        let shuffled: Vec<f64> = perm.iter().flat_map(|&i| row(&data, d, i).iter().copied()).collect();
        let ranks = nondominated_ranks(&data, d, &dirs).unwrap();
        let moved = nondominated_ranks(&shuffled, d, &dirs).unwrap();
        for (k, &i) in perm.iter().enumerate() {
            prop_assert_eq!(moved[k], ranks[i]);
        }
    }

    #[test]
    fn sorted_front_is_the_front_ordered_by_last_column((d, dirs, data) in matrix(4, 40)) {
        let sorted = pareto_front_sorted(&data, d, &dirs).unwrap();
        let mut set = sorted.clone();
        set.sort_unstable();
        prop_assert_eq!(set, nondominated(&data, d, &dirs).unwrap());
        for w in sorted.windows(2) {
            let (x, y) = (data[w[0] * d + d - 1], data[w[1] * d + d - 1]);
            prop_assert!(x < y || (x == y && w[0] < w[1]));
        }
    }

    #[test]
    fn hypervolume_matches_cell_sum_and_grows_with_points(
        ((d, dirs, data), extra, reference) in (1..=4usize).prop_flat_map(|d| (
            (Just(d), proptest::collection::vec(direction(), d),
                (0..=9usize).prop_flat_map(move |n| proptest::collection::vec(value(), n * d))),
            proptest::collection::vec(value(), d),
            proptest::collection::vec((-4i32..=0).prop_map(f64::from), d),
        ))
    ) {
        // The reference sits at the "worst" side of each column so that volumes are non-trivial.
        let reference: Vec<f64> = reference.iter().zip(&dirs).map(|(&r, &dir)| r * dir.sign()).collect();
        let fast = hypervolume(&data, d, &dirs, &reference).unwrap();
        let slow = hypervolume_brute_force(&data, d, &dirs, &reference).unwrap();
        prop_assert!(fast.is_finite() == slow.is_finite(), "{} vs {}", fast, slow);
        if fast.is_finite() {
            prop_assert!((fast - slow).abs() <= 1e-9 * slow.abs().max(1.0), "{} vs {}", fast, slow);
        } else {
            prop_assert_eq!(fast, slow);
        }
        let mut more = data.clone();
        more.extend_from_slice(&extra);
        let grown = hypervolume(&more, d, &dirs, &reference).unwrap();
        prop_assert!(grown >= fast * (1.0 - 1e-12), "{} < {}", grown, fast);
    }

    #[test]
    fn streamed_front_is_the_sorted_front(
        (d, dirs, data) in matrix(4, 120),
        chunk in 1..40usize,
    ) {
        // Reduced every `chunk` rows (and at twice each front): the same rows, same order.
        let mut stream = sweeper_score::FrontStream::with_chunk(&dirs, chunk).unwrap();
        for i in 0..data.len() / d {
            stream.push(row(&data, d, i), i).unwrap();
        }
        prop_assert_eq!(stream.finish().unwrap(), pareto_front_sorted(&data, d, &dirs).unwrap());
    }

    #[test]
    fn streamed_ranking_is_the_ranking_cut_to_its_limit(
        rows in proptest::collection::vec((value(), (0i32..=3).prop_map(f64::from)), 0..200),
        limit in proptest::option::of(0..30usize),
        buffer in 1..50usize,
    ) {
        let candidates: Vec<sweeper_score::Candidate> = rows.iter().enumerate().map(|(i, &(score, used_gpus))| {
            sweeper_score::Candidate {
                index: i,
                config: serde_json::Map::new(),
                used_gpus,
                score,
                metrics: std::collections::BTreeMap::new(),
                objectives: None,
                satisfying: None,
            }
        }).collect();
        let mut want: Vec<usize> = sweeper_score::rank(candidates).iter().map(|c| c.index).collect();
        if let Some(n) = limit {
            want.truncate(n);
        }
        let mut stream = sweeper_score::RankStream::with_buffer(limit, buffer);
        for (i, &(score, gpus)) in rows.iter().enumerate() {
            stream.push(score, gpus, i);
        }
        prop_assert_eq!(stream.finish(), want);
    }
}
