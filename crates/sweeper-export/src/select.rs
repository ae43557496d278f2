//! Which trials of a sweep to export: ids, the front, the top of a ranking, and filters
//! over objectives, parameters and report metrics (`throughput_per_user>=50`).

use crate::ExportError;
use serde_json::Value;
use sweeper_tables::{ResultFile, ResultKind};

/// What to pick from a sweep's result.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// Trials by id.
    pub trials: Vec<u64>,
    /// Every point of the Pareto front.
    pub front: bool,
    /// The knee of the Pareto front ([`knee`]).
    pub knee: bool,
    /// The first K of a scalar goal's ranking.
    pub top: Option<usize>,
    /// Conditions every picked trial meets (`NAME>=NUMBER`, with `>=`, `<=`, `>`, `<`,
    /// `==`, `!=`); alone, they filter every feasible trial.
    pub filters: Vec<String>,
}

/// A parsed `--where` condition.
#[derive(Debug, Clone, PartialEq)]
struct Condition {
    name: String,
    op: &'static str,
    value: f64,
}

impl Condition {
    fn parse(expr: &str) -> Result<Condition, ExportError> {
        const OPS: [&str; 6] = [">=", "<=", "==", "!=", ">", "<"];
        let fail = |reason: &str| ExportError::Where {
            expr: expr.to_owned(),
            reason: reason.to_owned(),
        };
        let (at, op) = OPS
            .iter()
            .filter_map(|op| expr.find(op).map(|at| (at, *op)))
            .min_by_key(|(at, op)| (*at, std::cmp::Reverse(op.len())))
            .ok_or_else(|| fail("write NAME OP NUMBER with OP one of >= <= > < == !=, e.g. throughput_per_user>=50"))?;
        let name = expr[..at].trim();
        let number = expr[at + op.len()..].trim();
        if name.is_empty() {
            return Err(fail("the name before the operator is missing, e.g. tp<=4"));
        }
        let value: f64 = number
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| {
                fail(&format!(
                    "`{number}` is not a finite number; compare with a number, e.g. {name}{op}50"
                ))
            })?;
        Ok(Condition {
            name: name.to_owned(),
            op,
            value,
        })
    }

    fn holds(&self, x: f64) -> bool {
        match self.op {
            ">=" => x >= self.value,
            "<=" => x <= self.value,
            ">" => x > self.value,
            "<" => x < self.value,
            "==" => x == self.value,
            _ => x != self.value,
        }
    }
}

/// The value of `name` for a trial: an objective, a configuration key, or a report metric.
pub(crate) fn lookup(result: &ResultFile, trial: u64, name: &str) -> Option<f64> {
    let number = |v: &Value| v.as_f64();
    let evaluated = result
        .evaluated
        .iter()
        .find(|c| c.get("index").and_then(Value::as_u64) == Some(trial));
    if let Some(v) = evaluated
        .and_then(|c| c.get("objectives")?.get(name))
        .and_then(number)
    {
        return Some(v);
    }
    let t = result.trials.iter().find(|t| t.trial == trial)?;
    t.config
        .get(name)
        .and_then(number)
        .or_else(|| t.metrics.get(name).copied())
}

/// The ids of the trials a selection picks, in the order given (ids), of the front or of
/// the ranking, each once.
pub fn select(result: &ResultFile, selection: &Selection) -> Result<Vec<u64>, ExportError> {
    let conditions = selection
        .filters
        .iter()
        .map(|e| Condition::parse(e))
        .collect::<Result<Vec<_>, _>>()?;
    let picks = usize::from(!selection.trials.is_empty())
        + usize::from(selection.front)
        + usize::from(selection.knee)
        + usize::from(selection.top.is_some());
    if picks > 1 {
        return Err(ExportError::Selection(
            "give one of --trial, --front, --knee and --top (with --where to filter it)".to_owned(),
        ));
    }
    let index_of = |c: &Value| c.get("index").and_then(Value::as_u64);
    let mut ids: Vec<u64> = if !selection.trials.is_empty() {
        for id in &selection.trials {
            if !result.trials.iter().any(|t| t.trial == *id) {
                let last = result.trials.iter().map(|t| t.trial).max();
                return Err(ExportError::Selection(format!(
                    "the sweep has no trial {id}{}; the ids are in trials.csv and in the plot's tooltips",
                    last.map_or_else(String::new, |l| format!(" (its trials are 0 to {l})"))
                )));
            }
        }
        selection.trials.clone()
    } else if selection.front {
        if result.kind != ResultKind::Front {
            return Err(ExportError::Selection(
                "the sweep's goal is scalar (a ranking, no front); use --top K or --trial ID"
                    .to_owned(),
            ));
        }
        result.candidates.iter().filter_map(index_of).collect()
    } else if selection.knee {
        vec![knee(result)?]
    } else if let Some(k) = selection.top {
        if result.kind != ResultKind::Ranking {
            return Err(ExportError::Selection(
                "--top ranks a scalar goal, and this sweep's goal is a Pareto front; use --front, or --where to pick points of it".to_owned(),
            ));
        }
        result
            .candidates
            .iter()
            .filter_map(index_of)
            .take(k)
            .collect()
    } else if !conditions.is_empty() {
        result.evaluated.iter().filter_map(index_of).collect()
    } else {
        return Err(ExportError::Selection(
            "say which trials to export: --trial ID (repeatable), --front, --knee, --top K or --where EXPR"
                .to_owned(),
        ));
    };
    for c in &conditions {
        let known = result
            .trials
            .iter()
            .any(|t| lookup(result, t.trial, &c.name).is_some());
        if !known {
            return Err(ExportError::Where {
                expr: format!("{}{}{}", c.name, c.op, c.value),
                reason: format!(
                    "no trial has `{}`; name an objective ({}), a parameter or a report metric",
                    c.name,
                    result
                        .objectives
                        .iter()
                        .map(|o| o.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
        ids.retain(|id| lookup(result, *id, &c.name).is_some_and(|x| c.holds(x)));
    }
    let mut seen = std::collections::HashSet::new();
    ids.retain(|id| seen.insert(*id));
    if ids.is_empty() {
        return Err(ExportError::Selection(format!(
            "no trial matches {}; loosen the --where conditions",
            selection.filters.join(" and ")
        )));
    }
    Ok(ids)
}

/// The knee of a sweep's Pareto front: the front point whose objectives, each scaled to
/// [0, 1] over the front (1 the best value on the front, 0 the worst), have the largest
/// sum; with two objectives, the point farthest *beyond* the line between the front's two
/// ends (scaled, the ends are `(1, 0)` and `(0, 1)`, and the sum grows with the distance
/// beyond `x + y = 1`). On a front that bows in towards the origin every point lies on or
/// below that line and the knee is an end of the front (both ends sum to 1). The first
/// such point in the front's order on a tie; the only point of a front of one.
pub fn knee(result: &ResultFile) -> Result<u64, ExportError> {
    if result.kind != ResultKind::Front {
        return Err(ExportError::Selection(
            "--knee is a point of a Pareto front, and this sweep's goal is scalar; use --top K"
                .to_owned(),
        ));
    }
    let rows: Vec<(u64, Vec<f64>)> = result
        .candidates
        .iter()
        .filter_map(|c| {
            let id = c.get("index")?.as_u64()?;
            let values = result
                .objectives
                .iter()
                .map(|o| c.get("objectives")?.get(&o.name)?.as_f64())
                .collect::<Option<Vec<f64>>>()?;
            Some((id, values))
        })
        .collect();
    if rows.is_empty() {
        return Err(ExportError::Selection(
            "the sweep's front is empty: nothing feasible to export".to_owned(),
        ));
    }
    let dims = result.objectives.len();
    let scaled = |k: usize, x: f64| {
        let (lo, hi) = rows
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
                (lo.min(r.1[k]), hi.max(r.1[k]))
            });
        if hi > lo && (hi - lo).is_finite() {
            let t = (x - lo) / (hi - lo);
            if result.objectives[k].direction == sweeper_goal::Direction::Minimize {
                1.0 - t
            } else {
                t
            }
        } else {
            1.0
        }
    };
    let mut best = (f64::NEG_INFINITY, rows[0].0);
    for (id, values) in &rows {
        let sum: f64 = (0..dims).map(|k| scaled(k, values[k])).sum();
        if sum > best.0 {
            best = (sum, *id);
        }
    }
    Ok(best.1)
}

#[cfg(test)]
mod tests {
    use super::Condition;

    #[test]
    fn conditions_read_the_longest_operator_first() {
        let c = Condition::parse("throughput_per_user>=50").unwrap();
        assert_eq!(
            (c.name.as_str(), c.op, c.value),
            ("throughput_per_user", ">=", 50.0)
        );
        let c = Condition::parse(" tp < 4 ").unwrap();
        assert_eq!((c.name.as_str(), c.op, c.value), ("tp", "<", 4.0));
        assert!(c.holds(2.0) && !c.holds(4.0));
        assert!(Condition::parse("tp=4").is_err());
        assert!(Condition::parse(">=4").is_err());
        assert!(Condition::parse("tp>=inf").is_err());
        assert!(Condition::parse("tp>=x").is_err());
    }
}
