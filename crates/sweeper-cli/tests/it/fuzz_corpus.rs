//! Replays every input of the fuzz corpora (`fuzz/corpus/<target>/`) through the same entry
//! points the cargo-fuzz targets call, so that CI, on the stable toolchain, checks every
//! input the fuzzers ever kept (and every crash they found, once added there).

use std::path::Path;
use sweeper_tables::fuzzing::TARGETS;

#[test]
fn every_corpus_input_parses_or_fails_without_a_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    for (name, target) in TARGETS {
        let dir = root.join(name);
        let mut inputs = 0;
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            target(&data);
            inputs += 1;
        }
        assert!(inputs > 0, "the corpus of `{name}` is empty");
    }
}
