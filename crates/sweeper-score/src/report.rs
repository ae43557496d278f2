//! Trace reports: a flat map of metric name → number, with NaN rejected at construction.

use crate::ScoreError;
use serde::Serialize;
use std::collections::BTreeMap;

/// Report key of the output token rate (`throughput`), tok/s.
pub const OUTPUT_THROUGHPUT: &str = "output_throughput_tok_s";
/// Report key of the mean per-user output rate (`throughput_per_user`), tok/s/user.
pub const THROUGHPUT_PER_USER: &str = "mean_output_token_throughput_per_user";
/// Report key of the mean end-to-end latency (`e2e_latency`), ms.
pub const E2E_LATENCY: &str = "mean_e2e_latency_ms";
/// Report key of the SLA-satisfying output token rate (`goodput`), tok/s.
pub const GOODPUT: &str = "goodput_output_throughput_tok_s";
/// Report key of the provisioned GPU-hours of the run (numerator of `avg_gpu`).
pub const GPU_HOURS: &str = "gpu_hours";
/// Report key of the run's wall time in ms (denominator of `avg_gpu`).
pub const DURATION_MS: &str = "duration_ms";
/// Report key of the mean time to first token (`ttft`), ms.
pub const TTFT: &str = "mean_ttft_ms";
/// Report key of the mean inter-token latency, ms (inspection, and `strict_sla`).
pub const ITL: &str = "mean_itl_ms";
/// Report key of the requests per second that met the SLA (`min_gpus`), req/s.
pub const GOODPUT_RPS: &str = "goodput_request_throughput_rps";

/// The report keys a [`Candidate`](crate::Candidate) keeps in its `metrics`: the eight the
/// scorer reads, plus the mean ITL an SLA is written against (for inspection).
/// Every other key stays in the [`Report`] but is not copied to the candidate.
pub const KNOWN_METRICS: [&str; 9] = [
    OUTPUT_THROUGHPUT,
    THROUGHPUT_PER_USER,
    E2E_LATENCY,
    GOODPUT,
    GPU_HOURS,
    DURATION_MS,
    TTFT,
    ITL,
    GOODPUT_RPS,
];

/// The keys whose value the scorer reads: a non-numeric value under one of them is an error,
/// never a silent default.
const SCORED_KEYS: [&str; 8] = [
    OUTPUT_THROUGHPUT,
    THROUGHPUT_PER_USER,
    E2E_LATENCY,
    GOODPUT,
    GPU_HOURS,
    DURATION_MS,
    TTFT,
    GOODPUT_RPS,
];

/// One evaluation's trace report: metric name → number.
///
/// Invariant: no value is NaN (`±inf` are ordinary extreme values). Missing keys are allowed;
/// the scorer applies the SPEC defaults. Unknown keys are kept for inspection.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Report(BTreeMap<String, f64>);

impl Report {
    /// Reads a report from a JSON object.
    ///
    /// Numbers are kept under their key, unknown keys included; the strings `"inf"`,
    /// `"-inf"` (and the other spellings of [`json_f64`](crate::json_f64)) are numbers too,
    /// since JSON has no infinity, and `"nan"` is rejected like any NaN. Any other value
    /// that is not a number (string, bool, null, array, object) is **skipped** when its key
    /// is one the scorer does not read (a report may carry labels such as a model name),
    /// and is an [`ScoreError::Invalid`] error under a key the scorer reads (reading `0`
    /// there would silently change a score). A value that is not an object is an error.
    pub fn from_json(candidate: usize, value: &serde_json::Value) -> Result<Report, ScoreError> {
        let object = value.as_object().ok_or_else(|| ScoreError::Invalid {
            candidate,
            key: "report".to_owned(),
            detail: format!(
                "must be a JSON object of metric numbers, got {}",
                kind(value)
            ),
        })?;
        let mut map = BTreeMap::new();
        for (key, v) in object {
            // Numbers, and the infinity strings sweeper itself writes (`json_f64`).
            let x = match v {
                serde_json::Value::String(s) => crate::json_f64::parse_non_finite(s),
                _ => v.as_f64(),
            };
            match x {
                Some(x) => {
                    map.insert(key.clone(), x);
                }
                None if SCORED_KEYS.contains(&key.as_str()) => {
                    return Err(ScoreError::Invalid {
                        candidate,
                        key: key.clone(),
                        detail: format!("must be a number, got {}", kind(v)),
                    });
                }
                None => {}
            }
        }
        Report::from_map(candidate, map)
    }

    /// Wraps a map of numbers, rejecting the first NaN (in key order) with an error naming
    /// the candidate and the key.
    pub fn from_map(candidate: usize, map: BTreeMap<String, f64>) -> Result<Report, ScoreError> {
        if let Some((key, _)) = map.iter().find(|(_, v)| v.is_nan()) {
            return Err(ScoreError::NanReport {
                candidate,
                key: key.clone(),
            });
        }
        Ok(Report(map))
    }

    /// The value under `key`, if present.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.0.get(key).copied()
    }

    /// Every `(key, value)`, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.0.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the report has no key at all.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The known metrics ([`KNOWN_METRICS`]) present in this report.
    pub fn known_metrics(&self) -> BTreeMap<String, f64> {
        KNOWN_METRICS
            .iter()
            .filter_map(|k| self.get(k).map(|v| ((*k).to_owned(), v)))
            .collect()
    }
}

/// A short name of a JSON value's kind, for error messages.
fn kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a bool",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn from_json_keeps_unknown_numeric_keys() {
        let r =
            Report::from_json(0, &json!({"output_throughput_tok_s": 10.5, "custom": 3})).unwrap();
        assert_eq!(r.get(OUTPUT_THROUGHPUT), Some(10.5));
        assert_eq!(r.get("custom"), Some(3.0));
        assert_eq!(r.len(), 2);
        assert_eq!(
            r.iter().collect::<Vec<_>>(),
            vec![("custom", 3.0), (OUTPUT_THROUGHPUT, 10.5)]
        );
    }

    #[test]
    fn from_json_skips_non_numeric_unknown_keys() {
        let r = Report::from_json(
            3,
            &json!({"model": "qwen", "ok": true, "none": null, "nested": {"a": 1}, "x": 1.0}),
        )
        .unwrap();
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![("x", 1.0)]);
    }

    #[test]
    fn from_json_rejects_non_numeric_scored_key() {
        let err = Report::from_json(4, &json!({"gpu_hours": "2"})).unwrap_err();
        assert_eq!(
            err,
            ScoreError::Invalid {
                candidate: 4,
                key: "gpu_hours".into(),
                detail: "must be a number, got a string".into()
            }
        );
        assert_eq!(
            err.to_string(),
            "candidate 4: `gpu_hours` must be a number, got a string"
        );
    }

    #[test]
    fn from_json_reads_infinity_strings_and_rejects_nan_strings() {
        let r = Report::from_json(0, &json!({"mean_e2e_latency_ms": "inf", "x": "-inf"})).unwrap();
        assert_eq!(r.get(E2E_LATENCY), Some(f64::INFINITY));
        assert_eq!(r.get("x"), Some(f64::NEG_INFINITY));
        assert_eq!(
            Report::from_json(2, &json!({"x": "NaN"})),
            Err(ScoreError::NanReport {
                candidate: 2,
                key: "x".into()
            })
        );
    }

    #[test]
    fn from_json_rejects_non_object() {
        let err = Report::from_json(1, &json!([1, 2])).unwrap_err();
        assert!(
            matches!(&err, ScoreError::Invalid { candidate: 1, key, .. } if key == "report"),
            "{err:?}"
        );
    }

    #[test]
    fn from_map_rejects_nan_naming_candidate_and_key() {
        let map = BTreeMap::from([("a".to_owned(), 1.0), ("b".to_owned(), f64::NAN)]);
        assert_eq!(
            Report::from_map(7, map),
            Err(ScoreError::NanReport {
                candidate: 7,
                key: "b".into()
            })
        );
    }

    #[test]
    fn infinities_are_ordinary_values() {
        let map = BTreeMap::from([
            (E2E_LATENCY.to_owned(), f64::INFINITY),
            (OUTPUT_THROUGHPUT.to_owned(), f64::NEG_INFINITY),
        ]);
        let r = Report::from_map(0, map).unwrap();
        assert_eq!(r.get(E2E_LATENCY), Some(f64::INFINITY));
    }

    #[test]
    fn known_metrics_keep_only_spec_keys() {
        let r = Report::from_json(
            0,
            &json!({"gpu_hours": 2.0, "mean_ttft_ms": 30.0, "src_tput": 9.0}),
        )
        .unwrap();
        let known = r.known_metrics();
        assert_eq!(known.len(), 2);
        assert_eq!(known["gpu_hours"], 2.0);
        assert_eq!(known["mean_ttft_ms"], 30.0);
    }

    #[test]
    fn serializes_as_a_plain_map() {
        let r = Report::from_json(0, &json!({"b": 2.0, "a": 1.0})).unwrap();
        assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"a":1.0,"b":2.0}"#);
    }
}
