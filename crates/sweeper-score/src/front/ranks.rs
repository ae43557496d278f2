//! Non-dominated sorting: per row the number of its front.

use super::{Canon, flagged, sweep::ord_key};

/// Front numbers of canonical rows.
pub(crate) fn ranks(c: &Canon) -> Vec<usize> {
    if c.d == 2 {
        return ranks2(c);
    }
    // Peel: the front of what is left, with the fast kernel, until nothing is left.
    let mut rank = vec![0; c.n];
    let mut left: Vec<usize> = (0..c.n).collect();
    let mut level = 0;
    while !left.is_empty() {
        let sub: Vec<f64> = left
            .iter()
            .flat_map(|&i| c.row(i).iter().copied())
            .collect();
        let keep = super::exact_dyn(&sub, c.d);
        for k in flagged(&keep) {
            rank[left[k]] = level;
        }
        let mut k = 0;
        left.retain(|_| {
            k += 1;
            !keep[k - 1]
        });
        level += 1;
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
