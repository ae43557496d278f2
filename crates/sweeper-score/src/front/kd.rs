//! Exact fronts for any d by static k-d tree dominance queries, plus a sort-filter-skyline
//! for small inputs and for dimensions without a monomorphised kernel.
//!
//! Every row asks the tree "is there a row at least as good everywhere that differs from
//! me?"; a subtree is entered only when its bounding box's upper corner is at least the
//! query everywhere, and answered at once when its lower corner already dominates the query.
//! The queries are independent, so they run in parallel. The idea of bounding-box pruning
//! of dominance queries follows the ND-tree of Jaszkiewicz and Lust (IEEE TEVC 2018);
//! the tree here is a plain median-split k-d tree built once over all rows.

use rayon::prelude::*;

use super::simd::{Lanes, multiversion};
use super::sweep::ord_key;
use super::window::Window;

/// Rows per leaf.
const LEAF: usize = 16;

/// Whether canonical `a` dominates canonical `b`.
#[inline]
pub(crate) fn dom<const D: usize>(a: &[f64; D], b: &[f64; D]) -> bool {
    let mut ge = true;
    let mut gt = false;
    for j in 0..D {
        ge &= a[j] >= b[j];
        gt |= a[j] > b[j];
    }
    ge && gt
}

/// A static k-d tree over canonical rows, nodes in heap order (root 1, children 2k, 2k+1).
struct Tree<const D: usize> {
    /// Rows in tree order.
    pts: Vec<[f64; D]>,
    /// Per node its upper corner.
    hi: Vec<[f64; D]>,
    /// Per node its lower corner.
    lo: Vec<[f64; D]>,
}

/// Reorders `idx[..]` into median-split order (the split column being the widest).
fn arrange<const D: usize>(pts: &[[f64; D]], idx: &mut [u32], par: bool) {
    if idx.len() <= LEAF {
        return;
    }
    let mut lo = [f64::INFINITY; D];
    let mut hi = [f64::NEG_INFINITY; D];
    for &i in idx.iter() {
        let p = &pts[i as usize];
        for j in 0..D {
            lo[j] = lo[j].min(p[j]);
            hi[j] = hi[j].max(p[j]);
        }
    }
    let mut axis = 0;
    let mut width = f64::NEG_INFINITY;
    for j in 0..D {
        // With infinite bounds the width is inf or NaN; NaN never wins, which is fine.
        let w = hi[j] - lo[j];
        if w > width {
            width = w;
            axis = j;
        }
    }
    let mid = idx.len() / 2;
    idx.select_nth_unstable_by(mid, |&a, &b| {
        pts[a as usize][axis].total_cmp(&pts[b as usize][axis])
    });
    let (left, right) = idx.split_at_mut(mid);
    if par && left.len() > 50_000 {
        rayon::join(|| arrange(pts, left, par), || arrange(pts, right, par));
    } else {
        arrange(pts, left, false);
        arrange(pts, right, false);
    }
}

impl<const D: usize> Tree<D> {
    fn build(pts: &[[f64; D]], idx: &mut [u32], par: bool) -> Self {
        arrange(pts, idx, par);
        let tp: Vec<[f64; D]> = if par {
            idx.par_iter().map(|&i| pts[i as usize]).collect()
        } else {
            idx.iter().map(|&i| pts[i as usize]).collect()
        };
        let mut tree = Tree {
            pts: tp,
            hi: Vec::new(),
            lo: Vec::new(),
        };
        if !tree.pts.is_empty() {
            tree.boxes(1, 0, tree.pts.len());
        }
        tree
    }

    /// Fills the boxes of node `k` covering rows `a..b`; returns them.
    fn boxes(&mut self, k: usize, a: usize, b: usize) -> ([f64; D], [f64; D]) {
        if self.hi.len() <= k {
            self.hi.resize(2 * k + 2, [0.0; D]);
            self.lo.resize(2 * k + 2, [0.0; D]);
        }
        let (lo, hi) = if b - a <= LEAF {
            let mut lo = [f64::INFINITY; D];
            let mut hi = [f64::NEG_INFINITY; D];
            for p in &self.pts[a..b] {
                for j in 0..D {
                    lo[j] = lo[j].min(p[j]);
                    hi[j] = hi[j].max(p[j]);
                }
            }
            (lo, hi)
        } else {
            let m = a + (b - a) / 2;
            let (l1, h1) = self.boxes(2 * k, a, m);
            let (l2, h2) = self.boxes(2 * k + 1, m, b);
            let mut lo = l1;
            let mut hi = h1;
            for j in 0..D {
                lo[j] = lo[j].min(l2[j]);
                hi[j] = hi[j].max(h2[j]);
            }
            (lo, hi)
        };
        self.lo[k] = lo;
        self.hi[k] = hi;
        (lo, hi)
    }

    /// Whether some row of the tree dominates `q`.
    fn dominated(&self, q: &[f64; D]) -> bool {
        let mut stack: Vec<(usize, usize, usize)> = Vec::with_capacity(64);
        stack.push((1, 0, self.pts.len()));
        while let Some((k, a, b)) = stack.pop() {
            let hi = &self.hi[k];
            if !(0..D).all(|j| hi[j] >= q[j]) {
                continue;
            }
            if dom(&self.lo[k], q) {
                return true;
            }
            if b - a <= LEAF {
                if self.pts[a..b].iter().any(|p| dom(p, q)) {
                    return true;
                }
            } else {
                let m = a + (b - a) / 2;
                // The right half holds the larger values of the split column: try it first.
                stack.push((2 * k, a, m));
                stack.push((2 * k + 1, m, b));
            }
        }
        false
    }
}

/// Exact front by tree queries. Returns a flag per row.
pub(crate) fn front_tree<const D: usize>(pts: &[[f64; D]], par: bool) -> Vec<bool> {
    let n = pts.len();
    let mut idx: Vec<u32> = (0..n as u32).collect();
    let tree = Tree::build(pts, &mut idx, par);
    let flags: Vec<bool> = if par {
        tree.pts
            .par_iter()
            .with_min_len(256)
            .map(|q| !tree.dominated(q))
            .collect()
    } else {
        tree.pts.iter().map(|q| !tree.dominated(q)).collect()
    };
    let mut keep = vec![false; n];
    for (t, &i) in idx.iter().enumerate() {
        keep[i as usize] = flags[t];
    }
    keep
}

multiversion! {
    /// Sort-filter-skyline over const-D rows (see [`front_sfs_dyn`]); gives up (`None`) once
    /// the front passes `max_front` rows, where the tree is the better tool.
    pub(crate) fn front_sfs<const D: usize>(pts: &[[f64; D]], max_front: usize) -> Option<Vec<bool>>
        => sfs_body;
}

/// The body of [`front_sfs`], built once per instruction-set level.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "built again inside each `multiversion!` wrapper"
)]
fn sfs_body<const D: usize, L: Lanes>(
    lanes: L,
    pts: &[[f64; D]],
    max_front: usize,
) -> Option<Vec<bool>> {
    // Descending key as an ascending integer (the key is never NaN), ties by index for now.
    let mut order: Vec<(u64, u32)> = pts
        .iter()
        .enumerate()
        .map(|(i, p)| (!ord_key(mono_key(p) + 0.0), i as u32))
        .collect();
    order.sort_unstable();
    // Equal keys: lexicographically descending, so that a dominator still comes first.
    let mut a = 0;
    while a < order.len() {
        let mut b = a + 1;
        while b < order.len() && order[b].0 == order[a].0 {
            b += 1;
        }
        if b - a > 1 {
            order[a..b].sort_by(|x, y| {
                let (px, py) = (&pts[x.1 as usize], &pts[y.1 as usize]);
                (0..D)
                    .map(|j| py[j].total_cmp(&px[j]))
                    .find(|o| o.is_ne())
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        }
        a = b;
    }
    let mut keep = vec![false; pts.len()];
    let mut window = Window::<D>::with_capacity(64);
    for &(_, i) in &order {
        let p = &pts[i as usize];
        if window.first_dominator(lanes, p).is_none() {
            if window.len() == max_front {
                return None;
            }
            keep[i as usize] = true;
            window.push(p);
        }
    }
    Some(keep)
}

/// A sort key that never decreases from a row to a row that dominates it: the sum of the
/// values clamped to finite, each scaled by `1/d` (rounding is monotone, so is the sum).
#[inline]
pub(crate) fn mono_key(p: &[f64]) -> f64 {
    let s = 1.0 / p.len() as f64;
    p.iter().map(|&x| x.clamp(f64::MIN, f64::MAX) * s).sum()
}

/// Sort-filter-skyline (Chomicki et al., ICDE 2003) for any d over a flat row-major buffer:
/// rows by [`mono_key`] descending (ties lexicographically descending), so that every
/// dominator comes first, each checked against the front found so far. Flag per row.
pub(crate) fn front_sfs_dyn(v: &[f64], d: usize) -> Vec<bool> {
    let n = v.len() / d;
    let row = |i: usize| &v[i * d..(i + 1) * d];
    let mut order: Vec<(f64, usize)> = (0..n).map(|i| (mono_key(row(i)), i)).collect();
    order.sort_unstable_by(|a, b| {
        b.0.total_cmp(&a.0).then_with(|| {
            let (ra, rb) = (row(a.1), row(b.1));
            ra.iter()
                .zip(rb)
                .map(|(x, y)| y.total_cmp(x))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        })
    });
    let mut keep = vec![false; n];
    let mut window: Vec<usize> = Vec::new();
    for &(_, i) in &order {
        let p = row(i);
        let beaten = window
            .iter()
            .any(|&w| super::brute::dominates_max(row(w), p));
        if !beaten {
            keep[i] = true;
            window.push(i);
        }
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::SimdLevel;

    /// The brute-force front of canonical rows, a flag per row.
    fn brute<const D: usize>(pts: &[[f64; D]]) -> Vec<bool> {
        pts.iter().map(|p| !pts.iter().any(|q| dom(q, p))).collect()
    }

    /// Rows of small integers summing to a constant (so none dominates another, apart from
    /// duplicates, which both stay), with every 7th row lowered by one in its first column
    /// (dominated by its unlowered twin, if that twin exists) and a few `-inf`.
    fn cloud<const D: usize>(n: usize) -> Vec<[f64; D]> {
        let mut next = crate::front::xorshift(0x9e37_79b9_7f4a_7c15);
        let mut rows: Vec<[f64; D]> = (0..n)
            .map(|_| {
                let mut r = [0.0; D];
                let mut left = 40u64;
                for x in r.iter_mut().take(D - 1) {
                    let v = next() % (left + 1);
                    *x = v as f64;
                    left -= v;
                }
                r[D - 1] = left as f64;
                r
            })
            .collect();
        for (i, r) in rows.iter_mut().enumerate() {
            if i % 7 == 0 {
                r[0] -= 1.0;
            }
            if i % 401 == 0 {
                r[i % D] = f64::NEG_INFINITY;
            }
        }
        rows
    }

    fn check<const D: usize>(n: usize) {
        let pts = cloud::<D>(n);
        let want = brute(&pts);
        let front = want.iter().filter(|k| **k).count();
        // The tree must get inputs whose front outgrows the sorted filter's budget.
        assert!(front > 1300, "front {front} of {n}");
        for par in [false, true] {
            assert_eq!(front_tree(&pts, par), want, "tree, d = {D}, par {par}");
        }
        for level in SimdLevel::ALL {
            assert_eq!(
                front_sfs(level, &pts, usize::MAX),
                Some(want.clone()),
                "{level:?}"
            );
            assert_eq!(front_sfs(level, &pts, front - 1), None, "{level:?}");
        }
        assert_eq!(
            crate::front::exact::<D>(&pts, false, SimdLevel::Baseline),
            want
        );
    }

    #[test]
    fn tree_and_sorted_filter_agree_with_brute_force_on_large_fronts() {
        check::<4>(2_500);
        check::<5>(2_500);
    }
}
