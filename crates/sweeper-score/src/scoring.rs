//! Objective values, signed scores and the GPU-budget feasibility rule (SPEC 2 and 3).

use crate::report::{
    DURATION_MS, E2E_LATENCY, GOODPUT, GOODPUT_RPS, GPU_HOURS, OUTPUT_THROUGHPUT, Report,
    THROUGHPUT_PER_USER, TTFT,
};
use sweeper_goal::Objective;

/// Milliseconds per hour: `duration_ms / MS_PER_HOUR` is the run's length in hours.
const MS_PER_HOUR: f64 = 3_600_000.0;

/// The time-averaged provisioned GPU count of a run:
/// `gpu_hours / (duration_ms / 3_600_000)`.
///
/// A static deployment gives its fixed GPU count; a runtime-scaled run averages over
/// startup, serve and drain. Reads `0.0` when `gpu_hours <= 0` or `duration_ms <= 0`
/// (missing keys read `0.0`, so a missing key lands here too). Decision where the SPEC is
/// silent: both keys `+inf` make the quotient undefined, and it reads `0.0` as well (no
/// meaningful average), so the result is never NaN.
///
/// ```
/// use sweeper_score::{Report, avg_gpu};
/// let r = Report::from_json(0, &serde_json::json!({"gpu_hours": 8.0, "duration_ms": 7_200_000.0})).unwrap();
/// assert_eq!(avg_gpu(&r), 4.0); // 8 GPU-hours over 2 hours
/// ```
pub fn avg_gpu(report: &Report) -> f64 {
    let gpu_hours = report.get(GPU_HOURS).unwrap_or(0.0);
    let duration_ms = report.get(DURATION_MS).unwrap_or(0.0);
    if gpu_hours <= 0.0 || duration_ms <= 0.0 {
        return 0.0;
    }
    let avg = gpu_hours / (duration_ms / MS_PER_HOUR);
    if avg.is_nan() { 0.0 } else { avg }
}

/// A rate divided by `avg_gpu`; `0.0` when `avg_gpu` is `0` (no division by zero). Also
/// `0.0` for an infinite rate over an infinite `avg_gpu` (undefined; never NaN).
fn per_gpu(rate: f64, report: &Report) -> f64 {
    let gpus = avg_gpu(report);
    if gpus <= 0.0 {
        return 0.0;
    }
    let v = rate / gpus;
    if v.is_nan() { 0.0 } else { v }
}

/// The report key an objective's value comes from (SPEC 2's table): a report without it
/// reads `0.0` (`+inf` for `e2e_latency`, `ttft` and `cost_per_mtok`). The per-GPU objectives also divide by
/// [`avg_gpu`], which needs `gpu_hours` and `duration_ms`.
///
/// ```
/// use sweeper_goal::Objective;
/// assert_eq!(
///     sweeper_score::objective_key(Objective::ThroughputPerUser),
///     "mean_output_token_throughput_per_user"
/// );
/// ```
pub fn objective_key(objective: Objective) -> &'static str {
    match objective {
        // cost_per_mtok also reads `gpu_hours` and `duration_ms`, as the per-GPU objectives
        Objective::Throughput | Objective::ThroughputPerGpu | Objective::CostPerMtok => {
            OUTPUT_THROUGHPUT
        }
        Objective::ThroughputPerUser => THROUGHPUT_PER_USER,
        Objective::E2eLatency => E2E_LATENCY,
        Objective::Goodput | Objective::GoodputPerGpu => GOODPUT,
        Objective::Ttft => TTFT,
        Objective::MinGpus => GOODPUT_RPS,
    }
}

/// Dollars per million output tokens at `price` dollars per GPU-hour (SPEC 9):
/// `price × gpu_hours / (output_throughput_tok_s × duration_ms / 1000 / 1e6)`.
///
/// Reads `+inf` (the worst) when the run produced no tokens or its cost is unknown:
/// missing or non-positive throughput, duration or GPU-hours. Never NaN.
///
/// ```
/// use sweeper_score::{Report, cost_per_mtok};
/// // 8 GPUs for an hour at 1000 tok/s: 3.6 M tokens for 8 GPU-hours.
/// let r = Report::from_json(0, &serde_json::json!({
///     "output_throughput_tok_s": 1000.0, "gpu_hours": 8.0, "duration_ms": 3_600_000.0,
/// })).unwrap();
/// assert!((cost_per_mtok(&r, 2.25) - 5.0).abs() < 1e-12); // $18 for 3.6 Mtok
/// ```
pub fn cost_per_mtok(report: &Report, price: f64) -> f64 {
    let read = |key: &str| report.get(key).unwrap_or(0.0);
    let (tok_s, duration_ms, gpu_hours) =
        (read(OUTPUT_THROUGHPUT), read(DURATION_MS), read(GPU_HOURS));
    if tok_s <= 0.0 || duration_ms <= 0.0 || gpu_hours <= 0.0 {
        return f64::INFINITY;
    }
    let mtok = tok_s * (duration_ms / 1000.0) / 1e6;
    let v = price * gpu_hours / mtok;
    if v.is_nan() || mtok <= 0.0 {
        f64::INFINITY
    } else {
        v
    }
}

/// The raw value of `objective` in its natural units, per SPEC 2's table (and SPEC 9's).
///
/// Missing keys: a maximized objective reads `0.0`; `e2e_latency` and `ttft` read `+inf`,
/// so a report without a latency is the worst, never the best. `min_gpus` reads the
/// goodput in requests/s (the floor and the GPU count are the goal's and the
/// candidate's: [`Scorer`](crate::Scorer)). `cost_per_mtok` here is priced at $1 per
/// GPU-hour (GPU-hours per million tokens); [`Scorer`](crate::Scorer) applies the goal's
/// price. The result is never NaN.
///
/// ```
/// use sweeper_goal::Objective;
/// use sweeper_score::{Report, objective_value};
/// let r = Report::from_json(0, &serde_json::json!({
///     "output_throughput_tok_s": 1000.0, "gpu_hours": 2.0, "duration_ms": 1_800_000.0,
/// })).unwrap();
/// assert_eq!(objective_value(&r, Objective::Throughput), 1000.0);
/// assert_eq!(objective_value(&r, Objective::ThroughputPerGpu), 250.0); // avg_gpu = 4
/// assert_eq!(objective_value(&r, Objective::E2eLatency), f64::INFINITY); // missing
/// ```
pub fn objective_value(report: &Report, objective: Objective) -> f64 {
    let read = |key: &str| report.get(key).unwrap_or(0.0);
    match objective {
        Objective::Throughput => read(OUTPUT_THROUGHPUT),
        Objective::ThroughputPerGpu => per_gpu(read(OUTPUT_THROUGHPUT), report),
        Objective::ThroughputPerUser => read(THROUGHPUT_PER_USER),
        Objective::E2eLatency => report.get(E2E_LATENCY).unwrap_or(f64::INFINITY),
        Objective::Goodput => read(GOODPUT),
        Objective::GoodputPerGpu => per_gpu(read(GOODPUT), report),
        Objective::Ttft => report.get(TTFT).unwrap_or(f64::INFINITY),
        Objective::MinGpus => read(GOODPUT_RPS),
        Objective::CostPerMtok => cost_per_mtok(report, 1.0),
    }
}

/// The objective value signed so that higher is always better: minimized objectives
/// (`e2e_latency`, `ttft`, `cost_per_mtok`) are negated, so a missing latency scores
/// `-inf`.
///
/// ```
/// use sweeper_goal::Objective;
/// use sweeper_score::{Report, score};
/// let r = Report::from_json(0, &serde_json::json!({"mean_e2e_latency_ms": 250.0})).unwrap();
/// assert_eq!(score(&r, Objective::E2eLatency), -250.0);
/// ```
pub fn score(report: &Report, objective: Objective) -> f64 {
    objective.direction().sign() * objective_value(report, objective)
}

/// Whether a candidate fits the GPU budget: `used_gpus <= gpu_budget`. The SLA is never a
/// feasibility gate (it lives inside the goodput metric). A NaN on either side is never
/// feasible.
pub fn is_feasible(used_gpus: f64, gpu_budget: f64) -> bool {
    used_gpus <= gpu_budget
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(v: &serde_json::Value) -> Report {
        Report::from_json(0, v).unwrap()
    }

    #[test]
    fn avg_gpu_static_deployment_is_the_gpu_count() {
        // 8 GPUs for 30 minutes: 4 GPU-hours over 0.5 h.
        let r = report(&json!({"gpu_hours": 4.0, "duration_ms": 1_800_000.0}));
        assert_eq!(avg_gpu(&r), 8.0);
    }

    #[test]
    fn avg_gpu_runtime_scaled_run_is_the_time_average() {
        // 3 GPU-hours over 1.5 hours: 2 GPUs on average.
        let r = report(&json!({"gpu_hours": 3.0, "duration_ms": 5_400_000.0}));
        assert_eq!(avg_gpu(&r), 2.0);
    }

    #[test]
    fn avg_gpu_guards_read_zero() {
        for v in [
            json!({}),
            json!({"gpu_hours": 4.0}),
            json!({"duration_ms": 1000.0}),
            json!({"gpu_hours": 0.0, "duration_ms": 1000.0}),
            json!({"gpu_hours": -1.0, "duration_ms": 1000.0}),
            json!({"gpu_hours": 4.0, "duration_ms": 0.0}),
            json!({"gpu_hours": 4.0, "duration_ms": -5.0}),
        ] {
            assert_eq!(avg_gpu(&report(&v)), 0.0, "{v}");
        }
    }

    #[test]
    fn avg_gpu_is_never_nan() {
        let mut m = std::collections::BTreeMap::new();
        m.insert(GPU_HOURS.to_owned(), f64::INFINITY);
        m.insert(DURATION_MS.to_owned(), f64::INFINITY);
        let r = Report::from_map(0, m).unwrap();
        assert_eq!(avg_gpu(&r), 0.0);
    }

    #[test]
    fn per_gpu_targets_divide_by_avg_gpu_not_gpu_hours() {
        // 1000 tok/s on 4 GPUs for 2 hours: 8 GPU-hours. Per GPU is 250, not 1000 / 8.
        let r = report(&json!({
            "output_throughput_tok_s": 1000.0,
            "goodput_output_throughput_tok_s": 600.0,
            "gpu_hours": 8.0,
            "duration_ms": 7_200_000.0,
        }));
        assert_eq!(objective_value(&r, Objective::ThroughputPerGpu), 250.0);
        assert_eq!(objective_value(&r, Objective::GoodputPerGpu), 150.0);
    }

    #[test]
    fn per_gpu_targets_read_zero_without_gpus() {
        let r = report(&json!({
            "output_throughput_tok_s": 1000.0,
            "goodput_output_throughput_tok_s": 600.0,
        }));
        assert_eq!(objective_value(&r, Objective::ThroughputPerGpu), 0.0);
        assert_eq!(objective_value(&r, Objective::GoodputPerGpu), 0.0);
        let r = report(
            &json!({"output_throughput_tok_s": 1000.0, "gpu_hours": 2.0, "duration_ms": 0.0}),
        );
        assert_eq!(objective_value(&r, Objective::ThroughputPerGpu), 0.0);
    }

    #[test]
    fn per_gpu_of_infinite_rate_and_infinite_gpus_is_zero() {
        let m = [
            (OUTPUT_THROUGHPUT, f64::INFINITY),
            (GPU_HOURS, f64::INFINITY),
            (DURATION_MS, 1000.0),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let r = Report::from_map(0, m).unwrap();
        assert_eq!(objective_value(&r, Objective::ThroughputPerGpu), 0.0);
    }

    #[test]
    fn throughput_per_user_is_read_as_is() {
        // Already a rate: no GPU or time normalization even with gpu_hours present.
        let r = report(&json!({
            "mean_output_token_throughput_per_user": 61.76,
            "gpu_hours": 8.0,
            "duration_ms": 7_200_000.0,
        }));
        assert_eq!(objective_value(&r, Objective::ThroughputPerUser), 61.76);
    }

    #[test]
    fn missing_maximized_keys_read_zero() {
        let r = report(&json!({}));
        for o in [
            Objective::Throughput,
            Objective::ThroughputPerGpu,
            Objective::ThroughputPerUser,
            Objective::Goodput,
            Objective::GoodputPerGpu,
        ] {
            assert_eq!(objective_value(&r, o), 0.0, "{o}");
            assert_eq!(score(&r, o), 0.0, "{o}");
        }
    }

    #[test]
    fn missing_latency_reads_inf_and_scores_worst() {
        let r = report(&json!({}));
        assert_eq!(objective_value(&r, Objective::E2eLatency), f64::INFINITY);
        assert_eq!(score(&r, Objective::E2eLatency), f64::NEG_INFINITY);
        let fast = report(&json!({"mean_e2e_latency_ms": 1e9}));
        assert!(score(&fast, Objective::E2eLatency) > score(&r, Objective::E2eLatency));
    }

    #[test]
    fn latency_is_negated_maximized_are_not() {
        let r = report(&json!({
            "output_throughput_tok_s": 31.27,
            "mean_e2e_latency_ms": 19793.09,
            "goodput_output_throughput_tok_s": 20.0,
        }));
        assert_eq!(score(&r, Objective::E2eLatency), -19793.09);
        assert_eq!(score(&r, Objective::Throughput), 31.27);
        assert_eq!(score(&r, Objective::Goodput), 20.0);
    }

    #[test]
    fn feasibility_is_the_gpu_budget_only() {
        assert!(is_feasible(32.0, 32.0));
        assert!(is_feasible(0.0, 32.0));
        assert!(!is_feasible(33.0, 32.0));
        assert!(!is_feasible(f64::NAN, 32.0));
        assert!(!is_feasible(f64::INFINITY, 32.0));
    }
}
