//! A tokenizer for the Python a `setup.py` is written in, so that what is
//! read from it is what Python would read: a bracket or a quote inside a
//! string or a comment is text, not code. It is the tokenizer only: no
//! code is ever run, and every read is bounded (input size, token count,
//! nesting), so any bytes give tokens or an error, never a panic or a hang.

/// The largest source read: real `setup.py` files are a few KiB.
pub(crate) const MAX_SOURCE_BYTES: usize = 1 << 20;

/// Most tokens read from one source.
pub(crate) const MAX_TOKENS: usize = 200_000;

/// Deepest nesting of brackets, and of f-strings inside f-strings.
pub(crate) const MAX_NESTING: usize = 64;

/// What a token is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    Name,
    Number,
    /// A string literal, adjacent ones joined as Python joins them: its
    /// value, or `None` when an f-string computes part of it (or an escape
    /// names a character by its Unicode name, which is not decoded here).
    Str(Option<String>),
    /// A bytes literal: never a requirement.
    Bytes,
    /// An operator or a bracket.
    Op,
    /// The end of a logical line (never inside brackets).
    Newline,
}

/// A token and where it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: Kind,
    /// Byte offsets of its text in the source.
    pub start: usize,
    pub end: usize,
    /// The line it starts on, from 1.
    pub line: usize,
    /// How many brackets are open around it (an opening bracket and its
    /// closing one stand at the depth outside them).
    pub depth: usize,
    /// The opening bracket it stands directly inside, if any.
    pub parent: Option<usize>,
    /// For an opening bracket, the index of the one that closes it.
    pub pair: Option<usize>,
    /// Whether it starts a logical line, and whether that line is indented
    /// (so inside a block rather than at module level).
    pub line_start: bool,
    pub indented: bool,
}

/// Why a source is not Python the tokenizer reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {what}")]
pub(crate) struct LexError {
    pub line: usize,
    pub what: String,
}

/// A source and its tokens.
#[derive(Debug)]
pub(crate) struct Tokens<'a> {
    pub src: &'a str,
    pub toks: Vec<Token>,
}

impl<'a> Tokens<'a> {
    /// The source text of token `i` (empty past the end).
    pub fn text(&self, i: usize) -> &'a str {
        self.toks
            .get(i)
            .and_then(|t| self.src.get(t.start..t.end))
            .unwrap_or_default()
    }

    /// The source text from token `from` up to (not with) token `to`.
    pub fn span(&self, from: usize, to: usize) -> &'a str {
        let start = self.toks.get(from).map_or(self.src.len(), |t| t.start);
        let end = match to.checked_sub(1).and_then(|last| self.toks.get(last)) {
            Some(t) if to > from => t.end,
            _ => start,
        };
        self.src.get(start..end).unwrap_or_default()
    }

    /// Whether token `i` is the operator `op`.
    pub fn op(&self, i: usize, op: &str) -> bool {
        self.toks.get(i).is_some_and(|t| t.kind == Kind::Op) && self.text(i) == op
    }

    /// Whether token `i` is the name `name`.
    pub fn is_name(&self, i: usize, name: &str) -> bool {
        self.name(i) == Some(name)
    }

    /// The name token `i` is, if it is one.
    pub fn name(&self, i: usize) -> Option<&'a str> {
        let token = self.toks.get(i)?;
        (token.kind == Kind::Name).then(|| self.text(i))
    }

    /// Whether token `i` ends a logical line (or is past the end).
    pub fn line_end(&self, i: usize) -> bool {
        self.toks.get(i).is_none_or(|t| t.kind == Kind::Newline)
    }
}

/// The tokens of `src`, or where and why it is not Python read here.
pub(crate) fn tokenize(src: &str) -> Result<Tokens<'_>, LexError> {
    if src.len() > MAX_SOURCE_BYTES {
        return Err(LexError {
            line: 0,
            what: format!("it is larger than {} KiB", MAX_SOURCE_BYTES >> 10),
        });
    }
    let mut lexer = Lexer::new(src);
    let mut out = Builder::default();
    while let Some(c) = lexer.peek() {
        let start = lexer.pos;
        let line = lexer.line;
        let indented = start > lexer.line_begin;
        let kind = match c {
            ' ' | '\t' | '\x0c' => {
                lexer.bump();
                continue;
            }
            '\n' | '\r' => {
                lexer.bump();
                out.newline(start, line);
                continue;
            }
            '#' => {
                lexer.comment();
                continue;
            }
            '\\' => {
                lexer.continuation()?;
                continue;
            }
            _ => lexer.token(c)?,
        };
        let text = src.get(start..lexer.pos).unwrap_or_default();
        let at = Spot {
            start,
            end: lexer.pos,
            line,
            indented,
            bracket: match kind {
                Kind::Op => text.chars().next().filter(|c| "([{}])".contains(*c)),
                _ => None,
            },
        };
        out.push(kind, at)?;
    }
    out.finish(src, lexer.line)
}

/// Where a token was read.
#[derive(Clone, Copy)]
struct Spot {
    start: usize,
    end: usize,
    line: usize,
    indented: bool,
    /// The bracket it is, if it is one.
    bracket: Option<char>,
}

/// Tokens as they are read: brackets paired, adjacent strings joined,
/// logical lines marked.
#[derive(Default)]
struct Builder {
    toks: Vec<Token>,
    /// The brackets open now (index and character), innermost last.
    open: Vec<(usize, char)>,
    /// Whether a token has been read on this logical line.
    mid_line: bool,
}

impl Builder {
    /// A line break: the end of a logical line unless brackets are open
    /// (or the line was empty).
    fn newline(&mut self, at: usize, line: usize) {
        if self.open.is_empty() && self.mid_line {
            self.toks.push(Token {
                kind: Kind::Newline,
                start: at,
                end: at,
                line,
                depth: 0,
                parent: None,
                pair: None,
                line_start: false,
                indented: false,
            });
            self.mid_line = false;
        }
    }

    fn push(&mut self, kind: Kind, at: Spot) -> Result<(), LexError> {
        let err = |what: &str| LexError {
            line: at.line,
            what: what.to_string(),
        };
        if self.join_string(&kind, at).map_err(err)? {
            return Ok(());
        }
        if self.toks.len() >= MAX_TOKENS {
            return Err(err("it has too many tokens to read"));
        }
        let index = self.toks.len();
        let mut token = Token {
            kind,
            start: at.start,
            end: at.end,
            line: at.line,
            depth: self.open.len(),
            parent: self.open.last().map(|(i, _)| *i),
            pair: None,
            line_start: !self.mid_line,
            indented: at.indented,
        };
        match at.bracket {
            Some(c @ ('(' | '[' | '{')) => {
                if self.open.len() >= MAX_NESTING {
                    return Err(err("its brackets nest too deep to read"));
                }
                self.open.push((index, c));
            }
            Some(close) => self.close(&mut token, index, close)?,
            None => {}
        }
        self.mid_line = true;
        self.toks.push(token);
        Ok(())
    }

    /// Joins a string literal onto the one just before it, as Python joins
    /// `'a' 'b'`; whether it did.
    fn join_string(&mut self, kind: &Kind, at: Spot) -> Result<bool, &'static str> {
        let Some(last) = self.toks.last_mut() else {
            return Ok(false);
        };
        let joined = match (&last.kind, kind) {
            (Kind::Str(a), Kind::Str(b)) => Kind::Str(a.as_ref().zip(b.as_ref()).map(|(a, b)| {
                let mut s = a.clone();
                s.push_str(b);
                s
            })),
            (Kind::Bytes, Kind::Bytes) => Kind::Bytes,
            (Kind::Str(_), Kind::Bytes) | (Kind::Bytes, Kind::Str(_)) => {
                return Err("bytes and a string side by side");
            }
            _ => return Ok(false),
        };
        last.kind = joined;
        last.end = at.end;
        Ok(true)
    }

    /// Closes the innermost bracket with `close`, which must match it.
    fn close(&mut self, token: &mut Token, index: usize, close: char) -> Result<(), LexError> {
        let line = token.line;
        let err = |what: String| LexError { line, what };
        let Some((opener, open)) = self.open.pop() else {
            return Err(err(format!("`{close}` closes nothing")));
        };
        let expected = match open {
            '(' => ')',
            '[' => ']',
            _ => '}',
        };
        if close != expected {
            return Err(err(format!("`{close}` closes a `{open}`")));
        }
        if let Some(open) = self.toks.get_mut(opener) {
            open.pair = Some(index);
        }
        token.depth = self.open.len();
        token.parent = self.open.last().map(|(i, _)| *i);
        Ok(())
    }

    /// The tokens, once every bracket is closed; a last logical line ends
    /// even without a line break.
    fn finish(mut self, src: &str, line: usize) -> Result<Tokens<'_>, LexError> {
        if let Some((opener, open)) = self.open.first() {
            let line = self.toks.get(*opener).map_or(line, |t| t.line);
            return Err(LexError {
                line,
                what: format!("`{open}` is never closed"),
            });
        }
        self.newline(src.len(), line);
        Ok(Tokens {
            src,
            toks: self.toks,
        })
    }
}

/// String prefixes Python accepts, as flags.
#[derive(Debug, Clone, Copy, Default)]
struct Prefix {
    raw: bool,
    bytes: bool,
    /// An f-string (or a t-string): `{…}` is code.
    format: bool,
}

impl Prefix {
    /// The prefix `name` spells, when it is one (any case: `Rb`, `fR`).
    fn of(name: &str) -> Option<Self> {
        let lower = name.to_ascii_lowercase();
        let known = matches!(
            lower.as_str(),
            "r" | "u" | "b" | "f" | "t" | "rb" | "br" | "fr" | "rf" | "tr" | "rt"
        );
        known.then(|| Self {
            raw: lower.contains('r'),
            bytes: lower.contains('b'),
            format: lower.contains(['f', 't']),
        })
    }
}

/// A string being read: its value so far, or `None` once part of it is
/// computed.
struct Value(Option<String>);

impl Value {
    fn push(&mut self, c: char) {
        if let Some(s) = &mut self.0 {
            s.push(c);
        }
    }
}

fn is_name_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_name_continue(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Operators, longest first so that `**=` is not read as `*` `*=`.
const OPERATORS: [&str; 49] = [
    "**=", "//=", ">>=", "<<=", "...", "**", "//", ">>", "<<", "<=", ">=", "==", "!=", "->", "+=",
    "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@=", ":=", "(", ")", "[", "]", "{", "}", ",", ":",
    ";", ".", "=", "+", "-", "*", "/", "%", "<", ">", "&", "|", "^", "~", "@", "!", "`",
];

/// The characters of a source, with the line they are on.
struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: usize,
    /// Where the current physical line begins.
    line_begin: usize,
    /// How deep strings and replacement fields nest now.
    nest: usize,
}

impl<'a> Lexer<'a> {
    fn new(src: &'a str) -> Self {
        Self {
            src,
            pos: 0,
            line: 1,
            line_begin: 0,
            nest: 0,
        }
    }

    fn rest(&self) -> &'a str {
        self.src.get(self.pos..).unwrap_or_default()
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn peek2(&self) -> Option<char> {
        self.rest().chars().nth(1)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        // `\r\n` is one line break, counted at its `\n`.
        if c == '\n' || (c == '\r' && self.peek() != Some('\n')) {
            self.line += 1;
            self.line_begin = self.pos;
        }
        Some(c)
    }

    /// Consumes `c` when it is next.
    fn eat(&mut self, c: char) -> bool {
        let next = self.peek() == Some(c);
        if next {
            self.bump();
        }
        next
    }

    fn error(&self, what: impl Into<String>) -> LexError {
        LexError {
            line: self.line,
            what: what.into(),
        }
    }

    /// Up to the end of the line (the line break stays, to end the line).
    fn comment(&mut self) {
        while self.peek().is_some_and(|c| c != '\n' && c != '\r') {
            self.bump();
        }
    }

    /// `\` at the end of a line joins it to the next.
    fn continuation(&mut self) -> Result<(), LexError> {
        self.bump();
        match self.bump() {
            Some('\n') => Ok(()),
            Some('\r') => {
                self.eat('\n');
                Ok(())
            }
            _ => Err(self.error("a backslash outside a string that does not end its line")),
        }
    }

    /// One token starting with `c`.
    fn token(&mut self, c: char) -> Result<Kind, LexError> {
        if c == '"' || c == '\'' {
            return self.string(Prefix::default());
        }
        if c.is_ascii_digit() || (c == '.' && self.peek2().is_some_and(|d| d.is_ascii_digit())) {
            self.number();
            return Ok(Kind::Number);
        }
        if is_name_start(c) {
            let name = self.name();
            return match Prefix::of(name) {
                Some(prefix) if matches!(self.peek(), Some('"' | '\'')) => self.string(prefix),
                _ => Ok(Kind::Name),
            };
        }
        let Some(op) = OPERATORS.iter().find(|op| self.rest().starts_with(**op)) else {
            return Err(self.error(format!("`{c}` is not Python outside a string")));
        };
        self.pos += op.len();
        Ok(Kind::Op)
    }

    fn name(&mut self) -> &'a str {
        let start = self.pos;
        while self.peek().is_some_and(is_name_continue) {
            self.bump();
        }
        self.src.get(start..self.pos).unwrap_or_default()
    }

    /// Digits, letters, `_` and `.`, and a sign after an exponent's `e`:
    /// every number form Python has, and some it has not, read as one.
    fn number(&mut self) {
        let hex = self
            .rest()
            .get(..2)
            .is_some_and(|p| p.eq_ignore_ascii_case("0x"));
        let mut last = '\0';
        while let Some(c) = self.peek() {
            let sign = matches!(c, '+' | '-') && matches!(last, 'e' | 'E') && !hex;
            if !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || sign) {
                break;
            }
            last = c;
            self.bump();
        }
    }

    /// Counts one more level of strings and fields inside each other.
    fn enter(&mut self) -> Result<(), LexError> {
        self.nest += 1;
        if self.nest > MAX_NESTING {
            return Err(self.error("its strings nest too deep to read"));
        }
        Ok(())
    }

    /// A string literal, from its opening quote (after any prefix).
    fn string(&mut self, prefix: Prefix) -> Result<Kind, LexError> {
        self.enter()?;
        let line = self.line;
        let unterminated = || LexError {
            line,
            what: "a string that does not end".to_string(),
        };
        let quote = self.bump().ok_or_else(unterminated)?;
        let triple = self.peek() == Some(quote) && self.peek2() == Some(quote);
        if triple {
            self.bump();
            self.bump();
        }
        let mut value = Value(Some(String::new()));
        loop {
            let c = self.bump().ok_or_else(unterminated)?;
            match c {
                c if c == quote => {
                    if !triple || (self.peek() == Some(quote) && self.peek2() == Some(quote)) {
                        if triple {
                            self.bump();
                            self.bump();
                        }
                        break;
                    }
                    value.push(c);
                }
                '\n' | '\r' if !triple => return Err(unterminated()),
                '\r' => {
                    self.eat('\n');
                    value.push('\n');
                }
                '\\' => self.escape(prefix, &mut value).ok_or_else(unterminated)??,
                '{' | '}' if prefix.format => self.brace(c, quote, triple, &mut value)?,
                c => value.push(c),
            }
        }
        self.nest -= 1;
        Ok(match prefix.bytes {
            true => Kind::Bytes,
            false => Kind::Str(value.0),
        })
    }

    /// `{` or `}` in an f-string: doubled, the brace itself; `{` alone, a
    /// replacement field, which makes the value computed.
    fn brace(
        &mut self,
        c: char,
        quote: char,
        triple: bool,
        value: &mut Value,
    ) -> Result<(), LexError> {
        if self.eat(c) {
            value.push(c);
            return Ok(());
        }
        if c == '}' {
            return Err(self.error("a single `}` in an f-string"));
        }
        value.0 = None;
        self.replacement_field(quote, triple)
    }

    /// After a `\` in a string: the escape decoded into `value`. `None` at
    /// the end of the input; an error for a malformed escape Python refuses.
    fn escape(&mut self, prefix: Prefix, value: &mut Value) -> Option<Result<(), LexError>> {
        // `\{` in an f-string is a backslash, then a field.
        if prefix.format && matches!(self.peek(), Some('{' | '}')) {
            value.push('\\');
            return Some(Ok(()));
        }
        let c = self.bump()?;
        if prefix.raw {
            // The backslash stays, and the character after it never ends
            // the string: `r'\''` is a backslash and a quote.
            value.push('\\');
            value.push(c);
            return Some(Ok(()));
        }
        let decoded = match c {
            '\n' => None,
            '\r' => {
                self.eat('\n');
                None
            }
            '\\' | '\'' | '"' => Some(c),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '0'..='7' => Some(self.octal(c)),
            'x' => return Some(self.hex(2, value)),
            'u' if !prefix.bytes => return Some(self.hex(4, value)),
            'U' if !prefix.bytes => return Some(self.hex(8, value)),
            'N' if !prefix.bytes => return Some(self.named(value)),
            other => {
                value.push('\\');
                Some(other)
            }
        };
        if let Some(d) = decoded {
            value.push(d);
        }
        Some(Ok(()))
    }

    /// `\ooo`: up to three octal digits, the first already read.
    fn octal(&mut self, first: char) -> char {
        let mut code = first.to_digit(8).unwrap_or_default();
        for _ in 0..2 {
            match self.peek().and_then(|c| c.to_digit(8)) {
                Some(d) => {
                    code = code * 8 + d;
                    self.bump();
                }
                None => break,
            }
        }
        char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
    }

    /// `\xhh`, `\uhhhh`, `\Uhhhhhhhh`: exactly `digits` hex digits.
    fn hex(&mut self, digits: usize, value: &mut Value) -> Result<(), LexError> {
        let mut code: u32 = 0;
        for _ in 0..digits {
            let Some(d) = self.peek().and_then(|c| c.to_digit(16)) else {
                return Err(self.error(format!("an escape without its {digits} hex digits")));
            };
            code = code.wrapping_mul(16).wrapping_add(d);
            self.bump();
        }
        match char::from_u32(code) {
            Some(c) => value.push(c),
            None => return Err(self.error("an escape that is not a character")),
        }
        Ok(())
    }

    /// `\N{NAME}`: the name is not looked up, so the value is unknown.
    fn named(&mut self, value: &mut Value) -> Result<(), LexError> {
        if !self.eat('{') {
            return Err(self.error("`\\N` without `{`"));
        }
        while let Some(c) = self.bump() {
            match c {
                '}' => {
                    value.0 = None;
                    return Ok(());
                }
                '\n' | '\r' | '\'' | '"' => break,
                _ => {}
            }
        }
        Err(self.error("`\\N{` that does not close"))
    }

    /// The code of an f-string's `{…}` field, after its `{`, up to its
    /// closing `}`: brackets counted, strings inside read as strings (any
    /// quote, as Python 3.12 allows), then a format spec after `:`.
    fn replacement_field(&mut self, quote: char, triple: bool) -> Result<(), LexError> {
        self.enter()?;
        let line = self.line;
        let mut depth = 0usize;
        loop {
            let Some(c) = self.peek() else {
                return Err(LexError {
                    line,
                    what: "an f-string field that does not close".to_string(),
                });
            };
            match c {
                '\'' | '"' => {
                    self.string(Prefix::default())?;
                }
                c if is_name_start(c) => {
                    let name = self.name();
                    if let Some(prefix) = Prefix::of(name)
                        && matches!(self.peek(), Some('"' | '\''))
                    {
                        self.string(prefix)?;
                    }
                }
                '#' => self.comment(),
                '(' | '[' | '{' => {
                    self.bump();
                    depth += 1;
                    if depth > MAX_NESTING {
                        return Err(self.error("an f-string field nests too deep"));
                    }
                }
                ')' | ']' | '}' => {
                    self.bump();
                    match depth.checked_sub(1) {
                        Some(d) => depth = d,
                        None if c == '}' => break,
                        None => return Err(self.error(format!("`{c}` closes nothing"))),
                    }
                }
                ':' if depth == 0 => {
                    self.bump();
                    self.format_spec(quote, triple)?;
                    break;
                }
                _ => {
                    self.bump();
                }
            }
        }
        self.nest -= 1;
        Ok(())
    }

    /// A field's format spec, after its `:`, up to the field's `}`: text
    /// of the string, with fields of its own (`{x:{width}}`).
    fn format_spec(&mut self, quote: char, triple: bool) -> Result<(), LexError> {
        loop {
            let Some(c) = self.bump() else {
                return Err(self.error("an f-string field that does not close"));
            };
            match c {
                '{' => self.replacement_field(quote, triple)?,
                '}' => return Ok(()),
                '\\' => {
                    self.bump();
                }
                '\n' | '\r' if !triple => {
                    return Err(self.error("an f-string field that does not close"));
                }
                c if c == quote
                    && (!triple || (self.peek() == Some(quote) && self.peek2() == Some(quote))) =>
                {
                    return Err(self.error("an f-string field that does not close"));
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of the one string token in `src`.
    fn string(src: &str) -> Option<String> {
        let tokens = tokenize(src).unwrap();
        let strings: Vec<_> = tokens
            .toks
            .iter()
            .filter_map(|t| match &t.kind {
                Kind::Str(v) => Some(v.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(strings.len(), 1, "{src}: {:?}", tokens.toks);
        strings.into_iter().next().unwrap()
    }

    fn kinds(src: &str) -> Vec<(Kind, String)> {
        let tokens = tokenize(src).unwrap();
        (0..tokens.toks.len())
            .map(|i| (tokens.toks[i].kind.clone(), tokens.text(i).to_string()))
            .collect()
    }

    #[test]
    fn every_string_form_reads_as_python_reads_it() {
        for (src, value) in [
            (r#"'a'"#, "a"),
            (r#""a'b""#, "a'b"),
            (r#"'Google\'s'"#, "Google's"),
            (r#"'a\\'"#, "a\\"),
            (r#"'\x41\101\u00e9\n'"#, "AAé\n"),
            (r#"'\q'"#, "\\q"),
            (r#"r'\''"#, "\\'"),
            (r#"r'\\'"#, "\\\\"),
            (r#"R"\d+""#, "\\d+"),
            (r#"u'x'"#, "x"),
            (r#"U'x'"#, "x"),
            (r#"f'no fields {{}}'"#, "no fields {}"),
            (r#"'''a 'b' ''c'' setup( )'''"#, "a 'b' ''c'' setup( )"),
            ("\"\"\"two\nlines\"\"\"", "two\nlines"),
            ("'joined \\\nline'", "joined line"),
            ("'a' \"b\" '''c'''", "abc"),
            ("('a'\n  # between\n  'b')", "ab"),
        ] {
            assert_eq!(string(src).as_deref(), Some(value), "{src}");
        }
    }

    #[test]
    fn an_f_string_field_makes_the_string_computed() {
        for src in [
            "f'{x}'",
            "F'v{x!r:>{width}}'",
            "rf'\\d{n}'",
            "fR'{x}'",
            "f'{d[\"k\"]}'",
            // Python 3.12: the same quote inside a field.
            "f'{', '.join(xs)}'",
            "f'{f'{x}'}'",
            "f'''{\n  x  # a comment\n}'''",
            "'a' f'{b}'",
            "t'{x}'",
        ] {
            assert_eq!(string(src), None, "{src}");
        }
        assert_eq!(string("'\\N{BULLET}'"), None);
    }

    #[test]
    fn raw_strings_keep_backslashes_and_never_end_on_an_escaped_quote() {
        assert!(tokenize(r"r'\'").is_err());
        assert_eq!(string(r#"r'a\'b'"#).as_deref(), Some("a\\'b"));
        assert_eq!(string(r#"br'\'' + 'x'"#), Some("x".to_string()));
        assert_eq!(
            kinds(r#"rb'\x' Rb"y""#),
            [
                (Kind::Bytes, r#"rb'\x' Rb"y""#.to_string()),
                (Kind::Newline, String::new())
            ]
        );
    }

    #[test]
    fn comments_and_strings_hold_no_brackets() {
        let src = "setup(  # a comment :(\n  d='(', e=\"\"\")\n\"\"\"  # ]\n)\nx = 1\n";
        let tokens = tokenize(src).unwrap();
        let open = &tokens.toks[1];
        assert_eq!(tokens.text(1), "(");
        let close = open.pair.unwrap();
        assert_eq!(tokens.text(close), ")");
        assert_eq!(tokens.toks[close].line, 4);
        // One logical line for the call, one for the assignment.
        let newlines = tokens
            .toks
            .iter()
            .filter(|t| t.kind == Kind::Newline)
            .count();
        assert_eq!(newlines, 2);
        let x = tokens.toks.iter().position(|t| t.line == 5).unwrap();
        assert!(tokens.toks[x].line_start && !tokens.toks[x].indented);
    }

    #[test]
    fn lines_continue_and_indent_as_python_has_them() {
        let src = "a = 1 + \\\n  2\nif a:\n    b = [\n1]\n";
        let tokens = tokenize(src).unwrap();
        let starts: Vec<(&str, bool)> = (0..tokens.toks.len())
            .filter(|i| tokens.toks[*i].line_start)
            .map(|i| (tokens.text(i), tokens.toks[i].indented))
            .collect();
        assert_eq!(starts, [("a", false), ("if", false), ("b", true)]);
    }

    #[test]
    fn what_python_refuses_is_an_error_with_its_line() {
        for (src, line) in [
            ("x = 'open", 1),
            ("x = (\n1,\n", 1),
            ("x = [1)", 1),
            ("\n\nx = 1]", 3),
            ("x = '''never", 1),
            ("x = f'{x'", 1),
            ("x = f'}'", 1),
            ("x = 1 \\ 2", 1),
            ("x = '\\x4'", 1),
            ("x = b'a' 'b'", 1),
            ("x = $", 1),
            ("x = f'{x:'", 1),
        ] {
            let err = tokenize(src).unwrap_err();
            assert_eq!(err.line, line, "{src}: {err}");
        }
    }

    #[test]
    fn reads_are_bounded() {
        let deep = "[".repeat(MAX_NESTING + 1) + &"]".repeat(MAX_NESTING + 1);
        assert!(tokenize(&deep).is_err());
        let fdeep = "f'{".repeat(MAX_NESTING) + &"}'".repeat(MAX_NESTING);
        assert!(tokenize(&fdeep).is_err());
        let many = "x,".repeat(MAX_TOKENS);
        assert!(tokenize(&many).is_err());
        let big = "#".repeat(MAX_SOURCE_BYTES + 1);
        assert!(tokenize(&big).is_err());
    }
}
