//! The distributions installed on an interpreter's path: `*.dist-info`
//! (PEP 376/627) and, as well as can be done, `*.egg-info`.

use std::borrow::Cow;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::Serialize;
use sha2::{Digest, Sha256};
use uv_normalize::PackageName;

use crate::read::Dir;

/// One installed distribution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Installed {
    pub name: String,
    pub version: String,
    /// `pip`, `uv`, … from the INSTALLER file; empty when absent.
    pub installer: String,
    /// sha256 of the RECORD file: any reinstall or in-place upgrade changes it.
    pub record_digest: Option<String>,
    pub direct_url: bool,
    /// The `.dist-info` or `.egg-info` path.
    pub path: PathBuf,
    /// The site directory it lives in.
    pub site: PathBuf,
    pub egg_info: bool,
}

/// A metadata directory that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unreadable {
    pub path: PathBuf,
    pub why: String,
}

/// Every distribution found, by normalised name. When a name is found twice
/// (two site directories), the first on the path wins, as at import time;
/// the shadowed one is kept in `shadowed`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    pub dists: BTreeMap<String, Installed>,
    pub shadowed: Vec<Installed>,
    pub unreadable: Vec<Unreadable>,
}

/// The RECORD files a scan read, by `.dist-info` path, so that clash and
/// integrity checks do not read each one again: the text, or why it could
/// not be had (the message `verify --integrity` reports).
#[derive(Debug, Clone, Default)]
pub struct Records {
    /// By the path's bytes: a `PathBuf` key hashes component by component.
    by_dist: HashMap<OsString, Result<String, String>>,
}

impl Records {
    /// `dist`'s RECORD as the scan read it; `None` for an `.egg-info` or a
    /// distribution this scan did not find.
    pub fn get(&self, dist: &Installed) -> Option<&Result<String, String>> {
        self.by_dist.get(dist.path.as_os_str())
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// What the head of a METADATA / PKG-INFO file says.
#[derive(Debug, PartialEq, Eq)]
enum Head {
    Found(String, String),
    /// The headers end (or the file does) without Name or Version.
    Missing,
    /// The bytes read so far end inside the headers: read more.
    Unfinished,
}

/// Name and Version from the head of a METADATA / PKG-INFO file, of which
/// `bytes` are the start (the whole file when `whole`). Only complete lines
/// count: a part ends at its last newline, so `Version: 1.2` cut after
/// `1.` is never taken for version `1.`. The headers are read as text line
/// by line (as `str::lines` splits them), and only the lines that could be
/// blank and the two values are decoded, not the whole head.
fn head(bytes: &[u8], whole: bool) -> Head {
    let bytes = if whole {
        bytes
    } else {
        match bytes.iter().rposition(|&b| b == b'\n') {
            Some(end) => &bytes[..=end],
            None => return Head::Unfinished,
        }
    };
    let text = |value: &[u8]| String::from_utf8_lossy(value).trim().to_string();
    let mut name = None;
    let mut version = None;
    let mut rest = bytes;
    while !rest.is_empty() {
        let line = match rest.iter().position(|&b| b == b'\n') {
            Some(end) => {
                let line = &rest[..end];
                rest = &rest[end + 1..];
                line.strip_suffix(b"\r").unwrap_or(line)
            }
            None => std::mem::take(&mut rest),
        };
        // Blank as `str::trim` sees it: nothing but whitespace, which is
        // ASCII or (rarely) wider.
        let blank = line
            .iter()
            .all(|&b| !b.is_ascii() || char::from(b).is_whitespace())
            && String::from_utf8_lossy(line).trim().is_empty();
        if blank {
            return Head::Missing;
        }
        if let Some(v) = line.strip_prefix(b"Name:") {
            name = Some(text(v));
        } else if let Some(v) = line.strip_prefix(b"Version:") {
            version = Some(text(v));
        }
        if let (Some(name), Some(version)) = (&name, &version) {
            return Head::Found(name.clone(), version.clone());
        }
    }
    if whole {
        Head::Missing
    } else {
        Head::Unfinished
    }
}

/// How much of a METADATA file is read first: Name and Version are among
/// its first headers (the core metadata specification lists them second
/// and third, and build backends write them in that order), and the long
/// description after the headers, often tens of KiB, is never needed.
const METADATA_HEAD: u64 = 4 * 1024;

/// Name and Version of the METADATA / PKG-INFO file `metadata` in `dir`.
fn name_version(dir: &Dir<'_>, metadata: &Path) -> Result<(String, String), String> {
    let missing = || "no Name or Version in its metadata".to_string();
    let (bytes, whole) = dir.read_prefix(metadata, METADATA_HEAD)?;
    match head(&bytes, whole) {
        Head::Found(name, version) => Ok((name, version)),
        Head::Missing => Err(missing()),
        Head::Unfinished => match head(&dir.read_small(metadata)?, true) {
            Head::Found(name, version) => Ok((name, version)),
            Head::Missing | Head::Unfinished => Err(missing()),
        },
    }
}

pub fn normalise(name: &str) -> String {
    PackageName::from_str(name)
        .map(|n| n.to_string())
        .unwrap_or_else(|_| name.to_ascii_lowercase())
}

/// A distribution, and its RECORD when the caller keeps them.
type DistRead = (Installed, Option<Result<String, String>>);

/// The distribution whose metadata directory is `name` in `site`.
fn read_dist(
    site: &Dir<'_>,
    name: &OsStr,
    egg: bool,
    options: ScanOptions,
) -> Result<DistRead, String> {
    let path = site.path().join(name);
    let info = Path::new(name);
    let metadata_file = if egg {
        if path.is_dir() {
            info.join("PKG-INFO")
        } else {
            info.to_path_buf()
        }
    } else {
        info.join("METADATA")
    };
    let (dist_name, version) = name_version(site, &metadata_file)?;
    let (record_digest, record) = if egg {
        (None, None)
    } else {
        match site.read_small(&info.join("RECORD")) {
            Ok(bytes) => (
                options.provenance.then(|| hex(&Sha256::digest(&bytes))),
                options.keep_records.then(|| {
                    String::from_utf8(bytes).map_err(|_| "RECORD is not UTF-8".to_string())
                }),
            ),
            Err(e) => (None, options.keep_records.then_some(Err(e))),
        }
    };
    let (installer, direct_url) = if options.provenance {
        let installer = site
            .read_small(&info.join("INSTALLER"))
            .map(|b| String::from_utf8_lossy(&b).trim().to_string())
            .unwrap_or_default();
        (installer, path.join("direct_url.json").is_file())
    } else {
        (String::new(), false)
    };
    let dist = Installed {
        name: normalise(&dist_name),
        version,
        installer,
        record_digest,
        direct_url,
        path,
        site: site.path().to_path_buf(),
        egg_info: egg,
    };
    Ok((dist, record))
}

/// What a scan reads beyond each distribution's name and version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanOptions {
    /// INSTALLER, `direct_url.json` and the RECORD's digest, which
    /// `install` reports and its drift guard compares, and `verify` uses
    /// none of. Without them `installer` is empty, `direct_url` false and
    /// `record_digest` none.
    pub provenance: bool,
    /// Keep every RECORD read, for clash and integrity checks.
    pub keep_records: bool,
}

/// Why an environment cannot be read as a base: a distribution that
/// cannot be read could be any version, so its pins are unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BaseEnvError {
    Unreadable(Unreadable),
    /// A dist-info whose name or version does not parse.
    BadPin {
        path: PathBuf,
        name: String,
        version: String,
    },
}

impl Snapshot {
    /// Every distribution as a base pin, by name: the first unreadable one
    /// is an error (fail closed), as is a name or version that does not
    /// parse.
    pub fn base_pins(&self) -> Result<Vec<(PackageName, uv_pep440::Version)>, BaseEnvError> {
        if let Some(bad) = self.unreadable.first() {
            return Err(BaseEnvError::Unreadable(bad.clone()));
        }
        self.dists
            .values()
            .map(|dist| {
                match (
                    PackageName::from_str(&dist.name),
                    uv_pep440::Version::from_str(&dist.version),
                ) {
                    (Ok(name), Ok(version)) => Ok((name, version)),
                    _ => Err(BaseEnvError::BadPin {
                        path: dist.path.clone(),
                        name: dist.name.clone(),
                        version: dist.version.clone(),
                    }),
                }
            })
            .collect()
    }

    /// Scan `paths` in order, provenance included.
    pub fn scan(paths: &[PathBuf]) -> Self {
        let options = ScanOptions {
            provenance: true,
            keep_records: false,
        };
        Self::scan_with(paths, options).0
    }

    /// Scan `paths` in order; the RECORDs read when `options` keeps them.
    pub fn scan_with(paths: &[PathBuf], options: ScanOptions) -> (Self, Records) {
        // Every metadata directory, site by site, each site's sorted so
        // that the result does not depend on directory order.
        let sites: Vec<Dir<'_>> = paths.iter().map(|site| Dir::open(site)).collect();
        let mut found: Vec<(usize, OsString, bool)> = Vec::new();
        let mut snapshot = Self::default();
        for (index, site) in paths.iter().enumerate() {
            let Ok(entries) = fs_err::read_dir(site) else {
                continue;
            };
            let mut here: Vec<(OsString, bool)> = Vec::new();
            for entry in entries.filter_map(Result::ok) {
                let file_name = entry.file_name();
                let bytes = file_name.as_encoded_bytes();
                let egg = bytes.ends_with(b".egg-info");
                if !(egg || bytes.ends_with(b".dist-info")) {
                    continue;
                }
                if file_name.to_str().is_none() {
                    // Python imports what is there whatever its metadata
                    // folder is called: a name layerlock cannot read is a
                    // distribution it cannot account for, never one absent.
                    snapshot.unreadable.push(Unreadable {
                        path: site.join(&file_name),
                        why: "its name is not UTF-8".to_string(),
                    });
                    continue;
                }
                here.push((file_name, egg));
            }
            here.sort();
            found.extend(here.into_iter().map(|(name, egg)| (index, name, egg)));
        }
        snapshot.unreadable.sort_by(|a, b| a.path.cmp(&b.path));
        // Reading is most of the time (two or three small files each);
        // the reads are spread over the cores and the results taken in order.
        let read = crate::parallel::map(
            &found,
            || (),
            |(), (site, name, egg)| read_dist(&sites[*site], name, *egg, options),
        );
        let mut records = Records::default();
        for ((site, name, _), result) in found.into_iter().zip(read) {
            match result {
                Ok((dist, record)) => {
                    if let Some(record) = record {
                        records
                            .by_dist
                            .insert(dist.path.clone().into_os_string(), record);
                    }
                    match snapshot.dists.entry(dist.name.clone()) {
                        Entry::Occupied(_) => snapshot.shadowed.push(dist),
                        Entry::Vacant(vacant) => {
                            vacant.insert(dist);
                        }
                    }
                }
                Err(why) => snapshot.unreadable.push(Unreadable {
                    path: paths[site].join(name),
                    why,
                }),
            }
        }
        (snapshot, records)
    }
}

/// One RECORD line: path, `sha256=…` digest (urlsafe base64, no padding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordEntry {
    pub path: String,
    pub sha256: Option<String>,
}

/// One RECORD line, borrowed from the RECORD's text where it can be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RecordLine<'a> {
    pub(crate) path: Cow<'a, str>,
    pub(crate) sha256: Option<Cow<'a, str>>,
    /// A hash in another algorithm (`md5=…`): not checked, and so not
    /// passed either.
    pub(crate) other_hash: Option<Cow<'a, str>>,
}

/// The sha256 digest of a RECORD hash field, or the field when it holds
/// another algorithm's hash.
fn hash_field(field: &str) -> (Option<&str>, Option<&str>) {
    match field.strip_prefix("sha256=") {
        Some(digest) => (Some(digest), None),
        None if field.trim().is_empty() => (None, None),
        None => (None, Some(field)),
    }
}

/// The lines of a RECORD (CSV: path,hash,size; paths may be quoted).
pub(crate) fn record_lines(text: &str) -> impl Iterator<Item = RecordLine<'_>> {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(record_line)
}

fn record_line(line: &str) -> RecordLine<'_> {
    if !line.as_bytes().contains(&b'"') {
        // Nearly every line: nothing quoted, so the fields are the text.
        let (path, rest) = field(line);
        let (sha256, other) = hash_field(rest.map_or("", |rest| field(rest).0));
        return RecordLine {
            path: Cow::Borrowed(path),
            sha256: sha256.map(Cow::Borrowed),
            other_hash: other.map(Cow::Borrowed),
        };
    }
    let mut fields = split_csv(line).into_iter();
    let path = fields.next().unwrap_or_default();
    let hash = fields.next().unwrap_or_default();
    let (sha256, other) = hash_field(&hash);
    RecordLine {
        path: Cow::Owned(path),
        sha256: sha256.map(|h| Cow::Owned(h.to_string())),
        other_hash: other.map(|h| Cow::Owned(h.to_string())),
    }
}

/// The text of a `.dist-info`'s RECORD.
pub(crate) fn record_text(dist_info: &Path) -> Result<String, String> {
    let bytes = crate::read::read_small(&dist_info.join("RECORD"))?;
    String::from_utf8(bytes).map_err(|_| "RECORD is not UTF-8".to_string())
}

/// The first field of `text` and the rest after its comma. A byte search:
/// a `char` pattern calls memcmp for every match.
fn field(text: &str) -> (&str, Option<&str>) {
    match text.bytes().position(|b| b == b',') {
        Some(comma) => (&text[..comma], Some(&text[comma + 1..])),
        None => (text, None),
    }
}

/// Parse a RECORD file (CSV: path,hash,size; paths may be quoted).
pub fn read_record(dist_info: &Path) -> Result<Vec<RecordEntry>, String> {
    let text = record_text(dist_info)?;
    Ok(record_lines(&text)
        .map(|line| RecordEntry {
            path: line.path.into_owned(),
            sha256: line.sha256.map(Cow::into_owned),
        })
        .collect())
}

fn split_csv(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                current.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    fields.push(current);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_quotes() {
        assert_eq!(
            split_csv(r#""a,b.py",sha256=xx,12"#),
            vec!["a,b.py", "sha256=xx", "12"]
        );
    }

    #[test]
    fn scans_dist_info_and_egg_info_and_reports_broken_ones() {
        let dir = std::env::temp_dir().join(format!("ll-scan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("Foo_Bar-1.0.dist-info")).unwrap();
        std::fs::write(
            dir.join("Foo_Bar-1.0.dist-info/METADATA"),
            "Name: Foo_Bar\nVersion: 1.0\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("Foo_Bar-1.0.dist-info/RECORD"),
            "foo/__init__.py,,\n",
        )
        .unwrap();
        std::fs::write(dir.join("Foo_Bar-1.0.dist-info/INSTALLER"), "uv\n").unwrap();
        std::fs::create_dir_all(dir.join("old.egg-info")).unwrap();
        std::fs::write(
            dir.join("old.egg-info/PKG-INFO"),
            "Name: old\nVersion: 0.1\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.join("broken-1.0.dist-info")).unwrap();
        let snapshot = Snapshot::scan(std::slice::from_ref(&dir));
        assert_eq!(snapshot.dists["foo-bar"].version, "1.0");
        assert_eq!(snapshot.dists["foo-bar"].installer, "uv");
        assert!(snapshot.dists["foo-bar"].record_digest.is_some());
        assert!(snapshot.dists["old"].egg_info);
        assert_eq!(snapshot.unreadable.len(), 1);
        // An unreadable distribution could be any version: no base.
        assert!(matches!(
            snapshot.base_pins(),
            Err(BaseEnvError::Unreadable(_))
        ));
        std::fs::remove_dir_all(dir.join("broken-1.0.dist-info")).unwrap();
        let pins = Snapshot::scan(std::slice::from_ref(&dir))
            .base_pins()
            .unwrap();
        let pins: Vec<String> = pins.iter().map(|(n, v)| format!("{n}=={v}")).collect();
        assert_eq!(pins, ["foo-bar==1.0", "old==0.1"]);
        std::fs::write(
            dir.join("old.egg-info/PKG-INFO"),
            "Name: old\nVersion: not a version\n",
        )
        .unwrap();
        assert!(matches!(
            Snapshot::scan(std::slice::from_ref(&dir)).base_pins(),
            Err(BaseEnvError::BadPin { .. })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn quoted_and_plain_record_lines_read_as_the_csv_reader_reads_them() {
        let lines = [
            "a/b.py,sha256=AbC_-1,12",
            "a/b.py,,",
            "a/b.py",
            "a/b.py,md5=xx,3",
            "\"a,b.py\",sha256=xx,12",
            "\"say \"\"hi\"\".py\",sha256=yy,1",
            "x,\"sha256=zz\",2",
            "caf\u{e9}/\u{fc}.py,sha256=q,1",
            ",sha256=empty,0",
        ];
        for line in lines {
            let fields = split_csv(line);
            let hash = fields.get(1).cloned().unwrap_or_default();
            let expected = RecordLine {
                path: Cow::Owned(fields[0].clone()),
                sha256: hash
                    .strip_prefix("sha256=")
                    .map(|h| Cow::Owned(h.to_string())),
                other_hash: (!hash.is_empty() && !hash.starts_with("sha256="))
                    .then(|| Cow::Owned(hash.clone())),
            };
            assert_eq!(record_line(line), expected, "{line}");
        }
        let text = "a.py,sha256=1,1\r\n\n   \nb.py,,\n";
        let paths: Vec<String> = record_lines(text).map(|l| l.path.into_owned()).collect();
        assert_eq!(paths, ["a.py", "b.py"]);
    }

    #[test]
    fn only_complete_lines_of_a_partial_head_count() {
        assert_eq!(
            head(b"Name: a\nVersion: 1.2", false),
            Head::Unfinished,
            "a version cut short is not version 1.2"
        );
        assert_eq!(head(b"Name: a", false), Head::Unfinished);
        assert_eq!(head(b"Name: a\nVersion: 1.2", true), found("a", "1.2"));
        assert_eq!(head(b"Name: a\n\nVersion: 1.2\n", false), Head::Missing);
        assert_eq!(head(b"Name: a\n", true), Head::Missing);
        assert_eq!(head(b"Version: 3\r\nName: b\r\n", false), found("b", "3"));
    }

    #[test]
    fn the_head_ends_where_text_lines_would_say_it_does() {
        // Read as bytes, the head must end at the same line as when the
        // whole file is decoded and split with `str::lines`.
        let reference = |bytes: &[u8]| {
            let text = String::from_utf8_lossy(bytes);
            let mut name = None;
            let mut version = None;
            for line in text.lines() {
                if line.trim().is_empty() {
                    break;
                }
                if let Some(v) = line.strip_prefix("Name:") {
                    name = Some(v.trim().to_string());
                } else if let Some(v) = line.strip_prefix("Version:") {
                    version = Some(v.trim().to_string());
                }
                if name.is_some() && version.is_some() {
                    break;
                }
            }
            match (name, version) {
                (Some(n), Some(v)) => Head::Found(n, v),
                _ => Head::Missing,
            }
        };
        let heads: [&[u8]; 10] = [
            b"Name: a\n\x0b\nVersion: 1\n",
            b"Name: a\n\xc2\xa0\nVersion: 1\n",
            b"Name: a\n\xe3\x80\x80 \t\nVersion: 1\n",
            b"Name: a\n\xff\nVersion: 1\n",
            b"Name: a\n\x1c\nVersion: 1\n",
            b"Name: \xc3\xa9t\xc3\xa9\r\nVersion:  2.0 \r\n",
            b"Name: a\rVersion: 1\nVersion: 2\n",
            b"Name: a\nVersion: 1\r",
            b"Name: a\n\r\nVersion: 1\n",
            b"\nName: a\nVersion: 1\n",
        ];
        for bytes in heads {
            assert_eq!(head(bytes, true), reference(bytes), "{bytes:?}");
        }
    }

    fn found(name: &str, version: &str) -> Head {
        Head::Found(name.to_string(), version.to_string())
    }

    #[test]
    fn metadata_headers_longer_than_the_first_read_are_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        // Version straddles the end of the first read: `Version: 10.` is in
        // it, `20.30` is not.
        let mut text = String::from("Metadata-Version: 2.1\nName: Late_Name\n");
        while text.len() < METADATA_HEAD as usize {
            text.push_str("Classifier: Programming Language :: Python\n");
        }
        text.truncate(METADATA_HEAD as usize - 13);
        text.push_str("\nVersion: 10.20.30\n\nA description.\n");
        let info = dir.path().join("late_name-10.20.30.dist-info");
        std::fs::create_dir_all(&info).unwrap();
        std::fs::write(info.join("METADATA"), &text).unwrap();
        std::fs::write(info.join("RECORD"), "").unwrap();
        let snapshot = Snapshot::scan(&[dir.path().to_path_buf()]);
        assert!(snapshot.unreadable.is_empty(), "{:?}", snapshot.unreadable);
        assert_eq!(snapshot.dists["late-name"].version, "10.20.30");
        // Without Name anywhere in the headers, the distribution is unreadable.
        std::fs::write(info.join("METADATA"), text.replace("Name: Late_Name", "")).unwrap();
        let snapshot = Snapshot::scan(&[dir.path().to_path_buf()]);
        assert_eq!(
            snapshot.unreadable[0].why,
            "no Name or Version in its metadata"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_dist_info_folder_whose_name_is_not_utf8_is_unreadable_not_absent() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().to_path_buf();
        crate::testing::install(&site, "ok", &[]);
        let name = std::ffi::OsStr::from_bytes(b"bad\xff-1.0.dist-info");
        std::fs::create_dir(site.join(name)).unwrap();
        std::fs::write(
            site.join(name).join("METADATA"),
            "Name: bad\nVersion: 1.0\n",
        )
        .unwrap();
        let snapshot = Snapshot::scan(std::slice::from_ref(&site));
        assert!(snapshot.dists.contains_key("ok"));
        assert_eq!(snapshot.unreadable.len(), 1, "{:?}", snapshot.unreadable);
        assert_eq!(snapshot.unreadable[0].path, site.join(name));
        assert_eq!(snapshot.unreadable[0].why, "its name is not UTF-8");
    }

    #[test]
    fn a_scan_keeps_records_and_leaves_provenance_out_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().to_path_buf();
        for i in 0..50 {
            crate::testing::install(&site, &format!("d{i:02}"), &[]);
        }
        std::fs::write(site.join("d07-1.0.dist-info/RECORD"), b"\xff\xfe").unwrap();
        std::fs::remove_file(site.join("d08-1.0.dist-info/RECORD")).unwrap();
        let options = ScanOptions {
            provenance: false,
            keep_records: true,
        };
        let (lean, records) = Snapshot::scan_with(std::slice::from_ref(&site), options);
        let full = Snapshot::scan(std::slice::from_ref(&site));
        assert_eq!(lean.dists.len(), 50);
        for (name, dist) in &full.dists {
            let lean = &lean.dists[name];
            assert_eq!((&lean.version, &lean.path), (&dist.version, &dist.path));
            assert_eq!(dist.installer, "uv");
            assert_eq!(lean.installer, "");
            assert_eq!(dist.record_digest.is_some(), name != "d08", "{name}");
            assert_eq!(lean.record_digest, None, "{name}");
        }
        assert_eq!(
            records.get(&lean.dists["d00"]),
            Some(&Ok("d00-1.0.dist-info/RECORD,,\n".to_string()))
        );
        assert_eq!(
            records.get(&lean.dists["d07"]),
            Some(&Err("RECORD is not UTF-8".to_string()))
        );
        assert!(matches!(records.get(&lean.dists["d08"]), Some(Err(e)) if e.contains("RECORD")));
        // Shadowed names and the order of sites are as before.
        let (_, none) = Snapshot::scan_with(
            std::slice::from_ref(&site),
            ScanOptions {
                provenance: true,
                keep_records: false,
            },
        );
        assert!(none.get(&lean.dists["d00"]).is_none());
    }
}
