//! A disaggregated deployment: a prefill pool and a decode pool, each with its own shape
//! and replicas, the KV cache moving from one to the other.
//!
//! A request queues for a prefill rank, is prefilled there (prompts batched up to the
//! prefill batch cap), its KV cache crosses to a decode worker (over `NVLink` when both
//! workers fit in one `NVLink` domain, else over the network, lanes in parallel), and it
//! decodes there. Under a closed loop of `clients` the completion rate `X` settles where
//! `X × cycle(X) = clients` (Little's law), `cycle` being the prefill queue wait
//! (Kingman's G/G/1 approximation at utilisation `ρ`, with the small variability of a
//! closed loop's evenly spaced prompts: prompts queue only when they arrive about as fast
//! as the pool clears them), the prefill, the transfer and the decode. A prefill rank is
//! busy with a prompt for its compute at `compute_efficiency`; the prompt's TTFT counts
//! it at `prefill_efficiency`, fitted on TTFTs that hold the wait for the prompts that
//! arrived with it (see `Pools::prefill_service`). The slower pool bounds `X` (rate matching); the other idles, and the
//! throughput per GPU counts the GPUs of both pools.

use super::candidate::Role;
use super::model::{Rates, SteadyState, StepLoad, step_seconds};
use super::spec::Settings;

/// Iterations of the bisections (2^-40 of the bracket: far below the model's accuracy).
const ITERATIONS: usize = 40;

/// The steady state of a disaggregated deployment.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DisaggState {
    /// What the request sampler reads: `chunk_step` is the prefill plus the transfer,
    /// `active` the requests in flight in the prefill pool's first wave.
    pub(crate) ss: SteadyState,
    /// Completed requests per second of the whole deployment.
    pub(crate) request_rate: f64,
    /// Prompts the prefill pool works on at once (its first-wave lanes).
    pub(crate) prefill_lanes: u64,
}

/// The pools and the workload, with the rates.
pub(crate) struct Pools<'a> {
    pub(crate) s: &'a Settings,
    pub(crate) r: &'a Rates,
    pub(crate) prefill: Role,
    pub(crate) decode: Role,
    /// Requests one decode worker holds at most (batch cap × attention-DP, KV capacity).
    pub(crate) decode_slots: f64,
    pub(crate) isl: f64,
    pub(crate) osl: f64,
}

impl Pools<'_> {
    /// Seconds a prefill step of `batch` prompts adds to their TTFT on one attention rank
    /// (chunked by the step token budget): the prompts' compute at `prefill_efficiency`,
    /// which is fitted on TTFTs and so holds the wait of a prompt for those that arrived
    /// with it (aiconfigurator multiplies its prefill time by 1.8 for that wait).
    fn prefill_step(&self, batch: f64) -> f64 {
        self.prefill_step_at(batch, false)
    }

    /// Seconds the rank is busy with that step: the same GEMMs and attention at the rate
    /// they reach when the rank is kept busy (`compute_efficiency`, the rate of the prompt
    /// chunks an aggregated worker interleaves). The pool's capacity and utilisation come
    /// from this time, not from the TTFT: a prompt's wait for its neighbours is not work.
    fn prefill_service(&self, batch: f64) -> f64 {
        self.prefill_step_at(batch, true)
    }

    /// [`Self::prefill_step`] (`service` false) or [`Self::prefill_service`] (true).
    fn prefill_step_at(&self, batch: f64, service: bool) -> f64 {
        let tokens = batch * self.isl;
        let chunks = (tokens / self.s.max_num_tokens as f64).ceil().max(1.0);
        chunks
            * step_seconds(
                self.s,
                self.r,
                self.prefill.shape,
                StepLoad {
                    prefill_tokens: tokens / chunks,
                    prefill_context: self.isl / 2.0,
                    decode_tokens: 0.0,
                    decode_context: 0.0,
                    sampled_tokens: batch / chunks,
                    interleaved: service,
                },
            )
    }

    /// Decode step of one worker holding `active` requests.
    fn decode_step(&self, active: f64) -> f64 {
        let dp = self.decode.shape.attention_dp as f64;
        let per_rank = (active / dp).max(1.0 / dp);
        self.s.calibration.disagg_decode_slowdown
            * step_seconds(
                self.s,
                self.r,
                self.decode.shape,
                StepLoad {
                    prefill_tokens: 0.0,
                    prefill_context: 0.0,
                    decode_tokens: per_rank,
                    decode_context: self.isl + self.osl / 2.0,
                    sampled_tokens: per_rank,
                    interleaved: true,
                },
            )
    }

    /// Prefill ranks of the pool (each holds its own prompts).
    fn prefill_ranks(&self) -> f64 {
        (self.prefill.replicas * self.prefill.shape.attention_dp) as f64
    }

    /// Seconds to move one request's KV cache from a prefill to a decode worker.
    fn transfer(&self) -> f64 {
        let m = &self.s.model;
        let bytes = m.kv_bytes_per_sequence(self.isl);
        let (p, d) = (self.prefill.shape, self.decode.shape);
        let link = self.r.link_for(self.s, p.gpus() + d.gpus());
        // the tp ranks of the smaller side move their slices in parallel
        let lanes = p.tp.min(d.tp).max(1) as f64;
        self.r.transfer_latency() + bytes / (link * lanes)
    }

    /// The `(c_a² + c_s²) / 2` factor of Kingman's G/G/1 wait
    /// `ρ / (1 − ρ) × (c_a² + c_s²) / 2 × S`: the squared coefficients of variation of the
    /// prompts' inter-arrival times and of their prefill times. A closed loop's clients
    /// send their next prompt a decode time after the last one, so both vary only as the
    /// request lengths do (uniform within `±length_jitter`: a squared coefficient of
    /// `length_jitter² / 3`), and prompts queue only when they arrive about as fast as the
    /// pool clears them, not at every utilisation as under Poisson arrivals (M/D/1).
    fn variability(&self) -> f64 {
        self.s.length_jitter * self.s.length_jitter / 3.0
    }

    /// Prefill batch, the step's seconds in TTFT, queue wait and utilisation at a
    /// completion rate `x` (the batch, wait and utilisation from the service time).
    fn prefill_at(&self, x: f64) -> (f64, f64, f64, f64) {
        let per_rank = x / self.prefill_ranks();
        let cap = self.prefill.max_batch as f64;
        // prompts waiting when a step starts: as many as arrive during one step
        let mut batch: f64 = 1.0;
        for _ in 0..8 {
            batch = (per_rank * self.prefill_service(batch)).clamp(1.0, cap);
        }
        let service = self.prefill_service(batch);
        let step = self.prefill_step(batch);
        let rho = (per_rank * service / batch).min(0.98);
        let wait = rho / (1.0 - rho) * self.variability() * service;
        (batch, step, wait, rho)
    }

    /// Requests one decode worker holds at a completion rate `x` (Little's law, solved
    /// with the step time it implies), capped at its slots.
    fn decode_active(&self, x: f64) -> f64 {
        let decode_tokens = (self.osl - 1.0).max(0.0);
        let per_worker = x / self.decode.replicas as f64;
        let (mut lo, mut hi) = (0.0f64, self.decode_slots);
        for _ in 0..ITERATIONS {
            let mid = 0.5 * (lo + hi);
            if mid < per_worker * decode_tokens * self.decode_step(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi.max(f64::MIN_POSITIVE)
    }

    /// Seconds a request spends from arrival to its last token at a completion rate `x`,
    /// and the pieces: (cycle, prefill wait, prefill step, decode step, decode active).
    fn cycle(&self, x: f64, transfer: f64) -> (f64, f64, f64, f64, f64) {
        let (_, step, wait, _) = self.prefill_at(x);
        let active = self.decode_active(x);
        let tpot = self.decode_step(active);
        let decode = (self.osl - 1.0).max(0.0) * tpot;
        (wait + step + transfer + decode, wait, step, tpot, active)
    }

    /// The most requests per second each pool completes: (prefill, decode).
    fn capacities(&self) -> (f64, f64) {
        let cap = self.prefill.max_batch as f64;
        let prefill = self.prefill_ranks() * cap / self.prefill_service(cap);
        let decode_tokens = (self.osl - 1.0).max(0.0);
        let decode = if decode_tokens > 0.0 {
            self.decode.replicas as f64 * self.decode_slots
                / (decode_tokens * self.decode_step(self.decode_slots))
        } else {
            f64::INFINITY
        };
        (prefill, decode)
    }

    /// The steady state under a closed loop of `clients`.
    pub(crate) fn closed_loop(&self, clients: f64) -> DisaggState {
        let transfer = self.transfer();
        let (cap_p, cap_d) = self.capacities();
        // the bound, a little under the prefill pool's full utilisation
        let bound = (cap_p * 0.98).min(cap_d);
        let (mut lo, mut hi) = (0.0f64, bound);
        if hi * self.cycle(hi, transfer).0 <= clients {
            lo = hi;
        } else {
            for _ in 0..ITERATIONS {
                let mid = 0.5 * (lo + hi);
                if mid * self.cycle(mid, transfer).0 < clients {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
        }
        let x = lo.max(f64::MIN_POSITIVE);
        let (cycle, wait, step, tpot, _) = self.cycle(x, transfer);
        let busy = self.prefill_at(x).3;
        // clients beyond what the pools hold wait in the queue (Little's law)
        let extra = (clients / x - cycle).max(0.0);
        let lanes = self.prefill_ranks() * self.prefill.max_batch as f64;
        DisaggState {
            ss: SteadyState {
                active: lanes,
                tpot,
                chunk_step: step + transfer,
                chunks: 1.0,
                queue_wait: wait + extra,
                step_wait: 0.0,
                contention: 0.0,
                request_rate: x,
                random_wait: wait,
                busy,
                stall: 0.0,
                stall_share: 0.0,
            },
            request_rate: x,
            prefill_lanes: lanes as u64,
        }
    }

    /// The steady state under an open loop of `rate` requests per second, `requests` in
    /// all: below the bound every request is served at once; past it the backlog of the
    /// run queues (half of it on average), as for an aggregated deployment.
    pub(crate) fn open_loop(&self, rate: f64, requests: f64) -> DisaggState {
        let transfer = self.transfer();
        let (cap_p, cap_d) = self.capacities();
        let bound = (cap_p * 0.98).min(cap_d);
        let x = rate.min(bound).max(f64::MIN_POSITIVE);
        let (_, wait, step, tpot, active) = self.cycle(x, transfer);
        let busy = self.prefill_at(x).3;
        let backlog = if rate > bound {
            requests / 2.0 * (1.0 / bound - 1.0 / rate)
        } else {
            0.0
        };
        let lanes = self.prefill_ranks() * self.prefill.max_batch as f64;
        DisaggState {
            ss: SteadyState {
                active,
                tpot,
                chunk_step: step + transfer,
                chunks: 1.0,
                queue_wait: wait + backlog.max(0.0),
                step_wait: 0.0,
                contention: 0.0,
                request_rate: x,
                random_wait: wait,
                busy,
                stall: 0.0,
                stall_share: 0.0,
            },
            request_rate: x,
            prefill_lanes: lanes as u64,
        }
    }
}
