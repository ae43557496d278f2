//! The steps of one suggestion: the initial design, the spread-out points while nothing is
//! observed, and the members of a modelled batch, each aimed, scored, picked, refined and
//! then conditioned on by the members after it.

use rayon::prelude::*;

use super::models::{Models, edge_bounds};
use super::state::DefaultSampler;
use super::tuning::{
    AXIS_MEMBERS, BATCH_BETA, BETA, GREEDY_BETA, HEDGE_UNTIL, MANY_BETA, MANY_METRICS,
    MEMBER_WEIGHTS, PESSIMISTIC_UNTIL, REFINE_STARTS, WEIGHTS,
};
use crate::sampler::gp::Pred;
use crate::sampler::{History, fill_unique};
use crate::space::Dim;
use crate::trial::TrialState;

/// What the members of one modelled batch share: the models, the candidates with their
/// posteriors (conditioned on the members chosen so far), and where the batch stands.
pub(super) struct Batch {
    /// Points asked for by the call.
    count: usize,
    /// The feasible observations, indices into the history.
    feasible: Vec<usize>,
    models: Models,
    /// The long-lengthscale models of the hedge member (see [`HEDGE_UNTIL`]), until the
    /// first member takes them.
    long: Option<Models>,
    cands: Vec<Vec<f64>>,
    /// The candidates' features, row-major.
    xc: Vec<f64>,
    /// Each metric's posterior at the candidates.
    preds: Vec<Pred>,
    /// Whether the feasibility model accepts each candidate.
    ok: Vec<bool>,
    /// Whether each candidate is a member already.
    used: Vec<bool>,
    /// Whether the next member is the first the models choose.
    first: bool,
    /// Metrics of the study.
    kmetrics: usize,
    /// [`MANY_METRICS`] or more.
    many: bool,
    /// Many metrics on few observations: candidates ranked by a lower bound of the means
    /// (see [`MANY_BETA`]).
    pessimistic: bool,
}

/// The feasible and the infeasible observations, indices into the history.
pub(super) fn observed(history: &History<'_>) -> (Vec<usize>, Vec<usize>) {
    let mut feasible = Vec::new();
    let mut infeasible = Vec::new();
    for (i, r) in history.records.iter().enumerate() {
        match r.state {
            TrialState::Completed(_) => feasible.push(i),
            TrialState::Infeasible(_) => infeasible.push(i),
            TrialState::Pending => {}
        }
    }
    (feasible, infeasible)
}

impl DefaultSampler {
    /// Resets the fitted hyperparameters when the study's metric count is not the one they
    /// were fitted for.
    pub(super) fn match_metrics(&mut self, metrics: usize) {
        if self.hyper.len() != metrics || self.fitted_at.len() != self.hyper.len() + 1 {
            self.hyper = vec![None; metrics];
            self.fitted_at = vec![0; metrics + 1];
        }
    }

    /// The quasi-random points of the initial design still due (the first
    /// `n_features + 2` trials, 4 to 10), at most `count`.
    pub(super) fn initial_design(&mut self, history: &History<'_>, count: usize) -> Vec<Vec<f64>> {
        let dom = history.domain;
        let n_init = (dom.n_features() + 2).clamp(4, 10);
        let taken = history.records.len();
        if taken < n_init {
            let k = (n_init - taken).min(count);
            let quasi = &mut self.quasi;
            fill_unique(history, &[], k, || dom.at_unit(&quasi.next_unit(dom.len())))
        } else {
            Vec::new()
        }
    }

    /// Nothing observed to model yet: fills `out` up to `count` with quasi-random points,
    /// each the one of 64 furthest from everything taken.
    pub(super) fn spread_out(
        &mut self,
        history: &History<'_>,
        out: &mut Vec<Vec<f64>>,
        count: usize,
    ) {
        let dom = history.domain;
        let rest = count - out.len();
        for _ in 0..rest {
            let quasi = &mut self.quasi;
            let cands = fill_unique(history, out, 64, || {
                dom.at_unit(&quasi.next_unit(dom.len()))
            });
            let taken_x: Vec<Vec<f64>> = history.points.iter().chain(out.iter()).cloned().collect();
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
    }

    /// Fits the models, draws the candidates and predicts them: everything the members of
    /// the batch share. `out` holds the initial-design points of this call.
    pub(super) fn start_batch(
        &mut self,
        history: &History<'_>,
        feasible: Vec<usize>,
        infeasible: &[usize],
        out: &[Vec<f64>],
        count: usize,
    ) -> Batch {
        let dom = history.domain;
        // Trials suggested by earlier calls and still running (an asynchronous sweep keeps
        // some in flight at every call) are treated as the earlier members of this batch:
        // they condition the variance, and under several metrics their means are believed
        // into the front before the first member is chosen, so that neither the UCB nor
        // the greedy member proposes what is already being evaluated next door. A sweep in
        // rounds observes every trial before it asks again, so it has none.
        let earlier: Vec<Vec<f64>> = history.pending_points().cloned().collect();
        let pending: Vec<Vec<f64>> = earlier.iter().chain(out.iter()).cloned().collect();
        let mut models = self.build_models(history, &feasible, infeasible, &pending);
        if !earlier.is_empty() {
            models.believe(&dom.features_of(&earlier), earlier.len());
        }
        let cands = self.candidates(history, &models, &feasible);
        let m = cands.len();
        let xc = dom.features_of(&cands);
        let kmetrics = models.gps.len();
        let many = kmetrics >= MANY_METRICS;
        // with many metrics and few observations the candidates are ranked by the lower
        // bound of the means (see [`MANY_BETA`]), which needs their variance
        let pessimistic = many && feasible.len() < PESSIMISTIC_UNTIL;
        let preds = models.predict(&xc, m, many && !pessimistic);
        let ok = models.feasible(&xc, m);
        let has_float = dom.dims.iter().any(|(_, d)| matches!(d, Dim::Float { .. }));
        // (not when the batch already holds initial-design points: its first model member
        // is then an axis or UCB member, whose weights the long models' copy lacks)
        let long = if kmetrics == 2
            && count > 1
            && out.is_empty()
            && has_float
            && feasible.len() <= HEDGE_UNTIL
        {
            Some(self.long_models(history, &feasible, &pending, &models))
        } else {
            None
        };
        Batch {
            count,
            feasible,
            models,
            long,
            cands,
            xc,
            preds,
            ok,
            used: vec![false; m],
            first: true,
            kmetrics,
            many,
            pessimistic,
        }
    }

    /// The next member of the batch after `out`, or `None` when the space has no new point.
    /// The batch's posteriors are then conditioned on it.
    pub(super) fn next_member(
        &mut self,
        history: &History<'_>,
        batch: &mut Batch,
        out: &[Vec<f64>],
    ) -> Option<Vec<f64>> {
        self.aim_member(history, batch, out.len());
        // the first member of a two-metric batch on few observations is chosen by the
        // long-lengthscale models (see [`HEDGE_UNTIL`]); everything after it by the usual
        let hedge = if batch.first { batch.long.take() } else { None };
        let score = score_candidates(batch, hedge.as_ref());
        let starts = free_candidates(history, batch, &score, out);
        let Some(&best) = starts.first() else {
            // every candidate is taken: fall back to any new point
            let rng = &mut self.rng;
            let dom = history.domain;
            return fill_unique(history, out, 1, || dom.random(rng)).pop();
        };
        batch.used[best] = true;
        let acq_models = hedge.as_ref().unwrap_or(&batch.models);
        let (point, kind_col) =
            self.refine_member(history, batch, acq_models, &score, &starts, out);
        let lines = batch.first && batch.kmetrics == 2 && out.len() + 1 < batch.count;
        batch.first = false;
        self.condition_on_member(history, batch, &point, kind_col, lines);
        Some(point)
    }

    /// Sets what the member `index` of the batch aims at: its UCB coefficient, its weight
    /// vectors (an end of the front for the axis members), and the box it keeps to.
    fn aim_member(&mut self, history: &History<'_>, batch: &mut Batch, index: usize) {
        let (kmetrics, count, many) = (batch.kmetrics, batch.count, batch.many);
        let models = &mut batch.models;
        let greedy = many || index == 0 && (count > 1 || history.records.len().is_multiple_of(2));
        models.beta = if batch.pessimistic {
            MANY_BETA
        } else if greedy {
            GREEDY_BETA
        } else if count > 1 {
            BATCH_BETA
        } else {
            BETA
        };
        if let Some(l) = batch.long.as_mut() {
            l.beta = models.beta;
        }
        if many {
            models.draw_weights(&mut self.rng, MEMBER_WEIGHTS);
        }
        // two metrics, batch > 1: members 1 and 2 each push one end of the front (see
        // [`AXIS_MEMBERS`]; not greedy, so at [`BATCH_BETA`]); the member after
        // them draws the shared weights again, as the axis weight replaced them
        let axis = kmetrics == 2 && count > 1 && (1..=AXIS_MEMBERS).contains(&index);
        if axis {
            models.axis_weight((index - 1) % kmetrics);
        } else if kmetrics == 2 && count > 1 && index == AXIS_MEMBERS + 1 {
            models.draw_weights(&mut self.rng, WEIGHTS);
        }
        // two metrics, batch 1: the UCB suggestion keeps off the float bounds that no
        // front point has reached (see [`EDGE_MARGIN`](super::tuning::EDGE_MARGIN))
        models.bounds = if kmetrics == 2 && count == 1 && !greedy {
            edge_bounds(history, &batch.feasible, &models.z)
        } else {
            Vec::new()
        };
    }

    /// The point of the member whose best free candidate is `starts[0]`, and the candidate
    /// column it is (`None` for a refined point off the candidates). The first member is
    /// refined by a pattern search from the best free candidates; with many metrics every
    /// member is, as each has its own weights (and so its own optimum).
    fn refine_member(
        &self,
        history: &History<'_>,
        batch: &Batch,
        acq_models: &Models,
        score: &[f64],
        starts: &[usize],
        out: &[Vec<f64>],
    ) -> (Vec<f64>, Option<usize>) {
        let best = starts[0];
        let cands = &batch.cands;
        if !((batch.first || batch.many) && score[best].is_finite()) {
            return (cands[best].clone(), Some(best));
        }
        // the searches from the starts are independent (`refine` reads the models only):
        // one a task on rayon's threads, then kept in start order, the first unless a later
        // one scores higher, as one thread would
        let found: Vec<(Vec<f64>, f64)> = starts
            .par_iter()
            .map(|&c| self.refine(history, acq_models, cands[c].clone(), score[c], out))
            .collect();
        let mut found = found.into_iter();
        let mut top = found.next().expect("the best candidate is a start");
        for alt in found {
            if alt.1 > top.1 {
                top = alt;
            }
        }
        let same = history.domain.same(&top.0, &cands[best]);
        (top.0, if same { Some(best) } else { None })
    }

    /// Makes the members after `point` see it: its means believed into the front (several
    /// metrics), the candidates' posteriors conditioned on it (fewer than
    /// [`MANY_METRICS`]), and, after the first member of a two-metric batch (`lines`), the
    /// lines through it added to the candidates.
    fn condition_on_member(
        &mut self,
        history: &History<'_>,
        batch: &mut Batch,
        point: &[f64],
        kind_col: Option<usize>,
        lines: bool,
    ) {
        let dom = history.domain;
        let m = batch.cands.len();
        let px = dom.features_of(&[point.to_vec()]);
        // believe the new point's posterior mean: it joins the front of this batch, so
        // the next UCB member looks for improvement elsewhere
        if batch.kmetrics >= 2 {
            batch.models.believe(&px, 1);
        }
        // condition the candidate posteriors on the new pending point (not with many
        // metrics: their members spread by their own weights and the believed means,
        // and the variance, when there is one, only bounds the means of the ranking)
        let mut first_cond: Vec<(Vec<f64>, f64)> = Vec::new();
        if !batch.many {
            for (g, pred) in batch.models.gps.iter().zip(batch.preds.iter_mut()) {
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
                    let kp = g.kernel_to(&batch.xc, &px);
                    g.condition(pred, &vp, var_p, &kp);
                    if lines {
                        first_cond.push((vp, var_p));
                    }
                }
            }
        }
        // two metrics, batch > 1: the lines through the first member join the
        // candidates of the members after it (see
        // [`LINE_POINTS`](super::tuning::LINE_POINTS)), their posteriors conditioned on the
        // first member as the others' were
        if lines && first_cond.len() == batch.kmetrics {
            let extra = self.lines_through(dom, point);
            let m2 = extra.len();
            let x2 = dom.features_of(&extra);
            let models = &batch.models;
            let mut p2 = models.predict(&x2, m2, false);
            for ((g, q), (vp, var_p)) in models.gps.iter().zip(&mut p2).zip(&first_cond) {
                let kp = g.kernel_to(&x2, &px);
                g.condition(q, vp, *var_p, &kp);
            }
            for (pred, q) in batch.preds.iter_mut().zip(p2) {
                pred.append_columns(m, q, m2);
            }
            batch.ok.extend(models.feasible(&x2, m2));
            batch.used.extend(std::iter::repeat_n(false, m2));
            batch.xc.extend(x2);
            batch.cands.extend(extra);
        }
    }
}

/// Every candidate's score for the member being chosen: its UCB acquisition under the
/// `hedge` models when given, else the batch's (pure exploration instead for the members
/// after the first of one metric); `−∞` outside the member's box or infeasible.
fn score_candidates(batch: &Batch, hedge: Option<&Models>) -> Vec<f64> {
    let (models, m, kmetrics, first) = (
        &batch.models,
        batch.cands.len(),
        batch.kmetrics,
        batch.first,
    );
    let long_preds = hedge.map(|l| l.predict(&batch.xc, m, false));
    let (acq_models, acq_preds) = match (hedge, &long_preds) {
        (Some(l), Some(p)) => (l, p),
        _ => (models, &batch.preds),
    };
    let means: Vec<&[f64]> = acq_preds.iter().map(|p| &p.mean[..]).collect();
    let vars: Vec<&[f64]> = acq_preds.iter().map(|p| &p.var[..]).collect();
    let mut ucb_acq = vec![0.0; m];
    acq_models.ucb_acquisition(&means, &vars, &mut ucb_acq);
    // pure exploration score: total variance among promising points
    let mut pe = vec![f64::NEG_INFINITY; m];
    if kmetrics == 1 && !first {
        for c in 0..m {
            if !batch.ok[c] {
                continue;
            }
            let promising = !(0..batch.feasible.len()).any(|j| {
                (0..kmetrics).all(|k| models.lcb[k][j] > means[k][c] + BETA * vars[k][c].sqrt())
            });
            if promising {
                pe[c] = vars.iter().map(|v| v[c]).sum();
            }
        }
    }
    let use_pe = kmetrics == 1 && !first && pe.iter().any(|v| v.is_finite());
    (0..m)
        .map(|c| {
            if models
                .bounds
                .iter()
                .zip(&batch.cands[c])
                .any(|(&(lo, hi), &v)| v < lo || v > hi)
            {
                f64::NEG_INFINITY
            } else if use_pe {
                pe[c]
            } else if batch.ok[c] {
                ucb_acq[c]
            } else {
                f64::NEG_INFINITY
            }
        })
        .collect()
}

/// The best [`REFINE_STARTS`] candidates by score that are neither members nor taken
/// (ties to the lower column), best first; empty when every candidate is.
fn free_candidates(
    history: &History<'_>,
    batch: &Batch,
    score: &[f64],
    out: &[Vec<f64>],
) -> Vec<usize> {
    let (cands, dom) = (&batch.cands, history.domain);
    let mut order: Vec<usize> = (0..cands.len()).filter(|&c| !batch.used[c]).collect();
    order.sort_by(|&a, &b| score[b].total_cmp(&score[a]).then(a.cmp(&b)));
    order
        .into_iter()
        .filter(|&c| !history.is_taken(&cands[c]) && !out.iter().any(|q| dom.same(q, &cands[c])))
        .take(REFINE_STARTS)
        .collect()
}
