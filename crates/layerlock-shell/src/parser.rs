//! The command-list parser: splits text into simple commands at separators,
//! hands keywords to the compound-command readers, and descends into
//! subshells and substitutions.

use crate::command::{Command, Context};
use crate::error::ShellError;
use crate::grammar::Grammar;
use crate::heredoc::Heredocs;
use crate::simple::{Pending, RawCommand};
use crate::source::{LineMap, Source};

/// Deepest nesting of lists, quotes and expansions followed; past it parsing
/// fails rather than exhausting the stack on hostile input.
const MAX_DEPTH: usize = 64;

pub(crate) struct Parser<'s> {
    pub(crate) src: &'s Source,
    pub(crate) lines: &'s LineMap,
    pub(crate) pos: usize,
    pub(crate) depth: usize,
    /// Simple commands read from `src`, in the order they ended.
    pub(crate) commands: Vec<RawCommand>,
    /// Commands already complete, from backquotes parsed as their own source.
    pub(crate) finished: Vec<(usize, Command)>,
    pub(crate) heredocs: Heredocs,
    /// Shell functions: a name waiting for its `{`, the bodies open now
    /// (name, start, brace depth) and those read (name, start, end), as
    /// offsets in the root text.
    pub(crate) pending_function: Option<(String, usize)>,
    pub(crate) open_functions: Vec<(String, usize, usize)>,
    pub(crate) brace_depth: usize,
    pub(crate) functions: Vec<(String, usize, usize)>,
    /// Loops open now, innermost last (a `for` with its variable and words,
    /// `None` for `while`/`until`), and the `for` loops read, as offsets in
    /// the root text.
    pub(crate) open_loops: Vec<Option<LoopHead>>,
    pub(crate) loops: Vec<(LoopHead, usize)>,
    /// `if`s open now, innermost last, and those read, as offsets in the
    /// root text.
    pub(crate) open_ifs: Vec<IfSpan>,
    pub(crate) ifs: Vec<IfSpan>,
    /// How many `if`, `while`, `until`, `for` and `case` the cursor is in:
    /// a command there may run or not.
    pub(crate) conditional: usize,
    /// Bash's or a POSIX shell's reading of `((`.
    pub(crate) grammar: Grammar,
}

/// An `if` as offsets: where it starts and ends, its bodies, the body open
/// now, and whether it has an `else`.
#[derive(Debug, Clone, Default)]
pub(crate) struct IfSpan {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) arms: Vec<(usize, usize)>,
    pub(crate) open_arm: Option<usize>,
    pub(crate) has_else: bool,
}

impl IfSpan {
    /// The body open now ends at `at`.
    pub(crate) fn close_arm(&mut self, at: usize) {
        if let Some(start) = self.open_arm.take() {
            self.arms.push((start, at));
        }
    }
}

/// `for NAME in WORDS`: the name, each word's static value (`None` when
/// computed), and where the loop starts.
#[derive(Debug, Clone)]
pub(crate) struct LoopHead {
    pub(crate) name: String,
    pub(crate) values: Vec<Option<String>>,
    pub(crate) start: usize,
}

/// What ends the list being read.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Until {
    /// End of input.
    End,
    /// The `)` of a subshell.
    Paren,
    /// The `)` of `$(` (or `<(`) opened at `open`; end of input is an error.
    Substitution { open: usize },
    /// `;;`, `;&` or `;;&` ending a `case` item, or its `esac`.
    CaseItem,
}

/// How a list ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListEnd {
    Eof,
    /// The closing `)` was read.
    Close,
    /// A `case` item separator was read.
    CaseSeparator,
    /// `esac` is next, not read.
    Esac,
    /// A `)` belonging to an enclosing construct is next, not read.
    StrayClose,
}

impl<'s> Parser<'s> {
    pub(crate) fn new(src: &'s Source, lines: &'s LineMap, depth: usize, grammar: Grammar) -> Self {
        Self {
            src,
            lines,
            pos: 0,
            depth,
            commands: Vec::new(),
            finished: Vec::new(),
            heredocs: Heredocs::default(),
            pending_function: None,
            open_functions: Vec::new(),
            brace_depth: 0,
            functions: Vec::new(),
            open_loops: Vec::new(),
            loops: Vec::new(),
            open_ifs: Vec::new(),
            ifs: Vec::new(),
            conditional: 0,
            grammar,
        }
    }

    /// Runs `f` one nesting level deeper, failing past [`MAX_DEPTH`].
    pub(crate) fn nested<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, ShellError>,
    ) -> Result<T, ShellError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error_at(self.pos, "nesting too deep"));
        }
        self.depth += 1;
        let result = f(self);
        self.depth -= 1;
        result
    }

    pub(crate) fn parse_list(
        &mut self,
        until: Until,
        ctx: &[Context],
    ) -> Result<ListEnd, ShellError> {
        self.nested(|p| p.list(until, ctx))
    }

    /// Ends the simple command being read; returns its index in `commands`
    /// when it was one.
    pub(crate) fn finish(&mut self, cmd: &mut Pending, ctx: &[Context]) -> Option<usize> {
        self.finish_piped(cmd, ctx, None)
    }

    fn finish_piped(
        &mut self,
        cmd: &mut Pending,
        ctx: &[Context],
        stdin_from: Option<usize>,
    ) -> Option<usize> {
        let mut raw = cmd.take(ctx, stdin_from)?;
        raw.conditional = self.conditional > 0;
        // A command between `name ()` and `{` means no body followed.
        self.pending_function = None;
        self.commands.push(raw);
        Some(self.commands.len() - 1)
    }

    fn list(&mut self, until: Until, ctx: &[Context]) -> Result<ListEnd, ShellError> {
        let mut cmd = Pending::default();
        // After `)`, `fi`, `done`, `}`…, redirections belong to that compound
        // command and start no simple command.
        let mut after_compound = false;
        // The simple command before a `|`, feeding the one being read.
        let mut piped: Option<usize> = None;
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else {
                self.finish_piped(&mut cmd, ctx, piped.take());
                return match until {
                    Until::Substitution { open } => {
                        Err(self.error_at(open, "unterminated command substitution"))
                    }
                    _ => Ok(ListEnd::Eof),
                };
            };
            match c {
                '#' => self.skip_comment(),
                '\n' => {
                    self.finish_piped(&mut cmd, ctx, piped.take());
                    after_compound = false;
                    self.consume_newline()?;
                }
                ';' => {
                    self.finish_piped(&mut cmd, ctx, piped.take());
                    after_compound = false;
                    match self.case_separator_len() {
                        Some(len) => {
                            self.advance(len);
                            if matches!(until, Until::CaseItem) {
                                return Ok(ListEnd::CaseSeparator);
                            }
                        }
                        None => self.advance(1),
                    }
                }
                '&' | '|' if !(c == '&' && self.peek_ahead(1) == Some('>')) => {
                    let index = self.finish_piped(&mut cmd, ctx, piped.take());
                    after_compound = false;
                    let next = self.peek_ahead(1);
                    let doubled = next == Some(c) || (c == '|' && next == Some('&'));
                    if c == '|' && next != Some('|') {
                        piped = index;
                    }
                    self.advance(if doubled { 2 } else { 1 });
                }
                ')' => {
                    self.finish_piped(&mut cmd, ctx, piped.take());
                    match until {
                        Until::Paren | Until::Substitution { .. } => {
                            self.advance(1);
                            return Ok(ListEnd::Close);
                        }
                        Until::CaseItem => return Ok(ListEnd::StrayClose),
                        Until::End => {
                            // Unbalanced: skip it and go on.
                            self.advance(1);
                            after_compound = true;
                        }
                    }
                }
                '(' => {
                    piped = None;
                    after_compound = self.open_paren(&mut cmd, ctx)?;
                }
                _ if self.at_redirect() => {
                    let redirect = self.read_redirect(ctx)?;
                    if !after_compound {
                        cmd.redirect(&redirect);
                    }
                }
                _ => {
                    if cmd.is_empty()
                        && let Some(step) = self.keyword(until, ctx)?
                    {
                        piped = None;
                        match step {
                            Step::Next => after_compound = false,
                            Step::Compound => after_compound = true,
                            Step::Return(end) => return Ok(end),
                        }
                        continue;
                    }
                    after_compound = false;
                    let start = self.pos;
                    if cmd.words.is_empty()
                        && let Some((name, value)) = self.try_assignment(ctx)?
                    {
                        cmd.assignment(name, value, start, self.pos);
                        continue;
                    }
                    let word = self.read_word_progress(ctx)?;
                    cmd.word(word, start, self.pos);
                }
            }
        }
    }

    /// Length of `;;`, `;&` or `;;&` at the cursor.
    fn case_separator_len(&self) -> Option<usize> {
        match (self.peek_ahead(1), self.peek_ahead(2)) {
            (Some(';'), Some('&')) => Some(3),
            (Some(';'), _) | (Some('&'), _) => Some(2),
            _ => None,
        }
    }
}

/// What a keyword leaves the list parser to do.
pub(crate) enum Step {
    /// A command may start next.
    Next,
    /// A compound command just ended.
    Compound,
    /// The list ends here.
    Return(ListEnd),
}
