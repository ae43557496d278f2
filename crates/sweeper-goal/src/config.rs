//! The whole sweep config: parse, validate, serialize.

use crate::error::ConfigError;
use crate::evaluator::EvaluatorConfig;
use crate::goal::{Goal, GoalOut};
use crate::raw::RawConfig;
use crate::space::SearchSpaceConfig;
use crate::sweep::SweepSettings;
use crate::workload::Workload;
use crate::{evaluator, goal, space, sweep, workload, yaml};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use std::path::Path;

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
    pub fn to_yaml(&self) -> String {
        yaml::to_string(self)
    }

    /// The config as JSON text with the same keys, in the same order, as [`Self::to_yaml`];
    /// parsing it gives back the same config.
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

/// Parses and validates a config from YAML or JSON text.
///
/// Checks run block by block (goal, workload, search space, evaluator, sweep) and the
/// first failure is returned. An empty document is the all-default config.
pub fn parse(text: &str) -> Result<SweepConfig, ConfigError> {
    let raw: Option<RawConfig> = yaml::from_str(text)?;
    let Some(raw) = raw else {
        return Ok(SweepConfig::default());
    };
    let goal = raw
        .goal
        .as_ref()
        .map(goal::from_raw)
        .transpose()?
        .unwrap_or_default();
    let workload = raw
        .workload
        .as_ref()
        .map(|w| workload::from_raw(w, &goal))
        .transpose()?;
    let search_space = raw
        .search_space
        .as_ref()
        .map(space::from_raw)
        .transpose()?
        .unwrap_or_default();
    let evaluator = raw
        .evaluator
        .as_ref()
        .map(evaluator::from_raw)
        .transpose()?;
    let sweep = raw
        .sweep
        .as_ref()
        .map(sweep::from_raw)
        .transpose()?
        .unwrap_or_default();
    Ok(SweepConfig {
        goal,
        workload,
        search_space,
        evaluator,
        sweep,
    })
}

/// Reads a file and [`parse`]s it; an unreadable file is [`ConfigError::Io`].
pub fn from_path(path: &Path) -> Result<SweepConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Io {
        path: path.to_owned(),
        source: e.into(),
    })?;
    parse(&text)
}
