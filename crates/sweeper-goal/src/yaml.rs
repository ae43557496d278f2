//! The only module that touches the YAML crate: text → raw structs, and typed config → text.
//!
//! JSON is read by the same parser (JSON is a subset of YAML 1.2), so both formats give the
//! same key paths and line/column positions.

use crate::error::ConfigError;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Parses YAML or JSON text into `T`, tracking the key path of any error.
pub(crate) fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, ConfigError> {
    // Well-formedness first: the typed pass streams, so a syntax error late in a block would
    // otherwise surface as a type error of the block.
    if let Err(e) = serde_yaml::from_str::<serde::de::IgnoredAny>(text) {
        let loc = e.location().map(|l| (l.line(), l.column()));
        return Err(ConfigError::Syntax {
            message: bare_message(&e.to_string(), loc),
            location: loc.map(|(line, column)| crate::error::Location { line, column }),
        });
    }
    let de = serde_yaml::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let loc = inner.location().map(|l| (l.line(), l.column()));
        let message = bare_message(&inner.to_string(), loc);
        crate::raw::classify(&path, &message, loc)
    })
}

/// Serializes a config value as YAML text.
pub(crate) fn to_string<T: Serialize>(value: &T) -> String {
    // Every map key of the config types is a string and every number finite, so
    // serialization cannot fail.
    serde_yaml::to_string(value).expect("a validated config always serializes to YAML")
}

/// The parser's message without its own `path: ` prefix and ` at line L column C` suffix
/// (both are reported as structured fields instead).
fn bare_message(full: &str, loc: Option<(usize, usize)>) -> String {
    let mut msg = full.to_owned();
    if let Some((l, c)) = loc {
        // at the end, or mid-sentence as libyaml writes it ("... at line 3 column 1, while")
        let suffix = format!(" at line {l} column {c}");
        if let Some(i) = msg.find(suffix.as_str()) {
            msg.replace_range(i..i + suffix.len(), "");
        }
    }
    if let Some((head, tail)) = msg.split_once(": ")
        && !head.is_empty()
        && !head.contains(' ')
        && !head.contains('`')
    {
        return tail.to_owned();
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::bare_message;

    #[test]
    fn strips_prefix_and_location() {
        assert_eq!(
            bare_message(
                "goal.sla: unknown field `x`, expected `e2e_ms` at line 4 column 5",
                Some((4, 5))
            ),
            "unknown field `x`, expected `e2e_ms`"
        );
        assert_eq!(
            bare_message("invalid type: integer `5`, expected a map", None),
            "invalid type: integer `5`, expected a map"
        );
        assert_eq!(
            bare_message(
                "did not find expected ',' at line 3 column 1, while parsing at line 2 column 11",
                Some((3, 1))
            ),
            "did not find expected ',', while parsing at line 2 column 11"
        );
    }
}
