//! The card structs: [`ModelSpec`] (with its optional [`MoeSpec`], [`MlaSpec`] and
//! [`SlidingWindowSpec`]),
//! [`GpuSpec`] and the weight format [`Dtype`], with their sanity checks.

use crate::CardError;
use serde::Deserialize;

/// Number format of weights (and of the KV cache).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Dtype {
    /// 8-bit floating point: one byte per value, FP8 tensor-core throughput.
    Fp8,
    /// bfloat16: two bytes per value, BF16 tensor-core throughput.
    Bf16,
    /// NVFP4: a 4-bit value plus one FP8 scale per 16 values (4.5 bits per value).
    Fp4,
    /// MXFP4 (OCP microscaling): a 4-bit value plus one 8-bit scale per 32 values (4.25 bits).
    Mxfp4,
}

impl Dtype {
    /// Bytes per stored value, block scales included.
    pub fn bytes(self) -> f64 {
        match self {
            Dtype::Fp8 => 1.0,
            Dtype::Bf16 => 2.0,
            Dtype::Fp4 => 4.5 / 8.0,
            Dtype::Mxfp4 => 4.25 / 8.0,
        }
    }

    /// Whether this is a 4-bit format (`fp4` or `mxfp4`).
    pub fn is_4bit(self) -> bool {
        matches!(self, Dtype::Fp4 | Dtype::Mxfp4)
    }
}

/// The mixture-of-experts part of a model card (absent for a dense model).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct MoeSpec {
    /// Routed experts per MoE layer.
    pub experts: u64,
    /// Routed experts each token activates (`num_experts_per_tok`).
    pub active_experts: u64,
    /// Intermediate size of one expert's gated MLP (`moe_intermediate_size`).
    pub expert_intermediate: u64,
    /// Shared experts every token passes through (each of `expert_intermediate` width).
    #[serde(default)]
    pub shared_experts: u64,
    /// Leading layers with a dense MLP of the card's `intermediate` size instead of experts
    /// (`first_k_dense_replace`).
    #[serde(default)]
    pub dense_layers: u64,
    /// Format of the expert weights; defaults to the card's `dtype`.
    #[serde(default)]
    pub expert_dtype: Option<Dtype>,
}

/// Multi-head latent attention (`DeepSeek`'s MLA): the KV cache of one token in one layer is
/// the compressed latent plus the decoupled rotary key, `kv_lora_rank + rope_dim` values,
/// shared by all heads (and replicated, not split, across tensor-parallel ranks).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct MlaSpec {
    /// Rank of the compressed KV latent (`kv_lora_rank`).
    pub kv_lora_rank: u64,
    /// Dimension of the decoupled rotary key (`qk_rope_head_dim`).
    pub rope_dim: u64,
    /// Rank of the compressed query (`q_lora_rank`); 0 = uncompressed queries.
    #[serde(default)]
    pub q_lora_rank: u64,
}

/// Sliding-window attention in some layers (gpt-oss alternates them with full-attention
/// layers): a token of such a layer attends to at most the `window` latest tokens, so the
/// layer keeps at most `window` tokens of a sequence in its KV cache. Which layers they are
/// does not change the model's arithmetic; their count does.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct SlidingWindowSpec {
    /// Tokens a sliding-window layer attends to (`sliding_window`).
    pub window: u64,
    /// Layers with sliding-window attention (the `sliding_attention` entries of
    /// `layer_types`); the others attend to the whole context.
    pub layers: u64,
}

/// A decoder-only transformer: dense (grouped-query attention, gated MLP), optionally with
/// mixture-of-experts layers ([`MoeSpec`]) and multi-head latent attention ([`MlaSpec`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ModelSpec {
    /// Name shown in plot titles; defaults to the preset key.
    #[serde(default)]
    pub display_name: Option<String>,
    /// Transformer layers.
    pub layers: u64,
    /// Hidden size.
    pub hidden: u64,
    /// Attention (query) heads.
    pub heads: u64,
    /// Key/value heads (grouped-query attention; for MLA, as the config states them).
    pub kv_heads: u64,
    /// Dimension of one head (for MLA: the non-rotary query/key and the value dimension).
    pub head_dim: u64,
    /// MLP intermediate size of a dense layer (gate, up and down projections).
    pub intermediate: u64,
    /// Vocabulary size (input embedding and output head).
    pub vocab: u64,
    /// Weight format; GEMMs run at this format's tensor-core throughput.
    pub dtype: Dtype,
    /// KV-cache format; defaults to `dtype` (a 4-bit `dtype` keeps an FP8 cache).
    #[serde(default)]
    pub kv_dtype: Option<Dtype>,
    /// Whether the output head shares the input embedding's weights.
    #[serde(default)]
    pub tie_embeddings: bool,
    /// Side of the square quantization blocks of block-scaled FP8 weights
    /// (`weight_block_size`, 128 for `DeepSeek` and Qwen3 FP8); a tensor-parallel split of
    /// the experts must keep whole blocks.
    #[serde(default)]
    pub weight_block: Option<u64>,
    /// The mixture-of-experts part; absent for a dense model.
    #[serde(default)]
    pub moe: Option<MoeSpec>,
    /// Multi-head latent attention; absent for grouped-query attention.
    #[serde(default)]
    pub mla: Option<MlaSpec>,
    /// Sliding-window attention in some layers; absent when every layer attends to the
    /// whole context.
    #[serde(default)]
    pub sliding_window: Option<SlidingWindowSpec>,
    /// Where the numbers come from (a published config file and its version).
    #[serde(default)]
    pub source: Option<String>,
}

impl ModelSpec {
    /// Weights of one layer's attention projections, in values.
    pub fn attention_params(&self) -> f64 {
        let (h, heads, d) = (self.hidden as f64, self.heads as f64, self.head_dim as f64);
        match &self.mla {
            None => {
                let q = h * heads * d;
                let kv = 2.0 * h * self.kv_heads as f64 * d;
                let o = heads * d * h;
                q + kv + o
            }
            Some(mla) => {
                let (kv_rank, rope, q_rank) = (
                    mla.kv_lora_rank as f64,
                    mla.rope_dim as f64,
                    mla.q_lora_rank as f64,
                );
                let q_out = heads * (d + rope);
                let q = if mla.q_lora_rank == 0 {
                    h * q_out
                } else {
                    h * q_rank + q_rank * q_out
                };
                // down-projection to the latent and the rotary key, up-projection to the
                // per-head keys and values, output projection
                let kv_down = h * (kv_rank + rope);
                let kv_up = kv_rank * heads * 2.0 * d;
                let o = heads * d * h;
                q + kv_down + kv_up + o
            }
        }
    }

    /// Weights of one dense layer's gated MLP, in values.
    pub fn dense_mlp_params(&self) -> f64 {
        3.0 * (self.hidden * self.intermediate) as f64
    }

    /// Weights of one expert's gated MLP, in values (0 for a dense model).
    pub fn expert_params(&self) -> f64 {
        self.moe
            .as_ref()
            .map_or(0.0, |m| 3.0 * (self.hidden * m.expert_intermediate) as f64)
    }

    /// Layers with a dense MLP (all of them for a dense model).
    pub fn dense_layer_count(&self) -> u64 {
        self.moe
            .as_ref()
            .map_or(self.layers, |m| m.dense_layers.min(self.layers))
    }

    /// Layers with experts (0 for a dense model).
    pub fn moe_layer_count(&self) -> u64 {
        self.layers - self.dense_layer_count()
    }

    /// Format of the expert weights (the card's `dtype` unless the MoE part says otherwise).
    pub fn expert_dtype(&self) -> Dtype {
        self.moe
            .as_ref()
            .and_then(|m| m.expert_dtype)
            .unwrap_or(self.dtype)
    }

    /// Format of the KV cache (`kv_dtype`, else `dtype`, with FP8 for a 4-bit `dtype`).
    pub fn kv_dtype(&self) -> Dtype {
        match self.kv_dtype {
            Some(d) => d,
            None if self.dtype.is_4bit() => Dtype::Fp8,
            None => self.dtype,
        }
    }

    /// Weights of one dense layer (attention and the gated MLP), in values.
    pub fn layer_params(&self) -> f64 {
        self.attention_params() + self.dense_mlp_params()
    }

    /// Weights of the output head, in values.
    pub fn head_params(&self) -> f64 {
        (self.vocab * self.hidden) as f64
    }

    /// Weights of the input embedding, in values (0 when tied to the output head).
    pub fn embedding_params(&self) -> f64 {
        if self.tie_embeddings {
            0.0
        } else {
            self.head_params()
        }
    }

    /// Weights of all experts of one MoE layer (routed and shared, and the router), in values.
    pub fn moe_layer_expert_params(&self) -> f64 {
        self.moe.as_ref().map_or(0.0, |m| {
            (m.experts + m.shared_experts) as f64 * self.expert_params()
                + (self.hidden * m.experts) as f64
        })
    }

    /// All weights, in values (layers, output head, and the input embedding unless tied).
    pub fn total_params(&self) -> f64 {
        let layers = self.layers as f64 * self.attention_params()
            + self.dense_layer_count() as f64 * self.dense_mlp_params()
            + self.moe_layer_count() as f64 * self.moe_layer_expert_params();
        layers + self.head_params() + self.embedding_params()
    }

    /// Weights one token's GEMMs pass through, in values: everything but the input embedding
    /// (a table lookup) and, for a MoE model, the experts the token is not routed to (as
    /// "A22B" counts them).
    pub fn active_params(&self) -> f64 {
        let Some(m) = &self.moe else {
            return self.total_params() - self.embedding_params();
        };
        let experts = (m.active_experts + m.shared_experts) as f64 * self.expert_params()
            + (self.hidden * m.experts) as f64;
        self.layers as f64 * self.attention_params()
            + self.dense_layer_count() as f64 * self.dense_mlp_params()
            + self.moe_layer_count() as f64 * experts
            + self.head_params()
    }

    /// Bytes of all weights (experts in their own format).
    pub fn weight_bytes(&self) -> f64 {
        let experts = self.moe_layer_count() as f64 * self.moe_layer_expert_params();
        (self.total_params() - experts) * self.dtype.bytes() + experts * self.expert_dtype().bytes()
    }

    /// KV-cache values one token stores in one layer on one rank holding all KV heads:
    /// `2 × kv_heads × head_dim` for grouped-query attention, `kv_lora_rank + rope_dim` for MLA.
    pub fn kv_values_per_token_layer(&self) -> f64 {
        match &self.mla {
            None => 2.0 * (self.kv_heads * self.head_dim) as f64,
            Some(mla) => (mla.kv_lora_rank + mla.rope_dim) as f64,
        }
    }

    /// KV-cache bytes one token occupies across all ranks of one tensor-parallel group
    /// (every layer; for MLA the latent, which every rank holds once).
    pub fn kv_bytes_per_token(&self) -> f64 {
        self.layers as f64 * self.kv_values_per_token_layer() * self.kv_dtype().bytes()
    }

    /// Layers with sliding-window attention (0 without a window).
    pub fn sliding_layer_count(&self) -> u64 {
        self.sliding_window
            .as_ref()
            .map_or(0, |w| w.layers.min(self.layers))
    }

    /// Token-layers a sequence of `context` tokens keeps in the KV cache and a new token
    /// of it attends to: every token in a full-attention layer, at most the window in a
    /// sliding-window layer (`layers × context` without a window).
    pub fn kv_layer_tokens(&self, context: f64) -> f64 {
        let sliding = self.sliding_layer_count();
        let full = (self.layers - sliding) as f64 * context;
        match &self.sliding_window {
            Some(w) => full + sliding as f64 * context.min(w.window as f64),
            None => full,
        }
    }

    /// KV-cache bytes a sequence of `context` tokens occupies across all ranks of one
    /// tensor-parallel group: [`ModelSpec::kv_bytes_per_token`] × `context` without a
    /// sliding window; with one, its layers keep at most the window.
    pub fn kv_bytes_per_sequence(&self, context: f64) -> f64 {
        self.kv_layer_tokens(context) * self.kv_values_per_token_layer() * self.kv_dtype().bytes()
    }

    /// Checks that every size is positive and the heads group evenly; `path` is the key path
    /// the error names (e.g. `models.my-model`).
    pub fn check(&self, path: &str) -> Result<(), CardError> {
        let fields = [
            ("layers", self.layers),
            ("hidden", self.hidden),
            ("heads", self.heads),
            ("kv_heads", self.kv_heads),
            ("head_dim", self.head_dim),
            ("intermediate", self.intermediate),
            ("vocab", self.vocab),
        ];
        for (name, value) in fields {
            if value == 0 {
                return Err(CardError::invalid(
                    format!("{path}.{name}"),
                    "must be an integer > 0",
                ));
            }
        }
        if !self.heads.is_multiple_of(self.kv_heads) {
            return Err(CardError::invalid(
                format!("{path}.kv_heads"),
                format!(
                    "{} attention heads are not a multiple of {} kv heads",
                    self.heads, self.kv_heads
                ),
            ));
        }
        if self.weight_block == Some(0) {
            return Err(CardError::invalid(
                format!("{path}.weight_block"),
                "must be an integer > 0 (or left out for unblocked weights)",
            ));
        }
        if let Some(m) = &self.moe {
            for (name, value) in [
                ("experts", m.experts),
                ("active_experts", m.active_experts),
                ("expert_intermediate", m.expert_intermediate),
            ] {
                if value == 0 {
                    return Err(CardError::invalid(
                        format!("{path}.moe.{name}"),
                        "must be an integer > 0",
                    ));
                }
            }
            if m.active_experts > m.experts {
                return Err(CardError::invalid(
                    format!("{path}.moe.active_experts"),
                    format!(
                        "{} active experts exceed the {} experts; set at most `experts`",
                        m.active_experts, m.experts
                    ),
                ));
            }
            if m.dense_layers >= self.layers {
                return Err(CardError::invalid(
                    format!("{path}.moe.dense_layers"),
                    format!(
                        "{} dense layers leave no MoE layer of {}; drop the `moe` block for a dense model",
                        m.dense_layers, self.layers
                    ),
                ));
            }
        }
        if let Some(mla) = &self.mla
            && mla.kv_lora_rank == 0
        {
            return Err(CardError::invalid(
                format!("{path}.mla.kv_lora_rank"),
                "must be an integer > 0",
            ));
        }
        if let Some(w) = &self.sliding_window {
            if w.window == 0 {
                return Err(CardError::invalid(
                    format!("{path}.sliding_window.window"),
                    "must be an integer > 0 (the tokens a sliding-window layer attends to)",
                ));
            }
            if w.layers == 0 || w.layers > self.layers {
                return Err(CardError::invalid(
                    format!("{path}.sliding_window.layers"),
                    format!(
                        "must be an integer from 1 to the card's {} layers (the layers with sliding-window attention), got {}; drop the `sliding_window` block when every layer attends to the whole context",
                        self.layers, w.layers
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// One GPU, from its public spec sheet.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct GpuSpec {
    /// Name shown in plot titles; defaults to the preset key.
    #[serde(default)]
    pub display_name: Option<String>,
    /// HBM capacity, GB (10^9 bytes).
    pub hbm_gb: f64,
    /// HBM bandwidth, TB/s.
    pub hbm_tb_s: f64,
    /// Dense FP8 tensor throughput, TFLOPS (without sparsity).
    pub fp8_tflops: f64,
    /// Dense BF16 tensor throughput, TFLOPS (without sparsity).
    pub bf16_tflops: f64,
    /// Dense FP4 tensor throughput, TFLOPS; absent when the GPU has no native FP4 (Hopper),
    /// where 4-bit weights are dequantized and run at BF16 throughput.
    #[serde(default)]
    pub fp4_tflops: Option<f64>,
    /// `NVLink` bandwidth per GPU, GB/s, both directions together (as spec sheets quote it).
    pub nvlink_gb_s: f64,
    /// GPUs in one node (one host).
    #[serde(default = "default_gpus_per_node")]
    pub gpus_per_node: u64,
    /// GPUs one `NVLink` domain connects (72 for an NVL72 rack); defaults to `gpus_per_node`.
    #[serde(default)]
    pub nvlink_domain: Option<u64>,
    /// Where the numbers come from.
    #[serde(default)]
    pub source: Option<String>,
}

fn default_gpus_per_node() -> u64 {
    8
}

impl GpuSpec {
    /// Bytes of HBM.
    pub fn hbm_bytes(&self) -> f64 {
        self.hbm_gb * 1e9
    }

    /// GPUs one `NVLink` domain connects.
    pub fn nvlink_domain(&self) -> u64 {
        self.nvlink_domain.unwrap_or(self.gpus_per_node)
    }

    /// Whether the GPU runs FP4 GEMMs natively.
    pub fn supports_fp4(&self) -> bool {
        self.fp4_tflops.is_some()
    }

    /// Dense peak TFLOPS of GEMMs on weights of format `dtype` (4-bit formats without native
    /// FP4 run at BF16 throughput after dequantization).
    pub fn tflops(&self, dtype: Dtype) -> f64 {
        match dtype {
            Dtype::Fp8 => self.fp8_tflops,
            Dtype::Bf16 => self.bf16_tflops,
            Dtype::Fp4 | Dtype::Mxfp4 => self.fp4_tflops.unwrap_or(self.bf16_tflops),
        }
    }

    /// Checks that every figure is a finite positive number; `path` is the key path the
    /// error names.
    pub fn check(&self, path: &str) -> Result<(), CardError> {
        let fields = [
            ("hbm_gb", self.hbm_gb),
            ("hbm_tb_s", self.hbm_tb_s),
            ("fp8_tflops", self.fp8_tflops),
            ("bf16_tflops", self.bf16_tflops),
            ("fp4_tflops", self.fp4_tflops.unwrap_or(1.0)),
            ("nvlink_gb_s", self.nvlink_gb_s),
        ];
        for (name, value) in fields {
            if !(value.is_finite() && value > 0.0) {
                return Err(CardError::invalid(
                    format!("{path}.{name}"),
                    "must be a finite number > 0",
                ));
            }
        }
        if self.gpus_per_node == 0 {
            return Err(CardError::invalid(
                format!("{path}.gpus_per_node"),
                "must be an integer > 0",
            ));
        }
        if let Some(domain) = self.nvlink_domain
            && (domain == 0 || !domain.is_multiple_of(self.gpus_per_node))
        {
            return Err(CardError::invalid(
                format!("{path}.nvlink_domain"),
                format!(
                    "must be a positive multiple of gpus_per_node ({})",
                    self.gpus_per_node
                ),
            ));
        }
        Ok(())
    }
}
