//! `sweeper run`: the sweep, with a progress bar on stderr and the result on stdout.

use super::{CliError, CliResult, Format, print_stdout, run_error, table};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use sweeper_engine::provider::ServingPlanner;
use sweeper_engine::run::{FileJournal, Progress, RunError, RunObserver, Sweeper};
use sweeper_eval::evaluator_in;
use sweeper_goal::SweepConfig;
use sweeper_plot::PlotOptions;
use sweeper_tables::{ResultFile, candidates_csv, write_file_atomic, write_outputs_with};

/// Arguments of `sweeper run`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  sweeper run examples/quickstart.yaml
  sweeper run examples/quickstart.yaml --out runs/q1 --format json
  sweeper run --resume runs/q1            # continue a killed sweep
  sweeper run examples/quickstart.yaml -q --out runs/q2 --format csv > front.csv

A sweep is extended by resuming it under a config with a larger max_rounds or
max_trials: `sweeper run LONGER.yaml --resume runs/q1`.

The output directory holds journal.jsonl (one line per suggestion and outcome),
result.json, result.csv (the front or ranking), trials.csv (every trial),
config.yaml and the plot (front.svg or best.svg). A directory that holds a journal
is never overwritten: continue it with --resume, give another --out, or start over
with --force, which moves the old directory aside to DIR.old (DIR.old-2, ...) and
says where; nothing is deleted. While a sweep runs, its directory is locked against
a second one (and --force refuses to move it). After Ctrl-C the result of the
trials that finished is written (result.json, result.csv, trials.csv, the plot)
beside the journal, and --resume continues the sweep.

With evaluator.slurm each evaluation is one Slurm batch job (run sweeper on a login
node, DIR on a shared filesystem): DIR/jobs/<trial>/ holds its candidate, script,
stdout, stderr and exit code, and the journal its job id, so that --resume after a
kill re-attaches to the jobs still queued or running; Ctrl-C cancels them all
(docs/large-sweeps.md).

Resuming under a config whose budget keys differ (max_rounds, max_trials,
candidates_per_round, parallel_evals, max_eval_seconds, max_consecutive_failures)
extends or shortens the sweep; any other difference is refused, naming the keys.
Under sweep.schedule: async a resume replays the journal in the order outcomes
were recorded, then first evaluates again the trials that were running when the
sweep was killed. A resume first ends the evaluator processes a killed run left
running (they carry SWEEPER_RUN in their environment); a trial is never
evaluated beside its earlier evaluation.

After sweep.max_consecutive_failures stopped a sweep and the evaluator was fixed,
`sweeper run --resume DIR --retry-failed` evaluates the failed trials again: their
new outcomes replace the failures, and the journal's retry line makes a later
resume replay the same sweep.

Exit codes: 0 with a result, 1 when no candidate was feasible, the config is
invalid or the evaluator failed sweep.max_consecutive_failures times in a row,
2 on usage or I/O errors (a full disk, a locked or existing journal).")]
pub(crate) struct Args {
    /// The sweep config (YAML or JSON; `-` reads standard input). Optional with --resume,
    /// which reads the copy kept in the output directory.
    config: Option<PathBuf>,
    /// With --resume: evaluate again every trial whose last outcome is a failure (after
    /// the evaluator was fixed); their new outcomes replace the failures. Journaled, so a
    /// later resume replays the same sweep.
    #[arg(long)]
    retry_failed: bool,
    /// Output directory [default: `sweeper-out/CONFIG-STEM/`].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Continue the sweep whose journal is in DIR; finished evaluations are not repeated.
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    resume: Option<PathBuf>,
    /// Start over where an earlier sweep's output is: move that directory aside (to
    /// DIR.old, DIR.old-2, ...; its journal is kept) and start a new sweep in DIR.
    #[arg(long, conflicts_with = "resume")]
    force: bool,
    /// Format of the result printed on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Show at most N rows of a ranking on stdout (files keep everything).
    #[arg(long, value_name = "N")]
    top: Option<usize>,
    /// No progress: neither the bar (on a terminal) nor the progress lines (off one).
    #[arg(long)]
    no_progress: bool,
    #[command(flatten)]
    plot: super::style::StyleArgs,
}

/// Shows progress on stderr: a bar on a terminal; off a terminal (a log file, a CI job, a
/// Slurm job's output) one line at each round's end or at most every few seconds, so a
/// long run is never silent; with `-v`, a line per outcome either way.
struct Bar {
    drawn: ProgressBar,
    /// Lines instead of the bar.
    lines: bool,
    /// Trials per round: a line when a round ends.
    per_round: u64,
    last_line: Option<Instant>,
    started: Instant,
    /// The latest progress, and the trials the latest line showed: the last line, printed
    /// when the sweep ends, has the final counts.
    latest: Option<Progress>,
    printed: u64,
    /// The latest line's total carried a `+` (it could still grow): the sweep's end prints
    /// the real one.
    open_total: bool,
}

/// `+` after a progress total that may still grow (`1/120+ trials`: at least 120), so the
/// first line's total is never read as the sweep's whole; nothing once it is the real one.
fn at_least(p: &Progress) -> &'static str {
    if p.budget_is_final { "" } else { "+" }
}

/// At most one progress line this often off a terminal (round ends included).
const LINE_EVERY: Duration = Duration::from_secs(5);

impl Bar {
    fn message(p: &Progress) -> String {
        let t = &p.tallies;
        let mut msg = format!(
            "feasible {} · infeasible {} · failed {} · unsupported {} · cached {}",
            t.feasible, t.infeasible, t.failed, t.unsupported, t.cache_hits
        );
        if let Some(best) = p.best_score {
            let _ = write!(msg, " · best {}", table::number(best));
        }
        if let Some(front) = p.front_size {
            let _ = write!(msg, " · front {front}");
        }
        msg
    }
}

impl Bar {
    fn line(&mut self, p: &Progress, total: u64, msg: &str, last: bool) {
        self.printed = p.done;
        let plus = if last { "" } else { at_least(p) };
        self.open_total = !plus.is_empty();
        super::print_stderr(&format!(
            "{}/{total}{plus} trials after {:.0} s · {msg}\n",
            p.done,
            self.started.elapsed().as_secs_f64()
        ));
    }

    /// Off a terminal, the last line when the sweep has ended: the trials it had, with
    /// the counts of the summary and the size of the front in result.json.
    fn finish(&mut self) {
        if let Some(p) = self.latest.take()
            && self.lines
            && !p.replayed
            && (self.printed != p.done || self.open_total)
        {
            self.line(&p, p.done, &Bar::message(&p), true);
        }
    }
}

impl RunObserver for Bar {
    fn progress(&mut self, p: &Progress) {
        let msg = Bar::message(p);
        if super::verbosity() == super::Verbosity::Verbose {
            self.printed = p.done;
            self.open_total = !at_least(p).is_empty();
            self.drawn.suspend(|| {
                super::print_stderr(&format!(
                    "{}/{}{} trials{} · {msg}\n",
                    p.done,
                    p.budget.max(p.done),
                    at_least(p),
                    if p.replayed { " (replayed)" } else { "" }
                ));
            });
        } else if self.lines && !p.replayed {
            let round_end = self.per_round > 0 && p.done.is_multiple_of(self.per_round);
            let due = self.last_line.is_none_or(|at| at.elapsed() >= LINE_EVERY);
            // the end's line: once the total is final (else the sweep's end prints it)
            let last = p.done == p.budget && p.budget_is_final;
            if (round_end || self.last_line.is_none()) && due || last {
                self.last_line = Some(Instant::now());
                self.line(p, p.budget.max(p.done), &msg, false);
            }
        }
        self.latest = Some(p.clone());
        self.drawn.set_length(p.budget.max(p.done));
        self.drawn.set_position(p.done);
        self.drawn.set_message(msg);
    }
}

pub(crate) fn run(args: &Args) -> CliResult {
    let (config_path, out_dir, resume) = match (&args.config, &args.resume) {
        (_, Some(dir)) => {
            let kept = dir.join("config.yaml");
            (args.config.clone().unwrap_or(kept), dir.clone(), true)
        }
        (Some(config), None) => {
            let stem = super::config_stem(config);
            let out = args
                .out
                .clone()
                .unwrap_or_else(|| Path::new("sweeper-out").join(stem));
            (config.clone(), out, false)
        }
        (None, None) => {
            return Err(CliError::io(
                "give a sweep config (sweeper run CONFIG) or a directory to resume (sweeper run --resume DIR)",
            ));
        }
    };
    if args.retry_failed && !resume {
        return Err(CliError::io(
            "--retry-failed evaluates again the failed trials of a sweep that has run: give the sweep's directory with --resume DIR",
        ));
    }
    let journal_path = out_dir.join("journal.jsonl");
    if resume && !journal_path.is_file() {
        return Err(CliError::io(format!(
            "{}: no journal.jsonl to resume from; start the sweep with `sweeper run CONFIG --out {}`",
            out_dir.display(),
            out_dir.display()
        )));
    }
    let config = super::load_config(&config_path)?;
    let name = super::config_stem(&config_path);
    if args.force && journal_path.exists() {
        let aside = move_aside(&out_dir, &journal_path)?;
        super::print_stderr(&format!(
            "sweeper: --force: moved the earlier sweep in {} to {} (its journal is kept there)\n",
            out_dir.display(),
            aside.display()
        ));
    }
    let setup = evaluator_in(&config, &name, &out_dir).map_err(|e| run_error(&e))?;
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| CliError::io(format!("{}: {e}", out_dir.display())))?;
    // The journal first: it refuses a directory that holds another sweep's journal, and its
    // lock keeps a second sweep out of this directory until this one ends.
    let mut journal = if resume {
        FileJournal::open(&journal_path, &config)
    } else {
        FileJournal::create_titled(&journal_path, &config, Some(&setup.title))
    }
    .map_err(|e| run_error(&e))?;
    // the title the sweep started with, whatever the config file is called now
    let title = journal.title().unwrap_or(&setup.title).to_owned();
    if resume {
        let source = match &args.config {
            Some(path) => format!("the config {}", path.display()),
            None => format!("its kept config {}", config_path.display()),
        };
        let mut note = format!(
            "sweeper: resuming {} with {source}: {} trials finished; evaluator: {}\n",
            out_dir.display(),
            journal.finished_trials(),
            setup.describe
        );
        if journal.torn_bytes() > 0 {
            let _ = writeln!(
                note,
                "sweeper: cut off a torn last journal line ({} bytes); its trial runs again",
                journal.torn_bytes()
            );
        }
        super::print_stderr(&note);
    }
    #[cfg(unix)]
    if resume {
        // The run that died may have left evaluators running (what left its process
        // group, where the guard cannot reach): none of its trials is evaluated again
        // while one runs. The journal's lock says that run is over.
        let mark = sweeper_eval::run_mark(&out_dir);
        match sweeper_eval::end_leftover_evaluators(&mark) {
            Ok(0) => {}
            Ok(n) => super::print_stderr(&format!(
                "sweeper: ended {n} evaluator process{} that the earlier run left running\n",
                if n == 1 { "" } else { "es" }
            )),
            Err(e) => return Err(CliError::io(e.to_string())),
        }
    }
    if !resume || args.config.is_some() {
        // a resume under a config with another budget keeps that budget for the next resume
        write_file_atomic(&out_dir.join("config.yaml"), config.to_yaml().as_bytes())
            .map_err(|e| run_error(&e))?;
    }

    // Ctrl-C or SIGTERM: evaluators run in process groups of their own, and batch jobs on
    // the cluster, and would outlive sweeper; kill and cancel them, write the result of
    // what finished, and say how to continue (the journal is synced per line).
    // The first signal stops the sweep (nothing new starts, the evaluations are ended and
    // what finished is written below); a second one exits at once.
    let resume_dir = out_dir.clone();
    let _ = ctrlc::set_handler(move || {
        if STOP.swap(true, Ordering::SeqCst) {
            super::print_stderr(&format!(
                "{}sweeper: interrupted again; finished evaluations are in the journal: continue with `sweeper run --resume {}`\n",
                past_the_echo(),
                resume_dir.display()
            ));
            std::process::exit(130);
        }
        #[cfg(unix)]
        sweeper_eval::kill_running_evaluators();
        #[cfg(unix)]
        match sweeper_eval::cancel_slurm_jobs() {
            Ok(ids) if ids.is_empty() => {}
            Ok(ids) => super::print_stderr(&format!(
                "\nsweeper: cancelled {} Slurm job{} ({}); --resume submits them again\n",
                ids.len(),
                if ids.len() == 1 { "" } else { "s" },
                ids.iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Err(e) => super::print_stderr(&format!(
                "\nsweeper: could not cancel the Slurm jobs of this sweep: {e}; cancel them with scancel (their ids are in the journal's started lines)\n"
            )),
        }
    });

    let quiet = super::verbosity() == super::Verbosity::Quiet;
    let terminal = std::io::stderr().is_terminal();
    let bar = if args.no_progress || quiet || !terminal {
        ProgressBar::hidden()
    } else {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    };
    let mut observer = Bar {
        drawn: bar.clone(),
        lines: !terminal && !args.no_progress && !quiet,
        per_round: u64::from(config.sweep.candidates_per_round),
        last_line: None,
        started: Instant::now(),
        latest: None,
        printed: 0,
        open_total: false,
    };
    let mut planner = ServingPlanner::new();
    let outcome = Sweeper::builder(&config)
        .evaluator(setup.evaluator.as_ref())
        .provider(&mut planner)
        .journal(&mut journal)
        .observer(&mut observer)
        .retry_failed(args.retry_failed)
        .cancel(&STOP)
        .run();
    bar.finish_and_clear();
    if outcome.is_ok() {
        observer.finish();
    }
    let result = match outcome {
        Ok(result) => result,
        Err(RunError::Interrupted) => {
            drop(journal);
            interrupted(
                &out_dir,
                &config,
                &title,
                &args
                    .plot
                    .options_or(config.searched_load().map(sweeper_goal::SearchedLoad::key)),
            );
        }
        Err(e @ RunError::TooManyFailures { .. }) => {
            return Err(CliError::invalid(format!(
                "{e}\nThe journal {} keeps every finished evaluation: fix the evaluator (try one candidate with `sweeper evaluate`), then continue with `sweeper run --resume {}` (add --retry-failed to evaluate the failed trials again)",
                journal_path.display(),
                out_dir.display()
            )));
        }
        Err(e) => return Err(run_error(&e)),
    };
    write_outputs_with(
        &out_dir,
        &config,
        &result,
        &title,
        &args
            .plot
            .options_or(config.searched_load().map(sweeper_goal::SearchedLoad::key)),
    )
    .map_err(|e| run_error(&e))?;
    drop(journal);

    let t = &result.tallies;
    let mut summary = format!(
        "sweeper: {} trials: {} feasible, {} infeasible, {} failed, {} unsupported, {} cache hits",
        t.total(),
        t.feasible,
        t.infeasible,
        t.failed,
        t.unsupported,
        t.cache_hits
    );
    if !result.reasons.is_empty() {
        let top: Vec<String> = result
            .reasons
            .iter()
            .take(3)
            .map(|(r, n)| format!("{} ({n})", sweeper_engine::text::escape_controls(r)))
            .collect();
        let _ = write!(summary, "; top reasons: {}", top.join("; "));
    }
    let plot = if result.pareto {
        "front.svg"
    } else {
        "best.svg"
    };
    for note in setup.evaluator.notes() {
        let _ = write!(
            summary,
            "\nsweeper: note: {}",
            sweeper_engine::text::escape_controls(&note)
        );
    }
    super::print_stderr(&format!(
        "{summary}\nsweeper: results in {} (result.json, result.csv, trials.csv, {plot})\n",
        out_dir.display()
    ));
    if result.candidates.is_empty() {
        return Err(CliError::invalid(
            "no candidate was feasible: every trial was over the GPU budget, failed or unsupported (see the reasons above and journal.jsonl)",
        ));
    }
    let file = ResultFile::new(&config, &result, &title);
    print_result(&file, args.format, args.top)
}

/// What comes before the line that says a sweep was interrupted: on a terminal a newline,
/// so that the line starts past the `^C` the terminal echoed; off one (a log, a pipe)
/// nothing, so that every line of stderr is a `sweeper:` line.
fn past_the_echo() -> &'static str {
    if std::io::stderr().is_terminal() {
        "\n"
    } else {
        ""
    }
}

/// Set by the first Ctrl-C or SIGTERM: the sweep stops.
static STOP: AtomicBool = AtomicBool::new(false);

/// After the sweep stopped on a signal: writes the result of the trials the journal holds
/// (what finished), says where and how to continue, and exits 130.
fn interrupted(out_dir: &Path, config: &SweepConfig, title: &str, options: &PlotOptions) -> ! {
    let journal_path = out_dir.join("journal.jsonl");
    let written =
        sweeper_engine::run::result_from_journal(config, &journal_path).and_then(|result| {
            write_outputs_with(out_dir, config, &result, title, options)
                .map(|()| (result.trials.len(), result.pareto))
        });
    let note = match written {
        Ok((n, pareto)) => format!(
            "the result of the {n} finished trial{} is in {} (result.json, result.csv, trials.csv, {})",
            if n == 1 { "" } else { "s" },
            out_dir.display(),
            if pareto { "front.svg" } else { "best.svg" }
        ),
        Err(e) => format!("could not write the result of the finished trials: {e}"),
    };
    super::print_stderr(&format!(
        "{}sweeper: interrupted; {note}; finished evaluations are in the journal: continue with `sweeper run --resume {}`\n",
        past_the_echo(),
        out_dir.display()
    ));
    std::process::exit(130);
}

/// Moves the output directory of an earlier sweep aside for `--force`: to `DIR.old`, or
/// `DIR.old-N` with the first free N. Refused while a sweep holds the journal's lock, and
/// for a directory that has no name of its own (`.`).
fn move_aside(out_dir: &Path, journal_path: &Path) -> Result<PathBuf, CliError> {
    let Some(name) = out_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
    else {
        return Err(CliError::io(format!(
            "--force cannot move {} aside: give the sweep a directory of its own with --out DIR",
            out_dir.display()
        )));
    };
    let journal = std::fs::File::open(journal_path)
        .map_err(|e| CliError::io(format!("{}: {e}", journal_path.display())))?;
    if let Err(std::fs::TryLockError::WouldBlock) = journal.try_lock() {
        return Err(CliError::io(format!(
            "{} is in use by another sweep that is still running; --force does not move it: wait for it to end, or use another --out directory",
            journal_path.display()
        )));
    }
    drop(journal);
    let aside = (1..=u32::MAX)
        .map(|n| {
            let suffix = if n == 1 {
                ".old".to_owned()
            } else {
                format!(".old-{n}")
            };
            out_dir.with_file_name(format!("{name}{suffix}"))
        })
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .unwrap_or_else(|| out_dir.with_file_name(format!("{name}.old")));
    std::fs::rename(out_dir, &aside).map_err(|e| {
        CliError::io(format!(
            "--force: cannot move {} to {}: {e}",
            out_dir.display(),
            aside.display()
        ))
    })?;
    Ok(aside)
}

/// Prints a result file's candidates on stdout in the chosen format.
pub(crate) fn print_result(file: &ResultFile, format: Format, top: Option<usize>) -> CliResult {
    let mut file = file.clone();
    if let Some(n) = top {
        file.candidates.truncate(n);
    }
    match format {
        Format::Json => {
            let text = serde_json::to_string_pretty(&file.candidates)
                .map_err(|e| CliError::io(e.to_string()))?;
            print_stdout(&format!(
                "{}\n",
                sweeper_engine::text::escape_json_controls(&text)
            ))
        }
        Format::Csv => print_stdout(&candidates_csv(&file)),
        Format::Table => print_stdout(&result_table(&file)),
    }
}

/// The front or ranking as a table: position, trial, parameters, GPUs, objectives or score.
fn result_table(file: &ResultFile) -> String {
    let params = file.config_keys();
    let front = file.kind == sweeper_tables::ResultKind::Front;
    let mut header = vec![
        if front { "#" } else { "rank" }.to_owned(),
        "trial".to_owned(),
    ];
    header.extend(params.iter().cloned());
    header.push("gpus".into());
    if front {
        header.extend(file.objectives.iter().map(|o| o.name.clone()));
    } else if file.target == sweeper_goal::Objective::MinGpus.name() {
        // the column holds what min_gpus ranks by after the GPU count, the goodput; named
        // `min_gpus` beside `gpus` it read as a second GPU count
        header.push("goodput_rps".into());
    } else {
        header.push(file.target.clone());
    }
    let cell = |v: Option<&Value>| match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::Number(n)) => n.as_f64().map_or_else(|| n.to_string(), table::number),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let rows: Vec<Vec<String>> = file
        .candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut row = vec![(i + 1).to_string(), cell(c.get("index"))];
            for k in &params {
                row.push(cell(c.get("config").and_then(|m| m.get(k))));
            }
            row.push(cell(c.get("used_gpus")));
            if front {
                for o in &file.objectives {
                    row.push(cell(c.get("objectives").and_then(|m| m.get(&o.name))));
                }
            } else {
                // the raw objective value reads better than the signed score
                let raw = c.get("score").and_then(Value::as_f64).map(|s| {
                    if file
                        .objectives
                        .first()
                        .is_some_and(|o| o.direction == sweeper_goal::Direction::Minimize)
                    {
                        -s
                    } else {
                        s
                    }
                });
                row.push(raw.map(table::number).unwrap_or_default());
            }
            row
        })
        .collect();
    table::render(&header, &rows)
}
