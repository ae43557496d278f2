//! `sweeper presets`: the built-in serving model's model and GPU presets, with the figures
//! that decide a deployment (weights, KV bytes per token, HBM, bandwidth, FLOPS).

use super::{CliError, CliResult, Format, print_stdout, table};
use serde_json::{Value, json};
use std::fmt::Write as _;
use sweeper_model::{GpuSpec, ModelSpec, gpu_presets, model_presets};

/// Arguments of `sweeper presets`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  sweeper presets
  sweeper presets --format json

Name a preset in a config as `evaluator: {builtin: {model: MODEL, gpu: GPU}}`, or
start a config from one: `sweeper init --builtin MODEL --gpu GPU`. A config can
add or override presets under `evaluator.builtin.models` / `.gpus`.")]
pub(crate) struct Args {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

fn dtype(m: &ModelSpec) -> String {
    format!("{:?}", m.dtype).to_lowercase()
}

/// The routed experts and their weights' format (`128 mxfp4`), `-` for a dense model: a
/// 4-bit MoE card keeps its other weights in its `dtype`, so `dtype` alone misleads.
fn experts(m: &ModelSpec) -> String {
    match &m.moe {
        Some(moe) => format!(
            "{} {}",
            moe.experts,
            format!("{:?}", m.expert_dtype()).to_lowercase()
        ),
        None => "-".to_owned(),
    }
}

fn model_json(name: &str, m: &ModelSpec) -> Value {
    json!({
        "name": name,
        "display_name": m.display_name.as_deref().unwrap_or(name),
        "params_b": m.total_params() / 1e9,
        "dtype": dtype(m),
        "experts": m.moe.as_ref().map(|moe| moe.experts),
        "expert_dtype": m.moe.as_ref().map(|_| format!("{:?}", m.expert_dtype()).to_lowercase()),
        "weights_gb": m.weight_bytes() / 1e9,
        "kv_kib_per_token": m.kv_bytes_per_token() / 1024.0,
        "layers": m.layers,
        "hidden": m.hidden,
        "heads": m.heads,
        "kv_heads": m.kv_heads,
    })
}

fn gpu_json(name: &str, g: &GpuSpec) -> Value {
    json!({
        "name": name,
        "display_name": g.display_name.as_deref().unwrap_or(name),
        "hbm_gb": g.hbm_gb,
        "hbm_tb_s": g.hbm_tb_s,
        "fp8_tflops": g.fp8_tflops,
        "bf16_tflops": g.bf16_tflops,
        "fp4_tflops": g.fp4_tflops,
        "nvlink_gb_s": g.nvlink_gb_s,
    })
}

fn round1(v: f64) -> String {
    format!("{v:.1}")
}

pub(crate) fn run(args: &Args) -> CliResult {
    let models = model_presets();
    let gpus = gpu_presets();
    let out = match args.format {
        Format::Json => {
            let value = json!({
                "models": models.iter().map(|(n, m)| model_json(n, m)).collect::<Vec<_>>(),
                "gpus": gpus.iter().map(|(n, g)| gpu_json(n, g)).collect::<Vec<_>>(),
            });
            let mut text = serde_json::to_string_pretty(&value)
                .map_err(|e| CliError::io(format!("cannot encode JSON: {e}")))?;
            text.push('\n');
            text
        }
        Format::Table => {
            let header = |cells: &[&str]| cells.iter().map(|&c| c.to_owned()).collect::<Vec<_>>();
            let model_rows: Vec<Vec<String>> = models
                .iter()
                .map(|(n, m)| {
                    vec![
                        n.clone(),
                        round1(m.total_params() / 1e9),
                        dtype(m),
                        experts(m),
                        round1(m.weight_bytes() / 1e9),
                        round1(m.kv_bytes_per_token() / 1024.0),
                        m.display_name.clone().unwrap_or_default(),
                    ]
                })
                .collect();
            let gpu_rows: Vec<Vec<String>> = gpus
                .iter()
                .map(|(n, g)| {
                    vec![
                        n.clone(),
                        table::number(g.hbm_gb),
                        table::number(g.hbm_tb_s),
                        table::number(g.fp8_tflops),
                        table::number(g.bf16_tflops),
                        g.fp4_tflops.map_or_else(|| "-".to_owned(), table::number),
                        table::number(g.nvlink_gb_s),
                        g.display_name.clone().unwrap_or_default(),
                    ]
                })
                .collect();
            format!(
                "Models (evaluator.builtin.model):\n{}\nGPUs (evaluator.builtin.gpu):\n{}",
                table::render(
                    &header(&[
                        "model",
                        "params (B)",
                        "dtype",
                        "experts",
                        "weights (GB)",
                        "KV (KiB/token)",
                        "name"
                    ]),
                    &model_rows
                ),
                table::render(
                    &header(&[
                        "gpu",
                        "HBM (GB)",
                        "HBM (TB/s)",
                        "FP8 (TFLOPS)",
                        "BF16 (TFLOPS)",
                        "FP4 (TFLOPS)",
                        "NVLink (GB/s)",
                        "name"
                    ]),
                    &gpu_rows
                )
            )
        }
        Format::Csv => {
            let mut text = String::from(
                "kind,name,params_b,dtype,weights_gb,kv_kib_per_token,hbm_gb,hbm_tb_s,fp8_tflops,bf16_tflops,nvlink_gb_s,experts,expert_dtype,fp4_tflops\n",
            );
            for (n, m) in &models {
                let _ = writeln!(
                    text,
                    "model,{n},{},{},{},{},,,,,,{},{},",
                    m.total_params() / 1e9,
                    dtype(m),
                    m.weight_bytes() / 1e9,
                    m.kv_bytes_per_token() / 1024.0,
                    m.moe
                        .as_ref()
                        .map_or(String::new(), |moe| moe.experts.to_string()),
                    m.moe.as_ref().map_or(String::new(), |_| {
                        format!("{:?}", m.expert_dtype()).to_lowercase()
                    }),
                );
            }
            for (n, g) in &gpus {
                let _ = writeln!(
                    text,
                    "gpu,{n},,,,,{},{},{},{},{},,,{}",
                    g.hbm_gb,
                    g.hbm_tb_s,
                    g.fp8_tflops,
                    g.bf16_tflops,
                    g.nvlink_gb_s,
                    g.fp4_tflops.map_or(String::new(), |v| v.to_string())
                );
            }
            text
        }
    };
    print_stdout(&out)
}
