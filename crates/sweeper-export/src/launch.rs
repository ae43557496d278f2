//! `launch.sh`: the deployment as plain engine launch commands, one line per worker with
//! the GPUs it gets, for a user without Kubernetes.

use crate::dgd::{component_name, placement};
use crate::flags::{frontend_args, worker_args, worker_module};
use crate::shape::Deployment;
use crate::{ExportError, ExportOptions};
use std::fmt::Write;

/// The script. `header` lines are written as comments under the shebang.
pub(crate) fn script(
    deployment: &Deployment,
    options: &ExportOptions,
    header: &[String],
) -> Result<String, ExportError> {
    let gpn = options.gpus_per_node;
    let mut out = String::from("#!/usr/bin/env bash\n");
    for line in header {
        let _ = writeln!(out, "# {line}");
    }
    let _ = writeln!(
        out,
        "# GPU indices are per node ({gpn} GPUs a node); start each line on the node it names.\n# A worker that spans nodes runs its line on every node it names, with the engine's own\n# multi-node flags (node rank, leader address), which this script does not write.\nset -euo pipefail\n"
    );
    let _ = writeln!(
        out,
        "# Frontend (no GPUs)\n{} &\n",
        shell_line(
            &["python3", "-m", "dynamo.frontend"]
                .iter()
                .map(|s| (*s).to_owned())
                .chain(frontend_args(deployment.router_mode.as_deref()))
                .collect::<Vec<_>>()
        )
    );
    // The next free GPU: node and index on it.
    let (mut node, mut next) = (0_u64, 0_u64);
    for (role, pool) in deployment.pools() {
        let place = placement(pool, gpn)?;
        let name = component_name(deployment.backend, role);
        let mut command = vec![
            "python3".to_owned(),
            "-m".to_owned(),
            worker_module(deployment.backend).to_owned(),
        ];
        command.extend(worker_args(
            deployment.backend,
            pool,
            role,
            options.model_or_placeholder(),
        )?);
        for r in 1..=pool.replicas {
            if next + place.gpus > gpn || (place.nodes > 1 && next > 0) {
                node += 1;
                next = 0;
            }
            let devices: Vec<String> = (next..next + place.gpus).map(|g| g.to_string()).collect();
            let nodes = if place.nodes > 1 {
                format!("nodes {}-{}", node, node + place.nodes - 1)
            } else {
                format!("node {node}")
            };
            let _ = writeln!(
                out,
                "# {name} {r} of {}: {nodes}, GPUs {} ({} GPUs{})\nCUDA_VISIBLE_DEVICES={} {} &\n",
                pool.replicas,
                devices.join(","),
                place.gpus * place.nodes,
                if place.nodes > 1 {
                    " over its nodes"
                } else {
                    ""
                },
                devices.join(","),
                shell_line(&command)
            );
            if place.nodes > 1 {
                node += place.nodes;
                next = 0;
            } else {
                next += place.gpus;
            }
        }
    }
    out.push_str("wait\n");
    Ok(out)
}

/// Words joined into a shell command line, each quoted unless it is plain.
fn shell_line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_word(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '=' | ':'))
    {
        w.to_owned()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn words_from_outside_are_quoted() {
        assert_eq!(shell_word("--tp"), "--tp");
        assert_eq!(shell_word("Qwen/Qwen3-32B"), "Qwen/Qwen3-32B");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("x'; rm -rf /"), "'x'\\''; rm -rf /'");
        assert_eq!(shell_word("$(id)"), "'$(id)'");
        assert_eq!(shell_word(""), "''");
    }
}
