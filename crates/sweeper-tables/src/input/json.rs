//! JSON Lines (one object per line; blank and `#` lines skipped) and JSON arrays of objects,
//! each read as a stream: a row at a time, never the whole file.
//!
//! What is reported first when an input has several faults is what a reader of the whole
//! file would have met first: invalid UTF-8 anywhere, then (JSON arrays, and JSON Lines read
//! for `sweeper front`) invalid JSON anywhere, then the first bad row.

use super::stream::{Utf8Check, not_utf8, utf8_detail, utf8_fault_after};
use super::{InputError, Place, parse_number};
use serde::Deserialize;
use serde::de::{Deserializer as _, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Where a JSON Lines row's bytes are in the stream read (after a byte order mark).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span {
    /// First byte of the line.
    pub(super) offset: u64,
    /// Bytes of the line, with its line break.
    pub(super) len: u64,
}

/// When a row's own fault (not its JSON) is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RowFaults {
    /// At once, in line order with invalid JSON (`sweeper score`).
    InLineOrder,
    /// After every line has been checked to be JSON (`sweeper front`: its reader once
    /// parsed every line before looking at any).
    AfterSyntax,
}

/// A JSON value whose objects name each key once, at every depth. `serde_json` keeps the
/// last of two equal keys, so that `{"x": 1, "x": 1e12}` would silently read 1e12; a CSV
/// header that names a column twice is refused, and so is this (with the key).
pub(super) struct Unique(pub(super) Value);

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_any(UniqueVisitor).map(Unique)
    }
}

/// Builds a [`Value`] as `serde_json`'s own visitor does, but refuses a repeated key.
struct UniqueVisitor;

impl<'de> Visitor<'de> for UniqueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, de: D) -> Result<Value, D::Error> {
        Unique::deserialize(de).map(|u| u.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(Unique(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Unique(value) = map.next_value()?;
            if object.contains_key(&key) {
                return Err(A::Error::custom(format_args!(
                    "an object names the key {} twice; keep one of the two (a reader would \
                     take either value)",
                    crate::text::quote(&key)
                )));
            }
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// Parses one JSON text as a [`Unique`] value.
pub(super) fn unique_from_str(text: &str) -> serde_json::Result<Value> {
    serde_json::from_str::<Unique>(text).map(|u| u.0)
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> InputError + '_ {
    move |source| InputError::Io {
        path: path.to_owned(),
        source,
    }
}

fn invalid_json(path: &Path, place: Option<Place>, e: &serde_json::Error) -> InputError {
    InputError::Format {
        path: path.to_owned(),
        detail: match place {
            Some(place) => format!("{place}: invalid JSON: {e}"),
            None => format!("invalid JSON: {e}"),
        },
    }
}

/// `err`, unless the rest of `reader` (from text index `start`) holds invalid UTF-8: that
/// is reported first.
fn unless_utf8_fault<R: Read>(path: &Path, reader: R, start: u64, err: InputError) -> InputError {
    match utf8_fault_after(reader, start) {
        Ok(Some(detail)) => not_utf8(path, &detail),
        Ok(None) => err,
        Err(source) => io_error(path)(source),
    }
}

/// Hands every JSON Lines row to `visit` as it is parsed (rows numbered from `first_row`),
/// with where its bytes are, so that a caller keeps only what it needs of each row. Returns
/// the number of rows.
pub(super) fn for_each_line<R: Read>(
    path: &Path,
    input: R,
    first_row: usize,
    faults: RowFaults,
    mut visit: impl FnMut(Place, Value, Span) -> Result<(), InputError>,
) -> Result<usize, InputError> {
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut bytes = Vec::new();
    let mut offset = 0_u64;
    let mut line = 0_u64;
    let mut row = first_row;
    let mut held: Option<InputError> = None;
    loop {
        bytes.clear();
        let n = reader
            .read_until(b'\n', &mut bytes)
            .map_err(io_error(path))?;
        if n == 0 {
            break;
        }
        line += 1;
        let span = Span {
            offset,
            len: n as u64,
        };
        offset += n as u64;
        let text = std::str::from_utf8(&bytes)
            .map_err(|e| not_utf8(path, &utf8_detail(&e, span.offset)))?;
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let place = Place {
            line: Some(line),
            row,
        };
        row += 1;
        let value: Value = match unique_from_str(trimmed) {
            Ok(v) => v,
            Err(e) => {
                let err = invalid_json(path, Some(place), &e);
                return Err(unless_utf8_fault(path, reader, offset, err));
            }
        };
        if held.is_some() {
            continue;
        }
        if let Err(err) = visit(place, value, span) {
            match faults {
                RowFaults::InLineOrder => {
                    return Err(unless_utf8_fault(path, reader, offset, err));
                }
                RowFaults::AfterSyntax => held = Some(err),
            }
        }
    }
    match held {
        Some(err) => Err(err),
        None => Ok(row - first_row),
    }
}

/// Reads one JSON Lines row again from its bytes (a [`Span`]).
pub(super) fn line_at(path: &Path, bytes: &[u8]) -> Result<Value, InputError> {
    let text = std::str::from_utf8(bytes).map_err(|e| not_utf8(path, &utf8_detail(&e, 0)))?;
    unique_from_str(text.trim()).map_err(|e| InputError::Format {
        path: path.to_owned(),
        detail: format!("a row read again does not parse (did the file change?): {e}"),
    })
}

/// Streams the elements of the top-level JSON array to a visitor; anything else is parsed
/// to its end (so that invalid JSON is found) and noted.
struct Elements<'a> {
    first_row: usize,
    count: usize,
    visit: &'a mut dyn FnMut(Place, Value) -> Result<(), InputError>,
    /// The first row the visitor refused (later rows are parsed, not visited).
    held: Option<InputError>,
    not_an_array: bool,
}

impl<'de> Visitor<'de> for &mut Elements<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON array of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(Unique(value)) = seq.next_element::<Unique>()? {
            let place = Place {
                line: None,
                row: self.first_row + self.count,
            };
            self.count += 1;
            if self.held.is_none()
                && let Err(e) = (self.visit)(place, value)
            {
                self.held = Some(e);
            }
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<String, Value>()?.is_some() {}
        self.not_an_array = true;
        Ok(())
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        self.not_an_array = true;
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        self.not_an_array = true;
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        self.not_an_array = true;
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        self.not_an_array = true;
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        self.not_an_array = true;
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.not_an_array = true;
        Ok(())
    }
}

/// Hands every element of a JSON array to `visit` as it is parsed (rows numbered from
/// `first_row`; an element has no line). Returns the number of rows.
pub(super) fn for_each_element<R: Read>(
    path: &Path,
    input: R,
    first_row: usize,
    mut visit: impl FnMut(Place, Value) -> Result<(), InputError>,
) -> Result<usize, InputError> {
    let mut check = Utf8Check::new(input, 0);
    let mut elements = Elements {
        first_row,
        count: 0,
        visit: &mut visit,
        held: None,
        not_an_array: false,
    };
    let parsed = {
        let mut de = serde_json::Deserializer::from_reader(BufReader::new(&mut check));
        de.deserialize_any(&mut elements).and_then(|()| de.end())
    };
    let fault = match parsed {
        Err(e) if e.is_io() => return Err(io_error(path)(e.into())),
        Err(e) => Some(invalid_json(path, None, &e)),
        Ok(()) if elements.not_an_array => Some(InputError::Format {
            path: path.to_owned(),
            detail: "expected a JSON array of objects".to_owned(),
        }),
        Ok(()) => elements.held.take(),
    };
    match fault {
        None => Ok(elements.count),
        Some(err) => match check.finish() {
            Ok(Some(detail)) => Err(not_utf8(path, &detail)),
            Ok(None) => Err(err),
            Err(source) => Err(io_error(path)(source)),
        },
    }
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

/// The named keys of one row as numbers, appended to `data`.
fn numeric_row(
    path: &Path,
    place: Place,
    value: &Value,
    columns: &[String],
    data: &mut Vec<f64>,
) -> Result<(), InputError> {
    let Value::Object(object) = value else {
        return Err(InputError::Format {
            path: path.to_owned(),
            detail: format!("{place}: expected a JSON object of column values"),
        });
    };
    for c in columns {
        let v = object.get(c).ok_or_else(|| InputError::MissingColumn {
            place: Some(place),
            column: c.clone(),
            available: object.keys().cloned().collect::<Vec<_>>().join(", "),
        })?;
        data.push(number(place, c, v)?);
    }
    Ok(())
}

/// Reads the named keys of every JSON Lines object as numbers, appending them to `data`;
/// returns the number of rows.
pub(super) fn numeric_columns_lines<R: Read>(
    path: &Path,
    input: R,
    columns: &[String],
    first_row: usize,
    data: &mut Vec<f64>,
) -> Result<usize, InputError> {
    for_each_line(
        path,
        input,
        first_row,
        RowFaults::AfterSyntax,
        |place, value, _| numeric_row(path, place, &value, columns, data),
    )
}

/// Reads the named keys of every object of a JSON array as numbers, appending them to
/// `data`; returns the number of rows.
pub(super) fn numeric_columns_array<R: Read>(
    path: &Path,
    input: R,
    columns: &[String],
    first_row: usize,
    data: &mut Vec<f64>,
) -> Result<usize, InputError> {
    for_each_element(path, input, first_row, |place, value| {
        numeric_row(path, place, &value, columns, data)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[derive(Debug)]
    struct Table {
        rows: usize,
        data: Vec<f64>,
    }

    fn numeric_columns_lines(
        path: &Path,
        bytes: &[u8],
        columns: &[String],
    ) -> Result<Table, InputError> {
        let mut data = Vec::new();
        let rows = super::numeric_columns_lines(path, bytes, columns, 0, &mut data)?;
        Ok(Table { rows, data })
    }

    fn numeric_columns_array(
        path: &Path,
        bytes: &[u8],
        columns: &[String],
    ) -> Result<Table, InputError> {
        let mut data = Vec::new();
        let rows = super::numeric_columns_array(path, bytes, columns, 0, &mut data)?;
        Ok(Table { rows, data })
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
    fn a_key_named_twice_is_refused_at_any_depth() {
        let p = Path::new("t.jsonl");
        let text = b"{\"x\": 1, \"y\": 2}\n{\"x\": 3, \"y\": 4, \"x\": 1e12}\n";
        let err = numeric_columns_lines(p, text, &cols(&["x", "y"])).unwrap_err();
        let shown = err.to_string();
        assert!(
            shown.starts_with(
                "t.jsonl: line 2 (row 1): invalid JSON: an object names the key `x` twice; keep one"
            ),
            "{shown}"
        );
        let text = b"[{\"x\": 1}, {\"x\": 2, \"x\": 3}]";
        let err = numeric_columns_array(Path::new("t.json"), text, &cols(&["x"])).unwrap_err();
        assert!(err.to_string().contains("the key `x` twice"), "{err}");
        // nested objects and objects inside arrays too; the same key in two objects is fine
        let nested =
            "{\"report\": {\"m\": 1}, \"config\": {\"tp\": 1, \"o\": [{\"a\": 1, \"a\": 2}]}}";
        let err = unique_from_str(nested).unwrap_err();
        assert!(err.to_string().contains("the key `a` twice"), "{err}");
        let fine = "{\"a\": {\"a\": 1}, \"b\": [{\"a\": 2}, {\"a\": 3}], \"c\": null}";
        assert_eq!(
            unique_from_str(fine).unwrap(),
            serde_json::from_str::<Value>(fine).unwrap()
        );
        // a key from outside is escaped in the message
        let err = unique_from_str("{\"\\u001b]0;x\": 1, \"\\u001b]0;x\": 2}").unwrap_err();
        assert!(!err.to_string().contains('\u{1b}'), "{err}");
    }

    #[test]
    fn unique_values_are_the_values_serde_json_reads() {
        for text in [
            "0",
            "-12",
            "18446744073709551615",
            "1.5e-300",
            "0.30000000000000004",
            "\"s\\n\"",
            "true",
            "null",
            "[1, [2, {}], []]",
            "{\"k\": [null, false, -0.0]}",
        ] {
            assert_eq!(
                unique_from_str(text).unwrap(),
                serde_json::from_str::<Value>(text).unwrap(),
                "{text}"
            );
        }
        assert!(unique_from_str("1e400").is_err());
    }

    #[test]
    fn arrays_number_rows_by_element() {
        let text = b"[{\"x\": 1}, {\"x\": true}]";
        let err = numeric_columns_array(Path::new("t.json"), text, &cols(&["x"])).unwrap_err();
        assert_eq!(err.to_string(), "row 1, column `x`: not a number: true");
        let t = numeric_columns_array(Path::new("t.json"), b" [ ] ", &cols(&["x"])).unwrap();
        assert_eq!(t.rows, 0);
    }

    /// How checking the whole text at once words its UTF-8 fault.
    fn whole_text_fault(bytes: &[u8]) -> String {
        std::str::from_utf8(bytes).unwrap_err().to_string()
    }

    #[test]
    fn faults_are_reported_in_the_order_a_whole_file_reader_met_them() {
        let x = cols(&["x"]);
        let p = Path::new("t");
        // invalid UTF-8 after a bad row and after bad JSON: UTF-8 first, its index in the text
        let text = b"{\"y\": 1}\n{\"x\": 1\n{\"x\": \"\xFF\"}\n";
        let want = format!("t: not UTF-8 text ({})", whole_text_fault(text));
        assert_eq!(
            numeric_columns_lines(p, text, &x).unwrap_err().to_string(),
            want
        );
        let text = b"[{\"y\": 1}, {\"x\": \"\xFF\"}]";
        let want = format!("t: not UTF-8 text ({})", whole_text_fault(text));
        assert_eq!(
            numeric_columns_array(p, text, &x).unwrap_err().to_string(),
            want
        );
        // front: a later line's invalid JSON before an earlier row's missing key
        let text = b"{\"y\": 1}\n{\"x\": 1\n";
        let err = numeric_columns_lines(p, text, &x).unwrap_err().to_string();
        assert!(err.starts_with("t: line 2 (row 1): invalid JSON"), "{err}");
        // score: in line order
        let mut rows = 0;
        let err = for_each_line(p, &text[..], 0, RowFaults::InLineOrder, |place, _, _| {
            rows += 1;
            Err(InputError::Value {
                place,
                column: "y".into(),
                detail: "refused".into(),
            })
        })
        .unwrap_err();
        assert_eq!(rows, 1);
        assert_eq!(err.to_string(), "line 1 (row 0), column `y`: refused");
        // arrays: invalid JSON, then not an array, then rows
        let err = numeric_columns_array(p, b"[{\"y\": 1}, {\"x\": 1}", &x).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("t: invalid JSON: EOF while parsing"),
            "{err}"
        );
        let err = numeric_columns_array(p, b"[{\"y\": 1}] x", &x).unwrap_err();
        assert!(err.to_string().contains("trailing characters"), "{err}");
        for text in [
            &b"{\"x\": [1, {}]}"[..],
            b"3",
            b"\"s\"",
            b"null",
            b"true",
            b"-2",
            b"1.5",
        ] {
            let err = numeric_columns_array(p, text, &x).unwrap_err();
            assert_eq!(
                err.to_string(),
                "t: expected a JSON array of objects",
                "{text:?}"
            );
        }
        let err = numeric_columns_array(p, b"{\"x\": 1", &x).unwrap_err();
        assert!(err.to_string().starts_with("t: invalid JSON"), "{err}");
    }

    #[test]
    fn a_line_read_again_from_its_span_is_the_same_value() {
        let text = b"# c\n\n {\"x\": 1} \r\n{\"x\": 2}";
        let mut spans = Vec::new();
        for_each_line(
            Path::new("t"),
            &text[..],
            0,
            RowFaults::InLineOrder,
            |_, v, span| {
                spans.push((v, span));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(spans.len(), 2);
        for (v, span) in spans {
            let bytes = &text[span.offset as usize..(span.offset + span.len) as usize];
            assert_eq!(line_at(Path::new("t"), bytes).unwrap(), v);
        }
    }
}
