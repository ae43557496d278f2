//! The DynamoGraphDeployment of a deployment, as a JSON value in the shape of the CRD
//! (`nvidia.com/v1beta1` with `spec.components`, or `nvidia.com/v1alpha1` with
//! `spec.services`).
//!
//! GPUs: a worker of `tp x pp x attention_dp` GPUs that fits on a node requests them all;
//! one that spans nodes is a multinode component of `nodeCount` nodes requesting
//! `gpus_per_node` GPUs each (the CRD: "Total GPUs used is nodeCount * container GPU
//! request"). So the manifest requests `replicas x nodeCount x GPUs` per component, and
//! their sum is the candidate's `used_gpus`.

use crate::flags::{frontend_args, worker_args, worker_module};
use crate::shape::{Deployment, Pool, Role};
use crate::{Api, Backend, ExportError, ExportOptions};
use serde_json::{Value, json};

/// How a worker sits on nodes: `nodes` nodes of `gpus` GPUs each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// Nodes a worker spans (1 when it fits on one).
    pub nodes: u64,
    /// GPUs a worker requests on each of its nodes.
    pub gpus: u64,
}

/// Where one worker of `pool` sits with `gpus_per_node` GPUs a node.
pub(crate) fn placement(pool: &Pool, gpus_per_node: u64) -> Result<Placement, ExportError> {
    let w = pool.gpus_per_worker();
    if w <= gpus_per_node {
        return Ok(Placement { nodes: 1, gpus: w });
    }
    if !w.is_multiple_of(gpus_per_node) {
        return Err(ExportError::Invalid {
            key: format!("{}tp", pool.prefix),
            value: pool.tp.to_string(),
            reason: format!(
                "a worker of {w} GPUs spans nodes but is not a whole number of {gpus_per_node}-GPU nodes; set --gpus-per-node (export.gpus_per_node) to your nodes' GPU count, or pick a shape that fills whole nodes"
            ),
        });
    }
    Ok(Placement {
        nodes: w / gpus_per_node,
        gpus: gpus_per_node,
    })
}

/// The component name of a role, as Dynamo's examples spell it (`VllmWorker`,
/// `SGLangPrefillWorker`, `TRTLLMDecodeWorker`).
pub(crate) fn component_name(backend: Backend, role: Role) -> String {
    let engine = match backend {
        Backend::Vllm => "Vllm",
        Backend::Sglang => "SGLang",
        Backend::Trtllm => "TRTLLM",
    };
    let role = match role {
        Role::Worker => "",
        Role::Prefill => "Prefill",
        Role::Decode => "Decode",
    };
    format!("{engine}{role}Worker")
}

/// The manifest of a deployment.
pub(crate) fn manifest(
    deployment: &Deployment,
    options: &ExportOptions,
    name: &str,
) -> Result<Value, ExportError> {
    let backend = deployment.backend;
    let image = options.image_or_placeholder();
    let frontend = Component {
        name: "Frontend".to_owned(),
        role: None,
        replicas: 1,
        placement: None,
        command: vec!["python3".into(), "-m".into(), "dynamo.frontend".into()],
        args: frontend_args(deployment.router_mode.as_deref()),
    };
    let mut components = vec![frontend];
    for (role, pool) in deployment.pools() {
        let placement = placement(pool, options.gpus_per_node)?;
        components.push(Component {
            name: component_name(backend, role),
            role: Some(role),
            replicas: pool.replicas,
            placement: Some(placement),
            command: vec!["python3".into(), "-m".into(), worker_module(backend).into()],
            args: worker_args(backend, pool, role, options.model_or_placeholder())?,
        });
    }
    let metadata = json!({"name": name, "namespace": options.namespace_or_placeholder()});
    let spec = match options.api {
        Api::V1beta1 => json!({
            "backendFramework": backend.name(),
            "components": components.iter().map(|c| c.v1beta1(image)).collect::<Vec<_>>(),
        }),
        Api::V1alpha1 => {
            let services: serde_json::Map<String, Value> = components
                .iter()
                .map(|c| (c.name.clone(), c.v1alpha1(image)))
                .collect();
            json!({"backendFramework": backend.name(), "services": services})
        }
    };
    Ok(json!({
        "apiVersion": options.api.api_version(),
        "kind": "DynamoGraphDeployment",
        "metadata": metadata,
        "spec": spec,
    }))
}

/// One component of the graph, before it takes an API version's shape.
struct Component {
    name: String,
    /// `None` for the frontend.
    role: Option<Role>,
    replicas: u64,
    /// `None` for the frontend (no GPUs).
    placement: Option<Placement>,
    command: Vec<String>,
    args: Vec<String>,
}

impl Component {
    fn v1beta1(&self, image: &str) -> Value {
        let mut container = json!({
            "name": "main",
            "image": image,
            "command": self.command,
            "args": self.args,
        });
        if let Some(p) = self.placement {
            let gpus = p.gpus.to_string();
            container["resources"] = json!({
                "limits": {"nvidia.com/gpu": gpus},
                "requests": {"nvidia.com/gpu": gpus},
            });
        }
        let kind = match self.role {
            None => "frontend",
            Some(Role::Worker) => "worker",
            Some(Role::Prefill) => "prefill",
            Some(Role::Decode) => "decode",
        };
        let mut c = json!({
            "name": self.name,
            "type": kind,
            "replicas": self.replicas,
            "podTemplate": {"spec": {"containers": [container]}},
        });
        if let Some(p) = self.placement.filter(|p| p.nodes > 1) {
            c["multinode"] = json!({"nodeCount": p.nodes});
        }
        c
    }

    fn v1alpha1(&self, image: &str) -> Value {
        let mut c = json!({
            "componentType": if self.role.is_some() { "worker" } else { "frontend" },
            "replicas": self.replicas,
            "extraPodSpec": {"mainContainer": {
                "name": "main",
                "image": image,
                "command": self.command,
                "args": self.args,
            }},
        });
        if let Some(role @ (Role::Prefill | Role::Decode)) = self.role {
            c["subComponentType"] = json!(role.name());
        }
        if let Some(p) = self.placement {
            let gpus = p.gpus.to_string();
            c["resources"] = json!({"limits": {"gpu": gpus}, "requests": {"gpu": gpus}});
            if p.nodes > 1 {
                c["multinode"] = json!({"nodeCount": p.nodes});
            }
        }
        c
    }
}

/// The GPUs a manifest requests: the sum over its components of replicas x nodeCount x
/// the GPU limit (either API version). The test of every manifest against `used_gpus`.
pub fn requested_gpus(manifest: &Value) -> u64 {
    let spec = &manifest["spec"];
    let one = |c: &Value, gpus: &Value| -> u64 {
        let g = gpus
            .as_str()
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0);
        let nodes = c["multinode"]["nodeCount"].as_u64().unwrap_or(1);
        c["replicas"].as_u64().unwrap_or(1) * nodes * g
    };
    if let Some(components) = spec["components"].as_array() {
        components
            .iter()
            .map(|c| {
                let containers = c["podTemplate"]["spec"]["containers"].as_array();
                let gpus = containers
                    .and_then(|cs| cs.iter().find(|x| x["name"] == "main"))
                    .map_or(
                        &Value::Null,
                        |m| &m["resources"]["limits"]["nvidia.com/gpu"],
                    );
                one(c, gpus)
            })
            .sum()
    } else if let Some(services) = spec["services"].as_object() {
        services
            .values()
            .map(|c| one(c, &c["resources"]["limits"]["gpu"]))
            .sum()
    } else {
        0
    }
}
