//! The simulated requests of one evaluation: per-request length variation from a seed of
//! the candidate, the first wave of a closed loop, and the means the report gives.

use super::Sla;
use super::model::SteadyState;
use serde_json::Value;
use sweeper_engine::EvalRequest;

/// Requests simulated per evaluation at most; longer runs are sampled evenly.
const MAX_SAMPLES: u64 = 1000;

/// Means over the simulated requests.
pub(crate) struct Sampled {
    pub(crate) ttft_ms: f64,
    pub(crate) tpot_ms: f64,
    pub(crate) e2e_ms: f64,
    pub(crate) per_user: f64,
    pub(crate) good_token_share: f64,
    /// Share of the requests that met every SLA bound.
    pub(crate) good_request_share: f64,
}

/// `SplitMix64` (Steele, Lea and Flood, 2014): a tiny, well-mixed, seedable generator.
pub(crate) struct SplitMix(pub(crate) u64);

impl SplitMix {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[-1, 1)`.
    pub(crate) fn symmetric(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// FNV-1a over the config seed and the candidate (parameters by sorted key, load, workload).
pub(crate) fn candidate_seed(seed: u64, request: &EvalRequest, load: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01B3);
        }
    };
    eat(&seed.to_le_bytes());
    let mut keys: Vec<&String> = request.parameters.keys().collect();
    keys.sort();
    for key in keys {
        eat(key.as_bytes());
        eat(b"=");
        eat(request.parameters[key].to_string().as_bytes());
        eat(b";");
    }
    eat(&load.to_le_bytes());
    // the workload as its JSON text, as evaluators see it, so that seeds stay what they were
    let workload = request
        .workload
        .as_ref()
        .map_or(Value::Null, sweeper_goal::Workload::to_json_value);
    for key in ["isl", "osl", "num_request_ratio"] {
        eat(workload
            .get(key)
            .map(Value::to_string)
            .unwrap_or_default()
            .as_bytes());
        eat(b";");
    }
    h
}

/// Simulates the requests of the run (evenly sampled when there are many): the staggered
/// prefills of the first `first_wave` requests (a closed loop starts with every client
/// sending at once; an open loop has no first wave), the queue wait of the rest, and
/// per-request length variation.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sample_requests(
    ss: &SteadyState,
    jitter: f64,
    seed: u64,
    requests: u64,
    first_wave: u64,
    replicas: u64,
    isl: f64,
    osl: f64,
    overhead: f64,
    sla: &Sla,
) -> Sampled {
    let n = requests.clamp(1, MAX_SAMPLES);
    let mut rng = SplitMix(seed);
    let prefill = ss.chunks * ss.chunk_step;
    let (mut ttft_sum, mut e2e_sum, mut tpot_sum, mut rate_sum) = (0.0, 0.0, 0.0, 0.0);
    let mut decoding = 0u64;
    let (mut tokens, mut good_tokens, mut good_requests) = (0.0, 0.0, 0.0);
    for j in 0..n {
        let index = (u128::from(j) * u128::from(requests) / u128::from(n)) as u64;
        let isl_i = (isl * (1.0 + jitter * rng.symmetric())).max(1.0);
        let osl_i = (osl * (1.0 + jitter * rng.symmetric())).round().max(1.0);
        let tpot_i = ss.tpot * (1.0 + 0.5 * jitter * rng.symmetric());
        let own_prefill = prefill * isl_i / isl;
        let wave_position = (index / replicas) as f64;
        let ttft = if index < first_wave && wave_position < ss.active {
            // First wave: every client sent at once; earlier prompts are prefilled first.
            wave_position * prefill + own_prefill
        } else {
            // Steady state: wait for a slot, for the running step to end, then prefill.
            ss.queue_wait + ss.step_wait + own_prefill + ss.contention * isl_i / isl
        } + overhead;
        let e2e = ttft + (osl_i - 1.0) * tpot_i;
        ttft_sum += ttft;
        e2e_sum += e2e;
        if osl_i > 1.0 {
            decoding += 1;
            tpot_sum += tpot_i;
            rate_sum += 1.0 / tpot_i;
        }
        tokens += osl_i;
        if ttft <= sla.ttft && tpot_i <= sla.itl && e2e <= sla.e2e {
            good_tokens += osl_i;
            good_requests += 1.0;
        }
    }
    let count = n as f64;
    let decoding = decoding.max(1) as f64;
    Sampled {
        ttft_ms: ttft_sum / count * 1000.0,
        tpot_ms: tpot_sum / decoding * 1000.0,
        e2e_ms: e2e_sum / count * 1000.0,
        per_user: rate_sum / decoding,
        good_token_share: if tokens > 0.0 {
            good_tokens / tokens
        } else {
            0.0
        },
        good_request_share: good_requests / count,
    }
}
