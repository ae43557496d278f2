//! Every golden manifest against the subset of the DynamoGraphDeployment CRD's OpenAPI
//! schema kept in `schema/` (with its source and commit), for both API versions.

use crate::cases::{BACKENDS, cases, named};
use crate::validator::violations;
use serde_json::{Value, json};
use sweeper_export::{Api, render};

fn subset(api: Api) -> Value {
    let text = match api {
        Api::V1beta1 => include_str!("../../schema/dgd-v1beta1.subset.json"),
        Api::V1alpha1 => include_str!("../../schema/dgd-v1alpha1.subset.json"),
    };
    serde_json::from_str(text).unwrap()
}

#[test]
fn every_manifest_is_valid_against_the_crd_subset() {
    for api in [Api::V1beta1, Api::V1alpha1] {
        let schema = subset(api);
        for backend in BACKENDS {
            for (case, candidate) in cases(backend) {
                let out = render(&candidate, &named(api, backend), "schema", &[]).unwrap();
                let bad = violations(&out.manifest, &schema);
                assert!(bad.is_empty(), "{case} on {backend} ({api:?}): {bad:#?}");
                assert_eq!(out.manifest["apiVersion"], api.api_version());
            }
        }
    }
}

#[test]
fn the_validator_notices_what_the_api_server_would_refuse_or_drop() {
    let schema = subset(Api::V1beta1);
    let backend = sweeper_export::Backend::Sglang;
    let (_, candidate) = cases(backend).remove(2);
    let good = render(&candidate, &named(Api::V1beta1, backend), "v", &[])
        .unwrap()
        .manifest;
    let mut misspelt = good.clone();
    misspelt["spec"]["components"][1]["replica"] = json!(2);
    assert!(
        violations(&misspelt, &schema)
            .iter()
            .any(|v| v.contains("replica: not a property"))
    );
    let mut bad_type = good.clone();
    bad_type["spec"]["components"][1]["type"] = json!("router");
    assert!(!violations(&bad_type, &schema).is_empty());
    let mut one_node = good.clone();
    one_node["spec"]["components"][2]["multinode"]["nodeCount"] = json!(1);
    assert!(!violations(&one_node, &schema).is_empty());
    let mut no_name = good;
    no_name["spec"]["components"][0]
        .as_object_mut()
        .unwrap()
        .remove("name");
    assert!(!violations(&no_name, &schema).is_empty());
}

#[test]
fn component_names_match_the_crd_pattern() {
    // ^[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?$, at most 63 characters
    for backend in BACKENDS {
        for (_, candidate) in cases(backend) {
            let out = render(&candidate, &named(Api::V1beta1, backend), "n", &[]).unwrap();
            for c in out.manifest["spec"]["components"].as_array().unwrap() {
                let name = c["name"].as_str().unwrap();
                let ends_ok = |ch: Option<char>| ch.is_some_and(|c| c.is_ascii_alphanumeric());
                assert!(
                    name.len() <= 63
                        && ends_ok(name.chars().next())
                        && ends_ok(name.chars().last())
                );
                assert!(
                    name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
                    "{name}"
                );
            }
        }
    }
}
