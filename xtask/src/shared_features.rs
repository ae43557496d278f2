//! `cargo xtask shared-features`: the `sweeper` binary and the Python package build the crates
//! they share with the same features, so that `pip install ./crates/sweeper-py` after
//! `cargo build --release -p sweeper-cli` (same `target/`, same profile) recompiles none of
//! them. Compares `cargo tree` of the two builds package by package and exits 1 naming each
//! package whose features differ and what to add to `crates/sweeper-workspace-hack`.

use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;

/// The two builds: the binary as `cargo build --release -p sweeper-cli` resolves it, and the
/// extension module as maturin resolves it (`crates/sweeper-py/pyproject.toml` turns on
/// `extension-module`).
const BINARY: &[&str] = &["-p", "sweeper-cli"];
const PYTHON: &[&str] = &["-p", "sweeper-py", "--features", "extension-module"];

/// For each package (`name vX.Y.Z`), the feature sets it is built with in one build: one set
/// per way it is compiled (a package built for the host, under a proc-macro, and for the target
/// may have two).
pub(crate) type Features = BTreeMap<String, BTreeSet<BTreeSet<String>>>;

/// Reads `cargo tree --prefix none -f '{p}|{f}'` output.
pub(crate) fn parse(tree: &str) -> Features {
    let mut out = Features::new();
    for line in tree.lines() {
        let line = line.trim().trim_end_matches(" (*)");
        let Some((package, features)) = line.split_once('|') else {
            continue;
        };
        // `{p}` of a path dependency carries its path: `name vX (/path)`; keep name and version.
        let package: String = package
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        let set = features
            .split(',')
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect();
        out.entry(package).or_default().insert(set);
    }
    out
}

/// A package both builds compile, with different features.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Drift {
    pub(crate) package: String,
    /// Features only the binary's build turns on.
    pub(crate) binary_only: BTreeSet<String>,
    /// Features only the Python package's build turns on.
    pub(crate) python_only: BTreeSet<String>,
}

/// The packages in both builds whose feature sets differ.
pub(crate) fn drift(binary: &Features, python: &Features) -> Vec<Drift> {
    let union = |sets: &BTreeSet<BTreeSet<String>>| -> BTreeSet<String> {
        sets.iter().flatten().cloned().collect()
    };
    binary
        .iter()
        .filter_map(|(package, b)| {
            let p = python.get(package)?;
            if b == p {
                return None;
            }
            let (b, p) = (union(b), union(p));
            Some(Drift {
                package: package.clone(),
                binary_only: b.difference(&p).cloned().collect(),
                python_only: p.difference(&b).cloned().collect(),
            })
        })
        .collect()
}

fn tree(args: &[&str]) -> anyhow::Result<Features> {
    let out = crate::cargo()
        .args(["tree", "--locked", "-e", "normal,build", "--prefix", "none"])
        .args(["-f", "{p}|{f}"])
        .args(args)
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "cargo tree {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(parse(&String::from_utf8(out.stdout)?))
}

pub(crate) fn main(args: &[String]) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.is_empty(),
        "shared-features takes no arguments (got {args:?})"
    );
    let (binary, python) = (tree(BINARY)?, tree(PYTHON)?);
    let shared = binary.keys().filter(|k| python.contains_key(*k)).count();
    let drifts = drift(&binary, &python);
    #[allow(clippy::print_stdout, clippy::print_stderr)]
    {
        if drifts.is_empty() {
            println!(
                "shared-features: the binary and the Python package build their {shared} shared packages with the same features"
            );
            return Ok(ExitCode::SUCCESS);
        }
        for d in &drifts {
            let list = |s: &BTreeSet<String>| {
                if s.is_empty() {
                    "none".to_string()
                } else {
                    s.iter().cloned().collect::<Vec<_>>().join(", ")
                }
            };
            eprintln!(
                "shared-features: {} is built with other features by the binary (only it: {}) and the Python package (only it: {})",
                d.package,
                list(&d.binary_only),
                list(&d.python_only)
            );
        }
        eprintln!(
            "shared-features: {} of {shared} shared packages differ, so `pip install ./crates/sweeper-py` would recompile them and everything above them after the binary's release build; ask for the missing features in crates/sweeper-workspace-hack/Cargo.toml (a proc-macro's dependency under [build-dependencies])",
            drifts.len()
        );
    }
    Ok(ExitCode::FAILURE)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BINARY_TREE: &str = "\
sweeper-cli v0.1.0 (/w/crates/sweeper-cli)|
serde v1.0.229|alloc,default,derive,serde_derive,std
syn v3.0.10|clone-impls,default,derive,full,parsing,printing,proc-macro
syn v3.0.10|clone-impls,default,derive,full,parsing,printing,proc-macro (*)
rustix v1.1.6|alloc,default,fs,std,termios
sweeper-tables v0.1.0 (/w/crates/sweeper-tables)|png
clap v4.6.9|derive,std
";
    const PYTHON_TREE: &str = "\
sweeper-py v0.1.0 (/w/crates/sweeper-py)|extension-module
serde v1.0.229|alloc,default,derive,serde_derive,std
syn v3.0.10|clone-impls,default,derive,extra-traits,full,parsing,printing,proc-macro,visit-mut
rustix v1.1.6|alloc,default,fs,std
sweeper-tables v0.1.0 (/w/crates/sweeper-tables)|
pyo3 v0.30.1|abi3,macros
";

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn parse_keeps_name_and_version_and_each_feature_set() {
        let f = parse(BINARY_TREE);
        assert_eq!(f["sweeper-tables v0.1.0"], BTreeSet::from([set(&["png"])]));
        assert_eq!(f["sweeper-cli v0.1.0"], BTreeSet::from([BTreeSet::new()]));
        assert_eq!(f["syn v3.0.10"].len(), 1, "the (*) repeat is the same set");
        assert_eq!(f.len(), 6);
    }

    #[test]
    fn drift_names_each_shared_package_with_the_features_of_each_side() {
        let d = drift(&parse(BINARY_TREE), &parse(PYTHON_TREE));
        let names: Vec<&str> = d.iter().map(|d| d.package.as_str()).collect();
        // clap and pyo3 are in one build only; serde agrees.
        assert_eq!(
            names,
            ["rustix v1.1.6", "sweeper-tables v0.1.0", "syn v3.0.10"]
        );
        assert_eq!(d[0].binary_only, set(&["termios"]));
        assert!(d[0].python_only.is_empty());
        assert_eq!(d[2].python_only, set(&["extra-traits", "visit-mut"]));
    }

    #[test]
    fn a_package_built_twice_with_other_sets_is_drift_even_with_the_same_union() {
        // One build compiles it once with both features, the other twice (host and target).
        let a = parse("x v1.0.0|a,b\n");
        let b = parse("x v1.0.0|a\nx v1.0.0|a,b\n");
        let d = drift(&a, &b);
        assert_eq!(d.len(), 1);
        assert!(d[0].binary_only.is_empty() && d[0].python_only.is_empty());
        assert!(drift(&a, &a).is_empty());
    }
}
