//! Front kernels: edge cases and errors through the public API.

use sweeper_goal::Direction::{self, Maximize, Minimize};
use sweeper_score::ScoreError;
use sweeper_score::front::{
    SimdLevel, dominates, hypervolume, merge_fronts, nondominated, nondominated_ranks,
    nondominated_with_level, nondominated_with_threshold, pareto_front_sorted,
};

const MAX2: [Direction; 2] = [Maximize, Maximize];

#[test]
fn duplicates_on_the_front_are_all_kept() {
    let data = [1.0, 2.0, 1.0, 2.0, 2.0, 1.0, 0.0, 0.0, 2.0, 1.0];
    assert_eq!(nondominated(&data, 2, &MAX2).unwrap(), vec![0, 1, 2, 4]);
}

#[test]
fn negative_zero_equals_zero() {
    let data = [0.0, 1.0, -0.0, 1.0];
    assert_eq!(nondominated(&data, 2, &MAX2).unwrap(), vec![0, 1]);
    assert!(!dominates(&[0.0, 1.0], &[-0.0, 1.0], &MAX2));
}

#[test]
fn infinities_are_ordinary_values() {
    let data = [
        f64::INFINITY,
        0.0,
        5.0,
        5.0,
        f64::NEG_INFINITY,
        9.0,
        1.0,
        f64::NEG_INFINITY,
    ];
    assert_eq!(nondominated(&data, 2, &MAX2).unwrap(), vec![0, 1, 2]);
    let hv = hypervolume(&data, 2, &MAX2, &[-1.0, -1.0]).unwrap();
    assert!(hv.is_infinite() && hv > 0.0);
}

#[test]
fn all_equal_rows_are_all_on_the_front() {
    let data = vec![3.0; 3 * 500];
    let front = nondominated_with_threshold(&data, 3, &[Minimize; 3], 1).unwrap();
    assert_eq!(front, (0..500).collect::<Vec<_>>());
}

#[test]
fn one_column_keeps_every_best_row() {
    let data = [1.0, 3.0, 2.0, 3.0];
    assert_eq!(nondominated(&data, 1, &[Maximize]).unwrap(), vec![1, 3]);
    assert_eq!(nondominated(&data, 1, &[Minimize]).unwrap(), vec![0]);
}

#[test]
fn nan_names_row_and_column() {
    let mut data = vec![1.0; 2 * 1000];
    data[2 * 700 + 1] = f64::NAN;
    let err = nondominated(&data, 2, &MAX2).unwrap_err();
    assert_eq!(
        err,
        ScoreError::NanValue {
            row: 700,
            column: 1
        }
    );
    let err = merge_fronts(&[1.0, 2.0], &[f64::NAN, 0.0], 2, &MAX2).unwrap_err();
    assert_eq!(err, ScoreError::NanValue { row: 1, column: 0 });
}

#[test]
fn nan_is_found_by_the_pass_at_every_level() {
    // Rows on a shrinking diagonal (each dominated by row 0), so that the pass's
    // branch-free test would drop a NaN row if it did not look for NaN; one NaN per case, in
    // a different column and row each time, among 5,000 rows (d = 2..8 reach the pass; d = 1
    // and d = 9 take the canonicalising path, which must report the same NaN). Row 0 would
    // be the small-input loop's first row (the largest sum) but for its NaN.
    for d in 1..=9 {
        for (case, row) in [0usize, 1, 63, 64, 4_321, 4_999].into_iter().enumerate() {
            let n = 5_000;
            let mut data: Vec<f64> = (0..n * d).map(|k| 1.0 - (k / d) as f64 * 1e-4).collect();
            let column = (case + row) % d;
            data[row * d + column] = f64::NAN;
            let dirs = vec![Maximize; d];
            for level in SimdLevel::ALL {
                for threshold in [1, usize::MAX] {
                    let err =
                        nondominated_with_level(&data, d, &dirs, threshold, level).unwrap_err();
                    assert_eq!(err, ScoreError::NanValue { row, column }, "d={d} {level:?}");
                }
            }
        }
    }
}

#[test]
fn every_level_gives_the_same_front() {
    // A deterministic cloud (a Weyl sequence per column) twice over, so that
    // duplicates, ties and minimized columns all reach the vectorized loops.
    for d in 1..=9 {
        let n = 2_000;
        let mut data: Vec<f64> = (0..n * d)
            .map(|k| ((k as f64) * 0.618_033_988_749_894_9 + (k % d) as f64 * 0.1).fract())
            .collect();
        data.copy_within(0..1_000 * d, 1_000 * d);
        let dirs: Vec<_> = (0..d)
            .map(|j| if j % 2 == 0 { Maximize } else { Minimize })
            .collect();
        let want = sweeper_score::front::nondominated_brute_force(&data, d, &dirs).unwrap();
        for level in SimdLevel::ALL {
            for threshold in [1, usize::MAX] {
                let got = nondominated_with_level(&data, d, &dirs, threshold, level).unwrap();
                assert_eq!(got, want, "d={d} {level:?} threshold {threshold}");
            }
        }
    }
}

#[test]
fn shape_errors() {
    assert!(matches!(
        nondominated(&[1.0, 2.0, 3.0], 2, &MAX2),
        Err(ScoreError::Shape { .. })
    ));
    assert!(matches!(
        nondominated(&[1.0, 2.0], 2, &[Maximize]),
        Err(ScoreError::Shape { .. })
    ));
    assert!(matches!(
        nondominated(&[], 0, &[]),
        Err(ScoreError::Shape { .. })
    ));
    assert!(matches!(
        hypervolume(&[1.0, 2.0], 2, &MAX2, &[0.0]),
        Err(ScoreError::Reference { .. })
    ));
    assert_eq!(
        nondominated(&[], 3, &[Maximize; 3]).unwrap(),
        Vec::<usize>::new()
    );
}

#[test]
fn sorted_front_goes_by_last_column_raw_value() {
    // (throughput max, latency min): the front drawn left to right by latency.
    let data = [10.0, 5.0, 20.0, 9.0, 5.0, 1.0, 1.0, 9.0];
    assert_eq!(
        pareto_front_sorted(&data, 2, &[Maximize, Minimize]).unwrap(),
        vec![2, 0, 1]
    );
}

#[test]
fn ranks_count_fronts() {
    let data = [3.0, 3.0, 2.0, 2.0, 1.0, 1.0, 2.0, 2.0, 3.0, 0.0];
    assert_eq!(
        nondominated_ranks(&data, 2, &MAX2).unwrap(),
        vec![0, 1, 2, 1, 1]
    );
}

#[test]
fn hypervolume_of_known_sets() {
    let hv = hypervolume(&[1.0, 2.0, 2.0, 1.0], 2, &MAX2, &[0.0, 0.0]).unwrap();
    assert_eq!(hv, 3.0);
    let cube = hypervolume(&[1.0; 4], 4, &[Maximize; 4], &[0.0; 4]).unwrap();
    assert_eq!(cube, 1.0);
    // Minimized columns count from the reference downwards.
    let hv = hypervolume(&[1.0, 1.0], 2, &[Minimize, Maximize], &[3.0, 0.0]).unwrap();
    assert_eq!(hv, 2.0);
}

/// The dominated hypervolume against an independent implementation: moocore's, on random
/// point sets in 3, 4 and 5 dimensions (a uniform cloud, points near the simplex, and a
/// coarse grid full of ties and equal last coordinates), written with moocore's values by
/// `fixtures/hv_moocore.py`. The d >= 4 slicing had only a unit cube as its test, which a
/// product turned into a quotient passes.
#[test]
fn hypervolume_agrees_with_moocore() {
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/hv_moocore.json")).expect("fixture JSON");
    let cases = fixture["cases"].as_array().expect("a list of cases");
    let mut dims = std::collections::BTreeSet::new();
    for case in cases {
        let name = case["name"].as_str().expect("a name");
        let d = usize::try_from(case["d"].as_u64().expect("d")).expect("small");
        let num = |v: &serde_json::Value| v.as_f64().expect("a number");
        let reference: Vec<f64> = case["reference"]
            .as_array()
            .expect("reference")
            .iter()
            .map(num)
            .collect();
        let rows: Vec<f64> = case["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .flat_map(|r| r.as_array().expect("a row").iter().map(num))
            .collect();
        let want = num(&case["hypervolume"]);
        assert!(want > 0.0 && rows.len().is_multiple_of(d), "{name}");
        dims.insert(d);
        let minimize = vec![Minimize; d];
        let got = hypervolume(&rows, d, &minimize, &reference).unwrap();
        let close = |got: f64| (got - want).abs() <= 1e-12 * want;
        assert!(close(got), "{name}: {got} against moocore's {want}");
        // the same sets maximized (every value negated) and with the columns rotated
        let negated: Vec<f64> = rows.iter().map(|v| -v).collect();
        let neg_ref: Vec<f64> = reference.iter().map(|v| -v).collect();
        let got = hypervolume(&negated, d, &vec![Maximize; d], &neg_ref).unwrap();
        assert!(close(got), "{name} maximized: {got} against {want}");
        let rotated: Vec<f64> = rows
            .chunks_exact(d)
            .flat_map(|r| r[1..].iter().chain(&r[..1]).copied())
            .collect();
        let got = hypervolume(&rotated, d, &minimize, &reference).unwrap();
        assert!(close(got), "{name} rotated: {got} against {want}");
    }
    assert_eq!(dims.into_iter().collect::<Vec<_>>(), [3, 4, 5]);
    assert!(
        fixture["oracle"]
            .as_str()
            .is_some_and(|o| o.starts_with("moocore ")),
        "{}",
        fixture["oracle"]
    );
}
