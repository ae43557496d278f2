//! The default algorithm: batched GP-UCB with pure exploration (GP-UCB-PE), random
//! hypervolume scalarization for several metrics, and a feasibility model.
//!
//! Ideas (no code) from: Contal et al. 2013 (GP-UCB-PE: the first member of a batch maximizes
//! UCB, the others maximize the posterior variance given the pending points, among points
//! whose UCB reaches the best LCB); OSS Vizier's `VizierGPUCBPEBandit` (quasi-random first
//! trials, half-rank output warping, the UCB coefficient 1.8, a candidate search over the
//! mixed space); Golovin & Zhang 2020 (hypervolume scalarization: weights uniform on the
//! positive unit sphere, `s_w(y) = min_i (y_i − r_i)_+ / w_i` raised to the number of
//! metrics, whose expected maximum over a set is proportional to its hypervolume).
//!
//! Batches: with one metric, the members after the first are pure exploration (PE). With
//! several metrics, each further member maximizes the same UCB scalarization, with the
//! variance conditioned on the members already chosen and their posterior means believed
//! into the front ("kriging believer"); on the benchmark this beat PE members at batch 8
//! (serving 0.67 → 0.76 at 50 trials, ZDT1 0.87 → 0.92 at 30; 2 seeds).
//! With two metrics, the second and third members of a batch are the exception: each
//! maximizes one metric's UCB alone, one end of the front ([`AXIS_MEMBERS`]).
//!
//! Greedy members (several metrics): at batch 1 every other suggestion, and at larger
//! batches the first member, maximize the scalarized hypervolume improvement of the
//! posterior *means* (UCB coefficient 0) instead of the UCB vector; the other members keep
//! the UCB. The idea is the mostly-greedy trade-off of De Ath et al. 2021 ("Greed is good",
//! arXiv 1911.12809), here mixed the other way round. Why: on DTLZ2 the UCB proposals sat at
//! the corners of the distance variables, where the posterior variance of six-dimensional
//! data is largest and the front is not; the greedy members follow the means into the
//! middle. Measured (5 seeds, 150 trials): DTLZ2 0.29 → 0.56 at batch 1 and 0.46 → 0.56 at
//! batch 8, ZDT1 and the serving problem unchanged within noise; a greedy member at every
//! suggestion reached 0.91 on DTLZ2 but cost ZDT1 and serving 0.1–0.2 (3 seeds).
//!
//! Three or more metrics: every member is greedy, and each draws its own
//! [`MEMBER_WEIGHTS`] weight vectors (with their references) instead of sharing 128, the
//! believed means of the pending trials and of the members already chosen counting in
//! their best values. With many metrics the 128-weight average of the improvement is close
//! to the hypervolume improvement itself, which a corner point maximizes long before the
//! models know where the front is; a few weights per member make each one a different
//! scalarized target and spread the batch over the front (the random-scalarization idea of
//! ParEGO, Knowles 2006, and of Paria et al. 2019). Measured on DTLZ2 (5 seeds, batch 1,
//! 30 / 50 / 150 trials): 0.19 / 0.24 / 0.56 → 0.37 / 0.56 / 0.88; with four objectives
//! 0.13 / 0.13 / 0.35 → 0.34 / 0.47 / 0.74. One weight a member (0.31 / 0.50), two
//! (0.38 / 0.53) and eight (0.25 / 0.58) were measured too, and a UCB coefficient of 0.3
//! instead of 0 (0.38 / 0.59, but four objectives 0.28 / 0.37). Two metrics are
//! unchanged: their front is a curve that the shared weights cover.
//!
//! As every member of a many-metric batch has its own target, every member (not only the
//! first) is refined by the pattern search from its two best candidates; at batch 8 this
//! took DTLZ2 from 0.28 / 0.48 to 0.33 / 0.53 at 30 / 50 trials, and four objectives from
//! 0.23 / 0.36 to 0.26 / 0.43 (20 seeds). The searches read the means alone
//! (`k(X, c) · K⁻¹y`, no triangular solve), which pays for them: DTLZ2 and four objectives
//! took 24 / 36–39 ms p50 at 150 observations and batch 8, against 29 / 41 ms before.
//!
//! While the observations are few (below [`PESSIMISTIC_UNTIL`]), the many-metric members
//! rank the candidates by a lower confidence bound of the means, not the means
//! ([`MANY_BETA`]): the means of a few points in several dimensions extrapolate their trends
//! into the corners of the box, which greedy members then chose. With 200 seeds this took
//! DTLZ2 from 0.372 / 0.310 to 0.401 / 0.362 at 30 trials, batch 1 / 8, past multivariate
//! TPE's 0.373 / 0.340, and gained 0.021–0.050 in every DTLZ2 and four-objective cell at 30
//! and 50 trials (t 5.4 to 8.4).
//!
//! Unlike Vizier, each metric gets its own hyperparameters, and infeasible trials train a
//! separate feasibility model instead of entering the metric models as fake bad values.
//! Every step is capped by counts (fit iterations, candidates, refinement steps), never by
//! the clock, so a suggestion is deterministic and bounded whatever the observations.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sweeper_goal::Direction;

use super::gp::{self, FitCaps, Gp, Pred};
use super::quasi::QuasiSampler;
use super::{History, Sampler, fill_unique};
use crate::rng::Rng;
use crate::space::{Dim, Domain};
use crate::study::TrialState;

/// UCB coefficient on the posterior standard deviation.
const BETA: f64 = 1.8;
/// UCB coefficient of the UCB members of a batch of two or more (several metrics, the
/// axis members included). Why lower than [`BETA`]: a batch explores by itself (its members
/// condition each other's variance and believe each other's means), so each member can
/// lean more on the means. Measured with 200 seeds, paired by seed
/// (`benches/peers/sampler_paired.py`), against 1.8 at batch 8, 30 / 50 trials: serving
/// +0.014 (t 2.1) / +0.020 (t 3.0), the kernel +0.007 / +0.008 (t 1.0 / 1.1), ZDT1 +0.001
/// / +0.000; at 150 trials (20 seeds) serving +0.002, the kernel −0.004, ZDT1 +0.000 (|t| ≤
/// 0.3). 1.0 gained serving as much but cost the kernel 0.008–0.011; 0.5 cost serving
/// 0.012 at 50 trials. At batch 1 a lower coefficient (0.5–1.4) gained serving (1.0:
/// +0.016 / +0.021 at 30 / 50 trials) but cost the kernel at every value (1.0: −0.006 /
/// −0.004, and −0.035 at 150 trials, t −2.3), so batch 1 keeps [`BETA`].
const BATCH_BETA: f64 = 1.4;
/// UCB coefficient of the greedy members (several metrics): the posterior means alone.
const GREEDY_BETA: f64 = 0.0;
/// Coefficient of the members of [`MANY_METRICS`] or more while there are fewer than
/// [`PESSIMISTIC_UNTIL`] feasible observations: the candidates are ranked by the means
/// *minus* half a deviation, a lower confidence bound, and the pattern search then climbs
/// the means alone from the best of them. Why: on DTLZ2 at 30 trials, batch 8, the members
/// of the batch made on 16 observations landed at the box's corners (the median distance
/// term g of the picks 0.40, against 0.33 for uniform random points; one pick was
/// `[0, 0, 0, 1, 1, 0]`, g = 1): there the means extrapolate the trends of few points in
/// six dimensions, and where the variance is largest. That batch gained half of what
/// multivariate TPE's did (0.213 → 0.262 against 0.206 → 0.303, 60 seeds). With 200 seeds
/// (`bench/seeds200-contested-sweeper-lcb.jsonl`), paired by seed, against the means alone:
/// DTLZ2 +0.038 / +0.042 / +0.037 / +0.050 and four objectives +0.027 / +0.021 / +0.044 /
/// +0.026 at 30 / 1, 30 / 8, 50 / 1, 50 / 8 (t 5.4 to 8.4). Measured first with
/// 60 seeds, paired by seed, against the means alone, DTLZ2 / four objectives at 30 / 50
/// trials, batch 1 and 8: +0.022 to +0.046 in all eight cells (t 2.5 to 4.9); with the
/// bound in the pattern search too, about as much (+0.022 to +0.055) but 25–40 ms more a
/// suggestion at 150 observations; with −0.25, +0.020 to +0.045; with −1.0, gains at 30
/// trials only; for the greedy members of two metrics (−0.5), serving lost 0.046 at 30 / 1
/// (t −2.9), so two metrics keep the means.
const MANY_BETA: f64 = -0.5;
/// Feasible observations from which [`MANY_BETA`] gives way to the means alone: the
/// candidates' variance is a triangular solve of `n²` a point, and with the bound at every
/// step DTLZ2 and four objectives at 150 trials gained nothing (|t| ≤ 0.5, 20 seeds); with
/// the bound up to here, +0.008 to +0.017 (t 0.7 to 1.9).
const PESSIMISTIC_UNTIL: usize = 100;
/// Hypervolume-scalarization weight vectors per suggestion.
const WEIGHTS: usize = 128;
/// From this many metrics on, every member is greedy and draws its own few weights.
const MANY_METRICS: usize = 3;
/// Weight vectors of each member when there are [`MANY_METRICS`] or more.
const MEMBER_WEIGHTS: usize = 4;
/// Members of a two-metric batch (after the first) that maximize one metric's UCB alone,
/// one end of the front each. Why: on the kernel problem the high-TFLOP/s end of the front
/// (the largest tiles that still fit) was missing in most seeds at 50 trials, batch 8: the
/// 128 shared weights give an end of the front the weight of the few vectors near its
/// axis. Measured with 200 seeds, paired by seed (`benches/peers/sampler_paired.py`),
/// against the default without them: the kernel at 30 / 50 trials +0.011 (t 1.5) / +0.041
/// (t 5.3), its 50-trial median 0.795 → 0.845; serving −0.001 / −0.002 (t −0.2); ZDT1
/// +0.008 (t 2.7) / −0.002 (t −3.2). One member (the first metric's end only) gained the
/// kernel more (+0.048) but cost ZDT1 0.011 at 30 trials and depends on the metrics'
/// order; the means alone instead of the UCB took the kernel to +0.034 but serving to
/// −0.011 / −0.014; every fourth suggestion at batch 1 cost serving 0.03–0.04.
const AXIS_MEMBERS: usize = 2;
/// How far inside a float's bounds (in its unit coordinates) the UCB suggestion of two
/// metrics at batch 1 keeps, at each bound that no nondominated observation has reached
/// (within the margin). Why: the posterior deviation is largest at the box's faces, and
/// the UCB suggestions went there. On serving (200 seeds, 30 trials), 43% of them (4.7 a
/// seed) set the KV-load ratio to exactly 0 or 1, where both metrics are far below their
/// values at 0.01–0.03 and at 0.9, and which the front never holds. A bound that a front
/// point lies at stays open (ZDT1's distance variables are best at exactly 0), and the
/// greedy suggestions, which follow the means, are never held off. Measured with 200
/// seeds, paired by seed, against no margin: serving at 30 / 50 trials +0.034 (t 6.3) /
/// +0.047 (t 7.1), its 30-trial median 0.656 → 0.700; ZDT1 −0.0009 (t −1.2) / −0.0002
/// (t −0.9), and at 150 trials (20 seeds) serving −0.005 (t −1.8), ZDT1 +0.000; no other
/// two-metric problem has a float. Held off every bound (the front ignored), 0.01
/// cost ZDT1 0.010 / 0.006 (t −12 / −15), and margins of 0.005 and 0.02 traded serving
/// against ZDT1 (+0.016 and +0.046 at 30 trials; ZDT1 −0.009 and −0.016). At batch 8
/// (every UCB member) serving gained as much (+0.041 / +0.076), but ZDT1 at 30 trials lost
/// 0.042 (t −9.6); 0.018 (t −5.1) with a bound opened by a member of the batch too, and
/// 0.009 (t −2.7) with the axis members free as well; so batch 8 keeps the whole box.
/// The margin rules candidates out; should every candidate inside it be ruled out (by
/// the feasibility model too), the best remaining one is suggested as it is.
const EDGE_MARGIN: f64 = 0.01;
/// Values drawn on each dimension's line through the first member of a two-metric batch,
/// added to the candidates of the members after it. (The first member the models choose: a
/// batch that still holds quasi-random points of the initial design draws the lines through
/// its first model member, which may then be an axis member.) Why: those members are
/// unrefined candidates, and on ZDT1 (whose front lies where five of six floats are exactly
/// 0) the candidates held no point near the front that the refined first member had found:
/// of the members after it, the batch made on 24 observations put a median `g` of 1.13–1.65
/// (1.0 is the front; 3.58 for the axis member of the first metric, `f1 = x0`, which
/// ignores `g`) against the first member's 1.00. The first member changed in one coordinate
/// is a point that keeps what it got right, the neighbourhood a person tuning a
/// configuration tries first ("this one, with another batch size"); with these lines four
/// of those five members reach `g` = 1.00 (median). Measured with 200 seeds, paired by seed
/// (`benches/peers/sampler_paired.py`), against the default without them, batch 8: ZDT1
/// +0.043 (t 14.2) / +0.004 (t 8.3) at 30 / 50 trials, its 30-trial median 0.911 → 0.947;
/// serving +0.002 / −0.004 (t 0.3 / −0.7; with 1,000 seeds +0.001 / −0.005, t 0.5 / −2.0),
/// the kernel +0.002 / +0.003 (t 0.3 / 0.4). Tried and not kept: mutations of the first
/// member instead of (or with) the lines (ZDT1 +0.037 / +0.042, serving 50 / 8 −0.010
/// either way); 8 or 32 values a line (ZDT1 +0.038 / +0.041, serving 50 / 8 −0.019 /
/// −0.007); float lines only (serving 50 / 8 −0.011); lines through every member (ZDT1
/// +0.039, the kernel 50 / 8 −0.015, t −2.1).
const LINE_POINTS: usize = 16;
/// Two metrics, batch > 1 (no initial-design point in it), a space with a float, at
/// most this many feasible observations: the batch hedges its lengthscale prior. Its first
/// member is chosen (greedily, and refined) by each metric's model refitted under a long
/// lengthscale prior ([`gp::LONG_LS_MEAN`]); every member after it, and the conditioning
/// on the first, use the usual models. (The long models share the usual ones' weights and
/// their beliefs about trials still running from earlier calls.)
///
/// Why: on few observations the prior, not the data, sets the lengthscales, and no one
/// prior serves every problem. The usual short one makes the model fall back to its mean
/// a short way from the data, so it never predicts that a trend goes on to the bound: on
/// ZDT1 (best where five of six floats are exactly 0) the batch made on 16 observations put
/// its first member at a median `g` of 1.32 where Optuna's GP sampler puts several at
/// 1.00. The long prior for every member fixes that (ZDT1 30 / 8 median 0.947 → 0.970) but
/// costs the kernel 0.037 / 0.028 at 30 / 50 trials, batch 8 (t −3.2 / −2.5, 100 seeds),
/// the kernel at 30 / 1 0.029, and DTLZ2 and four objectives 0.035–0.087 in every cell
/// (see the sampler README). One member a batch keeps most of the gain. Beyond 40
/// observations the data, not the prior, sets the lengthscales; up to 40 [`refit_due`]
/// refits the usual models at every call too, so the second fit costs what the first does,
/// at the sizes where fits are cheap (ZDT1 at 30 / 8 went from 10.7 to 11.1 ms a
/// suggestion, median). Not in a space without a float: what it fixes is a trend running
/// on to the end of a continuous range, and on the two aiconfigurator spaces (integers,
/// levels and a categorical only) it cost Llama 3.1 70B at 10 / 20 trials, batch 8, 0.015 /
/// 0.022 (t −1.9 / −2.2, 100 seeds).
///
/// Measured against the default without it, paired by seed, batch 8, 30 / 50 trials: ZDT1
/// +0.013 / +0.0015 (t 4.6 / 3.6, 100 seeds; the 30-trial median 0.947 → 0.962; seeds
/// 0–59 0.963 against the GP sampler's 0.958, share 0.62, p 0.02), serving −0.003 /
/// +0.001 (t −0.7 / 0.3, 400 seeds); the kernel and the aiconfigurator spaces (no float),
/// batch 1 and three or more metrics are unchanged. Up to 16 observations instead of 40:
/// ZDT1 +0.011 (t 4.1); up to 8: +0.002.
const HEDGE_UNTIL: usize = 40;
/// Best candidates a refined member's pattern search starts from.
const REFINE_STARTS: usize = 2;
/// From this many points on, a prediction runs one model a task on rayon's threads (below
/// it, a task's work is smaller than the threads' wake-up: measured, 22% of a
/// four-objective suggestion went to `sched_yield` and futexes with 14-point tasks).
const PARALLEL_POINTS: usize = 256;
/// Largest fully discrete space scored exhaustively.
const ENUMERATE: u128 = 4096;
/// Largest discrete product combined with a few float values each.
const ENUMERATE_MIXED: u128 = 512;
/// Candidates spent on those combinations.
const MIXED_BUDGET: u128 = 512;
/// The worse half of a metric is warped only when its worst value lies further below the
/// median than this many deviations of the better half (a heavy tail).
const HEAVY_TAIL: f64 = 4.0;

/// Work caps of the default algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Effort {
    /// Random candidates per suggestion.
    pub(crate) random: usize,
    /// Mutations of the best points per suggestion.
    pub(crate) mutations: usize,
    /// Pattern-search steps of the local refinement.
    pub(crate) refine_steps: usize,
    /// L-BFGS iterations, cold and warm.
    pub(crate) cold_iters: usize,
    pub(crate) warm_iters: usize,
}

impl Default for Effort {
    fn default() -> Self {
        Effort {
            random: 600,
            mutations: 900,
            refine_steps: 20,
            cold_iters: 60,
            warm_iters: 12,
        }
    }
}

/// The default algorithm's state: random streams and the last fitted hyperparameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct DefaultSampler {
    rng: Rng,
    quasi: QuasiSampler,
    /// Last fitted `θ` per metric (warm starts).
    hyper: Vec<Option<Vec<f64>>>,
    /// Last fitted `θ` of the feasibility model.
    feas_hyper: Option<Vec<f64>>,
    /// Number of observations at each metric's last fit (then the feasibility model's).
    fitted_at: Vec<usize>,
    /// Last fitted `θ` per metric under the long lengthscale prior (see [`HEDGE_UNTIL`]),
    /// the next such fit's warm start, and the number of observations at each of those
    /// fits.
    #[serde(default)]
    long_hyper: Vec<Option<Vec<f64>>>,
    #[serde(default)]
    long_fitted_at: Vec<usize>,
    effort: Effort,
}

/// Per-metric model and the observed front, in warped, standardized, maximized units.
#[derive(Clone)]
struct Models {
    gps: Vec<Gp>,
    /// Warped values of the feasible observations, per metric.
    z: Vec<Vec<f64>>,
    /// LCB at the feasible observations (single-metric studies only).
    lcb: Vec<Vec<f64>>,
    feas: Option<(Gp, f64, f64)>,
    /// One reference point per weight vector.
    references: Vec<Vec<f64>>,
    weights: Vec<Vec<f64>>,
    /// `max over observations of s_w(z)^k` per weight.
    best_s: Vec<f64>,
    /// UCB coefficient of the member being chosen (several metrics).
    beta: f64,
    /// Per metric, the best observed value and the loosest reference ([`reference_point`]):
    /// the range each weight's reference is drawn in.
    ideal: Vec<f64>,
    loosest: Vec<f64>,
    /// Posterior means believed into the front (pending trials and chosen members).
    believed: Vec<Vec<f64>>,
    /// Per dimension, the range the member being chosen keeps to: a float's in its unit
    /// coordinates, (−∞, ∞) for every other dimension; empty: the whole box
    /// ([`EDGE_MARGIN`]).
    bounds: Vec<(f64, f64)>,
}

impl DefaultSampler {
    pub(crate) fn new(seed: u64, metrics: usize) -> Self {
        DefaultSampler {
            rng: Rng::new(seed, 3),
            quasi: QuasiSampler::new(seed),
            hyper: vec![None; metrics],
            feas_hyper: None,
            fitted_at: vec![0; metrics + 1],
            long_hyper: vec![None; metrics],
            long_fitted_at: vec![0; metrics],
            effort: Effort::default(),
        }
    }

    pub(crate) fn set_effort(&mut self, effort: Effort) {
        self.effort = effort;
    }

    fn caps(&self) -> FitCaps {
        FitCaps {
            cold_iters: self.effort.cold_iters,
            warm_iters: self.effort.warm_iters,
            restarts: 2,
            restart_below: 30,
            ls_mean: gp::LS_MEAN,
        }
    }
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
fn reference_point(zs: &[Vec<f64>]) -> Vec<f64> {
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
fn nondominated_columns(z: &[Vec<f64>]) -> Vec<usize> {
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
fn edge_bounds(history: &History<'_>, feasible: &[usize], z: &[Vec<f64>]) -> Vec<(f64, f64)> {
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
fn scalarize(y: &[f64], r: &[f64], w: &[f64]) -> f64 {
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
fn powi(mut x: f64, mut k: usize) -> f64 {
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
    fn draw_weights(&mut self, rng: &mut Rng, count: usize) {
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
    fn best_scalarized(&self, y: &mut [f64], r: &[f64], w: &[f64]) -> f64 {
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
    fn axis_weight(&mut self, a: usize) {
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
    fn believe(&mut self, px: &[f64], count: usize) {
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
    fn ucb_acquisition(&self, means: &[&[f64]], vars: &[&[f64]], out: &mut [f64]) {
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
    fn feasible(&self, xc: &[f64], m: usize) -> Vec<bool> {
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
    /// asks for (see [`MANY_BETA`]).
    ///
    /// From [`PARALLEL_POINTS`] points on, the models predict on rayon's threads, one model
    /// a task; each model's arithmetic is the same as on one thread, so the suggestions are
    /// bit-identical.
    fn predict(&self, xc: &[f64], m: usize, means_only: bool) -> Vec<Pred> {
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
    fn score(&self, xc: &[f64], m: usize) -> Vec<f64> {
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
fn model_inputs(
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
fn refit_due(at: usize, n: usize) -> bool {
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
    fn hyper_for(
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
    /// [`HEDGE_UNTIL`]), conditioned on the same observations and pending points.
    fn long_models(
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

    fn build_models(
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
    /// Candidate points: enumerated discrete combinations, random points, and mutations of
    /// the best observations (the Pareto-optimal ones for several metrics).
    fn candidates(
        &mut self,
        history: &History<'_>,
        models: &Models,
        feasible: &[usize],
    ) -> Vec<Vec<f64>> {
        let dom = history.domain;
        let mut out: Vec<Vec<f64>> = Vec::new();
        let card = dom.cardinality();
        let dcard = dom.discrete_cardinality();
        if let Some(c) = card
            && c <= ENUMERATE
        {
            for k in 0..c {
                out.push(dom.discrete_combo(k, 0.0));
            }
            return out;
        }
        if card.is_none() && dcard > 1 && dcard <= ENUMERATE_MIXED {
            let per = (MIXED_BUDGET / dcard).max(2);
            for k in 0..dcard {
                for _ in 0..per {
                    let mut p = dom.discrete_combo(k, 0.0);
                    for (j, (_, dim)) in dom.dims.iter().enumerate() {
                        if dim.levels().is_none() {
                            p[j] = self.rng.uniform();
                        }
                    }
                    out.push(p);
                }
            }
        }
        for _ in 0..self.effort.random {
            out.push(dom.random(&mut self.rng));
        }
        // anchors: the best observations
        let k = models.z.len();
        let n = feasible.len();
        let mut anchors: Vec<usize> = Vec::new();
        if k == 1 {
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&a, &b| models.z[0][b].total_cmp(&models.z[0][a]).then(a.cmp(&b)));
            anchors.extend(order.into_iter().take(5));
        } else {
            anchors = nondominated_columns(&models.z);
            while anchors.len() > 24 {
                let r = self.rng.below(anchors.len());
                anchors.remove(r);
            }
        }
        if !anchors.is_empty() {
            let scales = [0.02, 0.05, 0.12, 0.3];
            for t in 0..self.effort.mutations {
                let a = anchors[t % anchors.len()];
                let scale = scales[(t / anchors.len()) % scales.len()];
                out.push(dom.mutate(&history.points[feasible[a]], scale, &mut self.rng));
            }
        }
        out
    }

    /// [`LINE_POINTS`] points on each dimension's line through `point`: `point` with that
    /// one coordinate redrawn as a random point draws it (a float uniform in its unit
    /// interval, a log integer uniform over its log range), except that a linear integer
    /// and a level index are drawn exactly, uniform among their values. The draws are with
    /// replacement: points equal to `point` or to each other occur (a dimension of three
    /// levels gives at most two new points), and the caller's filters drop them.
    fn lines_through(&mut self, dom: &Domain, point: &[f64]) -> Vec<Vec<f64>> {
        let mut out = Vec::with_capacity(dom.dims.len() * LINE_POINTS);
        for (j, (_, dim)) in dom.dims.iter().enumerate() {
            for _ in 0..LINE_POINTS {
                let mut p = point.to_vec();
                p[j] = match dim {
                    Dim::Int { lo, hi, log: false } => {
                        // the width is at most 2^52 (the space's check), so it fits
                        let span = usize::try_from(hi.abs_diff(*lo))
                            .map_or(usize::MAX, |w| w.saturating_add(1));
                        (*lo as f64 + self.rng.below(span) as f64).clamp(*lo as f64, *hi as f64)
                    }
                    Dim::Discrete { values, .. } => self.rng.below(values.len()) as f64,
                    Dim::Cat { choices } => self.rng.below(choices.len()) as f64,
                    Dim::Float { .. } | Dim::Int { .. } => dim.at_unit(self.rng.uniform()),
                };
                out.push(p);
            }
        }
        out
    }

    /// Pattern search from `start` on the acquisition; returns the best point and value.
    fn refine(
        &self,
        history: &History<'_>,
        models: &Models,
        start: Vec<f64>,
        start_val: f64,
        chosen: &[Vec<f64>],
    ) -> (Vec<f64>, f64) {
        let dom = history.domain;
        let mut cur = start;
        // a start outside the member's range (a second start can be a candidate scored
        // −∞) is moved into it
        for (v, &(lo, hi)) in cur.iter_mut().zip(&models.bounds) {
            *v = v.clamp(lo, hi);
        }
        let mut val = start_val;
        let mut step = 0.05;
        for _ in 0..self.effort.refine_steps {
            let mut neigh: Vec<Vec<f64>> = Vec::new();
            let mut has_float = false;
            for (j, (_, dim)) in dom.dims.iter().enumerate() {
                let mut push = |v: f64| {
                    if v != cur[j] {
                        let mut p = cur.clone();
                        p[j] = v;
                        neigh.push(p);
                    }
                };
                match dim {
                    crate::space::Dim::Float { .. } => {
                        has_float = true;
                        let (lo, hi) = models.bounds.get(j).copied().unwrap_or((0.0, 1.0));
                        push((cur[j] - step).max(lo));
                        push((cur[j] + step).min(hi));
                    }
                    crate::space::Dim::Int { lo, hi, .. } => {
                        push((cur[j] - 1.0).max(*lo as f64));
                        push((cur[j] + 1.0).min(*hi as f64));
                    }
                    crate::space::Dim::Discrete { values, .. } => {
                        push((cur[j] - 1.0).max(0.0));
                        push((cur[j] + 1.0).min((values.len() - 1) as f64));
                    }
                    crate::space::Dim::Cat { choices } => {
                        for c in 0..choices.len() {
                            push(c as f64);
                        }
                    }
                }
            }
            if neigh.is_empty() {
                break;
            }
            let x = dom.features_of(&neigh);
            let s = models.score(&x, neigh.len());
            let mut best: Option<usize> = None;
            for (i, v) in s.iter().enumerate() {
                if *v > val && best.is_none_or(|b| *v > s[b]) {
                    let p = &neigh[i];
                    if !history.is_taken(p) && !chosen.iter().any(|q| dom.same(q, p)) {
                        best = Some(i);
                    }
                }
            }
            if let Some(b) = best {
                val = s[b];
                cur = neigh.swap_remove(b);
            } else if has_float && step > 2e-3 {
                step *= 0.5;
            } else {
                break;
            }
        }
        (cur, val)
    }
}

impl Sampler for DefaultSampler {
    fn suggest(&mut self, history: &History<'_>, count: usize) -> Vec<Vec<f64>> {
        let dom = history.domain;
        if self.hyper.len() != history.metrics.len() || self.fitted_at.len() != self.hyper.len() + 1
        {
            self.hyper = vec![None; history.metrics.len()];
            self.fitted_at = vec![0; history.metrics.len() + 1];
        }
        let mut out: Vec<Vec<f64>> = Vec::new();
        if dom.len() == 0 {
            return fill_unique(history, &[], count, Vec::new);
        }
        let n_init = (dom.n_features() + 2).clamp(4, 10);
        let taken = history.records.len();
        if taken < n_init {
            let k = (n_init - taken).min(count);
            let quasi = &mut self.quasi;
            out = fill_unique(history, &[], k, || dom.at_unit(&quasi.next_unit(dom.len())));
        }
        if out.len() == count {
            return out;
        }
        let mut feasible = Vec::new();
        let mut infeasible = Vec::new();
        for (i, r) in history.records.iter().enumerate() {
            match r.state {
                TrialState::Completed(_) => feasible.push(i),
                TrialState::Infeasible(_) => infeasible.push(i),
                TrialState::Pending => {}
            }
        }
        if feasible.is_empty() {
            // nothing to model yet: spread out, away from everything taken
            let rest = count - out.len();
            for _ in 0..rest {
                let quasi = &mut self.quasi;
                let cands = fill_unique(history, &out, 64, || {
                    dom.at_unit(&quasi.next_unit(dom.len()))
                });
                let taken_x: Vec<Vec<f64>> =
                    history.points.iter().chain(out.iter()).cloned().collect();
                let tx = dom.features_of(&taken_x);
                let cx = dom.features_of(&cands);
                let d = dom.n_features().max(1);
                let best = cands
                    .iter()
                    .enumerate()
                    .map(|(c, _)| {
                        let a = &cx[c * d..(c + 1) * d];
                        let near = tx
                            .chunks_exact(d)
                            .map(|b| a.iter().zip(b).map(|(p, q)| (p - q) * (p - q)).sum::<f64>())
                            .fold(f64::INFINITY, f64::min);
                        (c, near)
                    })
                    .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)));
                match best {
                    Some((c, _)) => out.push(cands[c].clone()),
                    None => break,
                }
            }
            return out;
        }
        // Trials suggested by earlier calls and still running (an asynchronous sweep keeps
        // some in flight at every call) are treated as the earlier members of this batch:
        // they condition the variance, and under several metrics their means are believed
        // into the front before the first member is chosen, so that neither the UCB nor
        // the greedy member proposes what is already being evaluated next door. A sweep in
        // rounds observes every trial before it asks again, so it has none.
        let earlier: Vec<Vec<f64>> = history.pending_points().cloned().collect();
        let pending: Vec<Vec<f64>> = earlier.iter().chain(out.iter()).cloned().collect();
        let mut models = self.build_models(history, &feasible, &infeasible, &pending);
        if !earlier.is_empty() {
            models.believe(&dom.features_of(&earlier), earlier.len());
        }
        let mut cands = self.candidates(history, &models, &feasible);
        let mut m = cands.len();
        let mut xc = dom.features_of(&cands);
        let kmetrics = models.gps.len();
        let many = kmetrics >= MANY_METRICS;
        // with many metrics and few observations the candidates are ranked by the lower
        // bound of the means (see [`MANY_BETA`]), which needs their variance
        let pessimistic = many && feasible.len() < PESSIMISTIC_UNTIL;
        let mut preds = models.predict(&xc, m, many && !pessimistic);
        let mut ok = models.feasible(&xc, m);
        let mut used = vec![false; m];
        let mut first = true;
        let has_float = dom.dims.iter().any(|(_, d)| matches!(d, Dim::Float { .. }));
        // (not when the batch already holds initial-design points: its first model member
        // is then an axis or UCB member, whose weights the long models' copy lacks)
        let mut long = if kmetrics == 2
            && count > 1
            && out.is_empty()
            && has_float
            && feasible.len() <= HEDGE_UNTIL
        {
            Some(self.long_models(history, &feasible, &pending, &models))
        } else {
            None
        };
        while out.len() < count {
            let greedy =
                many || out.is_empty() && (count > 1 || history.records.len().is_multiple_of(2));
            models.beta = if pessimistic {
                MANY_BETA
            } else if greedy {
                GREEDY_BETA
            } else if count > 1 {
                BATCH_BETA
            } else {
                BETA
            };
            if let Some(l) = long.as_mut() {
                l.beta = models.beta;
            }
            if many {
                models.draw_weights(&mut self.rng, MEMBER_WEIGHTS);
            }
            // two metrics, batch > 1: members 1 and 2 each push one end of the front (see
            // [`AXIS_MEMBERS`]; not greedy, so at [`BATCH_BETA`]); the member after
            // them draws the shared weights again, as the axis weight replaced them
            let axis = kmetrics == 2 && count > 1 && (1..=AXIS_MEMBERS).contains(&out.len());
            if axis {
                models.axis_weight((out.len() - 1) % kmetrics);
            } else if kmetrics == 2 && count > 1 && out.len() == AXIS_MEMBERS + 1 {
                models.draw_weights(&mut self.rng, WEIGHTS);
            }
            // two metrics, batch 1: the UCB suggestion keeps off the float bounds that no
            // front point has reached (see [`EDGE_MARGIN`])
            models.bounds = if kmetrics == 2 && count == 1 && !greedy {
                edge_bounds(history, &feasible, &models.z)
            } else {
                Vec::new()
            };
            // the first member of a two-metric batch on few observations is chosen by the
            // long-lengthscale models (see [`HEDGE_UNTIL`]); everything after it by the usual
            let hedge = if first { long.take() } else { None };
            let long_preds = hedge.as_ref().map(|l| l.predict(&xc, m, false));
            let (acq_models, acq_preds) = match (&hedge, &long_preds) {
                (Some(l), Some(p)) => (l, p),
                _ => (&models, &preds),
            };
            let means: Vec<&[f64]> = acq_preds.iter().map(|p| &p.mean[..]).collect();
            let vars: Vec<&[f64]> = acq_preds.iter().map(|p| &p.var[..]).collect();
            let mut ucb_acq = vec![0.0; m];
            acq_models.ucb_acquisition(&means, &vars, &mut ucb_acq);
            // pure exploration score: total variance among promising points
            let mut pe = vec![f64::NEG_INFINITY; m];
            if kmetrics == 1 && !first {
                for c in 0..m {
                    if !ok[c] {
                        continue;
                    }
                    let promising = !(0..feasible.len()).any(|j| {
                        (0..kmetrics)
                            .all(|k| models.lcb[k][j] > means[k][c] + BETA * vars[k][c].sqrt())
                    });
                    if promising {
                        pe[c] = vars.iter().map(|v| v[c]).sum();
                    }
                }
            }
            let use_pe = kmetrics == 1 && !first && pe.iter().any(|v| v.is_finite());
            let score: Vec<f64> = (0..m)
                .map(|c| {
                    if models
                        .bounds
                        .iter()
                        .zip(&cands[c])
                        .any(|(&(lo, hi), &v)| v < lo || v > hi)
                    {
                        f64::NEG_INFINITY
                    } else if use_pe {
                        pe[c]
                    } else if ok[c] {
                        ucb_acq[c]
                    } else {
                        f64::NEG_INFINITY
                    }
                })
                .collect();
            let mut order: Vec<usize> = (0..m).filter(|&c| !used[c]).collect();
            order.sort_by(|&a, &b| score[b].total_cmp(&score[a]).then(a.cmp(&b)));
            let mut picks = order.into_iter().filter(|&c| {
                !history.is_taken(&cands[c]) && !out.iter().any(|q| dom.same(q, &cands[c]))
            });
            let Some(best) = picks.next() else {
                // every candidate is taken: fall back to any new point
                let rng = &mut self.rng;
                let more = fill_unique(history, &out, 1, || dom.random(rng));
                if more.is_empty() {
                    break;
                }
                out.extend(more);
                continue;
            };
            used[best] = true;
            // the first member is refined by a pattern search; with many metrics every
            // member is, as each has its own weights (and so its own optimum)
            let (point, kind_col) = if (first || many) && score[best].is_finite() {
                // the searches from the starts are independent (`refine` reads the models
                // only): one a task on rayon's threads, then kept in start order, the first
                // unless a later one scores higher, as one thread would
                let starts: Vec<usize> = std::iter::once(best)
                    .chain(picks.by_ref().take(REFINE_STARTS - 1))
                    .collect();
                let this = &*self;
                let found: Vec<(Vec<f64>, f64)> = starts
                    .par_iter()
                    .map(|&c| this.refine(history, acq_models, cands[c].clone(), score[c], &out))
                    .collect();
                let mut found = found.into_iter();
                let mut top = found.next().expect("the best candidate is a start");
                for alt in found {
                    if alt.1 > top.1 {
                        top = alt;
                    }
                }
                let same = dom.same(&top.0, &cands[best]);
                (top.0, if same { Some(best) } else { None })
            } else {
                (cands[best].clone(), Some(best))
            };
            let lines = first && kmetrics == 2 && out.len() + 1 < count;
            first = false;
            let px = dom.features_of(std::slice::from_ref(&point));
            // believe the new point's posterior mean: it joins the front of this batch, so
            // the next UCB member looks for improvement elsewhere
            if kmetrics >= 2 {
                models.believe(&px, 1);
            }
            // condition the candidate posteriors on the new pending point (not with many
            // metrics: their members spread by their own weights and the believed means,
            // and the variance, when there is one, only bounds the means of the ranking)
            let mut first_cond: Vec<(Vec<f64>, f64)> = Vec::new();
            if !many {
                for (g, pred) in models.gps.iter().zip(preds.iter_mut()) {
                    let rows = pred.v.len() / m.max(1);
                    let (vp, var_p) = if let Some(c) = kind_col {
                        ((0..rows).map(|i| pred.v[i * m + c]).collect(), pred.var[c])
                    } else {
                        // a refined point outside the candidate set (only ever the first
                        // member, before any row was added): predict it from the model itself
                        let single = g.predict(&px, 1);
                        (single.v, single.var[0])
                    };
                    if vp.len() == rows {
                        let kp = g.kernel_to(&xc, &px);
                        g.condition(pred, &vp, var_p, &kp);
                        if lines {
                            first_cond.push((vp, var_p));
                        }
                    }
                }
            }
            // two metrics, batch > 1: the lines through the first member join the
            // candidates of the members after it (see [`LINE_POINTS`]), their posteriors
            // conditioned on the first member as the others' were
            if lines && first_cond.len() == kmetrics {
                let extra = self.lines_through(dom, &point);
                let m2 = extra.len();
                let x2 = dom.features_of(&extra);
                let mut p2 = models.predict(&x2, m2, false);
                for ((g, q), (vp, var_p)) in models.gps.iter().zip(&mut p2).zip(&first_cond) {
                    let kp = g.kernel_to(&x2, &px);
                    g.condition(q, vp, *var_p, &kp);
                }
                for (pred, q) in preds.iter_mut().zip(p2) {
                    pred.append_columns(m, q, m2);
                }
                ok.extend(models.feasible(&x2, m2));
                used.extend(std::iter::repeat_n(false, m2));
                xc.extend(x2);
                cands.extend(extra);
                m += m2;
            }
            out.push(point);
        }
        out
    }

    fn save(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::{
        DefaultSampler, EDGE_MARGIN, History, LINE_POINTS, edge_bounds, nondominated_columns,
    };
    use crate::rng::Rng;
    use crate::space::{Domain, ParamSpec, SearchSpace};

    /// A state saved before the hedge member's long models existed (no `long_hyper`,
    /// no `long_fitted_at`) still loads, and resumes with no long fit cached.
    #[test]
    fn a_state_saved_without_the_long_models_loads() {
        let mut saved = crate::sampler::Sampler::save(&DefaultSampler::new(3, 2));
        let obj = saved.as_object_mut().expect("the state is an object");
        assert!(obj.remove("long_hyper").is_some());
        assert!(obj.remove("long_fitted_at").is_some());
        let back: DefaultSampler = serde_json::from_value(saved).expect("loads");
        assert!(back.long_hyper.is_empty() && back.long_fitted_at.is_empty());
    }

    /// Every point of the lines is a point of the space that differs from the member in
    /// one coordinate at most, and a log integer's line is spread over its log range.
    #[test]
    fn lines_are_points_of_the_space_one_coordinate_away() {
        let mut space = SearchSpace::new();
        let specs = [
            (
                "f",
                ParamSpec::Float {
                    lo: -2.0,
                    hi: 3.0,
                    log: false,
                },
            ),
            (
                "lr",
                ParamSpec::Float {
                    lo: 1e-4,
                    hi: 1e-1,
                    log: true,
                },
            ),
            (
                "batch",
                ParamSpec::Int {
                    lo: 1,
                    hi: 1024,
                    log: true,
                },
            ),
            (
                "offset",
                ParamSpec::Int {
                    lo: -7,
                    hi: 5,
                    log: false,
                },
            ),
            (
                "tp",
                ParamSpec::Discrete {
                    values: vec![1.0, 2.0, 4.0, 8.0],
                    log: true,
                },
            ),
            (
                "router",
                ParamSpec::Categorical {
                    choices: vec!["a".into(), "b".into(), "c".into()],
                },
            ),
        ];
        for (name, spec) in specs {
            space.add(name, spec).unwrap();
        }
        let domain = Domain::new(&space);
        let mut sampler = DefaultSampler::new(11, 2);
        let mut rng = Rng::new(4, 4);
        let mut low_draws = 0;
        for _ in 0..3 {
            let member = domain.random(&mut rng);
            let lines = sampler.lines_through(&domain, &member);
            assert_eq!(lines.len(), 6 * LINE_POINTS);
            for (i, p) in lines.iter().enumerate() {
                assert!(domain.contains(p), "{p:?} is not a point of the space");
                let changed: Vec<usize> = (0..p.len()).filter(|&j| p[j] != member[j]).collect();
                assert!(
                    changed.iter().all(|&j| j == i / LINE_POINTS),
                    "{changed:?} at {i}"
                );
                if i / LINE_POINTS == 2 && p[2] <= 32.0 {
                    low_draws += 1;
                }
            }
        }
        // log-uniform over 1..=1024 puts about 55% of the draws at 32 or below (48 draws:
        // about 26); uniform over the values would put 3% there (about 1.5)
        assert!(
            low_draws >= 12,
            "{low_draws} of 48 batch draws at 32 or below"
        );
    }

    #[test]
    fn edge_bounds_open_only_the_faces_a_front_point_lies_at() {
        let mut space = SearchSpace::new();
        for name in ["x", "y"] {
            let unit = ParamSpec::Float {
                lo: 0.0,
                hi: 1.0,
                log: false,
            };
            space.add(name, unit).expect("valid");
        }
        let n = ParamSpec::Int {
            lo: 1,
            hi: 4,
            log: false,
        };
        space.add("n", n).expect("valid");
        let domain = Domain::new(&space);
        // trial 1 is infeasible and sits at x = 0; trial 3 is dominated and sits at
        // y = 0; trial 2, on the front, at y = 1 (x within the margin of 1)
        let points = vec![
            vec![0.5, 0.5, 1.0],
            vec![0.0, 0.5, 1.0],
            vec![0.995, 1.0, 4.0],
            vec![0.5, 0.0, 2.0],
        ];
        let feasible = [0, 2, 3];
        // two maximized metrics of the feasible trials: 0 and 2 on the front, 3 dominated
        let z = vec![vec![1.0, 0.0, 0.5], vec![0.0, 1.0, -1.0]];
        let history = History {
            domain: &domain,
            space: &space,
            metrics: &[],
            records: &[],
            points: &points,
        };
        let b = edge_bounds(&history, &feasible, &z);
        assert_eq!(
            b,
            vec![
                (EDGE_MARGIN, 1.0),
                (EDGE_MARGIN, 1.0),
                (f64::NEG_INFINITY, f64::INFINITY)
            ]
        );
    }

    /// The pairwise loop the sampler used before, as the oracle.
    fn oracle(z: &[Vec<f64>]) -> Vec<usize> {
        let (k, n) = (z.len(), z[0].len());
        (0..n)
            .filter(|&j| {
                !(0..n).any(|i| {
                    i != j
                        && (0..k).all(|m| z[m][i] >= z[m][j])
                        && (0..k).any(|m| z[m][i] > z[m][j])
                })
            })
            .collect()
    }

    #[test]
    fn inlined_powi_is_bit_identical() {
        for x in [0.0, 1e-300, 0.3, 0.7, 1.0, 1.5, 3.0, 1e10, f64::INFINITY] {
            for k in 0..=9 {
                let want = x.powi(i32::try_from(k).expect("small"));
                assert_eq!(super::powi(x, k).to_bits(), want.to_bits(), "{x}^{k}");
            }
        }
    }

    #[test]
    fn ties_duplicates_and_nan_as_the_pairwise_loop() {
        let cases: Vec<Vec<Vec<f64>>> = vec![
            // duplicates of a front row, and of a dominated row
            vec![
                vec![1.0, 1.0, 0.0, 0.0, 2.0],
                vec![1.0, 1.0, 0.0, 0.0, -1.0],
            ],
            // ties in one column only
            vec![vec![1.0, 1.0, 1.0], vec![0.0, 2.0, 2.0]],
            // -0.0 and 0.0 are equal
            vec![vec![0.0, -0.0], vec![-0.0, 0.0]],
            // three metrics, all equal
            vec![vec![3.0; 4], vec![3.0; 4], vec![3.0; 4]],
            // a NaN row is kept and dominates nothing
            vec![vec![f64::NAN, 1.0, 0.5], vec![9.0, 1.0, 2.0]],
            // one observation
            vec![vec![0.3], vec![0.7]],
        ];
        for z in &cases {
            assert_eq!(nondominated_columns(z), oracle(z), "{z:?}");
        }
        assert_eq!(nondominated_columns(&[vec![], vec![]]), Vec::<usize>::new());
    }

    #[test]
    fn small_integer_grids_as_the_pairwise_loop() {
        // Every value on a 3-level grid, so that ties and duplicates are the rule.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 3) as f64
        };
        for k in 2..=4 {
            for n in [0, 1, 2, 5, 17, 60] {
                let z: Vec<Vec<f64>> = (0..k).map(|_| (0..n).map(|_| next()).collect()).collect();
                if n > 0 {
                    assert_eq!(nondominated_columns(&z), oracle(&z), "{z:?}");
                }
            }
        }
    }
}
