//! What one evaluation hands to `sbatch`: the job script (a few generated lines of POSIX
//! sh that run the command and record its exit code) and the argument vector.
//!
//! No value of the config goes through a shell unquoted: every word of the command, every
//! environment value and every path in the script is single-quoted ([`sh_quote`]), and
//! `sbatch` itself gets its arguments as a vector, never a command line.

use super::JobFiles;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use sweeper_goal::{GpuFlag, SlurmConfig, format_time_limit};

/// `word` as one single-quoted POSIX sh word: inside single quotes nothing is special but
/// the quote itself, which is written as `'\''` (close, escaped quote, reopen). A NUL byte
/// cannot be in a shell word (nor in an argument): `None`.
pub(super) fn sh_quote(word: &str) -> Option<String> {
    if word.contains('\0') {
        return None;
    }
    let mut out = String::with_capacity(word.len() + 2);
    out.push('\'');
    for c in word.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    Some(out)
}

/// Whether `name` can be `export`ed by sh: `[A-Za-z_][A-Za-z0-9_]*`.
pub(super) fn is_shell_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The job script of one trial: exports `env`, runs `argv` (its stdin is the candidate,
/// given by `sbatch --input`), writes the exit code to `files.exit_code` (through a
/// temporary name and a rename, so that a reader never sees half of it) and exits with it.
/// A job that is cancelled, times out or loses its node never writes the file.
pub(super) fn job_script(
    trial: u64,
    argv: &[String],
    env: &BTreeMap<String, String>,
    files: &JobFiles,
) -> Result<String, String> {
    let q = |word: &str, what: &str| {
        sh_quote(word).ok_or_else(|| format!("{what} {word:?} holds a NUL byte"))
    };
    let mut s = String::new();
    s.push_str("#!/bin/sh\n");
    let _ = writeln!(
        s,
        "# sweeper: trial {trial}; generated, the job's stdin is candidate.json and its stdout the report"
    );
    for (name, value) in env {
        if !is_shell_name(name) {
            return Err(format!(
                "evaluator.env: {} is not a name a job script can export; a Slurm job's variables are letters, digits and _, not starting with a digit",
                crate::text::quote(name)
            ));
        }
        let _ = writeln!(s, "export {name}={}", q(value, "evaluator.env value")?);
    }
    let words: Vec<String> = argv
        .iter()
        .map(|a| q(a, "evaluator.command argument"))
        .collect::<Result<_, _>>()?;
    s.push_str(&words.join(" "));
    s.push('\n');
    let tmp = q(&files.exit_code_tmp().to_string_lossy(), "path")?;
    let done = q(&files.exit_code.to_string_lossy(), "path")?;
    s.push_str("code=$?\n");
    let _ = writeln!(s, "printf '%s\\n' \"$code\" > {tmp} && mv -f {tmp} {done}");
    s.push_str("exit \"$code\"\n");
    Ok(s)
}

/// How many nodes and GPUs a candidate of `gpus` GPUs asks for: with `gpus_per_node`,
/// `⌈gpus / gpus_per_node⌉` nodes; `--gres` counts per node, `⌈gpus / nodes⌉` each.
pub(super) fn gpu_args(slurm: &SlurmConfig, gpus: Option<u64>) -> Vec<String> {
    let Some(n) = gpus.filter(|&n| n > 0) else {
        return Vec::new();
    };
    let nodes = slurm.gpus_per_node.map(|per| n.div_ceil(per.max(1)));
    let typed = |count: u64| match &slurm.gpu_type {
        Some(t) => format!("{t}:{count}"),
        None => count.to_string(),
    };
    let mut args = Vec::new();
    match slurm.gpu_flag {
        GpuFlag::Gpus => args.push(format!("--gpus={}", typed(n))),
        GpuFlag::Gres => {
            let per_node = nodes.map_or(n, |k| n.div_ceil(k));
            args.push(format!("--gres=gpu:{}", typed(per_node)));
        }
    }
    if let Some(k) = nodes {
        args.push(format!("--nodes={k}"));
    }
    args
}

/// The arguments of `sbatch` for one trial, the script's path last.
pub(super) fn sbatch_args(
    slurm: &SlurmConfig,
    time_limit: Option<u64>,
    cwd: Option<&std::path::Path>,
    gpus: Option<u64>,
    files: &JobFiles,
) -> Vec<String> {
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let mut args = vec![
        "--parsable".to_owned(),
        format!(
            "--job-name={}",
            slurm.job_name.as_deref().unwrap_or("sweeper")
        ),
        format!("--input={}", path(&files.candidate)),
        format!("--output={}", path(&files.stdout)),
        format!("--error={}", path(&files.stderr)),
    ];
    if let Some(dir) = cwd {
        args.push(format!("--chdir={}", path(dir)));
    }
    if let Some(p) = &slurm.partition {
        args.push(format!("--partition={p}"));
    }
    if let Some(a) = &slurm.account {
        args.push(format!("--account={a}"));
    }
    if let Some(t) = time_limit {
        args.push(format!("--time={}", format_time_limit(t)));
    }
    args.extend(gpu_args(slurm, gpus));
    args.extend(slurm.sbatch_args.iter().cloned());
    args.push(path(&files.script));
    args
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::process::Command;

    #[test]
    fn a_quoted_word_reaches_the_program_unchanged() {
        let words = [
            "plain",
            "",
            "two words",
            "it's",
            "'",
            "''",
            "$HOME `id` $(id) \\ \" ; | & > < * ? ~ # !",
            "tab\there\nnewline",
            "ünïcødé",
        ];
        let line: Vec<String> = words.iter().map(|w| sh_quote(w).unwrap()).collect();
        let script = format!("printf '%s\\0' {}", line.join(" "));
        let out = Command::new("sh").arg("-c").arg(&script).output().unwrap();
        let got: Vec<&str> = std::str::from_utf8(&out.stdout)
            .unwrap()
            .split_terminator('\0')
            .collect();
        assert_eq!(got, words);
        assert_eq!(sh_quote("a\0b"), None);
    }

    #[test]
    fn shell_names_are_what_export_takes() {
        for ok in ["A", "_x", "CUDA_VISIBLE_DEVICES", "a1"] {
            assert!(is_shell_name(ok), "{ok}");
        }
        for bad in ["", "1A", "A-B", "A B", "A=B", "é"] {
            assert!(!is_shell_name(bad), "{bad}");
        }
    }

    #[test]
    fn gpus_become_nodes_and_per_node_counts() {
        let mut s = SlurmConfig::default();
        assert!(gpu_args(&s, None).is_empty());
        assert!(gpu_args(&s, Some(0)).is_empty());
        assert_eq!(gpu_args(&s, Some(12)), ["--gpus=12"]);
        s.gpus_per_node = Some(8);
        assert_eq!(gpu_args(&s, Some(12)), ["--gpus=12", "--nodes=2"]);
        assert_eq!(gpu_args(&s, Some(8)), ["--gpus=8", "--nodes=1"]);
        s.gpu_flag = GpuFlag::Gres;
        assert_eq!(gpu_args(&s, Some(12)), ["--gres=gpu:6", "--nodes=2"]);
        assert_eq!(gpu_args(&s, Some(9)), ["--gres=gpu:5", "--nodes=2"]);
        assert_eq!(gpu_args(&s, Some(3)), ["--gres=gpu:3", "--nodes=1"]);
        s.gpu_type = Some("h100".into());
        assert_eq!(gpu_args(&s, Some(16)), ["--gres=gpu:h100:8", "--nodes=2"]);
        s.gpus_per_node = None;
        assert_eq!(gpu_args(&s, Some(16)), ["--gres=gpu:h100:16"]);
        s.gpu_flag = GpuFlag::Gpus;
        assert_eq!(gpu_args(&s, Some(2)), ["--gpus=h100:2"]);
    }

    #[test]
    fn the_script_runs_the_command_and_records_its_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let files = JobFiles::in_dir(dir.path());
        let argv = vec![
            "sh".to_owned(),
            "-c".to_owned(),
            "read line; echo \"$line|$GREETING|$1\"; exit 5".to_owned(),
            "x".to_owned(),
            "it's $1".to_owned(),
        ];
        let env = BTreeMap::from([("GREETING".to_owned(), "hi 'there' $HOME".to_owned())]);
        let script = job_script(3, &argv, &env, &files).unwrap();
        std::fs::write(&files.script, &script).unwrap();
        let out = Command::new("sh")
            .arg(&files.script)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write as _;
                child.stdin.take().unwrap().write_all(b"{\"id\": 3}\n")?;
                child.wait_with_output()
            })
            .unwrap();
        assert_eq!(out.status.code(), Some(5));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "{\"id\": 3}|hi 'there' $HOME|it's $1\n"
        );
        assert_eq!(std::fs::read_to_string(&files.exit_code).unwrap(), "5\n");
        assert!(!files.exit_code_tmp().exists());

        let err = job_script(
            3,
            &argv,
            &BTreeMap::from([("A-B".into(), "x".into())]),
            &files,
        )
        .unwrap_err();
        assert!(err.contains("`A-B`"), "{err}");
    }

    #[test]
    fn sbatch_gets_every_option_as_one_argument() {
        let files = JobFiles::in_dir(Path::new("/shared/out/jobs/7"));
        let slurm = SlurmConfig {
            partition: Some("gpu".into()),
            account: Some("proj".into()),
            job_name: Some("tune llama".into()),
            sbatch_args: vec!["--exclusive".into(), "--constraint=a&b".into()],
            ..SlurmConfig::default()
        };
        let args = sbatch_args(
            &slurm,
            Some(660),
            Some(Path::new("/work dir")),
            Some(4),
            &files,
        );
        assert_eq!(
            args,
            [
                "--parsable",
                "--job-name=tune llama",
                "--input=/shared/out/jobs/7/candidate.json",
                "--output=/shared/out/jobs/7/stdout",
                "--error=/shared/out/jobs/7/stderr",
                "--chdir=/work dir",
                "--partition=gpu",
                "--account=proj",
                "--time=00:11:00",
                "--gpus=4",
                "--exclusive",
                "--constraint=a&b",
                "/shared/out/jobs/7/job.sh",
            ]
        );
    }
}
