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

/// A job's script lines: strings, lists (nested lists from anchors
/// flattened), and `!reference [.job, key]` entries, which the YAML reader
/// gives as a two- or three-item list of names.
fn collect(doc: &Node, node: &Node, out: &mut Vec<(String, Layout)>, depth: usize) {
    match node {
        Node::Scalar { value, pos, style } => {
            out.push((value.clone(), Layout::for_yaml(*pos, *style)))
        }
        Node::Seq { items, .. } => {
            if let Some(target) = reference(doc, items) {
                if depth < MAX_DEPTH {
                    collect(doc, target, out, depth + 1);
                }
                return;
            }
            items.iter().for_each(|i| collect(doc, i, out, depth));
        }
        Node::Map { .. } => {}
    }
}

/// How deep `extends` chains and `!reference`s are followed (GitLab stops
/// at 11 and 10 levels).
const MAX_DEPTH: usize = 11;

/// `[.job, script]` (or `[.job, rules, …]`): what it refers to.
fn reference<'a>(doc: &'a Node, items: &[Node]) -> Option<&'a Node> {
    if !(2..=3).contains(&items.len()) {
        return None;
    }
    let names: Vec<&str> = items.iter().map(Node::as_str).collect::<Option<_>>()?;
    let mut node = doc.get(names[0])?;
    if !names[0].starts_with('.') && !matches!(node, Node::Map { .. }) {
        return None;
    }
    for name in &names[1..] {
        node = node.get(name)?;
    }
    Some(node)
}

/// The jobs `extends` names, in order (a later one overrides an earlier).
fn extended(job: &Node) -> Vec<&str> {
    match job.get("extends") {
        Some(Node::Scalar { value, .. }) => vec![value.as_str()],
        Some(Node::Seq { items, .. }) => items.iter().filter_map(Node::as_str).collect(),
        _ => Vec::new(),
    }
}

/// A key of a job as GitLab resolves `extends`: the job's own, else that
/// of the last template that has it (templates extend in turn).
fn inherited<'a>(doc: &'a Node, job: &'a Node, key: &str, depth: usize) -> Option<&'a Node> {
    if let Some(own) = job.get(key) {
        return Some(own);
    }
    if depth >= MAX_DEPTH {
        return None;
    }
    extended(job)
        .iter()
        .rev()
        .filter_map(|name| doc.get(name))
        .find_map(|parent| inherited(doc, parent, key, depth + 1))
}

/// A job's variables: its templates' first (deepest first), then its own.
fn variables(doc: &Node, job: &Node, into: &mut BTreeMap<String, String>, depth: usize) {
    if depth < MAX_DEPTH {
        for name in extended(job) {
            if let Some(parent) = doc.get(name) {
                variables(doc, parent, into, depth + 1);
            }
        }
    }
    vars(job.get("variables"), into);
}

pub fn scripts(text: &str) -> Result<Vec<Script>, ModelError> {
    Ok(scripts_in(&yaml::parse(text)?))
}

/// The scripts of already parsed documents (callers that parsed the file to
/// tell its kind need not parse it again). Hidden jobs (`.name`) run only
/// through the jobs that extend them, and are reported as those jobs.
pub fn scripts_in(docs: &[Node]) -> Vec<Script> {
    let mut out = Vec::new();
    for doc in docs {
        let mut global = BTreeMap::new();
        vars(doc.get("variables"), &mut global);
        let default = doc.get("default");
        for (name, job) in doc.entries() {
            let Some(name) = name.as_str() else { continue };
            if RESERVED.contains(&name) || name.starts_with('.') || !matches!(job, Node::Map { .. })
            {
                continue;
            }
            let script = inherited(doc, job, "script", 0);
            if script.is_none() && inherited(doc, job, "trigger", 0).is_some() {
                continue;
            }
            let mut env = global.clone();
            variables(doc, job, &mut env, 0);
            let mut scripts = Vec::new();
            for key in ["before_script", "script", "after_script"] {
                let node = inherited(doc, job, key, 0)
                    .or_else(|| {
                        (key != "script")
                            .then(|| default.and_then(|d| d.get(key)))
                            .flatten()
                    })
                    .or_else(|| (key != "script").then(|| doc.get(key)).flatten());
                if let Some(node) = node {
                    collect(doc, node, &mut scripts, 0);
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
                    shell: None,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extends_and_references_are_the_concrete_jobs() {
        let scripts = scripts(
            ".install:\n  variables:\n    PIP: pip3\n  before_script:\n    - $PIP install -r req.txt\n\n.test:\n  extends: .install\n  script:\n    - pytest\n\nunit:\n  extends: .test\n  variables:\n    PIP: uv pip\n\nlint:\n  script:\n    - !reference [.install, before_script]\n    - ruff check\n",
        )
        .unwrap();
        let got: Vec<(Option<&str>, &str, usize)> = scripts
            .iter()
            .map(|s| {
                let (Layout::Folded { start } | Layout::Lines { start }) = s.layout else {
                    panic!("layout")
                };
                (s.job.as_deref(), s.text.as_str(), start.line)
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (Some("unit"), "$PIP install -r req.txt", 5),
                (Some("unit"), "pytest", 10),
                (Some("lint"), "$PIP install -r req.txt", 5),
                (Some("lint"), "ruff check", 20),
            ]
        );
        assert_eq!(scripts[0].env["PIP"], "uv pip");
    }
}
