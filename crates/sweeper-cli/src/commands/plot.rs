//! `sweeper plot`: draw the plot of a sweep (finished or running), of `score` or `front`
//! output, or of the numeric columns of a table; SVG, or PNG when the file name ends in
//! `.png`.

mod compare;

use super::{CliError, CliResult};
use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};
use sweeper_goal::{Direction, Objective, SweepConfig};
use sweeper_plot::{
    Chart, Outcome, Param, PlotObjective, PlotPoint, best_by_trial_svg, frontier_svg, png_from_svg,
    sla_bounds, sla_checks,
};
use sweeper_score::{Candidate, Scorer};
use sweeper_tables::input::{NumericTable, read_bytes, read_columns};
use sweeper_tables::{ResultFile, chart_of, subtitle};

const AFTER_HELP: &str = "\
INPUT is one of:
  a sweep's output directory, its result.json, or its journal.jsonl (a sweep still running)
  the output of `sweeper score --format json` (a front or a ranking)
  the output of `sweeper front --format json`
  a table (CSV, JSON Lines, JSON array, .npy) with the objectives named by -o
  a serving benchmark's result file with -o, read as `sweeper score` reads it (the format
    said on stderr): `vllm bench serve --save-result` JSON, SGLang `bench_serving
    --output-file` JSON Lines, genai-perf's profile_export_genai_perf.json

A front is drawn with its first objective on y and its last on x, every candidate, the
front highlighted, the best corner marked; three or more objectives as a scatter matrix.
A ranking or a scalar sweep is drawn as each trial's value and the best so far. A
`min_gpus` sweep (or its ranking with --config) is drawn as GPUs against goodput: the floor
`min_goodput_rps` a line, the candidates that reach it apart from those that do not, the
fewest-GPU one that reaches it ringed. `cost_per_mtok` is in dollars per million output
tokens at the goal's price; a table gets it with -o cost_per_mtok and a --config whose goal
has `price_per_gpu_hour`. Over-budget, infeasible and
failed trials get marks of their own and are counted in the legend; those without a report
are drawn in a strip under the chart. Every mark has a tooltip (trial, parameters,
objective values, GPUs) shown on hover in a browser. The goal's SLA is drawn where an
objective maps to it (an ITL bound of 50 ms is the line at 20 tok/s/user), the side that
misses it shaded; a bound no axis shows (TTFT on tok/s/gpu against tok/s/user) rings the
points over it, says so in their tooltips and counts them in the legend (`over TTFT 2000
ms: 12`), with or without strict_sla (under it, a strict percentile's key is read). A sweep
that searches its load (a `concurrency` or `request_rate` parameter) writes each front
point's level beside it unless --label says otherwise.

Axes are logarithmic for a latency and for data spanning more than 100x; --scale
overrides that for every axis (log, linear) or for one (e2e_latency=linear).

Two or more INPUTs are drawn on one chart to compare them (GPUs, models, deployment
modes): a front per input, each in its own colour with its own legend entry, named by
--name (one per input, in their order) or else by the sweep's directory name (a file's
stem for other inputs); every tooltip starts with that name. The inputs must have the same
objectives in the same order (pick a table's or score/front output's with -o). A bound of
an input's SLA that no axis shows rings that input's points over it, as for one input;
each input that searches its load labels its front points with their level unless --label
says otherwise. `min_gpus` sweeps are compared as GPUs against goodput: each sweep's floor
a line, its answer ringed and named (they cannot be mixed with other goals). The chart
goes to front-compare.svg in the current directory unless --out names a file; --color-by
is refused there, as the colour is the input's.

Examples:
  sweeper plot sweeper-out/quickstart                       # writes front.svg there
  sweeper plot sweeper-out/quickstart --out front.png       # PNG, the same everywhere
  sweeper plot sweeper-out/quickstart --label tp,max_batch_size --color-by tp
  sweeper plot sweeper-out/quickstart/journal.jsonl         # a sweep still running
  sweeper plot sweeper-out/quickstart sweeper-out/quickstart-sla \\
      --name \"no SLA\" --name \"strict SLA\" --label tp    # two fronts on one chart
  sweeper score --config examples/serving/pareto.yaml \\
      examples/serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv --format json > front.json
  sweeper plot front.json --config examples/serving/pareto.yaml --color-by tp
  sweeper plot examples/serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv \\
      -o output_throughput_tok_s:max -o mean_e2e_latency_ms:min --out latency.svg
  sweeper plot examples/serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv \\
      --config examples/serving/cost.yaml -o cost_per_mtok -o throughput_per_user --out cost.svg
  sweeper plot examples/bench-results/vllm/openai-c32-tp2.json \\
      -o output_throughput_tok_s:max -o mean_ttft_ms:min --out vllm.svg
  sweeper plot examples/bench-results/sglang-runs.jsonl \\
      -o output_throughput_tok_s:max -o mean_e2e_latency_ms:min --out sglang.svg
  sweeper plot examples/bench-results/genai-perf/c64/profile_export_genai_perf.json \\
      -o output_throughput_tok_s:max -o mean_output_token_throughput_per_user:max \\
      --out genai-perf.svg

Exit status: 0 ok; 1 an input that is not one of the above (the message says what to
give); 2 usage or I/O error.";

/// Arguments of `sweeper plot`.
#[derive(Debug, Clone, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub(crate) struct Args {
    /// A sweep's output directory, result.json or journal.jsonl; `score --format json` or
    /// `front --format json` output; or a table with -o. Two or more: one chart with a
    /// front per input, to compare them.
    #[arg(value_name = "INPUT", required = true, num_args = 1..)]
    inputs: Vec<PathBuf>,
    /// The input being read (one of `inputs`).
    #[arg(skip)]
    input: PathBuf,
    /// Where to write the plot: `.svg`, or `.png` for an image [default: front.svg or
    /// best.svg beside a sweep's files, INPUT-STEM.svg beside other inputs, and
    /// front-compare.svg in the current directory for two or more inputs].
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// The name of each input in a comparison's legend and tooltips, in the order of the
    /// inputs (one per input) [default: each sweep's directory name, or the file's stem].
    #[arg(long = "name", value_name = "NAME")]
    names: Vec<String>,
    /// An objective of a table, `NAME:max` or `NAME:min` (`NAME` alone for a goal target
    /// such as `e2e_latency`); repeat once per axis, the last is x. Also picks and orders
    /// the axes of `score` and `front` output.
    #[arg(short = 'o', long = "objective", value_name = "NAME[:max|min]")]
    objectives: Vec<String>,
    /// A sweep config whose goal (SLA, objectives, target) and workload describe the
    /// input: for `score` / `front` output and tables.
    #[arg(long, value_name = "CONFIG")]
    config: Option<PathBuf>,
    /// The plot's title [default: the sweep's, or the input's file name].
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,
    #[command(flatten)]
    style: super::style::StyleArgs,
    #[command(flatten)]
    read: super::read_args::ReadArgs,
}

/// What the input turned out to be, and how to draw it.
struct Plot {
    chart: Chart,
    /// A front (frontier plot) or a ranking (best by trial).
    front: bool,
    /// The default output file name.
    name: String,
    /// The load a sweep's candidates searched as a parameter (its default label).
    searched_load: Option<&'static str>,
    /// The default output directory.
    dir: PathBuf,
}

pub(crate) fn run(args: &Args) -> CliResult {
    let out_kind = match &args.out {
        Some(out) => Some(output_kind(out)?),
        None => None,
    };
    let config = match &args.config {
        Some(path) => Some(super::load_config(path)?),
        None => None,
    };
    if args.inputs.len() > 1 || !args.names.is_empty() {
        return compare::run(args, config.as_ref(), out_kind == Some(OutKind::Png));
    }
    let mut args = args.clone();
    args.input.clone_from(&args.inputs[0]);
    let args = &args;
    let mut plot = read_input(args, config.as_ref())?;
    if let Some(title) = &args.title {
        plot.chart.title.clone_from(title);
    }
    args.style.check(&plot.chart);
    let searched = plot.searched_load.or_else(|| {
        config
            .as_ref()?
            .searched_load()
            .map(sweeper_goal::SearchedLoad::key)
    });
    let options = args.style.options_or(searched);
    let svg = if plot.front {
        frontier_svg(&plot.chart, &options)
    } else {
        best_by_trial_svg(&plot.chart, &options)
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| plot.dir.join(&plot.name));
    let bytes = if out_kind == Some(OutKind::Png) {
        png_from_svg(&svg).map_err(|e| CliError::io(format!("{}: {e}", out.display())))?
    } else {
        svg.into_bytes()
    };
    std::fs::write(&out, bytes).map_err(|e| CliError::io(format!("{}: {e}", out.display())))?;
    super::print_stderr(&format!("sweeper: wrote {}\n", out.display()));
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OutKind {
    Svg,
    Png,
}

/// The format an output path asks for, by its extension.
fn output_kind(out: &Path) -> Result<OutKind, CliError> {
    match out
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .as_deref()
    {
        Some("svg") => Ok(OutKind::Svg),
        Some("png") => Ok(OutKind::Png),
        _ => Err(CliError::io(format!(
            "--out {}: give a file name ending in .svg (vector, with tooltips) or .png (an image)",
            out.display()
        ))),
    }
}

fn read_input(args: &Args, config: Option<&SweepConfig>) -> Result<Plot, CliError> {
    let input = &args.input;
    let parent = input.parent().map(PathBuf::from).unwrap_or_default();
    if input.is_dir() {
        return sweep_plot(&input.join("result.json"), input.clone());
    }
    if !args.objectives.is_empty() && !is_json_output(input) {
        return table_plot(args, config, parent);
    }
    if input.extension().is_some_and(|e| e == "jsonl") {
        return journal_plot(input, parent);
    }
    let bytes = read_bytes(input).map_err(|e| super::output::input_error(&e))?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        CliError::invalid(format!(
            "{}: not JSON ({e}); for a table, name its objectives with -o NAME:max|min",
            input.display()
        ))
    })?;
    if value.get("trials").is_some() && value.get("kind").is_some() {
        return sweep_plot(input, parent);
    }
    let Some(items) = value.as_array() else {
        return Err(not_plottable(input));
    };
    if items.iter().all(|v| v.get("values").is_some()) && !items.is_empty() {
        return front_output_plot(args, config, &bytes, parent);
    }
    if items.iter().all(|v| v.get("score").is_some()) {
        return score_output_plot(args, config, items, parent);
    }
    if !args.objectives.is_empty() {
        return table_plot(args, config, parent);
    }
    Err(not_plottable(input))
}

fn not_plottable(input: &Path) -> CliError {
    CliError::invalid(format!(
        "{}: not a sweep's result.json, nor `sweeper score --format json` or `sweeper front --format json` output; for a table, name its objectives with -o NAME:max|min",
        input.display()
    ))
}

/// Whether a file is JSON that `score` or `front` wrote (an array of objects with `score`
/// or `values`): then -o orders its axes instead of naming table columns.
fn is_json_output(path: &Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else {
        return false;
    };
    let Ok(Value::Array(items)) = serde_json::from_slice::<Value>(&bytes) else {
        return false;
    };
    !items.is_empty()
        && (items.iter().all(|v| v.get("values").is_some())
            || items.iter().all(|v| v.get("score").is_some()))
}

fn sweep_plot(file: &Path, dir: PathBuf) -> Result<Plot, CliError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| CliError::io(format!("{}: {e}", file.display())))?;
    let result: ResultFile = serde_json::from_str(&text).map_err(|e| {
        CliError::invalid(format!(
            "{}: not a sweeper result.json: {e}",
            file.display()
        ))
    })?;
    Ok(result_plot(&result, dir))
}

fn result_plot(result: &ResultFile, dir: PathBuf) -> Plot {
    let front = result.kind == sweeper_tables::ResultKind::Front;
    Plot {
        chart: chart_of(result),
        front,
        name: if front { "front.svg" } else { "best.svg" }.to_owned(),
        dir,
        searched_load: sweeper_goal::parse(&result.config.to_string())
            .ok()
            .and_then(|c| c.searched_load())
            .map(sweeper_goal::SearchedLoad::key),
    }
}

fn journal_plot(file: &Path, dir: PathBuf) -> Result<Plot, CliError> {
    let config = super::load_config(&dir.join("config.yaml"))?;
    let result = sweeper_engine::run::result_from_journal(&config, file)
        .map_err(|e| super::run_error(&e))?;
    let title = format!("{} (from the journal)", file.display());
    Ok(result_plot(&ResultFile::new(&config, &result, &title), dir))
}

/// A file's stem and a suffix, as the default output name: `front.json` → `front.svg`;
/// standard input (`-`) → `plot.svg`.
fn default_name(input: &Path) -> String {
    let stem = input
        .file_stem()
        .filter(|s| *s != "-")
        .map_or_else(|| "plot".into(), |s| s.to_string_lossy().into_owned());
    format!("{stem}.svg")
}

fn default_title(input: &Path) -> String {
    input.file_name().map_or_else(
        || input.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// The axes -o asks for: names with a direction (`:max`, `:min`) or a goal target's.
fn parse_axes(args: &[String]) -> Result<Vec<PlotObjective>, CliError> {
    args.iter()
        .map(|text| {
            let (name, dir) = match text.rsplit_once(':') {
                Some((n, d)) => (n.trim(), Some(d.trim().to_ascii_lowercase())),
                None => (text.trim(), None),
            };
            let known = Objective::from_name(name);
            let direction = match dir.as_deref() {
                Some("max" | "maximize") => Direction::Maximize,
                Some("min" | "minimize") => Direction::Minimize,
                Some(other) => {
                    return Err(CliError::io(format!(
                        "-o {text}: `{other}` is not a direction; use NAME:max or NAME:min"
                    )));
                }
                None => match known {
                    Some(o) => o.direction(),
                    None => {
                        return Err(CliError::io(format!(
                            "-o {text}: say which way is better: -o {name}:max or -o {name}:min"
                        )));
                    }
                },
            };
            let unit = known.map_or("", Objective::unit);
            Ok(PlotObjective::new(name, unit, direction))
        })
        .collect()
}

/// Fills the subtitle and the SLA lines from a config, when there is one.
fn describe(chart: &mut Chart, config: Option<&SweepConfig>) {
    if let Some(config) = config {
        chart.subtitle = subtitle(config, &chart.title, 0);
        if let Some(sla) = config.goal.sla() {
            chart.bounds = sla_bounds(sla, &chart.objectives);
            chart.checks = sla_checks(sla, config.goal.strict_sla(), &chart.objectives);
        }
        // a min_gpus ranking: GPUs against goodput, the floor drawn
        if let [o] = &chart.objectives[..]
            && o.name == Objective::MinGpus.name()
        {
            chart.floor = config.goal.min_goodput_rps();
        }
    }
}

/// A point's parameters from a configuration map (GPUs apart).
fn params_of(config: &serde_json::Map<String, Value>) -> Vec<(String, Param)> {
    config
        .iter()
        .filter(|(k, _)| k.as_str() != "used_gpus")
        .filter_map(|(k, v)| Some((k.clone(), Param::from_json(v)?)))
        .collect()
}

/// `sweeper score --format json`: a front (candidates with objectives) or a ranking.
fn score_output_plot(
    args: &Args,
    config: Option<&SweepConfig>,
    items: &[Value],
    dir: PathBuf,
) -> Result<Plot, CliError> {
    let candidates: Vec<Candidate> = items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            Candidate::deserialize(v).map_err(|e| {
                CliError::invalid(format!(
                    "{}: entry {i} is not a candidate of `sweeper score --format json`: {e}",
                    args.input.display()
                ))
            })
        })
        .collect::<Result<_, _>>()?;
    let pareto = candidates.iter().any(|c| c.objectives.is_some());
    let objectives: Vec<PlotObjective> = if !args.objectives.is_empty() {
        parse_axes(&args.objectives)?
    } else if let Some(cfg) = config.filter(|c| c.goal.is_pareto() == pareto) {
        cfg.goal
            .objectives()
            .iter()
            .map(|o| PlotObjective::of(*o))
            .collect()
    } else if pareto {
        candidates
            .iter()
            .find_map(|c| c.objectives.as_ref())
            .map(|o| o.iter().map(|(o, _)| PlotObjective::of(*o)).collect())
            .unwrap_or_default()
    } else {
        vec![PlotObjective::new(
            "score",
            "higher is better",
            Direction::Maximize,
        )]
    };
    let mut chart = Chart::new(default_title(&args.input), objectives.clone());
    "row".clone_into(&mut chart.id_label);
    for c in &candidates {
        let values = if pareto {
            objectives
                .iter()
                .map(|o| {
                    c.objectives
                        .as_ref()?
                        .iter()
                        .find(|(k, _)| k.name() == o.name)
                        .map(|(_, v)| *v)
                })
                .collect::<Option<Vec<f64>>>()
        } else {
            // the score is signed so that higher is better: back to the raw value
            let sign = if objectives.first().is_some_and(|o| o.minimize) {
                -1.0
            } else {
                1.0
            };
            Some(vec![c.score * sign])
        };
        if pareto && values.is_none() {
            let names: Vec<&str> = objectives.iter().map(|o| o.name.as_str()).collect();
            return Err(CliError::invalid(format!(
                "{}: row {} has no objective among {}; the front's objectives are {}",
                args.input.display(),
                c.index,
                names.join(", "),
                c.objectives
                    .as_ref()
                    .map(|o| o
                        .iter()
                        .map(|(o, _)| o.name())
                        .collect::<Vec<_>>()
                        .join(", "))
                    .unwrap_or_default()
            )));
        }
        let mut p = PlotPoint::new(c.index as u64, Outcome::Feasible, values);
        p.on_front = pareto;
        p.params = params_of(&c.config);
        p.gpus = Some(c.used_gpus);
        chart.points.push(p);
    }
    describe(&mut chart, config);
    check_points(&mut chart, |i, key| {
        candidates.get(i)?.metrics.get(key).copied()
    });
    if pareto {
        chart.subtitle = join(
            &chart.subtitle,
            "the front only: `sweeper score` prints no dominated row",
        );
    } else {
        chart.subtitle = join(&chart.subtitle, "the printed ranking, by input row");
    }
    Ok(Plot {
        chart,
        front: pareto,
        name: default_name(&args.input),
        dir,
        searched_load: None,
    })
}

/// Checks every point against the SLA bounds no axis shows, with the values
/// `value_of(i, key)` of the row it was made from (the `i`-th).
fn check_points(chart: &mut Chart, value_of: impl Fn(usize, &str) -> Option<f64>) {
    let checks = std::mem::take(&mut chart.checks);
    for (i, p) in chart.points.iter_mut().enumerate() {
        p.check_sla(&checks, |key| value_of(i, key));
    }
    chart.checks = checks;
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_owned()
    } else {
        format!("{a} · {b}")
    }
}

/// `values` of `sweeper front --format json`, keys in the order written (the -o order, the
/// last the x-axis).
struct OrderedValues(Vec<(String, f64)>);

impl<'de> Deserialize<'de> for OrderedValues {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderedValues;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of numbers")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OrderedValues, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    let x = v
                        .as_f64()
                        .or_else(|| {
                            v.as_str()
                                .and_then(sweeper_score::json_f64::parse_non_finite)
                        })
                        .ok_or_else(|| {
                            serde::de::Error::custom(format!("`{k}` is not a number"))
                        })?;
                    out.push((k, x));
                }
                Ok(OrderedValues(out))
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Deserialize)]
struct FrontRow {
    index: u64,
    values: OrderedValues,
}

/// `sweeper front --format json`: front rows only, with their values.
fn front_output_plot(
    args: &Args,
    config: Option<&SweepConfig>,
    bytes: &[u8],
    dir: PathBuf,
) -> Result<Plot, CliError> {
    let rows: Vec<FrontRow> = serde_json::from_slice(bytes).map_err(|e| {
        CliError::invalid(format!(
            "{}: not `sweeper front --format json` output: {e}",
            args.input.display()
        ))
    })?;
    let objectives = if args.objectives.is_empty() {
        let first = rows.first().map(|r| &r.values.0[..]).unwrap_or_default();
        let guessed: Vec<PlotObjective> = first
            .iter()
            .map(|(name, _)| {
                Objective::from_name(name).map_or_else(
                    || {
                        // an unknown column: lower is better when it names a latency
                        let probe = PlotObjective::new(name.clone(), "", Direction::Minimize);
                        let direction = if probe.is_latency() {
                            Direction::Minimize
                        } else {
                            Direction::Maximize
                        };
                        PlotObjective::new(name.clone(), "", direction)
                    },
                    PlotObjective::of,
                )
            })
            .collect();
        let said: Vec<String> = guessed
            .iter()
            .map(|o| format!("{}:{}", o.name, if o.minimize { "min" } else { "max" }))
            .collect();
        super::print_stderr(&format!(
            "sweeper: front output does not say which way is better; taking -o {} (give -o NAME:max|min to change it)\n",
            said.join(" -o ")
        ));
        guessed
    } else {
        parse_axes(&args.objectives)?
    };
    let mut chart = Chart::new(default_title(&args.input), objectives.clone());
    "row".clone_into(&mut chart.id_label);
    for r in &rows {
        let values = objectives
            .iter()
            .map(|o| {
                r.values
                    .0
                    .iter()
                    .find(|(k, _)| *k == o.name)
                    .map(|(_, v)| *v)
            })
            .collect::<Option<Vec<f64>>>();
        let Some(values) = values else {
            let have: Vec<&str> = r.values.0.iter().map(|(k, _)| k.as_str()).collect();
            return Err(CliError::invalid(format!(
                "{}: row {} has no value for one of the -o columns; it has {}",
                args.input.display(),
                r.index,
                have.join(", ")
            )));
        };
        let mut p = PlotPoint::new(r.index, Outcome::Feasible, Some(values));
        p.on_front = true;
        chart.points.push(p);
    }
    describe(&mut chart, config);
    chart.subtitle = join(
        &chart.subtitle,
        "the front only: `sweeper front` prints no dominated row",
    );
    Ok(Plot {
        chart,
        front: true,
        name: default_name(&args.input),
        dir,
        searched_load: None,
    })
}

/// The rows of a reports table (CSV, JSON), keys renamed as `--map` says; `None` when the
/// input is not one (a `.npy` matrix).
fn read_rows(
    input: &std::path::Path,
    options: sweeper_tables::input::ReadOptions,
) -> Option<Vec<sweeper_tables::input::ReportRow>> {
    let mut table = sweeper_tables::input::ReportTable::open(&[input.to_owned()])
        .ok()?
        .with_options(options);
    let mut rows = Vec::new();
    table.scan(|row, _| rows.push(row)).ok()?;
    Some(rows)
}

/// A table with -o columns: every row, the front computed here.
fn table_plot(args: &Args, config: Option<&SweepConfig>, dir: PathBuf) -> Result<Plot, CliError> {
    let objectives = parse_axes(&args.objectives)?;
    let columns: Vec<String> = objectives.iter().map(|o| o.name.clone()).collect();
    args.read.check_columns(&columns)?;
    let options = args
        .read
        .options(config.and_then(|c| c.search_space.used_gpus.as_ref()));
    let table = if columns.iter().any(|c| c == Objective::CostPerMtok.name()) {
        priced_columns(args, config, &columns, &options)?
    } else {
        let read = read_columns(std::slice::from_ref(&args.input), &columns, &options)
            .map_err(|e| super::output::input_error(&e))?;
        super::read_args::note_formats(read.formats.iter().map(|(p, f)| (p.as_path(), *f)));
        for n in read.notes {
            super::output::note(&format!("warning: {n}"));
        }
        read.table
    };
    let d = columns.len();
    let directions: Vec<Direction> = objectives
        .iter()
        .map(|o| {
            if o.minimize {
                Direction::Minimize
            } else {
                Direction::Maximize
            }
        })
        .collect();
    let front = sweeper_score::front::nondominated(&table.data, d, &directions)
        .map_err(|e| CliError::invalid(e.to_string()))?;
    // the other columns, for tooltips, labels and colours (CSV and JSON; not .npy)
    let rows = read_rows(&args.input, options);
    let mut chart = Chart::new(default_title(&args.input), objectives);
    "row".clone_into(&mut chart.id_label);
    let mut on_front = vec![false; table.rows];
    for &i in &front {
        on_front[i] = true;
    }
    for (i, &front_row) in on_front.iter().enumerate() {
        let values = table.data[i * d..(i + 1) * d].to_vec();
        let mut p = PlotPoint::new(i as u64, Outcome::Feasible, Some(values));
        p.on_front = front_row;
        if let Some(row) = rows.as_ref().and_then(|r| r.get(i)) {
            let mut params = params_of(&row.config);
            for (k, v) in row.report.iter() {
                if !columns.iter().any(|c| c == k) {
                    params.push((k.to_owned(), Param::Number(v)));
                }
            }
            p.params = params;
            p.gpus = row.config.get("used_gpus").and_then(Value::as_f64);
        }
        chart.points.push(p);
    }
    describe(&mut chart, config);
    check_points(&mut chart, |i, key| rows.as_ref()?.get(i)?.report.get(key));
    let dims = chart.objectives.len();
    Ok(Plot {
        chart,
        front: dims >= 2,
        name: default_name(&args.input),
        dir,
        searched_load: None,
    })
}

/// The -o columns of a table when one is `cost_per_mtok`, which no table holds: each row's
/// goal targets scored as `sweeper score` scores them (the cost at the price of `--config`'s
/// goal, for the row's GPU), the other columns read from the row.
fn priced_columns(
    args: &Args,
    config: Option<&SweepConfig>,
    columns: &[String],
    options: &sweeper_tables::input::ReadOptions,
) -> Result<NumericTable, CliError> {
    let Some(cfg) = config.filter(|c| c.goal.price_per_gpu_hour().is_some()) else {
        return Err(CliError::invalid(format!(
            "-o {}: a table has no cost column; give --config CONFIG whose goal has \
             `price_per_gpu_hour: 2.5` (dollars per GPU-hour, or a map by GPU) to price its rows",
            Objective::CostPerMtok.name()
        )));
    };
    let input_error = |e: sweeper_tables::input::InputError| super::output::input_error(&e);
    let mut table = sweeper_tables::input::ReportTable::open(std::slice::from_ref(&args.input))
        .map_err(input_error)?
        .with_options(options.clone());
    let mut rows = Vec::new();
    table.scan(|row, _| rows.push(row)).map_err(input_error)?;
    let gpu = sweeper_engine::run::builtin_gpu(cfg);
    let scorer = Scorer::new(&cfg.goal).with_default_gpu(gpu.as_deref());
    let rule = cfg.search_space.used_gpus.as_ref();
    let mut data = Vec::with_capacity(rows.len() * columns.len());
    for row in rows {
        let mut params = row.config;
        sweeper_engine::run::fill_used_gpus(&mut params, rule);
        let index = row.place.row;
        for name in columns {
            let value = match Objective::from_name(name) {
                Some(o) => scorer
                    .value(index, &params, &row.report, o)
                    .map_err(|e| CliError::invalid(format!("{}: {e}", args.input.display())))?,
                None => row
                    .report
                    .get(name)
                    .or_else(|| params.get(name).and_then(Value::as_f64))
                    .ok_or_else(|| {
                        CliError::invalid(format!(
                            "{}: row {index} has no number `{name}`; name a column of the table or a goal target with -o",
                            args.input.display()
                        ))
                    })?,
            };
            data.push(value);
        }
    }
    let rows = data.len() / columns.len().max(1);
    Ok(NumericTable {
        columns: columns.to_vec(),
        data,
        rows,
    })
}
