//! O(n²) reference implementations: the oracles of the property suite and of
//! `cargo xtask check-frontier`. Correct for every input, fast for none.

use super::Canon;

/// Whether canonical (maximized) row `a` dominates canonical row `b`.
pub(crate) fn dominates_max(a: &[f64], b: &[f64]) -> bool {
    let mut strictly = false;
    for (x, y) in a.iter().zip(b) {
        if x < y {
            return false;
        }
        if x > y {
            strictly = true;
        }
    }
    strictly
}

/// Non-dominated rows by comparing every pair.
pub(crate) fn nondominated(c: &Canon) -> Vec<usize> {
    (0..c.n)
        .filter(|&i| !(0..c.n).any(|j| dominates_max(c.row(j), c.row(i))))
        .collect()
}

/// Front numbers by peeling: front 0 is the non-dominated set, front k the non-dominated
/// set of what remains after removing fronts 0..k.
pub(crate) fn ranks(c: &Canon) -> Vec<usize> {
    let mut rank = vec![usize::MAX; c.n];
    let mut left: Vec<usize> = (0..c.n).collect();
    let mut level = 0;
    while !left.is_empty() {
        let front: Vec<usize> = left
            .iter()
            .copied()
            .filter(|&i| !left.iter().any(|&j| dominates_max(c.row(j), c.row(i))))
            .collect();
        for &i in &front {
            rank[i] = level;
        }
        left.retain(|&i| rank[i] == usize::MAX);
        level += 1;
    }
    rank
}

/// Dominated hypervolume by cutting space into the grid of all coordinates and summing
/// the cells covered by some point. `reference` is canonical (maximized). O(n^(d+1)).
pub(crate) fn hypervolume(c: &Canon, reference: &[f64]) -> f64 {
    let d = c.d;
    let pts: Vec<&[f64]> = (0..c.n)
        .map(|i| c.row(i))
        .filter(|p| p.iter().zip(reference).all(|(x, r)| x > r))
        .collect();
    if pts.is_empty() {
        return 0.0;
    }
    // Per column the sorted distinct coordinates, starting at the reference.
    let grids: Vec<Vec<f64>> = (0..d)
        .map(|j| {
            let mut g: Vec<f64> = pts.iter().map(|p| p[j]).collect();
            g.push(reference[j]);
            g.sort_by(f64::total_cmp);
            g.dedup();
            g
        })
        .collect();
    let mut cell = vec![0usize; d];
    let mut total = 0.0;
    loop {
        // The cell spans grids[j][cell[j]] .. grids[j][cell[j] + 1] in every column j.
        let upper: Vec<f64> = (0..d).map(|j| grids[j][cell[j] + 1]).collect();
        if pts
            .iter()
            .any(|p| p.iter().zip(&upper).all(|(x, u)| x >= u))
        {
            let mut vol = 1.0;
            for j in 0..d {
                vol *= grids[j][cell[j] + 1] - grids[j][cell[j]];
            }
            total += vol;
        }
        // Next cell, odometer style.
        let mut j = 0;
        loop {
            if j == d {
                return total;
            }
            cell[j] += 1;
            if cell[j] + 1 < grids[j].len() {
                break;
            }
            cell[j] = 0;
            j += 1;
        }
    }
}
