//! Which CI system a YAML file belongs to, told once for every check: from
//! where it is (`.buildkite/`, `.github/workflows/`, `.gitlab-ci.yml`) and,
//! elsewhere, from its shape.

use crate::script::Script;
use crate::yaml::Node;
use crate::{buildkite, github, gitlab};

/// A CI system layerlock reads; serialized by its stable kebab-case name
/// (`buildkite`, `github-actions`, `gitlab`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum System {
    Buildkite,
    GithubActions,
    Gitlab,
}

impl System {
    /// The system a path's location says, before reading it.
    pub fn from_path(rel: &str) -> Option<Self> {
        let rel = rel.replace('\\', "/");
        let name = rel.rsplit('/').next().unwrap_or(&rel);
        if name == ".gitlab-ci.yml"
            || name.ends_with("gitlab-ci.yaml")
            || name.ends_with("gitlab-ci.yml")
            || rel.starts_with(".gitlab/")
            || rel.contains("/.gitlab/")
        {
            return Some(Self::Gitlab);
        }
        if rel.starts_with(".github/workflows/") || rel.contains("/.github/workflows/") {
            return Some(Self::GithubActions);
        }
        if rel.starts_with(".buildkite/") || rel.contains("/.buildkite/") {
            return Some(Self::Buildkite);
        }
        None
    }

    /// Whether a YAML file can be a CI file at all, before parsing it: in a
    /// CI location, or with a top-level key the shapes [`System::detect`]
    /// knows (`steps`, `jobs`, `runs`). Trees keep megabytes of other YAML
    /// (test cassettes, data) that need not be parsed.
    pub fn may_be_ci(rel: &str, text: &[u8]) -> bool {
        if Self::from_path(rel).is_some() {
            return true;
        }
        text.split(|b| *b == b'\n').any(|line| {
            let line = line.strip_prefix(b"- ").unwrap_or(line);
            [&b"steps"[..], b"jobs", b"runs"].iter().any(|key| {
                let unquoted = line.strip_prefix(*key);
                let quoted = line
                    .strip_prefix(b"\"")
                    .or_else(|| line.strip_prefix(b"'"))
                    .and_then(|l| l.strip_prefix(*key))
                    .and_then(|l| l.strip_prefix(b"\"").or_else(|| l.strip_prefix(b"'")));
                unquoted
                    .or(quoted)
                    .is_some_and(|rest| rest.trim_ascii_start().starts_with(b":"))
            }) || line.starts_with(b"{")
        })
    }

    /// The system of a parsed YAML file: its location, else its shape
    /// (composite actions and workflows kept elsewhere, pipelines uploaded
    /// from other folders). `None`: not a CI file.
    pub fn detect(rel: &str, docs: &[Node]) -> Option<Self> {
        match Self::from_path(rel) {
            Some(Self::Buildkite) => {
                // Under `.buildkite/` a bare list of steps is a pipeline too;
                // other YAML there (configs, templates' data) is not.
                if docs
                    .iter()
                    .any(|d| buildkite::looks_like_pipeline(d) || matches!(d, Node::Seq { .. }))
                {
                    return Some(Self::Buildkite);
                }
                return None;
            }
            Some(other) => return Some(other),
            None => {}
        }
        if docs.iter().any(github::looks_like_action)
            || docs
                .iter()
                .any(|d| github::looks_like_workflow(d) && d.get("on").is_some())
        {
            return Some(Self::GithubActions);
        }
        if docs.iter().any(buildkite::looks_like_pipeline) {
            return Some(Self::Buildkite);
        }
        None
    }

    /// Every script the file's jobs run.
    pub fn scripts(self, docs: &[Node]) -> Vec<Script> {
        match self {
            Self::Buildkite => buildkite::scripts_in(docs),
            Self::GithubActions => github::scripts_in(docs),
            Self::Gitlab => gitlab::scripts_in(docs),
        }
    }
}
