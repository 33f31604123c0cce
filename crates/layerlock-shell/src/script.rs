//! The entry point: parses a text, attaches heredoc bodies to their
//! commands, parses the scripts run by `bash -c` strings and by heredocs fed
//! to a shell, and lists every command in source order.

use crate::command::{Command, Context, Script};
use crate::error::ShellError;
use crate::heredoc::HeredocBody;
use crate::parser::{Parser, Until};
use crate::shell_invocation::{ShellInput, shell_input};
use crate::simple::RawCommand;
use crate::source::{LineMap, Source};

/// Parses shell text into every simple command it holds. Tolerant of odd
/// but valid-enough text; fails only on an unterminated quote, substitution,
/// expansion or heredoc (or absurd nesting).
pub fn parse(text: &str) -> Result<Script, ShellError> {
    let lines = LineMap::new(text);
    let src = Source::root(text);
    let mut found = parse_source(&src, &lines, &[], 0)?;
    // A substitution's commands end before the command holding them, and
    // nested scripts are parsed last: order by where each command starts.
    found.sort_by_key(|(origin, _)| *origin);
    Ok(Script {
        commands: found.into_iter().map(|(_, command)| command).collect(),
    })
}

/// Every command of `src` (nested ones included) with its root offset.
pub(crate) fn parse_source(
    src: &Source,
    lines: &LineMap,
    ctx: &[Context],
    depth: usize,
) -> Result<Vec<(usize, Command)>, ShellError> {
    let mut parser = Parser::new(src, lines, depth);
    parser.parse_list(Until::End, ctx)?;
    parser.check_heredocs_closed()?;
    let Parser {
        commands,
        mut finished,
        heredocs,
        ..
    } = parser;
    let mut bodies = heredocs.into_bodies();
    for raw in commands {
        let body = raw
            .heredoc
            .and_then(|slot| bodies.get_mut(slot))
            .and_then(Option::take);
        assemble(src, lines, raw, body, depth, &mut finished);
    }
    Ok(finished)
}

/// Turns a parsed command into a [`Command`], followed by the commands of
/// the script it runs through a shell, if any.
fn assemble(
    src: &Source,
    lines: &LineMap,
    raw: RawCommand,
    body: Option<HeredocBody>,
    depth: usize,
    out: &mut Vec<(usize, Command)>,
) {
    let origin = src.origin(raw.start);
    let (line, column) = lines.position(origin);
    let nested = match shell_input(&raw.words) {
        Some(ShellInput::String(word)) => word.script().map(|(chars, origins)| {
            let fallback = origins.first().copied().unwrap_or(origin);
            let script = Source::nested(chars.to_vec(), origins.to_vec(), fallback);
            (Context::ShellC, script)
        }),
        Some(ShellInput::Stdin) => body.as_ref().map(|body| {
            let script = Source::nested(body.chars.clone(), body.origins.clone(), origin);
            (Context::HeredocShell, script)
        }),
        None => None,
    };
    let command = Command {
        words: raw.words.into_iter().map(|w| w.word).collect(),
        assignments: raw
            .assignments
            .into_iter()
            .map(|(name, value)| (name, value.word))
            .collect(),
        line,
        column,
        text: one_line(src.slice(raw.start, raw.end)),
        heredoc: body.map(|body| body.chars.into_iter().collect()),
        context: raw.context.clone(),
    };
    out.push((origin, command));
    if let Some((kind, script)) = nested {
        let mut ctx = raw.context;
        ctx.push(kind);
        // A broken inner script does not make the outer text invalid: keep
        // what the outer parse found and skip the inner commands.
        if let Ok(found) = parse_source(&script, lines, &ctx, depth + 1) {
            out.extend(found);
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
