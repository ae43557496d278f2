//! Dense lower-triangular kernels for the Gaussian process (row-packed: row `i` holds
//! `i + 1` entries). Sizes here are a few hundred at most, so plain loops suffice; the
//! multi-right-hand-side solve runs along contiguous rows so that it vectorizes.

/// Cholesky factor of the symmetric matrix `a` (full row-major `n × n`, lower part read),
/// with `jitter` added to the diagonal; `None` when not positive definite.
pub(super) fn cholesky(a: &[f64], n: usize, jitter: f64) -> Option<Vec<Vec<f64>>> {
    let mut l: Vec<Vec<f64>> = Vec::with_capacity(n);
    for i in 0..n {
        let mut row = vec![0.0; i + 1];
        for j in 0..=i {
            let lj = if j < i { &l[j] } else { &row };
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= row[k] * lj[k];
            }
            if i == j {
                let d = s + jitter;
                if d <= 0.0 || !d.is_finite() {
                    return None;
                }
                row[j] = d.sqrt();
            } else {
                row[j] = s / l[j][j];
            }
        }
        l.push(row);
    }
    Some(l)
}

/// Solves `L x = b` in place.
pub(super) fn forward(l: &[Vec<f64>], b: &mut [f64]) {
    for i in 0..l.len() {
        let row = &l[i];
        let mut s = b[i];
        for k in 0..i {
            s -= row[k] * b[k];
        }
        b[i] = s / row[i];
    }
}

/// Solves `Lᵀ x = b` in place.
pub(super) fn backward(l: &[Vec<f64>], b: &mut [f64]) {
    for i in (0..l.len()).rev() {
        let bi = b[i] / l[i][i];
        b[i] = bi;
        for k in 0..i {
            b[k] -= l[i][k] * bi;
        }
    }
}

/// Solves `L X = B` in place for `B` of `l.len()` rows of `m` columns (row-major), in
/// blocks of columns so that the working set stays in cache.
pub(super) fn forward_many(l: &[Vec<f64>], b: &mut [f64], m: usize) {
    const BLOCK: usize = 256;
    let mut c0 = 0;
    while c0 < m {
        let c1 = (c0 + BLOCK).min(m);
        for i in 0..l.len() {
            let (done, rest) = b.split_at_mut(i * m);
            let bi = &mut rest[c0..c1];
            for (k, &lik) in l[i][..i].iter().enumerate() {
                let bk = &done[k * m + c0..k * m + c1];
                for (x, y) in bi.iter_mut().zip(bk) {
                    *x -= lik * y;
                }
            }
            let inv = 1.0 / l[i][i];
            for x in bi.iter_mut() {
                *x *= inv;
            }
        }
        c0 = c1;
    }
}

/// The inverse of `L Lᵀ`, full row-major.
pub(super) fn inverse(l: &[Vec<f64>]) -> Vec<f64> {
    let n = l.len();
    // Z = L^{-1}, lower triangular, row by row: row i = (e_i − Σ_{k<i} L[i][k]·row k) / L[i][i];
    // row k is zero beyond column k, so each update touches k + 1 entries.
    let mut z = vec![0.0; n * n];
    for i in 0..n {
        let (done, rest) = z.split_at_mut(i * n);
        let zi = &mut rest[..=i];
        zi[i] = 1.0;
        for (k, &lik) in l[i][..i].iter().enumerate() {
            let zk = &done[k * n..=k * n + k];
            for (x, y) in zi.iter_mut().zip(zk) {
                *x -= lik * y;
            }
        }
        let inv = 1.0 / l[i][i];
        for x in zi.iter_mut() {
            *x *= inv;
        }
    }
    let mut out = vec![0.0; n * n];
    for k in 0..n {
        let zk = &z[k * n..=k * n + k];
        for i in 0..=k {
            let zki = zk[i];
            if zki == 0.0 {
                continue;
            }
            let row = &mut out[i * n..=i * n + i];
            for (o, &zkj) in row.iter_mut().zip(&zk[..=i]) {
                *o += zki * zkj;
            }
        }
    }
    for i in 0..n {
        for j in 0..i {
            out[j * n + i] = out[i * n + j];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_and_inverts_a_small_spd_matrix() {
        let a = [4.0, 2.0, 0.6, 2.0, 5.0, 1.0, 0.6, 1.0, 3.0];
        let l = cholesky(&a, 3, 0.0).unwrap();
        let mut x = vec![1.0, 2.0, 3.0];
        forward(&l, &mut x);
        backward(&l, &mut x);
        for i in 0..3 {
            let ax: f64 = (0..3).map(|j| a[i * 3 + j] * x[j]).sum();
            assert!((ax - [1.0, 2.0, 3.0][i]).abs() < 1e-12);
        }
        let inv = inverse(&l);
        for i in 0..3 {
            for j in 0..3 {
                let e: f64 = (0..3).map(|k| a[i * 3 + k] * inv[k * 3 + j]).sum();
                assert!((e - f64::from(u8::from(i == j))).abs() < 1e-12);
            }
        }
        assert!(cholesky(&[1.0, 2.0, 2.0, 1.0], 2, 0.0).is_none());
    }
}
