//! `front-figures`: writes the front benchmark datasets as `.npy`, and times our front
#![allow(clippy::print_stdout, clippy::print_stderr)]
//! kernel on `.npy` files (the same files `benches/peers/time_peers.py` times the peers on).
//!
//! ```sh
//! cargo run --release -p sweeper-benches --bin front-figures -- --gen benches/data
//! cargo run --release -p sweeper-benches --bin front-figures -- --npy benches/data/*.npy
//! cargo run --release -p sweeper-benches --bin front-figures -- --simd baseline FILE.npy
//! ```
//!
//! `--ranks` times `nondominated_ranks` instead (non-dominated sorting); the `front` column
//! then holds the number of fronts.
//!
//! `--simd baseline|avx2|avx512` caps the vector instructions of the kernel's hot loops (it
//! uses the widest the CPU has by default; the level in use goes to stderr).
//!
//! Timing wraps the kernel call only (`nondominated`, every column maximized), with the
//! protocol of `benches/peers/time_peers.py`: one untimed warm-up call, then calls until
//! there are `--repeat` of them and they took 0.25 s, or until 2 s; the figure is their
//! median. Output: one tab-separated line per file.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use sweeper_benches::front_data::{Dist, generate};
use sweeper_benches::npy;
use sweeper_goal::Direction;

/// The grid of the table: every size 1e3..1e6 for d = 2..5 and each distribution, and the
/// 1e7 cells of the peers' table.
fn grid() -> Vec<(Dist, usize, usize)> {
    let mut cells = Vec::new();
    for dist in Dist::ALL {
        for d in 2..=5 {
            for n in [1_000, 10_000, 100_000, 1_000_000] {
                cells.push((dist, n, d));
            }
        }
    }
    cells.extend([
        (Dist::Uniform, 10_000_000, 3),
        (Dist::Uniform, 10_000_000, 5),
        (Dist::Anticorrelated, 10_000_000, 4),
        (Dist::Sphere, 10_000_000, 3),
    ]);
    cells
}

fn gen_all(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (dist, n, d) in grid() {
        let path = dir.join(format!("{}-{n}x{d}.npy", dist.name()));
        if path.exists() {
            continue;
        }
        let data = generate(dist, n, d, 42);
        npy::write(BufWriter::new(File::create(&path)?), &data, d)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// What a timed call computes.
#[derive(Clone, Copy)]
enum Kernel {
    /// `nondominated`.
    Front,
    /// `nondominated_sequential`.
    FrontSequential,
    /// `nondominated_ranks`.
    Ranks,
}

fn time_file(path: &Path, repeat: usize, kernel: Kernel) -> std::io::Result<()> {
    let (data, d) = npy::read(BufReader::new(File::open(path)?))?;
    let dirs = vec![Direction::Maximize; d];
    // The protocol of `benches/peers/time_peers.py`, for every tool alike: one untimed
    // warm-up call (the first parallel call of a process also starts rayon's thread pool,
    // and a fresh process's first calls run slower: 4.4, 4.0, 3.4, 2.9, 2.5 ms for the pass
    // over uniform 1e6 × 3 on one thread), counted when it takes over 1 s; then calls until
    // there are `repeat` of them and they took 0.25 s, or until 2 s; the median.
    let call = || {
        let t = Instant::now();
        let size = match kernel {
            Kernel::Front => sweeper_score::front::nondominated(&data, d, &dirs).map(|f| f.len()),
            Kernel::FrontSequential => {
                sweeper_score::front::nondominated_sequential(&data, d, &dirs).map(|f| f.len())
            }
            // The number of fronts.
            Kernel::Ranks => sweeper_score::front::nondominated_ranks(&data, d, &dirs)
                .map(|r| r.iter().max().map_or(0, |m| m + 1)),
        }
        .map_err(std::io::Error::other)?;
        Ok::<_, std::io::Error>((size, t.elapsed().as_secs_f64() * 1e3))
    };
    let mut times = Vec::with_capacity(repeat);
    let (mut front, first) = call()?;
    if first > 1e3 {
        times.push(first);
    }
    let start = Instant::now();
    while start.elapsed().as_secs_f64() <= 2.0
        && (times.len() < repeat || start.elapsed().as_secs_f64() < 0.25)
    {
        let (f, ms) = call()?;
        front = f;
        times.push(ms);
    }
    times.sort_by(f64::total_cmp);
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    println!(
        "{name}\t{}\t{d}\t{front}\t{:.4}\t{:.4}",
        data.len() / d,
        times[times.len() / 2],
        times[0]
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut repeat = 7;
    let mut kernel = Kernel::Front;
    let mut files: Vec<PathBuf> = Vec::new();
    let mut k = 0;
    while k < args.len() {
        match args[k].as_str() {
            "--gen" if k + 1 < args.len() => {
                if let Err(e) = gen_all(Path::new(&args[k + 1])) {
                    eprintln!("front-figures: {e}");
                    return ExitCode::FAILURE;
                }
                k += 1;
            }
            "--repeat" if k + 1 < args.len() => {
                repeat = args[k + 1].parse().unwrap_or(7).max(1);
                k += 1;
            }
            "--simd" if k + 1 < args.len() => {
                let Some(level) = sweeper_score::front::SimdLevel::from_name(&args[k + 1]) else {
                    eprintln!("front-figures: --simd takes baseline, avx2 or avx512");
                    return ExitCode::FAILURE;
                };
                sweeper_score::front::limit_simd(level);
                k += 1;
            }
            "--npy" => {}
            "--seq" => kernel = Kernel::FrontSequential,
            "--ranks" => kernel = Kernel::Ranks,
            other => files.push(PathBuf::from(other)),
        }
        k += 1;
    }
    if !files.is_empty() {
        eprintln!(
            "front-figures: vector instructions {}",
            sweeper_score::front::simd_level().name()
        );
        println!("file\tn\td\tfront\tmedian_ms\tmin_ms");
    }
    for f in &files {
        if let Err(e) = time_file(f, repeat, kernel) {
            eprintln!("front-figures: {}: {e}", f.display());
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
