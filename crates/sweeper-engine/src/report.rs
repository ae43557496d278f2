//! Reading what an external evaluator printed: a report (a flat JSON object of metric name →
//! number) or a status answer (`{"status": "unsupported", "reason": "..."}`).
//!
//! Python's `json.dumps` writes the non-standard bare tokens `NaN`, `Infinity` and
//! `-Infinity`, which strict JSON parsers (`serde_json` included) reject. They are accepted
//! here so that the failure can name its metric: `NaN` is a failed report naming the key,
//! `Infinity` and `-Infinity` are the legal values ±inf (an unbounded latency, say).

use crate::evaluator::{EvalOutcome, RawReport};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// Marks a bare non-finite token rewritten into a JSON string before parsing
/// (`sweeper_score::json_f64::quote_python_tokens` with the marker `\u0000`). A NUL
/// character cannot appear unescaped in JSON text, and an evaluator that printed the
/// escaped string on purpose only changes which error message its bad report gets (any
/// string value is an error), except for the infinity spellings, which it would then mean.
const SENTINEL: char = '\u{0}';

/// How much of an unparsable output is quoted in the failure reason.
const QUOTE_CHARS: usize = 120;

/// Parses a report: one flat JSON object of metric name → number, surrounded by optional
/// whitespace.
///
/// Integers and floats are numbers; `Infinity` and `-Infinity` (as Python writes them) are
/// ±inf. Everything else is an error whose message names the problem and, for a bad value,
/// the metric: `NaN`, a string, a boolean, `null`, a nested object or array, a key given
/// twice, malformed JSON, a top-level value that is not an object, or empty output.
///
/// ```
/// use sweeper_engine::parse_report;
///
/// let report = parse_report(r#"{"throughput": 1250.5, "ttft_ms": Infinity}"#).unwrap();
/// assert_eq!(report["throughput"], 1250.5);
/// assert_eq!(report["ttft_ms"], f64::INFINITY);
///
/// let err = parse_report(r#"{"throughput": NaN}"#).unwrap_err();
/// assert!(err.contains("`throughput`"), "{err}");
/// ```
pub fn parse_report(stdout: &str) -> Result<RawReport, String> {
    match parse_entries(stdout) {
        Ok(entries) => to_report(entries),
        Err(Malformed(reason)) => Err(reason),
    }
}

/// An answer that is not even a JSON object: the line protocol of a persistent worker may
/// be out of step, so the worker is restarted.
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed(pub String);

/// Reads an evaluator's answer: a status answer, else a report.
///
/// A status answer is an object whose `status` is a string: `"unsupported"`, `"infeasible"`
/// or `"failed"`, with an optional string `reason` and no other key. It lets a persistent
/// worker answer what a one-shot evaluator says with its exit code, without exiting.
pub fn parse_answer(stdout: &str) -> Result<EvalOutcome, Malformed> {
    Ok(outcome_of(parse_entries(stdout)?))
}

fn outcome_of(entries: Vec<(String, Value)>) -> EvalOutcome {
    if let Some(outcome) = status_answer(&entries) {
        return outcome;
    }
    match to_report(entries) {
        Ok(report) => EvalOutcome::Report(report),
        Err(reason) => EvalOutcome::Failed(reason),
    }
}

/// The key of a persistent answer that names the candidate it answers.
const ID_KEY: &str = "id";

/// What one line of a persistent worker is to the candidate that is out.
#[derive(Debug, Clone, PartialEq)]
pub enum LineAnswer {
    /// This candidate's answer: its `id` matched, or it carried none.
    Answer(EvalOutcome),
    /// An answer that carries another candidate's `id` (a late or repeated answer, or an
    /// id the worker was never sent): that id.
    OtherCandidate(u64),
}

/// Reads one answer line of a persistent worker while candidate `id` is out.
///
/// The answer (a report or a status answer) may carry the `id` of the candidate it answers;
/// it is taken out, so it is never a metric. Another non-negative integer is another
/// candidate's answer. An `id` of another type, or given twice, fails the candidate (a
/// worker that means the protocol's `id` gets it wrong for every candidate, and should hear
/// why). Without an `id` the line is this candidate's.
pub fn parse_line_answer(line: &str, id: u64) -> Result<LineAnswer, Malformed> {
    let mut entries = parse_entries(line)?;
    let mut ids = entries
        .iter()
        .enumerate()
        .filter(|(_, (key, _))| key == ID_KEY)
        .map(|(i, _)| i);
    let (first, second) = (ids.next(), ids.next());
    if second.is_some() {
        return Ok(LineAnswer::Answer(EvalOutcome::Failed(format!(
            "`{ID_KEY}` appears more than once in the answer"
        ))));
    }
    if let Some(at) = first {
        let (_, value) = entries.remove(at);
        match &value {
            Value::Number(n) => match n.as_u64() {
                Some(answered) if answered == id => {}
                Some(other) => return Ok(LineAnswer::OtherCandidate(other)),
                None => return Ok(LineAnswer::Answer(bad_id(&value))),
            },
            _ => return Ok(LineAnswer::Answer(bad_id(&value))),
        }
    }
    Ok(LineAnswer::Answer(outcome_of(entries)))
}

fn bad_id(value: &Value) -> EvalOutcome {
    let shown = match value {
        Value::String(s) => non_finite(s).map_or_else(
            || value.to_string(),
            |x| sweeper_score::json_f64::python_name(x).to_owned(),
        ),
        other => other.to_string(),
    };
    EvalOutcome::Failed(format!(
        "answer `{ID_KEY}` must be the candidate's id, a non-negative integer; got {shown}"
    ))
}

/// The object's entries in order, duplicates kept, non-finite tokens as sentinel strings.
fn parse_entries(stdout: &str) -> Result<Vec<(String, Value)>, Malformed> {
    if stdout.trim().is_empty() {
        return Err(Malformed("evaluator printed no report".to_owned()));
    }
    let text = sweeper_score::json_f64::quote_python_tokens(stdout, "\\u0000");
    serde_json::from_str::<Entries>(&text)
        .map(|entries| entries.0)
        .map_err(|e| {
            Malformed(format!(
                "malformed report: {e} (output starts with {})",
                quote(stdout)
            ))
        })
}

/// Keys whose value sweeper reads as a number: a non-numeric value there is a failed
/// report (reading it as absent would silently change a score or a GPU count).
const NUMERIC_KEYS: [&str; 4] = [
    "used_gpus",
    "total_gpus",
    "concurrency",
    "kv_capacity_tokens",
];

/// Checks every value of a report: no NaN, each key once. Numbers (and the spellings of
/// `±inf`) are metrics; any other value is kept as a label (its text), except under a key
/// that sweeper reads as a number, where it is an error naming the key.
fn to_report(entries: Vec<(String, Value)>) -> Result<RawReport, String> {
    let mut report = RawReport::new();
    for (key, value) in entries {
        if report.metrics.contains_key(&key) || report.labels.contains_key(&key) {
            return Err(format!(
                "metric `{key}` appears more than once in the report"
            ));
        }
        let numeric = sweeper_score::KNOWN_METRICS.contains(&key.as_str())
            || NUMERIC_KEYS.contains(&key.as_str());
        let label = match &value {
            Value::Number(n) => {
                let x = n
                    .as_f64()
                    .ok_or_else(|| format!("metric `{key}` is not representable as a number"))?;
                report.metrics.insert(key, x);
                continue;
            }
            Value::String(s) => match non_finite(s) {
                Some(x) if x.is_nan() => return Err(format!("metric `{key}` is NaN")),
                Some(x) => {
                    report.metrics.insert(key, x);
                    continue;
                }
                None if numeric => return Err(not_a_number(&key, "a string")),
                None => s.clone(),
            },
            Value::Bool(_) if numeric => return Err(not_a_number(&key, "a boolean")),
            Value::Null if numeric => return Err(not_a_number(&key, "null")),
            Value::Array(_) if numeric => return Err(not_a_number(&key, "an array")),
            Value::Object(_) if numeric => return Err(not_a_number(&key, "an object")),
            other => other.to_string(),
        };
        report.labels.insert(key, label);
    }
    Ok(report)
}

fn not_a_number(key: &str, got: &str) -> String {
    format!("metric `{key}` is not a number (got {got})")
}

/// A status answer, if `entries` is one (a string-valued `status` key).
fn status_answer(entries: &[(String, Value)]) -> Option<EvalOutcome> {
    let status = entries.iter().find_map(|(k, v)| match v {
        Value::String(s) if k == "status" => Some(s.as_str()),
        _ => None,
    })?;
    let mut reason = None;
    for (key, value) in entries {
        match (key.as_str(), value) {
            ("status", _) => {}
            ("reason", Value::String(s)) => reason = Some(s.trim().to_owned()),
            _ => {
                return Some(EvalOutcome::Failed(format!(
                    "status answer has an unexpected key `{key}` (only `status` and a string `reason` are allowed)"
                )));
            }
        }
    }
    let reason = reason.filter(|r| !r.is_empty());
    Some(match status {
        "unsupported" => EvalOutcome::Unsupported(
            reason.unwrap_or_else(|| "evaluator does not support this configuration".to_owned()),
        ),
        "infeasible" => EvalOutcome::Infeasible(
            reason.unwrap_or_else(|| "evaluator declared the candidate infeasible".to_owned()),
        ),
        "failed" => {
            EvalOutcome::Failed(reason.unwrap_or_else(|| "evaluator reported a failure".to_owned()))
        }
        other => EvalOutcome::Failed(format!(
            "unknown status `{other}` in evaluator answer (expected unsupported, infeasible or failed)"
        )),
    })
}

/// The value of a sentinel string, if `s` is one.
fn non_finite(s: &str) -> Option<f64> {
    sweeper_score::json_f64::parse_non_finite(s.strip_prefix(SENTINEL)?)
}

/// The start of an output, quoted on one line for a failure reason.
fn quote(text: &str) -> String {
    let trimmed = text.trim_start();
    let mut head: String = trimmed.chars().take(QUOTE_CHARS).collect();
    if head.len() < trimmed.len() {
        head.push('…');
    }
    format!("{head:?}")
}

/// A JSON object read entry by entry, so that a key given twice is seen (a map would keep
/// only the last value silently).
struct Entries(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;

        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = Entries;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object of metric names to numbers")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(8));
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }

        deserializer.deserialize_map(EntriesVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_integers_floats_and_exponents() {
        let report = parse_report("  {\"a\": 1, \"b\": -2.5, \"c\": 1e3, \"d\": 0}\n").unwrap();
        assert_eq!(report.len(), 4);
        assert_eq!(report["a"], 1.0);
        assert_eq!(report["b"], -2.5);
        assert_eq!(report["c"], 1000.0);
        assert_eq!(report["d"], 0.0);
    }

    #[test]
    fn python_float_spellings_read_exactly() {
        // As Python's `json.dumps` writes them (repr of a float).
        for (text, expected) in [
            ("1e+300", 1e300),
            ("-0.0", -0.0),
            ("5e-324", 5e-324),
            ("1.7976931348623157e+308", f64::MAX),
            ("0.1", 0.1),
            ("123456789012345678", 123_456_789_012_345_680.0),
            ("-9223372036854775808", i64::MIN as f64),
        ] {
            let report = parse_report(&format!("{{\"m\": {text}}}")).unwrap();
            assert_eq!(report["m"].to_bits(), expected.to_bits(), "{text}");
        }
    }

    #[test]
    fn a_number_out_of_range_is_malformed() {
        let err = parse_report(r#"{"m": 1e400}"#).unwrap_err();
        assert!(err.starts_with("malformed report: "), "{err}");
    }

    #[test]
    fn an_empty_object_is_an_empty_report() {
        assert!(parse_report("{}").unwrap().is_empty());
    }

    #[test]
    fn infinities_are_legal_and_keep_their_sign() {
        let report = parse_report(r#"{"hi": Infinity, "lo": -Infinity, "x": 2}"#).unwrap();
        assert_eq!(report["hi"], f64::INFINITY);
        assert_eq!(report["lo"], f64::NEG_INFINITY);
        assert_eq!(report["x"], 2.0);
    }

    #[test]
    fn nan_is_an_error_naming_its_key() {
        let err = parse_report(r#"{"ok": 1, "ttft_ms": NaN}"#).unwrap_err();
        assert_eq!(err, "metric `ttft_ms` is NaN");
    }

    #[test]
    fn tokens_inside_strings_are_left_alone() {
        // A key that spells NaN, and a string value that mentions it after an escaped quote.
        let report = parse_report(r#"{"NaN": 1, "Infinity \" NaN": 2}"#).unwrap();
        assert_eq!(report["NaN"], 1.0);
        assert_eq!(report["Infinity \" NaN"], 2.0);
        // a quoted "NaN" is text, kept as a label, not a NaN
        let report = parse_report(r#"{"note": "NaN"}"#).unwrap();
        assert_eq!(report.labels["note"], "NaN");
        assert!(report.metrics.is_empty());
    }

    #[test]
    fn non_numeric_values_under_a_read_key_name_the_key_and_the_type() {
        for key in ["output_throughput_tok_s", "used_gpus", "mean_ttft_ms"] {
            for (value, got) in [
                (r#""fast""#, "a string"),
                ("true", "a boolean"),
                ("null", "null"),
                ("[1, 2]", "an array"),
                (r#"{"p50": 1}"#, "an object"),
            ] {
                let text = format!(r#"{{"{key}": {value}}}"#);
                let err = parse_report(&text).unwrap_err();
                assert_eq!(
                    err,
                    format!("metric `{key}` is not a number (got {got})"),
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn other_values_are_kept_as_labels() {
        let report = parse_report(
            r#"{"output_throughput_tok_s": 10, "note": "hello", "ok": true, "gone": null, "tags": [1, "a"], "p": {"p50": 1}}"#,
        )
        .unwrap();
        assert_eq!(report["output_throughput_tok_s"], 10.0);
        assert_eq!(report.metrics.len(), 1);
        let labels: Vec<(&str, &str)> = report
            .labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            labels,
            [
                ("gone", "null"),
                ("note", "hello"),
                ("ok", "true"),
                ("p", r#"{"p50":1}"#),
                ("tags", r#"[1,"a"]"#)
            ]
        );
    }

    #[test]
    fn a_key_given_twice_is_an_error() {
        let err = parse_report(r#"{"m": 1, "m": 2}"#).unwrap_err();
        assert_eq!(err, "metric `m` appears more than once in the report");
    }

    #[test]
    fn malformed_json_is_an_error_quoting_the_output() {
        let err = parse_report(r#"{"m": 1"#).unwrap_err();
        assert!(err.starts_with("malformed report: "), "{err}");
        assert!(err.contains(r#""{\"m\": 1""#), "{err}");
        let err = parse_report("loading database...\n{\"m\": 1}").unwrap_err();
        assert!(err.contains("loading database"), "{err}");
    }

    #[test]
    fn trailing_output_after_the_object_is_an_error() {
        let err = parse_report("{\"m\": 1}\n{\"m\": 2}\n").unwrap_err();
        assert!(err.contains("trailing characters"), "{err}");
    }

    #[test]
    fn a_non_object_is_an_error() {
        for text in ["[1, 2]", "3", "\"x\"", "NaN", "null"] {
            let err = parse_report(text).unwrap_err();
            assert!(
                err.contains("expected a JSON object of metric names to numbers"),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn empty_output_says_no_report() {
        assert_eq!(
            parse_report(" \n").unwrap_err(),
            "evaluator printed no report"
        );
    }

    #[test]
    fn long_output_is_quoted_truncated() {
        let text = format!("x{}", "y".repeat(1000));
        let err = parse_report(&text).unwrap_err();
        assert!(err.len() < 400, "{err}");
        assert!(err.contains('…'), "{err}");
    }

    #[test]
    fn status_answers_map_to_outcomes() {
        assert_eq!(
            parse_answer(r#"{"status": "unsupported", "reason": " tp=8 "}"#),
            Ok(EvalOutcome::Unsupported("tp=8".to_owned()))
        );
        assert_eq!(
            parse_answer(r#"{"status": "infeasible", "reason": "kv below one request"}"#),
            Ok(EvalOutcome::Infeasible("kv below one request".to_owned()))
        );
        assert!(matches!(
            parse_answer(r#"{"status": "failed"}"#),
            Ok(EvalOutcome::Failed(_))
        ));
        let Ok(EvalOutcome::Failed(reason)) = parse_answer(r#"{"status": "odd"}"#) else {
            panic!("an unknown status is a failure");
        };
        assert!(reason.contains("`odd`"), "{reason}");
        let Ok(EvalOutcome::Failed(reason)) = parse_answer(r#"{"status": "unsupported", "x": 1}"#)
        else {
            panic!("an extra key is a failure");
        };
        assert!(reason.contains("`x`"), "{reason}");
    }

    #[test]
    fn a_numeric_status_is_an_ordinary_metric() {
        assert_eq!(
            parse_answer(r#"{"status": 1}"#),
            Ok(EvalOutcome::Report(RawReport::from([(
                "status".to_owned(),
                1.0
            )])))
        );
    }

    #[test]
    fn a_persistent_answer_is_matched_by_its_id() {
        let ours = |line: &str| parse_line_answer(line, 17).unwrap();
        assert_eq!(
            ours(r#"{"id": 17, "throughput": 2.5}"#),
            LineAnswer::Answer(EvalOutcome::Report(RawReport::from([(
                "throughput".to_owned(),
                2.5
            )])))
        );
        assert_eq!(
            ours(r#"{"id": 16, "throughput": 2.5}"#),
            LineAnswer::OtherCandidate(16)
        );
        assert_eq!(
            ours(r#"{"status": "infeasible", "reason": "too big", "id": 17}"#),
            LineAnswer::Answer(EvalOutcome::Infeasible("too big".into()))
        );
        assert_eq!(
            ours(r#"{"status": "failed", "id": 3}"#),
            LineAnswer::OtherCandidate(3)
        );
        // Without an id the line is the candidate's, as before the id existed.
        assert_eq!(
            ours(r#"{"x": 1}"#),
            LineAnswer::Answer(EvalOutcome::Report(RawReport::from([(
                "x".to_owned(),
                1.0
            )])))
        );
    }

    #[test]
    fn a_persistent_id_of_the_wrong_kind_fails_the_candidate() {
        for (id, shown) in [
            (r#""17""#, r#""17""#),
            ("17.0", "17.0"),
            ("-1", "-1"),
            ("null", "null"),
            ("NaN", "NaN"),
            ("Infinity", "Infinity"),
            ("-Infinity", "-Infinity"),
        ] {
            let line = format!(r#"{{"id": {id}, "x": 1}}"#);
            assert_eq!(
                parse_line_answer(&line, 17).unwrap(),
                LineAnswer::Answer(EvalOutcome::Failed(format!(
                    "answer `id` must be the candidate's id, a non-negative integer; got {shown}"
                ))),
                "{line}"
            );
        }
        assert_eq!(
            parse_line_answer(r#"{"id": 17, "id": 17}"#, 17).unwrap(),
            LineAnswer::Answer(EvalOutcome::Failed(
                "`id` appears more than once in the answer".into()
            ))
        );
        assert!(parse_line_answer("[17]", 17).is_err(), "not even an object");
    }

    #[test]
    fn a_one_shot_report_keeps_its_id_as_a_metric() {
        assert_eq!(
            parse_answer(r#"{"id": 17}"#).unwrap(),
            EvalOutcome::Report(RawReport::from([("id".to_owned(), 17.0)]))
        );
    }

    #[test]
    fn bad_values_fail_but_are_not_malformed() {
        assert_eq!(
            parse_answer(r#"{"m": NaN}"#),
            Ok(EvalOutcome::Failed("metric `m` is NaN".to_owned()))
        );
        assert!(parse_answer("not json").is_err());
    }
}
