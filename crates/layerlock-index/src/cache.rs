//! The persistent cache: project pages with their validators (ETag,
//! Last-Modified) and core metadata keyed by the wheel's sha256. Every write
//! goes to a temp file first, then is renamed into place. Every entry starts
//! with the sha256 of what follows and is checked on read: a corrupted or
//! edited entry is a miss (fetched again, or an error offline), never data.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CachedPage {
    pub url: String,
    pub status: u16,
    pub etag: Option<String>,
    pub last_modified: Option<String>,
    pub content_type: Option<String>,
    pub body: String,
}

#[derive(Debug, Clone)]
pub struct Cache {
    root: Option<PathBuf>,
}

/// Bump when the layout changes so old entries are not misread.
const LAYOUT: &str = "v2";

/// Largest cache entry read back.
const MAX_ENTRY_BYTES: u64 = 256 * 1024 * 1024;

/// `sha256(body) \n body`.
fn sealed(body: &[u8]) -> Vec<u8> {
    let mut out = hex_sha256(body).into_bytes();
    out.push(b'\n');
    out.extend_from_slice(body);
    out
}

/// The body of a sealed entry, if its digest matches.
fn unseal(bytes: Vec<u8>) -> Option<Vec<u8>> {
    let newline = bytes.iter().position(|b| *b == b'\n')?;
    let (digest, body) = (&bytes[..newline], &bytes[newline + 1..]);
    (digest == hex_sha256(body).as_bytes()).then(|| body.to_vec())
}

/// A cache file: only a regular file, not over the limit.
fn read_entry(path: &Path) -> Option<Vec<u8>> {
    let meta = fs_err::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_ENTRY_BYTES {
        return None;
    }
    unseal(fs_err::read(path).ok()?)
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

    pub fn page(&self, url: &str) -> Option<CachedPage> {
        let path = self.page_path(url)?;
        let bytes = read_entry(&path)?;
        // A corrupt entry is a miss, not an error: it is fetched again.
        serde_json::from_slice::<CachedPage>(&bytes)
            .ok()
            .filter(|p| p.url == url)
    }

    pub fn put_page(&self, page: &CachedPage) {
        if let (Some(path), Ok(bytes)) = (self.page_path(&page.url), serde_json::to_vec(page)) {
            write_atomic(&path, &sealed(&bytes));
        }
    }

    pub fn metadata(&self, key: &str) -> Option<Vec<u8>> {
        read_entry(&self.metadata_path(key)?)
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
mod tests {
    use super::*;

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
