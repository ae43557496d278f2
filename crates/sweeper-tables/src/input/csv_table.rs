//! CSV: a header row, then data rows; lines starting with `#` are comments.

use super::stream::LineTracker;
use super::{InputError, Place, parse_number};
use std::collections::HashMap;
use std::io::{Cursor, Read, SeekFrom};
use std::path::Path;

/// The CSV reader's settings: a header row, `#` comment lines, every cell trimmed, every
/// row as long as the header.
fn builder(has_headers: bool) -> csv::ReaderBuilder {
    let mut b = csv::ReaderBuilder::new();
    b.comment(Some(b'#'))
        .has_headers(has_headers)
        .flexible(false)
        .trim(csv::Trim::All);
    b
}

type Reader<R> = csv::Reader<LineTracker<R>>;

fn reader<R: Read>(input: R) -> Reader<R> {
    builder(true).from_reader(LineTracker::new(input))
}

/// The 1-based line a record starts on, without forgetting anything (for errors).
fn line_at<R: Read>(rdr: &Reader<R>, pos: Option<&csv::Position>) -> Option<u64> {
    let lines = rdr.get_ref();
    Some(lines.line_at(lines.record_start(pos?.byte())))
}

/// Maps a csv crate error to ours, naming the line and row.
fn csv_error<R: Read>(path: &Path, rdr: &Reader<R>, err: csv::Error, row: usize) -> InputError {
    if err.is_io_error() {
        if let csv::ErrorKind::Io(source) = err.into_kind() {
            return InputError::Io {
                path: path.to_owned(),
                source,
            };
        }
        unreachable!("an I/O error's kind is Io");
    }
    match err.kind() {
        csv::ErrorKind::UnequalLengths {
            pos,
            expected_len,
            len,
        } => InputError::Ragged {
            place: Place {
                line: line_at(rdr, pos.as_ref()),
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
                    line: line_at(rdr, pos.as_ref()),
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
fn headers<R: Read>(path: &Path, rdr: &mut Reader<R>) -> Result<Vec<String>, InputError> {
    let names: Vec<String> = match rdr.headers() {
        Ok(headers) => headers.iter().map(str::to_owned).collect(),
        Err(e) => return Err(csv_error(path, rdr, e, 0)),
    };
    if names.is_empty() || names.iter().all(String::is_empty) {
        return Err(InputError::Empty {
            path: path.to_owned(),
            detail: "; a CSV needs a header row".to_owned(),
        });
    }
    // A column named twice would be read from one copy or the other depending on the
    // reader (score took the last, front the first): refuse it. One look-up per column, so
    // that a header of a million columns is checked in linear time.
    let mut first_at: HashMap<&str, usize> = HashMap::with_capacity(names.len());
    for (j, name) in names.iter().enumerate() {
        if let Some(&i) = first_at.get(name.as_str()) {
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
        first_at.insert(name, j);
    }
    Ok(names)
}

/// The position of each requested column in the header (whose names are distinct).
fn column_positions(headers: &[String], columns: &[String]) -> Result<Vec<usize>, InputError> {
    let at: HashMap<&str, usize> = headers
        .iter()
        .enumerate()
        .map(|(k, h)| (h.as_str(), k))
        .collect();
    columns
        .iter()
        .map(|c| {
            at.get(c.as_str())
                .copied()
                .ok_or_else(|| InputError::MissingColumn {
                    place: None,
                    column: c.clone(),
                    available: headers.join(", "),
                })
        })
        .collect()
}

/// Reads the named columns as numbers, appending them row by row to `data`; rows are
/// numbered from `first_row`. Returns the number of rows read.
pub(super) fn numeric_columns<R: Read>(
    path: &Path,
    input: R,
    columns: &[String],
    first_row: usize,
    data: &mut Vec<f64>,
) -> Result<usize, InputError> {
    let mut rdr = reader(input);
    let names = headers(path, &mut rdr)?;
    let positions = column_positions(&names, columns)?;
    let mut record = csv::ByteRecord::new();
    let mut row = first_row;
    loop {
        match rdr.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(csv_error(path, &rdr, e, row)),
        }
        // Lines are needed only for an error: the bytes kept are counted and forgotten a
        // megabyte at a time, not row by row.
        if rdr.get_ref().kept() >= 1 << 20
            && let Some(p) = record.position()
        {
            let at = rdr.get_ref().record_start(p.byte());
            rdr.get_mut().advance_to(at);
        }
        for (&at, name) in positions.iter().zip(columns) {
            let cell = std::str::from_utf8(&record[at]).unwrap_or("\u{fffd}");
            let x = parse_number(cell).map_err(|detail| InputError::Value {
                place: Place {
                    line: line_at(&rdr, record.position()),
                    row,
                },
                column: name.clone(),
                detail,
            })?;
            data.push(x);
        }
        row += 1;
    }
    Ok(row - first_row)
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
    let (names, ()) = for_each_text_row(
        path,
        bytes,
        0,
        |_| Ok(()),
        |(), _, _, row| {
            rows.push(TextRow {
                line: row.line,
                cells: row.cells.iter().map(str::to_owned).collect(),
            });
            Ok(())
        },
    )?;
    Ok((names, rows))
}

/// One CSV data row as `for_each_text_row` lends it: its 1-based line, where its bytes are,
/// and its cells.
pub(super) struct RecordRef<'a> {
    /// 1-based line of the row's first field.
    pub(super) line: Option<u64>,
    /// The row's first byte in the stream read (after a byte order mark).
    pub(super) offset: u64,
    /// The row's length in bytes, with its line break: [`record_at`] of those bytes reads it
    /// again.
    pub(super) len: u64,
    /// The row's cells.
    pub(super) cells: &'a csv::StringRecord,
}

/// Hands every CSV data row to `visit` (with what `on_header` made of the header, the
/// header, and the row number, counted from `first_row`) as it is read, reusing one record
/// buffer, so that a caller keeps only what it needs of each row; returns the header.
pub(super) fn for_each_text_row<R: Read, S>(
    path: &Path,
    input: R,
    first_row: usize,
    on_header: impl FnOnce(&[String]) -> Result<S, InputError>,
    mut visit: impl FnMut(&S, &[String], usize, RecordRef<'_>) -> Result<(), InputError>,
) -> Result<(Vec<String>, S), InputError> {
    let mut rdr = reader(input);
    let names = headers(path, &mut rdr)?;
    let state = on_header(&names)?;
    let mut record = csv::StringRecord::new();
    let mut row = first_row;
    loop {
        match rdr.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(csv_error(path, &rdr, e, row)),
        }
        let begun = record.position().map_or(0, csv::Position::byte);
        let offset = rdr.get_ref().record_start(begun);
        let line = rdr.get_mut().advance_to(offset);
        let len = rdr.position().byte().saturating_sub(offset);
        visit(
            &state,
            &names,
            row,
            RecordRef {
                line: Some(line),
                offset,
                len,
                cells: &record,
            },
        )?;
        row += 1;
    }
    Ok((names, state))
}

/// Reads data rows again from their bytes (a [`RecordRef`]'s `len` bytes at its `offset`),
/// with the settings of the first reading and one parser for all of them (building a CSV
/// parser costs more than parsing a row).
#[derive(Debug)]
pub(super) struct RecordReader {
    rdr: csv::Reader<Cursor<Vec<u8>>>,
    record: csv::StringRecord,
}

impl RecordReader {
    pub(super) fn new() -> Self {
        // Row lengths were checked on the first reading; the header is set so that no row
        // is taken for one.
        let mut rdr = builder(false)
            .flexible(true)
            .from_reader(Cursor::new(Vec::new()));
        rdr.set_byte_headers(csv::ByteRecord::new());
        RecordReader {
            rdr,
            record: csv::StringRecord::new(),
        }
    }

    /// The bytes of the next row to read: fill them, then [`read`](Self::read).
    pub(super) fn bytes(&mut self) -> &mut Vec<u8> {
        self.rdr.get_mut().get_mut()
    }

    /// Parses the row whose bytes were put in [`bytes`](Self::bytes).
    pub(super) fn read(&mut self, path: &Path) -> Result<&csv::StringRecord, InputError> {
        let changed = |detail: String| InputError::Format {
            path: path.to_owned(),
            detail: format!("a row read again {detail} (did the file change while it was read?)"),
        };
        // Back to the start of the new bytes, the parser's state reset.
        self.rdr
            .seek_raw(SeekFrom::Start(0), csv::Position::new())
            .map_err(|e| changed(format!("cannot be read: {e}")))?;
        match self.rdr.read_record(&mut self.record) {
            Ok(true) => Ok(&self.record),
            Ok(false) => Err(changed("is not there".to_owned())),
            Err(e) => Err(changed(format!("does not parse: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    fn cols(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[derive(Debug)]
    struct Table {
        rows: usize,
        data: Vec<f64>,
    }

    fn numeric_columns(path: &Path, bytes: &[u8], columns: &[String]) -> Result<Table, InputError> {
        let mut data = Vec::new();
        let rows = super::numeric_columns(path, bytes, columns, 0, &mut data)?;
        Ok(Table { rows, data })
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
    fn a_column_named_twice_is_found_in_a_wide_header() {
        // 20,000 distinct columns, then the 7th again, far from its first copy
        let mut header: Vec<String> = (0..20_000).map(|k| format!("c{k}")).collect();
        header.push("c6".to_owned());
        let text = format!("{}\n", header.join(","));
        let err = numeric_columns(Path::new("t.csv"), text.as_bytes(), &cols(&["c1"])).unwrap_err();
        assert!(
            err.to_string().contains("`c6` twice (columns 7 and 20001)"),
            "{err}"
        );
        // the first repeat is the one named, as the pairwise check named it
        let err = numeric_columns(Path::new("t.csv"), b"a,b,c,b,a\n1,2,3,4,5\n", &cols(&["c"]))
            .unwrap_err();
        assert!(
            err.to_string().contains("`b` twice (columns 2 and 4)"),
            "{err}"
        );
        // a wide header without repeats reads the columns asked for, wherever they are
        header.pop();
        let row: Vec<String> = (0..20_000).map(|k| k.to_string()).collect();
        let text = format!("{}\n{}\n", header.join(","), row.join(","));
        let t = numeric_columns(
            Path::new("t.csv"),
            text.as_bytes(),
            &cols(&["c19999", "c0", "c7"]),
        )
        .unwrap();
        assert_eq!(t.data, [19_999.0, 0.0, 7.0]);
    }

    #[test]
    fn a_finite_literal_too_large_for_a_number_names_its_row_and_column() {
        let text = b"x,y\n1,2\n3,1e400\n4,inf\n";
        let err = numeric_columns(Path::new("t.csv"), text, &cols(&["x", "y"])).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("line 3 (row 1), column `y`: number out of range: `1e400`"),
            "{err}"
        );
        let t = numeric_columns(Path::new("t.csv"), b"x\n-inf\nInfinity\n", &cols(&["x"])).unwrap();
        assert_eq!(t.data, [f64::NEG_INFINITY, f64::INFINITY]);
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

    /// Rows over a few megabytes, with comment and blank lines between them, ending in a
    /// faulty row: the lines must still count from the top.
    fn long_table(last: &str) -> (String, u64) {
        let mut text = String::from("# long\nx,y\n");
        let mut line = 2;
        for i in 0..200_000 {
            if i % 7 == 0 {
                text.push_str("# a comment, with a comma\n\n");
                line += 2;
            }
            let _ = writeln!(text, "{i},{}", i % 13);
            line += 1;
        }
        text.push_str(last);
        (text, line + 1)
    }

    #[test]
    fn lines_of_a_long_table_count_from_the_top() {
        let (text, line) = long_table("1,nan\n");
        let err = numeric_columns(Path::new("t.csv"), text.as_bytes(), &cols(&["y"])).unwrap_err();
        assert!(
            err.to_string().starts_with(&format!(
                "line {line} (row 200000), column `y`: value is NaN"
            )),
            "{err}"
        );
        let (text, line) = long_table("1,2,3\n");
        let err = numeric_columns(Path::new("t.csv"), text.as_bytes(), &cols(&["y"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("line {line} (row 200000): 3 fields where the header has 2")
        );
        let mut last = None;
        for_each_text_row(
            Path::new("t.csv"),
            text.as_bytes(),
            0,
            |_| Ok(()),
            |(), _, row, r| {
                last = Some((row, r.line));
                Ok(())
            },
        )
        .unwrap_err();
        assert_eq!(last, Some((199_999, Some(line - 1))));
    }

    #[test]
    fn a_row_read_again_from_its_bytes_is_the_same_row() {
        let text = "# c\n a , b \n\n# mid\n1,\"x\ny\"\r\n2, z \n3,w";
        let mut seen = Vec::new();
        let each = |(): &(), _: &[String], row, r: RecordRef<'_>| {
            let bytes = &text.as_bytes()[r.offset as usize..(r.offset + r.len) as usize];
            seen.push((row, r.line, bytes.to_vec(), r.cells.clone()));
            Ok(())
        };
        for_each_text_row(Path::new("t.csv"), text.as_bytes(), 7, |_| Ok(()), each).unwrap();
        let lines: Vec<_> = seen.iter().map(|s| (s.0, s.1)).collect();
        assert_eq!(lines, [(7, Some(5)), (8, Some(7)), (9, Some(8))]);
        let mut again = RecordReader::new();
        for (_, _, bytes, cells) in seen.iter().rev() {
            *again.bytes() = bytes.clone();
            assert_eq!(again.read(Path::new("t.csv")).unwrap(), cells);
        }
    }
}
