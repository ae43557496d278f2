//! Exact hypervolume of a small point set in 2-D and 3-D (minimization, points that do
//! not dominate the reference contribute nothing).

/// Hypervolume of `points` (2 or 3 objectives, minimized) against `reference`.
pub(super) fn hypervolume(points: &[Vec<f64>], reference: &[f64]) -> f64 {
    let inside: Vec<&Vec<f64>> = points
        .iter()
        .filter(|p| p.iter().zip(reference).all(|(a, r)| a < r))
        .collect();
    match reference.len() {
        2 => hv2(
            inside.iter().map(|p| (p[0], p[1])).collect(),
            reference[0],
            reference[1],
        ),
        3 => hv3(&inside, reference),
        d => unreachable!("hypervolume in {d} dimensions is not needed here"),
    }
}

/// 2-D: sort by the first objective, keep the staircase of new minima of the second, and
/// add each step's strip up to the next step (or the reference).
fn hv2(mut pts: Vec<(f64, f64)>, r0: f64, r1: f64) -> f64 {
    pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut front: Vec<(f64, f64)> = Vec::new();
    for &(x, y) in &pts {
        if front.last().is_none_or(|&(_, fy)| y < fy) {
            front.push((x, y));
        }
    }
    front
        .iter()
        .enumerate()
        .map(|(i, &(x, y))| (front.get(i + 1).map_or(r0, |p| p.0) - x) * (r1 - y))
        .sum()
}

/// 3-D: slice along the third objective; each slab's area is a 2-D hypervolume.
fn hv3(pts: &[&Vec<f64>], r: &[f64]) -> f64 {
    let mut order: Vec<&Vec<f64>> = pts.to_vec();
    order.sort_by(|a, b| a[2].total_cmp(&b[2]));
    let mut vol = 0.0;
    for i in 0..order.len() {
        let z = order[i][2];
        let z_next = order.get(i + 1).map_or(r[2], |p| p[2]);
        if z_next <= z {
            continue;
        }
        let slab: Vec<(f64, f64)> = order[..=i].iter().map(|p| (p[0], p[1])).collect();
        vol += hv2(slab, r[0], r[1]) * (z_next - z);
    }
    vol
}

#[cfg(test)]
mod tests {
    use super::hypervolume;

    #[test]
    fn small_cases_by_hand() {
        let r = [4.0, 4.0];
        assert_eq!(
            hypervolume(&[vec![1.0, 3.0], vec![3.0, 1.0]], &r),
            3.0 + 3.0 - 1.0
        );
        assert_eq!(hypervolume(&[vec![5.0, 1.0]], &r), 0.0);
        let r3 = [2.0, 2.0, 2.0];
        assert_eq!(hypervolume(&[vec![1.0, 1.0, 1.0]], &r3), 1.0);
        let v = hypervolume(
            &[
                vec![0.0, 1.0, 1.0],
                vec![1.0, 0.0, 1.0],
                vec![1.0, 1.0, 0.0],
            ],
            &r3,
        );
        // union of three 2x1x1 boxes overlapping in the unit cube [1,2]^3... by inclusion-exclusion
        assert!((v - (3.0 * 2.0 - 3.0 * 1.0 + 1.0)).abs() < 1e-12, "{v}");
    }
}
