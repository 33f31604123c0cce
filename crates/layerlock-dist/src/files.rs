//! The files an index (or a find-links directory) lists for a project.

use std::str::FromStr;

use jiff::Timestamp;
use uv_distribution_filename::{SourceDistExtension, SourceDistFilename, WheelFilename};
use uv_normalize::PackageName;
use uv_pep440::{Version, VersionSpecifiers};

/// One file of one project, as an index lists it (PEP 503/691/700/714).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexFile {
    pub filename: String,
    /// Absolute URL (or `file://` path for find-links), without credentials.
    pub url: String,
    /// Lower-case hex sha256 when the index gives one.
    pub sha256: Option<String>,
    pub requires_python: Option<VersionSpecifiers>,
    /// `Some(reason)` when yanked (PEP 592); the reason may be empty.
    pub yanked: Option<String>,
    /// PEP 700; absent from HTML pages.
    pub upload_time: Option<Timestamp>,
    /// Bytes, when the index says (PEP 700) or the file is local.
    pub size: Option<u64>,
    /// PEP 658/714: `Some(hash)` when a `.metadata` file is offered.
    pub core_metadata: Option<Option<String>>,
    /// Where it was listed: an index URL (redacted) or a find-links directory.
    pub listed_by: String,
}

/// What kind of distribution a file is, from its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DistKind {
    Wheel(WheelFilename),
    Sdist(Version),
    /// Eggs, `.exe` installers, names we cannot read: never installed.
    Other,
}

impl IndexFile {
    pub fn kind(&self, project: &PackageName) -> DistKind {
        if self.filename.ends_with(".whl") {
            return match WheelFilename::from_str(&self.filename) {
                Ok(wheel) => DistKind::Wheel(wheel),
                Err(_) => DistKind::Other,
            };
        }
        let Ok(ext) = SourceDistExtension::from_path(&self.filename) else {
            return DistKind::Other;
        };
        match SourceDistFilename::parse(&self.filename, ext, project) {
            Ok(sdist) => DistKind::Sdist(sdist.version),
            Err(_) => DistKind::Other,
        }
    }
}

/// Every file an index lists for one project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectFiles {
    pub files: Vec<IndexFile>,
    /// The index URLs (redacted) or directories asked.
    pub asked: Vec<String>,
}

/// A sha256 digest as a lock may carry it: 64 hex digits, lower-cased.
/// Anything else (a short value, or text with a newline that would become
/// a live line in a requirements file) is refused by every reader.
pub fn sha256_digest(text: &str) -> Option<String> {
    (text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| text.to_ascii_lowercase())
}
