//! `evaluator.slurm.sbatch_args` read as sbatch reads them (issue 30, item 8): options
//! sweeper sets are refused in every spelling getopt accepts, and arguments sbatch would
//! take as the job script are refused.

use sweeper_goal::parse;

fn with_args(args: &str) -> String {
    format!("evaluator: {{command: [x], slurm: {{sbatch_args: {args}}}}}")
}

#[test]
fn abbreviations_clusters_and_gpu_tres_are_refused() {
    for (args, path, needle) in [
        ("[\"--outp=/x\"]", "[0]", "abbreviation of --output"),
        ("[\"--arr=0-99\"]", "[0]", "abbreviation of --array"),
        ("[\"--chd=/\"]", "[0]", "abbreviation of --chdir"),
        ("[--wai]", "[0]", "abbreviation of --wait"),
        ("[-vo/x]", "[0]", "sbatch reads -o in -vo/x as --output"),
        ("[-Qa0-99]", "[0]", "sbatch reads -a in -Qa0-99 as --array"),
        (
            "[--exclusive, \"--tres-per-job=gres/gpu:64\"]",
            "[1]",
            "used_gpus",
        ),
    ] {
        let err = parse(&with_args(args)).unwrap_err();
        assert_eq!(err.rule(), "slurm_reserved_arg", "{args}: {err}");
        assert_eq!(
            err.path(),
            Some(format!("evaluator.slurm.sbatch_args{path}").as_str())
        );
        assert!(err.to_string().contains(needle), "{err}");
    }
}

#[test]
fn a_bare_word_and_a_double_dash_are_refused() {
    for (args, path, needle) in [
        ("[job.sh]", "[0]", "as the job script"),
        ("[--exclusive, h100]", "[1]", "as the job script"),
        ("[--, --exclusive]", "[0]", "`--` ends sbatch's options"),
        ("[--constraint]", "[0]", "needs a value"),
    ] {
        let err = parse(&with_args(args)).unwrap_err();
        assert_eq!(err.rule(), "slurm_bad_arg", "{args}: {err}");
        assert_eq!(
            err.path(),
            Some(format!("evaluator.slurm.sbatch_args{path}").as_str())
        );
        assert!(err.to_string().contains(needle), "{err}");
    }
}

#[test]
fn safe_options_pass_as_written() {
    let cfg = parse(&with_args(
        "[--exclusive, --constraint, h100, -C, a100, \"--container-image=/shared/b.sqsh\", --no-requeue, -vQ]",
    ))
    .unwrap();
    let slurm = cfg.evaluator.unwrap().slurm.unwrap();
    assert_eq!(slurm.sbatch_args.len(), 8);
}

#[test]
fn a_value_after_priority_and_a_no_kill_cluster_are_read_as_sbatch_reads_them() {
    parse(&with_args("[--priority, 10, -kv]")).unwrap();
    let err = parse(&with_args("[-kvo/x]")).unwrap_err();
    assert_eq!(err.rule(), "slurm_reserved_arg", "{err}");
}
