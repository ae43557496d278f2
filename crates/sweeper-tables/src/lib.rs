//! `sweeper-tables`: the tables sweeper reads and writes.
//!
//! Layer 5 of sweeper, on `sweeper-engine` (a run's result) and `sweeper-plot` (its chart).
//! It holds:
//!
//! - [`input`]: streaming readers of report tables (CSV, JSON Lines, JSON arrays, `.npy`),
//!   which hold no more than a row at a time where the command allows it and say the row and
//!   column of every fault; and readers of serving benchmarks' own result files (`vllm bench
//!   serve`, SGLang `bench_serving`, genai-perf), told apart by their keys;
//! - [`output`]: a run's result files (`result.json`, `result.csv`, `trials.csv`, the plot),
//!   each written to a temporary name and renamed;
//! - [`csv_out`]: the one CSV writer (the `csv` crate's quoting, cells neutralised against
//!   formula injection, `±inf` as `inf` / `-inf`).
//!
//! Invariant: nothing a report said is dropped or silently changed: a value that cannot be
//! read as written is an error naming its place, and every report key reaches the result
//! files (a key that is already a column is written as `report.KEY`).
//!
//! ```
//! use sweeper_tables::input::parse_numeric_columns;
//!
//! let csv = b"tp,throughput\n1,100\n2,180\n";
//! let table = parse_numeric_columns("rows.csv".as_ref(), csv, &["throughput".to_owned()])?;
//! assert_eq!(table.rows, 2);
//! assert_eq!(table.data, vec![100.0, 180.0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod csv_out;
#[doc(hidden)]
pub mod fuzzing;
pub mod input;
pub mod output;

// The one escaper and the plot crate, under the names the modules here use for them.
use sweeper_engine::text;
use sweeper_plot as plot;

pub use output::{
    ObjectiveInfo, ReasonCount, ResultFile, ResultKind, candidates_csv, chart_of, plot_of,
    subtitle, trials_csv, write_file_atomic, write_outputs, write_outputs_with,
};
