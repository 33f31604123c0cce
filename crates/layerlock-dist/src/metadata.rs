//! Core metadata (the `METADATA` file of a wheel): the fields resolution needs.

use std::borrow::Cow;
use std::str::FromStr;
use std::sync::OnceLock;

use uv_normalize::{ExtraName, PackageName};
use uv_pep440::{Version, VersionSpecifiers};
use uv_pep508::{Requirement, VerbatimUrl};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    #[error("METADATA has no `{0}` field")]
    Missing(&'static str),
    #[error("METADATA field `{field}` is invalid: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    #[error("METADATA is not UTF-8")]
    NotUtf8,
}

#[derive(Debug, Clone)]
pub struct CoreMetadata {
    pub name: PackageName,
    pub version: Version,
    /// The `Requires-Dist` lines that may hold with no extra asked; those
    /// that hold only under an extra are [`CoreMetadata::requires_all`]'s.
    pub requires_dist: Vec<Requirement<VerbatimUrl>>,
    pub requires_python: Option<VersionSpecifiers>,
    pub provides_extra: Vec<ExtraName>,
    /// Extras whose requirements only running the build could say (a
    /// `setup.py` that computes them, read from an sdist): asking for one
    /// is refused, while the rest of the metadata holds.
    pub computed_extras: Vec<ExtraName>,
    /// `Requires-Dist` lines that could not be read, kept for warnings
    /// (those that hold only under an extra: once they are read).
    pub unreadable: Vec<String>,
    /// Lines that hold only under an extra, as written: most of a
    /// package's lines are for extras nobody asks for, and parsing their
    /// markers was most of reading METADATA. Parsed when first asked for.
    under_extras: Vec<String>,
    under_extras_read: OnceLock<(Vec<Requirement<VerbatimUrl>>, Vec<String>)>,
}

impl PartialEq for CoreMetadata {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.version == other.version
            && self.requires_dist == other.requires_dist
            && self.requires_python == other.requires_python
            && self.provides_extra == other.provides_extra
            && self.computed_extras == other.computed_extras
            && self.unreadable == other.unreadable
            && self.under_extras == other.under_extras
    }
}

impl Eq for CoreMetadata {}

impl CoreMetadata {
    /// Parse the header part of a METADATA file (RFC 822 style fields up to
    /// the first blank line; continuation lines start with whitespace).
    pub fn parse(bytes: &[u8]) -> Result<Self, MetadataError> {
        // Only the header is read (and must be UTF-8); the description
        // after it is often most of the file.
        let text =
            std::str::from_utf8(&bytes[..header_len(bytes)]).map_err(|_| MetadataError::NotUtf8)?;
        // The fields resolution reads, borrowed from `text` unless a
        // continuation line joins onto one; other fields are skipped.
        let mut fields: Vec<(&'static str, Cow<'_, str>)> = Vec::new();
        let mut kept = false;
        for line in text.lines() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.is_empty() {
                break;
            }
            if line.starts_with([' ', '\t']) {
                // A continuation of the field before, if that one is read.
                if kept && let Some((_, value)) = fields.last_mut() {
                    let value = value.to_mut();
                    value.push(' ');
                    value.push_str(line.trim());
                }
                continue;
            }
            if let Some((key, value)) = line.split_once(':') {
                let key = key.trim();
                let known = READ_FIELDS.iter().find(|k| key.eq_ignore_ascii_case(k));
                if let Some(known) = known {
                    fields.push((known, Cow::Borrowed(value.trim())));
                }
                kept = known.is_some();
            }
        }
        let get = |key: &str| {
            fields
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.as_ref())
        };
        let name = get("name").ok_or(MetadataError::Missing("Name"))?;
        let name = PackageName::from_str(name).map_err(|e| MetadataError::Invalid {
            field: "Name",
            message: e.to_string(),
        })?;
        let version = get("version").ok_or(MetadataError::Missing("Version"))?;
        let version = Version::from_str(version).map_err(|e| MetadataError::Invalid {
            field: "Version",
            message: e.to_string(),
        })?;
        let requires_python = match get("requires-python") {
            Some(v) if !v.is_empty() => Some(
                VersionSpecifiers::from_str(v)
                    .or_else(|e| VersionSpecifiers::from_str(&lenient(v)).map_err(|_| e))
                    .map_err(|e| MetadataError::Invalid {
                        field: "Requires-Python",
                        message: e.to_string(),
                    })?,
            ),
            _ => None,
        };
        let (mut eager, mut under_extras) = (Vec::new(), Vec::new());
        for (_, value) in fields.iter().filter(|(k, _)| *k == "requires-dist") {
            if only_under_an_extra(value) {
                under_extras.push(value.to_string());
            } else {
                eager.push(value.as_ref());
            }
        }
        let (requires_dist, unreadable) = read_requirements(eager);
        let extras = |field: &str| {
            fields
                .iter()
                .filter(|(k, _)| *k == field)
                .filter_map(|(_, v)| ExtraName::from_str(v).ok())
                .collect()
        };
        let provides_extra = extras("provides-extra");
        let computed_extras = extras(COMPUTED_EXTRA);
        Ok(Self {
            name,
            version,
            requires_dist,
            requires_python,
            provides_extra,
            computed_extras,
            unreadable,
            under_extras,
            under_extras_read: OnceLock::new(),
        })
    }

    /// Every `Requires-Dist` line read: [`CoreMetadata::requires_dist`],
    /// then those that hold only under an extra.
    pub fn requires_all(&self) -> impl Iterator<Item = &Requirement<VerbatimUrl>> {
        self.requires_dist
            .iter()
            .chain(self.under_extras().0.iter())
    }

    /// The lines that hold only under an extra and could not be read.
    pub fn unreadable_under_extras(&self) -> &[String] {
        &self.under_extras().1
    }

    fn under_extras(&self) -> &(Vec<Requirement<VerbatimUrl>>, Vec<String>) {
        self.under_extras_read
            .get_or_init(|| read_requirements(self.under_extras.iter().map(String::as_str)))
    }
}

/// The header layerlock writes into the METADATA it reads from an sdist
/// for each extra whose requirements are computed
/// ([`CoreMetadata::computed_extras`]). No standard field says this: PEP
/// 643's `Dynamic` names whole fields, not one extra. In a wheel's METADATA
/// it could only make a request for that extra refused.
pub const COMPUTED_EXTRA_FIELD: &str = "Layerlock-Computed-Extra";

/// [`COMPUTED_EXTRA_FIELD`] as [`READ_FIELDS`] spells it.
const COMPUTED_EXTRA: &str = "layerlock-computed-extra";

/// The header fields [`CoreMetadata::parse`] reads, lower-cased.
const READ_FIELDS: &[&str] = &[
    "name",
    "version",
    "requires-python",
    "requires-dist",
    "provides-extra",
    COMPUTED_EXTRA,
];

/// The length of a METADATA file's header: up to and with the first empty
/// line (`\n` or `\r\n` alone), or all of it.
pub fn header_len(bytes: &[u8]) -> usize {
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', bytes) {
        if matches!(&bytes[start..end], b"" | b"\r") {
            return end + 1;
        }
        start = end + 1;
    }
    bytes.len()
}

/// Most extras one requirement asks for. Real ones ask for a handful; the
/// resolver makes a package of each, and 100,000 of them take minutes.
pub const MAX_EXTRAS: usize = 128;

/// Requirement lines read, and those that could not be.
fn read_requirements<'a>(
    lines: impl IntoIterator<Item = &'a str>,
) -> (Vec<Requirement<VerbatimUrl>>, Vec<String>) {
    let (mut read, mut unreadable) = (Vec::new(), Vec::new());
    for line in lines {
        // Hostile METADATA must not overflow the marker parser's stack nor
        // make rendering the marker take minutes.
        if crate::MarkerWeight::of_requirement(line)
            .refusal()
            .is_some()
        {
            unreadable.push(line.to_string());
            continue;
        }
        let parsed = Requirement::<VerbatimUrl>::from_str(line)
            .or_else(|e| Requirement::<VerbatimUrl>::from_str(&lenient(line)).map_err(|_| e));
        match parsed {
            Ok(req) if req.extras.len() > MAX_EXTRAS => unreadable.push(line.to_string()),
            Ok(req) => read.push(req),
            Err(_) => unreadable.push(line.to_string()),
        }
    }
    (read, unreadable)
}

/// Two mistakes old releases published that pip and uv read anyway, read
/// the same way: a trailing comma (`>=3.6,`) and a wildcard on an
/// ordering operator (`>=1.19.*`, meaning `>=1.19`). Only tried once the
/// text failed to parse as written; nothing else is guessed.
fn lenient(text: &str) -> String {
    let (spec, marker) = match text.split_once(';') {
        Some((spec, marker)) => (spec, Some(marker)),
        None => (text, None),
    };
    let mut fixed = spec.trim_end().trim_end_matches(',').to_string();
    for op in [">=", "<=", ">", "<", "~="] {
        let mut out = String::new();
        let mut rest = fixed.as_str();
        while let Some(at) = rest.find(op) {
            out.push_str(&rest[..at + op.len()]);
            rest = &rest[at + op.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '*' || c == ' '))
                .unwrap_or(rest.len());
            let version = &rest[..end];
            out.push_str(version.strip_suffix(".*").unwrap_or(version));
            rest = &rest[end..];
        }
        out.push_str(rest);
        fixed = out;
    }
    match marker {
        Some(marker) => format!("{fixed};{marker}"),
        None => fixed,
    }
}

/// Whether a `Requires-Dist` line can hold only when some extra is asked.
/// Only the plainest shape counts: a marker of `and`s and parentheses over
/// comparisons of the marker variables with quoted values, one of them
/// exactly `extra == '…'` (or `'…' == extra`), which is false when no
/// extra is asked, and so is all of it. Anything else, `or`, `not`, `in`,
/// another operator on `extra` (which the marker parser sets aside as
/// always true), a word it does not know, a second `;`, is read at once.
fn only_under_an_extra(line: &str) -> bool {
    // A URL may hold `;`: such lines are read at once.
    let Some((_, marker)) = line.split_once(';').filter(|_| !line.contains('@')) else {
        return false;
    };
    let Some(tokens) = marker_tokens(marker) else {
        return false;
    };
    let words_known = tokens.iter().all(|t| match t {
        Token::Word(w) => *w == "and" || MARKER_VARIABLES.contains(w),
        _ => true,
    });
    words_known
        && tokens.windows(3).any(|w| {
            matches!(
                w,
                [Token::Word("extra"), Token::Op("=="), Token::Quoted]
                    | [Token::Quoted, Token::Op("=="), Token::Word("extra")]
            )
        })
}

/// The variables PEP 508 markers compare.
const MARKER_VARIABLES: &[&str] = &[
    "extra",
    "implementation_name",
    "implementation_version",
    "os_name",
    "platform_machine",
    "platform_python_implementation",
    "platform_release",
    "platform_system",
    "platform_version",
    "python_full_version",
    "python_version",
    "sys_platform",
];

#[derive(Debug, PartialEq)]
enum Token<'a> {
    Word(&'a str),
    Op(&'a str),
    Quoted,
    Paren,
}

/// A marker's tokens; `None` for a character no plain marker holds.
fn marker_tokens(marker: &str) -> Option<Vec<Token<'_>>> {
    let mut tokens = Vec::new();
    let mut rest = marker;
    while let Some(c) = rest.chars().next() {
        let taken = if c.is_whitespace() {
            c.len_utf8()
        } else if c == '(' || c == ')' {
            tokens.push(Token::Paren);
            1
        } else if c == '"' || c == '\'' {
            let end = rest[1..].find(c)? + 2;
            tokens.push(Token::Quoted);
            end
        } else if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
                .unwrap_or(rest.len());
            tokens.push(Token::Word(&rest[..end]));
            end
        } else if "=<>!~".contains(c) {
            let end = rest
                .find(|c: char| !"=<>!~".contains(c))
                .unwrap_or(rest.len());
            tokens.push(Token::Op(&rest[..end]));
            end
        } else {
            return None;
        };
        rest = &rest[taken..];
    }
    Some(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deeply_nested_markers_are_unreadable_not_a_stack_overflow() {
        let deep = format!(
            "Metadata-Version: 2.1\nName: a\nVersion: 1\nRequires-Dist: b; {}python_version > '3'{}\n",
            "(".repeat(10_000),
            ")".repeat(10_000)
        );
        let meta = CoreMetadata::parse(deep.as_bytes()).expect("parses");
        assert!(meta.requires_dist.is_empty());
        assert_eq!(meta.unreadable.len(), 1);
    }

    #[test]
    fn two_old_mistakes_are_read_as_pip_and_uv_read_them() {
        let meta = CoreMetadata::parse(
            b"Metadata-Version: 2.1\nName: a\nVersion: 1\nRequires-Python: >=3.6,\nRequires-Dist: numpy (>=1.19.*)\nRequires-Dist: b (>=2.*,<3) ; python_version >= '3.7'\n",
        )
        .expect("reads");
        assert_eq!(
            meta.requires_python.map(|r| r.to_string()).as_deref(),
            Some(">=3.6")
        );
        let deps: Vec<String> = meta.requires_dist.iter().map(ToString::to_string).collect();
        assert_eq!(
            deps,
            ["numpy>=1.19", "b>=2,<3 ; python_full_version >= '3.7'"]
        );
        assert!(meta.unreadable.is_empty());
        // What is not one of the two is still not guessed.
        let bad = CoreMetadata::parse(
            b"Metadata-Version: 2.1\nName: a\nVersion: 1\nRequires-Python: >=three\n",
        );
        assert!(bad.is_err());
    }

    #[test]
    fn parses_fields_and_continuations() {
        let meta = CoreMetadata::parse(
            b"Metadata-Version: 2.1\nName: Foo_Bar\nVersion: 1.0\nRequires-Python: >=3.8\nRequires-Dist: baz>=1;\n  extra == 'x'\nRequires-Dist: qux\nProvides-Extra: x\n\nRequires-Dist: body-is-ignored\n",
        )
        .unwrap();
        assert_eq!(meta.name.as_ref(), "foo-bar");
        assert_eq!(meta.requires_all().count(), 2);
        // `baz` holds only under the extra.
        assert_eq!(meta.requires_dist.len(), 1);
        assert_eq!(meta.provides_extra.len(), 1);
        assert!(meta.requires_python.is_some());
    }

    #[test]
    fn the_header_alone_is_read() {
        // Field names in any case; a continuation joins the field before
        // it only; a line without a colon is passed over; the description
        // need not be UTF-8.
        let mut text = b"NAME: app\nversion: 2.0\nSummary: a\n  Requires-Dist: not-a-field\n\
            REQUIRES-DIST: one\nno colon here\n  >=1\nClassifier: x\r\n\r\n\
            Requires-Dist: in-the-body\n"
            .to_vec();
        text.extend_from_slice(&[0xff, 0xfe, b'\n']);
        let meta = CoreMetadata::parse(&text).unwrap();
        assert_eq!(meta.name.as_ref(), "app");
        assert_eq!(meta.version.to_string(), "2.0");
        let names: Vec<String> = meta.requires_all().map(|r| r.to_string()).collect();
        assert_eq!(names, ["one>=1"]);
        assert_eq!(header_len(&text), text.len() - 30);
        assert_eq!(
            header_len(b"Name: a\nVersion: 1\n"),
            b"Name: a\nVersion: 1\n".len()
        );
        // Bytes that are not UTF-8 in the header still fail.
        assert_eq!(
            CoreMetadata::parse(b"Name: a\xff\nVersion: 1\n\n").err(),
            Some(MetadataError::NotUtf8)
        );
    }

    #[test]
    fn only_lines_false_without_an_extra_wait_to_be_read() {
        for (line, waits) in [
            ("a; extra == 'x'", true),
            ("a>=1; extra == \"x\" and python_version < \"3.11\"", true),
            ("a; (extra == 'x') and sys_platform == 'linux'", true),
            ("a; python_version >= '3.9' and (extra == 'x')", true),
            ("a; 'x' == extra", true),
            // The marker parser sets these comparisons aside as always
            // true, or cannot read them: read at once.
            ("a; extra===\"x\"", false),
            ("a; extra ~= 'x'", false),
            ("a; extra > 'x'", false),
            ("a; 'x' < extra", false),
            ("a; extra == python_version", false),
            ("a; os_name == extra", false),
            ("a; extra == extra", false),
            ("a; python_version >= '3' and extra ~= 'x'", false),
            ("a; extra == 'x' OR python_version > '3'", false),
            ("a; extra == \"x\" ; python_version > '3'", false),
            ("a; extra == 'x' and weird_variable == '1'", false),
            // May hold with no extra asked.
            ("a; extra == 'x' or python_version < '3.8'", false),
            ("a; extra != 'x'", false),
            ("a; (extra=='x')or(python_version<'3')", false),
            ("a; 'x' in extra", false),
            ("a; extra not in 'x'", false),
            ("a; python_version < '3.8'", false),
            ("a", false),
            // A quoted value is not a word of the marker.
            ("a; extra == 'or' and os_name == 'not in'", true),
            ("a; os_name == 'extra'", false),
            // A URL may hold `;`.
            ("a @ https://h/a.whl;x ; extra == 'x'", false),
            ("a; extra == 'x", false),
        ] {
            assert_eq!(only_under_an_extra(line), waits, "{line}");
        }
    }

    #[test]
    fn lines_under_extras_are_read_when_asked_for() {
        let deep = format!(
            "b; extra == 'x' and {}python_version > '3'{}",
            "(".repeat(100),
            ")".repeat(100)
        );
        let text = format!(
            "Metadata-Version: 2.1\nName: a\nVersion: 1\nRequires-Dist: c; extra == 'x'\nRequires-Dist: {deep}\nRequires-Dist: d\nRequires-Dist: e; extra == 'y' and python_version '3'\n"
        );
        let meta = CoreMetadata::parse(text.as_bytes()).unwrap();
        assert_eq!(meta.requires_dist.len(), 1);
        assert!(meta.unreadable.is_empty());
        let all: Vec<String> = meta.requires_all().map(|r| r.name.to_string()).collect();
        assert_eq!(all, vec!["d", "c"]);
        assert_eq!(meta.unreadable_under_extras().len(), 2);
        assert_eq!(meta.clone(), meta);
    }
}
