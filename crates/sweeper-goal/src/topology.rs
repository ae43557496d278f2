//! The `search_space.topology:` block (SPEC 8): which model on which GPU, the deployment
//! modes and backends, the worker-size ladder, the context length a shape must hold, and an
//! optional pinned menu of parallel configs. Checked here for shape only; the model and GPU
//! names are resolved where the cards are known (`sweeper-topology`).

use crate::error::ConfigError;
use crate::raw::{self, RawTopology, RawValue};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

const ROOT: &str = "search_space.topology";

/// The default worker-size ladder (`gpus_per_worker`), capped at `gpu_budget`.
pub const DEFAULT_GPUS_PER_WORKER: [u64; 5] = [1, 2, 4, 8, 16];

/// The keys a topology candidate carries (the flat keys of SPEC 8, with their `prefill_` and
/// `decode_` forms, and `used_gpus`); a parameter may not use one of them.
pub const TOPOLOGY_KEYS: [&str; 10] = [
    "deployment_mode",
    "backend",
    "tp",
    "pp",
    "attention_dp",
    "moe_tp",
    "moe_ep",
    "strategy",
    "replicas",
    "used_gpus",
];

/// The prefix of a disaggregated candidate's prefill-pool keys (`prefill_tp`, SPEC 8).
pub const PREFILL_PREFIX: &str = "prefill_";

/// The prefix of a disaggregated candidate's decode-pool keys (`decode_replicas`).
pub const DECODE_PREFIX: &str = "decode_";

/// The prefix of an aggregated branch's own keys (`agg_max_batch_size`).
pub const AGG_PREFIX: &str = "agg_";

/// A flat candidate key of one pool of a disaggregated deployment without the pool's
/// prefix (`prefill_tp` → `tp`, `decode_moe_ep` → `moe_ep`); `None` for any other key.
///
/// ```
/// assert_eq!(sweeper_goal::pool_key("prefill_tp"), Some("tp"));
/// assert_eq!(sweeper_goal::pool_key("agg_max_batch_size"), None);
/// ```
pub fn pool_key(key: &str) -> Option<&str> {
    key.strip_prefix(PREFILL_PREFIX)
        .or_else(|| key.strip_prefix(DECODE_PREFIX))
}

/// The count a flat candidate key holds (`tp`, `replicas`, `max_batch_size` ...): a whole
/// number >= 1, an integral float such as `4.0` included (JSON writers may write one);
/// `None` for anything else.
///
/// ```
/// use serde_json::json;
/// assert_eq!(sweeper_goal::whole_count(&json!(4.0)), Some(4));
/// assert_eq!(sweeper_goal::whole_count(&json!(1.5)), None);
/// assert_eq!(sweeper_goal::whole_count(&json!(0)), None);
/// ```
pub fn whole_count(value: &serde_json::Value) -> Option<u64> {
    if let Some(n) = value.as_u64() {
        return (n >= 1).then_some(n);
    }
    let f = value.as_f64()?;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (f >= 1.0 && f.fract() == 0.0 && f < 9.0e15).then_some(f as u64)
}

/// Aggregated (prefill and decode on the same workers) or disaggregated (two pools).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeploymentMode {
    /// One pool of workers doing prefill and decode.
    Agg,
    /// A prefill pool and a decode pool, each with its own shape and replicas.
    Disagg,
}

impl DeploymentMode {
    /// Whether a flat candidate key belongs to a deployment of this mode: the `agg_` keys
    /// to `agg`, the pools' `prefill_` and `decode_` keys to `disagg`, every other to both.
    ///
    /// ```
    /// use sweeper_goal::DeploymentMode::{Agg, Disagg};
    /// assert!(Agg.has_key("agg_max_batch_size") && !Disagg.has_key("agg_max_batch_size"));
    /// assert!(Disagg.has_key("decode_tp") && !Agg.has_key("decode_tp"));
    /// assert!(Agg.has_key("router") && Disagg.has_key("router"));
    /// ```
    pub fn has_key(self, key: &str) -> bool {
        match self {
            DeploymentMode::Agg => pool_key(key).is_none(),
            DeploymentMode::Disagg => !key.starts_with(AGG_PREFIX),
        }
    }

    /// `agg` or `disagg`.
    pub fn as_str(self) -> &'static str {
        match self {
            DeploymentMode::Agg => "agg",
            DeploymentMode::Disagg => "disagg",
        }
    }
}

/// A serving engine; each has its own rules for the parallel shapes it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Backend {
    /// vLLM: no `moe_tp > 1` together with `moe_ep > 1`.
    Vllm,
    /// `SGLang`: expert-parallel MoE only (`moe_tp == 1`).
    Sglang,
    /// TensorRT-LLM: no `tp > 1` together with `attention_dp > 1`; aggregated only (Dynamo's
    /// replay rejects its disaggregation).
    Trtllm,
}

impl Backend {
    /// `vllm`, `sglang` or `trtllm`.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Vllm => "vllm",
            Backend::Sglang => "sglang",
            Backend::Trtllm => "trtllm",
        }
    }
}

/// One worker shape of a pinned `parallel_configs` entry; omitted sizes are 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PinnedShape {
    /// Attention tensor-parallel size.
    pub tp: u64,
    /// Pipeline-parallel size (must be 1: no pipeline parallelism).
    pub pp: u64,
    /// Attention data-parallel size.
    pub attention_dp: u64,
    /// Expert tensor-parallel size.
    pub moe_tp: u64,
    /// Expert-parallel size.
    pub moe_ep: u64,
    /// Workers of this shape.
    pub replicas: u64,
}

/// One entry of `parallel_configs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PinnedConfig {
    /// An aggregated deployment: one shape and its replicas.
    Agg(PinnedShape),
    /// A disaggregated deployment: a prefill and a decode shape, each with its replicas.
    Disagg {
        /// The prefill pool.
        prefill: PinnedShape,
        /// The decode pool.
        decode: PinnedShape,
    },
}

/// The validated `search_space.topology` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopologyConfig {
    /// A model preset or a card under the config's `models:`.
    pub model: String,
    /// A GPU preset or a card under the config's `gpus:`.
    pub gpu: String,
    /// The modes searched, distinct, in the order written (default both).
    pub deployment_modes: Vec<DeploymentMode>,
    /// The backends searched, distinct, in the order written (default `[vllm]`).
    pub backends: Vec<Backend>,
    /// The worker sizes allowed (default 1, 2, 4, 8, 16), sorted; capped at `gpu_budget`
    /// when the pool is built.
    pub gpus_per_worker: Vec<u64>,
    /// The sequence length one rank's KV cache must hold; `None`: the workload's
    /// `isl + osl`.
    pub context_length: Option<u64>,
    /// A pinned menu of shapes instead of the enumeration (empty: enumerate).
    pub parallel_configs: Vec<PinnedConfig>,
}

impl Serialize for PinnedShape {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("tp", &self.tp)?;
        m.serialize_entry("pp", &self.pp)?;
        m.serialize_entry("attention_dp", &self.attention_dp)?;
        m.serialize_entry("moe_tp", &self.moe_tp)?;
        m.serialize_entry("moe_ep", &self.moe_ep)?;
        m.serialize_entry("replicas", &self.replicas)?;
        m.end()
    }
}

impl Serialize for PinnedConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PinnedConfig::Agg(shape) => shape.serialize(s),
            PinnedConfig::Disagg { prefill, decode } => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("prefill", prefill)?;
                m.serialize_entry("decode", decode)?;
                m.end()
            }
        }
    }
}

impl Serialize for TopologyConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("model", &self.model)?;
        m.serialize_entry("gpu", &self.gpu)?;
        let modes: Vec<&str> = self.deployment_modes.iter().map(|d| d.as_str()).collect();
        m.serialize_entry("deployment_mode", &modes)?;
        let backends: Vec<&str> = self.backends.iter().map(|b| b.as_str()).collect();
        m.serialize_entry("backend", &backends)?;
        m.serialize_entry("gpus_per_worker", &self.gpus_per_worker)?;
        if let Some(c) = self.context_length {
            m.serialize_entry("context_length", &c)?;
        }
        if !self.parallel_configs.is_empty() {
            m.serialize_entry("parallel_configs", &self.parallel_configs)?;
        }
        m.end()
    }
}

fn topology_error(path: impl Into<String>, why: impl Into<String>) -> ConfigError {
    ConfigError::Topology {
        path: path.into(),
        why: why.into(),
    }
}

/// A name list: one string or a non-empty list of distinct strings, each one of `known`.
fn names<T: Copy + PartialEq>(
    v: Option<&RawValue>,
    key: &str,
    known: &[(&str, T)],
    default: &[T],
) -> Result<Vec<T>, ConfigError> {
    let path = raw::join(ROOT, key);
    let Some(v) = v else {
        return Ok(default.to_vec());
    };
    let items: Vec<(String, &RawValue)> = match v {
        RawValue::Seq(items) => items
            .iter()
            .enumerate()
            .map(|(i, x)| (raw::index(&path, i), x))
            .collect(),
        other => vec![(path.clone(), other)],
    };
    let choices: Vec<&str> = known.iter().map(|(n, _)| *n).collect();
    if items.is_empty() {
        return Err(ConfigError::EmptyList {
            path,
            expected: format!("list at least one of {}", choices.join(", ")),
        });
    }
    let mut out = Vec::with_capacity(items.len());
    for (ip, item) in items {
        let name = raw::string(item, &ip, &format!("write one of {}", choices.join(", ")))?;
        let Some((_, value)) = known.iter().find(|(n, _)| *n == name) else {
            return Err(topology_error(
                ip,
                format!(
                    "unknown {key} {name:?}; expected one of {}",
                    choices.join(", ")
                ),
            ));
        };
        if out.contains(value) {
            return Err(ConfigError::DuplicateValue {
                path: ip,
                value: item.show(),
            });
        }
        out.push(*value);
    }
    Ok(out)
}

fn positive(v: &RawValue, path: &str, what: &str) -> Result<u64, ConfigError> {
    Ok(raw::int_in(
        v,
        path,
        1,
        i128::from(u32::MAX),
        &format!("{what} is an integer >= 1"),
        &format!("{what} counts whole units"),
    )? as u64)
}

const SHAPE_KEYS: [&str; 6] = ["tp", "pp", "attention_dp", "moe_tp", "moe_ep", "replicas"];

fn pinned_shape(v: &RawValue, path: &str) -> Result<PinnedShape, ConfigError> {
    let RawValue::Map(entries) = v else {
        return Err(topology_error(
            path,
            format!(
                "a shape is a mapping of {}, e.g. `{{tp: 4, moe_ep: 4, replicas: 2}}`",
                SHAPE_KEYS.join(", ")
            ),
        ));
    };
    let mut shape = PinnedShape {
        tp: 0,
        pp: 1,
        attention_dp: 1,
        moe_tp: 1,
        moe_ep: 1,
        replicas: 1,
    };
    let mut seen: Vec<&str> = Vec::new();
    for (k, x) in entries {
        let key = raw::string(k, path, "quote the key")?;
        let kp = raw::join(path, key);
        if seen.contains(&key) {
            return Err(ConfigError::DuplicateKey {
                path: kp,
                key: key.to_owned(),
            });
        }
        seen.push(key);
        let n = positive(x, &kp, key)?;
        match key {
            "tp" => shape.tp = n,
            "pp" => shape.pp = n,
            "attention_dp" => shape.attention_dp = n,
            "moe_tp" => shape.moe_tp = n,
            "moe_ep" => shape.moe_ep = n,
            "replicas" => shape.replicas = n,
            _ => {
                return Err(topology_error(
                    kp,
                    format!(
                        "unknown key {key:?} of a shape; expected {}",
                        SHAPE_KEYS.join(", ")
                    ),
                ));
            }
        }
    }
    if shape.tp == 0 {
        return Err(topology_error(
            path,
            "a shape needs tp (the other sizes default to 1), e.g. `{tp: 4}`",
        ));
    }
    if shape.pp != 1 {
        return Err(topology_error(
            raw::join(path, "pp"),
            "pipeline parallelism is not searched: a worker is tp × attention_dp GPUs; set pp 1 or leave it out",
        ));
    }
    Ok(shape)
}

fn pinned_configs(
    v: &RawValue,
    modes: &[DeploymentMode],
) -> Result<Vec<PinnedConfig>, ConfigError> {
    let path = raw::join(ROOT, "parallel_configs");
    let items = raw::seq(
        v,
        &path,
        "a list of shapes",
        "e.g. `parallel_configs: [{tp: 4, moe_ep: 4, replicas: 2}]`",
    )?;
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let [mode] = modes else {
        return Err(topology_error(
            path,
            "a pinned menu of parallel_configs needs exactly one deployment_mode (agg or disagg); set `deployment_mode: [agg]` or `[disagg]`",
        ));
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let ip = raw::index(&path, i);
        let is_pair = matches!(item, RawValue::Map(e) if e.iter().any(|(k, _)| matches!(k, RawValue::Str(s) if s == "prefill" || s == "decode")));
        let config = match (mode, is_pair) {
            (DeploymentMode::Agg, false) => PinnedConfig::Agg(pinned_shape(item, &ip)?),
            (DeploymentMode::Disagg, true) => {
                let RawValue::Map(entries) = item else {
                    unreachable!("checked above")
                };
                let get = |role: &str| {
                    entries
                        .iter()
                        .find(|(k, _)| matches!(k, RawValue::Str(s) if s == role))
                        .map(|(_, x)| x)
                };
                if let Some((k, _)) = entries.iter().find(
                    |(k, _)| !matches!(k, RawValue::Str(s) if s == "prefill" || s == "decode"),
                ) {
                    return Err(topology_error(
                        ip,
                        format!(
                            "a disagg entry has exactly the keys prefill and decode, found {}",
                            k.show()
                        ),
                    ));
                }
                let (Some(prefill), Some(decode)) = (get("prefill"), get("decode")) else {
                    return Err(topology_error(
                        ip,
                        "a disagg entry needs both prefill and decode shapes, e.g. `{prefill: {tp: 4}, decode: {tp: 8}}`",
                    ));
                };
                PinnedConfig::Disagg {
                    prefill: pinned_shape(prefill, &raw::join(&ip, "prefill"))?,
                    decode: pinned_shape(decode, &raw::join(&ip, "decode"))?,
                }
            }
            (DeploymentMode::Agg, true) => {
                return Err(topology_error(
                    ip,
                    "deployment_mode is agg, so an entry is one flat shape (`{tp: 4, replicas: 2}`), not prefill/decode",
                ));
            }
            (DeploymentMode::Disagg, false) => {
                return Err(topology_error(
                    ip,
                    "deployment_mode is disagg, so an entry is `{prefill: {...}, decode: {...}}`",
                ));
            }
        };
        if out.contains(&config) {
            return Err(ConfigError::DuplicateValue {
                path: ip,
                value: item.show(),
            });
        }
        out.push(config);
    }
    Ok(out)
}

/// Validates a raw `search_space.topology` block.
pub(crate) fn from_raw(t: &RawTopology) -> Result<TopologyConfig, ConfigError> {
    let name = |v: Option<&RawValue>, key: &str, example: &str| -> Result<String, ConfigError> {
        let path = raw::join(ROOT, key);
        let Some(v) = v else {
            return Err(ConfigError::MissingField {
                path,
                hint: format!(
                    "name a preset or a card under the top-level {key}s:, e.g. `{key}: {example}`"
                ),
            });
        };
        let s = raw::string(v, &path, &format!("e.g. `{key}: {example}`"))?;
        if s.trim().is_empty() {
            return Err(topology_error(
                path,
                format!("{key} is a non-empty name, e.g. `{key}: {example}`"),
            ));
        }
        Ok(s.to_owned())
    };
    let model = name(t.model.as_ref(), "model", "qwen3-235b-a22b-fp8")?;
    let gpu = name(t.gpu.as_ref(), "gpu", "h200")?;
    let deployment_modes = names(
        t.deployment_mode.as_ref(),
        "deployment_mode",
        &[
            ("agg", DeploymentMode::Agg),
            ("disagg", DeploymentMode::Disagg),
        ],
        &[DeploymentMode::Agg, DeploymentMode::Disagg],
    )?;
    let backends = names(
        t.backend.as_ref(),
        "backend",
        &[
            ("vllm", Backend::Vllm),
            ("sglang", Backend::Sglang),
            ("trtllm", Backend::Trtllm),
        ],
        &[Backend::Vllm],
    )?;
    let gpus_per_worker = match &t.gpus_per_worker {
        None => DEFAULT_GPUS_PER_WORKER.to_vec(),
        Some(v) => {
            let path = raw::join(ROOT, "gpus_per_worker");
            let items = raw::seq(
                v,
                &path,
                "a list of GPU counts",
                "e.g. `gpus_per_worker: [1, 2, 4, 8]`",
            )?;
            if items.is_empty() {
                return Err(ConfigError::EmptyList {
                    path,
                    expected: "list at least one worker size, e.g. `[1, 2, 4, 8]`".to_owned(),
                });
            }
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let ip = raw::index(&path, i);
                let n = positive(item, &ip, "a worker size")?;
                if out.contains(&n) {
                    return Err(ConfigError::DuplicateValue {
                        path: ip,
                        value: item.show(),
                    });
                }
                out.push(n);
            }
            out.sort_unstable();
            out
        }
    };
    let context_length = t
        .context_length
        .as_ref()
        .map(|v| positive(v, &raw::join(ROOT, "context_length"), "context_length"))
        .transpose()?;
    let parallel_configs = match &t.parallel_configs {
        None => Vec::new(),
        Some(v) => pinned_configs(v, &deployment_modes)?,
    };
    Ok(TopologyConfig {
        model,
        gpu,
        deployment_modes,
        backends,
        gpus_per_worker,
        context_length,
        parallel_configs,
    })
}
