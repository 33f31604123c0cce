//! What the plan's wheels would write over, found before anything is
//! written: each wheel's file list is read from its zip directory (a few
//! KiB by range, from the index the install uses) and compared with the
//! RECORDs of the distributions the environment keeps.

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::{Result, anyhow};

use layerlock_dist::{LockedFiles, PackageSource, ProjectAnswer};
use layerlock_env::{HashedPin, Overwrite, Records, Snapshot, WheelFiles, overwrites};
use layerlock_index::SecretUrl;

/// Where the wheels are looked up, and for which target.
pub struct Lookup<'a> {
    pub index_urls: Vec<SecretUrl>,
    pub find_links: Vec<PathBuf>,
    pub cache_dir: Option<PathBuf>,
    pub netrc: Option<PathBuf>,
    /// The lock's target: only its wheels are read when it is known.
    pub target: Option<&'a (String, String)>,
}

/// The installed distributions `pins` would write over, except those in
/// `spared`. Fails closed: a wheel whose files cannot be listed is an
/// error, not a pass. A pin with no wheel among its hashes (an sdist) is
/// returned apart: what it installs is only known after, and the drift
/// guard checks it then.
pub fn find(
    lookup: &Lookup<'_>,
    pins: &[HashedPin<'_>],
    before: &Snapshot,
    spared: &BTreeSet<String>,
) -> Result<(Vec<Overwrite>, Vec<String>)> {
    if pins.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let settings = layerlock_index::ClientSettings {
        cache_dir: super::usable_cache(lookup.cache_dir.as_deref()),
        offline: false,
        netrc: lookup.netrc.clone(),
        timeout: std::time::Duration::from_secs(30),
        concurrency: 16,
    };
    let client = settings.client(lookup.index_urls.clone(), lookup.find_links.clone())?;
    let tags = lookup
        .target
        .and_then(|(py, platform)| layerlock_dist::Target::new(py, platform).ok());
    let mut listed: Vec<(String, String, Vec<String>)> = Vec::new();
    let mut unlisted = Vec::new();
    for pin in pins {
        let name = layerlock_index::package_name(pin.name)
            .ok_or_else(|| anyhow!("`{}` is not a package name", pin.name))?;
        let cannot = |why: String| {
            anyhow!(
                "cannot list the files of {}=={}: {why}; install checks what a package would write over before it writes anything (pass the index the wheels are on with --index-url or --find-links)",
                pin.name,
                pin.version
            )
        };
        let answer = client.project(&name).map_err(|e| cannot(e.to_string()))?;
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
                && layerlock_dist::version_in_filename(&name, &f.filename).as_ref()
                    == Some(pin.version)
        }) {
            return Err(cannot(format!(
                "the index lists {} without a sha256",
                unhashed.filename
            )));
        }
        let chosen = match layerlock_dist::locked_files(&files, pin.hashes, tags.as_ref()) {
            LockedFiles::None => {
                return Err(cannot(
                    "no file on the index has a hash the lock gives (the lock is stale, or the index serves other files)".to_string(),
                ));
            }
            LockedFiles::NoWheel => {
                unlisted.push(format!("{}=={}", pin.name, pin.version));
                continue;
            }
            LockedFiles::Wheels(wheels) => wheels,
        };
        let mut members = Vec::new();
        for file in chosen {
            let names = client
                .wheel_members(file)
                .map_err(|e| cannot(format!("{}: {e}", file.filename)))?;
            members.extend(names);
        }
        members.sort();
        members.dedup();
        listed.push((pin.name.to_string(), pin.version.to_string(), members));
    }
    let wheels: Vec<WheelFiles<'_>> = listed
        .iter()
        .map(|(name, version, members)| WheelFiles {
            name,
            version,
            members,
        })
        .collect();
    let found = overwrites(before, &Records::default(), &wheels, &|name| {
        spared.contains(name)
    });
    Ok((found, unlisted))
}
