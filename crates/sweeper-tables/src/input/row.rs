//! One evaluated candidate as a reader hands it on ([`ReportRow`]), and what every reader
//! of report rows builds one with: a config cell typed, a scorer error placed in the file,
//! a row's GPU count checked.

use super::{InputError, Place};
use serde_json::{Map, Value};
use sweeper_score::{Report, ScoreError, used_gpus};

/// One evaluated candidate read from an input.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportRow {
    /// Where it sits in the file; `place.row` is the candidate's `index`.
    pub place: Place,
    /// The configuration (an arbitrary map; `used_gpus` already checked to be a count).
    pub config: Map<String, Value>,
    /// The report (no NaN).
    pub report: Report,
}

/// Turns a scorer error about one candidate into an input error at its place.
pub(super) fn at(place: Place, err: ScoreError) -> InputError {
    match err {
        ScoreError::NanReport { key, .. } => InputError::Value {
            place,
            column: key,
            detail: "value is NaN; fronts and rankings need comparable numbers".to_owned(),
        },
        ScoreError::Invalid { key, detail, .. } => InputError::Value {
            place,
            column: key,
            detail,
        },
        other => InputError::Value {
            place,
            column: String::new(),
            detail: other.to_string(),
        },
    }
}

pub(super) fn checked_row(
    place: Place,
    config: Map<String, Value>,
    report: Report,
) -> Result<ReportRow, InputError> {
    used_gpus(place.row, &config).map_err(|e| at(place, e))?;
    Ok(ReportRow {
        place,
        config,
        report,
    })
}

/// A config cell as a typed JSON value (`None` for an empty cell).
pub(super) fn config_value(cell: &str) -> Option<Value> {
    let t = cell.trim();
    if t.is_empty() {
        return None;
    }
    Some(match t {
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        _ => {
            if let Ok(i) = t.parse::<i64>() {
                Value::from(i)
            } else if let Ok(u) = t.parse::<u64>() {
                Value::from(u)
            } else if let Some(n) = t.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
                Value::Number(n)
            } else {
                Value::String(t.to_owned())
            }
        }
    })
}
