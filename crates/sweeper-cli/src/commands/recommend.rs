//! `sweeper recommend`: the fewest-GPU configuration that serves a request rate under the
//! SLA, from a sweep (its directory or journal) or from reports; the logic is
//! [`sweeper_score::recommend`].

use super::output::{input_error, note};
use super::{CliError, CliResult, Format};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use sweeper_engine::run::{builtin_gpu, fill_used_gpus, rescore_journal};
use sweeper_engine::text::escape_for_terminal;
use sweeper_goal::{ConfigError, SweepConfig};
use sweeper_score::{
    Candidate, Pick, RecommendOptions, Recommendation, Scorer, is_feasible, recommend,
};

const AFTER_HELP: &str = "\
A candidate serves RATE when its goodput_request_throughput_rps (requests a second that met
the config's SLA) reaches it. The answer is the one with the fewest GPUs (ties: the larger
margin), then the runner-ups with their margins (goodput / RATE - 1). With a strict SLA
(goal.strict_sla) candidates over a bound are left out first; so are those over the GPU
budget.

--scale-replicas lets k copies of a candidate serve k times its goodput with k times its
GPUs. Use it only when the evaluator is linear in replicas (independent copies behind a
router that splits the load evenly): the answer then says how many copies it assumed.

When no candidate serves RATE, the answer names the highest goodput reached and the SLA
bound that the candidates' mean latencies exceeded most (`capacity`: within every bound,
yet short of the rate), and the exit status is 1.

Examples:
  sweeper run examples/min-gpus.yaml --out runs/min-gpus
  sweeper recommend --config examples/min-gpus.yaml runs/min-gpus --rate 4
  sweeper recommend --config examples/min-gpus.yaml runs/min-gpus --rate 12 --scale-replicas

Exit status: 0 a configuration serves RATE; 1 none does, or invalid config or input; 2 usage
or I/O error.";

/// Arguments of `sweeper recommend`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub(crate) struct Args {
    /// The sweep config (YAML or JSON): its goal's SLA and `strict_sla`, and
    /// `search_space.gpu_budget` apply.
    #[arg(short, long, value_name = "CONFIG")]
    config: PathBuf,
    /// A sweep's output directory or its journal.jsonl, or a reports file (JSON Lines, a
    /// JSON array or CSV, as `sweeper score` reads).
    input: PathBuf,
    /// The load to serve, requests per second.
    #[arg(long, value_name = "RPS")]
    rate: f64,
    /// Let k copies of a candidate serve k times its goodput (the evaluator must be linear
    /// in replicas).
    #[arg(long)]
    scale_replicas: bool,
    /// Runner-ups listed after the best.
    #[arg(long, value_name = "N", default_value_t = 3)]
    runner_ups: usize,
    /// Output format on stdout (table or json).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    #[command(flatten)]
    read: super::read_args::ReadArgs,
}

pub(crate) fn run(args: &Args) -> CliResult {
    if !(args.rate.is_finite() && args.rate > 0.0) {
        return Err(CliError::io(format!(
            "--rate must be a number of requests per second > 0, got {}",
            args.rate
        )));
    }
    let text = super::read_config_text(&args.config)?;
    let cfg = sweeper_goal::parse(&text).map_err(|e| match e {
        ConfigError::Io { .. } => CliError::io(e.to_string()),
        _ => CliError::invalid(format!(
            "{}: invalid config: {e}",
            super::input_name(&args.config)
        )),
    })?;
    if let Some(sweeper_goal::Workload::Synthetic {
        load: sweeper_goal::Load::RequestRate(measured),
        ..
    }) = &cfg.workload
        && (measured - args.rate).abs() > 1e-9 * measured
    {
        note(&format!(
            "note: every candidate ran at request_rate {measured}; for {} its goodput there is what is known (a smaller configuration might serve a lower rate; a higher one takes --scale-replicas or a sweep at that rate)",
            args.rate
        ));
    }
    let candidates = candidates(&cfg, &args.input, &args.read)?;
    let options = RecommendOptions {
        rate_rps: args.rate,
        scale_replicas: args.scale_replicas,
        runner_ups: args.runner_ups,
    };
    let answer = recommend(&candidates, cfg.goal.sla(), options);
    let out = match args.format {
        Format::Json => {
            let json = serde_json::to_string_pretty(&answer)
                .map_err(|e| CliError::io(format!("cannot write JSON: {e}")))?;
            format!("{}\n", sweeper_engine::text::escape_json_controls(&json))
        }
        _ => describe(&answer, &cfg, args.rate),
    };
    super::print_stdout(&out)?;
    match answer {
        Recommendation::Found { .. } => Ok(()),
        Recommendation::NoneServes { .. } => Err(CliError::invalid(format!(
            "no candidate serves {} requests/s under the SLA",
            args.rate
        ))),
    }
}

/// The candidates to choose from: a sweep's feasible ones (re-scored under `cfg`), or a
/// reports file's rows within the budget and the strict SLA.
fn candidates(
    cfg: &SweepConfig,
    input: &Path,
    read: &super::read_args::ReadArgs,
) -> Result<Vec<Candidate>, CliError> {
    let journal = if input.is_dir() {
        Some(input.join("journal.jsonl"))
    } else if input.file_name().is_some_and(|n| n == "journal.jsonl") {
        Some(input.to_owned())
    } else {
        None
    };
    if let Some(path) = journal {
        let result = rescore_journal(cfg, &path).map_err(|e| super::run_error(&e))?;
        note(&format!(
            "{}: {} trials, {} feasible under the config's goal",
            path.display(),
            result.trials.len(),
            result.evaluated.len()
        ));
        return Ok(result.evaluated);
    }
    let mut table = sweeper_tables::input::ReportTable::open(&[input.to_owned()])
        .map_err(|e| input_error(&e))?
        .with_options(read.options(cfg.search_space.used_gpus.as_ref()));
    let mut rows = Vec::new();
    let notes = table
        .scan(|row, _| rows.push(row))
        .map_err(|e| input_error(&e))?;
    super::read_args::note_formats(table.formats());
    let benchmark = table
        .formats()
        .any(|(_, f)| f != sweeper_tables::input::InputFormat::Reports);
    if read.given() || benchmark {
        for n in notes {
            note(&format!("warning: {n}"));
        }
    }
    let gpu = builtin_gpu(cfg);
    let scorer = Scorer::new(&cfg.goal).with_default_gpu(gpu.as_deref());
    let budget = cfg.search_space.gpu_budget as f64;
    let rule = cfg.search_space.used_gpus.as_ref();
    let (mut over_budget, mut over_sla) = (0, 0);
    let mut out = Vec::new();
    for row in rows {
        let mut config = row.config;
        fill_used_gpus(&mut config, rule);
        let index = row.place.row;
        let c = scorer
            .candidate(index, config, &row.report)
            .map_err(|e| CliError::invalid(e.to_string()))?;
        if !is_feasible(c.used_gpus, budget) {
            over_budget += 1;
        } else if scorer.over_sla(&row.report).is_some() {
            over_sla += 1;
        } else {
            out.push(c);
        }
    }
    note(&format!(
        "{}: {} rows usable, {over_budget} over the GPU budget, {over_sla} over a strict SLA",
        input.display(),
        out.len()
    ));
    Ok(out)
}

/// A candidate's configuration, `key=value` (escaped: it is text from outside).
fn config_text(c: &Candidate) -> String {
    let parts: Vec<String> = c
        .config
        .iter()
        .filter(|(k, _)| *k != "used_gpus")
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s}"),
            // a derived load (concurrency 45.6842090316671) reads as the tables show it
            serde_json::Value::Number(n) => match n.as_f64() {
                Some(x) if !n.is_i64() && !n.is_u64() => format!("{k}={}", super::table::number(x)),
                _ => format!("{k}={n}"),
            },
            other => format!("{k}={other}"),
        })
        .collect();
    escape_for_terminal(&parts.join(" "))
}

fn pick_line(p: &Pick) -> String {
    let copies = if p.copies > 1 {
        format!(" = {} copies x {} GPUs", p.copies, p.candidate.used_gpus)
    } else {
        String::new()
    };
    format!(
        "trial {}: {} GPUs{copies}, goodput {:.3} req/s{}, margin {:+.1}%  [{}]",
        p.candidate.index,
        p.gpus,
        p.goodput_rps,
        if p.copies > 1 { " per copy" } else { "" },
        p.margin * 100.0,
        config_text(&p.candidate)
    )
}

fn describe(answer: &Recommendation, cfg: &SweepConfig, rate: f64) -> String {
    let sla = cfg
        .goal
        .sla()
        .map_or_else(|| "no SLA".to_owned(), |s| s.to_json_value().to_string());
    let mut s = String::new();
    let scaling = |scaled: bool| {
        if scaled {
            "replica scaling: on (k copies of a candidate serve k x its goodput with k x its GPUs; this assumes the evaluator is linear in replicas)"
        } else {
            "replica scaling: off (each candidate as measured; --scale-replicas copies one when the evaluator is linear in replicas)"
        }
    };
    match answer {
        Recommendation::Found {
            best,
            runner_ups,
            scaled,
            considered,
        } => {
            let _ = writeln!(
                s,
                "{rate} req/s under the SLA {sla}: {} GPUs ({considered} candidates considered)",
                best.gpus
            );
            let _ = writeln!(s, "best       {}", pick_line(best));
            for p in runner_ups {
                let _ = writeln!(s, "runner-up  {}", pick_line(p));
            }
            let _ = writeln!(s, "{}", scaling(*scaled));
        }
        Recommendation::NoneServes {
            best_goodput,
            failed_bounds,
            scaled,
            considered,
        } => {
            let _ = writeln!(
                s,
                "no candidate serves {rate} req/s under the SLA {sla} ({considered} candidates considered)"
            );
            match best_goodput {
                Some(p) => {
                    let _ = writeln!(s, "best goodput {}", pick_line(p));
                }
                None => {
                    let _ = writeln!(s, "no candidate to choose from");
                }
            }
            let bounds: Vec<String> = failed_bounds
                .iter()
                .map(|(b, n)| format!("{b} ({n})"))
                .collect();
            if !bounds.is_empty() {
                let _ = writeln!(
                    s,
                    "bound missed most (candidates whose mean latency exceeded it): {}",
                    bounds.join(", ")
                );
            }
            let _ = writeln!(s, "{}", scaling(*scaled));
        }
    }
    s
}
