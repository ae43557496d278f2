//! The integration tests of `sweeper-cli`: one binary, one module per area.

mod builtin;
mod cli_run;
mod common;
mod counts;
mod evaluator;
mod evaluator_faults;
mod front;
mod fuzz_corpus;
mod habits;
mod help_examples;
mod inputs;
mod journal_trust;
mod keep;
mod orphans;
mod output_dir;
mod plot;
mod rescore;
mod resume;
mod run;
mod score;
mod serving_bench;
mod shards;
mod slurm;
mod terminal;
mod transcripts;
mod validate;
