//! What parsing finds: the simple commands of a script and where they sit.

use crate::word::Word;

/// Every simple command of a text, nested ones included, in the source
/// order of their first token.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    pub commands: Vec<Command>,
    /// Shell functions defined at the top level of the text (`name () {
    /// … }`, `function name { … }`), in source order.
    pub functions: Vec<Function>,
    /// `for NAME in WORDS; do … done` loops of the text, in source order.
    pub loops: Vec<Loop>,
    /// `if … fi` of the text, in source order (nested ones after the one
    /// holding them).
    pub ifs: Vec<If>,
}

/// An `if`: its span from `if` to `fi`, and the spans of the bodies that may
/// run (after `then`, after `else`), in order. With an `else`, one of them
/// always runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct If {
    pub start: (usize, usize),
    pub end: (usize, usize),
    pub arms: Vec<((usize, usize), (usize, usize))>,
    pub has_else: bool,
}

impl If {
    /// Whether a command at (line, column) is inside the `if`.
    pub fn contains(&self, line: usize, column: usize) -> bool {
        (line, column) > self.start && (line, column) < self.end
    }

    /// The body a command at (line, column) is in; `None` in a condition.
    pub fn arm(&self, line: usize, column: usize) -> Option<usize> {
        self.arms
            .iter()
            .position(|(start, end)| (line, column) >= *start && (line, column) < *end)
    }
}

/// A `for` loop: its variable, the values of its words (`None` where a word
/// is computed), and its span from `for` to `done`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loop {
    pub name: String,
    pub values: Vec<Option<String>>,
    pub start: (usize, usize),
    pub end: (usize, usize),
}

impl Loop {
    /// Whether a command at (line, column) is inside the loop.
    pub fn contains(&self, line: usize, column: usize) -> bool {
        (line, column) > self.start && (line, column) < self.end
    }
}

/// A function definition: its name and the span of its body, from the
/// definition to its closing `}` (1-based lines and columns).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub start: (usize, usize),
    pub end: (usize, usize),
}

impl Function {
    /// Whether a command at (line, column) is inside the body.
    pub fn contains(&self, line: usize, column: usize) -> bool {
        (line, column) > self.start && (line, column) < self.end
    }
}

/// One simple command: what would be run, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// argv: words after removing leading assignments and all redirections.
    pub words: Vec<Word>,
    /// Leading `NAME=value` assignments of this command (`FOO=1 bash x.sh`).
    pub assignments: Vec<(String, Word)>,
    /// 1-based position of the command's first token in the parsed text.
    pub line: usize,
    pub column: usize,
    /// The command's source text from its first token to its end, on one
    /// line: line continuations removed, newlines replaced by spaces, trimmed.
    pub text: String,
    /// Body of the first heredoc redirected into this command, if any.
    pub heredoc: Option<String>,
    /// The heredoc body it reads on standard input: its own, or one that
    /// `cat <<EOF |` pipes into it; and the 1-based line where it starts.
    pub stdin: Option<String>,
    pub stdin_line: Option<usize>,
    /// The file its standard output is redirected to (`cat <<EOF > f`).
    pub stdout: Option<Word>,
    /// What the command is nested in, outermost first; empty at top level.
    pub context: Vec<Context>,
    /// Inside an `if`, `while`, `until`, `for` or `case` of its own text:
    /// it may run or not, once or many times.
    pub conditional: bool,
}

/// A construct that runs commands apart from the script's own flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Context {
    /// Inside `$(…)`, backquotes or `<(…)`/`>(…)`.
    Substitution,
    /// Inside the string given to `bash -c` (or `sh -c`, …).
    ShellC,
    /// Inside `( … )`.
    Subshell,
    /// Inside a heredoc fed to a shell (`bash <<EOF`).
    HeredocShell,
}

impl Command {
    /// The static value of argv[0], if it has one.
    pub fn program(&self) -> Option<&str> {
        self.words.first()?.value.as_deref()
    }
}
