//! Candidates: an evaluated configuration with its score (SPEC 3).

use crate::ScoreError;
use crate::json_f64;
use crate::report::Report;
use crate::scoring::{objective_value, score};
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use sweeper_goal::Objective;

/// The config key the GPU count is read from.
pub const USED_GPUS: &str = "used_gpus";

/// One evaluated configuration, scored against a goal.
///
/// Serialized (for `result.json` and `sweeper score --format json`) as an object with
/// `index`, `config`, `used_gpus`, `score`, `metrics` and, for a pareto goal only,
/// `objectives` as a map from objective name to raw value in the goal's order. Infinite
/// numbers are written as `"inf"` / `"-inf"` (see [`json_f64`](crate::json_f64)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    /// Position of the candidate in its input (row, trial or line number, 0-based).
    pub index: usize,
    /// The configuration as evaluated: an arbitrary map.
    pub config: serde_json::Map<String, serde_json::Value>,
    /// GPUs the configuration provisions, read from the config's `used_gpus` (default `0`).
    #[serde(with = "json_f64")]
    pub used_gpus: f64,
    /// Higher is better. Scalar goal: the signed score of the target. Pareto goal: the
    /// first objective's raw value, a headline number only, never used to rank.
    #[serde(with = "json_f64")]
    pub score: f64,
    /// The known report metrics ([`KNOWN_METRICS`](crate::KNOWN_METRICS)) the report had.
    #[serde(with = "json_f64::map")]
    pub metrics: BTreeMap<String, f64>,
    /// Pareto goal only: the raw value of each resolved objective, in the goal's order.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "objective_map"
    )]
    pub objectives: Option<Vec<(Objective, f64)>>,
    /// `min_gpus` goal only: whether `goodput_request_throughput_rps` reached the goal's
    /// `min_goodput_rps` (the candidate is *satisfying*). [`rank`](crate::rank) puts the
    /// satisfying candidates first, fewest GPUs first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub satisfying: Option<bool>,
}

impl Candidate {
    /// The raw value of `objective` when the candidate carries it (pareto goal).
    pub fn objective(&self, objective: Objective) -> Option<f64> {
        self.objectives
            .as_ref()?
            .iter()
            .find(|(o, _)| *o == objective)
            .map(|(_, v)| *v)
    }
}

/// Reads `used_gpus` from a candidate config: a number `>= 0` (or `+inf`), default `0`
/// when the key is absent.
///
/// A numeric string (`"4"`) is accepted, since configs read from tables often carry
/// numbers as text. Anything else (bool, null, a negative number, other text) is a
/// [`ScoreError::Invalid`] error naming the candidate and the key.
pub fn used_gpus(
    candidate: usize,
    config: &serde_json::Map<String, serde_json::Value>,
) -> Result<f64, ScoreError> {
    let invalid = |detail: String| ScoreError::Invalid {
        candidate,
        key: USED_GPUS.to_owned(),
        detail,
    };
    let value = match config.get(USED_GPUS) {
        None => return Ok(0.0),
        Some(serde_json::Value::Number(n)) => n.as_f64().unwrap_or(f64::INFINITY),
        Some(serde_json::Value::String(s)) => {
            let t = s.trim();
            t.parse::<f64>()
                .ok()
                .or_else(|| json_f64::parse_non_finite(t))
                .ok_or_else(|| invalid(format!("must be a number, got the string {s:?}")))?
        }
        Some(other) => {
            return Err(invalid(format!("must be a number, got {other}")));
        }
    };
    if value.is_nan() || value < 0.0 {
        return Err(invalid(format!("must be a number >= 0, got {value}")));
    }
    Ok(value)
}

/// Scores one report against the goal's objectives and builds the candidate.
///
/// - `used_gpus` comes from the config ([`used_gpus`]); a value that is not a valid count
///   reads `+inf`, which no GPU budget admits. Callers that want an error instead call
///   [`used_gpus`] first.
/// - Scalar goal (`pareto == false`): `score` is [`score`]`(report, objectives[0])` and
///   `objectives` is `None`. An empty `objectives` means the default goal, `throughput`.
/// - Pareto goal: `objectives` holds [`objective_value`] of every objective in order, and
///   `score` is the first one's raw value (`0.0` when `objectives` is empty).
/// - `metrics` holds the [`KNOWN_METRICS`](crate::KNOWN_METRICS) present in the report.
pub fn make_candidate(
    index: usize,
    config: serde_json::Map<String, serde_json::Value>,
    report: &Report,
    objectives: &[Objective],
    pareto: bool,
) -> Candidate {
    let used_gpus = used_gpus(index, &config).unwrap_or(f64::INFINITY);
    let (score, objectives) = if pareto {
        let values: Vec<(Objective, f64)> = objectives
            .iter()
            .map(|&o| (o, objective_value(report, o)))
            .collect();
        (values.first().map_or(0.0, |(_, v)| *v), Some(values))
    } else {
        let target = objectives.first().copied().unwrap_or(Objective::Throughput);
        (score(report, target), None)
    };
    Candidate {
        index,
        config,
        used_gpus,
        score,
        metrics: report.known_metrics(),
        objectives,
        satisfying: None,
    }
}

/// Serde for `objectives`: a map keyed by objective name, in the goal's order.
mod objective_map {
    use super::{Deserializer, MapAccess, Objective, SerializeMap, Serializer, Visitor};
    use super::{fmt, json_f64};
    use crate::json_f64::Seed;

    #[allow(clippy::ref_option)] // serde's `with` hands the field by reference
    pub(super) fn serialize<S: Serializer>(
        objectives: &Option<Vec<(Objective, f64)>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match objectives {
            None => serializer.serialize_none(),
            Some(values) => {
                let mut m = serializer.serialize_map(Some(values.len()))?;
                for (o, v) in values {
                    m.serialize_entry(o.name(), &json_f64::to_value(*v))?;
                }
                m.end()
            }
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Vec<(Objective, f64)>>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<Vec<(Objective, f64)>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("null or a map of objective name to number")
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_map(self)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(key) = access.next_key::<Objective>()? {
                    let value = access.next_value_seed(Seed)?;
                    out.push((key, value));
                }
                Ok(Some(out))
            }
        }
        deserializer.deserialize_option(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        match v {
            serde_json::Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    fn report(v: &serde_json::Value) -> Report {
        Report::from_json(0, v).unwrap()
    }

    #[test]
    fn used_gpus_defaults_to_zero() {
        assert_eq!(used_gpus(0, &config(json!({"tp": 4}))), Ok(0.0));
        assert_eq!(used_gpus(0, &config(json!({"used_gpus": 8}))), Ok(8.0));
        assert_eq!(used_gpus(0, &config(json!({"used_gpus": "4"}))), Ok(4.0));
        assert_eq!(used_gpus(0, &config(json!({"used_gpus": 2.5}))), Ok(2.5));
    }

    #[test]
    fn used_gpus_rejects_non_counts() {
        for bad in [
            json!(true),
            json!(null),
            json!("four"),
            json!(-1),
            json!([4]),
        ] {
            let err = used_gpus(5, &config(json!({ "used_gpus": bad }))).unwrap_err();
            assert!(
                matches!(&err, ScoreError::Invalid { candidate: 5, key, .. } if key == USED_GPUS),
                "{err:?}"
            );
        }
    }

    #[test]
    fn scalar_candidate_carries_signed_score_and_known_metrics() {
        let r = report(&json!({
            "output_throughput_tok_s": 286.26,
            "mean_e2e_latency_ms": 23945.42,
            "gpu_hours": 2.0308,
            "duration_ms": 1_827_727.96,
            "src_tput_per_gpu": 6328.5,
        }));
        let c = make_candidate(
            7,
            config(json!({"tp": 4, "used_gpus": 4})),
            &r,
            &[Objective::E2eLatency],
            false,
        );
        assert_eq!(c.index, 7);
        assert_eq!(c.used_gpus, 4.0);
        assert_eq!(c.score, -23945.42);
        assert_eq!(c.objectives, None);
        assert_eq!(
            c.metrics.keys().collect::<Vec<_>>(),
            [
                "duration_ms",
                "gpu_hours",
                "mean_e2e_latency_ms",
                "output_throughput_tok_s"
            ]
        );
    }

    #[test]
    fn scalar_candidate_with_no_objectives_scores_throughput() {
        let r = report(&json!({"output_throughput_tok_s": 12.0}));
        let c = make_candidate(0, serde_json::Map::new(), &r, &[], false);
        assert_eq!(c.score, 12.0);
        assert_eq!(c.used_gpus, 0.0);
    }

    #[test]
    fn pareto_candidate_scores_first_objective_raw() {
        // 1000 tok/s, avg_gpu 4, 50 tok/s/user, latency 900 ms.
        let r = report(&json!({
            "output_throughput_tok_s": 1000.0,
            "mean_output_token_throughput_per_user": 50.0,
            "mean_e2e_latency_ms": 900.0,
            "gpu_hours": 2.0,
            "duration_ms": 1_800_000.0,
        }));
        let c = make_candidate(
            1,
            serde_json::Map::new(),
            &r,
            &[Objective::E2eLatency, Objective::ThroughputPerGpu],
            true,
        );
        // Raw, not negated: the headline is the first objective's natural value.
        assert_eq!(c.score, 900.0);
        assert_eq!(
            c.objectives,
            Some(vec![
                (Objective::E2eLatency, 900.0),
                (Objective::ThroughputPerGpu, 250.0)
            ])
        );
        assert_eq!(c.objective(Objective::ThroughputPerGpu), Some(250.0));
        assert_eq!(c.objective(Objective::Goodput), None);
    }

    #[test]
    fn invalid_used_gpus_is_never_feasible() {
        let c = make_candidate(
            0,
            config(json!({"used_gpus": "lots"})),
            &report(&json!({})),
            &[Objective::Throughput],
            false,
        );
        assert_eq!(c.used_gpus, f64::INFINITY);
        assert!(!crate::is_feasible(c.used_gpus, 1e300));
    }

    #[test]
    fn serializes_objectives_as_an_ordered_map_and_round_trips() {
        let r = report(&json!({
            "mean_output_token_throughput_per_user": 20.0,
            "output_throughput_tok_s": 100.0,
        }));
        let c = make_candidate(
            2,
            config(json!({"tp": 2, "used_gpus": 2})),
            &r,
            &[Objective::ThroughputPerUser, Objective::E2eLatency],
            true,
        );
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(
            text,
            r#"{"index":2,"config":{"tp":2,"used_gpus":2},"used_gpus":2.0,"score":20.0,"metrics":{"mean_output_token_throughput_per_user":20.0,"output_throughput_tok_s":100.0},"objectives":{"throughput_per_user":20.0,"e2e_latency":"inf"}}"#
        );
        let back: Candidate = serde_json::from_str(&text).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn scalar_candidate_omits_objectives_and_writes_neg_inf() {
        let c = make_candidate(
            0,
            serde_json::Map::new(),
            &report(&json!({})),
            &[Objective::E2eLatency],
            false,
        );
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["score"], json!("-inf"));
        assert!(v.get("objectives").is_none());
        let back: Candidate = serde_json::from_value(v).unwrap();
        assert_eq!(back, c);
    }
}
