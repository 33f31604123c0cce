//! A pretty-printing JSON writer that makes the bytes `serde_json`'s
//! `to_writer_pretty` makes (two-space indent, `": "`, `[]` and `{}` when
//! empty, the same string escapes), for a report of hundreds of megabytes:
//! a shared chain puts a few million strings in one (issue 14), and going
//! through serde spent a quarter of the audit's time there. The caller says
//! what comes next (`key`, `item`, a value); nothing is checked but nesting.

use std::io::{self, Write};

/// Bytes kept before they are handed to the output.
const CHUNK: usize = 1 << 16;

/// Two spaces a level, for the levels a report has.
const SPACES: &[u8; 16] = b"                ";

fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// Whether any byte needs escaping, eight bytes at a time: a word has a
/// zero byte exactly when `(w - 0x01…01) & !w & 0x80…80` is not zero, and
/// a byte below 0x20 exactly when `(w - 0x20…20) & !w & 0x80…80` is not (a
/// borrow may mark the wrong byte, never a word without one).
fn any_needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGH;
    let mut words = bytes.chunks_exact(8);
    let mut flagged = 0;
    for word in &mut words {
        let mut w = [0; 8];
        w.copy_from_slice(word);
        let w = u64::from_ne_bytes(w);
        let control = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
        flagged |=
            control | zero(w ^ (ONES * u64::from(b'"'))) | zero(w ^ (ONES * u64::from(b'\\')));
    }
    flagged != 0 || words.remainder().iter().any(|&byte| needs_escape(byte))
}

pub(crate) struct Pretty<'w> {
    buf: Vec<u8>,
    out: &'w mut dyn Write,
    /// One entry per open array or object: whether it holds a value yet.
    open: Vec<bool>,
}

impl<'w> Pretty<'w> {
    pub(crate) fn new(out: &'w mut dyn Write) -> Self {
        Self {
            buf: Vec::with_capacity(CHUNK + 4096),
            out,
            open: Vec::new(),
        }
    }

    /// `{`; its entries come as `key` then a value.
    pub(crate) fn begin_object(&mut self) {
        self.open.push(false);
        self.buf.push(b'{');
    }

    pub(crate) fn end_object(&mut self) {
        self.close(b'}');
    }

    /// `[`; its values come each after `item`.
    pub(crate) fn begin_array(&mut self) {
        self.open.push(false);
        self.buf.push(b'[');
    }

    pub(crate) fn end_array(&mut self) {
        self.close(b']');
    }

    fn close(&mut self, bracket: u8) {
        if self.open.pop() == Some(true) {
            self.newline();
        }
        self.buf.push(bracket);
    }

    /// The separator and indent before the next value of the innermost
    /// array or object.
    fn next(&mut self) {
        let first = match self.open.last_mut() {
            Some(has_value) => !std::mem::replace(has_value, true),
            None => true,
        };
        if !first {
            self.buf.push(b',');
        }
        self.newline();
    }

    fn newline(&mut self) {
        self.buf.push(b'\n');
        let width = 2 * self.open.len();
        match SPACES.get(..width) {
            Some(indent) => self.buf.extend_from_slice(indent),
            None => self.buf.resize(self.buf.len() + width, b' '),
        }
    }

    /// An object's key; its value follows.
    pub(crate) fn key(&mut self, key: &str) {
        self.next();
        self.escaped(key);
        self.buf.extend_from_slice(b": ");
    }

    /// The next value of an array follows.
    pub(crate) fn item(&mut self) {
        self.next();
    }

    pub(crate) fn string(&mut self, value: &str) {
        self.escaped(value);
    }

    /// A string, or `null` when there is none.
    pub(crate) fn string_or_null(&mut self, value: Option<&str>) {
        match value {
            Some(value) => self.escaped(value),
            None => self.buf.extend_from_slice(b"null"),
        }
    }

    pub(crate) fn number(&mut self, value: usize) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut rest = value;
        loop {
            at -= 1;
            // A digit: the remainder is below 10.
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        self.buf.extend_from_slice(&digits[at..]);
    }

    /// A quoted string, escaped as serde_json escapes it: `"` and `\`, and
    /// control characters (by name where JSON has one, else `\u00XX`);
    /// everything else as it is.
    fn escaped(&mut self, value: &str) {
        let bytes = value.as_bytes();
        self.buf.reserve(bytes.len() + 2);
        self.buf.push(b'"');
        // Nearly every string has nothing to escape: one pass a word at a
        // time says so.
        if any_needs_escape(bytes) {
            self.escape(bytes);
        } else {
            self.buf.extend_from_slice(bytes);
        }
        self.buf.push(b'"');
    }

    fn escape(&mut self, bytes: &[u8]) {
        let mut start = 0;
        for (i, &byte) in bytes.iter().enumerate() {
            if !needs_escape(byte) {
                continue;
            }
            self.buf.extend_from_slice(&bytes[start..i]);
            start = i + 1;
            let named: &[u8] = match byte {
                b'"' => b"\\\"",
                b'\\' => b"\\\\",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                0x08 => b"\\b",
                0x0c => b"\\f",
                _ => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    self.buf.extend_from_slice(b"\\u00");
                    self.buf.push(HEX[usize::from(byte >> 4)]);
                    self.buf.push(HEX[usize::from(byte & 0xf)]);
                    continue;
                }
            };
            self.buf.extend_from_slice(named);
        }
        self.buf.extend_from_slice(&bytes[start..]);
    }

    /// Hand what is made so far to the output once there is a chunk of it.
    pub(crate) fn drain(&mut self) -> io::Result<()> {
        if self.buf.len() >= CHUNK {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Everything, with a final newline.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.buf.push(b'\n');
        self.out.write_all(&self.buf)?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn written(make: impl FnOnce(&mut Pretty<'_>)) -> String {
        let mut out = Vec::new();
        let mut pretty = Pretty::new(&mut out);
        make(&mut pretty);
        pretty.finish().ok();
        String::from_utf8(out).unwrap_or_default()
    }

    #[derive(serde::Serialize)]
    struct Entry<'a> {
        n: usize,
        none: Option<u8>,
        keyed: BTreeMap<&'a str, &'a str>,
        zero: usize,
        strings: &'a [&'a str],
    }

    #[derive(serde::Serialize)]
    struct Top<'a> {
        empty: Vec<u8>,
        #[serde(rename = "empty object")]
        empty_object: BTreeMap<u8, u8>,
        list: Vec<Entry<'a>>,
        version: u32,
    }

    /// The word-at-a-time check says what a byte-by-byte one says, for every
    /// byte at every offset among different neighbours.
    #[test]
    fn the_word_check_is_the_byte_check() {
        for byte in 0..=u8::MAX {
            for len in 1..20 {
                for at in 0..len {
                    for fill in [b'a', b' ', b'!', b'#', 0x1f, 0x7f, 0x80, 0xa0, 0xff] {
                        let mut bytes = vec![fill; len];
                        bytes[at] = byte;
                        let expected = bytes.iter().any(|&b| needs_escape(b));
                        assert_eq!(any_needs_escape(&bytes), expected, "{bytes:?}");
                    }
                }
            }
        }
    }

    /// Every ASCII character, some beyond, and the nesting shapes the report
    /// has, against serde_json itself.
    #[test]
    fn writes_what_serde_json_writes() {
        let every_ascii: String = (0u8..=0x7f).map(char::from).collect();
        let strings = [
            every_ascii.as_str(),
            "",
            "pip install \"$PKG\" 'x>=1' \\\n  --no-deps",
            "é ü … \u{2028} \u{feff} 🦀",
        ];
        let mine = written(|p| {
            p.begin_object();
            p.key("empty");
            p.begin_array();
            p.end_array();
            p.key("empty object");
            p.begin_object();
            p.end_object();
            p.key("list");
            p.begin_array();
            for s in strings {
                p.item();
                p.begin_object();
                p.key("n");
                p.number(usize::MAX);
                p.key("none");
                p.string_or_null(None);
                p.key("keyed");
                p.begin_object();
                p.key(s);
                p.string(s);
                p.end_object();
                p.key("zero");
                p.number(0);
                p.key("strings");
                p.begin_array();
                for s in strings {
                    p.item();
                    p.string(s);
                }
                p.end_array();
                p.end_object();
            }
            p.end_array();
            p.key("version");
            p.number(1);
            p.end_object();
        });
        let top = Top {
            empty: Vec::new(),
            empty_object: BTreeMap::new(),
            list: strings
                .iter()
                .map(|s| Entry {
                    n: usize::MAX,
                    none: None,
                    keyed: BTreeMap::from([(*s, *s)]),
                    zero: 0,
                    strings: &strings,
                })
                .collect(),
            version: 1,
        };
        let theirs = serde_json::to_string_pretty(&top).unwrap_or_default() + "\n";
        assert_eq!(mine, theirs);
    }
}
