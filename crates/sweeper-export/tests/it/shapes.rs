//! How a candidate's keys become a deployment, and every refusal with its message.

use serde_json::{Map, Value, json};
use sweeper_export::{Backend, ExportError, ExportOptions, Mode, render};

fn obj(v: Value) -> Map<String, Value> {
    let Value::Object(map) = v else {
        panic!("not an object")
    };
    map
}

fn err(candidate: Value, options: &ExportOptions) -> String {
    render(&obj(candidate), options, "t", &[])
        .unwrap_err()
        .to_string()
}

#[test]
fn the_quick_start_candidate_exports_as_an_aggregated_vllm_deployment() {
    let c = json!({"tp": 2, "replicas": 3, "max_batch_size": 64, "used_gpus": 6,
                   "kv_load_ratio": 0.4, "concurrency": 10, "kv_capacity_tokens": 5});
    let out = render(&obj(c), &ExportOptions::default(), "t", &[]).unwrap();
    assert_eq!(out.deployment.backend, Backend::Vllm);
    let Mode::Agg(pool) = &out.deployment.mode else {
        panic!("not agg")
    };
    assert_eq!(
        (pool.tp, pool.replicas, pool.max_batch_size),
        (2, 3, Some(64))
    );
    let worker = &out.manifest["spec"]["components"][1];
    assert_eq!(worker["replicas"], 3);
    let main = &worker["podTemplate"]["spec"]["containers"][0];
    assert_eq!(main["resources"]["limits"]["nvidia.com/gpu"], "2");
    let args: Vec<&str> = main["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        args.windows(2)
            .any(|w| w == ["--tensor-parallel-size", "2"]),
        "{args:?}"
    );
    assert!(
        args.windows(2).any(|w| w == ["--max-num-seqs", "64"]),
        "{args:?}"
    );
}

#[test]
fn the_backend_option_applies_only_without_a_backend_key() {
    let opts = ExportOptions {
        backend: Backend::Trtllm,
        ..ExportOptions::default()
    };
    let out = render(&obj(json!({"tp": 1})), &opts, "t", &[]).unwrap();
    assert_eq!(out.deployment.backend, Backend::Trtllm);
    let out = render(&obj(json!({"tp": 1, "backend": "sglang"})), &opts, "t", &[]).unwrap();
    assert_eq!(out.deployment.backend, Backend::Sglang);
    assert!(
        err(json!({"backend": "tgi"}), &opts)
            .contains("`backend` = \"tgi\": give one of vllm, sglang, trtllm")
    );
}

#[test]
fn an_unknown_parameter_is_named_unless_allowed_and_then_recorded_as_a_comment() {
    let c = json!({"tp": 2, "replicas": 1, "gpu_mem_util": 0.9});
    let e = err(c.clone(), &ExportOptions::default());
    assert!(
        e.starts_with("parameter `gpu_mem_util` = 0.9 has no place in a deployment"),
        "{e}"
    );
    assert!(e.contains("--allow-unmapped"), "{e}");
    let opts = ExportOptions {
        allow_unmapped: true,
        ..ExportOptions::default()
    };
    let out = render(&obj(c), &opts, "t", &[]).unwrap();
    assert!(out.dgd_yaml.contains(
        "# unmapped (--allow-unmapped, not in the deployment): \"gpu_mem_util\" = 0.9\n"
    ));
    assert!(!out.dgd_yaml.contains("gpu_mem_util:"));
}

#[test]
fn an_unmapped_key_from_outside_cannot_leave_its_comment_line() {
    let c = json!({"tp": 1, "x\napiVersion: evil": "y\nkind: Evil"});
    let opts = ExportOptions {
        allow_unmapped: true,
        ..ExportOptions::default()
    };
    let out = render(&obj(c), &opts, "t", &[]).unwrap();
    assert!(
        !out.dgd_yaml
            .lines()
            .any(|l| l.starts_with("apiVersion: evil") || l.starts_with("kind: Evil"))
    );
    assert!(!out.launch_sh.lines().any(|l| l.starts_with("kind: Evil")));
}

#[test]
fn a_gpu_count_that_disagrees_with_the_shape_is_refused() {
    let e = err(
        json!({"tp": 4, "replicas": 2, "used_gpus": 4}),
        &ExportOptions::default(),
    );
    assert!(e.contains("would request 8 GPUs (worker: 2 x 4 GPUs (tp 4 x pp 1 x attention_dp 1)) but the candidate's used_gpus is 4"), "{e}");
}

#[test]
fn the_width_rule_and_the_strategy_are_checked() {
    let e = err(
        json!({"tp": 2, "attention_dp": 2, "moe_tp": 1, "moe_ep": 2}),
        &ExportOptions::default(),
    );
    assert!(
        e.contains("tp x attention_dp = moe_tp x moe_ep does not hold (2 x 2 != 1 x 2)"),
        "{e}"
    );
    let e = err(
        json!({"tp": 4, "moe_ep": 4, "strategy": "dtp"}),
        &ExportOptions::default(),
    );
    assert!(
        e.contains("`strategy` = \"dtp\": the strategy disagrees with the shape"),
        "{e}"
    );
    let e = err(
        json!({"tp": 4, "strategy": "wide"}),
        &ExportOptions::default(),
    );
    assert!(e.contains("give one of tp, tep, dep, dtp"), "{e}");
    // A strategy alone gives the expert split.
    let out = render(
        &obj(json!({"tp": 1, "attention_dp": 4, "strategy": "dep"})),
        &ExportOptions::default(),
        "t",
        &[],
    )
    .unwrap();
    let Mode::Agg(pool) = &out.deployment.mode else {
        panic!()
    };
    assert_eq!(pool.experts, Some((1, 4)));
}

#[test]
fn vllm_refuses_a_mixed_expert_split_that_the_others_express() {
    let c = json!({"tp": 4, "moe_tp": 2, "moe_ep": 2});
    let e = err(c.clone(), &ExportOptions::default());
    assert!(
        e.starts_with("`moe_ep` = 2 cannot be expressed with vllm"),
        "{e}"
    );
    for backend in [Backend::Sglang, Backend::Trtllm] {
        let opts = ExportOptions {
            backend,
            ..ExportOptions::default()
        };
        let out = render(&obj(c.clone()), &opts, "t", &[]).unwrap();
        let args =
            &out.manifest["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["args"];
        let args: Vec<&str> = args
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert!(
            args.windows(2)
                .any(|w| w == ["--expert-parallel-size", "2"]),
            "{args:?}"
        );
        assert!(
            args.windows(2)
                .any(|w| w == ["--tensor-parallel-size", "4"]),
            "{args:?}"
        );
    }
}

#[test]
fn a_worker_wider_than_a_node_spans_whole_nodes_or_is_refused() {
    let c = json!({"tp": 16, "replicas": 1, "used_gpus": 16});
    let out = render(&obj(c.clone()), &ExportOptions::default(), "t", &[]).unwrap();
    let worker = &out.manifest["spec"]["components"][1];
    assert_eq!(worker["multinode"]["nodeCount"], 2);
    assert_eq!(
        worker["podTemplate"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"],
        "8"
    );
    let opts = ExportOptions {
        gpus_per_node: 4,
        ..ExportOptions::default()
    };
    let out = render(&obj(c.clone()), &opts, "t", &[]).unwrap();
    assert_eq!(
        out.manifest["spec"]["components"][1]["multinode"]["nodeCount"],
        4
    );
    let opts = ExportOptions {
        gpus_per_node: 6,
        ..ExportOptions::default()
    };
    let e = err(c, &opts);
    assert!(
        e.contains("not a whole number of 6-GPU nodes; set --gpus-per-node"),
        "{e}"
    );
    let opts = ExportOptions {
        gpus_per_node: 0,
        ..ExportOptions::default()
    };
    assert!(err(json!({"tp": 1}), &opts).contains("give the GPUs one node has"));
}

#[test]
fn role_prefixed_keys_make_a_disaggregated_candidate_and_agg_prefixes_are_read() {
    let c = json!({"prefill_tp": 2, "decode_tp": 4, "decode_replicas": 2, "used_gpus": 10});
    let out = render(&obj(c), &ExportOptions::default(), "t", &[]).unwrap();
    assert!(matches!(out.deployment.mode, Mode::Disagg { .. }));
    assert_eq!(out.manifest["spec"]["components"][1]["type"], "prefill");
    assert_eq!(out.manifest["spec"]["components"][2]["type"], "decode");
    let c =
        json!({"deployment_mode": "agg", "agg_tp": 2, "agg_max_batch_size": 32, "used_gpus": 2});
    let out = render(&obj(c), &ExportOptions::default(), "t", &[]).unwrap();
    let Mode::Agg(pool) = &out.deployment.mode else {
        panic!()
    };
    assert_eq!((pool.tp, pool.max_batch_size), (2, Some(32)));
    // A bare key in a disaggregated candidate has no pool.
    let e = err(
        json!({"deployment_mode": "disagg", "tp": 2}),
        &ExportOptions::default(),
    );
    assert!(e.starts_with("parameter `tp` = 2 has no place"), "{e}");
}

#[test]
fn values_must_be_whole_positive_numbers() {
    let e = err(json!({"tp": 0}), &ExportOptions::default());
    assert!(e.contains("`tp` = 0: give a whole number >= 1"), "{e}");
    let e = err(json!({"replicas": 1.5}), &ExportOptions::default());
    assert!(e.contains("`replicas` = 1.5"), "{e}");
    let out = render(
        &obj(json!({"tp": 2.0, "used_gpus": 2.0})),
        &ExportOptions::default(),
        "t",
        &[],
    )
    .unwrap();
    assert_eq!(out.deployment.used_gpus, 2);
    assert!(
        err(json!({"router_mode": "fast"}), &ExportOptions::default())
            .contains("`router_mode` = \"fast\": give kv (or kv_aware)")
    );
    let out = render(
        &obj(json!({"router": "round_robin"})),
        &ExportOptions::default(),
        "t",
        &[],
    )
    .unwrap();
    assert_eq!(out.deployment.router_mode.as_deref(), Some("round-robin"));
    assert!(
        out.launch_sh
            .contains("dynamo.frontend --http-port 8000 --router-mode round-robin &")
    );
}

#[test]
fn the_launch_script_gives_each_worker_its_gpus() {
    let c = json!({"tp": 3, "replicas": 3, "used_gpus": 9});
    let out = render(&obj(c), &ExportOptions::default(), "t", &[]).unwrap();
    // Two 3-GPU workers fit on node 0 (GPUs 0-5); the third starts node 1.
    assert!(
        out.launch_sh
            .contains("# VllmWorker 1 of 3: node 0, GPUs 0,1,2")
    );
    assert!(
        out.launch_sh
            .contains("# VllmWorker 2 of 3: node 0, GPUs 3,4,5")
    );
    assert!(
        out.launch_sh
            .contains("# VllmWorker 3 of 3: node 1, GPUs 0,1,2")
    );
    assert_eq!(out.launch_sh.matches("CUDA_VISIBLE_DEVICES=").count(), 3);
    assert!(matches!(
        render(
            &obj(json!({"tp": 1, "x": 1})),
            &ExportOptions::default(),
            "t",
            &[]
        ),
        Err(ExportError::Unmapped { .. })
    ));
}

#[test]
fn an_export_block_sets_the_options_it_names() {
    let cfg = sweeper_goal::parse(
        r#"{"export": {"model": "m", "backend": "trtllm", "gpus_per_node": 4, "api": "v1alpha1"}}"#,
    )
    .unwrap();
    let o = ExportOptions::from_settings(cfg.export.as_ref());
    assert_eq!(o.model.as_deref(), Some("m"));
    assert_eq!(
        (o.backend, o.gpus_per_node, o.api),
        (Backend::Trtllm, 4, sweeper_export::Api::V1alpha1)
    );
    assert_eq!(o.image, None);
    assert_eq!(ExportOptions::from_settings(None), ExportOptions::default());
}
