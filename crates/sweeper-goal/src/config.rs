//! The whole sweep config: parse, validate, serialize.

use crate::error::ConfigError;
use crate::evaluator::EvaluatorConfig;
use crate::goal::{Goal, GoalOut};
use crate::raw::RawConfig;
use crate::space::SearchSpaceConfig;
use crate::sweep::SweepSettings;
use crate::workload::Workload;
use crate::{evaluator, goal, space, sweep, workload};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use std::path::Path;

// The text reader: YAML (and JSON, which is YAML) with the `yaml` feature, else JSON only.
#[cfg(not(feature = "yaml"))]
use crate::json::from_str as read_text;
#[cfg(feature = "yaml")]
use crate::yaml::from_str as read_text;

/// A validated sweep config. Immutable by convention: build it with [`parse`] or
/// [`from_path`], which check every rule of SPEC 2, 5 and 6.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SweepConfig {
    /// The optimization goal (default: throughput, no SLA).
    pub goal: Goal,
    /// The workload, if the config has one.
    pub workload: Option<Workload>,
    /// GPU budget, GPU count and parameters (default: budget 32, no parameters).
    pub search_space: SearchSpaceConfig,
    /// The evaluator, if the config has one.
    pub evaluator: Option<EvaluatorConfig>,
    /// Rounds, parallelism, seed, algorithm (all defaulted).
    pub sweep: SweepSettings,
}

impl SweepConfig {
    /// The config as YAML, every default written out; `parse(&cfg.to_yaml()) == Ok(cfg)`.
    #[cfg(feature = "yaml")]
    pub fn to_yaml(&self) -> String {
        crate::yaml::to_string(self)
    }

    /// The config as JSON text, every default written out, with the same keys in the same
    /// order as `to_yaml` (feature `yaml`); parsing it gives back the same config, with or
    /// without the feature.
    pub fn to_json_string(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The config as a JSON value. Object keys come out sorted, so the parameters' order is
    /// not kept here; use [`Self::to_json_string`] when it matters.
    pub fn to_json_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

impl Serialize for SweepConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("goal", &GoalOut::from(&self.goal))?;
        if let Some(w) = &self.workload {
            m.serialize_entry("workload", w)?;
        }
        m.serialize_entry("search_space", &self.search_space)?;
        if let Some(e) = &self.evaluator {
            m.serialize_entry("evaluator", e)?;
        }
        m.serialize_entry("sweep", &self.sweep)?;
        m.end()
    }
}

/// Parses and validates a config from YAML or JSON text (JSON only without the `yaml`
/// feature).
///
/// Checks run block by block (goal, workload, search space, evaluator, sweep) and the
/// first failure is returned; [`parse_all`] gives every block's failure. An empty document
/// is the all-default config.
pub fn parse(text: &str) -> Result<SweepConfig, ConfigError> {
    parse_all(text).map_err(|mut errors| errors.swap_remove(0))
}

/// Like [`parse`], but reports the first failure of *each* block (goal, workload, search
/// space, evaluator, sweep), in that order, so that a user fixes them in one pass. The
/// workload is checked against the goal's target even when the goal failed for another
/// reason, and skipped only when the target itself is unreadable. A
/// syntax or structure error stops everything and comes alone. The `Err` vector is never
/// empty.
pub fn parse_all(text: &str) -> Result<SweepConfig, Vec<ConfigError>> {
    // A UTF-8 byte-order mark (editors on Windows write one) is not part of the document.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Before the parser: deep nesting makes libyaml's scanner quadratic.
    crate::nesting::check(text).map_err(|e| vec![e])?;
    let raw: Option<RawConfig> = read_text(text).map_err(|e| vec![e])?;
    let Some(raw) = raw else {
        return Ok(SweepConfig::default());
    };
    let mut errors = Vec::new();
    let goal = keep(
        &mut errors,
        raw.goal.as_ref().map(goal::from_raw).transpose(),
    );
    // A failed goal still has a usable target most of the time (e.g. only its SLA was
    // wrong); the workload's checks need nothing else.
    let target_goal = match &goal {
        Some(g) => Some(g.clone().unwrap_or_default()),
        None => goal::stand_in(raw.goal.as_ref()),
    };
    let workload = target_goal.and_then(|g| {
        keep(
            &mut errors,
            raw.workload
                .as_ref()
                .map(|w| workload::from_raw(w, &g))
                .transpose(),
        )
    });
    let search_space = keep(
        &mut errors,
        raw.search_space.as_ref().map(space::from_raw).transpose(),
    );
    let evaluator = keep(
        &mut errors,
        raw.evaluator.as_ref().map(evaluator::from_raw).transpose(),
    );
    let sweep = keep(
        &mut errors,
        raw.sweep.as_ref().map(sweep::from_raw).transpose(),
    );
    match (goal, workload, search_space, evaluator, sweep) {
        (Some(goal), Some(workload), Some(search_space), Some(evaluator), Some(sweep))
            if errors.is_empty() =>
        {
            Ok(SweepConfig {
                goal: goal.unwrap_or_default(),
                workload,
                search_space: search_space.unwrap_or_default(),
                evaluator,
                sweep: sweep.unwrap_or_default(),
            })
        }
        _ => Err(errors),
    }
}

/// The value of a block, or `None` after recording its error.
fn keep<T>(errors: &mut Vec<ConfigError>, r: Result<T, ConfigError>) -> Option<T> {
    r.map_err(|e| errors.push(e)).ok()
}

/// Reads a file and [`parse`]s it; an unreadable file is [`ConfigError::Io`].
pub fn from_path(path: &Path) -> Result<SweepConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Io {
        path: path.to_owned(),
        source: e.into(),
    })?;
    parse(&text)
}

/// Reads a file and [`parse_all`]s it; an unreadable file is one [`ConfigError::Io`].
pub fn from_path_all(path: &Path) -> Result<SweepConfig, Vec<ConfigError>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        vec![ConfigError::Io {
            path: path.to_owned(),
            source: e.into(),
        }]
    })?;
    parse_all(&text)
}
