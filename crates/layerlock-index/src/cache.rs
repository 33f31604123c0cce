//! The persistent cache: project pages with their validators (ETag,
//! Last-Modified) and core metadata keyed by the wheel's sha256 (its header
//! alone: the description is never read). Every write goes to a temp file
//! first, then is renamed into place. Everything read is checked against a
//! checksum (CRC-32) written with it: a damaged or edited entry is a miss
//! (fetched again, or an error offline), never data. It guards against
//! damage, not against someone who can write the cache (they could write
//! the checksums too); what is read from an index was checked before it
//! was written.
//!
//! A page is kept as the files it lists, already read: one line per file
//! with only what resolution needs (name, URL, sha256, requires-python,
//! yanked, upload time, size, PEP 658 metadata), sorted into versions
//! behind an index (see [`layerlock_dist::PageLines`]). A warm run reads
//! the index, and a version's lines only when resolution looks at it,
//! instead of parsing whole JSON or HTML pages and joining every URL
//! again. A metadata entry, and a page small enough to be read whole, is
//! checked whole when read; in a larger page, a version's run of lines is
//! checked when it is read, and damage found then is an error that names
//! the cache (the page was in use already).

use std::borrow::Cow;
use std::io::{Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use layerlock_dist::{Body, PageLines, ReadRange, crc_field, get_field, put_field};
use sha2::{Digest, Sha256};

/// A project page as the cache keeps it: its validators and its files.
#[derive(Debug)]
pub struct CachedPage {
    pub url: String,
    /// 200, or 404 for a project the index does not have.
    pub status: u16,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    pub files: PageLines,
}

#[derive(Debug, Clone)]
pub struct Cache {
    root: Option<PathBuf>,
    /// The temp folder, once the first write has made and swept it.
    tmp: Arc<std::sync::OnceLock<Option<PathBuf>>>,
}

/// Bump when the layout changes so old entries are not misread.
const LAYOUT: &str = "v4";

/// How a page entry starts (see [`CachedPage::encode`]).
const PAGE_MAGIC: &str = "layerlock-page 3";

/// The first read of a page entry: most entries whole, and the head of
/// most others. What a larger entry holds past its head is read a run of
/// lines at a time.
const READ_FIRST: u64 = 64 * 1024;

/// Largest cache entry read back.
const MAX_ENTRY_BYTES: u64 = 256 * 1024 * 1024;

/// The seal's first line: `crc32 ` and the checksum of the body in hex.
fn seal_line(body: &[u8]) -> String {
    format!("crc32 {:08x}\n", crc32fast::hash(body))
}

/// The seal line, then the body.
fn sealed(body: &[u8]) -> Vec<u8> {
    let mut out = seal_line(body).into_bytes();
    out.extend_from_slice(body);
    out
}

/// The body of a sealed entry, if its checksum matches: the entry's bytes
/// and where the body starts in them (no copy).
fn unseal(bytes: Vec<u8>) -> Option<(Vec<u8>, usize)> {
    let start = bytes.iter().position(|b| *b == b'\n')? + 1;
    let (seal, body) = bytes.split_at(start);
    (seal == seal_line(body).as_bytes()).then_some((bytes, start))
}

/// A cache file: only a regular file, not over the limit.
fn read_entry(path: &Path) -> Option<(Vec<u8>, usize)> {
    let meta = fs_err::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_ENTRY_BYTES {
        return None;
    }
    unseal(fs_err::read(path).ok()?)
}

impl CachedPage {
    /// The entry: a line of [`PAGE_MAGIC`], the head's length and its
    /// CRC-32; the head (the page URL, status and validators, then the
    /// index of the lines); the lines, whose runs the index checksums.
    /// `None` for a page whose lines are not held in memory (one read from
    /// the cache, which is never written back).
    fn encode(&self) -> Option<Vec<u8>> {
        let body = self.files.body()?;
        let index = self.files.index();
        let mut head = String::with_capacity(256 + index.len());
        put_field(&mut head, Some(&self.url));
        head.push('\t');
        head.push_str(&self.status.to_string());
        head.push('\t');
        put_field(&mut head, self.etag.as_deref());
        head.push('\t');
        put_field(&mut head, self.last_modified.as_deref());
        head.push('\n');
        head.push_str(index);
        let first = format!(
            "{PAGE_MAGIC}\t{}\t{:08x}\n",
            head.len(),
            crc32fast::hash(head.as_bytes())
        );
        let mut out = Vec::with_capacity(first.len() + head.len() + body.len());
        out.extend_from_slice(first.as_bytes());
        out.extend_from_slice(head.as_bytes());
        out.extend_from_slice(body);
        Some(out)
    }

    /// The page of the entry at `path`; `None` for anything malformed (a
    /// miss). The head is read and checked; of a large entry nothing else
    /// is read until resolution looks at a version (its run of lines is
    /// checked then). `listed_by` is not stored: it names the index as
    /// this run shows it.
    fn read(path: &Path, listed_by: Arc<str>) -> Option<Self> {
        // Only a regular file: opening a pipe would wait for a writer.
        let meta = fs_err::metadata(path).ok()?;
        if !meta.is_file() || meta.len() > MAX_ENTRY_BYTES {
            return None;
        }
        let mut file = std::fs::File::open(path).ok()?;
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() > MAX_ENTRY_BYTES {
            return None;
        }
        let len = meta.len();
        let mut start = vec![0; usize::try_from(len.min(READ_FIRST)).ok()?];
        file.read_exact(&mut start).ok()?;
        let line = start.iter().position(|b| *b == b'\n')?;
        let mut first = std::str::from_utf8(&start[..line]).ok()?.split('\t');
        if first.next()? != PAGE_MAGIC {
            return None;
        }
        let head_len: u64 = first.next()?.parse().ok()?;
        let head_crc = crc_field(first.next()?)?;
        if first.next().is_some() {
            return None;
        }
        let head_at = line as u64 + 1;
        let body_at = head_at.checked_add(head_len).filter(|at| *at <= len)?;
        // A head past the first read (an index of many thousand versions)
        // is read on.
        if let Some(more) = body_at.checked_sub(start.len() as u64).filter(|n| *n > 0) {
            let mut rest = vec![0; usize::try_from(more).ok()?];
            file.read_exact(&mut rest).ok()?;
            start.extend_from_slice(&rest);
        }
        let head = &start[usize::try_from(head_at).ok()?..usize::try_from(body_at).ok()?];
        if crc32fast::hash(head) != head_crc {
            return None;
        }
        let head = std::str::from_utf8(head).ok()?;
        let (validators, index) = head.split_once('\n')?;
        let mut fields = validators.split('\t');
        let url = required(fields.next()?)?;
        let status: u16 = fields.next()?.parse().ok()?;
        let etag = owned(fields.next()?)?;
        let last_modified = owned(fields.next()?)?;
        if fields.next().is_some() {
            return None;
        }
        let index = index.to_string();
        let body = if start.len() as u64 == len {
            Body::Bytes(start.split_off(usize::try_from(body_at).ok()?))
        } else {
            match PageFile::hold(file, body_at, len - body_at) {
                Ok(held) => Body::Ranges(Box::new(held)),
                // No file handle to spare: the rest is read now.
                Err(file) => {
                    let mut body = start.split_off(usize::try_from(body_at).ok()?);
                    // No more than the length seen (and one byte to tell a
                    // file that grew).
                    let rest = (len - body_at).checked_sub(body.len() as u64)?;
                    file.take(rest + 1).read_to_end(&mut body).ok()?;
                    (body.len() as u64 == len - body_at).then_some(Body::Bytes(body))?
                }
            }
        };
        let files = PageLines::read(index, body, listed_by)?;
        Some(Self {
            url,
            status,
            etag,
            last_modified,
            files,
        })
    }
}

/// The lines of a large page entry, read by range from its open file. The
/// file stays open while the page is in use: an entry written again
/// meanwhile is a new file, so the runs read later are still this one's.
#[derive(Debug)]
struct PageFile {
    file: std::fs::File,
    at: u64,
    len: u64,
}

/// Page files held open at once, across the process: past this, pages are
/// read whole, so a resolution of thousands of projects does not run out
/// of file handles (macOS allows a process 256 by default, and the index
/// client's connections need theirs).
const MAX_OPEN_FILES: usize = 128;

static OPEN_FILES: AtomicUsize = AtomicUsize::new(0);

impl PageFile {
    /// `len` bytes of `file` from `at` on; the file back when
    /// [`MAX_OPEN_FILES`] are open already or where files cannot be read
    /// at an offset.
    fn hold(file: std::fs::File, at: u64, len: u64) -> Result<Self, std::fs::File> {
        let taken = cfg!(unix)
            && OPEN_FILES
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |open| {
                    (open < MAX_OPEN_FILES).then_some(open + 1)
                })
                .is_ok();
        if taken {
            Ok(Self { file, at, len })
        } else {
            Err(file)
        }
    }
}

impl Drop for PageFile {
    fn drop(&mut self) {
        OPEN_FILES.fetch_sub(1, Ordering::Relaxed);
    }
}

impl ReadRange for PageFile {
    fn size(&self) -> u64 {
        self.len
    }

    fn read(&self, range: Range<u64>) -> Option<Vec<u8>> {
        if range.end > self.len {
            return None;
        }
        let mut out = vec![0; usize::try_from(range.end.checked_sub(range.start)?).ok()?];
        read_at(&self.file, &mut out, self.at.checked_add(range.start)?).ok()?;
        Some(out)
    }
}

#[cfg(unix)]
fn read_at(file: &std::fs::File, out: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, out, offset)
}

/// Never called: [`PageFile::hold`] holds no file where there is no
/// offset read.
#[cfg(not(unix))]
fn read_at(_: &std::fs::File, _: &mut [u8], _: u64) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// A field that may be absent.
fn owned(field: &str) -> Option<Option<String>> {
    Some(get_field(field)?.map(Cow::into_owned))
}

/// A field that must be present.
fn required(field: &str) -> Option<String> {
    owned(field)?
}

pub fn hex_sha256(bytes: &[u8]) -> String {
    hex_digest(&Sha256::digest(bytes))
}

/// A digest in lower-case hex, as indexes write sha256s.
pub fn hex_digest(digest: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// Why `dir` cannot serve as the cache (a file, a link in a loop, a
/// device, a folder nobody may write), or `None` when it can.
pub fn unusable(dir: &Path) -> Option<String> {
    match std::fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => return Some(format!("{} is not a folder", dir.display())),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Err(e) = std::fs::create_dir_all(dir) {
                return Some(format!("cannot make the folder {}: {e}", dir.display()));
            }
        }
        Err(e) => return Some(format!("cannot read {}: {e}", dir.display())),
    }
    match tempfile::Builder::new().prefix(TMP_PREFIX).tempfile_in(dir) {
        Ok(_) => None,
        Err(e) => Some(format!("cannot write in {}: {e}", dir.display())),
    }
}

impl Cache {
    pub fn new(root: Option<PathBuf>) -> Self {
        Self {
            root: root.map(|r| r.join(LAYOUT)),
            tmp: Arc::default(),
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
    pub fn page(&self, url: &str, listed_by: &Arc<str>) -> Option<CachedPage> {
        // A corrupt entry is a miss, not an error: it is fetched again.
        CachedPage::read(&self.page_path(url)?, listed_by.clone()).filter(|p| p.url == url)
    }

    /// Keep `page`, unless it carries a secret: a file link with a
    /// user's password or a signed URL's token is for this run only.
    pub fn put_page(&self, page: &CachedPage) {
        if let Some(path) = self.page_path(&page.url)
            && let Some(entry) = page.encode()
            && !crate::auth::holds_secret(&String::from_utf8_lossy(&entry))
        {
            self.write(&path, &entry);
        }
    }

    fn listing_path(&self, key: &str) -> Option<PathBuf> {
        Some(
            self.root
                .as_ref()?
                .join("files")
                .join(format!("{key}.list")),
        )
    }

    /// A wheel's file listing, by its key (its sha256).
    pub fn listing(&self, key: &str) -> Option<String> {
        let (mut bytes, start) = read_entry(&self.listing_path(key)?)?;
        bytes.drain(..start);
        String::from_utf8(bytes).ok()
    }

    pub fn put_listing(&self, key: &str, text: &str) {
        if let Some(path) = self.listing_path(key) {
            self.write(&path, &sealed(text.as_bytes()));
        }
    }

    pub fn metadata(&self, key: &str) -> Option<Vec<u8>> {
        let (mut bytes, start) = read_entry(&self.metadata_path(key)?)?;
        bytes.drain(..start);
        Some(bytes)
    }

    pub fn put_metadata(&self, key: &str, bytes: &[u8]) {
        if let Some(path) = self.metadata_path(key) {
            self.write(&path, &sealed(bytes));
        }
    }

    /// Write `bytes` to a temp file beside the entries, then rename it into
    /// place. Best effort: a cache that cannot be written only costs speed.
    fn write(&self, path: &Path, bytes: &[u8]) {
        let Some(dir) = path.parent() else {
            return;
        };
        if fs_err::create_dir_all(dir).is_err() {
            return;
        }
        // The cache's temp folder; beside the entry when there is none or
        // when it is on another file system (a folder linked elsewhere).
        for folder in [self.tmp_dir(), Some(dir)].into_iter().flatten() {
            if let Ok(mut tmp) = tempfile::Builder::new()
                .prefix(TMP_PREFIX)
                .tempfile_in(folder)
                && tmp.write_all(bytes).is_ok()
                && tmp.persist(path).is_ok()
            {
                return;
            }
        }
    }

    /// The cache's temp folder, made and swept at the first write of a
    /// run. Only a real folder: a link would take the sweep wherever it
    /// points.
    fn tmp_dir(&self) -> Option<&Path> {
        self.tmp
            .get_or_init(|| {
                let tmp = self.root.as_ref()?.join("tmp");
                fs_err::create_dir_all(&tmp).ok()?;
                if !fs_err::symlink_metadata(&tmp).is_ok_and(|m| m.is_dir()) {
                    return None;
                }
                sweep(&tmp);
                Some(tmp)
            })
            .as_deref()
    }
}

/// Temp files older than this were left by a run that stopped mid-write
/// (a run leaves its last guesses unfinished when it exits); a live write
/// takes milliseconds.
const STALE_TMP: std::time::Duration = std::time::Duration::from_secs(3600);

/// Most temp files looked at in one sweep.
const MAX_SWEEP: usize = 100_000;

/// How the cache's temp files are named; the sweep removes no other.
const TMP_PREFIX: &str = ".layerlock-tmp";

/// Remove the stale temp files in `dir`.
fn sweep(dir: &Path) {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return;
    };
    for entry in entries.take(MAX_SWEEP).flatten() {
        if !entry.file_name().to_string_lossy().starts_with(TMP_PREFIX) {
            continue;
        }
        let stale = entry
            .metadata()
            .ok()
            .filter(std::fs::Metadata::is_file)
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_TMP);
        if stale {
            let _ = fs_err::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::str::FromStr;

    use jiff::Timestamp;
    use layerlock_dist::IndexFile;
    use uv_normalize::PackageName;
    use uv_pep440::VersionSpecifiers;

    fn app() -> PackageName {
        PackageName::from_str("app").unwrap()
    }

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
        // In the order the lines keep them: by version, then no version.
        let files = vec![file("app-1.0-py3-none-any.whl"), dash, odd];
        let listed_by: Arc<str> = Arc::from("https://pypi.example/simple/");
        let page = CachedPage {
            url: "https://pypi.example/simple/app/".to_string(),
            status: 200,
            etag: Some("\"abc\"".to_string()),
            last_modified: None,
            files: PageLines::from_files(&files, &app(), listed_by.clone()).expect("lines"),
        };
        cache.put_page(&page);
        let read = cache.page(&page.url, &listed_by).expect("cached");
        assert_eq!(
            (&read.url, read.status, &read.etag, &read.last_modified),
            (&page.url, page.status, &page.etag, &page.last_modified)
        );
        let read_files: Vec<IndexFile> = (0..read.files.len())
            .filter_map(|i| read.files.file(i))
            .collect();
        assert_eq!(read_files, files);
        // Another URL's entry is never served for this one.
        let other = cache.page("https://pypi.example/simple/other/", &Arc::from("x"));
        assert!(other.is_none());
        // A byte of a line changed: a page read whole is checked whole, so
        // that is a miss (fetched again), not a version left unreadable.
        let path = cache.page_path(&page.url).expect("path");
        let mut bytes = fs_err::read(&path).unwrap();
        let last = bytes.len() - 2;
        bytes[last] ^= 1;
        fs_err::write(&path, bytes).unwrap();
        assert!(cache.page(&page.url, &listed_by).is_none());
    }

    #[test]
    fn file_links_with_a_password_or_a_token_are_never_written_to_the_cache() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(Some(dir.path().to_path_buf()));
        let listed_by: Arc<str> = Arc::from("https://pypi.example/simple/");
        for url in [
            "https://user:S3cret@files.example/app-1.0-py3-none-any.whl",
            "https://files.example/app-1.0-py3-none-any.whl?token=S3cret",
        ] {
            let mut link = file("app-1.0-py3-none-any.whl");
            link.url = url.to_string();
            let page = CachedPage {
                url: "https://pypi.example/simple/app/".to_string(),
                status: 200,
                etag: None,
                last_modified: None,
                files: PageLines::from_files(&[link], &app(), listed_by.clone()).expect("lines"),
            };
            cache.put_page(&page);
            assert!(cache.page(&page.url, &listed_by).is_none(), "{url}");
        }
        let mut written = Vec::new();
        for entry in walk(dir.path()) {
            written.extend(fs_err::read(entry).unwrap());
        }
        assert!(!String::from_utf8_lossy(&written).contains("S3cret"));
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for entry in fs_err::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
        out
    }

    #[test]
    fn a_cache_folder_that_cannot_serve_says_why() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(unusable(&dir.path().join("new/cache")), None);
        let file = dir.path().join("file");
        fs_err::write(&file, "").unwrap();
        assert!(unusable(&file).unwrap().ends_with("is not a folder"));
        assert!(
            unusable(Path::new("/dev/null"))
                .unwrap()
                .ends_with("is not a folder")
        );
        #[cfg(unix)]
        {
            let looped = dir.path().join("loop");
            std::os::unix::fs::symlink(&looped, &looped).unwrap();
            assert!(unusable(&looped).unwrap().starts_with("cannot read"));
        }
    }

    #[test]
    fn a_malformed_page_entry_is_a_miss() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(Some(dir.path().to_path_buf()));
        let url = "https://pypi.example/simple/app/";
        let path = cache.page_path(url).expect("path");
        let empty = "0\t0\t-\t00000000\n";
        // An entry of `head` and `body`, its head's checksum right.
        let entry = |head: &str, body: &str| {
            let crc = crc32fast::hash(head.as_bytes());
            format!("{PAGE_MAGIC}\t{}\t{crc:08x}\n{head}{body}", head.len())
        };
        let good = entry(&format!("{url}\t200\t-\t-\n{empty}"), "");
        let write = |text: &str| {
            fs_err::create_dir_all(path.parent().unwrap()).unwrap();
            fs_err::write(&path, text).unwrap();
        };
        write(&good);
        assert!(cache.page(url, &Arc::from("x")).is_some());
        for text in [
            "not a page\n".to_string(),
            good.replacen("200", "201", 1),
            good.replacen(PAGE_MAGIC, "layerlock-page 2", 1),
            good.replacen("\t-\t-\n", "\t-\t-\tmore\n", 1),
            entry(&format!("{url}\t200\t-\t-\tmore\n{empty}"), ""),
            entry(&format!("{url}\t2xx\t-\t-\n{empty}"), ""),
            entry(&format!("{url}\t200\t-\t-\nshort\tline\n"), ""),
            entry(
                &format!("{url}\t200\t-\t-\n{empty}"),
                "a line no run holds\n",
            ),
            good[..good.len() - 1].to_string(),
            format!("{good}more"),
        ] {
            write(&text);
            assert!(cache.page(url, &Arc::from("x")).is_none(), "{text}");
        }
    }

    #[test]
    fn a_large_page_reads_its_runs_from_the_file_as_they_are_looked_at() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = Cache::new(Some(dir.path().to_path_buf()));
        // Past the first read, index and all: 4,000 versions of two files.
        let files: Vec<IndexFile> = (0..4000)
            .flat_map(|i| {
                [
                    file(&format!("app-{i}.0-py3-none-any.whl")),
                    file(&format!("app-{i}.0.tar.gz")),
                ]
            })
            .collect();
        let listed_by: Arc<str> = Arc::from("https://pypi.example/simple/");
        let page = CachedPage {
            url: "https://pypi.example/simple/app/".to_string(),
            status: 200,
            etag: None,
            last_modified: None,
            files: PageLines::from_files(&files, &app(), listed_by.clone()).expect("lines"),
        };
        assert!(page.files.index().len() as u64 > READ_FIRST);
        cache.put_page(&page);
        let read = cache.page(&page.url, &listed_by).expect("cached");
        assert!(read.files.body().is_none(), "held in the file");
        assert_eq!(read.files.versions(), page.files.versions());
        for i in [0, 1, 3999, 7998, 7999] {
            assert_eq!(read.files.file(i), page.files.file(i), "{i}");
        }
        // With no file handle to spare, the page is read whole.
        OPEN_FILES.fetch_add(MAX_OPEN_FILES, Ordering::Relaxed);
        let whole = cache.page(&page.url, &listed_by);
        OPEN_FILES.fetch_sub(MAX_OPEN_FILES, Ordering::Relaxed);
        let whole = whole.expect("cached");
        assert_eq!(whole.files.body(), page.files.body());
        assert_eq!(whole.files.file(7999), page.files.file(7999));
        // The entry written again meanwhile (a run online): this page
        // still reads its own file.
        let path = cache.page_path(&page.url).expect("path");
        fs_err::remove_file(&path).unwrap();
        cache.put_page(&CachedPage {
            files: PageLines::from_files(&files[..2], &app(), listed_by.clone()).unwrap(),
            ..page
        });
        assert_eq!(
            read.files.file(4000).map(|f| f.filename),
            Some("app-2000.0-py3-none-any.whl".into())
        );
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

    #[test]
    fn a_write_sweeps_temp_files_an_interrupted_run_left() {
        let dir = tempfile::tempdir().expect("tempdir");
        let tmp = dir.path().join(LAYOUT).join("tmp");
        fs_err::create_dir_all(&tmp).unwrap();
        let (old, fresh) = (tmp.join(".layerlock-tmpOLD"), tmp.join(".layerlock-tmpNEW"));
        let other = tmp.join("notes.txt");
        fs_err::write(&old, b"half").unwrap();
        fs_err::write(&fresh, b"being written").unwrap();
        fs_err::write(&other, b"not ours").unwrap();
        let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
        for path in [&old, &other] {
            std::fs::File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(two_hours_ago)
                .unwrap();
        }
        let cache = Cache::new(Some(dir.path().to_path_buf()));
        cache.put_metadata("sha256-ab", b"Metadata-Version: 2.1\n");
        assert!(!old.exists(), "a stale temp file is removed");
        assert!(
            fresh.exists(),
            "another run's write in progress is left alone"
        );
        assert_eq!(
            cache.metadata("sha256-ab").as_deref(),
            Some(&b"Metadata-Version: 2.1\n"[..])
        );
        // Nothing else is left in the temp directory.
        assert_eq!(fs_err::read_dir(&tmp).unwrap().count(), 2);
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_temp_folder_is_neither_swept_nor_written_in() {
        let dir = tempfile::tempdir().expect("tempdir");
        let elsewhere = tempfile::tempdir().expect("tempdir");
        let precious = elsewhere.path().join(".layerlock-tmp-precious");
        fs_err::write(&precious, b"keep").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&precious)
            .unwrap()
            .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(7200))
            .unwrap();
        fs_err::create_dir_all(dir.path().join(LAYOUT)).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(LAYOUT).join("tmp")).unwrap();
        let cache = Cache::new(Some(dir.path().to_path_buf()));
        cache.put_metadata("sha256-ab", b"Metadata-Version: 2.1\n");
        assert!(precious.exists());
        assert_eq!(fs_err::read_dir(elsewhere.path()).unwrap().count(), 1);
        assert!(cache.metadata("sha256-ab").is_some());
    }
}
