//! `sweeper score`: score evaluated reports against a config's goal and print the ranking
//! (scalar goal) or the Pareto front (pareto goal).
//!
//! The reports may also be a finished (or running) sweep's `journal.jsonl` or
//! `result.json`: their trials that came with a report become the rows, so that a sweep is
//! re-scored under another goal and GPU budget without evaluating anything.

use super::output::{TableLayout, exact, input_error, json_io, note, write_csv, write_stdout};
use super::{CliError, CliResult, Format};
use serde::ser::{SerializeSeq, Serializer as _};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use sweeper_engine::run::{Status, TrialResult, fill_used_gpus, rescore_journal};
use sweeper_goal::{ConfigError, Direction, Objective, SweepConfig};
use sweeper_score::{
    Candidate, FrontStream, KNOWN_METRICS, RankStream, Report, ScoreError, Scorer, USED_GPUS,
    is_feasible, make_candidate, used_gpus,
};
use sweeper_tables::input::{
    InputError, Place, ReportRow, ReportTable, RowAt, is_utf8, open_seekable,
};

const AFTER_HELP: &str = "\
REPORTS holds one evaluated candidate per row, in one of three formats (read from the content):
  JSON Lines   {\"config\": {\"used_gpus\": 4}, \"report\": {\"output_throughput_tok_s\": 286.3}}
  JSON array   [{\"config\": {...}, \"report\": {...}}, ...]
  CSV          a header row; columns named after report metrics (output_throughput_tok_s,
               mean_output_token_throughput_per_user, mean_e2e_latency_ms,
               goodput_output_throughput_tok_s, gpu_hours, duration_ms, mean_ttft_ms,
               mean_itl_ms) form the report, every other column is config; `#` lines are
               comments and an empty cell is a missing key (mean_tpot_ms is a report key
               too, for --per-user-from-tpot).

A serving benchmark's own result file is read as it was written (the format is told from its
keys and said on stderr; --input-format names it): `vllm bench serve --save-result` JSON,
SGLang `bench_serving --output-file` JSON Lines, genai-perf's profile_export_genai_perf.json.
Their numbers take sweeper's report keys (output_throughput -> output_throughput_tok_s,
duration s -> duration_ms, ...), tok/s/user is 1000 / mean TPOT when the file has no per-user
rate, and the GPU count, which none of them carries, comes from --gpus N|KEY or the result's
used_gpus (vLLM's --metadata used_gpus=8): gpu_hours = GPUs x duration. --map FROM=TO reads any
column or key under another name.

A sweep's journal.jsonl or result.json (`sweeper run`'s output directory) is read too: its
trials that came with a report (feasible ones, and infeasible ones over the sweep's GPU
budget) are the rows, each with the configuration it ran and its trial id as `index`;
failed, unsupported and unfinished trials and cache hits are left out. So a finished or
still running sweep is re-scored under another goal and GPU budget, evaluating nothing. A
journal is scored under CONFIG's search_space.used_gpus rule; result.json keeps the GPU
count each trial ran with.

Several REPORTS files are read as one table, in the order given (the shards of an array job,
in any mix of formats): rows are numbered on from one file to the next, so `index` is a row's
place in the concatenation and ties keep that order; the result is that of one file holding
every row. CSV shards must have the same columns (in any order); a shard without data rows
is skipped with a warning; an error names the file, the line in that file and the row of the
whole table. A journal.jsonl or result.json is scored alone.

Rows are numbered from 0 (`index`). A row's GPU count is its config's `used_gpus`; when it
has none and the config's search_space declares `used_gpus` (a product of parameters or a
fixed count), that is applied; otherwise 0. Rows over search_space.gpu_budget are dropped
and counted on stderr.

Scalar goal: the ranking, best score first (ties: fewer GPUs, then input order); the score
is the goal's value signed so that higher is better (e2e_latency is negated).
Pareto goal: the non-dominated rows, sorted by the last objective ascending (the x-axis).

Examples (from the repository root; the first two on real serving rows):
  # Rank by tok/s/gpu under the config's GPU budget; show three config columns
  sweeper score --config examples/serving/throughput-per-gpu.yaml \\
      examples/serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv --show tp,offloading,conc --top 10

  # The tok/s/gpu vs tok/s/user front of the same rows, as JSON
  sweeper score --config examples/serving/pareto.yaml \\
      examples/serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv --format json

  # Re-score the quick start's pareto sweep: the best 5 by total tok/s, then by tok/s/gpu
  # within 8 GPUs (nothing is evaluated again)
  sweeper run examples/quickstart.yaml --out runs/quickstart
  sweeper score --config examples/throughput.yaml runs/quickstart/journal.jsonl --top 5
  sweeper score --config examples/serving/throughput-per-gpu.yaml \\
      runs/quickstart/result.json --top 5

  # A serving benchmark's own result files, one example per format (the format is said
  # on stderr). vLLM's as saved (`--metadata used_gpus=2` gives the GPU count):
  sweeper score --config examples/serving/pareto.yaml examples/bench-results/vllm/*.json
  # SGLang bench_serving's JSON Lines (its bare `Infinity` request rate read as inf), 2 GPUs:
  sweeper score --config examples/serving/pareto.yaml examples/bench-results/sglang-runs.jsonl \\
      --gpus 2
  # genai-perf's exports, 2 GPUs each (no run duration: one nominal hour, said on stderr):
  sweeper score --config examples/serving/pareto.yaml --gpus 2 \\
      examples/bench-results/genai-perf/c16/profile_export_genai_perf.json \\
      examples/bench-results/genai-perf/c64/profile_export_genai_perf.json

  # Your own rows: GPUs from a column, tok/s/user from TPOT, a column renamed
  sweeper score --config examples/serving/pareto.yaml examples/bench-results/rows.csv \\
      --gpus used_gpus --per-user-from-tpot --map conc=concurrency

  # Reduce the shards of an array job: the front of all their rows, as of one file (a shell
  # sorts a glob as text: part-10 comes before part-2)
  sweeper score --config examples/serving/pareto.yaml examples/shards/part-*.csv \\
      --show config_id,tp,conc

Exit status: 0 ok; 1 invalid config, bad input (the message names the row and column) or
no feasible candidate; 2 usage or I/O error.";

/// Arguments of `sweeper score`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub(crate) struct Args {
    /// The sweep config (YAML or JSON; `-` reads standard input): its goal and
    /// `search_space.gpu_budget` apply.
    #[arg(short, long, value_name = "CONFIG")]
    config: PathBuf,
    /// The evaluated candidates: JSON Lines, a JSON array, or CSV, or a sweep's
    /// journal.jsonl or result.json (see below); several reports files are read as one
    /// table (shards); `-` reads standard input (once).
    #[arg(required = true)]
    reports: Vec<PathBuf>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Print only the best N of a ranking (scalar goals).
    #[arg(long, value_name = "N")]
    top: Option<usize>,
    /// Config keys shown as table columns, comma-separated (default: every key).
    #[arg(long, value_name = "KEYS", value_delimiter = ',')]
    show: Vec<String>,
    #[command(flatten)]
    read: super::read_args::ReadArgs,
}

/// What the first pass keeps of the feasible rows: the numbers ranking or the front needs,
/// and where each row is, to read the shown ones again.
enum Selection {
    Ranking(RankStream<RowAt>),
    Front(FrontStream<RowAt>),
}

pub(crate) fn run(args: &Args) -> CliResult {
    if super::is_stdin(&args.config) && args.reports.iter().any(|r| super::is_stdin(r)) {
        return Err(CliError::io(
            "standard input (`-`) can be given once: the config and the reports cannot both be `-`; write one of them to a file",
        ));
    }
    let text = super::read_config_text(&args.config)?;
    let cfg = sweeper_goal::parse(&text).map_err(|e| match e {
        ConfigError::Io { .. } => CliError::io(e.to_string()),
        _ => CliError::invalid(format!(
            "{}: invalid config: {e}",
            super::input_name(&args.config)
        )),
    })?;
    let goal = &cfg.goal;
    let pareto = goal.is_pareto();
    if pareto && args.top.is_some() {
        return Err(CliError::io(
            "--top applies to rankings; a pareto goal prints its whole front",
        ));
    }
    let objectives = goal.objectives();
    let budget = cfg.search_space.gpu_budget as f64;
    let rule = cfg.search_space.used_gpus.as_ref();
    let mut source = read_rows(&args.reports, &cfg, &args.read)?;
    let per_gpu: Vec<&str> = objectives
        .iter()
        .filter(|o| matches!(o, Objective::ThroughputPerGpu | Objective::GoodputPerGpu))
        .map(|o| o.name())
        .collect();
    // The rows stream past once: each is scored and kept only as the numbers the ranking
    // or the front needs and where it sits; the rows shown are read again afterwards.
    let gpu = sweeper_engine::run::builtin_gpu(&cfg);
    let scorer = Scorer::new(goal).with_default_gpu(gpu.as_deref());
    let mut over_sla = 0_usize;
    let mut score_fault: Option<ScoreError> = None;
    let mut selection = if pareto {
        let directions: Vec<Direction> = objectives.iter().map(|o| o.direction()).collect();
        Selection::Front(
            FrontStream::new(&directions).map_err(|e| CliError::invalid(e.to_string()))?,
        )
    } else {
        Selection::Ranking(RankStream::new(args.top))
    };
    let mut total = 0_usize;
    let mut feasible = 0_usize;
    let mut zeros = SilentZeros::default();
    let mut missing = super::missing_keys::MissingKeys::new(objectives);
    let mut values = Vec::with_capacity(objectives.len());
    let mut front_fault: Option<ScoreError> = None;
    // A table of a whole ranking shows every feasible row: its columns and widths are
    // learnt as the rows stream past here (they do not depend on the order), so that the
    // rows are read again once, to be written, not twice.
    let mut whole_ranking_table =
        (matches!(args.format, Format::Table) && !pareto && args.top.is_none())
            .then(|| CandidateTable::new(objectives, pareto, &args.show));
    let notes = source.scan(|row, at| {
        total += 1;
        if !per_gpu.is_empty() {
            zeros.count(&row);
        }
        missing.count(&row);
        let mut config = row.config;
        fill_used_gpus(&mut config, rule);
        // As make_candidate reads it: a count the reader refused never gets here.
        let gpus = used_gpus(row.place.row, &config).unwrap_or(f64::INFINITY);
        if !is_feasible(gpus, budget) {
            return;
        }
        if scorer.over_sla(&row.report).is_some() {
            over_sla += 1;
            return;
        }
        feasible += 1;
        let candidate = match scorer.candidate(row.place.row, config, &row.report) {
            Ok(c) => c,
            Err(e) => {
                score_fault.get_or_insert(e);
                return;
            }
        };
        match &mut selection {
            Selection::Ranking(ranking) => {
                ranking.push_satisfying(candidate.score, gpus, candidate.satisfying, at);
            }
            Selection::Front(front) => {
                values.clear();
                values.extend(candidate.objectives.iter().flatten().map(|(_, v)| *v));
                if front_fault.is_none()
                    && let Err(e) = front.push(&values, at)
                {
                    front_fault = Some(match e {
                        ScoreError::NanValue { column, .. } => ScoreError::NanReport {
                            candidate: at.index,
                            key: objectives[column].name().to_owned(),
                        },
                        other => other,
                    });
                }
            }
        }
        if let Some(table) = whole_ranking_table.as_mut() {
            table.add(&candidate);
        }
    })?;
    if let Some(e) = score_fault {
        return Err(CliError::invalid(e.to_string()));
    }
    if let Source::Reports(table) = &source {
        super::read_args::note_formats(table.formats());
    }
    for n in notes {
        note(&format!("warning: {n}"));
    }
    zeros.warn(&per_gpu, total);
    missing.warn(total);
    let dropped = total - feasible - over_sla;
    let described: Vec<String> = objectives
        .iter()
        .map(|o| format!("{} {}, {}", o.direction(), o.name(), o.unit()))
        .collect();
    note(&format!(
        "goal: {} ({}); {total} candidates, {feasible} feasible, {dropped} over the GPU budget of {} (dropped)",
        goal.target().name(),
        described.join("; "),
        cfg.search_space.gpu_budget
    ));
    if over_sla > 0 {
        note(&format!(
            "strict_sla: {over_sla} candidates over the SLA (dropped)"
        ));
    }
    if feasible == 0 {
        return Err(CliError::invalid(format!(
            "no feasible candidate: all {total} use more than {} GPUs",
            cfg.search_space.gpu_budget
        )));
    }
    let shown = match selection {
        Selection::Front(front) => {
            if let Some(e) = front_fault {
                return Err(CliError::invalid(e.to_string()));
            }
            let front = front
                .finish()
                .map_err(|e| CliError::invalid(e.to_string()))?;
            note(&format!(
                "front: {} of {feasible} feasible candidates",
                front.len()
            ));
            front
        }
        Selection::Ranking(ranking) => ranking.finish(),
    };
    let build = |row: ReportRow| {
        let mut config = row.config;
        fill_used_gpus(&mut config, rule);
        let index = row.place.row;
        // The first pass stopped at any row the scorer refused (a GPU without a price), so
        // the rows shown score again without error; the fallback is never taken.
        scorer
            .candidate(index, config.clone(), &row.report)
            .unwrap_or_else(|_| make_candidate(index, config, &row.report, objectives, pareto))
    };
    match args.format {
        Format::Table => {
            // Two passes over the rows shown, as for CSV: the first learns the columns and
            // their widths, the second writes; no pass holds the rows (a whole ranking of
            // millions of rows would be gigabytes of cells).
            let mut table = if let Some(table) = whole_ranking_table {
                table
            } else {
                let mut table = CandidateTable::new(objectives, pareto, &args.show);
                for row in source.fetch(&shown)? {
                    table.add(&build(row.map_err(|e| input_error(&e))?));
                }
                table
            };
            let layout = table.layout();
            let rows = source.fetch(&shown)?;
            write_read_again(|out, fault| {
                layout.write_row(out, &table.headers)?;
                for (k, row) in rows.enumerate() {
                    let c = build(row.map_err(&mut *fault)?);
                    layout.write_row(out, &table.cells(k, &c))?;
                }
                Ok(())
            })
        }
        Format::Json => {
            let rows = source.fetch(&shown)?;
            write_read_again(|out, fault| {
                let mut out = sweeper_engine::text::JsonControls::new(out);
                let out = &mut out;
                let mut ser = serde_json::Serializer::with_formatter(
                    &mut *out,
                    serde_json::ser::PrettyFormatter::new(),
                );
                let mut seq = ser.serialize_seq(Some(shown.len())).map_err(json_io)?;
                for row in rows {
                    let c = build(row.map_err(&mut *fault)?);
                    seq.serialize_element(&c).map_err(json_io)?;
                }
                SerializeSeq::end(seq).map_err(json_io)?;
                writeln!(out)
            })
        }
        Format::Csv => {
            let mut columns = CsvColumns::default();
            for row in source.fetch(&shown)? {
                columns.add(&build(row.map_err(|e| input_error(&e))?));
            }
            let header = columns.header(objectives, pareto);
            let rows = source.fetch(&shown)?;
            write_read_again(|out, fault| {
                let mut failed = None;
                let cells = rows.enumerate().map_while(|(k, row)| match row {
                    Ok(row) => Some(columns.cells(k, &build(row), objectives, pareto)),
                    Err(e) => {
                        failed = Some(e);
                        None
                    }
                });
                write_csv(out, &header, cells)?;
                match failed {
                    Some(e) => Err(fault(e)),
                    None => Ok(()),
                }
            })
        }
    }
}

/// [`write_stdout`] of rows read again from the input: the writer hands a fault reading
/// them to `fault`, and the command fails with that fault (not as a write error).
fn write_read_again(
    f: impl FnOnce(&mut dyn Write, &mut dyn FnMut(InputError) -> io::Error) -> io::Result<()>,
) -> CliResult {
    let mut held: Option<InputError> = None;
    let written = write_stdout(|out| {
        f(out, &mut |e| {
            held = Some(e);
            io::Error::other("the input could not be read again")
        })
    });
    match held {
        Some(e) => Err(input_error(&e)),
        None => written,
    }
}

/// A per-GPU objective reads 0 for a report without `gpu_hours` and `duration_ms` (SPEC 3:
/// no division by zero); the value stays 0, but the user is told once, with the count, the
/// keys, and how to fix the reports. Counted row by row as the rows stream past.
#[derive(Debug, Default)]
struct SilentZeros {
    /// Reports without a positive average GPU count.
    lacking: usize,
    /// Of those, the ones whose config gives `used_gpus`.
    with_gpus: usize,
}

impl SilentZeros {
    fn count(&mut self, row: &ReportRow) {
        if sweeper_score::avg_gpu(&row.report) <= 0.0 {
            self.lacking += 1;
            if row.config.contains_key(USED_GPUS) {
                self.with_gpus += 1;
            }
        }
    }

    fn warn(&self, per_gpu: &[&str], total: usize) {
        if per_gpu.is_empty() || self.lacking == 0 {
            return;
        }
        let mut text = format!(
            "warning: {} of {total} reports lack a positive gpu_hours or duration_ms, so their {} read 0 (SPEC 3); add both keys to the reports",
            self.lacking,
            per_gpu.join(" and ")
        );
        if self.with_gpus > 0 {
            let _ = write!(
                text,
                " ({} of them give used_gpus: gpu_hours = used_gpus × duration_ms / 3,600,000; --gpus used_gpus derives it)",
                self.with_gpus
            );
        }
        note(&text);
    }
}

/// The rows `score` reads.
enum Source {
    /// Reports files, read a row at a time; the rows shown are read again from where
    /// they sit (standard input is spooled to a temporary file for that).
    Reports(ReportTable<File>),
    /// The trials with a report of a sweep's journal or `result.json` (few: kept whole).
    Sweep(Vec<ReportRow>),
}

impl Source {
    /// Hands every row to `visit` in input order, with where it is; returns the notes of
    /// reports files.
    fn scan(&mut self, mut visit: impl FnMut(ReportRow, RowAt)) -> Result<Vec<String>, CliError> {
        match self {
            Source::Reports(table) => table.scan(visit).map_err(|e| input_error(&e)),
            Source::Sweep(rows) => {
                for (k, row) in rows.iter().enumerate() {
                    let at = RowAt {
                        index: row.place.row,
                        offset: k as u64,
                        len: 0,
                    };
                    visit(row.clone(), at);
                }
                Ok(Vec::new())
            }
        }
    }

    /// The rows at `wanted`, in that order, read again.
    fn fetch<'a>(
        &'a mut self,
        wanted: &'a [RowAt],
    ) -> Result<Box<dyn Iterator<Item = Result<ReportRow, InputError>> + 'a>, CliError> {
        match self {
            Source::Reports(table) => {
                Ok(Box::new(table.fetch(wanted).map_err(|e| input_error(&e))?))
            }
            Source::Sweep(rows) => Ok(Box::new(
                wanted.iter().map(|at| Ok(rows[at.offset as usize].clone())),
            )),
        }
    }
}

/// What a file given to `score` holds, from its content.
#[derive(Debug, PartialEq)]
enum Input {
    /// A sweep's journal: the first line is a JSON object with `"kind": "header"`.
    Journal,
    /// A sweep's `result.json`: one JSON object with `sweeper_version` and `trials`.
    Result(Map<String, Value>),
    /// Anything else: a reports file (JSON Lines, a JSON array, CSV).
    Reports,
}

/// What `input` holds, from its content, read as far as needed to tell (a journal's
/// header line, a `result.json`'s whole object); the input is rewound afterwards.
fn detect<R: Read + Seek>(input: &mut R) -> io::Result<Input> {
    let found = detect_from(input)?;
    input.rewind()?;
    Ok(found)
}

fn detect_from<R: Read + Seek>(input: &mut R) -> io::Result<Input> {
    // Up to the end of the first line with text, past byte order marks and blank space.
    let mut reader = BufReader::new(&mut *input);
    let mut head = Vec::new();
    let skipped = loop {
        let n = reader.read_until(b'\n', &mut head)?;
        let Ok(text) = std::str::from_utf8(&head) else {
            return Ok(Input::Reports); // not UTF-8: not a sweep's file
        };
        let rest = text.trim_start_matches('\u{feff}').trim_start();
        if n == 0 || !rest.is_empty() {
            break head.len() - rest.len();
        }
    };
    let text = std::str::from_utf8(&head[skipped..]).unwrap_or_default();
    if !text.starts_with('{') {
        return Ok(Input::Reports);
    }
    let first = text.lines().next().unwrap_or_default();
    let alone = serde_json::from_str::<Value>(first);
    if let Ok(Value::Object(line)) = &alone
        && line.get("kind").and_then(Value::as_str) == Some("header")
    {
        // A journal is all UTF-8 text (else it is read as reports, which say so).
        let whole = is_utf8(&mut reader)?;
        return Ok(if whole {
            Input::Journal
        } else {
            Input::Reports
        });
    }
    if let Ok(Value::Object(line)) = &alone
        && !(line.contains_key("sweeper_version") && line.contains_key("trials"))
    {
        // JSON Lines: a first row on its own line is not a result.json
        return Ok(Input::Reports);
    }
    // The whole input as one JSON value (JSON Lines fail at their second line, at once).
    drop(reader);
    input.seek(SeekFrom::Start(skipped as u64))?;
    match serde_json::from_reader::<_, Value>(BufReader::new(&mut *input)) {
        Ok(Value::Object(object))
            if object.contains_key("sweeper_version") && object.contains_key("trials") =>
        {
            Ok(Input::Result(object))
        }
        _ => Ok(Input::Reports),
    }
}

/// The rows of reports files, or the trials with a report of a sweep's journal (replayed
/// under `cfg`) or `result.json` (given alone).
fn read_rows(
    paths: &[PathBuf],
    cfg: &SweepConfig,
    read: &super::read_args::ReadArgs,
) -> Result<Source, CliError> {
    let mut inputs = Vec::with_capacity(paths.len());
    let mut stdin = false;
    for path in paths {
        if path.as_os_str() == "-" && std::mem::replace(&mut stdin, true) {
            return Err(CliError::io(
                "standard input (`-`) is given twice; it can be read once",
            ));
        }
        let mut file = open_seekable(path).map_err(|e| input_error(&e))?;
        let found = if read.forces_benchmark() {
            Input::Reports
        } else {
            detect(&mut file)
                .map_err(|e| CliError::io(format!("cannot read {}: {e}", path.display())))?
        };
        if !matches!(found, Input::Reports) && read.given() {
            return Err(CliError::io(format!(
                "{}: a sweep's journal.jsonl or result.json is scored as it is; --input-format, --map, --gpus and --per-user-from-tpot apply to reports files",
                path.display()
            )));
        }
        if !matches!(found, Input::Reports) && paths.len() > 1 {
            return Err(CliError::io(format!(
                "{}: a sweep's journal.jsonl or result.json is scored alone; give it as the only input (shards are reports files)",
                path.display()
            )));
        }
        match found {
            Input::Reports => inputs.push((path.clone(), file)),
            Input::Journal => {
                if path.as_os_str() == "-" {
                    return Err(CliError::io(
                        "a sweeper journal is read from its file: give its path (DIR/journal.jsonl) instead of `-`",
                    ));
                }
                let result = rescore_journal(cfg, path).map_err(|e| super::run_error(&e))?;
                return rows_of_trials(path, &result.trials).map(Source::Sweep);
            }
            Input::Result(mut object) => {
                let trials = object.remove("trials").unwrap_or_default();
                let trials: Vec<TrialResult> = serde_json::from_value(trials).map_err(|e| {
                    CliError::invalid(format!(
                        "{}: not a sweeper result.json: `trials`: {e}",
                        path.display()
                    ))
                })?;
                return rows_of_trials(path, &trials).map(Source::Sweep);
            }
        }
    }
    Ok(Source::Reports(ReportTable::new(inputs).with_options(
        read.options(cfg.search_space.used_gpus.as_ref()),
    )))
}

/// The trials that came with a report, as rows: feasible ones, and infeasible ones that
/// were evaluated (over the sweep's GPU budget); the trial id is the row's index.
fn rows_of_trials(path: &Path, trials: &[TrialResult]) -> Result<Vec<ReportRow>, CliError> {
    let mut rows = Vec::new();
    for t in trials {
        let reported = match t.status {
            Status::Feasible => true,
            Status::Infeasible => !t.metrics.is_empty() || !t.labels.is_empty(),
            _ => false,
        };
        if !reported {
            continue;
        }
        let bad = |detail: String| {
            CliError::invalid(format!("{}: trial {}: {detail}", path.display(), t.trial))
        };
        let index = usize::try_from(t.trial).map_err(|_| bad("trial id out of range".into()))?;
        let report = Report::from_map(index, t.metrics.clone()).map_err(|e| bad(e.to_string()))?;
        sweeper_score::used_gpus(index, &t.config).map_err(|e| bad(e.to_string()))?;
        rows.push(ReportRow {
            place: Place {
                line: None,
                row: index,
            },
            config: t.config.clone(),
            report,
        });
    }
    if rows.is_empty() {
        return Err(CliError::invalid(format!(
            "{}: no trial with a report to score (every trial failed, was unsupported or is unfinished)",
            path.display()
        )));
    }
    Ok(rows)
}

/// A number for people: integers as integers, two decimals from 1 to 1e6 (tok/s, ms), four
/// below 1, scientific notation outside `[1e-3, 1e6)`. JSON and CSV print exact numbers.
fn human(x: f64) -> String {
    if !x.is_finite() {
        return exact(x);
    }
    if x == x.trunc() && x.abs() < 1e15 {
        return format!("{x:.0}");
    }
    let a = x.abs();
    if !(1e-3..1e6).contains(&a) {
        format!("{x:.4e}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    }
}

/// A config value as a table cell.
fn cell(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) if n.is_f64() => n.as_f64().map(human).unwrap_or_default(),
        Some(other) => other.to_string(),
    }
}

fn objective_header(o: Objective) -> String {
    format!("{} ({})", o.name(), o.unit())
}

/// What a config key's column needs: its widest cell, and whether every value is a number
/// (right-aligned) or absent.
#[derive(Debug, Clone, Copy)]
struct KeyColumn {
    width: usize,
    numeric: bool,
}

impl Default for KeyColumn {
    fn default() -> Self {
        KeyColumn {
            width: 0,
            numeric: true,
        }
    }
}

impl KeyColumn {
    fn see(&mut self, value: Option<&Value>) {
        self.numeric &= matches!(value, None | Some(Value::Number(_)));
        self.width = self.width.max(cell(value).chars().count());
    }
}

/// The table of `score --format table`, learnt from the shown candidates one at a time
/// ([`add`](Self::add)): the fixed columns (rank, index, GPUs, the goal's values), then the
/// config keys (`--show`, or every key of the shown candidates, sorted, without
/// `used_gpus` and names the fixed columns have), numbers right-aligned.
#[derive(Debug)]
struct CandidateTable<'a> {
    pareto: bool,
    value_columns: Vec<Objective>,
    show: &'a [String],
    /// The fixed headers, then (after [`layout`](Self::layout)) the key columns.
    headers: Vec<String>,
    fixed_widths: Vec<usize>,
    keys_seen: BTreeMap<String, KeyColumn>,
    /// The key columns, set by [`layout`](Self::layout).
    keys: Vec<String>,
    added: usize,
}

impl<'a> CandidateTable<'a> {
    fn new(objectives: &[Objective], pareto: bool, show: &'a [String]) -> Self {
        let mut headers: Vec<String> = Vec::new();
        if !pareto {
            headers.push("rank".into());
        }
        headers.push("index".into());
        headers.push("used_gpus".into());
        let value_columns: Vec<Objective> = if pareto {
            objectives.to_vec()
        } else {
            objectives.first().copied().into_iter().collect()
        };
        headers.extend(value_columns.iter().map(|&o| objective_header(o)));
        CandidateTable {
            pareto,
            value_columns,
            show,
            fixed_widths: vec![0; headers.len()],
            headers,
            keys_seen: BTreeMap::new(),
            keys: Vec::new(),
            added: 0,
        }
    }

    /// The cells of the fixed columns of the `k`-th candidate shown.
    fn fixed_cells(&self, k: usize, c: &Candidate) -> Vec<String> {
        let mut row = Vec::with_capacity(self.headers.len() + self.keys.len());
        if !self.pareto {
            row.push((k + 1).to_string());
        }
        row.push(c.index.to_string());
        row.push(human(c.used_gpus));
        for &o in &self.value_columns {
            // A scalar goal's raw value is its score unsigned (e2e_latency is negated).
            let v = c
                .objective(o)
                .unwrap_or_else(|| o.direction().sign() * c.score);
            row.push(human(v));
        }
        row
    }

    /// Measures the next candidate shown (first pass).
    fn add(&mut self, c: &Candidate) {
        let fixed = self.fixed_cells(self.added, c);
        for (w, cell) in self.fixed_widths.iter_mut().zip(&fixed) {
            *w = (*w).max(cell.chars().count());
        }
        if self.show.is_empty() {
            for (key, value) in &c.config {
                self.see(key, Some(value));
            }
        } else {
            for key in self.show {
                self.see(key, c.config.get(key));
            }
        }
        self.added += 1;
    }

    /// Measures one config value of key `key` (`None`: the candidate lacks it).
    fn see(&mut self, key: &str, value: Option<&Value>) {
        if let Some(column) = self.keys_seen.get_mut(key) {
            column.see(value);
        } else {
            let mut column = KeyColumn::default();
            column.see(value);
            self.keys_seen.insert(key.to_owned(), column);
        }
    }

    /// Fixes the key columns and returns the widths of every column (after every
    /// [`add`](Self::add)).
    fn layout(&mut self) -> TableLayout {
        let fixed = self.headers.len();
        self.keys = if self.show.is_empty() {
            let taken: HashSet<&str> = self.headers.iter().map(String::as_str).collect();
            self.keys_seen
                .keys()
                .filter(|k| *k != USED_GPUS && !taken.contains(k.as_str()))
                .cloned()
                .collect()
        } else {
            self.show.to_vec()
        };
        let columns: Vec<KeyColumn> = self
            .keys
            .iter()
            .map(|k| self.keys_seen.get(k).copied().unwrap_or_default())
            .collect();
        self.headers.extend(self.keys.iter().cloned());
        let mut right = vec![true; fixed];
        right.extend(columns.iter().map(|c| c.numeric));
        let mut layout = TableLayout::new(&self.headers, &right);
        for (k, &w) in self.fixed_widths.iter().enumerate() {
            layout.widen(k, w);
        }
        for (k, c) in columns.iter().enumerate() {
            layout.widen(fixed + k, c.width);
        }
        layout
    }

    /// The cells of the `k`-th candidate shown (second pass).
    fn cells(&self, k: usize, c: &Candidate) -> Vec<String> {
        let mut row = self.fixed_cells(k, c);
        row.extend(self.keys.iter().map(|key| cell(c.config.get(key))));
        row
    }
}

/// The columns of `score --format csv` beyond the fixed ones, gathered from the shown
/// candidates one at a time: the known metrics any of them has, and their config keys.
#[derive(Debug, Default)]
struct CsvColumns {
    metrics: Vec<&'static str>,
    keys: Vec<String>,
    seen_metrics: BTreeSet<&'static str>,
    seen_keys: BTreeSet<String>,
}

impl CsvColumns {
    fn add(&mut self, c: &Candidate) {
        for m in KNOWN_METRICS {
            if c.metrics.contains_key(m) {
                self.seen_metrics.insert(m);
            }
        }
        for key in c.config.keys() {
            if !self.seen_keys.contains(key) {
                self.seen_keys.insert(key.clone());
            }
        }
    }

    /// The header (and the metric and config columns, kept for [`cells`](Self::cells)):
    /// config keys sorted, without `used_gpus` and names the other columns have.
    fn header(&mut self, objectives: &[Objective], pareto: bool) -> Vec<String> {
        let mut headers: Vec<String> = Vec::new();
        if !pareto {
            headers.push("rank".into());
        }
        headers.extend(["index", "used_gpus", "score"].map(String::from));
        if pareto {
            headers.extend(objectives.iter().map(|o| o.name().to_owned()));
        }
        self.metrics = KNOWN_METRICS
            .into_iter()
            .filter(|m| self.seen_metrics.contains(m))
            .collect();
        headers.extend(self.metrics.iter().map(|m| (*m).to_owned()));
        self.keys = self
            .seen_keys
            .iter()
            .filter(|k| *k != USED_GPUS && !headers.contains(k))
            .cloned()
            .collect();
        headers.extend(self.keys.iter().cloned());
        headers
    }

    /// The cells of the `k`-th candidate shown.
    fn cells(
        &self,
        k: usize,
        c: &Candidate,
        objectives: &[Objective],
        pareto: bool,
    ) -> Vec<String> {
        let mut row = Vec::new();
        if !pareto {
            row.push((k + 1).to_string());
        }
        row.push(c.index.to_string());
        row.push(exact(c.used_gpus));
        row.push(exact(c.score));
        if pareto {
            for &o in objectives {
                row.push(c.objective(o).map(exact).unwrap_or_default());
            }
        }
        for m in &self.metrics {
            row.push(c.metrics.get(*m).copied().map(exact).unwrap_or_default());
        }
        for key in &self.keys {
            row.push(sweeper_tables::csv_out::value(c.config.get(key)));
        }
        row
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use sweeper_goal::UsedGpus;

    #[test]
    fn sweeps_are_told_from_reports_by_content() {
        let detect = |bytes: &[u8]| {
            let mut input = std::io::Cursor::new(bytes);
            let found = super::detect(&mut input).unwrap();
            assert_eq!(input.position(), 0, "rewound");
            found
        };
        let journal = b"{\"kind\":\"header\",\"sweeper\":\"0.1.0\",\"fingerprint\":\"ab\",\"seed\":1}\n{\"kind\":\"suggest\"}\n";
        assert_eq!(detect(journal), Input::Journal);
        let result = b"{\n  \"sweeper_version\": \"0.1.0\",\n  \"trials\": []\n}\n";
        assert!(matches!(detect(result), Input::Result(_)));
        let result = b"\xEF\xBB\xBF\n  \n{\"sweeper_version\": \"0.1.0\", \"trials\": []}";
        assert!(matches!(detect(result), Input::Result(_)));
        for reports in [
            &b"{\"config\": {}, \"report\": {}}\n{\"config\": {}, \"report\": {}}\n"[..],
            b"{\"config\": {}, \"report\": {}}",
            b"{\"kind\": \"header\"",
            b"[{\"config\": {}, \"report\": {}}]",
            b"tp,output_throughput_tok_s\n1,2\n",
            b"{\"trials\": []}",
            b"{\"sweeper_version\": 1, \"trials\": []}\n{\"config\": {}, \"report\": {}}\n",
            b"{\"kind\":\"header\"}\n{\"x\": \"\xff\"}\n",
            b"\xff\xfe",
        ] {
            assert_eq!(
                detect(reports),
                Input::Reports,
                "{:?}",
                String::from_utf8_lossy(reports)
            );
        }
    }

    #[test]
    fn human_numbers() {
        assert_eq!(human(4.0), "4");
        assert_eq!(human(114.156_504_467_022_77), "114.16");
        assert_eq!(human(13.817_807_151_061_661), "13.82");
        assert_eq!(human(0.016_716_895_690_055_1), "0.0167");
        assert_eq!(human(1_767_922.259_503), "1.7679e6");
        assert_eq!(human(0.000_01), "1.0000e-5");
        assert_eq!(human(-2.5), "-2.50");
        assert_eq!(human(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn used_gpus_rule_fills_only_missing_counts() {
        let product = UsedGpus::Product(vec!["tp".into(), "replicas".into()]);
        let mut c = json!({"tp": 4, "replicas": 2})
            .as_object()
            .cloned()
            .unwrap();
        fill_used_gpus(&mut c, Some(&product));
        assert_eq!(c["used_gpus"], json!(8));
        let mut c = json!({"tp": 4, "used_gpus": 1})
            .as_object()
            .cloned()
            .unwrap();
        fill_used_gpus(&mut c, Some(&product));
        assert_eq!(c["used_gpus"], json!(1));
        let mut c = json!({"tp": 4}).as_object().cloned().unwrap();
        fill_used_gpus(&mut c, Some(&product));
        assert!(!c.contains_key("used_gpus"));
        fill_used_gpus(&mut c, Some(&UsedGpus::Fixed(8)));
        assert_eq!(c["used_gpus"], json!(8));
        let mut c = Map::new();
        fill_used_gpus(&mut c, None);
        assert!(c.is_empty());
    }
}
