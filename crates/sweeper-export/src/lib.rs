//! `sweeper-export`: a sweep's trial as something to deploy.
//!
//! Layer 5 of sweeper, beside `sweeper-tables` (whose `result.json` it reads) and on
//! `sweeper-engine`. For each picked trial it renders a bundle of three files:
//!
//! - `dgd.yaml`: a Dynamo `DynamoGraphDeployment` (`nvidia.com/v1beta1` with
//!   `spec.components`, or the older `nvidia.com/v1alpha1` `spec.services` form): a
//!   frontend, and one worker component (aggregated) or a prefill and a decode component
//!   (disaggregated), each with the candidate's replicas, GPU limits equal to its parallel
//!   shape and the backend's own flags for that shape and its batch caps;
//! - `launch.sh`: the same deployment as engine launch commands, one line per worker with
//!   the GPUs it gets;
//! - `candidate.json`: the trial's candidate, report, status and objectives, so that every
//!   number in the manifests traces back to the trial.
//!
//! The candidate is read from its flat keys ([`shape`]); the backends' flags are in
//! [`flags`](crate#backends). Model, image and namespace come from [`ExportOptions`];
//! without them the manifests carry placeholders named as such (`PLACEHOLDER_MODEL`, ...).
//!
//! Invariant: the GPUs a manifest requests (replicas x nodes x GPU limit, summed over its
//! components) equal the candidate's `used_gpus`, or nothing is rendered; a candidate key
//! the exporter cannot map is an error naming it (or, with `allow_unmapped`, a comment).
//!
//! ```
//! use serde_json::json;
//! use sweeper_export::{ExportOptions, render};
//!
//! let candidate = json!({"tp": 4, "replicas": 2, "max_batch_size": 256, "used_gpus": 8});
//! let out = render(candidate.as_object().unwrap(), &ExportOptions::default(), "demo", &[])?;
//! assert_eq!(out.deployment.used_gpus, 8);
//! assert_eq!(sweeper_export::requested_gpus(&out.manifest), 8);
//! assert!(out.dgd_yaml.contains("--max-num-seqs"));
//! # Ok::<(), sweeper_export::ExportError>(())
//! ```
//!
//! # Backends
//!
//! vLLM, SGLang and TensorRT-LLM spell tensor, attention-data and expert parallelism
//! differently; the table is in the `flags` module's source.

mod dgd;
mod error;
mod flags;
mod launch;
pub mod select;
pub mod shape;
mod yaml;

pub use dgd::{Placement, requested_gpus};
pub use error::ExportError;
pub use select::{Selection, knee, select};
pub use shape::{Deployment, Mode, Pool, Role};

use serde_json::{Map, Value, json};
use std::fmt;
use std::path::Path;
use sweeper_goal::ExportSettings;
use sweeper_tables::ResultFile;

/// The placeholder of a model name not given.
pub const PLACEHOLDER_MODEL: &str = "PLACEHOLDER_MODEL";
/// The placeholder of a container image not given.
pub const PLACEHOLDER_IMAGE: &str = "PLACEHOLDER_IMAGE";
/// The placeholder of a Kubernetes namespace not given (a valid name, so that the manifest
/// still passes a dry run).
pub const PLACEHOLDER_NAMESPACE: &str = "placeholder-namespace";

/// A serving engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// vLLM.
    #[default]
    Vllm,
    /// SGLang.
    Sglang,
    /// TensorRT-LLM.
    Trtllm,
}

impl Backend {
    /// Reads `vllm`, `sglang` or `trtllm`.
    pub fn parse(text: &str) -> Option<Backend> {
        match text {
            "vllm" => Some(Backend::Vllm),
            "sglang" => Some(Backend::Sglang),
            "trtllm" => Some(Backend::Trtllm),
            _ => None,
        }
    }

    /// The name in a candidate and in the CRD's `backendFramework`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Vllm => "vllm",
            Backend::Sglang => "sglang",
            Backend::Trtllm => "trtllm",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The DynamoGraphDeployment API version to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Api {
    /// `nvidia.com/v1beta1`: `spec.components`, each with a `podTemplate`.
    #[default]
    V1beta1,
    /// `nvidia.com/v1alpha1`: `spec.services`, each with `resources` and `extraPodSpec`.
    V1alpha1,
}

impl Api {
    /// The manifest's `apiVersion`.
    pub fn api_version(self) -> &'static str {
        match self {
            Api::V1beta1 => "nvidia.com/v1beta1",
            Api::V1alpha1 => "nvidia.com/v1alpha1",
        }
    }
}

/// How to render: the API version, the backend of candidates without one, the nodes' GPU
/// count, and the names the manifests need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportOptions {
    /// The DGD API version.
    pub api: Api,
    /// The backend of a candidate without a `backend` key.
    pub backend: Backend,
    /// GPUs a node has: a worker with more spans nodes (default 8).
    pub gpus_per_node: u64,
    /// The model the workers serve (a Hugging Face id or a path).
    pub model: Option<String>,
    /// The container image of every component.
    pub image: Option<String>,
    /// The Kubernetes namespace.
    pub namespace: Option<String>,
    /// Record a candidate key the exporter cannot map as a comment instead of refusing.
    pub allow_unmapped: bool,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            api: Api::V1beta1,
            backend: Backend::Vllm,
            gpus_per_node: 8,
            model: None,
            image: None,
            namespace: None,
            allow_unmapped: false,
        }
    }
}

impl ExportOptions {
    /// The options a sweep's `export:` block gives, defaults for the keys it leaves out.
    pub fn from_settings(settings: Option<&ExportSettings>) -> ExportOptions {
        let mut o = ExportOptions::default();
        let Some(s) = settings else { return o };
        o.model.clone_from(&s.model);
        o.image.clone_from(&s.image);
        o.namespace.clone_from(&s.namespace);
        if let Some(b) = s.backend.as_deref().and_then(Backend::parse) {
            o.backend = b;
        }
        if let Some(n) = s.gpus_per_node {
            o.gpus_per_node = n;
        }
        if s.api.as_deref() == Some("v1alpha1") {
            o.api = Api::V1alpha1;
        }
        o
    }

    /// The options of a sweep's result: its config's `export:` block, if it has one.
    pub fn of_result(result: &ResultFile) -> ExportOptions {
        let config = sweeper_goal::parse(&result.config.to_string()).ok();
        ExportOptions::from_settings(config.as_ref().and_then(|c| c.export.as_ref()))
    }

    pub(crate) fn model_or_placeholder(&self) -> &str {
        self.model.as_deref().unwrap_or(PLACEHOLDER_MODEL)
    }

    pub(crate) fn image_or_placeholder(&self) -> &str {
        self.image.as_deref().unwrap_or(PLACEHOLDER_IMAGE)
    }

    pub(crate) fn namespace_or_placeholder(&self) -> &str {
        self.namespace.as_deref().unwrap_or(PLACEHOLDER_NAMESPACE)
    }

    /// The placeholders these options leave in a manifest, with the option that sets each.
    pub fn placeholders(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.model.is_none() {
            out.push(format!("{PLACEHOLDER_MODEL} (set --model or export.model)"));
        }
        if self.image.is_none() {
            out.push(format!("{PLACEHOLDER_IMAGE} (set --image or export.image)"));
        }
        if self.namespace.is_none() {
            out.push(format!(
                "{PLACEHOLDER_NAMESPACE} (set --namespace or export.namespace)"
            ));
        }
        out
    }
}

/// A rendered candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The deployment read from the candidate.
    pub deployment: Deployment,
    /// The DynamoGraphDeployment as a value.
    pub manifest: Value,
    /// `dgd.yaml`: the manifest with a comment header.
    pub dgd_yaml: String,
    /// `launch.sh`.
    pub launch_sh: String,
}

/// Renders one candidate (its flat keys) as a manifest named `name` and a launch script;
/// `header` lines go into both as comments (where the candidate came from).
pub fn render(
    candidate: &Map<String, Value>,
    options: &ExportOptions,
    name: &str,
    header: &[String],
) -> Result<Rendered, ExportError> {
    if options.gpus_per_node == 0 {
        return Err(ExportError::Invalid {
            key: "gpus_per_node".to_owned(),
            value: "0".to_owned(),
            reason: "give the GPUs one node has, e.g. 8".to_owned(),
        });
    }
    let deployment =
        Deployment::from_candidate(candidate, options.backend, options.allow_unmapped)?;
    let manifest = dgd::manifest(&deployment, options, name)?;
    let requested = requested_gpus(&manifest);
    if requested != deployment.used_gpus {
        return Err(ExportError::GpuMismatch {
            used: deployment.used_gpus,
            computed: requested,
            detail: "as the manifest requests them".to_owned(),
        });
    }
    let mut lines: Vec<String> = header.to_vec();
    lines.push(format!(
        "{} GPUs: {}",
        deployment.used_gpus,
        deployment
            .pools()
            .iter()
            .map(|(role, p)| {
                format!(
                    "{} {} x {} GPUs",
                    role.name(),
                    p.replicas,
                    p.gpus_per_worker()
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let placeholders = options.placeholders();
    if !placeholders.is_empty() {
        lines.push(format!("placeholders: {}", placeholders.join(", ")));
    }
    for (key, value) in &deployment.unmapped {
        // JSON text: a key or value from outside cannot end the comment line.
        lines.push(format!(
            "unmapped (--allow-unmapped, not in the deployment): {} = {value}",
            Value::String(key.clone())
        ));
    }
    let mut dgd_yaml = String::new();
    for line in &lines {
        dgd_yaml.push_str("# ");
        dgd_yaml.push_str(line);
        dgd_yaml.push('\n');
    }
    dgd_yaml.push_str(&yaml::to_yaml(&manifest));
    let launch_sh = launch::script(&deployment, options, &lines)?;
    Ok(Rendered {
        deployment,
        manifest,
        dgd_yaml,
        launch_sh,
    })
}

/// One trial's files.
#[derive(Debug, Clone, PartialEq)]
pub struct Bundle {
    /// The trial id.
    pub trial: u64,
    /// The rendering.
    pub rendered: Rendered,
    /// `candidate.json`.
    pub candidate_json: String,
}

/// Renders trial `trial` of a sweep's result; `source` names the sweep in the headers.
pub fn export_trial(
    result: &ResultFile,
    trial: u64,
    options: &ExportOptions,
    source: &str,
) -> Result<Bundle, ExportError> {
    let t = result
        .trials
        .iter()
        .find(|t| t.trial == trial)
        .ok_or_else(|| ExportError::Selection(format!("the sweep has no trial {trial}")))?;
    let header = vec![
        format!(
            "trial {trial} of {}, exported by sweeper {}",
            Value::String(source.to_owned()),
            env!("CARGO_PKG_VERSION")
        ),
        "every number here traces to candidate.json beside this file".to_owned(),
    ];
    let rendered = render(
        &t.config,
        options,
        &format!("sweeper-trial-{trial}"),
        &header,
    )?;
    let evaluated = result
        .evaluated
        .iter()
        .find(|c| c.get("index").and_then(Value::as_u64) == Some(trial));
    let d = &rendered.deployment;
    let pools: Map<String, Value> = d
        .pools()
        .iter()
        .map(|(role, p)| {
            (
                role.name().to_owned(),
                json!({
                    "tp": p.tp, "pp": p.pp, "attention_dp": p.attention_dp,
                    "moe_tp": p.experts.map(|e| e.0), "moe_ep": p.experts.map(|e| e.1),
                    "replicas": p.replicas, "gpus_per_worker": p.gpus_per_worker(),
                    "max_batch_size": p.max_batch_size, "max_num_tokens": p.max_num_tokens,
                }),
            )
        })
        .collect();
    let candidate = json!({
        "trial": trial,
        "source": source,
        "sweeper_version": env!("CARGO_PKG_VERSION"),
        "status": t.status,
        "reason": t.reason,
        "config": t.config,
        "objectives": evaluated.and_then(|c| c.get("objectives")).cloned(),
        "score": evaluated.and_then(|c| c.get("score")).cloned(),
        "report": {"metrics": t.metrics, "labels": t.labels},
        "deployment": {
            "backend": d.backend.name(),
            "deployment_mode": if matches!(d.mode, Mode::Agg(_)) { "agg" } else { "disagg" },
            "used_gpus": d.used_gpus,
            "router_mode": d.router_mode,
            "pools": pools,
            "unmapped": d.unmapped.iter().map(|(k, v)| json!({"key": k, "value": v})).collect::<Vec<_>>(),
        },
        "objective_directions": result.objectives,
    });
    let mut candidate_json = serde_json::to_string_pretty(&candidate).unwrap_or_default();
    candidate_json.push('\n');
    Ok(Bundle {
        trial,
        rendered,
        candidate_json,
    })
}

/// Writes a bundle into `dir/trial-ID/` (created): `dgd.yaml`, `launch.sh` (executable
/// on Unix) and `candidate.json`, each written atomically. Returns the folder.
pub fn write_bundle(dir: &Path, bundle: &Bundle) -> Result<std::path::PathBuf, ExportError> {
    let folder = dir.join(format!("trial-{}", bundle.trial));
    let io = |path: &Path, e: Box<dyn std::error::Error + Send + Sync>| ExportError::Io {
        path: path.display().to_string(),
        source: e,
    };
    std::fs::create_dir_all(&folder).map_err(|e| io(&folder, Box::new(e)))?;
    for (name, text) in [
        ("dgd.yaml", &bundle.rendered.dgd_yaml),
        ("launch.sh", &bundle.rendered.launch_sh),
        ("candidate.json", &bundle.candidate_json),
    ] {
        let path = folder.join(name);
        sweeper_tables::write_file_atomic(&path, text.as_bytes())
            .map_err(|e| io(&path, Box::new(e)))?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let path = folder.join("launch.sh");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| io(&path, Box::new(e)))?;
    }
    Ok(folder)
}
