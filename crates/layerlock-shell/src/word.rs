//! A word of a command as parsed: its source text, its static value when the
//! text alone determines it, and the variables it expands.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// Source text of the word as written (quotes included).
    pub raw: String,
    /// The value after quote removal when the word holds no expansion (glob
    /// characters do not count: they are kept as written).
    pub value: Option<String>,
    /// Names of the variables it expands, in order of first use.
    pub variables: Vec<String>,
    /// True when it contains a command substitution `$(…)` or `` `…` ``.
    pub has_substitution: bool,
    /// The word cut at its expansions, for [`Word::expand`].
    pub(crate) parts: Vec<WordPart>,
    /// 1-based position of its first character of text in the parsed text
    /// (inside quotes: the first quoted character). Set for command words.
    pub line: usize,
    pub column: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WordPart {
    Literal(String),
    /// `$NAME` or `${NAME}`.
    Variable(String),
    /// Any other expansion: its value cannot be worked out from variables.
    Other,
}

impl Word {
    /// `$NAME/rest` or `${NAME}rest`: the leading variable and the literal
    /// text after it, when the word is exactly that.
    pub fn leading_variable(&self) -> Option<(&str, String)> {
        let mut parts = self.parts.iter();
        let Some(WordPart::Variable(name)) = parts.next() else {
            return None;
        };
        let mut rest = String::new();
        for part in parts {
            match part {
                WordPart::Literal(text) => rest.push_str(text),
                _ => return None,
            }
        }
        Some((name, rest))
    }

    /// True when the word is one expansion of every positional parameter
    /// (`"$@"`, `$*`, `"${@}"`): it stands for all of a script's arguments.
    pub fn is_all_arguments(&self) -> bool {
        matches!(self.parts.as_slice(), [WordPart::Variable(name)] if name == "@" || name == "*")
    }

    /// The value with `$NAME`/`${NAME}` replaced from `vars` when every
    /// expansion in it is a plain variable known in `vars`; `None` otherwise.
    pub fn expand(&self, vars: &BTreeMap<String, String>) -> Option<String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                WordPart::Literal(text) => out.push_str(text),
                WordPart::Variable(name) => out.push_str(vars.get(name)?),
                WordPart::Other => return None,
            }
        }
        Some(out)
    }
}
