//! What a caller asks of the reading of report rows ([`ReadOptions`]): the format (else
//! decided by content), keys renamed before scoring (`--map FROM=TO`), and the report keys
//! derived from what benchmark rows carry:
//!
//! - **GPU accounting.** SPEC 2's `avg_gpu` is `gpu_hours / (duration_ms / 3_600_000)`,
//!   and the scorer reads nothing else. A row with a GPU count `G` ([`Gpus`]) and no
//!   `gpu_hours` gets `gpu_hours = G × duration_ms / 3_600_000` from its own
//!   `duration_ms`; a row without a duration (a CSV of rates, a genai-perf export) gets the
//!   per-GPU form: one nominal hour, `duration_ms = 3_600_000` and `gpu_hours = G`, so that
//!   `avg_gpu` is `G` exactly (and `cost_per_mtok`, which reads the same ratio, is that of
//!   `G` GPUs); such rows are counted in a note, since their `duration_ms` is not the run's.
//!   A row that has `gpu_hours` keeps it. `used_gpus` is set to `G` when the row has none.
//!   `G` is [`ReadOptions::gpus`], else (a benchmark's file) the row's `used_gpus`, filled
//!   first from the sweep config's rule ([`ReadOptions::used_gpus`]) when it has none.
//! - **tok/s/user from TPOT.** A row without `mean_output_token_throughput_per_user` but
//!   with a positive `mean_tpot_ms` gets `1000 / mean_tpot_ms` (one user's decode rate):
//!   always for a benchmark's file, and for sweeper's reports when asked
//!   ([`ReadOptions::per_user_from_tpot`]).

use super::{InputError, Place};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use sweeper_score::{DURATION_MS, GPU_HOURS, THROUGHPUT_PER_USER, USED_GPUS};

/// Milliseconds in an hour.
const MS_PER_HOUR: f64 = 3_600_000.0;

/// Report key of the mean time per output token after the first, ms.
pub const TPOT: &str = "mean_tpot_ms";

/// What a report input is read as (`--input-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputFormat {
    /// sweeper's own reports: CSV, JSON Lines or a JSON array of `{config, report}`.
    Reports,
    /// `vllm bench serve --save-result` / `--append-result`.
    Vllm,
    /// SGLang `bench_serving --output-file`.
    Sglang,
    /// genai-perf `profile_export_genai_perf.json`.
    GenaiPerf,
}

impl InputFormat {
    /// Every format, in the order they are listed to people.
    pub const ALL: [InputFormat; 4] = [
        InputFormat::Reports,
        InputFormat::Vllm,
        InputFormat::Sglang,
        InputFormat::GenaiPerf,
    ];

    /// The name `--input-format` takes.
    pub fn name(self) -> &'static str {
        match self {
            InputFormat::Reports => "reports",
            InputFormat::Vllm => "vllm",
            InputFormat::Sglang => "sglang",
            InputFormat::GenaiPerf => "genai-perf",
        }
    }

    /// The format of a name `--input-format` takes.
    pub fn from_name(name: &str) -> Option<InputFormat> {
        InputFormat::ALL.into_iter().find(|f| f.name() == name)
    }

    /// What wrote a file of this format, for the note on stderr.
    pub fn writer(self) -> &'static str {
        match self {
            InputFormat::Reports => "sweeper reports",
            InputFormat::Vllm => "vllm bench serve --save-result",
            InputFormat::Sglang => "SGLang bench_serving --output-file",
            InputFormat::GenaiPerf => "genai-perf profile_export_genai_perf.json",
        }
    }
}

/// Where a row's GPU count comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Gpus {
    /// The same count for every row (`--gpus 8`).
    Count(f64),
    /// A config or report key of each row (`--gpus used_gpus`, `--gpus tp`).
    Key(String),
}

impl Gpus {
    /// `--gpus` as given: a positive number, else a key name.
    pub fn parse(text: &str) -> Result<Gpus, String> {
        let t = text.trim();
        match t.parse::<f64>() {
            Ok(n) if n.is_finite() && n > 0.0 => Ok(Gpus::Count(n)),
            Ok(_) => Err(format!(
                "GPU count must be a positive finite number, got {}",
                crate::text::quote(t)
            )),
            Err(_) if t.is_empty() => Err("give a GPU count or the key that holds it".to_owned()),
            Err(_) => Ok(Gpus::Key(t.to_owned())),
        }
    }
}

/// How report inputs are read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadOptions {
    /// The format of every input; `None` decides it from each input's content.
    pub format: Option<InputFormat>,
    /// Keys renamed before anything else reads them, `(FROM, TO)` in order.
    pub map: Vec<(String, String)>,
    /// The GPU count of rows without `gpu_hours`; benchmark files default to the row's
    /// `used_gpus`.
    pub gpus: Option<Gpus>,
    /// Derive tok/s/user from `mean_tpot_ms` in sweeper's reports too.
    pub per_user_from_tpot: bool,
    /// The sweep config's `search_space.used_gpus` rule (a product of parameters or a
    /// fixed count): a row whose GPU count is read from `used_gpus` and that has none gets
    /// it from the rule first (vLLM's `--metadata tp=4` with `used_gpus: [tp]`).
    pub used_gpus: Option<sweeper_goal::UsedGpus>,
}

impl ReadOptions {
    /// Parses one `--map FROM=TO`.
    pub fn parse_map(text: &str) -> Result<(String, String), String> {
        match text.split_once('=') {
            Some((from, to)) if !from.trim().is_empty() && !to.trim().is_empty() => {
                Ok((from.trim().to_owned(), to.trim().to_owned()))
            }
            _ => Err(format!(
                "expected FROM=TO (the key as the input names it, then the name to read it \
                 as), got {}",
                crate::text::quote(text)
            )),
        }
    }

    /// The name `name` is read as.
    pub(super) fn mapped<'a>(&'a self, name: &'a str) -> &'a str {
        self.map
            .iter()
            .find(|(from, _)| from == name)
            .map_or(name, |(_, to)| to.as_str())
    }

    /// The name the input gives a column read as `name` (the FROM of a `--map` onto it).
    pub(super) fn source<'a>(&'a self, name: &'a str) -> &'a str {
        self.map
            .iter()
            .find(|(_, to)| to == name)
            .map_or(name, |(from, _)| from.as_str())
    }

    /// Renames the keys of one object (a row's config or report, a benchmark result),
    /// noting in `seen` which `FROM`s it had. A rename onto a key the object has is an
    /// error (two values for one key).
    pub(super) fn rename(
        &self,
        object: &mut Map<String, Value>,
        seen: &mut MapSeen,
    ) -> Result<(), String> {
        seen.names(object.keys());
        if self.map.is_empty() {
            return Ok(());
        }
        for (k, (from, to)) in self.map.iter().enumerate() {
            let Some(v) = object.remove(from) else {
                continue;
            };
            seen.hit(k);
            if object.contains_key(to) {
                return Err(format!(
                    "map {from}={to}: the row has both `{from}` and `{to}`; map another key or \
                     drop one of them"
                ));
            }
            object.insert(to.clone(), v);
        }
        Ok(())
    }

    /// Whether the derivations may change a row of `bench` origin (else nothing to do).
    fn derives(&self, bench: bool) -> bool {
        bench || self.gpus.is_some() || self.per_user_from_tpot
    }
}

/// Which `--map` sources an input had, and the names it has (for the error that names
/// them when a source is in none).
#[derive(Debug, Default)]
pub(super) struct MapSeen {
    hits: Vec<bool>,
    names: BTreeSet<String>,
    /// Whether names are still collected.
    collecting: bool,
}

impl MapSeen {
    /// Names kept for the error.
    const NAMES: usize = 200;

    pub(super) fn new(options: &ReadOptions) -> MapSeen {
        MapSeen {
            hits: vec![false; options.map.len()],
            names: BTreeSet::new(),
            collecting: !options.map.is_empty(),
        }
    }

    pub(super) fn hit(&mut self, k: usize) {
        if let Some(h) = self.hits.get_mut(k) {
            *h = true;
        }
    }

    pub(super) fn names<'a>(&mut self, names: impl Iterator<Item = &'a String>) {
        if !self.collecting || self.hits.iter().all(|h| *h) {
            return;
        }
        for n in names {
            if self.names.len() >= Self::NAMES {
                break;
            }
            if !self.names.contains(n) {
                self.names.insert(n.clone());
            }
        }
    }

    /// The error for the first source no input had.
    pub(super) fn check(&self, options: &ReadOptions) -> Result<(), InputError> {
        let Some(k) = self.hits.iter().position(|h| !h) else {
            return Ok(());
        };
        let (from, to) = &options.map[k];
        let mut names: Vec<String> = self.names.iter().map(|n| crate::text::quote(n)).collect();
        if self.names.len() >= Self::NAMES {
            names.push("...".to_owned());
        }
        Err(InputError::UnknownKey {
            from: from.clone(),
            to: to.clone(),
            available: names.join(", "),
        })
    }
}

/// The derivations' outcome for one row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Derived {
    /// The row was given the nominal hour (no duration of its own).
    pub(super) nominal_hour: bool,
}

/// Fills the report keys the scorer reads from what the row carries (see the module doc):
/// `gpu_hours` / `duration_ms` from its GPU count, tok/s/user from TPOT. `bench` is true
/// for a row of a benchmark's file.
pub(super) fn derive(
    place: Place,
    options: &ReadOptions,
    bench: bool,
    config: &mut Map<String, Value>,
    report: &mut BTreeMap<String, f64>,
) -> Result<Derived, InputError> {
    let mut out = Derived::default();
    if !options.derives(bench) {
        return Ok(out);
    }
    if (bench || options.per_user_from_tpot)
        && !report.contains_key(THROUGHPUT_PER_USER)
        && let Some(tpot) = report.get(TPOT).copied().filter(|t| *t > 0.0)
    {
        report.insert(THROUGHPUT_PER_USER.to_owned(), 1000.0 / tpot);
    }
    if matches!(&options.gpus, None | Some(Gpus::Key(_))) {
        sweeper_engine::run::fill_used_gpus(config, options.used_gpus.as_ref());
    }
    let gpus = match &options.gpus {
        Some(Gpus::Count(n)) => Some(*n),
        Some(Gpus::Key(key)) => Some(gpu_count(place, key, config, report)?),
        None if bench && config.contains_key(USED_GPUS) => {
            Some(gpu_count(place, USED_GPUS, config, report)?)
        }
        None => None,
    };
    let Some(g) = gpus else {
        return Ok(out);
    };
    if !config.contains_key(USED_GPUS) {
        config.insert(USED_GPUS.to_owned(), number_value(g));
    }
    if report.contains_key(GPU_HOURS) {
        return Ok(out);
    }
    match report.get(DURATION_MS).copied() {
        Some(ms) if ms > 0.0 && ms.is_finite() => {
            report.insert(GPU_HOURS.to_owned(), g * (ms / MS_PER_HOUR));
        }
        Some(_) => {}
        None => {
            report.insert(DURATION_MS.to_owned(), MS_PER_HOUR);
            report.insert(GPU_HOURS.to_owned(), g);
            out.nominal_hour = true;
        }
    }
    Ok(out)
}

/// The GPU count under `key` (config first, then report): a positive finite number.
fn gpu_count(
    place: Place,
    key: &str,
    config: &Map<String, Value>,
    report: &BTreeMap<String, f64>,
) -> Result<f64, InputError> {
    let found = match config.get(key) {
        Some(v) => v
            .as_f64()
            .ok_or_else(|| format!("must be a number, got {v}")),
        None => report.get(key).copied().ok_or_else(|| {
            "the row has no such key; give every row the key, or --gpus N".to_owned()
        }),
    };
    match found {
        Ok(g) if g.is_finite() && g > 0.0 => Ok(g),
        Ok(g) => Err(InputError::Value {
            place,
            column: key.to_owned(),
            detail: format!("the GPU count must be a positive finite number, got {g}"),
        }),
        Err(detail) => Err(InputError::Value {
            place,
            column: key.to_owned(),
            detail: format!("GPU count: {detail}"),
        }),
    }
}

/// A GPU count as a config value (an integer when it is one).
fn number_value(g: f64) -> Value {
    if g.fract() == 0.0 && g.abs() < 9.0e15 {
        #[allow(clippy::cast_possible_truncation)]
        Value::from(g as i64)
    } else {
        serde_json::Number::from_f64(g).map_or(Value::Null, Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place() -> Place {
        Place {
            line: Some(2),
            row: 0,
        }
    }

    #[test]
    fn gpu_hours_come_from_the_duration_or_a_nominal_hour() {
        let options = ReadOptions {
            gpus: Some(Gpus::Count(8.0)),
            ..ReadOptions::default()
        };
        let mut config = Map::new();
        let mut report = BTreeMap::from([(DURATION_MS.to_owned(), 1_800_000.0)]);
        let d = derive(place(), &options, false, &mut config, &mut report).unwrap();
        assert!(!d.nominal_hour);
        assert_eq!(report[GPU_HOURS], 4.0);
        assert_eq!(config[USED_GPUS], 8);
        let mut report = BTreeMap::new();
        let d = derive(place(), &options, false, &mut Map::new(), &mut report).unwrap();
        assert!(d.nominal_hour);
        assert_eq!((report[GPU_HOURS], report[DURATION_MS]), (8.0, MS_PER_HOUR));
        // a row's own gpu_hours is kept
        let mut report = BTreeMap::from([(GPU_HOURS.to_owned(), 1.0)]);
        derive(place(), &options, false, &mut Map::new(), &mut report).unwrap();
        assert_eq!(report[GPU_HOURS], 1.0);
        assert!(!report.contains_key(DURATION_MS));
    }

    #[test]
    fn the_gpu_count_of_a_key_must_be_a_positive_number() {
        let options = ReadOptions {
            gpus: Some(Gpus::Key("tp".to_owned())),
            ..ReadOptions::default()
        };
        let mut config = Map::from_iter([("tp".to_owned(), Value::from("four"))]);
        let err = derive(place(), &options, false, &mut config, &mut BTreeMap::new())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("column `tp`: GPU count: must be a number"),
            "{err}"
        );
        let err = derive(
            place(),
            &options,
            false,
            &mut Map::new(),
            &mut BTreeMap::new(),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("the row has no such key"), "{err}");
        assert_eq!(Gpus::parse("8"), Ok(Gpus::Count(8.0)));
        assert_eq!(Gpus::parse("tp"), Ok(Gpus::Key("tp".to_owned())));
        assert!(Gpus::parse("0").unwrap_err().contains("positive"));
    }

    #[test]
    fn the_configs_used_gpus_rule_gives_a_benchmark_rows_gpu_count() {
        let options = ReadOptions {
            used_gpus: Some(sweeper_goal::UsedGpus::Product(vec![
                "tp".to_owned(),
                "dp".to_owned(),
            ])),
            ..ReadOptions::default()
        };
        let mut config = Map::from_iter([
            ("tp".to_owned(), Value::from(2)),
            ("dp".to_owned(), Value::from(2)),
        ]);
        let mut report = BTreeMap::from([(DURATION_MS.to_owned(), 3_600_000.0)]);
        derive(place(), &options, true, &mut config, &mut report).unwrap();
        assert_eq!(config[USED_GPUS], 4);
        assert_eq!(report[GPU_HOURS], 4.0);
        // sweeper's own reports are left as they are without --gpus
        let mut config = Map::from_iter([("tp".to_owned(), Value::from(2))]);
        let mut report = BTreeMap::from([(DURATION_MS.to_owned(), 3_600_000.0)]);
        derive(place(), &options, false, &mut config, &mut report).unwrap();
        assert!(!report.contains_key(GPU_HOURS));
    }

    #[test]
    fn per_user_rate_from_tpot_only_when_asked_or_for_benchmarks() {
        let mut report = BTreeMap::from([(TPOT.to_owned(), 20.0)]);
        derive(
            place(),
            &ReadOptions::default(),
            false,
            &mut Map::new(),
            &mut report,
        )
        .unwrap();
        assert!(!report.contains_key(THROUGHPUT_PER_USER));
        derive(
            place(),
            &ReadOptions::default(),
            true,
            &mut Map::new(),
            &mut report,
        )
        .unwrap();
        assert_eq!(report[THROUGHPUT_PER_USER], 50.0);
        // a per-user rate the row has is kept
        let mut report = BTreeMap::from([
            (TPOT.to_owned(), 20.0),
            (THROUGHPUT_PER_USER.to_owned(), 7.0),
        ]);
        derive(
            place(),
            &ReadOptions::default(),
            true,
            &mut Map::new(),
            &mut report,
        )
        .unwrap();
        assert_eq!(report[THROUGHPUT_PER_USER], 7.0);
    }

    #[test]
    fn map_parses_and_refuses_a_rename_onto_a_key_the_row_has() {
        assert_eq!(
            ReadOptions::parse_map("conc=concurrency"),
            Ok(("conc".to_owned(), "concurrency".to_owned()))
        );
        assert!(ReadOptions::parse_map("conc").is_err());
        let options = ReadOptions {
            map: vec![("a".to_owned(), "b".to_owned())],
            ..ReadOptions::default()
        };
        let mut seen = MapSeen::new(&options);
        let mut o = Map::from_iter([
            ("a".to_owned(), Value::from(1)),
            ("b".to_owned(), Value::from(2)),
        ]);
        let err = options.rename(&mut o, &mut seen).unwrap_err();
        assert!(err.contains("both `a` and `b`"), "{err}");
    }
}
