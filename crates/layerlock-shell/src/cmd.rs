//! Windows `cmd.exe` batch text, rewritten line for line into POSIX shell
//! text that says the same commands, so that the one shell reader finds
//! them at their lines. Not an interpreter: `if` conditions and `for`
//! headers are dropped (both branches, and the loop body once, are read),
//! `rem`/`::` lines and labels become blank lines, `%VAR%` becomes
//! `${VAR}`, `call x.bat` and a bare `x.bat` become `./x.bat`, `&` runs the
//! next command, `^` escapes and continues lines. cmd has no single quotes,
//! so an apostrophe (`rem it's`) never opens a string that would swallow
//! the following lines.

/// The POSIX text of a batch text: the same number of lines, each command
/// on its own line (columns shift where a character needs escaping).
pub(crate) fn to_posix(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut continued = false;
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body.strip_suffix('\r').unwrap_or(body), "\n"),
            None => (line, ""),
        };
        let chars: Vec<char> = body.chars().collect();
        continued = Line {
            chars: &chars,
            out: &mut out,
        }
        .translate(continued);
        out.push_str(end);
    }
    out
}

struct Line<'a> {
    chars: &'a [char],
    out: &'a mut String,
}

/// Words that start a command and are dropped, with what follows them up
/// to the command they guard (`if`, `for`) or with nothing (`else`).
fn lower_word(chars: &[char], at: usize) -> (String, usize) {
    let end = (at..chars.len())
        .find(|&i| chars[i].is_whitespace() || matches!(chars[i], '(' | ')' | '&' | '|' | '"'))
        .unwrap_or(chars.len());
    (
        chars[at..end]
            .iter()
            .collect::<String>()
            .to_ascii_lowercase(),
        end,
    )
}

impl Line<'_> {
    fn blank(&mut self, from: usize, to: usize) {
        for _ in from..to {
            self.out.push(' ');
        }
    }

    /// Translate the line; returns whether it continues on the next (a
    /// last `^`).
    fn translate(&mut self, continued: bool) -> bool {
        let mut at = 0;
        let mut start = !continued;
        let mut quoted = false;
        while at < self.chars.len() {
            if start && !quoted {
                match self.command_start(at) {
                    Start::Rest => return false,
                    Start::At(next) => {
                        at = next;
                        start = false;
                        continue;
                    }
                }
            }
            let c = self.chars[at];
            let next = self.chars.get(at + 1).copied();
            at += 1;
            match c {
                '^' if !quoted => match next {
                    None => {
                        self.out.push('\\');
                        return true;
                    }
                    Some(n) => {
                        at += 1;
                        if !n.is_alphanumeric() {
                            self.out.push('\\');
                        }
                        self.out.push(n);
                    }
                },
                '"' => {
                    quoted = !quoted;
                    self.out.push('"');
                }
                '%' => at = self.percent(at),
                '!' => at = self.delayed(at),
                '$' | '`' => {
                    self.out.push('\\');
                    self.out.push(c);
                }
                '\\' => self.out.push('/'),
                _ if quoted => self.out.push(c),
                '&' if next == Some('&') => {
                    at += 1;
                    self.out.push_str("&&");
                    start = true;
                }
                '&' => {
                    self.out.push(';');
                    start = true;
                }
                '|' if next == Some('|') => {
                    at += 1;
                    self.out.push_str("||");
                    start = true;
                }
                '|' => {
                    self.out.push('|');
                    start = true;
                }
                '(' | ')' | ';' => self.out.push(' '),
                '\'' | '#' | '{' | '}' => {
                    self.out.push('\\');
                    self.out.push(c);
                }
                _ => self.out.push(c),
            }
        }
        false
    }

    /// Where a command starts: drop what cmd reads as no command (`@`,
    /// block parentheses, `rem`, labels, `if` and `for` headers, `else`,
    /// `call`) and rewrite what reads differently (`set`, `pushd`, a
    /// batch file run by its name).
    fn command_start(&mut self, mut at: usize) -> Start {
        loop {
            while at < self.chars.len()
                && (self.chars[at].is_whitespace() || matches!(self.chars[at], '@' | '(' | ')'))
            {
                self.out.push(' ');
                at += 1;
            }
            if at >= self.chars.len() {
                return Start::At(at);
            }
            if self.chars[at] == ':' {
                // `::` comments and `:label` lines.
                self.blank(at, self.chars.len());
                return Start::Rest;
            }
            let (word, end) = lower_word(self.chars, at);
            match word.as_str() {
                "rem" => {
                    self.blank(at, self.chars.len());
                    return Start::Rest;
                }
                "else" => {
                    self.blank(at, end);
                    at = end;
                }
                "call" => {
                    let (target, _) = lower_word(self.chars, skip_space(self.chars, end));
                    if target.starts_with(':') {
                        self.blank(at, self.chars.len());
                        return Start::Rest;
                    }
                    self.blank(at, end);
                    at = end;
                }
                "if" => {
                    let after = if_condition(self.chars, end);
                    self.blank(at, after);
                    at = after;
                }
                "for" => match find_do(self.chars, end) {
                    Some(after) => {
                        self.blank(at, after);
                        at = after;
                    }
                    None => {
                        self.blank(at, self.chars.len());
                        return Start::Rest;
                    }
                },
                "pushd" => {
                    self.out.push_str("cd   ");
                    return Start::At(end);
                }
                "cd" | "chdir" => {
                    self.out.push_str("cd");
                    self.blank(2, end - at);
                    let arg = skip_space(self.chars, end);
                    let (flag, flag_end) = lower_word(self.chars, arg);
                    if flag == "/d" {
                        self.blank(end, flag_end);
                        return Start::At(flag_end);
                    }
                    return Start::At(end);
                }
                "set" => return self.set(at, end),
                _ => return Start::At(self.batch_call(at, end)),
            }
        }
    }

    /// A command named by a batch file's relative path runs that file
    /// (cmd looks in the working directory first): written `./x.bat` so
    /// the walk follows it.
    fn batch_call(&mut self, at: usize, end: usize) -> usize {
        let word: String = self.chars[at..end].iter().collect();
        let lower = word.to_ascii_lowercase();
        let relative = !word.starts_with(['/', '\\', '%', '.', '"']) && !word.contains(':');
        if relative && (lower.ends_with(".bat") || lower.ends_with(".cmd")) {
            // Over the blanks `call ` left, so columns stay where they were.
            if self.out.ends_with("  ") {
                self.out.truncate(self.out.len() - 2);
            }
            self.out.push_str("./");
        }
        at
    }

    /// `set NAME=value` and `set "NAME=value"`: an assignment of the value
    /// up to the line's end (or the next `&`); `set /a`, `set /p` and a
    /// bare `set` are dropped.
    fn set(&mut self, at: usize, end: usize) -> Start {
        let arg = skip_space(self.chars, end);
        let quoted = self.chars.get(arg) == Some(&'"');
        let from = arg + usize::from(quoted);
        let stop = (from..self.chars.len())
            .find(|&i| {
                (!quoted && matches!(self.chars[i], '&' | '|')) || (quoted && self.chars[i] == '"')
            })
            .unwrap_or(self.chars.len());
        let eq = (from..stop).find(|&i| self.chars[i] == '=');
        let name: String = self.chars[from..eq.unwrap_or(from)].iter().collect();
        let valid = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let Some(eq) = eq.filter(|_| valid) else {
            self.blank(at, stop);
            return Start::At(stop);
        };
        self.blank(at, from);
        self.out.push_str(&name);
        self.out.push_str("=\"");
        let mut i = eq + 1;
        while i < stop {
            let c = self.chars[i];
            i += 1;
            match c {
                '%' => i = self.percent(i),
                '$' | '`' | '"' => {
                    self.out.push('\\');
                    self.out.push(c);
                }
                '\\' => self.out.push('/'),
                _ => self.out.push(c),
            }
        }
        self.out.push('"');
        // The closing quote of `set "X=v"` is read as part of it.
        let after = if quoted && stop < self.chars.len() {
            stop + 1
        } else {
            stop
        };
        Start::At(after)
    }

    /// After a `%` (at `at`): `%%i` and `%1` (loop and call arguments),
    /// `%*`, `%~dp0` (the script's folder), `%NAME%` and `%NAME:a=b%`; a
    /// lone `%` stays.
    fn percent(&mut self, at: usize) -> usize {
        let chars = self.chars;
        match chars.get(at) {
            Some('%') => {
                self.out.push('$');
                at + 1
            }
            Some('*') => {
                self.out.push_str("$@");
                at + 1
            }
            Some(c) if c.is_ascii_digit() => {
                self.out.push('$');
                self.out.push(*c);
                at + 1
            }
            Some('~') => {
                let end = (at + 1..chars.len())
                    .find(|&i| chars[i].is_ascii_digit())
                    .filter(|&i| i - at <= 8);
                match end {
                    Some(end) if chars[at + 1..end].contains(&'p') => {
                        self.out.push_str("${0%/*}/");
                        end + 1
                    }
                    Some(end) => {
                        self.out.push('$');
                        self.out.push(chars[end]);
                        end + 1
                    }
                    None => {
                        self.out.push('%');
                        at
                    }
                }
            }
            _ => match (at..chars.len()).take(128).find(|&i| chars[i] == '%') {
                Some(close) if close > at => {
                    let inner: String = chars[at..close].iter().collect();
                    let name = inner.split(':').next().unwrap_or("");
                    self.variable(name);
                    close + 1
                }
                _ => {
                    self.out.push('%');
                    at
                }
            },
        }
    }

    /// `!NAME!` (delayed expansion), else a literal `!`.
    fn delayed(&mut self, at: usize) -> usize {
        let chars = self.chars;
        let close = (at..chars.len()).take(128).find(|&i| chars[i] == '!');
        match close {
            Some(close)
                if close > at
                    && chars[at..close]
                        .iter()
                        .all(|c| c.is_ascii_alphanumeric() || *c == '_') =>
            {
                let name: String = chars[at..close].iter().collect();
                self.variable(&name);
                close + 1
            }
            _ => {
                self.out.push('!');
                at
            }
        }
    }

    /// A variable by its cmd name; one no shell name can hold reads as
    /// an unknown value.
    fn variable(&mut self, name: &str) {
        let valid = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        self.out.push_str("${");
        self.out.push_str(if valid { name } else { "CMD_UNKNOWN" });
        self.out.push('}');
    }
}

enum Start {
    /// The command's first word is at this index.
    At(usize),
    /// The rest of the line is no command.
    Rest,
}

fn skip_space(chars: &[char], mut at: usize) -> usize {
    while at < chars.len() && chars[at].is_whitespace() {
        at += 1;
    }
    at
}

/// After `if`: the index where its command starts. `/i`, `not`, then
/// `exist X`, `defined X`, `errorlevel N`, `cmdextversion N`, or a
/// comparison `A==B` / `A op B`.
fn if_condition(chars: &[char], mut at: usize) -> usize {
    let word = |at: usize| lower_word(chars, skip_space(chars, at));
    // A quoted operand is one word, spaces and all.
    let operand = |at: usize| {
        let at = skip_space(chars, at);
        if chars.get(at) == Some(&'"') {
            let close = (at + 1..chars.len()).find(|&i| chars[i] == '"');
            let end = close.map_or(chars.len(), |c| c + 1);
            // `"a"=="b"`: the comparison goes on past the quote.
            let rest = lower_word(chars, end).1;
            return rest.max(end);
        }
        word(at).1
    };
    for flag in ["/i", "not"] {
        let (w, end) = word(at);
        if w == flag {
            at = end;
        }
    }
    let (w, end) = word(at);
    match w.as_str() {
        "exist" | "defined" | "errorlevel" | "cmdextversion" => operand(end),
        _ => {
            let first = operand(at);
            let between: String = chars[at..first].iter().collect();
            if between.contains("==") && !between.trim_end().ends_with("==") {
                return first;
            }
            // `A == B` or `A EQU B`: operator and second operand.
            let (_, op_end) = word(first);
            operand(op_end)
        }
    }
}

/// After `for`: the index after its ` do `, outside quotes and
/// parentheses.
fn find_do(chars: &[char], at: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut quoted = false;
    let mut i = at;
    while i < chars.len() {
        match chars[i] {
            '"' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth = depth.saturating_sub(1),
            c if !quoted && depth == 0 && c.is_whitespace() => {
                let (word, end) = lower_word(chars, skip_space(chars, i));
                if word == "do" {
                    return Some(end);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::to_posix;
    use crate::{Grammar, parse_as};

    fn commands(text: &str) -> Vec<(usize, usize, String)> {
        parse_as(text, Grammar::Cmd)
            .unwrap()
            .commands
            .iter()
            .filter(|c| !c.words.is_empty())
            .map(|c| {
                let words: Vec<String> = c
                    .words
                    .iter()
                    .map(|w| w.value.clone().unwrap_or_else(|| w.raw.clone()))
                    .collect();
                (c.line, c.column, words.join(" "))
            })
            .collect()
    }

    #[test]
    fn an_apostrophe_in_a_rem_line_does_not_swallow_the_next_line() {
        let text = "@echo off\r\nrem it's the setup\r\n:: and it's this\r\npip install x\r\n";
        assert_eq!(
            commands(text),
            [
                (1, 2, "echo off".to_string()),
                (4, 1, "pip install x".to_string())
            ]
        );
    }

    #[test]
    fn separators_calls_and_variables() {
        let text = "set PKG=foo bar\ncd /d ci && call install.bat %PKG%\nif exist req.txt (\n  python -m pip install -r req.txt & echo it's done\n) else (\n  call :sub\n)\n";
        let got = commands(text);
        assert_eq!(got[0], (2, 1, "cd ci".to_string()));
        assert_eq!(got[1], (2, 16, "./install.bat ${PKG}".to_string()));
        assert_eq!(
            got[2],
            (4, 3, "python -m pip install -r req.txt".to_string())
        );
        assert_eq!(got[3].2, "echo it's done");
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(to_posix(text).starts_with("    PKG=\"foo bar\"\n"));
    }

    #[test]
    fn a_caret_continues_the_line_and_for_loops_run_their_body() {
        let text = "pip install ^\n  x\nfor %%i in (a b) do pip install %%i\n";
        let got = commands(text);
        assert_eq!(got[0], (1, 1, "pip install x".to_string()));
        assert_eq!(got[1].0, 3);
        assert!(got[1].2.starts_with("pip install"), "{got:?}");
    }

    #[test]
    fn odd_text_never_panics() {
        for text in [
            "%",
            "%~",
            "^",
            "\"",
            "if",
            "if not",
            "for",
            "set",
            "set \"",
            "call",
            "!x",
            "%~dp",
            "if \"a\"==\"b\" echo",
            "set /a x=1",
            "(((",
            "^^^",
        ] {
            let _ = parse_as(text, Grammar::Cmd);
        }
    }
}
