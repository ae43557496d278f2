//! Model and GPU presets, and the `evaluator.builtin` config block.
//!
//! Presets are the cards of `sweeper-cards` (its `data/` files); a
//! config adds or overrides one by name under `models:` / `gpus:`. Every struct rejects
//! unknown keys, and every error names its key path from `evaluator.builtin.`.

use super::BuiltinError;
use serde::Deserialize;
use std::collections::BTreeMap;
use sweeper_cards::{CardError, GpuSpec, ModelSpec, gpu_presets, model_presets};

/// Root of every key path in errors.
pub(crate) const ROOT: &str = "evaluator.builtin";

impl From<CardError> for BuiltinError {
    fn from(e: CardError) -> BuiltinError {
        match e {
            CardError::Invalid { path, message } => BuiltinError::Invalid { path, message },
            other => BuiltinError::Invalid {
                path: ROOT.to_owned(),
                message: other.to_string(),
            },
        }
    }
}

/// The fudge factors that turn spec-sheet peaks into achieved rates (the calibration).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Calibration {
    /// Fraction of peak HBM bandwidth streaming kernels reach.
    #[serde(default = "default_memory_efficiency")]
    pub memory_efficiency: f64,
    /// Fraction of dense peak FLOPS large GEMMs and attention reach.
    #[serde(default = "default_compute_efficiency")]
    pub compute_efficiency: f64,
    /// Fraction of dense peak FLOPS the prompt tokens' GEMMs and attention reach.
    #[serde(default = "default_prefill_efficiency")]
    pub prefill_efficiency: f64,
    /// Share of the dense GEMMs' compute rate that the grouped GEMMs of mixture-of-experts
    /// layers reach (vLLM and `SGLang`; fitted on measured vLLM runs of gpt-oss-120b).
    #[serde(default = "default_moe_efficiency")]
    pub moe_efficiency: f64,
    /// The same for `backend: trtllm` (fitted on aiconfigurator's TensorRT-LLM database).
    #[serde(default = "default_moe_efficiency_trtllm")]
    pub moe_efficiency_trtllm: f64,
    /// With `backend: trtllm`, how many of the other requests' prompt chunks (per
    /// attention rank) a request's decode steps do not carry. TensorRT-LLM's in-flight
    /// batcher enqueues new requests a few steps after a prefill finishes, so fewer mixed
    /// steps fall in a request's decode than its batch has prompts; aiconfigurator counts
    /// the batch less three of them in its TensorRT-LLM TPOT (`_tpot_mix_steps`,
    /// `trtllm_backend.py`, 0.12.0), the model counts the batch less one less this.
    #[serde(default = "default_unseen_chunks_trtllm")]
    pub unseen_chunks_trtllm: f64,
    /// How much longer a decode step of a disaggregated decode worker takes than the same
    /// step of an aggregated one: its HBM and links also take in the KV caches arriving
    /// from the prefill pool, and it admits requests as their transfers land rather than
    /// with the step's own prompts. aiconfigurator multiplies its disaggregated decode
    /// latency by 1.08 for alignment with measured systems
    /// (`DEFAULT_DECODE_LATENCY_CORRECTION_SCALE`, `aiconfigurator/cli/api.py`, 0.12.0);
    /// 1.14 fits the calibration split best (1.10–1.18 within a point of it).
    #[serde(default = "default_disagg_decode_slowdown")]
    pub disagg_decode_slowdown: f64,
    /// Fixed latency of one all-reduce between tensor-parallel ranks, µs.
    #[serde(default = "default_allreduce_latency_us")]
    pub allreduce_latency_us: f64,
    /// Fixed cost per layer per step (kernel launches, norms, rotary, sampling share), µs.
    #[serde(default = "default_layer_overhead_us")]
    pub layer_overhead_us: f64,
    /// Fixed cost per mixture-of-experts layer per step (routing, sorting the tokens by
    /// expert, quantising their activations, launching the grouped GEMMs and gathering
    /// their outputs back), µs: work that does not shrink with fewer tokens or a faster
    /// GPU, so a small-batch MoE step gains less from HBM bandwidth than the roofline.
    #[serde(default = "default_moe_layer_overhead_us")]
    pub moe_layer_overhead_us: f64,
    /// Fixed cost per engine step (scheduling, sampling, host work), µs.
    #[serde(default = "default_step_overhead_us")]
    pub step_overhead_us: f64,
    /// Fixed latency of one all-to-all of expert parallelism (dispatch or combine), µs.
    #[serde(default = "default_alltoall_latency_us")]
    pub alltoall_latency_us: f64,
    /// Bandwidth one GPU sends at over the network between `NVLink` domains, GB/s (50: one
    /// 400 Gb/s NIC per GPU, as in NVIDIA's DGX H100/B200 reference designs).
    #[serde(default = "default_network_gb_s")]
    pub network_gb_s: f64,
    /// Fixed cost of moving one request's KV cache between a prefill and a decode worker
    /// (connection, descriptors, completion), µs.
    #[serde(default = "default_transfer_latency_us")]
    pub transfer_latency_us: f64,
    /// Fixed cost of a request before its prompt reaches the engine and after its first
    /// token leaves it (HTTP, tokenisation, scheduling, detokenisation), ms; part of TTFT.
    #[serde(default = "default_request_overhead_ms")]
    pub request_overhead_ms: f64,
    /// Prefills of the prompt alone a prompt waits for at large batches in the steady
    /// state (see the crate docs).
    #[serde(default = "default_prefill_contention")]
    pub prefill_contention: f64,
    /// Batch (per attention rank) over which that wait builds up.
    #[serde(default = "default_contention_batch")]
    pub contention_batch: f64,
    /// 4-bit weight values a GPU without native FP4 (Hopper) converts to BF16 a second
    /// inside its grouped expert GEMMs, in 10^12: the conversion, not HBM, then bounds
    /// how fast it reads 4-bit experts (the measured vLLM runs of gpt-oss decode about as
    /// fast on H100 as on H200). 4 fits the calibration split best (a grid of 3–5 and
    /// off).
    #[serde(default = "default_dequant_tvalues_s")]
    pub dequant_tvalues_s: f64,
}

fn default_memory_efficiency() -> f64 {
    0.72
}
fn default_compute_efficiency() -> f64 {
    0.5
}
fn default_prefill_efficiency() -> f64 {
    0.25
}
fn default_moe_efficiency() -> f64 {
    1.0
}
fn default_moe_efficiency_trtllm() -> f64 {
    0.25
}
fn default_unseen_chunks_trtllm() -> f64 {
    2.0
}
fn default_disagg_decode_slowdown() -> f64 {
    1.14
}
fn default_allreduce_latency_us() -> f64 {
    15.0
}
fn default_layer_overhead_us() -> f64 {
    15.0
}
fn default_moe_layer_overhead_us() -> f64 {
    10.0
}
fn default_step_overhead_us() -> f64 {
    1000.0
}
fn default_alltoall_latency_us() -> f64 {
    40.0
}
fn default_network_gb_s() -> f64 {
    50.0
}
fn default_transfer_latency_us() -> f64 {
    500.0
}
fn default_request_overhead_ms() -> f64 {
    20.0
}
fn default_contention_batch() -> f64 {
    40.0
}
fn default_prefill_contention() -> f64 {
    1.8
}
fn default_dequant_tvalues_s() -> f64 {
    4.0
}

impl Default for Calibration {
    fn default() -> Self {
        Calibration {
            memory_efficiency: default_memory_efficiency(),
            compute_efficiency: default_compute_efficiency(),
            prefill_efficiency: default_prefill_efficiency(),
            moe_efficiency: default_moe_efficiency(),
            moe_efficiency_trtllm: default_moe_efficiency_trtllm(),
            unseen_chunks_trtllm: default_unseen_chunks_trtllm(),
            disagg_decode_slowdown: default_disagg_decode_slowdown(),
            allreduce_latency_us: default_allreduce_latency_us(),
            layer_overhead_us: default_layer_overhead_us(),
            moe_layer_overhead_us: default_moe_layer_overhead_us(),
            step_overhead_us: default_step_overhead_us(),
            alltoall_latency_us: default_alltoall_latency_us(),
            network_gb_s: default_network_gb_s(),
            transfer_latency_us: default_transfer_latency_us(),
            request_overhead_ms: default_request_overhead_ms(),
            prefill_contention: default_prefill_contention(),
            contention_batch: default_contention_batch(),
            dequant_tvalues_s: default_dequant_tvalues_s(),
        }
    }
}

impl Calibration {
    fn check(&self, path: &str) -> Result<(), BuiltinError> {
        for (name, value) in [("disagg_decode_slowdown", self.disagg_decode_slowdown)] {
            if !(value.is_finite() && value >= 1.0) {
                return Err(BuiltinError::invalid(
                    format!("{path}.{name}"),
                    "must be a finite number >= 1 (1: as fast as an aggregated worker)",
                ));
            }
        }
        for (name, value) in [
            ("network_gb_s", self.network_gb_s),
            ("contention_batch", self.contention_batch),
            ("dequant_tvalues_s", self.dequant_tvalues_s),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(BuiltinError::invalid(
                    format!("{path}.{name}"),
                    "must be a finite number > 0",
                ));
            }
        }
        for (name, value) in [
            ("memory_efficiency", self.memory_efficiency),
            ("compute_efficiency", self.compute_efficiency),
            ("prefill_efficiency", self.prefill_efficiency),
            ("moe_efficiency", self.moe_efficiency),
            ("moe_efficiency_trtllm", self.moe_efficiency_trtllm),
        ] {
            if !(value.is_finite() && value > 0.0 && value <= 1.0) {
                return Err(BuiltinError::invalid(
                    format!("{path}.{name}"),
                    "must be a number in (0, 1]",
                ));
            }
        }
        for (name, value) in [
            ("allreduce_latency_us", self.allreduce_latency_us),
            ("layer_overhead_us", self.layer_overhead_us),
            ("moe_layer_overhead_us", self.moe_layer_overhead_us),
            ("unseen_chunks_trtllm", self.unseen_chunks_trtllm),
            ("step_overhead_us", self.step_overhead_us),
            ("alltoall_latency_us", self.alltoall_latency_us),
            ("transfer_latency_us", self.transfer_latency_us),
            ("request_overhead_ms", self.request_overhead_ms),
            ("prefill_contention", self.prefill_contention),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                return Err(BuiltinError::invalid(
                    format!("{path}.{name}"),
                    "must be a finite number >= 0",
                ));
            }
        }
        Ok(())
    }
}

/// The parsed `evaluator.builtin` block.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Settings {
    pub(crate) model_name: String,
    pub(crate) model: ModelSpec,
    pub(crate) gpu_name: String,
    pub(crate) gpu: GpuSpec,
    pub(crate) memory_fraction: f64,
    pub(crate) block_size: u64,
    pub(crate) max_num_tokens: u64,
    pub(crate) length_jitter: f64,
    pub(crate) seed: u64,
    pub(crate) calibration: Calibration,
    /// Parameters the sweep may search although the model does not read them (labels).
    pub(crate) ignore: Vec<String>,
}

/// Keys of the block, in the order the docs list them.
pub(crate) const KEYS: [&str; 11] = [
    "model",
    "gpu",
    "models",
    "gpus",
    "memory_fraction",
    "block_size",
    "max_num_tokens",
    "length_jitter",
    "seed",
    "calibration",
    "ignore",
];

fn typed<T: serde::de::DeserializeOwned>(
    value: &serde_json::Value,
    path: &str,
) -> Result<T, BuiltinError> {
    T::deserialize(value).map_err(|e| BuiltinError::invalid(path.to_owned(), e.to_string()))
}

fn presets_from<T: serde::de::DeserializeOwned>(
    value: &serde_json::Value,
    path: &str,
    into: &mut BTreeMap<String, T>,
) -> Result<(), BuiltinError> {
    let serde_json::Value::Object(map) = value else {
        return Err(BuiltinError::invalid(
            path.to_owned(),
            "must be a map from preset name to preset",
        ));
    };
    for (name, spec) in map {
        let spec: T = typed(spec, &format!("{path}.{name}"))?;
        into.insert(name.clone(), spec);
    }
    Ok(())
}

fn known(names: impl Iterator<Item = impl AsRef<str>>) -> String {
    names
        .map(|n| n.as_ref().to_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Settings {
    pub(crate) fn parse(block: &serde_json::Value) -> Result<Settings, BuiltinError> {
        let empty = serde_json::Map::new();
        let map = match block {
            serde_json::Value::Null => &empty,
            serde_json::Value::Object(map) => map,
            _ => {
                return Err(BuiltinError::invalid(
                    ROOT.to_owned(),
                    "must be a map of settings",
                ));
            }
        };
        if let Some(key) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(BuiltinError::invalid(
                format!("{ROOT}.{key}"),
                format!("unknown key (known keys: {})", KEYS.join(", ")),
            ));
        }
        let get = |key: &str| map.get(key).filter(|v| !v.is_null());
        let mut models = model_presets();
        let mut gpus = gpu_presets();
        if let Some(v) = get("models") {
            presets_from(v, &format!("{ROOT}.models"), &mut models)?;
        }
        if let Some(v) = get("gpus") {
            presets_from(v, &format!("{ROOT}.gpus"), &mut gpus)?;
        }
        let model_name: String = match get("model") {
            Some(v) => typed(v, &format!("{ROOT}.model"))?,
            None => "qwen3-32b-fp8".to_owned(),
        };
        let gpu_name: String = match get("gpu") {
            Some(v) => typed(v, &format!("{ROOT}.gpu"))?,
            None => "h200".to_owned(),
        };
        let model =
            models
                .get(&model_name)
                .cloned()
                .ok_or_else(|| BuiltinError::UnknownPreset {
                    path: format!("{ROOT}.model"),
                    kind: "model",
                    name: model_name.clone(),
                    known: known(models.keys()),
                })?;
        model.check(&format!("{ROOT}.models.{model_name}"))?;
        let gpu = gpus
            .get(&gpu_name)
            .cloned()
            .ok_or_else(|| BuiltinError::UnknownPreset {
                path: format!("{ROOT}.gpu"),
                kind: "gpu",
                name: gpu_name.clone(),
                known: known(gpus.keys()),
            })?;
        gpu.check(&format!("{ROOT}.gpus.{gpu_name}"))?;

        let memory_fraction: f64 = match get("memory_fraction") {
            Some(v) => typed(v, &format!("{ROOT}.memory_fraction"))?,
            None => 0.9,
        };
        if !(memory_fraction.is_finite() && memory_fraction > 0.0 && memory_fraction <= 1.0) {
            return Err(BuiltinError::invalid(
                format!("{ROOT}.memory_fraction"),
                "must be a number in (0, 1]",
            ));
        }
        let block_size: u64 = match get("block_size") {
            Some(v) => typed(v, &format!("{ROOT}.block_size"))?,
            None => 32,
        };
        if block_size == 0 {
            return Err(BuiltinError::invalid(
                format!("{ROOT}.block_size"),
                "must be an integer > 0",
            ));
        }
        let max_num_tokens: u64 = match get("max_num_tokens") {
            Some(v) => typed(v, &format!("{ROOT}.max_num_tokens"))?,
            None => 8192,
        };
        if max_num_tokens == 0 {
            return Err(BuiltinError::invalid(
                format!("{ROOT}.max_num_tokens"),
                "must be an integer > 0",
            ));
        }
        let length_jitter: f64 = match get("length_jitter") {
            Some(v) => typed(v, &format!("{ROOT}.length_jitter"))?,
            None => 0.2,
        };
        if !(length_jitter.is_finite() && (0.0..=0.9).contains(&length_jitter)) {
            return Err(BuiltinError::invalid(
                format!("{ROOT}.length_jitter"),
                "must be a number in [0, 0.9]",
            ));
        }
        let seed: u64 = match get("seed") {
            Some(v) => typed(v, &format!("{ROOT}.seed"))?,
            None => 0,
        };
        let calibration: Calibration = match get("calibration") {
            Some(v) => typed(v, &format!("{ROOT}.calibration"))?,
            None => Calibration::default(),
        };
        calibration.check(&format!("{ROOT}.calibration"))?;
        let ignore: Vec<String> = match get("ignore") {
            Some(v) => typed(v, &format!("{ROOT}.ignore"))?,
            None => Vec::new(),
        };
        Ok(Settings {
            model_name,
            model,
            gpu_name,
            gpu,
            memory_fraction,
            block_size,
            max_num_tokens,
            length_jitter,
            seed,
            calibration,
            ignore,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn presets_parse_and_are_sane() {
        let models = model_presets();
        for name in [
            "llama3-8b-fp8",
            "llama3-8b-bf16",
            "qwen3-32b-fp8",
            "qwen3-32b-bf16",
            "llama3-70b-fp8",
            "llama3-70b-bf16",
        ] {
            let m = &models[name];
            m.check(name).unwrap();
        }
        let gpus = gpu_presets();
        for name in ["h100", "h200", "b200"] {
            gpus[name].check(name).unwrap();
        }
        // Qwen3-32B has about 32.8 billion parameters, one byte each in FP8.
        let q = &models["qwen3-32b-fp8"];
        let billions = q.total_params() / 1e9;
        assert!((32.0..34.0).contains(&billions), "{billions}");
        assert_eq!(q.kv_bytes_per_token(), 131_072.0);
        let l70 = &models["llama3-70b-bf16"];
        let billions = l70.total_params() / 1e9;
        assert!((69.0..72.0).contains(&billions), "{billions}");
        let l8 = &models["llama3-8b-bf16"];
        let billions = l8.total_params() / 1e9;
        assert!((7.5..8.5).contains(&billions), "{billions}");
    }

    #[test]
    fn defaults_and_overrides() {
        let s = Settings::parse(&json!({})).unwrap();
        assert_eq!(
            (s.model_name.as_str(), s.gpu_name.as_str()),
            ("qwen3-32b-fp8", "h200")
        );
        let s = Settings::parse(&json!({
            "model": "tiny",
            "models": {"tiny": {"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2,
                                 "head_dim": 16, "intermediate": 128, "vocab": 1000, "dtype": "bf16"}},
            "calibration": {"compute_efficiency": 0.6}
        }))
        .unwrap();
        assert_eq!(s.model.layers, 2);
        assert_eq!(s.calibration.compute_efficiency, 0.6);
        assert_eq!(s.calibration.memory_efficiency, 0.72);
    }

    #[test]
    fn errors_name_the_path() {
        let e = Settings::parse(&json!({"modle": "x"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("evaluator.builtin.modle"), "{e}");
        let e = Settings::parse(&json!({"gpu": "a100"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("evaluator.builtin.gpu"), "{e}");
        assert!(
            e.contains("(known: b200, b300, gb200, h100, h200, mi355x)"),
            "{e}"
        );
        let e = Settings::parse(&json!({"models": {"m": {"layers": 1, "color": 3}}}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("evaluator.builtin.models.m"), "{e}");
        assert!(e.contains("color"), "{e}");
        let e = Settings::parse(&json!({"calibration": {"speed": 1}}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("evaluator.builtin.calibration"), "{e}");
        let e = Settings::parse(&json!({"memory_fraction": 1.5}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("evaluator.builtin.memory_fraction"), "{e}");
        let e = Settings::parse(&json!([1])).unwrap_err().to_string();
        assert!(e.contains("evaluator.builtin"), "{e}");
    }

    #[test]
    fn sliding_window_and_dequant_errors_name_the_path() {
        let e = Settings::parse(&json!({"calibration": {"dequant_tvalues_s": 0}}))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(
                "evaluator.builtin.calibration.dequant_tvalues_s: must be a finite number > 0"
            ),
            "{e}"
        );
        let card = json!({"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "head_dim": 16,
            "intermediate": 128, "vocab": 1000, "dtype": "bf16",
            "sliding_window": {"window": 128, "layers": 4}});
        let e = Settings::parse(&json!({"model": "m", "models": {"m": card}}))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("evaluator.builtin.models.m.sliding_window.layers"),
            "{e}"
        );
    }
}
