//! The linear pre-pass: drops rows dominated by a few strong rows before any sort.
//!
//! A strided sample of the input gives its own front (exact, small); those rows, strongest
//! first, seed a window against which every input row is tested in one pass over the raw
//! data (signs applied on the fly, NaN noticed on the way). Rows the window dominates are
//! dropped; the others survive and, while the window has room, join it (a block-nested-loop
//! filter with move-to-front, as in Börzsönyi, Kossmann and Stocker's skyline operator,
//! ICDE 2001, seeded and capped so that it stays linear). Dropping only rows dominated by a
//! real row keeps the front of the survivors equal to the front of the input.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::SimdLevel;
use super::simd::{Lanes, multiversion};
use super::window::Window;

/// Rows per parallel task of the pass, at most (small inputs get smaller tasks, so that
/// the tests reach the multi-task path too).
const CHUNK: usize = 1 << 17;
/// Seed rows per column.
const SEED_MAX: usize = 16;
/// Sample rows on which the seed candidates' coverage is judged, at most.
const COVER_ROWS: usize = 1024;
/// Light passes over fewer rows run on one thread (see [`pass`]). Correlated 1e5 × 5
/// (1.5% of the rows reach the per-row test), four medians of 7 calls each way: one
/// thread 0.43–0.57 ms, two 0.56–0.86 ms; uniform 1e5 × 5 (23%) stays on two, 3.2–3.9
/// against 4.6–5.2 ms on one.
const LIGHT_SEQ_ROWS: usize = 1 << 18;
/// Rows after which a task looks at its survival rate, at most.
const PROBE: usize = 1024;

/// What the pass found.
pub(crate) enum Pass<const D: usize> {
    /// A NaN somewhere: the caller reports the first one.
    Nan,
    /// The surviving rows, ascending, with their canonical values.
    Survivors(Vec<u32>, Vec<[f64; D]>),
}

/// Canonical row `i` of raw `data`.
#[inline]
fn load<const D: usize>(data: &[f64], i: usize, sign: &[f64; D]) -> [f64; D] {
    let r = &data[i * D..i * D + D];
    std::array::from_fn(|j| r[j] * sign[j] + 0.0)
}

/// What [`seed`] chose.
struct Seed<const D: usize> {
    /// The seed rows, canonical, strongest first.
    rows: Vec<[f64; D]>,
    /// Head rows of the branch-free test (see [`head_rows`]).
    head: usize,
    /// The share of the sample that the head rows leave to the per-row test.
    left: f64,
}

/// The seed window: rows of the front of a strided sample, picked greedily so that each
/// next one dominates the most sample rows that the ones before do not (a greedy set
/// cover), so that a dominated input row usually meets its dominator within the first few
/// tests. `None` when the sample holds a NaN.
fn seed<const D: usize>(
    data: &[f64],
    n: usize,
    sign: &[f64; D],
    level: SimdLevel,
) -> Option<Seed<D>> {
    // About 4·sqrt(n) rows: enough for strong seeds, cheap next to the pass.
    let m = ((4.0 * (n as f64).sqrt()) as usize)
        .clamp(1, 1024 * D)
        .min(n.div_ceil(4));
    let stride = n / m;
    let sample: Vec<[f64; D]> = (0..m).map(|k| load(data, k * stride, sign)).collect();
    if sample.iter().flatten().any(|x| x.is_nan()) {
        return None;
    }
    // The sample's front is usually small: the block-nested loop (no sort) finds it
    // fastest; a large one goes to the exact kernel.
    let mut front: Vec<[f64; D]> =
        if let Some(ids) = small_front(level, sample.as_flattened(), &[1.0; D], 256) {
            ids.iter().map(|&i| sample[i]).collect()
        } else {
            let keep = super::exact::<D>(&sample, false, level);
            sample
                .iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(p, _)| *p)
                .collect()
        };
    // Too many candidates: keep those of largest normalised log-volume (cheap proxy).
    let cands = 32 * D;
    if front.len() > cands {
        let mut lo = [f64::MAX; D];
        let mut hi = [f64::MIN; D];
        for p in &sample {
            for j in 0..D {
                let x = p[j].clamp(f64::MIN, f64::MAX);
                lo[j] = lo[j].min(x);
                hi[j] = hi[j].max(x);
            }
        }
        let proxy = |p: &[f64; D]| -> f64 {
            (0..D)
                .map(|j| {
                    let w = hi[j] - lo[j];
                    let t = (p[j].clamp(f64::MIN, f64::MAX) - lo[j]) / w;
                    if t.is_finite() { (t + 1e-9).ln() } else { 0.0 }
                })
                .sum()
        };
        let mut keyed: Vec<(f64, [f64; D])> = front.iter().map(|p| (proxy(p), *p)).collect();
        keyed.sort_by(|a, b| b.0.total_cmp(&a.0));
        front = keyed.into_iter().take(cands).map(|(_, p)| p).collect();
    }
    // Coverage bitsets over the sample, then the greedy picks.
    // Coverage is judged on at most `COVER_ROWS` sample rows: every candidate is tested
    // against each, which at 4·sqrt(1e6) sample rows cost more than a tenth of the pass.
    let sub: Vec<[f64; D]> = sample
        .iter()
        .step_by(m.div_ceil(COVER_ROWS))
        .copied()
        .collect();
    let words = sub.len().div_ceil(64);
    let cover = cover(level, &front, &sub);
    let mut covered = vec![0u64; words];
    let mut used = vec![false; front.len()];
    let mut picks = Vec::new();
    let mut gains = Vec::new();
    for _ in 0..SEED_MAX * D {
        let best = (0..front.len())
            .filter(|&c| !used[c])
            .map(|c| {
                let gain: u32 = cover[c]
                    .iter()
                    .zip(&covered)
                    .map(|(a, b)| (a & !b).count_ones())
                    .sum();
                (gain, c)
            })
            .max();
        let Some((gain, c)) = best else { break };
        if gain == 0 {
            break;
        }
        used[c] = true;
        for (w, b) in covered.iter_mut().zip(&cover[c]) {
            *w |= b;
        }
        picks.push(front[c]);
        gains.push(gain);
    }
    let head = head_rows(&gains, sub.len());
    let left = left_share(&gains, sub.len(), head);
    Some(Seed {
        rows: picks,
        head,
        left,
    })
}

/// How many head rows the pass's branch-free test should use, from the greedy gains of the
/// seeds on `rows` sample rows: fewer than [`HEAD`] only when the rows they leave that four
/// would have caught are at most 0.5% of the sample. Each head row costs every input row a
/// vector test, so on correlated data, where the first seeds dominate nearly everything,
/// two head rows are cheaper than four (A/B, min of five medians: correlated 1e5 × 3
/// 0.26 -> 0.19 ms, 1e6 × 4 3.06 -> 2.2 ms). The rows left cost far more on uniform data,
/// whose window rows are more and farther apart: a cost model that picked two head rows
/// for uniform 1e5 × 3 (3.2%, 2.4% and 1.7% of the sample left by 1, 2 and 4 seeds)
/// doubled its time, hence the margin.
fn head_rows(gains: &[u32], rows: usize) -> usize {
    let left = |h: usize| left_share(gains, rows, h);
    [1, 2]
        .into_iter()
        .find(|&h| left(h) - left(HEAD) <= 0.005)
        .unwrap_or(HEAD)
}

/// The share of `rows` sample rows that the first `h` seeds leave uncovered, from the
/// seeds' greedy gains.
fn left_share(gains: &[u32], rows: usize, h: usize) -> f64 {
    1.0 - f64::from(gains.iter().take(h).sum::<u32>()) / rows.max(1) as f64
}

multiversion! {
    /// The exact front of a small input by a block-nested loop (Börzsönyi et al.): the
    /// window is the front of the rows seen so far. `None` when the front outgrows
    /// `max_front` (or a quarter of the rows seen) or a NaN shows up (the caller then takes
    /// the general path, which reports it).
    pub(crate) fn small_front<const D: usize>(
        data: &[f64],
        sign: &[f64; D],
        max_front: usize,
    ) -> Option<Vec<usize>> => small_front_body;
}

/// The body of [`small_front`], built once per instruction-set level: each block of 64 rows
/// is first tested branch-free against the window's first rows, like the pass does.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "built again inside each `multiversion!` wrapper"
)]
fn small_front_body<const D: usize, L: Lanes>(
    lanes: L,
    data: &[f64],
    sign: &[f64; D],
    max_front: usize,
) -> Option<Vec<usize>> {
    let rows = data.as_chunks::<D>().0;
    let mut window = Window::<D>::with_capacity(32);
    let mut ids: Vec<u32> = Vec::with_capacity(max_front + 1);
    // The first row taken is the one of largest sum among 64 spread over the input: the
    // first block is then tested against a strong row instead of an empty window. It is
    // an ordinary row of the loop, taken early (its own bit is cleared below): an unsampled
    // row that dominates it drops it from the window like any other.
    // (A plain loop with one compare per row: the iterator chain with `total_cmp` cost
    // 6% of uniform 1e3 × 3.) NaN sums never win, and neither does a row of `-inf` sum
    // over an earlier one.
    let mut first = None;
    let mut best = f64::NEG_INFINITY;
    for i in (0..rows.len()).step_by(rows.len().div_ceil(64).max(1)) {
        let s: f64 = load_row(&rows[i], sign).iter().sum();
        if s > best || (first.is_none() && !s.is_nan()) {
            best = s;
            first = Some(i);
        }
    }
    // The two rows of largest sum taken so far, with their sums. One that a later row
    // dominates (and so drops from the window) may stay here: it is still a real row, so
    // the rows it masks are off the front all the same.
    let mut top = [[f64::NEG_INFINITY; D]; 2];
    let mut top_sum = [f64::NEG_INFINITY; 2];
    if let Some(i) = first {
        let p = load_row(&rows[i], sign);
        window.push(&p);
        ids.push(i as u32);
        top[0] = p;
        top_sum[0] = best;
    }
    // Two head rows, or four while blocks keep leaving many rows to the per-row test (with
    // some hysteresis). A head row that a later row of the block pushes out of the window
    // still dominates the rows it masked: they are off the front either way.
    let mut wide = false;
    for (blk, block) in rows.chunks(64).enumerate() {
        // The head: the first rows of the window (move-to-front order: the rows that
        // dominated recent rows) and the rows of largest sum (on uniform data, the ones
        // that dominate the most); both halves together left a quarter fewer rows to the
        // per-row test than the first rows alone.
        let mut left = if wide {
            let head = [window.row(0), window.row(1), top[0], top[1]];
            left_mask(block, sign, &head)
        } else {
            left_mask(block, sign, &[window.row(0), top[0]])
        };
        let count = left.count_ones();
        wide = if wide {
            count > WIDE_OFF
        } else {
            count > WIDE_ON
        };
        if let Some(f) = first
            && f / 64 == blk
        {
            left &= !(1 << (f % 64));
        }
        while left != 0 {
            let t = left.trailing_zeros() as usize;
            left &= left - 1;
            let i = blk * 64 + t;
            let p = load_row(&block[t], sign);
            if p.iter().any(|x| x.is_nan()) {
                return None;
            }
            match window.first_dominator(lanes, &p) {
                Some(0) => continue,
                Some(k) => {
                    window.move_to_front(k);
                    ids[..=k].rotate_right(1);
                    continue;
                }
                None => {}
            }
            window.drop_dominated_by(lanes, &p, &mut ids);
            window.push(&p);
            ids.push(i as u32);
            let sum: f64 = p.iter().sum();
            if sum > top_sum[0] {
                (top[1], top_sum[1]) = (top[0], top_sum[0]);
                (top[0], top_sum[0]) = (p, sum);
            } else if sum > top_sum[1] {
                (top[1], top_sum[1]) = (p, sum);
            }
            // Give up early too when the front grows fast (a quarter of the rows so far,
            // with some slack: the fronts of the first few rows are noisy, and a uniform
            // 1e3 × 3 input that bailed out here took the pass at three times the cost).
            if window.len() > max_front || window.len() * 4 > i + 32 {
                return None;
            }
        }
    }
    let mut ids: Vec<usize> = ids.into_iter().map(|i| i as usize).collect();
    ids.sort_unstable();
    Some(ids)
}

/// The small-input loop moves to four head rows after a block that two left more than
/// this many rows to the per-row test, and back to two after a block that four left at
/// most [`WIDE_OFF`]. Min of 5 × 300 calls against two head rows always: uniform 1e3 × 3
/// 8.5 -> 6.8 µs, uniform 1e4 × 3 48.6 -> 39.5 µs with four always, which cost correlated
/// 1e3 × 3 12% (2.4 -> 2.7 µs), whose blocks leave two or three rows.
const WIDE_ON: u32 = 8;
/// See [`WIDE_ON`].
const WIDE_OFF: u32 = 2;

/// A raw row turned canonical.
#[inline]
fn load_row<const D: usize>(r: &[f64; D], sign: &[f64; D]) -> [f64; D] {
    std::array::from_fn(|j| r[j] * sign[j] + 0.0)
}

/// Seeds that every row meets in the branch-free test, at most.
pub(crate) const HEAD: usize = 4;

/// Bit `t` set when row `t` of `block` (at most 64 rows) is *not* dominated by any row of
/// `head` (canonical; unused slots hold `-inf` rows, which dominate nothing). Branch-free,
/// so that the compiler vectorizes it across rows; a NaN row is never dominated, so every
/// NaN reaches the caller's per-row path, which notices it.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "built again inside each `multiversion!` wrapper"
)]
fn left_mask<const D: usize, const H: usize>(
    block: &[[f64; D]],
    sign: &[f64; D],
    head: &[[f64; D]; H],
) -> u64 {
    // "Better somewhere" by the sums: with `w >= x` everywhere, a larger sum proves that
    // `w != x` (equal rows have equal sums), which is one compare instead of D. Rows where
    // it fails to prove it (equal sums after rounding, or a NaN sum from opposite
    // infinities) are left to the exact per-row test.
    let hsum: [f64; H] = std::array::from_fn(|k| head[k].iter().sum());
    let mut m = 0u64;
    for (t, r) in block.iter().enumerate() {
        let x: [f64; D] = std::array::from_fn(|j| r[j] * sign[j]);
        let xs: f64 = x.iter().sum();
        let mut dominated = false;
        for (w, &ws) in head.iter().zip(&hsum) {
            let mut ge = ws > xs;
            for j in 0..D {
                ge &= w[j] >= x[j];
            }
            dominated |= ge;
        }
        m |= u64::from(!dominated) << t;
    }
    m
}

multiversion! {
    /// Per candidate, the bit set of the `sub` rows it dominates.
    fn cover<const D: usize>(cands: &[[f64; D]], sub: &[[f64; D]]) -> Vec<Vec<u64>> => cover_body;
}

/// The body of [`cover`], built once per instruction-set level.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "built again inside each `multiversion!` wrapper"
)]
fn cover_body<const D: usize, L: Lanes>(
    lanes: L,
    cands: &[[f64; D]],
    sub: &[[f64; D]],
) -> Vec<Vec<u64>> {
    // Column-major once, so that each candidate's test is contiguous vector loads.
    let sub = Window::from_rows(sub, 0);
    // A plain loop: an iterator chain's `fold` stays a call, built without the wrapper's
    // vector instructions (perf showed the cover in a baseline `Map::fold`).
    let mut bits = Vec::with_capacity(cands.len());
    for p in cands {
        bits.push(sub.dominated_by(lanes, p));
    }
    bits
}

/// What every task of one pass shares.
struct Shared<'a, const D: usize> {
    /// The raw input, row-major.
    data: &'a [f64],
    /// Per column `1.0` (maximize) or `-1.0` (minimize).
    sign: &'a [f64; D],
    /// The seed rows, canonical, strongest first.
    seed: &'a [[f64; D]],
    /// Rows a task's window holds at most.
    cap: usize,
    /// Local-front statistics over all tasks.
    stats: &'a LocalStats,
    /// The instruction-set level of the exact kernels called on the way.
    level: SimdLevel,
    /// Rows of the window's head in the branch-free test: 1, 2 or [`HEAD`].
    head: usize,
}

multiversion! {
    /// Filters rows `a..b`: survivors ascending and whether a NaN was seen. When more than
    /// half of the first rows survive, the rest is kept without testing (the front is
    /// large; the exact kernel does better than a window then).
    fn filter<const D: usize>(job: &Shared<'_, D>, a: usize, b: usize) -> (Vec<u32>, bool)
        => filter_body;
}

/// The body of [`filter`], built once per instruction-set level.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "built again inside each `multiversion!` wrapper"
)]
fn filter_body<const D: usize, L: Lanes>(
    lanes: L,
    job: &Shared<'_, D>,
    a: usize,
    b: usize,
) -> (Vec<u32>, bool) {
    match job.head {
        1 => filter_head::<D, 1, L>(lanes, job, a, b),
        2 => filter_head::<D, 2, L>(lanes, job, a, b),
        _ => filter_head::<D, HEAD, L>(lanes, job, a, b),
    }
}

/// [`filter_body`] with `H` head rows.
#[inline(always)]
#[allow(
    clippy::inline_always,
    reason = "built again inside each `multiversion!` wrapper"
)]
fn filter_head<const D: usize, const H: usize, L: Lanes>(
    lanes: L,
    job: &Shared<'_, D>,
    a: usize,
    b: usize,
) -> (Vec<u32>, bool) {
    const BLOCK: usize = 64;
    let Shared {
        data,
        sign,
        seed,
        cap,
        stats,
        ..
    } = *job;
    let rows = &data.as_chunks::<D>().0[a..b];
    // The window: the seeds, then the survivors found on the way, kept in move-to-front
    // order. Its first `H` rows at the start of a block meet every row of the block in
    // the branch-free test (so the head follows the data: on uniform 1e6 × 5 a head fixed
    // to the strongest seeds left twice as many rows to the per-row test).
    let mut window = Window::from_rows(seed, cap - seed.len());
    let mut ids = Vec::new();
    let mut nan = false;
    let probe = PROBE.min((b - a) / 4).max(1);
    let mut stair: Vec<(f64, f64)> = Vec::new();
    if D == 2 {
        for w in seed {
            if !stair_dominated(&stair, w[0], w[1]) {
                stair_insert(&mut stair, w[0], w[1]);
            }
        }
    }
    for (blk, block) in rows.chunks(BLOCK).enumerate() {
        let base = blk * BLOCK;
        if base >= BLOCK.min(probe) && ids.len() * 2 > base {
            // The window does not filter: the rest of the task gets its exact local front
            // instead, while such local fronts keep proving small (a quarter of their rows
            // or less, over all tasks so far); else the rest is kept as it is.
            let rest = &rows[base..];
            nan |= rest
                .as_flattened()
                .iter()
                .fold(false, |acc, x| acc | x.is_nan());
            let seen = stats.seen.load(Ordering::Relaxed);
            if !nan && stats.local && stats.kept.load(Ordering::Relaxed) * 4 <= seen {
                let buf: Vec<[f64; D]> = rest.iter().map(|r| load_row(r, sign)).collect();
                let keep = super::exact::<D>(&buf, false, job.level);
                let before = ids.len();
                ids.extend(
                    keep.iter()
                        .enumerate()
                        .filter(|(_, k)| **k)
                        .map(|(t, _)| (a + base + t) as u32),
                );
                stats.seen.fetch_add(rest.len(), Ordering::Relaxed);
                stats.kept.fetch_add(ids.len() - before, Ordering::Relaxed);
            } else {
                ids.extend((a + base) as u32..b as u32);
            }
            break;
        }
        let head: [[f64; D]; H] = window.head();
        let mut left = left_mask(block, sign, &head);
        while left != 0 {
            let t = left.trailing_zeros() as usize;
            left &= left - 1;
            let p = load_row(&block[t], sign);
            if p.iter().any(|x| x.is_nan()) {
                nan = true;
                continue;
            }
            if D == 2 {
                // d = 2: the task's own running front as an exact staircase.
                if !stair_dominated(&stair, p[0], p[1]) {
                    ids.push((a + base + t) as u32);
                    if stair.len() < STAIR_MAX {
                        stair_insert(&mut stair, p[0], p[1]);
                    }
                }
                continue;
            }
            match window.first_dominator(lanes, &p) {
                Some(0) => {}
                Some(j) => window.move_to_front(j),
                None => {
                    ids.push((a + base + t) as u32);
                    if window.len() < cap {
                        window.push(&p);
                    }
                }
            }
        }
    }
    (ids, nan)
}

/// Steps of the d = 2 staircase of a task, at most.
const STAIR_MAX: usize = 4096;

/// Whether the staircase (x ascending, y strictly descending) has a point that dominates
/// (x, y).
#[inline]
fn stair_dominated(stair: &[(f64, f64)], x: f64, y: f64) -> bool {
    let k = stair.partition_point(|s| s.0 < x);
    stair
        .get(k)
        .is_some_and(|s| s.1 > y || (s.1 == y && s.0 > x))
}

/// Adds an undominated (x, y) to the staircase, dropping the steps it dominates.
fn stair_insert(stair: &mut Vec<(f64, f64)>, x: f64, y: f64) {
    let end = stair.partition_point(|s| s.0 <= x);
    if end > 0 && stair[end - 1] == (x, y) {
        return;
    }
    let mut start = end;
    while start > 0 && stair[start - 1].1 <= y {
        start -= 1;
    }
    if start == end {
        stair.insert(end, (x, y));
    } else {
        stair[start] = (x, y);
        stair.drain(start + 1..end);
    }
}

/// Rows given to local exact fronts so far, and rows those fronts kept.
pub(crate) struct LocalStats {
    /// Whether local fronts are tried at all: on the parallel path only (large inputs; on
    /// small ones the final exact kernel costs less than a second look).
    local: bool,
    seen: AtomicUsize,
    kept: AtomicUsize,
}

impl LocalStats {
    /// No local fronts yet; `local` as for the field.
    fn new(local: bool) -> Self {
        LocalStats {
            local,
            seen: AtomicUsize::new(0),
            kept: AtomicUsize::new(0),
        }
    }
}

/// One pass over raw `data` (n rows of D), in parallel when `par`.
pub(crate) fn pass<const D: usize>(
    data: &[f64],
    sign: &[f64; D],
    par: bool,
    level: SimdLevel,
) -> Pass<D> {
    let n = data.len() / D;
    let Some(Seed {
        rows: seed,
        head,
        left,
    }) = seed(data, n, sign, level)
    else {
        return Pass::Nan;
    };
    // A light pass (the head rows leave at most 2% of the sample to the per-row test) is
    // a read of the input at little more than memory speed; under `LIGHT_SEQ_ROWS` rows
    // two threads gain less than waking them costs.
    let par = par && !(left <= 0.02 && n < LIGHT_SEQ_ROWS);
    let cap = seed.len() + if n < 1 << 16 { 16 * D } else { 256 * D };
    let chunk = (n / (4 * rayon::current_num_threads())).clamp(256, CHUNK);
    let stats = LocalStats::new(par);
    let job = Shared {
        data,
        sign,
        seed: &seed,
        cap,
        stats: &stats,
        level,
        head,
    };
    let parts: Vec<(Vec<u32>, bool)> = if par {
        (0..n.div_ceil(chunk))
            .into_par_iter()
            .map(|c| {
                let end = ((c + 1) * chunk).min(n);
                filter(level, &job, c * chunk, end)
            })
            .collect()
    } else {
        vec![filter(level, &job, 0, n)]
    };
    if parts.iter().any(|p| p.1) {
        return Pass::Nan;
    }
    let ids: Vec<u32> = if parts.len() == 1 {
        parts.into_iter().next().map(|p| p.0).unwrap_or_default()
    } else {
        let mut ids = Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum());
        for (part, _) in parts {
            ids.extend_from_slice(&part);
        }
        ids
    };
    // The one copy of the data: the survivors' canonical rows, contiguous.
    // In parallel only when there are many (a rayon round costs tens of microseconds).
    let vals: Vec<[f64; D]> = if par && ids.len() >= 1 << 14 {
        ids.par_iter()
            .map(|&i| load(data, i as usize, sign))
            .collect()
    } else {
        ids.iter().map(|&i| load(data, i as usize, sign)).collect()
    };
    Pass::Survivors(ids, vals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_head_count_keeps_every_front_row() {
        // A Weyl cloud twice over (so every front row has a duplicate, which no head row
        // may drop), one column minimized; each head count and level filters it, and the
        // survivors must hold the whole front.
        const D: usize = 3;
        let n = 4_000;
        let mut data: Vec<f64> = (0..n * D)
            .map(|k| ((k as f64) * 0.618_033_988_749_894_9).fract())
            .collect();
        data.copy_within(0..n / 2 * D, n / 2 * D);
        // A second cloud whose front is every copy of one top row (on every 7th row, so
        // the seeds are copies of it too): a head row that dropped rows equal to it would
        // lose the whole front.
        let mut top = data.clone();
        for row in top.chunks_exact_mut(D).step_by(7) {
            row.copy_from_slice(&[1.0, 0.0, 1.0]);
        }
        for data in [data, top] {
            check_heads(&data, n);
        }
    }

    #[test]
    fn small_front_is_exact_on_clouds_with_late_duplicates() {
        // Uniform clouds of 2,000 rows (so the loop runs 32 blocks, and the head rows of
        // largest sum are taken from earlier blocks), their second half a copy of the
        // first: every front row has a duplicate in a later block, which a head row must
        // not drop. A correlated variant keeps the front small.
        fn check<const D: usize>(correlated: bool, tops: bool) {
            let n = 2_000;
            // SplitMix64: consecutive xorshift outputs are too alike for a uniform cloud
            // (its 3-column front came out ten times too large).
            let mut state = 0x2545_f491_4f6c_dd1d_u64;
            let mut data: Vec<f64> = (0..n * D)
                .map(|_| {
                    state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                    let mut z = state;
                    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                    (z ^ (z >> 31)) as f64 / u64::MAX as f64
                })
                .collect();
            if correlated {
                for row in data.chunks_exact_mut(D) {
                    let base = row[0];
                    for x in &mut row[1..] {
                        *x = base + 0.1 * *x;
                    }
                    // Column 1 is minimized: correlated in the canonical (maximized) sense.
                    row[1] = -row[1];
                }
            }
            data.copy_within(0..n / 2 * D, n / 2 * D);
            if tops {
                // Every 7th row a copy of one row that dominates all others: the front is
                // all of its copies, nine or ten in each block (enough for four head rows).
                for row in data.chunks_exact_mut(D).step_by(7) {
                    for (j, x) in row.iter_mut().enumerate() {
                        *x = if j == 1 { -2.0 } else { 2.0 };
                    }
                }
            }
            let dirs: Vec<sweeper_goal::Direction> = (0..D)
                .map(|j| {
                    if j == 1 {
                        sweeper_goal::Direction::Minimize
                    } else {
                        sweeper_goal::Direction::Maximize
                    }
                })
                .collect();
            let sign: [f64; D] = std::array::from_fn(|j| dirs[j].sign());
            let want = crate::front::nondominated_brute_force(&data, D, &dirs).unwrap();
            assert!(want.len() > 4, "d = {D}: a front of {} rows", want.len());
            for level in SimdLevel::ALL {
                let got = small_front::<D>(level, &data, &sign, n);
                assert_eq!(
                    got.as_ref(),
                    Some(&want),
                    "d = {D}, correlated {correlated}, tops {tops}, {level:?}"
                );
            }
        }
        check::<2>(false, false);
        check::<3>(false, false);
        check::<3>(true, false);
        check::<4>(true, false);
        check::<5>(true, false);
        check::<3>(false, true);
        check::<5>(false, true);
    }

    fn check_heads(data: &[f64], n: usize) {
        const D: usize = 3;
        let dirs = [
            sweeper_goal::Direction::Maximize,
            sweeper_goal::Direction::Minimize,
            sweeper_goal::Direction::Maximize,
        ];
        let sign = dirs.map(sweeper_goal::Direction::sign);
        let front = crate::front::nondominated_brute_force(data, D, &dirs).unwrap();
        for level in SimdLevel::ALL {
            let seed = seed(data, n, &sign, level).unwrap().rows;
            for head in [1, 2, HEAD] {
                let stats = LocalStats::new(false);
                let job = Shared {
                    data,
                    sign: &sign,
                    seed: &seed,
                    cap: seed.len() + 16 * D,
                    stats: &stats,
                    level,
                    head,
                };
                let (ids, nan) = filter(level, &job, 0, n);
                assert!(!nan);
                assert!(ids.len() < n, "the pass dropped nothing");
                for &i in &front {
                    assert!(
                        ids.contains(&(i as u32)),
                        "front row {i} dropped ({level:?}, {head} head rows)"
                    );
                }
            }
        }
    }
}
