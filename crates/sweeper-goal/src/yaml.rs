//! The only module that touches the YAML crate (feature `yaml`): text → raw structs, and
//! typed config → text.
//!
//! JSON is read by the same parser (JSON is a subset of YAML 1.2), so both formats give the
//! same key paths and line/column positions.

use crate::error::ConfigError;
use crate::raw::bare_message;
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
        crate::raw::classify(&crate::raw::clip(&path), &message, loc)
    })
}

/// Serializes a config value as YAML text.
pub(crate) fn to_string<T: Serialize>(value: &T) -> String {
    // Every map key of the config types is a string and every number finite, so
    // serialization cannot fail.
    serde_yaml::to_string(value).expect("a validated config always serializes to YAML")
}
