//! A piece of shell that CI runs, where it came from, and how a position
//! inside it maps back to the file.

use std::collections::BTreeMap;

use crate::yaml::{Pos, Style};

/// When the script runs: in a CI job, or while building an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    JobTime,
    ImageBuild,
}

/// How the script's text sits in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Line k of the text is file line `start.line + k`, columns shifted by
    /// `start.column - 1` (YAML literal blocks, shell files, heredocs).
    Lines { start: Pos },
    /// Folded or quoted text whose lines do not map one to one: everything
    /// is reported at `start`, plus the column offset on its first line.
    Folded { start: Pos },
}

impl Layout {
    pub fn for_yaml(pos: Pos, style: Style) -> Self {
        match style {
            Style::Literal => Self::Lines { start: pos },
            // A multi-line plain scalar is folded into one line.
            Style::Plain => Self::Folded { start: pos },
            Style::SingleQuoted | Style::DoubleQuoted => Self::Folded {
                start: Pos {
                    line: pos.line,
                    column: pos.column + 1,
                },
            },
            Style::Folded => Self::Folded { start: pos },
        }
    }

    /// File position of (line, column), both 1-based within the script.
    pub fn map(&self, line: usize, column: usize) -> Pos {
        match *self {
            // Every line of a block scalar is indented like its first.
            Self::Lines { start } => Pos {
                line: start.line + line.saturating_sub(1),
                column: start.column + column.saturating_sub(1),
            },
            Self::Folded { start } => Pos {
                line: start.line,
                column: if line <= 1 {
                    start.column + column.saturating_sub(1)
                } else {
                    start.column
                },
            },
        }
    }
}

/// One script a job runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    pub text: String,
    pub layout: Layout,
    /// Buildkite step key (or label), workflow job id, GitLab job name;
    /// `None` for a Dockerfile or a standalone shell file.
    pub job: Option<String>,
    pub phase: Phase,
    /// Literal environment values the job sets (for `$VAR` in commands).
    pub env: BTreeMap<String, String>,
    /// The directory the job runs in, as written (before any path map).
    pub working_dir: Option<String>,
    /// Image paths that hold files of the build context (Dockerfiles).
    pub mounts: Vec<crate::dockerfile::Mount>,
}

/// A CI file that could be parsed only in part, or not at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl From<crate::yaml::YamlError> for ModelError {
    fn from(e: crate::yaml::YamlError) -> Self {
        Self {
            line: e.line,
            column: e.column,
            message: e.message,
        }
    }
}

/// Quote one argv word for a shell command line, when it needs it.
pub(crate) fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}
