//! Assignment words before a command: `NAME=value`, `NAME+=value`,
//! `NAME[i]=value` and arrays `NAME=(a b)`.

use crate::command::Context;
use crate::error::ShellError;
use crate::parser::Parser;
use crate::word_builder::{RawWord, WordBuilder};

impl Parser<'_> {
    /// Reads an assignment at the cursor if there is one: its name (as
    /// written, without `+`) and its value.
    pub(crate) fn try_assignment(
        &mut self,
        ctx: &[Context],
    ) -> Result<Option<(String, RawWord)>, ShellError> {
        self.peek();
        let start = self.pos;
        let Some((name_end, equals)) = self.assignment_lhs(start) else {
            return Ok(None);
        };
        let name = self.src.text(start, name_end);
        self.pos = equals + 1;
        let value = if self.raw_at(self.pos) == Some('(') {
            let open = self.pos;
            self.advance(1);
            let mut b = WordBuilder::default();
            self.array_body(&mut b, ctx)?;
            b.opaque();
            b.finish(self.src.text(open, self.pos))
        } else {
            // At a blank this reads the empty word: `FOO= cmd`.
            self.read_word(ctx)?
        };
        Ok(Some((name, value)))
    }

    /// For `NAME=`, `NAME+=` or `NAME[…]=` at `start`: the end of the name
    /// (subscript included) and the index of `=`.
    fn assignment_lhs(&self, start: usize) -> Option<(usize, usize)> {
        let mut i = start;
        if !self
            .raw_at(i)
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        {
            return None;
        }
        while self
            .raw_at(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            i += 1;
        }
        if self.raw_at(i) == Some('[') {
            let mut depth = 0usize;
            loop {
                match self.raw_at(i)? {
                    '[' => depth += 1,
                    ']' => {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    '\n' => return None,
                    _ => {}
                }
                i += 1;
            }
        }
        let name_end = i;
        if self.raw_at(i) == Some('+') {
            i += 1;
        }
        (self.raw_at(i) == Some('=')).then_some((name_end, i))
    }
}
