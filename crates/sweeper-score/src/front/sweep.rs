//! Exact sort-and-sweep kernels for d = 1, 2, 3 over canonical (maximized) rows.
//!
//! d = 2 is the classic sort by x descending and sweep keeping the best y; d = 3 is Kung,
//! Luccio and Preparata's sweep (J. ACM 1975) with an ordered staircase of the (y, z) front
//! of the rows already passed. Both treat groups of equal x apart so that duplicates and
//! ties are kept exactly: a row is only beaten by a row that is at least as good everywhere
//! and differs from it.

use std::collections::BTreeMap;

use rayon::slice::ParallelSliceMut;

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

/// d = 1: every row holding the maximum.
pub(crate) fn front1(v: &[f64]) -> Vec<usize> {
    let best = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (0..v.len()).filter(|&i| v[i] == best).collect()
}

/// d = 2, O(n log n). Returns a flag per row.
pub(crate) fn front2(pts: &[[f64; 2]], par: bool) -> Vec<bool> {
    let keyed = sorted_desc(pts, par);
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

/// The (y, z) staircase of Kung's sweep: keys ascending in y, values strictly descending in z.
struct Staircase {
    map: BTreeMap<u64, u64>,
}

impl Staircase {
    /// Whether some stored (y', z') has y' >= y and z' >= z (keys are ordered, not
    /// complemented).
    fn covers(&self, y: u64, z: u64) -> bool {
        self.map.range(y..).next().is_some_and(|(_, &zz)| zz >= z)
    }

    /// Adds (y, z) unless covered, dropping every entry it covers.
    fn insert(&mut self, y: u64, z: u64) {
        if self.covers(y, z) {
            return;
        }
        while let Some((&yy, &zz)) = self.map.range(..=y).next_back() {
            if zz > z {
                break;
            }
            self.map.remove(&yy);
        }
        self.map.insert(y, z);
    }
}

/// d = 3, O(n log n). Returns a flag per row.
pub(crate) fn front3(pts: &[[f64; 3]], par: bool) -> Vec<bool> {
    let keyed = sorted_desc(pts, par);
    let mut keep = vec![false; pts.len()];
    let mut stair = Staircase {
        map: BTreeMap::new(),
    };
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
                keep[group[0].1 as usize] = true;
                stair.insert(y, z);
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
                        for item in &group[h..e] {
                            if item.0[2] != top_z {
                                break;
                            }
                            keep[item.1 as usize] = true;
                        }
                    }
                    best = Some(top_z);
                }
                h = e;
            }
            // Only now, so that the group does not test against itself with `>=`.
            for item in group {
                if keep[item.1 as usize] {
                    stair.insert(!item.0[1], !item.0[2]);
                }
            }
        }
        g = end;
    }
    keep
}
