//! Load matching (SPEC 9, `sweeper recommend`): the fewest-GPU candidate that serves a
//! request rate under the SLA, its runner-ups with their margins, or, when none does, the
//! best goodput reached and the bound missed most.

use crate::candidate::Candidate;
use crate::report::{E2E_LATENCY, GOODPUT_RPS, ITL, TTFT};
use serde::Serialize;
use std::cmp::Ordering;
use sweeper_goal::Sla;

/// Relative slack when comparing a goodput with the asked rate, so that a candidate measured
/// at exactly the asked rate (its goodput the rate, up to rounding) serves it.
const RATE_SLACK: f64 = 1e-9;

/// What [`recommend`] is asked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecommendOptions {
    /// The load to serve, requests per second (`> 0`).
    pub rate_rps: f64,
    /// Whether a candidate may be copied `k` times to serve `k ×` its goodput with `k ×`
    /// its GPUs: true only when the evaluator is linear in replicas (independent copies
    /// behind a router that splits the load evenly).
    pub scale_replicas: bool,
    /// How many runner-ups to list after the best.
    pub runner_ups: usize,
}

/// One way to serve the load: a candidate, copied `copies` times.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pick {
    /// The candidate as evaluated.
    pub candidate: Candidate,
    /// Its measured goodput, requests per second that met the SLA.
    pub goodput_rps: f64,
    /// Copies deployed (1 without replica scaling).
    pub copies: u64,
    /// GPUs in all: `copies × used_gpus`.
    pub gpus: f64,
    /// `copies × goodput / rate − 1`: the headroom over the asked rate (negative when it
    /// falls short).
    pub margin: f64,
}

/// [`recommend`]'s answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Recommendation {
    /// At least one candidate serves the rate.
    Found {
        /// The fewest GPUs (ties: the larger margin, then input order).
        best: Pick,
        /// The next ones in the same order.
        runner_ups: Vec<Pick>,
        /// Whether replica scaling was allowed.
        scaled: bool,
        /// Candidates looked at.
        considered: usize,
    },
    /// None does.
    NoneServes {
        /// The highest goodput reached (as one copy), if any candidate was looked at.
        best_goodput: Option<Pick>,
        /// SLA bounds and how many candidates' mean latency exceeded each, most first;
        /// `capacity` counts those within every bound whose goodput still fell short.
        failed_bounds: Vec<(String, usize)>,
        /// Whether replica scaling was allowed.
        scaled: bool,
        /// Candidates looked at.
        considered: usize,
    },
}

/// The candidate's goodput in requests/s (`0` when its report has none).
fn goodput(c: &Candidate) -> f64 {
    c.metrics.get(GOODPUT_RPS).copied().unwrap_or(0.0)
}

/// How `c` serves `rate`: the copies it needs (`None` when it cannot).
fn copies_for(c: &Candidate, rate: f64, scale: bool) -> Option<u64> {
    let g = goodput(c);
    if g <= 0.0 || g.is_nan() || !c.used_gpus.is_finite() {
        return None;
    }
    let need = rate / g;
    if need <= 1.0 + RATE_SLACK {
        return Some(1);
    }
    if !scale {
        return None;
    }
    // ceil, forgiving rounding just above a whole number
    let k = (need * (1.0 - RATE_SLACK)).ceil();
    (k.is_finite() && k < 1e15).then_some(k as u64)
}

fn pick(c: &Candidate, copies: u64, rate: f64) -> Pick {
    let g = goodput(c);
    Pick {
        candidate: c.clone(),
        goodput_rps: g,
        copies,
        gpus: copies as f64 * c.used_gpus,
        margin: copies as f64 * g / rate - 1.0,
    }
}

/// The fewest-GPU way to serve `options.rate_rps` requests a second among `candidates`
/// (scored candidates whose `metrics` carry `goodput_request_throughput_rps`; drop the ones
/// over a strict SLA or the GPU budget first).
///
/// A candidate serves the rate when its goodput reaches it, or, with
/// `options.scale_replicas`, when `k` copies of it do (`k = ceil(rate / goodput)`, `k ×`
/// its GPUs). The best is the fewest GPUs, ties to the larger margin, then input order.
/// When none serves it, the answer names the highest goodput reached and counts, per SLA
/// bound, the candidates whose mean latency exceeded it.
///
/// ```
/// use serde_json::json;
/// use sweeper_score::{Recommendation, RecommendOptions, Report, make_candidate, recommend};
/// let c = |i: usize, gpus: u64, rps: f64| {
///     let r = Report::from_json(i, &json!({"goodput_request_throughput_rps": rps})).unwrap();
///     make_candidate(i, json!({"used_gpus": gpus}).as_object().unwrap().clone(), &r, &[], false)
/// };
/// let cs = [c(0, 8, 45.0), c(1, 4, 41.0), c(2, 2, 30.0)];
/// let opts = RecommendOptions { rate_rps: 40.0, scale_replicas: false, runner_ups: 2 };
/// match recommend(&cs, None, opts) {
///     Recommendation::Found { best, runner_ups, .. } => {
///         assert_eq!((best.candidate.index, best.gpus), (1, 4.0));
///         assert_eq!(runner_ups[0].candidate.index, 0);
///     }
///     other => panic!("{other:?}"),
/// }
/// ```
pub fn recommend(
    candidates: &[Candidate],
    sla: Option<&Sla>,
    options: RecommendOptions,
) -> Recommendation {
    let rate = options.rate_rps;
    let scale = options.scale_replicas;
    let mut serving: Vec<Pick> = candidates
        .iter()
        .filter_map(|c| copies_for(c, rate, scale).map(|k| pick(c, k, rate)))
        .collect();
    // stable: equal GPU counts and margins keep input order
    serving.sort_by(|a, b| {
        a.gpus
            .partial_cmp(&b.gpus)
            .unwrap_or(Ordering::Equal)
            .then_with(|| b.margin.partial_cmp(&a.margin).unwrap_or(Ordering::Equal))
    });
    let considered = candidates.len();
    if serving.is_empty() {
        let best_goodput = candidates
            .iter()
            .enumerate()
            .max_by(|(i, a), (j, b)| {
                goodput(a)
                    .partial_cmp(&goodput(b))
                    .unwrap_or(Ordering::Equal)
                    .then_with(|| j.cmp(i)) // the first of equal ones
            })
            .map(|(_, c)| pick(c, 1, rate));
        return Recommendation::NoneServes {
            best_goodput,
            failed_bounds: failed_bounds(candidates, sla),
            scaled: scale,
            considered,
        };
    }
    let best = serving.remove(0);
    serving.truncate(options.runner_ups);
    Recommendation::Found {
        best,
        runner_ups: serving,
        scaled: scale,
        considered,
    }
}

/// Per SLA bound, the candidates whose mean latency exceeds it; `capacity` for those within
/// every bound (the load, or the latency tail, is what fails them). Most first, then by
/// name.
fn failed_bounds(candidates: &[Candidate], sla: Option<&Sla>) -> Vec<(String, usize)> {
    let bounds: Vec<(&str, &str, f64)> = sla
        .map(|s| {
            [
                ("ttft_ms", TTFT, s.ttft_ms),
                ("itl_ms", ITL, s.itl_ms),
                ("e2e_ms", E2E_LATENCY, s.e2e_ms),
            ]
            .into_iter()
            .filter_map(|(n, k, b)| b.map(|b| (n, k, b)))
            .collect()
        })
        .unwrap_or_default();
    let mut counts: Vec<(String, usize)> = bounds
        .iter()
        .map(|(n, _, _)| ((*n).to_owned(), 0))
        .collect();
    let mut capacity = 0;
    for c in candidates {
        let mut any = false;
        for (k, (_, key, bound)) in bounds.iter().enumerate() {
            if c.metrics.get(*key).is_some_and(|v| v > bound) {
                counts[k].1 += 1;
                any = true;
            }
        }
        if !any {
            capacity += 1;
        }
    }
    counts.push(("capacity".to_owned(), capacity));
    counts.retain(|(_, n)| *n > 0);
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counts
}
