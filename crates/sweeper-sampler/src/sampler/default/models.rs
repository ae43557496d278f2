//! The per-metric models of a suggestion and the observed front they are scored against:
//! the warping of the observations, the hypervolume scalarization, the fits.

use rayon::prelude::*;
use sweeper_goal::Direction;

use super::state::DefaultSampler;
use super::tuning::{BETA, EDGE_MARGIN, HEAVY_TAIL, MANY_METRICS, PARALLEL_POINTS, WEIGHTS};
use crate::rng::Rng;
use crate::sampler::History;
use crate::sampler::gp::{self, Gp, Pred};
use crate::trial::TrialState;

/// Per-metric model and the observed front, in warped, standardized, maximized units.
#[derive(Clone)]
pub(super) struct Models {
    pub(super) gps: Vec<Gp>,
    /// Warped values of the feasible observations, per metric.
    pub(super) z: Vec<Vec<f64>>,
    /// LCB at the feasible observations (single-metric studies only).
    pub(super) lcb: Vec<Vec<f64>>,
    pub(super) feas: Option<(Gp, f64, f64)>,
    /// One reference point per weight vector.
    pub(super) references: Vec<Vec<f64>>,
    pub(super) weights: Vec<Vec<f64>>,
    /// `max over observations of s_w(z)^k` per weight.
    pub(super) best_s: Vec<f64>,
    /// UCB coefficient of the member being chosen (several metrics).
    pub(super) beta: f64,
    /// Per metric, the best observed value and the loosest reference ([`reference_point`]):
    /// the range each weight's reference is drawn in.
    pub(super) ideal: Vec<f64>,
    pub(super) loosest: Vec<f64>,
    /// Posterior means believed into the front (pending trials and chosen members).
    pub(super) believed: Vec<Vec<f64>>,
    /// Per dimension, the range the member being chosen keeps to: a float's in its unit
    /// coordinates, (−∞, ∞) for every other dimension; empty: the whole box
    /// ([`EDGE_MARGIN`]).
    pub(super) bounds: Vec<(f64, f64)>,
}

/// Maps raw maximized values to a well-behaved scale: infinities are clamped beyond the
/// finite range; when the low tail is heavy ([`HEAVY_TAIL`]), the worse half is replaced by
/// normal quantiles of its ranks (the half-rank warping of Vizier) so that outliers do not
/// dominate the fit; then standardized. (Warping every metric always was measured worse on
/// DTLZ2: it flattens the region the front is found in.)
pub(super) fn warp(raw: &[f64]) -> Vec<f64> {
    let n = raw.len();
    let finite: Vec<f64> = raw.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() {
        return vec![0.0; n];
    }
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = (hi - lo).max(1.0);
    let mut y: Vec<f64> = raw
        .iter()
        .map(|&v| {
            if v == f64::INFINITY {
                hi + span
            } else if v == f64::NEG_INFINITY {
                lo - span
            } else {
                v
            }
        })
        .collect();
    let mut sorted = y.clone();
    sorted.sort_by(f64::total_cmp);
    let med = sorted[n / 2];
    let upper: Vec<f64> = sorted.iter().copied().filter(|&v| v >= med).collect();
    let sd_up =
        (upper.iter().map(|v| (v - med) * (v - med)).sum::<f64>() / upper.len() as f64).sqrt();
    if n >= 4 && sd_up > 0.0 && med - sorted[0] > HEAVY_TAIL * sd_up {
        let orig = y.clone();
        for (yi, &v) in y.iter_mut().zip(&orig) {
            if v < med {
                let below = sorted.partition_point(|&s| s < v);
                let ties = sorted.partition_point(|&s| s <= v) - below;
                let rank = below as f64 + (ties as f64 - 1.0) / 2.0;
                let p = (rank + 0.5) / n as f64;
                *yi = med + sd_up * gp::norm_quantile(p);
            }
        }
    }
    let mean = y.iter().sum::<f64>() / n as f64;
    let sd = (y.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64).sqrt();
    if sd <= 1e-12 * mean.abs().max(1e-300) || sd == 0.0 {
        return vec![0.0; n];
    }
    y.iter().map(|v| (v - mean) / sd).collect()
}

/// The loosest hypervolume reference point: per metric, the worst observed value pushed
/// out by a tenth of the observed range. Each weight vector gets its own reference drawn
/// uniformly between this point and the best observed values, i.e. the acquisition
/// averages the hypervolume improvement over a range of reference points: a single far
/// reference rewards extreme points so much that on DTLZ2 the study never approached the
/// middle of the front (0.25 → 0.29–0.46 normalized hypervolume at 150 trials, batch 1).
pub(super) fn reference_point(zs: &[Vec<f64>]) -> Vec<f64> {
    zs.iter()
        .map(|z| {
            let lo = z.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            lo - 0.1 * (hi - lo).max(1e-3)
        })
        .collect()
}

/// The observations that no other one dominates, every metric maximized (`z[m][j]` is
/// metric `m` of observation `j`): ascending, every copy of a duplicate kept, by
/// `sweeper_score`'s front kernel. A row holding a NaN (the warp of values that overflow)
/// is kept and dominates nothing, as no comparison with a NaN holds.
pub(super) fn nondominated_columns(z: &[Vec<f64>]) -> Vec<usize> {
    let k = z.len();
    let n = z.first().map_or(0, Vec::len);
    let (with_nan, rows): (Vec<usize>, Vec<usize>) =
        (0..n).partition(|&j| z.iter().any(|col| col[j].is_nan()));
    let data: Vec<f64> = rows
        .iter()
        .flat_map(|&j| z.iter().map(move |col| col[j]))
        .collect();
    let front = sweeper_score::front::nondominated(&data, k, &vec![Direction::Maximize; k])
        .expect("NaN-free rows, one direction per metric");
    let mut out: Vec<usize> = front.into_iter().map(|i| rows[i]).collect();
    out.extend(with_nan);
    out.sort_unstable();
    out
}

/// The range each dimension keeps to under [`EDGE_MARGIN`]: a float's unit interval pulled
/// in by the margin at each bound that no nondominated observation lies within the margin
/// of; every other dimension unbounded.
pub(super) fn edge_bounds(
    history: &History<'_>,
    feasible: &[usize],
    z: &[Vec<f64>],
) -> Vec<(f64, f64)> {
    let front = nondominated_columns(z);
    let reached = |j: usize, b: f64| {
        front
            .iter()
            .any(|&f| (history.points[feasible[f]][j] - b).abs() < EDGE_MARGIN)
    };
    history
        .domain
        .dims
        .iter()
        .enumerate()
        .map(|(j, (_, dim))| match dim {
            crate::space::Dim::Float { .. } => (
                if reached(j, 0.0) { 0.0 } else { EDGE_MARGIN },
                if reached(j, 1.0) {
                    1.0
                } else {
                    1.0 - EDGE_MARGIN
                },
            ),
            _ => (f64::NEG_INFINITY, f64::INFINITY),
        })
        .collect()
}

/// Scalarized value `min_i ((y_i − r_i)_+ / w_i)` raised to `y.len()`.
pub(super) fn scalarize(y: &[f64], r: &[f64], w: &[f64]) -> f64 {
    let mut s = f64::INFINITY;
    for ((a, b), c) in y.iter().zip(r).zip(w) {
        s = s.min((a - b).max(0.0) / c);
    }
    powi(s, y.len())
}

/// `x` to the power `k` by repeated squaring: the steps of the runtime's `powi`, so
/// bit-identical to `x.powi(k)`, but inlined (the exponent is a run-time value, and the
/// library call was 7% of a suggestion's time).
#[inline]
pub(super) fn powi(mut x: f64, mut k: usize) -> f64 {
    let mut r = 1.0;
    loop {
        if k & 1 == 1 {
            r *= x;
        }
        k >>= 1;
        if k == 0 {
            return r;
        }
        x *= x;
    }
}

impl Models {
    /// Replaces the weight vectors by `count` new ones, each with its reference drawn
    /// between the loosest reference and the best observed values, and their best
    /// scalarized values over the observations and the believed means.
    pub(super) fn draw_weights(&mut self, rng: &mut Rng, count: usize) {
        let k = self.ideal.len();
        self.weights.clear();
        self.references.clear();
        self.best_s.clear();
        let mut y = vec![0.0; k];
        for _ in 0..count {
            let mut w: Vec<f64> = (0..k).map(|_| rng.normal().abs() + 1e-9).collect();
            let norm = w.iter().map(|v| v * v).sum::<f64>().sqrt();
            for v in &mut w {
                *v /= norm;
            }
            let t = rng.uniform();
            let r: Vec<f64> = self
                .ideal
                .iter()
                .zip(&self.loosest)
                .map(|(h, f)| h - t * (h - f))
                .collect();
            let best = self.best_scalarized(&mut y, &r, &w);
            self.weights.push(w);
            self.best_s.push(best);
            self.references.push(r);
        }
    }

    /// The best scalarized value (reference `r`, weight `w`) over the observations and the
    /// believed means, at least 0; `y` is scratch of one value a metric.
    pub(super) fn best_scalarized(&self, y: &mut [f64], r: &[f64], w: &[f64]) -> f64 {
        let mut best = 0.0f64;
        for j in 0..self.z.first().map_or(0, Vec::len) {
            for (m, z) in self.z.iter().enumerate() {
                y[m] = z[j];
            }
            best = best.max(scalarize(y, r, w));
        }
        for b in &self.believed {
            best = best.max(scalarize(b, r, w));
        }
        best
    }

    /// Replaces the weights by one along metric `a` alone (the others `1e-6`), its
    /// reference the loosest point: the scalarization is then metric `a` above its loosest
    /// value, and its improvement that of the best observed (or believed) value of `a`.
    pub(super) fn axis_weight(&mut self, a: usize) {
        let k = self.ideal.len();
        let mut w = vec![1e-6; k];
        w[a] = 1.0;
        let r = self.loosest.clone();
        let best = self.best_scalarized(&mut vec![0.0; k], &r, &w);
        self.weights = vec![w];
        self.references = vec![r];
        self.best_s = vec![best];
    }

    /// Believes the posterior means of `count` points (features `px`) into the front: each
    /// weight's best scalarized value rises to theirs where it is higher, so the next
    /// member looks for improvement elsewhere (several metrics only; the "kriging
    /// believer"). The means are those of the observations alone: pending rows condition
    /// the variance, never the mean.
    pub(super) fn believe(&mut self, px: &[f64], count: usize) {
        if count == 0 || self.gps.len() < 2 {
            return;
        }
        let preds: Vec<Pred> = self.gps.iter().map(|g| g.predict(px, count)).collect();
        let mut mu = vec![0.0; self.gps.len()];
        for c in 0..count {
            for (m, p) in preds.iter().enumerate() {
                mu[m] = p.mean[c];
            }
            for ((w, b), r) in self
                .weights
                .iter()
                .zip(self.best_s.iter_mut())
                .zip(&self.references)
            {
                *b = b.max(scalarize(&mu, r, w));
            }
            self.believed.push(mu.clone());
        }
    }

    /// Acquisition at points whose per-metric posterior is `means` / `vars`; feasibility
    /// (`ok`) is applied by the caller.
    pub(super) fn ucb_acquisition(&self, means: &[&[f64]], vars: &[&[f64]], out: &mut [f64]) {
        let k = self.gps.len();
        let mut u = vec![0.0; k];
        for (c, o) in out.iter_mut().enumerate() {
            let beta = if k == 1 { BETA } else { self.beta };
            for m in 0..k {
                u[m] = means[m][c] + beta * vars[m][c].sqrt();
            }
            if k == 1 {
                *o = u[0];
                continue;
            }
            let mut gain = 0.0;
            let mut level = 0.0;
            for ((w, best), r) in self.weights.iter().zip(&self.best_s).zip(&self.references) {
                let s = scalarize(&u, r, w);
                gain += (s - best).max(0.0);
                level += s;
            }
            *o = (gain + 1e-6 * level) / self.weights.len() as f64;
        }
    }

    /// Feasibility test: the posterior mean of the ±1 label is not below zero, i.e. the
    /// model finds the point at least as likely feasible as not. (An optimistic test, the
    /// mean plus half a deviation, proposed more infeasible points near the boundary: with
    /// 20 seeds it trailed this one on serving 30 / 1 by 0.03, on the kernel at 150
    /// trials by 0.01–0.02, and in 14 of 20 aiconfigurator-table cells.)
    pub(super) fn feasible(&self, xc: &[f64], m: usize) -> Vec<bool> {
        match &self.feas {
            None => vec![true; m],
            Some((gp, mean, sd)) => gp
                .predict_mean(xc, m)
                .iter()
                .map(|mu| mu * sd + mean >= 0.0)
                .collect(),
        }
    }

    /// Per-metric posterior at `m` points of features `xc`: means only (zero variance, no
    /// `v` rows) when `means_only`, which the pattern search of [`MANY_METRICS`] or more
    /// asks for (see [`MANY_BETA`](super::tuning::MANY_BETA)).
    ///
    /// From [`PARALLEL_POINTS`] points on, the models predict on rayon's threads, one model
    /// a task; each model's arithmetic is the same as on one thread, so the suggestions are
    /// bit-identical.
    pub(super) fn predict(&self, xc: &[f64], m: usize, means_only: bool) -> Vec<Pred> {
        let one = |g: &Gp| {
            if means_only {
                Pred {
                    mean: g.predict_mean(xc, m),
                    var: vec![0.0; m],
                    v: Vec::new(),
                }
            } else {
                g.predict(xc, m)
            }
        };
        if m >= PARALLEL_POINTS {
            self.gps.par_iter().map(one).collect()
        } else {
            self.gps.iter().map(one).collect()
        }
    }

    /// Full acquisition at `m` points of features `xc`.
    pub(super) fn score(&self, xc: &[f64], m: usize) -> Vec<f64> {
        let preds = self.predict(xc, m, self.gps.len() >= MANY_METRICS);
        let means: Vec<&[f64]> = preds.iter().map(|p| &p.mean[..]).collect();
        let vars: Vec<&[f64]> = preds.iter().map(|p| &p.var[..]).collect();
        let mut out = vec![0.0; m];
        self.ucb_acquisition(&means, &vars, &mut out);
        for (o, ok) in out.iter_mut().zip(self.feasible(xc, m)) {
            if !ok {
                *o = f64::NEG_INFINITY;
            }
        }
        out
    }
}

/// The model features of the feasible observations and of the pending points, row-major.
pub(super) fn model_inputs(
    history: &History<'_>,
    feasible: &[usize],
    pending: &[Vec<f64>],
) -> (Vec<f64>, Vec<f64>) {
    let pts: Vec<Vec<f64>> = feasible
        .iter()
        .map(|&i| history.points[i].clone())
        .collect();
    (
        history.domain.features_of(&pts),
        history.domain.features_of(pending),
    )
}

/// Whether hyperparameters last fitted at `at` observations are refitted at `n`: always
/// while the data set is small, then each time it has grown by a tenth, and beyond 100
/// observations by a quarter (between refits the last hyperparameters are reused, which
/// keeps the median suggestion cheap: at 150 observations and batch 8 a refit is most of a
/// call's time, and growth by a tenth put one on every other call).
pub(super) fn refit_due(at: usize, n: usize) -> bool {
    n <= 40
        || n < at
        || if n > 100 {
            n * 4 >= at * 5
        } else {
            n * 10 >= at * 11
        }
}

impl DefaultSampler {
    /// Fits (or reuses) the hyperparameters of model `slot` (metrics, then feasibility);
    /// `long`: of metric `slot`'s model under the long lengthscale prior.
    pub(super) fn hyper_for(
        &mut self,
        slot: usize,
        long: bool,
        data: (&[f64], usize, usize, &[f64]),
    ) -> Vec<f64> {
        let (x, n, d, y) = data;
        let mut caps = self.caps();
        if long {
            caps.ls_mean = gp::LONG_LS_MEAN;
            if self.long_hyper.len() != self.hyper.len()
                || self.long_fitted_at.len() != self.hyper.len()
            {
                self.long_hyper = vec![None; self.hyper.len()];
                self.long_fitted_at = vec![0; self.hyper.len()];
            }
        }
        let (warm, at) = if long {
            (self.long_hyper[slot].clone(), self.long_fitted_at[slot])
        } else if slot < self.hyper.len() {
            (self.hyper[slot].clone(), self.fitted_at[slot])
        } else {
            (self.feas_hyper.clone(), self.fitted_at[slot])
        };
        let theta = match warm {
            Some(w) if w.len() == d + 2 && !refit_due(at, n) => return w,
            w => gp::fit(x, n, d, y, w.as_deref(), &mut self.rng, caps),
        };
        if long {
            self.long_fitted_at[slot] = n;
            self.long_hyper[slot] = Some(theta.clone());
        } else {
            self.fitted_at[slot] = n;
            if slot < self.hyper.len() {
                self.hyper[slot] = Some(theta.clone());
            } else {
                self.feas_hyper = Some(theta.clone());
            }
        }
        theta
    }

    /// `models` with each metric's model refitted under the long lengthscale prior (see
    /// [`HEDGE_UNTIL`](super::tuning::HEDGE_UNTIL)), conditioned on the same observations
    /// and pending points.
    pub(super) fn long_models(
        &mut self,
        history: &History<'_>,
        feasible: &[usize],
        pending: &[Vec<f64>],
        models: &Models,
    ) -> Models {
        let d = history.domain.n_features();
        let (x, pend_x) = model_inputs(history, feasible, pending);
        let n = feasible.len();
        let mut long = models.clone();
        for (mi, z) in models.z.iter().enumerate() {
            let theta = self.hyper_for(mi, true, (&x, n, d, z));
            let mut g = Gp::new(&x, d, z, &theta);
            for row in pend_x.chunks_exact(d.max(1)).take(pending.len()) {
                g.add_pending(row);
            }
            long.gps[mi] = g;
        }
        long
    }

    pub(super) fn build_models(
        &mut self,
        history: &History<'_>,
        feasible: &[usize],
        infeasible: &[usize],
        pending: &[Vec<f64>],
    ) -> Models {
        let d = history.domain.n_features();
        let (x, pend_x) = model_inputs(history, feasible, pending);
        let n = feasible.len();
        let mut gps = Vec::new();
        let mut zs = Vec::new();
        let mut lcbs = Vec::new();
        for (mi, metric) in history.metrics.iter().enumerate() {
            let sign = metric.direction.sign();
            let raw: Vec<f64> = feasible
                .iter()
                .map(|&i| match &history.records[i].state {
                    TrialState::Completed(v) => sign * v[&metric.name],
                    _ => 0.0,
                })
                .collect();
            let z = warp(&raw);
            let theta = self.hyper_for(mi, false, (&x, n, d, &z));
            let mut g = Gp::new(&x, d, &z, &theta);
            // LCB at the observations, for the pure-exploration filter (one metric only)
            if history.metrics.len() == 1 {
                let at_obs = g.predict(&x, n);
                lcbs.push(
                    at_obs
                        .mean
                        .iter()
                        .zip(&at_obs.var)
                        .map(|(m, v)| m - BETA * v.sqrt())
                        .collect(),
                );
            }
            for row in pend_x.chunks_exact(d.max(1)).take(pending.len()) {
                g.add_pending(row);
            }
            gps.push(g);
            zs.push(z);
        }
        let feas = if infeasible.is_empty() {
            None
        } else {
            let all: Vec<usize> = feasible.iter().chain(infeasible).copied().collect();
            let pts: Vec<Vec<f64>> = all.iter().map(|&i| history.points[i].clone()).collect();
            let xf = history.domain.features_of(&pts);
            let labels: Vec<f64> = (0..all.len())
                .map(|j| if j < n { 1.0 } else { -1.0 })
                .collect();
            let mean = labels.iter().sum::<f64>() / labels.len() as f64;
            let sd = (labels.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>()
                / labels.len() as f64)
                .sqrt()
                .max(1e-3);
            let z: Vec<f64> = labels.iter().map(|v| (v - mean) / sd).collect();
            let slot = self.hyper.len();
            let theta = self.hyper_for(slot, false, (&xf, all.len(), d, &z));
            let g = Gp::new(&xf, d, &z, &theta);
            Some((g, mean, sd))
        };
        let k = history.metrics.len();
        let loosest = reference_point(&zs);
        let ideal: Vec<f64> = zs
            .iter()
            .map(|z| z.iter().copied().fold(f64::NEG_INFINITY, f64::max))
            .collect();
        let mut models = Models {
            gps,
            z: zs,
            lcb: lcbs,
            feas,
            references: Vec::new(),
            weights: Vec::new(),
            best_s: Vec::new(),
            beta: BETA,
            ideal,
            loosest,
            believed: Vec::new(),
            bounds: Vec::new(),
        };
        if k >= 2 {
            models.draw_weights(&mut self.rng, WEIGHTS);
        }
        models
    }
}
