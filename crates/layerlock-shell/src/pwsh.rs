//! PowerShell text (Azure Pipelines' `pwsh:`, AppVeyor's `ps:`), rewritten
//! line for line into POSIX shell text so that the commands it runs by
//! name (`pip install x`, `python -m pip …`, `& ./ci/setup.ps1`) are found
//! at their lines. Lines that are PowerShell's own language (keywords,
//! assignments, braces, comments) become blank lines: their commands are
//! not read, which is a known gap, not an error.

/// Keywords that open PowerShell statements rather than commands.
const KEYWORDS: &[&str] = &[
    "if", "elseif", "else", "foreach", "for", "while", "do", "until", "switch", "try", "catch",
    "finally", "function", "filter", "param", "return", "throw", "trap", "break", "continue",
    "begin", "process", "end", "class", "enum", "exit",
];

/// The POSIX text of a PowerShell text: the same number of lines.
pub(crate) fn to_posix(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_block_comment = false;
    let mut continued = false;
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body.strip_suffix('\r').unwrap_or(body), "\n"),
            None => (line, ""),
        };
        let trimmed = body.trim_start();
        if in_block_comment || trimmed.starts_with("<#") {
            in_block_comment = !body.contains("#>") || trimmed == "<#";
            out.push_str(end);
            continue;
        }
        let indent = body.len() - trimmed.len();
        // The call operator `& x` and dot-sourcing `. x` run `x`.
        let command = trimmed
            .strip_prefix('&')
            .or_else(|| trimmed.strip_prefix(". "))
            .unwrap_or(trimmed)
            .trim_start();
        let first = command
            .split(|c: char| c.is_whitespace() || c == '(' || c == '{')
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let statement = KEYWORDS.contains(&first.as_str())
            || command.starts_with(['$', '[', '{', '}', '(', '@', '#', '\'', '"'])
            || command.is_empty();
        if statement && !continued {
            out.push_str(end);
            continue;
        }
        out.push_str(&body[..indent]);
        for _ in 0..trimmed.len() - command.len() {
            out.push(' ');
        }
        continued = words(command, &mut out);
        out.push_str(end);
    }
    out
}

/// A command line's words: quotes as they are, `$env:X` as `${X}`, the
/// backtick escape, braces and parentheses as blanks. Returns whether the
/// line ends in a backtick (continued).
fn words(command: &str, out: &mut String) -> bool {
    let chars: Vec<char> = command.chars().collect();
    let mut quote: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match (c, quote) {
            ('`', _) if i == chars.len() => {
                out.push('\\');
                return true;
            }
            ('`', _) => {
                if let Some(&n) = chars.get(i) {
                    out.push('\\');
                    out.push(n);
                    i += 1;
                }
            }
            ('\'' | '"', None) => {
                quote = Some(c);
                out.push(c);
            }
            (q, Some(open)) if q == open => {
                quote = None;
                out.push(c);
            }
            ('$', Some('\'')) => out.push('$'),
            ('$', _) => {
                let rest: String = chars[i..].iter().take(4).collect();
                if rest.eq_ignore_ascii_case("env:") {
                    i += 4;
                    let end = (i..chars.len())
                        .find(|&k| !(chars[k].is_ascii_alphanumeric() || chars[k] == '_'))
                        .unwrap_or(chars.len());
                    let name: String = chars[i..end].iter().collect();
                    out.push_str("${");
                    out.push_str(if name.is_empty() {
                        "PWSH_UNKNOWN"
                    } else {
                        &name
                    });
                    out.push('}');
                    i = end;
                } else {
                    out.push('$');
                }
            }
            ('\\', _) => out.push('/'),
            (_, Some(_)) => out.push(c),
            ('{' | '}' | '(' | ')' | '@', None) => out.push(' '),
            _ => out.push(c),
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::{Grammar, parse_as};

    #[test]
    fn commands_are_found_at_their_lines_and_statements_are_skipped() {
        let text = "$ErrorActionPreference = 'Stop'\nif ($IsWindows) {\n  python -m pip install -r requirements.txt\n}\n# pip install nothing\n& ./ci/setup.ps1 $env:PY_VER\n";
        let script = parse_as(text, Grammar::Pwsh).unwrap();
        let got: Vec<(usize, usize, String)> = script
            .commands
            .iter()
            .map(|c| {
                let words: Vec<String> = c.words.iter().map(|w| w.raw.clone()).collect();
                (c.line, c.column, words.join(" "))
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    3,
                    3,
                    "python -m pip install -r requirements.txt".to_string()
                ),
                (6, 3, "./ci/setup.ps1 ${PY_VER}".to_string())
            ]
        );
    }

    #[test]
    fn odd_text_never_panics() {
        for text in ["`", "$env:", "<#", "<# x", "'", "\"", "& ", "$", "{`"] {
            let _ = parse_as(text, Grammar::Pwsh);
        }
    }
}
