//! Expansions inside words: `$NAME`, `${…}`, `$(…)`, backquotes, `$((…))`,
//! `$[…]`, `$'…'` and `$"…"`. Each records the variables and command
//! substitutions it holds; the commands of substitutions are parsed here.

use crate::ansi_c;
use crate::command::Context;
use crate::error::ShellError;
use crate::parser::{Parser, Until};
use crate::script::parse_source;
use crate::source::Source;
use crate::word_builder::WordBuilder;

/// One-character parameters: `$@`, `$?`, `$$`…
fn is_special_parameter(c: char) -> bool {
    matches!(c, '@' | '*' | '#' | '?' | '$' | '!' | '-')
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl Parser<'_> {
    /// At `$`. `in_dq`: inside double quotes, where `$'` and `$"` are not
    /// quotes and single quotes in `${…}` are plain characters.
    pub(crate) fn read_dollar(
        &mut self,
        b: &mut WordBuilder,
        ctx: &[Context],
        in_dq: bool,
    ) -> Result<(), ShellError> {
        self.nested(|p| p.dollar(b, ctx, in_dq))
    }

    fn dollar(
        &mut self,
        b: &mut WordBuilder,
        ctx: &[Context],
        in_dq: bool,
    ) -> Result<(), ShellError> {
        self.peek();
        let open = self.pos;
        match self.peek_ahead(1) {
            Some('(') => {
                if self.peek_ahead(2) == Some('(') && self.arith_closes(self.logical_index(3)) {
                    self.advance(3);
                    let mut inner = WordBuilder::default();
                    self.arithmetic_body(open, &mut inner, ctx)?;
                    b.absorb(inner);
                    b.expansion(self.src, open, self.pos);
                } else {
                    self.advance(2);
                    self.command_substitution(b, ctx, open)?;
                }
            }
            Some('{') => self.parameter(b, ctx, in_dq)?,
            Some('[') => {
                self.advance(2);
                let mut inner = WordBuilder::default();
                self.bracket_arithmetic(open, &mut inner, ctx)?;
                b.absorb(inner);
                b.expansion(self.src, open, self.pos);
            }
            Some('\'') if !in_dq => self.ansi_c(b)?,
            Some('"') if !in_dq => {
                // `$"…"` (translated string) reads as a double-quoted one.
                self.advance(1);
                self.read_double_quoted(b, ctx)?;
            }
            Some(c) if is_name_start(c) => {
                self.advance(1);
                let name_start = self.pos;
                while self.raw_at(self.pos).is_some_and(is_name_char) {
                    self.pos += 1;
                }
                let name = self.src.text(name_start, self.pos);
                b.variable(&name, self.src, open, self.pos);
            }
            Some(c) if c.is_ascii_digit() || is_special_parameter(c) => {
                // `$10` is `${1}0`: one character only.
                self.advance(2);
                b.variable(&c.to_string(), self.src, open, self.pos);
            }
            _ => {
                b.literal('$', self.origin(open));
                self.advance(1);
            }
        }
        Ok(())
    }

    /// After `$(` or `<(`/`>(` opened at `open`: the commands up to `)`.
    pub(crate) fn command_substitution(
        &mut self,
        b: &mut WordBuilder,
        ctx: &[Context],
        open: usize,
    ) -> Result<(), ShellError> {
        let mut inner = ctx.to_vec();
        inner.push(Context::Substitution);
        self.parse_list(Until::Substitution { open }, &inner)?;
        b.substitution();
        b.expansion(self.src, open, self.pos);
        Ok(())
    }

    /// After `$((` or `((` opened at `open`: the expression through `))`.
    /// Its variables and substitutions go to `b`.
    pub(crate) fn arithmetic_body(
        &mut self,
        open: usize,
        b: &mut WordBuilder,
        ctx: &[Context],
    ) -> Result<(), ShellError> {
        self.balanced(
            open,
            ('(', ')'),
            "unterminated arithmetic expression",
            true,
            b,
            ctx,
        )?;
        if self.peek() == Some(')') {
            self.advance(1);
        }
        Ok(())
    }

    /// After the old-style `$[` opened at `open`: the expression through `]`.
    fn bracket_arithmetic(
        &mut self,
        open: usize,
        b: &mut WordBuilder,
        ctx: &[Context],
    ) -> Result<(), ShellError> {
        self.balanced(open, ('[', ']'), "unterminated `$[`", false, b, ctx)
    }

    /// Read through the `close` that balances an already consumed `open`
    /// bracket, collecting expansions (and double-quoted strings, when
    /// `quotes`) into `b`.
    fn balanced(
        &mut self,
        at: usize,
        (open, close): (char, char),
        unterminated: &str,
        quotes: bool,
        b: &mut WordBuilder,
        ctx: &[Context],
    ) -> Result<(), ShellError> {
        let mut depth = 0usize;
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error_at(at, unterminated));
            };
            match c {
                c if c == open => {
                    depth += 1;
                    self.advance(1);
                }
                c if c == close => {
                    self.advance(1);
                    if depth == 0 {
                        return Ok(());
                    }
                    depth -= 1;
                }
                '$' => self.read_dollar(b, ctx, true)?,
                '`' => self.read_backtick(b, ctx, true)?,
                '"' if quotes => self.read_double_quoted(b, ctx)?,
                '\\' => self.skip_raw(2),
                _ => self.advance(1),
            }
        }
    }

    /// At `${`: a plain `${NAME}` is a variable; anything else (`${X:-d}`,
    /// `${#X}`, `${X[0]}`) is an expansion using `X` and whatever its
    /// operand holds.
    fn parameter(
        &mut self,
        b: &mut WordBuilder,
        ctx: &[Context],
        in_dq: bool,
    ) -> Result<(), ShellError> {
        let open = self.pos;
        self.advance(2);
        // `${#X}` (length) and `${!X}` (indirection) prefix the name;
        // `${#}` and `${!}` are the parameters `#` and `!` themselves.
        let mut prefixed = false;
        if matches!(self.peek(), Some('#' | '!'))
            && self
                .peek_ahead(1)
                .is_some_and(|c| is_name_char(c) || is_special_parameter(c))
        {
            prefixed = true;
            self.advance(1);
        }
        let name_start = self.pos;
        match self.raw_at(self.pos) {
            Some(c) if is_name_start(c) => {
                while self.raw_at(self.pos).is_some_and(is_name_char) {
                    self.pos += 1;
                }
            }
            Some(c) if c.is_ascii_digit() => {
                while self.raw_at(self.pos).is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
            }
            Some(c) if is_special_parameter(c) => self.pos += 1,
            _ => {}
        }
        let name = self.src.text(name_start, self.pos);
        if !prefixed && !name.is_empty() && self.peek() == Some('}') {
            self.advance(1);
            b.variable(&name, self.src, open, self.pos);
            return Ok(());
        }
        let mut inner = WordBuilder::default();
        let mut depth = 0usize;
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error_at(open, "unterminated parameter expansion `${`"));
            };
            match c {
                '}' => {
                    self.advance(1);
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                }
                '{' => {
                    depth += 1;
                    self.advance(1);
                }
                '\\' => self.skip_raw(2),
                '\'' if !in_dq => self.read_single_quoted(&mut inner)?,
                '"' => self.read_double_quoted(&mut inner, ctx)?,
                '$' => self.read_dollar(&mut inner, ctx, in_dq)?,
                '`' => self.read_backtick(&mut inner, ctx, in_dq)?,
                _ => self.advance(1),
            }
        }
        if !name.is_empty() {
            b.note_variable(&name);
        }
        b.absorb(inner);
        b.expansion(self.src, open, self.pos);
        Ok(())
    }

    /// At `$'`: an ANSI-C quoted string, whose value is static.
    fn ansi_c(&mut self, b: &mut WordBuilder) -> Result<(), ShellError> {
        let open = self.pos;
        self.advance(1);
        self.skip_raw(1);
        loop {
            let at = self.pos;
            let Some(c) = self.raw_at(at) else {
                return Err(self.error_at(open, "unterminated ANSI-C quote `$'`"));
            };
            match c {
                '\'' => {
                    self.pos += 1;
                    return Ok(());
                }
                '\\' => {
                    let rest = self.src.slice(at + 1, self.len());
                    let (text, used) = ansi_c::decode(rest);
                    for decoded in text.chars() {
                        b.literal(decoded, self.origin(at));
                    }
                    self.skip_raw(1 + used);
                }
                _ => {
                    b.literal(c, self.origin(at));
                    self.pos += 1;
                }
            }
        }
    }

    /// At a backquote: the command text up to the closing one, unescaped as
    /// the shell does, then parsed on its own.
    pub(crate) fn read_backtick(
        &mut self,
        b: &mut WordBuilder,
        ctx: &[Context],
        in_dq: bool,
    ) -> Result<(), ShellError> {
        let open = self.pos;
        self.skip_raw(1);
        let mut chars = Vec::new();
        let mut origins = Vec::new();
        loop {
            let at = self.pos;
            let Some(c) = self.raw_at(at) else {
                return Err(self.error_at(open, "unterminated backquote"));
            };
            match c {
                '`' => {
                    self.pos += 1;
                    break;
                }
                '\\' => match self.raw_at(at + 1) {
                    Some(escaped)
                        if matches!(escaped, '$' | '`' | '\\') || (in_dq && escaped == '"') =>
                    {
                        chars.push(escaped);
                        origins.push(self.origin(at + 1));
                        self.skip_raw(2);
                    }
                    _ => {
                        chars.push('\\');
                        origins.push(self.origin(at));
                        self.pos += 1;
                    }
                },
                _ => {
                    chars.push(c);
                    origins.push(self.origin(at));
                    self.pos += 1;
                }
            }
        }
        let body = Source::nested(chars, origins, self.origin(open));
        let mut inner = ctx.to_vec();
        inner.push(Context::Substitution);
        let depth = self.depth + 1;
        let found = self.nested(|p| parse_source(&body, p.lines, &inner, depth, p.grammar))?;
        self.finished.extend(found);
        b.substitution();
        b.expansion(self.src, open, self.pos);
        Ok(())
    }
}
