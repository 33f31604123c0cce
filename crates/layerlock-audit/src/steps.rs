//! Step keys: every Buildkite step that runs or gates something (command,
//! trigger, block, input) has a key, in Buildkite's characters, unique across
//! every pipeline file; every `depends_on` names a key that exists; the
//! dependency graph has no cycle. Keyless steps get keys derived from their
//! labels, so retitling one breaks retries, `depends_on` and history.

use std::collections::{BTreeMap, BTreeSet};

use layerlock_ci::yaml::{self, Node};
use serde::Serialize;

pub(crate) mod cfg;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepProblem {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub key: Option<String>,
    pub message: String,
}

/// What a Buildkite step does, as its YAML says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepKind {
    /// `command`, `commands`, `plugins`, or only a `label`.
    Command,
    Group,
    Trigger,
    Block,
    Input,
    /// `wait` or `waiter`, as a string or a key.
    Wait,
}

impl StepKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Command => "command",
            Self::Group => "group",
            Self::Trigger => "trigger",
            Self::Block => "block",
            Self::Input => "input",
            Self::Wait => "wait",
        }
    }
}

impl std::fmt::Display for StepKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepInfo {
    pub path: String,
    pub line: usize,
    pub key: Option<String>,
    pub label: Option<String>,
    pub kind: StepKind,
    pub depends_on: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct StepsReport {
    pub version: u32,
    pub problems: Vec<StepProblem>,
    pub steps: Vec<StepInfo>,
}

/// Buildkite's rule for keys: letters, digits, `_`, `-` and `:`, and not
/// a UUID (those are step ids).
fn valid_key(key: &str) -> bool {
    let uuid = key.len() == 36
        && key.chars().enumerate().all(|(i, c)| {
            if [8, 13, 18, 23].contains(&i) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        });
    !key.is_empty()
        && !uuid
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == ':')
}

fn kind_of(step: &Node) -> Option<StepKind> {
    if let Some(s) = step.as_str() {
        return (s == "wait" || s == "waiter").then_some(StepKind::Wait);
    }
    for (key, kind) in [
        ("group", StepKind::Group),
        ("trigger", StepKind::Trigger),
        ("block", StepKind::Block),
        ("input", StepKind::Input),
        ("wait", StepKind::Wait),
        ("waiter", StepKind::Wait),
    ] {
        if step.get(key).is_some() {
            return Some(kind);
        }
    }
    if step.get("command").is_some()
        || step.get("commands").is_some()
        || step.get("plugins").is_some()
        || step.get("label").is_some()
    {
        return Some(StepKind::Command);
    }
    None
}

fn depends_on(step: &Node) -> Vec<(String, yaml::Pos)> {
    let Some(node) = step.get("depends_on") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut one = |n: &Node| match n {
        Node::Scalar { value, pos, .. } if !value.is_empty() && value != "~" && value != "null" => {
            out.push((value.clone(), *pos));
        }
        Node::Map { .. } => {
            if let Some(Node::Scalar { value, pos, .. }) = n.get("step") {
                out.push((value.clone(), *pos));
            }
        }
        _ => {}
    };
    match node {
        Node::Seq { items, .. } => items.iter().for_each(&mut one),
        other => one(other),
    }
    out
}

struct Walk<'a> {
    path: &'a str,
    no_groups: bool,
    report: &'a mut StepsReport,
    keys: &'a mut BTreeMap<String, String>,
    edges: &'a mut Vec<(String, String, String)>,
    pending: &'a mut Vec<(String, yaml::Pos, String)>,
}

impl Walk<'_> {
    fn problem(&mut self, pos: yaml::Pos, key: Option<&str>, message: String) {
        self.report.problems.push(StepProblem {
            path: self.path.to_string(),
            line: pos.line,
            column: pos.column,
            key: key.map(str::to_string),
            message,
        });
    }

    fn step(&mut self, step: &Node, nested: bool) {
        let Some(kind) = kind_of(step) else { return };
        let pos = step.pos();
        if nested && self.no_groups {
            self.problem(
                pos,
                None,
                "a step nested in a group; this pipeline's generator does not support groups"
                    .to_string(),
            );
        }
        let key_node = step
            .get("key")
            .or_else(|| step.get("identifier"))
            .or_else(|| step.get("id"));
        let key = key_node.and_then(Node::as_str).map(str::to_string);
        let label = ["label", "name", "group", "block", "input", "trigger"]
            .iter()
            .find_map(|k| step.get(k).and_then(Node::as_str))
            .map(str::to_string);
        let deps = depends_on(step);
        match (&key, kind) {
            (_, StepKind::Wait) => {}
            (None, StepKind::Group) => {}
            (None, _) => self.problem(
                pos,
                None,
                format!(
                    "{kind} step {}has no key; Buildkite derives one from its label, so retitling it breaks retries, depends_on and history",
                    label.as_ref().map(|l| format!("`{l}` ")).unwrap_or_default()
                ),
            ),
            (Some(k), _) if !valid_key(k) => {
                let at = key_node.map_or(pos, Node::pos);
                let why = if k.len() == 36 && k.matches('-').count() == 4 {
                    "looks like a UUID, which Buildkite reserves for step ids"
                } else {
                    "has characters Buildkite does not allow (letters, digits, _, - and : only)"
                };
                self.problem(at, Some(k), format!("key `{k}` {why}"));
            }
            (Some(_), _) => {}
        }
        if let Some(k) = &key {
            let at = key_node.map_or(pos, Node::pos);
            let here = format!("{}:{}", self.path, at.line);
            if let Some(first) = self.keys.get(k) {
                let first = first.clone();
                // Two files checked as one pipeline may be two pipelines.
                let other_file = first
                    .rsplit_once(':')
                    .is_some_and(|(file, _)| file != &*self.path);
                let hint = if other_file {
                    "; if the two files are separate pipelines, name each in `[steps] pipelines` (or check them apart: `layerlock steps FILE`)"
                } else {
                    ""
                };
                self.problem(
                    at,
                    Some(k),
                    format!("key `{k}` is already used at {first}{hint}"),
                );
            } else {
                self.keys.insert(k.clone(), here);
            }
            for (dep, dep_pos) in &deps {
                self.edges.push((
                    k.clone(),
                    dep.clone(),
                    format!("{}:{}", self.path, dep_pos.line),
                ));
            }
        }
        for (dep, dep_pos) in &deps {
            self.pending
                .push((dep.clone(), *dep_pos, self.path.to_string()));
        }
        self.report.steps.push(StepInfo {
            path: self.path.to_string(),
            line: pos.line,
            key: key.clone(),
            label,
            kind,
            depends_on: deps.iter().map(|(d, _)| d.clone()).collect(),
        });
        if let Some(inner) = step.get("steps") {
            for s in inner.items() {
                self.step(s, true);
            }
        }
    }
}

/// Check every pipeline in `files` (path relative to the root, text);
/// `external` keys are defined by pipelines not given.
pub fn check_steps(
    files: &[(String, String)],
    external: &[String],
    no_groups: bool,
) -> StepsReport {
    let mut report = StepsReport {
        version: 1,
        ..StepsReport::default()
    };
    let mut keys: BTreeMap<String, String> = BTreeMap::new();
    let mut edges = Vec::new();
    let mut pending = Vec::new();
    for (path, text) in files {
        let docs = match yaml::parse(text) {
            Ok(d) => d,
            Err(e) => {
                report.problems.push(StepProblem {
                    path: path.clone(),
                    line: e.line,
                    column: e.column,
                    key: None,
                    message: format!("cannot parse YAML: {}", e.message),
                });
                continue;
            }
        };
        let mut walk = Walk {
            path,
            no_groups,
            report: &mut report,
            keys: &mut keys,
            edges: &mut edges,
            pending: &mut pending,
        };
        for doc in &docs {
            let steps: &[Node] = match doc {
                Node::Seq { items, .. } => items,
                _ => doc.get("steps").map(Node::items).unwrap_or_default(),
            };
            for step in steps {
                walk.step(step, false);
            }
        }
    }
    report_unknown_dependencies(&mut report, pending, &keys, external);
    let cycles = find_cycles(&edges);
    report_cycles(&mut report, cycles);
    report
        .problems
        .sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
    report
}

/// Reports each `depends_on` in `pending` (name, where, file) that names
/// no key of the pipelines read and none of the `external` ones.
fn report_unknown_dependencies(
    report: &mut StepsReport,
    pending: Vec<(String, yaml::Pos, String)>,
    keys: &BTreeMap<String, String>,
    external: &[String],
) {
    let external: BTreeSet<&str> = external.iter().map(String::as_str).collect();
    for (dep, pos, path) in pending {
        if !keys.contains_key(&dep) && !external.contains(dep.as_str()) {
            report.problems.push(StepProblem {
                path,
                line: pos.line,
                column: pos.column,
                key: Some(dep.clone()),
                message: format!(
                    "depends_on `{dep}` names no step key (declare keys of other pipelines under [steps] external-keys)"
                ),
            });
        }
    }
}

/// Every cycle among the depends_on `edges` (from, to, `path:line` of the
/// dependency), as the keys around it (the first repeated at the end) and
/// where the edge that closes it is written. A cycle may be found more than
/// once, starting from different keys.
fn find_cycles(edges: &[(String, String, String)]) -> Vec<(Vec<String>, String)> {
    let mut graph: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for (from, to, at) in edges {
        graph
            .entry(from.as_str())
            .or_default()
            .push((to.as_str(), at.as_str()));
    }
    // Depth-first search over depends_on edges, with an explicit stack (a
    // chain of 40,000 steps must not overflow the call stack).
    let mut state: BTreeMap<&str, u8> = BTreeMap::new();
    let mut cycles: Vec<(Vec<String>, String)> = Vec::new();
    let nodes: Vec<&str> = graph.keys().copied().collect();
    for start in nodes {
        if state.contains_key(start) {
            continue;
        }
        // (node, index of the next edge to follow)
        let mut stack: Vec<(&str, usize)> = vec![(start, 0)];
        state.insert(start, 1);
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            let edges = graph.get(node).map(Vec::as_slice).unwrap_or_default();
            let Some(&(to, at)) = edges.get(*next) else {
                state.insert(node, 2);
                stack.pop();
                continue;
            };
            *next += 1;
            match state.get(to).copied() {
                Some(1) => {
                    let from = stack.iter().position(|(n, _)| *n == to).unwrap_or(0);
                    let mut cycle: Vec<String> =
                        stack[from..].iter().map(|(n, _)| n.to_string()).collect();
                    cycle.push(to.to_string());
                    cycles.push((cycle, at.to_string()));
                }
                None => {
                    state.insert(to, 1);
                    stack.push((to, 0));
                }
                _ => {}
            }
        }
    }
    cycles
}

/// Reports each cycle once, whichever key it was found from, at the edge
/// that closed it when first found.
fn report_cycles(report: &mut StepsReport, cycles: Vec<(Vec<String>, String)>) {
    let mut reported: BTreeSet<Vec<String>> = BTreeSet::new();
    for (cycle, at) in cycles {
        let mut canonical = cycle[..cycle.len() - 1].to_vec();
        canonical.sort();
        if !reported.insert(canonical) {
            continue;
        }
        let (path, line) = at.rsplit_once(':').unwrap_or((&at, "0"));
        report.problems.push(StepProblem {
            path: path.to_string(),
            line: line.parse().unwrap_or(1),
            column: 1,
            key: cycle.first().cloned(),
            message: format!("depends_on cycle: {}", cycle.join(" -> ")),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_uniqueness_dependencies_and_cycles() {
        let a = "steps:\n  - label: no key\n    command: x\n  - key: a\n    command: y\n    depends_on: b\n  - key: \"bad key!\"\n    command: z\n  - wait\n  - group: g\n    steps:\n      - key: b\n        command: w\n        depends_on: [a]\n";
        let b = "steps:\n  - key: a\n    command: dup\n  - key: c\n    command: q\n    depends_on:\n      - step: missing\n      - ext\n";
        let report = check_steps(
            &[("a.yml".into(), a.into()), ("b.yml".into(), b.into())],
            &["ext".to_string()],
            true,
        );
        let messages: Vec<String> = report
            .problems
            .iter()
            .map(|p| format!("{}:{} {}", p.path, p.line, p.message))
            .collect();
        insta::assert_snapshot!(messages.join("\n"));
    }
}
