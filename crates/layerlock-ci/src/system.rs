//! Which CI system a file belongs to, told once for every check: from
//! where it is (`.buildkite/`, `.github/workflows/`, `.gitlab-ci.yml`,
//! `.circleci/config.yml`, `azure-pipelines.yml`, `appveyor.yml`, a
//! `Jenkinsfile`) and, elsewhere, from its shape.

use crate::script::{Note, Script};
use crate::yaml::Node;
use crate::{appveyor, azure, buildkite, circleci, github, gitlab, jjb};

/// A CI system layerlock reads; serialized by its stable kebab-case name
/// (`buildkite`, `github-actions`, `gitlab`, `circleci`, `azure-pipelines`,
/// `appveyor`, `jenkins`). Jenkins is a Jenkinsfile (Groovy, read by
/// [`crate::jenkins::scripts`]) or a Jenkins Job Builder YAML file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum System {
    Buildkite,
    GithubActions,
    Gitlab,
    #[serde(rename = "circleci")]
    CircleCi,
    AzurePipelines,
    #[serde(rename = "appveyor")]
    AppVeyor,
    Jenkins,
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
        let lower = name.to_ascii_lowercase();
        let yaml = lower.ends_with(".yml") || lower.ends_with(".yaml");
        if rel == ".circleci/config.yml" || rel == ".circleci/config.yaml" {
            return Some(Self::CircleCi);
        }
        let in_dir = |dir: &str| rel.strip_prefix(dir).is_some_and(|r| !r.contains('/'));
        if yaml
            && (lower.starts_with("azure-pipelines")
                || in_dir(".azure-pipelines/")
                || in_dir(".azure/"))
        {
            return Some(Self::AzurePipelines);
        }
        if rel == "appveyor.yml" || rel == ".appveyor.yml" {
            return Some(Self::AppVeyor);
        }
        if is_jenkinsfile(name) {
            return Some(Self::Jenkins);
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
            // Jenkins Job Builder's top-level items.
            if [&b"job:"[..], b"job-template:"]
                .iter()
                .any(|item| line.starts_with(item))
            {
                return true;
            }
            [&b"steps"[..], b"jobs", b"runs", b"stages"]
                .iter()
                .any(|key| {
                    let unquoted = line.strip_prefix(*key);
                    let quoted = line
                        .strip_prefix(b"\"")
                        .or_else(|| line.strip_prefix(b"'"))
                        .and_then(|l| l.strip_prefix(*key))
                        .and_then(|l| l.strip_prefix(b"\"").or_else(|| l.strip_prefix(b"'")));
                    unquoted
                        .or(quoted)
                        .is_some_and(|rest| rest.trim_ascii_start().starts_with(b":"))
                })
                || line.starts_with(b"{")
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
        if docs.iter().any(azure::looks_like_pipeline) {
            return Some(Self::AzurePipelines);
        }
        if docs.iter().any(buildkite::looks_like_pipeline) {
            return Some(Self::Buildkite);
        }
        if docs.iter().any(jjb::looks_like_jobs) {
            return Some(Self::Jenkins);
        }
        None
    }

    /// Every script the file's jobs run.
    pub fn scripts(self, docs: &[Node]) -> Vec<Script> {
        match self {
            Self::Buildkite => buildkite::scripts_in(docs),
            Self::GithubActions => github::scripts_in(docs),
            Self::Gitlab => gitlab::scripts_in(docs),
            Self::CircleCi => circleci::scripts_in(docs),
            Self::AzurePipelines => azure::scripts_in(docs),
            Self::AppVeyor => appveyor::scripts_in(docs),
            Self::Jenkins => jjb::scripts_in(docs),
        }
    }

    /// What the file names whose commands are elsewhere (CircleCI orbs,
    /// Azure templates of other repositories), at their lines.
    pub fn notes(self, docs: &[Node]) -> Vec<Note> {
        match self {
            Self::CircleCi => circleci::read(docs).notes,
            Self::AzurePipelines => azure::read(docs, None).notes,
            _ => Vec::new(),
        }
    }
}

/// `Jenkinsfile`, `Jenkinsfile.gpu`, any case.
pub fn is_jenkinsfile(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == "jenkinsfile" || lower.starts_with("jenkinsfile.")
}
