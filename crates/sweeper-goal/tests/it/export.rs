//! The `export:` block: what it accepts, and each refusal with the key it names.

use sweeper_goal::{ExportSettings, parse};

#[test]
fn an_export_block_is_read_as_written() {
    let cfg = parse(
        "export:\n  model: Qwen/Qwen3-32B-FP8\n  image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0\n  namespace: serving\n  backend: trtllm\n  gpus_per_node: 4\n  api: v1alpha1\n",
    )
    .unwrap();
    let e: ExportSettings = cfg.export.unwrap();
    assert_eq!(e.model.as_deref(), Some("Qwen/Qwen3-32B-FP8"));
    assert_eq!(
        e.image.as_deref(),
        Some("nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0")
    );
    assert_eq!(e.namespace.as_deref(), Some("serving"));
    assert_eq!(e.backend.as_deref(), Some("trtllm"));
    assert_eq!(e.gpus_per_node, Some(4));
    assert_eq!(e.api.as_deref(), Some("v1alpha1"));
    assert_eq!(parse("goal: {target: throughput}").unwrap().export, None);
    assert_eq!(
        parse("export: {}").unwrap().export,
        Some(ExportSettings::default())
    );
}

#[test]
fn a_wrong_export_key_or_value_names_its_path() {
    let cases = [
        ("export: {modle: x}", "export"),
        (
            "export: {backend: tgi}",
            "export.backend: \"tgi\" is out of range; expected one of vllm, sglang, trtllm",
        ),
        (
            "export: {api: v2}",
            "export.api: \"v2\" is out of range; expected one of v1beta1, v1alpha1",
        ),
        (
            "export: {gpus_per_node: 0}",
            "export.gpus_per_node: 0 is out of range",
        ),
        ("export: {gpus_per_node: 2.5}", "export.gpus_per_node"),
        (
            "export: {model: \"\"}",
            "export.model: \"\" is out of range; give a non-empty name on one line",
        ),
        ("export: {image: \"a\\nb\"}", "export.image"),
        ("export: {namespace: 5}", "export.namespace"),
    ];
    for (text, want) in cases {
        let e = parse(text).unwrap_err().to_string();
        assert!(e.contains(want), "{text}: {e}");
    }
}
