//! SPEC 9 scoring: `ttft`, `min_gpus`, `cost_per_mtok` and `strict_sla`, as tables and as
//! properties against brute-force oracles, and `cost_per_mtok` against `throughput_per_gpu`
//! on every row of `examples/serving/`.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use sweeper_goal::{Goal, Objective, parse};
use sweeper_score::{
    Candidate, Report, ScoreError, Scorer, cost_per_mtok, make_candidate, objective_value, rank,
    score,
};

/// A goal from its JSON body (this crate reads JSON configs only).
fn goal(body: &str) -> Goal {
    parse(&format!("{{\"goal\": {{{body}}}}}")).unwrap().goal
}

fn report(v: &Value) -> Report {
    Report::from_json(0, v).unwrap()
}

fn config(v: &Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn indices(cs: &[Candidate]) -> Vec<usize> {
    cs.iter().map(|c| c.index).collect()
}

#[test]
fn ttft_is_minimized_and_a_missing_one_is_worst() {
    let cases = [
        (json!({"mean_ttft_ms": 250.0}), 250.0, -250.0),
        (json!({"mean_ttft_ms": 0.0}), 0.0, 0.0),
        (json!({}), f64::INFINITY, f64::NEG_INFINITY),
        (json!({"mean_ttft_ms": f64::MAX}), f64::MAX, -f64::MAX),
    ];
    for (r, value, signed) in cases {
        let r = report(&r);
        assert_eq!(objective_value(&r, Objective::Ttft), value);
        assert_eq!(score(&r, Objective::Ttft), signed);
    }
    let g = goal(r#""target": "ttft""#);
    let s = Scorer::new(&g);
    let cs: Vec<Candidate> = [
        json!({"mean_ttft_ms": 900.0}),
        json!({}),
        json!({"mean_ttft_ms": 120.0}),
    ]
    .iter()
    .enumerate()
    .map(|(i, r)| s.candidate(i, Map::new(), &report(r)).unwrap())
    .collect();
    assert_eq!(indices(&rank(cs)), [2, 0, 1]);
}

#[test]
fn cost_per_mtok_table() {
    // (report, price, dollars per million output tokens)
    let hour = 3_600_000.0;
    let cases = [
        // 8 GPUs for an hour at 1000 tok/s: 3.6 Mtok for 8 GPU-hours at $2.25 = $18.
        (
            json!({"output_throughput_tok_s": 1000.0, "gpu_hours": 8.0, "duration_ms": hour}),
            2.25,
            5.0,
        ),
        // half an hour of 4 GPUs at 500 tok/s: 0.9 Mtok for 2 GPU-hours at $4.5 = $9.
        (
            json!({"output_throughput_tok_s": 500.0, "gpu_hours": 2.0, "duration_ms": hour / 2.0}),
            4.5,
            10.0,
        ),
        // no tokens, no duration, no GPU-hours: the cost is unknown and reads +inf
        (
            json!({"gpu_hours": 8.0, "duration_ms": hour}),
            2.0,
            f64::INFINITY,
        ),
        (
            json!({"output_throughput_tok_s": 0.0, "gpu_hours": 8.0, "duration_ms": hour}),
            2.0,
            f64::INFINITY,
        ),
        (
            json!({"output_throughput_tok_s": 10.0, "gpu_hours": 8.0}),
            2.0,
            f64::INFINITY,
        ),
        (
            json!({"output_throughput_tok_s": 10.0, "duration_ms": hour}),
            2.0,
            f64::INFINITY,
        ),
        (
            json!({"output_throughput_tok_s": -10.0, "gpu_hours": 8.0, "duration_ms": hour}),
            2.0,
            f64::INFINITY,
        ),
    ];
    for (i, (r, price, want)) in cases.iter().enumerate() {
        let got = cost_per_mtok(&report(r), *price);
        assert!(
            (got - want).abs() <= 1e-12 * want.abs() || got == *want,
            "case {i}: {got} != {want}"
        );
    }
    // objective_value prices a GPU-hour at $1; the scorer at the goal's price
    let r = report(&cases[0].0);
    assert!((objective_value(&r, Objective::CostPerMtok) - 8.0 / 3.6).abs() < 1e-12);
    let g = goal(r#""target": "cost_per_mtok", "price_per_gpu_hour": 2.25"#);
    let c = Scorer::new(&g).candidate(0, Map::new(), &r).unwrap();
    assert!(
        (c.score + 5.0).abs() < 1e-12,
        "minimized: the score is -5, got {}",
        c.score
    );
}

#[test]
fn a_price_map_reads_the_candidates_gpu() {
    let hour = 3_600_000.0;
    let r =
        report(&json!({"output_throughput_tok_s": 1000.0, "gpu_hours": 8.0, "duration_ms": hour}));
    let g = goal(r#""target": "cost_per_mtok", "price_per_gpu_hour": {"h200": 3.6, "b200": 7.2}"#);
    let s = Scorer::new(&g);
    let on = |gpu: &str| {
        s.value(0, &config(&json!({"gpu": gpu})), &r, Objective::CostPerMtok)
            .unwrap()
    };
    assert!((on("h200") - 8.0).abs() < 1e-12);
    assert!((on("b200") - 16.0).abs() < 1e-12);
    // no `gpu` parameter: the built-in evaluator's gpu, when the scorer knows it
    let built_in = s.clone().with_default_gpu(Some("b200"));
    let v = built_in
        .value(0, &Map::new(), &r, Objective::CostPerMtok)
        .unwrap();
    assert!((v - 16.0).abs() < 1e-12);
    // a GPU the map lacks, or none at all, fails the candidate with a reason
    let err = s
        .candidate(7, config(&json!({"gpu": "mi355x"})), &r)
        .unwrap_err();
    assert!(
        matches!(err, ScoreError::Invalid { candidate: 7, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("no price for GPU `mi355x`"),
        "{err}"
    );
    let err = s.candidate(8, Map::new(), &r).unwrap_err();
    assert!(err.to_string().contains("names no GPU"), "{err}");
}

/// (index, `used_gpus`, goodput rps) rows and the `min_gpus` ranking they must come to with a
/// floor of 10 requests/s.
#[test]
fn min_gpus_ranking_table() {
    let g = goal(
        r#""target": "min_gpus", "min_goodput_rps": 10, "sla": {"ttft_ms": 2000, "itl_ms": 30}"#,
    );
    let s = Scorer::new(&g);
    let rows: [(f64, Option<f64>); 8] = [
        (8.0, Some(40.0)),   // 0 satisfying, 8 GPUs
        (4.0, Some(10.0)),   // 1 satisfying at exactly the floor, 4 GPUs
        (4.0, Some(12.0)),   // 2 satisfying, 4 GPUs, more goodput than 1
        (2.0, Some(9.99)),   // 3 just under the floor: after every satisfying one
        (1.0, Some(5.0)),    // 4 under
        (16.0, Some(9.99)),  // 5 under, same goodput as 3, more GPUs
        (2.0, None),         // 6 no goodput reported: reads 0
        (32.0, Some(400.0)), // 7 satisfying, most GPUs
    ];
    let cs: Vec<Candidate> = rows
        .iter()
        .enumerate()
        .map(|(i, &(gpus, rps))| {
            let r = match rps {
                Some(x) => json!({"goodput_request_throughput_rps": x}),
                None => json!({}),
            };
            s.candidate(i, config(&json!({"used_gpus": gpus})), &report(&r))
                .unwrap()
        })
        .collect();
    let sat: Vec<Option<bool>> = cs.iter().map(|c| c.satisfying).collect();
    assert_eq!(
        sat,
        [true, true, true, false, false, false, false, true].map(Some)
    );
    assert_eq!(cs[1].score, 10.0, "the score is the goodput in requests/s");
    assert_eq!(indices(&rank(cs.clone())), [2, 1, 0, 7, 3, 5, 4, 6]);
    // the sampler's number keeps the same tiers: every satisfying one above every other
    let v: Vec<f64> = cs.iter().map(|c| s.sampler_value(c)).collect();
    assert!(
        v[2] == v[1] && v[1] > v[0] && v[0] > v[7] && v[7] > 1.0,
        "{v:?}"
    );
    assert!(
        v[3] < 1.0 && v[3] > v[4] && v[4] > v[6] && v[6] == 0.0,
        "{v:?}"
    );
    // other goals carry no `satisfying` and rank as before
    let plain = goal(r#""target": "throughput""#);
    let c = Scorer::new(&plain)
        .candidate(0, Map::new(), &report(&json!({})))
        .unwrap();
    assert_eq!(c.satisfying, None);
}

#[test]
fn strict_sla_table() {
    let mean =
        goal(r#""strict_sla": true, "sla": {"ttft_ms": 800, "itl_ms": 30, "e2e_ms": 20000}"#);
    let p90 = goal(r#""strict_sla": {"percentile": 90}, "sla": {"ttft_ms": 800, "itl_ms": 30}"#);
    let lax = goal(r#""sla": {"ttft_ms": 800, "itl_ms": 30}"#);
    let within =
        json!({"mean_ttft_ms": 800.0, "mean_itl_ms": 30.0, "mean_e2e_latency_ms": 20000.0});
    let cases: [(&Goal, Value, Option<&str>); 9] = [
        (&mean, within.clone(), None),
        (
            &mean,
            json!({"mean_ttft_ms": 800.5, "mean_itl_ms": 30.0, "mean_e2e_latency_ms": 1.0}),
            Some("over sla: mean_ttft_ms=800.5 > ttft_ms=800"),
        ),
        (
            &mean,
            json!({"mean_ttft_ms": 1.0, "mean_itl_ms": 31.0, "mean_e2e_latency_ms": 1.0}),
            Some("over sla: mean_itl_ms=31 > itl_ms=30"),
        ),
        (
            &mean,
            json!({"mean_ttft_ms": 1.0, "mean_itl_ms": 1.0, "mean_e2e_latency_ms": 20001.0}),
            Some("over sla: mean_e2e_latency_ms=20001 > e2e_ms=20000"),
        ),
        (
            &mean,
            json!({"mean_ttft_ms": 1.0, "mean_e2e_latency_ms": 1.0}),
            Some("over sla: the report has no mean_itl_ms to check itl_ms=30 against"),
        ),
        (
            &p90,
            json!({"p90_ttft_ms": 800.0, "p90_itl_ms": 29.0, "mean_ttft_ms": 9e9}),
            None,
        ),
        (
            &p90,
            json!({"p90_ttft_ms": 900.0, "p90_itl_ms": 29.0}),
            Some("over sla: p90_ttft_ms=900 > ttft_ms=800"),
        ),
        (
            &p90,
            within.clone(),
            Some("over sla: the report has no p90_ttft_ms to check ttft_ms=800 against"),
        ),
        (&lax, json!({"mean_ttft_ms": 9e9}), None),
    ];
    for (i, (g, r, want)) in cases.iter().enumerate() {
        assert_eq!(
            Scorer::new(g).over_sla(&report(r)).as_deref(),
            *want,
            "case {i}"
        );
    }
}

/// Every data row of the serving example: (`used_gpus`, report).
fn serving_rows() -> Vec<(f64, Report)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/serving/agentx_qwen3.5-397b-fp8_mi355x_sglang.csv"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let keys = [
        "output_throughput_tok_s",
        "mean_output_token_throughput_per_user",
        "mean_ttft_ms",
        "mean_e2e_latency_ms",
        "duration_ms",
        "gpu_hours",
    ];
    let gpus = col("used_gpus");
    let rows: Vec<(f64, Report)> = lines
        .enumerate()
        .map(|(i, line)| {
            let cells: Vec<&str> = line.split(',').collect();
            let m: Map<String, Value> = keys
                .iter()
                .map(|k| {
                    (
                        (*k).to_owned(),
                        json!(cells[col(k)].parse::<f64>().unwrap()),
                    )
                })
                .collect();
            (
                cells[gpus].parse().unwrap(),
                Report::from_json(i, &Value::Object(m)).unwrap(),
            )
        })
        .collect();
    assert!(rows.len() >= 40, "{} rows", rows.len());
    rows
}

fn ranked_by(goal: &Goal, rows: &[(f64, Report)]) -> Vec<usize> {
    let s = Scorer::new(goal);
    let cs = rows
        .iter()
        .enumerate()
        .map(|(i, (g, r))| s.candidate(i, config(&json!({"used_gpus": g})), r).unwrap())
        .collect();
    indices(&rank(cs))
}

fn cases() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(32);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

/// A small grid of values (ties and duplicates), sometimes missing.
fn grid() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![
        6 => (0u8..=6).prop_map(|x| Some(f64::from(x) * 2.0)),
        1 => Just(None),
    ]
}

proptest! {
    #![proptest_config(cases())]

    /// With one price, the cheapest row per token is the one with the most tokens per GPU:
    /// the cost ranking is the throughput_per_gpu ranking, row for row.
    #[test]
    fn one_price_ranks_cost_as_throughput_per_gpu(price in 0.01f64..100.0) {
        let rows = serving_rows();
        let cost = goal(&format!(r#""target": "cost_per_mtok", "price_per_gpu_hour": {price}"#));
        let per_gpu = goal(r#""target": "throughput_per_gpu""#);
        prop_assert_eq!(ranked_by(&cost, &rows), ranked_by(&per_gpu, &rows));
    }

    /// min_gpus ranks as the stated oracle: satisfying first by (gpus ascending, goodput
    /// descending), then the rest by (goodput descending, gpus ascending), then input order.
    #[test]
    fn min_gpus_rank_matches_the_oracle(
        rows in proptest::collection::vec(((1u8..=4).prop_map(|g| f64::from(g) * 2.0), grid()), 1..24),
        floor in (1u8..=12).prop_map(f64::from),
    ) {
        let g = goal(&format!(r#""target": "min_gpus", "min_goodput_rps": {floor}, "sla": {{"e2e_ms": 100}}"#));
        let s = Scorer::new(&g);
        let cs: Vec<Candidate> = rows.iter().enumerate().map(|(i, &(gpus, rps))| {
            let r = rps.map_or(json!({}), |x| json!({"goodput_request_throughput_rps": x}));
            s.candidate(i, config(&json!({"used_gpus": gpus})), &report(&r)).unwrap()
        }).collect();
        let mut oracle: Vec<(usize, f64, f64)> = rows.iter().enumerate()
            .map(|(i, &(gpus, rps))| (i, gpus, rps.unwrap_or(0.0))).collect();
        oracle.sort_by(|a, b| {
            let (sa, sb) = (a.2 >= floor, b.2 >= floor);
            sb.cmp(&sa).then_with(|| if sa && sb {
                a.1.total_cmp(&b.1).then(b.2.total_cmp(&a.2))
            } else {
                b.2.total_cmp(&a.2).then(a.1.total_cmp(&b.1))
            })
        });
        let want: Vec<usize> = oracle.iter().map(|o| o.0).collect();
        prop_assert_eq!(indices(&rank(cs)), want);
    }

    /// A report passes a strict SLA iff every bound that is set is at least its value
    /// (inclusive), and a missing key never passes.
    #[test]
    fn strict_sla_matches_the_oracle(
        bounds in (grid(), grid(), grid()),
        values in (grid(), grid(), grid()),
        percentile in prop_oneof![Just(None), (1u8..=99).prop_map(Some)],
    ) {
        let (b, v) = ([bounds.0, bounds.1, bounds.2], [values.0, values.1, values.2]);
        // an SLA bound is > 0: shift the grid's zero away
        let b = b.map(|x| x.map(|x| x + 1.0));
        prop_assume!(b.iter().any(Option::is_some));
        let names = ["ttft_ms", "itl_ms", "e2e_ms"];
        let sla: Vec<String> = names.iter().zip(b).filter_map(|(n, x)| x.map(|x| format!(r#""{n}": {x}"#))).collect();
        let strict = percentile.map_or("true".to_owned(), |p| format!(r#"{{"percentile": {p}}}"#));
        let g = goal(&format!(r#""strict_sla": {strict}, "sla": {{{}}}"#, sla.join(", ")));
        let keys = g.strict_sla().unwrap().keys();
        let r: Map<String, Value> = keys.iter().zip(v).filter_map(|(k, x)| x.map(|x| (k.clone(), json!(x)))).collect();
        let passes = b.iter().zip(v).all(|(bound, value)| match (bound, value) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(bound), Some(value)) => value <= *bound,
        });
        let got = Scorer::new(&g).over_sla(&report(&Value::Object(r)));
        prop_assert_eq!(got.is_none(), passes, "{:?}", got);
    }

    /// For the SPEC 2 targets (no price, floor or strict SLA involved) the scorer builds
    /// exactly the candidate `make_candidate` builds.
    #[test]
    fn the_scorer_agrees_with_make_candidate_on_spec2_goals(
        target in proptest::sample::select(vec![
            r#""throughput""#, r#""throughput_per_gpu""#, r#""throughput_per_user""#,
            r#""e2e_latency""#, r#""ttft""#, r#""goodput", "sla": {"e2e_ms": 5}"#, r#""pareto""#,
        ]),
        values in proptest::collection::vec(grid(), 7),
    ) {
        let keys = [
            "output_throughput_tok_s", "mean_output_token_throughput_per_user",
            "mean_e2e_latency_ms", "goodput_output_throughput_tok_s", "gpu_hours",
            "duration_ms", "mean_ttft_ms",
        ];
        let r: Map<String, Value> = keys.iter().zip(&values)
            .filter_map(|(k, x)| x.map(|x| ((*k).to_owned(), json!(x)))).collect();
        let r = report(&Value::Object(r));
        let g = goal(&format!(r#""target": {target}"#));
        let c = config(&json!({"used_gpus": 4}));
        let want = make_candidate(3, c.clone(), &r, g.objectives(), g.is_pareto());
        prop_assert_eq!(Scorer::new(&g).candidate(3, c, &r).unwrap(), want);
    }
}

mod recommending {
    use super::{config, goal, report};
    use serde_json::json;
    use sweeper_score::{Candidate, RecommendOptions, Recommendation, Scorer, recommend};

    fn candidates() -> Vec<Candidate> {
        let g = goal(r#""target": "throughput""#);
        let s = Scorer::new(&g);
        // (gpus, goodput rps, mean ttft, mean itl)
        [
            (8.0, 45.0, 900.0, 20.0),
            (4.0, 41.0, 1500.0, 25.0),
            (4.0, 44.0, 1200.0, 29.0),
            (2.0, 30.0, 2500.0, 25.0),
            (1.0, 12.0, 3000.0, 40.0),
        ]
        .iter()
        .enumerate()
        .map(|(i, &(gpus, rps, ttft, itl))| {
            let r = report(&json!({
                "goodput_request_throughput_rps": rps, "mean_ttft_ms": ttft, "mean_itl_ms": itl,
            }));
            s.candidate(i, config(&json!({"used_gpus": gpus})), &r)
                .unwrap()
        })
        .collect()
    }

    fn opts(rate_rps: f64, scale_replicas: bool) -> RecommendOptions {
        RecommendOptions {
            rate_rps,
            scale_replicas,
            runner_ups: 2,
        }
    }

    #[test]
    fn fewest_gpus_then_the_larger_margin() {
        let Recommendation::Found {
            best, runner_ups, ..
        } = recommend(&candidates(), None, opts(40.0, false))
        else {
            panic!("40 req/s is served");
        };
        // two 4-GPU candidates serve it; the one with more headroom wins
        assert_eq!((best.candidate.index, best.gpus, best.copies), (2, 4.0, 1));
        assert!((best.margin - 0.1).abs() < 1e-12, "{}", best.margin);
        let next: Vec<(usize, f64)> = runner_ups
            .iter()
            .map(|p| (p.candidate.index, p.gpus))
            .collect();
        assert_eq!(next, [(1, 4.0), (0, 8.0)]);
    }

    #[test]
    fn replica_scaling_copies_a_candidate_and_says_how_many() {
        // 100 req/s: nobody alone; 3 copies of the 2-GPU one (90) fall short, 4 (120) serve
        // with 8 GPUs; 9 copies of the 1-GPU one (108) too, with 9 GPUs
        let Recommendation::Found { best, scaled, .. } =
            recommend(&candidates(), None, opts(100.0, true))
        else {
            panic!("served with copies");
        };
        assert!(scaled);
        // (3 copies of a 4-GPU one also serve it, with 12 GPUs)
        assert_eq!((best.candidate.index, best.copies, best.gpus), (3, 4, 8.0));
        assert!((best.margin - 0.2).abs() < 1e-12);
        assert!(matches!(
            recommend(&candidates(), None, opts(100.0, false)),
            Recommendation::NoneServes { .. }
        ));
    }

    #[test]
    fn none_serves_names_the_best_goodput_and_the_bound_missed_most() {
        let sla = sweeper_goal::Sla {
            ttft_ms: Some(2000.0),
            itl_ms: Some(30.0),
            e2e_ms: None,
        };
        let Recommendation::NoneServes {
            best_goodput,
            failed_bounds,
            considered,
            ..
        } = recommend(&candidates(), Some(&sla), opts(50.0, false))
        else {
            panic!("nothing reaches 50 req/s");
        };
        assert_eq!(considered, 5);
        assert_eq!(best_goodput.map(|p| p.candidate.index), Some(0));
        assert_eq!(
            failed_bounds,
            [
                ("capacity".to_owned(), 3),
                ("ttft_ms".to_owned(), 2),
                ("itl_ms".to_owned(), 1)
            ]
        );
        assert!(matches!(
            recommend(&[], Some(&sla), opts(1.0, true)),
            Recommendation::NoneServes {
                best_goodput: None,
                ..
            }
        ));
    }
}
