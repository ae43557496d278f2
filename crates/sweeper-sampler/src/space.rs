//! The search space, parameter values, and the internal encoding of a point.
//!
//! A *point* is what the algorithms work on: one coordinate per searched (non-constant)
//! parameter, in space order. A float coordinate is the position in `[0, 1]` (in log space
//! for a log-scaled float); an integer coordinate is the integer value itself; a discrete or
//! categorical coordinate is the index of the value. The model's *features* map a point into
//! the unit cube (categoricals one-hot), see [`Domain::features`].

use serde::{Deserialize, Serialize};

use crate::error::SamplerError;
use crate::rng::Rng;

/// One parameter's domain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ParamSpec {
    /// A real number in `[lo, hi]`, optionally searched on a log scale (`lo > 0`).
    Float {
        /// Lower bound, included.
        lo: f64,
        /// Upper bound, included.
        hi: f64,
        /// Search on a log scale.
        log: bool,
    },
    /// An integer in `[lo, hi]`, optionally searched on a log scale (`lo >= 1`).
    Int {
        /// Lower bound, included.
        lo: i64,
        /// Upper bound, included.
        hi: i64,
        /// Search on a log scale.
        log: bool,
    },
    /// One of a list of numbers; all integers decode as [`ParamValue::Int`].
    Discrete {
        /// The values, distinct and finite (positive when `log`).
        values: Vec<f64>,
        /// Model distances on a log scale.
        log: bool,
    },
    /// One of a list of strings, unordered.
    Categorical {
        /// The choices, distinct.
        choices: Vec<String>,
    },
}

/// An ordered list of named parameters.
///
/// A parameter with a single value is a constant: it is injected into every trial and not
/// searched. An empty space is valid (every trial holds only the constants).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchSpace {
    params: Vec<(String, ParamSpec)>,
}

impl SearchSpace {
    /// An empty space.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a parameter, checking its definition.
    pub fn add(&mut self, name: impl Into<String>, spec: ParamSpec) -> Result<(), SamplerError> {
        let name = name.into();
        if self.params.iter().any(|(n, _)| *n == name) {
            return Err(SamplerError::DuplicateParam { name });
        }
        if let Err(reason) = check_spec(&spec) {
            return Err(SamplerError::InvalidParam { name, reason });
        }
        self.params.push((name, spec));
        Ok(())
    }

    /// The parameters, in the order they were added.
    pub fn params(&self) -> &[(String, ParamSpec)] {
        &self.params
    }
}

fn check_spec(spec: &ParamSpec) -> Result<(), String> {
    match spec {
        ParamSpec::Float { lo, hi, log } => {
            if !lo.is_finite() || !hi.is_finite() {
                return Err(format!("bounds must be finite, got [{lo}, {hi}]"));
            }
            if lo > hi {
                return Err(format!("lower bound {lo} is above upper bound {hi}"));
            }
            if *log && *lo <= 0.0 {
                return Err(format!(
                    "a log scale needs a positive lower bound, got {lo}"
                ));
            }
        }
        ParamSpec::Int { lo, hi, log } => {
            if lo > hi {
                return Err(format!("lower bound {lo} is above upper bound {hi}"));
            }
            if *log && *lo < 1 {
                return Err(format!("a log scale needs a lower bound >= 1, got {lo}"));
            }
            if hi.abs_diff(*lo) > 1 << 52 {
                return Err("the range is wider than 2^52".to_owned());
            }
        }
        ParamSpec::Discrete { values, log } => {
            if values.is_empty() {
                return Err("no values".to_owned());
            }
            // by bit pattern (-0.0 read as 0.0, equal as numbers): linear in the values
            let mut seen = std::collections::HashSet::with_capacity(values.len());
            for v in values {
                if !v.is_finite() {
                    return Err(format!("value {v} is not finite"));
                }
                if *log && *v <= 0.0 {
                    return Err(format!("a log scale needs positive values, got {v}"));
                }
                if !seen.insert((v + 0.0).to_bits()) {
                    return Err(format!("value {v} is listed twice"));
                }
            }
        }
        ParamSpec::Categorical { choices } => {
            if choices.is_empty() {
                return Err("no choices".to_owned());
            }
            let mut seen = std::collections::HashSet::with_capacity(choices.len());
            for c in choices {
                if !seen.insert(c.as_str()) {
                    return Err(format!("choice `{c}` is listed twice"));
                }
            }
        }
    }
    Ok(())
}

/// A parameter's value in a trial, in its native type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ParamValue {
    /// A float, or a discrete value that is not an integer.
    Float(f64),
    /// An integer parameter, or a discrete parameter whose values are all integers.
    Int(i64),
    /// A categorical choice.
    Str(String),
}

impl ParamValue {
    /// The value as JSON: a number or a string.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            ParamValue::Float(x) => serde_json::Number::from_f64(*x)
                .map_or(serde_json::Value::Null, serde_json::Value::Number),
            ParamValue::Int(i) => serde_json::Value::from(*i),
            ParamValue::Str(s) => serde_json::Value::String(s.clone()),
        }
    }

    /// The value as a number; `None` for a categorical choice.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ParamValue::Float(x) => Some(*x),
            ParamValue::Int(i) => Some(*i as f64),
            ParamValue::Str(_) => None,
        }
    }
}

/// One searched dimension of the internal encoding.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Dim {
    /// Coordinate in `[0, 1]`.
    Float { lo: f64, hi: f64, log: bool },
    /// Coordinate is the integer value.
    Int { lo: i64, hi: i64, log: bool },
    /// Coordinate is the index; `feat` is each value's feature in `[0, 1]`.
    Discrete {
        values: Vec<f64>,
        feat: Vec<f64>,
        int: bool,
    },
    /// Coordinate is the index; one-hot features.
    Cat { choices: Vec<String> },
}

impl Dim {
    /// Number of distinct coordinates, `None` for a float.
    pub(crate) fn levels(&self) -> Option<u128> {
        match self {
            Dim::Float { .. } => None,
            Dim::Int { lo, hi, .. } => Some((hi - lo) as u128 + 1),
            Dim::Discrete { values, .. } => Some(values.len() as u128),
            Dim::Cat { choices } => Some(choices.len() as u128),
        }
    }

    fn n_features(&self) -> usize {
        match self {
            Dim::Cat { choices } => choices.len(),
            _ => 1,
        }
    }

    /// The coordinate at unit position `x` in `[0, 1)`: a float's unit coordinate, an
    /// integer uniform over its range (over its log range when `log`), a level's index.
    pub(crate) fn at_unit(&self, x: f64) -> f64 {
        match self {
            Dim::Float { .. } => x.clamp(0.0, 1.0),
            Dim::Int { lo, hi, log } => {
                let v = if *log {
                    // uniform over the log range, each integer owning its log interval
                    let a = (*lo as f64 - 0.5).max(0.5).ln();
                    let b = (*hi as f64 + 0.5).ln();
                    (a + x * (b - a)).exp().round()
                } else {
                    (*lo as f64 + (x * ((hi - lo) as f64 + 1.0)).floor()).round()
                };
                v.clamp(*lo as f64, *hi as f64)
            }
            Dim::Discrete { values, .. } => {
                ((x * values.len() as f64) as usize).min(values.len() - 1) as f64
            }
            Dim::Cat { choices } => {
                ((x * choices.len() as f64) as usize).min(choices.len() - 1) as f64
            }
        }
    }
}

fn int_feature(v: f64, lo: i64, hi: i64, log: bool) -> f64 {
    if hi == lo {
        return 0.5;
    }
    if log {
        (v.ln() - (lo as f64).ln()) / ((hi as f64).ln() - (lo as f64).ln())
    } else {
        (v - lo as f64) / (hi - lo) as f64
    }
}

/// The searched dimensions and the constants of a space.
#[derive(Debug, Clone)]
pub(crate) struct Domain {
    /// `(index in the space, dimension)` for each searched parameter.
    pub(crate) dims: Vec<(usize, Dim)>,
    /// `(index in the space, value)` for each constant.
    consts: Vec<(usize, ParamValue)>,
    names: Vec<String>,
    n_features: usize,
}

/// Probability that a mutated float coordinate snaps to each of its bounds.
const SNAP: f64 = 0.08;

/// Tolerance under which two float coordinates count as the same point.
const SAME_FLOAT: f64 = 1e-9;

fn discrete_value(v: f64, int: bool) -> ParamValue {
    if int {
        ParamValue::Int(v as i64)
    } else {
        ParamValue::Float(v)
    }
}

impl Domain {
    pub(crate) fn new(space: &SearchSpace) -> Self {
        let mut dims = Vec::new();
        let mut consts = Vec::new();
        for (i, (_, spec)) in space.params.iter().enumerate() {
            match spec {
                ParamSpec::Float { lo, hi, log } => {
                    if lo == hi {
                        consts.push((i, ParamValue::Float(*lo)));
                    } else {
                        dims.push((
                            i,
                            Dim::Float {
                                lo: *lo,
                                hi: *hi,
                                log: *log,
                            },
                        ));
                    }
                }
                ParamSpec::Int { lo, hi, log } => {
                    if lo == hi {
                        consts.push((i, ParamValue::Int(*lo)));
                    } else {
                        dims.push((
                            i,
                            Dim::Int {
                                lo: *lo,
                                hi: *hi,
                                log: *log,
                            },
                        ));
                    }
                }
                ParamSpec::Discrete { values, log } => {
                    let int = values.iter().all(|v| v.fract() == 0.0 && v.abs() < 9.0e15);
                    if values.len() == 1 {
                        consts.push((i, discrete_value(values[0], int)));
                        continue;
                    }
                    let tr = |v: f64| if *log { v.ln() } else { v };
                    let lo = values.iter().copied().map(tr).fold(f64::INFINITY, f64::min);
                    let hi = values
                        .iter()
                        .copied()
                        .map(tr)
                        .fold(f64::NEG_INFINITY, f64::max);
                    let feat = values.iter().map(|&v| (tr(v) - lo) / (hi - lo)).collect();
                    dims.push((
                        i,
                        Dim::Discrete {
                            values: values.clone(),
                            feat,
                            int,
                        },
                    ));
                }
                ParamSpec::Categorical { choices } => {
                    if choices.len() == 1 {
                        consts.push((i, ParamValue::Str(choices[0].clone())));
                    } else {
                        dims.push((
                            i,
                            Dim::Cat {
                                choices: choices.clone(),
                            },
                        ));
                    }
                }
            }
        }
        let n_features = dims.iter().map(|(_, d)| d.n_features()).sum();
        Domain {
            dims,
            consts,
            names: space.params.iter().map(|(n, _)| n.clone()).collect(),
            n_features,
        }
    }

    /// Number of searched parameters (coordinates of a point).
    pub(crate) fn len(&self) -> usize {
        self.dims.len()
    }

    /// Number of model features of a point.
    pub(crate) fn n_features(&self) -> usize {
        self.n_features
    }

    /// Number of points of a space without a searched float, `None` when it has one.
    pub(crate) fn cardinality(&self) -> Option<u128> {
        self.dims.iter().try_fold(1u128, |acc, (_, d)| {
            d.levels().map(|l| acc.saturating_mul(l))
        })
    }

    /// Number of combinations of the non-float coordinates.
    pub(crate) fn discrete_cardinality(&self) -> u128 {
        self.dims
            .iter()
            .filter_map(|(_, d)| d.levels())
            .fold(1u128, u128::saturating_mul)
    }

    /// The `k`-th combination of the non-float coordinates (mixed radix, last fastest);
    /// float coordinates are left at `fill`.
    pub(crate) fn discrete_combo(&self, mut k: u128, fill: f64) -> Vec<f64> {
        let mut p = vec![fill; self.dims.len()];
        for (j, (_, d)) in self.dims.iter().enumerate().rev() {
            if let Some(l) = d.levels() {
                let idx = (k % l) as i64;
                k /= l;
                p[j] = match d {
                    Dim::Int { lo, .. } => (lo + idx) as f64,
                    _ => idx as f64,
                };
            }
        }
        p
    }

    /// The trial parameters of a point, in space order, constants included.
    pub(crate) fn decode(&self, point: &[f64]) -> Vec<(String, ParamValue)> {
        let mut out: Vec<Option<ParamValue>> = vec![None; self.names.len()];
        for (i, v) in &self.consts {
            out[*i] = Some(v.clone());
        }
        for ((i, d), &c) in self.dims.iter().zip(point) {
            out[*i] = Some(match d {
                Dim::Float { lo, hi, log } => {
                    let u = c.clamp(0.0, 1.0);
                    let v = if *log {
                        (lo.ln() + u * (hi.ln() - lo.ln())).exp()
                    } else {
                        lo + u * (hi - lo)
                    };
                    ParamValue::Float(v.clamp(*lo, *hi))
                }
                Dim::Int { .. } => ParamValue::Int(c as i64),
                Dim::Discrete { values, int, .. } => discrete_value(values[c as usize], *int),
                Dim::Cat { choices } => ParamValue::Str(choices[c as usize].clone()),
            });
        }
        self.names
            .iter()
            .cloned()
            .zip(out.into_iter().map(|v| v.unwrap_or(ParamValue::Int(0))))
            .collect()
    }

    /// Writes the model features of `point` into `out` (length [`Self::n_features`]).
    pub(crate) fn features(&self, point: &[f64], out: &mut [f64]) {
        let mut k = 0;
        for ((_, d), &c) in self.dims.iter().zip(point) {
            match d {
                Dim::Float { .. } => {
                    out[k] = c;
                    k += 1;
                }
                Dim::Int { lo, hi, log } => {
                    out[k] = int_feature(c, *lo, *hi, *log);
                    k += 1;
                }
                Dim::Discrete { feat, .. } => {
                    out[k] = feat[c as usize];
                    k += 1;
                }
                Dim::Cat { choices } => {
                    for j in 0..choices.len() {
                        out[k + j] = if j == c as usize { 1.0 } else { 0.0 };
                    }
                    k += choices.len();
                }
            }
        }
    }

    /// Features of many points, row-major.
    pub(crate) fn features_of(&self, points: &[Vec<f64>]) -> Vec<f64> {
        let d = self.n_features;
        let mut out = vec![0.0; points.len() * d];
        for (p, row) in points.iter().zip(out.chunks_exact_mut(d.max(1))) {
            self.features(p, row);
        }
        out
    }

    /// The point at unit-cube position `u` (one number in `[0, 1)` per coordinate).
    pub(crate) fn at_unit(&self, u: &[f64]) -> Vec<f64> {
        self.dims
            .iter()
            .zip(u)
            .map(|((_, d), &x)| d.at_unit(x))
            .collect()
    }

    /// A uniformly random point.
    pub(crate) fn random(&self, rng: &mut Rng) -> Vec<f64> {
        let u: Vec<f64> = (0..self.dims.len()).map(|_| rng.uniform()).collect();
        self.at_unit(&u)
    }

    /// Whether `point` is a point of this domain (right length, coordinates in range).
    pub(crate) fn contains(&self, point: &[f64]) -> bool {
        point.len() == self.dims.len()
            && self.dims.iter().zip(point).all(|((_, d), &c)| match d {
                Dim::Float { .. } => (0.0..=1.0).contains(&c),
                Dim::Int { lo, hi, .. } => {
                    c.fract() == 0.0 && (*lo as f64..=*hi as f64).contains(&c)
                }
                Dim::Discrete { values, .. } => {
                    c.fract() == 0.0 && c >= 0.0 && (c as usize) < values.len()
                }
                Dim::Cat { choices } => {
                    c.fract() == 0.0 && c >= 0.0 && (c as usize) < choices.len()
                }
            })
    }

    /// Whether two points are the same trial (floats within a tiny tolerance).
    pub(crate) fn same(&self, a: &[f64], b: &[f64]) -> bool {
        self.dims
            .iter()
            .zip(a.iter().zip(b))
            .all(|((_, d), (x, y))| match d {
                Dim::Float { .. } => (x - y).abs() <= SAME_FLOAT,
                _ => x == y,
            })
    }

    /// The point a trial's parameter values came from (inverse of [`Self::decode`]).
    #[cfg(test)]
    pub(crate) fn encode(&self, params: &[(String, ParamValue)]) -> Option<Vec<f64>> {
        self.dims
            .iter()
            .map(|(i, d)| {
                let v = &params.get(*i)?.1;
                Some(match (d, v) {
                    (Dim::Float { lo, hi, log }, ParamValue::Float(x)) => {
                        if *log {
                            (x.ln() - lo.ln()) / (hi.ln() - lo.ln())
                        } else {
                            (x - lo) / (hi - lo)
                        }
                    }
                    (Dim::Int { .. }, ParamValue::Int(x)) => *x as f64,
                    (Dim::Discrete { values, .. }, v) => {
                        let x = v.as_f64()?;
                        values.iter().position(|w| *w == x)? as f64
                    }
                    (Dim::Cat { choices }, ParamValue::Str(s)) => {
                        choices.iter().position(|c| c == s)? as f64
                    }
                    _ => return None,
                })
            })
            .collect()
    }

    /// A random neighbour of `point`: each coordinate changes with probability `1/len`
    /// (at least one changes); floats move by a Gaussian step of scale `scale` and
    /// sometimes snap to a bound, so that optima on the boundary are reachable.
    pub(crate) fn mutate(&self, point: &[f64], scale: f64, rng: &mut Rng) -> Vec<f64> {
        let n = self.dims.len();
        let mut p = point.to_vec();
        if n == 0 {
            return p;
        }
        let forced = rng.below(n);
        for (j, (_, d)) in self.dims.iter().enumerate() {
            if j != forced && rng.uniform() * n as f64 >= 1.0 {
                continue;
            }
            p[j] = match d {
                Dim::Float { .. } => {
                    let r = rng.uniform();
                    if r < SNAP {
                        0.0
                    } else if r < 2.0 * SNAP {
                        1.0
                    } else {
                        (p[j] + scale * rng.normal()).clamp(0.0, 1.0)
                    }
                }
                Dim::Int { lo, hi, .. } => {
                    let span = (hi - lo) as f64;
                    let step = (scale * span * rng.normal()).round();
                    let step = if step == 0.0 {
                        if rng.uniform() < 0.5 { -1.0 } else { 1.0 }
                    } else {
                        step
                    };
                    (p[j] + step).clamp(*lo as f64, *hi as f64)
                }
                Dim::Discrete { values, .. } => {
                    let k = values.len();
                    if rng.uniform() < 0.5 {
                        let step = if rng.uniform() < 0.5 { -1.0 } else { 1.0 };
                        (p[j] + step).clamp(0.0, (k - 1) as f64)
                    } else {
                        rng.below(k) as f64
                    }
                }
                Dim::Cat { choices } => rng.below(choices.len()) as f64,
            };
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space() -> SearchSpace {
        let mut s = SearchSpace::new();
        s.add(
            "lr",
            ParamSpec::Float {
                lo: 1e-4,
                hi: 1e-1,
                log: true,
            },
        )
        .unwrap();
        s.add(
            "n",
            ParamSpec::Int {
                lo: 1,
                hi: 8,
                log: false,
            },
        )
        .unwrap();
        s.add(
            "tp",
            ParamSpec::Discrete {
                values: vec![1.0, 2.0, 4.0],
                log: true,
            },
        )
        .unwrap();
        s.add(
            "r",
            ParamSpec::Categorical {
                choices: vec!["a".into(), "b".into()],
            },
        )
        .unwrap();
        s.add(
            "c",
            ParamSpec::Categorical {
                choices: vec!["only".into()],
            },
        )
        .unwrap();
        s
    }

    #[test]
    fn encode_decode_round_trip_and_features_in_unit_cube() {
        let d = Domain::new(&space());
        assert_eq!(d.len(), 4);
        assert_eq!(d.n_features(), 5);
        let mut rng = Rng::new(1, 2);
        for _ in 0..200 {
            let p = d.random(&mut rng);
            let params = d.decode(&p);
            assert_eq!(params.len(), 5);
            assert_eq!(params[4].1, ParamValue::Str("only".into()));
            assert!(matches!(params[1].1, ParamValue::Int(1..=8)));
            assert!(matches!(params[2].1, ParamValue::Int(1 | 2 | 4)));
            let back = d.encode(&params).unwrap();
            assert!(d.same(&p, &back), "{p:?} vs {back:?}");
            let mut f = vec![0.0; d.n_features()];
            d.features(&p, &mut f);
            assert!(f.iter().all(|x| (0.0..=1.0).contains(x)));
            let m = d.mutate(&p, 0.1, &mut rng);
            assert!(d.encode(&d.decode(&m)).is_some());
        }
    }

    #[test]
    fn invalid_specs_are_rejected() {
        let mut s = SearchSpace::new();
        let bad = [
            ParamSpec::Float {
                lo: 1.0,
                hi: 0.0,
                log: false,
            },
            ParamSpec::Float {
                lo: 0.0,
                hi: 1.0,
                log: true,
            },
            ParamSpec::Float {
                lo: f64::NAN,
                hi: 1.0,
                log: false,
            },
            ParamSpec::Int {
                lo: 0,
                hi: 4,
                log: true,
            },
            ParamSpec::Discrete {
                values: vec![],
                log: false,
            },
            ParamSpec::Discrete {
                values: vec![1.0, 1.0],
                log: false,
            },
            ParamSpec::Categorical { choices: vec![] },
        ];
        for spec in bad {
            assert!(matches!(
                s.add("x", spec),
                Err(SamplerError::InvalidParam { .. })
            ));
        }
        s.add(
            "x",
            ParamSpec::Int {
                lo: 0,
                hi: 4,
                log: false,
            },
        )
        .unwrap();
        assert_eq!(
            s.add(
                "x",
                ParamSpec::Int {
                    lo: 0,
                    hi: 4,
                    log: false
                }
            ),
            Err(SamplerError::DuplicateParam { name: "x".into() })
        );
    }

    #[test]
    fn cardinality_and_combos() {
        let mut s = SearchSpace::new();
        s.add(
            "a",
            ParamSpec::Int {
                lo: 3,
                hi: 5,
                log: false,
            },
        )
        .unwrap();
        s.add(
            "b",
            ParamSpec::Categorical {
                choices: vec!["x".into(), "y".into()],
            },
        )
        .unwrap();
        let d = Domain::new(&s);
        assert_eq!(d.cardinality(), Some(6));
        let combos: Vec<Vec<f64>> = (0..6).map(|k| d.discrete_combo(k, 0.0)).collect();
        assert_eq!(combos[0], vec![3.0, 0.0]);
        assert_eq!(combos[5], vec![5.0, 1.0]);
    }
}
