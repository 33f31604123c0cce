//! Redirections: `>f`, `2>&1`, `<in`, `&>out`, `>>log`, `<<EOF`, `<<<word`
//! and the like. Their targets are not arguments of the command.

use crate::command::Context;
use crate::cursor::ends_word;
use crate::error::ShellError;
use crate::parser::Parser;

/// A redirection's span and, for `<<`/`<<-`, the heredoc slot it queued.
#[derive(Debug)]
pub(crate) struct Redirect {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) heredoc: Option<usize>,
    /// The target of a redirection of standard output (`>f`, `>>f`, `&>f`,
    /// `1>f`), so callers can see a heredoc written to a file.
    pub(crate) stdout: Option<crate::word::Word>,
}

impl Parser<'_> {
    /// Whether a redirection starts at the cursor. `<(` and `>(` start
    /// process substitutions, which are words.
    pub(crate) fn at_redirect(&mut self) -> bool {
        match self.peek() {
            Some('<' | '>') => self.peek_ahead(1) != Some('('),
            Some('&') => self.peek_ahead(1) == Some('>'),
            Some(c) if c.is_ascii_digit() => {
                // A file descriptor number: digits right before `<` or `>`.
                let mut i = self.pos;
                while self.raw_at(i).is_some_and(|c| c.is_ascii_digit()) {
                    i = self.skip_continuations_from(i + 1);
                }
                matches!(self.raw_at(i), Some('<' | '>'))
            }
            _ => false,
        }
    }

    pub(crate) fn read_redirect(&mut self, ctx: &[Context]) -> Result<Redirect, ShellError> {
        self.peek();
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.advance(1);
        }
        // (length of the operator, Some(strip tabs) for a heredoc)
        let (len, heredoc) = match (self.peek(), self.peek_ahead(1), self.peek_ahead(2)) {
            (Some('<'), Some('<'), Some('<')) => (3, None),
            (Some('<'), Some('<'), Some('-')) => (3, Some(true)),
            (Some('<'), Some('<'), _) => (2, Some(false)),
            (Some('<'), Some('&' | '>'), _) => (2, None),
            (Some('>'), Some('>' | '&' | '|'), _) => (2, None),
            (Some('&'), Some('>'), Some('>')) => (3, None),
            (Some('&'), Some('>'), _) => (2, None),
            _ => (1, None),
        };
        let fd: String = self.src.text(start, self.pos);
        let op = (self.peek(), self.peek_ahead(1));
        let to_stdout = (fd.is_empty() || fd == "1")
            && match op {
                (Some('>'), Some('&')) => false,
                (Some('>'), _) => true,
                (Some('&'), Some('>')) => fd.is_empty(),
                _ => false,
            };
        self.advance(len);
        self.skip_blanks();
        let target = match self.peek() {
            Some(c) if !ends_word(c) => Some(self.read_word_progress(ctx)?),
            Some('<' | '>') if self.peek_ahead(1) == Some('(') => {
                Some(self.read_word_progress(ctx)?)
            }
            // A missing target is a syntax error; carry on without one.
            _ => None,
        };
        let end = self.pos;
        let stdout = to_stdout
            .then(|| target.as_ref().map(|t| t.word.clone()))
            .flatten();
        let heredoc = match (heredoc, target) {
            (Some(strip_tabs), Some(target)) => {
                Some(self.heredocs.queue(&target.word.raw, strip_tabs, start))
            }
            _ => None,
        };
        Ok(Redirect {
            start,
            end,
            heredoc,
            stdout,
        })
    }
}
