//! The default algorithm's constants, each with the measurement that chose it.

/// UCB coefficient on the posterior standard deviation.
pub(super) const BETA: f64 = 1.8;
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
pub(super) const BATCH_BETA: f64 = 1.4;
/// UCB coefficient of the greedy members (several metrics): the posterior means alone.
pub(super) const GREEDY_BETA: f64 = 0.0;
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
pub(super) const MANY_BETA: f64 = -0.5;
/// Feasible observations from which [`MANY_BETA`] gives way to the means alone: the
/// candidates' variance is a triangular solve of `n²` a point, and with the bound at every
/// step DTLZ2 and four objectives at 150 trials gained nothing (|t| ≤ 0.5, 20 seeds); with
/// the bound up to here, +0.008 to +0.017 (t 0.7 to 1.9).
pub(super) const PESSIMISTIC_UNTIL: usize = 100;
/// Hypervolume-scalarization weight vectors per suggestion.
pub(super) const WEIGHTS: usize = 128;
/// From this many metrics on, every member is greedy and draws its own few weights.
pub(super) const MANY_METRICS: usize = 3;
/// Weight vectors of each member when there are [`MANY_METRICS`] or more.
pub(super) const MEMBER_WEIGHTS: usize = 4;
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
pub(super) const AXIS_MEMBERS: usize = 2;
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
pub(super) const EDGE_MARGIN: f64 = 0.01;
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
pub(super) const LINE_POINTS: usize = 16;
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
/// observations the data, not the prior, sets the lengthscales; up to 40
/// [`refit_due`](super::models::refit_due) refits the usual models at every call too, so the second fit costs what the first does,
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
pub(super) const HEDGE_UNTIL: usize = 40;
/// Best candidates a refined member's pattern search starts from.
pub(super) const REFINE_STARTS: usize = 2;
/// From this many points on, a prediction runs one model a task on rayon's threads (below
/// it, a task's work is smaller than the threads' wake-up: measured, 22% of a
/// four-objective suggestion went to `sched_yield` and futexes with 14-point tasks).
pub(super) const PARALLEL_POINTS: usize = 256;
/// Largest fully discrete space scored exhaustively.
pub(super) const ENUMERATE: u128 = 4096;
/// Largest discrete product combined with a few float values each.
pub(super) const ENUMERATE_MIXED: u128 = 512;
/// Candidates spent on those combinations.
pub(super) const MIXED_BUDGET: u128 = 512;
/// The worse half of a metric is warped only when its worst value lies further below the
/// median than this many deviations of the better half (a heavy tail).
pub(super) const HEAVY_TAIL: f64 = 4.0;
