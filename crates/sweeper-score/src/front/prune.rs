//! The linear pre-pass: drops rows dominated by a few strong rows before any sort.
//!
//! A strided sample of the input gives its own front (exact, small); those rows, strongest
//! first, seed a window against which every input row is tested in one pass over the raw
//! data (signs applied on the fly, NaN noticed on the way). Rows the window dominates are
//! dropped; the others survive and, while the window has room, join it (a block-nested-loop
//! filter with move-to-front, as in Börzsönyi, Kossmann and Stocker's skyline operator,
//! ICDE 2001, seeded and capped so that it stays linear). Dropping only rows dominated by a
//! real row keeps the front of the survivors equal to the front of the input.

use rayon::prelude::*;

use super::kd::dom;

/// Rows per parallel task of the pass, at most (small inputs get smaller tasks, so that
/// the tests reach the multi-task path too).
const CHUNK: usize = 1 << 14;
/// Seed rows per column.
const SEED_MAX: usize = 16;
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

/// The seed window: the front of a strided sample, strongest first (by the number of
/// sample rows each dominates). `None` when the sample holds a NaN.
fn seed<const D: usize>(data: &[f64], n: usize, sign: &[f64; D]) -> Option<Vec<[f64; D]>> {
    let m = (n / 16).clamp(1, 2048);
    let stride = n / m;
    let sample: Vec<[f64; D]> = (0..m).map(|k| load(data, k * stride, sign)).collect();
    if sample.iter().flatten().any(|x| x.is_nan()) {
        return None;
    }
    let keep = super::exact::<D>(&sample, false);
    let mut front: Vec<(usize, [f64; D])> = sample
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(p, _)| (sample.iter().filter(|s| dom(p, s)).count(), *p))
        .collect();
    front.sort_by_key(|f| std::cmp::Reverse(f.0));
    Some(
        front
            .into_iter()
            .take(SEED_MAX * D)
            .map(|(_, p)| p)
            .collect(),
    )
}

/// Filters rows `a..b`: survivors ascending and whether a NaN was seen. When more than
/// half of the first rows survive, the rest is kept without testing (the front is large;
/// the exact kernel does better than a window then).
fn filter<const D: usize>(
    data: &[f64],
    a: usize,
    b: usize,
    sign: &[f64; D],
    seed: &[[f64; D]],
    cap: usize,
) -> (Vec<u32>, bool) {
    let mut window: Vec<[f64; D]> = seed.to_vec();
    let mut ids = Vec::new();
    let mut nan = false;
    let probe = PROBE.min((b - a) / 4).max(1);
    let mut i = a;
    while i < b {
        if i == a + probe && ids.len() * 2 > probe {
            ids.extend(i as u32..b as u32);
            nan |= data[i * D..b * D].iter().any(|x| x.is_nan());
            break;
        }
        let p = load(data, i, sign);
        nan |= p.iter().any(|x| x.is_nan());
        match window.iter().position(|w| dom(w, &p)) {
            Some(0) => {}
            Some(k) => window[..=k].rotate_right(1),
            None => {
                ids.push(i as u32);
                if window.len() < cap {
                    window.push(p);
                }
            }
        }
        i += 1;
    }
    (ids, nan)
}

/// One pass over raw `data` (n rows of D), in parallel when `par`.
pub(crate) fn pass<const D: usize>(data: &[f64], sign: &[f64; D], par: bool) -> Pass<D> {
    let n = data.len() / D;
    let Some(seed) = seed(data, n, sign) else {
        return Pass::Nan;
    };
    let cap = seed.len() + 64 * D;
    let chunk = (n / 64).clamp(256, CHUNK);
    let parts: Vec<(Vec<u32>, bool)> = if par {
        (0..n.div_ceil(chunk))
            .into_par_iter()
            .map(|c| filter(data, c * chunk, ((c + 1) * chunk).min(n), sign, &seed, cap))
            .collect()
    } else {
        vec![filter(data, 0, n, sign, &seed, cap)]
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
    let vals: Vec<[f64; D]> = if par {
        ids.par_iter()
            .map(|&i| load(data, i as usize, sign))
            .collect()
    } else {
        ids.iter().map(|&i| load(data, i as usize, sign)).collect()
    };
    Pass::Survivors(ids, vals)
}
