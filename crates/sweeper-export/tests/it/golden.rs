//! Golden files: every case on every backend, as `dgd.yaml` (v1beta1, and v1alpha1) and
//! `launch.sh`. A change of a flag, a GPU count or a replica count shows as a diff in
//! `tests/it/snapshots/`.

use crate::cases::{BACKENDS, cases, named};
use sweeper_export::{Api, render, requested_gpus};

#[test]
fn every_case_on_every_backend_matches_its_golden_files() {
    for backend in BACKENDS {
        for (case, candidate) in cases(backend) {
            for api in [Api::V1beta1, Api::V1alpha1] {
                let out = render(
                    &candidate,
                    &named(api, backend),
                    "golden",
                    &["golden test".to_owned()],
                )
                .unwrap_or_else(|e| panic!("{case} on {backend}: {e}"));
                let used = candidate["used_gpus"].as_u64().unwrap();
                assert_eq!(requested_gpus(&out.manifest), used, "{case} on {backend}");
                let api_name = match api {
                    Api::V1beta1 => "v1beta1",
                    Api::V1alpha1 => "v1alpha1",
                };
                insta::assert_snapshot!(format!("{case}_{backend}_{api_name}_dgd"), out.dgd_yaml);
                if api == Api::V1beta1 {
                    insta::assert_snapshot!(format!("{case}_{backend}_launch"), out.launch_sh);
                }
            }
        }
    }
}

#[test]
fn without_names_the_manifest_carries_placeholders_named_as_such() {
    let (_, candidate) = cases(sweeper_export::Backend::Vllm).remove(0);
    let out = render(
        &candidate,
        &sweeper_export::ExportOptions::default(),
        "p",
        &[],
    )
    .unwrap();
    for placeholder in [
        "PLACEHOLDER_MODEL",
        "PLACEHOLDER_IMAGE",
        "placeholder-namespace",
    ] {
        assert!(out.dgd_yaml.contains(placeholder), "{placeholder}");
    }
    assert!(
        out.dgd_yaml
            .contains("# placeholders: PLACEHOLDER_MODEL (set --model or export.model)")
    );
    assert!(out.launch_sh.contains("PLACEHOLDER_MODEL"));
}
