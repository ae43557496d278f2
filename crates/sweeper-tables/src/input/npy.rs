//! A small reader of `NumPy` `.npy` files holding a float64 matrix.
//!
//! Format (`NumPy`'s `format.py` documents it): the magic `\x93NUMPY`, a major and minor
//! version byte, the header length (u16 little-endian for version 1, u32 for 2 and 3), then
//! the header: a Python dict literal with `descr`, `fortran_order` and `shape`, padded with
//! spaces and a newline; the raw array data follows. Accepted here: `descr` `<f8` or `>f8`,
//! either order (Fortran order is transposed on reading), shape `(n, d)` or `(n,)` (one
//! column). Anything else is an error that says what the file holds.

use super::{InputError, NumericTable, Place};
use std::path::Path;

/// The first six bytes of every `.npy` file.
pub(super) const MAGIC: &[u8] = b"\x93NUMPY";

/// The longest header read, in bytes. A float64 matrix needs under 200; `NumPy` itself
/// refuses headers over 10,000 bytes unless told otherwise (`max_header_size`).
pub(crate) const MAX_HEADER_BYTES: usize = 64 * 1024;

/// How deeply the header's tuples, lists and dicts may nest (a float64 matrix needs 2).
pub(crate) const MAX_HEADER_DEPTH: usize = 16;

/// A float64 matrix from a `.npy` file, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct NpyMatrix {
    /// Number of rows (`shape[0]`).
    pub rows: usize,
    /// Number of columns (`shape[1]`, or 1 for a 1-D array).
    pub cols: usize,
    /// `rows * cols` values, row-major (C order). NaN is not checked here.
    pub data: Vec<f64>,
}

/// A value of the header's Python literal.
#[derive(Debug, Clone, PartialEq)]
enum Lit {
    Str(String),
    Bool(bool),
    Int(u64),
    Tuple(Vec<Lit>),
    Dict(Vec<(String, Lit)>),
    None,
}

/// A recursive-descent parser of the Python literals a `.npy` header uses, with its
/// nesting bounded by [`MAX_HEADER_DEPTH`] (a header of 60 KB of `(` once overflowed the
/// stack).
struct Parser<'a> {
    s: &'a [u8],
    at: usize,
    depth: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.at < self.s.len() && self.s[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.at).copied()
    }

    fn expect(&mut self, b: u8) -> Result<(), String> {
        if self.peek() == Some(b) {
            self.at += 1;
            Ok(())
        } else {
            Err(format!(
                "expected `{}` at byte {} of the header",
                b as char, self.at
            ))
        }
    }

    fn value(&mut self) -> Result<Lit, String> {
        if self.depth >= MAX_HEADER_DEPTH {
            return Err(format!(
                "the header nests deeper than {MAX_HEADER_DEPTH} levels at byte {}",
                self.at
            ));
        }
        self.depth += 1;
        let value = self.value_inner();
        self.depth -= 1;
        value
    }

    fn value_inner(&mut self) -> Result<Lit, String> {
        match self.peek() {
            Some(q @ (b'\'' | b'"')) => {
                self.at += 1;
                let start = self.at;
                while self.at < self.s.len() && self.s[self.at] != q {
                    self.at += 1;
                }
                let text = String::from_utf8_lossy(&self.s[start..self.at]).into_owned();
                self.expect(q)?;
                Ok(Lit::Str(text))
            }
            Some(b'{') => {
                self.at += 1;
                let mut entries = Vec::new();
                while self.peek() != Some(b'}') {
                    let Lit::Str(key) = self.value()? else {
                        return Err("a header key is not a string".to_owned());
                    };
                    self.expect(b':')?;
                    entries.push((key, self.value()?));
                    if self.peek() == Some(b',') {
                        self.at += 1;
                    } else {
                        break;
                    }
                }
                self.expect(b'}')?;
                Ok(Lit::Dict(entries))
            }
            Some(open @ (b'(' | b'[')) => {
                let close = if open == b'(' { b')' } else { b']' };
                self.at += 1;
                let mut items = Vec::new();
                while self.peek() != Some(close) {
                    items.push(self.value()?);
                    if self.peek() == Some(b',') {
                        self.at += 1;
                    } else {
                        break;
                    }
                }
                self.expect(close)?;
                Ok(Lit::Tuple(items))
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.at;
                while self.at < self.s.len() && self.s[self.at].is_ascii_digit() {
                    self.at += 1;
                }
                // Python 2 era files may write `10L`.
                if self.s.get(self.at) == Some(&b'L') {
                    self.at += 1;
                }
                let digits = std::str::from_utf8(&self.s[start..self.at])
                    .unwrap_or_default()
                    .trim_end_matches('L');
                digits
                    .parse()
                    .map(Lit::Int)
                    .map_err(|_| format!("integer {digits} out of range"))
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.at;
                while self.at < self.s.len() && self.s[self.at].is_ascii_alphanumeric() {
                    self.at += 1;
                }
                match &self.s[start..self.at] {
                    b"True" => Ok(Lit::Bool(true)),
                    b"False" => Ok(Lit::Bool(false)),
                    b"None" => Ok(Lit::None),
                    other => Err(format!(
                        "unexpected `{}` in the header",
                        String::from_utf8_lossy(other)
                    )),
                }
            }
            Some(c) => Err(format!("unexpected `{}` in the header", c as char)),
            None => Err("the header ends early".to_owned()),
        }
    }
}

/// Parses a whole `.npy` file held in memory; `path` only names it in errors.
pub fn parse_npy(path: &Path, bytes: &[u8]) -> Result<NpyMatrix, InputError> {
    parse(path, bytes)
}

fn parse(path: &Path, bytes: &[u8]) -> Result<NpyMatrix, InputError> {
    let fail = |detail: String| InputError::Format {
        path: path.to_owned(),
        detail: format!(".npy: {detail}"),
    };
    if !bytes.starts_with(MAGIC) || bytes.len() < 10 {
        return Err(fail("not a NumPy file (no \\x93NUMPY magic)".to_owned()));
    }
    let major = bytes[6];
    let (header_len, header_start) = match major {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        _ => return Err(fail(format!("unsupported format version {major}"))),
    };
    if header_len > MAX_HEADER_BYTES {
        return Err(fail(format!(
            "the header is {header_len} bytes, more than the {MAX_HEADER_BYTES} a float64 matrix could need"
        )));
    }
    let data_start = header_start + header_len;
    let header = bytes
        .get(header_start..data_start)
        .ok_or_else(|| fail("the header is truncated".to_owned()))?;
    let mut parser = Parser {
        s: header,
        at: 0,
        depth: 0,
    };
    let Lit::Dict(entries) = parser.value().map_err(&fail)? else {
        return Err(fail("the header is not a dict".to_owned()));
    };
    let get = |key: &str| entries.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let big_endian = match get("descr") {
        Some(Lit::Str(d)) if d == "<f8" => false,
        Some(Lit::Str(d)) if d == ">f8" => true,
        Some(Lit::Str(d)) => {
            return Err(fail(format!(
                "dtype `{d}` is not float64 (`<f8`); convert with `array.astype(numpy.float64)`"
            )));
        }
        Some(_) => {
            return Err(fail(
                "a structured dtype is not a float64 matrix; save a plain (n, d) float64 array"
                    .to_owned(),
            ));
        }
        None => return Err(fail("the header has no `descr`".to_owned())),
    };
    let fortran = match get("fortran_order") {
        Some(Lit::Bool(b)) => *b,
        _ => return Err(fail("the header has no boolean `fortran_order`".to_owned())),
    };
    let shape: Vec<u64> = match get("shape") {
        Some(Lit::Tuple(items)) => items
            .iter()
            .map(|l| match l {
                Lit::Int(x) => Ok(*x),
                _ => Err(fail("a shape entry is not an integer".to_owned())),
            })
            .collect::<Result<_, _>>()?,
        _ => return Err(fail("the header has no `shape` tuple".to_owned())),
    };
    let (rows, cols) = match shape[..] {
        [n, d] => (n as usize, d as usize),
        [n] => (n as usize, 1),
        _ => {
            return Err(fail(format!(
                "shape {shape:?} is not a matrix; expected (n, d) or (n,)"
            )));
        }
    };
    if cols == 0 {
        return Err(fail("shape has zero columns".to_owned()));
    }
    let want = rows
        .checked_mul(cols)
        .and_then(|c| c.checked_mul(8))
        .ok_or_else(|| fail(format!("shape ({rows}, {cols}) is too large")))?;
    let body = &bytes[data_start.min(bytes.len())..];
    if body.len() != want {
        return Err(fail(format!(
            "shape ({rows}, {cols}) needs {want} bytes of float64 data, the file has {}",
            body.len()
        )));
    }
    let values = body.chunks_exact(8).map(|c| {
        let b: [u8; 8] = c.try_into().unwrap_or_default();
        if big_endian {
            f64::from_be_bytes(b)
        } else {
            f64::from_le_bytes(b)
        }
    });
    let data = if fortran && cols > 1 {
        let column_major: Vec<f64> = values.collect();
        let mut out = vec![0.0; rows * cols];
        for j in 0..cols {
            for i in 0..rows {
                out[i * cols + j] = column_major[j * rows + i];
            }
        }
        out
    } else {
        values.collect()
    };
    Ok(NpyMatrix { rows, cols, data })
}

/// Reads a `.npy` float64 matrix from a file.
pub fn read_npy(path: &Path) -> Result<NpyMatrix, InputError> {
    parse(path, &super::read_bytes(path)?)
}

/// The named columns (`"0"` .. `"d-1"`) of a `.npy` matrix, NaN rejected with row
/// (counted from `first_row`) and column.
pub(super) fn select_columns(
    path: &Path,
    bytes: &[u8],
    columns: &[String],
    first_row: usize,
) -> Result<NumericTable, InputError> {
    let m = parse(path, bytes)?;
    let picks: Vec<usize> = columns
        .iter()
        .map(|c| {
            c.parse::<usize>()
                .ok()
                .filter(|&j| j < m.cols && j.to_string() == *c)
                .ok_or_else(|| InputError::MissingColumn {
                    place: None,
                    column: c.clone(),
                    available: format!(
                        "columns 0..{} (a .npy file's columns are named by position)",
                        m.cols - 1
                    ),
                })
        })
        .collect::<Result<_, _>>()?;
    let identity = picks.len() == m.cols && picks.iter().enumerate().all(|(k, &j)| k == j);
    let data = if identity {
        m.data
    } else {
        let mut out = Vec::with_capacity(m.rows * picks.len());
        for row in m.data.chunks_exact(m.cols) {
            out.extend(picks.iter().map(|&j| row[j]));
        }
        out
    };
    if let Some(k) = data.iter().position(|x| x.is_nan()) {
        let d = picks.len();
        return Err(InputError::Value {
            place: Place {
                line: None,
                row: first_row + k / d,
            },
            column: columns[k % d].clone(),
            detail: "value is NaN; fronts and rankings need comparable numbers".to_owned(),
        });
    }
    Ok(NumericTable {
        columns: columns.to_vec(),
        data,
        rows: m.rows,
    })
}

/// Encodes a row-major float64 matrix as a version-1 `.npy` file (tests and tools).
pub fn encode_npy(rows: usize, cols: usize, data: &[f64]) -> Vec<u8> {
    let mut header =
        format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    // Pad so that the data starts on a 64-byte boundary, ending with a newline.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + data.len() * 8);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for x in data {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_header(header: &str, data: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn deep_or_huge_headers_are_errors_not_crashes() {
        // 60 KB of `(`: recursion without a limit overflowed the stack (SIGABRT)
        let deep = format!("{{'descr': {}", "(".repeat(60_000));
        let err = parse(Path::new("x.npy"), &with_header(&deep, &[])).unwrap_err();
        assert!(err.to_string().contains("nests deeper than 16"), "{err}");
        // just under the limit still parses as far as it goes
        let ok_depth = format!("{{'descr': {}", "(".repeat(MAX_HEADER_DEPTH - 2));
        let err = parse(Path::new("x.npy"), &with_header(&ok_depth, &[])).unwrap_err();
        assert!(!err.to_string().contains("nests deeper"), "{err}");
        // a v2 header claiming 4 GB is refused before anything is read
        let mut huge = MAGIC.to_vec();
        huge.extend_from_slice(&[2, 0]);
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        let err = parse(Path::new("x.npy"), &huge).unwrap_err();
        assert!(err.to_string().contains("more than the 65536"), "{err}");
    }

    #[test]
    fn round_trips_encode() {
        let data = [1.0, 2.0, 3.0, f64::INFINITY, -0.0, 6.5];
        let bytes = encode_npy(3, 2, &data);
        assert_eq!((bytes.len() - data.len() * 8) % 64, 0);
        let m = parse(Path::new("a.npy"), &bytes).unwrap();
        assert_eq!((m.rows, m.cols), (3, 2));
        assert_eq!(m.data, data);
    }

    #[test]
    fn fortran_order_is_transposed() {
        let body: Vec<u8> = [1.0f64, 3.0, 2.0, 4.0]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let bytes = with_header(
            "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }\n",
            &body,
        );
        assert_eq!(
            parse(Path::new("f.npy"), &bytes).unwrap().data,
            [1.0, 2.0, 3.0, 4.0]
        );
    }

    #[test]
    fn big_endian_and_one_dimensional() {
        let body: Vec<u8> = [1.5f64, -2.0]
            .iter()
            .flat_map(|x| x.to_be_bytes())
            .collect();
        let bytes = with_header(
            "{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }\n",
            &body,
        );
        let m = parse(Path::new("b.npy"), &bytes).unwrap();
        assert_eq!((m.rows, m.cols), (2, 1));
        assert_eq!(m.data, [1.5, -2.0]);
    }

    #[test]
    fn wrong_dtype_says_what_it_is() {
        let bytes = with_header(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }\n",
            &[0; 8],
        );
        let err = parse(Path::new("w.npy"), &bytes).unwrap_err();
        assert!(
            err.to_string().contains("dtype `<f4` is not float64"),
            "{err}"
        );
    }

    #[test]
    fn truncated_data_and_bad_shapes() {
        let bytes = with_header(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }\n",
            &[0; 24],
        );
        let err = parse(Path::new("t.npy"), &bytes).unwrap_err();
        assert!(err.to_string().contains("needs 32 bytes"), "{err}");
        let bytes = with_header(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 1), }\n",
            &[0; 8],
        );
        assert!(parse(Path::new("t.npy"), &bytes).is_err());
        assert!(parse(Path::new("t.npy"), b"\x93NUMPY").is_err());
        assert!(parse(Path::new("t.npy"), b"\x93NUMPY\x01\x00\xff\x00{").is_err());
    }

    #[test]
    fn select_columns_by_position_and_rejects_nan() {
        let bytes = encode_npy(2, 3, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let t = select_columns(Path::new("s.npy"), &bytes, &["2".into(), "0".into()], 0).unwrap();
        assert_eq!(t.data, [3.0, 1.0, 6.0, 4.0]);
        let err = select_columns(Path::new("s.npy"), &bytes, &["3".into()], 0).unwrap_err();
        assert!(err.to_string().contains("column `3` not found"), "{err}");
        let bytes = encode_npy(2, 2, &[1.0, 2.0, 3.0, f64::NAN]);
        let err =
            select_columns(Path::new("s.npy"), &bytes, &["0".into(), "1".into()], 0).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("row 1, column `1`: value is NaN"),
            "{err}"
        );
    }
}
