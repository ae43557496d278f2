//! Picking trials from a result: ids, the front, the top of a ranking, `--where`.

use serde_json::{Value, json};
use sweeper_export::{ExportOptions, Selection, export_trial, select};
use sweeper_tables::ResultFile;

fn result(kind: &str) -> ResultFile {
    let trial = |id: u64, tp: u64, tpu: f64, status: &str| {
        json!({"trial": id, "config": {"tp": tp, "replicas": 1, "used_gpus": tp},
               "status": status, "reason": null, "score": tpu,
               "metrics": {"mean_ttft_ms": 100.0 * tp as f64}})
    };
    let cand = |id: u64, tpu: f64, tpg: f64| json!({"index": id, "config": {}, "objectives": {"throughput_per_user": tpu, "throughput_per_gpu": tpg}, "score": tpg});
    serde_json::from_value(json!({
        "sweeper_version": "0", "seed": 1, "title": "t", "kind": kind, "target": "pareto",
        "objectives": [{"name": "throughput_per_gpu", "direction": "maximize", "unit": "tok/s/gpu"},
                       {"name": "throughput_per_user", "direction": "maximize", "unit": "tok/s/user"}],
        "candidates": [cand(2, 80.0, 100.0), cand(0, 20.0, 300.0)],
        "evaluated": [cand(0, 20.0, 300.0), cand(1, 10.0, 50.0), cand(2, 80.0, 100.0)],
        "trials": [trial(0, 1, 20.0, "feasible"), trial(1, 2, 10.0, "feasible"),
                   trial(2, 4, 80.0, "feasible"), trial(3, 8, 0.0, "failed")],
        "tallies": {"feasible": 3, "infeasible": 0, "failed": 1, "unsupported": 0, "cache_hits": 0},
        "top_reasons": [], "config": {}, "columns": ["tp", "replicas"]
    }))
    .unwrap()
}

fn pick(result: &ResultFile, s: &Selection) -> Result<Vec<u64>, String> {
    select(result, s).map_err(|e| e.to_string())
}

#[test]
fn ids_front_top_and_where_pick_the_trials_they_name() {
    let front = result("front");
    assert_eq!(
        pick(
            &front,
            &Selection {
                trials: vec![1, 1, 3],
                ..Selection::default()
            }
        ),
        Ok(vec![1, 3])
    );
    assert_eq!(
        pick(
            &front,
            &Selection {
                front: true,
                ..Selection::default()
            }
        ),
        Ok(vec![2, 0])
    );
    let filters = vec!["throughput_per_user>=50".to_owned()];
    assert_eq!(
        pick(
            &front,
            &Selection {
                front: true,
                filters: filters.clone(),
                ..Selection::default()
            }
        ),
        Ok(vec![2])
    );
    // Alone, --where filters every feasible trial, over parameters and metrics too.
    assert_eq!(
        pick(
            &front,
            &Selection {
                filters: vec!["tp<=2".to_owned()],
                ..Selection::default()
            }
        ),
        Ok(vec![0, 1])
    );
    assert_eq!(
        pick(
            &front,
            &Selection {
                filters: vec!["mean_ttft_ms>150".to_owned()],
                ..Selection::default()
            }
        ),
        Ok(vec![1, 2])
    );
    let ranking = result("ranking");
    assert_eq!(
        pick(
            &ranking,
            &Selection {
                top: Some(1),
                ..Selection::default()
            }
        ),
        Ok(vec![2])
    );
}

#[test]
fn the_knee_is_the_front_point_with_the_largest_scaled_sum() {
    // The front: trial 2 (tpu 80, tpg 100) and trial 0 (tpu 20, tpg 300); scaled, each is
    // best on one objective and worst on the other: a tie, the first in the front's order.
    let front = result("front");
    assert_eq!(
        pick(
            &front,
            &Selection {
                knee: true,
                ..Selection::default()
            }
        ),
        Ok(vec![2])
    );
    // A third point between them, above the line between the ends, is the knee.
    let mut three = result("front");
    three
        .candidates
        .push(serde_json::json!({"index": 1, "config": {},
        "objectives": {"throughput_per_user": 60.0, "throughput_per_gpu": 250.0}, "score": 250.0}));
    assert_eq!(sweeper_export::knee(&three).unwrap(), 1);
    let e = pick(
        &result("ranking"),
        &Selection {
            knee: true,
            ..Selection::default()
        },
    )
    .unwrap_err();
    assert!(e.contains("--knee is a point of a Pareto front"), "{e}");
}

#[test]
fn every_selection_fault_says_what_to_give() {
    let front = result("front");
    let e = pick(
        &front,
        &Selection {
            trials: vec![9],
            ..Selection::default()
        },
    )
    .unwrap_err();
    assert!(
        e.contains("the sweep has no trial 9 (its trials are 0 to 3)"),
        "{e}"
    );
    let e = pick(
        &front,
        &Selection {
            top: Some(2),
            ..Selection::default()
        },
    )
    .unwrap_err();
    assert!(e.contains("use --front"), "{e}");
    let e = pick(
        &result("ranking"),
        &Selection {
            front: true,
            ..Selection::default()
        },
    )
    .unwrap_err();
    assert!(e.contains("use --top K"), "{e}");
    let e = pick(&front, &Selection::default()).unwrap_err();
    assert!(
        e.contains("--trial ID (repeatable), --front, --knee, --top K or --where EXPR"),
        "{e}"
    );
    let e = pick(
        &front,
        &Selection {
            front: true,
            top: Some(1),
            ..Selection::default()
        },
    )
    .unwrap_err();
    assert!(
        e.contains("give one of --trial, --front, --knee and --top"),
        "{e}"
    );
    let e = pick(
        &front,
        &Selection {
            filters: vec!["goodput>1".to_owned()],
            ..Selection::default()
        },
    )
    .unwrap_err();
    assert!(
        e.contains(
            "no trial has `goodput`; name an objective (throughput_per_gpu, throughput_per_user)"
        ),
        "{e}"
    );
    let e = pick(
        &front,
        &Selection {
            filters: vec!["tp>100".to_owned()],
            ..Selection::default()
        },
    )
    .unwrap_err();
    assert!(e.contains("no trial matches tp>100"), "{e}");
}

#[test]
fn candidate_json_traces_the_manifest_to_the_trial() {
    let front = result("front");
    let b = export_trial(&front, 2, &ExportOptions::default(), "sweep-dir").unwrap();
    let c: Value = serde_json::from_str(&b.candidate_json).unwrap();
    assert_eq!(c["trial"], 2);
    assert_eq!(c["config"]["tp"], 4);
    assert_eq!(c["objectives"]["throughput_per_user"], 80.0);
    assert_eq!(c["report"]["metrics"]["mean_ttft_ms"], 400.0);
    assert_eq!(c["deployment"]["used_gpus"], 4);
    assert_eq!(c["deployment"]["pools"]["worker"]["gpus_per_worker"], 4);
    assert!(
        b.rendered
            .dgd_yaml
            .starts_with("# trial 2 of \"sweep-dir\", exported by sweeper")
    );
    assert_eq!(b.rendered.manifest["metadata"]["name"], "sweeper-trial-2");
    let dir = tempfile::tempdir().unwrap();
    let folder = sweeper_export::write_bundle(dir.path(), &b).unwrap();
    for f in ["dgd.yaml", "launch.sh", "candidate.json"] {
        assert!(folder.join(f).is_file(), "{f}");
    }
}
