//! Text from outside (an evaluator's stderr, a config's values, a report's labels) made safe
//! to show: control characters escaped, so that nothing printed can move the cursor, clear
//! the screen or set a window title, and long values cut.

use std::fmt::Write as _;

/// How many characters of one value a message quotes at most.
pub const QUOTE_LIMIT: usize = 200;

/// `text` with every control character (C0, DEL, C1) written as an escape: `\n`, `\t`,
/// `\r`, `\e` for ESC, `\u{..}` for the others. Everything else is kept as it is.
///
/// ```
/// use sweeper_engine::text::escape_controls;
///
/// assert_eq!(escape_controls("a\u{1b}]0;TITLE\u{7}b"), "a\\e]0;TITLE\\u{7}b");
/// assert_eq!(escape_controls("tp=2, ok"), "tp=2, ok");
/// ```
pub fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// [`escape_controls`] for diagnostics of several lines: line breaks and tabs are kept,
/// every other control character (ESC, BEL, CR, DEL, C1, ...) is escaped.
///
/// ```
/// use sweeper_engine::text::escape_for_terminal;
///
/// assert_eq!(escape_for_terminal("a\n\u{1b}[2Kb\r"), "a\n\\e[2Kb\\r");
/// ```
pub fn escape_for_terminal(text: &str) -> String {
    text.split('\n')
        .map(|line| {
            line.split('\t')
                .map(escape_controls)
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// JSON text with DEL and the C1 controls (U+0080 to U+009F) written as `\u` escapes:
/// `serde_json` escapes only U+0000 to U+001F, and a terminal may act on the others (U+009B
/// starts a control sequence as ESC `[` does). Only for JSON that `serde_json` wrote: there
/// these characters can only stand inside strings, where the escape means the same
/// character, so the JSON reads back to the same values.
///
/// ```
/// use sweeper_engine::text::escape_json_controls;
///
/// assert_eq!(escape_json_controls("{\"a\": \"x\u{9b}2J\u{7f}\"}"), "{\"a\": \"x\\u009b2J\\u007f\"}");
/// ```
pub fn escape_json_controls(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if matches!(c, '\u{7f}'..='\u{9f}') {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// A writer that passes JSON on with [`escape_json_controls`] applied, for JSON streamed to
/// standard output (UTF-8 split between two writes included).
#[derive(Debug)]
pub struct JsonControls<W: std::io::Write> {
    inner: W,
    /// The last byte written was 0xC2, the lead byte of every C1 control in UTF-8.
    lead: bool,
}

impl<W: std::io::Write> JsonControls<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        JsonControls { inner, lead: false }
    }
}

impl<W: std::io::Write> std::io::Write for JsonControls<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut start = 0;
        for (i, &b) in buf.iter().enumerate() {
            if self.lead {
                self.lead = false;
                if (0x80..=0x9f).contains(&b) {
                    write!(self.inner, "\\u{b:04x}")?;
                    start = i + 1;
                    continue;
                }
                self.inner.write_all(&[0xc2])?;
            }
            if b == 0xc2 || b == 0x7f {
                self.inner.write_all(&buf[start..i])?;
                start = i + 1;
                if b == 0x7f {
                    self.inner.write_all(b"\\u007f")?;
                } else {
                    self.lead = true;
                }
            }
        }
        self.inner.write_all(&buf[start..])?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        // a lead byte waits for its second byte, which the next write brings
        self.inner.flush()
    }
}

impl<W: std::io::Write> Drop for JsonControls<W> {
    fn drop(&mut self) {
        if self.lead {
            let _ = self.inner.write_all(&[0xc2]);
        }
    }
}

/// `text` escaped ([`escape_controls`]) and cut to [`QUOTE_LIMIT`] characters (with `…`
/// and the full length when cut), between backticks: the form error messages quote a value
/// in.
pub fn quote(text: &str) -> String {
    format!("`{}`", cut(&escape_controls(text)))
}

/// An argument of a command line as a person would type it: as it is when it holds only
/// characters a shell leaves alone, else in single quotes; control characters escaped.
pub fn quote_arg(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        cut(arg)
    } else {
        format!("'{}'", cut(&escape_controls(arg).replace('\'', "'\\''")))
    }
}

fn cut(text: &str) -> String {
    let n = text.chars().count();
    if n <= QUOTE_LIMIT {
        text.to_owned()
    } else {
        let head: String = text.chars().take(QUOTE_LIMIT).collect();
        format!("{head}… ({n} characters)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_every_control_character() {
        let hostile = "\u{1b}]0;TITLE\u{7}\u{1b}[2J\u{1b}[1A\u{1b}[2Kfake: all good\u{9b}x\u{7f}";
        let shown = escape_controls(hostile);
        assert!(!shown.chars().any(char::is_control), "{shown}");
        assert_eq!(
            shown,
            "\\e]0;TITLE\\u{7}\\e[2J\\e[1A\\e[2Kfake: all good\\u{9b}x\\u{7f}"
        );
    }

    #[test]
    fn terminal_text_keeps_its_lines() {
        let reason = "line one\n\u{1b}]0;TITLE\u{7}\u{1b}[2J\u{1b}[1A\u{1b}[2Kfake: all good\tok";
        let shown = escape_for_terminal(reason);
        assert_eq!(
            shown,
            "line one\n\\e]0;TITLE\\u{7}\\e[2J\\e[1A\\e[2Kfake: all good\tok"
        );
        assert!(!shown.contains('\u{1b}'));
    }

    #[test]
    fn json_keeps_its_values_and_loses_del_and_c1() {
        use std::io::Write as _;
        let value = serde_json::json!({"label": "a\u{9b}2J\u{7f}\u{1b}é\u{a0}\u{80}z"});
        let json = serde_json::to_string(&value).unwrap();
        let shown = escape_json_controls(&json);
        assert!(!shown.chars().any(char::is_control), "{shown}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&shown).unwrap(),
            value
        );
        // streamed one byte at a time, the C1 lead byte split from its second byte
        let mut out = Vec::new();
        {
            let mut w = JsonControls::new(&mut out);
            for b in json.as_bytes() {
                w.write_all(&[*b]).unwrap();
                w.flush().unwrap();
            }
        }
        assert_eq!(String::from_utf8(out).unwrap(), shown);
        let mut out = Vec::new();
        JsonControls::new(&mut out)
            .write_all(json.as_bytes())
            .unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), shown);
    }

    #[test]
    fn quotes_cut_long_values() {
        let long = "x".repeat(10_000);
        let q = quote(&long);
        assert!(q.len() < 300, "{}", q.len());
        assert!(q.ends_with("… (10000 characters)`"), "{q}");
        assert_eq!(quote_arg("python3"), "python3");
        assert_eq!(quote_arg("my eval.py"), "'my eval.py'");
        assert_eq!(quote_arg("it's"), "'it'\\''s'");
    }
}
