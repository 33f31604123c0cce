//! Accumulates a word while it is read: its quote-removed text, the
//! expansions in it, and where each of its characters came from.

use crate::source::Source;
use crate::word::{Word, WordPart};

#[derive(Debug, Default)]
pub(crate) struct WordBuilder {
    /// Quote-removed text, with expansions kept as written (`$X`): that is
    /// what a shell given this word as its script would read.
    chars: Vec<char>,
    origins: Vec<usize>,
    parts: Vec<WordPart>,
    variables: Vec<String>,
    expanded: bool,
    has_substitution: bool,
}

impl WordBuilder {
    pub(crate) fn literal(&mut self, c: char, origin: usize) {
        self.chars.push(c);
        self.origins.push(origin);
        match self.parts.last_mut() {
            Some(WordPart::Literal(text)) => text.push(c),
            _ => self.parts.push(WordPart::Literal(c.to_string())),
        }
    }

    /// A plain `$NAME`/`${NAME}` spanning `start..end` of `src`.
    pub(crate) fn variable(&mut self, name: &str, src: &Source, start: usize, end: usize) {
        self.note_variable(name);
        self.verbatim(src, start, end);
        self.parts.push(WordPart::Variable(name.to_string()));
        self.expanded = true;
    }

    /// Any other expansion spanning `start..end` of `src`.
    pub(crate) fn expansion(&mut self, src: &Source, start: usize, end: usize) {
        self.verbatim(src, start, end);
        self.opaque();
    }

    /// Marks the word as not static without adding text (array values).
    pub(crate) fn opaque(&mut self) {
        self.parts.push(WordPart::Other);
        self.expanded = true;
    }

    pub(crate) fn note_variable(&mut self, name: &str) {
        if !self.variables.iter().any(|v| v == name) {
            self.variables.push(name.to_string());
        }
    }

    pub(crate) fn substitution(&mut self) {
        self.has_substitution = true;
    }

    /// Takes the variables and substitutions of an expansion's inner words
    /// (`${X:-$Y}`, `$(( $N + 1 ))`), whose text is not the word's own.
    pub(crate) fn absorb(&mut self, inner: WordBuilder) {
        for name in &inner.variables {
            self.note_variable(name);
        }
        self.has_substitution |= inner.has_substitution;
    }

    pub(crate) fn absorb_word(&mut self, inner: &Word) {
        for name in &inner.variables {
            self.note_variable(name);
        }
        self.has_substitution |= inner.has_substitution;
    }

    fn verbatim(&mut self, src: &Source, start: usize, end: usize) {
        for (k, c) in src.slice(start, end).iter().enumerate() {
            self.chars.push(*c);
            self.origins.push(src.origin(start + k));
        }
    }

    pub(crate) fn finish(self, raw: String) -> RawWord {
        let has_literal_text = self
            .parts
            .iter()
            .any(|p| matches!(p, WordPart::Literal(text) if !text.trim().is_empty()));
        let value = (!self.expanded).then(|| self.chars.iter().collect());
        RawWord {
            word: Word {
                raw,
                value,
                variables: self.variables,
                has_substitution: self.has_substitution,
                parts: self.parts,
                line: 0,
                column: 0,
            },
            chars: self.chars,
            origins: self.origins,
            has_literal_text,
        }
    }
}

/// A word plus what the parser needs beyond the public [`Word`].
#[derive(Debug)]
pub(crate) struct RawWord {
    pub(crate) word: Word,
    chars: Vec<char>,
    origins: Vec<usize>,
    has_literal_text: bool,
}

impl RawWord {
    /// Where the word's first character of text came from.
    pub(crate) fn first_origin(&self) -> Option<usize> {
        self.origins.first().copied()
    }

    /// The script a shell runs when given this word (`bash -c WORD`), with the
    /// origin of each character. That is the value when the word is static.
    /// Otherwise, when the word has literal text and no command substitution,
    /// it is the quote-removed text with expansions left as written: close
    /// enough to find the commands of `bash -c "pip install $PKG"`.
    pub(crate) fn script(&self) -> Option<(&[char], &[usize])> {
        // A string with text of its own is parsed as written, its
        // substitutions too (`su -c "cd \`pwd\`; pip install x"`): their
        // commands were read already, and are found at the same places.
        let usable = self.word.value.is_some() || self.has_literal_text;
        usable.then_some((&self.chars, &self.origins))
    }
}
