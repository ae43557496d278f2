//! The deployment a candidate describes, read from its flat keys.
//!
//! The keys are issue 32's: `deployment_mode` (`agg` | `disagg`), `backend` (`vllm` |
//! `sglang` | `trtllm`), and per worker pool `tp`, `pp`, `attention_dp`, `moe_tp`,
//! `moe_ep`, `strategy` (`tp` | `tep` | `dep` | `dtp`), `replicas`, `max_batch_size`,
//! `max_num_tokens` — bare (or `agg_`-prefixed) for an aggregated candidate, prefixed
//! `prefill_` and `decode_` for a disaggregated one — and a top-level `used_gpus` and
//! `router_mode` (or `router`, as the examples name it, with `kv_aware` and
//! `round_robin`). A candidate without `deployment_mode` is aggregated unless it has
//! `prefill_`/`decode_` keys. A flat search space whose parameters carry these names (the
//! quick start's `tp`, `replicas`, `max_batch_size`) is read the same way. The load a
//! candidate ran at (`kv_load_ratio`, `concurrency`, `kv_capacity_tokens`,
//! `request_rate`) is not part of a deployment and is kept only in `candidate.json`.

use crate::{Backend, ExportError};
use serde_json::{Map, Value};
use sweeper_goal::{AGG_PREFIX, DECODE_PREFIX, PREFILL_PREFIX, pool_key, whole_count};

/// Keys that describe the load a candidate ran at, not the deployment.
pub const LOAD_KEYS: [&str; 4] = [
    "kv_load_ratio",
    "concurrency",
    "kv_capacity_tokens",
    "request_rate",
];

/// Keys of one worker pool (bare for an aggregated candidate).
const POOL_KEYS: [&str; 10] = [
    "tp",
    "pp",
    "attention_dp",
    "moe_tp",
    "moe_ep",
    "strategy",
    "replicas",
    "max_batch_size",
    "max_num_tokens",
    "gpus_per_worker",
];

/// Top-level keys.
const TOP_KEYS: [&str; 5] = [
    "deployment_mode",
    "backend",
    "used_gpus",
    "router_mode",
    "router",
];

/// The keys the exporter maps, for messages.
pub(crate) fn known_keys() -> String {
    let mut keys: Vec<String> = TOP_KEYS.iter().map(|k| (*k).to_owned()).collect();
    keys.extend(POOL_KEYS.iter().map(|k| (*k).to_owned()));
    keys.extend(POOL_KEYS.iter().map(|k| format!("{PREFILL_PREFIX}{k}")));
    keys.extend(POOL_KEYS.iter().map(|k| format!("{DECODE_PREFIX}{k}")));
    keys.join(", ")
}

/// A MoE layer's split of a worker's ranks, as the upstream names the four pure patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Tensor parallel attention and experts (`tp`).
    Tp,
    /// Tensor parallel attention, expert parallel experts (`tep`).
    Tep,
    /// Data parallel attention, expert parallel experts (`dep`).
    Dep,
    /// Data parallel attention, tensor parallel experts (`dtp`).
    Dtp,
}

impl Strategy {
    fn parse(text: &str) -> Option<Strategy> {
        match text {
            "tp" => Some(Strategy::Tp),
            "tep" => Some(Strategy::Tep),
            "dep" => Some(Strategy::Dep),
            "dtp" => Some(Strategy::Dtp),
            _ => None,
        }
    }

    /// The strategy's name in a candidate.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Tp => "tp",
            Strategy::Tep => "tep",
            Strategy::Dep => "dep",
            Strategy::Dtp => "dtp",
        }
    }

    /// The expert split `(moe_tp, moe_ep)` of this strategy for a worker of `width`
    /// attention ranks (`tp × attention_dp`).
    fn experts(self, width: u64) -> (u64, u64) {
        match self {
            Strategy::Tp | Strategy::Dtp => (width, 1),
            Strategy::Tep | Strategy::Dep => (1, width),
        }
    }
}

/// One pool of identical workers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pool {
    /// Tensor parallel size of attention.
    pub tp: u64,
    /// Pipeline parallel size.
    pub pp: u64,
    /// Attention data parallel ranks.
    pub attention_dp: u64,
    /// Expert split `(moe_tp, moe_ep)` of a MoE candidate; `None` for a dense one.
    pub experts: Option<(u64, u64)>,
    /// Identical workers.
    pub replicas: u64,
    /// The batch cap (concurrent sequences of a worker).
    pub max_batch_size: Option<u64>,
    /// Tokens a worker schedules per step.
    pub max_num_tokens: Option<u64>,
    /// The prefix of the pool's keys in the candidate (`""`, `prefill_`, `decode_`), for
    /// messages.
    pub prefix: &'static str,
}

impl Pool {
    /// GPUs of one worker: `tp × pp × attention_dp`.
    pub fn gpus_per_worker(&self) -> u64 {
        self.tp * self.pp * self.attention_dp
    }

    /// GPUs of the pool.
    pub fn gpus(&self) -> u64 {
        self.gpus_per_worker() * self.replicas
    }
}

/// Aggregated or disaggregated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// One pool serves prefill and decode.
    Agg(Pool),
    /// A prefill pool and a decode pool.
    Disagg {
        /// The prefill pool.
        prefill: Pool,
        /// The decode pool.
        decode: Pool,
    },
}

/// The deployment a candidate describes.
#[derive(Debug, Clone, PartialEq)]
pub struct Deployment {
    /// The worker pools.
    pub mode: Mode,
    /// The serving engine.
    pub backend: Backend,
    /// The frontend's router mode (`kv`, `round-robin`, `random`), when the candidate has one.
    pub router_mode: Option<String>,
    /// GPUs of all workers (equal to the candidate's `used_gpus` when it has one).
    pub used_gpus: u64,
    /// Keys recorded as comments with `allow_unmapped`, with their JSON values.
    pub unmapped: Vec<(String, String)>,
}

impl Deployment {
    /// The pools with their roles: `("worker", pool)` or `("prefill", ..), ("decode", ..)`.
    pub fn pools(&self) -> Vec<(Role, &Pool)> {
        match &self.mode {
            Mode::Agg(p) => vec![(Role::Worker, p)],
            Mode::Disagg { prefill, decode } => {
                vec![(Role::Prefill, prefill), (Role::Decode, decode)]
            }
        }
    }

    /// Reads a candidate's flat keys. `default_backend` applies when it has no `backend`;
    /// with `allow_unmapped`, a key the exporter does not know is recorded instead of
    /// refused.
    pub fn from_candidate(
        config: &Map<String, Value>,
        default_backend: Backend,
        allow_unmapped: bool,
    ) -> Result<Deployment, ExportError> {
        let backend = match config.get("backend") {
            None => default_backend,
            Some(v) => v
                .as_str()
                .and_then(Backend::parse)
                .ok_or_else(|| invalid("backend", v, "give one of vllm, sglang, trtllm"))?,
        };
        let has_role_keys = config.keys().any(|k| pool_key(k).is_some());
        let disagg = match config.get("deployment_mode") {
            None => has_role_keys,
            Some(v) => match v.as_str() {
                Some("agg") => false,
                Some("disagg") => true,
                _ => return Err(invalid("deployment_mode", v, "give agg or disagg")),
            },
        };
        let mut unmapped = Vec::new();
        for (key, value) in config {
            if !is_known(key, disagg) {
                if allow_unmapped {
                    unmapped.push((key.clone(), value.to_string()));
                } else {
                    return Err(ExportError::Unmapped {
                        key: key.clone(),
                        value: value.to_string(),
                        known: known_keys(),
                    });
                }
            }
        }
        let mode = if disagg {
            Mode::Disagg {
                prefill: pool(config, PREFILL_PREFIX)?,
                decode: pool(config, DECODE_PREFIX)?,
            }
        } else {
            Mode::Agg(pool(config, "")?)
        };
        let router_key = if config.contains_key("router_mode") {
            "router_mode"
        } else {
            "router"
        };
        let router_mode = match config.get(router_key) {
            None => None,
            Some(v) => match v.as_str() {
                Some("kv" | "kv_aware" | "kv-aware") => Some("kv".to_owned()),
                Some("round-robin" | "round_robin") => Some("round-robin".to_owned()),
                Some("random") => Some("random".to_owned()),
                _ => {
                    return Err(invalid(
                        router_key,
                        v,
                        "give kv (or kv_aware), round-robin (or round_robin) or random",
                    ));
                }
            },
        };
        let mut deployment = Deployment {
            mode,
            backend,
            router_mode,
            used_gpus: 0,
            unmapped,
        };
        let computed: u64 = deployment.pools().iter().map(|(_, p)| p.gpus()).sum();
        deployment.used_gpus = computed;
        if let Some(v) = config.get("used_gpus") {
            let used = whole_count(v).ok_or_else(|| {
                invalid(
                    "used_gpus",
                    v,
                    "give the candidate's GPU count, a whole number >= 1",
                )
            })?;
            if used != computed {
                let detail = deployment
                    .pools()
                    .iter()
                    .map(|(role, p)| {
                        format!(
                            "{}: {} x {} GPUs (tp {} x pp {} x attention_dp {})",
                            role.name(),
                            p.replicas,
                            p.gpus_per_worker(),
                            p.tp,
                            p.pp,
                            p.attention_dp
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(ExportError::GpuMismatch {
                    used,
                    computed,
                    detail,
                });
            }
        }
        Ok(deployment)
    }
}

/// A worker's role in the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// An aggregated worker.
    Worker,
    /// A prefill worker.
    Prefill,
    /// A decode worker.
    Decode,
}

impl Role {
    /// `worker`, `prefill` or `decode`.
    pub fn name(self) -> &'static str {
        match self {
            Role::Worker => "worker",
            Role::Prefill => "prefill",
            Role::Decode => "decode",
        }
    }
}

fn is_known(key: &str, disagg: bool) -> bool {
    if TOP_KEYS.contains(&key) || LOAD_KEYS.contains(&key) {
        return true;
    }
    let bare = if disagg {
        pool_key(key)
    } else {
        Some(key.strip_prefix(AGG_PREFIX).unwrap_or(key))
    };
    bare.is_some_and(|k| POOL_KEYS.contains(&k))
}

fn invalid(key: &str, value: &Value, reason: &str) -> ExportError {
    ExportError::Invalid {
        key: key.to_owned(),
        value: value.to_string(),
        reason: reason.to_owned(),
    }
}

/// Reads the pool whose keys carry `prefix` (`""` also reads `agg_`-prefixed keys).
fn pool(config: &Map<String, Value>, prefix: &'static str) -> Result<Pool, ExportError> {
    let lookup = |name: &str| -> Option<(String, &Value)> {
        let key = format!("{prefix}{name}");
        if let Some(v) = config.get(&key) {
            return Some((key, v));
        }
        if prefix.is_empty() {
            let agg = format!("{AGG_PREFIX}{name}");
            return config.get(&agg).map(|v| (agg, v));
        }
        None
    };
    let number = |name: &str, default: Option<u64>| -> Result<Option<u64>, ExportError> {
        match lookup(name) {
            None => Ok(default),
            Some((key, v)) => whole_count(v)
                .map(Some)
                .ok_or_else(|| invalid(&key, v, "give a whole number >= 1")),
        }
    };
    let tp = number("tp", Some(1))?.unwrap_or(1);
    let pp = number("pp", Some(1))?.unwrap_or(1);
    let attention_dp = number("attention_dp", Some(1))?.unwrap_or(1);
    let replicas = number("replicas", Some(1))?.unwrap_or(1);
    let width = tp * attention_dp;
    let moe_tp = number("moe_tp", None)?;
    let moe_ep = number("moe_ep", None)?;
    let strategy = match lookup("strategy") {
        None => None,
        Some((key, v)) => Some(
            v.as_str()
                .and_then(Strategy::parse)
                .ok_or_else(|| invalid(&key, v, "give one of tp, tep, dep, dtp"))?,
        ),
    };
    let experts = match (moe_tp, moe_ep, strategy) {
        (None, None, None) => None,
        (None, None, Some(s)) => Some(s.experts(width)),
        (Some(t), Some(e), _) => Some((t, e)),
        (Some(t), None, _) => Some((t, width / t)),
        (None, Some(e), _) => Some((width / e, e)),
    };
    if let Some((t, e)) = experts {
        if t * e != width {
            let key = format!("{prefix}moe_ep");
            return Err(ExportError::Invalid {
                key,
                value: e.to_string(),
                reason: format!(
                    "the width rule tp x attention_dp = moe_tp x moe_ep does not hold ({tp} x {attention_dp} != {t} x {e}); pick an expert split whose product is {width}"
                ),
            });
        }
        if let Some(s) = strategy {
            let consistent = match s {
                Strategy::Tp => attention_dp == 1 && e == 1,
                Strategy::Tep => attention_dp == 1 && t == 1,
                Strategy::Dep => t == 1,
                Strategy::Dtp => e == 1,
            };
            if !consistent {
                return Err(ExportError::Invalid {
                    key: format!("{prefix}strategy"),
                    value: format!("\"{}\"", s.name()),
                    reason: format!(
                        "the strategy disagrees with the shape (attention_dp {attention_dp}, moe_tp {t}, moe_ep {e}); drop `strategy` or fix the shape"
                    ),
                });
            }
        }
    }
    if let Some(g) = number("gpus_per_worker", None)?
        && g != tp * pp * attention_dp
    {
        return Err(ExportError::Invalid {
            key: format!("{prefix}gpus_per_worker"),
            value: g.to_string(),
            reason: format!(
                "a worker of tp {tp} x pp {pp} x attention_dp {attention_dp} has {} GPUs; fix the shape or drop gpus_per_worker",
                tp * pp * attention_dp
            ),
        });
    }
    Ok(Pool {
        tp,
        pp,
        attention_dp,
        experts,
        replicas,
        max_batch_size: number("max_batch_size", None)?,
        max_num_tokens: number("max_num_tokens", None)?,
        prefix,
    })
}
