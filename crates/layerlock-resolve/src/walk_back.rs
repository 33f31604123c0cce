//! Chosen versions older than releases the resolver skipped only because
//! their dependencies are dynamic (an sdist only a build could read), as
//! data: `layerlock-compile` decides whether such a walk-back is told or
//! refused.

use std::collections::BTreeMap;

use jiff::Timestamp;
use uv_normalize::PackageName;
use uv_pep440::Version;

use layerlock_dist::IndexFile;

use crate::candidates::Candidates;

/// One package the resolution took at an older version than releases it
/// could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkedBack {
    pub name: PackageName,
    pub chosen: Version,
    /// When the chosen version was first uploaded, if the index says.
    pub chosen_uploaded: Option<Timestamp>,
    /// The releases skipped, newest first: each newer than `chosen`, in
    /// the range asked for and usable on the target but for its dynamic
    /// dependencies.
    pub skipped: Vec<Skipped>,
    /// Older sdist-only releases, still newer than `chosen`, that were not
    /// downloaded once enough releases had needed a build.
    pub not_read: usize,
}

/// A release passed over because only a build could say what it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub version: Version,
    pub uploaded: Option<Timestamp>,
    /// Why its dependencies cannot be read (the sdist reader's words).
    pub why: String,
}

impl WalkedBack {
    /// The newest release skipped.
    pub fn newest(&self) -> Option<&Skipped> {
        self.skipped.first()
    }
}

/// When a version was released: its earliest file's upload time.
pub fn released(files: &[IndexFile]) -> Option<Timestamp> {
    files.iter().filter_map(|f| f.upload_time).min()
}

/// The releases found dynamic, newest first, each with when it was
/// uploaded and why.
fn skipped<'a>(
    dynamic: impl DoubleEndedIterator<Item = (&'a Version, &'a String)>,
    candidates: Option<&Candidates>,
) -> Vec<Skipped> {
    dynamic
        .rev()
        .map(|(version, why)| Skipped {
            version: version.clone(),
            uploaded: candidates
                .and_then(|c| c.get(version))
                .and_then(|c| released(&c.files)),
            why: why.clone(),
        })
        .collect()
}

/// `name` at `chosen`, against the versions tried and found dynamic
/// (`dynamic`): `None` unless some newer one was skipped.
pub(crate) fn walked_back(
    name: &PackageName,
    chosen: &Version,
    chosen_files: &[IndexFile],
    dynamic: &BTreeMap<Version, String>,
    not_read: Option<&std::collections::BTreeSet<Version>>,
    candidates: Option<&Candidates>,
) -> Option<WalkedBack> {
    let newer = dynamic.range((
        std::ops::Bound::Excluded(chosen),
        std::ops::Bound::Unbounded,
    ));
    let skipped = skipped(newer, candidates);
    (!skipped.is_empty()).then(|| WalkedBack {
        name: name.clone(),
        chosen: chosen.clone(),
        chosen_uploaded: released(chosen_files),
        skipped,
        not_read: not_read.map_or(0, |v| v.iter().filter(|v| *v > chosen).count()),
    })
}

/// A package whose older sdists were not downloaded: the releases found
/// to need a build (newest first) and how many older ones were left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unread {
    pub name: PackageName,
    pub skipped: Vec<Skipped>,
    pub not_read: usize,
}

/// Every package the resolution stopped reading, for a failure's words.
pub(crate) fn unread(state: &crate::provider::State) -> Vec<Unread> {
    state
        .not_read
        .iter()
        .map(|(name, versions)| {
            let dynamic = state.dynamic_versions.get(name).into_iter().flatten();
            let skipped = skipped(dynamic, state.candidates.get(name).map(|c| &**c));
            Unread {
                name: name.clone(),
                skipped,
                not_read: versions.len(),
            }
        })
        .collect()
}
