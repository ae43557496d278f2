//! A benchmark problem read from a table: every point of a finite search space with its
//! metrics, or `null` when infeasible (the format `benches/peers/aic_space.py` writes).
//!
//! ```json
//! {"name": "...", "source": "...",
//!  "params": [{"name": "tp", "type": "discrete", "values": [1, 2], "log": true},
//!             {"name": "replicas", "type": "int", "lo": 1, "hi": 8, "log": false},
//!             {"name": "router", "type": "categorical", "choices": ["rr", "kv"]}],
//!  "metrics": [{"name": "tok_s_gpu", "direction": "maximize"}],
//!  "rows": [{"params": {"tp": 1, "replicas": 1, "router": "rr"}, "metrics": {"tok_s_gpu": 812.0}},
//!           {"params": {"tp": 2, "replicas": 8, "router": "kv"}, "metrics": null}]}
//! ```
//!
//! Every point of the product of the parameters has exactly one row (a `float` parameter's
//! grid is the values its rows use). A trial is looked up exactly: numbers compare as
//! numbers (an `int` 8 is the discrete 8.0), choices by name. The hypervolume space
//! minimizes every metric scaled to `[0, 1]` by the feasible rows' range (0 = best), against
//! the reference 1.1 in every coordinate.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, anyhow, bail, ensure};
use serde_json::{Map, Value};
use sweeper_goal::{Direction, SamplerMetric};
use sweeper_sampler::{ParamSpec, ParamValue, SearchSpace};

use super::problems::hypervolume;

/// One coordinate of a point's canonical form: a number by its bits (`-0` as `0`), a
/// choice by its index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Coord {
    Num(u64),
    Choice(usize),
}

fn num(x: f64) -> Coord {
    Coord::Num(if x == 0.0 { 0.0f64 } else { x }.to_bits())
}

/// A tabulated problem.
pub(super) struct Table {
    /// The table's `name`.
    pub(super) name: String,
    /// Where its rows come from.
    pub(super) source: String,
    space: SearchSpace,
    metrics: Vec<SamplerMetric>,
    /// Canonical point → metric values in `metrics` order, `None` when infeasible.
    rows: HashMap<Vec<Coord>, Option<Vec<f64>>>,
    /// Per metric, the feasible rows' `(min, max)`.
    bounds: Vec<(f64, f64)>,
    true_hv: f64,
}

fn keys_of<'a>(v: &'a Value, at: &str) -> anyhow::Result<&'a Map<String, Value>> {
    v.as_object()
        .ok_or_else(|| anyhow!("{at}: expected an object, got {}", kind(v)))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Fails on a key outside `allowed`.
fn only(obj: &Map<String, Value>, allowed: &[&str], at: &str) -> anyhow::Result<()> {
    for k in obj.keys() {
        ensure!(
            allowed.contains(&k.as_str()),
            "{at}: unknown key `{k}` (expected {})",
            allowed
                .iter()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}

fn field<'a>(obj: &'a Map<String, Value>, key: &str, at: &str) -> anyhow::Result<&'a Value> {
    obj.get(key)
        .ok_or_else(|| anyhow!("{at}: missing key `{key}`"))
}

fn string(obj: &Map<String, Value>, key: &str, at: &str) -> anyhow::Result<String> {
    let v = field(obj, key, at)?;
    v.as_str()
        .map(str::to_owned)
        .ok_or_else(|| anyhow!("{at}.{key}: expected a string, got {}", kind(v)))
}

fn array<'a>(obj: &'a Map<String, Value>, key: &str, at: &str) -> anyhow::Result<&'a [Value]> {
    let v = field(obj, key, at)?;
    v.as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| anyhow!("{at}.{key}: expected an array, got {}", kind(v)))
}

fn finite(v: &Value, at: &str) -> anyhow::Result<f64> {
    let x = v
        .as_f64()
        .ok_or_else(|| anyhow!("{at}: expected a number, got {}", kind(v)))?;
    ensure!(x.is_finite(), "{at}: {x} is not finite");
    Ok(x)
}

fn integer(obj: &Map<String, Value>, key: &str, at: &str) -> anyhow::Result<i64> {
    let v = field(obj, key, at)?;
    v.as_i64()
        .ok_or_else(|| anyhow!("{at}.{key}: expected an integer, got {v}"))
}

fn log_flag(obj: &Map<String, Value>, at: &str) -> anyhow::Result<bool> {
    match obj.get("log") {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => bail!("{at}.log: expected a boolean, got {}", kind(v)),
    }
}

fn param_spec(v: &Value, at: &str) -> anyhow::Result<(String, ParamSpec)> {
    let obj = keys_of(v, at)?;
    let name = string(obj, "name", at)?;
    let at = format!("{at} (`{name}`)");
    let ty = string(obj, "type", &at)?;
    let spec = match ty.as_str() {
        "discrete" => {
            only(obj, &["name", "type", "values", "log"], &at)?;
            let values = array(obj, "values", &at)?
                .iter()
                .enumerate()
                .map(|(i, x)| finite(x, &format!("{at}.values[{i}]")))
                .collect::<anyhow::Result<_>>()?;
            ParamSpec::Discrete {
                values,
                log: log_flag(obj, &at)?,
            }
        }
        "int" => {
            only(obj, &["name", "type", "lo", "hi", "log"], &at)?;
            ParamSpec::Int {
                lo: integer(obj, "lo", &at)?,
                hi: integer(obj, "hi", &at)?,
                log: log_flag(obj, &at)?,
            }
        }
        "float" => {
            only(obj, &["name", "type", "lo", "hi", "log"], &at)?;
            ParamSpec::Float {
                lo: finite(field(obj, "lo", &at)?, &format!("{at}.lo"))?,
                hi: finite(field(obj, "hi", &at)?, &format!("{at}.hi"))?,
                log: log_flag(obj, &at)?,
            }
        }
        "categorical" => {
            only(obj, &["name", "type", "choices"], &at)?;
            let choices = array(obj, "choices", &at)?
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    c.as_str().map(str::to_owned).ok_or_else(|| {
                        anyhow!("{at}.choices[{i}]: expected a string, got {}", kind(c))
                    })
                })
                .collect::<anyhow::Result<_>>()?;
            ParamSpec::Categorical { choices }
        }
        other => bail!(
            "{at}.type: unknown type `{other}` (expected `discrete`, `int`, `float` or `categorical`)"
        ),
    };
    Ok((name, spec))
}

/// The coordinate of `x` on `spec`'s grid, or why it is off the grid.
fn coord_of_number(spec: &ParamSpec, x: f64) -> Result<Coord, String> {
    match spec {
        ParamSpec::Discrete { values, .. } => {
            if values.contains(&x) {
                Ok(num(x))
            } else {
                Err(format!("{x} is not one of the values {values:?}"))
            }
        }
        ParamSpec::Int { lo, hi, .. } => {
            if x.fract() != 0.0 {
                Err(format!("{x} is not an integer"))
            } else if x < *lo as f64 || x > *hi as f64 {
                Err(format!("{x} is outside [{lo}, {hi}]"))
            } else {
                Ok(num(x))
            }
        }
        ParamSpec::Float { lo, hi, .. } => {
            if x.is_finite() && x >= *lo && x <= *hi {
                Ok(num(x))
            } else {
                Err(format!("{x} is outside [{lo}, {hi}]"))
            }
        }
        ParamSpec::Categorical { .. } => Err(format!("expected a choice, got the number {x}")),
        other => Err(format!("a parameter kind tables do not know: {other:?}")),
    }
}

fn coord_of_choice(spec: &ParamSpec, s: &str) -> Result<Coord, String> {
    match spec {
        ParamSpec::Categorical { choices } => choices
            .iter()
            .position(|c| c == s)
            .map(Coord::Choice)
            .ok_or_else(|| format!("`{s}` is not one of the choices {choices:?}")),
        _ => Err(format!("expected a number, got the string `{s}`")),
    }
}

/// A point's text for messages: `tp=1, router=rr`.
fn describe(space: &SearchSpace, key: &[Coord]) -> String {
    let mut out = String::new();
    for ((name, spec), c) in space.params().iter().zip(key) {
        if !out.is_empty() {
            out.push_str(", ");
        }
        match (c, spec) {
            (Coord::Num(bits), _) => write!(out, "{name}={}", f64::from_bits(*bits)),
            (Coord::Choice(i), ParamSpec::Categorical { choices }) => {
                write!(out, "{name}={}", choices[*i])
            }
            (Coord::Choice(i), _) => write!(out, "{name}=#{i}"),
        }
        .expect("writing to a String");
    }
    out
}

impl Table {
    /// Reads and checks a table file.
    pub(super) fn load(path: &Path) -> anyhow::Result<Table> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the table {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("table {}", path.display()))
    }

    /// Parses and checks a table's JSON text.
    fn parse(text: &str) -> anyhow::Result<Table> {
        let root: Value = serde_json::from_str(text).context("not valid JSON")?;
        let top = keys_of(&root, "top level")?;
        only(
            top,
            &["name", "source", "params", "metrics", "rows"],
            "top level",
        )?;
        let name = string(top, "name", "top level")?;
        let source = string(top, "source", "top level")?;

        let mut space = SearchSpace::new();
        let params = array(top, "params", "top level")?;
        ensure!(!params.is_empty(), "params: no parameter");
        for (i, p) in params.iter().enumerate() {
            let (pname, spec) = param_spec(p, &format!("params[{i}]"))?;
            space
                .add(pname.clone(), spec)
                .map_err(|e| anyhow!("params[{i}] (`{pname}`): {e}"))?;
        }

        let mut metrics: Vec<SamplerMetric> = Vec::new();
        let metric_list = array(top, "metrics", "top level")?;
        ensure!(!metric_list.is_empty(), "metrics: no metric");
        for (i, m) in metric_list.iter().enumerate() {
            let at = format!("metrics[{i}]");
            let obj = keys_of(m, &at)?;
            only(obj, &["name", "direction"], &at)?;
            let mname = string(obj, "name", &at)?;
            ensure!(!mname.is_empty(), "{at}.name: empty");
            ensure!(
                metrics.iter().all(|x| x.name != mname),
                "{at}: metric `{mname}` is listed twice"
            );
            let direction = match string(obj, "direction", &at)?.as_str() {
                "maximize" => Direction::Maximize,
                "minimize" => Direction::Minimize,
                other => bail!(
                    "{at}.direction: `{other}` is neither `maximize` nor `minimize` (metric `{mname}`)"
                ),
            };
            metrics.push(SamplerMetric {
                name: mname,
                direction,
            });
        }

        let row_list = array(top, "rows", "top level")?;
        let mut rows: HashMap<Vec<Coord>, Option<Vec<f64>>> =
            HashMap::with_capacity(row_list.len());
        let mut first_row: HashMap<Vec<Coord>, usize> = HashMap::with_capacity(row_list.len());
        for (i, row) in row_list.iter().enumerate() {
            let at = format!("rows[{i}]");
            let obj = keys_of(row, &at)?;
            only(obj, &["params", "metrics"], &at)?;
            let at_p = format!("{at}.params");
            let point = keys_of(field(obj, "params", &at)?, &at_p)?;
            for k in point.keys() {
                ensure!(
                    space.params().iter().any(|(n, _)| n == k),
                    "{at_p}: unknown parameter `{k}`"
                );
            }
            let mut key = Vec::with_capacity(space.params().len());
            for (pname, spec) in space.params() {
                let v = point
                    .get(pname)
                    .ok_or_else(|| anyhow!("{at_p}: missing parameter `{pname}`"))?;
                let c = match v {
                    Value::Number(_) => {
                        coord_of_number(spec, finite(v, &format!("{at_p}.{pname}"))?)
                    }
                    Value::String(s) => coord_of_choice(spec, s),
                    other => Err(format!(
                        "expected a number or a string, got {}",
                        kind(other)
                    )),
                }
                .map_err(|e| anyhow!("{at_p}.{pname}: {e}"))?;
                key.push(c);
            }
            let at_m = format!("{at}.metrics");
            let values = match field(obj, "metrics", &at)? {
                Value::Null => None,
                m => {
                    let mobj = keys_of(m, &at_m)?;
                    for k in mobj.keys() {
                        ensure!(
                            metrics.iter().any(|x| x.name == *k),
                            "{at_m}: unknown metric `{k}`"
                        );
                    }
                    let vals = metrics
                        .iter()
                        .map(|x| {
                            let v = mobj
                                .get(&x.name)
                                .ok_or_else(|| anyhow!("{at_m}: missing metric `{}`", x.name))?;
                            finite(v, &format!("{at_m}.{}", x.name))
                        })
                        .collect::<anyhow::Result<Vec<f64>>>()?;
                    Some(vals)
                }
            };
            if let Some(&j) = first_row.get(&key) {
                bail!(
                    "{at} repeats the point of rows[{j}] ({})",
                    describe(&space, &key)
                );
            }
            first_row.insert(key.clone(), i);
            rows.insert(key, values);
        }

        check_complete(&space, &rows)?;

        let feasible: Vec<&Vec<f64>> = rows.values().flatten().collect();
        ensure!(!feasible.is_empty(), "rows: no feasible row");
        let bounds: Vec<(f64, f64)> = (0..metrics.len())
            .map(|m| {
                feasible
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                        (lo.min(v[m]), hi.max(v[m]))
                    })
            })
            .collect();
        let mut table = Table {
            name,
            source,
            space,
            metrics,
            rows,
            bounds,
            true_hv: 0.0,
        };
        let points: Vec<Vec<f64>> = table
            .rows
            .values()
            .flatten()
            .map(|v| table.normalized(v))
            .collect();
        table.true_hv = hypervolume(&points, &table.reference());
        Ok(table)
    }

    /// The search space of the table's parameters.
    pub(super) fn space(&self) -> SearchSpace {
        self.space.clone()
    }

    /// The metrics with their directions.
    pub(super) fn metrics(&self) -> Vec<SamplerMetric> {
        self.metrics.clone()
    }

    /// The row of a trial's point: its metric values, `None` when infeasible; an error when
    /// the point is not in the table (an unknown, missing or off-grid parameter).
    pub(super) fn lookup(&self, params: &[(String, ParamValue)]) -> anyhow::Result<Option<&[f64]>> {
        for (i, (n, _)) in params.iter().enumerate() {
            ensure!(
                self.space.params().iter().any(|(p, _)| p == n),
                "unknown parameter `{n}`"
            );
            ensure!(
                params[..i].iter().all(|(m, _)| m != n),
                "parameter `{n}` given twice"
            );
        }
        let mut key = Vec::with_capacity(self.space.params().len());
        for (pname, spec) in self.space.params() {
            let (_, v) = params
                .iter()
                .find(|(n, _)| n == pname)
                .ok_or_else(|| anyhow!("missing parameter `{pname}`"))?;
            let c = match v {
                ParamValue::Str(s) => coord_of_choice(spec, s),
                other => coord_of_number(spec, other.as_f64().expect("a number")),
            }
            .map_err(|e| anyhow!("parameter `{pname}`: {e}"))?;
            key.push(c);
        }
        let row = self
            .rows
            .get(&key)
            .ok_or_else(|| anyhow!("the point {} has no row", describe(&self.space, &key)))?;
        Ok(row.as_deref())
    }

    /// A trial's metrics by name, `None` when infeasible. Panics when the point is not in
    /// the table: the sampler proposed a point off the space it was given.
    pub(super) fn evaluate(&self, params: &[(String, ParamValue)]) -> Option<Vec<(String, f64)>> {
        let row = self
            .lookup(params)
            .unwrap_or_else(|e| panic!("table `{}`: {e:#}", self.name))?;
        Some(
            self.metrics
                .iter()
                .map(|m| m.name.clone())
                .zip(row.iter().copied())
                .collect(),
        )
    }

    fn normalized(&self, row: &[f64]) -> Vec<f64> {
        self.metrics
            .iter()
            .zip(&self.bounds)
            .zip(row)
            .map(|((m, &(lo, hi)), &v)| {
                let span = hi - lo;
                if span <= 0.0 {
                    return 0.0;
                }
                match m.direction {
                    Direction::Maximize => (hi - v) / span,
                    Direction::Minimize => (v - lo) / span,
                }
            })
            .collect()
    }

    /// The point of metric values (by name, as [`Table::evaluate`] gives them) in the
    /// hypervolume space: minimized, `[0, 1]` over the feasible rows, 0 = best.
    pub(super) fn hv_point(&self, values: &[(String, f64)]) -> Vec<f64> {
        let row: Vec<f64> = self
            .metrics
            .iter()
            .map(|m| {
                values
                    .iter()
                    .find(|(n, _)| *n == m.name)
                    .unwrap_or_else(|| {
                        panic!("table `{}`: no value of metric `{}`", self.name, m.name)
                    })
                    .1
            })
            .collect();
        self.normalized(&row)
    }

    /// The hypervolume reference: 1.1 in every normalized coordinate.
    pub(super) fn reference(&self) -> Vec<f64> {
        vec![1.1; self.metrics.len()]
    }

    /// The hypervolume of all feasible rows.
    pub(super) fn true_hypervolume(&self) -> f64 {
        self.true_hv
    }
}

/// Fails unless every point of the product of the parameters has a row (given that the
/// rows are distinct and on the grid, that is a count), naming a missing point.
fn check_complete(
    space: &SearchSpace,
    rows: &HashMap<Vec<Coord>, Option<Vec<f64>>>,
) -> anyhow::Result<()> {
    let axes: Vec<Vec<Coord>> = space
        .params()
        .iter()
        .enumerate()
        .map(|(i, (name, spec))| {
            Ok(match spec {
                ParamSpec::Discrete { values, .. } => values.iter().map(|&x| num(x)).collect(),
                ParamSpec::Int { lo, hi, .. } => (*lo..=*hi).map(|x| num(x as f64)).collect(),
                ParamSpec::Categorical { choices } => {
                    (0..choices.len()).map(Coord::Choice).collect()
                }
                // a float parameter's grid is the values its rows use
                ParamSpec::Float { .. } => {
                    let mut seen: Vec<Coord> = rows.keys().map(|k| k[i]).collect();
                    seen.sort_by(|a, b| match (a, b) {
                        (Coord::Num(x), Coord::Num(y)) => {
                            f64::from_bits(*x).total_cmp(&f64::from_bits(*y))
                        }
                        _ => std::cmp::Ordering::Equal,
                    });
                    seen.dedup();
                    seen
                }
                other => bail!("params: `{name}` is of a kind tables do not know: {other:?}"),
            })
        })
        .collect::<anyhow::Result<_>>()?;
    let points = axes.iter().try_fold(1usize, |n, a| n.checked_mul(a.len()));
    if points == Some(rows.len()) {
        return Ok(());
    }
    let total = points.map_or_else(|| "more than 2^64".to_owned(), |n| n.to_string());
    // Fewer rows than points: one of the first rows.len() + 1 points of the product lacks a
    // row. Enumerate them in order, the last parameter fastest.
    let mut index = vec![0usize; axes.len()];
    for _ in 0..=rows.len() {
        let key: Vec<Coord> = index.iter().zip(&axes).map(|(&j, a)| a[j]).collect();
        if !rows.contains_key(&key) {
            bail!(
                "rows: {} rows for the {total} points of the parameters' product; the point {} has no row",
                rows.len(),
                describe(space, &key)
            );
        }
        for d in (0..axes.len()).rev() {
            index[d] += 1;
            if index[d] < axes[d].len() {
                break;
            }
            index[d] = 0;
        }
    }
    bail!(
        "rows: {} rows for the {total} points of the parameters' product",
        rows.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tp {1, 2} x replicas 1..2 x router {rr, kv}: 8 points, 4 feasible. `gpu` is
    /// maximized over [10, 20], `lat` minimized over [1, 3]; the feasible rows normalize to
    /// (1, 0), (0, 1), (0.5, 0.5) and (1, 1).
    const PARAMS: &str = r#"[
        {"name": "tp", "type": "discrete", "values": [1, 2], "log": true},
        {"name": "replicas", "type": "int", "lo": 1, "hi": 2, "log": false},
        {"name": "router", "type": "categorical", "choices": ["rr", "kv"]}]"#;
    const METRICS: &str = r#"[{"name": "gpu", "direction": "maximize"},
        {"name": "lat", "direction": "minimize"}]"#;

    fn rows() -> Vec<String> {
        let mut out = Vec::new();
        for tp in [1, 2] {
            for replicas in [1, 2] {
                for router in ["rr", "kv"] {
                    let m = match (tp, replicas, router) {
                        (1, 1, "rr") => r#"{"gpu": 10, "lat": 1}"#,
                        (1, 1, "kv") => r#"{"gpu": 20, "lat": 3}"#,
                        (1, 2, "rr") => r#"{"lat": 2, "gpu": 15.0}"#,
                        (2, 1, "kv") => r#"{"gpu": 10, "lat": 3}"#,
                        _ => "null",
                    };
                    out.push(format!(
                        r#"{{"params": {{"tp": {tp}, "replicas": {replicas}, "router": "{router}"}}, "metrics": {m}}}"#
                    ));
                }
            }
        }
        out
    }

    fn text(rows: &[String]) -> String {
        format!(
            r#"{{"name": "t", "source": "hand", "params": {PARAMS}, "metrics": {METRICS}, "rows": [{}]}}"#,
            rows.join(",")
        )
    }

    fn err(text: &str) -> String {
        match Table::parse(text) {
            Ok(_) => panic!("expected an error"),
            Err(e) => format!("{e:#}"),
        }
    }

    fn p(tp: ParamValue, replicas: i64, router: &str) -> Vec<(String, ParamValue)> {
        vec![
            ("router".to_owned(), ParamValue::Str(router.to_owned())),
            ("tp".to_owned(), tp),
            ("replicas".to_owned(), ParamValue::Int(replicas)),
        ]
    }

    #[test]
    fn loads_space_and_metrics() {
        let t = Table::parse(&text(&rows())).unwrap();
        assert_eq!(t.name, "t");
        assert_eq!(t.source, "hand");
        let space = t.space();
        let names: Vec<&str> = space.params().iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["tp", "replicas", "router"]);
        assert_eq!(
            space.params()[0].1,
            ParamSpec::Discrete {
                values: vec![1.0, 2.0],
                log: true
            }
        );
        assert_eq!(
            space.params()[1].1,
            ParamSpec::Int {
                lo: 1,
                hi: 2,
                log: false
            }
        );
        let m = t.metrics();
        assert_eq!(m.len(), 2);
        assert_eq!(
            (m[0].name.as_str(), m[0].direction),
            ("gpu", Direction::Maximize)
        );
        assert_eq!(
            (m[1].name.as_str(), m[1].direction),
            ("lat", Direction::Minimize)
        );
    }

    #[test]
    fn looks_up_exactly() {
        let t = Table::parse(&text(&rows())).unwrap();
        // an integer discrete value decodes as Int; a Float of the same number is the same point
        let a = t.evaluate(&p(ParamValue::Int(1), 2, "rr")).unwrap();
        let b = t.evaluate(&p(ParamValue::Float(1.0), 2, "rr")).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, vec![("gpu".to_owned(), 15.0), ("lat".to_owned(), 2.0)]);
        assert_eq!(
            t.evaluate(&p(ParamValue::Int(1), 1, "kv")).unwrap(),
            vec![("gpu".to_owned(), 20.0), ("lat".to_owned(), 3.0)]
        );
        assert_eq!(t.evaluate(&p(ParamValue::Int(2), 2, "kv")), None);
        assert_eq!(t.evaluate(&p(ParamValue::Int(1), 2, "kv")), None);

        let bad = |params: &[(String, ParamValue)]| format!("{:#}", t.lookup(params).unwrap_err());
        assert!(
            bad(&p(ParamValue::Float(1.5), 1, "rr"))
                .contains("parameter `tp`: 1.5 is not one of the values")
        );
        assert!(
            bad(&p(ParamValue::Int(1), 3, "rr"))
                .contains("parameter `replicas`: 3 is outside [1, 2]")
        );
        assert!(
            bad(&p(ParamValue::Int(1), 1, "random"))
                .contains("parameter `router`: `random` is not one of the choices")
        );
        assert!(
            bad(&p(ParamValue::Str("1".into()), 1, "rr"))
                .contains("parameter `tp`: expected a number")
        );
        let mut extra = p(ParamValue::Int(1), 1, "rr");
        extra.push(("pp".to_owned(), ParamValue::Int(1)));
        assert!(bad(&extra).contains("unknown parameter `pp`"));
        let missing = &p(ParamValue::Int(1), 1, "rr")[1..];
        assert!(bad(missing).contains("missing parameter `router`"));
        let mut twice = p(ParamValue::Int(1), 1, "rr");
        twice.push(("tp".to_owned(), ParamValue::Int(2)));
        assert!(bad(&twice).contains("parameter `tp` given twice"));
    }

    #[test]
    fn normalizes_to_the_feasible_range() {
        let t = Table::parse(&text(&rows())).unwrap();
        let v = |gpu: f64, lat: f64| vec![("gpu".to_owned(), gpu), ("lat".to_owned(), lat)];
        assert_eq!(t.hv_point(&v(10.0, 1.0)), [1.0, 0.0]);
        assert_eq!(t.hv_point(&v(20.0, 3.0)), [0.0, 1.0]);
        assert_eq!(t.hv_point(&v(15.0, 2.0)), [0.5, 0.5]);
        // by name, not by position
        let swapped = vec![("lat".to_owned(), 3.0), ("gpu".to_owned(), 10.0)];
        assert_eq!(t.hv_point(&swapped), [1.0, 1.0]);
        assert_eq!(t.reference(), [1.1, 1.1]);
        // boxes up to 1.1 from (0, 1), (0.5, 0.5), (1, 0); (1, 1) is dominated:
        // 0.5 * 0.1 + 0.5 * 0.6 + 0.1 * 1.1
        assert!(
            (t.true_hypervolume() - 0.46).abs() < 1e-12,
            "{}",
            t.true_hypervolume()
        );
    }

    #[test]
    fn a_constant_metric_normalizes_to_zero() {
        let rows: Vec<String> = rows()
            .into_iter()
            .map(|r| {
                r.replace(r#""gpu": 20"#, r#""gpu": 10"#)
                    .replace(r#""gpu": 15.0"#, r#""gpu": 10"#)
            })
            .collect();
        let t = Table::parse(&text(&rows)).unwrap();
        let v = vec![("gpu".to_owned(), 10.0), ("lat".to_owned(), 2.0)];
        assert_eq!(t.hv_point(&v), [0.0, 0.5]);
    }

    #[test]
    fn names_the_row_and_key_of_an_error() {
        let good = rows();
        let with = |i: usize, row: &str| {
            let mut r = good.clone();
            r[i] = row.to_owned();
            text(&r)
        };
        let cases: Vec<(String, &str)> = vec![
            (
                "[]".to_owned(),
                "top level: expected an object, got an array",
            ),
            ("{".to_owned(), "not valid JSON"),
            (
                text(&good).replace(r#""source": "hand","#, ""),
                "top level: missing key `source`",
            ),
            (
                text(&good).replace(r#""name": "t","#, r#""name": "t", "extra": 1,"#),
                "top level: unknown key `extra`",
            ),
            (
                text(&good).replace(r#""type": "int""#, r#""type": "integer""#),
                "params[1] (`replicas`).type: unknown type `integer`",
            ),
            (
                text(&good).replace(r#""values": [1, 2]"#, r#""values": [0, 2]"#),
                "params[0] (`tp`):",
            ),
            (
                text(&good).replace(r#""lo": 1, "hi": 2"#, r#""lo": 1.5, "hi": 2"#),
                "params[1] (`replicas`).lo: expected an integer",
            ),
            (
                text(&good).replace(r#""direction": "minimize""#, r#""direction": "min""#),
                "metrics[1].direction: `min`",
            ),
            (
                with(3, r#"{"params": {"tp": 1, "replicas": 2, "router": "kv"}}"#),
                "rows[3]: missing key `metrics`",
            ),
            (
                with(
                    3,
                    r#"{"params": {"tp": 1, "replicas": 2}, "metrics": null}"#,
                ),
                "rows[3].params: missing parameter `router`",
            ),
            (
                with(
                    3,
                    r#"{"params": {"tp": 1, "replicas": 2, "router": "kv", "pp": 1}, "metrics": null}"#,
                ),
                "rows[3].params: unknown parameter `pp`",
            ),
            (
                with(
                    3,
                    r#"{"params": {"tp": 4, "replicas": 2, "router": "kv"}, "metrics": null}"#,
                ),
                "rows[3].params.tp: 4 is not one of the values",
            ),
            (
                with(
                    3,
                    r#"{"params": {"tp": 1, "replicas": 2.5, "router": "kv"}, "metrics": null}"#,
                ),
                "rows[3].params.replicas: 2.5 is not an integer",
            ),
            (
                with(
                    3,
                    r#"{"params": {"tp": 1, "replicas": 2, "router": "x"}, "metrics": null}"#,
                ),
                "rows[3].params.router: `x` is not one of the choices",
            ),
            (
                with(
                    3,
                    r#"{"params": {"tp": 1, "replicas": 2, "router": "kv"}, "metrics": {"gpu": 1}}"#,
                ),
                "rows[3].metrics: missing metric `lat`",
            ),
            (
                with(
                    3,
                    r#"{"params": {"tp": 1, "replicas": 2, "router": "kv"}, "metrics": {"gpu": 1, "lat": "x"}}"#,
                ),
                "rows[3].metrics.lat: expected a number, got a string",
            ),
            (
                with(
                    3,
                    r#"{"params": {"tp": 1, "replicas": 2, "router": "kv"}, "metrics": {"gpu": 1, "lat": 1, "e2e": 1}}"#,
                ),
                "rows[3].metrics: unknown metric `e2e`",
            ),
            (
                with(
                    3,
                    r#"{"params": {"tp": 1, "replicas": 2, "router": "rr"}, "metrics": null}"#,
                ),
                "rows[3] repeats the point of rows[2] (tp=1, replicas=2, router=rr)",
            ),
            (
                text(&good[..7]),
                "rows: 7 rows for the 8 points of the parameters' product; the point tp=2, replicas=2, router=kv has no row",
            ),
            (
                text(&good[1..]),
                "the point tp=1, replicas=1, router=rr has no row",
            ),
        ];
        for (input, want) in cases {
            let got = err(&input);
            assert!(got.contains(want), "want `{want}` in `{got}`");
        }
        let none: Vec<String> = good
            .iter()
            .map(|r| {
                format!(
                    "{}\"metrics\": null}}",
                    &r[..r.find("\"metrics\"").unwrap()]
                )
            })
            .collect();
        assert!(err(&text(&none)).contains("rows: no feasible row"));
    }

    #[test]
    fn load_reads_a_file_and_names_it() {
        let dir = std::env::temp_dir().join(format!("xtask-table-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.json");
        std::fs::write(&path, text(&rows())).unwrap();
        let t = Table::load(&path).unwrap();
        assert_eq!(t.name, "t");
        let missing = dir.join("missing.json");
        let e = format!("{:#}", Table::load(&missing).err().unwrap());
        assert!(
            e.contains("reading the table") && e.contains("missing.json"),
            "{e}"
        );
        std::fs::write(&path, "{}").unwrap();
        let e = format!("{:#}", Table::load(&path).err().unwrap());
        assert!(
            e.contains("t.json") && e.contains("missing key `name`"),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
