//! Readers of the tables `sweeper score` and `sweeper front` take: CSV (with `#` comment
//! lines), JSON Lines, a JSON array, and `NumPy` `.npy` (float64, C order, shape `(n, d)`).
//!
//! Every error names where the problem is: the 1-based file line and the 0-based data row
//! (the `index` printed in results), and the column. Rows count data only: comment lines,
//! the CSV header and blank JSON lines are not rows.
//!
//! Text inputs are read as streams, a row at a time: what a reader keeps is what its caller
//! keeps of each row (a `.npy` matrix is read whole; it is its numbers). Several inputs read
//! as one table (the shards of an array job: [`read_numeric_tables`], [`ReportTable`])
//! number their rows on across the inputs, in the order given; an error then names the
//! file, the line in that file and the row in the whole table.
//!
//! Nothing is changed silently: a CSV number too large for an `f64` (`1e400`) is refused as
//! a JSON one is, not read as infinity (`inf` / `-inf` written as such are numbers); a CSV
//! header that names a column twice and a JSON object that names a key twice (at any
//! depth) are refused, not read from one copy. Every check is linear in the input (a
//! header of a million columns is checked with one hash look-up per column).

mod adjust;
mod bench;
mod columns;
mod csv_table;
mod json;
mod npy;
mod reports;
mod row;
mod stream;

pub use adjust::{Gpus, InputFormat, ReadOptions, TPOT};
pub use columns::{ColumnsRead, read_columns};

pub use npy::{NpyMatrix, encode_npy, parse_npy, read_npy};
pub use reports::{
    Fetch, ReportTable, RowAt, for_each_report, parse_reports, parse_reports_with_notes,
    read_reports,
};
pub use row::ReportRow;

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Seek};
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
    /// A fault in one of several inputs read as one table, whose own message does not name
    /// the file: this one does (`b.csv: line 4 (row 21), column ...`).
    #[error("{}: {error}", path.display())]
    InFile {
        /// The input the fault is in.
        path: PathBuf,
        /// The fault (its row counted across the inputs, its line in this one).
        error: Box<InputError>,
    },
    /// A key to rename (`--map FROM=TO`) that no input has.
    #[error("map {from}={to}: no input has a column or key `{from}`; the input has: {available}")]
    UnknownKey {
        /// The key asked for.
        from: String,
        /// The name it was to be read as.
        to: String,
        /// The columns and keys present, comma-separated.
        available: String,
    },
    /// Several inputs read as one table, none of them with a data row.
    #[error("no data rows in any of the {} inputs ({})", paths.len(), list_paths(paths))]
    NoRows {
        /// The inputs.
        paths: Vec<PathBuf>,
    },
}

fn list_paths(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(", ")
}

impl InputError {
    /// Whether this is an I/O error (exit 2) rather than bad content (exit 1).
    pub fn is_io(&self) -> bool {
        match self {
            InputError::Io { .. } => true,
            InputError::InFile { error, .. } => error.is_io(),
            _ => false,
        }
    }

    /// This fault, named by the file `path` it is in when its message does not say (one
    /// input of several).
    pub(crate) fn in_file(self, path: &Path) -> InputError {
        match self {
            InputError::Ragged { .. }
            | InputError::MissingColumn { .. }
            | InputError::Value { .. } => InputError::InFile {
                path: path.to_owned(),
                error: Box::new(self),
            },
            named => named,
        }
    }
}

/// The error of a second `-` among several inputs.
pub(crate) fn stdin_twice() -> InputError {
    InputError::Io {
        path: PathBuf::from("-"),
        source: io::Error::new(
            io::ErrorKind::InvalidInput,
            "standard input can be read once; give `-` at most once",
        ),
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
    sniff_prefix(bytes, true).unwrap_or(TableFormat::Csv)
}

/// [`sniff`] of a file's first bytes, `eof` when they are all of it; `None` when more bytes
/// are needed to decide.
pub(crate) fn sniff_prefix(bytes: &[u8], eof: bool) -> Option<TableFormat> {
    if bytes.starts_with(npy::MAGIC) {
        return Some(TableFormat::Npy);
    }
    if !eof && bytes.len() < npy::MAGIC.len() && npy::MAGIC.starts_with(bytes) {
        return None;
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
            b'{' => return Some(TableFormat::JsonLines),
            b'[' => return Some(TableFormat::JsonArray),
            _ => return Some(TableFormat::Csv),
        }
    }
    eof.then_some(TableFormat::Csv)
}

/// Whether the rest of `reader` is UTF-8 text (read to its end, a piece at a time).
pub fn is_utf8(reader: impl Read) -> io::Result<bool> {
    stream::utf8_fault_after(reader, 0).map(|fault| fault.is_none())
}

/// Opens an input to read it once, as a stream; `-` is standard input.
pub fn open_input(path: &Path) -> Result<Box<dyn Read>, InputError> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(io::stdin().lock()));
    }
    match File::open(path) {
        Ok(file) => Ok(Box::new(file)),
        Err(source) => Err(InputError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// Opens an input to read it more than once. Standard input (`-`) and anything else that
/// is not a regular file (a named pipe, `<(zcat rows.csv.gz)`) are copied to a temporary
/// file (deleted when it is closed), since a pipe cannot be read twice.
pub fn open_seekable(path: &Path) -> Result<File, InputError> {
    let io = |source| InputError::Io {
        path: path.to_owned(),
        source,
    };
    let spool = |input: &mut dyn Read| -> io::Result<File> {
        let mut spool = tempfile::tempfile()?;
        io::copy(input, &mut spool)?;
        spool.rewind()?;
        Ok(spool)
    };
    if path.as_os_str() == "-" {
        return spool(&mut io::stdin().lock()).map_err(io);
    }
    let mut file = File::open(path).map_err(io)?;
    if file.metadata().map_err(io)?.is_file() {
        Ok(file)
    } else {
        spool(&mut file).map_err(io)
    }
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
/// an input with no data row is an error. The path `-` reads standard input.
pub fn read_numeric_columns(path: &Path, columns: &[String]) -> Result<NumericTable, InputError> {
    read_numeric_tables(&[path.to_owned()], columns).map(|(table, _)| table)
}

/// [`read_numeric_columns`] of several inputs read as one table (any mix of formats), rows
/// numbered on across them in order; with the notes for people: each input without data
/// rows (skipped when there are several; the table needs one row somewhere). Every input
/// needs the named columns; what else it has does not matter. `-` may be given once. A
/// benchmark's result file is read as `sweeper score` reads it ([`read_columns`] with the
/// default options).
pub fn read_numeric_tables(
    paths: &[PathBuf],
    columns: &[String],
) -> Result<(NumericTable, Vec<String>), InputError> {
    read_columns(paths, columns, &ReadOptions::default()).map(|read| (read.table, read.notes))
}

/// [`read_numeric_columns`] of bytes already in memory; `path` only names them in errors.
pub fn parse_numeric_columns(
    path: &Path,
    bytes: &[u8],
    columns: &[String],
) -> Result<NumericTable, InputError> {
    let mut data = Vec::new();
    let rows = numeric_input(path, bytes, columns, 0, &mut data)?;
    if rows == 0 {
        return Err(InputError::Empty {
            path: path.to_owned(),
            detail: String::new(),
        });
    }
    Ok(NumericTable {
        columns: columns.to_vec(),
        data,
        rows,
    })
}

/// Reads the named columns of one input, appending its rows (numbered from `first_row`) to
/// `data`; returns how many rows it has.
pub(super) fn numeric_input<R: Read>(
    path: &Path,
    input: R,
    columns: &[String],
    first_row: usize,
    data: &mut Vec<f64>,
) -> Result<usize, InputError> {
    let mut h = stream::head(path, input)?;
    match h.format {
        TableFormat::Npy => {
            let mut bytes = Vec::new();
            h.reader
                .read_to_end(&mut bytes)
                .map_err(|source| InputError::Io {
                    path: path.to_owned(),
                    source,
                })?;
            let table = npy::select_columns(path, &bytes, columns, first_row)?;
            if data.is_empty() {
                *data = table.data;
            } else {
                data.extend_from_slice(&table.data);
            }
            Ok(table.rows)
        }
        TableFormat::Csv => csv_table::numeric_columns(path, h.reader, columns, first_row, data),
        TableFormat::JsonLines => {
            json::numeric_columns_lines(path, h.reader, columns, first_row, data)
        }
        TableFormat::JsonArray => {
            json::numeric_columns_array(path, h.reader, columns, first_row, data)
        }
    }
}

/// Parses one text cell as a number: decimal, exponent, `inf` / `-inf` / `infinity` in any
/// case. NaN and anything else is an error message, and so is a finite literal too large
/// for an `f64` (`1e400`): read as infinity it would win every ranking and front, and a
/// JSON number that large is refused by the JSON reader too. An infinity is only ever
/// written as one.
pub(crate) fn parse_number(text: &str) -> Result<f64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty cell where a number is needed".to_owned());
    }
    match t.parse::<f64>() {
        Ok(x) if x.is_nan() => {
            Err("value is NaN; fronts and rankings need comparable numbers".to_owned())
        }
        Ok(x) if x.is_infinite() && !names_infinity(t) => Err(format!(
            "number out of range: {} is beyond the largest finite number (about 1.8e308); \
             write `inf` or `-inf` for an unbounded value",
            crate::text::quote(t)
        )),
        Ok(x) => Ok(x),
        Err(_) => Err(format!("not a number: {t:?}")),
    }
}

/// Whether a literal that parses to an infinity spells it (`inf`, `-Infinity`, ...) rather
/// than overflowing to it.
fn names_infinity(literal: &str) -> bool {
    let unsigned = literal.strip_prefix(['+', '-']).unwrap_or(literal);
    unsigned.eq_ignore_ascii_case("inf") || unsigned.eq_ignore_ascii_case("infinity")
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
    fn parse_number_refuses_a_finite_literal_that_overflows() {
        for spelled in [
            "inf",
            "+INF",
            "-inf",
            "Infinity",
            "-infinity",
            " +Infinity ",
        ] {
            assert!(parse_number(spelled).unwrap().is_infinite(), "{spelled}");
        }
        for huge in ["1e400", "-1e400", "2e308", "1.8e308", "+1E999"] {
            let err = parse_number(huge).unwrap_err();
            assert!(err.starts_with("number out of range: `"), "{huge}: {err}");
            assert!(err.contains("write `inf` or `-inf`"), "{err}");
        }
        assert_eq!(parse_number("1.7976931348623157e308"), Ok(f64::MAX));
        assert_eq!(parse_number("-1.7e308"), Ok(-1.7e308));
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
