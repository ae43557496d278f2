//! The config reader when the `yaml` feature is off: JSON text → raw structs.
//!
//! It gives the same [`ConfigError`]s as the YAML reader for the same mistakes (the key path
//! from `serde_path_to_error`, the message classified by [`crate::raw::classify`]), with
//! `serde_json`'s line and column as the [`Location`].

use crate::error::{ConfigError, Location};
use crate::raw::{bare_message, classify};
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor,
};
use std::fmt;

/// Said after every syntax error, so that YAML text fed to a JSON-only build is explained.
const JSON_ONLY: &str = "this build of sweeper-goal reads JSON only (its `yaml` feature is off)";

/// Parses JSON text into `T`, tracking the key path of any error. Text that is empty or
/// only whitespace reads as `null`, so that an empty document is the all-default config as
/// with YAML.
pub(crate) fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, ConfigError> {
    let text = if text.trim().is_empty() { "null" } else { text };
    // Well-formedness first: the typed pass streams, so a syntax error late in a block would
    // otherwise surface as a type error of the block.
    if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
        let loc = position(&e);
        return Err(ConfigError::Syntax {
            message: format!("{}; {JSON_ONLY}", bare_message(&e.to_string(), loc)),
            location: one_based(loc).map(|(line, column)| Location { line, column }),
        });
    }
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(MapsOnly(&mut de)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let loc = position(&inner);
        let message = bare_message(&inner.to_string(), loc);
        classify(&crate::raw::clip(&path), &message, one_based(loc))
    })
}

/// `serde_json`'s `(line, column)` as it prints them; `None` when it knows no position
/// (line 0).
fn position(e: &serde_json::Error) -> Option<(usize, usize)> {
    (e.line() > 0).then(|| (e.line(), e.column()))
}

/// 1-based numbers: `serde_json` reports column 0 for an error right after a newline (at the
/// end of the text, say), which is taken as column 1.
fn one_based(loc: Option<(usize, usize)>) -> Option<(usize, usize)> {
    loc.map(|(line, column)| (line, column.max(1)))
}

/// A deserializer that reads a struct only from a JSON object, at every depth.
///
/// `serde_json` also fills a struct from an array of its fields in order (`"sla": [100, 10,
/// 20000]`), which the schema has no place for and the YAML reader rejects. Every method
/// that can reach a nested value passes it on wrapped again, so that the rule holds inside
/// maps, lists and options too; a struct asked for becomes a map asked for, which
/// `serde_json` refuses for anything but an object, with its position.
struct MapsOnly<D>(D);

/// A visitor whose nested deserializers, maps and lists are wrapped in [`MapsOnly`].
struct Wrap<V>(V);

/// A seed whose deserializer is wrapped in [`MapsOnly`].
struct WrapSeed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for WrapSeed<S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(MapsOnly(d))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Wrap<A> {
    type Error = A::Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(WrapSeed(seed))
    }
    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Wrap<A> {
    type Error = A::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(WrapSeed(seed))
    }
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(WrapSeed(seed))
    }
    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

/// Forwards `visit_*` methods that carry a plain value.
macro_rules! forward_visits {
    ($($method:ident($ty:ty)),* $(,)?) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
            self.0.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }
    forward_visits!(
        visit_bool(bool),
        visit_i8(i8),
        visit_i16(i16),
        visit_i32(i32),
        visit_i64(i64),
        visit_i128(i128),
        visit_u8(u8),
        visit_u16(u16),
        visit_u32(u32),
        visit_u64(u64),
        visit_u128(u128),
        visit_f32(f32),
        visit_f64(f64),
        visit_char(char),
        visit_str(&str),
        visit_borrowed_str(&'de str),
        visit_string(String),
        visit_bytes(&[u8]),
        visit_borrowed_bytes(&'de [u8]),
        visit_byte_buf(Vec<u8>),
    );
    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_none()
    }
    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_some(MapsOnly(d))
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_newtype_struct(MapsOnly(d))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(Wrap(seq))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(Wrap(map))
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        // No raw config type is an enum; its variants are read as `serde_json` reads them.
        self.0.visit_enum(data)
    }
}

/// Forwards `deserialize_*` methods, wrapping the visitor.
macro_rules! forward_deserialize {
    ($($method:ident),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
            self.0.$method(Wrap(v))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for MapsOnly<D> {
    type Error = D::Error;

    forward_deserialize!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_option,
        deserialize_unit,
        deserialize_seq,
        deserialize_map,
        deserialize_identifier,
        deserialize_ignored_any,
    );
    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, Wrap(v))
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, Wrap(v))
    }
    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, Wrap(v))
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, Wrap(v))
    }
    /// The one change: a struct is read as a map, never from a list.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(Wrap(v))
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, Wrap(v))
    }
    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}
