//! The latent features a sampler searches, and the projection of a request onto the pool.

use crate::pool::{attention_mode, ffn_mode, is_moe_split};
use crate::{Deployment, Pool};
use serde_json::{Map, Value};
use sweeper_goal::{Backend, DeploymentMode};

/// The domain of one latent feature.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LatentKind {
    /// A real number in `[lo, hi]`.
    Float {
        /// Lower bound.
        lo: f64,
        /// Upper bound.
        hi: f64,
    },
    /// GPU counts, searched on a log scale.
    Sizes(Vec<u64>),
    /// Categories, in the order listed.
    Choices(Vec<String>),
}

/// One latent feature: its name (a study parameter) and domain.
#[derive(Debug, Clone, PartialEq)]
pub struct Latent {
    /// The parameter name.
    pub name: &'static str,
    /// Its domain.
    pub kind: LatentKind,
}

/// The mode: searched as `deployment_mode` (categorical).
pub(crate) const MODE: &str = "deployment_mode";
/// The backend: `backend` (categorical).
pub(crate) const BACKEND: &str = "backend";
/// GPUs used over the budget.
pub(crate) const GPU_RATIO: &str = "topology_gpu_ratio";
/// The prefill pool's share of a disaggregated deployment's GPUs.
pub(crate) const PREFILL_SHARE: &str = "topology_prefill_share";
/// GPUs per worker of the aggregated or decode pool.
pub(crate) const WORKER_GPUS: &str = "topology_worker_gpus";
/// GPUs per worker of the prefill pool.
pub(crate) const PREFILL_WORKER_GPUS: &str = "topology_prefill_worker_gpus";
/// Attention mode (`tp`/`dp`) of the aggregated or decode pool.
pub(crate) const ATTENTION: &str = "topology_attention";
/// FFN mode (`ep`/`tp`) of the aggregated or decode pool (MoE only).
pub(crate) const FFN: &str = "topology_ffn";
/// Attention mode of the prefill pool.
pub(crate) const PREFILL_ATTENTION: &str = "topology_prefill_attention";
/// FFN mode of the prefill pool (MoE only).
pub(crate) const PREFILL_FFN: &str = "topology_prefill_ffn";

/// A numeric feature of a deployment.
type Feature = fn(&Features) -> f64;

/// The numeric and categorical features of a deployment.
struct Features {
    ratio: f64,
    share: f64,
    worker_log2: f64,
    prefill_log2: f64,
    modes: [&'static str; 4],
}

fn features(d: &Deployment, budget: u64) -> Features {
    let used = d.used_gpus() as f64;
    let decode = d.decode_worker();
    let prefill = d.prefill_worker();
    let share = prefill.map_or(0.0, |p| p.gpus() as f64 / used);
    let prefill_shape = prefill.map_or(decode.shape, |p| p.shape);
    Features {
        ratio: used / budget as f64,
        share,
        worker_log2: (decode.shape.gpus() as f64).log2(),
        prefill_log2: (prefill_shape.gpus() as f64).log2(),
        modes: [
            attention_mode(decode.shape),
            ffn_mode(decode.shape),
            attention_mode(prefill_shape),
            ffn_mode(prefill_shape),
        ],
    }
}

fn sorted_unique<T: PartialOrd + Copy>(mut v: Vec<T>) -> Vec<T> {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.dedup_by(|a, b| a == b);
    v
}

fn present(order: &[&'static str], have: impl Iterator<Item = &'static str>) -> Vec<String> {
    let have: Vec<&str> = have.collect();
    order
        .iter()
        .filter(|o| have.contains(o))
        .map(|o| (*o).to_owned())
        .collect()
}

impl Pool {
    /// The latent features of the pool (SPEC 8's projection; each single-valued feature is
    /// left out): `deployment_mode` and `backend` when more than one is present, the share
    /// of the budget used, and, per role present, the prefill share, GPUs per worker, the
    /// attention mode and (MoE) the FFN mode.
    pub fn latents(&self) -> Vec<Latent> {
        self.latents_of(None)
    }

    /// The latent features of one mode's deployments (all of them for `None`): the
    /// features of one study per deployment mode.
    pub fn latents_of(&self, mode: Option<DeploymentMode>) -> Vec<Latent> {
        let d: Vec<Deployment> = self
            .deployments
            .iter()
            .filter(|x| mode.is_none_or(|m| x.mode() == m))
            .copied()
            .collect();
        let mut out = Vec::new();
        let mut push = |name, kind: LatentKind| {
            let keep = match &kind {
                LatentKind::Float { lo, hi } => hi > lo,
                LatentKind::Sizes(v) => v.len() > 1,
                LatentKind::Choices(v) => v.len() > 1,
            };
            if keep {
                out.push(Latent { name, kind });
            }
        };
        let d = &d;
        if d.is_empty() {
            return out;
        }
        let modes = present(&["agg", "disagg"], d.iter().map(|x| x.mode().as_str()));
        push(MODE, LatentKind::Choices(modes));
        let backends = present(
            &["vllm", "sglang", "trtllm"],
            d.iter().map(|x| x.backend.as_str()),
        );
        push(BACKEND, LatentKind::Choices(backends));
        let f: Vec<Features> = d.iter().map(|x| features(x, self.gpu_budget)).collect();
        let (lo, hi) = f.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), x| {
            (lo.min(x.ratio), hi.max(x.ratio))
        });
        push(GPU_RATIO, LatentKind::Float { lo, hi });
        let disagg: Vec<(&Deployment, &Features)> = d
            .iter()
            .zip(&f)
            .filter(|(x, _)| x.mode() == DeploymentMode::Disagg)
            .collect();
        if !disagg.is_empty() {
            let (lo, hi) = disagg.iter().fold((1.0_f64, 0.0_f64), |(lo, hi), (_, x)| {
                (lo.min(x.share), hi.max(x.share))
            });
            push(PREFILL_SHARE, LatentKind::Float { lo, hi });
        }
        push(
            WORKER_GPUS,
            LatentKind::Sizes(sorted_unique(
                d.iter().map(|x| x.decode_worker().shape.gpus()).collect(),
            )),
        );
        push(
            ATTENTION,
            LatentKind::Choices(present(
                &["tp", "dp"],
                d.iter().map(|x| attention_mode(x.decode_worker().shape)),
            )),
        );
        if self.is_moe() && d.iter().any(|x| is_moe_split(x.decode_worker().shape)) {
            push(
                FFN,
                LatentKind::Choices(present(
                    &["ep", "tp"],
                    d.iter().map(|x| ffn_mode(x.decode_worker().shape)),
                )),
            );
        }
        if !disagg.is_empty() {
            let prefills: Vec<_> = disagg
                .iter()
                .filter_map(|(x, _)| x.prefill_worker())
                .collect();
            push(
                PREFILL_WORKER_GPUS,
                LatentKind::Sizes(sorted_unique(
                    prefills.iter().map(|w| w.shape.gpus()).collect(),
                )),
            );
            push(
                PREFILL_ATTENTION,
                LatentKind::Choices(present(
                    &["tp", "dp"],
                    prefills.iter().map(|w| attention_mode(w.shape)),
                )),
            );
            if self.is_moe() && prefills.iter().any(|w| is_moe_split(w.shape)) {
                push(
                    PREFILL_FFN,
                    LatentKind::Choices(present(
                        &["ep", "tp"],
                        prefills.iter().map(|w| ffn_mode(w.shape)),
                    )),
                );
            }
        }
        out
    }

    /// Names of every latent feature this crate may emit, so that a caller can strip them
    /// from a trial's parameters.
    pub const LATENT_NAMES: [&'static str; 10] = [
        MODE,
        BACKEND,
        GPU_RATIO,
        PREFILL_SHARE,
        WORKER_GPUS,
        PREFILL_WORKER_GPUS,
        ATTENTION,
        FFN,
        PREFILL_ATTENTION,
        PREFILL_FFN,
    ];

    /// Projects a latent request (the trial's parameters; features absent take their
    /// defaults) onto one deployment of the pool, deterministically: the request's mode
    /// (else the first in the pool) and backend (else the first with deployments of that
    /// mode), then the fewest attention/FFN mode mismatches, then the smallest sum of
    /// squared deltas of the numeric features, each divided by its span among those
    /// deployments (engine sizes in log2), ties to the first in the pool's order.
    pub fn project(&self, request: &Map<String, Value>) -> &Deployment {
        let text = |key: &str| request.get(key).and_then(Value::as_str);
        let number = |key: &str| request.get(key).and_then(Value::as_f64);
        let d = &self.deployments;
        let mode = text(MODE)
            .and_then(|m| d.iter().find(|x| x.mode().as_str() == m))
            .map_or(d[0].mode(), Deployment::mode);
        let of_mode = |b: Backend| d.iter().any(|x| x.mode() == mode && x.backend == b);
        let backend = text(BACKEND)
            .and_then(|b| {
                d.iter()
                    .find(|x| x.backend.as_str() == b)
                    .map(|x| x.backend)
            })
            .filter(|b| of_mode(*b))
            .unwrap_or_else(|| {
                d.iter()
                    .find(|x| x.mode() == mode)
                    .map_or(d[0].backend, |x| x.backend)
            });
        let branch: Vec<(usize, Features)> = d
            .iter()
            .enumerate()
            .filter(|(_, x)| x.mode() == mode && x.backend == backend)
            .map(|(i, x)| (i, features(x, self.gpu_budget)))
            .collect();
        let disagg = mode == DeploymentMode::Disagg;
        let wanted = [
            text(ATTENTION),
            text(FFN),
            text(PREFILL_ATTENTION).filter(|_| disagg),
            text(PREFILL_FFN).filter(|_| disagg),
        ];
        let mismatches = |f: &Features| {
            wanted
                .iter()
                .zip(f.modes)
                .filter(|(w, have)| w.is_some_and(|w| w != *have))
                .count()
        };
        let fewest = branch.iter().map(|(_, f)| mismatches(f)).min().unwrap_or(0);
        let survivors: Vec<&(usize, Features)> = branch
            .iter()
            .filter(|(_, f)| mismatches(f) == fewest)
            .collect();
        let span = |get: Feature| {
            let (lo, hi) = survivors
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (_, f)| {
                    (lo.min(get(f)), hi.max(get(f)))
                });
            hi - lo
        };
        // (feature, target, span); a target absent is the feature's own value (no pull)
        let log2 = |key: &str| number(key).filter(|x| *x > 0.0).map(f64::log2);
        let targets: [(Feature, Option<f64>); 4] = [
            (|f| f.ratio, number(GPU_RATIO).or(Some(1.0))),
            (|f| f.share, number(PREFILL_SHARE).filter(|_| disagg)),
            (|f| f.worker_log2, log2(WORKER_GPUS)),
            (
                |f| f.prefill_log2,
                log2(PREFILL_WORKER_GPUS).filter(|_| disagg),
            ),
        ];
        let spans: Vec<f64> = targets.iter().map(|(get, _)| span(*get)).collect();
        let distance = |f: &Features| {
            targets
                .iter()
                .zip(&spans)
                .filter(|(_, s)| **s > 0.0)
                .filter_map(|((get, target), s)| target.map(|t| ((get(f) - t) / s).powi(2)))
                .sum::<f64>()
        };
        let best = survivors
            .iter()
            .min_by(|a, b| {
                distance(&a.1)
                    .total_cmp(&distance(&b.1))
                    .then(a.0.cmp(&b.0))
            })
            .map_or(0, |(i, _)| *i);
        &d[best]
    }
}
