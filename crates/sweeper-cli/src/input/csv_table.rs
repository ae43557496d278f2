//! CSV: a header row, then data rows; lines starting with `#` are comments.

use super::{InputError, NumericTable, Place, parse_number};
use std::path::Path;

fn reader(bytes: &[u8]) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .has_headers(true)
        .flexible(false)
        .trim(csv::Trim::All)
        .from_reader(bytes)
}

/// The byte where a record's text starts. The csv crate's position of a record is where it
/// began reading, which can be the blank or `#` lines before it (and its own line count
/// skips blank lines), so lines are counted from the bytes.
fn record_start(bytes: &[u8], pos: &csv::Position) -> usize {
    let mut at = usize::try_from(pos.byte())
        .unwrap_or(usize::MAX)
        .min(bytes.len());
    loop {
        match bytes.get(at) {
            Some(b'\n' | b'\r') => at += 1,
            Some(b'#') => {
                while at < bytes.len() && bytes[at] != b'\n' {
                    at += 1;
                }
            }
            _ => return at,
        }
    }
}

/// The 1-based line a record starts on.
#[allow(clippy::naive_bytecount)] // one pass per error; not worth the bytecount crate
fn line_at(bytes: &[u8], pos: Option<&csv::Position>) -> Option<u64> {
    let byte = record_start(bytes, pos?);
    Some(bytes[..byte].iter().filter(|&&b| b == b'\n').count() as u64 + 1)
}

/// Counts lines forward as rows are read (positions only grow), so that every row's line
/// costs one pass over the file in total.
struct LineCounter<'a> {
    bytes: &'a [u8],
    at: usize,
    line: u64,
}

impl LineCounter<'_> {
    #[allow(clippy::naive_bytecount)] // one pass over the file in total
    fn line_of(&mut self, pos: Option<&csv::Position>) -> Option<u64> {
        let byte = record_start(self.bytes, pos?);
        if byte < self.at {
            return line_at(self.bytes, pos);
        }
        self.line += self.bytes[self.at..byte]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64;
        self.at = byte;
        Some(self.line)
    }
}

/// Maps a csv crate error to ours, naming the line and row.
fn csv_error(path: &Path, bytes: &[u8], err: &csv::Error, row: usize) -> InputError {
    match err.kind() {
        csv::ErrorKind::UnequalLengths {
            pos,
            expected_len,
            len,
        } => InputError::Ragged {
            place: Place {
                line: line_at(bytes, pos.as_ref()),
                row,
            },
            expected: *expected_len as usize,
            found: *len as usize,
        },
        csv::ErrorKind::Utf8 { pos, err } => InputError::Format {
            path: path.to_owned(),
            detail: format!(
                "{}: invalid UTF-8 ({err})",
                Place {
                    line: line_at(bytes, pos.as_ref()),
                    row
                }
            ),
        },
        _ => InputError::Format {
            path: path.to_owned(),
            detail: err.to_string(),
        },
    }
}

/// The header of a CSV, trimmed.
fn headers(
    path: &Path,
    bytes: &[u8],
    rdr: &mut csv::Reader<&[u8]>,
) -> Result<Vec<String>, InputError> {
    let headers = rdr.headers().map_err(|e| csv_error(path, bytes, &e, 0))?;
    let names: Vec<String> = headers.iter().map(str::to_owned).collect();
    if names.is_empty() || names.iter().all(String::is_empty) {
        return Err(InputError::Empty {
            path: path.to_owned(),
            detail: "; a CSV needs a header row".to_owned(),
        });
    }
    // A column named twice would be read from one copy or the other depending on the
    // reader (score took the last, front the first): refuse it.
    for (j, name) in names.iter().enumerate() {
        if let Some(i) = names[..j].iter().position(|n| n == name) {
            return Err(InputError::Format {
                path: path.to_owned(),
                detail: format!(
                    "the header names column {} twice (columns {} and {}); rename or drop one",
                    crate::text::quote(name),
                    i + 1,
                    j + 1
                ),
            });
        }
    }
    Ok(names)
}

/// The position of each requested column in the header.
fn column_positions(headers: &[String], columns: &[String]) -> Result<Vec<usize>, InputError> {
    columns
        .iter()
        .map(|c| {
            headers
                .iter()
                .position(|h| h == c)
                .ok_or_else(|| InputError::MissingColumn {
                    place: None,
                    column: c.clone(),
                    available: headers.join(", "),
                })
        })
        .collect()
}

/// Reads the named columns as numbers.
pub(super) fn numeric_columns(
    path: &Path,
    bytes: &[u8],
    columns: &[String],
) -> Result<NumericTable, InputError> {
    let mut rdr = reader(bytes);
    let names = headers(path, bytes, &mut rdr)?;
    let positions = column_positions(&names, columns)?;
    let mut data = Vec::new();
    let mut record = csv::ByteRecord::new();
    let mut row = 0;
    loop {
        match rdr.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(csv_error(path, bytes, &e, row)),
        }
        for (&at, name) in positions.iter().zip(columns) {
            let cell = std::str::from_utf8(&record[at]).unwrap_or("\u{fffd}");
            let x = parse_number(cell).map_err(|detail| InputError::Value {
                place: Place {
                    line: line_at(bytes, record.position()),
                    row,
                },
                column: name.clone(),
                detail,
            })?;
            data.push(x);
        }
        row += 1;
    }
    Ok(NumericTable {
        columns: columns.to_vec(),
        data,
        rows: row,
    })
}

/// One CSV data row as text cells, with its 1-based line.
#[cfg(test)]
pub(super) struct TextRow {
    pub(super) line: Option<u64>,
    pub(super) cells: Vec<String>,
}

/// Reads a whole CSV as text: the header and every data row.
#[cfg(test)]
pub(super) fn text_rows(
    path: &Path,
    bytes: &[u8],
) -> Result<(Vec<String>, Vec<TextRow>), InputError> {
    let mut rows = Vec::new();
    let names = for_each_text_row(path, bytes, |_, _, row| {
        rows.push(TextRow {
            line: row.line,
            cells: row.cells.iter().map(str::to_owned).collect(),
        });
        Ok(())
    })?;
    Ok((names, rows))
}

/// One CSV data row as `for_each_text_row` lends it: its 1-based line and its cells.
pub(super) struct RecordRef<'a> {
    /// 1-based line of the row's first field.
    pub(super) line: Option<u64>,
    /// The row's cells.
    pub(super) cells: &'a csv::StringRecord,
}

/// Hands every CSV data row to `visit` (with the header and its 0-based row number) as it
/// is read, reusing one record buffer, so that a caller keeps only what it needs of each
/// row; returns the header.
pub(super) fn for_each_text_row(
    path: &Path,
    bytes: &[u8],
    mut visit: impl FnMut(&[String], usize, RecordRef<'_>) -> Result<(), InputError>,
) -> Result<Vec<String>, InputError> {
    let mut rdr = reader(bytes);
    let names = headers(path, bytes, &mut rdr)?;
    let mut lines = LineCounter {
        bytes,
        at: 0,
        line: 1,
    };
    let mut record = csv::StringRecord::new();
    let mut row = 0;
    loop {
        match rdr.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(csv_error(path, bytes, &e, row)),
        }
        let line = lines.line_of(record.position());
        visit(
            &names,
            row,
            RecordRef {
                line,
                cells: &record,
            },
        )?;
        row += 1;
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn reads_selected_columns_skipping_comments() {
        let text = b"# source: test\nname,x,y\n# mid comment\na,1,2\nb, 3 ,-inf\n";
        let t = numeric_columns(Path::new("t.csv"), text, &cols(&["y", "x"])).unwrap();
        assert_eq!(t.rows, 2);
        assert_eq!(t.data, [2.0, 1.0, f64::NEG_INFINITY, 3.0]);
    }

    #[test]
    fn ragged_row_names_line_and_row() {
        let text = b"# c\nx,y\n1,2\n3\n";
        let err = numeric_columns(Path::new("t.csv"), text, &cols(&["x"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 4 (row 1): 1 fields where the header has 2"
        );
    }

    #[test]
    fn nan_and_text_name_row_and_column() {
        let text = b"x,y\n1,2\n3,nan\n";
        let err = numeric_columns(Path::new("t.csv"), text, &cols(&["x", "y"])).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("line 3 (row 1), column `y`: value is NaN"),
            "{err}"
        );
        let text = b"x,y\n1,two\n";
        let err = numeric_columns(Path::new("t.csv"), text, &cols(&["y"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 2 (row 0), column `y`: not a number: \"two\""
        );
    }

    #[test]
    fn missing_column_lists_the_header() {
        let err = numeric_columns(Path::new("t.csv"), b"x,y\n1,2\n", &cols(&["z"])).unwrap_err();
        assert_eq!(err.to_string(), "column `z` not found; the input has: x, y");
    }

    #[test]
    fn a_column_named_twice_is_an_error_naming_it() {
        let bytes = b"a,b,a\n1,2,3\n";
        let err = numeric_columns(Path::new("t.csv"), bytes, &cols(&["a"])).unwrap_err();
        let shown = err.to_string();
        assert!(shown.contains("`a` twice (columns 1 and 3)"), "{shown}");
        assert!(text_rows(Path::new("t.csv"), bytes).is_err());
    }

    #[test]
    fn empty_and_header_only() {
        let err =
            numeric_columns(Path::new("t.csv"), b"# only comments\n", &cols(&["x"])).unwrap_err();
        assert!(matches!(err, InputError::Empty { .. }), "{err}");
        let t = numeric_columns(Path::new("t.csv"), b"x\n", &cols(&["x"])).unwrap();
        assert_eq!(t.rows, 0);
    }

    #[test]
    fn text_rows_keep_lines() {
        let (h, rows) = text_rows(Path::new("t.csv"), b"# c\na,b\n1,x\n\n2,y\n").unwrap();
        assert_eq!(h, ["a", "b"]);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].line, Some(5));
        assert_eq!(rows[1].cells, ["2", "y"]);
    }
}
