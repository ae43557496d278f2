//! The options of reading report tables that `score` and `recommend` share (issue 36 item
//! 2): the input format (else read from the content), `--map FROM=TO`, `--gpus N|KEY` and
//! `--per-user-from-tpot`. What each does is `sweeper_tables::input::ReadOptions`'.

use super::output::note;
use std::path::Path;
use sweeper_tables::input::{Gpus, InputFormat, ReadOptions};

/// What REPORTS are, when not read from the content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum InputFormatArg {
    /// sweeper's reports: CSV, JSON Lines or a JSON array of {"config", "report"} rows.
    Reports,
    /// `vllm bench serve --save-result` (or `--append-result`) JSON.
    Vllm,
    /// SGLang `python -m sglang.bench_serving --output-file` JSON Lines.
    Sglang,
    /// genai-perf's `profile_export_genai_perf.json`.
    GenaiPerf,
}

impl From<InputFormatArg> for InputFormat {
    fn from(arg: InputFormatArg) -> InputFormat {
        match arg {
            InputFormatArg::Reports => InputFormat::Reports,
            InputFormatArg::Vllm => InputFormat::Vllm,
            InputFormatArg::Sglang => InputFormat::Sglang,
            InputFormatArg::GenaiPerf => InputFormat::GenaiPerf,
        }
    }
}

/// How the rows of REPORTS are read.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ReadArgs {
    /// What REPORTS are [default: read from the content: a JSON object whose keys only one
    /// benchmark writes is that benchmark's result]; said on stderr when it is a
    /// benchmark's.
    #[arg(long, value_enum, value_name = "FORMAT")]
    input_format: Option<InputFormatArg>,
    /// Read the column or key FROM as TO, before anything else reads it (`--map
    /// conc=concurrency`, `--map output_throughput=output_throughput_tok_s`); repeatable. A
    /// FROM that no input has is an error naming the columns there are.
    #[arg(long = "map", value_name = "FROM=TO", value_parser = ReadOptions::parse_map)]
    map: Vec<(String, String)>,
    /// The GPU count of rows without `gpu_hours`: a number, or the config key that holds it
    /// (`used_gpus`, `tp`). It fills `gpu_hours` = GPUs × `duration_ms` / 3,600,000 (a row
    /// without `duration_ms`: one nominal hour, so that tok/s/gpu is tok/s ÷ GPUs) and
    /// `used_gpus` when absent [default for a benchmark's file: its `used_gpus`, e.g.
    /// vLLM's `--metadata used_gpus=8`, else the config's `search_space.used_gpus` rule].
    #[arg(long, value_name = "N|KEY", value_parser = Gpus::parse)]
    gpus: Option<Gpus>,
    /// Rows without `mean_output_token_throughput_per_user` get 1000 / `mean_tpot_ms` (one
    /// user's decode rate, tok/s/user); always done for a benchmark's file.
    #[arg(long)]
    per_user_from_tpot: bool,
}

impl ReadArgs {
    /// The library's options, with the sweep config's `used_gpus` rule.
    pub(crate) fn options(&self, used_gpus: Option<&sweeper_goal::UsedGpus>) -> ReadOptions {
        ReadOptions {
            format: self.input_format.map(InputFormat::from),
            map: self.map.clone(),
            gpus: self.gpus.clone(),
            per_user_from_tpot: self.per_user_from_tpot,
            used_gpus: used_gpus.cloned(),
        }
    }

    /// Whether any option asks for more than reading sweeper's reports as they are.
    pub(crate) fn given(&self) -> bool {
        self.input_format.is_some()
            || !self.map.is_empty()
            || self.gpus.is_some()
            || self.per_user_from_tpot
    }

    /// Whether a format other than sweeper's own is asked for.
    pub(crate) fn forces_benchmark(&self) -> bool {
        self.input_format
            .is_some_and(|f| f != InputFormatArg::Reports)
    }
}

/// Says on stderr which inputs were read as a benchmark's file.
pub(crate) fn note_formats<'a>(formats: impl Iterator<Item = (&'a Path, InputFormat)>) {
    for (path, format) in formats {
        if format == InputFormat::Reports {
            continue;
        }
        note(&format!(
            "{}: read as {} (--input-format {})",
            sweeper_engine::text::escape_controls(&path.display().to_string()),
            format.writer(),
            format.name()
        ));
    }
}

impl ReadArgs {
    /// For the commands that read numeric columns (`front`, `plot`): checks that every
    /// `--map FROM=TO` is read, under its TO, by an objective named `names`. A map whose TO
    /// no objective names, and an objective that names a map's FROM, are errors (the column
    /// would be read under the wrong name).
    pub(crate) fn check_columns(&self, names: &[String]) -> Result<(), super::CliError> {
        for (from, to) in &self.map {
            if names.contains(from) && !names.contains(to) {
                return Err(super::CliError::io(format!(
                    "--map {from}={to} reads `{from}` as `{to}`: name it `{to}` in -o"
                )));
            }
            if !names.contains(to) {
                return Err(super::CliError::io(format!(
                    "--map {from}={to}: no -o objective names `{to}`; give -o {to}:max (or :min) to read `{from}`"
                )));
            }
        }
        Ok(())
    }
}
