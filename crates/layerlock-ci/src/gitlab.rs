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

/// A pipeline's files as GitLab merges them: the file CI starts from
/// (index 0) and its local includes in order. A name defined in more than
/// one is the starting file's, else the last include's.
struct Files<'a> {
    docs: Vec<&'a [Node]>,
}

impl<'a> Files<'a> {
    /// A top-level key's value, and the file it is in.
    fn get(&self, name: &str) -> Option<(usize, &'a Node)> {
        let order = std::iter::once(0).chain((1..self.docs.len()).rev());
        for i in order {
            if let Some(found) = self.docs[i].iter().find_map(|d| d.get(name)) {
                return Some((i, found));
            }
        }
        None
    }
}

/// A job's script lines: strings, lists (nested lists from anchors
/// flattened), and `!reference [.job, key]` entries, which the YAML reader
/// gives as a two- or three-item list of names. Each with its file.
fn collect(
    files: &Files<'_>,
    file: usize,
    node: &Node,
    out: &mut Vec<(usize, String, Layout)>,
    depth: usize,
) {
    match node {
        Node::Scalar { value, pos, style } => {
            out.push((file, value.clone(), Layout::for_yaml(*pos, *style)))
        }
        Node::Seq { items, .. } => {
            if let Some((at, target)) = reference(files, items) {
                if depth < MAX_DEPTH {
                    collect(files, at, target, out, depth + 1);
                }
                return;
            }
            items
                .iter()
                .for_each(|i| collect(files, file, i, out, depth));
        }
        Node::Map { .. } => {}
    }
}

/// How deep `extends` chains and `!reference`s are followed (GitLab stops
/// at 11 and 10 levels).
const MAX_DEPTH: usize = 11;

/// `[.job, script]` (or `[.job, rules, …]`): what it refers to.
fn reference<'a>(files: &Files<'a>, items: &[Node]) -> Option<(usize, &'a Node)> {
    if !(2..=3).contains(&items.len()) {
        return None;
    }
    let names: Vec<&str> = items.iter().map(Node::as_str).collect::<Option<_>>()?;
    let (at, mut node) = files.get(names[0])?;
    if !names[0].starts_with('.') && !matches!(node, Node::Map { .. }) {
        return None;
    }
    for name in &names[1..] {
        node = node.get(name)?;
    }
    Some((at, node))
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
fn inherited<'a>(
    files: &Files<'a>,
    (file, job): (usize, &'a Node),
    key: &str,
    depth: usize,
) -> Option<(usize, &'a Node)> {
    if let Some(own) = job.get(key) {
        return Some((file, own));
    }
    if depth >= MAX_DEPTH {
        return None;
    }
    extended(job)
        .iter()
        .rev()
        .filter_map(|name| files.get(name))
        .find_map(|parent| inherited(files, parent, key, depth + 1))
}

/// The templates a job extends, through its templates, that no file of
/// the pipeline defines.
fn missing_templates(files: &Files<'_>, job: &Node, out: &mut Vec<String>, depth: usize) {
    if depth >= MAX_DEPTH {
        return;
    }
    for name in extended(job) {
        match files.get(name) {
            Some((_, parent)) => missing_templates(files, parent, out, depth + 1),
            None if !out.iter().any(|n| n == name) => out.push(name.to_string()),
            None => {}
        }
    }
}

/// A job's variables: its templates' first (deepest first), then its own.
fn variables(files: &Files<'_>, job: &Node, into: &mut BTreeMap<String, String>, depth: usize) {
    if depth < MAX_DEPTH {
        for name in extended(job) {
            if let Some((_, parent)) = files.get(name) {
                variables(files, parent, into, depth + 1);
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
    pipeline(&[docs])
        .scripts
        .into_iter()
        .map(|(_, script)| script)
        .collect()
}

/// What a pipeline of several files runs.
#[derive(Debug, Default)]
pub struct Pipeline {
    /// Each script with the index of the file that holds its text.
    pub scripts: Vec<(usize, Script)>,
    /// Jobs that extend templates no file defines: (file, line, job,
    /// templates). Their scripts may be incomplete.
    pub unresolved: Vec<(usize, usize, String, Vec<String>)>,
}

/// The jobs of a pipeline made of `files` (the starting file first, then
/// its local includes, as [`local_includes`] finds them): every concrete
/// job of any of them, with `extends` and `!reference` resolved across
/// all.
pub fn pipeline(files: &[&[Node]]) -> Pipeline {
    let files = Files {
        docs: files.to_vec(),
    };
    let mut out = Pipeline::default();
    for (index, docs) in files.docs.iter().enumerate() {
        for doc in docs.iter() {
            jobs_of(&files, index, doc, &mut out);
        }
    }
    out
}

fn jobs_of(files: &Files<'_>, index: usize, doc: &Node, out: &mut Pipeline) {
    let root = files.docs[0];
    let mut global = BTreeMap::new();
    for d in root {
        vars(d.get("variables"), &mut global);
    }
    let default = files.get("default").map(|(_, d)| d);
    let top = |key: &str| files.get(key);
    for (name, job) in doc.entries() {
        let Some(name) = name.as_str() else { continue };
        if RESERVED.contains(&name) || name.starts_with('.') || !matches!(job, Node::Map { .. }) {
            continue;
        }
        // The starting file's definition wins over an include's.
        if files.get(name).is_some_and(|(at, _)| at != index) {
            continue;
        }
        let script = inherited(files, (index, job), "script", 0);
        if script.is_none() && inherited(files, (index, job), "trigger", 0).is_some() {
            continue;
        }
        let mut missing = Vec::new();
        missing_templates(files, job, &mut missing, 0);
        if !missing.is_empty() {
            out.unresolved
                .push((index, job.pos().line, name.to_string(), missing));
        }
        let mut env = global.clone();
        variables(files, job, &mut env, 0);
        let mut scripts = Vec::new();
        for key in ["before_script", "script", "after_script"] {
            let node = inherited(files, (index, job), key, 0)
                .or_else(|| {
                    (key != "script")
                        .then(|| default.and_then(|d| d.get(key)).map(|n| (0, n)))
                        .flatten()
                })
                .or_else(|| (key != "script").then(|| top(key)).flatten());
            if let Some((at, node)) = node {
                collect(files, at, node, &mut scripts, 0);
            }
        }
        for (file, text, layout) in scripts {
            out.scripts.push((
                file,
                Script {
                    text,
                    layout,
                    job: Some(name.to_string()),
                    phase: Phase::JobTime,
                    env: env.clone(),
                    working_dir: None,
                    mounts: Vec::new(),
                    shell: None,
                },
            ));
        }
    }
}

/// One `include:` entry of a GitLab file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Include {
    /// A file of the repository (`local:`, or a plain path): as written,
    /// maybe a glob, maybe with `$VARIABLES`.
    Local { path: String, line: usize },
    /// A file elsewhere (`project:`, `remote:`, `template:`,
    /// `component:`): what it names.
    Elsewhere { what: String, line: usize },
}

/// The `include:` entries of a file's documents.
pub fn includes(docs: &[Node]) -> Vec<Include> {
    let mut out = Vec::new();
    for doc in docs {
        let Some(include) = doc.get("include") else {
            continue;
        };
        let entries: Vec<&Node> = match include {
            Node::Seq { items, .. } => items.iter().collect(),
            other => vec![other],
        };
        for entry in entries {
            let line = entry.pos().line;
            match entry {
                Node::Scalar { value, .. } if value.contains("://") => {
                    out.push(Include::Elsewhere {
                        what: value.clone(),
                        line,
                    })
                }
                Node::Scalar { value, .. } => out.push(Include::Local {
                    path: value.clone(),
                    line,
                }),
                Node::Map { .. } => {
                    if let Some(path) = entry.get("local").and_then(Node::as_str) {
                        out.push(Include::Local {
                            path: path.to_string(),
                            line,
                        });
                        continue;
                    }
                    let what = ["project", "remote", "template", "component"]
                        .iter()
                        .find_map(|k| {
                            let v = entry.get(k)?;
                            let file = entry
                                .get("file")
                                .and_then(Node::as_str)
                                .map(|f| format!(" {f}"))
                                .unwrap_or_default();
                            Some(format!("{k}: {}{file}", v.as_str().unwrap_or("…")))
                        })
                        .unwrap_or_else(|| "an include".to_string());
                    out.push(Include::Elsewhere { what, line });
                }
                Node::Seq { .. } => {}
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

    #[test]
    fn templates_and_jobs_of_local_includes_join_the_pipeline() {
        let root = yaml::parse("include:\n  - local: ci/templates.yml\n  - project: group/shared\n    file: /ci.yml\n  - 'ci/more.yml'\nunit:\n  extends: .py\n  script:\n    - pytest\nremote:\n  extends: .shared\n").unwrap();
        let templates =
            yaml::parse(".py:\n  before_script:\n    - pip install -r req.txt\n").unwrap();
        let more = yaml::parse("docs:\n  extends: .py\n  script:\n    - make docs\nunit:\n  script:\n    - overridden\n").unwrap();
        assert_eq!(
            includes(&root),
            vec![
                Include::Local {
                    path: "ci/templates.yml".into(),
                    line: 2
                },
                Include::Elsewhere {
                    what: "project: group/shared /ci.yml".into(),
                    line: 3
                },
                Include::Local {
                    path: "ci/more.yml".into(),
                    line: 5
                },
            ]
        );
        let pipeline = pipeline(&[&root, &templates, &more]);
        let got: Vec<(usize, Option<&str>, &str)> = pipeline
            .scripts
            .iter()
            .map(|(file, s)| (*file, s.job.as_deref(), s.text.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, Some("unit"), "pip install -r req.txt"),
                (0, Some("unit"), "pytest"),
                (1, Some("docs"), "pip install -r req.txt"),
                (2, Some("docs"), "make docs"),
            ]
        );
        assert_eq!(
            pipeline.unresolved,
            vec![(0, 11, "remote".to_string(), vec![".shared".to_string()])]
        );
    }
}
