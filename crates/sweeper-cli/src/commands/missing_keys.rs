//! The warning of `sweeper score` about an objective whose report key no row has (issue
//! 36 item 2): it names the objective, the key it reads, and the keys of the input that
//! look like it.

use super::output::note;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use sweeper_goal::Objective;
use sweeper_score::objective_key;
use sweeper_tables::input::ReportRow;

/// An objective whose report key no row has reads the same default everywhere (0, or
/// `+inf` for a latency): the ranking or the front is then meaningless, and the user is
/// told which objective, which key it reads, and which keys of the input look like it.
pub(crate) struct MissingKeys {
    /// Per objective: its name, its report key, and whether a row had the key.
    wanted: Vec<(&'static str, &'static str, bool)>,
    /// The keys the rows have (report and config), at most [`MissingKeys::NAMES`].
    names: BTreeSet<String>,
}

impl MissingKeys {
    /// Distinct key names kept for the look-alikes.
    const NAMES: usize = 512;

    pub(crate) fn new(objectives: &[Objective]) -> MissingKeys {
        let mut wanted: Vec<(&'static str, &'static str, bool)> = Vec::new();
        for &o in objectives {
            if !wanted.iter().any(|w| w.1 == objective_key(o)) {
                wanted.push((o.name(), objective_key(o), false));
            }
        }
        MissingKeys {
            wanted,
            names: BTreeSet::new(),
        }
    }

    pub(crate) fn count(&mut self, row: &ReportRow) {
        for w in &mut self.wanted {
            w.2 |= row.report.get(w.1).is_some();
        }
        if self.wanted.iter().all(|w| w.2) {
            return;
        }
        let keys = row
            .report
            .iter()
            .map(|(k, _)| k)
            .chain(row.config.keys().map(String::as_str));
        for key in keys {
            if self.names.len() >= Self::NAMES {
                break;
            }
            if !self.names.contains(key) {
                self.names.insert(key.to_owned());
            }
        }
    }

    /// Words of a key name that suggest it holds what `wanted` reads.
    fn hints(wanted: &str) -> &'static [&'static str] {
        match wanted {
            sweeper_score::THROUGHPUT_PER_USER => &["tpot", "itl", "per_user", "interactivity"],
            sweeper_score::E2E_LATENCY => &["e2e", "latency"],
            sweeper_score::GOODPUT => &["goodput"],
            _ => &["throughput", "tput", "tok_s", "tokens_per"],
        }
    }

    pub(crate) fn warn(&self, total: usize) {
        if total == 0 {
            return;
        }
        for &(objective, key, seen) in &self.wanted {
            if seen {
                continue;
            }
            let hints = MissingKeys::hints(key);
            let alike: Vec<String> = self
                .names
                .iter()
                .filter(|n| {
                    let lower = n.to_ascii_lowercase();
                    lower != key && hints.iter().any(|h| lower.contains(h))
                })
                .map(|n| sweeper_engine::text::escape_controls(n))
                .collect();
            let reads = if key == sweeper_score::E2E_LATENCY {
                "+inf (the worst)"
            } else {
                "0"
            };
            let mut text = format!(
                "warning: no row has `{key}`, the report key of {objective}, so {objective} reads {reads} in all {total} rows"
            );
            if alike.is_empty() {
                text.push_str("; add the key to the reports");
            } else {
                let _ = write!(
                    text,
                    "; keys that look like it: {}; rename or convert one to `{key}` in the reports",
                    alike.join(", ")
                );
                if key == sweeper_score::THROUGHPUT_PER_USER {
                    text.push_str(" (tok/s/user is 1000 / mean_tpot_ms)");
                }
            }
            note(&text);
            // How to do it without editing the reports: derive tok/s/user from TPOT, or read
            // a key that holds the value under the objective's name.
            if key == sweeper_score::THROUGHPUT_PER_USER
                && self.names.iter().any(|n| n == sweeper_tables::input::TPOT)
            {
                note("hint: --per-user-from-tpot derives it from mean_tpot_ms");
            } else if let Some(first) = alike.first() {
                note(&format!(
                    "hint: --map {}={key} reads that key as `{key}`",
                    sweeper_engine::text::quote_arg(first)
                ));
            }
        }
    }
}
