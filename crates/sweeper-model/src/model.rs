//! The roofline arithmetic: the time of one engine step, the KV capacity, and the steady
//! state of a closed-loop aggregated deployment.

use super::spec::Settings;

/// What a step processes: prefill tokens and decode tokens, with their attended contexts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StepLoad {
    /// Prompt tokens processed this step (chunked prefill).
    pub(crate) prefill_tokens: f64,
    /// Mean context a prefill token attends to (causal: about half the prompt).
    pub(crate) prefill_context: f64,
    /// Requests decoding one token this step.
    pub(crate) decode_tokens: f64,
    /// Mean context a decode token attends to (KV tokens read per decode token).
    pub(crate) decode_context: f64,
    /// Tokens whose logits are computed (one per decode token, one per finished prompt).
    pub(crate) sampled_tokens: f64,
}

/// Achieved hardware rates of one rank, after calibration.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rates {
    /// Bytes/s streamed from HBM.
    bandwidth: f64,
    /// FLOP/s of GEMMs and attention at the model's format.
    flops: f64,
    /// Bytes/s one direction of `NVLink`.
    link: f64,
    allreduce_latency_s: f64,
    layer_overhead_s: f64,
    step_overhead_s: f64,
}

impl Rates {
    pub(crate) fn new(s: &Settings) -> Rates {
        let c = &s.calibration;
        let peak_tflops = s.gpu.tflops(s.model.dtype);
        Rates {
            bandwidth: s.gpu.hbm_tb_s * 1e12 * c.memory_efficiency,
            flops: peak_tflops * 1e12 * c.compute_efficiency,
            // Spec sheets quote both directions together; a ring all-reduce uses one.
            link: s.gpu.nvlink_gb_s * 1e9 / 2.0,
            allreduce_latency_s: c.allreduce_latency_us * 1e-6,
            layer_overhead_s: c.layer_overhead_us * 1e-6,
            step_overhead_s: c.step_overhead_us * 1e-6,
        }
    }
}

/// Seconds one engine step takes on a tensor-parallel group of `tp` ranks: a roofline per
/// kernel class (the slower of streaming its bytes and computing its FLOPs), summed, plus
/// the all-reduces and fixed overheads (the roofline idea of Williams, Waterman and
/// Patterson, applied per kernel class as LLM-inference analyses commonly do).
pub(crate) fn step_seconds(s: &Settings, r: &Rates, tp: f64, load: StepLoad) -> f64 {
    let m = &s.model;
    let tokens = load.prefill_tokens + load.decode_tokens;
    let layers = m.layers as f64;
    let bytes = m.dtype.bytes();
    // Dense projections: every weight is read once per step, two FLOPs per weight per token.
    let gemm_bytes = (layers * m.layer_params() + m.head_params()) * bytes / tp;
    let gemm_flops =
        2.0 * (layers * m.layer_params() * tokens + m.head_params() * load.sampled_tokens) / tp;
    let gemm = (gemm_bytes / r.bandwidth).max(gemm_flops / r.flops);
    // Attention: QK^T and PV are 2 FLOPs per multiply-add each, per head, per attended token.
    let attn_flops_per_ctx = 4.0 * layers * (m.heads * m.head_dim) as f64 / tp;
    let decode_kv_bytes = load.decode_tokens * load.decode_context * m.kv_bytes_per_token() / tp;
    let decode_attn = (decode_kv_bytes / r.bandwidth)
        .max(attn_flops_per_ctx * load.decode_tokens * load.decode_context / r.flops);
    let prefill_attn = attn_flops_per_ctx * load.prefill_tokens * load.prefill_context / r.flops;
    // Two all-reduces per layer (after attention and after the MLP) of BF16 activations;
    // a ring moves 2 (tp - 1) / tp of the buffer through each link.
    let comm = if tp > 1.0 {
        let buffer = tokens * m.hidden as f64 * 2.0;
        2.0 * layers * (r.allreduce_latency_s + buffer * 2.0 * (tp - 1.0) / tp / r.link)
    } else {
        0.0
    };
    let overhead = layers * r.layer_overhead_s + r.step_overhead_s;
    gemm + decode_attn + prefill_attn + comm + overhead
}

/// KV tokens one rank holds: `(HBM − weights per rank) × memory_fraction` over the KV bytes
/// per token per rank; `None` when the weights alone do not fit in HBM.
pub(crate) fn kv_tokens_per_rank(s: &Settings, tp: u64) -> Option<u64> {
    let hbm = s.gpu.hbm_gb * 1e9;
    let weights = s.model.weight_bytes() / tp as f64;
    if weights >= hbm {
        return None;
    }
    let free = (hbm - weights) * s.memory_fraction;
    Some((free / (s.model.kv_bytes_per_token() / tp as f64)).floor() as u64)
}

/// One replica's steady state under a closed loop.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SteadyState {
    /// Requests in the batch at once.
    pub(crate) active: f64,
    /// Mean decode step (the inter-token latency), seconds.
    pub(crate) tpot: f64,
    /// The step that carries one request's prompt chunk, seconds.
    pub(crate) chunk_step: f64,
    /// Chunks per prompt.
    pub(crate) chunks: f64,
    /// Queue wait before a batch slot frees, seconds (Little's law).
    pub(crate) queue_wait: f64,
    /// Completed requests per second of this replica.
    pub(crate) request_rate: f64,
}

/// The steady state of one replica holding `clients` closed-loop clients, with at most
/// `slots` requests in the batch (the batch cap or the KV capacity, whichever is lower).
pub(crate) fn steady_state(
    s: &Settings,
    r: &Rates,
    tp: f64,
    clients: f64,
    slots: f64,
    isl: f64,
    osl: f64,
) -> SteadyState {
    let active = clients.min(slots).max(f64::MIN_POSITIVE);
    let budget = s.max_num_tokens as f64;
    let chunks = (isl / budget).ceil().max(1.0);
    let chunk = isl / chunks;
    // A request occupies its slot for `chunks` prefill steps and `osl - 1` decode steps.
    let steps = chunks + (osl - 1.0).max(0.0);
    let decode_share = (osl - 1.0).max(0.0) / steps;
    // The other requests' prompts, spread over the steps (chunked prefill mixes them in).
    let others = (active - 1.0).max(0.0);
    let decode_context = isl + osl / 2.0;
    let tpot = step_seconds(
        s,
        r,
        tp,
        StepLoad {
            prefill_tokens: others * isl / steps,
            prefill_context: isl / 2.0,
            decode_tokens: active * decode_share,
            decode_context,
            sampled_tokens: active * decode_share + others / steps,
        },
    );
    let chunk_step = step_seconds(
        s,
        r,
        tp,
        StepLoad {
            prefill_tokens: chunk,
            prefill_context: isl / 2.0,
            decode_tokens: others * decode_share,
            decode_context,
            sampled_tokens: others * decode_share + 1.0 / chunks,
        },
    );
    let in_batch = chunks * chunk_step + (osl - 1.0).max(0.0) * tpot;
    let request_rate = active / in_batch;
    // Little's law for the closed loop: clients = request_rate × (wait + in_batch).
    let queue_wait = ((clients - active).max(0.0)) / request_rate;
    SteadyState {
        active,
        tpot,
        chunk_step,
        chunks,
        queue_wait,
        request_rate,
    }
}

/// One replica under an open loop of `rate` requests per second, `requests` in all: the
/// batch settles where its completion rate matches the arrival rate (found by bisection;
/// no queueing below saturation). Past saturation the batch is full and the queue grows
/// for the whole run, so a request waits on average half the backlog the run accumulates.
/// Returns the steady state and the completion rate.
#[allow(clippy::too_many_arguments)]
pub(crate) fn open_loop(
    s: &Settings,
    r: &Rates,
    tp: f64,
    rate: f64,
    slots: f64,
    isl: f64,
    osl: f64,
    requests: f64,
) -> (SteadyState, f64) {
    let full = steady_state(s, r, tp, slots, slots, isl, osl);
    if rate >= full.request_rate {
        let backlog_wait = requests / 2.0 * (1.0 / full.request_rate - 1.0 / rate);
        let ss = SteadyState {
            queue_wait: backlog_wait.max(0.0),
            ..full
        };
        return (ss, full.request_rate);
    }
    let (mut lo, mut hi) = (0.0f64, slots);
    for _ in 0..48 {
        let mid = 0.5 * (lo + hi);
        if steady_state(s, r, tp, mid, mid, isl, osl).request_rate < rate {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (steady_state(s, r, tp, hi, hi, isl, osl), rate)
}
