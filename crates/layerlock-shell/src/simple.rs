//! A simple command while the parser collects its tokens, and as it leaves
//! the parser (before heredoc bodies are attached and nested scripts parsed).

use crate::command::Context;
use crate::redirect::Redirect;
use crate::word_builder::RawWord;

#[derive(Debug)]
pub(crate) struct RawCommand {
    pub(crate) words: Vec<RawWord>,
    pub(crate) assignments: Vec<(String, RawWord)>,
    /// Span in the parser's source, from the first token to the last.
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// Heredoc slot of its first `<<` redirection.
    pub(crate) heredoc: Option<usize>,
    /// Where its standard output is redirected to, if to a file.
    pub(crate) stdout: Option<crate::word::Word>,
    /// Index (among the parser's commands) of the command piped into this
    /// one with `|`, if that was a simple command.
    pub(crate) stdin_from: Option<usize>,
    pub(crate) context: Vec<Context>,
    /// Inside an `if`, loop or `case`.
    pub(crate) conditional: bool,
}

/// The tokens of the simple command being read.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    start: Option<usize>,
    end: usize,
    pub(crate) words: Vec<RawWord>,
    assignments: Vec<(String, RawWord)>,
    redirects: usize,
    heredoc: Option<usize>,
    stdout: Option<crate::word::Word>,
}

impl Pending {
    /// No token read yet: the next word may be a keyword.
    pub(crate) fn is_empty(&self) -> bool {
        self.start.is_none()
    }

    /// Exactly one word and nothing else, as before the `()` of `name ()`.
    pub(crate) fn is_lone_word(&self) -> bool {
        self.words.len() == 1 && self.assignments.is_empty() && self.redirects == 0
    }

    fn span(&mut self, start: usize, end: usize) {
        self.start.get_or_insert(start);
        self.end = end;
    }

    pub(crate) fn word(&mut self, word: RawWord, start: usize, end: usize) {
        self.span(start, end);
        self.words.push(word);
    }

    pub(crate) fn assignment(&mut self, name: String, value: RawWord, start: usize, end: usize) {
        self.span(start, end);
        self.assignments.push((name, value));
    }

    pub(crate) fn redirect(&mut self, redirect: &Redirect) {
        self.span(redirect.start, redirect.end);
        self.redirects += 1;
        if self.heredoc.is_none() {
            self.heredoc = redirect.heredoc;
        }
        if let Some(target) = &redirect.stdout {
            self.stdout = Some(target.clone());
        }
    }

    /// Ends the command and resets this one. `None` when it had neither words
    /// nor assignments (`>file` alone runs nothing).
    pub(crate) fn take(
        &mut self,
        context: &[Context],
        stdin_from: Option<usize>,
    ) -> Option<RawCommand> {
        let done = std::mem::take(self);
        let start = done.start?;
        if done.words.is_empty() && done.assignments.is_empty() {
            return None;
        }
        Some(RawCommand {
            words: done.words,
            assignments: done.assignments,
            start,
            end: done.end,
            heredoc: done.heredoc,
            stdout: done.stdout,
            stdin_from,
            context: context.to_vec(),
            conditional: false,
        })
    }
}
