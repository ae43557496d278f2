//! JSON Lines (one object per line; blank lines skipped) and JSON arrays of objects.

use super::{InputError, NumericTable, Place, parse_number};
use serde_json::Value;
use std::path::Path;

/// Every data row of a JSON Lines or JSON array input, with where it sits.
pub(super) fn rows(
    path: &Path,
    bytes: &[u8],
    array: bool,
) -> Result<Vec<(Place, Value)>, InputError> {
    let text = utf8(path, bytes)?;
    if array {
        let value: Value = serde_json::from_str(text).map_err(|e| InputError::Format {
            path: path.to_owned(),
            detail: format!("invalid JSON: {e}"),
        })?;
        let Value::Array(items) = value else {
            return Err(InputError::Format {
                path: path.to_owned(),
                detail: "expected a JSON array of objects".to_owned(),
            });
        };
        return Ok(items
            .into_iter()
            .enumerate()
            .map(|(row, v)| (Place { line: None, row }, v))
            .collect());
    }
    let mut out = Vec::new();
    for_each_line(path, text, |place, value| {
        out.push((place, value));
        Ok(())
    })?;
    Ok(out)
}

/// Hands every JSON Lines row to `visit` as it is parsed, so that a caller keeps only what
/// it needs of each row (`sweeper score` streams its reports through this).
pub(super) fn for_each_line(
    path: &Path,
    text: &str,
    mut visit: impl FnMut(Place, Value) -> Result<(), InputError>,
) -> Result<(), InputError> {
    let mut row = 0;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let place = Place {
            line: Some(i as u64 + 1),
            row,
        };
        let value: Value = serde_json::from_str(trimmed).map_err(|e| InputError::Format {
            path: path.to_owned(),
            detail: format!("{place}: invalid JSON: {e}"),
        })?;
        visit(place, value)?;
        row += 1;
    }
    Ok(())
}

/// The input as UTF-8 text.
pub(super) fn utf8<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str, InputError> {
    std::str::from_utf8(bytes).map_err(|e| InputError::Format {
        path: path.to_owned(),
        detail: format!("not UTF-8 text ({e})"),
    })
}

/// A JSON value as a number: a JSON number, or a string holding one (`"inf"`, `"-inf"`).
pub(super) fn number(place: Place, column: &str, value: &Value) -> Result<f64, InputError> {
    let bad = |detail: String| InputError::Value {
        place,
        column: column.to_owned(),
        detail,
    };
    match value {
        Value::Number(n) => n.as_f64().ok_or_else(|| bad(format!("not a number: {n}"))),
        Value::String(s) => parse_number(s).map_err(bad),
        other => Err(bad(format!("not a number: {other}"))),
    }
}

fn numeric_columns(
    path: &Path,
    bytes: &[u8],
    columns: &[String],
    array: bool,
) -> Result<NumericTable, InputError> {
    let rows = rows(path, bytes, array)?;
    let mut data = Vec::with_capacity(rows.len() * columns.len());
    for (place, value) in &rows {
        let Value::Object(object) = value else {
            return Err(InputError::Format {
                path: path.to_owned(),
                detail: format!("{place}: expected a JSON object of column values"),
            });
        };
        for c in columns {
            let v = object.get(c).ok_or_else(|| InputError::MissingColumn {
                place: Some(*place),
                column: c.clone(),
                available: object.keys().cloned().collect::<Vec<_>>().join(", "),
            })?;
            data.push(number(*place, c, v)?);
        }
    }
    Ok(NumericTable {
        columns: columns.to_vec(),
        data,
        rows: rows.len(),
    })
}

/// Reads the named keys of every JSON Lines object as numbers.
pub(super) fn numeric_columns_lines(
    path: &Path,
    bytes: &[u8],
    columns: &[String],
) -> Result<NumericTable, InputError> {
    numeric_columns(path, bytes, columns, false)
}

/// Reads the named keys of every object of a JSON array as numbers.
pub(super) fn numeric_columns_array(
    path: &Path,
    bytes: &[u8],
    columns: &[String],
) -> Result<NumericTable, InputError> {
    numeric_columns(path, bytes, columns, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn lines_skip_blanks_and_read_infinities() {
        let text = b"{\"x\": 1, \"y\": 2}\n\n{\"x\": \"-inf\", \"y\": 4.5, \"z\": \"label\"}\n";
        let t = numeric_columns_lines(Path::new("t.jsonl"), text, &cols(&["x", "y"])).unwrap();
        assert_eq!(t.rows, 2);
        assert_eq!(t.data, [1.0, 2.0, f64::NEG_INFINITY, 4.5]);
    }

    #[test]
    fn missing_key_names_line_row_and_column() {
        let text = b"{\"x\": 1, \"y\": 2}\n\n{\"x\": 3}\n";
        let err =
            numeric_columns_lines(Path::new("t.jsonl"), text, &cols(&["x", "y"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 3 (row 1): column `y` not found; the input has: x"
        );
    }

    #[test]
    fn bad_values_and_bad_json() {
        let err = numeric_columns_lines(Path::new("t.jsonl"), b"{\"x\": null}\n", &cols(&["x"]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 1 (row 0), column `x`: not a number: null"
        );
        let err =
            numeric_columns_lines(Path::new("t.jsonl"), b"{\"x\": 1\n", &cols(&["x"])).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("t.jsonl: line 1 (row 0): invalid JSON"),
            "{err}"
        );
        let err = numeric_columns_lines(Path::new("t.jsonl"), b"{\"x\": \"NaN\"}\n", &cols(&["x"]))
            .unwrap_err();
        assert!(err.to_string().contains("value is NaN"), "{err}");
    }

    #[test]
    fn arrays_number_rows_by_element() {
        let text = b"[{\"x\": 1}, {\"x\": true}]";
        let err = numeric_columns_array(Path::new("t.json"), text, &cols(&["x"])).unwrap_err();
        assert_eq!(err.to_string(), "row 1, column `x`: not a number: true");
    }
}
