//! Character-level reading: the cursor, line continuations, blanks and
//! comments, and the lookahead the tokenizer needs.
//!
//! Outside single quotes a backslash-newline pair vanishes before anything
//! else sees the text, so the "logical" reads here step over such pairs
//! while positions stay those of the physical text.

use crate::error::ShellError;
use crate::parser::Parser;

/// Blanks separate words. A carriage return counts as one so that scripts
/// saved with CRLF line endings read like their LF twins.
pub(crate) fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r')
}

/// Characters that end a word and start an operator.
pub(crate) fn is_meta(c: char) -> bool {
    matches!(c, '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')')
}

pub(crate) fn ends_word(c: char) -> bool {
    is_blank(c) || is_meta(c)
}

impl Parser<'_> {
    pub(crate) fn len(&self) -> usize {
        self.src.chars.len()
    }

    pub(crate) fn raw_at(&self, i: usize) -> Option<char> {
        self.src.chars.get(i).copied()
    }

    pub(crate) fn origin(&self, i: usize) -> usize {
        self.src.origin(i)
    }

    pub(crate) fn error_at(&self, i: usize, message: &str) -> ShellError {
        let (line, column) = self.lines.position(self.origin(i));
        ShellError {
            line,
            column,
            message: message.to_string(),
        }
    }

    /// The first index at or after `i` that is not part of a line continuation.
    pub(crate) fn skip_continuations_from(&self, mut i: usize) -> usize {
        while self.raw_at(i) == Some('\\') && self.raw_at(i + 1) == Some('\n') {
            i += 2;
        }
        i
    }

    /// Physical index of the `n`th logical character from the cursor.
    pub(crate) fn logical_index(&self, n: usize) -> usize {
        let mut i = self.pos;
        for _ in 0..n {
            i = self.skip_continuations_from(i);
            if i >= self.len() {
                return self.len();
            }
            i += 1;
        }
        self.skip_continuations_from(i).min(self.len())
    }

    /// The character at the cursor, after stepping over line continuations.
    pub(crate) fn peek(&mut self) -> Option<char> {
        self.pos = self.skip_continuations_from(self.pos);
        self.raw_at(self.pos)
    }

    pub(crate) fn peek_ahead(&self, n: usize) -> Option<char> {
        self.raw_at(self.logical_index(n))
    }

    /// Moves past `n` logical characters.
    pub(crate) fn advance(&mut self, n: usize) {
        self.pos = self.logical_index(n);
    }

    /// Moves past `n` physical characters (inside quotes, escape pairs).
    pub(crate) fn skip_raw(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.len());
    }

    pub(crate) fn skip_blanks(&mut self) {
        while self.peek().is_some_and(is_blank) {
            self.pos += 1;
        }
    }

    /// From a `#` at a word start to the end of the line, newline excluded.
    pub(crate) fn skip_comment(&mut self) {
        while self.raw_at(self.pos).is_some_and(|c| c != '\n') {
            self.pos += 1;
        }
    }

    /// The next logical character after `n` logical ones and any blanks.
    pub(crate) fn next_nonblank_after(&self, n: usize) -> Option<char> {
        let mut i = self.logical_index(n);
        loop {
            i = self.skip_continuations_from(i);
            match self.raw_at(i) {
                Some(c) if is_blank(c) => i += 1,
                other => return other,
            }
        }
    }

    /// The word at the cursor and the index after it, when it is short and
    /// has no quoting or expansion — the only way keywords are written.
    pub(crate) fn peek_plain_word(&mut self) -> Option<(String, usize)> {
        self.peek();
        let mut i = self.pos;
        let mut word = String::new();
        loop {
            i = self.skip_continuations_from(i);
            match self.raw_at(i) {
                None => break,
                Some(c) if ends_word(c) => break,
                Some('\'' | '"' | '\\' | '$' | '`') => return None,
                Some(c) => {
                    // No keyword is longer; don't copy long words for nothing.
                    if word.len() >= 8 {
                        return None;
                    }
                    word.push(c);
                    i += 1;
                }
            }
        }
        (!word.is_empty()).then_some((word, i))
    }

    /// Whether the text from `from` (just after `((`) closes with `))` at
    /// the same depth — arithmetic — rather than with `) )` or `)…)`, which
    /// makes `((` (or `$((`) a subshell nested in a subshell (substitution).
    pub(crate) fn arith_closes(&self, from: usize) -> bool {
        let mut depth = 0usize;
        let mut i = from;
        while let Some(c) = self.raw_at(i) {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    return self.raw_at(self.skip_continuations_from(i + 1)) == Some(')');
                }
                ')' => depth -= 1,
                '\\' => i += 1,
                '\'' | '"' => {
                    i += 1;
                    while self.raw_at(i).is_some_and(|q| q != c) {
                        i += 1;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        false
    }
}
