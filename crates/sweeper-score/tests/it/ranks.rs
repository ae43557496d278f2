//! Non-dominated sorting on clouds of a few thousand rows, against peeling: the front of
//! what is left, again and again, with the public front kernel (the algorithm
//! `nondominated_ranks` used for d >= 3 before it became a sweep and a tree), plus the
//! error and edge cases of the public API.

use sweeper_goal::Direction::{self, Maximize, Minimize};
use sweeper_score::ScoreError;
use sweeper_score::front::{nondominated, nondominated_ranks, nondominated_ranks_brute_force};

/// Front numbers by peeling with [`nondominated`]: the oracle for inputs too large for the
/// O(n²) brute force.
fn peel(data: &[f64], d: usize, dirs: &[Direction]) -> Vec<usize> {
    let n = data.len() / d;
    let mut rank = vec![usize::MAX; n];
    let mut left: Vec<usize> = (0..n).collect();
    let mut level = 0;
    while !left.is_empty() {
        let sub: Vec<f64> = left
            .iter()
            .flat_map(|&i| data[i * d..(i + 1) * d].iter().copied())
            .collect();
        for k in nondominated(&sub, d, dirs).unwrap() {
            rank[left[k]] = level;
        }
        left.retain(|&i| rank[i] == usize::MAX);
        level += 1;
    }
    rank
}

/// `SplitMix64` (Steele, Lea and Flood 2014): uniform in [0, 1).
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `n` rows of `d` columns: uniform, correlated (near the diagonal), anticorrelated (near
/// the plane sum = d/2), or on a coarse grid (ties and duplicates everywhere).
fn cloud(kind: &str, n: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng(seed);
    let mut v = Vec::with_capacity(n * d);
    for _ in 0..n {
        let t = rng.unit();
        let row: Vec<f64> = (0..d)
            .map(|_| match kind {
                "correlated" => t + 0.1 * (rng.unit() - 0.5),
                "grid" => (rng.unit() * 6.0).floor(),
                // Uniform, and the start of anticorrelated.
                _ => rng.unit(),
            })
            .collect();
        if kind == "anticorrelated" {
            let shift = (row.iter().sum::<f64>() - d as f64 / 2.0) / d as f64;
            v.extend(row.iter().map(|x| x - shift + 0.01 * (rng.unit() - 0.5)));
        } else {
            v.extend(row);
        }
    }
    v
}

#[test]
fn clouds_match_peeling() {
    for d in 3..=6 {
        for kind in ["uniform", "correlated", "anticorrelated", "grid"] {
            for (n, seed) in [(2_000, 1), (5_000, 2)] {
                let data = cloud(kind, n, d, seed * 1_000 + d as u64);
                let mut dirs = vec![Maximize; d];
                // One minimized column, its values negated: the same fronts.
                dirs[d - 1] = Minimize;
                let flipped: Vec<f64> = data
                    .iter()
                    .enumerate()
                    .map(|(k, &x)| if k % d == d - 1 { -x } else { x })
                    .collect();
                let want = peel(&data, d, &[Maximize; 6][..d]);
                assert_eq!(
                    nondominated_ranks(&data, d, &[Maximize; 6][..d]).unwrap(),
                    want,
                    "{kind} {n} x {d}"
                );
                assert_eq!(
                    nondominated_ranks(&flipped, d, &dirs).unwrap(),
                    want,
                    "{kind} {n} x {d}, a minimized column"
                );
            }
        }
    }
}

#[test]
fn a_chain_has_one_row_per_front() {
    // Every row dominates the next: n fronts, the case where peeling is quadratic.
    for d in 1..=6 {
        let n = 3_000;
        let data: Vec<f64> = (0..n)
            .flat_map(|i| (0..d).map(move |j| -((i * d + j) as f64)))
            .collect();
        let want: Vec<usize> = (0..n).collect();
        assert_eq!(
            nondominated_ranks(&data, d, &vec![Maximize; d]).unwrap(),
            want,
            "d {d}"
        );
    }
}

#[test]
fn copies_share_a_front_and_signed_zeros_are_equal() {
    // (1, 1, 1) twice, (0, 0, 0) and (-0, 0, -0), (1, 1, 0); minimized columns too.
    let data = [
        1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, -0.0, 0.0, -0.0, 1.0, 1.0, 0.0,
    ];
    for dirs in [[Maximize; 3], [Minimize; 3]] {
        let want = if dirs[0] == Maximize {
            vec![0, 2, 0, 2, 1]
        } else {
            vec![2, 0, 2, 0, 1]
        };
        assert_eq!(nondominated_ranks(&data, 3, &dirs).unwrap(), want);
        assert_eq!(
            nondominated_ranks_brute_force(&data, 3, &dirs).unwrap(),
            want
        );
    }
}

#[test]
fn infinities_rank_like_extreme_values() {
    let inf = f64::INFINITY;
    // (inf, 0, 0, 0) beats (1, 0, 0, 0); (-inf, 5, 5, 5) beats nothing it differs from
    // in the first column's favour, and (-inf, 4, 5, 5) is beaten by it.
    let data = [
        inf, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -inf, 5.0, 5.0, 5.0, -inf, 4.0, 5.0, 5.0,
    ];
    assert_eq!(
        nondominated_ranks(&data, 4, &[Maximize; 4]).unwrap(),
        vec![0, 1, 0, 1]
    );
}

#[test]
fn nan_is_an_error_naming_its_row_and_column() {
    for d in 1..=6 {
        let mut data = vec![1.0; 4 * d];
        data[2 * d + d - 1] = f64::NAN;
        assert!(matches!(
            nondominated_ranks(&data, d, &vec![Maximize; d]),
            Err(ScoreError::NanValue { row: 2, column }) if column == d - 1
        ));
    }
}

#[test]
fn empty_and_single_row_inputs() {
    for d in 1..=9 {
        let dirs = vec![Maximize; d];
        assert_eq!(
            nondominated_ranks(&[], d, &dirs).unwrap(),
            Vec::<usize>::new()
        );
        assert_eq!(
            nondominated_ranks(&vec![0.5; d], d, &dirs).unwrap(),
            vec![0]
        );
    }
}

#[test]
fn all_equal_rows_are_one_front() {
    for d in 1..=11 {
        let dirs = vec![Maximize; d];
        for n in [2, 17, 1_000] {
            // The same row n times, its zeros alternating in sign.
            let data: Vec<f64> = (0..n * d)
                .map(|k| if (k / d) % 2 == 0 { 0.0 } else { -0.0 })
                .collect();
            assert_eq!(
                nondominated_ranks(&data, d, &dirs).unwrap(),
                vec![0; n],
                "d {d} n {n}"
            );
        }
    }
}

#[test]
fn a_few_distinct_rows_copied_many_times_match_the_oracle() {
    // 12 distinct grid rows, each copied about 80 times in a scattered order: groups of
    // copies far larger than a tree leaf, in every front.
    for d in 2..=8 {
        let mut rng = Rng(d as u64);
        let distinct: Vec<f64> = (0..12 * d).map(|_| (rng.unit() * 4.0).floor()).collect();
        let data: Vec<f64> = (0..1_000)
            .flat_map(|_| {
                let i = (rng.unit() * 12.0) as usize;
                distinct[i * d..(i + 1) * d].to_vec()
            })
            .collect();
        let dirs: Vec<Direction> = (0..d)
            .map(|j| if j % 2 == 0 { Maximize } else { Minimize })
            .collect();
        assert_eq!(
            nondominated_ranks(&data, d, &dirs).unwrap(),
            nondominated_ranks_brute_force(&data, d, &dirs).unwrap(),
            "d {d}"
        );
    }
}

#[test]
fn rows_of_one_sum_are_one_front() {
    // Integer rows with the same sum: none dominates another (one that is at least as
    // large everywhere with the same sum is equal), so all share front 0, copies too;
    // a row below all of them is alone in front 1.
    for d in 2..=8 {
        let mut rng = Rng(100 + d as u64);
        let n = 4_000;
        let mut data = Vec::with_capacity((n + 1) * d);
        for _ in 0..n {
            let row: Vec<f64> = (0..d - 1).map(|_| (rng.unit() * 1e6).floor()).collect();
            let last = 1e7 - row.iter().sum::<f64>();
            data.extend(row);
            data.push(last);
        }
        data.extend(vec![-1.0; d]);
        let mut want = vec![0; n];
        want.push(1);
        assert_eq!(
            nondominated_ranks(&data, d, &vec![Maximize; d]).unwrap(),
            want,
            "d {d}"
        );
    }
}

#[test]
fn ranks_depend_on_the_order_of_each_column_only() {
    // Strictly increasing maps of a column keep every front: a power-of-two scale (exact),
    // and a grid squeezed to 1 + g ε, values far closer than f32 can tell apart.
    for d in 2..=6 {
        for kind in ["uniform", "grid"] {
            let data = cloud(kind, 3_000, d, 7 + d as u64);
            let dirs = vec![Maximize; d];
            let want = peel(&data, d, &dirs);
            let scaled: Vec<f64> = data
                .iter()
                .enumerate()
                .map(|(k, &x)| match k % d {
                    0 => x * 2f64.powi(40),
                    1 => x * 2f64.powi(-40),
                    _ => x,
                })
                .collect();
            assert_eq!(
                nondominated_ranks(&scaled, d, &dirs).unwrap(),
                want,
                "{kind} {d}: scaled"
            );
            if kind == "grid" {
                let squeezed: Vec<f64> = data.iter().map(|&g| 1.0 + g * f64::EPSILON).collect();
                assert_eq!(
                    nondominated_ranks(&squeezed, d, &dirs).unwrap(),
                    want,
                    "{kind} {d}: squeezed"
                );
            }
        }
    }
}
