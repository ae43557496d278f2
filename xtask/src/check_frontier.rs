//! `cargo xtask check-frontier`: the dominance property suite with a chosen case count, or
//! a check of another tool's front against its input.
//!
//! - `cargo xtask check-frontier [--cases N]` runs `crates/sweeper-score/tests/props.rs` in
//!   release mode with `PROPTEST_CASES=N` and prints the cases run per property.
//! - `cargo xtask check-frontier --input IN.csv --front FRONT.csv --objective NAME:max ...`
//!   reads both CSV files (header row), computes the exact front of IN over the objective
//!   columns and reports every front row that FRONT misses (counting duplicates), every FRONT
//!   row that some input row dominates, and every FRONT row that is not an input row. Exit 1
//!   if there is any.

use std::collections::HashMap;
use std::process::{ExitCode, Stdio};

use anyhow::{Context, bail};
use sweeper_goal::Direction;

/// Cases per property by default: about a minute of the release-mode suite on two cores
/// (the agreement properties run every vector level since the kernels gained them: 40,000
/// cases took 139 s).
const DEFAULT_CASES: u32 = 16_000;

pub(crate) fn main(args: &[String]) -> anyhow::Result<ExitCode> {
    let mut cases = DEFAULT_CASES;
    let mut input = None;
    let mut front = None;
    let mut objectives = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--cases" => cases = value()?.parse().context("--cases takes a count")?,
            "--input" => input = Some(value()?.clone()),
            "--front" => front = Some(value()?.clone()),
            "--objective" => objectives.push(parse_objective(value()?)?),
            other => bail!(
                "unknown argument {other}; usage: check-frontier [--cases N] | --input FILE --front FILE --objective NAME:max|min ..."
            ),
        }
    }
    match (input, front) {
        (None, None) => properties(cases),
        (Some(i), Some(f)) => {
            if objectives.is_empty() {
                bail!("give at least one --objective NAME:max|min");
            }
            check_files(&i, &f, &objectives)
        }
        _ => bail!("--input and --front go together"),
    }
}

fn parse_objective(s: &str) -> anyhow::Result<(String, Direction)> {
    let (name, dir) = s
        .rsplit_once(':')
        .with_context(|| format!("objective `{s}`: expected NAME:max or NAME:min"))?;
    let dir = match dir {
        "max" | "maximize" => Direction::Maximize,
        "min" | "minimize" => Direction::Minimize,
        _ => bail!("objective `{s}`: direction must be max or min"),
    };
    Ok((name.to_owned(), dir))
}

/// Runs the property suite and prints the cases per property.
fn properties(cases: u32) -> anyhow::Result<ExitCode> {
    let mut cmd = crate::cargo();
    cmd.args([
        "test",
        "--release",
        "-p",
        "sweeper-score",
        "--test",
        "props",
        "--",
        "--test-threads=2",
    ])
    .env("PROPTEST_CASES", cases.to_string())
    .stdout(Stdio::piped());
    let started = std::time::Instant::now();
    let out = cmd.output().context("running cargo test")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut passed = 0;
    let mut failed = 0;
    #[allow(clippy::print_stdout)]
    for line in stdout.lines() {
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, verdict)) = rest.rsplit_once(" ... ") else {
            continue;
        };
        println!("{name}: {cases} cases, {verdict}");
        if verdict == "ok" {
            passed += 1;
        } else {
            failed += 1;
        }
    }
    #[allow(clippy::print_stdout)]
    {
        println!(
            "{passed} properties passed, {failed} failed, {cases} cases each, {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    if !out.status.success() || failed > 0 || passed == 0 {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("{stdout}");
        }
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// The objective columns of a CSV file, row-major.
fn read_columns(path: &str, objectives: &[(String, Direction)]) -> anyhow::Result<Vec<f64>> {
    let mut rdr = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .from_path(path)
        .with_context(|| format!("reading {path}"))?;
    let headers = rdr.headers()?.clone();
    let cols: Vec<usize> = objectives
        .iter()
        .map(|(name, _)| {
            headers
                .iter()
                .position(|h| h.trim() == name)
                .with_context(|| format!("{path}: no column `{name}`"))
        })
        .collect::<anyhow::Result<_>>()?;
    let mut data = Vec::new();
    for (row, rec) in rdr.records().enumerate() {
        let rec = rec.with_context(|| format!("{path}: row {row}"))?;
        for (&c, (name, _)) in cols.iter().zip(objectives) {
            let cell = rec.get(c).unwrap_or("").trim();
            let x: f64 = cell.parse().with_context(|| {
                format!("{path}: row {row}, column `{name}`: `{cell}` is not a number")
            })?;
            data.push(x);
        }
    }
    Ok(data)
}

/// A hashable row (`-0.0` folded into `0.0`).
fn key(row: &[f64]) -> Vec<u64> {
    row.iter().map(|x| (x + 0.0).to_bits()).collect()
}

fn check_files(
    input: &str,
    front: &str,
    objectives: &[(String, Direction)],
) -> anyhow::Result<ExitCode> {
    let d = objectives.len();
    let dirs: Vec<Direction> = objectives.iter().map(|o| o.1).collect();
    let data = read_columns(input, objectives)?;
    let given = read_columns(front, objectives)?;
    let truth = sweeper_score::front::nondominated(&data, d, &dirs)?;
    let mut problems = 0usize;
    let mut report = |msg: String| {
        problems += 1;
        #[allow(clippy::print_stdout)]
        {
            println!("{msg}");
        }
    };
    // Multiplicities: of every input row, of every true front row, of every given row.
    let mut in_input: HashMap<Vec<u64>, usize> = HashMap::new();
    for row in data.chunks_exact(d) {
        *in_input.entry(key(row)).or_default() += 1;
    }
    let mut given_count: HashMap<Vec<u64>, usize> = HashMap::new();
    for row in given.chunks_exact(d) {
        *given_count.entry(key(row)).or_default() += 1;
    }
    // Rows of the given front that some input row dominates: the front of input + that row
    // set, with the given rows at the end, drops them.
    let mut union = data.clone();
    union.extend_from_slice(&given);
    let n = data.len() / d;
    let union_front = sweeper_score::front::nondominated(&union, d, &dirs)?;
    let mut on_union_front = vec![false; union.len() / d];
    for i in union_front {
        on_union_front[i] = true;
    }
    for (k, row) in given.chunks_exact(d).enumerate() {
        if !in_input.contains_key(&key(row)) {
            report(format!("front row {k} {row:?}: not a row of the input"));
        }
        if !on_union_front[n + k] {
            report(format!("front row {k} {row:?}: dominated by an input row"));
        }
    }
    let mut seen: HashMap<Vec<u64>, usize> = HashMap::new();
    for &i in &truth {
        let row = &data[i * d..(i + 1) * d];
        let k = key(row);
        let s = seen.entry(k.clone()).or_default();
        *s += 1;
        if *s > given_count.get(&k).copied().unwrap_or(0) {
            report(format!("input row {i} {row:?}: on the front but missing"));
        }
    }
    #[allow(clippy::print_stdout)]
    {
        println!(
            "input rows={n} true front={} given front={} problems={problems}",
            truth.len(),
            given.len() / d
        );
    }
    Ok(if problems == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
