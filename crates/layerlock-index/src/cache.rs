//! The persistent cache: project pages with their validators (ETag,
//! Last-Modified) and core metadata keyed by the wheel's sha256. Every write
//! goes to a temp file first, then is renamed into place. Every entry starts
//! with the sha256 of what follows and is checked on read: a corrupted or
//! edited entry is a miss (fetched again, or an error offline), never data.
//!
//! A page is kept as the files it lists, already read: one line per file
//! with only what resolution needs (name, URL, sha256, requires-python,
//! yanked, upload time, size, PEP 658 metadata). A warm run reads these
//! lines instead of parsing whole JSON or HTML pages and joining every URL
//! again.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use jiff::Timestamp;
use layerlock_dist::IndexFile;
use sha2::{Digest, Sha256};
use uv_pep440::VersionSpecifiers;

/// A project page as the cache keeps it: its validators and its files.
#[derive(Debug, Clone, PartialEq)]
pub struct CachedPage {
    pub url: String,
    /// 200, or 404 for a project the index does not have.
    pub status: u16,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    pub files: Vec<IndexFile>,
}

#[derive(Debug, Clone)]
pub struct Cache {
    root: Option<PathBuf>,
}

/// Bump when the layout changes so old entries are not misread.
const LAYOUT: &str = "v3";

/// The first line of a page entry.
const PAGE_MAGIC: &str = "layerlock-page 1";

/// Largest cache entry read back.
const MAX_ENTRY_BYTES: u64 = 256 * 1024 * 1024;

/// `sha256(body) \n body`.
fn sealed(body: &[u8]) -> Vec<u8> {
    let mut out = hex_sha256(body).into_bytes();
    out.push(b'\n');
    out.extend_from_slice(body);
    out
}

/// The body of a sealed entry, if its digest matches: the entry's bytes and
/// where the body starts in them (no copy).
fn unseal(bytes: Vec<u8>) -> Option<(Vec<u8>, usize)> {
    let newline = bytes.iter().position(|b| *b == b'\n')?;
    let (digest, body) = (&bytes[..newline], &bytes[newline + 1..]);
    (digest == hex_sha256(body).as_bytes()).then_some((bytes, newline + 1))
}

/// A cache file: only a regular file, not over the limit.
fn read_entry(path: &Path) -> Option<(Vec<u8>, usize)> {
    let meta = fs_err::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_ENTRY_BYTES {
        return None;
    }
    unseal(fs_err::read(path).ok()?)
}

/// A field of a page line: tabs, line breaks and `%` escaped, `-` for none
/// (and `%2D` for a literal `-`).
fn put_field(out: &mut String, value: Option<&str>) {
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
/// malformed (the entry is then a miss).
fn get_field(field: &str) -> Option<Option<String>> {
    if field == "-" {
        return Some(None);
    }
    if !field.contains('%') {
        return Some(Some(field.to_string()));
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
    Some(Some(out))
}

/// A field that must be present.
fn required(field: &str) -> Option<String> {
    get_field(field)?
}

impl CachedPage {
    /// The entry's text: a header line, the page URL, status and
    /// validators, then a line per file.
    fn encode(&self) -> String {
        let mut out = String::with_capacity(64 + self.files.len() * 256);
        out.push_str(PAGE_MAGIC);
        out.push('\n');
        put_field(&mut out, Some(&self.url));
        out.push('\t');
        out.push_str(&self.status.to_string());
        out.push('\t');
        put_field(&mut out, self.etag.as_deref());
        out.push('\t');
        put_field(&mut out, self.last_modified.as_deref());
        out.push('\n');
        for file in &self.files {
            let requires_python = file.requires_python.as_ref().map(ToString::to_string);
            let upload_time = file
                .upload_time
                .map(|t| format!("{}.{:09}", t.as_second(), t.subsec_nanosecond()));
            let size = file.size.map(|s| s.to_string());
            // PEP 658: absent, offered without a hash (`=`), or its hash.
            let core_metadata = match &file.core_metadata {
                None => None,
                Some(None) => Some("=".to_string()),
                Some(Some(hash)) => Some(format!("={hash}")),
            };
            for (i, field) in [
                Some(file.filename.as_str()),
                Some(file.url.as_str()),
                file.sha256.as_deref(),
                requires_python.as_deref(),
                file.yanked.as_deref(),
                upload_time.as_deref(),
                size.as_deref(),
                core_metadata.as_deref(),
            ]
            .into_iter()
            .enumerate()
            {
                if i > 0 {
                    out.push('\t');
                }
                put_field(&mut out, field);
            }
            out.push('\n');
        }
        out
    }

    /// The page an entry holds; `None` for anything malformed (a miss).
    /// `listed_by` is not stored: it names the index as this run shows it.
    fn decode(text: &str, listed_by: &str) -> Option<Self> {
        let mut lines = text.split('\n');
        if lines.next()? != PAGE_MAGIC {
            return None;
        }
        let mut head = lines.next()?.split('\t');
        let url = required(head.next()?)?;
        let status: u16 = head.next()?.parse().ok()?;
        let etag = get_field(head.next()?)?;
        let last_modified = get_field(head.next()?)?;
        // Files of a project share a few requires-python values; each is
        // parsed once.
        let mut specifiers: HashMap<&str, VersionSpecifiers> = HashMap::new();
        let mut files = Vec::new();
        for line in lines.filter(|l| !l.is_empty()) {
            let fields: Vec<&str> = line.split('\t').collect();
            let &[
                filename,
                file_url,
                sha256,
                requires_python,
                yanked,
                upload_time,
                size,
                core,
            ] = fields.as_slice()
            else {
                return None;
            };
            let requires_python = match requires_python {
                "-" => None,
                text => Some(match specifiers.get(text) {
                    Some(parsed) => parsed.clone(),
                    None => {
                        let parsed = VersionSpecifiers::from_str(&required(text)?).ok()?;
                        specifiers.insert(text, parsed.clone());
                        parsed
                    }
                }),
            };
            let upload_time = match upload_time {
                "-" => None,
                text => {
                    let (seconds, nanos) = text.split_once('.')?;
                    Some(Timestamp::new(seconds.parse().ok()?, nanos.parse().ok()?).ok()?)
                }
            };
            let core_metadata = match get_field(core)? {
                None => None,
                Some(text) => Some(text.strip_prefix('=')?.to_string())
                    .map(|hash| (!hash.is_empty()).then_some(hash)),
            };
            files.push(IndexFile {
                filename: required(filename)?,
                url: required(file_url)?,
                // Digests are checked as a fresh page's are: they end up in
                // locks.
                sha256: match get_field(sha256)? {
                    None => None,
                    Some(text) => Some(layerlock_dist::sha256_digest(&text)?),
                },
                requires_python,
                yanked: get_field(yanked)?,
                upload_time,
                size: match size {
                    "-" => None,
                    text => Some(text.parse().ok()?),
                },
                core_metadata,
                listed_by: listed_by.to_string(),
            });
        }
        Some(Self {
            url,
            status,
            etag,
            last_modified,
            files,
        })
    }
}

pub fn hex_sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

impl Cache {
    pub fn new(root: Option<PathBuf>) -> Self {
        Self {
            root: root.map(|r| r.join(LAYOUT)),
        }
    }

    fn page_path(&self, url: &str) -> Option<PathBuf> {
        Some(
            self.root
                .as_ref()?
                .join("pages")
                .join(format!("{}.json", hex_sha256(url.as_bytes()))),
        )
    }

    fn metadata_path(&self, key: &str) -> Option<PathBuf> {
        Some(
            self.root
                .as_ref()?
                .join("metadata")
                .join(format!("{key}.METADATA")),
        )
    }

    /// The cached page of `url`, its files marked as listed by `listed_by`.
    pub fn page(&self, url: &str, listed_by: &str) -> Option<CachedPage> {
        let path = self.page_path(url)?;
        let (bytes, start) = read_entry(&path)?;
        // A corrupt entry is a miss, not an error: it is fetched again.
        let text = std::str::from_utf8(&bytes[start..]).ok()?;
        CachedPage::decode(text, listed_by).filter(|p| p.url == url)
    }

    pub fn put_page(&self, page: &CachedPage) {
        if let Some(path) = self.page_path(&page.url) {
            write_atomic(&path, &sealed(page.encode().as_bytes()));
        }
    }

    pub fn metadata(&self, key: &str) -> Option<Vec<u8>> {
        let (mut bytes, start) = read_entry(&self.metadata_path(key)?)?;
        bytes.drain(..start);
        Some(bytes)
    }

    pub fn put_metadata(&self, key: &str, bytes: &[u8]) {
        if let Some(path) = self.metadata_path(key) {
            write_atomic(&path, &sealed(bytes));
        }
    }
}

/// Best effort: a cache that cannot be written only costs speed.
fn write_atomic(path: &Path, bytes: &[u8]) {
    let Some(dir) = path.parent() else { return };
    if fs_err::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(mut tmp) = tempfile::NamedTempFile::new_in(dir) else {
        return;
    };
    if tmp.write_all(bytes).is_ok() {
        let _ = tmp.persist(path);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

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
            listed_by: "https://pypi.example/simple/".to_string(),
        }
    }

    #[test]
    fn a_page_reads_back_as_it_was_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(Some(dir.path().to_path_buf()));
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
        let page = CachedPage {
            url: "https://pypi.example/simple/app/".to_string(),
            status: 200,
            etag: Some("\"abc\"".to_string()),
            last_modified: None,
            files: vec![file("app-1.0-py3-none-any.whl"), odd, dash],
        };
        cache.put_page(&page);
        let read = cache
            .page(&page.url, "https://pypi.example/simple/")
            .expect("cached");
        assert_eq!(read, page);
        // Another URL's entry is never served for this one.
        assert_eq!(cache.page("https://pypi.example/simple/other/", "x"), None);
    }

    #[test]
    fn a_malformed_page_entry_is_a_miss() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(Some(dir.path().to_path_buf()));
        let url = "https://pypi.example/simple/app/";
        let path = cache.page_path(url).expect("path");
        for body in [
            "not a page\n".to_string(),
            format!("{PAGE_MAGIC}\n{url}\t200\t-\t-\nshort\tline\n"),
            format!("{PAGE_MAGIC}\n{url}\t200\t-\t-\na\tb\t-\t>=3.x\t-\t-\t-\t-\n"),
            format!("{PAGE_MAGIC}\n{url}\t200\t-\t-\na\tb\t-\t-\t%ZZ\t-\t-\t-\n"),
        ] {
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(&path, sealed(body.as_bytes())).unwrap();
            assert_eq!(cache.page(url, "x"), None, "{body}");
        }
    }

    #[test]
    fn an_edited_entry_is_a_miss() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(Some(dir.path().to_path_buf()));
        cache.put_metadata("sha256-aa", b"Name: app\nVersion: 1\n");
        assert!(cache.metadata("sha256-aa").is_some());
        let path = cache.metadata_path("sha256-aa").expect("path");
        let mut bytes = fs_err::read(&path).expect("read");
        bytes.extend_from_slice(b"Requires-Dist: evil\n");
        fs_err::write(&path, bytes).expect("write");
        assert_eq!(cache.metadata("sha256-aa"), None);
    }
}
