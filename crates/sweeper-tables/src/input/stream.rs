//! Reading a table as a stream: its byte-order mark and format from its first bytes
//! ([`head`]), UTF-8 checked as the bytes go past ([`Utf8Check`]), and a CSV parser's record
//! positions turned into lines without holding the file ([`LineTracker`]); an input sought
//! back to its start to be read again ([`rewind`]).

use super::{InputError, TableFormat, npy, sniff_prefix};
use std::io::{self, Cursor, Read, Seek, SeekFrom};
use std::path::Path;

/// A UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Bytes read at a time while looking for the first decisive byte.
const HEAD_CHUNK: usize = 8 * 1024;

/// A table's first bytes read: its format, whether a byte order mark was skipped, and a
/// reader of everything after the mark.
pub(super) struct Head<R> {
    /// The format, from the content ([`super::sniff`]).
    pub(super) format: TableFormat,
    /// Bytes of byte order mark skipped (0 or 3): offsets in `reader` are this much
    /// smaller than in the file.
    pub(super) bom: u64,
    /// The bytes after the mark: the ones read to decide, then the rest.
    pub(super) reader: io::Chain<Cursor<Vec<u8>>, R>,
}

/// Reads as few bytes as decide the format (the `.npy` magic, else the first byte that is
/// not blank and not in a `#` comment line), skipping a UTF-8 byte order mark.
pub(super) fn head<R: Read>(path: &Path, mut reader: R) -> Result<Head<R>, InputError> {
    let mut prefix = Vec::new();
    let mut eof = false;
    loop {
        if eof || prefix.len() >= BOM.len() + npy::MAGIC.len() {
            let bom = if prefix.starts_with(BOM) {
                BOM.len()
            } else {
                0
            };
            if let Some(format) = sniff_prefix(&prefix[bom..], eof) {
                prefix.drain(..bom);
                return Ok(Head {
                    format,
                    bom: bom as u64,
                    reader: Cursor::new(prefix).chain(reader),
                });
            }
        }
        let old = prefix.len();
        prefix.resize(old + HEAD_CHUNK, 0);
        let n = read_some(&mut reader, &mut prefix[old..]).map_err(|source| InputError::Io {
            path: path.to_owned(),
            source,
        })?;
        prefix.truncate(old + n);
        eof = n == 0;
    }
}

/// One `read`, retried when interrupted.
fn read_some(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match reader.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

/// A UTF-8 error as [`std::str::Utf8Error`] words it, at `base` bytes into the text plus
/// the error's own position (the text is read in pieces, the message names the whole).
pub(super) fn utf8_detail(err: &std::str::Utf8Error, base: u64) -> String {
    let at = base + err.valid_up_to() as u64;
    match err.error_len() {
        Some(len) => format!("invalid utf-8 sequence of {len} bytes from index {at}"),
        None => format!("incomplete utf-8 byte sequence from index {at}"),
    }
}

/// The error of a text input that is not UTF-8 (as the whole-file check words it).
pub(super) fn not_utf8(path: &Path, detail: &str) -> InputError {
    InputError::Format {
        path: path.to_owned(),
        detail: format!("not UTF-8 text ({detail})"),
    }
}

/// A reader that checks that the bytes it hands out are UTF-8 and remembers where the first
/// fault is (a character split between two reads is checked whole).
pub(super) struct Utf8Check<R> {
    inner: R,
    /// Bytes checked and found whole, from the start.
    checked: u64,
    /// The start of a character the last read cut (at most 3 bytes).
    pending: Vec<u8>,
    /// `pending` and the new bytes, when a character was cut.
    scratch: Vec<u8>,
    /// The first fault, worded by [`utf8_detail`].
    fault: Option<String>,
}

impl<R: Read> Utf8Check<R> {
    /// Checks the bytes of `inner`; `start` is the index of its first byte in the text.
    pub(super) fn new(inner: R, start: u64) -> Self {
        Utf8Check {
            inner,
            checked: start,
            pending: Vec::new(),
            scratch: Vec::new(),
            fault: None,
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        if self.fault.is_some() {
            return;
        }
        let text: &[u8] = if self.pending.is_empty() {
            bytes
        } else {
            self.scratch.clear();
            self.scratch.extend_from_slice(&self.pending);
            self.scratch.extend_from_slice(bytes);
            &self.scratch
        };
        match std::str::from_utf8(text) {
            Ok(_) => {
                self.checked += text.len() as u64;
                self.pending.clear();
            }
            Err(e) if e.error_len().is_some() => {
                self.fault = Some(utf8_detail(&e, self.checked));
            }
            Err(e) => {
                let cut = text[e.valid_up_to()..].to_vec();
                self.checked += e.valid_up_to() as u64;
                self.pending = cut;
            }
        }
    }

    fn end(&mut self) {
        if self.fault.is_none() && !self.pending.is_empty() {
            self.fault = Some(format!(
                "incomplete utf-8 byte sequence from index {}",
                self.checked
            ));
        }
        self.pending.clear();
    }

    /// Reads the rest of the input; the first UTF-8 fault of all the bytes read, if any.
    pub(super) fn finish(mut self) -> io::Result<Option<String>> {
        let mut buf = vec![0; 64 * 1024];
        while self.fault.is_none() {
            if self.read(&mut buf)? == 0 {
                break;
            }
        }
        Ok(self.fault)
    }
}

impl<R: Read> Read for Utf8Check<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = read_some(&mut self.inner, buf)?;
        if n == 0 {
            self.end();
        } else {
            self.feed(&buf[..n]);
        }
        Ok(n)
    }
}

/// The first UTF-8 fault in the rest of `reader`, whose first byte is at `start` in the
/// text: a text input's UTF-8 is checked before anything else is reported, as when the
/// whole file was checked first.
pub(super) fn utf8_fault_after<R: Read>(reader: R, start: u64) -> io::Result<Option<String>> {
    Utf8Check::new(reader, start).finish()
}

/// A reader for the CSV parser that keeps the bytes from the current record on, so that a
/// record's position (where the parser began reading it, which can be the blank and `#`
/// lines before it) becomes the line its text starts on, counting each byte once.
pub(super) struct LineTracker<R> {
    inner: R,
    /// Bytes read, from `start` on kept.
    buf: Vec<u8>,
    start: usize,
    /// Stream offset of `buf[start]`.
    base: u64,
    /// Newlines before `base`.
    lines: u64,
}

impl<R> LineTracker<R> {
    pub(super) fn new(inner: R) -> Self {
        LineTracker {
            inner,
            buf: Vec::new(),
            start: 0,
            base: 0,
            lines: 0,
        }
    }

    /// Index in `buf` of stream offset `pos` (at least `start`).
    fn index(&self, pos: u64) -> usize {
        let ahead = usize::try_from(pos.saturating_sub(self.base)).unwrap_or(usize::MAX);
        self.start.saturating_add(ahead).min(self.buf.len())
    }

    /// Bytes kept (read since the record last advanced to).
    pub(super) fn kept(&self) -> usize {
        self.buf.len() - self.start
    }

    /// The stream offset where the text of a record read from `pos` starts: past blank
    /// lines and `#` comment lines.
    pub(super) fn record_start(&self, pos: u64) -> u64 {
        let mut at = self.index(pos);
        loop {
            match self.buf.get(at) {
                Some(b'\n' | b'\r') => at += 1,
                Some(b'#') => {
                    while at < self.buf.len() && self.buf[at] != b'\n' {
                        at += 1;
                    }
                }
                _ => return self.base + (at - self.start) as u64,
            }
        }
    }

    /// The 1-based line of stream offset `at` (a record's start).
    #[allow(clippy::naive_bytecount)] // each byte is counted once; not worth the bytecount crate
    pub(super) fn line_at(&self, at: u64) -> u64 {
        let end = self.index(at);
        let newlines = self.buf[self.start..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64;
        self.lines + newlines + 1
    }

    /// The line of the record that starts at `at`, forgetting the bytes before it (records
    /// are visited in order, so no earlier position is asked for again; any later one can
    /// be, counting from here).
    pub(super) fn advance_to(&mut self, at: u64) -> u64 {
        let line = self.line_at(at);
        let end = self.index(at);
        self.lines = line - 1;
        self.base += (end - self.start) as u64;
        self.start = end;
        if self.start >= 64 * 1024 && self.start * 2 >= self.buf.len() {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        line
    }
}

impl<R: Read> Read for LineTracker<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(out)?;
        self.buf.extend_from_slice(&out[..n]);
        Ok(n)
    }
}

/// Seeks an input back to its first byte, to read it again.
pub(super) fn rewind<R: Seek>(path: &Path, input: &mut R) -> Result<(), InputError> {
    input
        .seek(SeekFrom::Start(0))
        .map(drop)
        .map_err(|source| InputError::Io {
            path: path.to_owned(),
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `n` bytes per read.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(self.1).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn utf8_faults_are_worded_as_the_whole_text_check_words_them() {
        for bytes in [
            &b"ok \xE2\x82\xAC then \xFF here"[..],
            b"cut at the end \xE2\x82",
            b"\xE2\x82 a cut one, mid text",
            b"all good \xE2\x82\xAC",
        ] {
            let whole = std::str::from_utf8(bytes).err().map(|e| e.to_string());
            for step in [1, 2, 3, 7, 100] {
                let got = utf8_fault_after(Trickle(bytes, step), 0).unwrap();
                assert_eq!(got, whole, "{bytes:?} read {step} at a time");
            }
        }
        #[allow(invalid_from_utf8)] // a fault is what is wanted here
        let e = std::str::from_utf8(b"ab\xFF").unwrap_err();
        assert_eq!(
            utf8_detail(&e, 10),
            "invalid utf-8 sequence of 1 bytes from index 12"
        );
    }

    #[test]
    fn head_skips_the_mark_and_keeps_every_other_byte() {
        let text = b"\xEF\xBB\xBF# note\n\n{\"a\": 1}\n";
        for step in [1, 2, 5, 100] {
            let mut h = head(Path::new("t"), Trickle(text, step)).unwrap();
            assert_eq!(h.format, TableFormat::JsonLines);
            assert_eq!(h.bom, 3);
            let mut rest = Vec::new();
            h.reader.read_to_end(&mut rest).unwrap();
            assert_eq!(rest, &text[3..]);
        }
        let h = head(Path::new("t"), &b"\x93NUM"[..]).unwrap();
        assert_eq!(h.format, TableFormat::Csv);
        let h = head(Path::new("t"), &b"\x93NUMPY\x01\x00"[..]).unwrap();
        assert_eq!(h.format, TableFormat::Npy);
        let h = head(Path::new("t"), &b""[..]).unwrap();
        assert_eq!(h.format, TableFormat::Csv);
    }
}
