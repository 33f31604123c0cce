//! What the files of pinned wheels are, read before anything is written:
//! each wheel's file list comes from its zip directory (a few KiB by range,
//! from the index given), and [`find_overwrites`] compares them with the
//! RECORDs of the distributions an environment keeps.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use layerlock_dist::{LockedFiles, PackageSource, ProjectAnswer, Target};
use layerlock_env::{HashedPin, Overwrite, Records, Snapshot, WheelFiles, overwrites};
use layerlock_index::{ClientError, ClientSettings, IndexClient, SecretUrl};

/// An index that can list a wheel's files: its pages, and a wheel's zip
/// directory ([`PackageSource::wheel_listing`]). The index client reads
/// them by range; a test hands out its own.
pub trait WheelIndex: PackageSource {}

impl<S: PackageSource + ?Sized> WheelIndex for S {}

/// Where wheels are looked up: the index an install uses.
#[derive(Debug, Clone)]
pub struct WheelLookup {
    pub index_urls: Vec<SecretUrl>,
    pub find_links: Vec<PathBuf>,
    pub netrc: Option<PathBuf>,
}

impl WheelLookup {
    /// The client that lists wheels' files: online (a file list is never
    /// guessed), over `cache_dir` (one that can serve, or none).
    pub fn client(&self, cache_dir: Option<PathBuf>) -> Result<IndexClient, ClientError> {
        let settings = ClientSettings {
            cache_dir,
            offline: false,
            netrc: self.netrc.clone(),
            timeout: Duration::from_secs(30),
            concurrency: 16,
            read_whole_sdists: Vec::new(),
        };
        settings.client(self.index_urls.clone(), self.find_links.clone())
    }
}

/// Why the files of the pins could not be listed (install then fails
/// closed: nothing is written).
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    #[error("`{0}` is not a package name")]
    NotAName(String),
    #[error(
        "cannot list the files of {name}=={version}: {why}; install checks what a package would write over before it writes anything (pass the index the wheels are on with --index-url or --find-links)"
    )]
    Cannot {
        name: String,
        version: String,
        why: String,
    },
    #[error(transparent)]
    Client(#[from] ClientError),
}

/// The files of one pinned wheel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinFiles {
    /// The names in its locked wheels' zip directories, sorted, each once,
    /// with each one's CRC-32 and size (scripts its entry points make as
    /// `NAME.data/scripts/SCRIPT`, whose content is what they run).
    Listed {
        members: Vec<String>,
        sums: Vec<(u32, u64)>,
    },
    /// No wheel among its hashes (an sdist): what it installs is only
    /// known once built.
    NoWheel,
}

/// The files of `pin`'s locked wheels on `index` (those for `target` when
/// it is given and any fits). Fails closed: a file of the pinned version
/// without a sha256, or no file with a locked hash, is an error.
pub fn wheel_files(
    index: &dyn WheelIndex,
    pin: &HashedPin<'_>,
    target: Option<&Target>,
) -> Result<PinFiles, FilesError> {
    let name = layerlock_index::package_name(pin.name)
        .ok_or_else(|| FilesError::NotAName(pin.name.to_string()))?;
    let cannot = |why: String| FilesError::Cannot {
        name: pin.name.to_string(),
        version: pin.version.to_string(),
        why,
    };
    let answer = index.project(&name).map_err(|e| cannot(e.to_string()))?;
    let files = match answer.as_ref() {
        ProjectAnswer::Found(project) => project
            .files()
            .map_err(|_| cannot("its index page cannot be read".to_string()))?,
        ProjectAnswer::NotFound { asked } | ProjectAnswer::NotCached { asked } => {
            return Err(cannot(format!("no index knows it ({})", asked.join(", "))));
        }
    };
    // A file of the pinned version the index lists without a sha256
    // cannot be told from the locked ones: which run may build the pin
    // would rest on a guess.
    if let Some(unhashed) = files.iter().find(|f| {
        f.sha256.is_none()
            && layerlock_dist::version_in_filename(&name, &f.filename).as_ref() == Some(pin.version)
    }) {
        return Err(cannot(format!(
            "the index lists {} without a sha256",
            unhashed.filename
        )));
    }
    let chosen = match layerlock_dist::locked_files(&files, pin.hashes, target) {
        LockedFiles::None => {
            return Err(cannot(
                "no file on the index has a hash the lock gives (the lock is stale, or the index serves other files)".to_string(),
            ));
        }
        LockedFiles::NoWheel => return Ok(PinFiles::NoWheel),
        LockedFiles::Wheels(wheels) => wheels,
    };
    let mut listed: Vec<(String, (u32, u64))> = Vec::new();
    for file in chosen {
        let listing = index
            .wheel_listing(&name, file)
            .map_err(|e| cannot(format!("{}: {e}", file.filename)))?;
        listed.extend(
            listing
                .files
                .iter()
                .map(|f| (f.path.clone(), (f.crc32, f.size))),
        );
        listed.extend(listing.scripts.iter().map(|(script, runs)| {
            let path = format!("{}.data/scripts/{script}", name.as_dist_info_name());
            (path, (crc32fast::hash(runs.as_bytes()), u64::MAX))
        }));
    }
    listed.sort();
    listed.dedup_by(|a, b| a.0 == b.0);
    let (members, sums) = listed.into_iter().unzip();
    Ok(PinFiles::Listed { members, sums })
}

/// A pin's name, version, members and their sums.
type PinListing = (String, String, Vec<String>, Vec<(u32, u64)>);

/// The installed distributions `pins` would write over, except those in
/// `spared`, with the wheels listed from the index `connect` makes (only
/// when there is a pin to list). Fails closed: a wheel whose files cannot
/// be listed is an error, not a pass. A pin with no wheel among its hashes
/// (an sdist) is returned apart, as `name==version`: what it installs is
/// only known after, and the drift guard checks it then.
pub fn find_overwrites<I: WheelIndex>(
    pins: &[HashedPin<'_>],
    target: Option<&(String, String)>,
    before: &Snapshot,
    spared: &BTreeSet<String>,
    connect: impl FnOnce() -> Result<I, FilesError>,
) -> Result<(Vec<Overwrite>, Vec<String>), FilesError> {
    if pins.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let index = connect()?;
    let tags = target.and_then(|(py, platform)| Target::new(py, platform).ok());
    let mut listed: Vec<PinListing> = Vec::new();
    let mut unlisted = Vec::new();
    for pin in pins {
        match wheel_files(&index, pin, tags.as_ref())? {
            PinFiles::Listed { members, sums } => {
                listed.push((pin.name.to_string(), pin.version.to_string(), members, sums));
            }
            PinFiles::NoWheel => unlisted.push(format!("{}=={}", pin.name, pin.version)),
        }
    }
    let wheels: Vec<WheelFiles<'_>> = listed
        .iter()
        .map(|(name, version, members, sums)| WheelFiles {
            name,
            version,
            members,
            sums,
        })
        .collect();
    let found = overwrites(before, &Records::default(), &wheels, &|name| {
        spared.contains(name)
    });
    Ok((found, unlisted))
}
