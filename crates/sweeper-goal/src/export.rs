//! `export:`: the names and defaults `sweeper export` writes into a deployment, kept with
//! the sweep so that every export of it says the same. All keys are optional; the
//! command's options override them.
//!
//! ```yaml
//! export:
//!   model: Qwen/Qwen3-32B-FP8       # what the workers serve (a Hugging Face id or a path)
//!   image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0
//!   namespace: serving              # the Kubernetes namespace
//!   backend: vllm                   # for candidates without a `backend` key (vllm)
//!   gpus_per_node: 8                # a worker with more spans whole nodes (8)
//!   api: v1beta1                    # or v1alpha1, the DynamoGraphDeployment version
//! ```

use crate::ConfigError;
use crate::raw::{self, RawExport, RawValue};
use serde::Serialize;

/// The `export:` block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ExportSettings {
    /// The model the workers serve.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The container image of every component.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The Kubernetes namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The backend of candidates without one: `vllm`, `sglang` or `trtllm`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// GPUs a node has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpus_per_node: Option<u64>,
    /// `v1beta1` or `v1alpha1`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
}

/// The backends `export.backend` accepts.
pub const EXPORT_BACKENDS: [&str; 3] = ["vllm", "sglang", "trtllm"];
/// The API versions `export.api` accepts.
pub const EXPORT_APIS: [&str; 2] = ["v1beta1", "v1alpha1"];

fn text(v: Option<&RawValue>, key: &str, example: &str) -> Result<Option<String>, ConfigError> {
    let Some(v) = v else { return Ok(None) };
    let path = format!("export.{key}");
    let s = raw::string(v, &path, &format!("e.g. `{key}: {example}`"))?;
    if s.trim().is_empty() || s.chars().any(char::is_control) {
        return Err(raw::out_of_range(
            &path,
            v,
            &format!(
                "give a non-empty name on one line, e.g. `{key}: {example}`, or leave the key out"
            ),
        ));
    }
    Ok(Some(s.to_owned()))
}

fn choice(
    v: Option<&RawValue>,
    key: &str,
    accepted: &[&str],
) -> Result<Option<String>, ConfigError> {
    let Some(v) = v else { return Ok(None) };
    let path = format!("export.{key}");
    let s = raw::string(v, &path, &format!("one of {}", accepted.join(", ")))?;
    if !accepted.contains(&s) {
        return Err(raw::out_of_range(
            &path,
            v,
            &format!("expected one of {}", accepted.join(", ")),
        ));
    }
    Ok(Some(s.to_owned()))
}

/// Validates a raw `export:` block.
pub(crate) fn from_raw(e: &RawExport) -> Result<ExportSettings, ConfigError> {
    Ok(ExportSettings {
        model: text(e.model.as_ref(), "model", "Qwen/Qwen3-32B-FP8")?,
        image: text(
            e.image.as_ref(),
            "image",
            "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.9.0",
        )?,
        namespace: text(e.namespace.as_ref(), "namespace", "serving")?,
        backend: choice(e.backend.as_ref(), "backend", &EXPORT_BACKENDS)?,
        gpus_per_node: e
            .gpus_per_node
            .as_ref()
            .map(|v| {
                raw::int_in(
                    v,
                    "export.gpus_per_node",
                    1,
                    4096,
                    "gpus_per_node is the GPUs one node has, an integer from 1 to 4096",
                    "",
                )
                .map(|i| i as u64)
            })
            .transpose()?,
        api: choice(e.api.as_ref(), "api", &EXPORT_APIS)?,
    })
}
