//! Front kernels: edge cases and errors through the public API.

use sweeper_goal::Direction::{self, Maximize, Minimize};
use sweeper_score::ScoreError;
use sweeper_score::front::{
    dominates, hypervolume, merge_fronts, nondominated, nondominated_ranks,
    nondominated_with_threshold, pareto_front_sorted,
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
