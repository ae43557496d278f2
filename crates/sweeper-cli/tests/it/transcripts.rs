//! The READMEs' marked transcripts are still what the tools print (issue 17): every block
//! runs with this build's `sweeper` first on PATH and its normalised output must equal the
//! README's. Blocks that need Dynamo or aiconfigurator run only when their `python3` can
//! import the tool (the adapters' venv, `SWEEPER_ADAPTERS_VENV`); the others always.
//! A skipped block is named on stdout with the reason (`cargo test -- --nocapture`).
//! The block format, the runner and the normalisation are `xtask/src/transcripts.rs`,
//! shared by path with `cargo xtask transcripts`, which rewrites a drifted block.

#[allow(dead_code)]
#[path = "../../../../xtask/src/transcripts.rs"]
mod blocks;

use blocks::{FILES, Outcome, refresh};
use std::path::Path;

#[test]
fn readme_transcripts_match_the_tools() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let sweeper_dir = Path::new(env!("CARGO_BIN_EXE_sweeper"))
        .parent()
        .unwrap()
        .to_path_buf();
    let mut drifted = Vec::new();
    let mut ran = 0;
    for file in FILES {
        let (_, outcomes) = refresh(&root, file, &sweeper_dir, &|_| true).unwrap();
        for (name, outcome) in outcomes {
            match outcome {
                Outcome::Same => ran += 1,
                Outcome::Skipped(why) => {
                    #[allow(clippy::print_stdout)]
                    {
                        println!("transcript {file}: {name}: skipped: {why}");
                    }
                }
                Outcome::Drifted(diff) => drifted.push(format!("{file}: {name}:\n{diff}")),
            }
        }
    }
    assert!(
        drifted.is_empty(),
        "transcripts drifted (- README, + now, normalised); `cargo xtask transcripts` rewrites them:\n{}",
        drifted.join("\n")
    );
    // the sweeper-only blocks always run: quickstart-run, serving-score, aiperf-adapter,
    // aiperf-sweep, aiperf-grid
    assert!(ran >= 5, "only {ran} transcript blocks ran");
}

/// The normalisation replaces timings and temporary paths, and nothing else.
#[test]
fn transcript_normalisation_replaces_timings_only() {
    use blocks::normalise;
    assert_eq!(
        normalise("took 0.85 s of wall time"),
        "took <DURATION> of wall time"
    );
    assert_eq!(
        normalise("replayed 640 requests in 458 ms"),
        "replayed 640 requests in <DURATION>"
    );
    assert_eq!(normalise("exit 0, wall 0.67 s"), "exit 0, wall <DURATION>");
    assert_eq!(normalise("(5.1 s)."), "(<DURATION>).");
    assert_eq!(normalise("after 5s,"), "after <DURATION>,");
    assert_eq!(
        normalise(r#"{"load_ms": 4918.2, "kernel_ms": 3, "x_ms": 2}"#),
        r#"{"load_ms": <MS>, "kernel_ms": <MS>, "x_ms": 2}"#
    );
    assert_eq!(normalise("at /tmp/.tmpAb12Cd/out.json ok"), "at <TMP> ok");
    // figures that are not timings stay, so a changed figure is a drift
    let kept =
        "127 trials: 120 feasible, 0 cache hits; 16 GPUs, 1323.9 tok/s, mean_ttft_ms 234.365";
    assert_eq!(normalise(kept), kept);
    assert_ne!(normalise("1323.9"), normalise("1324.0"));
}

/// A block of the format parses, and a malformed comment is refused with its line.
#[test]
fn transcript_blocks_parse() {
    let text = "x\n<!-- transcript: one\nrun: echo hi\nstderr: \"# e: \"\nstatus: wall\n-->\n```\nold\n```\n";
    let blocks = blocks::blocks(text).unwrap();
    assert_eq!(blocks.len(), 1);
    let b = &blocks[0];
    assert_eq!((b.name.as_str(), b.body_start, b.body_end), ("one", 7, 8));
    assert_eq!(b.run, ["echo hi"]);
    assert_eq!(b.stderr_prefix.as_deref(), Some("# e: "));
    assert!(b.status);
    let err = blocks::blocks("<!-- transcript: two\nbogus: 1\n-->\n```\n```\n").unwrap_err();
    assert!(err.contains("unknown key `bogus`"), "{err}");
    let err = blocks::blocks("<!-- transcript: three -->\ntext\n").unwrap_err();
    assert!(err.contains("must open a fenced block"), "{err}");
    assert_eq!(b.attempts, 1);
    let with =
        "<!-- transcript: four\nattempts: 3 its router breaks ties at random\n-->\n```\n```\n";
    assert_eq!(blocks::blocks(with).unwrap()[0].attempts, 3);
    for bad in ["attempts: 0 why", "attempts: 3", "attempts: x why"] {
        let text = format!("<!-- transcript: five\n{bad}\n-->\n```\n```\n");
        let err = blocks::blocks(&text).unwrap_err();
        assert!(err.contains("is not `attempts: N WHY`"), "{bad}: {err}");
    }
}
