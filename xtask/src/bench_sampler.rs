//! `cargo xtask bench-sampler`: the sampler benchmark problems of issue 4 (ZDT1, DTLZ2,
//! serving), normalized hypervolume of the feasible observed points and suggest times.
//!
//! One run per (problem, algorithm, batch, seed) at the largest budget; each budget's cell
//! reads the first `trials` trials of that run (a batch cut by the budget counts only its
//! first members, which are exactly what a smaller last batch would have proposed).
//!
//! `--in-flight K` adds the asynchronous schedule of `sweep.schedule: async`: `K` trials
//! are suggested, then each time one of the running trials finishes (a seeded draw among
//! them, as evaluations of varying length finish in no fixed order) it is observed and one
//! trial is suggested with the other `K - 1` still pending. Its rows read `aK` in the batch
//! column (`"in_flight": K` in JSON).

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use sweeper_sampler::{Algorithm, Study, TrialState};

mod problems;
mod table;

use problems::Problem;
use table::Table;

/// A benchmark case: a built-in problem, or an enumerated table (`--table FILE`).
#[derive(Clone, Copy)]
enum Case<'a> {
    Builtin(Problem),
    Table(&'a Table),
}

impl Case<'_> {
    fn name(&self) -> &str {
        match self {
            Case::Builtin(p) => p.name(),
            Case::Table(t) => &t.name,
        }
    }
    fn space(&self) -> sweeper_sampler::SearchSpace {
        match self {
            Case::Builtin(p) => p.space(),
            Case::Table(t) => t.space(),
        }
    }
    fn metrics(&self) -> Vec<sweeper_goal::SamplerMetric> {
        match self {
            Case::Builtin(p) => p.metrics(),
            Case::Table(t) => t.metrics(),
        }
    }
    fn evaluate(
        &self,
        params: &[(String, sweeper_sampler::ParamValue)],
    ) -> Option<Vec<(String, f64)>> {
        match self {
            Case::Builtin(p) => p.evaluate(params),
            Case::Table(t) => t.evaluate(params),
        }
    }
    fn hv_point(&self, values: &[(String, f64)]) -> Vec<f64> {
        match self {
            Case::Builtin(p) => p.hv_point(values),
            Case::Table(t) => t.hv_point(values),
        }
    }
    fn reference(&self) -> Vec<f64> {
        match self {
            Case::Builtin(p) => p.reference(),
            Case::Table(t) => t.reference(),
        }
    }
    fn true_hypervolume(&self) -> f64 {
        match self {
            Case::Builtin(p) => p.true_hypervolume(),
            Case::Table(t) => t.true_hypervolume(),
        }
    }
}

struct Options {
    problems: Vec<Problem>,
    /// `--table a.json,b.json`: enumerated spaces (`benches/peers/aic_space.py`).
    tables: Vec<Table>,
    trials: Vec<usize>,
    batches: Vec<usize>,
    in_flight: Vec<usize>,
    seeds: u64,
    algorithms: Vec<Algorithm>,
    json: bool,
    /// `--latency N`: time the suggest calls from N observations on instead (batch 8).
    latency: Option<usize>,
}

fn list<T>(v: &str, parse: impl Fn(&str) -> Option<T>) -> anyhow::Result<Vec<T>> {
    v.split(',')
        .map(|s| parse(s.trim()).ok_or_else(|| anyhow::anyhow!("unknown value `{s}`")))
        .collect()
}

fn parse(args: &[String]) -> anyhow::Result<Options> {
    let mut o = Options {
        problems: Problem::ALL.to_vec(),
        tables: Vec::new(),
        trials: vec![30, 50, 150],
        batches: vec![1, 8],
        in_flight: Vec::new(),
        seeds: 5,
        algorithms: vec![Algorithm::Default, Algorithm::Random],
        json: false,
        latency: None,
    };
    let mut problem_given = false;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .map(String::as_str)
                .ok_or_else(|| anyhow::anyhow!("{flag} needs a value"))
        };
        match flag.as_str() {
            "--problem" => {
                o.problems = list(value()?, Problem::from_name)?;
                problem_given = true;
            }
            "--table" => {
                for path in value()?.split(',') {
                    o.tables.push(Table::load(std::path::Path::new(path))?);
                }
                if !problem_given {
                    o.problems.clear();
                }
            }
            "--trials" => o.trials = list(value()?, |s| s.parse().ok())?,
            "--batch" => o.batches = list(value()?, |s| s.parse().ok().filter(|&b| b > 0))?,
            "--in-flight" => {
                o.in_flight = list(value()?, |s| s.parse().ok().filter(|&b| b > 0))?;
            }
            "--seeds" => o.seeds = value()?.parse()?,
            "--latency" => o.latency = Some(value()?.parse()?),
            "--algorithm" => o.algorithms = list(value()?, Algorithm::from_name)?,
            "--format" => {
                o.json = match value()? {
                    "json" => true,
                    "table" => false,
                    other => anyhow::bail!("unknown format `{other}` (table or json)"),
                }
            }
            other => anyhow::bail!(
                "unknown flag `{other}`; flags: --problem zdt1,dtlz2,dtlz2_4,serving,kernel --table FILE.json --trials 30,50,150 \
                 --batch 1,8 --in-flight 4 --seeds 5 --algorithm default,random,quasi_random,grid \
                 --format table|json --latency 150"
            ),
        }
    }
    anyhow::ensure!(
        !o.trials.is_empty() && o.seeds > 0,
        "empty budget or seed list"
    );
    Ok(o)
}

/// One seed's run: the hypervolume after each trial count, and each suggest call's time
/// with the number of trials suggested before it.
struct Run {
    /// `hv[t]`: normalized hypervolume of the first `t` trials.
    hv: Vec<f64>,
    /// `infeasible[t]`: how many of the first `t` trials were infeasible.
    infeasible: Vec<usize>,
    calls: Vec<(usize, f64)>,
    /// The study at the end of the run.
    study: Study,
}

/// How trials are asked for: batches observed whole, or `K` kept in flight.
#[derive(Clone, Copy)]
enum Mode {
    Batch(usize),
    InFlight(usize),
}

impl Mode {
    fn label(self) -> String {
        match self {
            Mode::Batch(b) => b.to_string(),
            Mode::InFlight(k) => format!("a{k}"),
        }
    }
}

/// Evaluates `trial` and tells the study its metrics, or that it is infeasible; returns
/// the metrics.
fn tell(
    problem: Case<'_>,
    study: &mut Study,
    trial: &sweeper_sampler::Trial,
) -> anyhow::Result<Option<Vec<(String, f64)>>> {
    let values = problem.evaluate(&trial.params);
    match &values {
        Some(v) => {
            let m: BTreeMap<String, f64> = v.iter().cloned().collect();
            study.observe(trial.id, &m)?;
        }
        None => study.observe_infeasible(trial.id, "infeasible")?,
    }
    Ok(values)
}

fn run_one(
    problem: Case<'_>,
    algorithm: Algorithm,
    mode: Mode,
    seed: u64,
    budget: usize,
    true_hv: f64,
) -> anyhow::Result<Run> {
    let mut study = Study::new(problem.space(), problem.metrics(), algorithm, seed)?;
    let mut points: Vec<Vec<f64>> = Vec::new();
    let mut hv = vec![0.0];
    let mut infeasible = vec![0];
    let mut calls = Vec::new();
    let mut done = 0;
    let mut suggested = 0;
    let mut running: Vec<sweeper_sampler::Trial> = Vec::new();
    // which running trial finishes next (xorshift, seeded per run)
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    while done < budget {
        let (ask, observe_all) = match mode {
            Mode::Batch(b) => (b.min(budget - done), true),
            Mode::InFlight(k) => (
                k.saturating_sub(running.len()).min(budget - suggested),
                false,
            ),
        };
        if ask > 0 {
            let t0 = Instant::now();
            let trials = study.suggest(ask)?;
            calls.push((done, t0.elapsed().as_secs_f64() * 1e3));
            suggested += trials.len();
            running.extend(trials);
        }
        if running.is_empty() {
            break;
        }
        let finished: Vec<sweeper_sampler::Trial> = if observe_all {
            std::mem::take(&mut running)
        } else {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            vec![running.remove((state % running.len() as u64) as usize)]
        };
        for t in finished {
            let bad = infeasible[infeasible.len() - 1];
            match tell(problem, &mut study, &t)? {
                Some(values) => {
                    points.push(problem.hv_point(&values));
                    infeasible.push(bad);
                }
                None => infeasible.push(bad + 1),
            }
            done += 1;
            hv.push(problems::hypervolume(&points, &problem.reference()) / true_hv);
        }
    }
    debug_assert!(
        study
            .trials()
            .iter()
            .all(|r| !matches!(r.state, TrialState::Pending))
    );
    Ok(Run {
        hv,
        infeasible,
        calls,
        study,
    })
}

/// Suggest latency from `at` observations on, batch [`LATENCY_BATCH`]: per seed, a run in
/// batches to `at` trials, then [`LATENCY_WINDOW`] more batches, each call timed on
/// [`LATENCY_REPS`] copies of the saved study before the study itself makes it (a copy does
/// the same work as the original: its state, random streams and last fit are saved); the
/// fastest copy counts, as the others measure the machine's load. A window of calls, not
/// one, since the hyperparameter refits (every tenth of growth) fall on some calls only.
fn latency(
    problem: Case<'_>,
    algorithm: Algorithm,
    seeds: u64,
    at: usize,
    true_hv: f64,
) -> anyhow::Result<Vec<f64>> {
    let mut out = Vec::new();
    for seed in 0..seeds {
        let mut study = run_one(
            problem,
            algorithm,
            Mode::Batch(LATENCY_BATCH),
            seed,
            at,
            true_hv,
        )?
        .study;
        for _ in 0..LATENCY_WINDOW {
            let saved = study.to_json();
            let mut best = f64::INFINITY;
            for _ in 0..LATENCY_REPS {
                let mut copy = Study::from_json(&saved)?;
                let t0 = Instant::now();
                let trials = copy.suggest(LATENCY_BATCH)?;
                best = best.min(t0.elapsed().as_secs_f64() * 1e3);
                anyhow::ensure!(!trials.is_empty(), "no suggestion at {at} observations");
            }
            out.push(best);
            for t in study.suggest(LATENCY_BATCH)? {
                tell(problem, &mut study, &t)?;
            }
        }
    }
    Ok(out)
}

const LATENCY_BATCH: usize = 8;
const LATENCY_REPS: usize = 3;
const LATENCY_WINDOW: usize = 4;

/// The `q`-quantile of sorted `v` (nearest rank).
fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

#[allow(clippy::print_stderr)]
fn report_table(t: &Table) {
    eprintln!(
        "bench-sampler: table {} ({}), true hypervolume {:.6}",
        t.name,
        t.source,
        t.true_hypervolume()
    );
}

/// The built-in problems asked for, then the tables.
fn cases(o: &Options) -> Vec<Case<'_>> {
    o.problems
        .iter()
        .map(|&p| Case::Builtin(p))
        .chain(o.tables.iter().map(Case::Table))
        .collect()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

#[allow(clippy::print_stdout)]
pub(crate) fn main(args: &[String]) -> anyhow::Result<ExitCode> {
    let o = parse(args)?;
    for t in &o.tables {
        report_table(t);
    }
    if let Some(at) = o.latency {
        let mut all = Vec::new();
        for problem in cases(&o) {
            let true_hv = problem.true_hypervolume();
            for &algorithm in &o.algorithms {
                let mut ms = latency(problem, algorithm, o.seeds, at, true_hv)?;
                ms.sort_by(f64::total_cmp);
                println!(
                    "{}",
                    serde_json::json!({
                        "latency": problem.name(), "algorithm": algorithm.name(),
                        "observations": at, "window": LATENCY_WINDOW, "batch": LATENCY_BATCH, "seeds": o.seeds,
                        "p50_ms": quantile(&ms, 0.5), "p99_ms": quantile(&ms, 0.99),
                        "max_ms": ms.last(),
                    })
                );
                all.extend(ms);
            }
        }
        all.sort_by(f64::total_cmp);
        println!(
            "{}",
            serde_json::json!({
                "latency": "all", "observations": at, "batch": LATENCY_BATCH,
                "calls": all.len(), "p50_ms": quantile(&all, 0.5),
                "p99_ms": quantile(&all, 0.99), "max_ms": all.last(),
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let budget = *o.trials.iter().max().unwrap_or(&0);
    if !o.json {
        println!(
            "{:<8} {:<13} {:>6} {:>5}  {:>22}  {:>18}",
            "problem", "algorithm", "trials", "batch", "hv median [min, max]", "suggest ms med/max"
        );
    }
    for problem in cases(&o) {
        let true_hv = problem.true_hypervolume();
        for &algorithm in &o.algorithms {
            let modes = o
                .batches
                .iter()
                .map(|&b| Mode::Batch(b))
                .chain(o.in_flight.iter().map(|&k| Mode::InFlight(k)));
            for mode in modes {
                let runs: Vec<Run> = (0..o.seeds)
                    .map(|seed| run_one(problem, algorithm, mode, seed, budget, true_hv))
                    .collect::<anyhow::Result<_>>()?;
                for &t in &o.trials {
                    let per_seed: Vec<f64> =
                        runs.iter().map(|r| r.hv[t.min(r.hv.len() - 1)]).collect();
                    let bad: Vec<usize> = runs
                        .iter()
                        .map(|r| r.infeasible[t.min(r.infeasible.len() - 1)])
                        .collect();
                    let mut hvs = per_seed.clone();
                    let mut times: Vec<f64> = runs
                        .iter()
                        .flat_map(|r| r.calls.iter().filter(|c| c.0 < t).map(|c| c.1))
                        .collect();
                    let hv_med = median(&mut hvs);
                    let (hv_min, hv_max) = (hvs[0], hvs[hvs.len() - 1]);
                    let t_med = median(&mut times);
                    let t_max = times.last().copied().unwrap_or(f64::NAN);
                    if o.json {
                        let (batch, in_flight) = match mode {
                            Mode::Batch(b) => (b, None),
                            Mode::InFlight(k) => (1, Some(k)),
                        };
                        let mut line = serde_json::json!({
                            "problem": problem.name(),
                            "algorithm": algorithm.name(),
                            "trials": t,
                            "batch": batch,
                            "seeds": o.seeds,
                            "hv_median": hv_med,
                            "hv_min": hv_min,
                            "hv_max": hv_max,
                            "suggest_ms_median": t_med,
                            "suggest_ms_max": t_max,
                            "hv_seeds": per_seed,
                            "infeasible_seeds": bad,
                        });
                        if let Some(k) = in_flight {
                            line["in_flight"] = k.into();
                        }
                        println!("{line}");
                    } else {
                        println!(
                            "{:<8} {:<13} {:>6} {:>5}  {:>6.3} [{:.3}, {:.3}]  {:>8.2} / {:>7.2}",
                            problem.name(),
                            algorithm.name(),
                            t,
                            mode.label(),
                            hv_med,
                            hv_min,
                            hv_max,
                            t_med,
                            t_max
                        );
                    }
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
