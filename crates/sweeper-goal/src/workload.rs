//! The `workload:` block (SPEC 5): a trace or a synthetic load, and its load shape.

use crate::error::ConfigError;
use crate::goal::Goal;
use crate::load::request_count;
use crate::raw::{self, RawValue, RawWorkload};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use std::path::PathBuf;

/// The load of a synthetic workload: exactly one shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Load {
    /// Open loop: requests per second, `> 0`.
    RequestRate(f64),
    /// Closed loop: one fixed in-flight cap, `> 0`.
    Concurrency(u64),
    /// Closed loop relative to each candidate's KV capacity; finite, `>= 0` (above 1 means
    /// oversubscription).
    KvLoadRatio(f64),
    /// A ratio searched by the sampler as a continuous parameter (pareto goals only);
    /// `0 <= min < max`, finite.
    KvLoadRange {
        /// Lower end.
        min: f64,
        /// Upper end.
        max: f64,
    },
    /// The workload sets no load and the search space searches one: each candidate runs at
    /// the level its parameter of this name takes (`concurrency: {values: [4, 8, 16]}`), which
    /// the run sends as the candidate's load, not among its parameters.
    Searched(SearchedLoad),
}

/// A load searched as a candidate parameter of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchedLoad {
    /// `search_space.parameters.concurrency`: closed loop, whole numbers `> 0`.
    Concurrency,
    /// `search_space.parameters.request_rate`: open loop, requests per second `> 0`.
    RequestRate,
}

impl SearchedLoad {
    /// Both, in the order they are looked for.
    pub const ALL: [SearchedLoad; 2] = [SearchedLoad::Concurrency, SearchedLoad::RequestRate];

    /// The parameter's name, which is also the workload's key of the same load.
    pub fn key(self) -> &'static str {
        match self {
            SearchedLoad::Concurrency => "concurrency",
            SearchedLoad::RequestRate => "request_rate",
        }
    }

    /// The searched load a parameter called `name` is, if it is one.
    pub fn of_parameter(name: &str) -> Option<SearchedLoad> {
        SearchedLoad::ALL.into_iter().find(|l| l.key() == name)
    }
}

impl Load {
    /// The fixed in-flight cap when the load is a fixed concurrency, else `None` (a rate is
    /// open loop; a ratio becomes a concurrency per candidate).
    pub fn fixed_concurrency(&self) -> Option<u64> {
        match self {
            Load::Concurrency(c) => Some(*c),
            _ => None,
        }
    }

    /// The fixed KV load ratio, if the load is one.
    pub fn kv_load_ratio(&self) -> Option<f64> {
        match self {
            Load::KvLoadRatio(r) => Some(*r),
            _ => None,
        }
    }

    /// `(min, max)` when the load is a searched ratio range.
    pub fn kv_load_range(&self) -> Option<(f64, f64)> {
        match self {
            Load::KvLoadRange { min, max } => Some((*min, *max)),
            _ => None,
        }
    }

    /// The config key of this shape (`"request_rate"`, `"concurrency"`, `"kv_load_ratio"`).
    pub fn key(&self) -> &'static str {
        match self {
            Load::RequestRate(_) => "request_rate",
            Load::Concurrency(_) => "concurrency",
            Load::KvLoadRatio(_) | Load::KvLoadRange { .. } => "kv_load_ratio",
            Load::Searched(l) => l.key(),
        }
    }

    /// The searched load parameter, when the load is searched as one.
    pub fn searched(&self) -> Option<SearchedLoad> {
        match self {
            Load::Searched(l) => Some(*l),
            _ => None,
        }
    }
}

/// A validated workload.
#[derive(Debug, Clone, PartialEq)]
pub enum Workload {
    /// Replay a recorded trace.
    Trace {
        /// The trace file.
        trace_path: PathBuf,
        /// Optional closed-loop cap, `> 0`.
        replay_concurrency: Option<u64>,
    },
    /// Generate requests.
    Synthetic {
        /// Input sequence length, tokens, `> 0`.
        isl: u64,
        /// Output sequence length, tokens, `> 0`.
        osl: u64,
        /// Requests per unit of load, `> 0`.
        num_request_ratio: f64,
        /// The one load shape.
        load: Load,
    },
}

impl Workload {
    /// The in-flight cap known before a candidate is built: the trace's
    /// `replay_concurrency`, or a synthetic fixed `concurrency`; `None` for a rate or a ratio.
    pub fn fixed_concurrency(&self) -> Option<u64> {
        match self {
            Workload::Trace {
                replay_concurrency, ..
            } => *replay_concurrency,
            Workload::Synthetic { load, .. } => load.fixed_concurrency(),
        }
    }

    /// The load of a synthetic workload.
    pub fn load(&self) -> Option<&Load> {
        match self {
            Workload::Trace { .. } => None,
            Workload::Synthetic { load, .. } => Some(load),
        }
    }

    /// The request count at a given load (a concurrency or a request rate):
    /// `max(1, round_half_even(num_request_ratio * load))`; `None` for a trace.
    pub fn request_count_at(&self, load: f64) -> Option<u64> {
        match self {
            Workload::Trace { .. } => None,
            Workload::Synthetic {
                num_request_ratio, ..
            } => Some(request_count(*num_request_ratio, load)),
        }
    }

    /// The block as configured (a defaulted pareto range is written out as
    /// `kv_load_ratio: [0.0, 1.0]`; a load searched as a parameter is not written, as it
    /// was not), as the run loop sends it to evaluators.
    pub fn to_json_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// Serializes a float as an integer when it is a whole number (readable output; parsing
/// gives back the same `f64`).
pub(crate) struct Num(pub(crate) f64);

impl Serialize for Num {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let x = self.0;
        if x.fract() == 0.0 && x.abs() < 9.0e15 {
            s.serialize_i64(x as i64)
        } else {
            s.serialize_f64(x)
        }
    }
}

impl Serialize for Workload {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match self {
            Workload::Trace {
                trace_path,
                replay_concurrency,
            } => {
                m.serialize_entry("trace_path", trace_path)?;
                if let Some(c) = replay_concurrency {
                    m.serialize_entry("replay_concurrency", c)?;
                }
            }
            Workload::Synthetic {
                isl,
                osl,
                num_request_ratio,
                load,
            } => {
                m.serialize_entry("isl", isl)?;
                m.serialize_entry("osl", osl)?;
                m.serialize_entry("num_request_ratio", &Num(*num_request_ratio))?;
                match load {
                    Load::RequestRate(r) => m.serialize_entry("request_rate", &Num(*r))?,
                    Load::Concurrency(c) => m.serialize_entry("concurrency", c)?,
                    Load::KvLoadRatio(r) => m.serialize_entry("kv_load_ratio", r)?,
                    Load::KvLoadRange { min, max } => {
                        m.serialize_entry("kv_load_ratio", &[*min, *max])?;
                    }
                    Load::Searched(_) => {}
                }
            }
        }
        m.end()
    }
}

const SYNTHETIC_KEYS: [&str; 6] = [
    "isl",
    "osl",
    "num_request_ratio",
    "request_rate",
    "concurrency",
    "kv_load_ratio",
];

fn positive_int(v: &RawValue, path: &str, what: &str, hint: &str) -> Result<u64, ConfigError> {
    raw::int_in(
        v,
        path,
        1,
        i128::from(u64::MAX),
        &format!("{what} is an integer > 0"),
        hint,
    )
    .map(|i| i as u64)
}

/// Validates a raw `workload:` block under a goal (the range rule needs the target) and the
/// load the search space searches, if any (`search_space.parameters.concurrency` or
/// `.request_rate`): that load is the candidate's when the workload fixes none, and a
/// workload that fixes one as well is refused.
pub(crate) fn from_raw(
    w: &RawWorkload,
    goal: &Goal,
    searched: Option<SearchedLoad>,
) -> Result<Workload, ConfigError> {
    let p = "workload";
    let synthetic = [
        &w.isl,
        &w.osl,
        &w.num_request_ratio,
        &w.request_rate,
        &w.concurrency,
        &w.kv_load_ratio,
    ];
    let synthetic_set: Vec<String> = SYNTHETIC_KEYS
        .iter()
        .zip(synthetic)
        .filter(|(_, v)| v.is_some())
        .map(|(k, _)| (*k).to_owned())
        .collect();
    if let Some(tp) = &w.trace_path {
        if !synthetic_set.is_empty() {
            return Err(ConfigError::WorkloadMixed {
                path: p.to_owned(),
                keys: synthetic_set,
            });
        }
        let path_str = raw::string(tp, "workload.trace_path", "write the trace file's path")?;
        if path_str.is_empty() {
            return Err(raw::out_of_range(
                "workload.trace_path",
                tp,
                "the trace path must not be empty",
            ));
        }
        match searched {
            Some(SearchedLoad::RequestRate) => {
                return Err(ConfigError::LoadParameter {
                    path: "search_space.parameters.request_rate".to_owned(),
                    name: "request_rate".to_owned(),
                    why: "it needs a synthetic workload: a trace replays its own arrival times; search `concurrency` (the replay cap) instead, or replace trace_path by isl, osl and num_request_ratio".to_owned(),
                });
            }
            Some(SearchedLoad::Concurrency) if w.replay_concurrency.is_some() => {
                return Err(ConfigError::LoadFixedAndSearched {
                    path: "workload.replay_concurrency".to_owned(),
                    parameter: "concurrency".to_owned(),
                });
            }
            _ => {}
        }
        let replay_concurrency = w
            .replay_concurrency
            .as_ref()
            .map(|v| {
                positive_int(
                    v,
                    "workload.replay_concurrency",
                    "replay_concurrency",
                    "it is one closed-loop cap such as `replay_concurrency: 64`",
                )
            })
            .transpose()?;
        return Ok(Workload::Trace {
            trace_path: PathBuf::from(path_str),
            replay_concurrency,
        });
    }
    if w.replay_concurrency.is_some() {
        if synthetic_set.is_empty() {
            return Err(ConfigError::MissingField {
                path: "workload.trace_path".to_owned(),
                hint: "replay_concurrency applies only to a trace workload: set trace_path too"
                    .to_owned(),
            });
        }
        return Err(ConfigError::ReplayConcurrencyNeedsTrace {
            path: "workload.replay_concurrency".to_owned(),
            keys: synthetic_set,
        });
    }
    if synthetic_set.is_empty() {
        return Err(ConfigError::WorkloadShapeMissing { path: p.to_owned() });
    }
    let required = |v: &Option<RawValue>, key: &str, hint: &str| -> Result<RawValue, ConfigError> {
        v.clone().ok_or_else(|| ConfigError::MissingField {
            path: format!("workload.{key}"),
            hint: hint.to_owned(),
        })
    };
    let isl = positive_int(
        &required(
            &w.isl,
            "isl",
            "a synthetic workload needs isl, the input length in tokens, e.g. `isl: 4000`",
        )?,
        "workload.isl",
        "isl",
        "isl is the input sequence length in tokens",
    )?;
    let osl = positive_int(
        &required(
            &w.osl,
            "osl",
            "a synthetic workload needs osl, the output length in tokens, e.g. `osl: 500`",
        )?,
        "workload.osl",
        "osl",
        "osl is the output sequence length in tokens",
    )?;
    let nrr = raw::positive(
        &required(
            &w.num_request_ratio,
            "num_request_ratio",
            "a synthetic workload needs num_request_ratio (requests per unit of load), e.g. `num_request_ratio: 10`",
        )?,
        "workload.num_request_ratio",
        "num_request_ratio is a finite number > 0",
    )?;
    let loads: Vec<String> = [
        ("request_rate", &w.request_rate),
        ("concurrency", &w.concurrency),
        ("kv_load_ratio", &w.kv_load_ratio),
    ]
    .iter()
    .filter(|(_, v)| v.is_some())
    .map(|(k, _)| (*k).to_owned())
    .collect();
    if loads.len() > 1 {
        return Err(ConfigError::MultipleLoads {
            path: p.to_owned(),
            keys: loads,
        });
    }
    if let (Some(fixed), Some(searched)) = (loads.first(), searched) {
        return Err(ConfigError::LoadFixedAndSearched {
            path: format!("workload.{fixed}"),
            parameter: searched.key().to_owned(),
        });
    }
    let load = if let Some(v) = &w.request_rate {
        Load::RequestRate(raw::positive(
            v,
            "workload.request_rate",
            "request_rate is a finite number of requests per second > 0",
        )?)
    } else if let Some(v) = &w.concurrency {
        Load::Concurrency(positive_int(
            v,
            "workload.concurrency",
            "concurrency",
            "concurrency is one fixed in-flight cap such as `concurrency: 64`; to sweep levels, remove it here and search it as `search_space.parameters.concurrency: {values: [4, 8, 16]}`, or use `kv_load_ratio: [min, max]` under a pareto goal",
        )?)
    } else if let Some(v) = &w.kv_load_ratio {
        kv_load(v, goal)?
    } else if let Some(searched) = searched {
        Load::Searched(searched)
    } else if goal.is_pareto() {
        Load::KvLoadRange { min: 0.0, max: 1.0 }
    } else {
        return Err(ConfigError::LoadMissing { path: p.to_owned() });
    };
    // A fixed load gives the request count now: one that no integer holds (1e300 x 1e300 is
    // infinite) is an error here, not a silent count of 1 at run time.
    let fixed = match &load {
        Load::RequestRate(r) => Some(("request_rate", *r)),
        Load::Concurrency(c) => Some(("concurrency", *c as f64)),
        _ => None,
    };
    if let Some((key, x)) = fixed {
        let count = crate::load::round_half_even(nrr * x);
        if !(count.is_finite() && count < u64::MAX as f64) {
            return Err(ConfigError::OutOfRange {
                path: "workload.num_request_ratio".to_owned(),
                value: raw::show_f64(nrr),
                expected: format!(
                    "the request count num_request_ratio x {key} ({} x {}) must be a whole number below 2^64; lower num_request_ratio or {key}",
                    raw::show_f64(nrr),
                    raw::show_f64(x)
                ),
            });
        }
    }
    Ok(Workload::Synthetic {
        isl,
        osl,
        num_request_ratio: nrr,
        load,
    })
}

const RATIO_EXPECTED: &str =
    "a kv_load_ratio is a finite number >= 0 (above 1 oversubscribes the KV cache)";

fn kv_load(v: &RawValue, goal: &Goal) -> Result<Load, ConfigError> {
    let path = "workload.kv_load_ratio";
    match v {
        RawValue::Seq(items) => {
            if items.len() != 2 {
                return Err(ConfigError::KvRangeLength {
                    path: path.to_owned(),
                    len: items.len(),
                });
            }
            let min = raw::non_negative(&items[0], &raw::index(path, 0), RATIO_EXPECTED)?;
            let max = raw::non_negative(&items[1], &raw::index(path, 1), RATIO_EXPECTED)?;
            if min >= max {
                return Err(ConfigError::KvRangeOrder {
                    path: path.to_owned(),
                    min,
                    max,
                });
            }
            if !goal.is_pareto() {
                return Err(ConfigError::KvRangeNeedsPareto {
                    path: path.to_owned(),
                    target: goal.target().name().to_owned(),
                });
            }
            Ok(Load::KvLoadRange { min, max })
        }
        RawValue::Int(_) | RawValue::Float(_) => Ok(Load::KvLoadRatio(raw::non_negative(
            v,
            path,
            RATIO_EXPECTED,
        )?)),
        _ => Err(ConfigError::WrongType {
            path: path.to_owned(),
            expected: "one number or a range [min, max]".to_owned(),
            found: v.describe(),
            hint: "; e.g. `kv_load_ratio: 0.5` or `kv_load_ratio: [0.05, 1.0]`".to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_serialize_as_integers() {
        assert_eq!(serde_json::to_string(&Num(4.0)).unwrap(), "4");
        assert_eq!(serde_json::to_string(&Num(0.25)).unwrap(), "0.25");
        assert_eq!(serde_json::to_string(&Num(1e300)).unwrap(), "1e+300");
    }

    #[test]
    fn load_helpers() {
        assert_eq!(Load::Concurrency(3).fixed_concurrency(), Some(3));
        assert_eq!(Load::KvLoadRatio(0.5).fixed_concurrency(), None);
        assert_eq!(Load::RequestRate(2.0).key(), "request_rate");
        assert_eq!(
            Load::KvLoadRange { min: 0.1, max: 0.9 }.kv_load_range(),
            Some((0.1, 0.9))
        );
        let w = Workload::Synthetic {
            isl: 10,
            osl: 4,
            num_request_ratio: 0.5,
            load: Load::RequestRate(7.0),
        };
        assert_eq!(w.request_count_at(7.0), Some(4)); // 3.5 rounds to even
        assert_eq!(
            w.to_json_value(),
            serde_json::json!({"isl": 10, "osl": 4, "num_request_ratio": 0.5, "request_rate": 7})
        );
    }
}
