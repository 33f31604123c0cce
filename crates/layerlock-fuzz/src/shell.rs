//! The `shell` target: shell text (scripts, `run:` blocks, `RUN` lines)
//! read by layerlock-shell.

use std::collections::BTreeMap;
use std::hint::black_box;

use layerlock_shell::{Grammar, Script, parse, parse_as, shell_run};

pub fn shell(data: &[u8]) {
    match parse(&crate::text(data)) {
        Ok(script) => use_script(&script),
        Err(error) => crate::render_error(&error),
    }
}

/// Batch and PowerShell text, read through the POSIX text each is
/// rewritten to.
pub fn cmd(data: &[u8]) {
    let text = crate::text(data);
    for grammar in [Grammar::Cmd, Grammar::Pwsh] {
        match parse_as(&text, grammar) {
            Ok(script) => use_script(&script),
            Err(error) => crate::render_error(&error),
        }
    }
}

/// Everything the walker asks of a parsed script: argv values, expansions
/// against known variables, whether a command starts a shell, and which
/// function body holds it.
pub(crate) fn use_script(script: &Script) {
    let vars = BTreeMap::from([
        ("HOME".to_string(), "/nonexistent-home".to_string()),
        ("PWD".to_string(), "/workspace".to_string()),
    ]);
    for command in &script.commands {
        black_box(command.program());
        for word in &command.words {
            black_box(word.leading_variable());
            black_box(word.is_all_arguments());
            black_box(word.expand(&vars));
        }
        for (name, word) in &command.assignments {
            black_box((name, word.expand(&vars)));
        }
        let values: Vec<Option<&str>> = command
            .words
            .iter()
            .map(|word| word.value.as_deref())
            .collect();
        black_box(shell_run(&values));
        black_box(command.stdout.as_ref().map(|word| word.expand(&vars)));
        black_box((&command.heredoc, &command.stdin, command.stdin_line));
        black_box((&command.text, &command.context, command.conditional));
        for function in &script.functions {
            black_box(function.contains(command.line, command.column));
        }
    }
}
