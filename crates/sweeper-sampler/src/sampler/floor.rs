//! The default algorithm of a study with a floor ([`crate::Floor`]): the fewest `cost`
//! among the trials whose floor metric reaches the floor (the `min_gpus` goal).
//!
//! Two models, one per thing the study does not know:
//!
//! - **the constraint**: a Gaussian process (the default algorithm's, [`super::gp`]) of the
//!   floor metric relative to the floor, `min(value / floor, 1.25)` (above a quarter over
//!   the floor nothing matters), infeasible trials entering as 0; its posterior gives each
//!   candidate a probability of reaching the floor, `P = Φ((μ − 1) / σ)`;
//! - **the cost**: a least-squares fit of `ln cost` (of `cost` itself when a cost is not
//!   positive) on the logarithms of the numeric parameters (the values themselves when a
//!   range reaches zero or below) and the one-hot categoricals. A cost that is a product of
//!   parameters (`used_gpus = tp × replicas`) is linear there, so the fit is exact once a
//!   few trials are observed; when it is not exact (a residual above 1e-6), a Gaussian
//!   process of the residuals is added.
//!
//! Each member of a batch maximizes the expected decrease of the best satisfying cost,
//! `P(x) · E[(g − ĉ(x))₊]`, where `g` is the incumbent (the fewest cost among satisfying
//! trials) or, among the members already chosen, the cheapest that succeeds (each taken
//! to succeed with its own `P`, independently): the expected improvement under
//! constraints of Gardner et al. 2014 ("Bayesian optimization with inequality
//! constraints", ICML) with the cost known, its batch form by the members' outcomes.
//! Pending trials and chosen members also shrink the constraint model's variance around
//! them (a kriging believer, as in the default algorithm). The score is taken in log
//! space (`ln Φ` stays finite far in the tail), so that among the candidates cheaper than
//! the incumbent the least unlikely one is always found, however small its probability:
//! the search never stops while a cheaper point is left. With nothing satisfying yet, the
//! incumbent is twice the dearest candidate's cost, so cheap likely points come first;
//! when no candidate is cheaper than the incumbent, the same rule ranks them all (the
//! search goes on over the rest of the space).
//!
//! The first trials are the quasi-random design of the default algorithm
//! (`clamp(features + 2, 4, 10)` points).

use serde::{Deserialize, Serialize};

use super::gp::{self, FitCaps, Gp};
use super::quasi::QuasiSampler;
use super::{History, Sampler, fill_unique, linalg};
use crate::rng::Rng;
use crate::space::{Dim, Domain};
use crate::trial::TrialState;

/// Above this ratio to the floor the constraint model sees a constant: only the crossing
/// of the floor matters.
const CLIP: f64 = 1.25;
/// Candidates enumerated whole up to this many points (the default algorithm's bound).
const ENUMERATE: u128 = 4096;
/// Random candidates, and mutations of the best observations, per suggestion otherwise.
const RANDOM: usize = 800;
const MUTATIONS: usize = 700;
/// A cost fit whose largest residual (in its own unit, `ln cost` mostly) is below this is
/// taken as exact.
const EXACT: f64 = 1e-6;

/// The state of the floor algorithm: its random streams and the last fitted
/// hyperparameters of the two models.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FloorSampler {
    rng: Rng,
    quasi: QuasiSampler,
    /// The floor metric, the cost metric and the floor.
    metric: String,
    cost: String,
    floor: f64,
    /// Last fitted `θ` of the constraint model and of the cost residual model.
    hyper: Option<Vec<f64>>,
    cost_hyper: Option<Vec<f64>>,
}

impl FloorSampler {
    pub(crate) fn new(seed: u64, metric: &str, cost: &str, floor: f64) -> Self {
        FloorSampler {
            rng: Rng::new(seed, 5),
            quasi: QuasiSampler::new(seed),
            metric: metric.to_owned(),
            cost: cost.to_owned(),
            floor,
            hyper: None,
            cost_hyper: None,
        }
    }

    fn caps() -> FitCaps {
        FitCaps {
            cold_iters: 60,
            warm_iters: 12,
            restarts: 2,
            restart_below: 30,
            ls_mean: gp::LS_MEAN,
        }
    }
}

/// The observations the models learn from.
struct Data {
    /// Points of the closed trials (completed or infeasible), and the constraint model's
    /// target of each.
    points: Vec<Vec<f64>>,
    ratio: Vec<f64>,
    /// Points and costs of the completed trials.
    cost_points: Vec<Vec<f64>>,
    costs: Vec<f64>,
    /// The fewest cost among satisfying trials.
    incumbent: Option<f64>,
}

impl FloorSampler {
    fn data(&self, history: &History<'_>) -> Data {
        let mut d = Data {
            points: Vec::new(),
            ratio: Vec::new(),
            cost_points: Vec::new(),
            costs: Vec::new(),
            incumbent: None,
        };
        for (r, p) in history.records.iter().zip(history.points) {
            match &r.state {
                TrialState::Pending => {}
                TrialState::Infeasible(_) => {
                    d.points.push(p.clone());
                    d.ratio.push(0.0);
                }
                TrialState::Completed(v) => {
                    let value = v.get(&self.metric).copied().unwrap_or(0.0);
                    let cost = v.get(&self.cost).copied().unwrap_or(f64::INFINITY);
                    d.points.push(p.clone());
                    d.ratio.push(if value.is_finite() {
                        (value / self.floor).clamp(0.0, CLIP)
                    } else if value > 0.0 {
                        CLIP
                    } else {
                        0.0
                    });
                    if cost.is_finite() {
                        d.cost_points.push(p.clone());
                        d.costs.push(cost);
                        if value >= self.floor && d.incumbent.is_none_or(|g| cost < g) {
                            d.incumbent = Some(cost);
                        }
                    }
                }
            }
        }
        d
    }
}

/// The cost model: a linear fit on log-parameter features, plus a GP of its residuals
/// when the fit is not exact.
struct CostModel {
    log: bool,
    /// Every observed cost is a whole number.
    integer: bool,
    beta: Vec<f64>,
    residual: Option<(Gp, f64, f64)>,
}

/// The cost fit's features of a point: an intercept, then per dimension `ln v` (or `v`
/// scaled to its range when the range reaches zero) or the one-hot categories.
fn cost_features(dom: &Domain, point: &[f64], out: &mut Vec<f64>) {
    out.clear();
    out.push(1.0);
    for ((_, dim), &c) in dom.dims.iter().zip(point) {
        let (v, lo, hi) = match dim {
            Dim::Float { lo, hi, log } => {
                let v = if *log {
                    (lo.ln() + c * (hi.ln() - lo.ln())).exp()
                } else {
                    lo + c * (hi - lo)
                };
                (v, *lo, *hi)
            }
            Dim::Int { lo, hi, .. } => (c, *lo as f64, *hi as f64),
            Dim::Discrete { values, .. } => {
                let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (values[c as usize], lo, hi)
            }
            Dim::Cat { choices } => {
                out.extend((0..choices.len()).map(|j| if j == c as usize { 1.0 } else { 0.0 }));
                continue;
            }
        };
        if lo > 0.0 {
            out.push(v.ln());
        } else {
            out.push((v - lo) / (hi - lo).max(f64::MIN_POSITIVE));
        }
    }
}

impl CostModel {
    fn fit(sampler: &mut FloorSampler, dom: &Domain, data: &Data) -> Option<CostModel> {
        let n = data.costs.len();
        if n == 0 {
            return None;
        }
        let log = data.costs.iter().all(|&c| c > 0.0);
        let y: Vec<f64> = data
            .costs
            .iter()
            .map(|&c| if log { c.ln() } else { c })
            .collect();
        let mut f = Vec::new();
        let rows: Vec<Vec<f64>> = data
            .cost_points
            .iter()
            .map(|p| {
                cost_features(dom, p, &mut f);
                f.clone()
            })
            .collect();
        let q = rows[0].len();
        // ridge least squares: (XᵀX + λI) β = Xᵀy, λ small (it only settles directions the
        // observations leave free, e.g. one-hot columns beside the intercept)
        let mut a = vec![0.0; q * q];
        let mut b = vec![0.0; q];
        for (row, &t) in rows.iter().zip(&y) {
            for i in 0..q {
                b[i] += row[i] * t;
                for j in 0..=i {
                    a[i * q + j] += row[i] * row[j];
                }
            }
        }
        for i in 0..q {
            a[i * q + i] += 1e-9 * (1.0 + a[i * q + i]);
        }
        let l = linalg::cholesky(&a, q, 0.0).or_else(|| linalg::cholesky(&a, q, 1e-6))?;
        linalg::forward(&l, &mut b);
        linalg::backward(&l, &mut b);
        let beta = b;
        let resid: Vec<f64> = rows
            .iter()
            .zip(&y)
            .map(|(row, t)| t - dot(row, &beta))
            .collect();
        let worst = resid.iter().fold(0.0f64, |m, r| m.max(r.abs()));
        let residual = if worst > EXACT && n >= 2 {
            let (z, mean, sd) = standardize(&resid);
            let x = dom.features_of(&data.cost_points);
            let d = dom.n_features();
            let theta = gp::fit(
                &x,
                n,
                d,
                &z,
                sampler.cost_hyper.as_deref(),
                &mut sampler.rng,
                FloorSampler::caps(),
            );
            sampler.cost_hyper = Some(theta.clone());
            Some((Gp::new(&x, d, &z, &theta), mean, sd))
        } else {
            None
        };
        Some(CostModel {
            log,
            integer: data.costs.iter().all(|c| c.fract() == 0.0),
            beta,
            residual,
        })
    }

    fn predict(&self, dom: &Domain, points: &[Vec<f64>]) -> Vec<f64> {
        let mut f = Vec::new();
        let mut out: Vec<f64> = points
            .iter()
            .map(|p| {
                cost_features(dom, p, &mut f);
                dot(&f, &self.beta)
            })
            .collect();
        if let Some((gp, mean, sd)) = &self.residual {
            let x = dom.features_of(points);
            for (o, r) in out.iter_mut().zip(gp.predict_mean(&x, points.len())) {
                *o += mean + sd * r;
            }
        }
        if self.log {
            for o in &mut out {
                *o = o.exp();
            }
        }
        if self.integer && self.residual.is_none() {
            // an exact fit of whole costs (GPU counts) predicts whole costs
            for o in &mut out {
                *o = o.round();
            }
        }
        out
    }
}

/// The constraint model's cost feature: `ln c` (or `c` when a cost is not positive)
/// scaled to `[0, 1]` over the costs of one suggestion.
struct CostScale {
    log: bool,
    lo: f64,
    span: f64,
}

impl CostScale {
    fn new(costs: impl Iterator<Item = f64> + Clone) -> CostScale {
        let log = costs.clone().all(|c| c > 0.0);
        let t = |c: f64| if log { c.ln() } else { c };
        let (lo, hi) = costs
            .filter(|c| c.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), c| {
                (lo.min(t(c)), hi.max(t(c)))
            });
        let span = hi - lo;
        CostScale {
            log,
            lo: if lo.is_finite() { lo } else { 0.0 },
            span: if span.is_finite() && span > 0.0 {
                span
            } else {
                1.0
            },
        }
    }

    fn of(&self, c: f64) -> f64 {
        let t = if self.log { c.ln() } else { c };
        if t.is_finite() {
            (t - self.lo) / self.span
        } else {
            0.5
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `(v − mean) / sd` of each value, the mean and the sd (1 when the values are equal).
fn standardize(v: &[f64]) -> (Vec<f64>, f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    let sd = if var > 1e-18 { var.sqrt() } else { 1.0 };
    (v.iter().map(|x| (x - mean) / sd).collect(), mean, sd)
}

/// `ln Φ(z)`, finite for every finite `z`: the complementary error function (the
/// rational approximation of Numerical Recipes' `erfcc`, relative error below 1.2e-7) above
/// `z = −6`, the asymptotic series of the normal tail below.
pub(super) fn ln_norm_cdf(z: f64) -> f64 {
    if z.is_nan() {
        return f64::NEG_INFINITY;
    }
    if z < -6.0 {
        let z2 = z * z;
        return -0.5 * z2 - (-z).ln() - 0.5 * (2.0 * std::f64::consts::PI).ln()
            + (1.0 - 1.0 / z2 + 3.0 / (z2 * z2)).ln();
    }
    let x = -z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.5 * x.abs());
    let poly = -x * x - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let erfc_abs = t * poly.exp();
    let erfc = if x >= 0.0 { erfc_abs } else { 2.0 - erfc_abs };
    (0.5 * erfc).ln()
}

/// `ln (P · E[(g − c)₊])` for a candidate of cost `c` and log-probability `ln_p`, given
/// the outcomes of the members chosen so far (`(value, probability)`: the incumbent a
/// member's success or failure leaves).
fn ln_gain(ln_p: f64, c: f64, outcomes: &[(f64, f64)]) -> f64 {
    let e: f64 = outcomes
        .iter()
        .map(|&(g, w)| if below(c, g) { w * (g - c) } else { 0.0 })
        .sum();
    if e > 0.0 {
        ln_p + e.ln()
    } else {
        f64::NEG_INFINITY
    }
}

/// Whether cost `c` is below `g` by more than rounding: a predicted cost carries the
/// fit's rounding (`exp(ln 6)` may read 5.999999999), which must not count as cheaper.
fn below(c: f64, g: f64) -> bool {
    c < g - 1e-9 * g.abs().max(1.0)
}

/// The incumbent's distribution once the members `(cost, probability)` are chosen: the
/// cheapest that succeeds, or `incumbent` when none does; `(value, probability)` pairs.
fn outcomes(incumbent: f64, members: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut sorted: Vec<(f64, f64)> = members
        .iter()
        .copied()
        .filter(|&(c, _)| below(c, incumbent))
        .collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = Vec::with_capacity(sorted.len() + 1);
    let mut none = 1.0;
    for (c, p) in sorted {
        out.push((c, none * p));
        none *= 1.0 - p;
    }
    out.push((incumbent, none));
    out
}

impl FloorSampler {
    /// Candidate points: the whole space when small, else random points and mutations of
    /// the satisfying and nearly satisfying observations.
    fn candidates(&mut self, history: &History<'_>, data: &Data) -> Vec<Vec<f64>> {
        let dom = history.domain;
        if let Some(c) = dom.cardinality()
            && c <= ENUMERATE
        {
            return (0..c).map(|k| dom.discrete_combo(k, 0.5)).collect();
        }
        let mut out: Vec<Vec<f64>> = (0..RANDOM).map(|_| dom.random(&mut self.rng)).collect();
        let mut order: Vec<usize> = (0..data.points.len()).collect();
        order.sort_by(|&a, &b| data.ratio[b].total_cmp(&data.ratio[a]).then(a.cmp(&b)));
        let anchors: Vec<usize> = order.into_iter().take(8).collect();
        if !anchors.is_empty() {
            let scales = [0.05, 0.12, 0.3];
            for t in 0..MUTATIONS {
                let a = anchors[t % anchors.len()];
                let scale = scales[(t / anchors.len()) % scales.len()];
                out.push(dom.mutate(&data.points[a], scale, &mut self.rng));
            }
        }
        out
    }
}

impl Sampler for FloorSampler {
    fn suggest(&mut self, history: &History<'_>, count: usize) -> Vec<Vec<f64>> {
        let dom = history.domain;
        if dom.len() == 0 {
            return fill_unique(history, &[], count, Vec::new);
        }
        let n_init = (dom.n_features() + 2).clamp(4, 10);
        let mut out: Vec<Vec<f64>> = Vec::new();
        let taken = history.records.len();
        if taken < n_init {
            let k = (n_init - taken).min(count);
            let quasi = &mut self.quasi;
            out = fill_unique(history, &[], k, || dom.at_unit(&quasi.next_unit(dom.len())));
        }
        let data = self.data(history);
        if out.len() == count || data.points.is_empty() {
            let rest = count - out.len();
            let quasi = &mut self.quasi;
            let more = fill_unique(history, &out, rest, || {
                dom.at_unit(&quasi.next_unit(dom.len()))
            });
            out.extend(more);
            return out;
        }
        let cost_model = CostModel::fit(self, dom, &data);
        let mut cands: Vec<Vec<f64>> = self
            .candidates(history, &data)
            .into_iter()
            .filter(|p| !history.is_taken(p) && !out.iter().any(|q| dom.same(p, q)))
            .collect();
        // distinct candidates only (random draws and mutations may repeat)
        let mut unique: Vec<Vec<f64>> = Vec::with_capacity(cands.len());
        for p in cands.drain(..) {
            if !unique.iter().any(|q| dom.same(&p, q)) {
                unique.push(p);
            }
        }
        let cands = unique;
        if cands.is_empty() {
            let rest = count - out.len();
            let more = fill_unique(history, &out, rest, || dom.random(&mut self.rng));
            out.extend(more);
            return out;
        }
        let predict = |points: &[Vec<f64>]| match &cost_model {
            Some(m) => m.predict(dom, points),
            None => vec![1.0; points.len()],
        };
        let cost = predict(&cands);
        // the constraint model's inputs: the parameters' features and the cost's (a
        // floor of throughput is mostly a matter of how many GPUs serve it)
        let pending: Vec<Vec<f64>> = history
            .pending_points()
            .chain(out.iter())
            .cloned()
            .collect();
        let scale = CostScale::new(
            cost.iter()
                .chain(&predict(&data.points))
                .chain(&predict(&pending))
                .copied(),
        );
        let d = dom.n_features() + 1;
        let with_cost = |points: &[Vec<f64>], costs: &[f64]| {
            let base = dom.features_of(points);
            let k = dom.n_features();
            let mut x = Vec::with_capacity(points.len() * d);
            for (i, c) in costs.iter().enumerate() {
                x.extend_from_slice(&base[i * k..(i + 1) * k]);
                x.push(scale.of(*c));
            }
            x
        };
        let n = data.points.len();
        let x = with_cost(&data.points, &predict(&data.points));
        let (z, mean, sd) = standardize(&data.ratio);
        let theta = gp::fit(
            &x,
            n,
            d,
            &z,
            self.hyper.as_deref().filter(|t| t.len() == d + 2),
            &mut self.rng,
            Self::caps(),
        );
        self.hyper = Some(theta.clone());
        let mut model = Gp::new(&x, d, &z, &theta);
        let px = with_cost(&pending, &predict(&pending));
        for row in px.chunks_exact(d) {
            model.add_pending(row);
        }
        let dearest = cost.iter().copied().fold(0.0f64, f64::max);
        let no_incumbent = 2.0 * dearest.max(f64::MIN_POSITIVE) + 1.0;
        let mut incumbent = data.incumbent.unwrap_or(no_incumbent);
        if !cost.iter().any(|&c| below(c, incumbent)) {
            // every candidate costs as much as the best found: rank them as if none were
            incumbent = no_incumbent;
        }
        let cx = with_cost(&cands, &cost);
        let mut members: Vec<(f64, f64)> = Vec::new();
        let mut used = vec![false; cands.len()];
        while out.len() < count {
            let pred = model.predict(&cx, cands.len());
            let outs = outcomes(incumbent, &members);
            let mut best: Option<(usize, f64, f64)> = None;
            for i in 0..cands.len() {
                if used[i] {
                    continue;
                }
                let mu = mean + sd * pred.mean[i];
                let sigma = sd * pred.var[i].sqrt();
                let ln_p = ln_norm_cdf((mu - 1.0) / sigma.max(1e-12));
                let s = ln_gain(ln_p, cost[i], &outs);
                if best.is_none_or(|(_, b, _)| s > b) {
                    best = Some((i, s, ln_p));
                }
            }
            let Some((i, _, ln_p)) = best else { break };
            used[i] = true;
            members.push((cost[i], ln_p.exp()));
            model.add_pending(&cx[i * d..(i + 1) * d]);
            out.push(cands[i].clone());
        }
        if out.len() < count {
            let rest = count - out.len();
            let more = fill_unique(history, &out, rest, || dom.random(&mut self.rng));
            out.extend(more);
        }
        out
    }

    fn save(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_norm_cdf_matches_known_values_and_stays_finite() {
        // Φ(0) = 0.5, Φ(1.96) ≈ 0.975, Φ(−3) ≈ 0.0013499, Φ(−10) ≈ 7.6199e−24
        assert!((ln_norm_cdf(0.0) - 0.5f64.ln()).abs() < 1e-6);
        assert!((ln_norm_cdf(1.96).exp() - 0.975_002).abs() < 1e-5);
        assert!((ln_norm_cdf(-3.0).exp() / 0.001_349_898 - 1.0).abs() < 1e-5);
        assert!((ln_norm_cdf(-10.0) - 7.619_853e-24f64.ln()).abs() < 1e-3);
        assert!(ln_norm_cdf(-1e6).is_finite());
        let mut last = f64::NEG_INFINITY;
        for k in -400..=400 {
            let v = ln_norm_cdf(f64::from(k) / 40.0);
            assert!(v >= last - 1e-9, "monotone at {k}");
            last = v;
        }
    }

    #[test]
    fn outcomes_weigh_the_cheapest_success() {
        // members of cost 2 (p 0.5) and 4 (p 0.5) under an incumbent of 6
        let o = outcomes(6.0, &[(4.0, 0.5), (2.0, 0.5), (7.0, 0.9)]);
        assert_eq!(o, vec![(2.0, 0.5), (4.0, 0.25), (6.0, 0.25)]);
        // a candidate of cost 3 gains only when the cost-2 member fails
        let e = ln_gain(0.0, 3.0, &o).exp();
        assert!((e - (0.25 * 1.0 + 0.25 * 3.0)).abs() < 1e-12);
        assert_eq!(ln_gain(0.0, 6.0, &o), f64::NEG_INFINITY);
    }
}
