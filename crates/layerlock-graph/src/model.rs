//! What a picture shows: nodes (stages, outside images, build targets)
//! and the edges between them, each node with the notes layerlock adds
//! (what it installs and how, whether CI builds it). Made by `graph.rs`,
//! drawn by `svg.rs` and `dot.rs`, written whole by `json.rs`.

use serde::Serialize;

/// A stage graph, ready to draw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Graph {
    /// What the picture is of (the file names given).
    pub title: String,
    pub nodes: Vec<Node>,
    /// Each (from, to, kind) once; `from` is what `to` is made from, so
    /// arrows run from a base towards what builds on it.
    pub edges: Vec<Edge>,
    /// What the picture cannot show, each in a sentence: a build whose
    /// stage is known only at run time, a Dockerfile a target names that
    /// cannot be read. Drawn under the title, never left out.
    pub unknown: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Node {
    /// Unique within the graph; stable from run to run.
    pub id: String,
    pub kind: NodeKind,
    /// The stage's name (or `stage 3` when it has none), the image's
    /// reference as written, or the build target's name.
    pub label: String,
    /// A second line under the label, e.g. `docker/Dockerfile:94` or an
    /// image's default from a build argument.
    pub detail: Option<String>,
    /// What layerlock knows about the node, worst first.
    pub notes: Vec<Note>,
    /// A CI job builds this stage or target.
    pub built: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum NodeKind {
    /// A stage of a Dockerfile.
    Stage,
    /// An image from outside (a registry reference, `scratch`).
    Image,
    /// A bake target or Compose service.
    Target,
}

/// One thing the picture says about a node.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Note {
    pub tone: Tone,
    /// A short line: `installs ci.lock.txt (layerlock install)`,
    /// `pip install (unpinned) :142`.
    pub text: String,
}

/// How a note is coloured; ordered best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tone {
    /// A lock installed through `layerlock install`, drift-guarded.
    Guarded,
    /// A hash-locked pip/uv install.
    HashLocked,
    /// Exact versions without hashes.
    Pinned,
    /// Known only at run time.
    RunTime,
    /// A project manager that may re-lock.
    MayResolve,
    /// Can resolve any version.
    Unpinned,
    /// Not an install: something else worth saying (built by CI, a
    /// build argument that picks the image).
    Info,
}

impl Tone {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Guarded => "guarded",
            Self::HashLocked => "hash-locked",
            Self::Pinned => "pinned",
            Self::RunTime => "run-time",
            Self::MayResolve => "may-resolve",
            Self::Unpinned => "unpinned",
            Self::Info => "info",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Edge {
    /// Index into `nodes`.
    pub from: usize,
    pub to: usize,
    pub kind: EdgeKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EdgeKind {
    /// `FROM <stage or image>`.
    From,
    /// `COPY --from=<stage or index or image>`.
    Copy,
    /// `RUN --mount=…,from=<stage or image>`.
    Mount,
    /// A bake target or Compose service builds this stage.
    Builds,
    /// A bake target `inherits` another.
    Inherits,
}

impl EdgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::From => "from",
            Self::Copy => "copy",
            Self::Mount => "mount",
            Self::Builds => "builds",
            Self::Inherits => "inherits",
        }
    }
}
