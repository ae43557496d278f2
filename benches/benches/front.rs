//! Criterion benches of the front kernel: n = 1e3..1e6, d = 2..5, four distributions
//! (`sweeper_benches::front_data`), every column maximized, seeded in-process data.
//!
//! `cargo bench -p sweeper-benches --bench front` runs them all; `SWEEPER_BENCH_LARGE=1`
//! adds n = 1e7 for d = 2 and 3. Under `cargo test --benches` (CI) each runs once on
//! n <= 1e4 only, so the test-mode run stays short.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use sweeper_benches::front_data::{Dist, generate};
use sweeper_goal::Direction;
use sweeper_score::front::nondominated;

fn sizes(d: usize) -> Vec<usize> {
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let mut n = vec![1_000, 10_000];
    if bench_mode {
        n.extend([100_000, 1_000_000]);
        if d <= 3 && std::env::var_os("SWEEPER_BENCH_LARGE").is_some() {
            n.push(10_000_000);
        }
    }
    n
}

fn front(c: &mut Criterion) {
    for dist in Dist::ALL {
        for d in 2..=5 {
            let mut group = c.benchmark_group(format!("front/{}/d{d}", dist.name()));
            group.sample_size(10);
            group.warm_up_time(Duration::from_millis(500));
            group.measurement_time(Duration::from_secs(2));
            let dirs = vec![Direction::Maximize; d];
            for n in sizes(d) {
                let data = generate(dist, n, d, 42);
                group.throughput(Throughput::Elements(n as u64));
                group.bench_with_input(BenchmarkId::from_parameter(n), &data, |b, data| {
                    b.iter(|| nondominated(black_box(data), d, &dirs));
                });
            }
            group.finish();
        }
    }
}

criterion_group!(benches, front);
criterion_main!(benches);
