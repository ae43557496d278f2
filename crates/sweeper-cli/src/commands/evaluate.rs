//! `sweeper evaluate`: one candidate through the configured evaluator, exactly as a run
//! would send it; the tool to reach for when an evaluator misbehaves.

use super::{CliError, CliResult, print_stdout};
use serde_json::{Value, json};
use std::path::PathBuf;
use sweeper_engine::EvalOutcome;
use sweeper_engine::provider::ServingPlanner;
use sweeper_engine::run::{Status, evaluate_candidate};
use sweeper_eval::evaluator_for;

/// Arguments of `sweeper evaluate`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:
  sweeper evaluate examples/quickstart.yaml \\
      --candidate '{\"tp\": 2, \"replicas\": 4, \"max_batch_size\": 64, \"kv_load_ratio\": 0.5}'

Prints one JSON object: `request` (what was sent to the evaluator), `status`
(its verdict: feasible, infeasible, failed, unsupported), `reason`, `report` (the
raw report) and `candidate` (the scored candidate). With a topology, give the
candidate's flat keys (`deployment_mode`, `tp`, ... or `prefill_tp`, `decode_tp`,
...) and the searched knobs of its own mode only (`agg_*` or `prefill_*`/`decode_*`). Constants of the search space are filled in. Exit 0 when the
evaluator returned a report, 1 otherwise. With evaluator.slurm the candidate runs
as one batch job, whose files stay in ./sweeper-evaluate-<pid>/jobs/0/.")]
pub(crate) struct Args {
    /// The sweep config (YAML or JSON); `-` reads standard input.
    config: PathBuf,
    /// The candidate's parameter values as a JSON object (plus `kv_load_ratio` when the
    /// workload searches a ratio range).
    #[arg(long, value_name = "JSON")]
    candidate: String,
}

pub(crate) fn run(args: &Args) -> CliResult {
    let config = super::load_config(&args.config)?;
    let candidate: serde_json::Map<String, Value> = match serde_json::from_str(&args.candidate) {
        Ok(Value::Object(map)) => map,
        Ok(other) => {
            return Err(CliError::invalid(format!(
                "--candidate must be a JSON object of parameter values, not {other}"
            )));
        }
        Err(e) => {
            return Err(CliError::invalid(format!(
                "--candidate is not valid JSON: {e}"
            )));
        }
    };
    let name = super::config_stem(&args.config);
    let setup = evaluator_for(&config, &name).map_err(|e| CliError::invalid(e.to_string()))?;
    let mut planner = ServingPlanner::new();
    let single = evaluate_candidate(
        &config,
        setup.evaluator.as_ref(),
        Some(&mut planner),
        &candidate,
    )
    .map_err(|e| CliError::invalid(e.to_string()))?;
    let report = match &single.outcome {
        Some(EvalOutcome::Report(r)) => serde_json::to_value(r).unwrap_or(Value::Null),
        _ => Value::Null,
    };
    let out = json!({
        "status": single.status,
        "reason": single.reason,
        "request": single.request,
        "report": report,
        "candidate": single.candidate,
    });
    let text = serde_json::to_string_pretty(&out).map_err(|e| CliError::io(e.to_string()))?;
    print_stdout(&format!(
        "{}\n",
        sweeper_engine::text::escape_json_controls(&text)
    ))?;
    match single.status {
        Status::Feasible | Status::Infeasible if single.candidate.is_some() => Ok(()),
        _ => Err(CliError::invalid(format!(
            "the candidate was not evaluated to a report: {}",
            single.reason.as_deref().unwrap_or("no reason given")
        ))),
    }
}
