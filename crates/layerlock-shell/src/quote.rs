//! The inverse of reading a word: one argv word written so that a shell
//! reads it back as exactly those bytes.

/// Characters that never need quoting. Glob characters (`*?[`) and the
/// ones a shell expands at a word's start (`~`) or interactively (`!`) are
/// not among them.
const PLAIN: &str = "-_./=:,+@%";

/// `word` as a shell word: as written when every character is plain, in
/// single quotes otherwise, and in bash's `$'…'` when it holds a control
/// character (so a newline cannot end the command line it is written on).
pub fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || PLAIN.contains(c))
    {
        return word.to_string();
    }
    if !word.chars().any(char::is_control) {
        return format!("'{}'", word.replace('\'', "'\\''"));
    }
    let mut out = String::from("$'");
    for c in word.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn every_quoted_word_reads_back_as_itself() {
        let words = [
            "plain-1.0_x/y.z=a:b,c+d@e%f",
            "",
            "it's",
            "a b",
            ".[test]",
            "~/cache",
            "!x",
            "$HOME",
            "`id`",
            "line\nbreak",
            "tab\there 'and' \\ back",
            "\u{1b}[31m",
        ];
        for word in words {
            let line = format!("echo {}", quote(word));
            let script = crate::parse(&line).expect("parses");
            let read = script.commands[0].words[1].value.clone();
            assert_eq!(read.as_deref(), Some(word), "{line}");
        }
    }
}
