//! From Dockerfiles (and bake or Compose files) to the graph drawn: one
//! node per stage and outside image, one edge per (from, to, kind), and
//! the notes the marks give each stage.

use std::collections::{BTreeMap, BTreeSet};

use layerlock_ci::bake::BuildFile;
use layerlock_ci::dockerfile::{Source, Stages, UseKind};

use crate::annotate::{Mark, Marks};
use crate::model::{Edge, EdgeKind, Graph, Node, NodeKind, Note, Tone};

/// At most this many line numbers are listed in one note.
const LINES_SHOWN: usize = 4;

/// Nodes and edges as they are added, each once.
#[derive(Default)]
pub struct Builder {
    nodes: Vec<Node>,
    ids: BTreeMap<String, usize>,
    edges: BTreeSet<Edge>,
    /// Each Dockerfile drawn: its stages' node indices.
    files: BTreeMap<String, Vec<usize>>,
    unknown: BTreeSet<String>,
}

impl Builder {
    fn node(&mut self, node: Node) -> usize {
        if let Some(&at) = self.ids.get(&node.id) {
            return at;
        }
        let at = self.nodes.len();
        self.ids.insert(node.id.clone(), at);
        self.nodes.push(node);
        at
    }

    fn edge(&mut self, from: usize, to: usize, kind: EdgeKind) {
        self.edges.insert(Edge { from, to, kind });
    }

    /// The node of a source a stage of `file` names.
    fn source(&mut self, file: &str, source: &Source) -> usize {
        match source {
            Source::Stage(index) => self.files[file][*index],
            Source::Image(image) => {
                let detail = match (&image.default, image.args.is_empty()) {
                    (_, true) => None,
                    (Some(default), false) => Some(format!("default {default}")),
                    (None, false) => Some("set at build time".to_string()),
                };
                self.node(Node {
                    id: format!("image:{}", image.written),
                    kind: NodeKind::Image,
                    label: image.written.clone(),
                    detail,
                    notes: Vec::new(),
                    built: false,
                })
            }
        }
    }

    /// Every stage of one Dockerfile (`file` as shown), with the notes
    /// its lines' marks give.
    pub fn dockerfile(&mut self, file: &str, stages: &Stages, marks: &Marks) {
        if self.files.contains_key(file) {
            return;
        }
        self.files.insert(file.to_string(), Vec::new());
        let none = BTreeSet::new();
        let installs = marks.installs.get(file).unwrap_or(&none);
        let last = stages.stages.len().saturating_sub(1);
        for (at, raw) in &marks.unknown_builds {
            self.unknown.insert(format!(
                "CI builds a Dockerfile known only at run time ({at}: `{raw}`); it may be {file}"
            ));
        }
        for (_, target) in marks.builds.iter().filter(|(f, _)| f == file) {
            let Some(target) = target else { continue };
            let named = stages.stages.iter().any(|s| {
                s.name
                    .as_deref()
                    .is_some_and(|n| n.eq_ignore_ascii_case(target))
            });
            if !named {
                self.unknown.insert(if target.contains('$') {
                    format!("CI builds {file} with target `{target}`, known only at run time")
                } else {
                    format!("CI builds {file} with target `{target}`, which names no stage of it")
                });
            }
        }
        for stage in &stages.stages {
            let base = self.source(file, &stage.base);
            let label = stage.label();
            let built = marks.builds.iter().any(|(f, target)| {
                f == file
                    && match target {
                        Some(t) => stage
                            .name
                            .as_deref()
                            .is_some_and(|n| n.eq_ignore_ascii_case(t)),
                        None => stage.index == last,
                    }
            });
            let inside: Vec<&Mark> = installs
                .iter()
                .filter(|m| (stage.first_line..=stage.last_line).contains(&m.line))
                .collect();
            let at = self.node(Node {
                id: format!("{file}#{label}"),
                kind: NodeKind::Stage,
                label,
                detail: Some(format!("{file}:{}", stage.first_line)),
                notes: notes(&inside),
                built,
            });
            if let Some(own) = self.files.get_mut(file) {
                own.push(at);
            }
            self.edge(base, at, EdgeKind::From);
            for used in &stage.uses {
                let from = self.source(file, &used.source);
                let kind = match used.kind {
                    UseKind::Copy => EdgeKind::Copy,
                    UseKind::Mount => EdgeKind::Mount,
                };
                self.edge(from, at, kind);
            }
        }
    }

    /// The targets of a bake or Compose file (`file` as shown): each a
    /// node, built from its Dockerfile's stage (drawn through
    /// `dockerfile`, which maps a target to the Dockerfile it names, as
    /// shown, when that could be read).
    pub fn targets(
        &mut self,
        file: &str,
        build: &BuildFile,
        dockerfile: &dyn Fn(&layerlock_ci::bake::Target) -> Option<String>,
        built: &BTreeSet<String>,
    ) {
        let mut at = BTreeMap::new();
        for target in &build.targets {
            let node = self.node(Node {
                id: format!("{file}@{}", target.name),
                kind: NodeKind::Target,
                label: target.name.clone(),
                detail: Some(format!("{file}:{}", target.line)),
                notes: Vec::new(),
                built: built.contains(&target.name),
            });
            at.insert(target.name.clone(), node);
        }
        for target in &build.targets {
            let node = at[&target.name];
            for parent in &target.inherits {
                if let Some(&from) = at.get(parent) {
                    self.edge(from, node, EdgeKind::Inherits);
                }
            }
            let Some(shown) = dockerfile(target) else {
                continue;
            };
            let Some(stages) = self.files.get(&shown) else {
                self.unknown.insert(format!(
                    "`{}` in {file} builds {shown}, which could not be read",
                    target.name
                ));
                continue;
            };
            let stage = match &target.stage {
                Some(name) => stages
                    .iter()
                    .copied()
                    .find(|&i| self.nodes[i].label.eq_ignore_ascii_case(name)),
                None => stages.last().copied(),
            };
            match stage {
                Some(stage) => self.edge(stage, node, EdgeKind::Builds),
                None => {
                    self.unknown.insert(format!(
                        "`{}` in {file} builds stage `{}`, which {shown} does not have",
                        target.name,
                        target.stage.as_deref().unwrap_or_default()
                    ));
                }
            }
        }
    }

    pub fn finish(self, title: String) -> Graph {
        Graph {
            title,
            nodes: self.nodes,
            edges: self.edges.into_iter().collect(),
            unknown: self.unknown.into_iter().collect(),
        }
    }
}

/// A stage's notes from the marks on its lines: a lock installed under
/// the drift guard by itself, other installs one line per (class, tool)
/// with the lines they are on, worst first.
fn notes(marks: &[&Mark]) -> Vec<Note> {
    // (class, tool) → Dockerfile line → the scripts the line reaches it in.
    type Lines = BTreeMap<usize, BTreeSet<String>>;
    let mut by_line: BTreeMap<(Tone, String), Lines> = BTreeMap::new();
    for mark in marks {
        let scripts = by_line
            .entry((mark.tone, mark.what.clone()))
            .or_default()
            .entry(mark.line)
            .or_default();
        if let Some(inside) = &mark.inside {
            let file = inside.rsplit_once(':').map_or(inside.as_str(), |(f, _)| f);
            scripts.insert(file.rsplit('/').next().unwrap_or(file).to_string());
        }
    }
    let grouped = by_line.into_iter().map(|(key, lines)| {
        let shown: Vec<String> = lines
            .into_iter()
            .map(|(line, scripts)| match scripts.len() {
                0 => format!(":{line}"),
                _ => format!(
                    ":{line} in {}",
                    scripts.into_iter().collect::<Vec<_>>().join(", ")
                ),
            })
            .collect();
        (key, shown)
    });
    let mut out: Vec<Note> = grouped
        .map(|((tone, what), lines)| {
            let mut shown: Vec<&str> = lines.iter().take(LINES_SHOWN).map(String::as_str).collect();
            let more = lines.len().saturating_sub(LINES_SHOWN);
            let extra = format!("+{more}");
            if more > 0 {
                shown.push(&extra);
            }
            let text = match tone {
                Tone::Guarded => format!("{what}, drift-guarded {}", shown.join(" ")),
                _ => format!("{} {what} {}", tone.as_str(), shown.join(" ")),
            };
            Note { tone, text }
        })
        .collect();
    // Worst first: the unpinned installs are what a reviewer looks for.
    out.sort_by(|a, b| b.tone.cmp(&a.tone).then(a.text.cmp(&b.text)));
    out
}
