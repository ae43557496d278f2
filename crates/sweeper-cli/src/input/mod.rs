//! Readers of the tables `sweeper score` and `sweeper front` take: CSV (with `#` comment
//! lines), JSON Lines, a JSON array, and `NumPy` `.npy` (float64, C order, shape `(n, d)`).
//!
//! Every error names where the problem is: the 1-based file line and the 0-based data row
//! (the `index` printed in results), and the column. Rows count data only: comment lines,
//! the CSV header and blank JSON lines are not rows.

mod csv_table;
mod json;
mod npy;
mod reports;

pub use npy::{NpyMatrix, encode_npy, parse_npy, read_npy};
pub use reports::{
    ReportRow, for_each_report, parse_reports, parse_reports_with_notes, read_reports,
};

use std::fmt;
use std::path::{Path, PathBuf};

/// Where a value sits in an input file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// 1-based line of the file (`None` for binary formats).
    pub line: Option<u64>,
    /// 0-based data row (the `index` of results).
    pub row: usize,
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line} (row {})", self.row),
            None => write!(f, "row {}", self.row),
        }
    }
}

/// What can be wrong with an input file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The file could not be read (exit 2).
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file holds no data row.
    #[error("{}: no data rows{detail}", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
        /// More context (starts with `; ` when present).
        detail: String,
    },
    /// A CSV row with a different number of fields than the header.
    #[error("{place}: {found} fields where the header has {expected}")]
    Ragged {
        /// Where.
        place: Place,
        /// Fields in the header.
        expected: usize,
        /// Fields in this row.
        found: usize,
    },
    /// A requested column is not in the input.
    #[error("{}column `{column}` not found; the input has: {available}", place.map(|p| format!("{p}: ")).unwrap_or_default())]
    MissingColumn {
        /// Where (JSON Lines rows lack keys one at a time; a CSV header lacks it everywhere).
        place: Option<Place>,
        /// The column asked for.
        column: String,
        /// The columns present, comma-separated.
        available: String,
    },
    /// A value that should be a number is not one.
    #[error("{place}, column `{column}`: {detail}")]
    Value {
        /// Where.
        place: Place,
        /// The column or key.
        column: String,
        /// What is wrong (`value is NaN`, `not a number: "abc"`).
        detail: String,
    },
    /// Malformed JSON, CSV, or `.npy` structure.
    #[error("{}: {detail}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line when known.
        detail: String,
    },
}

impl InputError {
    /// Whether this is an I/O error (exit 2) rather than bad content (exit 1).
    pub fn is_io(&self) -> bool {
        matches!(self, InputError::Io { .. })
    }
}

/// The file formats a numeric table may come in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// Comma-separated values with a header row; `#` lines are comments.
    Csv,
    /// One JSON object per line.
    JsonLines,
    /// A JSON array of objects.
    JsonArray,
    /// `NumPy` `.npy`, float64.
    Npy,
}

/// Decides a file's format from its first bytes: the `.npy` magic, else the first
/// character that is not blank and not in a `#` comment line (`{` JSON Lines, `[` a JSON
/// array, anything else CSV).
pub fn sniff(bytes: &[u8]) -> TableFormat {
    if bytes.starts_with(npy::MAGIC) {
        return TableFormat::Npy;
    }
    let mut at_line_start = true;
    let mut in_comment = false;
    for &b in bytes {
        if in_comment {
            if b == b'\n' {
                in_comment = false;
                at_line_start = true;
            }
            continue;
        }
        match b {
            b'\n' => at_line_start = true,
            b' ' | b'\t' | b'\r' => {}
            0xEF | 0xBB | 0xBF if at_line_start => {} // a UTF-8 byte order mark
            b'#' if at_line_start => in_comment = true,
            b'{' => return TableFormat::JsonLines,
            b'[' => return TableFormat::JsonArray,
            _ => return TableFormat::Csv,
        }
    }
    TableFormat::Csv
}

/// The bytes after a UTF-8 byte-order mark, if they start with one (editors and Excel on
/// Windows write it; it is no part of the first header or JSON line).
pub(crate) fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// Reads a whole file; the path `-` reads standard input.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, InputError> {
    let io = |source| InputError::Io {
        path: path.to_owned(),
        source,
    };
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes).map_err(io)?;
        return Ok(bytes);
    }
    std::fs::read(path).map_err(io)
}

/// A numeric matrix read from some columns of a table: row-major, `columns.len()` wide.
#[derive(Debug, Clone, PartialEq)]
pub struct NumericTable {
    /// The column names, in the order asked for.
    pub columns: Vec<String>,
    /// Row-major values, `rows * columns.len()` of them; never NaN.
    pub data: Vec<f64>,
    /// Number of rows.
    pub rows: usize,
}

/// Reads the named columns of a CSV, JSON Lines / JSON array or `.npy` file as numbers.
///
/// A `.npy` file's columns are named `0` .. `d-1`. Every requested column must exist and
/// hold a number in every row (`inf`, `-inf` are numbers; NaN and empty cells are errors);
/// an input with no data row is an error.
pub fn read_numeric_columns(path: &Path, columns: &[String]) -> Result<NumericTable, InputError> {
    parse_numeric_columns(path, &read_bytes(path)?, columns)
}

/// [`read_numeric_columns`] of bytes already in memory; `path` only names them in errors.
pub fn parse_numeric_columns(
    path: &Path,
    bytes: &[u8],
    columns: &[String],
) -> Result<NumericTable, InputError> {
    let bytes = without_bom(bytes);
    let table = match sniff(bytes) {
        TableFormat::Npy => npy::select_columns(path, bytes, columns)?,
        TableFormat::Csv => csv_table::numeric_columns(path, bytes, columns)?,
        TableFormat::JsonLines => json::numeric_columns_lines(path, bytes, columns)?,
        TableFormat::JsonArray => json::numeric_columns_array(path, bytes, columns)?,
    };
    if table.rows == 0 {
        return Err(InputError::Empty {
            path: path.to_owned(),
            detail: String::new(),
        });
    }
    Ok(table)
}

/// Parses one text cell as a number: decimal, exponent, `inf` / `-inf` / `infinity` in any
/// case. NaN and anything else is an error message.
pub(crate) fn parse_number(text: &str) -> Result<f64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty cell where a number is needed".to_owned());
    }
    match t.parse::<f64>() {
        Ok(x) if x.is_nan() => {
            Err("value is NaN; fronts and rankings need comparable numbers".to_owned())
        }
        Ok(x) => Ok(x),
        Err(_) => Err(format!("not a number: {t:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniff_formats() {
        assert_eq!(sniff(b"# c\n# d\n{\"a\":1}\n"), TableFormat::JsonLines);
        assert_eq!(sniff(b"  [ {} ]"), TableFormat::JsonArray);
        assert_eq!(sniff(b"# x,{\na,b\n1,2\n"), TableFormat::Csv);
        assert_eq!(sniff(b"\x93NUMPY\x01\x00"), TableFormat::Npy);
        assert_eq!(sniff(b""), TableFormat::Csv);
    }

    #[test]
    fn a_byte_order_mark_is_skipped_in_every_text_format() {
        let cols = ["a".to_owned()];
        for text in [
            "\u{feff}a,b\n1,2\n",
            "\u{feff}{\"a\": 1}\n",
            "\u{feff}[{\"a\": 1}]",
        ] {
            let t = parse_numeric_columns(Path::new("t"), text.as_bytes(), &cols)
                .unwrap_or_else(|e| panic!("{e}: {text:?}"));
            assert_eq!(t.data, [1.0], "{text:?}");
        }
        let jsonl =
            "\u{feff}{\"config\": {\"tp\": 1}, \"report\": {\"output_throughput_tok_s\": 5}}\n";
        let rows = parse_reports(Path::new("t"), jsonl.as_bytes()).unwrap();
        assert_eq!(rows.len(), 1);
        let csv = "\u{feff}tp,output_throughput_tok_s\n1,5\n";
        let rows = parse_reports(Path::new("t"), csv.as_bytes()).unwrap();
        assert_eq!(rows[0].config.get("tp"), Some(&serde_json::json!(1)));
    }

    #[test]
    fn parse_number_accepts_infinities_rejects_nan() {
        assert_eq!(parse_number(" 1.5 "), Ok(1.5));
        assert_eq!(parse_number("-inf"), Ok(f64::NEG_INFINITY));
        assert_eq!(parse_number("Infinity"), Ok(f64::INFINITY));
        assert_eq!(parse_number("1e3"), Ok(1000.0));
        assert!(parse_number("NaN").unwrap_err().contains("NaN"));
        assert!(parse_number("abc").unwrap_err().contains("\"abc\""));
        assert!(parse_number("").unwrap_err().contains("empty"));
    }

    #[test]
    fn place_display() {
        let p = Place {
            line: Some(12),
            row: 3,
        };
        assert_eq!(p.to_string(), "line 12 (row 3)");
        let p = Place { line: None, row: 3 };
        assert_eq!(p.to_string(), "row 3");
    }
}
