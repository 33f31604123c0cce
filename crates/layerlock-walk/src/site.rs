//! What the walker hands to every check: one command's words as the checks
//! see them, where it is, and how to read the files it names; and, apart
//! from it, each path that reaches the command.

use std::rc::Rc;

use layerlock_ci::Phase;

use crate::via::Via;

/// One argv word as the audit sees it: its value if static (after literal
/// env expansion), and its text as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Arg {
    pub value: Option<String>,
    pub raw: String,
    /// Where the word is written (file line and column), when known.
    pub at: Option<(usize, usize)>,
    /// Where it is in the text of the script that holds it (line, column),
    /// for mapping a shell string it carries back through that script.
    pub script_at: Option<(usize, usize)>,
}

impl Arg {
    pub fn lit(text: &str) -> Self {
        Self {
            value: Some(text.to_string()),
            raw: text.to_string(),
            at: None,
            script_at: None,
        }
    }

    /// Whether its static value is `text`.
    pub fn is(&self, text: &str) -> bool {
        self.value.as_deref() == Some(text)
    }

    /// The words of `text` as a command's arguments, for tests: a word
    /// with a `$` in it is computed (no value), the rest are literal.
    #[cfg(test)]
    pub(crate) fn words(text: &str) -> Vec<Self> {
        text.split_whitespace()
            .map(|w| {
                if w.contains('$') {
                    Self {
                        value: None,
                        raw: w.to_string(),
                        at: None,
                        script_at: None,
                    }
                } else {
                    Self::lit(w)
                }
            })
            .collect()
    }
}

/// Reads a `-r`/`-c` file named in a command, relative to where the command
/// runs; `None` when it cannot be found.
pub trait RequirementFiles {
    fn read(&self, path: &str) -> Option<(String, layerlock_lock::RequirementsFile)>;

    /// A variable's value where the command runs (`PIP_REQUIRE_HASHES`).
    fn env_var(&self, _name: &str) -> Option<String> {
        None
    }

    /// The nearest file called `name` in `dir` (relative to where the
    /// command runs; there when `None`) or a directory above it, up to the
    /// scan root: the project a `uv sync` or `poetry install` works on.
    /// Its path as reports show it.
    fn project_file(&self, _dir: Option<&str>, _name: &str) -> Option<String> {
        None
    }

    /// A file's text (an `environment.yml`), with its path as reports
    /// show it; `None` when it cannot be found or read.
    fn read_text(&self, _path: &str) -> Option<(String, String)> {
        None
    }
}

/// A place in a file of the scanned tree (path relative to the scan root).
/// The path is shared: a script reached by thousands of pipelines has a
/// finding at each of its places for every one of them (issue 14).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    pub path: Rc<str>,
    pub line: usize,
    pub column: usize,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.path, self.line, self.column)
    }
}

/// What a rule sees of one command. It holds nothing of the path that
/// reached the command (see [`Reach`]): a script is analysed once for every
/// pipeline that calls it in the same context.
pub struct CommandSite<'a> {
    pub args: &'a [Arg],
    pub text: &'a str,
    pub location: Location,
    pub phase: Phase,
    pub files: &'a dyn RequirementFiles,
    /// The directory the command runs in (mapped into the tree), if known.
    pub cwd: Option<&'a std::path::Path>,
    /// The scan root.
    pub root: &'a std::path::Path,
    /// The previous command of the same script (for `find … | xargs …`).
    pub previous: Option<&'a [Arg]>,
    /// How many `--path-map` entries are in force.
    pub mapped_paths: usize,
}

/// One path to a command: the CI job whose script it starts from, and the
/// calls on the way.
pub struct Reach<'a> {
    pub job: Option<&'a str>,
    pub via: &'a Via,
}
