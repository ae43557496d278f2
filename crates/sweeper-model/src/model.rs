//! The roofline arithmetic: the time of one engine step, the KV capacity, and the steady
//! state of a closed-loop aggregated deployment.

use super::candidate::Backend;
use super::spec::Settings;
use sweeper_cards::{Dtype, ModelSpec, Shape};

/// What a step processes: prefill tokens and decode tokens, with their attended contexts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StepLoad {
    /// Prompt tokens processed this step (chunked prefill).
    pub(crate) prefill_tokens: f64,
    /// Mean context a prefill token attends to in a full-attention layer (causal: half
    /// the prompt, which a sliding-window layer's context is derived from).
    pub(crate) prefill_context: f64,
    /// Requests decoding one token this step.
    pub(crate) decode_tokens: f64,
    /// Mean context a decode token attends to (KV tokens read per decode token).
    pub(crate) decode_context: f64,
    /// Tokens whose logits are computed (one per decode token, one per finished prompt).
    pub(crate) sampled_tokens: f64,
    /// Whether the prompt tokens are other requests' chunks interleaved into decode steps
    /// (computed at `compute_efficiency`) rather than the prompt a TTFT waits for (at
    /// `prefill_efficiency`).
    pub(crate) interleaved: bool,
}

/// Achieved hardware rates of one rank, after calibration.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rates {
    /// Bytes/s streamed from HBM.
    bandwidth: f64,
    /// Fraction of a format's dense peak that GEMMs and attention reach.
    compute_efficiency: f64,
    /// The same for the prompt tokens of a step.
    prefill_efficiency: f64,
    /// Share of the dense rates that grouped expert GEMMs reach.
    moe_efficiency: f64,
    /// Of the other requests' prompt chunks, how many a request's decode steps do not
    /// carry (see `steady_state`).
    unseen_chunks: f64,
    /// Bytes/s one direction of `NVLink`.
    link: f64,
    /// Bytes/s one GPU sends over the network between `NVLink` domains.
    network: f64,
    allreduce_latency_s: f64,
    alltoall_latency_s: f64,
    transfer_latency_s: f64,
    layer_overhead_s: f64,
    moe_layer_overhead_s: f64,
    step_overhead_s: f64,
    /// 4-bit values/s a GPU without native FP4 converts to BF16.
    dequant_rate: f64,
}

impl Rates {
    pub(crate) fn new(s: &Settings) -> Rates {
        let c = &s.calibration;
        Rates {
            bandwidth: s.gpu.hbm_tb_s * 1e12 * c.memory_efficiency,
            compute_efficiency: c.compute_efficiency,
            prefill_efficiency: c.prefill_efficiency,
            moe_efficiency: c.moe_efficiency,
            unseen_chunks: 0.0,
            // Spec sheets quote both directions together; a ring all-reduce uses one.
            link: s.gpu.nvlink_gb_s * 1e9 / 2.0,
            network: c.network_gb_s * 1e9,
            allreduce_latency_s: c.allreduce_latency_us * 1e-6,
            alltoall_latency_s: c.alltoall_latency_us * 1e-6,
            transfer_latency_s: c.transfer_latency_us * 1e-6,
            layer_overhead_s: c.layer_overhead_us * 1e-6,
            moe_layer_overhead_s: c.moe_layer_overhead_us * 1e-6,
            step_overhead_s: c.step_overhead_us * 1e-6,
            dequant_rate: c.dequant_tvalues_s * 1e12,
        }
    }

    /// The rates of a candidate's backend (its grouped expert GEMMs).
    pub(crate) fn for_backend(&self, s: &Settings, backend: Backend) -> Rates {
        Rates {
            moe_efficiency: match backend {
                Backend::Trtllm => s.calibration.moe_efficiency_trtllm,
                Backend::Vllm | Backend::Sglang => s.calibration.moe_efficiency,
            },
            unseen_chunks: match backend {
                Backend::Trtllm => s.calibration.unseen_chunks_trtllm,
                Backend::Vllm | Backend::Sglang => 0.0,
            },
            ..*self
        }
    }

    /// Fixed seconds of one KV transfer between workers.
    pub(crate) fn transfer_latency(&self) -> f64 {
        self.transfer_latency_s
    }

    /// Achieved FLOP/s of GEMMs on weights of format `dtype` (4-bit formats on a GPU
    /// without native FP4 run at BF16 throughput, the card says).
    fn flops(&self, s: &Settings, dtype: Dtype) -> f64 {
        s.gpu.tflops(dtype) * 1e12 * self.compute_efficiency
    }

    /// Achieved FLOP/s of the prompt tokens' GEMMs and attention.
    fn prefill_flops(&self, s: &Settings, dtype: Dtype) -> f64 {
        s.gpu.tflops(dtype) * 1e12 * self.prefill_efficiency
    }

    /// Bytes/s between the ranks of a group of `gpus`: `NVLink` inside one domain, else
    /// the network.
    pub(crate) fn link_for(&self, s: &Settings, gpus: u64) -> f64 {
        if gpus <= s.gpu.nvlink_domain() {
            self.link
        } else {
            self.network
        }
    }
}

/// The slower of streaming `bytes` and computing `flops` (the roofline of one kernel class).
fn roofline(bytes: f64, bandwidth: f64, flops: f64, rate: f64) -> f64 {
    (bytes / bandwidth).max(flops / rate)
}

/// The busiest of `ranks` ranks when `picks` token-to-expert assignments spread uniformly:
/// the mean plus about `sqrt(2 mean ln ranks)` (the usual bound on the maximum of
/// `ranks` near-Poisson counts), never more than all the picks. At small batches this is
/// several times the mean: the expert imbalance that makes expert parallelism slow there.
fn busiest(picks: f64, ranks: f64) -> f64 {
    if ranks <= 1.0 {
        return picks;
    }
    let mean = picks / ranks;
    // some rank holds at least the mean rounded up (one pick when there is one)
    (mean + (2.0 * mean * ranks.ln()).sqrt())
        .max(mean.ceil())
        .min(picks)
}

/// Seconds of one ring all-reduce of `bytes` over `n` ranks.
fn allreduce(r: &Rates, link: f64, bytes: f64, n: f64) -> f64 {
    if n <= 1.0 {
        return 0.0;
    }
    r.allreduce_latency_s + bytes * 2.0 * (n - 1.0) / n / link
}

/// Seconds one engine step takes on one worker of `shape`: per rank, a roofline per kernel
/// class (the slower of streaming its bytes and computing its FLOPs), summed, plus the
/// collectives and fixed overheads (the roofline idea of Williams, Waterman and Patterson,
/// applied per kernel class as LLM-inference analyses commonly do). `load` counts the
/// tokens of one attention rank; with attention data parallelism each rank steps its own
/// requests and the ranks meet in the MoE layers.
pub(crate) fn step_seconds(s: &Settings, r: &Rates, shape: Shape, load: StepLoad) -> f64 {
    let m = &s.model;
    let tp = shape.tp as f64;
    let dp = shape.attention_dp as f64;
    let tokens = load.prefill_tokens + load.decode_tokens;
    let layers = m.layers as f64;
    let dense_layers = m.dense_layer_count() as f64;
    let moe_layers = m.moe_layer_count() as f64;
    let bytes = m.dtype.bytes();
    let link = r.link_for(s, shape.gpus());
    // Attention projections, dense MLPs, shared experts and the output head: split by tp,
    // every weight read once a step, two FLOPs per weight per token.
    let shared = m
        .moe
        .as_ref()
        .map_or(0.0, |moe| moe.shared_experts as f64 * m.expert_params());
    let per_token =
        layers * m.attention_params() + dense_layers * m.dense_mlp_params() + moe_layers * shared;
    let gemm_bytes = (per_token + m.head_params()) * bytes / tp;
    // prompt tokens run at the prefill efficiency, the rest at the decode one
    let prompt_rate = |dtype: Dtype| {
        if load.interleaved {
            r.flops(s, dtype)
        } else {
            r.prefill_flops(s, dtype)
        }
    };
    let compute = |flops_prefill: f64, flops_other: f64, dtype: Dtype| {
        flops_prefill / prompt_rate(dtype) + flops_other / r.flops(s, dtype)
    };
    let gemm_compute = compute(
        2.0 * per_token * load.prefill_tokens / tp,
        2.0 * (per_token * load.decode_tokens + m.head_params() * load.sampled_tokens) / tp,
        m.dtype,
    );
    let mut time = (gemm_bytes / r.bandwidth).max(gemm_compute);
    let mut comm = 0.0;
    // The tp group all-reduces after attention in every layer and after a dense MLP.
    let activations = tokens * m.hidden as f64 * 2.0;
    comm += (layers + dense_layers) * allreduce(r, link, activations, tp);
    if let Some(moe) = &m.moe {
        // Every token of the worker (all attention-DP ranks) picks `active_experts` experts;
        // a rank holds `experts / moe_ep` of them, each split `moe_tp` ways. Only the experts
        // some token picked are read; all are stored (the memory plan counts them).
        let (mtp, mep) = (shape.moe_tp as f64, shape.moe_ep as f64);
        let worker_tokens = tokens * dp;
        let picks = worker_tokens * moe.active_experts as f64;
        let busiest_picks = busiest(picks, mep);
        let held = moe.experts as f64 / mep;
        let read = held * (1.0 - (1.0 - 1.0 / held).powf(busiest_picks));
        let expert_values = moe_layers * read * m.expert_params() / mtp;
        let expert_bytes = expert_values * m.expert_dtype().bytes();
        // A GPU without native FP4 converts 4-bit expert weights to BF16 in the grouped
        // GEMM as it reads them, at a rate of its own: that conversion, not HBM, bounds the
        // reads (the measured gpt-oss runs decode about as fast on H100 as on H200)
        let dequant = if m.expert_dtype().is_4bit() && !s.gpu.supports_fp4() {
            expert_values / r.dequant_rate
        } else {
            0.0
        };
        let expert_flops = moe_layers * 2.0 * busiest_picks * m.expert_params() / mtp;
        let prefill_share = if tokens > 0.0 {
            load.prefill_tokens / tokens
        } else {
            0.0
        };
        let expert_compute = compute(
            expert_flops * prefill_share,
            expert_flops * (1.0 - prefill_share),
            m.expert_dtype(),
        );
        // grouped expert GEMMs (many small matrices, few tokens each) compute at a fraction
        // of what dense GEMMs reach; routing, sorting and launching cost a fixed time a layer
        time += (expert_bytes / r.bandwidth)
            .max(dequant)
            .max(expert_compute / r.moe_efficiency)
            + moe_layers * r.moe_layer_overhead_s;
        let ranks = (shape.moe_tp * shape.moe_ep) as f64;
        if dp <= 1.0 && ranks > 1.0 {
            // Without attention data parallelism every rank of the worker already holds
            // every token (the attention's all-reduce left them there): nothing is
            // dispatched; each rank runs its experts (or its slices of them) on the tokens
            // that picked them and one all-reduce over the ranks sums the partial outputs
            // (the combine), as for a dense MLP under tensor parallelism.
            comm += moe_layers * allreduce(r, link, activations, ranks);
        } else if mep > 1.0 {
            // Dispatch (FP8 activations) and combine (BF16) all-to-alls: a rank sends its
            // share of the tokens' picks to the ranks holding their experts.
            let sent = picks / ranks * m.hidden as f64 * 3.0 * (mep - 1.0) / mep;
            comm += moe_layers * (2.0 * r.alltoall_latency_s + sent / link);
        }
        if mtp > 1.0 && dp > 1.0 {
            // Expert tensor parallelism sums the partial outputs of the worker's tokens (an
            // all-gather and a reduce-scatter with attention DP: the cost of an all-reduce).
            let gathered = worker_tokens / (ranks / mtp) * m.hidden as f64 * 2.0;
            comm += moe_layers * allreduce(r, link, gathered, mtp);
        }
    }
    // Attention over the KV cache. Grouped-query: QK^T and PV, 2 FLOPs per multiply-add
    // each, per head, per attended token. MLA decodes in the absorbed form over the latent
    // (kv_lora_rank + rope_dim values per token, read whole by every tp rank) and prefills
    // with per-head keys and values.
    let heads = m.heads as f64 / tp;
    let (decode_flops_ctx, prefill_flops_ctx) = match &m.mla {
        None => {
            let f = 4.0 * layers * heads * m.head_dim as f64;
            (f, f)
        }
        Some(mla) => {
            let (rank, rope, d) = (
                mla.kv_lora_rank as f64,
                mla.rope_dim as f64,
                m.head_dim as f64,
            );
            (
                2.0 * layers * heads * (2.0 * rank + rope),
                2.0 * layers * heads * (2.0 * d + rope),
            )
        }
    };
    // Per layer: a full-attention layer attends to the whole context, a sliding-window
    // layer to at most its window (`kv_layer_tokens`), and reads only those tokens' KV.
    let per_layer = |x: f64| x / layers;
    let decode_layer_tokens = m.kv_layer_tokens(load.decode_context);
    let kv_bytes = per_layer(m.kv_bytes_per_token_per_rank(shape));
    let attention_rate = r.flops(s, m.dtype);
    time += roofline(
        load.decode_tokens * decode_layer_tokens * kv_bytes,
        r.bandwidth,
        per_layer(decode_flops_ctx) * load.decode_tokens * decode_layer_tokens,
        attention_rate,
    );
    time += per_layer(prefill_flops_ctx)
        * load.prefill_tokens
        * prefill_layer_tokens(m, load.prefill_context)
        / prompt_rate(m.dtype);
    let overhead = layers * r.layer_overhead_s + r.step_overhead_s;
    time + comm + overhead
}

/// Token-layers a prompt token attends to on average, summed over the layers, for a causal
/// prompt whose tokens attend to `mean` tokens on average (a prompt of `n = 2 × mean`
/// tokens): `mean` in a full-attention layer; in a sliding-window layer of window `w` the
/// mean over positions of `min(position, w)`, that is `n / 2` when `n ≤ w`, else
/// `w − w² / (2n)`.
fn prefill_layer_tokens(m: &ModelSpec, mean: f64) -> f64 {
    let layers = m.layers as f64;
    let Some(w) = &m.sliding_window else {
        return layers * mean;
    };
    let sliding = m.sliding_layer_count() as f64;
    let (n, w) = (2.0 * mean, w.window as f64);
    let windowed = if n <= w { mean } else { w - w * w / (2.0 * n) };
    (layers - sliding) * mean + sliding * windowed
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
    /// Wait of a newly admitted prompt for the step it joins, seconds.
    pub(crate) step_wait: f64,
    /// Seconds a prompt waits in the steady state for the prompts that arrived with it:
    /// prompts of a closed loop arrive in bursts (completions of similar lengths cluster),
    /// so a prompt shares its prefill with others. The wait is
    /// `prefill_contention × (1 − exp(−(active − 1) / contention_batch))` prefills of the
    /// prompt alone, per attention rank: an empirical form that saturates at large
    /// batches, fitted on the calibration points.
    pub(crate) contention: f64,
    /// Completed requests per second of this replica.
    pub(crate) request_rate: f64,
    /// The part of `queue_wait` that varies from prompt to prompt (a prefill pool's queue,
    /// seconds, its mean); the rest is the same for every request of the closed loop.
    pub(crate) random_wait: f64,
    /// Share of the prompts that find the prefill pool busy and wait (its utilisation).
    pub(crate) busy: f64,
    /// How much longer a decode step carrying one more prompt chunk is, seconds.
    pub(crate) stall: f64,
    /// Share of a request's decode steps that carry the extra chunk.
    pub(crate) stall_share: f64,
}

/// The steady state of one replica holding `clients` closed-loop clients, with at most
/// `slots` requests in the batch (the batch cap or the KV capacity, whichever is lower).
pub(crate) fn steady_state(
    s: &Settings,
    r: &Rates,
    shape: Shape,
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
    // Attention-DP ranks each step their own share of the worker's requests.
    let dp = shape.attention_dp as f64;
    let (tpot, stall, stall_share) = {
        // The other requests' prompt chunks, `per_step` a step on average, come whole: a
        // step carries `k` or `k + 1` chunks (the share `frac` of the steps `k + 1`), not a
        // trickle of prompt tokens in every step. It matters for MoE layers, whose expert
        // reads grow with the tokens of a step and saturate (a chunk step reads every
        // expert, a decode step few), and for compute-bound chunk steps.
        let per_step = (others / dp - r.unseen_chunks).max(0.0) * chunks / steps;
        let k = per_step.floor();
        let frac = per_step - k;
        let with_chunks = |n: f64| {
            step_seconds(
                s,
                r,
                shape,
                StepLoad {
                    prefill_tokens: n * chunk,
                    prefill_context: isl / 2.0,
                    decode_tokens: active * decode_share / dp,
                    decode_context,
                    sampled_tokens: active * decode_share / dp + n / chunks,
                    interleaved: true,
                },
            )
        };
        let low = with_chunks(k);
        let high = if frac > 0.0 {
            with_chunks(k + 1.0)
        } else {
            low
        };
        ((1.0 - frac) * low + frac * high, high - low, frac)
    };
    let chunk_step = step_seconds(
        s,
        r,
        shape,
        StepLoad {
            prefill_tokens: chunk,
            prefill_context: isl / 2.0,
            decode_tokens: others * decode_share / dp,
            decode_context,
            sampled_tokens: others * decode_share / dp + 1.0 / chunks,
            interleaved: false,
        },
    );
    let alone = step_seconds(
        s,
        r,
        shape,
        StepLoad {
            prefill_tokens: chunk,
            prefill_context: isl / 2.0,
            decode_tokens: 0.0,
            decode_context,
            sampled_tokens: 1.0 / chunks,
            interleaved: false,
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
        // a prompt arrives during a running step and joins the next one
        step_wait: 0.5 * tpot,
        contention: s.calibration.prefill_contention
            * (1.0 - (-(active / dp - 1.0).max(0.0) / s.calibration.contention_batch).exp())
            * chunks
            * alone,
        request_rate,
        random_wait: 0.0,
        busy: 0.0,
        stall,
        stall_share,
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
    shape: Shape,
    rate: f64,
    slots: f64,
    isl: f64,
    osl: f64,
    requests: f64,
) -> (SteadyState, f64) {
    let full = steady_state(s, r, shape, slots, slots, isl, osl);
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
        if steady_state(s, r, shape, mid, mid, isl, osl).request_rate < rate {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (steady_state(s, r, shape, hi, hi, isl, osl), rate)
}

#[cfg(test)]
mod tests {
    use super::{busiest, prefill_layer_tokens};

    #[test]
    fn a_prompt_token_attends_to_the_window_in_sliding_layers_by_brute_force() {
        let models = sweeper_cards::model_presets();
        let (gpt_oss, qwen) = (&models["gpt-oss-120b"], &models["qwen3-32b-fp8"]);
        for n in [1u32, 2, 64, 127, 128, 129, 256, 1000, 8192] {
            // token p (0-based) of a causal prompt attends to p + 1 tokens, at most 128 in
            // a sliding-window layer
            let full: f64 = (0..n).map(|p| f64::from(p + 1)).sum::<f64>() / f64::from(n);
            let window: f64 =
                (0..n).map(|p| f64::from((p + 1).min(128))).sum::<f64>() / f64::from(n);
            let oracle = 18.0 * full + 18.0 * window;
            // the model takes the mean context of a causal prompt as half its length (not
            // (n + 1) / 2): at most half a token a layer apart
            let ours = prefill_layer_tokens(gpt_oss, f64::from(n) / 2.0);
            assert!(
                (ours - oracle).abs() <= 18.0 + 1e-9,
                "{n} tokens: {ours} against {oracle}"
            );
            assert_eq!(
                prefill_layer_tokens(qwen, f64::from(n) / 2.0),
                64.0 * f64::from(n) / 2.0
            );
        }
    }

    #[test]
    fn the_busiest_expert_rank_carries_several_times_the_mean_at_small_batches() {
        // one token's 8 picks over 8 ranks: the busiest rank holds about 3 of them
        let small = busiest(8.0, 8.0);
        assert!((2.5..=4.0).contains(&small), "{small}");
        // 8,000 picks even out within a few percent of the mean of 1,000
        let large = busiest(8000.0, 8.0);
        assert!((1000.0..=1070.0).contains(&large), "{large}");
        // never more than all the picks, and all of them on one rank
        assert_eq!(busiest(1.0, 64.0), 1.0);
        assert_eq!(busiest(5.0, 1.0), 5.0);
    }
}
