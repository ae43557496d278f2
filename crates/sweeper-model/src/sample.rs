//! The simulated requests of one evaluation: per-request length variation from a seed of
//! the candidate, the first wave of a closed loop, and the means the report gives.

use super::Sla;
use super::model::SteadyState;
use serde_json::Value;
use sweeper_engine::EvalRequest;

/// Requests simulated per evaluation at most; longer runs are sampled evenly.
const MAX_SAMPLES: u64 = 1000;

/// The percentiles the report gives of TTFT, ITL and end-to-end latency
/// (`p50_ttft_ms`, `p90_itl_ms`, `p99_e2e_latency_ms`, ...).
pub(crate) const PERCENTILES: [u8; 4] = [50, 90, 95, 99];

/// Means and percentiles over the simulated requests.
pub(crate) struct Sampled {
    pub(crate) ttft_ms: f64,
    pub(crate) tpot_ms: f64,
    pub(crate) e2e_ms: f64,
    /// TTFT, ITL and end-to-end latency at each of [`PERCENTILES`], in ms.
    pub(crate) ttft_pct: [f64; PERCENTILES.len()],
    pub(crate) itl_pct: [f64; PERCENTILES.len()],
    pub(crate) e2e_pct: [f64; PERCENTILES.len()],
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

/// The `R_5` quasi-random sequence (Roberts, 2018: a Kronecker sequence whose steps are
/// the powers of `1 / g`, `g` the real root of `x⁶ = x + 1`): the `j`-th point fills
/// `[0, 1)⁵` evenly, with no seed, so the percentiles do not depend on the config's `seed`
/// (which varies the request lengths only).
const R5: [f64; 5] = [
    0.881_271_461_633_569_6,
    0.776_639_389_089_768_3,
    0.684_430_129_585_342_7,
    0.603_168_740_685_728_3,
    0.531_555_397_715_791_4,
];

/// Coordinate `dim` of the `j`-th point of [`R5`], in `(0, 1)`.
fn quasi(j: u64, dim: usize) -> f64 {
    (0.5 + (j + 1) as f64 * R5[dim])
        .fract()
        .clamp(1e-12, 1.0 - 1e-12)
}

/// A standard normal from coordinates 3 and 4 of the `j`-th point (Box and Muller, 1958).
fn normal(j: u64) -> f64 {
    (-2.0 * quasi(j, 3).ln()).sqrt() * (std::f64::consts::TAU * quasi(j, 4)).cos()
}

/// The `p`-th percentile of `xs` (sorted in place), interpolated linearly between the
/// closest ranks.
fn percentile(xs: &mut [f64], p: u8) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(f64::total_cmp);
    let at = f64::from(p) / 100.0 * (xs.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    xs[lo] + (xs[hi] - xs[lo]) * (at - lo as f64)
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
///
/// The means use each waiting time's mean. The percentiles draw them (at the points of a
/// quasi-random sequence, so the means stay what they are and the seed plays no part), as
/// these distributions say:
/// - the wait for the running step: uniform over one decode step;
/// - the wait for the prompts that arrived together: uniform over twice its mean (the
///   `k`-th of a burst waits `k` prefills);
/// - a prefill pool's queue: none for the share `1 − ρ` of the prompts that find it idle,
///   else exponential (Kingman's heavy-traffic law of the G/G/1 wait), with the mean wait;
/// - a request's ITL (its mean gap between tokens, as aiperf reports it): its decode steps
///   each carry the extra prompt chunk of an aggregated worker with the steady state's
///   share, independently, so its mean gap spreads around the steady state's by the
///   binomial's standard deviation (normal approximation); a disaggregated decode worker
///   has no chunks.
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
    let cap = n as usize;
    let (mut ttft_all, mut itl_all, mut e2e_all) = (
        Vec::with_capacity(cap),
        Vec::with_capacity(cap),
        Vec::with_capacity(cap),
    );
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
        // the same request with its waits drawn, for the percentiles
        let ttft_drawn = if index < first_wave && wave_position < ss.active {
            ttft
        } else {
            let step_wait = ss.step_wait * 2.0 * quasi(j, 0);
            let contention = ss.contention * isl_i / isl * 2.0 * quasi(j, 1);
            // the quantile of "none with probability 1 − ρ, else exponential of mean W / ρ"
            let u = quasi(j, 2);
            let queue = if ss.busy > 0.0 && u > 1.0 - ss.busy {
                -(ss.random_wait / ss.busy) * ((1.0 - u) / ss.busy).ln()
            } else {
                0.0
            };
            let fixed = ss.queue_wait - ss.random_wait;
            fixed + queue + step_wait + own_prefill + contention + overhead
        };
        let steps = (osl_i - 1.0).max(1.0);
        let spread = (ss.stall_share * (1.0 - ss.stall_share) / steps).sqrt();
        let itl_drawn = (tpot_i + ss.stall * spread * normal(j)).max(0.0);
        ttft_all.push(ttft_drawn * 1000.0);
        if osl_i > 1.0 {
            itl_all.push(itl_drawn * 1000.0);
        }
        e2e_all.push((ttft_drawn + (osl_i - 1.0) * itl_drawn) * 1000.0);
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
        ttft_pct: PERCENTILES.map(|p| percentile(&mut ttft_all, p)),
        itl_pct: PERCENTILES.map(|p| percentile(&mut itl_all, p)),
        e2e_pct: PERCENTILES.map(|p| percentile(&mut e2e_all, p)),
        per_user: rate_sum / decoding,
        good_token_share: if tokens > 0.0 {
            good_tokens / tokens
        } else {
            0.0
        },
        good_request_share: good_requests / count,
    }
}
