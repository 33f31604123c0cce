//! Here-documents. `<<WORD` queues a body; the body starts after the next
//! newline token, wherever that is (even inside a `$(…)`), and reading that
//! newline reads every queued body in order.

use crate::command::Context;
use crate::error::ShellError;
use crate::parser::Parser;
use crate::word_builder::WordBuilder;

#[derive(Debug)]
struct Queued {
    delimiter: Vec<char>,
    /// `<<-`: leading tabs are stripped from body lines and the delimiter line.
    strip_tabs: bool,
    /// Unquoted delimiter: the shell expands `$…` and backquotes in the body.
    expands: bool,
    slot: usize,
    /// Where the `<<` was, for the error when the body never ends.
    op: usize,
}

/// A body's text (each line with its newline) and each character's origin.
#[derive(Debug, Clone, Default)]
pub(crate) struct HeredocBody {
    pub(crate) chars: Vec<char>,
    pub(crate) origins: Vec<usize>,
    /// Whether the shell expands `$…` and backquotes in it.
    pub(crate) expands: bool,
}

#[derive(Debug, Default)]
pub(crate) struct Heredocs {
    queued: Vec<Queued>,
    bodies: Vec<Option<HeredocBody>>,
}

impl Heredocs {
    /// Queues a heredoc whose delimiter word is written `raw`; returns the
    /// slot its body will fill.
    pub(crate) fn queue(&mut self, raw: &str, strip_tabs: bool, op: usize) -> usize {
        let slot = self.bodies.len();
        self.bodies.push(None);
        self.queued.push(Queued {
            delimiter: unquote(raw),
            strip_tabs,
            expands: !raw.contains(['\'', '"', '\\']),
            slot,
            op,
        });
        slot
    }

    pub(crate) fn into_bodies(self) -> Vec<Option<HeredocBody>> {
        self.bodies
    }
}

/// The delimiter after quote removal: `'EOF'`, `"EOF"` and `\EOF` all end
/// at a line `EOF`.
fn unquote(raw: &str) -> Vec<char> {
    let mut out = Vec::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {}
            '\\' => out.extend(chars.next()),
            _ => out.push(c),
        }
    }
    out
}

impl Parser<'_> {
    /// At a newline token: moves past it and reads the queued bodies.
    pub(crate) fn consume_newline(&mut self) -> Result<(), ShellError> {
        self.skip_raw(1);
        for queued in std::mem::take(&mut self.heredocs.queued) {
            let body = self.read_body(&queued)?;
            if let Some(slot) = self.heredocs.bodies.get_mut(queued.slot) {
                *slot = Some(body);
            }
        }
        Ok(())
    }

    fn read_body(&mut self, queued: &Queued) -> Result<HeredocBody, ShellError> {
        let mut body = HeredocBody {
            expands: queued.expands,
            ..HeredocBody::default()
        };
        loop {
            if self.pos >= self.len() {
                let delimiter: String = queued.delimiter.iter().collect();
                return Err(self.error_at(
                    queued.op,
                    &format!("unterminated here-document (no line `{delimiter}`)"),
                ));
            }
            let eol = (self.pos..self.len())
                .find(|&i| self.raw_at(i) == Some('\n'))
                .unwrap_or(self.len());
            let mut start = self.pos;
            if queued.strip_tabs {
                while start < eol && self.raw_at(start) == Some('\t') {
                    start += 1;
                }
            }
            self.pos = (eol + 1).min(self.len());
            let line = self.src.slice(start, eol);
            let line = line.strip_suffix(&['\r'][..]).unwrap_or(line);
            if line == queued.delimiter.as_slice() {
                return Ok(body);
            }
            for i in start..eol {
                if let Some(c) = self.raw_at(i) {
                    body.chars.push(c);
                    body.origins.push(self.origin(i));
                }
            }
            if eol < self.len() {
                body.chars.push('\n');
                body.origins.push(self.origin(eol));
            }
        }
    }

    /// At the end of input no heredoc may still wait for its body.
    pub(crate) fn check_heredocs_closed(&self) -> Result<(), ShellError> {
        match self.heredocs.queued.first() {
            Some(queued) => {
                let delimiter: String = queued.delimiter.iter().collect();
                Err(self.error_at(
                    queued.op,
                    &format!("unterminated here-document (no line `{delimiter}`)"),
                ))
            }
            None => Ok(()),
        }
    }

    /// Reads a whole source as the body of an unquoted heredoc: plain text
    /// in which only `$…` and backquotes mean something, so that the
    /// commands of its substitutions are found.
    pub(crate) fn scan_expansions(&mut self, ctx: &[Context]) -> Result<(), ShellError> {
        let mut scratch = WordBuilder::default();
        while let Some(c) = self.peek() {
            match c {
                '\\' => self.skip_raw(2),
                '$' => self.read_dollar(&mut scratch, ctx, true)?,
                '`' => self.read_backtick(&mut scratch, ctx, true)?,
                _ => self.skip_raw(1),
            }
        }
        Ok(())
    }
}
