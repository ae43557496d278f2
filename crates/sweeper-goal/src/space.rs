//! The `search_space:` block: GPU budget, GPU count, and the parameters the sampler searches.

use crate::error::ConfigError;
use crate::raw::{self, RawParam, RawSearchSpace, RawValue};
use crate::topology::{self, TOPOLOGY_KEYS, TopologyConfig};
use crate::workload::Num;
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use std::collections::{HashMap, HashSet};

/// The default `gpu_budget` (SPEC 6).
pub const DEFAULT_GPU_BUDGET: u64 = 32;

/// Parameter names the run reserves: the searched load ratio is added to the study under
/// this name.
pub const RESERVED_PARAMETER_NAMES: [&str; 1] = ["kv_load_ratio"];

/// How many GPUs a candidate uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UsedGpus {
    /// The product of these integer-valued parameters (e.g. `[tp, replicas]`).
    Product(Vec<String>),
    /// The same count for every candidate.
    Fixed(u64),
}

/// One searched (or constant) parameter. A parameter with exactly one value is a constant:
/// it stays in the list and the sampler injects it into every candidate.
#[derive(Debug, Clone, PartialEq)]
pub enum ParameterSpec {
    /// Discrete numbers (`{values: [1, 2, 4, 8], log: true}`): finite, distinct, sorted
    /// ascending; with `log`, all `> 0`.
    Values {
        /// The values, sorted ascending.
        values: Vec<f64>,
        /// Whether the sampler models them on a log scale.
        log: bool,
    },
    /// An integer range (`{int: [1, 8]}`), both ends included; `lo <= hi`; with `log`,
    /// `lo >= 1`.
    Int {
        /// Lower end.
        lo: i64,
        /// Upper end.
        hi: i64,
        /// Whether the sampler models it on a log scale.
        log: bool,
    },
    /// A float range (`{float: [0.0, 1.0]}`), finite, `lo <= hi`; with `log`, `lo > 0`.
    Float {
        /// Lower end.
        lo: f64,
        /// Upper end.
        hi: f64,
        /// Whether the sampler models it on a log scale.
        log: bool,
    },
    /// Categories (`{choices: [round_robin, kv_aware]}`): non-empty, distinct.
    Choices(Vec<String>),
}

impl ParameterSpec {
    /// Whether the parameter has exactly one value (a constant, not searched).
    pub fn is_constant(&self) -> bool {
        self.constant_value().is_some()
    }

    /// The one value of a constant parameter, as JSON in its native type (integers stay
    /// integers), else `None`.
    pub fn constant_value(&self) -> Option<serde_json::Value> {
        match self {
            ParameterSpec::Values { values, .. } if values.len() == 1 => {
                Some(number_json(values[0]))
            }
            ParameterSpec::Int { lo, hi, .. } if lo == hi => Some(serde_json::Value::from(*lo)),
            ParameterSpec::Float { lo, hi, .. } if lo == hi => {
                serde_json::Number::from_f64(*lo).map(serde_json::Value::Number)
            }
            ParameterSpec::Choices(c) if c.len() == 1 => {
                Some(serde_json::Value::String(c[0].clone()))
            }
            _ => None,
        }
    }

    /// Whether every value is a whole number (an `int` range, or `values` of integers).
    pub fn is_integer_valued(&self) -> bool {
        match self {
            ParameterSpec::Int { .. } => true,
            ParameterSpec::Values { values, .. } => values.iter().all(|v| v.fract() == 0.0),
            ParameterSpec::Float { .. } | ParameterSpec::Choices(_) => false,
        }
    }

    /// The smallest value of a numeric parameter.
    pub fn min_value(&self) -> Option<f64> {
        match self {
            ParameterSpec::Values { values, .. } => values.first().copied(),
            ParameterSpec::Int { lo, .. } => Some(*lo as f64),
            ParameterSpec::Float { lo, .. } => Some(*lo),
            ParameterSpec::Choices(_) => None,
        }
    }

    /// The largest value of a numeric parameter.
    pub fn max_value(&self) -> Option<f64> {
        match self {
            ParameterSpec::Values { values, .. } => values.last().copied(),
            ParameterSpec::Int { hi, .. } => Some(*hi as f64),
            ParameterSpec::Float { hi, .. } => Some(*hi),
            ParameterSpec::Choices(_) => None,
        }
    }

    /// Whether the sampler should model it on a log scale.
    pub fn is_log(&self) -> bool {
        match self {
            ParameterSpec::Values { log, .. }
            | ParameterSpec::Int { log, .. }
            | ParameterSpec::Float { log, .. } => *log,
            ParameterSpec::Choices(_) => false,
        }
    }
}

/// A number as JSON: an integer when it is a whole number, else a float.
pub(crate) fn number_json(x: f64) -> serde_json::Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        serde_json::Value::from(x as i64)
    } else {
        serde_json::Number::from_f64(x).map_or(serde_json::Value::Null, serde_json::Value::Number)
    }
}

impl Serialize for ParameterSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Nums<'a>(&'a [f64]);
        impl Serialize for Nums<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut q = s.serialize_seq(Some(self.0.len()))?;
                for x in self.0 {
                    q.serialize_element(&Num(*x))?;
                }
                q.end()
            }
        }
        let mut m = s.serialize_map(None)?;
        match self {
            ParameterSpec::Values { values, log } => {
                m.serialize_entry("values", &Nums(values))?;
                if *log {
                    m.serialize_entry("log", &true)?;
                }
            }
            ParameterSpec::Int { lo, hi, log } => {
                m.serialize_entry("int", &[*lo, *hi])?;
                if *log {
                    m.serialize_entry("log", &true)?;
                }
            }
            ParameterSpec::Float { lo, hi, log } => {
                m.serialize_entry("float", &[*lo, *hi])?;
                if *log {
                    m.serialize_entry("log", &true)?;
                }
            }
            ParameterSpec::Choices(c) => m.serialize_entry("choices", c)?,
        }
        m.end()
    }
}

/// The validated `search_space:` block.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchSpaceConfig {
    /// Candidates using more GPUs are infeasible. Default 32, `>= 1`.
    pub gpu_budget: u64,
    /// With a topology: candidates using fewer GPUs are not enumerated (`1 <=
    /// min_gpu_budget <= gpu_budget`).
    pub min_gpu_budget: Option<u64>,
    /// How many GPUs a candidate uses; `None`: read from the evaluator's report (or, with a
    /// topology, derived from the shape).
    pub used_gpus: Option<UsedGpus>,
    /// Deployment shapes derived from a model and a GPU (SPEC 8); `used_gpus` may not be
    /// given with it.
    pub topology: Option<TopologyConfig>,
    /// The parameters, in the order written in the file.
    pub parameters: Vec<(String, ParameterSpec)>,
}

impl Default for SearchSpaceConfig {
    fn default() -> Self {
        SearchSpaceConfig {
            gpu_budget: DEFAULT_GPU_BUDGET,
            min_gpu_budget: None,
            used_gpus: None,
            topology: None,
            parameters: Vec::new(),
        }
    }
}

impl SearchSpaceConfig {
    /// The parameter of that name.
    pub fn parameter(&self, name: &str) -> Option<&ParameterSpec> {
        self.parameters
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p)
    }
}

impl Serialize for SearchSpaceConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Params<'a>(&'a [(String, ParameterSpec)]);
        impl Serialize for Params<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(self.0.len()))?;
                for (k, v) in self.0 {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
        }
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("gpu_budget", &self.gpu_budget)?;
        if let Some(min) = self.min_gpu_budget {
            m.serialize_entry("min_gpu_budget", &min)?;
        }
        match &self.used_gpus {
            None => {}
            Some(UsedGpus::Fixed(n)) => m.serialize_entry("used_gpus", n)?,
            Some(UsedGpus::Product(names)) => m.serialize_entry("used_gpus", names)?,
        }
        if let Some(t) = &self.topology {
            m.serialize_entry("topology", t)?;
        }
        m.serialize_entry("parameters", &Params(&self.parameters))?;
        m.end()
    }
}

fn param_from_raw(name: &str, p: &RawParam) -> Result<ParameterSpec, ConfigError> {
    let base = raw::join("search_space.parameters", name);
    let kinds: Vec<String> = [
        ("values", &p.values),
        ("int", &p.int),
        ("float", &p.float),
        ("choices", &p.choices),
    ]
    .iter()
    .filter(|(_, v)| v.is_some())
    .map(|(k, _)| (*k).to_owned())
    .collect();
    if kinds.len() != 1 {
        return Err(ConfigError::ParameterKind {
            path: base,
            found: kinds,
        });
    }
    let log_path = raw::join(&base, "log");
    let log = p
        .log
        .as_ref()
        .map(|v| raw::boolean(v, &log_path))
        .transpose()?;
    if let Some(v) = &p.values {
        let path = raw::join(&base, "values");
        let items = raw::seq(v, &path, "a list of numbers", "e.g. `values: [1, 2, 4, 8]`")?;
        if items.is_empty() {
            return Err(ConfigError::EmptyList {
                path,
                expected: "list at least one number".to_owned(),
            });
        }
        let log = log.unwrap_or(false);
        let mut values = Vec::with_capacity(items.len());
        // the values seen, by bit pattern with -0.0 read as 0.0 (equal as numbers), so that
        // the duplicate check is linear: 10^5 values once took seconds
        let mut seen = HashSet::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let ip = raw::index(&path, i);
            let x = raw::finite(item, &ip, "a parameter value is a finite number")?;
            if !seen.insert((x + 0.0).to_bits()) {
                return Err(ConfigError::DuplicateValue {
                    path: ip,
                    value: item.show(),
                });
            }
            if log && x <= 0.0 {
                return Err(ConfigError::LogScale {
                    path: ip,
                    value: item.show(),
                    expected: "log-scale values are all > 0".to_owned(),
                });
            }
            values.push(x);
        }
        values.sort_by(f64::total_cmp);
        return Ok(ParameterSpec::Values { values, log });
    }
    if let Some(v) = &p.int {
        let path = raw::join(&base, "int");
        let items = range_items(v, &path, "e.g. `int: [1, 8]`")?;
        let bound = |i: usize| {
            raw::int_in(
                &items[i],
                &raw::index(&path, i),
                i128::from(i64::MIN),
                i128::from(i64::MAX),
                "an int bound fits in 64 bits",
                "an int range has integer bounds; use float: for a continuous range",
            )
            .map(|x| x as i64)
        };
        let (lo, hi) = (bound(0)?, bound(1)?);
        if lo > hi {
            return Err(ConfigError::RangeBounds {
                path,
                lo: lo.to_string(),
                hi: hi.to_string(),
            });
        }
        let log = log.unwrap_or(false);
        if log && lo < 1 {
            return Err(ConfigError::LogScale {
                path: raw::index(&path, 0),
                value: lo.to_string(),
                expected: "a log-scale int range starts at >= 1".to_owned(),
            });
        }
        return Ok(ParameterSpec::Int { lo, hi, log });
    }
    if let Some(v) = &p.float {
        let path = raw::join(&base, "float");
        let items = range_items(v, &path, "e.g. `float: [0.0, 1.0]`")?;
        let bound = |i: usize| {
            raw::finite(
                &items[i],
                &raw::index(&path, i),
                "a float bound is a finite number",
            )
        };
        let (lo, hi) = (bound(0)?, bound(1)?);
        if lo > hi {
            return Err(ConfigError::RangeBounds {
                path,
                lo: raw::show_f64(lo),
                hi: raw::show_f64(hi),
            });
        }
        let log = log.unwrap_or(false);
        if log && lo <= 0.0 {
            return Err(ConfigError::LogScale {
                path: raw::index(&path, 0),
                value: raw::show_f64(lo),
                expected: "a log-scale float range starts at > 0".to_owned(),
            });
        }
        return Ok(ParameterSpec::Float { lo, hi, log });
    }
    // Exactly one kind is set and it is `choices`.
    let v = p.choices.as_ref().unwrap_or(&RawValue::Null);
    let path = raw::join(&base, "choices");
    if log.is_some() {
        return Err(ConfigError::LogNotApplicable { path: log_path });
    }
    let items = raw::seq(
        v,
        &path,
        "a list of strings",
        "e.g. `choices: [round_robin, kv_aware]`",
    )?;
    if items.is_empty() {
        return Err(ConfigError::EmptyList {
            path,
            expected: "list at least one choice".to_owned(),
        });
    }
    let mut choices: Vec<String> = Vec::with_capacity(items.len());
    // a set beside the list keeps the duplicate check linear: 10^5 choices took 15 s
    let mut seen: HashSet<&str> = HashSet::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let ip = raw::index(&path, i);
        let s = raw::string(
            item,
            &ip,
            "choices are strings: quote a number or boolean (`\"1\"`), or use values: for numbers",
        )?;
        if !seen.insert(s) {
            return Err(ConfigError::DuplicateValue {
                path: ip,
                value: item.show(),
            });
        }
        choices.push(s.to_owned());
    }
    Ok(ParameterSpec::Choices(choices))
}

fn range_items<'a>(v: &'a RawValue, path: &str, hint: &str) -> Result<&'a [RawValue], ConfigError> {
    let items = raw::seq(v, path, "a range [lo, hi]", hint)?;
    if items.len() == 2 {
        Ok(items)
    } else {
        Err(ConfigError::RangeLength {
            path: path.to_owned(),
            len: items.len(),
        })
    }
}

/// Validates a raw `search_space:` block.
pub(crate) fn from_raw(s: &RawSearchSpace) -> Result<SearchSpaceConfig, ConfigError> {
    let gpu_budget = match &s.gpu_budget {
        None => DEFAULT_GPU_BUDGET,
        Some(v) => raw::int_in(
            v,
            "search_space.gpu_budget",
            1,
            i128::from(u64::MAX),
            "gpu_budget is an integer >= 1 (0 would make every candidate infeasible)",
            "gpu_budget counts whole GPUs",
        )? as u64,
    };
    let mut parameters = Vec::new();
    if let Some(map) = &s.parameters {
        for (name, p) in &map.0 {
            let path = raw::join("search_space.parameters", name);
            if name.trim().is_empty() {
                return Err(ConfigError::OutOfRange {
                    path,
                    value: format!("{name:?}"),
                    expected: "a parameter name is a non-empty string".to_owned(),
                });
            }
            if RESERVED_PARAMETER_NAMES.contains(&name.as_str()) {
                return Err(ConfigError::ReservedParameter {
                    path,
                    name: name.clone(),
                    why: "the workload's kv_load_ratio is searched under that name".to_owned(),
                });
            }
            let spec = param_from_raw(name, p)?;
            if let Some(load) = crate::workload::SearchedLoad::of_parameter(name) {
                check_load_parameter(load, &path, &spec, &parameters)?;
            }
            parameters.push((name.clone(), spec));
        }
    }
    let topology = s.topology.as_ref().map(topology::from_raw).transpose()?;
    let min_gpu_budget = s
        .min_gpu_budget
        .as_ref()
        .map(|v| {
            raw::int_in(
                v,
                "search_space.min_gpu_budget",
                1,
                i128::from(gpu_budget),
                &format!("min_gpu_budget is an integer in [1, gpu_budget = {gpu_budget}]"),
                "min_gpu_budget counts whole GPUs",
            )
            .map(|n| n as u64)
        })
        .transpose()?;
    if let Some(t) = &topology {
        if s.used_gpus.is_some() {
            return Err(ConfigError::Topology {
                path: "search_space.used_gpus".to_owned(),
                why: "with a topology a candidate's GPUs are derived from its shape (the sum over its pools), so used_gpus may not be given; remove it".to_owned(),
            });
        }
        for (name, _) in &parameters {
            let bare = crate::topology::pool_key(name).unwrap_or(name);
            if TOPOLOGY_KEYS.contains(&bare) {
                return Err(ConfigError::ReservedParameter {
                    path: raw::join("search_space.parameters", name),
                    name: name.clone(),
                    why: format!(
                        "with a topology the shape of model {} gives it; pin shapes with topology.parallel_configs instead",
                        t.model
                    ),
                });
            }
        }
    } else if s.min_gpu_budget.is_some() {
        return Err(ConfigError::Topology {
            path: "search_space.min_gpu_budget".to_owned(),
            why: "min_gpu_budget bounds the shapes a topology enumerates; add a topology block or remove it".to_owned(),
        });
    }
    let mut space = SearchSpaceConfig {
        gpu_budget,
        min_gpu_budget,
        used_gpus: None,
        topology,
        parameters,
    };
    space.used_gpus = s
        .used_gpus
        .as_ref()
        .map(|v| used_gpus(v, &space))
        .transpose()?;
    Ok(space)
}

/// A parameter named after a load (`concurrency`, `request_rate`) is the candidate's load
/// when the workload fixes none (SPEC 5's workload block is unchanged): its values must be
/// loads, and only one load is searched.
fn check_load_parameter(
    load: crate::workload::SearchedLoad,
    path: &str,
    spec: &ParameterSpec,
    earlier: &[(String, ParameterSpec)],
) -> Result<(), ConfigError> {
    use crate::workload::SearchedLoad;
    let name = load.key();
    let fail = |why: String| ConfigError::LoadParameter {
        path: path.to_owned(),
        name: name.to_owned(),
        why,
    };
    if let Some((other, _)) = earlier
        .iter()
        .find(|(n, _)| SearchedLoad::of_parameter(n).is_some())
    {
        return Err(fail(format!(
            "a sweep searches one load and `{other}` is searched too; keep one of the two"
        )));
    }
    let example = match load {
        SearchedLoad::Concurrency => "`concurrency: {values: [4, 8, 16, 32, 64, 128]}`",
        SearchedLoad::RequestRate => "`request_rate: {values: [0.5, 1, 2, 4]}`",
    };
    let (values, lo): (Vec<f64>, f64) = match spec {
        ParameterSpec::Choices(_) => {
            return Err(fail(format!(
                "it takes numbers, not choices; e.g. {example}"
            )));
        }
        ParameterSpec::Float { .. } if load == SearchedLoad::Concurrency => {
            return Err(fail(format!(
                "it counts whole requests in flight: use `values` or `int`, not `float`; e.g. {example}"
            )));
        }
        ParameterSpec::Values { values, .. } => (
            values.clone(),
            values.iter().copied().fold(f64::INFINITY, f64::min),
        ),
        ParameterSpec::Int { lo, .. } => (Vec::new(), *lo as f64),
        ParameterSpec::Float { lo, .. } => (Vec::new(), *lo),
    };
    if let Some(bad) = values
        .iter()
        .find(|v| load == SearchedLoad::Concurrency && v.fract() != 0.0)
    {
        return Err(fail(format!(
            "its values are whole numbers of requests in flight, found {bad}; e.g. {example}"
        )));
    }
    if lo <= 0.0 {
        return Err(fail(format!(
            "its values are > 0, found {lo}; e.g. {example}"
        )));
    }
    Ok(())
}

fn used_gpus(v: &RawValue, space: &SearchSpaceConfig) -> Result<UsedGpus, ConfigError> {
    let path = "search_space.used_gpus";
    let over = |min_used: u64| ConfigError::UsedGpusOverBudget {
        path: path.to_owned(),
        min_used,
        gpu_budget: space.gpu_budget,
    };
    match v {
        RawValue::Seq(items) => {
            if items.is_empty() {
                return Err(ConfigError::EmptyList {
                    path: path.to_owned(),
                    expected: "name the integer parameters whose product is the GPU count, e.g. `used_gpus: [tp, replicas]`".to_owned(),
                });
            }
            let known: Vec<String> = space.parameters.iter().map(|(n, _)| n.clone()).collect();
            // by name, so that each entry is looked up once (parameter names are distinct)
            let by_name: HashMap<&str, &ParameterSpec> = space
                .parameters
                .iter()
                .map(|(n, p)| (n.as_str(), p))
                .collect();
            let mut names: Vec<String> = Vec::with_capacity(items.len());
            let mut seen: HashSet<&str> = HashSet::with_capacity(items.len());
            let mut min_used: u64 = 1;
            for (i, item) in items.iter().enumerate() {
                let ip = raw::index(path, i);
                let name = raw::string(item, &ip, "list parameter names, e.g. `[tp, replicas]`")?;
                if !seen.insert(name) {
                    return Err(ConfigError::DuplicateValue {
                        path: ip,
                        value: item.show(),
                    });
                }
                let Some(spec) = by_name.get(name).copied() else {
                    return Err(ConfigError::UsedGpusUnknownParameter {
                        path: ip,
                        name: name.to_owned(),
                        known,
                    });
                };
                if !spec.is_integer_valued() {
                    return Err(ConfigError::UsedGpusNotInteger {
                        path: ip,
                        name: name.to_owned(),
                        why: "it is not integer-valued".to_owned(),
                    });
                }
                let lo = spec.min_value().unwrap_or(0.0);
                if lo < 1.0 {
                    return Err(ConfigError::UsedGpusNotInteger {
                        path: ip,
                        name: name.to_owned(),
                        why: format!("its smallest value is {}", raw::show_f64(lo)),
                    });
                }
                min_used = min_used.saturating_mul(lo as u64);
                names.push(name.to_owned());
            }
            if min_used > space.gpu_budget {
                return Err(over(min_used));
            }
            Ok(UsedGpus::Product(names))
        }
        RawValue::Int(_) | RawValue::Float(_) => {
            let n = raw::int_in(
                v,
                path,
                1,
                i128::from(u64::MAX),
                "a fixed used_gpus is an integer >= 1",
                "a fixed GPU count is a whole number",
            )? as u64;
            if n > space.gpu_budget {
                return Err(over(n));
            }
            Ok(UsedGpus::Fixed(n))
        }
        _ => Err(ConfigError::WrongType {
            path: path.to_owned(),
            expected: "a list of parameter names or one integer".to_owned(),
            found: v.describe(),
            hint: "; e.g. `used_gpus: [tp, replicas]` or `used_gpus: 8`".to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_and_integer_values() {
        let v = ParameterSpec::Values {
            values: vec![2.0],
            log: false,
        };
        assert_eq!(v.constant_value(), Some(serde_json::json!(2)));
        assert!(v.is_integer_valued());
        let f = ParameterSpec::Float {
            lo: 0.5,
            hi: 0.5,
            log: false,
        };
        assert_eq!(f.constant_value(), Some(serde_json::json!(0.5)));
        assert!(!f.is_integer_valued());
        let i = ParameterSpec::Int {
            lo: 1,
            hi: 8,
            log: true,
        };
        assert!(!i.is_constant() && i.is_log() && i.is_integer_valued());
        assert_eq!(i.min_value(), Some(1.0));
        let c = ParameterSpec::Choices(vec!["a".into(), "b".into()]);
        assert_eq!(c.min_value(), None);
        assert!(!c.is_log());
    }

    #[test]
    fn serializes_in_config_shape() {
        let s = SearchSpaceConfig {
            gpu_budget: 8,
            min_gpu_budget: None,
            topology: None,
            used_gpus: Some(UsedGpus::Product(vec!["tp".into()])),
            parameters: vec![
                (
                    "tp".into(),
                    ParameterSpec::Values {
                        values: vec![1.0, 2.0],
                        log: true,
                    },
                ),
                ("r".into(), ParameterSpec::Choices(vec!["x".into()])),
            ],
        };
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"gpu_budget":8,"used_gpus":["tp"],"parameters":{"tp":{"values":[1,2],"log":true},"r":{"choices":["x"]}}}"#
        );
    }
}
