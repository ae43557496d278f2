//! Embeds sweeper's engine in a program of its own: an evaluator written here (a made-up
//! serving benchmark), a journaled sweep that is stopped half-way, and a resume that
//! finishes it without evaluating anything twice.
//!
//! ```sh
//! cargo run --manifest-path examples/embed-engine/Cargo.toml -- [OUT_DIR]
//! ```

use std::collections::BTreeSet;
use std::error::Error;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use sweeper_engine::sweeper_goal;
use sweeper_engine::{EvalOutcome, EvalRequest, Evaluator, FileJournal, RawReport, RunError, Sweeper};

/// A stand-in for a real benchmark: more tensor parallelism serves each user faster and
/// costs tok/s per GPU; a big batch cap raises throughput and slows users.
struct Bench {
    /// Trial ids evaluated by this process, to show that a resume re-runs none.
    seen: Mutex<Vec<u64>>,
    /// Set after this many evaluations (the "crash" of the first run).
    stop_after: Option<(usize, AtomicBool)>,
}

impl Evaluator for Bench {
    fn evaluate(&self, _worker: usize, request: &EvalRequest) -> EvalOutcome {
        let mut seen = self.seen.lock().expect("not poisoned");
        seen.push(request.id);
        if let Some((n, flag)) = &self.stop_after
            && seen.len() >= *n
        {
            flag.store(true, Ordering::SeqCst);
        }
        let tp = request.parameters["tp"].as_f64().unwrap_or(1.0);
        let batch = request.parameters["max_batch_size"].as_f64().unwrap_or(64.0);
        if tp * batch > 4096.0 {
            return EvalOutcome::Unsupported(format!("tp {tp} x batch {batch} does not fit"));
        }
        let per_gpu = 900.0 * batch.ln() / tp.sqrt();
        let per_user = 12.0 * tp.sqrt() * 256.0 / batch.max(1.0).sqrt();
        let mut report = RawReport::new();
        report.insert("output_throughput_tok_s".into(), per_gpu * tp);
        report.insert("mean_output_token_throughput_per_user".into(), per_user);
        report.insert("gpu_hours".into(), tp / 60.0);
        report.insert("duration_ms".into(), 60_000.0);
        EvalOutcome::Report(report)
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let out = std::env::args()
        .nth(1)
        .map_or_else(|| std::env::temp_dir().join("sweeper-embed-engine"), PathBuf::from);
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out)?;
    let journal_path = out.join("journal.jsonl");

    // JSON needs no YAML crate; the same keys as a sweeper YAML config
    let config = sweeper_goal::parse(
        r#"{"goal": {"target": "pareto"},
            "workload": {"isl": 4000, "osl": 500, "num_request_ratio": 10, "concurrency": 64},
            "search_space": {"gpu_budget": 8, "used_gpus": ["tp"],
                             "parameters": {"tp": {"values": [1, 2, 4, 8]},
                                            "max_batch_size": {"values": [32, 64, 128, 256, 512]}}},
            "sweep": {"max_rounds": 4, "candidates_per_round": 4, "parallel_evals": 2, "seed": 11}}"#,
    )?;

    // The first run stops after five evaluations, as a killed run would.
    let first = Bench {
        seen: Mutex::new(Vec::new()),
        stop_after: Some((5, AtomicBool::new(false))),
    };
    let stop = &first.stop_after.as_ref().expect("set above").1;
    let mut journal = FileJournal::create(&journal_path, &config)?;
    match Sweeper::builder(&config)
        .evaluator(&first)
        .journal(&mut journal)
        .cancel(stop)
        .run()
    {
        Err(RunError::Interrupted) => {}
        other => return Err(format!("expected the first run to be interrupted, got {other:?}").into()),
    }
    drop(journal);
    let before: BTreeSet<u64> = first.seen.into_inner()?.into_iter().collect();
    println!("first run: {} evaluations, then stopped", before.len());

    // The resume replays the journal and evaluates only what did not finish.
    let second = Bench {
        seen: Mutex::new(Vec::new()),
        stop_after: None,
    };
    let mut journal = FileJournal::open(&journal_path, &config)?;
    let result = Sweeper::builder(&config)
        .evaluator(&second)
        .journal(&mut journal)
        .run()?;
    let again: BTreeSet<u64> = second.seen.into_inner()?.into_iter().collect();
    let twice: Vec<&u64> = before.intersection(&again).collect();
    println!(
        "resume: {} more evaluations, {} trials in all, {} on the front",
        again.len(),
        result.trials.len(),
        result.candidates.len()
    );
    if !twice.is_empty() {
        return Err(format!("trials evaluated twice: {twice:?}").into());
    }
    for c in &result.candidates {
        println!("  {:?}", c.config);
    }
    Ok(())
}
