//! Dense lower-triangular kernels for the Gaussian process (row-packed: row `i` holds
//! `i + 1` entries). Sizes here are a few hundred at most, so plain loops suffice; the
//! multi-right-hand-side solve runs along contiguous rows so that it vectorizes.

/// `Σ a_k b_k` in four interleaved partial sums: a sequential sum cannot vectorize (each
/// addition waits for the last), four independent ones can; the Cholesky factor of a
/// refit, whose inner loop this is, ran ~3× faster at 150 observations.
#[inline]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 4];
    let mut ca = a.chunks_exact(4);
    let mut cb = b.chunks_exact(4);
    for (x, y) in ca.by_ref().zip(cb.by_ref()) {
        for t in 0..4 {
            acc[t] += x[t] * y[t];
        }
    }
    let mut s = (acc[0] + acc[2]) + (acc[1] + acc[3]);
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        s += x * y;
    }
    s
}

/// Cholesky factor of the symmetric matrix `a` (full row-major `n × n`, lower part read),
/// with `jitter` added to the diagonal; `None` when not positive definite.
pub(super) fn cholesky(a: &[f64], n: usize, jitter: f64) -> Option<Vec<Vec<f64>>> {
    let mut l: Vec<Vec<f64>> = Vec::with_capacity(n);
    for i in 0..n {
        let mut row = vec![0.0; i + 1];
        for j in 0..=i {
            let lj = if j < i { &l[j] } else { &row };
            let s = a[i * n + j] - dot(&row[..j], &lj[..j]);
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
        let s = b[i] - dot(&row[..i], &b[..i]);
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
            let li = &l[i][..i];
            // four earlier rows at a time: one load and store of `bi` per four updates
            // instead of per update (the loop was bound by them: ~1.5× faster at 150 rows)
            let mut k = 0;
            while k + 4 <= i {
                let (l0, l1, l2, l3) = (li[k], li[k + 1], li[k + 2], li[k + 3]);
                let r0 = &done[k * m + c0..k * m + c1];
                let r1 = &done[(k + 1) * m + c0..(k + 1) * m + c1];
                let r2 = &done[(k + 2) * m + c0..(k + 2) * m + c1];
                let r3 = &done[(k + 3) * m + c0..(k + 3) * m + c1];
                for ((((x, a), b1), c), d) in bi.iter_mut().zip(r0).zip(r1).zip(r2).zip(r3) {
                    *x -= (l0 * a + l1 * b1) + (l2 * c + l3 * d);
                }
                k += 4;
            }
            for (kk, &lik) in li.iter().enumerate().skip(k) {
                let bk = &done[kk * m + c0..kk * m + c1];
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

    /// Sizes that leave remainders in every unrolled loop (37 rows: 4-way chunks and a
    /// tail; 300 columns: a block of 256 and a partial one).
    #[test]
    fn unrolled_kernels_agree_with_the_definitions() {
        let n = 37;
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        // A = M Mᵀ + n I is symmetric positive definite
        let mm: Vec<f64> = (0..n * n).map(|_| next()).collect();
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = (0..n).map(|k| mm[i * n + k] * mm[j * n + k]).sum::<f64>()
                    + if i == j { n as f64 } else { 0.0 };
            }
        }
        let l = cholesky(&a, n, 0.0).expect("positive definite");
        for i in 0..n {
            for j in 0..=i {
                let llt: f64 = (0..=j).map(|k| l[i][k] * l[j][k]).sum();
                assert!((llt - a[i * n + j]).abs() < 1e-9, "({i}, {j})");
            }
        }
        let m = 300;
        let b: Vec<f64> = (0..n * m).map(|_| next()).collect();
        let mut many = b.clone();
        forward_many(&l, &mut many, m);
        for c in 0..m {
            let mut col: Vec<f64> = (0..n).map(|i| b[i * m + c]).collect();
            forward(&l, &mut col);
            for i in 0..n {
                assert!(
                    (col[i] - many[i * m + c]).abs() < 1e-12,
                    "row {i} column {c}"
                );
            }
        }
        assert_eq!(dot(&[1.0, 2.0, 3.0, 4.0, 5.0], &[1.0; 5]), 15.0);
        assert_eq!(dot(&[], &[]), 0.0);
    }
}
