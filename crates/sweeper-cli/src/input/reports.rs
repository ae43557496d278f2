//! The inputs of `sweeper score`: evaluated candidates, each a config and a report.
//!
//! - JSON Lines: one `{"config": {...}, "report": {...}}` object per line (`config` may be
//!   left out: an empty config); blank lines and `#` lines are skipped.
//! - JSON array: `[{"config": ..., "report": ...}, ...]`.
//! - CSV: a header row; columns named after a known report metric
//!   ([`sweeper_score::KNOWN_METRICS`]) form the report, and every other column is config
//!   (`used_gpus`, `tp`, labels, source columns ...). Cells are typed: integers and finite
//!   numbers become JSON numbers, `true`/`false` booleans, anything else a string. An empty
//!   cell means the key is absent (the scorer's defaults apply).

use super::csv_table::for_each_text_row;
use super::json::{for_each_line, rows as json_rows, utf8};
use super::{InputError, Place, TableFormat, parse_number, read_bytes, sniff};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;
use sweeper_score::{KNOWN_METRICS, Report, ScoreError, used_gpus};

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

/// Reads every candidate of a JSON Lines, JSON array or CSV file (decided by content); the
/// path `-` reads standard input.
pub fn read_reports(path: &Path) -> Result<Vec<ReportRow>, InputError> {
    parse_reports(path, &read_bytes(path)?)
}

/// [`read_reports`] of bytes already in memory; `path` only names them in errors.
pub fn parse_reports(path: &Path, bytes: &[u8]) -> Result<Vec<ReportRow>, InputError> {
    parse_reports_with_notes(path, bytes).map(|(rows, _)| rows)
}

/// [`parse_reports`], with notes for people about what was read in a way they may not
/// expect: one per CSV metric column with empty cells (each read as a missing metric), with
/// the count.
pub fn parse_reports_with_notes(
    path: &Path,
    bytes: &[u8],
) -> Result<(Vec<ReportRow>, Vec<String>), InputError> {
    let mut rows = Vec::new();
    let notes = for_each_report(path, bytes, |row| rows.push(row))?;
    Ok((rows, notes))
}

/// [`parse_reports_with_notes`] one row at a time: hands every candidate to `visit` as it
/// is read, in input order, and returns the notes. A caller that keeps a few numbers per
/// row needs memory for those, not for the parsed rows. JSON Lines and CSV are read row by
/// row; a JSON array is parsed whole first (one value), then handed out.
pub fn for_each_report(
    path: &Path,
    bytes: &[u8],
    mut visit: impl FnMut(ReportRow),
) -> Result<Vec<String>, InputError> {
    let bytes = super::without_bom(bytes);
    let mut empty: BTreeMap<String, usize> = BTreeMap::new();
    let mut count = 0_usize;
    let mut counted = |row: ReportRow| {
        count += 1;
        visit(row);
    };
    match sniff(bytes) {
        TableFormat::Csv => csv_reports(path, bytes, &mut empty, &mut counted)?,
        TableFormat::JsonLines => {
            let text = utf8(path, bytes)?;
            for_each_line(path, text, |place, value| {
                counted(json_report(path, place, value)?);
                Ok(())
            })?;
        }
        TableFormat::JsonArray => {
            for (place, value) in json_rows(path, bytes, true)? {
                counted(json_report(path, place, value)?);
            }
        }
        TableFormat::Npy => {
            return Err(InputError::Format {
                path: path.to_owned(),
                detail: "a .npy matrix has no configs or report keys; `sweeper score` reads \
                         JSON Lines, a JSON array or CSV (`sweeper front` reads .npy)"
                    .to_owned(),
            });
        }
    }
    if count == 0 {
        return Err(InputError::Empty {
            path: path.to_owned(),
            detail: String::new(),
        });
    }
    let notes = empty
        .into_iter()
        .map(|(column, n)| {
            format!(
                "column {}: {n} empty cell{}, each read as a missing metric",
                crate::text::quote(&column),
                if n == 1 { "" } else { "s" }
            )
        })
        .collect();
    Ok(notes)
}

/// Turns a scorer error about one candidate into an input error at its place.
fn at(place: Place, err: ScoreError) -> InputError {
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

fn checked_row(
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

fn json_report(path: &Path, place: Place, value: Value) -> Result<ReportRow, InputError> {
    let shape = |detail: &str| InputError::Format {
        path: path.to_owned(),
        detail: format!("{place}: {detail}"),
    };
    let Value::Object(mut object) = value else {
        return Err(shape(
            "expected an object {\"config\": {...}, \"report\": {...}}",
        ));
    };
    if let Some(key) = object.keys().find(|k| *k != "config" && *k != "report") {
        return Err(shape(&format!(
            "unknown key `{key}`; a row has only `config` and `report`"
        )));
    }
    let config = match object.remove("config") {
        None => Map::new(),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(shape("`config` must be an object")),
    };
    let report_value = object
        .remove("report")
        .ok_or_else(|| shape("missing `report`"))?;
    let report = Report::from_json(place.row, &report_value).map_err(|e| at(place, e))?;
    checked_row(place, config, report)
}

/// A config cell as a typed JSON value (`None` for an empty cell).
fn config_value(cell: &str) -> Option<Value> {
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

fn csv_reports(
    path: &Path,
    bytes: &[u8],
    empty: &mut BTreeMap<String, usize>,
    visit: &mut dyn FnMut(ReportRow),
) -> Result<(), InputError> {
    let mut metric_columns: Option<Vec<bool>> = None;
    for_each_text_row(path, bytes, |headers, row, text| {
        let is_metric = metric_columns.get_or_insert_with(|| {
            headers
                .iter()
                .map(|h| KNOWN_METRICS.contains(&h.as_str()))
                .collect()
        });
        let place = Place {
            line: text.line,
            row,
        };
        let mut config = Map::new();
        let mut metrics = BTreeMap::new();
        for ((name, cell), &metric) in headers.iter().zip(text.cells).zip(is_metric.iter()) {
            if metric {
                if cell.trim().is_empty() {
                    *empty.entry(name.clone()).or_insert(0) += 1;
                    continue;
                }
                let x = parse_number(cell).map_err(|detail| InputError::Value {
                    place,
                    column: name.clone(),
                    detail,
                })?;
                metrics.insert(name.clone(), x);
            } else if let Some(v) = config_value(cell) {
                config.insert(name.clone(), v);
            }
        }
        let report = Report::from_map(row, metrics).map_err(|e| at(place, e))?;
        visit(checked_row(place, config, report)?);
        Ok(())
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn csv_splits_metrics_from_config() {
        let (_d, p) = write(
            "r.csv",
            "# source: test\ntp,used_gpus,offload,output_throughput_tok_s,mean_e2e_latency_ms,note\n\
             4,4,true,100.5,,fast\n8,8,false,inf,20,\n",
        );
        let rows = read_reports(&p).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(
            Value::Object(rows[0].config.clone()),
            json!({"tp": 4, "used_gpus": 4, "offload": true, "note": "fast"})
        );
        assert_eq!(rows[0].report.get("output_throughput_tok_s"), Some(100.5));
        assert_eq!(rows[0].report.get("mean_e2e_latency_ms"), None);
        assert_eq!(
            rows[1].report.get("output_throughput_tok_s"),
            Some(f64::INFINITY)
        );
        assert_eq!(
            rows[1].place,
            Place {
                line: Some(4),
                row: 1
            }
        );
    }

    #[test]
    fn csv_bad_metric_names_line_and_column() {
        let (_d, p) = write("r.csv", "used_gpus,gpu_hours\n1,2\n1,NaN\n");
        let err = read_reports(&p).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("line 3 (row 1), column `gpu_hours`: value is NaN"),
            "{err}"
        );
        let (_d, p) = write("r.csv", "used_gpus,gpu_hours\nmany,2\n");
        let err = read_reports(&p).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("line 2 (row 0), column `used_gpus`: must be a number"),
            "{err}"
        );
    }

    #[test]
    fn json_lines_and_arrays() {
        let (_d, p) = write(
            "r.jsonl",
            "{\"config\": {\"used_gpus\": 2}, \"report\": {\"output_throughput_tok_s\": 5, \"model\": \"m\"}}\n\n{\"report\": {}}\n",
        );
        let rows = read_reports(&p).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].report.len(), 1);
        assert!(rows[1].config.is_empty());
        assert_eq!(
            rows[1].place,
            Place {
                line: Some(3),
                row: 1
            }
        );
        let (_d, p) = write(
            "r.json",
            "[{\"config\": {}, \"report\": {\"gpu_hours\": 1}}]",
        );
        assert_eq!(read_reports(&p).unwrap().len(), 1);
    }

    #[test]
    fn json_shape_errors_name_the_line() {
        let (_d, p) = write("r.jsonl", "{\"report\": {}, \"extra\": 1}\n");
        let err = read_reports(&p).unwrap_err();
        assert!(
            err.to_string()
                .contains("line 1 (row 0): unknown key `extra`"),
            "{err}"
        );
        let (_d, p) = write("r.jsonl", "{\"config\": {}}\n");
        assert!(
            read_reports(&p)
                .unwrap_err()
                .to_string()
                .contains("missing `report`")
        );
        let (_d, p) = write("r.jsonl", "{\"report\": {\"gpu_hours\": \"2\"}}\n");
        let err = read_reports(&p).unwrap_err();
        assert!(
            err.to_string()
                .contains("column `gpu_hours`: must be a number, got a string"),
            "{err}"
        );
    }

    #[test]
    fn empty_inputs_are_errors() {
        for text in ["", "# nothing\n", "a,b\n", "[]", "\n\n"] {
            let (_d, p) = write("e.txt", text);
            let err = read_reports(&p).unwrap_err();
            assert!(matches!(err, InputError::Empty { .. }), "{text:?}: {err}");
        }
    }

    #[test]
    fn config_cells_are_typed() {
        assert_eq!(config_value(" 4 "), Some(json!(4)));
        assert_eq!(config_value("2.5"), Some(json!(2.5)));
        assert_eq!(config_value("True"), Some(json!(true)));
        assert_eq!(config_value("hicache"), Some(json!("hicache")));
        assert_eq!(config_value("inf"), Some(json!("inf")));
        assert_eq!(config_value(""), None);
    }
}
