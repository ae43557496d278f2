//! Exact dominated hypervolume over canonical (maximized) rows and a canonical reference.
//!
//! d = 2: sort by x descending and add the new strip of every row that raises the best y.
//! d = 3: sweep z downwards while keeping the area of the (x, y) staircase up to date, each
//! insertion adding exactly the area it newly covers (the O(n log n) scheme of Beume,
//! Fonseca, López-Ibáñez, Paquete and Vahrenhold, IEEE TEVC 2009). d >= 4: slice along the
//! last column and sum slab thickness times the (d-1)-dimensional volume of the rows above,
//! down to the 3-D sweep ("hypervolume by slicing objectives", While et al. 2006).
//! Differences of equal values are taken as 0 and products with a zero factor as 0, so that
//! infinite coordinates give an infinite volume and never a NaN.

use std::collections::BTreeMap;

use super::sweep::ord_key;

/// `a - b` for `a >= b`, exactly 0 when they are equal (also for two infinities).
#[inline]
fn span(a: f64, b: f64) -> f64 {
    if a == b { 0.0 } else { a - b }
}

/// `w * h`, 0 when either is 0 (also for an infinite other factor).
#[inline]
fn area(w: f64, h: f64) -> f64 {
    if w == 0.0 || h == 0.0 { 0.0 } else { w * h }
}

/// Rows strictly better than `r` in every column, flat.
fn above(v: &[f64], d: usize, r: &[f64]) -> Vec<f64> {
    v.chunks_exact(d)
        .filter(|p| p.iter().zip(r).all(|(x, y)| x > y))
        .flatten()
        .copied()
        .collect()
}

/// Hypervolume of canonical rows `v` (row-major, d columns) against canonical `r`.
pub(crate) fn hypervolume(v: &[f64], d: usize, r: &[f64]) -> f64 {
    let pts = above(v, d, r);
    match d {
        1 => pts
            .iter()
            .copied()
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
            .map_or(0.0, |m| span(m, r[0])),
        2 => hv2(&pts, r),
        3 => hv3(&pts, r),
        _ => hv_slice(&pts, d, r),
    }
}

fn hv2(pts: &[f64], r: &[f64]) -> f64 {
    let mut rows: Vec<[f64; 2]> = pts.chunks_exact(2).map(|p| [p[0], p[1]]).collect();
    rows.sort_unstable_by(|a, b| b[0].total_cmp(&a[0]).then(b[1].total_cmp(&a[1])));
    let mut best = r[1];
    let mut total = 0.0;
    for p in rows {
        if p[1] > best {
            total += area(span(p[0], r[0]), span(p[1], best));
            best = p[1];
        }
    }
    total
}

/// The (x, y) staircase of the 3-D sweep with its covered area.
struct Stair {
    /// x key -> (x, y); x ascending, y strictly descending.
    map: BTreeMap<u64, (f64, f64)>,
    rx: f64,
    ry: f64,
    area: f64,
}

impl Stair {
    fn insert(&mut self, px: f64, py: f64) {
        let kx = ord_key(px);
        if self.map.range(kx..).next().is_some_and(|(_, e)| e.1 >= py) {
            return;
        }
        // The height already covered just right of px.
        let mut floor = self
            .map
            .range(kx + 1..)
            .next()
            .map_or(self.ry, |(_, e)| e.1);
        let mut right = px;
        let mut added = 0.0;
        loop {
            let Some((&k, &(ex, ey))) = self.map.range(..=kx).next_back() else {
                added += area(span(right, self.rx), span(py, floor));
                break;
            };
            if ey > py {
                added += area(span(right, ex), span(py, floor));
                break;
            }
            added += area(span(right, ex), span(py, floor));
            floor = ey;
            right = ex;
            self.map.remove(&k);
        }
        self.map.insert(kx, (px, py));
        self.area += added;
    }
}

fn hv3(pts: &[f64], r: &[f64]) -> f64 {
    let mut rows: Vec<[f64; 3]> = pts.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
    rows.sort_unstable_by(|a, b| b[2].total_cmp(&a[2]));
    let mut stair = Stair {
        map: BTreeMap::new(),
        rx: r[0],
        ry: r[1],
        area: 0.0,
    };
    let mut total = 0.0;
    let mut z_prev = f64::NAN;
    for p in rows {
        if !z_prev.is_nan() {
            total += area(stair.area, span(z_prev, p[2]));
        }
        stair.insert(p[0], p[1]);
        z_prev = p[2];
    }
    if !z_prev.is_nan() {
        total += area(stair.area, span(z_prev, r[2]));
    }
    total
}

fn hv_slice(pts: &[f64], d: usize, r: &[f64]) -> f64 {
    let n = pts.len() / d;
    if n == 0 {
        return 0.0;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by(|&a, &b| pts[b * d + d - 1].total_cmp(&pts[a * d + d - 1]));
    let mut total = 0.0;
    let mut slab: Vec<f64> = Vec::with_capacity(n * (d - 1));
    let mut k = 0;
    while k < n {
        let z = pts[order[k] * d + d - 1];
        while k < n && pts[order[k] * d + d - 1] == z {
            slab.extend_from_slice(&pts[order[k] * d..order[k] * d + d - 1]);
            k += 1;
        }
        let below = if k < n {
            pts[order[k] * d + d - 1]
        } else {
            r[d - 1]
        };
        let thick = span(z, below);
        if thick != 0.0 {
            // Only the front of the slab matters; keeping it small keeps the recursion cheap.
            let front = front_rows(&slab, d - 1);
            slab = front;
            total += area(hypervolume(&slab, d - 1, &r[..d - 1]), thick);
        }
    }
    total
}

/// The non-dominated rows of a flat canonical buffer, flat.
fn front_rows(v: &[f64], d: usize) -> Vec<f64> {
    let keep = super::exact_dyn(v, d);
    v.chunks_exact(d)
        .zip(keep)
        .filter(|(_, k)| *k)
        .flat_map(|(p, _)| p.iter().copied())
        .collect()
}
