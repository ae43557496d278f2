//! Named numeric columns of tables read as [`ReadOptions`] say: the one reading of rows that
//! `sweeper front` and `sweeper plot` share with `sweeper score`. A benchmark's result file
//! (vLLM, SGLang, genai-perf; told from its content or `--input-format`) is read by the
//! same reader as for scoring, so its columns are the keys a scored row has
//! (`output_throughput_tok_s`, `duration_ms`, `request_rate` ...); any other table is read
//! as a stream of its named columns ([`super::read_numeric_tables`]).

use super::adjust::{InputFormat, MapSeen, ReadOptions};
use super::bench::{bench_rows, peek_format, read_as};
use super::stream::head;
use super::{InputError, NumericTable, Place, ReportRow, ReportTable};
use serde_json::Value;
use std::path::PathBuf;

/// What [`read_columns`] read.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnsRead {
    /// The columns, named as asked for (after `--map`).
    pub table: NumericTable,
    /// Notes for people (an input without rows, rows given a nominal hour ...).
    pub notes: Vec<String>,
    /// Each input with what it was read as.
    pub formats: Vec<(PathBuf, InputFormat)>,
}

/// Reads the named columns of several inputs as one table (rows numbered on across them,
/// in order), each input read as `options` say: a benchmark's file through the benchmark
/// readers, its keys renamed and derived as for `sweeper score`; any other input's columns
/// as numbers, a column named by a `--map` TO read from its FROM. With a GPU count or
/// `per_user_from_tpot` asked for, every input is read as report rows (their derived keys
/// are columns too). A column is a row's report key or a number in its config (`"inf"`
/// spelled as a string is a number).
///
/// ```
/// use std::path::PathBuf;
/// use sweeper_tables::input::{ReadOptions, read_columns};
///
/// let dir = std::env::temp_dir().join(format!("sweeper-doc-columns-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("runs.jsonl");
/// // SGLang's bench_serving writes an unbounded request rate as Python's bare `Infinity`
/// std::fs::write(&path, "{\"backend\": \"sglang\", \"dataset_name\": \"random\", \
///     \"request_rate\": Infinity, \"duration\": 10.0, \"output_throughput\": 900.0}\n")?;
/// let columns = ["output_throughput_tok_s".to_owned(), "request_rate".to_owned()];
/// let read = read_columns(&[path], &columns, &ReadOptions::default())?;
/// assert_eq!(read.table.data, [900.0, f64::INFINITY]);
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_columns(
    paths: &[PathBuf],
    columns: &[String],
    options: &ReadOptions,
) -> Result<ColumnsRead, InputError> {
    if options.gpus.is_some() || options.per_user_from_tpot {
        return columns_of_reports(paths, columns, options);
    }
    let several = paths.len() > 1;
    if paths.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(super::stdin_twice());
    }
    let sources: Vec<String> = columns
        .iter()
        .map(|c| options.source(c).to_owned())
        .collect();
    let mut seen = MapSeen::new(options);
    let mut nominal = 0;
    let mut data = Vec::new();
    let mut rows = 0;
    let mut notes = Vec::new();
    let mut formats = Vec::with_capacity(paths.len());
    for path in paths {
        let mut format = InputFormat::Reports;
        let read = super::open_input(path).and_then(|input| {
            let h = head(path, input)?;
            let (found, again) = peek_format(path, h.reader, h.format, options.format)?;
            format = found;
            if format == InputFormat::Reports {
                let n = super::numeric_input(path, again, &sources, rows, &mut data)?;
                for (k, (from, _)) in options.map.iter().enumerate() {
                    if sources.contains(from) {
                        seen.hit(k);
                    }
                }
                return Ok(n);
            }
            let read = bench_rows(path, again, format, rows, options, &mut seen, &mut nominal)?;
            for row in &read {
                push_row(row, columns, &mut data).map_err(|e| renamed_hint(e, format))?;
            }
            Ok(read.len())
        });
        formats.push((path.clone(), format));
        match read {
            Ok(0) | Err(InputError::Empty { .. }) if several => notes.push(format!(
                "{}: no data rows; the other inputs are read",
                path.display()
            )),
            Ok(0) => {
                return Err(InputError::Empty {
                    path: path.clone(),
                    detail: String::new(),
                });
            }
            Ok(n) => rows += n,
            Err(e) if several => return Err(e.in_file(path)),
            Err(e) => return Err(e),
        }
    }
    if rows == 0 {
        return Err(InputError::NoRows {
            paths: paths.to_vec(),
        });
    }
    seen.check(options)?;
    if nominal > 0 {
        notes.push(super::reports::nominal_note(nominal));
    }
    Ok(ColumnsRead {
        table: NumericTable {
            columns: columns.to_vec(),
            data,
            rows,
        },
        notes,
        formats,
    })
}

/// [`read_columns`] of every input read as report rows ([`ReportTable`]).
fn columns_of_reports(
    paths: &[PathBuf],
    columns: &[String],
    options: &ReadOptions,
) -> Result<ColumnsRead, InputError> {
    let mut table = ReportTable::open(paths)?.with_options(options.clone());
    let mut data = Vec::new();
    let mut fault = None;
    let notes = table.scan(|row, _| {
        if fault.is_none()
            && let Err(e) = push_row(&row, columns, &mut data)
        {
            fault = Some(e);
        }
    })?;
    if let Some(e) = fault {
        return Err(e);
    }
    let formats = table
        .formats()
        .map(|(p, f)| (p.to_owned(), f))
        .collect::<Vec<_>>();
    Ok(ColumnsRead {
        table: NumericTable {
            columns: columns.to_vec(),
            data,
            rows: table.rows(),
        },
        notes,
        formats,
    })
}

/// Appends the named columns of one row: a report key, else a number of its config.
fn push_row(row: &ReportRow, columns: &[String], data: &mut Vec<f64>) -> Result<(), InputError> {
    for column in columns {
        data.push(cell(row, column)?);
    }
    Ok(())
}

fn cell(row: &ReportRow, column: &str) -> Result<f64, InputError> {
    if let Some(x) = row.report.get(column) {
        return Ok(x);
    }
    let place = row.place;
    let Some(v) = row.config.get(column) else {
        return Err(missing(place, column, row));
    };
    let x = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => sweeper_score::json_f64::parse_non_finite(s),
        _ => None,
    };
    match x {
        Some(x) if x.is_nan() => Err(InputError::Value {
            place,
            column: column.to_owned(),
            detail: "value is NaN; fronts and rankings need comparable numbers".to_owned(),
        }),
        Some(x) => Ok(x),
        None => Err(InputError::Value {
            place,
            column: column.to_owned(),
            detail: format!("not a number: {v}"),
        }),
    }
}

/// The error of a column a row lacks, naming the keys it has.
fn missing(place: Place, column: &str, row: &ReportRow) -> InputError {
    let mut keys: Vec<&str> = row.config.keys().map(String::as_str).collect();
    keys.extend(row.report.iter().map(|(k, _)| k));
    InputError::MissingColumn {
        place: Some(place),
        column: column.to_owned(),
        available: keys.join(", "),
    }
}

/// A column a benchmark's row lacks because its reader renamed it: the error says the name
/// to use (`-o output_throughput_tok_s:max` for vLLM's `output_throughput`).
fn renamed_hint(err: InputError, format: InputFormat) -> InputError {
    match err {
        InputError::MissingColumn {
            place: Some(place),
            column,
            available,
        } => match read_as(format, &column) {
            Some(to) => InputError::Value {
                place,
                detail: format!(
                    "{} writes `{column}`, which is read as `{to}` (as `sweeper score` reads \
                     it); name `{to}`",
                    format.writer()
                ),
                column,
            },
            None => InputError::MissingColumn {
                place: Some(place),
                column,
                available,
            },
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_and_a_benchmark_file_read_as_one_table() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("rows.csv");
        std::fs::write(&csv, "tp,tok_s,mean_ttft_ms\n1,900,120\n").unwrap();
        let runs = dir.path().join("runs.jsonl");
        std::fs::write(
            &runs,
            "# a comment line\n{\"backend\": \"sglang\", \"dataset_name\": \"random\", \
             \"request_rate\": Infinity, \"duration\": 2.0, \"output_throughput\": 500.0, \
             \"mean_ttft_ms\": 80.0}\n",
        )
        .unwrap();
        let options = ReadOptions {
            map: vec![("tok_s".to_owned(), "output_throughput_tok_s".to_owned())],
            ..ReadOptions::default()
        };
        let columns = [
            "output_throughput_tok_s".to_owned(),
            "mean_ttft_ms".to_owned(),
        ];
        let read = read_columns(&[csv.clone(), runs.clone()], &columns, &options).unwrap();
        assert_eq!(read.table.rows, 2);
        assert_eq!(read.table.data, [900.0, 120.0, 500.0, 80.0]);
        assert_eq!(
            read.formats,
            [
                (csv, InputFormat::Reports),
                (runs.clone(), InputFormat::Sglang)
            ]
        );
        // the request rate, Python's bare `Infinity`, is a number of the config
        let rate = read_columns(
            &[runs],
            &["request_rate".to_owned()],
            &ReadOptions::default(),
        )
        .unwrap();
        assert_eq!(rate.table.data, [f64::INFINITY]);
    }
}
