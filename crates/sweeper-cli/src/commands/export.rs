//! `sweeper export`: picked trials of a sweep as deployments — a DynamoGraphDeployment,
//! engine launch commands and the traced candidate, one folder per trial.

use super::{CliError, CliResult};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use sweeper_export::{Api, Backend, ExportError, ExportOptions, Selection};
use sweeper_tables::ResultFile;

const AFTER_HELP: &str = "\
INPUT is a sweep's output directory, its result.json, or its journal.jsonl (a sweep still
running). Pick trials with --trial ID (repeatable; the ids are in trials.csv and in the
plot's tooltips), --front (every front point), --knee (the front point whose
objectives, each scaled to [0, 1] over the front, have the largest sum: with two, the point
farthest beyond the line between the front's ends; on a front that bows in towards the
origin, as tok/s/gpu against tok/s/user often does, no point lies beyond it and the knee
is an end of the front: look at the plot, or pick with --where), --top K (a scalar goal's
ranking) or --where EXPR alone (every feasible trial that meets it); --where (repeatable)
also filters the others. EXPR is NAME OP NUMBER over an objective, a parameter or a report metric, OP one of
>= <= > < == != (e.g. throughput_per_user>=50).

Each trial gets a folder OUT/trial-ID/ with:
  dgd.yaml        a Dynamo DynamoGraphDeployment (nvidia.com/v1beta1; --api v1alpha1 for
                  the older services: form): a frontend, and one worker component
                  (aggregated) or a prefill and a decode component (disaggregated), with
                  the candidate's replicas, GPU limits and the backend's parallel flags
  launch.sh       the same deployment as engine launch commands, one line per worker
  candidate.json  the candidate, its report and objectives, to trace every number

The candidate's keys are read as deployment_mode, backend, tp, pp, attention_dp, moe_tp,
moe_ep, strategy, replicas, max_batch_size, max_num_tokens (prefixed prefill_/decode_ for a
disaggregated candidate), used_gpus and router_mode; the load it ran at is kept only in
candidate.json. Another parameter is an error that names it; --allow-unmapped records it
as a comment instead. The GPUs a manifest requests always equal the trial's used_gpus.
The model, image, namespace, backend, GPUs per node and API version come from the options,
else from the sweep config's export: block (model, image, namespace, backend,
gpus_per_node, api); without either the manifest carries placeholders named
PLACEHOLDER_MODEL, PLACEHOLDER_IMAGE and placeholder-namespace.

Examples:
  sweeper export sweeper-out/quickstart --front --model Qwen/Qwen3-32B-FP8
  sweeper export sweeper-out/quickstart --knee --image nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0
  sweeper export sweeper-out/quickstart --trial 72 --backend sglang --out deploy/
  sweeper export sweeper-out/quickstart --front --where 'throughput_per_user>=50'
  sweeper export sweeper-out/quickstart/journal.jsonl --trial 72 --api v1alpha1

Exit status: 0 written; 1 a selection or candidate that cannot be exported (the message
says what to change); 2 usage or I/O error.";

/// Arguments of `sweeper export`.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub(crate) struct Args {
    /// A sweep's output directory, result.json or journal.jsonl.
    input: PathBuf,
    /// A trial to export, by id (repeatable).
    #[arg(long = "trial", value_name = "ID")]
    trials: Vec<u64>,
    /// Every point of the Pareto front.
    #[arg(long)]
    front: bool,
    /// The knee of the Pareto front: the point whose objectives, each scaled to [0, 1]
    /// over the front, have the largest sum.
    #[arg(long)]
    knee: bool,
    /// The first K trials of a scalar goal's ranking.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..))]
    top: Option<u64>,
    /// A condition the trials meet, NAME OP NUMBER (repeatable; all must hold).
    #[arg(long = "where", value_name = "EXPR")]
    filters: Vec<String>,
    /// Where to write the folders [default: export/ in the sweep's directory].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The DynamoGraphDeployment API version [default: export.api, else v1beta1].
    #[arg(long, value_enum)]
    api: Option<ApiArg>,
    /// The backend of candidates without a `backend` key [default: export.backend, else
    /// vllm].
    #[arg(long, value_enum)]
    backend: Option<BackendArg>,
    /// GPUs a node has; a worker with more spans whole nodes [default: the config's
    /// export block, else 8].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    gpus_per_node: Option<u64>,
    /// The model the workers serve, a Hugging Face id or a path [default: export.model,
    /// else a placeholder].
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// The container image of every component [default: export.image, else a placeholder].
    #[arg(long, value_name = "IMAGE")]
    image: Option<String>,
    /// The Kubernetes namespace [default: export.namespace, else a placeholder].
    #[arg(long, value_name = "NAMESPACE")]
    namespace: Option<String>,
    /// Record a parameter the exporter cannot map as a comment instead of refusing.
    #[arg(long)]
    allow_unmapped: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ApiArg {
    V1beta1,
    V1alpha1,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum BackendArg {
    Vllm,
    Sglang,
    Trtllm,
}

fn export_error(e: &ExportError) -> CliError {
    if e.is_io() {
        CliError::io(e.to_string())
    } else {
        CliError::invalid(e.to_string())
    }
}

pub(crate) fn run(args: &Args) -> CliResult {
    let (result, dir) = read_result(&args.input)?;
    // The command's options over the sweep's `export:` block over the defaults.
    let mut options = ExportOptions::of_result(&result);
    if let Some(api) = args.api {
        options.api = match api {
            ApiArg::V1beta1 => Api::V1beta1,
            ApiArg::V1alpha1 => Api::V1alpha1,
        };
    }
    if let Some(backend) = args.backend {
        options.backend = match backend {
            BackendArg::Vllm => Backend::Vllm,
            BackendArg::Sglang => Backend::Sglang,
            BackendArg::Trtllm => Backend::Trtllm,
        };
    }
    if let Some(n) = args.gpus_per_node {
        options.gpus_per_node = n;
    }
    for (slot, given) in [
        (&mut options.model, &args.model),
        (&mut options.image, &args.image),
        (&mut options.namespace, &args.namespace),
    ] {
        if given.is_some() {
            slot.clone_from(given);
        }
    }
    options.allow_unmapped = args.allow_unmapped;
    let selection = Selection {
        trials: args.trials.clone(),
        front: args.front,
        knee: args.knee,
        top: args.top.map(|k| k as usize),
        filters: args.filters.clone(),
    };
    let ids = sweeper_export::select(&result, &selection).map_err(|e| export_error(&e))?;
    let source = dir.display().to_string();
    // Every trial is rendered before anything is written: one that cannot be exported
    // leaves no half-written set behind.
    let bundles = ids
        .iter()
        .map(|id| {
            sweeper_export::export_trial(&result, *id, &options, &source)
                .map_err(|e| CliError::invalid(format!("trial {id}: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let out = args.out.clone().unwrap_or_else(|| dir.join("export"));
    let mut listing = String::new();
    for bundle in &bundles {
        let folder = sweeper_export::write_bundle(&out, bundle).map_err(|e| export_error(&e))?;
        let d = &bundle.rendered.deployment;
        let mode = match d.mode {
            sweeper_export::Mode::Agg(_) => "agg",
            sweeper_export::Mode::Disagg { .. } => "disagg",
        };
        let _ = writeln!(
            listing,
            "trial {:<5} {mode:<6} {:<6} {:>4} GPUs  {}",
            bundle.trial,
            d.backend.name(),
            d.used_gpus,
            sweeper_engine::text::escape_controls(&folder.display().to_string())
        );
    }
    let placeholders = options.placeholders();
    if !placeholders.is_empty() {
        super::output::note(&format!(
            "the manifests carry placeholders: {}",
            placeholders.join(", ")
        ));
    }
    super::print_stdout(&listing)
}

/// The result of a sweep and its directory, from the directory, its result.json or its
/// journal (with the config beside it).
fn read_result(input: &Path) -> Result<(ResultFile, PathBuf), CliError> {
    if input.extension().is_some_and(|e| e == "jsonl") {
        let dir = input.parent().map(PathBuf::from).unwrap_or_default();
        let config = super::load_config(&dir.join("config.yaml"))?;
        let result = sweeper_engine::run::result_from_journal(&config, input)
            .map_err(|e| super::run_error(&e))?;
        let title = format!("{} (from the journal)", input.display());
        return Ok((ResultFile::new(&config, &result, &title), dir));
    }
    let (file, dir) = if input.is_dir() {
        (input.join("result.json"), input.to_path_buf())
    } else {
        (
            input.to_path_buf(),
            input.parent().map(PathBuf::from).unwrap_or_default(),
        )
    };
    let text = std::fs::read_to_string(&file).map_err(|e| {
        CliError::io(format!(
            "{}: {e}; give a sweep's output directory, its result.json or its journal.jsonl",
            file.display()
        ))
    })?;
    let result: ResultFile = serde_json::from_str(&text).map_err(|e| {
        CliError::invalid(format!(
            "{}: not a sweeper result.json: {e}",
            file.display()
        ))
    })?;
    Ok((result, dir))
}
