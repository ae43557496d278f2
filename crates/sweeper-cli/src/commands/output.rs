//! The output plumbing the data commands share (`front`, `score`, `plot`): input errors as
//! exit codes, notes on stderr, stdout that tolerates a closed pipe, exact numbers, JSON
//! strings, and the aligned table and CSV writers.

use super::{CliError, CliResult};
use std::borrow::Cow;
use std::io::{self, Write};
use sweeper_tables::input::InputError;

/// Maps an input error to the exit code: 2 for I/O, 1 for bad content.
pub(crate) fn input_error(err: &InputError) -> CliError {
    if err.is_io() {
        CliError::io(err.to_string())
    } else {
        CliError::invalid(err.to_string())
    }
}

/// Writes a line on stderr (diagnostics; stdout is data).
pub(crate) fn note(text: &str) {
    super::print_stderr(&format!("{text}\n"));
}

/// Streams data to stdout through a buffer; a closed pipe ends quietly with exit 0.
pub(crate) fn write_stdout(f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> CliResult {
    let mut out = io::BufWriter::with_capacity(1 << 16, io::stdout().lock());
    match f(&mut out).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(CliError {
            code: 0,
            message: String::new(),
        }),
        Err(e) => Err(CliError::io(format!("cannot write to stdout: {e}"))),
    }
}

/// A number exactly (shortest text that reads back to the same `f64`); `inf`, `-inf`.
pub(crate) fn exact(x: f64) -> String {
    sweeper_tables::csv_out::number(x)
}

/// A JSON encoding error as an I/O error, keeping the I/O kind (a closed pipe stays a
/// closed pipe, so that it exits 0).
pub(crate) fn json_io(e: serde_json::Error) -> io::Error {
    match e.io_error_kind() {
        Some(kind) => io::Error::from(kind),
        None => io::Error::other(e),
    }
}

/// Writes a number as JSON: a number when finite, else `"inf"` / `"-inf"`.
pub(crate) fn write_json_number(out: &mut dyn Write, x: f64) -> io::Result<()> {
    if x.is_finite() {
        serde_json::to_writer(&mut *out, &x).map_err(json_io)
    } else {
        write!(out, "\"{}\"", exact(x))
    }
}

/// A JSON string literal, DEL and C1 controls escaped too
/// ([`sweeper_engine::text::escape_json_controls`]).
pub(crate) fn json_string(s: &str) -> String {
    let json = serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""));
    sweeper_engine::text::escape_json_controls(&json)
}

/// Aligned columns (numbers right-aligned, text left-aligned, two spaces apart) whose
/// widths are learnt a row at a time, so that a table of millions of rows is written in two
/// passes over its rows (the first measures each row and forgets it, the second writes it)
/// instead of being held whole. Control characters in headers and cells (a CSV column
/// name, a report's label, a journal's parameter) are escaped
/// ([`sweeper_engine::text::escape_controls`]), so that a table cannot drive the terminal;
/// widths are those of the escaped text.
#[derive(Debug, Clone)]
pub(crate) struct TableLayout {
    widths: Vec<usize>,
    right: Vec<bool>,
}

impl TableLayout {
    /// A layout as wide as the headers; `right[k]` right-aligns column `k`.
    pub(crate) fn new(headers: &[String], right: &[bool]) -> Self {
        TableLayout {
            widths: headers.iter().map(|h| shown(h).chars().count()).collect(),
            right: right.to_vec(),
        }
    }

    /// Widens the columns to fit `row`'s cells (cells beyond the headers are not counted).
    pub(crate) fn fit(&mut self, row: &[String]) {
        for (w, cell) in self.widths.iter_mut().zip(row) {
            *w = (*w).max(shown(cell).chars().count());
        }
    }

    /// Widens column `k` to `width` characters.
    pub(crate) fn widen(&mut self, k: usize, width: usize) {
        if let Some(w) = self.widths.get_mut(k) {
            *w = (*w).max(width);
        }
    }

    /// Writes one line of cells (the header or a row), padded to the widths.
    pub(crate) fn write_row(&self, out: &mut dyn Write, cells: &[String]) -> io::Result<()> {
        let last = self.widths.len().saturating_sub(1);
        let mut text = String::new();
        for (k, cell) in cells.iter().enumerate() {
            let cell = shown(cell);
            let cell = cell.as_ref();
            let pad = self.widths[k].saturating_sub(cell.chars().count());
            if k > 0 {
                text.push_str("  ");
            }
            if self.right.get(k).copied().unwrap_or(false) {
                text.extend(std::iter::repeat_n(' ', pad));
                text.push_str(cell);
            } else {
                text.push_str(cell);
                if k < last {
                    text.extend(std::iter::repeat_n(' ', pad));
                }
            }
        }
        writeln!(out, "{}", text.trim_end())
    }
}

/// A cell as a table shows it: control characters escaped (the text itself when it has
/// none, as it almost always has, without a copy).
pub(crate) fn shown(cell: &str) -> Cow<'_, str> {
    if cell.chars().any(char::is_control) {
        Cow::Owned(sweeper_engine::text::escape_controls(cell))
    } else {
        Cow::Borrowed(cell)
    }
}

/// Writes CSV with a header row, through the one CSV writer (quoting by the `csv` crate,
/// every cell neutralised against formula injection).
pub(crate) fn write_csv(
    out: &mut dyn Write,
    headers: &[String],
    rows: impl Iterator<Item = Vec<String>>,
) -> io::Result<()> {
    sweeper_tables::csv_out::write_records(out, headers, rows)
}
