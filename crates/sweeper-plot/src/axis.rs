//! Axes: linear ones with "nice" steps (1, 2 or 5 times a power of ten, after Heckbert's
//! *Nice numbers for graph labels*, Graphics Gems, 1990) and logarithmic ones with ticks at
//! 1, 2, 5 (or every digit) times each power of ten; as many ticks as fit without their
//! labels overlapping.

/// The width of `text` at `size` pixels, estimated from `DejaVu Sans` advances (in ems):
/// digits and capitals about 0.64, lower case 0.56, spaces and punctuation 0.32, so that
/// labels are kept apart and legend text wraps before the edge.
pub(super) fn text_width(text: &str, size: f64) -> f64 {
    let ems: f64 = text
        .chars()
        .map(|c| {
            if c.is_ascii_digit() || c.is_uppercase() {
                0.64
            } else if c.is_alphabetic() {
                0.56
            } else if c == ' ' || c.is_ascii_punctuation() {
                if matches!(c, '_' | '=' | '+' | '<' | '>' | '~' | '%' | '&' | '@' | '#') {
                    0.7
                } else {
                    0.34
                }
            } else {
                0.84
            }
        })
        .sum();
    ems * size
}

/// One axis: its domain (data units), its scale and its labelled ticks.
#[derive(Debug, Clone)]
pub(super) struct Axis {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) log: bool,
    pub(super) ticks: Vec<f64>,
    pub(super) labels: Vec<String>,
}

impl Axis {
    /// An axis over the finite `values` with about `target` ticks; `log` asks for a
    /// logarithmic scale, which is only used when every value is positive. `integer` keeps
    /// a linear step whole (trial numbers).
    pub(super) fn fit(values: &[f64], target: f64, integer: bool, log: bool) -> Axis {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        if log && !finite.is_empty() && finite.iter().all(|&v| v > 0.0) {
            return Axis::fit_log(&finite, target);
        }
        Axis::fit_linear(&finite, target, integer)
    }

    fn fit_linear(values: &[f64], target: f64, integer: bool) -> Axis {
        let (lo, hi) = data_range(values);
        let mut step = nice((hi - lo) / (target - 1.0).max(1.0), true);
        if integer {
            step = step.max(1.0).round();
        }
        // Snap the domain out to the next tick when that wastes little room; else keep the
        // padded data range and label only the ticks inside it.
        let slack = 0.12 * (hi - lo);
        let floor = (lo / step).floor() * step;
        let ceil = (hi / step).ceil() * step;
        let lo = if lo - floor <= slack { floor } else { lo };
        let hi = if ceil - hi <= slack { ceil } else { hi };
        let ticks = linear_ticks(lo, hi, step);
        let labels = tick_labels(&ticks, step);
        Axis {
            lo,
            hi: if hi > lo { hi } else { lo + step },
            log: false,
            ticks,
            labels,
        }
    }

    fn fit_log(values: &[f64], target: f64) -> Axis {
        let (a, b) = values.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
        let (la, lb) = (a.log10(), b.log10());
        let pad = if lb - la < 1e-9 {
            0.3
        } else {
            0.05 * (lb - la)
        };
        let (lo, hi) = (10f64.powf(la - pad), 10f64.powf(lb + pad));
        let ticks = log_ticks(lo, hi, target);
        // once the ticks reach 10k, 1000 and up read as k too (5k, 10k, not 5000, 10k)
        let kilo = ticks.iter().any(|&t| t >= 1e4);
        let labels = ticks
            .iter()
            .map(|&v| {
                if kilo && (1e3..1e4).contains(&v) {
                    format!("{}k", compact(v / 1e3))
                } else {
                    compact(v)
                }
            })
            .collect();
        Axis {
            lo,
            hi,
            log: true,
            ticks,
            labels,
        }
    }

    /// A horizontal axis with as many ticks as fit `width` pixels without label overlap.
    pub(super) fn fit_width(
        values: &[f64],
        width: f64,
        integer: bool,
        log: bool,
        font: f64,
    ) -> Axis {
        let mut target = 10.0;
        loop {
            let axis = Axis::fit(values, target, integer, log);
            let widest = axis
                .labels
                .iter()
                .map(|l| text_width(l, font))
                .fold(0.0, f64::max);
            let room = width / axis.ticks.len().max(1) as f64;
            if widest + 14.0 <= room || target <= 3.0 {
                return axis;
            }
            target -= 1.0;
        }
    }

    /// Where `v` sits between the ends, 0 at `lo` and 1 at `hi`.
    pub(super) fn frac(&self, v: f64) -> f64 {
        if self.log {
            if v <= 0.0 {
                return 0.0;
            }
            (v.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }

    /// Whether `v` lies inside the domain.
    pub(super) fn contains(&self, v: f64) -> bool {
        v >= self.lo && v <= self.hi
    }
}

fn linear_ticks(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

/// Ticks of a log axis: the densest of 1–9, 1-2-5, 1-3 or 1 times each power of ten that
/// gives at most `target` ticks (whole decades thinned when even that is too many); a
/// domain too narrow to hold three such ticks gets linear nice ticks instead.
fn log_ticks(lo: f64, hi: f64, target: f64) -> Vec<f64> {
    let sets: [&[f64]; 4] = [
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
        &[1.0, 2.0, 5.0],
        &[1.0, 3.0],
        &[1.0],
    ];
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let within = |set: &[f64]| -> Vec<f64> {
        (first..=last)
            .flat_map(|e| set.iter().map(move |m| m * 10f64.powi(e)))
            .filter(|&v| v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9))
            .collect()
    };
    let densest = within(sets[0]);
    // within a factor of 8, evenly spaced values read better than 1-9 per decade
    if densest.len() < 3 || hi / lo < 8.0 {
        let step = nice((hi - lo) / (target - 1.0).max(1.0), true);
        return linear_ticks(lo, hi, step);
    }
    for set in sets {
        let ticks = within(set);
        if ticks.len() as f64 <= target.max(2.0) && ticks.len() >= 2 {
            return ticks;
        }
    }
    let decades = within(&[1.0]);
    let every = (decades.len() as f64 / target.max(2.0)).ceil().max(1.0) as usize;
    decades.into_iter().step_by(every).collect()
}

/// The range to show: the finite values, padded; from zero when the data sit near it.
fn data_range(values: &[f64]) -> (f64, f64) {
    let (mut lo, mut hi) = values
        .iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        return (0.0, 1.0);
    }
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        let pad = (lo.abs() * 0.1).max(1.0);
        return (lo - pad, hi + pad);
    }
    if lo >= 0.0 && lo <= 0.3 * hi {
        lo = 0.0;
    } else {
        lo -= 0.04 * (hi - lo);
    }
    hi += 0.04 * (hi - lo);
    (lo, hi)
}

/// The nice number near `x`: 1, 2, 5 or 10 times a power of ten (rounded or ceiled).
pub(super) fn nice(x: f64, round: bool) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return 1.0;
    }
    let exp = x.log10().floor();
    let base = 10f64.powf(exp);
    let f = x / base;
    let nf = if round {
        if f < 1.5 {
            1.0
        } else if f < 3.0 {
            2.0
        } else if f < 7.0 {
            5.0
        } else {
            10.0
        }
    } else if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nf * base
}

/// Labels with as many decimals as the step needs; thousands as `k`, millions as `M`.
fn tick_labels(ticks: &[f64], step: f64) -> Vec<String> {
    let top = ticks.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let (scale, suffix) = if top >= 1e6 && step >= 1e5 {
        (1e6, "M")
    } else if top >= 1e4 && step >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let scaled = step / scale;
    let decimals = if scaled >= 1.0 {
        0
    } else {
        (-scaled.log10().floor()) as usize
    };
    ticks
        .iter()
        .map(|&v| {
            let s = format!("{:.*}", decimals, v / scale);
            if s.trim_start_matches('-')
                .chars()
                .all(|c| c == '0' || c == '.')
            {
                "0".to_owned()
            } else {
                format!("{s}{suffix}")
            }
        })
        .collect()
}

/// A number in a few characters: at most 4 significant digits, thousands as `k` and
/// millions as `M` (`1323.9` → `1324`, `20000` → `20k`, `0.0712` → `0.0712`).
pub(super) fn compact(v: f64) -> String {
    if !v.is_finite() {
        return if v > 0.0 {
            "inf".into()
        } else if v < 0.0 {
            "-inf".into()
        } else {
            "NaN".into()
        };
    }
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let digits = if scaled == 0.0 {
        0
    } else {
        (3 - scaled.abs().log10().floor() as i32).clamp(0, 6) as usize
    };
    let mut s = format!("{scaled:.digits$}");
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" {
        s = "0".into();
    }
    format!("{s}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps() {
        assert_eq!(nice(0.13, true), 0.1);
        assert_eq!(nice(2.4, true), 2.0);
        assert_eq!(nice(4.0, true), 5.0);
        assert_eq!(nice(8.0, true), 10.0);
        assert_eq!(nice(340.0, true), 500.0);
        assert_eq!(nice(f64::NAN, true), 1.0);
    }

    #[test]
    fn axes_cover_the_data_with_round_ticks() {
        let a = Axis::fit(&[13.0, 1290.0], 6.0, false, false);
        assert_eq!(a.lo, 0.0);
        assert!(a.hi >= 1290.0);
        assert_eq!(a.labels.first().map(String::as_str), Some("0"));
        let b = Axis::fit(&[0.12, 0.31], 5.0, false, false);
        assert!(
            b.labels.iter().all(|l| l.starts_with("0.")),
            "{:?}",
            b.labels
        );
        let c = Axis::fit(&[20_000.0, 90_000.0], 5.0, false, false);
        assert!(
            c.labels.iter().all(|l| l == "0" || l.ends_with('k')),
            "{:?}",
            c.labels
        );
        let d = Axis::fit(&[5.0], 5.0, false, false);
        assert!(d.lo < 5.0 && d.hi > 5.0);
        let e = Axis::fit(&[-1.0, 1.0], 5.0, false, false);
        assert!(
            !e.labels.iter().any(|l| l == "-0" || l == "-0.0"),
            "{:?}",
            e.labels
        );
    }

    #[test]
    fn log_axes_tick_powers_of_ten_and_fall_back_when_narrow() {
        let a = Axis::fit(&[40.0, 600_000.0], 6.0, false, true);
        assert!(a.log && a.lo < 40.0 && a.hi > 600_000.0);
        assert_eq!(a.labels, ["100", "1k", "10k", "100k"], "{:?}", a.ticks);
        let b = Axis::fit(&[3.0, 80.0], 8.0, false, true);
        assert_eq!(b.labels, ["5", "10", "20", "50"]);
        // a narrow span keeps the log scale with linear nice ticks
        let c = Axis::fit(&[1000.0, 1300.0], 5.0, false, true);
        assert!(c.log && c.ticks.len() >= 2, "{:?}", c.ticks);
        assert!(c.ticks.iter().all(|&t| c.contains(t)));
        // zero or negative values: a linear axis
        assert!(!Axis::fit(&[0.0, 100.0], 5.0, false, true).log);
        let mid = Axis::fit(&[1.0, 100.0], 5.0, false, true);
        assert!((mid.frac(10.0) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn compact_numbers() {
        assert_eq!(compact(1323.9), "1324");
        assert_eq!(compact(20_000.0), "20k");
        assert_eq!(compact(600_000.0), "600k");
        assert_eq!(compact(2_500_000.0), "2.5M");
        assert_eq!(compact(0.0712), "0.0712");
        assert_eq!(compact(7.858), "7.858");
        assert_eq!(compact(0.0), "0");
        assert_eq!(compact(-3.5), "-3.5");
    }
}
