//! Non-dominated sorting for any d by a k-d tree that answers, for each row in turn, "the
//! greatest front among the rows placed so far that dominate this one".
//!
//! Rows go in lexicographically descending order, so that every dominator of a row comes
//! before it (a dominator is at least as good everywhere and better somewhere, hence
//! lexicographically greater), and copies of a row are neighbours. A row's front is one
//! more than the greatest front among its dominators (0 without any), so placing the rows
//! in that order settles every front as soon as its row is met; copies are placed
//! together, after their query, so that they never count as each other's dominators.
//!
//! The rows placed before p all have a first column at least p's, so "q dominates p" is
//! "q is at least p in the other d - 1 columns" (q is not a copy of p). The tree holds
//! those d - 1 columns of every distinct row as dense ranks per column (dominance only
//! compares values within a column, so ranks give the same fronts, and the work no longer
//! depends on the columns' scales: see `dense_ranks`). It is built once over all of them
//! (median splits, the column turning with the depth), but each node keeps the box and
//! the greatest front of its *placed* rows only, so that the boxes hug what has been
//! placed. A query prunes a
//! subtree whose box misses the orthant above p or whose greatest front does not beat the
//! best found so far, takes a subtree whose box lies inside the orthant whole, and starts
//! at p's own leaf (the dominators of greatest front lie next to p: found early, their
//! front prunes most of the tree). The max-front bookkeeping per node follows the k-d
//! tree dominance queries of `kd.rs`; answering a maximum instead of a yes/no is what
//! makes one query per row enough, where ENS-style sorts (Zhang, Tian, Cheng and Jin,
//! IEEE TEVC 2015) search over the fronts.
//!
//! # Cost
//!
//! With k = d - 1 tree columns and m <= n distinct rows: the lexicographic sort, the k
//! column rankings and the build are O(k n log n). A query expands only nodes whose box
//! of placed rows is neither outside nor inside the orthant above p; such a box (inside
//! its node's cell) straddles one of the k hyperplanes `x_j = p_j`. With median splits
//! whose column turns with the depth, a hyperplane of column j enters one child of every
//! node split on j and both children of the others, so it straddles O(m^(1 - 1/k)) cells
//! (the classical k-d tree range bound; ties at a split value do not break it, since the
//! query's orthant is closed). The worst case is therefore O(k n m^(1 - 1/k)) node tests,
//! O(n^(5/3)) for d = 4 and O(n^(7/4)) for d = 5: below peeling's O(F n log n) only as
//! long as fronts are many, but bounded whatever the data, independent of the number of
//! fronts and of how the values are spread within a column. The pruning by front does
//! far better on the benchmark clouds: node tests and scanned points per row, 1e5 / 1e6
//! rows (uniform), and 1e6 rows (correlated, anticorrelated):
//!
//! | d | uniform 1e5 | uniform 1e6 | correlated 1e6 | anticorrelated 1e6 |
//! |---|---|---|---|---|
//! | 4 | 95 + 75 | 163 + 142 | 104 + 106 | 49 + 30 |
//! | 5 | 152 + 123 | 328 + 272 | 167 + 187 | 66 + 21 |
//!
//! What grows faster than the visits is their cost: at 1e6 rows the nodes (4 MB) and
//! points (16 MB) no longer fit in cache and consecutive queries (by the first column)
//! land in unrelated leaves, so most visits are cache misses; uniform × 4 takes about 90
//! times as long at 1e6 as at 1e5 for 17 times the visits.
//!
//! Before the ranks, the tree split the widest column of raw values and kept `f32` boxes
//! rounded outwards: one column scaled by 1e9 made every split fall on that column, and
//! values within `f32` resolution of each other (1 + 1e-9 u) made every box straddle every
//! query. Uniform 1e5 × 4 (40 fronts), with column 1 scaled by 1e9 and with columns 1 to 3
//! squeezed to 1 + 1e-9 u, two alternating runs each on the loaded machine (load 14 on 2
//! cores): before 0.38-0.44 s, 13.9-15.0 s and 17.5-28.2 s; with ranks 0.47-0.58 s,
//! 0.41 s and 0.21-0.32 s, the same node visits for all three.
//!
//! Measured against the alternatives on 1e6 rows (uniform / correlated / anticorrelated,
//! × 4 columns; min of three runs on the shared 2-core machine, so ±30%):
//!
//! - peeling with the exact front kernel (what d >= 3 did before): 19 s / 223 s / 2.6 s;
//!   this tree: 3.5 s / 1.7 s / 1.0 s. Peeling pays a kernel call over every row left per
//!   front, so its cost follows the number of fronts (74 / 321 / 7 here).
//! - peeling with the full front kernel (pruning pass, two threads) while fronts are large,
//!   then this tree: faster only on all-front data at 1e6 rows (sphere 1e6 × 4: 0.78
//!   against 1.13 s), slower at 1e5 (anticorrelated 1e5 × 4: 86 against 59 ms); not kept.
//! - ENS with a binary search over the fronts and per front a plain list of the rows no
//!   later row of that front covers: 21 s / 5.9 s / over 100 s (the lists grow to
//!   thousands of rows). With a dynamic k-d tree per front (ENS-NDT, Gustavsson and
//!   Syberfeldt, Evol. Comput. 2018): 8.4 s / 2.9 s / 11.9 s, the trees unbalanced by the
//!   sorted insertions.
//! - this tree built over the rows in Z order (a linear extension of dominance too, for
//!   locality): twice the node visits, 10 s / 4.5 s / 3.3 s.
//! - The divide and conquer of Jensen, Fortin et al. and Buzdalov and Shalyto is
//!   O(n log^(d-1) n): at n = 1e6 about 20³/6 ≈ 1,300 sweep steps per row for d = 4 and
//!   20⁴/24 ≈ 6,700 for d = 5, against this tree's ~200 and ~380 node visits; not tried.

use std::cmp::Ordering;

use rayon::prelude::*;

use crate::front::Canon;
use crate::front::sweep::ord_key;

/// Rows per leaf. Measured on 1e6 rows × 4 and 5 columns (uniform, correlated and
/// anticorrelated, min of three runs): 4 and 64 lost up to 20% against 16 and 32, which
/// were within noise of each other.
const LEAF: usize = 16;

/// Front numbers of canonical rows (d >= 3).
///
/// # Panics
///
/// With 2^32 rows or more (at d >= 4 that is 128 GiB of input): rows and points are
/// numbered in `u32`, half the memory traffic of `usize`.
pub(super) fn ranks(c: &Canon) -> Vec<usize> {
    assert!(
        u32::try_from(c.n).is_ok(),
        "nondominated_ranks: {} rows; d >= 4 takes fewer than 2^32",
        c.n
    );
    match c.d {
        3 => run::<2>(c),
        4 => run::<3>(c),
        5 => run::<4>(c),
        6 => run::<5>(c),
        7 => run::<6>(c),
        8 => run::<7>(c),
        _ => run::<0>(c),
    }
}

/// The tree's dimension: `K`, or `k` when `K` is 0 (one body for the monomorphised and the
/// run-time dimensions; the compiler folds the constant).
#[inline(always)]
#[allow(clippy::inline_always, reason = "only folds a constant")]
fn dim<const K: usize>(k: usize) -> usize {
    if K == 0 { k } else { K }
}

/// Rows in lexicographically descending order, as groups of equal rows: the row indices in
/// that order, and where each group starts (plus a final `n`).
fn lex_groups(c: &Canon) -> (Vec<u32>, Vec<u32>) {
    let d = c.d;
    let mut keyed: Vec<(u64, u32)> = (0..c.n).map(|i| (!ord_key(c.v[i * d]), i as u32)).collect();
    let rest = |i: u32| &c.v[i as usize * d + 1..(i as usize + 1) * d];
    // Descending in the later columns on ties of the first; no NaN here, and -0.0 is
    // already 0.0, so `total_cmp` is the numeric order.
    let later = |a: u32, b: u32| -> Ordering {
        for (x, y) in rest(a).iter().zip(rest(b)) {
            match y.total_cmp(x) {
                Ordering::Equal => {}
                o => return o,
            }
        }
        Ordering::Equal
    };
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| later(a.1, b.1)));
    let mut starts = Vec::new();
    for k in 0..keyed.len() {
        if k == 0 || keyed[k - 1].0 != keyed[k].0 || later(keyed[k - 1].1, keyed[k].1).is_ne() {
            starts.push(k as u32);
        }
    }
    starts.push(keyed.len() as u32);
    (keyed.into_iter().map(|(_, i)| i).collect(), starts)
}

/// Per column the dense rank of each of the `m` points of `pts` (`k` values each): the
/// number of distinct smaller values in that column, same layout. Dominance only compares
/// values, so the ranks give every row the same front; the tree over them is the same for
/// any strictly increasing map of a column (a column scaled by 1e9, or values that differ
/// below `f32` resolution, cost nothing more), and its boxes are exact in 4 bytes.
fn dense_ranks(pts: &[f64], k: usize) -> Vec<u32> {
    let m = pts.len() / k;
    let column = |j: usize| -> Vec<u32> {
        let mut keyed: Vec<(u64, u32)> = (0..m)
            .map(|i| (ord_key(pts[i * k + j]), i as u32))
            .collect();
        keyed.sort_unstable();
        let mut rank = vec![0u32; m];
        let mut r = 0;
        for t in 0..m {
            if t > 0 && keyed[t - 1].0 != keyed[t].0 {
                r += 1;
            }
            rank[keyed[t].1 as usize] = r;
        }
        rank
    };
    let cols: Vec<Vec<u32>> = if m >= PAR_RANK_MIN {
        (0..k).into_par_iter().map(column).collect()
    } else {
        (0..k).map(column).collect()
    };
    let mut out = vec![0u32; m * k];
    for (j, col) in cols.iter().enumerate() {
        for (i, &r) in col.iter().enumerate() {
            out[i * k + j] = r;
        }
    }
    out
}

/// From this many points on the columns are ranked in parallel (a rayon round costs tens
/// of microseconds, a column of 1e4 points about a millisecond).
const PAR_RANK_MIN: usize = 1 << 14;

/// Reorders `idx` into median-split order over `pts` (`k` ranks each), the split column
/// turning with the depth; `scratch` holds (rank, index) pairs packed in a `u64`, so that
/// the selection compares contiguous keys instead of gathering them from `pts`.
///
/// Turning columns, not the widest one (what the tree did over raw values): the widest in
/// ranks measured the same (1e5 and 1e6 rows × 4 and 5 columns, uniform, correlated and
/// anticorrelated, within the noise of alternating runs), and only turning columns bound a
/// query's work (see the module docs).
fn arrange(pts: &[u32], k: usize, depth: usize, idx: &mut [u32], scratch: &mut Vec<u64>) {
    if idx.len() <= LEAF {
        return;
    }
    let axis = depth % k;
    scratch.clear();
    scratch.extend(
        idx.iter()
            .map(|&i| u64::from(pts[i as usize * k + axis]) << 32 | u64::from(i)),
    );
    let mid = idx.len() / 2;
    scratch.select_nth_unstable(mid);
    for (slot, &v) in idx.iter_mut().zip(scratch.iter()) {
        *slot = v as u32;
    }
    let (left, right) = idx.split_at_mut(mid);
    arrange(pts, k, depth + 1, left, scratch);
    arrange(pts, k, depth + 1, right, scratch);
}

/// `u32` values per node: `2k + 1` rounded up to 8 (32 bytes: a sibling pair shares a
/// 64-byte line for k <= 3) or a multiple of 16.
fn stride(k: usize) -> usize {
    let v = 2 * k + 1;
    if v <= 8 { 8 } else { v.next_multiple_of(16) }
}

/// A static k-d tree over the distinct rows' last d - 1 columns, nodes in heap order (root
/// 1, children 2j and 2j + 1), with per node the box and greatest front of its placed rows.
struct Tree<const K: usize> {
    /// Columns per point (d - 1).
    k: usize,
    /// Points in tree order, `k` column ranks each.
    pts: Vec<u32>,
    /// Per point its front + 1, 0 until placed.
    front: Vec<u32>,
    /// Per node [`stride`] values from `base` on: the lower and the upper corner of its
    /// placed points (ranks, exact) and their greatest front + 1 (0: none yet); one cache
    /// line per visit.
    node: Vec<u32>,
    /// Where node 0 starts in `node`: a 64-byte boundary.
    base: usize,
    /// The stack of [`Tree::search`]: (node, its points, its greatest front + 1).
    stack: Vec<(u32, u32, u32, u32)>,
}

impl<const K: usize> Tree<K> {
    /// The tree over `pts` (`k` values each); `slot[i]` is where point `i` went.
    fn build(pts: &[u32], k: usize) -> (Self, Vec<u32>) {
        let m = pts.len() / k;
        let mut idx: Vec<u32> = (0..m as u32).collect();
        arrange(pts, k, 0, &mut idx, &mut Vec::with_capacity(m));
        let mut tp = Vec::with_capacity(pts.len());
        let mut slot = vec![0u32; m];
        for (s, &i) in idx.iter().enumerate() {
            tp.extend_from_slice(&pts[i as usize * k..(i as usize + 1) * k]);
            slot[i as usize] = s as u32;
        }
        let mut tree = Tree {
            k,
            pts: tp,
            front: vec![0; m],
            node: Vec::new(),
            base: 0,
            stack: Vec::with_capacity(64),
        };
        let nodes = if m > 0 { last_node(1, 0, m) + 1 } else { 0 };
        let st = stride(k);
        tree.node = vec![0; nodes * st + 16];
        // Only the address's remainder is read: where the first 64-byte boundary lies.
        tree.base = (64 - tree.node.as_ptr() as usize % 64) % 64 / 4;
        let base = tree.base;
        for c in tree.node[base..].chunks_exact_mut(st) {
            c[..k].fill(u32::MAX);
            c[k..2 * k].fill(0);
            c[2 * k] = 0;
        }
        (tree, slot)
    }

    /// The nodes from the root down to point `s`'s leaf, each with its points; returns
    /// the leaf's depth. Computed, not stored: a lookup per level would cost a cache miss
    /// at each of the lower levels, the arithmetic costs none.
    fn path(&self, s: usize, path: &mut [(u32, u32, u32); 34]) -> usize {
        let (mut node, mut a, mut b) = (1, 0, self.front.len());
        let mut depth = 0;
        path[0] = (1, 0, b as u32);
        while b - a > LEAF {
            let mid = a + (b - a) / 2;
            if s < mid {
                (node, b) = (2 * node, mid);
            } else {
                (node, a) = (2 * node + 1, mid);
            }
            depth += 1;
            path[depth] = (node as u32, a as u32, b as u32);
        }
        depth
    }

    /// Node `node`'s values.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "the innermost loop's load")]
    fn nd(&self, node: usize) -> &[u32] {
        let st = stride(dim::<K>(self.k));
        &self.node[self.base + node * st..self.base + (node + 1) * st]
    }

    /// The greatest front + 1 among placed points at least point `s` in every column (0:
    /// none). The search starts at `s`'s own leaf and widens one sibling subtree at a time.
    fn query(&mut self, s: usize, p: &mut Vec<u32>) -> u32 {
        let k = dim::<K>(self.k);
        p.clear();
        p.extend_from_slice(&self.pts[s * k..(s + 1) * k]);
        let mut path = [(0, 0, 0); 34];
        let depth = self.path(s, &mut path);
        let (_, a, b) = path[depth];
        let mut found = self.scan(a as usize, b as usize, p, 0);
        for i in (1..=depth).rev() {
            let (node, _, _) = path[i];
            let (_, pa, pb) = path[i - 1];
            let mid = pa + (pb - pa) / 2;
            let (a, b) = if node % 2 == 0 { (mid, pb) } else { (pa, mid) };
            found = self.search(node ^ 1, a, b, p, found);
        }
        found
    }

    /// The greatest of `found` and the fronts + 1 of the placed points `a..b` at least `p`.
    #[inline]
    fn scan(&self, a: usize, b: usize, p: &[u32], mut found: u32) -> u32 {
        let k = dim::<K>(self.k);
        let p = &p[..k];
        for s in a..b {
            let q = &self.pts[s * k..(s + 1) * k];
            let mut ge = true;
            for j in 0..k {
                ge &= q[j] >= p[j];
            }
            // Unplaced points have 0, which never beats `found`.
            let f = self.front[s];
            if ge && f > found {
                found = f;
            }
        }
        found
    }

    /// How node `node` meets the orthant above `p`: `None` when it cannot raise `found`
    /// (none of its placed points beats `found`, or its box misses the orthant), else
    /// whether its box lies inside the orthant (so that each of its placed points dominates
    /// `p`), and its greatest front + 1.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "the innermost loop")]
    fn test(&self, node: usize, p: &[u32], found: u32) -> Option<(bool, u32)> {
        let k = dim::<K>(self.k);
        let nd = self.nd(node);
        let best = nd[2 * k];
        // Branch-free: the outcome is hard to predict.
        let mut outside = best <= found;
        let mut inside = true;
        for j in 0..k {
            outside |= nd[k + j] < p[j];
            inside &= nd[j] >= p[j];
        }
        (!outside).then_some((inside, best))
    }

    /// [`Tree::query`] within the subtree of `root` (points `a..b`), from `found`.
    fn search(&mut self, root: u32, a: u32, b: u32, p: &[u32], mut found: u32) -> u32 {
        let k = dim::<K>(self.k);
        let p = &p[..k];
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        match self.test(root as usize, p, found) {
            None => {}
            Some((true, best)) => found = best,
            Some((false, best)) => stack.push((root, a, b, best)),
        }
        // Children are tested before they are stacked: siblings are neighbours in memory.
        while let Some((node, a, b, best)) = stack.pop() {
            if best <= found {
                continue;
            }
            if (b - a) as usize <= LEAF {
                found = self.scan(a as usize, b as usize, p, found);
                continue;
            }
            let mid = a + (b - a) / 2;
            let left = self.test(2 * node as usize, p, found);
            let right = self.test(2 * node as usize + 1, p, found);
            for (inside, best) in [left, right].into_iter().flatten() {
                if inside {
                    found = found.max(best);
                }
            }
            // The lower half (smaller values of the split column) lies nearer to p,
            // where the greatest fronts are: pop it first.
            if let Some((false, best)) = right {
                stack.push((2 * node + 1, mid, b, best));
            }
            if let Some((false, best)) = left {
                stack.push((2 * node, a, mid, best));
            }
        }
        self.stack = stack;
        found
    }

    /// Places point `s` in front `f - 1`.
    fn place(&mut self, s: usize, f: u32) {
        let k = dim::<K>(self.k);
        let st = stride(k);
        self.front[s] = f;
        let mut path = [(0, 0, 0); 34];
        let depth = self.path(s, &mut path);
        for &(node, _, _) in path[..=depth].iter().rev() {
            let node = node as usize;
            let at = self.base + node * st;
            let (pts, nd) = (&self.pts[s * k..(s + 1) * k], &mut self.node[at..at + st]);
            let mut grew = nd[2 * k] < f;
            nd[2 * k] = nd[2 * k].max(f);
            for j in 0..k {
                let v = pts[j];
                grew |= v < nd[j] || v > nd[k + j];
                nd[j] = nd[j].min(v);
                nd[k + j] = nd[k + j].max(v);
            }
            // A node that already held the box and the front holds them for its ancestors.
            if !grew {
                break;
            }
        }
    }
}

/// The greatest node number in the subtree of `node` over points `a..b`.
fn last_node(node: usize, a: usize, b: usize) -> usize {
    if b - a <= LEAF {
        node
    } else {
        let mid = a + (b - a) / 2;
        last_node(2 * node, a, mid).max(last_node(2 * node + 1, mid, b))
    }
}

/// Front numbers through the tree; `K` is d - 1 (0: given at run time).
fn run<const K: usize>(c: &Canon) -> Vec<usize> {
    let d = c.d;
    let k = d - 1;
    let (order, starts) = lex_groups(c);
    let groups = starts.len() - 1;
    let mut pts = Vec::with_capacity(groups * k);
    for w in starts.windows(2) {
        let i = order[w[0] as usize] as usize;
        pts.extend_from_slice(&c.v[i * d + 1..(i + 1) * d]);
    }
    let pts = dense_ranks(&pts, k);
    let (mut tree, slot) = Tree::<K>::build(&pts, k);
    drop(pts);
    let mut rank = vec![0; c.n];
    let mut p = Vec::with_capacity(k);
    for (g, w) in starts.windows(2).enumerate() {
        let s = slot[g] as usize;
        let f = tree.query(s, &mut p);
        tree.place(s, f + 1);
        for &i in &order[w[0] as usize..w[1] as usize] {
            rank[i as usize] = f as usize;
        }
    }
    rank
}
