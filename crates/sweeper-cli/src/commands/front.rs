//! `sweeper front`: the Pareto front, the non-dominated ranks, or the hypervolume of numeric
//! columns of a table.

use super::output::{
    TableLayout, exact, input_error, json_string, note, write_csv, write_json_number, write_stdout,
};
use super::{CliError, CliResult, Format};
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Instant;
use sweeper_goal::Direction;
use sweeper_score::{ScoreError, front};
use sweeper_tables::input::{NumericTable, read_columns};

const AFTER_HELP: &str = "\
Rows are numbered from 0 in input order (comment lines, the CSV header and blank lines are not
rows); `index` in the output is that number. A row is on the front when no other row is at
least as good in every objective and strictly better in one; equal rows are all kept. The
front is printed sorted by the LAST objective ascending (the x-axis), ties in input order.

A serving benchmark's own result file is read as `sweeper score` reads it, with the same
flags (the format is told from its keys and said on stderr; --input-format names it):
`vllm bench serve --save-result` JSON, SGLang `bench_serving --output-file` JSON Lines (its
bare `Infinity` is inf), genai-perf's profile_export_genai_perf.json. Its columns are then
the keys `score` reads (output_throughput_tok_s, mean_ttft_ms, duration_ms, request_rate,
...; with --gpus also gpu_hours and used_gpus).

Several inputs are read as one table, in the order given (the shards of an array job, in any
mix of formats): rows are numbered on from one input to the next, so `index` is a row's place
in the concatenation, and the result is that of one file holding every row. Every input needs
the objective columns (other columns may differ); an input without data rows is skipped with
a warning. An error names the file, the line in that file and the row of the whole table.

Examples (from the repository root, on the files that ship in examples/):
  # The InferenceX frontier of real serving rows: total tok/s (y) against tok/s/user (x)
  sweeper front examples/serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv \\
      -o output_throughput_tok_s:max -o mean_output_token_throughput_per_user:max

  # Throughput against end-to-end latency, as JSON
  sweeper front examples/serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv \\
      -o output_throughput_tok_s:max -o mean_e2e_latency_ms:min --format json

  # A NumPy float64 matrix of shape (n, 3); columns are named 0, 1, 2
  sweeper front examples/front/points.npy -o 0:max -o 1:max -o 2:min --stats

  # Non-dominated sorting: every row with its front number (0 = on the front)
  sweeper front examples/front/points.npy -o 0:max -o 1:max -o 2:min --ranks

  # The hypervolume dominated by the rows, against the reference point (0, 0, 10000)
  sweeper front examples/front/points.npy -o 0:max -o 1:max -o 2:min --hypervolume 0,0,10000

  # A benchmark's result files, one example per format: vLLM's saved results, SGLang's
  # bench_serving runs (JSON Lines), and genai-perf's exports
  sweeper front examples/bench-results/vllm/*.json \\
      -o output_throughput_tok_s:max -o mean_ttft_ms:min
  sweeper front examples/bench-results/sglang-runs.jsonl \\
      -o output_throughput_tok_s:max -o mean_e2e_latency_ms:min
  sweeper front examples/bench-results/genai-perf/c16/profile_export_genai_perf.json \\
      examples/bench-results/genai-perf/c64/profile_export_genai_perf.json \\
      -o output_throughput_tok_s:max -o mean_output_token_throughput_per_user:max

  # A column under another name (-o names it as renamed)
  sweeper front examples/bench-results/rows.csv --map mean_tpot_ms=tpot_ms \\
      -o output_throughput_tok_s:max -o tpot_ms:min

  # Reduce the shards of an array job (from the repository root): the front of all their
  # rows, as of one file (a shell sorts a glob as text: part-10 comes before part-2)
  sweeper front examples/shards/part-*.csv -o output_throughput_tok_s:max \\
      -o mean_output_token_throughput_per_user:max

Exit status: 0 ok; 1 bad input (missing column, NaN, empty file, ragged CSV, wrong .npy
dtype; the message names the row and column); 2 usage or I/O error.";

/// Arguments of `sweeper front`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub(crate) struct Args {
    /// The table: CSV with a header row (`#` lines are comments), JSON Lines, a JSON array
    /// of objects, or a numpy `.npy` file (float64, shape (n, d), columns named 0..d-1). The
    /// format is read from the content; several inputs are read as one table (shards); `-`
    /// reads standard input (once).
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// A column and its direction, `NAME:max` or `NAME:min`. Repeat once per objective;
    /// the last one is the x-axis the front is sorted by.
    #[arg(
        short = 'o',
        long = "objective",
        value_name = "NAME:max|min",
        required = true,
        value_parser = parse_objective
    )]
    objectives: Vec<ObjectiveArg>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Print `rows=N front=F load_ms=X kernel_ms=Y` on stderr (wall time of reading the
    /// input and of the kernel call).
    #[arg(long)]
    stats: bool,
    /// Print the hypervolume dominated by the rows against this reference point instead of
    /// the front: comma-separated, one value per objective (`inf`/`-inf` allowed).
    #[arg(
        long,
        value_name = "REF",
        allow_hyphen_values = true,
        conflicts_with = "ranks"
    )]
    hypervolume: Option<String>,
    /// Print every row with its non-dominated rank (0 = on the front, 1 = on the front once
    /// rank 0 is removed, ...) instead of the front, in input order.
    #[arg(long)]
    ranks: bool,
    #[command(flatten)]
    read: super::read_args::ReadArgs,
}

/// One `--objective NAME:max|min`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ObjectiveArg {
    name: String,
    direction: Direction,
}

fn parse_objective(text: &str) -> Result<ObjectiveArg, String> {
    let bad = || format!("expected NAME:max or NAME:min, got `{text}`");
    let (name, dir) = text.rsplit_once(':').ok_or_else(bad)?;
    let direction = match dir.trim().to_ascii_lowercase().as_str() {
        "max" | "maximize" => Direction::Maximize,
        "min" | "minimize" => Direction::Minimize,
        _ => return Err(bad()),
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(bad());
    }
    Ok(ObjectiveArg {
        name: name.to_owned(),
        direction,
    })
}

/// Maps a kernel error to exit 1, naming columns instead of positions.
fn kernel_error(err: &ScoreError, columns: &[String]) -> CliError {
    match err {
        ScoreError::NanValue { row, column } => CliError::invalid(format!(
            "row {row}, column `{}`: value is NaN",
            columns.get(*column).map_or("?", String::as_str)
        )),
        other => CliError::invalid(other.to_string()),
    }
}

fn millis(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

/// The rows printed: the front's, in its order, or every row in input order (`--ranks`,
/// without a list of a row number per row).
#[derive(Debug, Clone, Copy)]
enum Order<'a> {
    Rows(&'a [usize]),
    All(usize),
}

impl<'a> Order<'a> {
    /// The row numbers, in the order printed.
    fn indices(self) -> Box<dyn Iterator<Item = usize> + 'a> {
        match self {
            Order::Rows(rows) => Box::new(rows.iter().copied()),
            Order::All(n) => Box::new(0..n),
        }
    }

    fn is_empty(self) -> bool {
        match self {
            Order::Rows(rows) => rows.is_empty(),
            Order::All(n) => n == 0,
        }
    }
}

/// Row `i`'s cells (`index`, its rank with `ranks`, then the objective values) written
/// into `cells`, reusing their buffers.
fn fill_cells(table: &NumericTable, ranks: Option<&[usize]>, i: usize, cells: &mut Vec<String>) {
    use std::fmt::Write as _;
    let d = table.columns.len();
    let n = 1 + usize::from(ranks.is_some()) + d;
    cells.resize_with(n, String::new);
    for cell in cells.iter_mut() {
        cell.clear();
    }
    let _ = write!(cells[0], "{i}");
    let mut k = 1;
    if let Some(r) = ranks {
        let _ = write!(cells[1], "{}", r[i]);
        k = 2;
    }
    for (cell, &x) in cells[k..].iter_mut().zip(&table.data[i * d..(i + 1) * d]) {
        sweeper_tables::csv_out::push_number(cell, x);
    }
}

/// Rows of the table as `index` then the objective values.
fn value_rows<'a>(
    table: &'a NumericTable,
    order: Order<'a>,
    ranks: Option<&'a [usize]>,
) -> impl Iterator<Item = Vec<String>> + 'a {
    order.indices().map(move |i| {
        let mut cells = Vec::new();
        fill_cells(table, ranks, i, &mut cells);
        cells
    })
}

fn write_rows(
    out: &mut dyn Write,
    format: Format,
    table: &NumericTable,
    order: Order<'_>,
    ranks: Option<&[usize]>,
) -> io::Result<()> {
    let d = table.columns.len();
    let mut headers = vec!["index".to_owned()];
    if ranks.is_some() {
        headers.push("rank".to_owned());
    }
    headers.extend(table.columns.iter().cloned());
    match format {
        Format::Table => {
            // Two passes over the rows (measured, then written), none of them held: a
            // table of every row (`--ranks`) is as large as the input many times over.
            let mut layout = TableLayout::new(&headers, &vec![true; headers.len()]);
            let mut cells = Vec::new();
            for i in order.indices() {
                fill_cells(table, ranks, i, &mut cells);
                layout.fit(&cells);
            }
            layout.write_row(out, &headers)?;
            for i in order.indices() {
                fill_cells(table, ranks, i, &mut cells);
                layout.write_row(out, &cells)?;
            }
            Ok(())
        }
        Format::Csv => write_csv(out, &headers, value_rows(table, order, ranks)),
        Format::Json => {
            let keys: Vec<String> = table.columns.iter().map(|c| json_string(c)).collect();
            out.write_all(b"[")?;
            for (k, i) in order.indices().enumerate() {
                let sep = if k == 0 { "\n" } else { ",\n" };
                write!(out, "{sep}  {{\"index\": {i}")?;
                if let Some(r) = ranks {
                    write!(out, ", \"rank\": {}", r[i])?;
                }
                out.write_all(b", \"values\": {")?;
                for (j, key) in keys.iter().enumerate() {
                    if j > 0 {
                        out.write_all(b", ")?;
                    }
                    write!(out, "{key}: ")?;
                    write_json_number(out, table.data[i * d + j])?;
                }
                out.write_all(b"}}")?;
            }
            out.write_all(if order.is_empty() { b"]\n" } else { b"\n]\n" })
        }
    }
}

/// Parses `--hypervolume REF`.
fn parse_reference(text: &str, d: usize) -> Result<Vec<f64>, CliError> {
    let values: Vec<f64> = text
        .split(',')
        .map(|t| {
            let t = t.trim();
            t.parse::<f64>()
                .ok()
                .filter(|x| !x.is_nan())
                .ok_or_else(|| CliError::io(format!("--hypervolume: `{t}` is not a number")))
        })
        .collect::<Result<_, _>>()?;
    if values.len() != d {
        return Err(CliError::io(format!(
            "--hypervolume: {} values for {d} objectives; give one per --objective, comma-separated",
            values.len()
        )));
    }
    Ok(values)
}

pub(crate) fn run(args: &Args) -> CliResult {
    let columns: Vec<String> = args.objectives.iter().map(|o| o.name.clone()).collect();
    let directions: Vec<Direction> = args.objectives.iter().map(|o| o.direction).collect();
    let d = columns.len();
    let reference = args
        .hypervolume
        .as_deref()
        .map(|r| parse_reference(r, d))
        .transpose()?;

    args.read.check_columns(&columns)?;
    let t_load = Instant::now();
    let read = read_columns(&args.inputs, &columns, &args.read.options(None))
        .map_err(|e| input_error(&e))?;
    let table = read.table;
    let load_ms = millis(t_load);
    super::read_args::note_formats(read.formats.iter().map(|(p, f)| (p.as_path(), *f)));
    for n in read.notes {
        note(&format!("warning: {n}"));
    }
    let kernel = |e: ScoreError| kernel_error(&e, &columns);

    if let Some(reference) = reference {
        let t = Instant::now();
        let hv = front::hypervolume(&table.data, d, &directions, &reference).map_err(kernel)?;
        let kernel_ms = millis(t);
        if args.stats {
            let on_front = front::nondominated(&table.data, d, &directions)
                .map_err(kernel)?
                .len();
            note(&format!(
                "rows={} front={on_front} load_ms={load_ms:.3} kernel_ms={kernel_ms:.3}",
                table.rows
            ));
        }
        return write_stdout(|out| match args.format {
            Format::Table => writeln!(out, "{}", exact(hv)),
            Format::Csv => write_csv(
                out,
                &["hypervolume".to_owned()],
                std::iter::once(vec![exact(hv)]),
            ),
            Format::Json => {
                out.write_all(b"{\"hypervolume\": ")?;
                write_json_number(out, hv)?;
                out.write_all(b", \"reference\": {")?;
                for (j, (c, r)) in columns.iter().zip(&reference).enumerate() {
                    if j > 0 {
                        out.write_all(b", ")?;
                    }
                    write!(out, "{}: ", json_string(c))?;
                    write_json_number(out, *r)?;
                }
                writeln!(out, "}}, \"rows\": {}}}", table.rows)
            }
        });
    }

    if args.ranks {
        let t = Instant::now();
        let ranks = front::nondominated_ranks(&table.data, d, &directions).map_err(kernel)?;
        let kernel_ms = millis(t);
        if args.stats {
            let on_front = ranks.iter().filter(|&&r| r == 0).count();
            note(&format!(
                "rows={} front={on_front} load_ms={load_ms:.3} kernel_ms={kernel_ms:.3}",
                table.rows
            ));
        }
        let all = Order::All(table.rows);
        return write_stdout(|out| write_rows(out, args.format, &table, all, Some(&ranks)));
    }

    let t = Instant::now();
    let order = front::pareto_front_sorted(&table.data, d, &directions).map_err(kernel)?;
    let kernel_ms = millis(t);
    if args.stats {
        note(&format!(
            "rows={} front={} load_ms={load_ms:.3} kernel_ms={kernel_ms:.3}",
            table.rows,
            order.len()
        ));
    }
    write_stdout(|out| write_rows(out, args.format, &table, Order::Rows(&order), None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::output::shown;

    #[test]
    fn objectives_parse() {
        assert_eq!(
            parse_objective("tok_s:max"),
            Ok(ObjectiveArg {
                name: "tok_s".into(),
                direction: Direction::Maximize
            })
        );
        assert_eq!(
            parse_objective("a:b:MIN").map(|o| (o.name, o.direction)),
            Ok(("a:b".into(), Direction::Minimize))
        );
        assert!(parse_objective("x").is_err());
        assert!(parse_objective("x:up").is_err());
        assert!(parse_objective(":max").is_err());
    }

    #[test]
    fn references_parse() {
        assert_eq!(parse_reference("0, -1.5", 2).unwrap(), [0.0, -1.5]);
        assert_eq!(parse_reference("-inf", 1).unwrap(), [f64::NEG_INFINITY]);
        assert_eq!(parse_reference("1,2", 3).unwrap_err().code, 2);
        assert_eq!(parse_reference("nan", 1).unwrap_err().code, 2);
    }

    #[test]
    fn exact_numbers() {
        assert_eq!(exact(1.0), "1.0");
        assert_eq!(exact(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(exact(1e300), "1e+300");
        assert_eq!(exact(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn table_cells_are_shown_as_the_one_escaper_writes_them() {
        for text in [
            "tp=2",
            "",
            "é ü 漢",
            "a\u{1b}]0;x\u{7}b",
            "\t\n\r",
            "\u{7f}\u{9b}x",
        ] {
            assert_eq!(
                shown(text),
                sweeper_engine::text::escape_controls(text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn tables_align() {
        let mut out = Vec::new();
        let headers: Vec<String> = vec!["index".into(), "name".into(), "x".into()];
        let rows: Vec<Vec<String>> = vec![
            vec!["0".into(), "a".into(), "1.5".into()],
            vec!["12".into(), "long".into(), "-inf".into()],
        ];
        let mut layout = TableLayout::new(&headers, &[true, false, true]);
        for row in &rows {
            layout.fit(row);
        }
        layout.write_row(&mut out, &headers).unwrap();
        for row in &rows {
            layout.write_row(&mut out, row).unwrap();
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "index  name     x\n    0  a      1.5\n   12  long  -inf\n"
        );
    }
}
