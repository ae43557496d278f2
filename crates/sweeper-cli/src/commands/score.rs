//! `sweeper score`: score evaluated reports against a config's goal and print the ranking
//! (scalar goal) or the Pareto front (pareto goal).
//!
//! The reports may also be a finished (or running) sweep's `journal.jsonl` or
//! `result.json`: their trials that came with a report become the rows, so that a sweep is
//! re-scored under another goal and GPU budget without evaluating anything.

use super::front::{exact, input_error, json_io, note, write_csv, write_stdout, write_table};
use super::{CliError, CliResult, Format};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use sweeper_cli::input::{Place, ReportRow, for_each_report, read_bytes};
use sweeper_cli::run::{Status, TrialResult, fill_used_gpus, rescore_journal};
use sweeper_goal::{ConfigError, Objective, SweepConfig};
use sweeper_score::{
    Candidate, KNOWN_METRICS, Report, USED_GPUS, is_feasible, make_candidate, pareto_front, rank,
};

const AFTER_HELP: &str = "\
REPORTS holds one evaluated candidate per row, in one of three formats (read from the content):
  JSON Lines   {\"config\": {\"used_gpus\": 4}, \"report\": {\"output_throughput_tok_s\": 286.3}}
  JSON array   [{\"config\": {...}, \"report\": {...}}, ...]
  CSV          a header row; columns named after report metrics (output_throughput_tok_s,
               mean_output_token_throughput_per_user, mean_e2e_latency_ms,
               goodput_output_throughput_tok_s, gpu_hours, duration_ms, mean_ttft_ms,
               mean_itl_ms) form the report, every other column is config; `#` lines are
               comments and an empty cell is a missing key.

A sweep's journal.jsonl or result.json (`sweeper run`'s output directory) is read too: its
trials that came with a report (feasible ones, and infeasible ones over the sweep's GPU
budget) are the rows, each with the configuration it ran and its trial id as `index`;
failed, unsupported and unfinished trials and cache hits are left out. So a finished or
still running sweep is re-scored under another goal and GPU budget, evaluating nothing. A
journal is scored under CONFIG's search_space.used_gpus rule; result.json keeps the GPU
count each trial ran with.

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

Exit status: 0 ok; 1 invalid config, bad input (the message names the row and column) or
no feasible candidate; 2 usage or I/O error.";

/// Arguments of `sweeper score`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub(crate) struct Args {
    /// The sweep config (YAML or JSON): its goal and `search_space.gpu_budget` apply.
    #[arg(short, long, value_name = "CONFIG")]
    config: PathBuf,
    /// The evaluated candidates: JSON Lines, a JSON array, or CSV, or a sweep's
    /// journal.jsonl or result.json (see below); `-` reads standard input.
    reports: PathBuf,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Print only the best N of a ranking (scalar goals).
    #[arg(long, value_name = "N")]
    top: Option<usize>,
    /// Config keys shown as table columns, comma-separated (default: every key).
    #[arg(long, value_name = "KEYS", value_delimiter = ',')]
    show: Vec<String>,
}

pub(crate) fn run(args: &Args) -> CliResult {
    let cfg = sweeper_goal::from_path(&args.config).map_err(|e| match e {
        ConfigError::Io { .. } => CliError::io(e.to_string()),
        _ => CliError::invalid(format!("{}: invalid config: {e}", args.config.display())),
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
    let source = read_rows(&args.reports, &cfg)?;
    let per_gpu: Vec<&str> = objectives
        .iter()
        .filter(|o| matches!(o, Objective::ThroughputPerGpu | Objective::GoodputPerGpu))
        .map(|o| o.name())
        .collect();
    // A reports file is streamed: each row is parsed, scored, and kept only as the few
    // numbers the ranking or the front needs (index, used_gpus, score, objective values);
    // the rows printed are parsed again afterwards. A sweep's rows are few and kept whole.
    let streamed = matches!(source, Source::Reports(_));
    let mut total = 0_usize;
    let mut zeros = SilentZeros::default();
    let mut feasible = Vec::new();
    let notes = source.for_each(&args.reports, |row| {
        total += 1;
        if !per_gpu.is_empty() {
            zeros.count(&row);
        }
        let mut config = row.config;
        fill_used_gpus(&mut config, cfg.search_space.used_gpus.as_ref());
        let mut c = make_candidate(row.place.row, config, &row.report, objectives, pareto);
        if is_feasible(c.used_gpus, budget) {
            if streamed {
                c.config = Map::new();
                c.metrics = BTreeMap::new();
            }
            feasible.push(c);
        }
    })?;
    for n in notes {
        note(&format!("warning: {n}"));
    }
    zeros.warn(&per_gpu, total);
    let dropped = total - feasible.len();
    let described: Vec<String> = objectives
        .iter()
        .map(|o| format!("{} {}, {}", o.direction(), o.name(), o.unit()))
        .collect();
    note(&format!(
        "goal: {} ({}); {total} candidates, {} feasible, {dropped} over the GPU budget of {} (dropped)",
        goal.target().name(),
        described.join("; "),
        feasible.len(),
        cfg.search_space.gpu_budget
    ));
    if feasible.is_empty() {
        return Err(CliError::invalid(format!(
            "no feasible candidate: all {total} use more than {} GPUs",
            cfg.search_space.gpu_budget
        )));
    }
    let shown = if pareto {
        let front =
            pareto_front(&feasible, objectives).map_err(|e| CliError::invalid(e.to_string()))?;
        note(&format!(
            "front: {} of {} feasible candidates",
            front.len(),
            feasible.len()
        ));
        front
    } else {
        let mut ranked = rank(feasible);
        if let Some(n) = args.top {
            ranked.truncate(n);
        }
        ranked
    };
    let shown = if streamed {
        materialize(&source, &args.reports, shown, |row| {
            let mut config = row.config;
            fill_used_gpus(&mut config, cfg.search_space.used_gpus.as_ref());
            make_candidate(row.place.row, config, &row.report, objectives, pareto)
        })?
    } else {
        shown
    };
    write_stdout(|out| match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &shown).map_err(json_io)?;
            writeln!(out)
        }
        Format::Csv => write_candidates_csv(out, &shown, objectives, pareto),
        Format::Table => write_candidates_table(out, &shown, objectives, pareto, &args.show),
    })
}

/// Replaces each shown candidate, kept without its config and metrics, by the whole
/// candidate: a second pass over the input builds only the rows shown (a reports file's
/// `index` is its row number, so it names the row), in the order they are shown.
fn materialize(
    source: &Source,
    path: &Path,
    shown: Vec<Candidate>,
    mut build: impl FnMut(ReportRow) -> Candidate,
) -> Result<Vec<Candidate>, CliError> {
    let slot: HashMap<usize, usize> = shown
        .iter()
        .enumerate()
        .map(|(k, c)| (c.index, k))
        .collect();
    let mut full: Vec<Option<Candidate>> = vec![None; shown.len()];
    // The same bytes parse the same way again, so the notes are the first pass's: dropped.
    source.for_each(path, |row| {
        if let Some(&k) = slot.get(&row.place.row) {
            full[k] = Some(build(row));
        }
    })?;
    Ok(shown
        .into_iter()
        .zip(full)
        .map(|(stripped, whole)| whole.unwrap_or(stripped))
        .collect())
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
                " ({} of them give used_gpus: gpu_hours = used_gpus × duration_ms / 3,600,000)",
                self.with_gpus
            );
        }
        note(&text);
    }
}

/// The rows `score` reads.
enum Source {
    /// A reports file's bytes, parsed row by row on each pass. A file is read whole into
    /// memory (about its size, far less than its parsed rows); standard input likewise:
    /// its bytes are held, not spooled to a temporary file.
    Reports(Vec<u8>),
    /// The trials with a report of a sweep's journal or `result.json` (few: kept whole).
    Sweep(Vec<ReportRow>),
}

impl Source {
    /// Hands every row to `visit` in input order; returns the notes of a reports file.
    fn for_each(
        &self,
        path: &Path,
        mut visit: impl FnMut(ReportRow),
    ) -> Result<Vec<String>, CliError> {
        match self {
            Source::Reports(bytes) => {
                for_each_report(path, bytes, visit).map_err(|e| input_error(&e))
            }
            Source::Sweep(rows) => {
                rows.iter().cloned().for_each(&mut visit);
                Ok(Vec::new())
            }
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

fn detect(bytes: &[u8]) -> Input {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Input::Reports;
    };
    let text = text.trim_start_matches('\u{feff}').trim_start();
    if !text.starts_with('{') {
        return Input::Reports;
    }
    let first = text.lines().next().unwrap_or_default();
    if let Ok(Value::Object(line)) = serde_json::from_str::<Value>(first)
        && line.get("kind").and_then(Value::as_str) == Some("header")
    {
        return Input::Journal;
    }
    // JSON Lines fail here at their second line, at once.
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object))
            if object.contains_key("sweeper_version") && object.contains_key("trials") =>
        {
            Input::Result(object)
        }
        _ => Input::Reports,
    }
}

/// The rows of a reports file, or the trials with a report of a sweep's journal (replayed
/// under `cfg`) or `result.json`.
fn read_rows(path: &Path, cfg: &SweepConfig) -> Result<Source, CliError> {
    let bytes = read_bytes(path).map_err(|e| input_error(&e))?;
    match detect(&bytes) {
        Input::Reports => Ok(Source::Reports(bytes)),
        Input::Journal => {
            if path.as_os_str() == "-" {
                return Err(CliError::io(
                    "a sweeper journal is read from its file: give its path (DIR/journal.jsonl) instead of `-`",
                ));
            }
            let result = rescore_journal(cfg, path).map_err(|e| super::run::run_error(&e))?;
            rows_of_trials(path, &result.trials).map(Source::Sweep)
        }
        Input::Result(mut object) => {
            let trials = object.remove("trials").unwrap_or_default();
            let trials: Vec<TrialResult> = serde_json::from_value(trials).map_err(|e| {
                CliError::invalid(format!(
                    "{}: not a sweeper result.json: `trials`: {e}",
                    path.display()
                ))
            })?;
            rows_of_trials(path, &trials).map(Source::Sweep)
        }
    }
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

/// The config keys of the candidates, sorted, without `used_gpus` (its own column) and
/// without keys that collide with `taken` column names.
fn config_keys(candidates: &[Candidate], taken: &[String]) -> Vec<String> {
    let mut keys: Vec<String> = candidates
        .iter()
        .flat_map(|c| c.config.keys())
        .filter(|k| *k != USED_GPUS && !taken.contains(k))
        .cloned()
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

fn objective_header(o: Objective) -> String {
    format!("{} ({})", o.name(), o.unit())
}

fn write_candidates_table(
    out: &mut dyn Write,
    candidates: &[Candidate],
    objectives: &[Objective],
    pareto: bool,
    show: &[String],
) -> io::Result<()> {
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
    let keys = if show.is_empty() {
        config_keys(candidates, &headers)
    } else {
        show.to_vec()
    };
    let mut right = vec![true; headers.len()];
    for key in &keys {
        right.push(
            candidates
                .iter()
                .all(|c| matches!(c.config.get(key), None | Some(Value::Number(_)))),
        );
    }
    headers.extend(keys.iter().cloned());
    let rows: Vec<Vec<String>> = candidates
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let mut row = Vec::with_capacity(headers.len());
            if !pareto {
                row.push((k + 1).to_string());
            }
            row.push(c.index.to_string());
            row.push(human(c.used_gpus));
            for &o in &value_columns {
                // A scalar goal's raw value is its score unsigned (e2e_latency is negated).
                let v = c
                    .objective(o)
                    .unwrap_or_else(|| o.direction().sign() * c.score);
                row.push(human(v));
            }
            row.extend(keys.iter().map(|key| cell(c.config.get(key))));
            row
        })
        .collect();
    write_table(out, &headers, &right, &rows)
}

fn write_candidates_csv(
    out: &mut dyn Write,
    candidates: &[Candidate],
    objectives: &[Objective],
    pareto: bool,
) -> io::Result<()> {
    let mut headers: Vec<String> = Vec::new();
    if !pareto {
        headers.push("rank".into());
    }
    headers.extend(["index", "used_gpus", "score"].map(String::from));
    if pareto {
        headers.extend(objectives.iter().map(|o| o.name().to_owned()));
    }
    let metrics: Vec<&str> = KNOWN_METRICS
        .into_iter()
        .filter(|m| candidates.iter().any(|c| c.metrics.contains_key(*m)))
        .collect();
    headers.extend(metrics.iter().map(|m| (*m).to_owned()));
    let keys = config_keys(candidates, &headers);
    headers.extend(keys.iter().cloned());
    let rows = candidates.iter().enumerate().map(|(k, c)| {
        let mut row = Vec::with_capacity(headers.len());
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
        for m in &metrics {
            row.push(c.metrics.get(*m).copied().map(exact).unwrap_or_default());
        }
        for key in &keys {
            row.push(sweeper_cli::csv_out::value(c.config.get(key)));
        }
        row
    });
    write_csv(out, &headers, rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use sweeper_goal::UsedGpus;

    #[test]
    fn sweeps_are_told_from_reports_by_content() {
        let journal = b"{\"kind\":\"header\",\"sweeper\":\"0.1.0\",\"fingerprint\":\"ab\",\"seed\":1}\n{\"kind\":\"suggest\"}\n";
        assert_eq!(detect(journal), Input::Journal);
        let result = b"{\n  \"sweeper_version\": \"0.1.0\",\n  \"trials\": []\n}\n";
        assert!(matches!(detect(result), Input::Result(_)));
        for reports in [
            &b"{\"config\": {}, \"report\": {}}\n{\"config\": {}, \"report\": {}}\n"[..],
            b"{\"config\": {}, \"report\": {}}",
            b"{\"kind\": \"header\"",
            b"[{\"config\": {}, \"report\": {}}]",
            b"tp,output_throughput_tok_s\n1,2\n",
            b"{\"trials\": []}",
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
