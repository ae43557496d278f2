//! Criterion benches of non-dominated sorting (`nondominated_ranks`): n = 1e4..1e6 rows,
//! d = 3..5 columns, on the uniform, correlated and anticorrelated clouds of
//! `sweeper_benches::front_data`, every column maximized, seeded in-process data.
//!
//! `cargo bench -p sweeper-benches --bench ranks` runs them all; under
//! `cargo test --benches` (CI) each runs once on n = 1e4 only. The side-by-side table
//! against the old peeling and moocore comes from `benches/peers/time_ranks.py`
//! (`benches/README.md`).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sweeper_benches::front_data::{Dist, generate};
use sweeper_goal::Direction;
use sweeper_score::front::nondominated_ranks;

fn sizes() -> Vec<usize> {
    if std::env::args().any(|a| a == "--bench") {
        vec![10_000, 100_000, 1_000_000]
    } else {
        vec![10_000]
    }
}

fn ranks(c: &mut Criterion) {
    for dist in [Dist::Uniform, Dist::Correlated, Dist::Anticorrelated] {
        for d in 3..=5 {
            let mut group = c.benchmark_group(format!("ranks/{}/d{d}", dist.name()));
            group.sample_size(10);
            group.warm_up_time(Duration::from_millis(500));
            group.measurement_time(Duration::from_secs(3));
            let dirs = vec![Direction::Maximize; d];
            for n in sizes() {
                let data = generate(dist, n, d, 42);
                group.throughput(Throughput::Elements(n as u64));
                group.bench_with_input(BenchmarkId::from_parameter(n), &data, |b, data| {
                    b.iter(|| nondominated_ranks(black_box(data), d, &dirs));
                });
            }
            group.finish();
        }
    }
}

criterion_group!(benches, ranks);
criterion_main!(benches);
