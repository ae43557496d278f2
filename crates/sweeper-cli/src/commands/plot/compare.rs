//! `sweeper plot A B [C...]`: several inputs on one chart, a front per input in its own
//! colour, named in the legend and in every tooltip.

use super::{Args, read_input};
use crate::commands::{CliError, CliResult};
use std::path::{Path, PathBuf};
use sweeper_goal::SweepConfig;
use sweeper_plot::{Chart, Series, compare_svg, compare_title, png_from_svg};

/// The default output of a comparison, in the current directory.
const DEFAULT_OUT: &str = "front-compare.svg";

pub(super) fn run(args: &Args, config: Option<&SweepConfig>, png: bool) -> CliResult {
    let n = args.inputs.len();
    if n < 2 {
        return Err(CliError::io(
            "--name names the inputs of a comparison: give two or more inputs, or drop --name",
        ));
    }
    if !args.names.is_empty() && args.names.len() != n {
        return Err(CliError::io(format!(
            "--name: give one per input, in their order ({n} inputs, {} --name)",
            args.names.len()
        )));
    }
    let options = args.style.options();
    if options.color_by.is_some() {
        return Err(CliError::io(
            "--color-by: with two or more inputs each input has its own colour; plot one input \
             to colour its points by a parameter",
        ));
    }
    let names = if args.names.is_empty() {
        default_names(&args.inputs)
    } else {
        args.names.clone()
    };
    let mut series = Vec::with_capacity(n);
    for (input, name) in args.inputs.iter().zip(names) {
        let mut one = args.clone();
        one.input.clone_from(input);
        let plot = read_input(&one, config)?;
        let searched = plot
            .searched_load
            .or_else(|| config?.searched_load().map(sweeper_goal::SearchedLoad::key));
        let mut s = Series::new(name, plot.chart);
        if args.style.label_unset() {
            // each sweep labelled by the load it searched, as `plot DIR` labels one
            s.labels = Some(searched.map(|k| vec![k.to_owned()]).unwrap_or_default());
        }
        series.push(s);
    }
    let mut every = Chart::new("", Vec::new());
    for s in &series {
        every.points.extend(s.chart.points.iter().cloned());
        if every.objectives.is_empty() {
            every.objectives.clone_from(&s.chart.objectives);
        }
    }
    args.style.check(&every);
    let title = args.title.clone().unwrap_or_else(|| compare_title(&series));
    let svg =
        compare_svg(&title, &series, &options).map_err(|e| CliError::invalid(e.to_string()))?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_OUT));
    let bytes = if png {
        png_from_svg(&svg).map_err(|e| CliError::io(format!("{}: {e}", out.display())))?
    } else {
        svg.into_bytes()
    };
    std::fs::write(&out, bytes).map_err(|e| CliError::io(format!("{}: {e}", out.display())))?;
    crate::commands::print_stderr(&format!("sweeper: wrote {}\n", out.display()));
    Ok(())
}

/// Each input's name: a sweep's directory name (also for its result.json or
/// journal.jsonl), else the file's stem; an input whose name another one shares is named
/// by its path as given.
fn default_names(inputs: &[PathBuf]) -> Vec<String> {
    let names: Vec<String> = inputs.iter().map(|p| name_of(p)).collect();
    names
        .iter()
        .zip(inputs)
        .map(|(name, path)| {
            if names.iter().filter(|n| *n == name).count() > 1 {
                path.display().to_string()
            } else {
                name.clone()
            }
        })
        .collect()
}

fn name_of(path: &Path) -> String {
    let dir_name = |p: &Path| {
        let p = if p.as_os_str().is_empty() {
            Path::new(".")
        } else {
            p
        };
        p.canonicalize()
            .ok()
            .as_deref()
            .unwrap_or(p)
            .file_name()
            .map_or_else(
                || p.display().to_string(),
                |s| s.to_string_lossy().into_owned(),
            )
    };
    if path.is_dir() {
        return dir_name(path);
    }
    let file = path.file_name().map(|f| f.to_string_lossy().into_owned());
    if matches!(file.as_deref(), Some("result.json" | "journal.jsonl")) {
        return dir_name(path.parent().unwrap_or(Path::new(".")));
    }
    path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}
