//! The raw shape of a config as written, before validation: serde structs with
//! `deny_unknown_fields` whose leaves are [`RawValue`]s, so that every value can be checked
//! (type, finiteness, range) with a message that names its key path and shows it.

use crate::error::{ConfigError, Location};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt::{self, Write as _};
use std::marker::PhantomData;

/// Any YAML/JSON value, numbers kept exactly as parsed (`.nan` stays NaN; integers stay
/// integers) so that validation can say what was written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawValue {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<RawValue>),
    Map(Vec<(RawValue, RawValue)>),
}

impl<'de> Deserialize<'de> for RawValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = RawValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<RawValue, E> {
        Ok(RawValue::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<RawValue, E> {
        Ok(RawValue::Int(i128::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<RawValue, E> {
        Ok(RawValue::Int(i128::from(v)))
    }
    fn visit_i128<E>(self, v: i128) -> Result<RawValue, E> {
        Ok(RawValue::Int(v))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<RawValue, E> {
        i128::try_from(v)
            .map(RawValue::Int)
            .map_err(|_| E::custom(format!("integer {v} is too large")))
    }
    fn visit_f64<E>(self, v: f64) -> Result<RawValue, E> {
        Ok(RawValue::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<RawValue, E> {
        Ok(RawValue::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<RawValue, E> {
        Ok(RawValue::Str(v))
    }
    fn visit_unit<E>(self) -> Result<RawValue, E> {
        Ok(RawValue::Null)
    }
    fn visit_none<E>(self) -> Result<RawValue, E> {
        Ok(RawValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<RawValue, D::Error> {
        RawValue::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawValue, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(RawValue::Seq(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawValue, A::Error> {
        let mut out = Vec::new();
        while let Some((k, v)) = map.next_entry()? {
            out.push((k, v));
        }
        Ok(RawValue::Map(out))
    }
}

impl RawValue {
    /// The value as it would be written, shortened, for error messages.
    pub(crate) fn show(&self) -> String {
        let mut s = String::new();
        self.write(&mut s, 0);
        if s.chars().count() > 80 {
            // one ellipsis character, not three periods: the value often ends a message,
            // and messages never end with a period
            let cut: String = s.chars().take(79).collect();
            format!("{cut}…")
        } else {
            s
        }
    }

    fn write(&self, out: &mut String, depth: usize) {
        match self {
            RawValue::Null => out.push_str("null"),
            RawValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            RawValue::Int(i) => out.push_str(&i.to_string()),
            RawValue::Float(f) => out.push_str(&show_f64(*f)),
            RawValue::Str(s) => {
                let _ = write!(out, "{s:?}");
            }
            RawValue::Seq(items) => {
                if depth > 2 {
                    out.push_str("[...]");
                    return;
                }
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write(out, depth + 1);
                }
                out.push(']');
            }
            RawValue::Map(entries) => {
                if depth > 2 {
                    out.push_str("{...}");
                    return;
                }
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    k.write(out, depth + 1);
                    out.push_str(": ");
                    v.write(out, depth + 1);
                }
                out.push('}');
            }
        }
    }

    /// What kind of value it is, with the value: `a string "x"`, `a list [1, 2]`.
    pub(crate) fn describe(&self) -> String {
        let kind = match self {
            RawValue::Null => return "null".to_owned(),
            RawValue::Bool(_) => "a boolean",
            RawValue::Int(_) => "an integer",
            RawValue::Float(_) => "a number",
            RawValue::Str(_) => "a string",
            RawValue::Seq(_) => "a list",
            RawValue::Map(_) => "a mapping",
        };
        format!("{kind} {}", self.show())
    }
}

/// A float as YAML would write it (`.nan`, `.inf`, `1.5`).
pub(crate) fn show_f64(f: f64) -> String {
    if f.is_nan() {
        ".nan".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 { ".inf" } else { "-.inf" }.to_owned()
    } else {
        format!("{f:?}")
    }
}

/// A string-keyed mapping that keeps the order written and rejects duplicate keys.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OrderedMap<T>(pub(crate) Vec<(String, T)>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OrderedMap<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = OrderedMap<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping of names to entries")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OrderedMap<T>, A::Error> {
                let mut out: Vec<(String, T)> = Vec::new();
                // the keys seen, so that the duplicate check stays linear in the keys
                let mut seen: HashSet<String> = HashSet::new();
                while let Some(key) = map.next_key::<String>()? {
                    if !seen.insert(key.clone()) {
                        return Err(de::Error::custom(format!("duplicate key `{key}`")));
                    }
                    let value = map.next_value::<T>()?;
                    out.push((key, value));
                }
                Ok(OrderedMap(out))
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

/// The whole config as written.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys goal, workload, search_space, evaluator, sweep, export, models, gpus"
)]
pub(crate) struct RawConfig<
    G = RawGoal,
    W = RawWorkload,
    S = RawSearchSpace,
    E = RawEvaluator,
    Sw = RawSweep,
    Ex = RawExport,
> {
    pub(crate) goal: Option<G>,
    pub(crate) workload: Option<W>,
    pub(crate) search_space: Option<S>,
    pub(crate) evaluator: Option<E>,
    pub(crate) sweep: Option<Sw>,
    pub(crate) export: Option<Ex>,
    pub(crate) models: Option<RawValue>,
    pub(crate) gpus: Option<RawValue>,
}

/// `export:` as written.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys model, image, namespace, backend, gpus_per_node, api"
)]
pub(crate) struct RawExport {
    pub(crate) model: Option<RawValue>,
    pub(crate) image: Option<RawValue>,
    pub(crate) namespace: Option<RawValue>,
    pub(crate) backend: Option<RawValue>,
    pub(crate) gpus_per_node: Option<RawValue>,
    pub(crate) api: Option<RawValue>,
}

/// Any value, unread: a block skipped while another block is read on its own.
pub(crate) type Skip = serde::de::IgnoredAny;

/// `goal:` as written.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys target, sla, pareto_objectives, min_goodput_rps, price_per_gpu_hour, strict_sla"
)]
pub(crate) struct RawGoal {
    pub(crate) target: Option<RawValue>,
    pub(crate) sla: Option<RawSla>,
    pub(crate) pareto_objectives: Option<RawValue>,
    pub(crate) min_goodput_rps: Option<RawValue>,
    pub(crate) price_per_gpu_hour: Option<RawValue>,
    pub(crate) strict_sla: Option<RawValue>,
}

/// `goal.sla:` as written.
#[allow(clippy::struct_field_names)] // the SPEC's key names
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys ttft_ms, itl_ms, e2e_ms"
)]
pub(crate) struct RawSla {
    pub(crate) ttft_ms: Option<RawValue>,
    pub(crate) itl_ms: Option<RawValue>,
    pub(crate) e2e_ms: Option<RawValue>,
}

/// `workload:` as written.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping: trace_path (+ replay_concurrency), or isl, osl, num_request_ratio and one load"
)]
pub(crate) struct RawWorkload {
    pub(crate) trace_path: Option<RawValue>,
    pub(crate) replay_concurrency: Option<RawValue>,
    pub(crate) isl: Option<RawValue>,
    pub(crate) osl: Option<RawValue>,
    pub(crate) num_request_ratio: Option<RawValue>,
    pub(crate) request_rate: Option<RawValue>,
    pub(crate) concurrency: Option<RawValue>,
    pub(crate) kv_load_ratio: Option<RawValue>,
}

/// `search_space:` as written.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys gpu_budget, min_gpu_budget, used_gpus, topology, parameters"
)]
pub(crate) struct RawSearchSpace {
    pub(crate) gpu_budget: Option<RawValue>,
    pub(crate) min_gpu_budget: Option<RawValue>,
    pub(crate) used_gpus: Option<RawValue>,
    pub(crate) topology: Option<RawTopology>,
    pub(crate) parameters: Option<OrderedMap<RawParam>>,
}

/// `search_space.topology:` as written.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys model, gpu, deployment_mode, backend, gpus_per_worker, context_length, parallel_configs"
)]
pub(crate) struct RawTopology {
    pub(crate) model: Option<RawValue>,
    pub(crate) gpu: Option<RawValue>,
    pub(crate) deployment_mode: Option<RawValue>,
    pub(crate) backend: Option<RawValue>,
    pub(crate) gpus_per_worker: Option<RawValue>,
    pub(crate) context_length: Option<RawValue>,
    pub(crate) parallel_configs: Option<RawValue>,
}

/// One `search_space.parameters.<name>:` as written.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with one of values, int, float, choices (and optional log)"
)]
pub(crate) struct RawParam {
    pub(crate) values: Option<RawValue>,
    pub(crate) int: Option<RawValue>,
    pub(crate) float: Option<RawValue>,
    pub(crate) choices: Option<RawValue>,
    pub(crate) log: Option<RawValue>,
}

/// `evaluator:` as written.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with command (+ persistent or slurm) or builtin, and optional env, cwd"
)]
pub(crate) struct RawEvaluator {
    pub(crate) command: Option<RawValue>,
    pub(crate) persistent: Option<RawValue>,
    pub(crate) builtin: Option<RawValue>,
    pub(crate) env: Option<OrderedMap<RawValue>>,
    pub(crate) cwd: Option<RawValue>,
    pub(crate) slurm: Option<RawSlurm>,
}

/// `evaluator.slurm:` as written.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys partition, account, time_limit, job_name, gpus_per_node, gpu_flag, gpu_type, sbatch_args, poll_seconds"
)]
pub(crate) struct RawSlurm {
    pub(crate) partition: Option<RawValue>,
    pub(crate) account: Option<RawValue>,
    pub(crate) time_limit: Option<RawValue>,
    pub(crate) job_name: Option<RawValue>,
    pub(crate) gpus_per_node: Option<RawValue>,
    pub(crate) gpu_flag: Option<RawValue>,
    pub(crate) gpu_type: Option<RawValue>,
    pub(crate) sbatch_args: Option<RawValue>,
    pub(crate) poll_seconds: Option<RawValue>,
}

/// `sweep:` as written.
#[derive(Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a mapping with keys max_rounds, candidates_per_round, parallel_evals, max_eval_seconds, max_trials, max_consecutive_failures, seed, algorithm, schedule"
)]
pub(crate) struct RawSweep {
    pub(crate) max_rounds: Option<RawValue>,
    pub(crate) candidates_per_round: Option<RawValue>,
    pub(crate) parallel_evals: Option<RawValue>,
    pub(crate) max_eval_seconds: Option<RawValue>,
    pub(crate) max_trials: Option<RawValue>,
    pub(crate) max_consecutive_failures: Option<RawValue>,
    pub(crate) seed: Option<RawValue>,
    pub(crate) algorithm: Option<RawValue>,
    pub(crate) schedule: Option<RawValue>,
}

/// Turns a parser error (message without path/location) into the matching variant.
pub(crate) fn classify(path: &str, message: &str, loc: Option<(usize, usize)>) -> ConfigError {
    let location = loc.map(|(line, column)| Location { line, column });
    let path = if path == "." {
        String::new()
    } else {
        path.to_owned()
    };
    if let Some(rest) = message.strip_prefix("unknown field `")
        && let Some((key, tail)) = rest.split_once('`')
    {
        let expected = tail
            .trim_start_matches(", ")
            .trim_start_matches("expected ")
            .trim_start_matches("one of ")
            .to_owned();
        let expected = if expected.starts_with("there are no fields") || expected.is_empty() {
            "no keys here".to_owned()
        } else {
            expected
        };
        let did_you_mean = closest(key, &expected);
        return ConfigError::UnknownKey {
            path,
            key: key.to_owned(),
            expected,
            did_you_mean,
            location,
        };
    }
    for prefix in ["duplicate field `", "duplicate key `"] {
        if let Some(rest) = message.strip_prefix(prefix)
            && let Some((key, _)) = rest.split_once('`')
        {
            let full = join(&path, key);
            return ConfigError::DuplicateKey {
                path: full,
                key: key.to_owned(),
            };
        }
    }
    let data_error = message.starts_with("invalid type")
        || message.starts_with("invalid value")
        || message.starts_with("invalid length")
        || message.starts_with("integer ")
        || message.starts_with("missing field");
    if data_error || !path.is_empty() {
        let message = message
            .replace("invalid type: ", "")
            .replace("unit value", "null");
        return ConfigError::Structure {
            path,
            message: format!("found {message}"),
            location,
        };
    }
    ConfigError::Syntax {
        message: message.to_owned(),
        location,
    }
}

/// The most characters of one message (or key path) quoted from the input: a 67 MB
/// one-line config once came back whole in its error.
pub(crate) const QUOTE_LIMIT: usize = 300;

/// `text` cut to [`QUOTE_LIMIT`] characters, saying how long it was.
pub(crate) fn clip(text: &str) -> String {
    let n = text.chars().count();
    if n <= QUOTE_LIMIT {
        text.to_owned()
    } else {
        let head: String = text.chars().take(QUOTE_LIMIT).collect();
        format!("{head}… (cut; {n} characters in all)")
    }
}

/// The parser's message without its own `path: ` prefix and ` at line L column C` suffix
/// (both are reported as structured fields instead), at most [`QUOTE_LIMIT`] characters.
pub(crate) fn bare_message(full: &str, loc: Option<(usize, usize)>) -> String {
    clip(&bare_message_whole(full, loc))
}

fn bare_message_whole(full: &str, loc: Option<(usize, usize)>) -> String {
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

/// The backticked name in `expected` closest to `key` (edit distance at most 2, or at most
/// a third of the key's length), if any.
fn closest(key: &str, expected: &str) -> Option<String> {
    closest_of(key, expected.split('`').skip(1).step_by(2))
}

/// The name of `names` closest to `key`, under the limit of [`closest`].
pub(crate) fn closest_of<'a>(key: &str, names: impl Iterator<Item = &'a str>) -> Option<String> {
    let limit = (key.chars().count() / 3).max(2);
    names
        .map(|n| (edit_distance(key, n), n))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n.to_owned())
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// `parent.key` (or `key` at the top level).
pub(crate) fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_owned()
    } else {
        format!("{parent}.{key}")
    }
}

/// `parent[i]`.
pub(crate) fn index(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

// ---------------------------------------------------------------------------------------
// Typed extraction: each helper checks one value and says what was wrong with it.

pub(crate) fn wrong(path: &str, expected: &str, v: &RawValue, hint: &str) -> ConfigError {
    ConfigError::WrongType {
        path: path.to_owned(),
        expected: expected.to_owned(),
        found: v.describe(),
        hint: if hint.is_empty() {
            String::new()
        } else {
            format!("; {hint}")
        },
    }
}

/// A number (integer or float, possibly non-finite).
pub(crate) fn number(v: &RawValue, path: &str, hint: &str) -> Result<f64, ConfigError> {
    match v {
        RawValue::Int(i) => Ok(*i as f64),
        RawValue::Float(f) => Ok(*f),
        _ => Err(wrong(path, "a number", v, hint)),
    }
}

/// A finite number.
pub(crate) fn finite(v: &RawValue, path: &str, expected: &str) -> Result<f64, ConfigError> {
    let x = number(v, path, "")?;
    if x.is_finite() {
        Ok(x)
    } else {
        Err(ConfigError::NotFinite {
            path: path.to_owned(),
            value: show_f64(x),
            expected: expected.to_owned(),
        })
    }
}

/// A finite number `> 0`.
pub(crate) fn positive(v: &RawValue, path: &str, expected: &str) -> Result<f64, ConfigError> {
    let x = finite(v, path, expected)?;
    if x > 0.0 {
        Ok(x)
    } else {
        Err(out_of_range(path, v, expected))
    }
}

/// A finite number `>= 0`.
pub(crate) fn non_negative(v: &RawValue, path: &str, expected: &str) -> Result<f64, ConfigError> {
    let x = finite(v, path, expected)?;
    if x >= 0.0 {
        Ok(x)
    } else {
        Err(out_of_range(path, v, expected))
    }
}

pub(crate) fn out_of_range(path: &str, v: &RawValue, expected: &str) -> ConfigError {
    ConfigError::OutOfRange {
        path: path.to_owned(),
        value: v.show(),
        expected: expected.to_owned(),
    }
}

/// An integer; a float is accepted only when it is a whole number (`2.0`), so that
/// `concurrency: 1.9` is an error.
pub(crate) fn integer(v: &RawValue, path: &str, hint: &str) -> Result<i128, ConfigError> {
    match v {
        RawValue::Int(i) => Ok(*i),
        RawValue::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e18 => {
            Ok(*f as i128)
        }
        _ => Err(wrong(path, "an integer", v, hint)),
    }
}

/// An integer in `[min, max]`.
pub(crate) fn int_in(
    v: &RawValue,
    path: &str,
    min: i128,
    max: i128,
    expected: &str,
    hint: &str,
) -> Result<i128, ConfigError> {
    let i = integer(v, path, hint)?;
    if (min..=max).contains(&i) {
        Ok(i)
    } else {
        Err(out_of_range(path, v, expected))
    }
}

/// A string.
pub(crate) fn string<'a>(v: &'a RawValue, path: &str, hint: &str) -> Result<&'a str, ConfigError> {
    match v {
        RawValue::Str(s) => Ok(s),
        _ => Err(wrong(path, "a string", v, hint)),
    }
}

/// A boolean.
pub(crate) fn boolean(v: &RawValue, path: &str) -> Result<bool, ConfigError> {
    match v {
        RawValue::Bool(b) => Ok(*b),
        _ => Err(wrong(path, "true or false", v, "")),
    }
}

/// A list.
pub(crate) fn seq<'a>(
    v: &'a RawValue,
    path: &str,
    expected: &str,
    hint: &str,
) -> Result<&'a [RawValue], ConfigError> {
    match v {
        RawValue::Seq(items) => Ok(items),
        _ => Err(wrong(path, expected, v, hint)),
    }
}

/// Converts a raw value to JSON, rejecting non-finite numbers and non-string keys.
pub(crate) fn to_json(v: &RawValue, path: &str) -> Result<serde_json::Value, ConfigError> {
    Ok(match v {
        RawValue::Null => serde_json::Value::Null,
        RawValue::Bool(b) => serde_json::Value::Bool(*b),
        RawValue::Int(i) => {
            if let Ok(u) = u64::try_from(*i) {
                serde_json::Value::from(u)
            } else if let Ok(s) = i64::try_from(*i) {
                serde_json::Value::from(s)
            } else {
                return Err(out_of_range(path, v, "integers fit in 64 bits"));
            }
        }
        RawValue::Float(f) => match serde_json::Number::from_f64(*f) {
            Some(n) => serde_json::Value::Number(n),
            None => {
                return Err(ConfigError::NotFinite {
                    path: path.to_owned(),
                    value: show_f64(*f),
                    expected: "JSON has no NaN or infinity; write a finite number".to_owned(),
                });
            }
        },
        RawValue::Str(s) => serde_json::Value::String(s.clone()),
        RawValue::Seq(items) => serde_json::Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, x)| to_json(x, &index(path, i)))
                .collect::<Result<_, _>>()?,
        ),
        RawValue::Map(entries) => {
            let mut m = serde_json::Map::new();
            for (k, x) in entries {
                let RawValue::Str(key) = k else {
                    return Err(wrong(
                        path,
                        "a mapping with string keys",
                        k,
                        "quote the key",
                    ));
                };
                let p = join(path, key);
                if m.contains_key(key) {
                    return Err(ConfigError::DuplicateKey {
                        path: p,
                        key: key.clone(),
                    });
                }
                m.insert(key.clone(), to_json(x, &p)?);
            }
            serde_json::Value::Object(m)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::{RawValue, bare_message, closest, edit_distance};

    #[test]
    fn long_values_are_shortened_to_80_characters_ending_in_an_ellipsis() {
        let long = RawValue::Str("x".repeat(200));
        let shown = long.show();
        assert_eq!(shown.chars().count(), 80, "{shown}");
        assert!(shown.starts_with("\"xxx"), "{shown}");
        assert!(shown.ends_with('…'), "{shown}");
        assert_eq!(RawValue::Int(7).show(), "7");
    }

    #[test]
    fn suggestions() {
        assert_eq!(edit_distance("tagret", "target"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        let expected = "`target`, `sla`, `pareto_objectives`";
        assert_eq!(closest("tagret", expected).as_deref(), Some("target"));
        assert_eq!(
            closest("pareto_objective", expected).as_deref(),
            Some("pareto_objectives")
        );
        assert_eq!(closest("zzzzzz", expected), None);
    }

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
