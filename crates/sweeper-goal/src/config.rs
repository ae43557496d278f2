//! The whole sweep config: parse, validate, serialize.

use crate::error::ConfigError;
use crate::evaluator::EvaluatorConfig;
use crate::export::ExportSettings;
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
    /// What `sweeper export` writes into a deployment (model, image, ...), if given.
    pub export: Option<ExportSettings>,
    /// Extra or replacement model cards, name → card (JSON as written), for a topology;
    /// checked where the cards are known (`sweeper-topology`).
    pub models: Option<serde_json::Value>,
    /// Extra or replacement GPU cards, name → card, likewise.
    pub gpus: Option<serde_json::Value>,
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

    /// The load each candidate takes from its own parameter (`concurrency` or
    /// `request_rate` in `search_space.parameters`), when the workload fixes none: a
    /// synthetic workload's [`Load::Searched`](crate::Load::Searched), a searched
    /// `concurrency` as the replay cap of a trace without `replay_concurrency`, or either
    /// without a workload block. `None` when the load is fixed, a KV ratio, or not searched.
    ///
    /// ```
    /// use sweeper_goal::SearchedLoad;
    /// // JSON, read with or without the `yaml` feature
    /// let config = sweeper_goal::parse(
    ///     r#"{"workload": {"isl": 1000, "osl": 200, "num_request_ratio": 4},
    ///         "search_space": {"parameters": {"concurrency": {"values": [4, 8, 16]}}}}"#,
    /// )?;
    /// assert_eq!(config.searched_load(), Some(SearchedLoad::Concurrency));
    /// # Ok::<(), sweeper_goal::ConfigError>(())
    /// ```
    pub fn searched_load(&self) -> Option<workload::SearchedLoad> {
        let named = || {
            self.search_space
                .parameters
                .iter()
                .find_map(|(name, _)| workload::SearchedLoad::of_parameter(name))
        };
        match &self.workload {
            Some(Workload::Synthetic { load, .. }) => load.searched(),
            Some(Workload::Trace {
                replay_concurrency: None,
                ..
            }) => named().filter(|l| *l == workload::SearchedLoad::Concurrency),
            Some(Workload::Trace { .. }) => None,
            None => named(),
        }
    }

    /// The searched load ([`searched_load`](Self::searched_load)) and the smallest and
    /// largest level its parameter takes, for display (`concurrency 4–128 (searched)`).
    pub fn searched_load_bounds(&self) -> Option<(workload::SearchedLoad, f64, f64)> {
        let load = self.searched_load()?;
        let (_, spec) = self
            .search_space
            .parameters
            .iter()
            .find(|(name, _)| name == load.key())?;
        Some((load, spec.min_value()?, spec.max_value()?))
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
        if let Some(e) = &self.export {
            m.serialize_entry("export", e)?;
        }
        if let Some(models) = &self.models {
            m.serialize_entry("models", models)?;
        }
        if let Some(gpus) = &self.gpus {
            m.serialize_entry("gpus", gpus)?;
        }
        m.end()
    }
}

/// The GPU of every candidate of `config` without a `gpu` parameter: the topology's `gpu`
/// (`search_space.topology.gpu`), else the built-in evaluator's `gpu:`; `None` when
/// neither is set. What a price map reads for such a candidate.
///
/// ```
/// // JSON, which every build reads (YAML needs the default `yaml` feature)
/// let config = sweeper_goal::parse(
///     r#"{"search_space": {"gpu_budget": 8, "topology": {"model": "qwen3-32b-fp8", "gpu": "b200"}},
///         "evaluator": {"builtin": {"model": "qwen3-32b-fp8", "gpu": "h200"}}}"#,
/// )?;
/// assert_eq!(sweeper_goal::default_gpu(&config), Some("b200"));
/// # Ok::<(), sweeper_goal::ConfigError>(())
/// ```
pub fn default_gpu(config: &SweepConfig) -> Option<&str> {
    crate::price::fallback_gpu(&config.search_space, config.evaluator.as_ref())
}

/// Parses and validates a config from YAML or JSON text (JSON only without the `yaml`
/// feature).
///
/// Checks run block by block (goal, workload, search space, evaluator, sweep, export) and
/// the first failure is returned; [`parse_all`] gives every block's failure. An empty
/// document is the all-default config.
pub fn parse(text: &str) -> Result<SweepConfig, ConfigError> {
    parse_all(text).map_err(|mut errors| errors.swap_remove(0))
}

/// Like [`parse`], but reports the first failure of *each* block (goal, workload, search
/// space, evaluator, sweep, export), in that order, so that a user fixes them in one pass.
/// A block's failure is a structure error (an unknown or misspelt key, a wrong type) as well as a
/// broken rule: a misspelt key in one block does not hide the other blocks' errors. The
/// workload is checked against the goal's target even when the goal failed for another
/// reason, and skipped only when the target itself is unreadable. A syntax error, or an
/// unknown key at the top level, stops everything and comes alone. The `Err` vector is
/// never empty.
pub fn parse_all(text: &str) -> Result<SweepConfig, Vec<ConfigError>> {
    let partial = parse_partial(text);
    if partial.errors.is_empty() {
        Ok(partial.config)
    } else {
        Err(partial.errors)
    }
}

/// One of the config's top-level blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Block {
    /// `goal:`
    Goal,
    /// `workload:`
    Workload,
    /// `search_space:`
    SearchSpace,
    /// `evaluator:`
    Evaluator,
    /// `sweep:`
    Sweep,
    /// `export:`
    Export,
}

/// A config read block by block ([`parse_partial`]): the blocks that passed their checks,
/// and the first error of each block that did not.
#[derive(Debug, Clone, Default)]
pub struct Partial {
    /// The config, with every failed block at its default (`workload` and `evaluator`
    /// `None`); meaningful as a whole only when `errors` is empty.
    pub config: SweepConfig,
    /// The first error of each failed block, in block order (or the one syntax error).
    pub errors: Vec<ConfigError>,
    /// Which blocks failed, in the order of [`Block`].
    failed: [bool; 6],
}

impl Partial {
    /// Whether `block` failed (a block skipped because the goal's target is unreadable
    /// counts as failed).
    pub fn failed(&self, block: Block) -> bool {
        self.failed[block as usize]
    }
}

/// The goal's target alone, every other key of the block skipped: what the workload's
/// checks need when the goal failed on a key beside it.
#[derive(serde::Deserialize)]
struct TargetOnly {
    target: Option<crate::raw::RawValue>,
}

/// The raw blocks, each read on its own so that one block's structure error leaves the
/// others readable.
struct RawBlocks {
    goal: Result<Option<crate::raw::RawGoal>, ConfigError>,
    workload: Result<Option<crate::raw::RawWorkload>, ConfigError>,
    search_space: Result<Option<crate::raw::RawSearchSpace>, ConfigError>,
    evaluator: Result<Option<crate::raw::RawEvaluator>, ConfigError>,
    sweep: Result<Option<crate::raw::RawSweep>, ConfigError>,
    export: Result<Option<crate::raw::RawExport>, ConfigError>,
    models: Option<crate::raw::RawValue>,
    gpus: Option<crate::raw::RawValue>,
}

fn read_blocks(text: &str) -> Result<RawBlocks, ConfigError> {
    use crate::raw::Skip;
    let whole = match read_text::<Option<RawConfig>>(text) {
        Ok(raw) => raw,
        Err(e) => {
            // The document's own shape first (a mapping of known blocks): its error comes
            // alone. Then each block read with the others skipped.
            let shape = read_text::<Option<RawConfig<Skip, Skip, Skip, Skip, Skip, Skip>>>(text)?;
            let (models, gpus) = shape.map_or((None, None), |r| (r.models, r.gpus));
            let blocks = RawBlocks {
                models,
                gpus,
                goal: read_text::<Option<RawConfig<_, Skip, Skip, Skip, Skip, Skip>>>(text)
                    .map(|r| r.and_then(|r| r.goal)),
                workload: read_text::<Option<RawConfig<Skip, _, Skip, Skip, Skip, Skip>>>(text)
                    .map(|r| r.and_then(|r| r.workload)),
                search_space: read_text::<Option<RawConfig<Skip, Skip, _, Skip, Skip, Skip>>>(text)
                    .map(|r| r.and_then(|r| r.search_space)),
                evaluator: read_text::<Option<RawConfig<Skip, Skip, Skip, _, Skip, Skip>>>(text)
                    .map(|r| r.and_then(|r| r.evaluator)),
                sweep: read_text::<Option<RawConfig<Skip, Skip, Skip, Skip, _, Skip>>>(text)
                    .map(|r| r.and_then(|r| r.sweep)),
                export: read_text::<Option<RawConfig<Skip, Skip, Skip, Skip, Skip, _>>>(text)
                    .map(|r| r.and_then(|r| r.export)),
            };
            let any_failed = blocks.goal.is_err()
                || blocks.workload.is_err()
                || blocks.search_space.is_err()
                || blocks.evaluator.is_err()
                || blocks.sweep.is_err()
                || blocks.export.is_err();
            // Each block read alone cannot fail less than the whole; should it, the whole's
            // error is the one to show.
            return if any_failed { Ok(blocks) } else { Err(e) };
        }
    };
    let whole = whole.unwrap_or(RawConfig {
        goal: None,
        workload: None,
        search_space: None,
        evaluator: None,
        sweep: None,
        export: None,
        models: None,
        gpus: None,
    });
    Ok(RawBlocks {
        goal: Ok(whole.goal),
        workload: Ok(whole.workload),
        search_space: Ok(whole.search_space),
        evaluator: Ok(whole.evaluator),
        sweep: Ok(whole.sweep),
        export: Ok(whole.export),
        models: whole.models,
        gpus: whole.gpus,
    })
}

/// Reads and checks a config block by block, like [`parse_all`], and keeps the blocks that
/// passed: a caller can run further checks on them (the CLI's `validate` checks the
/// evaluator's GPU and model even when the goal is misspelt). A syntax error, or an
/// unknown key at the top level, fails every block.
pub fn parse_partial(text: &str) -> Partial {
    use crate::raw::Skip;
    let mut partial = Partial::default();
    // A UTF-8 byte-order mark (editors on Windows write one) is not part of the document.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Before the parser: deep nesting makes libyaml's scanner quadratic.
    let raw = crate::nesting::check(text).and_then(|()| read_blocks(text));
    let raw = match raw {
        Ok(raw) => raw,
        Err(e) => {
            partial.errors.push(e);
            partial.failed = [true; 6];
            return partial;
        }
    };
    let errors = &mut partial.errors;
    let failed = &mut partial.failed;
    let goal = keep(
        errors,
        &mut failed[Block::Goal as usize],
        raw.goal
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|g| g.as_ref().map(goal::from_raw).transpose()),
    );
    // A failed goal still has a usable target most of the time (e.g. only its SLA was
    // wrong); the workload's checks need nothing else.
    let target_goal = match (&goal, &raw.goal) {
        (Some(g), _) => Some(g.clone().unwrap_or_default()),
        (None, Ok(g)) => goal::stand_in(g.as_ref()),
        // the goal's structure failed (a misspelt key beside the target): its target, read
        // on its own, still checks the workload
        (None, Err(_)) => {
            read_text::<Option<RawConfig<TargetOnly, Skip, Skip, Skip, Skip, Skip>>>(text)
                .ok()
                .flatten()
                .and_then(|r| r.goal)
                .and_then(|g| {
                    goal::stand_in(Some(&crate::raw::RawGoal {
                        target: g.target,
                        sla: None,
                        pareto_objectives: None,
                        min_goodput_rps: None,
                        price_per_gpu_hour: None,
                        strict_sla: None,
                    }))
                })
        }
    };
    // The load the search space searches, read from its parameter names alone (the rest of
    // the search space is checked with its block).
    let searched = match &raw.search_space {
        Ok(Some(s)) => s.parameters.as_ref().and_then(|m| {
            m.0.iter()
                .find_map(|(name, _)| workload::SearchedLoad::of_parameter(name))
        }),
        _ => None,
    };
    let workload = if let Some(g) = target_goal {
        keep(
            errors,
            &mut failed[Block::Workload as usize],
            raw.workload.and_then(|w| {
                w.as_ref()
                    .map(|w| workload::from_raw(w, &g, searched))
                    .transpose()
            }),
        )
    } else {
        // The workload's rules need the target; its structure error is still shown.
        if let Err(e) = raw.workload {
            errors.push(e);
        }
        failed[Block::Workload as usize] = true;
        None
    };
    let search_space = keep(
        errors,
        &mut failed[Block::SearchSpace as usize],
        raw.search_space
            .and_then(|s| s.as_ref().map(space::from_raw).transpose()),
    );
    let evaluator = keep(
        errors,
        &mut failed[Block::Evaluator as usize],
        raw.evaluator
            .and_then(|e| e.as_ref().map(evaluator::from_raw).transpose()),
    );
    let sweep = keep(
        errors,
        &mut failed[Block::Sweep as usize],
        raw.sweep
            .and_then(|s| s.as_ref().map(sweep::from_raw).transpose()),
    );
    let export = keep(
        errors,
        &mut failed[Block::Export as usize],
        raw.export
            .and_then(|e| e.as_ref().map(crate::export::from_raw).transpose()),
    );
    let search_space = search_space.flatten().unwrap_or_default();
    let (models, gpus) = keep(
        errors,
        &mut failed[Block::SearchSpace as usize],
        cards(raw.models.as_ref(), raw.gpus.as_ref(), &search_space),
    )
    .unwrap_or_default();
    partial.config = SweepConfig {
        goal: goal.flatten().unwrap_or_default(),
        workload: workload.flatten(),
        search_space,
        evaluator: evaluator.flatten(),
        sweep: sweep.flatten().unwrap_or_default(),
        export: export.flatten(),
        models,
        gpus,
    };
    // Across blocks: a price map covers every GPU the search space or the built-in
    // evaluator can give a candidate (counted against the goal).
    if !partial.failed(Block::Goal)
        && !partial.failed(Block::SearchSpace)
        && !partial.failed(Block::Evaluator)
        && let Err(e) = crate::price::check_gpus(
            &partial.config.goal,
            &partial.config.search_space,
            partial.config.evaluator.as_ref(),
        )
    {
        partial.errors.push(e);
        partial.failed[Block::Goal as usize] = true;
    }
    partial
}

/// The top-level `models:` and `gpus:` as JSON: each a mapping from name to card, and only
/// beside a topology (the built-in model's cards go under `evaluator.builtin`).
fn cards(
    models: Option<&crate::raw::RawValue>,
    gpus: Option<&crate::raw::RawValue>,
    space: &SearchSpaceConfig,
) -> Result<(Option<serde_json::Value>, Option<serde_json::Value>), ConfigError> {
    let one = |v: Option<&crate::raw::RawValue>, key: &str| {
        v.map(|v| {
            if space.topology.is_none() {
                return Err(ConfigError::Topology {
                    path: key.to_owned(),
                    why: format!(
                        "top-level {key}: are cards for search_space.topology; add a topology block, or put the cards under evaluator.builtin.{key} for the built-in model"
                    ),
                });
            }
            let json = crate::raw::to_json(v, key)?;
            if json.is_object() {
                Ok(json)
            } else {
                Err(ConfigError::Topology {
                    path: key.to_owned(),
                    why: format!(
                        "{key}: is a mapping from a name to a card, e.g. `{key}: {{my-card: {{...}}}}`"
                    ),
                })
            }
        })
        .transpose()
    };
    Ok((one(models, "models")?, one(gpus, "gpus")?))
}

/// The value of a block, or `None` after recording its error and marking it failed.
fn keep<T>(
    errors: &mut Vec<ConfigError>,
    failed: &mut bool,
    r: Result<T, ConfigError>,
) -> Option<T> {
    r.map_err(|e| {
        errors.push(e);
        *failed = true;
    })
    .ok()
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
