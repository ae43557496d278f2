//! Scoring, ranking and the candidate-level front on real serving rows.
//!
//! Rows copied from `agentx_qwen3.5-397b-fp8_mi355x_sglang.csv` (`InferenceX` `AgentX`
//! aggregate rows, `Qwen3.5-397B-A17B-FP8` on `MI355X` with `SGLang`; source commit
//! `598828615e7701f3f4f8ac5b1da2dbb49fe11460`). `gpu_hours = used_gpus * duration / 1 h`, so
//! `avg_gpu == used_gpus`, and the source's own output tok/s/gpu must equal
//! `throughput_per_gpu`.

use serde_json::{Map, Value, json};
use sweeper_goal::Objective;
use sweeper_score::{
    Report, ScoreError, avg_gpu, is_feasible, make_candidate, objective_value, pareto_front, rank,
    score,
};

struct Row {
    used_gpus: f64,
    tok_s: f64,
    per_user: f64,
    e2e_ms: f64,
    duration_ms: f64,
    gpu_hours: f64,
    src_per_gpu: f64,
}

/// Rows 0-7 and 40-43 (tp = 4) and 54, 59, 63, 66 (tp = 8) of the source file.
#[rustfmt::skip]
#[allow(clippy::unreadable_literal)] // copied verbatim from the source CSV
const ROWS: [Row; 16] = [
    Row { used_gpus: 4.0, tok_s: 31.27343394360728, per_user: 61.76035531293723, e2e_ms: 19793.094105596156, duration_ms: 1767922.2595030002, gpu_hours: 1.9643580661144446, src_per_gpu: 7.81835848590182 },
    Row { used_gpus: 4.0, tok_s: 51.0647800553056, per_user: 64.39208705755792, e2e_ms: 12398.808646328467, duration_ms: 1802749.368553, gpu_hours: 2.003054853947778, src_per_gpu: 12.7661950138264 },
    Row { used_gpus: 4.0, tok_s: 91.04465978974035, per_user: 53.59913772159367, e2e_ms: 18757.404597801105, duration_ms: 1797392.624432, gpu_hours: 1.9971029160355556, src_per_gpu: 22.761164947435088 },
    Row { used_gpus: 4.0, tok_s: 134.00047992636135, per_user: 29.92761711690223, e2e_ms: 30238.835587716127, duration_ms: 1825127.79159, gpu_hours: 2.027919768433333, src_per_gpu: 33.50011998159034 },
    Row { used_gpus: 4.0, tok_s: 170.95336421285796, per_user: 46.76529331030059, e2e_ms: 20512.852558567203, duration_ms: 1807668.432984, gpu_hours: 2.0085204810933335, src_per_gpu: 42.73834105321449 },
    Row { used_gpus: 4.0, tok_s: 179.57003457887797, per_user: 20.071860938267417, e2e_ms: 30896.325348957278, duration_ms: 1820793.768664, gpu_hours: 2.0231041874044444, src_per_gpu: 44.89250864471949 },
    Row { used_gpus: 4.0, tok_s: 221.29409127241453, per_user: 22.83534066525995, e2e_ms: 45096.457983124725, duration_ms: 1828272.945173, gpu_hours: 2.0314143835255556, src_per_gpu: 55.32352281810363 },
    Row { used_gpus: 4.0, tok_s: 286.2597771804858, per_user: 34.4843347634966, e2e_ms: 23945.424104963415, duration_ms: 1827727.9649740001, gpu_hours: 2.030808849971111, src_per_gpu: 71.56494429512145 },
    Row { used_gpus: 4.0, tok_s: 416.6175395439987, per_user: 16.522815876541227, e2e_ms: 50499.21380329795, duration_ms: 1829483.705449, gpu_hours: 2.032759672721111, src_per_gpu: 104.15438488599968 },
    Row { used_gpus: 4.0, tok_s: 53.42261093748115, per_user: 2.484542923911565, e2e_ms: 345515.0039932259, duration_ms: 1823029.580377, gpu_hours: 2.025588422641111, src_per_gpu: 13.355652734370288 },
    Row { used_gpus: 4.0, tok_s: 238.66829770649036, per_user: 7.231996214127589, e2e_ms: 108495.0533089579, duration_ms: 1828026.613474, gpu_hours: 2.031140681637778, src_per_gpu: 59.66707442662259 },
    Row { used_gpus: 4.0, tok_s: 456.6260178680911, per_user: 13.817807151061661, e2e_ms: 56715.49195166212, duration_ms: 1829142.377606, gpu_hours: 2.032380419562222, src_per_gpu: 114.15650446702277 },
    Row { used_gpus: 8.0, tok_s: 246.19691291947765, per_user: 36.05552519332353, e2e_ms: 13635.613286173208, duration_ms: 1816334.716375, gpu_hours: 4.036299369722222, src_per_gpu: 30.774614114934707 },
    Row { used_gpus: 8.0, tok_s: 375.0137033409939, per_user: 8.630121922598468, e2e_ms: 47814.038988387896, duration_ms: 1828071.864821, gpu_hours: 4.062381921824445, src_per_gpu: 46.87671291762424 },
    Row { used_gpus: 8.0, tok_s: 374.38433016221654, per_user: 15.088764984459564, e2e_ms: 29521.197956145363, duration_ms: 1822731.201662, gpu_hours: 4.050513781471111, src_per_gpu: 46.79804127027707 },
    Row { used_gpus: 8.0, tok_s: 397.62249777880777, per_user: 9.30445395705591, e2e_ms: 44106.65672739507, duration_ms: 1827630.488867, gpu_hours: 4.061401086371111, src_per_gpu: 49.70281222235097 },
];

fn report(r: &Row) -> Report {
    Report::from_json(
        0,
        &json!({
            "output_throughput_tok_s": r.tok_s,
            "mean_output_token_throughput_per_user": r.per_user,
            "mean_e2e_latency_ms": r.e2e_ms,
            "duration_ms": r.duration_ms,
            "gpu_hours": r.gpu_hours,
            "src_output_tput_per_gpu": r.src_per_gpu,
        }),
    )
    .unwrap()
}

fn config(r: &Row) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("used_gpus".into(), json!(r.used_gpus));
    m
}

fn relative_error(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

#[test]
fn avg_gpu_of_static_deployments_is_the_gpu_count() {
    for (i, r) in ROWS.iter().enumerate() {
        let avg = avg_gpu(&report(r));
        assert!(relative_error(avg, r.used_gpus) < 1e-12, "row {i}: {avg}");
    }
}

#[test]
fn throughput_per_gpu_matches_the_source_output_rate_per_gpu() {
    for (i, r) in ROWS.iter().enumerate() {
        let v = objective_value(&report(r), Objective::ThroughputPerGpu);
        assert!(
            relative_error(v, r.src_per_gpu) < 1e-12,
            "row {i}: {v} vs {}",
            r.src_per_gpu
        );
        // Dividing by gpu_hours directly (the SPEC's named mistake) is far off.
        assert!(relative_error(r.tok_s / r.gpu_hours, r.src_per_gpu) > 0.5);
    }
}

fn scalar_candidates(objective: Objective) -> Vec<sweeper_score::Candidate> {
    ROWS.iter()
        .enumerate()
        .map(|(i, r)| make_candidate(i, config(r), &report(r), &[objective], false))
        .collect()
}

fn indices(cs: &[sweeper_score::Candidate]) -> Vec<usize> {
    cs.iter().map(|c| c.index).collect()
}

#[test]
fn ranking_by_throughput_per_gpu() {
    let ranked = rank(scalar_candidates(Objective::ThroughputPerGpu));
    assert_eq!(
        indices(&ranked),
        [11, 8, 7, 10, 6, 15, 13, 14, 5, 4, 3, 12, 2, 9, 1, 0]
    );
    assert!(ranked.windows(2).all(|w| w[0].score >= w[1].score));
}

#[test]
fn ranking_by_latency_puts_the_fastest_first() {
    let ranked = rank(scalar_candidates(Objective::E2eLatency));
    assert_eq!(
        indices(&ranked),
        [1, 12, 2, 0, 4, 7, 14, 3, 5, 15, 6, 13, 8, 11, 10, 9]
    );
    assert_eq!(ranked[0].score, -ROWS[1].e2e_ms);
}

#[test]
fn budget_drops_the_eight_gpu_rows() {
    let feasible: Vec<usize> = scalar_candidates(Objective::Throughput)
        .into_iter()
        .filter(|c| is_feasible(c.used_gpus, 4.0))
        .map(|c| c.index)
        .collect();
    assert_eq!(feasible, (0..12).collect::<Vec<_>>());
}

#[test]
fn default_front_traces_tok_s_gpu_against_tok_s_user() {
    let objectives = [Objective::ThroughputPerGpu, Objective::ThroughputPerUser];
    let cs: Vec<_> = ROWS
        .iter()
        .enumerate()
        .map(|(i, r)| make_candidate(i, config(r), &report(r), &objectives, true))
        .collect();
    let front = pareto_front(&cs, &objectives).unwrap();
    assert_eq!(indices(&front), [11, 8, 7, 4, 2, 1]);
    // Left to right on the x-axis (tok/s/user), the y-axis (tok/s/gpu) falls.
    for w in front.windows(2) {
        let (a, b) = (&w[0], &w[1]);
        assert!(
            a.objective(Objective::ThroughputPerUser) <= b.objective(Objective::ThroughputPerUser)
        );
        assert!(
            a.objective(Objective::ThroughputPerGpu) >= b.objective(Objective::ThroughputPerGpu)
        );
        // The headline score is the first objective's raw value.
        assert_eq!(Some(a.score), a.objective(Objective::ThroughputPerGpu));
    }
}

#[test]
fn candidates_round_trip_through_json() {
    let objectives = [Objective::ThroughputPerGpu, Objective::E2eLatency];
    for (i, r) in ROWS.iter().enumerate() {
        let c = make_candidate(i, config(r), &report(r), &objectives, true);
        let text = serde_json::to_string(&c).unwrap();
        let back: sweeper_score::Candidate = serde_json::from_str(&text).unwrap();
        assert_eq!(back, c);
        // Unknown report keys stay in the report, not in the candidate's metrics.
        assert!(!c.metrics.contains_key("src_output_tput_per_gpu"));
        assert_eq!(c.metrics.len(), 5);
    }
}

#[test]
fn a_report_without_latency_ranks_last_for_latency() {
    let mut cs = scalar_candidates(Objective::E2eLatency);
    let bare = Report::from_json(99, &json!({"output_throughput_tok_s": 1e9})).unwrap();
    cs.insert(
        0,
        make_candidate(99, Map::new(), &bare, &[Objective::E2eLatency], false),
    );
    assert_eq!(score(&bare, Objective::E2eLatency), f64::NEG_INFINITY);
    assert_eq!(rank(cs).last().map(|c| c.index), Some(99));
}

#[test]
fn nan_is_rejected_naming_candidate_and_key() {
    let map = [("mean_e2e_latency_ms".to_owned(), f64::NAN)]
        .into_iter()
        .collect();
    assert_eq!(
        Report::from_map(12, map),
        Err(ScoreError::NanReport {
            candidate: 12,
            key: "mean_e2e_latency_ms".into()
        })
    );
}

/// Property tests of the scoring layer (the kernels' own suite is `tests/props.rs`).
/// Small in-code case count; `PROPTEST_CASES` raises it.
mod props {
    use proptest::prelude::*;
    use serde_json::Map;
    use std::collections::BTreeMap;
    use sweeper_goal::{Direction, Objective};
    use sweeper_score::{
        Candidate, KNOWN_METRICS, Report, make_candidate, objective_value, pareto_front, rank,
        score,
    };

    fn config() -> ProptestConfig {
        let cases = std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(64);
        ProptestConfig {
            cases,
            ..ProptestConfig::default()
        }
    }

    /// A report value: small grid (ties), zero and negative zero, ±inf, ordinary numbers.
    fn value() -> impl Strategy<Value = f64> {
        prop_oneof![
            6 => (-2i32..=4).prop_map(f64::from),
            1 => Just(-0.0),
            1 => prop_oneof![Just(f64::INFINITY), Just(f64::NEG_INFINITY)],
            2 => -1.0e6..1.0e6f64,
        ]
    }

    /// A report over the known keys, each present or missing.
    fn report() -> impl Strategy<Value = Report> {
        proptest::collection::vec(proptest::option::of(value()), KNOWN_METRICS.len()).prop_map(
            |values| {
                let map: BTreeMap<String, f64> = KNOWN_METRICS
                    .iter()
                    .zip(values)
                    .filter_map(|(k, v)| v.map(|v| ((*k).to_owned(), v)))
                    .collect();
                Report::from_map(0, map).expect("no NaN in the strategy")
            },
        )
    }

    fn objective() -> impl Strategy<Value = Objective> {
        proptest::sample::select(Objective::ALL.to_vec())
    }

    fn gpus() -> impl Strategy<Value = f64> {
        prop_oneof![(0u8..=4).prop_map(f64::from), Just(f64::INFINITY)]
    }

    fn candidates(
        objectives: Vec<Objective>,
        pareto: bool,
    ) -> impl Strategy<Value = Vec<Candidate>> {
        proptest::collection::vec((report(), gpus()), 0..24).prop_map(move |rows| {
            rows.into_iter()
                .enumerate()
                .map(|(i, (r, g))| {
                    let mut config = Map::new();
                    config.insert("used_gpus".into(), sweeper_score::json_f64::to_value(g));
                    make_candidate(i, config, &r, &objectives, pareto)
                })
                .collect()
        })
    }

    /// Two or three distinct objectives.
    fn objective_set() -> impl Strategy<Value = Vec<Objective>> {
        proptest::sample::subsequence(Objective::ALL.to_vec(), 2..=3).prop_shuffle()
    }

    /// The candidate-level dominance of SPEC 3, written directly.
    fn dominates(a: &Candidate, b: &Candidate, objectives: &[Objective]) -> bool {
        let mut strictly = false;
        for &o in objectives {
            let s = o.direction().sign();
            let (x, y) = (s * a.objective(o).unwrap(), s * b.objective(o).unwrap());
            if x < y {
                return false;
            }
            if x > y {
                strictly = true;
            }
        }
        strictly
    }

    proptest! {
        #![proptest_config(config())]

        #[test]
        fn scores_are_never_nan(r in report(), o in objective()) {
            let v = objective_value(&r, o);
            prop_assert!(!v.is_nan());
            prop_assert!(!score(&r, o).is_nan());
            let signed = match o.direction() {
                Direction::Maximize => v,
                Direction::Minimize => -v,
            };
            prop_assert_eq!(score(&r, o).to_bits(), signed.to_bits());
        }

        #[test]
        fn rank_is_a_sorted_stable_permutation(
            cs in objective().prop_flat_map(|o| candidates(vec![o], false)),
        ) {
            let n = cs.len();
            let ranked = rank(cs);
            let mut seen: Vec<usize> = ranked.iter().map(|c| c.index).collect();
            seen.sort_unstable();
            prop_assert_eq!(seen, (0..n).collect::<Vec<_>>());
            for w in ranked.windows(2) {
                let (a, b) = (&w[0], &w[1]);
                let ordered = a.score > b.score
                    || (a.score == b.score && a.used_gpus < b.used_gpus)
                    || (a.score == b.score && a.used_gpus == b.used_gpus && a.index < b.index);
                prop_assert!(ordered, "{:?} before {:?}", (a.score, a.used_gpus, a.index), (b.score, b.used_gpus, b.index));
            }
        }

        #[test]
        fn front_is_the_brute_force_front_sorted_by_the_last_objective(
            (objectives, cs) in objective_set().prop_flat_map(|os| (Just(os.clone()), candidates(os, true))),
        ) {
            let front = pareto_front(&cs, &objectives).unwrap();
            let want: Vec<usize> = cs
                .iter()
                .filter(|b| !cs.iter().any(|a| dominates(a, b, &objectives)))
                .map(|c| c.index)
                .collect();
            let mut got: Vec<usize> = front.iter().map(|c| c.index).collect();
            let last = *objectives.last().unwrap();
            for w in front.windows(2) {
                let (x, y) = (w[0].objective(last).unwrap(), w[1].objective(last).unwrap());
                prop_assert!(x < y || (x == y && w[0].index < w[1].index));
            }
            got.sort_unstable();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn candidates_round_trip_through_json(
            cs in objective_set().prop_flat_map(|os| candidates(os, true)),
            pareto in any::<bool>(),
        ) {
            let cs: Vec<Candidate> = if pareto {
                cs
            } else {
                rank(cs.into_iter().map(|mut c| { c.objectives = None; c }).collect())
            };
            let text = serde_json::to_string(&cs).unwrap();
            let back: Vec<Candidate> = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(back.len(), cs.len());
            for (a, b) in back.iter().zip(&cs) {
                prop_assert_eq!(a.score.to_bits(), b.score.to_bits());
                prop_assert_eq!(a.used_gpus.to_bits(), b.used_gpus.to_bits());
                prop_assert_eq!(&a.metrics, &b.metrics);
                prop_assert_eq!(&a.objectives, &b.objectives);
            }
        }
    }
}

/// `used_gpus` at its boundary (issue 30, item 12): zero is a count, anything below it or
/// not a number is not.
#[test]
fn used_gpus_accepts_zero_and_refuses_below_it_and_nan() {
    let cfg = |v: Value| {
        let mut m = Map::new();
        m.insert("used_gpus".into(), v);
        m
    };
    assert_eq!(sweeper_score::used_gpus(0, &cfg(json!(0))), Ok(0.0));
    assert_eq!(sweeper_score::used_gpus(0, &cfg(json!(0.0))), Ok(0.0));
    assert_eq!(sweeper_score::used_gpus(0, &cfg(json!("0"))), Ok(0.0));
    assert_eq!(sweeper_score::used_gpus(0, &Map::new()), Ok(0.0));
    for bad in [
        json!(-1e-300),
        json!(-1),
        json!("-0.5"),
        json!("NaN"),
        json!("nan"),
    ] {
        let err = sweeper_score::used_gpus(3, &cfg(bad.clone())).unwrap_err();
        assert!(
            matches!(&err, ScoreError::Invalid { candidate: 3, key, .. } if key == "used_gpus"),
            "{bad}: {err:?}"
        );
    }
    assert!(is_feasible(0.0, 0.0));
    assert!(is_feasible(8.0, 8.0));
    assert!(!is_feasible(8.5, 8.0));
}
