//! `sweeper init`: a commented sweep config to start from, which validates as written.

use super::{CliError, CliResult, print_stdout};
use std::fmt::Write as _;
use std::path::PathBuf;
use sweeper_goal::{Objective, Target};
use sweeper_model::{gpu_presets, model_presets};

/// Arguments of `sweeper init`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  sweeper init > my-sweep.yaml                          # the built-in model, pareto goal
  sweeper init --builtin llama3-70b-fp8 --gpu h100 llama-h100.yaml
  sweeper init --target throughput_per_gpu --builtin qwen3-32b-fp8 --gpu b200
  sweeper init my-eval.yaml --command python3 examples/evaluators/aiperf_to_report.py

Then: `sweeper validate my-sweep.yaml` and `sweeper run my-sweep.yaml`. The
presets are listed by `sweeper presets`. A FILE that exists is not overwritten.")]
pub(crate) struct Args {
    /// Where to write the config [default: standard output].
    file: Option<PathBuf>,
    /// The built-in serving model's model preset.
    #[arg(
        long,
        value_name = "MODEL",
        default_value = "qwen3-32b-fp8",
        conflicts_with = "command"
    )]
    builtin: String,
    /// The built-in serving model's GPU preset.
    #[arg(
        long,
        value_name = "GPU",
        default_value = "h200",
        conflicts_with = "command"
    )]
    gpu: String,
    /// Evaluate with your own program instead (the rest of the line: program and
    /// arguments); it reads a candidate as JSON on stdin and prints a JSON report.
    #[arg(long, value_name = "PROGRAM", num_args = 1.., allow_hyphen_values = true)]
    command: Option<Vec<String>>,
    /// The goal: `pareto` (tok/s/gpu against tok/s/user) or one objective to maximize
    /// (`throughput`, `throughput_per_gpu`, `throughput_per_user`, `goodput`,
    /// `goodput_per_gpu`) or minimize (`e2e_latency`).
    #[arg(long, value_name = "TARGET", default_value = "pareto")]
    target: String,
}

pub(crate) fn run(args: &Args) -> CliResult {
    let Some(target) = Target::from_name(&args.target) else {
        return Err(CliError::io(format!(
            "--target {}: not a goal; use pareto, throughput, throughput_per_gpu, throughput_per_user, goodput, goodput_per_gpu or e2e_latency",
            args.target
        )));
    };
    if args.command.is_none() {
        let models = model_presets();
        if !models.contains_key(&args.builtin) {
            let names: Vec<&str> = models.keys().map(String::as_str).collect();
            return Err(CliError::io(format!(
                "--builtin {}: no such model preset; the presets are {} (`sweeper presets` shows their figures)",
                args.builtin,
                names.join(", ")
            )));
        }
        let gpus = gpu_presets();
        if !gpus.contains_key(&args.gpu) {
            let names: Vec<&str> = gpus.keys().map(String::as_str).collect();
            return Err(CliError::io(format!(
                "--gpu {}: no such GPU preset; the presets are {}",
                args.gpu,
                names.join(", ")
            )));
        }
    }
    let text = template(args, target);
    // What is written must validate: a template that did not would be a bug here.
    if let Err(e) = sweeper_goal::parse(&text) {
        return Err(CliError::invalid(format!(
            "the generated config does not validate (please report this): {e}"
        )));
    }
    match &args.file {
        None => print_stdout(&text),
        Some(path) => {
            use std::io::Write as _;
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| {
                    if e.kind() == std::io::ErrorKind::AlreadyExists {
                        CliError::io(format!(
                            "{} exists; give another file name, or remove it first",
                            path.display()
                        ))
                    } else {
                        CliError::io(format!("{}: {e}", path.display()))
                    }
                })?;
            file.write_all(text.as_bytes())
                .map_err(|e| CliError::io(format!("{}: {e}", path.display())))?;
            super::print_stderr(&format!(
                "wrote {p}; check it with `sweeper validate {p}`, run it with `sweeper run {p}`\n",
                p = path.display()
            ));
            Ok(())
        }
    }
}

/// With the built-in model and a mixture-of-experts preset, the GPU budget of a topology
/// sweep: four times the GPUs its weights need at 3/4 of each GPU's HBM, rounded up to a
/// power of two, at least 16 (so that both modes have deployments); `None` otherwise.
fn moe_budget(args: &Args) -> Option<u64> {
    if args.command.is_some() {
        return None;
    }
    let model = model_presets().get(&args.builtin)?.clone();
    model.moe.as_ref()?;
    let gpu = gpu_presets().get(&args.gpu)?.clone();
    let needed = (model.weight_bytes() / (0.75 * gpu.hbm_gb * 1e9))
        .ceil()
        .max(1.0);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let needed = (needed as u64).next_power_of_two();
    Some((4 * needed).max(16))
}

/// The config text: every block with a comment saying what it does and what else it takes.
fn template(args: &Args, target: Target) -> String {
    let mut t = String::new();
    t.push_str(
        "# A sweep config made by `sweeper init`. Check it with `sweeper validate FILE`,\n\
         # run it with `sweeper run FILE`; README.md has the full reference.\n\n",
    );
    t.push_str("goal:\n");
    match target {
        Target::Pareto => t.push_str(
            "  # pareto: the front of tok/s/gpu against tok/s/user (pareto_objectives picks\n  \
             # others, e.g. [throughput_per_gpu, throughput_per_user, e2e_latency]).\n  \
             target: pareto\n",
        ),
        Target::Scalar(o) => {
            let _ = writeln!(
                t,
                "  # One objective, ranked: {} ({}).\n  target: {}",
                o.name(),
                o.unit(),
                o.name()
            );
        }
    }
    let goodput = matches!(
        target,
        Target::Scalar(Objective::Goodput | Objective::GoodputPerGpu | Objective::MinGpus)
    );
    if target == Target::Scalar(Objective::MinGpus) {
        t.push_str(
            "  # The load to serve: requests a second that must meet the SLA. Candidates that\n  \
             # reach it rank first, fewest GPUs first (`sweeper recommend` asks for any rate).\n  \
             min_goodput_rps: 10\n",
        );
    }
    if target == Target::Scalar(Objective::CostPerMtok) {
        t.push_str(
            "  # Dollars per GPU-hour, or one per GPU: {h200: 3.5, b200: 5.0}.\n  \
             price_per_gpu_hour: 3.5\n",
        );
    }
    if goodput {
        t.push_str(
            "  # Goodput counts only requests that meet the SLA, so it needs one. The SLA\n  \
             # drops no candidate: add `strict_sla: true` for that.\n  \
             sla: {ttft_ms: 2000, itl_ms: 50}\n",
        );
    } else {
        t.push_str(
            "  # An SLA alone drops no candidate: only the goodput targets read it (they count\n  \
             # the requests that meet it). `strict_sla: true` drops the candidates whose mean\n  \
             # TTFT, ITL or e2e latency exceeds a bound ({percentile: 90} checks p90), e.g.:\n  \
             # sla: {ttft_ms: 2000, itl_ms: 50}\n  \
             # strict_sla: true\n",
        );
    }
    t.push_str(
        "\n# The traffic: input and output lengths (tokens) and the load.\nworkload:\n  \
         isl: 4000\n  osl: 500\n  num_request_ratio: 10      # requests per unit of concurrency\n",
    );
    if matches!(target, Target::Pareto) {
        t.push_str(
            "  # The load as a fraction of each candidate's KV-cache capacity, searched too;\n  \
             # or a fixed `concurrency: 64` or `request_rate: 20`.\n  \
             kv_load_ratio: [0.05, 1.0]\n",
        );
    } else {
        t.push_str(
            "  concurrency: 64            # or `request_rate: 20`, or `kv_load_ratio: 0.5`\n",
        );
    }
    if let Some(budget) = moe_budget(args) {
        let _ = write!(
            t,
            "\n# What is searched: {model} is a mixture-of-experts model, so the candidates are\n\
             # its deployments (SPEC 8): aggregated workers or disaggregated prefill and decode\n\
             # pools, each with its tensor, expert and attention-data parallelism and replicas\n\
             # (`sweeper validate` prints how many); a candidate's GPUs are those of its pools.\n\
             search_space:\n  \
             gpu_budget: {budget}              # candidates using more GPUs are dropped\n  \
             topology:\n    \
             model: {model}\n    \
             gpu: {gpu}\n    \
             deployment_mode: [agg, disagg]\n    \
             backend: [vllm]             # or sglang, trtllm (aggregated only)\n  \
             parameters:\n    \
             agg_max_batch_size: {{values: [64, 128, 256]}}     # aggregated candidates only\n    \
             decode_max_batch_size: {{values: [64, 128, 256]}}  # disaggregated ones only\n\n",
            model = args.builtin,
            gpu = args.gpu,
        );
    } else {
        t.push_str(
            "\n# What is searched: the parameters, and how many GPUs a candidate uses.\n\
         search_space:\n  \
         gpu_budget: 16              # candidates using more GPUs are dropped\n  \
         used_gpus: [tp, replicas]   # their product is a candidate's GPU count\n  \
         parameters:\n    \
         tp: {values: [1, 2, 4, 8]}  # a list of choices\n    \
         replicas: {int: [1, 8]}     # an integer range; {float: [a, b]} for reals\n    \
         max_batch_size: {values: [8, 16, 32, 64, 128, 256, 512], log: true}\n\n",
        );
    }
    match &args.command {
        None => {
            let _ = write!(
                t,
                "# Who evaluates a candidate: the built-in analytic serving model (no GPU needed;\n\
                 # `sweeper presets` lists models and GPUs), or your program:\n\
                 #   command: [python3, my_eval.py]   (a candidate on stdin, a JSON report on stdout)\n\
                 evaluator:\n  builtin: {{model: {}, gpu: {}}}\n",
                args.builtin, args.gpu
            );
        }
        Some(command) => {
            let argv: Vec<String> = command
                .iter()
                .map(|a| serde_json::Value::String(a.clone()).to_string())
                .collect();
            let _ = write!(
                t,
                "# Who evaluates a candidate: this program gets one candidate as JSON on stdin and\n\
                 # prints one JSON report (metric name -> number) on stdout; exit 3 unsupported,\n\
                 # 4 infeasible. `persistent: true` keeps one process per worker (JSON Lines).\n\
                 # Try one candidate with `sweeper evaluate FILE --candidate '{{...}}'`.\n\
                 evaluator:\n  command: [{}]\n  # persistent: true\n",
                argv.join(", ")
            );
        }
    }
    t.push_str(
        "\n# The budget: rounds of candidates, evaluated parallel_evals at a time.\n\
         sweep:\n  \
         max_rounds: 10\n  \
         candidates_per_round: 8\n  \
         parallel_evals: 4\n  \
         max_eval_seconds: 600       # an evaluation over this is killed and tallied\n  \
         seed: 42                    # the same seed proposes the same candidates\n",
    );
    t
}
