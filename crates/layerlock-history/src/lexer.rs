//! A Python tokenizer just deep enough to find statements: logical lines
//! (brackets and backslashes joined), their indentation, names, punctuation
//! and string literals, with comments and the insides of strings skipped.
//!
//! It never fails: what Python would reject it reads somehow and goes on,
//! because a file that does not compile still has imports and markers worth
//! reporting. It works on bytes (every byte Python's syntax cares about is
//! ASCII; any other byte is part of a name), so no input can make it slice a
//! character in two.

/// One token of a logical line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    Name(String),
    /// A string literal and its value, when it has one without evaluating
    /// anything (an f-string with a replacement field has none).
    Str(Option<String>),
    Number(String),
    /// Single-character punctuation: `. , ( ) [ ] { } : ; = @ *` and the rest.
    Op(u8),
    /// Operators of two or three characters (`==`, `**`, `->`, `+=`, ...).
    LongOp,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    pub(crate) tok: Tok,
    /// 1-based line where the token starts.
    pub(crate) line: usize,
}

impl Token {
    pub(crate) fn is_op(&self, op: u8) -> bool {
        self.tok == Tok::Op(op)
    }

    pub(crate) fn name(&self) -> Option<&str> {
        match &self.tok {
            Tok::Name(name) => Some(name),
            _ => None,
        }
    }

    pub(crate) fn is_name(&self, name: &str) -> bool {
        self.name() == Some(name)
    }
}

/// A logical line: one or more physical lines joined by open brackets or
/// backslashes; `;` is left in it as a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogicalLine {
    /// Columns of leading whitespace of its first physical line (a tab moves
    /// to the next multiple of 8, as in CPython's tokenizer).
    pub(crate) indent: usize,
    pub(crate) tokens: Vec<Token>,
}

/// How deep f-strings may nest inside f-strings before the rest of an
/// f-string is skipped more coarsely (recursion must stay bounded).
const MAX_FSTRING_NESTING: usize = 16;

pub(crate) struct Lexer<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
    depth: usize,
}

impl<'a> Lexer<'a> {
    pub(crate) fn new(source: &'a str) -> Self {
        Self {
            bytes: source.as_bytes(),
            pos: 0,
            line: 1,
            depth: 0,
        }
    }

    fn peek(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    /// Consumes a line break at `pos` (`\n`, `\r\n` or `\r`), if there is one.
    fn line_break(&mut self) -> bool {
        match self.peek(0) {
            Some(b'\n') => self.pos += 1,
            Some(b'\r') => {
                self.pos += if self.peek(1) == Some(b'\n') { 2 } else { 1 };
            }
            _ => return false,
        }
        self.line += 1;
        true
    }

    fn text(&self, start: usize) -> String {
        let end = self.pos.min(self.bytes.len());
        String::from_utf8_lossy(self.bytes.get(start..end).unwrap_or_default()).into_owned()
    }

    fn skip_comment(&mut self) {
        while let Some(b) = self.peek(0) {
            if b == b'\n' || b == b'\r' {
                break;
            }
            self.pos += 1;
        }
    }

    fn name(&mut self) -> String {
        let start = self.pos;
        while self.peek(0).is_some_and(is_name_byte) {
            self.pos += 1;
        }
        self.text(start)
    }

    fn number(&mut self) -> String {
        let start = self.pos;
        let hex = self.peek(0) == Some(b'0') && matches!(self.peek(1), Some(b'x' | b'X'));
        while let Some(b) = self.peek(0) {
            let exponent_sign = matches!(b, b'+' | b'-')
                && !hex
                && self.pos > start
                && matches!(self.bytes.get(self.pos - 1), Some(b'e' | b'E'))
                && self.peek(1).is_some_and(|d| d.is_ascii_digit());
            if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || exponent_sign {
                self.pos += 1;
            } else {
                break;
            }
        }
        self.text(start)
    }

    /// An operator starting at `pos`, one to three bytes.
    fn operator(&mut self) -> Tok {
        let first = self.peek(0).unwrap_or(b' ');
        let second = self.peek(1);
        let long = match (first, second) {
            (b'*' | b'/' | b'<' | b'>', Some(s)) if s == first => {
                // `**`, `//`, `<<`, `>>`, and with `=` after them.
                if self.peek(2) == Some(b'=') { 3 } else { 2 }
            }
            (b'-', Some(b'>')) => 2,
            (
                b'=' | b'!' | b'<' | b'>' | b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|' | b'^'
                | b'@' | b':',
                Some(b'='),
            ) => 2,
            _ => 1,
        };
        self.pos += long;
        if long == 1 {
            Tok::Op(first)
        } else {
            Tok::LongOp
        }
    }

    /// The next logical line, or `None` at the end of the source.
    pub(crate) fn next_line(&mut self) -> Option<LogicalLine> {
        let mut tokens = Vec::new();
        let mut indent = 0;
        loop {
            let Some(b) = self.peek(0) else {
                self.depth = 0;
                return if tokens.is_empty() {
                    None
                } else {
                    Some(LogicalLine { indent, tokens })
                };
            };
            let line = self.line;
            match b {
                b' ' | b'\t' | b'\x0c' => {
                    if tokens.is_empty() && self.depth == 0 {
                        indent = match b {
                            b'\t' => (indent / 8 + 1) * 8,
                            b'\x0c' => 0,
                            _ => indent + 1,
                        };
                    }
                    self.pos += 1;
                }
                b'#' => self.skip_comment(),
                b'\n' | b'\r' => {
                    self.line_break();
                    if self.depth == 0 && !tokens.is_empty() {
                        return Some(LogicalLine { indent, tokens });
                    }
                    if tokens.is_empty() {
                        indent = 0;
                    }
                }
                b'\\' => {
                    self.pos += 1;
                    if !self.line_break() {
                        tokens.push(Token {
                            tok: Tok::Op(b'\\'),
                            line,
                        });
                    }
                }
                b'\'' | b'"' => {
                    let value = self.string("", 0);
                    tokens.push(Token {
                        tok: Tok::Str(value),
                        line,
                    });
                }
                b'0'..=b'9' => {
                    let number = self.number();
                    tokens.push(Token {
                        tok: Tok::Number(number),
                        line,
                    });
                }
                b'.' if self.peek(1).is_some_and(|d| d.is_ascii_digit()) => {
                    let number = self.number();
                    tokens.push(Token {
                        tok: Tok::Number(number),
                        line,
                    });
                }
                b if is_name_byte(b) => {
                    let name = self.name();
                    let tok =
                        if is_string_prefix(&name) && matches!(self.peek(0), Some(b'\'' | b'"')) {
                            Tok::Str(self.string(&name, 0))
                        } else {
                            Tok::Name(name)
                        };
                    tokens.push(Token { tok, line });
                }
                b'(' | b'[' | b'{' => {
                    self.depth += 1;
                    self.pos += 1;
                    tokens.push(Token {
                        tok: Tok::Op(b),
                        line,
                    });
                }
                b')' | b']' | b'}' => {
                    self.depth = self.depth.saturating_sub(1);
                    self.pos += 1;
                    tokens.push(Token {
                        tok: Tok::Op(b),
                        line,
                    });
                }
                _ => {
                    let tok = self.operator();
                    tokens.push(Token { tok, line });
                }
            }
        }
    }

    /// A string literal whose opening quote is at `pos`, with its prefix
    /// already read. Returns its value when it has one.
    fn string(&mut self, prefix: &str, nesting: usize) -> Option<String> {
        let quote = self.peek(0)?;
        let triple = self.peek(1) == Some(quote) && self.peek(2) == Some(quote);
        self.pos += if triple { 3 } else { 1 };
        let prefix = prefix.to_ascii_lowercase();
        let raw = prefix.contains('r');
        let formatted = prefix.contains('f') || prefix.contains('t');
        let mut value = Vec::new();
        let mut literal = true;
        while let Some(b) = self.peek(0) {
            match b {
                b'\\' => {
                    self.pos += 1;
                    if raw {
                        // A raw string keeps the backslash, and the quote after
                        // it does not end the string.
                        value.push(b'\\');
                        if let Some(next) = self.peek(0) {
                            if !self.line_break() {
                                value.push(next);
                                self.pos += 1;
                            } else {
                                value.push(b'\n');
                            }
                        }
                    } else if !self.line_break()
                        && let Some(next) = self.peek(0)
                    {
                        self.pos += 1;
                        match next {
                            b'n' => value.push(b'\n'),
                            b't' => value.push(b'\t'),
                            b'r' => value.push(b'\r'),
                            b'\\' | b'\'' | b'"' => value.push(next),
                            _ => {
                                value.push(b'\\');
                                value.push(next);
                            }
                        }
                    }
                }
                b'\n' | b'\r' => {
                    if !triple {
                        // Unterminated: Python stops here, and so do we.
                        break;
                    }
                    self.line_break();
                    value.push(b'\n');
                }
                b if b == quote => {
                    if !triple {
                        self.pos += 1;
                        break;
                    }
                    if self.peek(1) == Some(quote) && self.peek(2) == Some(quote) {
                        self.pos += 3;
                        break;
                    }
                    value.push(b);
                    self.pos += 1;
                }
                b'{' if formatted => {
                    if self.peek(1) == Some(b'{') {
                        value.push(b'{');
                        self.pos += 2;
                    } else {
                        self.pos += 1;
                        literal = false;
                        self.replacement_field(quote, triple, nesting + 1);
                    }
                }
                b'}' if formatted && self.peek(1) == Some(b'}') => {
                    value.push(b'}');
                    self.pos += 2;
                }
                _ => {
                    value.push(b);
                    self.pos += 1;
                }
            }
        }
        literal.then(|| String::from_utf8_lossy(&value).into_owned())
    }

    /// Skips an f-string replacement field after its `{`, up to and
    /// including its `}`. Strings inside it are read as strings (Python 3.12
    /// lets them reuse the outer quote); a format spec after `:` is text with
    /// nested fields.
    fn replacement_field(&mut self, quote: u8, triple: bool, nesting: usize) {
        let mut depth = 0usize;
        while let Some(b) = self.peek(0) {
            match b {
                b'\n' | b'\r' => {
                    self.line_break();
                }
                b'\\' => {
                    self.pos += 1;
                    if !self.line_break() && self.peek(0).is_some() {
                        self.pos += 1;
                    }
                }
                b'\'' | b'"' if nesting <= MAX_FSTRING_NESTING => {
                    self.string("", nesting);
                }
                b'\'' | b'"' => {
                    // Too deep to follow: a quote like the outer one ends the
                    // field (pre-3.12 rules), any other is skipped.
                    if b == quote && !triple {
                        return;
                    }
                    self.pos += 1;
                }
                b if is_name_byte(b) && !b.is_ascii_digit() => {
                    let name = self.name();
                    if is_string_prefix(&name)
                        && matches!(self.peek(0), Some(b'\'' | b'"'))
                        && nesting <= MAX_FSTRING_NESTING
                    {
                        self.string(&name, nesting);
                    }
                }
                b'(' | b'[' | b'{' => {
                    depth += 1;
                    self.pos += 1;
                }
                b')' | b']' => {
                    depth = depth.saturating_sub(1);
                    self.pos += 1;
                }
                b'}' => {
                    self.pos += 1;
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                }
                b':' if depth == 0 => {
                    self.pos += 1;
                    self.format_spec(quote, triple, nesting);
                    return;
                }
                _ => self.pos += 1,
            }
        }
    }

    /// A format spec: text up to the field's closing `}`, with nested fields.
    fn format_spec(&mut self, quote: u8, triple: bool, nesting: usize) {
        while let Some(b) = self.peek(0) {
            match b {
                b'{' => {
                    self.pos += 1;
                    if nesting <= MAX_FSTRING_NESTING {
                        self.replacement_field(quote, triple, nesting + 1);
                    }
                }
                b'}' => {
                    self.pos += 1;
                    return;
                }
                b'\n' | b'\r' if !triple => return,
                b'\n' | b'\r' => {
                    self.line_break();
                }
                _ => self.pos += 1,
            }
        }
    }
}

impl Iterator for Lexer<'_> {
    type Item = LogicalLine;

    fn next(&mut self) -> Option<LogicalLine> {
        self.next_line()
    }
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// `r`, `b`, `u`, `f`, `t` and their two-letter combinations, any case.
fn is_string_prefix(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "r" | "u" | "b" | "f" | "t" | "br" | "rb" | "fr" | "rf" | "tr" | "rt"
    )
}

/// The longest prefix of `source` of at most `limit` bytes that ends on a
/// character boundary.
pub(crate) fn bounded(source: &str, limit: usize) -> &str {
    if source.len() <= limit {
        return source;
    }
    let mut end = limit;
    while !source.is_char_boundary(end) {
        end -= 1;
    }
    source.get(..end).unwrap_or_default()
}

/// Splits a logical line's tokens into simple statements at `;`.
pub(crate) fn statements(tokens: &[Token]) -> impl Iterator<Item = &[Token]> {
    tokens
        .split(|token| token.is_op(b';'))
        .filter(|statement| !statement.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(source: &str) -> Vec<(usize, Vec<Tok>)> {
        Lexer::new(source)
            .map(|line| {
                (
                    line.indent,
                    line.tokens.into_iter().map(|t| t.tok).collect(),
                )
            })
            .collect()
    }

    fn name(text: &str) -> Tok {
        Tok::Name(text.to_owned())
    }

    #[test]
    fn brackets_and_backslashes_join_lines() {
        let found = lines("x = (1,\n  2)\ny = 3 \\\n  + 4\n");
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].1[0], name("y"));
    }

    #[test]
    fn indentation_of_the_first_physical_line() {
        let found = lines("def f():\n    # comment\n\n    return 1\n\tx\n");
        let indents: Vec<usize> = found.iter().map(|(indent, _)| *indent).collect();
        assert_eq!(indents, [0, 4, 8]);
    }

    #[test]
    fn string_values_and_prefixes() {
        let found = lines(r##"a = 'x\'y' r"a\"b" b'z' f"{x}" f"{{lit}}" """m""""##);
        let strings: Vec<Tok> = found[0].1[2..].to_vec();
        assert_eq!(
            strings,
            [
                Tok::Str(Some("x'y".into())),
                Tok::Str(Some(r#"a\"b"#.into())),
                Tok::Str(Some("z".into())),
                Tok::Str(None),
                Tok::Str(Some("{lit}".into())),
                Tok::Str(Some("m".into())),
            ]
        );
    }

    #[test]
    fn nested_fstring_quotes_of_python_3_12() {
        let found = lines("x = f\"{d[\"k\"]:>{w}} import os\"\nimport sys\n");
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].1, [name("import"), name("sys")]);
    }

    #[test]
    fn format_spec_may_hold_a_quote() {
        let found = lines("x = f\"{v:'>10}\"\nimport sys\n");
        assert_eq!(found[1].1, [name("import"), name("sys")]);
    }

    #[test]
    fn line_numbers_count_inside_triple_strings() {
        let mut lexer = Lexer::new("'''a\nb\n'''\nimport x\n");
        lexer.next_line();
        let line = lexer.next_line().expect("a second line");
        assert_eq!(line.tokens[0].line, 4);
    }

    #[test]
    fn bounded_cuts_on_a_character_boundary() {
        assert_eq!(bounded("aé", 2), "a");
        assert_eq!(bounded("aé", 3), "aé");
    }
}
