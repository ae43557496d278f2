//! Where a suggestion looks: the candidate points, the lines through a member, and the
//! pattern search that refines a member on the acquisition.

use super::models::{Models, nondominated_columns};
use super::state::DefaultSampler;
use super::tuning::{ENUMERATE, ENUMERATE_MIXED, LINE_POINTS, MIXED_BUDGET};
use crate::sampler::History;
use crate::space::{Dim, Domain};

impl DefaultSampler {
    /// Candidate points: enumerated discrete combinations, random points, and mutations of
    /// the best observations (the Pareto-optimal ones for several metrics).
    pub(super) fn candidates(
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
    pub(super) fn lines_through(&mut self, dom: &Domain, point: &[f64]) -> Vec<Vec<f64>> {
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
    pub(super) fn refine(
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
