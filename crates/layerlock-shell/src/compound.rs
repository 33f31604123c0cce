//! Keywords and compound commands. `if`/`while`/`{`… are stepped over (the
//! commands inside are ordinary commands); `case` patterns, `for` word lists,
//! `[[ … ]]` and `(( … ))` are read without yielding commands; `( … )` opens
//! a subshell.

use crate::command::Context;
use crate::cursor::{ends_word, is_meta};
use crate::error::ShellError;
use crate::grammar::Grammar;
use crate::parser::{IfSpan, ListEnd, LoopHead, Parser, Step, Until};
use crate::simple::Pending;
use crate::word_builder::WordBuilder;

impl Parser<'_> {
    /// Handles the keyword at the cursor, if the next word is one.
    pub(crate) fn keyword(
        &mut self,
        until: Until,
        ctx: &[Context],
    ) -> Result<Option<Step>, ShellError> {
        let Some((word, end)) = self.peek_plain_word() else {
            return Ok(None);
        };
        let step = match word.as_str() {
            "{" => self.open_brace(end),
            "}" => self.close_brace(end),
            "if" => self.open_if(end),
            "then" | "else" | "elif" => self.if_arm(&word, end),
            "while" | "until" => {
                self.conditional += 1;
                self.open_loops.push(None);
                self.pos = end;
                Step::Next
            }
            "do" | "!" => {
                self.pos = end;
                Step::Next
            }
            "time" => {
                self.pos = end;
                self.skip_time_option();
                Step::Next
            }
            "fi" | "done" => self.close_if_or_loop(&word, end),
            "]]" => {
                self.pos = end;
                Step::Compound
            }
            "esac" if matches!(until, Until::CaseItem) => Step::Return(ListEnd::Esac),
            "esac" => {
                self.pos = end;
                Step::Compound
            }
            "[[" => {
                self.pos = end;
                self.skip_test(ctx)?;
                Step::Compound
            }
            "case" => self.case_keyword(end, ctx)?,
            "for" | "select" => self.open_for(end, ctx)?,
            "function" => {
                self.pos = end;
                self.parse_function_head(ctx)?;
                Step::Next
            }
            _ => return Ok(None),
        };
        Ok(Some(step))
    }

    /// `{` (ending at `end`): opens a group, and the body of the function
    /// whose head was just read, if any.
    fn open_brace(&mut self, end: usize) -> Step {
        if let Some((name, start)) = self.pending_function.take() {
            self.open_functions.push((name, start, self.brace_depth));
        }
        self.brace_depth += 1;
        self.pos = end;
        Step::Next
    }

    /// `}` (ending at `end`): closes a group, and records the function whose
    /// body it ends, if any.
    fn close_brace(&mut self, end: usize) -> Step {
        self.brace_depth = self.brace_depth.saturating_sub(1);
        if self
            .open_functions
            .last()
            .is_some_and(|(_, _, depth)| *depth == self.brace_depth)
            && let Some((name, start, _)) = self.open_functions.pop()
        {
            let end_origin = self.origin(end);
            self.functions.push((name, start, end_origin));
        }
        self.pos = end;
        Step::Compound
    }

    /// `if` (ending at `end`): a conditional, whose span starts here.
    fn open_if(&mut self, end: usize) -> Step {
        self.conditional += 1;
        let start = self.origin(self.pos);
        self.open_ifs.push(IfSpan {
            start,
            ..IfSpan::default()
        });
        self.pos = end;
        Step::Next
    }

    /// `then`, `else` or `elif` (ending at `end`): closes the open `if`'s
    /// current arm and, except for `elif`, opens the next one.
    fn if_arm(&mut self, word: &str, end: usize) -> Step {
        let (here, after) = (self.origin(self.pos), self.origin(end));
        if let Some(open) = self.open_ifs.last_mut() {
            open.close_arm(here);
            if word != "elif" {
                open.open_arm = Some(after);
            }
            open.has_else |= word == "else";
        }
        self.pos = end;
        Step::Next
    }

    /// `fi` or `done` (ending at `end`): ends a conditional, recording the
    /// `if` or the `for` loop it closes.
    fn close_if_or_loop(&mut self, word: &str, end: usize) -> Step {
        self.conditional = self.conditional.saturating_sub(1);
        if word == "fi"
            && let Some(mut open) = self.open_ifs.pop()
        {
            open.close_arm(self.origin(self.pos));
            open.end = self.origin(end);
            self.ifs.push(open);
        }
        if word == "done"
            && let Some(Some(head)) = self.open_loops.pop()
        {
            let end_origin = self.origin(end);
            self.loops.push((head, end_origin));
        }
        self.pos = end;
        Step::Compound
    }

    /// `case` (ending at `end`): reads the whole `case … esac`, conditional
    /// throughout.
    fn case_keyword(&mut self, end: usize, ctx: &[Context]) -> Result<Step, ShellError> {
        self.pos = end;
        self.conditional += 1;
        let read = self.parse_case(ctx);
        self.conditional = self.conditional.saturating_sub(1);
        read?;
        Ok(Step::Compound)
    }

    /// `for` or `select` (ending at `end`): reads the loop's head and opens
    /// the loop, conditional until its `done`.
    fn open_for(&mut self, end: usize, ctx: &[Context]) -> Result<Step, ShellError> {
        self.conditional += 1;
        let start = self.origin(self.pos);
        self.pos = end;
        let head = self.parse_for_head(ctx)?;
        self.open_loops.push(head.map(|(name, values)| LoopHead {
            name,
            values,
            start,
        }));
        Ok(Step::Next)
    }

    /// `(` where a command may start: the `()` of a function definition, an
    /// arithmetic command `(( … ))`, or a subshell. Returns whether a compound
    /// command was read.
    pub(crate) fn open_paren(
        &mut self,
        cmd: &mut Pending,
        ctx: &[Context],
    ) -> Result<bool, ShellError> {
        if !cmd.is_empty() {
            if cmd.is_lone_word() && self.next_nonblank_after(1) == Some(')') {
                // `name ()`: the name is not a command; the body follows.
                let name = cmd.words.first().and_then(|w| w.word.value.clone());
                let start = self.origin(self.pos);
                self.advance(1);
                self.skip_blanks();
                self.advance(1);
                *cmd = Pending::default();
                self.pending_function = name.map(|n| (n, start));
                return Ok(false);
            }
            // `cmd (` is a syntax error; reading the parenthesis as a
            // subshell loses nothing inside it.
            self.finish(cmd, ctx);
        }
        let open = self.pos;
        if self.grammar == Grammar::Bash
            && self.peek_ahead(1) == Some('(')
            && self.arith_closes(self.logical_index(2))
        {
            self.advance(2);
            let mut scratch = WordBuilder::default();
            self.arithmetic_body(open, &mut scratch, ctx)?;
            return Ok(true);
        }
        self.advance(1);
        let mut inner = ctx.to_vec();
        inner.push(Context::Subshell);
        self.parse_list(Until::Paren, &inner)?;
        Ok(true)
    }

    /// `time -p cmd`: the option is the keyword's, not the command's.
    fn skip_time_option(&mut self) {
        self.skip_blanks();
        if let Some((word, end)) = self.peek_plain_word()
            && word == "-p"
        {
            self.pos = end;
        }
    }

    /// Blanks, comments and newlines (and `;` when `semicolons`).
    fn skip_separators(&mut self, semicolons: bool) -> Result<(), ShellError> {
        loop {
            self.skip_blanks();
            match self.peek() {
                Some('#') => self.skip_comment(),
                Some('\n') => self.consume_newline()?,
                Some(';') if semicolons => self.advance(1),
                _ => return Ok(()),
            }
        }
    }

    /// After `[[`: the test expression up to `]]`. Its words may hold
    /// substitutions, whose commands count; `<`, `>`, `(`, `)`, `&&` and
    /// `||` are operators of the test, not redirections or separators.
    fn skip_test(&mut self, ctx: &[Context]) -> Result<(), ShellError> {
        let mut parens = 0usize;
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else {
                return Ok(());
            };
            match c {
                '\n' => self.consume_newline()?,
                // Without `]]` stop at the end of the command rather than
                // swallow the rest of the script.
                ';' => return Ok(()),
                ')' if parens == 0 => return Ok(()),
                ')' => {
                    parens -= 1;
                    self.advance(1);
                }
                '(' => {
                    parens += 1;
                    self.advance(1);
                }
                '<' | '>' | '&' | '|' => self.advance(1),
                _ => {
                    if let Some((word, end)) = self.peek_plain_word()
                        && word == "]]"
                    {
                        self.pos = end;
                        return Ok(());
                    }
                    self.read_word_progress(ctx)?;
                }
            }
        }
    }

    /// After `case`: the subject, `in`, then items `pattern) list ;;` up to
    /// `esac`. Patterns are not commands; the lists are.
    fn parse_case(&mut self, ctx: &[Context]) -> Result<(), ShellError> {
        self.skip_blanks();
        if self.peek().is_some_and(|c| !ends_word(c)) {
            self.read_word_progress(ctx)?;
        }
        self.skip_separators(false)?;
        if let Some((word, end)) = self.peek_plain_word()
            && word == "in"
        {
            self.pos = end;
        }
        loop {
            self.skip_separators(true)?;
            let Some(c) = self.peek() else {
                return Ok(());
            };
            if let Some((word, end)) = self.peek_plain_word()
                && word == "esac"
            {
                self.pos = end;
                return Ok(());
            }
            if c == ')' {
                // Closes an enclosing `(` or `$(`: the case was never closed.
                return Ok(());
            }
            if c == '(' {
                self.advance(1);
            }
            self.skip_patterns(ctx)?;
            match self.parse_list(Until::CaseItem, ctx)? {
                ListEnd::CaseSeparator | ListEnd::Esac => {}
                ListEnd::Eof | ListEnd::Close | ListEnd::StrayClose => return Ok(()),
            }
        }
    }

    /// `pat | pat )` of a case item, through its `)`.
    fn skip_patterns(&mut self, ctx: &[Context]) -> Result<(), ShellError> {
        loop {
            self.skip_blanks();
            match self.peek() {
                None | Some('\n' | ';') => return Ok(()),
                Some(')') => {
                    self.advance(1);
                    return Ok(());
                }
                Some(c) if is_meta(c) => self.advance(1),
                Some(_) => {
                    self.read_word_progress(ctx)?;
                }
            }
        }
    }

    /// After `for`/`select`: `NAME [in WORDS]` or `((init; test; step))`,
    /// up to the separator before `do`. None of it is a command.
    /// `for NAME in WORDS`: the name and the words' values (`for ((…))` and
    /// `for NAME` without `in` give none).
    #[allow(clippy::type_complexity)]
    fn parse_for_head(
        &mut self,
        ctx: &[Context],
    ) -> Result<Option<(String, Vec<Option<String>>)>, ShellError> {
        self.skip_blanks();
        if self.peek() == Some('(') && self.peek_ahead(1) == Some('(') {
            let open = self.pos;
            self.advance(2);
            let mut scratch = WordBuilder::default();
            self.arithmetic_body(open, &mut scratch, ctx)?;
            return Ok(None);
        }
        let mut name = None;
        if self.peek().is_some_and(|c| !ends_word(c)) {
            name = self.read_word_progress(ctx)?.word.value;
        }
        self.skip_separators(false)?;
        let Some((word, end)) = self.peek_plain_word() else {
            return Ok(None);
        };
        if word != "in" {
            return Ok(None);
        }
        self.pos = end;
        let mut values = Vec::new();
        loop {
            self.skip_blanks();
            match self.peek() {
                None | Some('#') => break,
                Some(c) if is_meta(c) => break,
                Some(_) => {
                    let word = self.read_word_progress(ctx)?;
                    // An unquoted expansion may split into any number of
                    // words: the list is not known.
                    values.push(word.word.value);
                }
            }
        }
        Ok(name.map(|n| (n, values)))
    }

    /// After `function`: the name and an optional `()`; the body follows.
    fn parse_function_head(&mut self, ctx: &[Context]) -> Result<(), ShellError> {
        self.skip_blanks();
        let start = self.origin(self.pos);
        if self.peek().is_some_and(|c| !ends_word(c)) {
            let word = self.read_word_progress(ctx)?;
            self.pending_function = word.word.value.map(|n| (n, start));
        }
        self.skip_blanks();
        if self.peek() == Some('(') && self.next_nonblank_after(1) == Some(')') {
            self.advance(1);
            self.skip_blanks();
            self.advance(1);
        }
        Ok(())
    }
}
