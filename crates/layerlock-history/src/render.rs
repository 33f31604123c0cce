//! Text from the repository and the reports (job ids, test names, failure
//! messages, commit subjects, command lines) made inert for where it is
//! printed: a terminal, where escape sequences would act, and Markdown for a
//! pull-request comment, where a backtick, a pipe, a line break or HTML
//! would end a code span, a table cell, a fence or a details block.

use std::fmt::Write as _;

/// `text` for one line of a terminal: control characters (line breaks
/// included), and the invisible and bidirectional formatting characters
/// that make a line read other than it is, written as escapes (`\x1b`,
/// `\u{202e}`).
pub fn terminal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        if inert(ch) {
            out.push(ch);
        } else if u32::from(ch) < 0x80 {
            let _ = write!(out, "\\x{:02x}", u32::from(ch));
        } else {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(ch));
        }
    }
    out
}

/// Printed as itself: not a control character (a tab is one), nor a
/// zero-width, bidirectional or byte-order mark.
fn inert(ch: char) -> bool {
    if ch == '\t' {
        return true;
    }
    !ch.is_control()
        && !matches!(ch,
            '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}')
}

/// `text` as Markdown inline text, in a paragraph or a table cell: the
/// characters that open emphasis, links, images, code, HTML or entities,
/// and the cell's pipe, escaped; one line.
pub fn md_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in terminal(text).chars() {
        match ch {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '!' => {
                out.push('\\');
                out.push(ch);
            }
            '&' => out.push_str("&amp;"),
            _ => out.push(ch),
        }
    }
    out
}

/// `text` as a Markdown code span that nothing in it can end: delimited by
/// more backticks than it holds in a row; one line. In a table cell a pipe
/// would end the cell even inside the span, so there it is escaped (GitHub
/// drops the backslash).
pub fn md_code(text: &str, in_table: bool) -> String {
    let mut body = terminal(text);
    if in_table {
        body = body.replace('|', "\\|");
    }
    let ticks = "`".repeat(longest_run(&body, '`') + 1);
    let pad = if body.starts_with('`') || body.ends_with('`') || body.starts_with(' ') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{body}{pad}{ticks}")
}

/// The backticks of a fence that no line of `body` can close: more than any
/// run in it, and at least four.
pub fn md_fence(body: &str) -> String {
    "`".repeat((longest_run(body, '`') + 1).max(4))
}

/// `text` inside HTML (`<summary>`): markup characters as entities; one
/// line.
pub fn html(text: &str) -> String {
    terminal(text)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn longest_run(text: &str, of: char) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for ch in text.chars() {
        if ch == of {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_terminal_gets_escapes_written_out() {
        assert_eq!(terminal("a\u{1b}[2Jb\tc"), "a\\x1b[2Jb\tc");
        assert_eq!(terminal("x\ny\r"), "x\\x0ay\\x0d");
        assert_eq!(terminal("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(terminal("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(terminal("naïve ✅ 日本"), "naïve ✅ 日本");
    }

    #[test]
    fn markdown_cannot_be_broken_out_of() {
        assert_eq!(
            md_text("a|b <img> ![i](u) *x* `c` &lt;"),
            "a\\|b \\<img\\> \\!\\[i\\](u) \\*x\\* \\`c\\` &amp;lt;"
        );
        // The escape itself escaped: it reads `line\x0abreak`.
        assert_eq!(md_text("line\nbreak"), "line\\\\x0abreak");
        assert_eq!(md_code("plain", false), "`plain`");
        assert_eq!(md_code("a`b", false), "``a`b``");
        assert_eq!(md_code("`x``", true), "``` `x`` ```");
        assert_eq!(md_code("a|b", true), "`a\\|b`");
        assert_eq!(md_fence("ok"), "````");
        assert_eq!(md_fence(" ````\n``````"), "```````");
        assert_eq!(html("<b>&\"\u{1b}"), "&lt;b&gt;&amp;&quot;\\x1b");
    }
}
