//! Ranking (scalar goals) and the candidate-level Pareto front (pareto goals), SPEC 3.

use crate::ScoreError;
use crate::candidate::Candidate;
use crate::front;
use std::cmp::Ordering;
use sweeper_goal::{Direction, Objective};

/// Orders two numbers ascending with every NaN after every number (a total order, so the
/// sort never sees an inconsistent comparison). `-0.0` and `0.0` tie.
fn ascending_nan_last(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
        (false, true) => Ordering::Less,
        (true, false) => Ordering::Greater,
        (true, true) => Ordering::Equal,
    }
}

/// Ranks the candidates of a scalar goal: best `score` first; ties go to fewer
/// `used_gpus`; remaining ties keep input order (a stable sort).
///
/// Under `min_gpus` (candidates that carry `satisfying`), the satisfying candidates come
/// first, fewest `used_gpus` first, then by goodput (their `score`); the others follow, by
/// goodput, then fewer GPUs (SPEC 9).
///
/// `-inf` scores (a missing latency) sort last among numbers; a hand-built NaN score or
/// GPU count (never produced by [`make_candidate`](crate::make_candidate)) sorts after them.
pub fn rank(mut candidates: Vec<Candidate>) -> Vec<Candidate> {
    candidates.sort_by(|a, b| rank_order(&RankKey::of(a), &RankKey::of(b)));
    candidates
}

/// What [`rank`] orders a candidate by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RankKey {
    pub(crate) score: f64,
    pub(crate) gpus: f64,
    /// `min_gpus` only: whether the goodput reached the floor.
    pub(crate) satisfying: Option<bool>,
}

impl RankKey {
    fn of(c: &Candidate) -> RankKey {
        RankKey {
            score: c.score,
            gpus: c.used_gpus,
            satisfying: c.satisfying,
        }
    }
}

/// The order of [`rank`] (and of [`RankStream`](crate::RankStream)) before input order:
/// satisfying candidates first, fewest GPUs then best score among them; everything else
/// by descending score, then ascending GPU count; NaN last in each.
pub(crate) fn rank_order(a: &RankKey, b: &RankKey) -> Ordering {
    // Descending score with NaN last: compare the negations ascending.
    let by_score = || ascending_nan_last(-a.score, -b.score);
    let by_gpus = || ascending_nan_last(a.gpus, b.gpus);
    match (a.satisfying == Some(true), b.satisfying == Some(true)) {
        (true, true) => by_gpus().then_with(by_score),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => by_score().then_with(by_gpus),
    }
}

/// The Pareto front of a pareto goal: the non-dominated subset of the candidates that carry
/// `objectives`, sorted by the **last** objective ascending (ties keep input order), so the
/// list traces the frontier left to right.
///
/// Each objective is compared in its own direction; equal points do not dominate each
/// other, so duplicates on the front are all kept. Candidates without `objectives` (scored
/// for a scalar goal) are left out. The objective values are copied once into one
/// contiguous row-major matrix and handed to [`front::pareto_front_sorted`].
///
/// Errors: an empty `objectives` list or a candidate that carries objectives but not one of
/// those asked for is [`ScoreError::Shape`]; a NaN objective value is
/// [`ScoreError::NanReport`] naming the candidate's `index` and the objective.
pub fn pareto_front(
    candidates: &[Candidate],
    objectives: &[Objective],
) -> Result<Vec<Candidate>, ScoreError> {
    if objectives.is_empty() {
        return Err(ScoreError::Shape {
            detail: "a pareto front needs at least one objective".to_owned(),
        });
    }
    let d = objectives.len();
    let carriers: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.objectives.is_some())
        .collect();
    let mut data = Vec::with_capacity(carriers.len() * d);
    for c in &carriers {
        let values = c.objectives.as_deref().unwrap_or_default();
        // Fast path: the candidate carries exactly the goal's objectives in order.
        let in_order = values.len() == d && values.iter().zip(objectives).all(|(v, o)| v.0 == *o);
        for (k, &o) in objectives.iter().enumerate() {
            let v = if in_order {
                values[k].1
            } else {
                c.objective(o).ok_or_else(|| ScoreError::Shape {
                    detail: format!(
                        "candidate {} carries no value for objective `{}`",
                        c.index,
                        o.name()
                    ),
                })?
            };
            if v.is_nan() {
                return Err(ScoreError::NanReport {
                    candidate: c.index,
                    key: o.name().to_owned(),
                });
            }
            data.push(v);
        }
    }
    let directions: Vec<Direction> = objectives.iter().map(|o| o.direction()).collect();
    let order = front::pareto_front_sorted(&data, d, &directions)?;
    Ok(order.into_iter().map(|i| carriers[i].clone()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Map;
    use std::collections::BTreeMap;

    fn scalar(index: usize, score: f64, used_gpus: f64) -> Candidate {
        Candidate {
            index,
            config: Map::new(),
            used_gpus,
            score,
            metrics: BTreeMap::default(),
            objectives: None,
            satisfying: None,
        }
    }

    fn pareto(index: usize, values: &[(Objective, f64)]) -> Candidate {
        Candidate {
            index,
            config: Map::new(),
            used_gpus: 0.0,
            score: values[0].1,
            metrics: BTreeMap::default(),
            objectives: Some(values.to_vec()),
            satisfying: None,
        }
    }

    fn indices(cs: &[Candidate]) -> Vec<usize> {
        cs.iter().map(|c| c.index).collect()
    }

    #[test]
    fn rank_best_score_first() {
        let ranked = rank(vec![
            scalar(0, 1.0, 4.0),
            scalar(1, 3.0, 4.0),
            scalar(2, 2.0, 4.0),
        ]);
        assert_eq!(indices(&ranked), [1, 2, 0]);
    }

    #[test]
    fn rank_ties_go_to_fewer_gpus_then_input_order() {
        let ranked = rank(vec![
            scalar(0, 5.0, 8.0),
            scalar(1, 5.0, 4.0),
            scalar(2, 5.0, 8.0),
            scalar(3, 5.0, 4.0),
            scalar(4, 6.0, 16.0),
        ]);
        assert_eq!(indices(&ranked), [4, 1, 3, 0, 2]);
    }

    #[test]
    fn rank_negative_zero_ties_with_zero() {
        let ranked = rank(vec![scalar(0, -0.0, 2.0), scalar(1, 0.0, 1.0)]);
        assert_eq!(indices(&ranked), [1, 0]);
    }

    #[test]
    fn rank_infinities_are_extremes_and_nan_is_last() {
        let ranked = rank(vec![
            scalar(0, f64::NEG_INFINITY, 0.0),
            scalar(1, f64::NAN, 0.0),
            scalar(2, -1e300, 0.0),
            scalar(3, f64::INFINITY, 0.0),
        ]);
        assert_eq!(indices(&ranked), [3, 2, 0, 1]);
    }

    #[test]
    fn rank_of_nothing_is_nothing() {
        assert!(rank(Vec::new()).is_empty());
    }

    #[test]
    fn front_sorted_by_last_objective_ascending() {
        use Objective::{ThroughputPerGpu as G, ThroughputPerUser as U};
        let cs = vec![
            pareto(0, &[(G, 100.0), (U, 10.0)]),
            pareto(1, &[(G, 50.0), (U, 40.0)]),
            pareto(2, &[(G, 40.0), (U, 30.0)]), // dominated by 1
            pareto(3, &[(G, 80.0), (U, 20.0)]),
            pareto(4, &[(G, 10.0), (U, 60.0)]),
        ];
        let front = pareto_front(&cs, &[G, U]).unwrap();
        assert_eq!(indices(&front), [0, 3, 1, 4]);
    }

    #[test]
    fn front_keeps_duplicates_in_input_order() {
        use Objective::{ThroughputPerGpu as G, ThroughputPerUser as U};
        let cs = vec![
            pareto(5, &[(G, 1.0), (U, 1.0)]),
            pareto(6, &[(G, 1.0), (U, 1.0)]),
            pareto(7, &[(G, 0.5), (U, 1.0)]),
        ];
        assert_eq!(indices(&pareto_front(&cs, &[G, U]).unwrap()), [5, 6]);
    }

    #[test]
    fn front_applies_each_objectives_direction() {
        use Objective::{E2eLatency as L, Throughput as T};
        let cs = vec![
            pareto(0, &[(T, 100.0), (L, 500.0)]),
            pareto(1, &[(T, 100.0), (L, 400.0)]), // same throughput, lower latency: dominates 0
            pareto(2, &[(T, 200.0), (L, 900.0)]),
            pareto(3, &[(T, 150.0), (L, f64::INFINITY)]), // missing latency: dominated by 2
        ];
        assert_eq!(indices(&pareto_front(&cs, &[T, L]).unwrap()), [1, 2]);
    }

    #[test]
    fn front_skips_candidates_without_objectives() {
        use Objective::{ThroughputPerGpu as G, ThroughputPerUser as U};
        let cs = vec![scalar(0, 1e9, 0.0), pareto(1, &[(G, 1.0), (U, 1.0)])];
        assert_eq!(indices(&pareto_front(&cs, &[G, U]).unwrap()), [1]);
        assert!(pareto_front(&[], &[G, U]).unwrap().is_empty());
    }

    #[test]
    fn front_reads_objectives_by_name_when_out_of_order() {
        use Objective::{ThroughputPerGpu as G, ThroughputPerUser as U};
        let cs = vec![
            pareto(0, &[(U, 10.0), (G, 100.0)]),
            pareto(1, &[(G, 50.0), (U, 40.0)]),
        ];
        assert_eq!(indices(&pareto_front(&cs, &[G, U]).unwrap()), [0, 1]);
    }

    #[test]
    fn front_errors_name_the_candidate() {
        use Objective::{Goodput, ThroughputPerGpu as G, ThroughputPerUser as U};
        let cs = vec![pareto(9, &[(G, 1.0), (U, f64::NAN)])];
        assert_eq!(
            pareto_front(&cs, &[G, U]),
            Err(ScoreError::NanReport {
                candidate: 9,
                key: "throughput_per_user".into()
            })
        );
        let cs = vec![pareto(4, &[(G, 1.0), (U, 2.0)])];
        let err = pareto_front(&cs, &[G, Goodput]).unwrap_err();
        assert!(matches!(err, ScoreError::Shape { .. }), "{err:?}");
        assert!(err.to_string().contains("candidate 4"), "{err}");
        assert!(matches!(
            pareto_front(&cs, &[]),
            Err(ScoreError::Shape { .. })
        ));
    }
}
