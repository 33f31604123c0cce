//! Reading one word: quotes, escapes and the expansions in it, up to the
//! first unquoted blank or operator character.

use crate::command::Context;
use crate::cursor::{ends_word, is_blank, is_meta};
use crate::error::ShellError;
use crate::parser::Parser;
use crate::word_builder::{RawWord, WordBuilder};

impl Parser<'_> {
    pub(crate) fn read_word(&mut self, ctx: &[Context]) -> Result<RawWord, ShellError> {
        self.peek();
        let start = self.pos;
        let mut b = WordBuilder::default();
        while let Some(c) = self.peek() {
            match c {
                '<' | '>' if self.pos == start && self.peek_ahead(1) == Some('(') => {
                    // Process substitution: commands like those of `$(…)`.
                    self.advance(2);
                    self.command_substitution(&mut b, ctx, start)?;
                }
                '(' if self.at_array_value(start) => {
                    // `declare -a xs=(a b)`: the parentheses are the value's.
                    self.advance(1);
                    self.array_body(&mut b, ctx)?;
                    b.opaque();
                }
                '(' if self.at_extglob(start) => self.read_extglob(&mut b),
                c if ends_word(c) => break,
                '\\' => {
                    let at = self.pos;
                    match self.raw_at(at + 1) {
                        Some(escaped) => {
                            b.literal(escaped, self.origin(at + 1));
                            self.skip_raw(2);
                        }
                        None => {
                            b.literal('\\', self.origin(at));
                            self.skip_raw(1);
                        }
                    }
                }
                '\'' => self.read_single_quoted(&mut b)?,
                '"' => self.read_double_quoted(&mut b, ctx)?,
                '`' => self.read_backtick(&mut b, ctx, false)?,
                '$' => self.read_dollar(&mut b, ctx, false)?,
                _ => {
                    b.literal(c, self.origin(self.pos));
                    self.pos += 1;
                }
            }
        }
        Ok(b.finish(self.src.text(start, self.pos)))
    }

    /// [`Parser::read_word`], moving on by at least one character so that
    /// callers looping over words always make progress.
    pub(crate) fn read_word_progress(&mut self, ctx: &[Context]) -> Result<RawWord, ShellError> {
        let before = self.pos;
        let word = self.read_word(ctx)?;
        if self.pos == before {
            self.skip_raw(1);
        }
        Ok(word)
    }

    pub(crate) fn read_single_quoted(&mut self, b: &mut WordBuilder) -> Result<(), ShellError> {
        let open = self.pos;
        self.skip_raw(1);
        loop {
            let at = self.pos;
            let Some(c) = self.raw_at(at) else {
                return Err(self.error_at(open, "unterminated single quote"));
            };
            self.pos += 1;
            if c == '\'' {
                return Ok(());
            }
            b.literal(c, self.origin(at));
        }
    }

    pub(crate) fn read_double_quoted(
        &mut self,
        b: &mut WordBuilder,
        ctx: &[Context],
    ) -> Result<(), ShellError> {
        self.nested(|p| p.double_quoted(b, ctx))
    }

    fn double_quoted(&mut self, b: &mut WordBuilder, ctx: &[Context]) -> Result<(), ShellError> {
        let open = self.pos;
        self.skip_raw(1);
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error_at(open, "unterminated double quote"));
            };
            let at = self.pos;
            match c {
                '"' => {
                    self.pos += 1;
                    return Ok(());
                }
                // Inside double quotes a backslash only escapes these.
                '\\' => match self.raw_at(at + 1) {
                    Some(escaped @ ('$' | '`' | '"' | '\\')) => {
                        b.literal(escaped, self.origin(at + 1));
                        self.skip_raw(2);
                    }
                    _ => {
                        b.literal('\\', self.origin(at));
                        self.pos += 1;
                    }
                },
                '$' => self.read_dollar(b, ctx, true)?,
                '`' => self.read_backtick(b, ctx, true)?,
                _ => {
                    b.literal(c, self.origin(at));
                    self.pos += 1;
                }
            }
        }
    }

    /// At `(` right after `NAME=` or `NAME+=` written plainly.
    fn at_array_value(&self, start: usize) -> bool {
        let before = self.src.slice(start, self.pos);
        let Some(lhs) = before.strip_suffix(&['='][..]) else {
            return false;
        };
        let name = lhs.strip_suffix(&['+'][..]).unwrap_or(lhs);
        name.first()
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == '_')
            && name.iter().all(|c| c.is_ascii_alphanumeric() || *c == '_')
    }

    /// At `(` right after one of `@?*+!`: an extended glob such as `@(a|b)`.
    fn at_extglob(&self, start: usize) -> bool {
        if self.pos <= start {
            return false;
        }
        match self.raw_at(self.pos - 1) {
            Some('@' | '?' | '*' | '+') => true,
            // A word-initial `!(` is `!` before a subshell more often.
            Some('!') => self.pos - 1 > start,
            _ => false,
        }
    }

    /// An extended glob's parentheses, kept as written in the value.
    fn read_extglob(&mut self, b: &mut WordBuilder) {
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            let at = self.pos;
            self.pos += 1;
            b.literal(c, self.origin(at));
            match c {
                '(' => depth += 1,
                ')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                }
                '\\' => {
                    if let Some(escaped) = self.raw_at(self.pos) {
                        b.literal(escaped, self.origin(self.pos));
                        self.pos += 1;
                    }
                }
                _ => {}
            }
        }
    }

    /// Inside `NAME=(…)`, after `(`: the elements up to `)`. They are read as
    /// words so substitutions in them count; the value itself is not static.
    pub(crate) fn array_body(
        &mut self,
        b: &mut WordBuilder,
        ctx: &[Context],
    ) -> Result<(), ShellError> {
        self.nested(|p| p.array_elements(b, ctx))
    }

    fn array_elements(&mut self, b: &mut WordBuilder, ctx: &[Context]) -> Result<(), ShellError> {
        loop {
            self.skip_blanks();
            match self.peek() {
                None => return Ok(()),
                Some(')') => {
                    self.advance(1);
                    return Ok(());
                }
                Some('\n') => self.consume_newline()?,
                Some('#') => self.skip_comment(),
                Some(c) if is_meta(c) || is_blank(c) => self.advance(1),
                Some(_) => {
                    let element = self.read_word_progress(ctx)?;
                    b.absorb_word(&element.word);
                }
            }
        }
    }
}
