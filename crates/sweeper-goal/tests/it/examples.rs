//! The shipped `examples/*.yaml` all validate and resolve as their comments say.

use std::path::PathBuf;
use sweeper_goal::{Load, Objective, from_path};

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

#[test]
fn every_example_is_valid_and_round_trips() {
    let dir = example("");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let cfg = from_path(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(sweeper_goal::parse(&cfg.to_yaml()), Ok(cfg));
        seen += 1;
    }
    assert!(seen >= 4, "found {seen} examples in {}", dir.display());
}

#[test]
fn examples_resolve_as_documented() {
    let pareto = from_path(&example("pareto-kv-range.yaml")).unwrap();
    assert_eq!(
        pareto.goal.objectives(),
        &[Objective::ThroughputPerGpu, Objective::ThroughputPerUser]
    );
    assert_eq!(
        pareto.workload.unwrap().load(),
        Some(&Load::KvLoadRange {
            min: 0.05,
            max: 1.0
        })
    );
    let three = from_path(&example("pareto-three.yaml")).unwrap();
    assert_eq!(three.goal.objectives().len(), 3);
    let goodput = from_path(&example("goodput-sla.yaml")).unwrap();
    assert!(
        goodput
            .goal
            .sla()
            .is_some_and(sweeper_goal::Sla::is_sufficient)
    );
    let missing = from_path(&example("no-such-file.yaml")).unwrap_err();
    assert_eq!(missing.rule(), "io");
    assert_eq!(missing.path(), None);
}
