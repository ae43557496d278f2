//! Times `pareto_front` 1.2.1 (`ParetoFront::push` of every row, all columns maximized,
//! duplicates kept) on `.npy` files (float64, C order, shape (n, d), d = 2..=5).
//! Prints `file<TAB>front<TAB>median_ms` per file. Timing wraps the pushes only; the protocol
//! (warm-up call, calls until `--repeat` of them and 0.25 s or until 2 s, median) is
//! `time_peers.py`'s.

use std::time::Instant;

use pareto_front::{Dominate, ParetoFront};

#[derive(Clone, Copy)]
struct Row<const D: usize>([f64; D]);

impl<const D: usize> Dominate for Row<D> {
    fn dominate(&self, x: &Self) -> bool {
        let mut gt = false;
        for j in 0..D {
            if self.0[j] < x.0[j] {
                return false;
            }
            gt |= self.0[j] > x.0[j];
        }
        gt
    }
}

fn read_npy(path: &str) -> (Vec<f64>, usize) {
    let bytes = std::fs::read(path).expect("read");
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = String::from_utf8_lossy(&bytes[10..10 + hlen]);
    let shape = header
        .split("'shape': (")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .expect("shape");
    let d: usize = shape
        .split(',')
        .nth(1)
        .expect("2-D")
        .trim()
        .parse()
        .expect("d");
    let data = bytes[10 + hlen..]
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect();
    (data, d)
}

/// The protocol of `time_peers.py`: one untimed warm-up call (counted when it takes over
/// 1 s), then calls until there are `repeat` of them and they took 0.25 s, or until 2 s,
/// and the median.
fn time<const D: usize>(data: &[f64], repeat: usize) -> (usize, f64) {
    let rows: Vec<Row<D>> = data.as_chunks::<D>().0.iter().map(|r| Row(*r)).collect();
    let call = || {
        let t = Instant::now();
        let mut front = ParetoFront::new();
        for r in &rows {
            front.push(*r);
        }
        (front.len(), t.elapsed().as_secs_f64() * 1e3)
    };
    let mut times = Vec::new();
    let (mut size, first) = call();
    if first > 1e3 {
        times.push(first);
    }
    let start = Instant::now();
    while start.elapsed().as_secs_f64() <= 2.0
        && (times.len() < repeat || start.elapsed().as_secs_f64() < 0.25)
    {
        let (s, ms) = call();
        size = s;
        times.push(ms);
    }
    times.sort_by(f64::total_cmp);
    (size, times[times.len() / 2])
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut repeat = 5;
    if args.first().is_some_and(|a| a == "--repeat") {
        repeat = args[1].parse().expect("count");
        args.drain(..2);
    }
    for path in &args {
        let (data, d) = read_npy(path);
        let (front, ms) = match d {
            2 => time::<2>(&data, repeat),
            3 => time::<3>(&data, repeat),
            4 => time::<4>(&data, repeat),
            5 => time::<5>(&data, repeat),
            _ => panic!("d = {d} not supported"),
        };
        println!("{path}\t{front}\t{ms:.4}");
    }
}
