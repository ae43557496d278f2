//! Colours, sizes and the colouring of points by a parameter, shared by every chart.

use crate::{Chart, Outcome, Param, PlotPoint};
use std::collections::HashMap;

pub(crate) const GREY: &str = "#8a9096";
pub(crate) const FRONT: &str = "#d1495b";
pub(crate) const BEST: &str = "#1f6fb2";
pub(crate) const GRID: &str = "#e6e6e6";
pub(crate) const SLA: &str = "#c2410c";
pub(crate) const TICK_FONT: f64 = 12.0;
pub(crate) const LABEL_FONT: f64 = 13.0;
pub(crate) const LEGEND_FONT: f64 = 12.0;
/// The size of a point's label.
pub(crate) const LABEL_SIZE: f64 = 10.5;
/// Height of the title and subtitle.
pub(crate) const HEADER: f64 = 62.0;
/// Width of the legend column right of a single panel.
pub(crate) const LEGEND_W: f64 = 260.0;
/// Height of the strip of marks of trials that have no place on the axes.
pub(crate) const STRIP: f64 = 30.0;
/// Colours of categories, in order of first appearance.
pub(crate) const PALETTE: [&str; 10] = [
    "#2b6cb0", "#dd6b20", "#2f855a", "#b83280", "#6b46c1", "#c53030", "#0987a0", "#975a16",
    "#4a5568", "#b7791f",
];
/// A sequential ramp (dark blue → teal → yellow) for numeric colours with many values.
pub(crate) const RAMP: [(f64, [f64; 3]); 3] = [
    (0.0, [44.0, 62.0, 158.0]),
    (0.5, [31.0, 161.0, 135.0]),
    (1.0, [222.0, 190.0, 30.0]),
];
/// More distinct numeric values than this are coloured on the ramp, not as categories.
pub(crate) const MAX_CATEGORIES: usize = 10;

/// A rectangle in pixels.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rect {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) w: f64,
    pub(crate) h: f64,
}

/// Colours of points by one parameter.
pub(crate) enum Colorer {
    /// No colouring: every candidate grey.
    Off,
    /// The parameter is in no point.
    Missing(String),
    /// One colour per value (text, or few numbers), with each value's count.
    Categories {
        key: String,
        values: Vec<(String, &'static str, usize)>,
        /// Each value's colour, to look a point's up at once.
        colour_of: HashMap<String, &'static str>,
    },
    /// Numbers on a ramp from `lo` to `hi`.
    Ramp { key: String, lo: f64, hi: f64 },
}

impl Colorer {
    pub(crate) fn new(chart: &Chart, key: Option<&str>) -> Colorer {
        let Some(key) = key else {
            return Colorer::Off;
        };
        let found: Vec<&Param> = chart
            .points
            .iter()
            .filter(|p| p.outcome == Outcome::Feasible)
            .filter_map(|p| p.param(key))
            .collect();
        if found.is_empty() {
            return Colorer::Missing(key.to_owned());
        }
        let numbers: Vec<f64> = found
            .iter()
            .filter_map(|p| match p {
                Param::Number(v) if v.is_finite() => Some(*v),
                _ => None,
            })
            .collect();
        // Each distinct text once, in the order first met, with how many points have it:
        // one hash look-up per point, so that many distinct values stay linear.
        let mut count_of: HashMap<String, usize> = HashMap::new();
        let mut distinct: Vec<String> = Vec::new();
        for p in &found {
            let t = p.text();
            if let Some(n) = count_of.get_mut(&t) {
                *n += 1;
            } else {
                count_of.insert(t.clone(), 1);
                distinct.push(t);
            }
        }
        if numbers.len() == found.len() && distinct.len() > MAX_CATEGORIES {
            let lo = numbers.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = numbers.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            return Colorer::Ramp {
                key: key.to_owned(),
                lo,
                hi,
            };
        }
        if numbers.len() == found.len() {
            distinct.sort_by(|a, b| {
                let n = |s: &str| s.parse::<f64>().unwrap_or(f64::NAN);
                n(a).total_cmp(&n(b))
            });
        }
        let values: Vec<(String, &'static str, usize)> = distinct
            .into_iter()
            .enumerate()
            .map(|(i, t)| {
                let n = count_of.get(&t).copied().unwrap_or(0);
                // beyond the palette, the rest share grey
                (t, PALETTE.get(i).copied().unwrap_or(GREY), n)
            })
            .collect();
        let colour_of = values.iter().map(|(t, c, _)| (t.clone(), *c)).collect();
        Colorer::Categories {
            key: key.to_owned(),
            values,
            colour_of,
        }
    }

    /// The fill of a feasible point: its value's colour, `default` when uncoloured.
    pub(crate) fn color(&self, p: &PlotPoint, default: &str) -> String {
        let Some(v) = (match self {
            Colorer::Categories { key, .. } | Colorer::Ramp { key, .. } => p.param(key),
            _ => None,
        }) else {
            return default.to_owned();
        };
        match self {
            Colorer::Categories { colour_of, .. } => {
                (*colour_of.get(&v.text()).unwrap_or(&GREY)).to_owned()
            }
            Colorer::Ramp { lo, hi, .. } => match v {
                Param::Number(x) if x.is_finite() => {
                    ramp(if hi > lo { (x - lo) / (hi - lo) } else { 0.5 })
                }
                _ => GREY.to_owned(),
            },
            _ => default.to_owned(),
        }
    }

    pub(crate) fn active(&self) -> bool {
        matches!(self, Colorer::Categories { .. } | Colorer::Ramp { .. })
    }
}

/// The ramp's colour at `t` in [0, 1].
pub(crate) fn ramp(t: f64) -> String {
    let t = t.clamp(0.0, 1.0);
    let k = RAMP.windows(2).position(|w| t <= w[1].0).unwrap_or(0);
    let ((t0, a), (t1, b)) = (RAMP[k], RAMP[k + 1]);
    let u = (t - t0) / (t1 - t0);
    let c: Vec<u8> = (0..3)
        .map(|i| (a[i] + (b[i] - a[i]) * u).round().clamp(0.0, 255.0) as u8)
        .collect();
    format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
}
