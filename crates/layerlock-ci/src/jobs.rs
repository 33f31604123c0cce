//! Every job a CI file defines, as one comparable record: Buildkite steps
//! (matched by `key`, else by label), GitHub Actions jobs and GitLab jobs (by
//! id). The command lines are kept apart from the other fields, which are
//! flattened to paths (`env.FOO`, `plugins[0].docker.image`), so two
//! definitions of a job can be compared field by field.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::Serialize;

use crate::System;
use crate::yaml::Node;

/// How a job is named across revisions.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobId {
    /// A Buildkite step's `key`.
    Key(String),
    /// A Buildkite step without a key, by its label.
    Label(String),
    /// A GitHub Actions or GitLab job id.
    Job(String),
}

impl JobId {
    pub fn value(&self) -> &str {
        match self {
            Self::Key(v) | Self::Label(v) | Self::Job(v) => v,
        }
    }
}

impl std::fmt::Display for JobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Key(k) => write!(f, "key {k}"),
            Self::Label(l) => write!(f, "label \"{l}\""),
            Self::Job(j) => write!(f, "job {j}"),
        }
    }
}

/// A field's value once flattened: a scalar, or a list of scalars (kept
/// whole, so a list compares as items added and removed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Value {
    Scalar(String),
    List(Vec<String>),
}

impl Value {
    fn map_strings(&self, f: &impl Fn(&str) -> String) -> Self {
        match self {
            Self::Scalar(s) => Self::Scalar(f(s)),
            Self::List(items) => Self::List(items.iter().map(|s| f(s)).collect()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Job {
    pub system: System,
    pub id: JobId,
    pub label: Option<String>,
    /// 1-based line where the job starts in its file.
    pub line: usize,
    /// The lines the job runs, in order (block scalars split into lines).
    pub commands: Vec<String>,
    /// Every other field, flattened.
    pub fields: BTreeMap<String, Value>,
}

impl Job {
    /// The same job with `f` applied to every string it holds (commands,
    /// field values, label): how declared rewrites are applied.
    pub fn map_strings(&self, f: impl Fn(&str) -> String) -> Self {
        Self {
            system: self.system,
            id: self.id.clone(),
            label: self.label.as_deref().map(&f),
            line: self.line,
            commands: self.commands.iter().map(|c| f(c)).collect(),
            fields: self
                .fields
                .iter()
                .map(|(k, v)| (k.clone(), v.map_strings(&f)))
                .collect(),
        }
    }
}

/// The jobs of one parsed CI file.
pub fn jobs(system: System, docs: &[Node]) -> Vec<Job> {
    let mut out = Vec::new();
    for doc in docs {
        match system {
            System::Buildkite => {
                let steps: &[Node] = match doc {
                    Node::Seq { items, .. } => items,
                    _ => doc.get("steps").map(Node::items).unwrap_or_default(),
                };
                // The pipeline's own keys (`env`, `agents`) reach every step.
                let mut pipeline = BTreeMap::new();
                for (key, value) in doc.entries() {
                    match key.as_str() {
                        Some(key) if key != "steps" => {
                            flatten(value, &format!("pipeline.{key}"), &mut pipeline);
                        }
                        _ => {}
                    }
                }
                for step in steps {
                    buildkite_step(step, &pipeline, &mut out);
                }
            }
            System::GithubActions => github_jobs(doc, &mut out),
            // Jobs of these systems are not compared (yet).
            System::Gitlab
            | System::CircleCi
            | System::AzurePipelines
            | System::AppVeyor
            | System::Jenkins => {}
        }
    }
    if system == System::Gitlab {
        let pipeline = gitlab_pipeline(&[(String::new(), docs.to_vec())]);
        out.extend(pipeline.jobs.into_iter().map(|(_, job)| job));
    }
    out
}

fn scalar_lines(node: &Node, out: &mut Vec<String>) {
    match node {
        Node::Scalar { value, .. } => {
            out.extend(value.lines().map(|l| l.trim_end().to_string()));
        }
        Node::Seq { items, .. } => items.iter().for_each(|item| scalar_lines(item, out)),
        Node::Map { .. } => {}
    }
}

/// Flatten `node` under `path` into `out`, skipping the top-level keys in
/// `skip`.
fn flatten(node: &Node, path: &str, out: &mut BTreeMap<String, Value>) {
    match node {
        Node::Scalar { value, .. } => {
            out.insert(path.to_string(), Value::Scalar(value.clone()));
        }
        Node::Seq { items, .. } => {
            if items.iter().all(|i| matches!(i, Node::Scalar { .. })) {
                let list = items
                    .iter()
                    .filter_map(Node::as_str)
                    .map(str::to_string)
                    .collect();
                out.insert(path.to_string(), Value::List(list));
            } else {
                for (i, item) in items.iter().enumerate() {
                    flatten(item, &format!("{path}[{i}]"), out);
                }
            }
        }
        Node::Map { entries, .. } => {
            if entries.is_empty() {
                out.insert(path.to_string(), Value::Scalar(String::new()));
            }
            for (key, value) in entries {
                let key = key.as_str().unwrap_or("?");
                let sub = if path.is_empty() {
                    key.to_string()
                } else {
                    format!("{path}.{key}")
                };
                flatten(value, &sub, out);
            }
        }
    }
}

fn fields_except(node: &Node, skip: &[&str]) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for (key, value) in node.entries() {
        let Some(key) = key.as_str() else { continue };
        if !skip.contains(&key) {
            flatten(value, key, &mut out);
        }
    }
    out
}

/// Keys of a group step that name it rather than configure its steps.
const GROUP_NAMING: &[&str] = &["steps", "group", "label", "name", "key", "identifier", "id"];

/// One step (and a group's steps), with the fields it inherits from its
/// pipeline and group.
fn buildkite_step(step: &Node, inherited: &BTreeMap<String, Value>, out: &mut Vec<Job>) {
    if step.as_str().is_some() || !matches!(step, Node::Map { .. }) {
        // `wait` and other bare strings name no job.
        return;
    }
    if step.get("wait").is_some() || step.get("waiter").is_some() {
        return;
    }
    let key = ["key", "identifier", "id"]
        .iter()
        .find_map(|k| step.get(k).and_then(Node::as_str))
        .filter(|k| !k.is_empty());
    let label = ["label", "name", "group", "block", "input", "trigger"]
        .iter()
        .find_map(|k| step.get(k).and_then(Node::as_str))
        .map(str::to_string);
    let id = match (key, &label) {
        (Some(key), _) => JobId::Key(key.to_string()),
        (None, Some(label)) => JobId::Label(label.clone()),
        (None, None) => return,
    };
    let mut commands = Vec::new();
    for k in ["command", "commands"] {
        if let Some(node) = step.get(k) {
            scalar_lines(node, &mut commands);
        }
    }
    let mut fields = inherited.clone();
    fields.extend(fields_except(step, &["command", "commands", "steps"]));
    out.push(Job {
        system: System::Buildkite,
        id,
        label,
        line: step.pos().line,
        commands,
        fields,
    });
    if let Some(nested) = step.get("steps") {
        // A group's `if`, `depends_on` and the like decide whether its
        // steps run.
        let mut group = inherited.clone();
        for (key, value) in step.entries() {
            match key.as_str() {
                Some(key) if !GROUP_NAMING.contains(&key) => {
                    flatten(value, &format!("group.{key}"), &mut group);
                }
                _ => {}
            }
        }
        for inner in nested.items() {
            buildkite_step(inner, &group, out);
        }
    }
}

/// Workflow keys that reach every job: when it runs at all, and what each
/// job starts with.
const WORKFLOW_KEYS: &[&str] = &["on", "env", "defaults", "permissions", "concurrency"];

fn github_jobs(doc: &Node, out: &mut Vec<Job>) {
    let Some(jobs) = doc.get("jobs") else { return };
    let mut workflow = BTreeMap::new();
    for key in WORKFLOW_KEYS {
        if let Some(value) = doc.get(key) {
            flatten(value, &format!("workflow.{key}"), &mut workflow);
        }
    }
    for (id, job) in jobs.entries() {
        let Some(id) = id.as_str() else { continue };
        let mut commands = Vec::new();
        let mut fields = workflow.clone();
        fields.extend(fields_except(job, &["steps"]));
        for (i, step) in job
            .get("steps")
            .map(Node::items)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            if let Some(run) = step.get("run") {
                scalar_lines(run, &mut commands);
            }
            for (key, value) in step.entries() {
                let Some(key) = key.as_str() else { continue };
                if key != "run" {
                    flatten(value, &format!("steps[{i}].{key}"), &mut fields);
                }
            }
        }
        out.push(Job {
            system: System::GithubActions,
            id: JobId::Job(id.to_string()),
            label: job.get("name").and_then(Node::as_str).map(str::to_string),
            line: job.pos().line,
            commands,
            fields,
        });
    }
}

/// What `default:` (and the same keys at the top level, GitLab's older
/// form) gives every job that does not set them.
const GITLAB_DEFAULT_KEYS: &[&str] = &[
    "after_script",
    "artifacts",
    "before_script",
    "cache",
    "hooks",
    "id_tokens",
    "image",
    "interruptible",
    "retry",
    "services",
    "tags",
    "timeout",
];

/// How many templates `extends:` may chain, as GitLab allows.
const MAX_EXTENDS_DEPTH: usize = 11;

/// The jobs of the GitLab files of one pipeline (each file's path and
/// documents), as GitLab runs them: the files' top-level keys merged (a
/// later file's over an earlier one's, `.gitlab-ci.yml` last), each job's
/// `extends:` resolved (maps merged deeply, the job's own keys winning),
/// then the pipeline's `default:` keys and global `variables:` given to the
/// jobs that inherit them. Each job comes with the file that defines it
/// last; what cannot be resolved (a template no file defines, a loop) is a
/// problem of that file.
pub fn gitlab_pipeline(files: &[(String, Vec<Node>)]) -> GitlabPipeline {
    let mut order: Vec<&(String, Vec<Node>)> = files.iter().collect();
    order.sort_by_key(|(path, _)| path.ends_with(".gitlab-ci.yml"));
    let mut top: BTreeMap<String, Node> = BTreeMap::new();
    let mut origin: BTreeMap<String, String> = BTreeMap::new();
    let mut names: Vec<String> = Vec::new();
    for (path, docs) in order {
        for doc in docs {
            for (key, value) in doc.entries() {
                let Some(key) = key.as_str() else { continue };
                let merged = match top.get(key) {
                    Some(before) => deep_merge(before, value),
                    None => {
                        names.push(key.to_string());
                        value.clone()
                    }
                };
                top.insert(key.to_string(), merged);
                origin.insert(key.to_string(), path.clone());
            }
        }
    }
    let mut resolver = Extends {
        top: &top,
        done: HashMap::new(),
        visiting: BTreeSet::new(),
    };
    let mut jobs = Vec::new();
    let mut problems = Vec::new();
    for id in names {
        let node = &top[&id];
        if crate::gitlab::RESERVED.contains(&id.as_str())
            || id.starts_with('.')
            || !matches!(node, Node::Map { .. })
        {
            continue;
        }
        let path = origin[&id].clone();
        let resolved = match resolver.resolve(&id, 0) {
            Ok(resolved) => resolved,
            Err(message) => {
                problems.push((path, message));
                continue;
            }
        };
        let job = inherit_defaults(&resolved, &top);
        let mut commands = Vec::new();
        for k in ["before_script", "script", "after_script"] {
            if let Some(node) = job.get(k) {
                scalar_lines(node, &mut commands);
            }
        }
        jobs.push((
            path,
            Job {
                system: System::Gitlab,
                id: JobId::Job(id.clone()),
                label: None,
                line: node.pos().line,
                commands,
                fields: fields_except(&job, &["before_script", "script", "after_script"]),
            },
        ));
    }
    GitlabPipeline { jobs, problems }
}

/// The jobs of a GitLab pipeline, each with its file, and what could not
/// be resolved (file, message).
#[derive(Debug, Default)]
pub struct GitlabPipeline {
    pub jobs: Vec<(String, Job)>,
    pub problems: Vec<(String, String)>,
}

/// `extends:` resolution, each template resolved once.
struct Extends<'a> {
    top: &'a BTreeMap<String, Node>,
    done: HashMap<String, Result<Node, String>>,
    visiting: BTreeSet<String>,
}

impl Extends<'_> {
    fn resolve(&mut self, name: &str, depth: usize) -> Result<Node, String> {
        if let Some(done) = self.done.get(name) {
            return done.clone();
        }
        let result = self.resolve_uncached(name, depth);
        self.done.insert(name.to_string(), result.clone());
        result
    }

    fn resolve_uncached(&mut self, name: &str, depth: usize) -> Result<Node, String> {
        let Some(node) = self.top.get(name) else {
            return Err(format!(
                "`{name}` is extended but no GitLab file defines it"
            ));
        };
        let parents: Vec<&str> = match node.get("extends") {
            None => return Ok(node.clone()),
            Some(Node::Scalar { value, .. }) => vec![value.as_str()],
            Some(Node::Seq { items, .. }) => items.iter().filter_map(Node::as_str).collect(),
            Some(_) => return Err(format!("`{name}`: extends is neither a name nor a list")),
        };
        if depth >= MAX_EXTENDS_DEPTH || !self.visiting.insert(name.to_string()) {
            return Err(format!(
                "`{name}`: extends goes deeper than {MAX_EXTENDS_DEPTH} levels or in a loop"
            ));
        }
        let mut base: Option<Node> = None;
        for parent in parents {
            let resolved = self.resolve(parent, depth + 1);
            let resolved = match resolved {
                Ok(resolved) => resolved,
                Err(message) => {
                    self.visiting.remove(name);
                    return Err(message);
                }
            };
            base = Some(match base {
                Some(base) => deep_merge(&base, &resolved),
                None => resolved,
            });
        }
        self.visiting.remove(name);
        Ok(match base {
            Some(base) => deep_merge(&base, node),
            None => node.clone(),
        })
    }
}

/// `over` on `base` as GitLab merges: maps key by key, deeply; anything
/// else (lists too) replaced.
fn deep_merge(base: &Node, over: &Node) -> Node {
    match (base, over) {
        (Node::Map { entries: old, .. }, Node::Map { entries: new, pos }) => {
            let mut entries = old.clone();
            for (key, value) in new {
                let at = entries
                    .iter()
                    .position(|(k, _)| k.as_str().is_some() && k.as_str() == key.as_str());
                match at {
                    Some(at) => entries[at].1 = deep_merge(&entries[at].1, value),
                    None => entries.push((key.clone(), value.clone())),
                }
            }
            Node::Map { entries, pos: *pos }
        }
        _ => over.clone(),
    }
}

/// Does the job's `inherit: KIND:` (true, false, or a list of keys) let
/// `key` through?
fn inherits(job: &Node, kind: &str, key: &str) -> bool {
    match job.get("inherit").and_then(|i| i.get(kind)) {
        None => true,
        Some(Node::Seq { items, .. }) => items.iter().any(|i| i.as_str() == Some(key)),
        Some(flag) => flag.as_str() != Some("false"),
    }
}

/// The job with the pipeline's defaults it inherits and does not set.
fn inherit_defaults(job: &Node, top: &BTreeMap<String, Node>) -> Node {
    let Node::Map { entries, pos } = job else {
        return job.clone();
    };
    let mut entries = entries.clone();
    let has =
        |entries: &[(Node, Node)], key: &str| entries.iter().any(|(k, _)| k.as_str() == Some(key));
    for key in GITLAB_DEFAULT_KEYS {
        if has(&entries, key) || !inherits(job, "default", key) {
            continue;
        }
        let given = top
            .get("default")
            .and_then(|d| d.get(key))
            .or_else(|| top.get(*key));
        if let Some(value) = given {
            entries.push((scalar(key), value.clone()));
        }
    }
    if let Some(Node::Map {
        entries: globals, ..
    }) = top.get("variables")
    {
        let inherited: Vec<(Node, Node)> = globals
            .iter()
            .filter(|(k, _)| k.as_str().is_some_and(|k| inherits(job, "variables", k)))
            .cloned()
            .collect();
        if !inherited.is_empty() {
            let globals = Node::Map {
                entries: inherited,
                pos: *pos,
            };
            match entries
                .iter()
                .position(|(k, _)| k.as_str() == Some("variables"))
            {
                Some(at) => entries[at].1 = deep_merge(&globals, &entries[at].1),
                None => entries.push((scalar("variables"), globals)),
            }
        }
    }
    Node::Map { entries, pos: *pos }
}

fn scalar(text: &str) -> Node {
    Node::Scalar {
        value: text.to_string(),
        pos: crate::yaml::Pos::default(),
        style: crate::yaml::Style::Plain,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::yaml;

    #[test]
    fn buildkite_steps_by_key_then_label_with_commands_apart() {
        let text = "steps:\n- label: A\n  key: a\n  commands:\n  - echo 1\n  - |\n    echo 2\n    echo 3\n  env:\n    X: '1'\n  source_file_dependencies: [x/, y/]\n- wait\n- group: G\n  steps:\n  - label: B\n    command: run b\n";
        let jobs = jobs(System::Buildkite, &yaml::parse(text).unwrap());
        let ids: Vec<_> = jobs.iter().map(|j| j.id.to_string()).collect();
        assert_eq!(ids, ["key a", "label \"G\"", "label \"B\""]);
        assert_eq!(jobs[0].commands, ["echo 1", "echo 2", "echo 3"]);
        assert_eq!(jobs[0].fields["env.X"], Value::Scalar("1".into()));
        assert_eq!(
            jobs[0].fields["source_file_dependencies"],
            Value::List(vec!["x/".into(), "y/".into()])
        );
        assert!(!jobs[1].fields.contains_key("steps"));
    }

    #[test]
    fn github_and_gitlab_jobs_by_id() {
        let gh = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n    - uses: actions/checkout@v4\n    - run: |\n        pip install x\n        pytest\n";
        let jobs_gh = jobs(System::GithubActions, &yaml::parse(gh).unwrap());
        assert_eq!(jobs_gh[0].id, JobId::Job("test".into()));
        assert_eq!(jobs_gh[0].commands, ["pip install x", "pytest"]);
        assert_eq!(
            jobs_gh[0].fields["steps[0].uses"],
            Value::Scalar("actions/checkout@v4".into())
        );
        let gl =
            "stages: [test]\n.tpl:\n  image: x\nunit:\n  stage: test\n  script:\n  - make test\n";
        let jobs_gl = jobs(System::Gitlab, &yaml::parse(gl).unwrap());
        assert_eq!(jobs_gl.len(), 1);
        assert_eq!(jobs_gl[0].commands, ["make test"]);
    }
}
