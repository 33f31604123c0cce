//! The files of a project page as compact text: one line per file, eight
//! tab-separated fields (name, URL, sha256, requires-python, yanked, upload
//! time, size, PEP 658 metadata). The cache keeps pages this way.
//!
//! The lines are kept sorted into versions, behind an index that names
//! each version with the count, bytes and CRC-32 of its run of lines
//! ([`PageLines::from_lines`] writes it). Reading a page back reads the
//! index alone ([`PageLines::read`]); a version's run is read (from the
//! cache file, when the page is large), checked and split into lines when
//! the version is first looked at, and a file becomes an [`IndexFile`]
//! (every field checked) only when someone asks for it. A resolution
//! looks at a few versions of each project, while popular projects list
//! thousands of files. A run that fails its checksum, or a line that fails
//! its check, is damage: [`PageLines::file`] says so with `None`.
//!
//! The index:
//!
//! ```text
//! <versions>\t<lines>\t<first non-HTTP(S) line, or ->\t<CRC of the last run>
//! <version>\t<lines>\t<bytes>\t<CRC>      one per version, ascending
//! ```
//!
//! The body holds the lines of each version in that order (in the order
//! the page listed them), then the lines whose names give no version of
//! the project (the last run). Where files fall is decided when the index
//! is written: a change to how names are read needs a new cache layout.
//!
//! A URL that ends in the file's name is written without it, after `%N`
//! (a field cannot otherwise start so: `%` is always escaped).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::ops::Range;
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock};

use jiff::Timestamp;
use uv_normalize::PackageName;
use uv_pep440::{Version, VersionSpecifiers};

use crate::files::wheel_version_text;
use crate::{IndexFile, version_in_filename};

/// Lines of one page, sorted into versions.
#[derive(Debug)]
pub struct PageLines {
    index: String,
    body: Body,
    /// The versions' runs of lines, then the lines of no version, in the
    /// body's order.
    runs: Vec<Run>,
    /// The lines of each version.
    versions: BTreeMap<Version, Range<u32>>,
    lines: usize,
    /// The requires-python values read so far, each parsed once (at most
    /// [`MAX_SPECIFIERS`] of them).
    specifiers: Mutex<HashMap<String, VersionSpecifiers>>,
    listed_by: Arc<str>,
    /// The first file whose URL is not HTTP(S).
    first_local: Option<usize>,
}

/// Where a page's lines are: in memory, or somewhere that reads a range
/// of them when a version is looked at (the cache's file of a large page;
/// this crate does no I/O of its own).
#[derive(Debug)]
pub enum Body {
    Bytes(Vec<u8>),
    Ranges(Box<dyn ReadRange>),
}

/// Bytes read by range, from something that does not change while it is
/// read (the index's checksums are of what was written).
pub trait ReadRange: std::fmt::Debug + Send + Sync {
    /// How many bytes there are.
    fn size(&self) -> u64;
    /// Bytes `range`, or `None` when they cannot be read.
    fn read(&self, range: Range<u64>) -> Option<Vec<u8>>;
}

impl Body {
    fn len(&self) -> u64 {
        match self {
            Self::Bytes(bytes) => bytes.len() as u64,
            Self::Ranges(source) => source.size(),
        }
    }

    /// Bytes `range` of the body.
    fn read(&self, range: Range<u64>) -> Option<Vec<u8>> {
        if range.end > self.len() {
            return None;
        }
        match self {
            Self::Bytes(bytes) => Some(
                bytes
                    .get(range.start as usize..range.end as usize)?
                    .to_vec(),
            ),
            Self::Ranges(source) => source.read(range),
        }
    }
}

/// A run of lines in the body: bytes `start..end`, lines `first..first +
/// count`, read, checked and split when first looked at (`None`: damaged).
#[derive(Debug)]
struct Run {
    start: u64,
    end: u64,
    first: u32,
    count: u32,
    crc: u32,
    read: OnceLock<Option<RunLines>>,
}

#[derive(Debug)]
struct RunLines {
    text: String,
    spans: Vec<(u32, u32)>,
}

/// Fields on a line.
const FIELDS: usize = 8;

/// The shortest line: a tab between fields and a line break. A field may be
/// empty (`put_field` writes an empty name, URL or yanked reason as
/// nothing), so this is all a line is sure to hold.
const MIN_LINE: u64 = FIELDS as u64;

/// How a URL field that leaves out the file's name starts.
const NAMED: &str = "%N";

/// The most requires-python values a page keeps parsed. A real project has
/// a few dozen; a page that gives every file its own is parsed file by file
/// past this, rather than growing the memo with the page.
const MAX_SPECIFIERS: usize = 1024;

/// One line split into its fields, borrowed from the page.
struct Fields<'a> {
    filename: Cow<'a, str>,
    url: Cow<'a, str>,
    sha256: Option<&'a str>,
    requires_python: Option<Cow<'a, str>>,
    yanked: Option<Cow<'a, str>>,
    upload_time: Option<Timestamp>,
    size: Option<u64>,
    core_metadata: Option<Option<&'a str>>,
}

impl PageLines {
    /// Sort `raw`, lines as [`IndexFile::write_line`] writes them (the
    /// files of `project`), into versions behind an index. `None` when a
    /// line does not have the shape of one: the whole page is then
    /// unusable.
    pub fn from_lines(raw: &str, project: &PackageName, listed_by: Arc<str>) -> Option<Self> {
        let mut versions: BTreeMap<Version, Vec<&str>> = BTreeMap::new();
        let mut unversioned = Vec::new();
        let mut last: Option<(&str, Version)> = None;
        for line in raw.split('\n').filter(|line| !line.is_empty()) {
            if memchr::memchr_iter(b'\t', line.as_bytes()).count() != FIELDS - 1 {
                return None;
            }
            let (name, _) = line.split_once('\t')?;
            let filename = get_field(name)??;
            // A release's wheels are listed together: their version is
            // parsed once, not once per wheel. (Compared as written:
            // escapes never hold a `-`, so equal texts are equal versions.)
            let text = wheel_version_text(name);
            let version = match (&last, text) {
                (Some((seen, version)), Some(text)) if *seen == text => Some(version.clone()),
                _ => {
                    let version = version_in_filename(project, &filename);
                    if let (Some(version), Some(text)) = (&version, text) {
                        last = Some((text, version.clone()));
                    }
                    version
                }
            };
            match version {
                Some(version) => versions.entry(version).or_default().push(line),
                None => unversioned.push(line),
            }
        }
        let count = versions.values().map(Vec::len).sum::<usize>() + unversioned.len();
        let mut body = String::with_capacity(raw.len() + 1);
        let mut index = String::new();
        let mut first_local = None;
        let mut runs = Vec::with_capacity(versions.len() + 1);
        let mut at = 0u32;
        // Append `lines` to the body as a run.
        let mut run = |body: &mut String, lines: &[&str]| {
            let (start, first) = (body.len() as u64, at);
            for line in lines {
                if first_local.is_none() {
                    let url = line.split('\t').nth(1).unwrap_or_default();
                    if !is_http(url.strip_prefix(NAMED).unwrap_or(url)) {
                        first_local = Some(at as usize);
                    }
                }
                body.push_str(line);
                body.push('\n');
                at = at.checked_add(1)?;
            }
            let crc = crc32fast::hash(&body.as_bytes()[start as usize..]);
            runs.push(Run {
                start,
                end: body.len() as u64,
                first,
                count: at - first,
                crc,
                read: OnceLock::new(),
            });
            Some((first..at, body.len() as u64 - start, crc))
        };
        // Written as `read` reads it, and kept as it would read it.
        let mut ranges = BTreeMap::new();
        for (version, lines) in versions {
            let (lines, bytes, crc) = run(&mut body, &lines)?;
            let count = lines.len();
            let _ = writeln!(index, "{version}\t{count}\t{bytes}\t{crc:08x}");
            ranges.insert(version, lines);
        }
        // No run of no version: the index's checksum of nothing.
        let rest_crc = if unversioned.is_empty() {
            0
        } else {
            run(&mut body, &unversioned)?.2
        };
        let local = first_local.map_or_else(|| "-".to_string(), |i| i.to_string());
        let head = format!("{}\t{count}\t{local}\t{rest_crc:08x}\n", ranges.len());
        Some(Self {
            index: head + &index,
            body: Body::Bytes(body.into_bytes()),
            runs,
            versions: ranges,
            lines: count,
            specifiers: Mutex::default(),
            listed_by,
            first_local,
        })
    }

    /// A page from its `index` and `body` as [`PageLines::from_lines`]
    /// wrote them. Only the index is read. `None` when it is malformed or
    /// does not fit the body.
    pub fn read(index: String, body: Body, listed_by: Arc<str>) -> Option<Self> {
        let mut lines_of = index.split_terminator('\n');
        let mut head = lines_of.next()?.split('\t');
        let version_count: usize = head.next()?.parse().ok()?;
        let lines: usize = head.next()?.parse().ok()?;
        let first_local = match head.next()? {
            "-" => None,
            i => Some(i.parse::<usize>().ok().filter(|i| *i < lines)?),
        };
        let rest_crc = crc_field(head.next()?)?;
        if head.next().is_some() || !index.ends_with('\n') {
            return None;
        }
        let lines_u32 = u32::try_from(lines).ok()?;
        let mut runs = Vec::with_capacity(version_count.min(index.len() / 8) + 1);
        let mut versions = BTreeMap::new();
        let (mut start, mut first) = (0u64, 0u32);
        // A run of `count` lines in `bytes` bytes: whole lines, so empty
        // exactly when it holds none.
        let mut push = |count: u32, bytes: u64, crc: u32, start: &mut u64, first: &mut u32| {
            if (count == 0) != (bytes == 0) || u64::from(count) > bytes / MIN_LINE {
                return None;
            }
            let end = start.checked_add(bytes)?;
            let lines = *first..first.checked_add(count)?;
            runs.push(Run {
                start: *start,
                end,
                first: *first,
                count,
                crc,
                read: OnceLock::new(),
            });
            (*start, *first) = (end, lines.end);
            Some(lines)
        };
        for _ in 0..version_count {
            let mut fields = lines_of.next()?.split('\t');
            let version = Version::from_str(fields.next()?).ok()?;
            let count: u32 = fields.next()?.parse().ok()?;
            let bytes: u64 = fields.next()?.parse().ok()?;
            let crc = crc_field(fields.next()?)?;
            if fields.next().is_some()
                || count == 0
                || versions
                    .last_key_value()
                    .is_some_and(|(v, _)| *v >= version)
            {
                return None;
            }
            let lines = push(count, bytes, crc, &mut start, &mut first)?;
            versions.insert(version, lines);
        }
        if lines_of.next().is_some() {
            return None;
        }
        // What is left: the lines of no version.
        let rest_lines = lines_u32.checked_sub(first)?;
        let rest_bytes = body.len().checked_sub(start)?;
        if rest_lines > 0 || rest_bytes > 0 {
            push(rest_lines, rest_bytes, rest_crc, &mut start, &mut first)?;
        }
        // A body in memory is checked whole now: damage is then a miss (the
        // page is fetched again), not a version that cannot be read.
        if let Body::Bytes(bytes) = &body {
            let intact = |run: &Run| {
                let bytes = bytes.get(run.start as usize..run.end as usize);
                bytes.is_some_and(|b| crc32fast::hash(b) == run.crc)
            };
            if !runs.iter().all(intact) {
                return None;
            }
        }
        Some(Self {
            index,
            body,
            runs,
            versions,
            lines,
            specifiers: Mutex::default(),
            listed_by,
            first_local,
        })
    }

    /// The lines of `files`, as the cache writes them.
    pub fn from_files(
        files: &[IndexFile],
        project: &PackageName,
        listed_by: Arc<str>,
    ) -> Option<Self> {
        let mut text = String::with_capacity(files.len() * 256);
        for file in files {
            file.write_line(&mut text);
        }
        Self::from_lines(&text, project, listed_by)
    }

    /// The files of each version, by index, oldest version first.
    pub fn versions(&self) -> &BTreeMap<Version, Range<u32>> {
        &self.versions
    }

    /// The index, as [`PageLines::read`] reads it.
    pub fn index(&self) -> &str {
        &self.index
    }

    /// The body, when it is held in memory (as a page just fetched is).
    pub fn body(&self) -> Option<&[u8]> {
        match &self.body {
            Body::Bytes(bytes) => Some(bytes),
            Body::Ranges(_) => None,
        }
    }

    pub fn len(&self) -> usize {
        self.lines
    }

    pub fn is_empty(&self) -> bool {
        self.lines == 0
    }

    fn line(&self, i: usize) -> Option<&str> {
        let i = u32::try_from(i).ok()?;
        let run = self
            .runs
            .get(self.runs.partition_point(|r| r.first + r.count <= i))?;
        let read = run
            .read
            .get_or_init(|| {
                let bytes = self.body.read(run.start..run.end)?;
                // A body in memory was checked whole (or written here).
                if matches!(self.body, Body::Ranges(_)) && crc32fast::hash(&bytes) != run.crc {
                    return None;
                }
                let text = String::from_utf8(bytes).ok()?;
                let mut spans = Vec::with_capacity(run.count as usize);
                let mut start = 0;
                for end in memchr::memchr_iter(b'\n', text.as_bytes()) {
                    spans.push((start, end as u32));
                    start = end as u32 + 1;
                }
                (spans.len() == run.count as usize && start as usize == text.len())
                    .then_some(RunLines { text, spans })
            })
            .as_ref()?;
        let (start, end) = *read.spans.get(i.checked_sub(run.first)? as usize)?;
        read.text.get(start as usize..end as usize)
    }

    /// File `i`, read whole; `None` when its line is damaged.
    pub fn file(&self, i: usize) -> Option<IndexFile> {
        let fields = Fields::split(self.line(i)?)?;
        let requires_python = match &fields.requires_python {
            None => None,
            Some(text) => Some(self.specifiers(text)?),
        };
        Some(IndexFile {
            filename: fields.filename.into_owned(),
            url: fields.url.into_owned(),
            sha256: fields.sha256.map(str::to_ascii_lowercase),
            requires_python,
            yanked: fields.yanked.map(Cow::into_owned),
            upload_time: fields.upload_time,
            size: fields.size,
            core_metadata: fields
                .core_metadata
                .map(|offer| offer.map(str::to_ascii_lowercase)),
            listed_by: self.listed_by.to_string(),
        })
    }

    /// A requires-python value, parsed once per page. Looked up by hash:
    /// searching the values one by one made reading every file of a page
    /// with many distinct values quadratic (20,000 files: seconds).
    fn specifiers(&self, text: &str) -> Option<VersionSpecifiers> {
        let mut seen = self.specifiers.lock().ok()?;
        if let Some(parsed) = seen.get(text) {
            return Some(parsed.clone());
        }
        let parsed = VersionSpecifiers::from_str(text).ok()?;
        if seen.len() < MAX_SPECIFIERS {
            seen.insert(text.to_string(), parsed.clone());
        }
        Some(parsed)
    }

    /// The first file whose URL is not HTTP(S), for a remote page that must
    /// not point at local files.
    pub fn first_local(&self) -> Option<(String, String)> {
        let i = self.first_local?;
        if let Some(file) = self.file(i) {
            return Some((file.filename, file.url));
        }
        // A damaged line: its fields as they stand, or if its run cannot be
        // read, what the index says of it (never nothing: the page is
        // refused either way).
        let mut fields = self.line(i).unwrap_or_default().split('\t');
        let name = fields.next().filter(|n| !n.is_empty());
        Some((
            name.map_or_else(|| format!("file {i} of the cached page"), str::to_string),
            fields.next().unwrap_or("a damaged cache entry").to_string(),
        ))
    }
}

/// A CRC-32 as the cache writes it: eight hex digits.
pub fn crc_field(text: &str) -> Option<u32> {
    if text.len() != 8 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(text, 16).ok()
}

fn is_http(url: &str) -> bool {
    url.starts_with("https://") || url.starts_with("http://")
}

/// 64 hex digits, as [`crate::sha256_digest`] accepts.
fn digest(text: &str) -> Option<&str> {
    (text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())).then_some(text)
}

impl<'a> Fields<'a> {
    fn split(line: &'a str) -> Option<Self> {
        let mut cut = 0;
        let mut tabs = memchr::memchr_iter(b'\t', line.as_bytes());
        let mut next = || {
            let start = cut;
            let end = tabs.next().unwrap_or(line.len());
            cut = end + 1;
            line.get(start..end)
        };
        let filename = get_field(next()?)??;
        let url = match next()? {
            field if field.starts_with(NAMED) => {
                let prefix = get_field(&field[NAMED.len()..])??;
                Cow::Owned(format!("{prefix}{filename}"))
            }
            field => get_field(field)??,
        };
        let sha256 = match next()? {
            "-" => None,
            text => Some(digest(text)?),
        };
        let requires_python = get_field(next()?)?;
        let yanked = get_field(next()?)?;
        let upload_time = match next()? {
            "-" => None,
            text => {
                let (seconds, nanos) = text.split_once('.')?;
                Some(Timestamp::new(seconds.parse().ok()?, nanos.parse().ok()?).ok()?)
            }
        };
        let size = match next()? {
            "-" => None,
            text => Some(text.parse().ok()?),
        };
        let core_metadata = match next()? {
            "-" => None,
            "=" => Some(None),
            text => Some(Some(digest(text.strip_prefix('=')?)?)),
        };
        if next().is_some() {
            return None;
        }
        Some(Self {
            filename,
            url,
            sha256,
            requires_python,
            yanked,
            upload_time,
            size,
            core_metadata,
        })
    }
}

impl IndexFile {
    /// Append this file's line (see the module's documentation); `listed_by`
    /// is not part of it.
    pub fn write_line(&self, out: &mut String) {
        let requires_python = self.requires_python.as_ref().map(ToString::to_string);
        put_field(out, Some(&self.filename));
        out.push('\t');
        match self
            .url
            .strip_suffix(self.filename.as_str())
            .filter(|prefix| prefix.ends_with('/') && !self.filename.is_empty())
        {
            Some(prefix) => {
                out.push_str(NAMED);
                put_field(out, Some(prefix));
            }
            None => put_field(out, Some(&self.url)),
        }
        out.push('\t');
        put_field(out, self.sha256.as_deref());
        out.push('\t');
        put_field(out, requires_python.as_deref());
        out.push('\t');
        put_field(out, self.yanked.as_deref());
        out.push('\t');
        match self.upload_time {
            Some(t) => {
                out.push_str(&format!("{}.{:09}", t.as_second(), t.subsec_nanosecond()));
            }
            None => out.push('-'),
        }
        out.push('\t');
        match self.size {
            Some(size) => out.push_str(&size.to_string()),
            None => out.push('-'),
        }
        out.push('\t');
        // PEP 658: absent, offered without a hash (`=`), or its hash.
        match &self.core_metadata {
            None => out.push('-'),
            Some(None) => out.push('='),
            Some(Some(hash)) => {
                out.push('=');
                out.push_str(hash);
            }
        }
        out.push('\n');
    }
}

/// A field of a line: tabs, line breaks and `%` escaped, `-` for none (and
/// `%2D` for a literal `-`).
pub fn put_field(out: &mut String, value: Option<&str>) {
    match value {
        None => out.push('-'),
        Some("-") => out.push_str("%2D"),
        Some(value) => {
            for c in value.chars() {
                match c {
                    '%' => out.push_str("%25"),
                    '\t' => out.push_str("%09"),
                    '\n' => out.push_str("%0A"),
                    '\r' => out.push_str("%0D"),
                    c => out.push(c),
                }
            }
        }
    }
}

/// A field as written by [`put_field`]: `Some(None)` for none, `None` when
/// malformed.
pub fn get_field(field: &str) -> Option<Option<Cow<'_, str>>> {
    if field == "-" {
        return Some(None);
    }
    if !field.contains('%') {
        return Some(Some(Cow::Borrowed(field)));
    }
    let mut out = String::with_capacity(field.len());
    let mut rest = field;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 3)?;
        out.push(match code {
            "25" => '%',
            "09" => '\t',
            "0A" => '\n',
            "0D" => '\r',
            "2D" => '-',
            _ => return None,
        });
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    Some(Some(Cow::Owned(out)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::ProjectFiles;

    fn file(name: &str) -> IndexFile {
        IndexFile {
            filename: name.to_string(),
            url: format!("https://files.example/{name}"),
            sha256: Some("ab".repeat(32)),
            requires_python: Some(VersionSpecifiers::from_str(">=3.9, !=3.10.*").unwrap()),
            yanked: None,
            upload_time: Some(Timestamp::new(1_700_000_000, 123_456_789).unwrap()),
            size: Some(1234),
            core_metadata: Some(Some("cd".repeat(32))),
            listed_by: "x".to_string(),
        }
    }

    fn project_name() -> PackageName {
        PackageName::from_str("app").unwrap()
    }

    #[test]
    fn files_read_back_as_they_were_written() {
        let mut odd = file("odd-1.0.tar.gz");
        odd.sha256 = None;
        odd.requires_python = None;
        odd.yanked = Some("broken\tbuild\n100% - see #1".to_string());
        odd.upload_time = None;
        odd.size = None;
        odd.core_metadata = Some(None);
        let mut dash = file("dash-1.0-py3-none-any.whl");
        dash.yanked = Some("-".to_string());
        dash.core_metadata = None;
        let mut tabbed = file("we%ird\tname-1.0.tar.gz");
        tabbed.url = "file:///wheels/x.whl".to_string();
        let files = vec![file("app-1.0-py3-none-any.whl"), odd, dash, tabbed];
        let lines = PageLines::from_files(&files, &project_name(), Arc::from("x")).expect("lines");
        assert_eq!(lines.len(), 4);
        // Sorted into versions, in the page's order within each; then the
        // files of no version. Files are sorted by name alone (a wheel's
        // project is not checked, as `IndexFile::kind` does not); other
        // projects' source distributions are in none.
        let sorted = [&files[0], &files[2], &files[1], &files[3]];
        for (i, want) in sorted.iter().enumerate() {
            assert_eq!(lines.file(i).as_ref(), Some(*want));
        }
        assert_eq!(lines.file(4), None);
        let one = Version::from_str("1.0").unwrap();
        assert_eq!(
            lines.versions().iter().collect::<Vec<_>>(),
            vec![(&one, &(0..2))]
        );
        let project = ProjectFiles::new(
            vec![file("app-2.0-py3-none-any.whl"), file("app-1.0.tar.gz")],
            Some(Arc::new(lines)),
            Vec::new(),
        );
        assert_eq!(project.len(), 6);
        let two = Version::from_str("2.0").unwrap();
        assert_eq!(
            project
                .versions(&project_name())
                .into_iter()
                .map(|(version, files)| (version, files.iter().collect::<Vec<_>>()))
                .collect::<Vec<_>>(),
            vec![(one, vec![1, 2, 3]), (two, vec![0])]
        );
        assert_eq!(project.file(2), Some(files[0].clone()));
        assert_eq!(project.files().map(|files| files.len()), Ok(6));
        let lines = PageLines::from_files(&files, &project_name(), Arc::from("x")).unwrap();
        assert_eq!(
            lines.first_local().map(|f| f.0),
            Some("we%ird\tname-1.0.tar.gz".to_string())
        );
        let again = reread(&lines).unwrap();
        assert_eq!(again.index(), lines.index());
        assert_eq!(again.body(), lines.body());
        assert_eq!(again.versions(), lines.versions());
        assert_eq!(
            (0..4).map(|i| again.file(i)).collect::<Vec<_>>(),
            (0..4).map(|i| lines.file(i)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn versions_are_sorted_and_the_index_says_where_each_starts() {
        let files = [
            file("app-2.0-py3-none-any.whl"),
            file("app-1.0.tar.gz"),
            file("app-10.0-py3-none-any.whl"),
            file("app-1.0-py3-none-any.whl"),
            file("other-3.0.tar.gz"),
            file("app-2.0.tar.gz"),
        ];
        let lines = PageLines::from_files(&files, &project_name(), Arc::from("x")).unwrap();
        let names: Vec<String> = (0..lines.len())
            .map(|i| lines.file(i).unwrap().filename)
            .collect();
        assert_eq!(
            names,
            [
                "app-1.0.tar.gz",
                "app-1.0-py3-none-any.whl",
                "app-2.0-py3-none-any.whl",
                "app-2.0.tar.gz",
                "app-10.0-py3-none-any.whl",
                "other-3.0.tar.gz",
            ]
        );
        let index: Vec<&str> = lines.index().lines().collect();
        assert_eq!(index.len(), 4);
        let crc = |text: &str| format!("{:08x}", crc32fast::hash(text.as_bytes()));
        let body = std::str::from_utf8(lines.body().unwrap()).unwrap();
        let runs: Vec<&str> = body.split_inclusive('\n').collect();
        assert_eq!(index[0], format!("3\t6\t-\t{}", crc(runs[5])));
        let one = runs[0].len() + runs[1].len();
        assert_eq!(index[1], format!("1.0\t2\t{one}\t{}", crc(&body[..one])));
        assert!(index[2].starts_with("2.0\t2\t"), "{}", index[2]);
        assert!(index[3].starts_with("10.0\t1\t"), "{}", index[3]);
        // Writing the same files again writes the same bytes.
        let again = PageLines::from_files(&files, &project_name(), Arc::from("x")).unwrap();
        assert_eq!((again.index(), again.body()), (lines.index(), lines.body()));
    }

    /// `lines` read back from its index and body.
    fn reread(lines: &PageLines) -> Option<PageLines> {
        let body = Body::Bytes(lines.body()?.to_vec());
        PageLines::read(lines.index().to_string(), body, Arc::from("x"))
    }

    #[test]
    fn a_malformed_index_spoils_the_page() {
        let files = [file("app-1.0-py3-none-any.whl"), file("app-2.0.tar.gz")];
        let lines = PageLines::from_files(&files, &project_name(), Arc::from("x")).unwrap();
        let body = lines.body().unwrap().to_vec();
        let read = |index: String, body: &[u8]| {
            PageLines::read(index, Body::Bytes(body.to_vec()), Arc::from("x"))
        };
        assert!(read(lines.index().to_string(), &body).is_some());
        let index: Vec<&str> = lines.index().lines().collect();
        let [head, one, two] = index[..] else {
            panic!("{index:?}")
        };
        let rest_crc = head.rsplit('\t').next().unwrap();
        let bytes_of = |line: &str| line.split('\t').nth(2).unwrap().parse::<usize>().unwrap();
        let crc_of = |line: &str| line.rsplit('\t').next().unwrap().to_string();
        for bad in [
            // Versions out of order, a version twice, one of no lines.
            format!("{head}\n{two}\n{one}\n"),
            format!("{head}\n{one}\n{one}\n"),
            format!("{head}\n1.0\t0\t0\t{}\n{two}\n", crc_of(one)),
            // More or fewer versions, or lines, than the index says.
            format!("3\t2\t-\t{rest_crc}\n{one}\n{two}\n"),
            format!("1\t2\t-\t{rest_crc}\n{one}\n{two}\n"),
            format!("2\t1\t-\t{rest_crc}\n{one}\n{two}\n"),
            // Runs past the body.
            format!(
                "{head}\n{one}\n2.0\t1\t{}\t{}\n",
                bytes_of(two) + 1,
                crc_of(two)
            ),
            // A first local line past the last line, a version unread, a
            // checksum that is not one, a field too many, no end of line.
            format!("2\t2\t2\t{rest_crc}\n{one}\n{two}\n"),
            format!(
                "{head}\nnot.a.version!\t1\t{}\t{}\n{two}\n",
                bytes_of(one),
                crc_of(one)
            ),
            format!("{head}\n{one}\n2.0\t1\t{}\t+1234567\n", bytes_of(two)),
            format!("{head}\t-\n{one}\n{two}\n"),
            format!("{head}\n{one}\n{two}"),
            String::new(),
        ] {
            assert!(read(bad.clone(), &body).is_none(), "{bad:?}");
        }
        // Bytes the index does not count are lines it does not count.
        let mut longer = body.clone();
        longer.extend_from_slice(b"x\n");
        assert!(read(lines.index().to_string(), &longer).is_none());
    }

    #[test]
    fn a_damaged_run_spoils_its_files_alone() {
        let files = [file("app-1.0-py3-none-any.whl"), file("app-2.0.tar.gz")];
        let lines = PageLines::from_files(&files, &project_name(), Arc::from("x")).unwrap();
        // The body read by range, as from the cache's file.
        #[derive(Debug)]
        struct Ranges(Vec<u8>);
        impl ReadRange for Ranges {
            fn size(&self) -> u64 {
                self.0.len() as u64
            }
            fn read(&self, range: Range<u64>) -> Option<Vec<u8>> {
                Some(
                    self.0
                        .get(range.start as usize..range.end as usize)?
                        .to_vec(),
                )
            }
        }
        let read = |index: String, body: &[u8]| {
            let body = Body::Ranges(Box::new(Ranges(body.to_vec())));
            PageLines::read(index, body, Arc::from("x")).unwrap()
        };
        let body = lines.body().unwrap().to_vec();
        assert_eq!(
            read(lines.index().to_string(), &body).file(0),
            lines.file(0)
        );
        // A byte changed: the run's checksum fails when it is read. (Held
        // in memory, the page is checked whole, and refused.)
        let mut flipped = body.clone();
        flipped[5] ^= 1;
        let in_memory = Body::Bytes(flipped.clone());
        assert!(PageLines::read(lines.index().to_string(), in_memory, Arc::from("x")).is_none());
        let page = read(lines.index().to_string(), &flipped);
        assert_eq!(page.file(0), None);
        assert_eq!(
            page.file(1).map(|f| f.filename),
            Some("app-2.0.tar.gz".into())
        );
        // A run whose lines do not number what the index says.
        let index: Vec<&str> = lines.index().lines().collect();
        let [head, one, two] = index[..] else {
            panic!("{index:?}")
        };
        let miscounted = format!(
            "{}\n{}\n{two}\n",
            head.replacen("\t2\t", "\t3\t", 1),
            one.replacen("\t1\t", "\t2\t", 1)
        );
        let page = read(miscounted, &body);
        assert_eq!(page.len(), 3);
        assert_eq!((page.file(0), page.file(1)), (None, None));
        assert_eq!(
            page.file(2).map(|f| f.filename),
            Some("app-2.0.tar.gz".into())
        );
    }

    #[test]
    fn a_line_out_of_shape_spoils_the_page_and_a_damaged_field_its_file() {
        let good = {
            let mut out = String::new();
            file("a-1.0-py3-none-any.whl").write_line(&mut out);
            out
        };
        let read = |text: String| PageLines::from_lines(&text, &project_name(), Arc::from("x"));
        assert!(read(good.clone()).is_some());
        for bad in [
            "short\tline\n",
            "no tabs at all\n",
            "a\tb\t-\t-\t-\t-\t-\t-\textra\n",
            "%ZZ\tb\t-\t-\t-\t-\t-\t-\n",
        ] {
            assert!(read(format!("{good}{bad}")).is_none(), "{bad}");
        }
        // Fields past the name are checked when the file is read.
        for bad in [
            "app-2.0.tar.gz\tb\t-\t>=3.x\t-\t-\t-\t-\n",
            "app-2.0.tar.gz\tb\t-\t-\t%ZZ\t-\t-\t-\n",
            "app-2.0.tar.gz\tb\tnot-a-digest\t-\t-\t-\t-\t-\n",
            "app-2.0.tar.gz\tb\t-\t-\t-\t12\t-\t-\n",
            "app-2.0.tar.gz\tb\t-\t-\t-\t-\tbig\t-\n",
            "app-2.0.tar.gz\tb\t-\t-\t-\t-\t-\t=short\n",
            "app-2.0.tar.gz\t%N%ZZ\t-\t-\t-\t-\t-\t-\n",
        ] {
            let lines = read(format!("{good}{bad}")).expect(bad);
            assert!(lines.file(0).is_some(), "{bad}");
            assert_eq!(lines.file(1), None, "{bad}");
            // Still sorted into its version, so judging it fails closed.
            let two = Version::from_str("2.0").unwrap();
            assert_eq!(lines.versions().get(&two), Some(&(1..2)), "{bad}");
        }
    }

    #[test]
    fn a_line_of_empty_fields_reads_back() {
        // Seven tabs and a break: as short as `from_lines` takes a line,
        // so `read` must take an index that counts one in eight bytes.
        let mut empty = file("app-1.0-py3-none-any.whl");
        (empty.filename, empty.url) = (String::new(), String::new());
        (empty.sha256, empty.requires_python, empty.yanked) = (Some(String::new()), None, None);
        (empty.upload_time, empty.size, empty.core_metadata) = (None, None, None);
        let mut out = String::new();
        empty.write_line(&mut out);
        let lines = PageLines::from_lines(&out, &project_name(), Arc::from("x")).unwrap();
        let again = reread(&lines).expect("an index as written reads back");
        assert_eq!(again.len(), 1);
        assert_eq!(again.file(0).map(|f| f.url), lines.file(0).map(|f| f.url));
    }

    #[test]
    fn a_url_ending_in_the_name_is_written_without_it() {
        let mut out = String::new();
        let f = file("a-1.0-py3-none-any.whl");
        f.write_line(&mut out);
        assert!(out.contains("\t%Nhttps://files.example/\t"), "{out}");
        let lines = PageLines::from_lines(&out, &project_name(), Arc::from("x")).unwrap();
        assert_eq!(lines.file(0).map(|f| f.url), Some(f.url));
        // Any other URL is written whole.
        let mut other = file("a-1.0.tar.gz");
        other.url = "https://files.example/download?name=a-1.0.tar.gz".to_string();
        let mut out = String::new();
        other.write_line(&mut out);
        assert!(!out.contains("%N"), "{out}");
    }

    #[test]
    fn distinct_requires_python_values_are_not_searched_one_by_one() {
        // Every file its own requires-python: the memo of parsed values
        // stays bounded, and every file still reads back with its own.
        let files: Vec<IndexFile> = (0..3 * MAX_SPECIFIERS)
            .map(|i| {
                let mut f = file(&format!("app-1.{i}.tar.gz"));
                f.requires_python = Some(VersionSpecifiers::from_str(&format!(">=3.{i}")).unwrap());
                f
            })
            .collect();
        let lines = PageLines::from_files(&files, &project_name(), Arc::from("x")).unwrap();
        for (i, want) in files.iter().enumerate() {
            assert_eq!(lines.file(i).as_ref(), Some(want));
        }
        assert_eq!(lines.specifiers.lock().unwrap().len(), MAX_SPECIFIERS);
    }
}
