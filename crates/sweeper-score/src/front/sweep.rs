//! Exact sort-and-sweep kernels for d = 1, 2, 3 over canonical (maximized) rows.
//!
//! d = 2 is the classic sort by x descending and sweep keeping the best y; d = 3 is Kung,
//! Luccio and Preparata's sweep (J. ACM 1975) with an ordered staircase of the (y, z) front
//! of the rows already passed. Both treat groups of equal x apart so that duplicates and
//! ties are kept exactly: a row is only beaten by a row that is at least as good everywhere
//! and differs from it.

use std::collections::BTreeMap;

use rayon::prelude::*;

/// An order-preserving map from a non-NaN `f64` (with `-0.0` already made `0.0`) to `u64`.
#[inline]
pub(crate) fn ord_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

/// Rows with their index, keyed so that ascending order is "every column descending,
/// lexicographically" (the order in which possible dominators come first).
fn sorted_desc<const D: usize>(pts: &[[f64; D]], par: bool) -> Vec<([u64; D], u32)> {
    let mut keyed: Vec<([u64; D], u32)> = pts
        .iter()
        .enumerate()
        .map(|(i, p)| (p.map(|x| !ord_key(x)), i as u32))
        .collect();
    if par {
        keyed.par_sort_unstable();
    } else {
        keyed.sort_unstable();
    }
    keyed
}

/// Below this many rows [`bucketed_desc`] sorts without buckets...
const BUCKET_MIN_ROWS: usize = 4096;
/// ...and above this many too. The buckets won where the scatter stays in the caches
/// (sphere 1e5 × 2, two threads, min of 3 × 20 calls: 4.6 -> 3.0 ms; 1e4 × 2 0.45 -> 0.35
/// ms); at 1e6 rows (final sort and the pass's local fronts of 125,000 rows) A/B runs in
/// both orders gave 0.8-1.2x, no clear answer, so larger inputs keep the plain sort.
const BUCKET_MAX_ROWS: usize = 100_000;

/// [`sorted_desc`] for d = 2, by buckets first. Rows are spread over n/4 buckets by where
/// x lies between the least and the greatest finite x (a monotone map, so the buckets are
/// in order; the infinities go to the end buckets), then each bucket is sorted. On data
/// that is not too skewed the buckets hold a few rows each, and the comparison sort of
/// every row (78% of sphere 1e5 × 2 in perf, where every row is on the front) becomes two
/// linear passes and many tiny sorts. A bucket that catches many rows is still sorted, so
/// skewed data costs O(n log n) as before.
fn bucketed_desc(pts: &[[f64; 2]], par: bool) -> Vec<([u64; 2], u32)> {
    let n = pts.len();
    let (lo, hi) = pts
        .iter()
        .map(|p| p[0])
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
    let span = hi - lo;
    let buckets_pay = (BUCKET_MIN_ROWS..=BUCKET_MAX_ROWS).contains(&n);
    if !(buckets_pay && span > 0.0 && span.is_finite()) {
        return sorted_desc(pts, par);
    }
    let buckets = n / 4;
    let scale = (buckets - 1) as f64 / span;
    // Bucket 0 holds the greatest x.
    let bucket = |x: f64| -> usize {
        let up = if x >= hi {
            buckets - 1
        } else if x <= lo {
            0
        } else {
            (((x - lo) * scale) as usize).min(buckets - 1)
        };
        buckets - 1 - up
    };
    let mut start = vec![0u32; buckets + 1];
    for p in pts {
        start[bucket(p[0]) + 1] += 1;
    }
    for b in 0..buckets {
        start[b + 1] += start[b];
    }
    let mut at = start.clone();
    let mut keyed = vec![([0u64; 2], 0u32); n];
    for (i, p) in pts.iter().enumerate() {
        let b = bucket(p[0]);
        keyed[at[b] as usize] = (p.map(|x| !ord_key(x)), i as u32);
        at[b] += 1;
    }
    for b in 0..buckets {
        let part = &mut keyed[start[b] as usize..start[b + 1] as usize];
        if part.len() > 1 {
            part.sort_unstable();
        }
    }
    keyed
}

/// d = 1: every row holding the maximum.
pub(crate) fn front1(v: &[f64]) -> Vec<usize> {
    let best = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (0..v.len()).filter(|&i| v[i] == best).collect()
}

/// d = 2, O(n log n). Returns a flag per row.
pub(crate) fn front2(pts: &[[f64; 2]], par: bool) -> Vec<bool> {
    let keyed = bucketed_desc(pts, par);
    let mut keep = vec![false; pts.len()];
    // Best y among rows with a strictly greater x.
    let mut best_before: Option<u64> = None;
    let mut g = 0;
    while g < keyed.len() {
        let x = keyed[g].0[0];
        let mut end = g + 1;
        while end < keyed.len() && keyed[end].0[0] == x {
            end += 1;
        }
        // Keys are complemented: the smallest key is the largest y.
        let top_y = keyed[g].0[1];
        if best_before.is_none_or(|b| top_y < b) {
            for item in &keyed[g..end] {
                if item.0[1] != top_y {
                    break;
                }
                keep[item.1 as usize] = true;
            }
            best_before = Some(top_y);
        }
        g = end;
    }
    keep
}

/// Above this many steps the staircase moves from a sorted vector to a B-tree (measured at
/// 1024, 4096 and 16384 on sphere 1e6 × 3: 291, 178–213 and 213 ms).
const STAIR_VEC_MAX: usize = 4096;

/// The (y, z) staircase of Kung's sweep: y ascending, z strictly descending. Small
/// staircases live in a sorted vector (a binary search and a short move beat a B-tree's
/// pointer chasing); large ones, above `VEC_MAX` steps, in a `BTreeMap`, so that the sweep
/// stays O(n log n). The ranks sweep (`ranks.rs`) keeps one per front, with its own
/// measured `VEC_MAX`.
pub(super) enum Staircase<const VEC_MAX: usize> {
    Vec(Vec<(u64, u64)>),
    Tree(BTreeMap<u64, u64>),
}

impl<const VEC_MAX: usize> Staircase<VEC_MAX> {
    /// Whether some stored (y', z') has y' >= y and z' >= z (keys are ordered, not
    /// complemented).
    #[inline]
    pub(super) fn covers(&self, y: u64, z: u64) -> bool {
        match self {
            Staircase::Vec(v) => {
                let k = v.partition_point(|e| e.0 < y);
                v.get(k).is_some_and(|e| e.1 >= z)
            }
            Staircase::Tree(map) => map.range(y..).next().is_some_and(|(_, &zz)| zz >= z),
        }
    }

    /// Adds (y, z), known not to be covered, dropping every entry it covers.
    pub(super) fn insert_uncovered(&mut self, y: u64, z: u64) {
        match self {
            Staircase::Vec(v) => {
                // Entries y' <= y with z' <= z form a run ending where y' > y begins.
                let end = v.partition_point(|e| e.0 <= y);
                let mut start = end;
                while start > 0 && v[start - 1].1 <= z {
                    start -= 1;
                }
                if start == end {
                    v.insert(end, (y, z));
                } else {
                    v[start] = (y, z);
                    v.drain(start + 1..end);
                }
                if v.len() > VEC_MAX {
                    *self = Staircase::Tree(v.iter().copied().collect());
                }
            }
            Staircase::Tree(map) => {
                while let Some((&yy, &zz)) = map.range(..=y).next_back() {
                    if zz > z {
                        break;
                    }
                    map.remove(&yy);
                }
                map.insert(y, z);
            }
        }
    }

    /// Adds (y, z) unless covered.
    fn insert(&mut self, y: u64, z: u64) {
        if !self.covers(y, z) {
            self.insert_uncovered(y, z);
        }
    }
    /// The entries, y ascending (z strictly descending).
    fn entries(&self) -> Vec<(u64, u64)> {
        match self {
            Staircase::Vec(v) => v.clone(),
            Staircase::Tree(map) => map.iter().map(|(&y, &z)| (y, z)).collect(),
        }
    }
}

/// Rows per parallel part of the d = 3 sweep, at least.
const SPLIT_MIN_ROWS: usize = 1 << 16;

/// d = 3, O(n log n). Returns a flag per row.
///
/// In parallel, the sorted rows are cut into one part per thread at boundaries between
/// groups of equal x; each part is swept on its own, and a row a part keeps survives if no
/// earlier part's staircase covers its (y, z): every row of an earlier part has a strictly
/// greater x, so such a row dominates it. (Kung's divide step, applied once.)
pub(crate) fn front3(pts: &[[f64; 3]], par: bool) -> Vec<bool> {
    let keyed = sorted_desc(pts, par);
    let n = keyed.len();
    let parts = if par {
        rayon::current_num_threads().min(n / SPLIT_MIN_ROWS)
    } else {
        1
    };
    let flags = if parts <= 1 {
        sweep3(&keyed).0
    } else {
        split_sweep3(&keyed, parts)
    };
    let mut keep = vec![false; n];
    for (item, flag) in keyed.iter().zip(flags) {
        keep[item.1 as usize] = flag;
    }
    keep
}

/// [`sweep3`]'s flags (in slice order) from `parts` parts swept in parallel.
fn split_sweep3(keyed: &[([u64; 3], u32)], parts: usize) -> Vec<bool> {
    let n = keyed.len();
    let mut bounds = vec![0];
    for c in 1..parts {
        let mut b = (c * n / parts).max(bounds[bounds.len() - 1]).max(1);
        while b < n && keyed[b].0[0] == keyed[b - 1].0[0] {
            b += 1;
        }
        if b > bounds[bounds.len() - 1] && b < n {
            bounds.push(b);
        }
    }
    bounds.push(n);
    let ranges: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    let swept: Vec<(Vec<bool>, Staircase<STAIR_VEC_MAX>)> = ranges
        .par_iter()
        .map(|&(a, b)| sweep3(&keyed[a..b]))
        .collect();
    // Part i is checked against the staircase of parts 0..i, built up in order.
    let mut running = Staircase::<STAIR_VEC_MAX>::Vec(Vec::new());
    let mut work = Vec::with_capacity(swept.len());
    for (flags, stair) in swept {
        // A sorted-vector copy: the parts query it in parallel by binary search.
        let before = Staircase::<STAIR_VEC_MAX>::Vec(running.entries());
        for (y, z) in stair.entries() {
            running.insert(y, z);
        }
        work.push((flags, before));
    }
    let flags: Vec<Vec<bool>> = work
        .into_par_iter()
        .zip(ranges.par_iter())
        .map(|((mut flags, before), &(a, _))| {
            for (k, f) in flags.iter_mut().enumerate() {
                let item = &keyed[a + k];
                if *f && before.covers(!item.0[1], !item.0[2]) {
                    *f = false;
                }
            }
            flags
        })
        .collect();
    flags.concat()
}

/// Kung's sweep over sorted rows: a flag per row in slice order, and the final staircase
/// (which covers the (y, z) of every row of the slice).
fn sweep3(keyed: &[([u64; 3], u32)]) -> (Vec<bool>, Staircase<STAIR_VEC_MAX>) {
    let mut keep = vec![false; keyed.len()];
    let mut stair = Staircase::<STAIR_VEC_MAX>::Vec(Vec::new());
    let mut g = 0;
    while g < keyed.len() {
        let x = keyed[g].0[0];
        let mut end = g + 1;
        while end < keyed.len() && keyed[end].0[0] == x {
            end += 1;
        }
        let group = &keyed[g..end];
        if group.len() == 1 {
            let (y, z) = (!group[0].0[1], !group[0].0[2]);
            if !stair.covers(y, z) {
                keep[g] = true;
                stair.insert_uncovered(y, z);
            }
        } else {
            // Within the group (same x) a 2-D front on (y, z); the group is sorted by y
            // then z, both descending. `best` is the best z among strictly greater y.
            let mut best: Option<u64> = None;
            let mut h = 0;
            while h < group.len() {
                let y = group[h].0[1];
                let mut e = h + 1;
                while e < group.len() && group[e].0[1] == y {
                    e += 1;
                }
                let top_z = group[h].0[2];
                if best.is_none_or(|b| top_z < b) {
                    let (oy, oz) = (!y, !top_z);
                    if !stair.covers(oy, oz) {
                        for (t, item) in group[h..e].iter().enumerate() {
                            if item.0[2] != top_z {
                                break;
                            }
                            keep[g + h + t] = true;
                        }
                    }
                    best = Some(top_z);
                }
                h = e;
            }
            // Only now, so that the group does not test against itself with `>=`.
            for (t, item) in group.iter().enumerate() {
                if keep[g + t] {
                    stair.insert(!item.0[1], !item.0[2]);
                }
            }
        }
        g = end;
    }
    (keep, stair)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_give_the_sorted_order() {
        // Uniform, a coarse grid (buckets of equal x), one far outlier (every other row in
        // one bucket), infinities and signed zeros, and a span that overflows (no
        // buckets): the order must be the full sort's, row for row.
        let mut next = crate::front::xorshift(0x5851_f42d_4c95_7f2d);
        let mut unit = move || (next() >> 11) as f64 / (1u64 << 53) as f64;
        for n in [4_000usize, 4_096, 5_000, 20_000, 100_000] {
            for case in 0..5 {
                let mut pts: Vec<[f64; 2]> = (0..n)
                    .map(|_| match case {
                        1 => [(unit() * 7.0).floor(), unit()],
                        _ => [unit(), unit()],
                    })
                    .collect();
                match case {
                    2 => pts[n / 3][0] = 1e300,
                    3 => {
                        for (k, p) in pts.iter_mut().enumerate().step_by(97) {
                            p[0] = [f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0][k % 4];
                        }
                    }
                    4 => {
                        pts[0][0] = f64::MAX;
                        pts[1][0] = -f64::MAX;
                    }
                    _ => {}
                }
                assert!(
                    bucketed_desc(&pts, false) == sorted_desc(&pts, false),
                    "n {n}, case {case}"
                );
            }
        }
    }

    #[test]
    fn split_sweep_matches_one_sweep() {
        // Coarse integer grids force long runs of equal x (which must not be cut), equal
        // (y, z) across parts, and duplicates; the sphere-like case keeps most rows.
        for (seed, levels) in [(1u64, 3u64), (2, 5), (3, 17), (4, 1000), (5, 1 << 40)] {
            let mut next =
                crate::front::xorshift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1));
            for n in [1usize, 2, 7, 64, 500, 3_000] {
                let pts: Vec<[f64; 3]> = (0..n)
                    .map(|_| std::array::from_fn(|_| (next() % levels) as f64))
                    .collect();
                let keyed = sorted_desc(&pts, false);
                let want = sweep3(&keyed).0;
                for parts in 2..=6 {
                    assert_eq!(
                        split_sweep3(&keyed, parts),
                        want,
                        "levels {levels} n {n} parts {parts}"
                    );
                }
            }
        }
    }
}
