//! The persistent cache: project pages with their validators (ETag,
//! Last-Modified) and core metadata keyed by the wheel's sha256. Every write
//! goes to a temp file first, then is renamed into place.

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
const LAYOUT: &str = "v1";

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
        let bytes = fs_err::read(path).ok()?;
        // A corrupt entry is a miss, not an error: it is fetched again.
        serde_json::from_slice::<CachedPage>(&bytes)
            .ok()
            .filter(|p| p.url == url)
    }

    pub fn put_page(&self, page: &CachedPage) {
        if let (Some(path), Ok(bytes)) = (self.page_path(&page.url), serde_json::to_vec(page)) {
            write_atomic(&path, &bytes);
        }
    }

    pub fn metadata(&self, key: &str) -> Option<Vec<u8>> {
        fs_err::read(self.metadata_path(key)?).ok()
    }

    pub fn put_metadata(&self, key: &str, bytes: &[u8]) {
        if let Some(path) = self.metadata_path(key) {
            write_atomic(&path, bytes);
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
