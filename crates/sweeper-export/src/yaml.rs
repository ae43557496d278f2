//! A block-style YAML writer for the manifests (JSON values only: objects, arrays,
//! strings, numbers, booleans).
//!
//! Strings are written plain when YAML cannot read them as anything else (letters, digits
//! and `_ . / : -`, starting with a letter or `/`, and not a YAML 1.1 boolean or null
//! word); every other string is written double-quoted with JSON's escapes, which YAML's
//! double-quoted style reads the same way. So the text reads back as the value it was
//! written from, and a string from outside (a model name, an image) can never become a
//! key, a comment or a second document.

use serde_json::Value;
use std::fmt::Write;

/// The value as a YAML document (no leading `---`), ending in a newline.
pub(crate) fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => write_map(&mut out, map, 0),
        Value::Array(items) if !items.is_empty() => write_seq(&mut out, items, 0),
        other => {
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
    out
}

fn write_map(out: &mut String, map: &serde_json::Map<String, Value>, indent: usize) {
    for (k, v) in map {
        let _ = write!(out, "{:indent$}{}:", "", key(k));
        write_value(out, v, indent);
    }
}

fn write_seq(out: &mut String, items: &[Value], indent: usize) {
    for v in items {
        let _ = write!(out, "{:indent$}-", "");
        match v {
            Value::Object(map) if !map.is_empty() => {
                // The first key on the dash's line, the others under it.
                let mut first = true;
                for (k, v) in map {
                    if first {
                        let _ = write!(out, " {}:", key(k));
                        first = false;
                    } else {
                        let _ = write!(out, "{:w$}{}:", "", key(k), w = indent + 2);
                    }
                    write_value(out, v, indent + 2);
                }
            }
            Value::Array(inner) if !inner.is_empty() => {
                out.push('\n');
                write_seq(out, inner, indent + 2);
            }
            other => {
                let _ = writeln!(out, " {}", scalar(other));
            }
        }
    }
}

/// Writes what follows `key:` (a scalar on the same line, a collection below it).
fn write_value(out: &mut String, v: &Value, indent: usize) {
    match v {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            write_map(out, map, indent + 2);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            write_seq(out, items, indent);
        }
        other => {
            let _ = writeln!(out, " {}", scalar(other));
        }
    }
}

fn key(k: &str) -> String {
    if is_plain(k) { k.to_owned() } else { quoted(k) }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if is_plain(s) => s.clone(),
        Value::String(s) => quoted(s),
        Value::Object(_) => "{}".to_owned(),
        Value::Array(_) => "[]".to_owned(),
    }
}

fn quoted(s: &str) -> String {
    Value::String(s.to_owned()).to_string()
}

/// Whether a string reads back as itself when written plain.
fn is_plain(s: &str) -> bool {
    const WORDS: [&str; 11] = [
        "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~", "nan",
    ];
    let Some(first) = s.chars().next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '/')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
        && !WORDS.contains(&s.to_ascii_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    use super::to_yaml;
    use serde_json::json;

    #[test]
    fn nested_maps_and_sequences() {
        let v = json!({"a": {"b": [1, "x"], "c": [{"d": 1, "e": {"f": "g"}}]}, "h": {}});
        assert_eq!(
            to_yaml(&v),
            "a:\n  b:\n  - 1\n  - x\n  c:\n  - d: 1\n    e:\n      f: g\nh: {}\n"
        );
    }

    #[test]
    fn strings_that_could_be_read_otherwise_are_quoted() {
        let v = json!([
            "8",
            "--tp",
            "yes",
            "No",
            "",
            "a: b",
            "x\ny",
            "#c",
            "nvidia.com/gpu",
            "Qwen/Qwen3-32B"
        ]);
        assert_eq!(
            to_yaml(&v),
            "- \"8\"\n- \"--tp\"\n- \"yes\"\n- \"No\"\n- \"\"\n- \"a: b\"\n- \"x\\ny\"\n- \"#c\"\n- nvidia.com/gpu\n- Qwen/Qwen3-32B\n"
        );
    }

    #[test]
    fn keys_with_odd_characters_are_quoted() {
        let v = json!({"nvidia.com/gpu": "4", "a b": 1});
        assert_eq!(to_yaml(&v), "\"a b\": 1\nnvidia.com/gpu: \"4\"\n");
    }
}
