//! A Gaussian process with an ARD Matérn-5/2 kernel, its hyperparameters fitted by
//! maximizing the marginal likelihood (plus weak log-normal priors) with projected L-BFGS.
//!
//! Ideas from the GP-bandit of OSS Vizier (Matérn-5/2 ARD, priors on the log-lengthscales,
//! multi-start hyperparameter fit) and the textbook of Rasmussen & Williams (algorithm 2.1,
//! gradient of the marginal likelihood, eq. 5.9); written here.
//!
//! Hyperparameters `θ = [log amplitude, log noise variance, log lengthscale_1..d]`.

use super::linalg;
use crate::rng::Rng;

const SQRT5: f64 = 2.236_067_977_499_79;
const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// Bounds of `θ` (per position: amplitude, noise, lengthscales).
const AMP_BOUNDS: (f64, f64) = (-4.0, 3.0);
const NOISE_BOUNDS: (f64, f64) = (-13.8, 0.0);
const LS_BOUNDS: (f64, f64) = (-4.6, 3.0);
/// Prior means and standard deviations (log space).
const AMP_PRIOR: (f64, f64) = (0.0, 1.0);
const NOISE_PRIOR: (f64, f64) = (-6.9, 2.0);
/// Standard deviation of the log-lengthscale prior; its mean is the fit's
/// [`FitCaps::ls_mean`].
const LS_PRIOR_SD: f64 = 1.0;
/// The usual mean of the log-lengthscale prior (lengthscale 0.5 of the unit cube).
pub(super) const LS_MEAN: f64 = -0.7;
/// A long one (lengthscale 1.65), for the default algorithm's hedge member (see its
/// `HEDGE_UNTIL`).
pub(super) const LONG_LS_MEAN: f64 = 0.5;

/// Work caps of one fit.
#[derive(Debug, Clone, Copy)]
pub(super) struct FitCaps {
    /// L-BFGS iterations from a cold start.
    pub(super) cold_iters: usize,
    /// L-BFGS iterations from the previous fit.
    pub(super) warm_iters: usize,
    /// Random restarts, used only while the data set is small.
    pub(super) restarts: usize,
    /// Data size up to which the restarts run.
    pub(super) restart_below: usize,
    /// Mean of the log-lengthscale prior ([`LS_MEAN`] or [`LONG_LS_MEAN`]).
    pub(super) ls_mean: f64,
}

fn bounds(d: usize) -> (Vec<f64>, Vec<f64>) {
    let mut lo = vec![AMP_BOUNDS.0, NOISE_BOUNDS.0];
    let mut hi = vec![AMP_BOUNDS.1, NOISE_BOUNDS.1];
    lo.extend(std::iter::repeat_n(LS_BOUNDS.0, d));
    hi.extend(std::iter::repeat_n(LS_BOUNDS.1, d));
    (lo, hi)
}

/// The prior-mode hyperparameters.
pub(super) fn default_theta(d: usize, ls_mean: f64) -> Vec<f64> {
    let mut t = vec![AMP_PRIOR.0, NOISE_PRIOR.0];
    t.extend(std::iter::repeat_n(ls_mean, d));
    t
}

fn matern(s: f64, amp: f64) -> (f64, f64) {
    // s = r², returns (k, amp·5/3·(1+√5 r)·e^{-√5 r}) — the second is dk/dlogℓ per Δ²/ℓ².
    let r = s.sqrt();
    let e = (-SQRT5 * r).exp();
    let k = amp * (1.0 + SQRT5 * r + 5.0 / 3.0 * s) * e;
    (k, amp * 5.0 / 3.0 * (1.0 + SQRT5 * r) * e)
}

/// Pairwise squared differences per feature, for `i < j`, packed.
struct Pairs {
    n: usize,
    d: usize,
    sq: Vec<f64>,
}

impl Pairs {
    fn new(x: &[f64], n: usize, d: usize) -> Self {
        let mut sq = Vec::with_capacity(n * n.saturating_sub(1) / 2 * d);
        for i in 0..n {
            for j in 0..i {
                for k in 0..d {
                    let t = x[i * d + k] - x[j * d + k];
                    sq.push(t * t);
                }
            }
        }
        Pairs { n, d, sq }
    }
}

/// Negative log marginal likelihood plus negative log prior, and its gradient.
fn objective(p: &Pairs, y: &[f64], theta: &[f64], ls_mean: f64) -> (f64, Vec<f64>) {
    let (n, d) = (p.n, p.d);
    let amp = theta[0].exp();
    let noise = theta[1].exp();
    let inv_ls2: Vec<f64> = theta[2..].iter().map(|t| (-2.0 * t).exp()).collect();
    let mut k = vec![0.0; n * n];
    let mut g = vec![0.0; n * (n.saturating_sub(1)) / 2];
    let mut idx = 0;
    for i in 0..n {
        for j in 0..i {
            let sq = &p.sq[idx * d..(idx + 1) * d];
            let s: f64 = sq.iter().zip(&inv_ls2).map(|(a, b)| a * b).sum();
            let (kv, gv) = matern(s, amp);
            k[i * n + j] = kv;
            g[idx] = gv;
            idx += 1;
        }
        k[i * n + i] = amp + noise;
    }
    let mut jitter = 0.0;
    let l = loop {
        if let Some(l) = linalg::cholesky(&k, n, jitter) {
            break l;
        }
        jitter = if jitter == 0.0 {
            1e-9 * amp
        } else {
            jitter * 10.0
        };
        if jitter > amp {
            return (f64::INFINITY, vec![0.0; theta.len()]);
        }
    };
    let mut alpha = y.to_vec();
    linalg::forward(&l, &mut alpha);
    let fit: f64 = alpha.iter().map(|a| a * a).sum();
    linalg::backward(&l, &mut alpha);
    let logdet: f64 = l.iter().enumerate().map(|(i, r)| r[i].ln()).sum::<f64>() * 2.0;
    let lml = -0.5 * fit - 0.5 * logdet - 0.5 * n as f64 * LN_2PI;
    let kinv = linalg::inverse(&l);
    // W = ααᵀ − K⁻¹; dL/dθ = ½ tr(W ∂K/∂θ)
    let mut grad = vec![0.0; theta.len()];
    let mut g_amp = 0.0;
    let mut g_noise = 0.0;
    let mut g_ls = vec![0.0; d];
    idx = 0;
    for i in 0..n {
        for j in 0..i {
            let w = alpha[i] * alpha[j] - kinv[i * n + j];
            g_amp += 2.0 * w * k[i * n + j];
            let wg = 2.0 * w * g[idx];
            let sq = &p.sq[idx * d..(idx + 1) * d];
            for ((gl, s), il) in g_ls.iter_mut().zip(sq).zip(&inv_ls2) {
                *gl += wg * s * il;
            }
            idx += 1;
        }
        let w = alpha[i] * alpha[i] - kinv[i * n + i];
        g_amp += w * amp;
        g_noise += w * noise;
    }
    grad[0] = 0.5 * g_amp;
    grad[1] = 0.5 * g_noise;
    for (k, gl) in g_ls.iter().enumerate() {
        grad[2 + k] = 0.5 * gl;
    }
    // log priors
    let mut lp = 0.0;
    for (i, t) in theta.iter().enumerate() {
        let (m, s) = match i {
            0 => AMP_PRIOR,
            1 => NOISE_PRIOR,
            _ => (ls_mean, LS_PRIOR_SD),
        };
        let z = (t - m) / s;
        lp -= 0.5 * z * z;
        grad[i] -= z / s;
    }
    (-(lml + lp), grad.into_iter().map(|x| -x).collect())
}

/// Projected L-BFGS with Armijo backtracking; at most `iters` iterations.
fn minimize(
    f: &mut impl FnMut(&[f64]) -> (f64, Vec<f64>),
    x0: &[f64],
    lo: &[f64],
    hi: &[f64],
    iters: usize,
) -> (Vec<f64>, f64) {
    const MEM: usize = 6;
    let dim = x0.len();
    let clamp = |x: &mut Vec<f64>| {
        for ((v, a), b) in x.iter_mut().zip(lo).zip(hi) {
            *v = v.clamp(*a, *b);
        }
    };
    let mut x = x0.to_vec();
    clamp(&mut x);
    let (mut fx, mut gx) = f(&x);
    if !fx.is_finite() {
        return (x, fx);
    }
    let mut s_hist: Vec<Vec<f64>> = Vec::new();
    let mut y_hist: Vec<Vec<f64>> = Vec::new();
    for _ in 0..iters {
        // two-loop recursion
        let mut q = gx.clone();
        let mut alphas = Vec::with_capacity(s_hist.len());
        for (s, y) in s_hist.iter().zip(&y_hist).rev() {
            let rho = 1.0 / dot(y, s);
            let a = rho * dot(s, &q);
            for (qi, yi) in q.iter_mut().zip(y) {
                *qi -= a * yi;
            }
            alphas.push((a, rho));
        }
        if let (Some(s), Some(y)) = (s_hist.last(), y_hist.last()) {
            let gamma = dot(s, y) / dot(y, y);
            for qi in &mut q {
                *qi *= gamma;
            }
        }
        for ((s, y), (a, rho)) in s_hist.iter().zip(&y_hist).zip(alphas.into_iter().rev()) {
            let b = rho * dot(y, &q);
            for (qi, si) in q.iter_mut().zip(s) {
                *qi += (a - b) * si;
            }
        }
        let mut dir: Vec<f64> = q.iter().map(|v| -v).collect();
        // freeze coordinates at a bound that the step would push outwards
        for i in 0..dim {
            if (x[i] <= lo[i] && dir[i] < 0.0) || (x[i] >= hi[i] && dir[i] > 0.0) {
                dir[i] = 0.0;
            }
        }
        if dot(&dir, &gx) >= 0.0 {
            if s_hist.is_empty() {
                break;
            }
            s_hist.clear();
            y_hist.clear();
            continue;
        }
        let mut t = if s_hist.is_empty() {
            (1.0 / dir.iter().map(|v| v.abs()).fold(0.0, f64::max)).min(1.0)
        } else {
            1.0
        };
        let mut accepted = None;
        for _ in 0..20 {
            let mut xn: Vec<f64> = x.iter().zip(&dir).map(|(a, b)| a + t * b).collect();
            clamp(&mut xn);
            let step: Vec<f64> = xn.iter().zip(&x).map(|(a, b)| a - b).collect();
            let (fnew, gnew) = f(&xn);
            if fnew.is_finite() && fnew <= fx + 1e-4 * dot(&gx, &step) {
                accepted = Some((xn, fnew, gnew, step));
                break;
            }
            t *= 0.5;
        }
        let Some((xn, fnew, gnew, step)) = accepted else {
            if s_hist.is_empty() {
                break;
            }
            s_hist.clear();
            y_hist.clear();
            continue;
        };
        let yv: Vec<f64> = gnew.iter().zip(&gx).map(|(a, b)| a - b).collect();
        let converged = (fx - fnew).abs() <= 1e-9 * fx.abs().max(1.0);
        if dot(&yv, &step) > 1e-12 {
            s_hist.push(step);
            y_hist.push(yv);
            if s_hist.len() > MEM {
                s_hist.remove(0);
                y_hist.remove(0);
            }
        }
        x = xn;
        fx = fnew;
        gx = gnew;
        if converged {
            break;
        }
    }
    (x, fx)
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Fits `θ` to standardized outputs `y` at inputs `x` (`n × d`, row-major): from the
/// previous fit `warm` when given, else from the prior mode, plus random restarts while
/// `n` is small. Returns the best `θ` found; the work is bounded by `caps`.
pub(super) fn fit(
    x: &[f64],
    n: usize,
    d: usize,
    y: &[f64],
    warm: Option<&[f64]>,
    rng: &mut Rng,
    caps: FitCaps,
) -> Vec<f64> {
    let pairs = Pairs::new(x, n, d);
    let (lo, hi) = bounds(d);
    let mut f = |t: &[f64]| objective(&pairs, y, t, caps.ls_mean);
    let mut starts: Vec<(Vec<f64>, usize)> = Vec::new();
    match warm {
        Some(w) if w.len() == d + 2 => {
            starts.push((w.to_vec(), caps.warm_iters));
            if n <= caps.restart_below {
                starts.push((default_theta(d, caps.ls_mean), caps.cold_iters));
            }
        }
        _ => starts.push((default_theta(d, caps.ls_mean), caps.cold_iters)),
    }
    if n <= caps.restart_below {
        for _ in 0..caps.restarts {
            let mut t = vec![rng.uniform() * 2.0 - 1.0, -10.0 + 7.0 * rng.uniform()];
            t.extend((0..d).map(|_| -3.0 + 4.0 * rng.uniform()));
            starts.push((t, caps.cold_iters));
        }
    }
    let mut best: Option<(Vec<f64>, f64)> = None;
    for (t0, iters) in starts {
        let (t, v) = minimize(&mut f, &t0, &lo, &hi, iters);
        if best
            .as_ref()
            .is_none_or(|(_, bv)| v < *bv || !bv.is_finite())
        {
            best = Some((t, v));
        }
    }
    best.map_or_else(|| default_theta(d, caps.ls_mean), |(t, _)| t)
}

/// A conditioned Gaussian process (the Cholesky factor of the training kernel).
#[derive(Debug, Clone)]
pub(super) struct Gp {
    d: usize,
    x: Vec<f64>,
    amp: f64,
    noise: f64,
    inv_ls2: Vec<f64>,
    l: Vec<Vec<f64>>,
    /// `L⁻¹ y`; zero for hallucinated (pending) rows.
    beta: Vec<f64>,
    /// `K⁻¹ y` over the observed rows (pending rows never move the mean): the posterior
    /// mean at `c` is `k(X, c) · alpha`, without the triangular solve of the variance.
    alpha: Vec<f64>,
}

/// Posterior at a batch of points.
#[derive(Debug, Clone)]
pub(super) struct Pred {
    pub(super) mean: Vec<f64>,
    pub(super) var: Vec<f64>,
    /// `L⁻¹ k(X, c)`, `n` rows of `m` columns (kept for conditioning on new points).
    pub(super) v: Vec<f64>,
}

impl Gp {
    /// Conditions on `y` at `x` (`n × d`).
    pub(super) fn new(x: &[f64], d: usize, y: &[f64], theta: &[f64]) -> Self {
        let n = y.len();
        let amp = theta[0].exp();
        let noise = theta[1].exp();
        let inv_ls2: Vec<f64> = theta[2..].iter().map(|t| (-2.0 * t).exp()).collect();
        let mut gp = Gp {
            d,
            x: x.to_vec(),
            amp,
            noise,
            inv_ls2,
            l: Vec::new(),
            beta: Vec::new(),
            alpha: Vec::new(),
        };
        let mut k = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..i {
                k[i * n + j] = gp.kernel(&x[i * d..(i + 1) * d], &x[j * d..(j + 1) * d]);
            }
            k[i * n + i] = amp + noise;
        }
        let mut jitter = 0.0;
        gp.l = loop {
            if let Some(l) = linalg::cholesky(&k, n, jitter) {
                break l;
            }
            jitter = if jitter == 0.0 {
                1e-10 * amp
            } else {
                jitter * 10.0
            };
        };
        let mut beta = y.to_vec();
        linalg::forward(&gp.l, &mut beta);
        let mut alpha = beta.clone();
        linalg::backward(&gp.l, &mut alpha);
        gp.beta = beta;
        gp.alpha = alpha;
        gp
    }

    fn kernel(&self, a: &[f64], b: &[f64]) -> f64 {
        let s: f64 = a
            .iter()
            .zip(b)
            .zip(&self.inv_ls2)
            .map(|((p, q), w)| (p - q) * (p - q) * w)
            .sum();
        matern(s, self.amp).0
    }

    /// Number of conditioning rows (observed and pending).
    #[cfg(test)]
    pub(super) fn rows(&self) -> usize {
        self.l.len()
    }

    /// Adds a pending point with the posterior mean as its value: the mean is unchanged,
    /// the variance shrinks around it (a "kriging believer" that cannot move the mean).
    pub(super) fn add_pending(&mut self, xp: &[f64]) {
        let n = self.l.len();
        let d = self.d;
        let mut lrow: Vec<f64> = (0..n)
            .map(|i| self.kernel(&self.x[i * d..(i + 1) * d], xp))
            .collect();
        linalg::forward(&self.l, &mut lrow);
        let diag = (self.amp + self.noise - dot(&lrow, &lrow)).max(1e-10 * self.amp);
        lrow.push(diag.sqrt());
        self.l.push(lrow);
        self.beta.push(0.0);
        self.x.extend_from_slice(xp);
    }

    /// Kernel values between the points `xc` (`m × d`) and `p`.
    pub(super) fn kernel_to(&self, xc: &[f64], p: &[f64]) -> Vec<f64> {
        xc.chunks_exact(self.d.max(1))
            .map(|c| self.kernel(c, p))
            .collect()
    }

    /// Posterior mean and latent variance at `m` points `xc` (`m × d`).
    pub(super) fn predict(&self, xc: &[f64], m: usize) -> Pred {
        let n = self.l.len();
        let d = self.d;
        let mut v = vec![0.0; n * m];
        for i in 0..n {
            let xi = &self.x[i * d..(i + 1) * d];
            let row = &mut v[i * m..(i + 1) * m];
            for (c, out) in row.iter_mut().enumerate() {
                let xcc = if d == 0 {
                    &[][..]
                } else {
                    &xc[c * d..(c + 1) * d]
                };
                *out = self.kernel(xi, xcc);
            }
        }
        linalg::forward_many(&self.l, &mut v, m);
        let mut mean = vec![0.0; m];
        let mut var = vec![self.amp; m];
        for i in 0..n {
            let row = &v[i * m..(i + 1) * m];
            let b = self.beta[i];
            for ((mu, s), x) in mean.iter_mut().zip(var.iter_mut()).zip(row) {
                *mu += b * x;
                *s -= x * x;
            }
        }
        let floor = 1e-12 * self.amp;
        for s in &mut var {
            *s = s.max(floor);
        }
        Pred { mean, var, v }
    }

    /// Posterior mean alone at `m` points `xc` (`m × d`): `O(n d)` a point instead of the
    /// `O(n²)` of [`Gp::predict`]'s variance; equal to its mean up to rounding.
    pub(super) fn predict_mean(&self, xc: &[f64], m: usize) -> Vec<f64> {
        let d = self.d;
        (0..m)
            .map(|c| {
                let xcc = if d == 0 {
                    &[][..]
                } else {
                    &xc[c * d..(c + 1) * d]
                };
                self.alpha
                    .iter()
                    .enumerate()
                    .map(|(i, a)| a * self.kernel(&self.x[i * d..(i + 1) * d], xcc))
                    .sum()
            })
            .collect()
    }

    /// Conditions a prediction on one more pending point `p` whose own column of `v` is
    /// `vp`, variance `var_p` and kernel values to the predicted points `kp`: appends a row
    /// to `pred.v` and lowers `pred.var` (the mean does not move).
    pub(super) fn condition(&self, pred: &mut Pred, vp: &[f64], var_p: f64, kp: &[f64]) {
        let m = pred.mean.len();
        let n = vp.len();
        let denom = (var_p + self.noise).sqrt();
        let mut u: Vec<f64> = kp.to_vec();
        for (row, &a) in pred.v.chunks_exact(m).zip(vp).take(n) {
            for (x, r) in u.iter_mut().zip(row) {
                *x -= a * r;
            }
        }
        let floor = 1e-12 * self.amp;
        for (x, s) in u.iter_mut().zip(pred.var.iter_mut()) {
            *x /= denom;
            *s = (*s - *x * *x).max(floor);
        }
        pred.v.extend_from_slice(&u);
    }
}

impl Pred {
    /// Appends the `m2` points of `other` (a prediction with as many rows of `v`, i.e.
    /// conditioned on the same points) after this prediction's `m` points.
    pub(super) fn append_columns(&mut self, m: usize, other: Pred, m2: usize) {
        assert!(m > 0 && m2 > 0, "both predictions hold points");
        let rows = self.v.len() / m;
        assert_eq!(
            (self.v.len(), other.v.len()),
            (rows * m, rows * m2),
            "both predictions have the same rows"
        );
        let mut v = Vec::with_capacity(rows * (m + m2));
        for i in 0..rows {
            v.extend_from_slice(&self.v[i * m..(i + 1) * m]);
            v.extend_from_slice(&other.v[i * m2..(i + 1) * m2]);
        }
        self.v = v;
        self.mean.extend(other.mean);
        self.var.extend(other.var);
    }
}

/// Standard-normal quantile (Acklam's rational approximation, |error| < 1.2e-9).
pub(super) fn norm_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let p = p.clamp(1e-300, 1.0 - 1e-16);
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.024_25 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.024_25 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finite_diff_check(n: usize, d: usize) {
        let mut rng = Rng::new(5, 5);
        let x: Vec<f64> = (0..n * d).map(|_| rng.uniform()).collect();
        let y: Vec<f64> = (0..n).map(|i| (3.0 * x[i * d]).sin()).collect();
        let p = Pairs::new(&x, n, d);
        let theta: Vec<f64> = (0..d + 2).map(|i| -0.5 + 0.1 * i as f64).collect();
        let (_, g) = objective(&p, &y, &theta, LS_MEAN);
        for i in 0..theta.len() {
            let h = 1e-6;
            let mut a = theta.clone();
            a[i] += h;
            let mut b = theta.clone();
            b[i] -= h;
            let num =
                (objective(&p, &y, &a, LS_MEAN).0 - objective(&p, &y, &b, LS_MEAN).0) / (2.0 * h);
            assert!(
                (num - g[i]).abs() < 1e-4 * num.abs().max(1.0),
                "{i}: {num} vs {}",
                g[i]
            );
        }
    }

    /// Two sets of points predicted and conditioned on a pending point apart, then joined,
    /// read the same as the union predicted and conditioned at once.
    #[test]
    fn appended_conditioned_predictions_equal_the_joint_one() {
        let mut rng = Rng::new(3, 3);
        let (n, d) = (7, 2);
        let x: Vec<f64> = (0..n * d).map(|_| rng.uniform()).collect();
        let y: Vec<f64> = x.chunks(d).map(|a| a[0] - a[1] * a[1]).collect();
        let g = Gp::new(&x, d, &y, &[0.1, -6.0, -0.5, -0.3]);
        let (m, m2) = (5, 3);
        let xa: Vec<f64> = (0..m * d).map(|_| rng.uniform()).collect();
        let xb: Vec<f64> = (0..m2 * d).map(|_| rng.uniform()).collect();
        let xab: Vec<f64> = xa.iter().chain(&xb).copied().collect();
        let p = [0.4, 0.6];
        let single = g.predict(&p, 1);
        let mut joint = g.predict(&xab, m + m2);
        g.condition(&mut joint, &single.v, single.var[0], &g.kernel_to(&xab, &p));
        let mut a = g.predict(&xa, m);
        g.condition(&mut a, &single.v, single.var[0], &g.kernel_to(&xa, &p));
        let mut b = g.predict(&xb, m2);
        g.condition(&mut b, &single.v, single.var[0], &g.kernel_to(&xb, &p));
        a.append_columns(m, b, m2);
        for (got, want) in [
            (&a.mean, &joint.mean),
            (&a.var, &joint.var),
            (&a.v, &joint.v),
        ] {
            assert_eq!(got.len(), want.len());
            for (u, w) in got.iter().zip(want.iter()) {
                assert!((u - w).abs() < 1e-12, "{u} vs {w}");
            }
        }
    }

    #[test]
    fn gradient_matches_finite_differences() {
        finite_diff_check(9, 3);
        finite_diff_check(1, 2);
    }

    #[test]
    fn fitted_gp_interpolates_a_smooth_function() {
        let mut rng = Rng::new(1, 1);
        let (n, d) = (25, 2);
        let x: Vec<f64> = (0..n * d).map(|_| rng.uniform()).collect();
        let f = |a: &[f64]| (3.0 * a[0]).sin() + a[1] * a[1];
        let y: Vec<f64> = x.chunks(d).map(f).collect();
        let caps = FitCaps {
            cold_iters: 50,
            warm_iters: 20,
            restarts: 1,
            restart_below: 30,
            ls_mean: LS_MEAN,
        };
        let theta = fit(&x, n, d, &y, None, &mut rng, caps);
        let gp = Gp::new(&x, d, &y, &theta);
        let q = [0.4, 0.6, 0.5, 0.5];
        let pred = gp.predict(&q, 2);
        for (c, mu) in q.chunks(2).zip(&pred.mean) {
            assert!((mu - f(c)).abs() < 0.1, "{mu} vs {}", f(c));
        }
        // conditioning on a pending point equals adding it to the factor
        let mut with = gp.clone();
        with.add_pending(&q[..2]);
        let direct = with.predict(&q[2..], 1);
        let mut both = gp.predict(&q, 2);
        let vp: Vec<f64> = (0..gp.rows()).map(|i| both.v[i * 2]).collect();
        let kp = gp.kernel_to(&q, &q[..2]);
        let var_p = both.var[0];
        gp.condition(&mut both, &vp, var_p, &kp);
        assert!((both.var[1] - direct.var[0]).abs() < 1e-9);
        assert!((both.mean[1] - direct.mean[0]).abs() < 1e-9);
    }

    #[test]
    fn mean_only_prediction_equals_the_full_one_with_and_without_pending_rows() {
        let mut rng = Rng::new(4, 1);
        let (n, d, m) = (30, 3, 40);
        let x: Vec<f64> = (0..n * d).map(|_| rng.uniform()).collect();
        let y: Vec<f64> = x
            .chunks(d)
            .map(|a| a[0] * a[1] - (4.0 * a[2]).cos())
            .collect();
        let theta = vec![0.3, -5.0, -1.2, -0.4, -0.9];
        let mut gp = Gp::new(&x, d, &y, &theta);
        let xc: Vec<f64> = (0..m * d).map(|_| rng.uniform()).collect();
        for round in 0..2 {
            let full = gp.predict(&xc, m);
            let fast = gp.predict_mean(&xc, m);
            for (a, b) in full.mean.iter().zip(&fast) {
                assert!(
                    (a - b).abs() < 1e-9 * a.abs().max(1.0),
                    "round {round}: {a} vs {b}"
                );
            }
            // pending rows condition the variance only: the mean must not move
            gp.add_pending(&xc[..d]);
            gp.add_pending(&xc[d..2 * d]);
        }
    }

    #[test]
    fn quantile_is_accurate() {
        assert!(norm_quantile(0.5).abs() < 1e-9);
        assert!((norm_quantile(0.975) - 1.959_963_985).abs() < 1e-7);
        assert!((norm_quantile(0.01) + 2.326_347_874).abs() < 1e-7);
    }
}
