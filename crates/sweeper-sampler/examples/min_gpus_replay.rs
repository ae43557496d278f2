//! The `min_gpus` benchmark replayed in process: a study with a floor (or any algorithm)
//! over a table of `[tp, replicas, max_batch_size, used_gpus, goodput]` rows, the numbers
//! of a `sweeper run` grid of `bench/min_gpus.yaml` or `bench/min_gpus_dense.yaml` (the
//! bench script writes them when `MIN_GPUS_TABLE=PATH` is set). The study sees the space
//! those configs search (tp 1-8, replicas 1 to `REPLICAS`, 7 batch caps) and the seeds,
//! batches of 4 and measurements `sweeper run` gives it, so its trials are those of the
//! run; this reads no model and takes no process per trial.
//!
//! ```text
//! cargo run --release -p sweeper-sampler --example min_gpus_replay -- TABLE FLOOR REPLICAS ALGORITHM SEEDS
//! ```
//!
//! Prints the trials each seed (1 to `SEEDS`) needed to first evaluate a satisfying point
//! of the fewest GPUs (0: not within the table's size), then their median, mean and worst.

use std::collections::BTreeMap;
use sweeper_goal::{Direction, SamplerMetric};
use sweeper_sampler::{Algorithm, Floor, ParamSpec, SearchSpace, Study};

type Table = BTreeMap<(i64, i64, i64), (f64, f64)>;

fn space(replicas: i64) -> Result<SearchSpace, Box<dyn std::error::Error>> {
    let mut space = SearchSpace::new();
    let tp = vec![1.0, 2.0, 4.0, 8.0];
    space.add(
        "tp",
        ParamSpec::Discrete {
            values: tp,
            log: false,
        },
    )?;
    space.add(
        "replicas",
        ParamSpec::Int {
            lo: 1,
            hi: replicas,
            log: false,
        },
    )?;
    let batch = vec![8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0];
    space.add(
        "max_batch_size",
        ParamSpec::Discrete {
            values: batch,
            log: true,
        },
    )?;
    Ok(space)
}

fn trials_to_minimum(
    study: &mut Study,
    table: &Table,
    floor: f64,
    fewest: f64,
) -> Result<Option<usize>, Box<dyn std::error::Error>> {
    let mut n = 0;
    while n < table.len() {
        let batch = study.suggest(4)?;
        if batch.is_empty() {
            break;
        }
        let mut found = None;
        for t in batch {
            n += 1;
            let at = |i: usize| t.params[i].1.as_f64().unwrap_or(0.0) as i64;
            let (gpus, goodput) = table[&(at(0), at(1), at(2))];
            let m = BTreeMap::from([
                ("used_gpus".to_owned(), gpus),
                ("goodput".to_owned(), goodput),
            ]);
            study.observe(t.id, &m)?;
            if goodput >= floor && gpus == fewest && found.is_none() {
                found = Some(n);
            }
        }
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, floor, replicas, algorithm, seeds] = args.as_slice() else {
        return Err("usage: min_gpus_replay TABLE FLOOR REPLICAS ALGORITHM SEEDS".into());
    };
    let floor: f64 = floor.parse()?;
    let replicas: i64 = replicas.parse()?;
    let seeds: u64 = seeds.parse()?;
    let algorithm = Algorithm::from_name(algorithm).ok_or("unknown algorithm")?;
    let rows: Vec<(i64, i64, i64, f64, f64)> =
        serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let table: Table = rows
        .iter()
        .map(|&(tp, r, b, gpus, goodput)| ((tp, r, b), (gpus, goodput)))
        .collect();
    let fewest = table
        .values()
        .filter(|v| v.1 >= floor)
        .map(|v| v.0)
        .fold(f64::INFINITY, f64::min);
    let metrics = vec![
        SamplerMetric {
            name: "used_gpus".into(),
            direction: Direction::Minimize,
        },
        SamplerMetric {
            name: "goodput".into(),
            direction: Direction::Maximize,
        },
    ];
    let mut counts = Vec::new();
    for seed in 1..=seeds {
        let mut study = Study::new(space(replicas)?, metrics.clone(), algorithm, seed)?
            .with_floor(Floor::new("goodput", floor))?;
        counts.push(trials_to_minimum(&mut study, &table, floor, fewest)?);
    }
    let mut got: Vec<usize> = counts.iter().flatten().copied().collect();
    got.sort_unstable();
    let k = got.len();
    let median = match k {
        0 => f64::NAN,
        _ if k % 2 == 1 => got[k / 2] as f64,
        _ => (got[k / 2 - 1] + got[k / 2]) as f64 / 2.0,
    };
    let mean = got.iter().sum::<usize>() as f64 / k.max(1) as f64;
    let each: Vec<usize> = counts.iter().map(|c| c.unwrap_or(0)).collect();
    #[allow(clippy::print_stdout)] // an example's report
    {
        println!("{each:?}");
        println!(
            "median {median} mean {mean:.1} worst {} not found {}",
            got.last().copied().unwrap_or(0),
            counts.len() - k
        );
    }
    Ok(())
}
