//! The entry point: parses a text, attaches heredoc bodies to their
//! commands, parses the scripts run by `bash -c` strings and by heredocs fed
//! to a shell, and lists every command in source order.

use crate::command::{Command, Context, Function, If, Loop, Script};
use crate::error::ShellError;
use crate::grammar::Grammar;
use crate::heredoc::HeredocBody;
use crate::parser::{IfSpan, LoopHead, Parser, Until};
use crate::shell_invocation::{ShellInput, shell_input};
use crate::simple::RawCommand;
use crate::source::{LineMap, Source};
use crate::word_builder::RawWord;

/// Parses shell text into every simple command it holds. Tolerant of odd
/// but valid-enough text; fails only on an unterminated quote, substitution,
/// expansion or heredoc (or absurd nesting).
pub fn parse(text: &str) -> Result<Script, ShellError> {
    parse_as(text, Grammar::Bash)
}

/// [`parse`], as the shell of `grammar` reads the text (a POSIX shell's
/// `((` opens two subshells). Shell strings inside it (`sh -c '…'`) are
/// read with the grammar of the shell they are given to.
pub fn parse_as(text: &str, grammar: Grammar) -> Result<Script, ShellError> {
    // Windows shells are read through the POSIX text they come to, line
    // for line.
    let translated;
    let (text, grammar) = match grammar {
        Grammar::Cmd => {
            translated = crate::cmd::to_posix(text);
            (translated.as_str(), Grammar::Posix)
        }
        Grammar::Pwsh => {
            translated = crate::pwsh::to_posix(text);
            (translated.as_str(), Grammar::Posix)
        }
        other => (text, other),
    };
    let lines = LineMap::new(text);
    let src = Source::root(text);
    let mut functions = Vec::new();
    let mut loops = Vec::new();
    let mut ifs = Vec::new();
    let mut found = run(
        &src,
        &lines,
        (0, grammar),
        Some((&mut functions, &mut loops, &mut ifs)),
        |parser| parser.parse_list(Until::End, &[]).map(|_| ()),
    )?;
    loops.sort_by_key(|(head, _): &(LoopHead, usize)| head.start);
    ifs.sort_by_key(|span: &IfSpan| span.start);
    // A substitution's commands end before the command holding them, and
    // nested scripts are parsed last: order by where each command starts.
    found.sort_by_key(|(origin, _)| *origin);
    functions.sort_by_key(|(_, start, _)| *start);
    Ok(Script {
        commands: found.into_iter().map(|(_, command)| command).collect(),
        functions: functions
            .into_iter()
            .map(|(name, start, end)| Function {
                name,
                start: lines.position(start),
                end: lines.position(end),
            })
            .collect(),
        loops: loops
            .into_iter()
            .map(|(head, end)| Loop {
                name: head.name,
                values: head.values,
                start: lines.position(head.start),
                end: lines.position(end),
            })
            .collect(),
        ifs: ifs
            .into_iter()
            .map(|span| If {
                start: lines.position(span.start),
                end: lines.position(span.end),
                arms: span
                    .arms
                    .iter()
                    .map(|(s, e)| (lines.position(*s), lines.position(*e)))
                    .collect(),
                has_else: span.has_else,
            })
            .collect(),
    })
}

/// Where the root text's functions and loops are written.
type Spans<'a> = (
    &'a mut Vec<(String, usize, usize)>,
    &'a mut Vec<(LoopHead, usize)>,
    &'a mut Vec<IfSpan>,
);

/// Every command of `src` (nested ones included) with its root offset.
pub(crate) fn parse_source(
    src: &Source,
    lines: &LineMap,
    ctx: &[Context],
    depth: usize,
    grammar: Grammar,
) -> Result<Vec<(usize, Command)>, ShellError> {
    run(src, lines, (depth, grammar), None, |parser| {
        parser.parse_list(Until::End, ctx).map(|_| ())
    })
}

/// The commands of the substitutions in an unquoted heredoc body.
fn parse_heredoc_text(
    src: &Source,
    lines: &LineMap,
    ctx: &[Context],
    depth: usize,
    grammar: Grammar,
) -> Result<Vec<(usize, Command)>, ShellError> {
    run(src, lines, (depth, grammar), None, |parser| {
        parser.scan_expansions(ctx)
    })
}

/// Reads `src` at a nesting depth, with a grammar.
fn run(
    src: &Source,
    lines: &LineMap,
    (depth, grammar): (usize, Grammar),
    spans_out: Option<Spans<'_>>,
    read: impl FnOnce(&mut Parser<'_>) -> Result<(), ShellError>,
) -> Result<Vec<(usize, Command)>, ShellError> {
    let mut parser = Parser::new(src, lines, depth, grammar);
    read(&mut parser)?;
    parser.check_heredocs_closed()?;
    let Parser {
        commands,
        mut finished,
        heredocs,
        functions,
        loops,
        ifs,
        ..
    } = parser;
    if let Some((functions_out, loops_out, ifs_out)) = spans_out {
        *functions_out = functions;
        *loops_out = loops;
        *ifs_out = ifs;
    }
    let slots = heredocs.into_bodies();
    let bodies: Vec<Option<&HeredocBody>> = commands
        .iter()
        .map(|raw| raw.heredoc.and_then(|slot| slots.get(slot)?.as_ref()))
        .collect();
    // `cat <<EOF | bash`: the heredoc given to `cat` is the shell's script.
    let mut piped_script: Vec<Option<&HeredocBody>> = vec![None; commands.len()];
    let mut runs_in_shell = vec![false; commands.len()];
    for (i, raw) in commands.iter().enumerate() {
        let Some(from) = raw.stdin_from else { continue };
        let (Some(feeder), Some(Some(body))) = (commands.get(from), bodies.get(from)) else {
            continue;
        };
        if bodies.get(i).copied().flatten().is_none()
            && is_plain_cat(&feeder.words)
            && matches!(shell_input(&raw.words), Some(ShellInput::Stdin))
        {
            piped_script[i] = Some(body);
            runs_in_shell[from] = true;
        }
    }
    // Any command fed by `cat <<EOF |` reads that body on standard input
    // (`cat <<EOF | docker build -f - .`).
    let cat_fed: Vec<Option<&HeredocBody>> = commands
        .iter()
        .map(|raw| {
            let from = raw.stdin_from?;
            let feeder = commands.get(from)?;
            is_plain_cat(&feeder.words).then(|| bodies.get(from).copied().flatten())?
        })
        .collect();
    let mut assembler = Assembler {
        src,
        lines,
        depth,
        grammar,
        out: &mut finished,
    };
    for (i, raw) in commands.iter().enumerate() {
        let own = bodies.get(i).copied().flatten();
        let piped = piped_script.get(i).copied().flatten();
        let fed_to_shell = runs_in_shell.get(i).copied().unwrap_or(false);
        let stdin = own.or(cat_fed.get(i).copied().flatten());
        assembler.assemble(raw, own, piped, fed_to_shell, stdin);
    }
    Ok(finished)
}

/// `cat` or `cat -`: prints its standard input (a heredoc) unchanged.
fn is_plain_cat(words: &[RawWord]) -> bool {
    let values: Vec<Option<&str>> = words.iter().map(|w| w.word.value.as_deref()).collect();
    matches!(values.as_slice(), [Some("cat")] | [Some("cat"), Some("-")])
}

struct Assembler<'a> {
    src: &'a Source,
    lines: &'a LineMap,
    depth: usize,
    grammar: Grammar,
    out: &'a mut Vec<(usize, Command)>,
}

impl Assembler<'_> {
    /// Adds the [`Command`] for `raw`, then the commands of the script it
    /// runs through a shell (its `-c` string, its heredoc or `piped`, a
    /// heredoc `cat` pipes into it), or else those of the substitutions in
    /// its unquoted heredoc — unless `fed_to_shell`, when the shell reading
    /// the body reports them.
    fn assemble(
        &mut self,
        raw: &RawCommand,
        own: Option<&HeredocBody>,
        piped: Option<&HeredocBody>,
        fed_to_shell: bool,
        stdin: Option<&HeredocBody>,
    ) {
        let origin = self.src.origin(raw.start);
        let (line, column) = self.lines.position(origin);
        let nested = match shell_input(&raw.words) {
            Some(ShellInput::String(word)) => word.script().map(|(chars, origins)| {
                let script = Source::nested(chars.to_vec(), origins.to_vec(), origin);
                (Context::ShellC, script)
            }),
            Some(ShellInput::Stdin) => own.or(piped).map(|body| {
                let script = Source::nested(body.chars.clone(), body.origins.clone(), origin);
                (Context::HeredocShell, script)
            }),
            None => None,
        };
        let body_is_script = nested
            .as_ref()
            .is_some_and(|(kind, _)| *kind == Context::HeredocShell && own.is_some());
        let stdin_line = stdin
            .and_then(|body| body.origins.first())
            .map(|o| self.lines.position(*o).0);
        let words = raw
            .words
            .iter()
            .map(|w| {
                let mut word = w.word.clone();
                if let Some(o) = w.first_origin() {
                    (word.line, word.column) = self.lines.position(o);
                } else {
                    (word.line, word.column) = (line, column);
                }
                word
            })
            .collect();
        self.out.push((
            origin,
            Command {
                words,
                assignments: raw
                    .assignments
                    .iter()
                    .map(|(name, value)| (name.clone(), value.word.clone()))
                    .collect(),
                line,
                column,
                text: one_line(self.src.slice(raw.start, raw.end)),
                heredoc: own.map(|body| body.chars.iter().collect()),
                stdin: stdin.map(|body| body.chars.iter().collect()),
                stdin_line,
                stdout: raw.stdout.clone(),
                context: raw.context.clone(),
                conditional: raw.conditional,
            },
        ));
        // A broken inner script does not make the outer text invalid: keep
        // what the outer parse found and skip the inner commands.
        if let Some((kind, script)) = nested {
            let mut ctx = raw.context.clone();
            ctx.push(kind);
            // `sh -c '…'` is read as sh reads it, whatever reads the outer
            // text; a heredoc fed to `bash` as bash reads it.
            let grammar = raw
                .words
                .iter()
                .find_map(|w| Grammar::of_program(w.word.value.as_deref()?))
                .unwrap_or(self.grammar);
            if let Ok(found) = parse_source(&script, self.lines, &ctx, self.depth + 1, grammar) {
                self.out.extend(found);
            }
        }
        if let Some(body) = own
            && body.expands
            && !body_is_script
            && !fed_to_shell
        {
            let text = Source::nested(body.chars.clone(), body.origins.clone(), origin);
            let found = parse_heredoc_text(
                &text,
                self.lines,
                &raw.context,
                self.depth + 1,
                self.grammar,
            );
            if let Ok(found) = found {
                self.out.extend(found);
            }
        }
    }
}

/// Source text on one line: continuations removed, newlines made spaces.
fn one_line(chars: &[char]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let next = chars.get(i + 1).copied();
        match c {
            '\\' if next == Some('\n') => i += 1,
            '\r' if next == Some('\n') => {}
            '\n' => out.push(' '),
            _ => out.push(c),
        }
        i += 1;
    }
    out.trim().to_string()
}
