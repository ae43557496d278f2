//! JSON for numbers that may be infinite.
//!
//! JSON has no infinity, and `serde_json` writes a non-finite `f64` as `null`, which loses
//! its sign: a missing latency (`-inf` score) would read back like a missing value. sweeper
//! writes finite numbers as JSON numbers and `±inf` as the strings `"inf"` / `"-inf"`
//! (NaN, which validated data never holds, as `"nan"`); reading accepts numbers and those
//! strings (also `"+inf"`, `"infinity"`, `"-infinity"`, any case).
//!
//! Use as `#[serde(with = "sweeper_score::json_f64")]` on an `f64` field.

use serde::de::{self, Visitor};
use serde::{Deserializer, Serializer};
use std::fmt;

/// The JSON value of a number: a JSON number when finite, else `"inf"`, `"-inf"` or `"nan"`.
pub fn to_value(x: f64) -> serde_json::Value {
    match serde_json::Number::from_f64(x) {
        Some(n) => serde_json::Value::Number(n),
        None => serde_json::Value::String(non_finite_name(x).to_owned()),
    }
}

fn non_finite_name(x: f64) -> &'static str {
    if x.is_nan() {
        "nan"
    } else if x > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

/// Serializes an `f64` as a JSON number, or `"inf"` / `"-inf"` / `"nan"`.
pub fn serialize<S: Serializer>(x: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if x.is_finite() {
        serializer.serialize_f64(*x)
    } else {
        serializer.serialize_str(non_finite_name(*x))
    }
}

/// Deserializes a number, or one of the infinity spellings, as an `f64`.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    deserializer.deserialize_any(F64Visitor)
}

/// Parses the string spellings of infinity (and `nan`), case-insensitively.
pub(crate) fn parse_non_finite(s: &str) -> Option<f64> {
    match s.to_ascii_lowercase().as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        "nan" => Some(f64::NAN),
        _ => None,
    }
}

pub(crate) struct F64Visitor;

impl Visitor<'_> for F64Visitor {
    type Value = f64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number, \"inf\" or \"-inf\"")
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        Ok(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
        parse_non_finite(v).ok_or_else(|| E::invalid_value(de::Unexpected::Str(v), &self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Serialize, serde::Deserialize, PartialEq)]
    struct W(#[serde(with = "super")] f64);

    #[test]
    fn round_trips_finite_and_infinite() {
        for x in [
            0.0,
            -0.0,
            1.5,
            -2.0,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            let text = serde_json::to_string(&W(x)).unwrap();
            let back: W = serde_json::from_str(&text).unwrap();
            assert_eq!(back.0.to_bits(), x.to_bits(), "{text}");
        }
        assert_eq!(
            serde_json::to_string(&W(f64::NEG_INFINITY)).unwrap(),
            "\"-inf\""
        );
        assert_eq!(serde_json::to_string(&W(2.5)).unwrap(), "2.5");
    }

    #[test]
    fn reads_integers_and_other_spellings() {
        let w: W = serde_json::from_str("3").unwrap();
        assert_eq!(w.0, 3.0);
        let w: W = serde_json::from_str("\"Infinity\"").unwrap();
        assert_eq!(w.0, f64::INFINITY);
        assert!(serde_json::from_str::<W>("\"many\"").is_err());
    }

    #[test]
    fn to_value_matches_serialize() {
        assert_eq!(to_value(1.25), serde_json::json!(1.25));
        assert_eq!(to_value(f64::INFINITY), serde_json::json!("inf"));
        assert_eq!(to_value(f64::NEG_INFINITY), serde_json::json!("-inf"));
    }
}
