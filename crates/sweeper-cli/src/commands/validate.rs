//! `sweeper validate CONFIG`: check a sweep config and print what it resolves to.
//!
//! Exit 0 and the resolved goal on stdout when the config is valid; exit 1 with the error on
//! stderr (nothing on stdout) when it is not; exit 2 when the file cannot be read. "Valid"
//! means what `sweeper run` needs before its first trial ([`sweeper_eval::check_runnable`]).

use super::{CliError, CliResult, Format, print_stdout};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::PathBuf;
use sweeper_goal::{
    ConfigError, EvaluatorKind, Load, ParameterSpec, SweepConfig, UsedGpus, Workload,
};

/// Arguments of `sweeper validate`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  sweeper validate examples/quickstart.yaml
  sweeper validate examples/pareto-three.yaml --format json
  sweeper validate examples/evaluators/aiperf-sweep.yaml

Prints the goal as sweeper resolved it: objectives and their directions, the
sampler's metrics, the SLA, the load, the space, the evaluator and the budget.
Every block's first error is reported in one pass, with its key path, line and
column, and what to write instead. A config from another program: `... | sweeper
validate -`.

Exit status: 0 valid; 1 invalid (nothing on stdout); 2 the file cannot be read.")]
pub(crate) struct Args {
    /// The sweep config (YAML or JSON); `-` reads standard input.
    config: PathBuf,
    /// Output format of the resolved config.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

pub(crate) fn run(args: &Args) -> CliResult {
    let text = super::read_config_text(&args.config)?;
    let file = super::input_name(&args.config);
    // Every block is read and checked on its own, and what `sweeper run` checks before its
    // first trial (the search space the sampler can represent, the built-in model's presets
    // and keys, the evaluator's program) runs on the blocks that passed: one pass names
    // every block's first error.
    let partial = sweeper_goal::parse_partial(&text);
    if let [e @ ConfigError::Io { .. }] = partial.errors.as_slice() {
        return Err(CliError::io(e.to_string()));
    }
    let mut errors: Vec<String> = partial.errors.iter().map(ToString::to_string).collect();
    errors.extend(
        sweeper_eval::check_runnable_partial(&partial)
            .iter()
            .map(ToString::to_string),
    );
    match errors.as_slice() {
        [] => {}
        [e] => return Err(CliError::invalid(format!("{file}: invalid config: {e}"))),
        _ => {
            let mut message = format!("{file}: invalid config, {} errors:", errors.len());
            for e in &errors {
                let _ = write!(message, "\n  {e}");
            }
            return Err(CliError::invalid(message));
        }
    }
    let cfg = partial.config;
    let out = match args.format {
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&summary_json(&file, &cfg))
                .map_err(|e| CliError::io(format!("cannot encode JSON: {e}")))?;
            text.push('\n');
            sweeper_engine::text::escape_json_controls(&text)
        }
        Format::Table => table(&file, &cfg),
        Format::Csv => csv(&file, &cfg),
    };
    print_stdout(&out)
}

/// A load searched as a parameter, as `validate` shows it: `concurrency [4..128] (searched)`.
fn searched_text(cfg: &SweepConfig) -> Option<String> {
    let (load, lo, hi) = cfg.searched_load_bounds()?;
    let open = if load == sweeper_goal::SearchedLoad::RequestRate {
        ", open loop"
    } else {
        ""
    };
    Some(format!("{} [{lo}..{hi}] (searched{open})", load.key()))
}

fn load_json(cfg: &SweepConfig) -> Value {
    if let Some((load, lo, hi)) = cfg.searched_load_bounds() {
        return json!({"kind": "searched", "parameter": load.key(), "min": lo, "max": hi});
    }
    match cfg.workload.as_ref() {
        None => Value::Null,
        Some(Workload::Trace {
            replay_concurrency, ..
        }) => json!({"kind": "trace", "concurrency": replay_concurrency}),
        Some(Workload::Synthetic { load, .. }) => match load {
            Load::RequestRate(r) => json!({"kind": "request_rate", "request_rate": r}),
            Load::Concurrency(c) => json!({"kind": "concurrency", "concurrency": c}),
            Load::KvLoadRatio(r) => json!({"kind": "kv_load_ratio", "kv_load_ratio": r}),
            Load::KvLoadRange { min, max } => {
                json!({"kind": "kv_load_range", "min": min, "max": max})
            }
            Load::Searched(l) => json!({"kind": "searched", "parameter": l.key()}),
        },
    }
}

fn summary_json(path: &str, cfg: &SweepConfig) -> Value {
    let goal = &cfg.goal;
    let objectives: Vec<Value> = goal
        .objectives()
        .iter()
        .map(|o| json!({"name": o.name(), "direction": o.direction().as_str(), "unit": o.unit()}))
        .collect();
    let metrics: Vec<Value> = goal
        .sampler_metrics()
        .iter()
        .map(|m| json!({"name": m.name, "direction": m.direction.as_str()}))
        .collect();
    json!({
        "valid": true,
        "config": path,
        "target": goal.target().name(),
        "pareto": goal.is_pareto(),
        "objectives": objectives,
        "sampler_metrics": metrics,
        "sla": goal.sla().map(sweeper_goal::Sla::to_json_value),
        "workload": cfg.workload.as_ref().map(Workload::to_json_value),
        "load": load_json(cfg),
        "gpu_budget": cfg.search_space.gpu_budget,
        "pool": pool_json(cfg),
        "resolved": cfg.to_json_value(),
    })
}

/// The pool of a topology: deployments per mode and backend (`null` without a topology).
fn pool_json(cfg: &SweepConfig) -> Value {
    let Ok(Some(pool)) = sweeper_engine::topology_pool(cfg) else {
        return Value::Null;
    };
    let counts: Vec<Value> = pool
        .counts()
        .iter()
        .map(|(m, b, n)| json!({"deployment_mode": m.as_str(), "backend": b.as_str(), "deployments": n}))
        .collect();
    json!({
        "deployments": pool.deployments().len(),
        "context_length": pool.context_length(),
        "min_gpu_budget": pool.min_gpu_budget(),
        "by_mode_and_backend": counts,
        "notes": pool.notes(),
    })
}

/// `(key, value)` lines of the human summary.
fn rows(cfg: &SweepConfig) -> Vec<(&'static str, String)> {
    let goal = &cfg.goal;
    let mut rows = vec![("target", goal.target().name().to_owned())];
    let objectives: Vec<String> = goal
        .objectives()
        .iter()
        .map(|o| format!("{} ({}, {})", o.name(), o.direction(), o.unit()))
        .collect();
    rows.push(("objectives", objectives.join(", ")));
    let metrics: Vec<String> = goal
        .sampler_metrics()
        .iter()
        .map(|m| format!("{} ({})", m.name, m.direction))
        .collect();
    rows.push(("sampler metrics", metrics.join(", ")));
    let sla = match goal.sla() {
        None => "none".to_owned(),
        Some(s) => {
            let parts: Vec<String> = [
                ("ttft_ms", s.ttft_ms),
                ("itl_ms", s.itl_ms),
                ("e2e_ms", s.e2e_ms),
            ]
            .iter()
            .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
            .collect();
            if parts.is_empty() {
                "empty".to_owned()
            } else {
                parts.join(" ")
            }
        }
    };
    rows.push(("sla", sla));
    let (workload, load) = match &cfg.workload {
        None => ("none".to_owned(), "none".to_owned()),
        Some(Workload::Trace {
            trace_path,
            replay_concurrency,
        }) => (
            format!("trace {}", trace_path.display()),
            replay_concurrency.map_or_else(
                || "as recorded".to_owned(),
                |c| format!("replay_concurrency {c} (fixed)"),
            ),
        ),
        Some(Workload::Synthetic {
            isl,
            osl,
            num_request_ratio,
            load,
        }) => (
            format!("synthetic isl={isl} osl={osl} num_request_ratio={num_request_ratio}"),
            match load {
                Load::RequestRate(r) => format!("request_rate {r}/s (open loop)"),
                Load::Concurrency(c) => format!("concurrency {c} (fixed)"),
                Load::KvLoadRatio(r) => {
                    format!("kv_load_ratio {r} (of each candidate's KV capacity)")
                }
                Load::KvLoadRange { min, max } => {
                    format!("kv_load_ratio [{min}, {max}] (searched)")
                }
                Load::Searched(l) => format!("{} (searched)", l.key()),
            },
        ),
    };
    let load = searched_text(cfg).unwrap_or(load);
    rows.push(("workload", workload));
    rows.push(("load", load));
    let space = &cfg.search_space;
    rows.push(("gpu_budget", space.gpu_budget.to_string()));
    if let Some(t) = &space.topology {
        let modes: Vec<&str> = t.deployment_modes.iter().map(|m| m.as_str()).collect();
        let backends: Vec<&str> = t.backends.iter().map(|b| b.as_str()).collect();
        rows.push((
            "topology",
            format!(
                "{} on {}, modes [{}], backends [{}], gpus_per_worker {:?}{}",
                t.model,
                t.gpu,
                modes.join(", "),
                backends.join(", "),
                t.gpus_per_worker,
                if t.parallel_configs.is_empty() {
                    String::new()
                } else {
                    format!(", {} pinned parallel_configs", t.parallel_configs.len())
                }
            ),
        ));
        if let Ok(Some(pool)) = sweeper_engine::topology_pool(cfg) {
            for (m, b, n) in pool.counts() {
                rows.push((
                    "pool",
                    format!("{} {}: {n} deployments", m.as_str(), b.as_str()),
                ));
            }
            rows.push((
                "pool",
                format!(
                    "{} in all, {} to {} GPUs, each KV-feasible for {} tokens",
                    pool.deployments().len(),
                    pool.min_gpu_budget(),
                    pool.gpu_budget(),
                    pool.context_length()
                ),
            ));
            for note in pool.notes() {
                rows.push(("pool", format!("note: {note}")));
            }
        }
    }
    rows.push((
        "used_gpus",
        match &space.used_gpus {
            None if space.topology.is_some() => {
                "derived from each deployment (the sum over its pools)".to_owned()
            }
            None => "from the report".to_owned(),
            Some(UsedGpus::Fixed(n)) => n.to_string(),
            Some(UsedGpus::Product(names)) => names.join(" x "),
        },
    ));
    for (name, spec) in &space.parameters {
        let text = match spec {
            ParameterSpec::Values { values, log } => format!(
                "values [{}]{}",
                values
                    .iter()
                    .map(f64::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                if *log { " log" } else { "" }
            ),
            ParameterSpec::Int { lo, hi, log } => {
                format!("int [{lo}, {hi}]{}", if *log { " log" } else { "" })
            }
            ParameterSpec::Float { lo, hi, log } => {
                format!("float [{lo}, {hi}]{}", if *log { " log" } else { "" })
            }
            ParameterSpec::Choices(c) => format!("choices [{}]", c.join(", ")),
        };
        let text = if spec.is_constant() {
            format!("{text} (constant)")
        } else {
            text
        };
        rows.push(("parameter", format!("{name}: {text}")));
    }
    rows.push((
        "evaluator",
        match cfg.evaluator.as_ref().map(|e| &e.kind) {
            None => "none".to_owned(),
            Some(EvaluatorKind::Command { argv, persistent }) => format!(
                "command {}{}",
                argv.join(" "),
                if *persistent { " (persistent)" } else { "" }
            ),
            Some(EvaluatorKind::Builtin(v)) => format!("builtin {v}"),
        },
    ));
    if let Some(slurm) = cfg.evaluator.as_ref().and_then(|e| e.slurm.as_ref()) {
        rows.push(("slurm", slurm_row(slurm, cfg.sweep.max_eval_seconds)));
    }
    let s = &cfg.sweep;
    rows.push((
        "sweep",
        format!(
            "max_rounds={} candidates_per_round={} parallel_evals={} max_eval_seconds={} max_trials={} seed={} algorithm={} schedule={}",
            s.max_rounds,
            s.candidates_per_round,
            s.parallel_evals,
            s.max_eval_seconds,
            s.max_trials.map_or_else(|| "none".to_owned(), |t| t.to_string()),
            s.seed,
            s.algorithm,
            s.schedule
        ),
    ));
    rows
}

/// `evaluator.slurm` as `validate` shows it: each evaluation is a batch job, with the
/// options sweeper gives `sbatch` (a time limit left out is `max_eval_seconds` plus a minute).
fn slurm_row(slurm: &sweeper_goal::SlurmConfig, max_eval_seconds: f64) -> String {
    let mut parts = vec!["one batch job per evaluation".to_owned()];
    for (key, value) in [
        ("partition", &slurm.partition),
        ("account", &slurm.account),
        ("job_name", &slurm.job_name),
        ("gpu_type", &slurm.gpu_type),
    ] {
        if let Some(v) = value {
            parts.push(format!("{key}={v}"));
        }
    }
    if let Some(t) = job_time_limit(slurm, max_eval_seconds) {
        let derived = if slurm.time_limit.is_none() {
            " (max_eval_seconds plus a minute)"
        } else {
            ""
        };
        parts.push(format!(
            "time_limit={}{derived}",
            sweeper_goal::format_time_limit(t)
        ));
    }
    if let Some(n) = slurm.gpus_per_node {
        parts.push(format!("gpus_per_node={n}"));
    }
    parts.push(format!("gpu_flag={}", slurm.gpu_flag.name()));
    if !slurm.sbatch_args.is_empty() {
        parts.push(format!("sbatch_args=[{}]", slurm.sbatch_args.join(", ")));
    }
    parts.push(format!("poll_seconds={}", slurm.poll_seconds));
    parts.join(" ")
}

/// The time limit the jobs get, computed as the Slurm evaluator computes it.
#[cfg(unix)]
fn job_time_limit(slurm: &sweeper_goal::SlurmConfig, max_eval_seconds: f64) -> Option<u64> {
    let mut spec = sweeper_eval::SlurmSpec::new(Vec::new(), "jobs");
    spec.slurm = slurm.clone();
    spec.timeout = std::time::Duration::try_from_secs_f64(max_eval_seconds)
        .unwrap_or(std::time::Duration::MAX);
    spec.time_limit()
}

/// Without Slurm's evaluator (not on Unix), the limit the config gives.
#[cfg(not(unix))]
fn job_time_limit(slurm: &sweeper_goal::SlurmConfig, _max_eval_seconds: f64) -> Option<u64> {
    slurm.time_limit
}

/// The resolved config for people: every value escaped
/// ([`sweeper_engine::text::escape_controls`]), as choices, parameter names, command words and
/// paths come from the config and must not drive the terminal.
fn table(path: &str, cfg: &SweepConfig) -> String {
    use sweeper_engine::text::escape_controls;
    let rows = rows(cfg);
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut out = format!("valid: {}\n", escape_controls(path));
    for (k, v) in rows {
        let _ = writeln!(out, "  {k:<width$}  {}", escape_controls(&v));
    }
    out
}

fn csv(path: &str, cfg: &SweepConfig) -> String {
    let mut rows: Vec<[String; 2]> = vec![
        ["valid".into(), "true".into()],
        ["config".into(), path.to_owned()],
    ];
    rows.extend(rows_of(cfg));
    sweeper_tables::csv_out::to_string(&["key".to_owned(), "value".to_owned()], rows)
}

fn rows_of(cfg: &SweepConfig) -> impl Iterator<Item = [String; 2]> {
    rows(cfg).into_iter().map(|(k, v)| [k.to_owned(), v])
}
