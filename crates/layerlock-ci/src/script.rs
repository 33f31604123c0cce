//! A piece of shell that CI runs, where it came from, and how a position
//! inside it maps back to the file.

use std::collections::BTreeMap;
use std::rc::Rc;

use crate::yaml::{Pos, Style};

/// When the script runs: in a CI job, or while building an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    JobTime,
    ImageBuild,
}

/// How the script's text sits in its file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Line k of the text is file line `start.line + k`, columns shifted by
    /// `start.column - 1` (YAML literal blocks, shell files, heredocs).
    Lines { start: Pos },
    /// Folded or quoted text whose lines do not map one to one: everything
    /// is reported at `start`, plus the column offset on its first line.
    Folded { start: Pos },
    /// Folded text whose pieces were found back in the file (see
    /// [`Layout::refine`]): each piece of the text maps to where it is.
    Pieces(Rc<PieceMap>),
}

/// A file's lines, split once for every scalar of it that is refined.
#[derive(Debug, Clone)]
pub struct SourceLines<'a>(Vec<&'a str>);

impl<'a> SourceLines<'a> {
    pub fn new(text: &'a str) -> Self {
        Self(text.lines().collect())
    }
}

/// Where each piece of a folded text is in its file.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct PieceMap {
    /// Char offset of each line of the text.
    line_starts: Vec<usize>,
    /// (char offset in the text, file position), by offset.
    pieces: Vec<(usize, Pos)>,
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

    /// For folded YAML text (`>-` blocks, multi-line plain or quoted
    /// scalars): find each source line's content back in `text` so that a
    /// command on the third source line is reported there, not at the
    /// scalar's start. Anything else, or text that cannot be matched, keeps
    /// its layout.
    pub fn refine(self, text: &str, source: &SourceLines<'_>) -> Self {
        let Self::Folded { start } = self else {
            return self;
        };
        // Text on one line of the file (most commands) maps as it is.
        if !text.contains('\n')
            && source
                .0
                .get(start.line.saturating_sub(1))
                .and_then(|line| line.get(start.column.saturating_sub(1)..))
                .is_some_and(|rest| rest.starts_with(text))
        {
            return self;
        }
        let chars: Vec<char> = text.chars().collect();
        let mut pieces = Vec::new();
        let mut cursor = 0usize;
        // From the scalar's own line: a file of 200,000 steps has as many
        // scalars, and walking to each from the top was quadratic.
        let first = start.line.saturating_sub(1);
        for (k, line) in source.0.iter().enumerate().skip(first.min(source.0.len())) {
            if cursor >= chars.len() {
                break;
            }
            let first = k + 1 == start.line;
            let skip = if first {
                start.column.saturating_sub(1)
            } else {
                0
            };
            let segment: String = line.chars().skip(skip).collect();
            let indent = segment.chars().take_while(|c| c.is_whitespace()).count();
            let content = segment.trim().trim_end_matches(['"', '\'']);
            if content.is_empty() {
                continue;
            }
            let wanted: Vec<char> = content.chars().collect();
            // The next piece starts where the last ended, past the space or
            // newline folding put between them.
            let found = (cursor..=(cursor + 2).min(chars.len()))
                .find(|&at| chars[at..].starts_with(&wanted));
            let Some(at) = found else {
                if first {
                    continue;
                }
                break;
            };
            pieces.push((
                at,
                Pos {
                    line: k + 1,
                    column: skip + indent + 1,
                },
            ));
            cursor = at + wanted.len();
        }
        if pieces.len() < 2 {
            return self;
        }
        let mut line_starts = vec![0];
        for (i, c) in chars.iter().enumerate() {
            if *c == '\n' {
                line_starts.push(i + 1);
            }
        }
        Self::Pieces(Rc::new(PieceMap {
            line_starts,
            pieces,
        }))
    }

    /// File position of (line, column), both 1-based within the script.
    pub fn map(&self, line: usize, column: usize) -> Pos {
        match self {
            Self::Pieces(map) => {
                let offset = map
                    .line_starts
                    .get(line.saturating_sub(1))
                    .copied()
                    .unwrap_or(0)
                    + column.saturating_sub(1);
                let index = map.pieces.partition_point(|(at, _)| *at <= offset);
                let Some(&(at, pos)) = map.pieces.get(index.saturating_sub(1)) else {
                    return Pos { line: 1, column: 1 };
                };
                Pos {
                    line: pos.line,
                    column: pos.column + offset.saturating_sub(at),
                }
            }
            // Every line of a block scalar is indented like its first.
            &Self::Lines { start } => Pos {
                line: start.line + line.saturating_sub(1),
                column: start.column + column.saturating_sub(1),
            },
            &Self::Folded { start } => Pos {
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
    /// The shell that runs the text, when the file says (`shell: sh` in a
    /// workflow, a Dockerfile's `SHELL`, or `/bin/sh` for its `RUN`); it
    /// decides part of the grammar.
    pub shell: Option<String>,
}

impl Script {
    /// A script run at job time of which nothing else is known: no job,
    /// environment, working directory, mounts or shell of its own (a shell
    /// file, a recipe's lines, a step an action stands for).
    pub fn job_time(text: String, layout: Layout) -> Self {
        Self {
            text,
            layout,
            job: None,
            phase: Phase::JobTime,
            env: BTreeMap::new(),
            working_dir: None,
            mounts: Vec::new(),
            shell: None,
        }
    }
}

/// A part of a CI file whose commands are not in the file or the
/// repository (a CircleCI orb, an Azure template of another repository):
/// where, the text that names it, and why it was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub line: usize,
    pub text: String,
    pub why: String,
}

/// A text spread over the lines of its file from `line`, its first
/// character at `column`: padded with spaces to that column, so that each
/// line of it maps to the file one to one ([`Layout::Lines`] from column
/// 1).
pub(crate) fn at_columns(text: &str, line: usize, column: usize) -> (String, Layout) {
    let mut padded = " ".repeat(column.saturating_sub(1));
    padded.push_str(text);
    (
        padded,
        Layout::Lines {
            start: Pos { line, column: 1 },
        },
    )
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

pub(crate) use layerlock_shell::quote;
