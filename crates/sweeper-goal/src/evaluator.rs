//! The `evaluator:` block: an external command or the built-in model (whose inner block is
//! opaque here and validated by the cli crate).

use crate::error::ConfigError;
use crate::raw::{self, RawEvaluator, RawValue};
use crate::slurm::{self, SlurmConfig};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What evaluates a candidate.
#[derive(Debug, Clone, PartialEq)]
pub enum EvaluatorKind {
    /// An external process: the candidate as JSON on stdin, the report as JSON on stdout.
    Command {
        /// Program and arguments, never passed through a shell; non-empty.
        argv: Vec<String>,
        /// One long-lived process per worker speaking JSON Lines.
        persistent: bool,
    },
    /// The built-in serving model, with its settings (opaque here; always a JSON object).
    Builtin(serde_json::Value),
}

/// The validated `evaluator:` block.
#[derive(Debug, Clone, PartialEq)]
pub struct EvaluatorConfig {
    /// Command or builtin.
    pub kind: EvaluatorKind,
    /// Extra environment for the process.
    pub env: BTreeMap<String, String>,
    /// Working directory of the process.
    pub cwd: Option<PathBuf>,
    /// Run each evaluation of the command as one Slurm batch job (a command evaluator
    /// that is not persistent only).
    pub slurm: Option<SlurmConfig>,
}

impl Serialize for EvaluatorConfig {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match &self.kind {
            EvaluatorKind::Command { argv, persistent } => {
                m.serialize_entry("command", argv)?;
                m.serialize_entry("persistent", persistent)?;
            }
            EvaluatorKind::Builtin(v) => m.serialize_entry("builtin", v)?,
        }
        if !self.env.is_empty() {
            m.serialize_entry("env", &self.env)?;
        }
        if let Some(cwd) = &self.cwd {
            m.serialize_entry("cwd", cwd)?;
        }
        if let Some(slurm) = &self.slurm {
            m.serialize_entry("slurm", slurm)?;
        }
        m.end()
    }
}

/// Validates a raw `evaluator:` block.
pub(crate) fn from_raw(e: &RawEvaluator) -> Result<EvaluatorConfig, ConfigError> {
    let p = "evaluator";
    let found: Vec<String> = [("command", &e.command), ("builtin", &e.builtin)]
        .iter()
        .filter(|(_, v)| v.is_some())
        .map(|(k, _)| (*k).to_owned())
        .collect();
    if found.len() != 1 {
        return Err(ConfigError::EvaluatorKind {
            path: p.to_owned(),
            found,
        });
    }
    let kind = if let Some(cmd) = &e.command {
        let path = "evaluator.command";
        let items = raw::seq(
            cmd,
            path,
            "a list [program, args...]",
            "the command is never run through a shell: write `command: [python3, eval.py]`",
        )?;
        if items.is_empty() {
            return Err(ConfigError::EmptyList {
                path: path.to_owned(),
                expected: "the first entry is the program to run".to_owned(),
            });
        }
        let mut argv = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let ip = raw::index(path, i);
            let arg = match item {
                RawValue::Int(_) | RawValue::Float(_) | RawValue::Bool(_) => item.show(),
                _ => raw::string(item, &ip, "each argument is a string")?.to_owned(),
            };
            if i == 0 && arg.is_empty() {
                return Err(raw::out_of_range(
                    &ip,
                    item,
                    "the program name must not be empty",
                ));
            }
            argv.push(arg);
        }
        let persistent = e
            .persistent
            .as_ref()
            .map(|v| raw::boolean(v, "evaluator.persistent"))
            .transpose()?
            .unwrap_or(false);
        EvaluatorKind::Command { argv, persistent }
    } else {
        if e.persistent.is_some() {
            return Err(ConfigError::PersistentWithoutCommand {
                path: "evaluator.persistent".to_owned(),
            });
        }
        let path = "evaluator.builtin";
        let v = e.builtin.as_ref().unwrap_or(&RawValue::Null);
        if !matches!(v, RawValue::Map(_)) {
            return Err(ConfigError::WrongType {
                path: path.to_owned(),
                expected: "a mapping of the built-in model's settings".to_owned(),
                found: v.describe(),
                hint: "; e.g. `builtin: {model: qwen3-32b-fp8, gpu: h200}`".to_owned(),
            });
        }
        EvaluatorKind::Builtin(raw::to_json(v, path)?)
    };
    let mut env = BTreeMap::new();
    if let Some(map) = &e.env {
        for (k, v) in &map.0 {
            let path = raw::join("evaluator.env", k);
            if k.is_empty() || k.contains('=') || k.contains('\0') {
                return Err(ConfigError::OutOfRange {
                    path,
                    value: format!("{k:?}"),
                    expected: "an environment variable name is non-empty, without `=` or NUL"
                        .to_owned(),
                });
            }
            let value = match v {
                RawValue::Str(s) => s.clone(),
                RawValue::Int(_) | RawValue::Bool(_) => v.show(),
                RawValue::Float(f) if f.is_finite() => v.show(),
                _ => {
                    return Err(ConfigError::WrongType {
                        path,
                        expected: "a string".to_owned(),
                        found: v.describe(),
                        hint: "; environment values are text".to_owned(),
                    });
                }
            };
            if value.contains('\0') {
                return Err(raw::out_of_range(
                    &path,
                    v,
                    "an environment value has no NUL",
                ));
            }
            env.insert(k.clone(), value);
        }
    }
    let cwd = match &e.cwd {
        None => None,
        Some(v) => {
            let s = raw::string(v, "evaluator.cwd", "write the working directory's path")?;
            if s.is_empty() {
                return Err(raw::out_of_range(
                    "evaluator.cwd",
                    v,
                    "the working directory must not be empty",
                ));
            }
            Some(PathBuf::from(s))
        }
    };
    let slurm = match &e.slurm {
        None => None,
        Some(raw_slurm) => {
            match &kind {
                EvaluatorKind::Builtin(_) => {
                    return Err(ConfigError::SlurmConflict {
                        path: "evaluator.slurm".to_owned(),
                        why: "a Slurm job runs a command: write `command: [prog, args...]` beside `slurm:`, or remove `slurm:` to run the built-in model here".to_owned(),
                    });
                }
                EvaluatorKind::Command {
                    persistent: true, ..
                } => {
                    return Err(ConfigError::SlurmConflict {
                        path: "evaluator.persistent".to_owned(),
                        why: "a Slurm evaluator runs one batch job per candidate, so it cannot be persistent; remove `persistent: true` or `slurm:`".to_owned(),
                    });
                }
                EvaluatorKind::Command { .. } => {}
            }
            Some(slurm::from_raw(raw_slurm)?)
        }
    };
    Ok(EvaluatorConfig {
        kind,
        env,
        cwd,
        slurm,
    })
}
