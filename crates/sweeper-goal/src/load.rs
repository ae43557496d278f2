//! Load arithmetic of SPEC 5: request counts and the KV-ratio to concurrency conversion.

/// Rounds to the nearest integer, ties to even (2.5 → 2, 3.5 → 4, -2.5 → -2).
pub fn round_half_even(x: f64) -> f64 {
    let r = x.round();
    if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
        r - x.signum()
    } else {
        r
    }
}

/// The number of requests of a synthetic workload:
/// `max(1, round_half_even(num_request_ratio * load))`, load being the concurrency or the
/// request rate. A non-finite product gives 1.
pub fn request_count(num_request_ratio: f64, load: f64) -> u64 {
    let n = round_half_even(num_request_ratio * load);
    if n.is_finite() && n >= 1.0 {
        n as u64
    } else {
        1
    }
}

/// The KV cache of a candidate's load role (the decode pool of a disaggregated deployment,
/// else the aggregated pool).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvRole {
    /// KV tokens one GPU rank holds (before rounding down to whole blocks).
    pub kv_tokens_per_rank: u64,
    /// Tokens per KV block; `0` or `1` means no block rounding.
    pub block_size: u64,
    /// Attention data-parallel ranks per replica.
    pub attention_dp: u64,
    /// Replicas of the role.
    pub replicas: u64,
}

impl KvRole {
    /// Total KV tokens: per-rank tokens rounded down to whole blocks, times attention-DP ranks,
    /// times replicas (tensor and expert parallelism do not multiply it).
    pub fn kv_tokens(&self) -> u64 {
        let per_rank = if self.block_size > 1 {
            self.kv_tokens_per_rank / self.block_size * self.block_size
        } else {
            self.kv_tokens_per_rank
        };
        per_rank
            .saturating_mul(self.attention_dp)
            .saturating_mul(self.replicas)
    }
}

/// Tokens one in-flight request holds on average: `isl + floor(osl / 2)`.
pub fn tokens_per_request(isl: u64, osl: u64) -> u64 {
    isl + osl / 2
}

/// A ratio converted to a concurrency for one candidate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioLoad {
    /// The ratio asked for.
    pub kv_load_ratio: f64,
    /// In-flight requests the KV cache holds: `floor(kv_tokens / tokens_per_request)`.
    pub capacity: u64,
    /// `max(1, floor(ratio * capacity))`, not clamped above.
    pub concurrency: u64,
}

/// Why a ratio could not be converted: the KV cache holds less than one request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "infeasible: the {role} role holds {kv_tokens} KV tokens, fewer than the {tokens_per_request} tokens one request needs (isl + osl/2); give its workers more GPUs, use a GPU with more memory or shorter requests"
)]
pub struct KvCapacityTooSmall {
    /// `"decode"` or `"aggregated"`.
    pub role: String,
    /// The role's total KV tokens.
    pub kv_tokens: u64,
    /// Tokens per in-flight request.
    pub tokens_per_request: u64,
}

/// Converts a `kv_load_ratio` into an absolute concurrency for one candidate (SPEC 5).
///
/// ```
/// use sweeper_goal::{KvRole, concurrency_for_ratio};
/// let role = KvRole { kv_tokens_per_rank: 10_000, block_size: 64, attention_dp: 2, replicas: 3 };
/// let load = concurrency_for_ratio("aggregated", role, 100, 100, 0.5).unwrap();
/// assert_eq!((load.capacity, load.concurrency), (399, 199));
/// ```
pub fn concurrency_for_ratio(
    role_name: &str,
    role: KvRole,
    isl: u64,
    osl: u64,
    ratio: f64,
) -> Result<RatioLoad, KvCapacityTooSmall> {
    let kv_tokens = role.kv_tokens();
    let per_request = tokens_per_request(isl, osl).max(1);
    let capacity = kv_tokens / per_request;
    if capacity < 1 {
        return Err(KvCapacityTooSmall {
            role: role_name.to_owned(),
            kv_tokens,
            tokens_per_request: per_request,
        });
    }
    let scaled = (ratio * capacity as f64).floor();
    let concurrency = if scaled.is_finite() && scaled >= 1.0 {
        scaled as u64
    } else {
        1
    };
    Ok(RatioLoad {
        kv_load_ratio: ratio,
        capacity,
        concurrency,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_go_to_even() {
        for (x, want) in [
            (2.5, 2.0),
            (3.5, 4.0),
            (0.5, 0.0),
            (1.5, 2.0),
            (-2.5, -2.0),
            (2.4, 2.0),
            (2.6, 3.0),
        ] {
            assert_eq!(round_half_even(x), want, "{x}");
        }
        assert_eq!(request_count(0.5, 5.0), 2);
        assert_eq!(request_count(0.5, 7.0), 4);
        assert_eq!(request_count(0.01, 1.0), 1);
    }

    #[test]
    fn spec_example() {
        let role = KvRole {
            kv_tokens_per_rank: 10_000,
            block_size: 64,
            attention_dp: 2,
            replicas: 3,
        };
        assert_eq!(role.kv_tokens(), 59_904);
        let load = concurrency_for_ratio("aggregated", role, 100, 100, 0.5).unwrap();
        assert_eq!(load.capacity, 399);
        assert_eq!(load.concurrency, 199);
        let tiny = KvRole {
            kv_tokens_per_rank: 100,
            block_size: 64,
            attention_dp: 1,
            replicas: 1,
        };
        let err = concurrency_for_ratio("decode", tiny, 100, 100, 0.5).unwrap_err();
        assert_eq!(err.kv_tokens, 64);
        assert!(err.to_string().contains("decode"));
    }
}
