//! The files an index (or a find-links directory) lists for a project.

use std::collections::BTreeMap;
use std::ops::Range;
use std::str::FromStr;
use std::sync::Arc;

use jiff::Timestamp;
use uv_distribution_filename::{SourceDistExtension, SourceDistFilename, WheelFilename};
use uv_normalize::PackageName;
use uv_pep440::{Version, VersionSpecifiers};

use crate::PageLines;

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

/// Which of a project's files a lock entry installs, by its hashes.
#[derive(Debug, PartialEq, Eq)]
pub enum LockedFiles<'a> {
    /// No file has a hash the lock gives: the lock is stale, or the index
    /// serves other files.
    None,
    /// Only files that are no wheels (an sdist): what they install is known
    /// only once built.
    NoWheel,
    /// The locked wheels to look into: those for the target when it is
    /// known and any fits (a lock with every platform's hashes need not
    /// read them all), else every locked wheel.
    Wheels(Vec<&'a IndexFile>),
}

/// The files of `files` that `hashes` (`sha256:…`, as a lock has them)
/// pin, as [`LockedFiles`] says.
pub fn locked_files<'a>(
    files: &'a [IndexFile],
    hashes: &[String],
    target: Option<&crate::Target>,
) -> LockedFiles<'a> {
    let locked: std::collections::BTreeSet<&str> = hashes
        .iter()
        .map(|h| h.strip_prefix("sha256:").unwrap_or(h))
        .collect();
    let matching: Vec<&IndexFile> = files
        .iter()
        .filter(|f| f.sha256.as_deref().is_some_and(|h| locked.contains(h)))
        .collect();
    let wheels: Vec<(&IndexFile, WheelFilename)> = matching
        .iter()
        .filter_map(|f| Some((*f, f.filename.parse::<WheelFilename>().ok()?)))
        .collect();
    if wheels.is_empty() {
        return if matching.is_empty() {
            LockedFiles::None
        } else {
            LockedFiles::NoWheel
        };
    }
    let fitting: Vec<&IndexFile> = match target {
        Some(target) => wheels
            .iter()
            .filter(|(_, w)| w.is_compatible(target.tags()))
            .map(|(f, _)| *f)
            .collect(),
        None => Vec::new(),
    };
    let has_sdist = matching.len() > wheels.len();
    if fitting.is_empty() && target.is_some() && has_sdist {
        // Wheels for other platforms only: on this one the sdist installs.
        LockedFiles::NoWheel
    } else if fitting.is_empty() {
        LockedFiles::Wheels(wheels.into_iter().map(|(f, _)| f).collect())
    } else {
        LockedFiles::Wheels(fitting)
    }
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

/// The version in a file's name, for sorting files into versions cheaply: a
/// wheel's tags are not read here (`IndexFile::kind` reads them when its
/// version is judged). `None` for names that are neither a wheel nor a
/// source distribution of `project`.
pub fn version_in_filename(project: &PackageName, filename: &str) -> Option<Version> {
    if filename.ends_with(".whl") {
        return Version::from_str(wheel_version_text(filename)?).ok();
    }
    let ext = SourceDistExtension::from_path(filename).ok()?;
    SourceDistFilename::parse(filename, ext, project)
        .ok()
        .map(|sdist| sdist.version)
}

/// The version part of a wheel's name, unparsed; `None` for a name that is
/// not `name-version[-build]-python-abi-platform.whl`.
pub fn wheel_version_text(filename: &str) -> Option<&str> {
    let mut parts = filename.strip_suffix(".whl")?.split('-');
    let version = parts.nth(1)?;
    matches!(parts.count(), 3 | 4).then_some(version)
}

/// The files of one version, as indexes for [`ProjectFiles::file`]: the
/// find-links files, then a run of the page's lines (no list of its own:
/// a project's page has thousands of versions).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionFiles {
    local: Vec<u32>,
    page: Range<u32>,
}

impl VersionFiles {
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.local.iter().copied().chain(self.page.clone())
    }

    pub fn len(&self) -> usize {
        self.local.len() + self.page.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Every file the indexes and find-links directories list for one project:
/// local files read already, then the index page's lines, read on demand.
#[derive(Debug, Clone, Default)]
pub struct ProjectFiles {
    local: Vec<IndexFile>,
    page: Option<Arc<PageLines>>,
    /// The index URLs (redacted) or directories asked.
    pub asked: Vec<String>,
}

impl ProjectFiles {
    pub fn new(local: Vec<IndexFile>, page: Option<Arc<PageLines>>, asked: Vec<String>) -> Self {
        Self { local, page, asked }
    }

    pub fn len(&self) -> usize {
        self.local.len() + self.page.as_ref().map_or(0, |p| p.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The files of each version (indexes for [`Self::file`]), oldest
    /// version first, without reading more of them than their names.
    pub fn versions(&self, project: &PackageName) -> BTreeMap<Version, VersionFiles> {
        let local = self.local.len() as u32;
        let mut out: BTreeMap<Version, VersionFiles> =
            self.page.as_ref().map_or_else(BTreeMap::new, |page| {
                // Past `u32` (not from a page the cache reads): no index
                // for the lines.
                page.versions()
                    .iter()
                    .filter_map(|(version, lines)| {
                        let page = lines.start.checked_add(local)?..lines.end.checked_add(local)?;
                        let files = VersionFiles {
                            local: Vec::new(),
                            page,
                        };
                        Some((version.clone(), files))
                    })
                    .collect()
            });
        for (i, file) in self.local.iter().enumerate() {
            if let Some(version) = version_in_filename(project, &file.filename) {
                out.entry(version).or_default().local.push(i as u32);
            }
        }
        out
    }

    /// File `i` (`0..len()`), read whole.
    pub fn file(&self, i: usize) -> Option<IndexFile> {
        match self.local.get(i) {
            Some(file) => Some(file.clone()),
            None => self.page.as_ref()?.file(i - self.local.len()),
        }
    }

    /// Every file, read whole; `Err(i)` when file `i`'s line is damaged
    /// (its run of lines fails its checksum, or a field its check). One
    /// that cannot be read is
    /// never passed over: it could be the file a caller is looking for.
    pub fn files(&self) -> Result<Vec<IndexFile>, usize> {
        (0..self.len()).map(|i| self.file(i).ok_or(i)).collect()
    }
}

/// Equal when they list the same files, however each is kept.
impl PartialEq for ProjectFiles {
    fn eq(&self, other: &Self) -> bool {
        self.asked == other.asked && self.files() == other.files()
    }
}

impl Eq for ProjectFiles {}

/// A sha256 digest as a lock may carry it: 64 hex digits, lower-cased.
/// Anything else (a short value, or text with a newline that would become
/// a live line in a requirements file) is refused by every reader.
pub fn sha256_digest(text: &str) -> Option<String> {
    (text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| text.to_ascii_lowercase())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn file(name: &str, sha: &str) -> IndexFile {
        IndexFile {
            filename: name.to_string(),
            url: format!("https://files.example/{name}"),
            sha256: Some(sha.to_string()),
            requires_python: None,
            yanked: None,
            upload_time: None,
            size: None,
            core_metadata: None,
            listed_by: "https://pypi.example/simple/".to_string(),
        }
    }

    fn names(found: LockedFiles<'_>) -> Vec<String> {
        match found {
            LockedFiles::Wheels(files) => files.iter().map(|f| f.filename.clone()).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_locked_wheels_are_read_for_the_target_when_one_fits() {
        let files = [
            file("a-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", "aa"),
            file("a-1.0-cp312-cp312-macosx_11_0_arm64.whl", "bb"),
            file("a-1.0-py3-none-any.whl", "cc"),
            file("a-1.0.tar.gz", "dd"),
        ];
        let linux = crate::Target::new("3.12", "x86_64-manylinux_2_28").unwrap();
        let mac = crate::Target::new("3.12", "aarch64-apple-darwin").unwrap();
        let hashes = ["sha256:aa".to_string(), "sha256:bb".to_string()];
        assert_eq!(
            names(locked_files(&files, &hashes, Some(&linux))),
            ["a-1.0-cp312-cp312-manylinux_2_28_x86_64.whl"]
        );
        assert_eq!(
            names(locked_files(&files, &hashes, Some(&mac))),
            ["a-1.0-cp312-cp312-macosx_11_0_arm64.whl"]
        );
        // No target, or none fits: every locked wheel.
        assert_eq!(names(locked_files(&files, &hashes, None)).len(), 2);
        let windows = crate::Target::new("3.12", "x86_64-pc-windows-msvc").unwrap();
        assert_eq!(
            names(locked_files(&files, &hashes, Some(&windows))).len(),
            2
        );
        assert_eq!(
            locked_files(&files, &["sha256:dd".to_string()], Some(&linux)),
            LockedFiles::NoWheel
        );
        assert_eq!(
            locked_files(&files, &["sha256:ee".to_string()], None),
            LockedFiles::None
        );
    }
}
