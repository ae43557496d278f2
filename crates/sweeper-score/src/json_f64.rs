//! JSON for numbers that may be infinite.
//!
//! JSON has no infinity, and `serde_json` writes a non-finite `f64` as `null`, which loses
//! its sign: a missing latency (`-inf` score) would read back like a missing value. sweeper
//! writes finite numbers as JSON numbers and `±inf` as the strings `"inf"` / `"-inf"`
//! (NaN, which validated data never holds, as `"nan"`); reading accepts numbers and those
//! strings (also `"+inf"`, `"infinity"`, `"-infinity"`, any case).
//!
//! Use as `#[serde(with = "sweeper_score::json_f64")]` on an `f64` field,
//! `json_f64::option` on an `Option<f64>` and `json_f64::map` on a `BTreeMap<String, f64>`.
//! This is the one encoding of non-finite numbers in everything sweeper writes (journal,
//! `result.json`, CSV cells, saved studies).

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

/// How Python's `json` module writes a non-finite number: `NaN`, `Infinity` or `-Infinity`
/// (a finite `x` gets the name of its sign's infinity). See [`quote_python_tokens`].
pub fn python_name(x: f64) -> &'static str {
    if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
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

/// Parses the string spellings of infinity (and `nan`), case-insensitively; `None` for any
/// other text.
pub fn parse_non_finite(s: &str) -> Option<f64> {
    match s.to_ascii_lowercase().as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        "nan" => Some(f64::NAN),
        _ => None,
    }
}

/// Python's `json` module writes the non-finite floats as the bare tokens `NaN`,
/// `Infinity` and `-Infinity`, which JSON lacks and `serde_json` refuses. This rewrites
/// each such token outside a string into a JSON string of this module's spelling (`"nan"`,
/// `"inf"`, `"-inf"`) after `marker`, the JSON text of a prefix (`""`, or an escape such as
/// `\u0000` that lets a reader tell a rewritten token from a string the writer quoted);
/// strings and everything else are copied as they are. Outside strings JSON has no letters
/// but those of `true`, `false` and `null`, so a token cannot be mistaken.
///
/// ```
/// use sweeper_score::json_f64::{parse_non_finite, quote_python_tokens};
///
/// let text = r#"{"request_rate": Infinity, "note": "NaN"}"#;
/// let quoted = quote_python_tokens(text, "");
/// assert_eq!(quoted, r#"{"request_rate": "inf", "note": "NaN"}"#);
/// let value: serde_json::Value = serde_json::from_str(&quoted).unwrap();
/// assert_eq!(parse_non_finite(value["request_rate"].as_str().unwrap()), Some(f64::INFINITY));
/// ```
pub fn quote_python_tokens<'a>(text: &'a str, marker: &str) -> std::borrow::Cow<'a, str> {
    // `-Infinity` before `Infinity`, which it contains
    const VALUES: [f64; 3] = [f64::NEG_INFINITY, f64::INFINITY, f64::NAN];
    if !(text.contains("Infinity") || text.contains("NaN")) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else if let Some(x) = VALUES.iter().find(|x| rest.starts_with(python_name(**x))) {
            out.push('"');
            out.push_str(marker);
            out.push_str(non_finite_name(*x));
            out.push('"');
            rest = &rest[python_name(*x).len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
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

/// A seed that reads one number (or a spelling of infinity) with the visitor above.
pub(crate) struct Seed;

impl<'de> de::DeserializeSeed<'de> for Seed {
    type Value = f64;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<f64, D::Error> {
        d.deserialize_any(F64Visitor)
    }
}

/// Serde for an `Option<f64>`: `null` when absent, else as [`serialize`].
pub mod option {
    use super::{F64Visitor, de};
    use serde::{Deserializer, Serializer};
    use std::fmt;

    /// Serializes `None` as `null`, a number as [`serialize`](super::serialize) does.
    #[allow(clippy::ref_option)] // serde's `with` hands the field by reference
    pub fn serialize<S: Serializer>(x: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
        match x {
            None => serializer.serialize_none(),
            Some(x) => super::serialize(x, serializer),
        }
    }

    /// Reads `null` as `None`, anything else as [`deserialize`](super::deserialize) does.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = Option<f64>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("null, a number, \"inf\" or \"-inf\"")
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                d.deserialize_any(F64Visitor).map(Some)
            }
        }
        d.deserialize_option(V)
    }
}

/// Serde for a `BTreeMap<String, f64>` whose values may be infinite.
pub mod map {
    use super::{Seed, de};
    use serde::ser::SerializeMap;
    use serde::{Deserializer, Serializer};
    use std::collections::BTreeMap;
    use std::fmt;

    /// Serializes every value as [`serialize`](super::serialize) does.
    pub fn serialize<S: Serializer>(
        map: &BTreeMap<String, f64>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(Some(map.len()))?;
        for (k, v) in map {
            m.serialize_entry(k, &super::to_value(*v))?;
        }
        m.end()
    }

    /// Reads a map of numbers and spellings of infinity.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<BTreeMap<String, f64>, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = BTreeMap<String, f64>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map of metric name to number")
            }
            fn visit_map<A: de::MapAccess<'de>>(
                self,
                mut access: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = BTreeMap::new();
                while let Some(key) = access.next_key::<String>()? {
                    let value = access.next_value_seed(Seed)?;
                    out.insert(key, value);
                }
                Ok(out)
            }
        }
        deserializer.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn python_tokens_are_quoted_outside_strings_only() {
        let text = r#"{"request_rate": Infinity, "x": -Infinity, "y": NaN, "s": "NaN Infinity \"Infinity\""}"#;
        let v: serde_json::Value = serde_json::from_str(&quote_python_tokens(text, "")).unwrap();
        assert_eq!(v["request_rate"], "inf");
        assert_eq!(v["x"], "-inf");
        assert_eq!(v["y"], "nan");
        assert_eq!(v["s"], "NaN Infinity \"Infinity\"");
        assert!(matches!(
            quote_python_tokens("{\"a\": 1}", ""),
            std::borrow::Cow::Borrowed("{\"a\": 1}")
        ));
        // a marker goes before the spelling, inside the string
        let marked = quote_python_tokens("[NaN, -Infinity]", "\\u0000");
        assert_eq!(marked, "[\"\\u0000nan\", \"\\u0000-inf\"]");
        let v: Vec<String> = serde_json::from_str(&marked).unwrap();
        assert_eq!(v, ["\u{0}nan", "\u{0}-inf"]);
    }

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

    #[derive(Debug, serde::Serialize, serde::Deserialize, PartialEq)]
    struct O(#[serde(with = "super::option")] Option<f64>);

    #[derive(Debug, serde::Serialize, serde::Deserialize, PartialEq)]
    struct M(#[serde(with = "super::map")] std::collections::BTreeMap<String, f64>);

    #[test]
    fn options_and_maps_round_trip_infinities() {
        for x in [
            None,
            Some(1.5),
            Some(f64::INFINITY),
            Some(f64::NEG_INFINITY),
        ] {
            let text = serde_json::to_string(&O(x)).unwrap();
            assert_eq!(serde_json::from_str::<O>(&text).unwrap(), O(x), "{text}");
        }
        assert_eq!(serde_json::to_string(&O(None)).unwrap(), "null");
        assert_eq!(
            serde_json::to_string(&O(Some(f64::NEG_INFINITY))).unwrap(),
            "\"-inf\""
        );
        let m = M([("a".to_owned(), f64::INFINITY), ("b".to_owned(), 2.0)].into());
        let text = serde_json::to_string(&m).unwrap();
        assert_eq!(text, r#"{"a":"inf","b":2.0}"#);
        assert_eq!(serde_json::from_str::<M>(&text).unwrap(), m);
    }

    #[test]
    fn to_value_matches_serialize() {
        assert_eq!(to_value(1.25), serde_json::json!(1.25));
        assert_eq!(to_value(f64::INFINITY), serde_json::json!("inf"));
        assert_eq!(to_value(f64::NEG_INFINITY), serde_json::json!("-inf"));
    }
}
