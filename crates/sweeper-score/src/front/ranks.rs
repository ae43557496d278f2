//! Non-dominated sorting: per row the number of its front.
//!
//! Worst cases for n rows in F fronts, whatever the values (ties, copies, one front or n):
//!
//! - d = 1: a sort (a row's front is the number of distinct greater values), O(n log n).
//! - d = 2: a sort and a sweep with a binary search over the fronts' last rows (Jensen,
//!   IEEE TEVC 2003): O(n log n) for the sort, O(log F) per row after it.
//! - d = 3: the same sweep one dimension up, each front keeping a (y, z) staircase:
//!   O(n log n) for the sort, then per row a binary search over the fronts, O(log F)
//!   probes of O(log n) each, and one staircase insertion. A pair enters a staircase once
//!   and leaves it at most once; a vector staircase moves at most `STAIR_VEC_MAX`
//!   pairs per insertion (a constant), a B-tree one costs O(log n). In all
//!   O(n log n log F), so less than one O(n log n) pass per front for every F >= 2.
//! - d >= 4: a k-d tree that finds each row's greatest-front dominator in one query
//!   (`ranks/tree.rs`): O(d n log n) to sort, rank and build, and at most
//!   O(d n^(2 - 1/(d - 1))) node tests, whatever the number of fronts and the columns'
//!   scales (the module docs there derive it and give the measured visits: 50 to 330 per
//!   row on 1e6 × 4 and × 5 clouds).
//!
//! Every path is exact: ties, copies (which share a front), `±inf` and `-0.0 == 0.0` as
//! everywhere in `front`, checked against the O(n²) peeling oracle.

use super::{
    Canon,
    sweep::{Staircase, ord_key},
};

mod tree;

/// Front numbers of canonical rows.
pub(crate) fn ranks(c: &Canon) -> Vec<usize> {
    match c.d {
        1 => ranks1(c),
        2 => ranks2(c),
        3 => ranks3(c),
        _ => tree::ranks(c),
    }
}

/// d = 1: a row's front is the number of distinct values greater than its own.
fn ranks1(c: &Canon) -> Vec<usize> {
    let mut order: Vec<(u64, usize)> = (0..c.n).map(|i| (!ord_key(c.v[i]), i)).collect();
    order.sort_unstable();
    let mut rank = vec![0; c.n];
    let mut level = 0;
    for (k, &(x, i)) in order.iter().enumerate() {
        if k > 0 && order[k - 1].0 != x {
            level += 1;
        }
        rank[i] = level;
    }
    rank
}

/// d = 2 in O(n log n): rows by x descending (y descending on ties); the fronts met so far
/// each end in their highest row, and a row's front is the first one whose last row does
/// not dominate it (a monotone predicate, so a binary search finds it).
fn ranks2(c: &Canon) -> Vec<usize> {
    let mut order: Vec<(u64, u64, usize)> = (0..c.n)
        .map(|i| (!ord_key(c.v[2 * i]), !ord_key(c.v[2 * i + 1]), i))
        .collect();
    order.sort_unstable();
    let mut rank = vec![0; c.n];
    // Per front its last row (x, y), as complemented keys.
    let mut last: Vec<(u64, u64)> = Vec::new();
    for (x, y, i) in order {
        // Complemented keys: "last dominates (x, y)" is ly <= y with (lx, ly) != (x, y).
        let k = last.partition_point(|&(lx, ly)| ly <= y && (lx, ly) != (x, y));
        rank[i] = k;
        if k == last.len() {
            last.push((x, y));
        } else {
            last[k] = (x, y);
        }
    }
    rank
}

/// Above this many steps a front's staircase moves from a sorted vector to a B-tree (a
/// binary search and a short move beat a B-tree's pointer chasing while it is small).
/// Measured at 256, 2048 and 16384 on 1e6 × 3, min of three medians: anticorrelated
/// 493 / 251 / 255 ms, sphere 328 / 238 / 245 ms, uniform 289 / 292 / 301 ms.
const STAIR_VEC_MAX: usize = 2048;

/// The (y, z) staircase of one front's rows met so far: the maximal (y, z) pairs, y
/// ascending and z strictly descending (ordered keys, not complemented); the staircase of
/// the non-dominated sweep, with this sweep's vector-to-tree threshold.
type Stair = Staircase<STAIR_VEC_MAX>;

/// d = 3 in O(n log n log F) for F fronts, the d = 2 sweep one dimension up. Rows go in
/// lexicographically descending order, so every dominator of a row comes before it and
/// copies of a row are neighbours; each front keeps the (y, z) staircase of its rows met so
/// far. Every row met before p has an x at least p's, so it dominates p iff its (y, z) is
/// at least p's and it is not a copy of p: "front k holds a dominator of p" is "front k's
/// staircase covers p's (y, z)" (copies are placed together, after the search). That
/// predicate is monotone in k (a dominator in front k has one in front k - 1, met earlier
/// still), so a binary search over the fronts finds the first that holds none: p's front,
/// as in Jensen's sweep for d = 2 (IEEE TEVC 2003), with the staircases of Kung, Luccio and
/// Preparata's maxima sweep (J. ACM 1975) in place of the last rows.
fn ranks3(c: &Canon) -> Vec<usize> {
    let mut order: Vec<([u64; 3], usize)> = (0..c.n)
        .map(|i| {
            let r = c.row(i);
            ([!ord_key(r[0]), !ord_key(r[1]), !ord_key(r[2])], i)
        })
        .collect();
    order.sort_unstable();
    let mut rank = vec![0; c.n];
    let mut fronts: Vec<Stair> = Vec::new();
    let mut g = 0;
    while g < order.len() {
        let key = order[g].0;
        let mut end = g + 1;
        while end < order.len() && order[end].0 == key {
            end += 1;
        }
        let (y, z) = (!key[1], !key[2]);
        let k = fronts.partition_point(|f| f.covers(y, z));
        if k == fronts.len() {
            fronts.push(Stair::Vec(Vec::new()));
        }
        fronts[k].insert_uncovered(y, z);
        for &(_, i) in &order[g..end] {
            rank[i] = k;
        }
        g = end;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::{brute, canonicalise, xorshift};
    use sweeper_goal::Direction::{Maximize, Minimize};

    /// Rows on a grid of `levels` values per column (every value when `levels` is 0), with
    /// a few `±inf` and `-0.0`, and some copies of earlier rows.
    fn rows(next: &mut impl FnMut() -> u64, n: usize, d: usize, levels: u64) -> Vec<f64> {
        let mut v: Vec<f64> = Vec::with_capacity(n * d);
        for i in 0..n {
            if i > 0 && next().is_multiple_of(8) {
                let j = (next() % i as u64) as usize;
                v.extend_from_within(j * d..(j + 1) * d);
                continue;
            }
            for _ in 0..d {
                let r = next();
                v.push(match r % 64 {
                    0 => f64::INFINITY,
                    1 => f64::NEG_INFINITY,
                    2 => -0.0,
                    _ if levels == 0 => (r >> 11) as f64 / (1u64 << 53) as f64,
                    _ => ((r >> 8) % levels) as f64,
                });
            }
        }
        v
    }

    #[test]
    fn every_path_matches_the_oracle() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for d in 1..=10 {
            for levels in [2, 3, 6, 40, 0] {
                for n in [0, 1, 2, 5, 60, 400] {
                    let data = rows(&mut next, n, d, levels);
                    let dirs: Vec<_> = (0..d)
                        .map(|j| if j % 3 == 1 { Minimize } else { Maximize })
                        .collect();
                    let c = canonicalise(&data, d, &dirs).unwrap();
                    let want = brute::ranks(&c);
                    assert_eq!(ranks(&c), want, "d {d} levels {levels} n {n}");
                    if d >= 3 {
                        // The tree handles d = 3 too (the sweep is faster there).
                        assert_eq!(tree::ranks(&c), want, "tree, d {d} levels {levels} n {n}");
                    }
                }
            }
        }
    }

    #[test]
    fn staircases_that_outgrow_the_vector_agree() {
        // Rows on anti-diagonals y + z = const in two x levels: every row extends its
        // front's staircase, which outgrows the vector and becomes a B-tree; the tree is
        // the second opinion.
        let n = 3 * STAIR_VEC_MAX;
        let mut v = Vec::with_capacity(3 * 3 * n);
        for i in 0..n {
            let (x, y, z) = ((i % 2) as f64, i as f64, (n - i) as f64);
            v.extend([x, y, z, x, y, z - 1.0, 0.0, y, z - 2.0]);
        }
        let c = canonicalise(&v, 3, &[Maximize; 3]).unwrap();
        let got = ranks3(&c);
        assert_eq!(got, tree::ranks(&c));
        assert!(got.iter().max() >= Some(&2));
    }
}
