//! A linear pre-pass over config text that bounds its nesting depth before any parser
//! sees it, and names the key path where the bound is crossed.
//!
//! Why a pass of our own: libyaml's scanner (under `serde_yaml`) keeps one "possible
//! simple key" per open flow collection and walks all of them for every token, so a
//! document nested `d` deep costs `O(tokens * d)`: 10^5 nested brackets (a 200 KB file)
//! took over a minute, 50,000 nested `{a: ...}` 20 s. The parser's own recursion limit is
//! checked only after the whole document has been scanned, so it cannot stop that. This
//! pass reads every byte once and stops at the first collection deeper than
//! [`MAX_NESTING`].
//!
//! It follows libyaml's token rules closely enough never to see *less* nesting than the
//! parser will: flow collections (`[`, `{`) count wherever a token starts and not inside
//! quoted scalars, comments, block scalar bodies (`|`, `>`, with libyaml's indentation
//! rules) or plain scalars (where `[` is text in block context); block collections count
//! by libyaml's indentation stack (a key or `-` entry further right opens one, a line
//! further left closes them). Where it is unsure it counts a bracket rather than skip it.
//! Text that libyaml would reject is read in some consistent way: the parser's own error
//! comes first for any input within the limit. Repeats through aliases (`*a`) are not
//! nesting here; the parser bounds them (recursion limit 128, repetition limit).
//!
//! JSON is YAML's flow syntax, so the same pass serves the JSON-only build.

use crate::error::{ConfigError, Location};

/// The deepest nesting of mappings and lists a config may have. A sweep config needs
/// about 5 levels (`search_space.parameters.tp.values[0]` is 4 mappings and a list); the
/// YAML parser itself refuses 128.
pub const MAX_NESTING: usize = 64;

/// Longest key quoted in a path segment.
const KEY_QUOTE: usize = 40;

/// How far (in bytes) libyaml looks back for a simple key on the same line.
const SIMPLE_KEY_SPAN: usize = 1024;

/// Checks that `text` nests no deeper than [`MAX_NESTING`], in one pass over its bytes.
pub(crate) fn check(text: &str) -> Result<(), ConfigError> {
    Scanner::new(text, MAX_NESTING).run().map(|_| ())
}

/// One open collection.
#[derive(Debug)]
struct Frame {
    /// The column of a block collection (libyaml's indentation); `None` for a flow one.
    block_col: Option<usize>,
    /// A block list at the same column as its parent mapping's keys (`key:\n- a`), which
    /// libyaml keeps off its indentation stack.
    indentless: bool,
    /// A list (else a mapping).
    seq: bool,
    /// The entry of a list being read.
    index: usize,
    /// The key of a mapping being read, when known.
    key: Option<String>,
    /// Where it opened (0-based line, column), for a flow collection used as a key.
    open: (usize, usize),
    /// In a flow list, the key of a one-pair mapping written as its entry (`[a: 1]`,
    /// `[? a]`): one level more.
    pair: Option<String>,
    /// The deepest level reached inside it so far.
    peak: usize,
}

/// The last token that may turn out to be a key (a scalar or a flow collection).
#[derive(Debug)]
struct Candidate {
    line: usize,
    col: usize,
    byte: usize,
    flow: usize,
    text: String,
    /// For a flow collection, the deepest level reached inside it: a mapping that it turns
    /// out to be the key of opens around it, one level further out.
    peak: usize,
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
    /// 0-based line and column (in characters) of `i`.
    line: usize,
    col: usize,
    frames: Vec<Frame>,
    /// Open flow collections (always the top of `frames`).
    flow: usize,
    /// Frames with a one-pair mapping open (`Frame::pair`).
    pairs: usize,
    cand: Option<Candidate>,
    limit: usize,
    deepest: usize,
}

impl<'a> Scanner<'a> {
    fn new(text: &'a str, limit: usize) -> Self {
        Scanner {
            b: text.as_bytes(),
            i: 0,
            line: 0,
            col: 0,
            frames: Vec::new(),
            flow: 0,
            pairs: 0,
            cand: None,
            limit,
            deepest: 0,
        }
    }

    /// The byte `k` places ahead, `0` past the end.
    fn at(&self, k: usize) -> u8 {
        self.b.get(self.i + k).copied().unwrap_or(0)
    }

    fn eof(&self) -> bool {
        self.i >= self.b.len()
    }

    /// Length in bytes of the line break at `i + k` (libyaml's: CR, LF, CRLF, NEL, LS,
    /// PS), 0 when there is none.
    fn break_len(&self, k: usize) -> usize {
        match (self.at(k), self.at(k + 1), self.at(k + 2)) {
            (b'\r', b'\n', _) | (0xC2, 0x85, _) => 2,
            (b'\r' | b'\n', _, _) => 1,
            (0xE2, 0x80, 0xA8 | 0xA9) => 3,
            _ => 0,
        }
    }

    fn is_blank(&self, k: usize) -> bool {
        matches!(self.at(k), b' ' | b'\t')
    }

    /// A blank, a break or the end of the text at `i + k`.
    fn is_blankz(&self, k: usize) -> bool {
        self.i + k >= self.b.len() || self.is_blank(k) || self.break_len(k) > 0
    }

    /// Moves past one character (a whole line break counts as one).
    fn advance(&mut self) {
        let n = self.break_len(0);
        if n > 0 {
            self.i += n;
            self.line += 1;
            self.col = 0;
            return;
        }
        let lead = self.at(0);
        self.i += match lead {
            0x00..=0x7F => 1,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => 4,
        }
        .min(self.b.len() - self.i);
        self.col += 1;
    }

    fn skip_to_break(&mut self) {
        while !self.eof() && self.break_len(0) == 0 {
            self.advance();
        }
    }

    /// A document marker (`---`, `...`) at the start of a line.
    fn at_document_marker(&self) -> bool {
        self.col == 0
            && (self.b[self.i..].starts_with(b"---") || self.b[self.i..].starts_with(b"..."))
            && self.is_blankz(3)
    }

    /// libyaml's current indentation: the column of the innermost block collection on its
    /// stack, -1 at the top level.
    fn indent(&self) -> isize {
        self.frames
            .iter()
            .rev()
            .find(|f| !f.indentless && f.block_col.is_some())
            .and_then(|f| f.block_col)
            .map_or(-1, |c| isize::try_from(c).unwrap_or(isize::MAX))
    }

    fn run(mut self) -> Result<usize, ConfigError> {
        loop {
            self.skip_to_token();
            if self.eof() {
                return Ok(self.deepest);
            }
            if self.at_document_marker() {
                if self.flow == 0 {
                    self.frames.clear();
                    self.pairs = 0;
                }
                self.i += 3;
                self.col += 3;
                self.cand = None;
                continue;
            }
            if self.col == 0 && self.at(0) == b'%' {
                self.skip_to_break();
                continue;
            }
            if self.flow == 0 {
                let col = self.col;
                while self
                    .frames
                    .last()
                    .is_some_and(|f| f.block_col.is_some_and(|c| c > col))
                {
                    self.frames.pop();
                }
            }
            match self.at(0) {
                b'[' | b'{' => self.open_flow()?,
                b']' | b'}' => self.close_flow(),
                b',' => {
                    if self.flow > 0
                        && let Some(f) = self.frames.last_mut()
                    {
                        if f.seq {
                            f.index += 1;
                            if f.pair.take().is_some() {
                                self.pairs -= 1;
                            }
                        } else {
                            f.key = None;
                        }
                    }
                    self.cand = None;
                    self.advance();
                }
                b'-' if self.is_blankz(1) => {
                    if self.flow == 0 {
                        self.block_entry()?;
                    }
                    self.cand = None;
                    self.advance();
                }
                b'?' if self.flow > 0 || self.is_blankz(1) => {
                    if self.flow == 0 {
                        self.block_key(self.col, "?".to_owned())?;
                    } else {
                        self.open_pair("?".to_owned())?;
                    }
                    self.cand = None;
                    self.advance();
                }
                b':' if self.flow > 0 || self.is_blankz(1) => {
                    self.value()?;
                    self.advance();
                }
                b'*' | b'&' | b'!' => self.property(),
                b'|' | b'>' if self.flow == 0 => self.block_scalar(),
                b'\'' => self.single_quoted(),
                b'"' => self.double_quoted(),
                _ => self.plain(),
            }
        }
    }

    /// libyaml's `scan_to_next_token`: blanks, comments and line breaks.
    fn skip_to_token(&mut self) {
        loop {
            if self.col == 0 && self.b[self.i..].starts_with("\u{feff}".as_bytes()) {
                self.i += 3;
            }
            while self.is_blank(0) {
                self.advance();
            }
            if self.at(0) == b'#' {
                self.skip_to_break();
            }
            if self.break_len(0) == 0 {
                return;
            }
            self.advance();
        }
    }

    /// Pushes a frame, or fails when it would be one level too deep.
    fn push(&mut self, mut frame: Frame) -> Result<(), ConfigError> {
        self.one_more_level()?;
        frame.peak = self.frames.len() + self.pairs + 1;
        self.frames.push(frame);
        Ok(())
    }

    /// Counts a level about to open, or fails when it would be one too many.
    fn one_more_level(&mut self) -> Result<(), ConfigError> {
        self.level_at(self.frames.len() + self.pairs + 1)
    }

    /// Records that nesting reaches `depth`, or fails when that is over the limit.
    fn level_at(&mut self, depth: usize) -> Result<(), ConfigError> {
        if depth > self.limit {
            return Err(ConfigError::NestingTooDeep {
                path: crate::raw::clip(&self.path()),
                limit: self.limit,
                location: Location {
                    line: self.line + 1,
                    column: self.col + 1,
                },
            });
        }
        self.deepest = self.deepest.max(depth);
        if let Some(f) = self.frames.last_mut() {
            f.peak = f.peak.max(depth);
        }
        Ok(())
    }

    /// A `?` or `:` inside a flow list: its entry is a one-pair mapping.
    fn open_pair(&mut self, key: String) -> Result<(), ConfigError> {
        if self
            .frames
            .last()
            .is_some_and(|f| f.seq && f.pair.is_none())
        {
            self.one_more_level()?;
            self.pairs += 1;
            if let Some(f) = self.frames.last_mut() {
                f.pair = Some(key);
            }
        }
        Ok(())
    }

    /// The key path of the value being read, as the config's errors write it.
    fn path(&self) -> String {
        let mut path = String::new();
        for f in &self.frames {
            if f.seq {
                path = crate::raw::index(&path, f.index);
                if let Some(key) = &f.pair {
                    path = crate::raw::join(&path, key);
                }
            } else {
                path = crate::raw::join(&path, f.key.as_deref().unwrap_or("?"));
            }
        }
        path
    }

    fn open_flow(&mut self) -> Result<(), ConfigError> {
        let open = (self.line, self.col);
        self.push(Frame {
            block_col: None,
            indentless: false,
            seq: self.at(0) == b'[',
            index: 0,
            key: None,
            open,
            pair: None,
            peak: 0,
        })?;
        self.flow += 1;
        self.cand = None;
        self.advance();
        Ok(())
    }

    fn close_flow(&mut self) {
        let mut opened = None;
        if self.flow > 0 {
            self.flow -= 1;
            opened = self.frames.pop().map(|f| {
                if f.pair.is_some() {
                    self.pairs -= 1;
                }
                (f.open, f.peak)
            });
            if let (Some(parent), Some((_, peak))) = (self.frames.last_mut(), opened) {
                parent.peak = parent.peak.max(peak);
            }
        }
        self.cand = opened.map(|((line, col), peak)| Candidate {
            line,
            col,
            byte: self.i,
            flow: self.flow,
            text: "…".to_owned(),
            peak,
        });
        self.advance();
    }

    /// A `-` entry in block context at the current column.
    fn block_entry(&mut self) -> Result<(), ConfigError> {
        let col = self.col;
        let open = (self.line, col);
        match self.frames.last_mut() {
            Some(f) if f.block_col == Some(col) && f.seq => {
                f.index += 1;
                Ok(())
            }
            Some(f) if f.block_col == Some(col) => self.push(Frame {
                block_col: Some(col),
                indentless: true,
                seq: true,
                index: 0,
                key: None,
                open,
                pair: None,
                peak: 0,
            }),
            _ => self.push(Frame {
                block_col: Some(col),
                indentless: false,
                seq: true,
                index: 0,
                key: None,
                open,
                pair: None,
                peak: 0,
            }),
        }
    }

    /// A key at `col` in block context: a new mapping when further right than the
    /// innermost collection, else the next key of it.
    fn block_key(&mut self, col: usize, key: String) -> Result<(), ConfigError> {
        if self
            .frames
            .last()
            .is_some_and(|f| f.indentless && f.block_col == Some(col))
        {
            self.frames.pop();
        }
        match self.frames.last_mut() {
            Some(f) if f.block_col == Some(col) && !f.seq => {
                f.key = Some(key);
                Ok(())
            }
            _ => self.push(Frame {
                block_col: Some(col),
                indentless: false,
                seq: false,
                index: 0,
                key: Some(key),
                open: (self.line, col),
                pair: None,
                peak: 0,
            }),
        }
    }

    /// A `:` value indicator: the candidate before it on the same line is the key.
    fn value(&mut self) -> Result<(), ConfigError> {
        let cand = self.cand.take();
        let peak = cand.as_ref().map_or(0, |c| c.peak);
        if self.flow == 0 {
            let (col, key) = match cand {
                Some(c)
                    if c.flow == 0 && c.line == self.line && c.byte + SIMPLE_KEY_SPAN >= self.i =>
                {
                    (c.col, c.text)
                }
                _ => (self.col, "?".to_owned()),
            };
            let before = self.frames.len();
            self.block_key(col, key)?;
            if peak > 0 && self.frames.len() > before {
                self.level_at(peak + 1)?;
            }
            return Ok(());
        }
        let key = cand
            .filter(|c| c.flow == self.flow)
            .map_or_else(|| "?".to_owned(), |c| c.text);
        match self.frames.last_mut() {
            Some(f) if !f.seq => f.key = Some(key),
            Some(_) => {
                let before = self.pairs;
                self.open_pair(key)?;
                if peak > 0 && self.pairs > before {
                    self.level_at(peak + 1)?;
                }
            }
            None => {}
        }
        Ok(())
    }

    /// An anchor, alias or tag: read up to a blank or a flow indicator (a bracket right
    /// after one is counted, never taken as part of its name).
    fn property(&mut self) {
        let start = (self.line, self.col, self.i);
        let alias = self.at(0) == b'*';
        self.advance();
        while !self.is_blankz(0) && !matches!(self.at(0), b',' | b'[' | b']' | b'{' | b'}') {
            self.advance();
        }
        self.cand = alias.then(|| Candidate {
            line: start.0,
            col: start.1,
            byte: start.2,
            flow: self.flow,
            text: quote_key(&self.b[start.2..self.i]),
            peak: 0,
        });
    }

    fn single_quoted(&mut self) {
        let (line, col, byte) = (self.line, self.col, self.i);
        self.advance();
        let body = self.i;
        let mut end = None;
        while !self.eof() {
            if self.at(0) == b'\'' {
                if self.at(1) == b'\'' {
                    self.advance();
                    self.advance();
                    continue;
                }
                end.get_or_insert(self.i);
                self.advance();
                break;
            }
            if self.break_len(0) > 0 {
                end.get_or_insert(self.i);
            }
            self.advance();
        }
        let end = end.unwrap_or(self.i);
        self.set_scalar(line, col, byte, body, end);
    }

    fn double_quoted(&mut self) {
        let (line, col, byte) = (self.line, self.col, self.i);
        self.advance();
        let body = self.i;
        let mut end = None;
        while !self.eof() {
            match self.at(0) {
                b'\\' => {
                    self.advance();
                    if !self.eof() {
                        self.advance();
                    }
                    continue;
                }
                b'"' => {
                    end.get_or_insert(self.i);
                    self.advance();
                    break;
                }
                _ => {}
            }
            if self.break_len(0) > 0 {
                end.get_or_insert(self.i);
            }
            self.advance();
        }
        let end = end.unwrap_or(self.i);
        self.set_scalar(line, col, byte, body, end);
    }

    /// libyaml's plain scalar: in block context it runs on over blanks and onto lines
    /// indented further than the innermost block collection; in flow context a flow
    /// indicator ends it.
    fn plain(&mut self) {
        let (line, col, byte) = (self.line, self.col, self.i);
        let indent = self.indent() + 1;
        let mut first_line_end = None;
        loop {
            if self.at_document_marker() || self.at(0) == b'#' {
                break;
            }
            while !self.is_blankz(0) {
                let c = self.at(0);
                if c == b':'
                    && (self.is_blankz(1)
                        || (self.flow > 0
                            && matches!(self.at(1), b',' | b'?' | b'[' | b']' | b'{' | b'}')))
                {
                    break;
                }
                if self.flow > 0 && matches!(c, b',' | b'[' | b']' | b'{' | b'}') {
                    break;
                }
                self.advance();
            }
            if self.line == line {
                first_line_end = Some(self.i);
            }
            if !(self.is_blank(0) || self.break_len(0) > 0) {
                break;
            }
            while self.is_blank(0) || self.break_len(0) > 0 {
                self.advance();
            }
            if self.flow == 0 && isize::try_from(self.col).unwrap_or(isize::MAX) < indent {
                break;
            }
        }
        let end = first_line_end.unwrap_or(self.i);
        self.set_scalar(line, col, byte, byte, end);
    }

    fn set_scalar(&mut self, line: usize, col: usize, byte: usize, body: usize, end: usize) {
        self.cand = Some(Candidate {
            line,
            col,
            byte,
            flow: self.flow,
            text: quote_key(&self.b[body..end.max(body)]),
            peak: 0,
        });
    }

    /// libyaml's block scalar (`|`, `>`): the header line, then every line indented at
    /// least as far as the content (detected from the first non-empty line, or given by
    /// an indentation indicator), and the empty lines between them.
    fn block_scalar(&mut self) {
        self.advance();
        let mut increment = 0;
        for _ in 0..2 {
            match self.at(0) {
                b'+' | b'-' => self.advance(),
                d @ b'1'..=b'9' => {
                    increment = isize::from(d - b'0');
                    self.advance();
                }
                _ => break,
            }
        }
        self.skip_to_break();
        self.cand = None;
        if self.eof() {
            return;
        }
        self.advance();
        let parent = self.indent();
        let mut indent: isize = if increment > 0 {
            if parent >= 0 {
                parent + increment
            } else {
                increment
            }
        } else {
            0
        };
        let col = |s: &Self| isize::try_from(s.col).unwrap_or(isize::MAX);
        // leading empty lines, and the first content line's indentation
        let mut max_indent = 0;
        loop {
            while (indent == 0 || col(self) < indent) && self.at(0) == b' ' {
                self.advance();
            }
            max_indent = max_indent.max(col(self));
            if self.break_len(0) == 0 {
                break;
            }
            self.advance();
        }
        if indent == 0 {
            indent = max_indent.max(parent + 1).max(1);
        }
        while col(self) == indent && !self.eof() {
            self.skip_to_break();
            if self.eof() {
                return;
            }
            self.advance();
            loop {
                while col(self) < indent && self.at(0) == b' ' {
                    self.advance();
                }
                if self.break_len(0) == 0 {
                    break;
                }
                self.advance();
            }
        }
    }
}

/// A key as a path segment: lossless for short keys, cut with an ellipsis beyond
/// [`KEY_QUOTE`] characters.
fn quote_key(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_end();
    if text.chars().count() > KEY_QUOTE {
        let cut: String = text.chars().take(KEY_QUOTE).collect();
        format!("{cut}…")
    } else {
        text.to_owned()
    }
}

/// The deepest nesting of `text` as this pass counts it, stopping at `limit`
/// (`Err` when crossed). For tests against the YAML parser.
#[cfg(test)]
pub(crate) fn depth(text: &str, limit: usize) -> Result<usize, ConfigError> {
    Scanner::new(text, limit).run()
}

#[cfg(test)]
mod tests {
    use super::depth;

    fn d(text: &str) -> usize {
        depth(text, 1000).unwrap()
    }

    #[test]
    fn counts_block_and_flow_collections() {
        assert_eq!(d(""), 0);
        assert_eq!(d("a"), 0);
        assert_eq!(d("a: 1"), 1);
        assert_eq!(d("a:\n  b: 1\n  c: 2\nd: 3"), 2);
        assert_eq!(d("a:\n- 1\n- [2, {b: 3}]\nc: 4"), 4);
        assert_eq!(d("- - - x"), 3);
        assert_eq!(d("{\"a\": {\"b\": [1, 2]}}"), 3);
        assert_eq!(d("a: b\n---\nc: d"), 1);
    }

    #[test]
    fn brackets_in_text_are_not_nesting() {
        assert_eq!(d("a: \"[[[[\"\nb: '{{{{'"), 1);
        assert_eq!(d("a: x[[[[ y\nb: 1 # [[[[\n# {{{{"), 1);
        assert_eq!(d("a: |\n  [[[[\n   {{{{\nb: >-\n  [[[\n"), 1);
        assert_eq!(d("a: long\n  [[[[ text\nb: 1"), 1);
        assert_eq!(d("a: 'it''s [[[['\nb: \"\\\"[[[[\""), 1);
    }

    #[test]
    fn a_line_less_indented_than_a_block_scalar_ends_it() {
        // libyaml takes the content indentation from the first line; the `[[` line below
        // it is structure again
        assert_eq!(d("a: |\n    text\n  [[x]]: 1\n"), 4);
        // an explicit indentation indicator counts from the parent
        assert_eq!(d("- a: |2\n   [[x]]\n"), 4);
        assert_eq!(d("- a: |1\n   text\n  [[x]]: 1\n"), 4);
    }

    #[test]
    fn quotes_inside_plain_scalars_are_text() {
        assert_eq!(d("[it's, [[[x]]], 'y']"), 4);
        assert_eq!(d("a: it's\nb: [[1]]\nc: 'x'"), 3);
    }

    #[test]
    fn the_path_names_the_keys_and_indices_down_to_the_limit() {
        let err = depth("goal:\n  target: [[[[x]]]]\n", 3).unwrap_err();
        assert_eq!(err.path(), Some("goal.target[0]"));
        assert_eq!(err.location(), Some((2, 12)));
        let err = depth("{a: {b: [1, {c: {d: 1}}]}}", 4).unwrap_err();
        assert_eq!(err.path(), Some("a.b[1].c"));
    }

    /// Proptest cases: few in code, more through `PROPTEST_CASES`.
    #[cfg(feature = "yaml")]
    fn cases() -> u32 {
        std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(512)
    }

    #[cfg(feature = "yaml")]
    fn value_depth(v: &crate::raw::RawValue) -> usize {
        use crate::raw::RawValue;
        match v {
            RawValue::Seq(items) => 1 + items.iter().map(value_depth).max().unwrap_or(0),
            RawValue::Map(entries) => {
                1 + entries
                    .iter()
                    .map(|(k, v)| value_depth(k).max(value_depth(v)))
                    .max()
                    .unwrap_or(0)
            }
            _ => 0,
        }
    }

    #[cfg(feature = "yaml")]
    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: cases(),
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// The oracle is the YAML parser: whatever it reads, this pass never counts less
        /// nesting than the value has (aliases aside: they are left out of the alphabet).
        #[test]
        fn never_counts_less_than_the_parser_reads(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "[", "]", "{", "}", ", ", ",", ": ", ":", "- ", "-", "? ", "#", " #",
                    "'", "''", "\"", "\\", "|", "|2", ">-", " ", "  ", "\t", "\n", "\n  ",
                    "\n    ", "\n- ", "a", "b c", "1", "x[", "---\n", "\r\n",
                ]),
                0..24,
            )
        ) {
            let text: String = pieces.concat();
            if let Ok(Some(v)) = crate::yaml::from_str::<Option<crate::raw::RawValue>>(&text) {
                let counted = depth(&text, 1000).unwrap();
                proptest::prop_assert!(
                    counted >= value_depth(&v),
                    "{text:?}: counted {counted}, parsed {v:?}"
                );
            }
        }
    }
}
