//! What reaches the terminal besides data: a progress spinner (only on a
//! terminal), warnings, and errors with their causes and `hint:` lines.

use std::io::IsTerminal;
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Writes data to stdout, credentials in URLs removed and control
/// characters escaped ([`inert_data`]). When the reader has gone away (a closed pipe)
/// there is nobody left to tell: exit at once, quietly, with the status of a
/// process ended by SIGPIPE (141), as `grep` does. Any
/// other write error is reported and the exit code says the job failed.
pub fn write_stdout(args: std::fmt::Arguments<'_>, newline: bool) {
    use std::io::Write;
    // Data never carries a credential either (a URL's user-info in a
    // finding, a diff of a hand-edited lock).
    let text = layerlock_index::redact_text(&args.to_string());
    let text = inert_data(&text);
    let mut out = std::io::stdout().lock();
    let written = out.write_all(text.as_bytes()).and_then(|()| {
        if newline {
            out.write_all(b"\n")
        } else {
            Ok(())
        }
    });
    if let Err(e) = written {
        stdout_failed(&e);
    }
}

/// Writes data to stdout as `write` makes it, through the same filter as
/// [`write_stdout`], without holding it all: an audit of a large tree
/// writes hundreds of megabytes. The filter works a line at a time, which
/// drops the same user-info as on the whole text (a URL's authority ends
/// at whitespace, so it never spans lines).
pub fn stream_stdout(write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>) {
    use std::io::Write;
    let mut out = Redacted {
        pending: Vec::new(),
        out: std::io::BufWriter::new(std::io::stdout().lock()),
    };
    if let Err(e) = write(&mut out).and_then(|()| out.flush()) {
        stdout_failed(&e);
    }
}

/// `text` with the control and invisible characters a name may carry
/// (`ESC`, `BEL`, bidirectional marks) written as escapes, line breaks and
/// tabs kept: data on stdout reaches terminals too, and a finding quoting a
/// CI file's `\x1b]0;…` must not set the title. Text of printable ASCII
/// passes untouched and uncopied.
fn inert_data(text: &str) -> std::borrow::Cow<'_, str> {
    let plain = |b: u8| matches!(b, b'\n' | b'\t' | 0x20..=0x7e);
    if text.bytes().all(plain) {
        return std::borrow::Cow::Borrowed(text);
    }
    let lines: Vec<String> = text
        .split('\n')
        .map(layerlock_history::render::terminal)
        .collect();
    std::borrow::Cow::Owned(lines.join("\n"))
}

/// A closed pipe ends the program quietly with 141; any other write error
/// is reported and ends it with 2.
fn stdout_failed(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(141);
    }
    eprintln!("error: cannot write to standard output: {e}");
    std::process::exit(2);
}

/// Whole lines go out filtered; the rest waits for its newline (or the
/// final flush).
struct Redacted<W: std::io::Write> {
    pending: Vec<u8>,
    out: W,
}

impl<W: std::io::Write> Redacted<W> {
    fn emit(&mut self, end: usize) -> std::io::Result<()> {
        let bytes = &self.pending[..end];
        let text = match std::str::from_utf8(bytes) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(bytes),
        };
        let text = if text.contains("://") {
            std::borrow::Cow::Owned(layerlock_index::redact_text(&text))
        } else {
            text
        };
        self.out.write_all(inert_data(&text).as_bytes())?;
        self.pending.drain(..end);
        Ok(())
    }
}

impl<W: std::io::Write> std::io::Write for Redacted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        // Filter in batches of lines, not line by line.
        if self.pending.len() >= 1 << 16
            && let Some(newline) = self.pending.iter().rposition(|b| *b == b'\n')
        {
            self.emit(newline + 1)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.emit(self.pending.len())?;
        self.out.flush()
    }
}

/// An error with advice on what to do about it.
#[derive(Debug)]
pub struct Hinted {
    pub message: String,
    pub hints: Vec<String>,
}

impl std::fmt::Display for Hinted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for Hinted {}

/// A compile's error as the binary prints it: its hints kept where
/// [`print_error`] finds them, its causes as the chain.
pub fn compile_error(err: layerlock_compile::CompileError) -> anyhow::Error {
    use layerlock_compile::CompileError;
    match err {
        CompileError::Hinted { message, hints } => Hinted { message, hints }.into(),
        CompileError::Unsolvable { message, hints, .. } => Hinted { message, hints }.into(),
        CompileError::Context { context, error } => compile_error(*error).context(context),
        err @ (CompileError::Clashes { .. } | CompileError::Unchecked { .. }) => Hinted {
            message: err.to_string(),
            hints: err.ways_out(),
        }
        .into(),
        other => other.into(),
    }
}

/// Progress on stderr while resolving: a spinner on a terminal, nothing
/// otherwise.
#[derive(Clone)]
pub struct Spinner {
    bar: ProgressBar,
}

struct Counter(ProgressBar);

impl layerlock_index::Progress for Counter {
    fn fetched(&self, what: &str) {
        self.0.inc(1);
        self.0.set_message(what.to_string());
    }
}

impl Spinner {
    pub fn new(quiet: bool, label: &str) -> Self {
        let visible = !quiet && std::io::stderr().is_terminal();
        let bar = if visible {
            ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
        } else {
            ProgressBar::hidden()
        };
        bar.set_style(
            ProgressStyle::with_template("{spinner} {prefix} {pos} fetched {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_prefix(label.to_string());
        if visible {
            bar.enable_steady_tick(std::time::Duration::from_millis(100));
        }
        Self { bar }
    }

    pub fn progress(&self) -> Arc<dyn layerlock_index::Progress> {
        Arc::new(Counter(self.bar.clone()))
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Print an error, its causes and hints to stderr.
pub fn print_error(err: &anyhow::Error) {
    eprintln!("error: {}", for_stderr(&err.to_string()));
    for cause in err.chain().skip(1) {
        eprintln!("  caused by: {}", for_stderr(&cause.to_string()));
    }
    if let Some(hinted) = err.downcast_ref::<Hinted>() {
        for hint in &hinted.hints {
            eprintln!("hint: {}", for_stderr(hint));
        }
    }
}

/// Longest message line printed on one line; a longer one is wrapped at
/// its spaces (a long hint layerlock writes is read whole).
const MAX_MESSAGE_LINE: usize = 400;
/// What comes from outside stays bounded: a word longer than this (a
/// 20 MB package name) is quoted by its start and end, and a line longer
/// than [`MAX_WRAPPED_LINE`] is cut the same way before it is wrapped.
const MAX_WORD: usize = 400;
const MAX_WRAPPED_LINE: usize = 16_000;

/// `line` cut to its start and end when it is longer than `max`.
fn cut(line: &str, max: usize) -> String {
    let count = line.chars().count();
    if count <= max {
        return line.to_string();
    }
    let head: String = line.chars().take(max / 2).collect();
    let tail: String = line.chars().skip(count - 80).collect();
    format!(
        "{head} … ({} characters left out) … {tail}",
        count - max / 2 - 80
    )
}

/// An over-long line as lines of at most [`MAX_MESSAGE_LINE`] characters,
/// broken at spaces; each word bounded.
fn wrap(line: &str) -> Vec<String> {
    if line.chars().count() <= MAX_MESSAGE_LINE {
        return vec![line.to_string()];
    }
    let line = cut(line, MAX_WRAPPED_LINE);
    let mut out: Vec<String> = vec![String::new()];
    for word in line.split(' ') {
        let word = cut(word, MAX_WORD);
        let last = out.last_mut().expect("out starts with a line");
        let len = last.chars().count();
        if len > 0 && len + 1 + word.chars().count() > MAX_MESSAGE_LINE {
            out.push(word);
        } else {
            if len > 0 {
                last.push(' ');
            }
            last.push_str(&word);
        }
    }
    out
}

/// `text` as every diagnostic reaches stderr: credentials in URLs
/// removed, control and invisible characters written as escapes (a file
/// or package name cannot move the cursor, set the title or ring the
/// bell), every over-long line wrapped (its over-long words cut to their
/// start and end), and each line after the first indented unless it is
/// already, so that a line break inside a name cannot forge a line of its
/// own (`error: …`).
pub fn for_stderr(text: &str) -> String {
    layerlock_index::redact_text(text)
        .split('\n')
        .flat_map(|line| wrap(&layerlock_history::render::terminal(line)))
        .enumerate()
        .map(|(i, line)| {
            // A line of its own starts with a space: what follows a line
            // break inside a name can never read as `error: …`.
            if i == 0 || line.is_empty() || line.starts_with([' ', '\t']) {
                line
            } else {
                format!("  {line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_hint_wraps_whole_and_a_huge_word_is_cut() {
        let hint = "word ".repeat(180);
        let shown = for_stderr(hint.trim_end());
        assert!(!shown.contains("left out"), "{shown}");
        assert_eq!(shown.matches("word").count(), 180);
        assert!(
            shown
                .lines()
                .all(|l| l.chars().count() <= MAX_MESSAGE_LINE + 2)
        );
        assert!(shown.lines().skip(1).all(|l| l.starts_with("  ")));
        let hostile = format!("package {} is bad", "x".repeat(20_000));
        let shown = for_stderr(&hostile);
        assert!(shown.contains("characters left out"), "{shown}");
        assert!(shown.chars().count() < 1_000);
    }
}
