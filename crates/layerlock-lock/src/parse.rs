//! A reader for pip requirements files: `-r`/`-c` includes, options lines,
//! per-requirement `--hash` options, markers, continuations and comments.
//!
//! The format is pip's (<https://pip.pypa.io/en/stable/reference/requirements-file-format/>);
//! requirement lines themselves are PEP 508 and parsed by `uv-pep508`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use layerlock_dist::MarkerWeight;
use uv_normalize::PackageName;
use uv_pep508::{Requirement, VerbatimUrl};

use crate::error::{LockError, Origin};

/// One requirement line, with where it came from.
#[derive(Debug, Clone)]
pub struct Entry {
    pub requirement: Requirement<VerbatimUrl>,
    pub origin: Origin,
    /// `--hash=ALGO:HEX` options, as written (`sha256:abc…`).
    pub hashes: Vec<String>,
    pub editable: bool,
}

/// Index options found in options lines (`--index-url` and friends).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexOptions {
    pub index_url: Option<String>,
    pub extra_index_urls: Vec<String>,
    pub find_links: Vec<String>,
    pub no_index: bool,
}

impl IndexOptions {
    /// Adds the options of one more input file: the first `--index-url`
    /// stands, the rest accumulate.
    pub fn add(&mut self, other: IndexOptions) {
        self.index_url = self.index_url.take().or(other.index_url);
        self.extra_index_urls.extend(other.extra_index_urls);
        self.find_links.extend(other.find_links);
        self.no_index |= other.no_index;
    }

    /// The indexes these options ask for, extra ones first (as uv asks
    /// them), over `default` when only extras are given; `None` when they
    /// name no index (the caller's stay), empty for `--no-index`.
    pub fn index_urls(&self, default: &str) -> Option<Vec<String>> {
        if self.index_url.is_none() && self.extra_index_urls.is_empty() && !self.no_index {
            return None;
        }
        if self.no_index {
            return Some(Vec::new());
        }
        let main = self
            .index_url
            .clone()
            .unwrap_or_else(|| default.to_string());
        Some(
            self.extra_index_urls
                .iter()
                .cloned()
                .chain(std::iter::once(main))
                .collect(),
        )
    }
}

/// A requirements file with its includes flattened.
#[derive(Debug, Clone, Default)]
pub struct RequirementsFile {
    /// Requirements from this file and every `-r` include, in file order.
    pub entries: Vec<Entry>,
    /// Requirements from `-c` constraint files.
    pub constraints: Vec<Entry>,
    pub options: IndexOptions,
    /// The files read, in the order first read (for messages and `# via`).
    pub files: Vec<PathBuf>,
    /// `-e PATH` lines that name no package (no `#egg=`), as `pip freeze`
    /// writes for a local editable install. Each caller decides: a base
    /// may name it from the comment above, an input cannot be built.
    pub unnamed_editables: Vec<(Origin, String)>,
    /// Bare URL lines that name no package (`git+https://…/b.git@v1`, no
    /// `#egg=`), kept only when read with [`RequirementsFile::read_unnamed`];
    /// otherwise they are refused.
    pub unnamed_urls: Vec<(Origin, String)>,
    keep_unnamed: bool,
}

impl RequirementsFile {
    /// Read `path` and everything it includes.
    pub fn read(path: &Path) -> Result<Self, LockError> {
        let mut file = Self::default();
        let mut stack = Vec::new();
        read_into(path, Kind::Requirement, &mut file, &mut stack)?;
        Ok(file)
    }

    /// [`RequirementsFile::read`], keeping bare URL lines that name no
    /// package in `unnamed_urls` (pip installs them; only a build says
    /// what they are): for readers that judge a file, not resolve it.
    pub fn read_unnamed(path: &Path) -> Result<Self, LockError> {
        let mut file = Self {
            keep_unnamed: true,
            ..Self::default()
        };
        let mut stack = Vec::new();
        read_into(path, Kind::Requirement, &mut file, &mut stack)?;
        Ok(file)
    }

    /// Parse `text` as if read from `path` (includes are resolved beside `path`).
    pub fn parse(path: &Path, text: &str) -> Result<Self, LockError> {
        let mut file = Self::default();
        let mut stack = vec![path.to_path_buf()];
        file.files.push(path.to_path_buf());
        parse_into(path, text, Kind::Requirement, &mut file, &mut stack)?;
        Ok(file)
    }
}

/// Requirements files past this size are refused (a lock of every package
/// on PyPI with hashes is far smaller).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Deepest chain of `-r`/`-c` includes followed.
const MAX_INCLUDE_DEPTH: usize = 64;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Requirement,
    Constraint,
}

/// A text file a user or a file names: only a regular file (`-r /dev/zero`
/// or a FIFO must not hang), at most 64 MiB, UTF-8 without NUL bytes
/// (`/proc/self/environ` is refused, and never quoted in an error).
pub fn read_text(path: &Path) -> Result<String, LockError> {
    let io = |source| LockError::Io {
        path: path.to_path_buf(),
        source,
    };
    // The plain error: fs_err's words ("failed to query resolved
    // metadata") say nothing to a user.
    let meta = std::fs::metadata(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => LockError::Missing {
            path: path.to_path_buf(),
        },
        _ => io(source),
    })?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return Err(LockError::NotRegular {
            path: path.to_path_buf(),
        });
    }
    let bytes = fs_err::read(path).map_err(io)?;
    // A NUL byte means binary data (or `/proc/self/environ`): refused, and
    // never quoted in an error.
    match decode(&bytes) {
        Some(text) if !text.contains('\0') => Ok(text),
        _ => Err(LockError::NotUtf8 {
            path: path.to_path_buf(),
        }),
    }
}

/// A file's text: UTF-8, or what its byte-order mark says, as pip reads a
/// requirements file (Windows editors save `requirements.txt` as UTF-16
/// with a BOM, and pip and uv install from it). A UTF-8 BOM is dropped.
fn decode(bytes: &[u8]) -> Option<String> {
    let utf16 = |rest: &[u8], unit: fn([u8; 2]) -> u16| {
        if !rest.len().is_multiple_of(2) {
            return None;
        }
        let units = rest.chunks_exact(2).map(|c| unit([c[0], c[1]]));
        char::decode_utf16(units)
            .collect::<Result<String, _>>()
            .ok()
    };
    if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        return String::from_utf8(rest.to_vec()).ok();
    }
    // UTF-32 marks begin as UTF-16's do: none is read (pip reads them,
    // but no editor writes them), and their NUL bytes refuse them below.
    if bytes.starts_with(b"\xFF\xFE\0\0") || bytes.starts_with(b"\0\0\xFE\xFF") {
        return None;
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
        return utf16(rest, u16::from_le_bytes);
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFE\xFF") {
        return utf16(rest, u16::from_be_bytes);
    }
    String::from_utf8(bytes.to_vec()).ok()
}

fn read_into(
    path: &Path,
    kind: Kind,
    out: &mut RequirementsFile,
    stack: &mut Vec<PathBuf>,
) -> Result<(), LockError> {
    if stack.iter().any(|p| p == path) {
        return Err(LockError::IncludeCycle {
            path: path.to_path_buf(),
        });
    }
    // Each include is a frame of recursion: a chain 5,000 deep must end in
    // an error, not a stack overflow.
    if stack.len() >= MAX_INCLUDE_DEPTH {
        return Err(LockError::IncludeTooDeep {
            path: path.to_path_buf(),
            depth: MAX_INCLUDE_DEPTH,
        });
    }
    let text = read_text(path)?;
    stack.push(path.to_path_buf());
    if !out.files.iter().any(|p| p == path) {
        out.files.push(path.to_path_buf());
    }
    parse_into(path, &text, kind, out, stack)?;
    stack.pop();
    Ok(())
}

/// One logical line: continuations joined, comment removed.
struct Logical {
    line: usize,
    text: String,
}

fn logical_lines(text: &str) -> Vec<Logical> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    let mut current: Option<Logical> = None;
    for (index, raw) in text.lines().enumerate() {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let (body, continued) = match raw.strip_suffix('\\') {
            // pip joins a line that ends in a backslash with the next one.
            Some(body) => (body, true),
            None => (raw, false),
        };
        let logical = current.get_or_insert_with(|| Logical {
            line: index + 1,
            text: String::new(),
        });
        logical.text.push_str(body);
        if !continued {
            out.extend(current.take());
        }
    }
    out.extend(current.take());
    for logical in &mut out {
        logical.text = strip_comment(&logical.text).to_string();
    }
    out
}

/// pip strips `#` comments that start a line or follow whitespace, so a URL
/// fragment such as `#egg=name` or `#sha256=` survives.
fn strip_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b == b'#' && (i == 0 || bytes[i - 1].is_ascii_whitespace()) {
            return &line[..i];
        }
    }
    line
}

/// `${NAME}` is expanded from the environment, as pip does; the names and
/// values expanded are returned too, so that errors can undo them.
fn expand_env(text: &str) -> (String, Vec<(String, String)>) {
    let mut expansions = Vec::new();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end)
                if !after[..end].is_empty()
                    && after[..end]
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') =>
            {
                // An undefined variable is left as written, as pip does.
                match std::env::var(&after[..end]) {
                    Ok(value) => {
                        out.push_str(&value);
                        expansions.push((after[..end].to_string(), value));
                    }
                    Err(_) => out.push_str(&rest[start..start + 2 + end + 1]),
                }
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str("${");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    (out, expansions)
}

/// Global options that change how pip installs, not what: accepted and ignored.
const IGNORED_FLAGS: &[&str] = &["--pre", "--prefer-binary", "--require-hashes"];
const IGNORED_WITH_VALUE: &[&str] = &[
    "--only-binary",
    "--no-binary",
    "--trusted-host",
    "--use-feature",
    "--config-settings",
    "--global-option",
    "--install-option",
    "--extra-index-url-strategy",
];

fn parse_into(
    path: &Path,
    text: &str,
    kind: Kind,
    out: &mut RequirementsFile,
    stack: &mut Vec<PathBuf>,
) -> Result<(), LockError> {
    let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
    for logical in logical_lines(text) {
        let (expanded, expansions) = expand_env(&logical.text);
        let result = parse_line(path, &dir, logical.line, &expanded, kind, out, stack);
        if let Err(err) = result {
            if expansions.is_empty() {
                return Err(err);
            }
            // Report the line as written: an expanded `${TOKEN}` must never
            // reach a message (a URL password, a secret path).
            let mut message = match &err {
                LockError::Syntax { message, .. } => message.clone(),
                other => other.to_string(),
            };
            for (name, value) in &expansions {
                if !value.is_empty() {
                    message = message.replace(value.as_str(), &format!("${{{name}}}"));
                }
            }
            return Err(LockError::Syntax {
                origin: Origin {
                    path: path.to_path_buf(),
                    line: logical.line,
                    column: 1,
                },
                text: logical.text.trim().to_string(),
                message,
            });
        }
    }
    Ok(())
}

/// One logical line, `${NAME}` already expanded.
fn parse_line(
    path: &Path,
    dir: &Path,
    line: usize,
    expanded: &str,
    kind: Kind,
    out: &mut RequirementsFile,
    stack: &mut Vec<PathBuf>,
) -> Result<(), LockError> {
    let trimmed = expanded.trim_start();
    let indent = expanded.len() - trimmed.len();
    let trimmed = trimmed.trim_end();
    if trimmed.is_empty() {
        return Ok(());
    }
    let origin = Origin {
        path: path.to_path_buf(),
        line,
        column: indent + 1,
    };
    if trimmed.starts_with('-') {
        let (flag, value) = split_option(trimmed);
        let need_value = |value: Option<&str>| -> Result<String, LockError> {
            value
                .map(str::to_string)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| LockError::Syntax {
                    origin: origin.clone(),
                    text: trimmed.to_string(),
                    message: format!("`{flag}` needs a value"),
                })
        };
        match flag {
            "-r" | "--requirement" | "-c" | "--constraint" => {
                let target = dir.join(need_value(value)?);
                let include_kind = if flag.starts_with("-c") || flag == "--constraint" {
                    Kind::Constraint
                } else {
                    kind
                };
                read_into(&target, include_kind, out, stack).map_err(|err| match err {
                    LockError::Io { path, source } => LockError::Include {
                        origin: origin.clone(),
                        path,
                        source,
                    },
                    LockError::Missing { path } => LockError::MissingInclude {
                        origin: origin.clone(),
                        path,
                    },
                    other => other,
                })?;
            }
            "-i" | "--index-url" => out.options.index_url = Some(need_value(value)?),
            "--extra-index-url" => out.options.extra_index_urls.push(need_value(value)?),
            "-f" | "--find-links" => {
                let link = need_value(value)?;
                // A relative find-links directory is relative to the file.
                let link = if link.contains("://") || Path::new(&link).is_absolute() {
                    link
                } else {
                    dir.join(link).display().to_string()
                };
                out.options.find_links.push(link);
            }
            "--no-index" => out.options.no_index = true,
            "-e" | "--editable" => {
                let value = need_value(value)?;
                let entry = match parse_requirement(&value, dir, &origin, indent + flag.len() + 1) {
                    Ok(entry) => entry,
                    Err(_) if looks_like_path(&value) => {
                        out.unnamed_editables.push((origin.clone(), value));
                        return Ok(());
                    }
                    Err(err) => return Err(err),
                };
                push(
                    out,
                    kind,
                    Entry {
                        editable: true,
                        ..entry
                    },
                );
            }
            f if IGNORED_FLAGS.contains(&f) => {}
            f if IGNORED_WITH_VALUE.contains(&f) => {}
            _ => {
                return Err(LockError::Syntax {
                    origin,
                    text: trimmed.to_string(),
                    message: format!("unknown option `{flag}`"),
                });
            }
        }
        return Ok(());
    }
    let entry = match parse_requirement(trimmed, dir, &origin, indent) {
        Ok(entry) => entry,
        Err(_) if out.keep_unnamed && kind == Kind::Requirement && is_bare_url(trimmed) => {
            out.unnamed_urls.push((origin, trimmed.to_string()));
            return Ok(());
        }
        Err(err) => return Err(err),
    };
    push(out, kind, entry);
    Ok(())
}

/// A line that is only a URL: a VCS, archive or file URL.
fn is_bare_url(line: &str) -> bool {
    let first = line.split_whitespace().next().unwrap_or_default();
    first.contains("://") || first.starts_with("file:")
}

fn push(out: &mut RequirementsFile, kind: Kind, entry: Entry) {
    match kind {
        Kind::Requirement => out.entries.push(entry),
        Kind::Constraint => out.constraints.push(entry),
    }
}

/// Split `--flag=value`, `--flag value` or `-rvalue`.
fn split_option(text: &str) -> (&str, Option<&str>) {
    if let Some(rest) = text.strip_prefix("--") {
        if let Some(eq) = rest.find('=') {
            let space = rest.find(char::is_whitespace).unwrap_or(usize::MAX);
            if eq < space {
                return (&text[..eq + 2], Some(rest[eq + 1..].trim()));
            }
        }
        return match text.find(char::is_whitespace) {
            Some(space) => (&text[..space], Some(text[space..].trim())),
            None => (text, None),
        };
    }
    // Short options: `-r file`, `-rfile`. Two characters, not two bytes:
    // `-é` must not split a character (found by fuzzing).
    let end = text.char_indices().nth(2).map_or(text.len(), |(i, _)| i);
    let flag = &text[..end];
    let value = text[flag.len()..].trim();
    (flag, (!value.is_empty()).then_some(value))
}

/// Parse one requirement with its trailing per-requirement options.
pub(crate) fn parse_requirement(
    text: &str,
    dir: &Path,
    origin: &Origin,
    column_offset: usize,
) -> Result<Entry, LockError> {
    let (spec, options) = split_requirement_options(text);
    let mut hashes = Vec::new();
    let mut tokens = options.split_whitespace().peekable();
    while let Some(token) = tokens.next() {
        let (flag, value) = match token.split_once('=') {
            Some((flag, value)) => (flag, Some(value.to_string())),
            None => (token, tokens.next().map(str::to_string)),
        };
        match flag {
            "--hash" => {
                let value = value.unwrap_or_default();
                let Some(hash) = hash_option(&value) else {
                    return Err(LockError::Syntax {
                        origin: origin.clone(),
                        text: text.chars().take(200).collect(),
                        message: format!(
                            "`--hash` wants sha256:HEX (or sha384/sha512), got `{}`",
                            value.chars().take(80).collect::<String>()
                        ),
                    });
                };
                hashes.push(hash);
            }
            "--config-settings" | "--global-option" | "--install-option" => {}
            _ => {
                return Err(LockError::Syntax {
                    origin: origin.clone(),
                    text: text.to_string(),
                    message: format!("unknown per-requirement option `{flag}`"),
                });
            }
        }
    }
    let spec = spec.trim();
    if let Some(refusal) = MarkerWeight::of_requirement(spec).refusal() {
        return Err(LockError::Syntax {
            origin: origin.clone(),
            text: text.chars().take(200).collect(),
            message: refusal.to_string(),
        });
    }
    let requirement = match Requirement::<VerbatimUrl>::parse(spec, dir) {
        Ok(requirement) => requirement,
        Err(err) => match egg_requirement(spec) {
            Some(requirement) => requirement,
            None => {
                let message = err.message.to_string();
                return Err(LockError::Syntax {
                    origin: Origin {
                        column: column_offset + err.start + 1,
                        ..origin.clone()
                    },
                    text: text.chars().take(200).collect(),
                    message: message.lines().next().unwrap_or_default().to_string(),
                });
            }
        },
    };
    if let Some(refusal) = layerlock_dist::written_refusal(&requirement.marker) {
        return Err(LockError::Syntax {
            origin: origin.clone(),
            text: text.chars().take(200).collect(),
            message: refusal.to_string(),
        });
    }
    if requirement.extras.len() > layerlock_dist::MAX_EXTRAS {
        return Err(LockError::Syntax {
            origin: origin.clone(),
            text: text.chars().take(200).collect(),
            message: format!(
                "it asks for {} extras; at most {} are read",
                requirement.extras.len(),
                layerlock_dist::MAX_EXTRAS
            ),
        });
    }
    Ok(Entry {
        requirement,
        origin: origin.clone(),
        hashes,
        editable: false,
    })
}

/// `sha256:HEX` as pip accepts it (sha256, sha384, sha512, with a digest
/// of the right length), lower-cased; anything else is refused.
fn hash_option(value: &str) -> Option<String> {
    let (algorithm, digest) = value.split_once(':')?;
    let algorithm = algorithm.to_ascii_lowercase();
    let length = match algorithm.as_str() {
        "sha256" => 64,
        "sha384" => 96,
        "sha512" => 128,
        _ => return None,
    };
    (digest.len() == length && digest.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| format!("{algorithm}:{}", digest.to_ascii_lowercase()))
}

/// A local directory or a VCS URL, as `pip freeze` writes after `-e`.
fn looks_like_path(value: &str) -> bool {
    let value = value.trim();
    value.starts_with('/')
        || value.starts_with('.')
        || value.starts_with("file:")
        || value.starts_with("git+")
        || value.starts_with("hg+")
        || value.starts_with("svn+")
        || value.starts_with("bzr+")
}

/// A bare VCS or archive URL with `#egg=NAME` names its package the old way;
/// it is read as `NAME @ URL`.
fn egg_requirement(spec: &str) -> Option<Requirement<VerbatimUrl>> {
    let (_, fragment) = spec.split_once('#')?;
    let name = fragment
        .split('&')
        .find_map(|part| part.strip_prefix("egg="))?;
    let name = PackageName::from_str(name).ok()?;
    let url = spec.trim();
    Requirement::<VerbatimUrl>::from_str(&format!("{name} @ {url}")).ok()
}

/// The requirement ends where the first ` --option` begins.
fn split_requirement_options(text: &str) -> (&str, &str) {
    let bytes = text.as_bytes();
    for i in 1..bytes.len().saturating_sub(1) {
        if bytes[i - 1].is_ascii_whitespace() && bytes[i] == b'-' && bytes[i + 1] == b'-' {
            return (&text[..i], &text[i..]);
        }
    }
    (text, "")
}

/// Names pinned by a set of entries, for messages.
pub fn names(entries: &[Entry]) -> BTreeSet<PackageName> {
    entries.iter().map(|e| e.requirement.name.clone()).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_file_is_read_as_utf8_or_by_its_byte_order_mark() {
        let utf16le: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(
                "numpy==1.26.4\r\nr\u{e9}n\n"
                    .encode_utf16()
                    .flat_map(u16::to_le_bytes),
            )
            .collect();
        assert_eq!(decode(&utf16le).unwrap(), "numpy==1.26.4\r\nr\u{e9}n\n");
        let utf16be: Vec<u8> = [0xFE, 0xFF]
            .into_iter()
            .chain("a==1\n".encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        assert_eq!(decode(&utf16be).unwrap(), "a==1\n");
        assert_eq!(decode(b"\xEF\xBB\xBFa==1\n").unwrap(), "a==1\n");
        assert_eq!(decode(b"a==1\n").unwrap(), "a==1\n");
        // An odd length, a lone surrogate, UTF-32, Latin-1: not read.
        assert!(decode(&utf16le[..utf16le.len() - 1]).is_none());
        assert!(decode(&[0xFF, 0xFE, 0x00, 0xD8]).is_none());
        assert!(decode(&[0xFF, 0xFE, 0, 0, b'a', 0, 0, 0]).is_none());
        assert!(decode(b"r\xe9n\n").is_none());
        // Read from a file, as every input is.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("requirements.txt");
        std::fs::write(&path, &utf16le).unwrap();
        assert_eq!(read_text(&path).unwrap(), "numpy==1.26.4\r\nr\u{e9}n\n");
        std::fs::write(&path, [0xFF, 0xFE, b'a', 0, 0, 0]).unwrap();
        assert!(
            read_text(&path)
                .unwrap_err()
                .to_string()
                .contains("save it as UTF-8")
        );
    }

    #[test]
    fn a_dash_before_a_multibyte_character_is_an_unknown_option() {
        let err = super::RequirementsFile::parse(std::path::Path::new("r.txt"), "-\u{e9}x\n")
            .expect_err("not an option");
        assert!(err.to_string().contains("unknown option"), "{err}");
    }

    use super::*;

    #[test]
    fn index_options_of_several_files_add_up_and_name_the_indexes() {
        let mut options = IndexOptions::default();
        assert_eq!(options.index_urls("D"), None);
        options.add(IndexOptions {
            extra_index_urls: vec!["E1".to_string()],
            find_links: vec!["f1".to_string()],
            ..IndexOptions::default()
        });
        assert_eq!(options.index_urls("D").unwrap(), ["E1", "D"]);
        options.add(IndexOptions {
            index_url: Some("I1".to_string()),
            extra_index_urls: vec!["E2".to_string()],
            ..IndexOptions::default()
        });
        options.add(IndexOptions {
            index_url: Some("I2".to_string()),
            find_links: vec!["f2".to_string()],
            ..IndexOptions::default()
        });
        assert_eq!(options.index_urls("D").unwrap(), ["E1", "E2", "I1"]);
        assert_eq!(options.find_links, ["f1", "f2"]);
        options.add(IndexOptions {
            no_index: true,
            ..IndexOptions::default()
        });
        assert_eq!(options.index_urls("D").unwrap(), Vec::<String>::new());
    }

    fn parse(text: &str) -> Result<RequirementsFile, LockError> {
        RequirementsFile::parse(Path::new("reqs.txt"), text)
    }

    #[test]
    fn a_bare_url_naming_no_package_is_kept_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.txt");
        std::fs::write(&path, "alpha==1\ngit+https://example.org/b.git@v1\n").unwrap();
        assert!(RequirementsFile::read(&path).is_err());
        let file = RequirementsFile::read_unnamed(&path).unwrap();
        assert_eq!(file.entries.len(), 1);
        assert_eq!(file.unnamed_urls.len(), 1);
        assert_eq!(file.unnamed_urls[0].0.line, 2);
        assert_eq!(file.unnamed_urls[0].1, "git+https://example.org/b.git@v1");
        // Anything else that does not parse is still an error.
        std::fs::write(&path, "alpha==1\nnot a requirement!\n").unwrap();
        assert!(RequirementsFile::read_unnamed(&path).is_err());
    }

    #[test]
    fn continuations_comments_and_hashes() {
        let file = parse(
            "# header\nalpha==1.0 \\\n    --hash=sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa \\\n    --hash sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n  # via x\nbeta[x]>=2 ; python_version >= '3.8'  # why\n",
        )
        .unwrap();
        assert_eq!(file.entries.len(), 2);
        assert_eq!(
            file.entries[0].hashes,
            vec![
                "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
            ]
        );
        assert_eq!(file.entries[0].origin.line, 2);
        assert_eq!(file.entries[1].requirement.name.as_ref(), "beta");
        assert_eq!(file.entries[1].origin.line, 6);
    }

    #[test]
    fn options_lines() {
        let file = parse(
            "--index-url https://example.org/simple\n--extra-index-url=https://x/simple\n--pre\nfoo\n",
        )
        .unwrap();
        assert_eq!(
            file.options.index_url.as_deref(),
            Some("https://example.org/simple")
        );
        assert_eq!(file.options.extra_index_urls, vec!["https://x/simple"]);
    }

    #[test]
    fn vcs_egg_names_the_package() {
        let file = parse("git+https://github.com/a/b@0123456789abcdef#egg=bee\n").unwrap();
        assert_eq!(file.entries[0].requirement.name.as_ref(), "bee");
    }

    #[test]
    fn malformed_line_names_line_and_column() {
        let err = parse("ok==1\n  bad==>1\n").unwrap_err();
        let LockError::Syntax { origin, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(origin.line, 2);
        assert!(origin.column >= 3, "{origin:?}");
    }

    #[test]
    fn unknown_option_is_an_error() {
        assert!(parse("--frobnicate\n").is_err());
    }

    #[test]
    fn comment_hash_inside_url_is_kept() {
        assert_eq!(
            strip_comment("x @ https://h/x.whl#sha256=ab"),
            "x @ https://h/x.whl#sha256=ab"
        );
        assert_eq!(strip_comment("x # c"), "x ");
    }
}
