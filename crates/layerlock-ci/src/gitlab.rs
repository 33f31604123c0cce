//! GitLab CI: every job's `before_script`, `script` and `after_script`
//! (strings or lists, nested lists from anchors flattened), with `variables`.

use std::collections::BTreeMap;

use crate::script::{Layout, ModelError, Phase, Script};
use crate::yaml::{self, Node};

/// Top-level keys that are not jobs (the job model in `jobs.rs` skips them
/// too).
pub(crate) const RESERVED: &[&str] = &[
    "stages",
    "variables",
    "include",
    "default",
    "workflow",
    "image",
    "services",
    "cache",
    "before_script",
    "after_script",
    "types",
    "spec",
    "pages:deploy",
];

fn vars(node: Option<&Node>, into: &mut BTreeMap<String, String>) {
    for (k, v) in node.map(Node::entries).unwrap_or_default() {
        let value = v.as_str().or_else(|| v.get("value").and_then(Node::as_str));
        if let (Some(k), Some(v)) = (k.as_str(), value) {
            into.insert(k.to_string(), v.to_string());
        }
    }
}

fn collect(node: &Node, out: &mut Vec<(String, Layout)>) {
    match node {
        Node::Scalar { value, pos, style } => {
            out.push((value.clone(), Layout::for_yaml(*pos, *style)))
        }
        Node::Seq { items, .. } => items.iter().for_each(|i| collect(i, out)),
        Node::Map { .. } => {}
    }
}

pub fn scripts(text: &str) -> Result<Vec<Script>, ModelError> {
    Ok(scripts_in(&yaml::parse(text)?))
}

/// The scripts of already parsed documents (callers that parsed the file to
/// tell its kind need not parse it again).
pub fn scripts_in(docs: &[Node]) -> Vec<Script> {
    let mut out = Vec::new();
    for doc in docs {
        let mut global = BTreeMap::new();
        vars(doc.get("variables"), &mut global);
        let default = doc.get("default");
        for (name, job) in doc.entries() {
            let Some(name) = name.as_str() else { continue };
            if RESERVED.contains(&name) || !matches!(job, Node::Map { .. }) {
                continue;
            }
            if job.get("script").is_none() && job.get("trigger").is_some() {
                continue;
            }
            let mut env = global.clone();
            vars(job.get("variables"), &mut env);
            let mut scripts = Vec::new();
            for key in ["before_script", "script", "after_script"] {
                let node = job
                    .get(key)
                    .or_else(|| {
                        (key != "script")
                            .then(|| default.and_then(|d| d.get(key)))
                            .flatten()
                    })
                    .or_else(|| (key != "script").then(|| doc.get(key)).flatten());
                if let Some(node) = node {
                    collect(node, &mut scripts);
                }
            }
            for (text, layout) in scripts {
                out.push(Script {
                    text,
                    layout,
                    job: Some(name.to_string()),
                    phase: Phase::JobTime,
                    env: env.clone(),
                    working_dir: None,
                    mounts: Vec::new(),
                });
            }
        }
    }
    out
}
