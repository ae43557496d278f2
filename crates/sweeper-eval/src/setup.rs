//! Turning a validated config into the pieces of a run: its evaluator and its plot title;
//! the checks a run makes before its first trial ([`check_runnable`], which `sweeper
//! validate` runs too); and evaluating one candidate exactly as a run would
//! (`sweeper evaluate`).

#[cfg(unix)]
use crate::{CommandEvaluator, CommandSpec, SlurmEvaluator, SlurmSpec};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use sweeper_engine::{Evaluator, RunError, default_proposer};
use sweeper_goal::{Block, EvaluatorKind, Partial, SweepConfig};
use sweeper_model::BuiltinEvaluator;

/// The evaluator a config declares, and the title of its plots.
#[non_exhaustive]
pub struct Setup {
    /// The evaluator.
    pub evaluator: Box<dyn Evaluator>,
    /// A title naming what is swept (model, GPU and budget for the built-in model).
    pub title: String,
    /// What will run, for people: the command line, or the built-in model's preset.
    pub describe: String,
}

/// Every check a run makes before its first trial, in one place (`sweeper validate` calls
/// it too): the search space must convert to the sampler's and build a study (an integer
/// range wider than 2^52 does not); a built-in evaluator's presets and keys must be known;
/// a command evaluator's program must exist and be executable. A Slurm evaluator's program
/// is not looked for (it runs on a compute node, perhaps in a container); `sbatch` must be
/// on `PATH` instead. A config without an evaluator passes (it can be scored, not run).
pub fn check_runnable(config: &SweepConfig) -> Result<(), RunError> {
    default_proposer(config)?;
    check_evaluator(config)
}

/// [`check_runnable`] on the blocks of a config that passed their own checks, so that
/// `sweeper validate` reports an unknown GPU in the same pass as a misspelt target: the
/// study's check when the goal, search space and sweep passed, the evaluator's when the
/// evaluator passed. Every failure, in that order.
pub fn check_runnable_partial(partial: &Partial) -> Vec<RunError> {
    let mut errors = Vec::new();
    let config = &partial.config;
    let study_blocks_passed = ![Block::Goal, Block::SearchSpace, Block::Sweep]
        .into_iter()
        .any(|b| partial.failed(b));
    if study_blocks_passed && let Err(e) = default_proposer(config) {
        errors.push(e);
    }
    if !partial.failed(Block::Evaluator)
        && let Err(e) = check_evaluator(config)
    {
        errors.push(e);
    }
    errors
}

/// The evaluator's part of [`check_runnable`].
fn check_evaluator(config: &SweepConfig) -> Result<(), RunError> {
    let Some(ev) = &config.evaluator else {
        return Ok(());
    };
    match &ev.kind {
        EvaluatorKind::Command { .. } if ev.slurm.is_some() => {
            program_path("sbatch", None, std::env::var_os("PATH").as_deref())
                .map(|_| ())
                .map_err(|e| {
                    RunError::Setup(format!(
                        "evaluator.slurm: {e}; run sweeper where Slurm's commands are (a login node), or remove `slurm:` to run the command here"
                    ))
                })
        }
        EvaluatorKind::Command { argv, .. } => {
            let program = argv.first().map_or("", String::as_str);
            let path_var = ev
                .env
                .get("PATH")
                .map(OsString::from)
                .or_else(|| std::env::var_os("PATH"));
            program_path(program, ev.cwd.as_deref(), path_var.as_deref())
                .map(|_| ())
                .map_err(|e| RunError::Setup(format!("evaluator.command: {e}")))
        }
        EvaluatorKind::Builtin(block) => {
            let model =
                BuiltinEvaluator::from_config(block).map_err(|e| RunError::Setup(e.to_string()))?;
            unread_parameters(config, &model)
        }
    }
}

/// The built-in model refuses a search space that searches a parameter it does not read
/// (its value would only add noise to the front), as the adapters refuse a parameter they
/// do not map; a constant (one value) is a label and passes, and so does a name listed in
/// `evaluator.builtin.ignore`.
fn unread_parameters(config: &SweepConfig, model: &BuiltinEvaluator) -> Result<(), RunError> {
    let unread: Vec<String> = config
        .search_space
        .parameters
        .iter()
        .filter(|(name, spec)| !spec.is_constant() && !model.reads(name))
        .map(|(name, _)| crate::text::quote(name))
        .collect();
    if unread.is_empty() {
        return Ok(());
    }
    let (noun, they, them) = if unread.len() == 1 {
        ("parameter", "it", "it")
    } else {
        ("parameters", "they", "them")
    };
    Err(RunError::Setup(format!(
        "search_space.parameters: the built-in model does not read the searched {noun} {}, so {they} would only add noise to the front; remove {them}, or list {them} in evaluator.builtin.ignore to sweep {them} as labels (the model reads {}, {} and the same prefixed prefill_ or decode_)",
        unread.join(", "),
        sweeper_model::PARAMETERS.join(", "),
        sweeper_model::ROLE_PARAMETERS.join(", ")
    )))
}

/// Where the program of a command evaluator is: a name with a `/` is a path (relative to
/// `cwd` when given, as the evaluator is started there); any other name is looked up in the
/// directories of `path_var` (`PATH`). The file must exist and, on Unix, be executable.
pub fn program_path(
    program: &str,
    cwd: Option<&Path>,
    path_var: Option<&std::ffi::OsStr>,
) -> Result<PathBuf, String> {
    if program.is_empty() {
        return Err("the command is empty: give at least the program to run".into());
    }
    let shown = crate::text::quote(program);
    if program.contains('/') {
        let path = match cwd {
            Some(dir) if Path::new(program).is_relative() => dir.join(program),
            _ => PathBuf::from(program),
        };
        return match runnable(&path) {
            Ok(()) => Ok(path),
            Err(why) => Err(format!("program {shown}: {why}")),
        };
    }
    let dirs: Vec<PathBuf> = path_var.map_or_else(Vec::new, |p| std::env::split_paths(p).collect());
    let mut not_executable = None;
    for dir in &dirs {
        let candidate = dir.join(program);
        match runnable(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(why) if candidate.exists() => not_executable = Some((candidate, why)),
            Err(_) => {}
        }
    }
    Err(match not_executable {
        Some((path, why)) => format!("program {shown} at {}: {why}", path.display()),
        None => format!(
            "program {shown} was not found in any directory of PATH; give its path (e.g. `./{program}` or `/usr/bin/{program}`), or install it"
        ),
    })
}

/// Whether `path` is a file this process may execute.
fn runnable(path: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_owned(),
        _ => e.to_string(),
    })?;
    if !meta.is_file() {
        return Err("not a file".into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o111 == 0 {
            return Err("not executable (chmod +x it, or run it through its interpreter, e.g. `command: [python3, script.py]`)".into());
        }
    }
    Ok(())
}

/// Builds the evaluator of a config, after [`check_runnable`]. A config without an
/// `evaluator:` block cannot run. A Slurm evaluator keeps its job files in
/// `sweeper-evaluate-<pid>/jobs/` of the current directory; a sweep gives its own output
/// directory with [`evaluator_in`].
pub fn evaluator_for(config: &SweepConfig, name: &str) -> Result<Setup, RunError> {
    let scratch = PathBuf::from(format!("sweeper-evaluate-{}", std::process::id()));
    evaluator_in(config, name, &scratch)
}

/// [`evaluator_for`] for a sweep whose output directory is `out_dir`: a Slurm evaluator
/// keeps each trial's job files in `out_dir/jobs/<trial>/` (the directory must be on a
/// filesystem the compute nodes share).
pub fn evaluator_in(config: &SweepConfig, name: &str, out_dir: &Path) -> Result<Setup, RunError> {
    let budget = config.search_space.gpu_budget;
    let Some(ev) = &config.evaluator else {
        return Err(RunError::Setup(
            "the config has no `evaluator:` block; add `evaluator: {command: [prog, args...]}` for an external evaluator or `evaluator: {builtin: {model: qwen3-32b-fp8, gpu: h200}}` for the built-in serving model".into(),
        ));
    };
    check_runnable(config)?;
    match &ev.kind {
        #[cfg(unix)]
        EvaluatorKind::Command { argv, .. } if ev.slurm.is_some() => {
            let slurm = ev.slurm.clone().unwrap_or_default();
            let spec = SlurmSpec {
                argv: argv.clone(),
                env: ev.env.clone(),
                cwd: ev.cwd.clone(),
                jobs_dir: out_dir.join("jobs"),
                timeout: std::time::Duration::try_from_secs_f64(config.sweep.max_eval_seconds)
                    .unwrap_or(std::time::Duration::MAX),
                slurm,
            };
            let evaluator =
                SlurmEvaluator::new(spec).map_err(|e| RunError::Setup(e.to_string()))?;
            let words: Vec<String> = argv.iter().map(|a| crate::text::quote_arg(a)).collect();
            let s = &evaluator.spec().slurm;
            let where_ = s
                .partition
                .as_ref()
                .map(|p| format!(" on partition {p}"))
                .unwrap_or_default();
            Ok(Setup {
                describe: format!(
                    "{} as Slurm batch jobs{where_} (jobs in {})",
                    words.join(" "),
                    evaluator.spec().jobs_dir.display()
                ),
                evaluator: Box::new(evaluator),
                title: format!("{name} · GPU budget {budget}"),
            })
        }
        #[cfg(unix)]
        EvaluatorKind::Command { argv, persistent } => {
            // every process of the sweep's evaluators carries the sweep's mark, by which
            // `--resume` finds what a killed run left behind
            let mut env = ev.env.clone();
            env.insert(crate::RUN_MARK_VAR.to_owned(), crate::run_mark(out_dir));
            let spec = CommandSpec {
                argv: argv.clone(),
                persistent: *persistent,
                env,
                cwd: ev.cwd.clone(),
                timeout: std::time::Duration::try_from_secs_f64(config.sweep.max_eval_seconds)
                    .unwrap_or(std::time::Duration::MAX),
                workers: config.sweep.slots(),
            };
            let evaluator = CommandEvaluator::new(spec)
                .map_err(|e| RunError::Setup(format!("evaluator.command: {e}")))?;
            let words: Vec<String> = argv.iter().map(|a| crate::text::quote_arg(a)).collect();
            Ok(Setup {
                evaluator: Box::new(evaluator),
                title: format!("{name} · GPU budget {budget}"),
                describe: format!(
                    "{}{}",
                    words.join(" "),
                    if *persistent { " (persistent)" } else { "" }
                ),
            })
        }
        #[cfg(not(unix))]
        EvaluatorKind::Command { .. } => Err(RunError::Setup(
            "evaluator.command: external command evaluators need a Unix system here".into(),
        )),
        EvaluatorKind::Builtin(block) => {
            let evaluator =
                BuiltinEvaluator::from_config(block).map_err(|e| RunError::Setup(e.to_string()))?;
            let title = format!(
                "{} on {} · GPU budget {budget} · built-in model",
                evaluator.model_name(),
                evaluator.gpu_name()
            );
            let describe = format!(
                "the built-in serving model ({} on {})",
                evaluator.model_name(),
                evaluator.gpu_name()
            );
            Ok(Setup {
                evaluator: Box::new(evaluator),
                title,
                describe,
            })
        }
    }
}
