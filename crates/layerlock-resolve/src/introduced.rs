//! What a lock introduces, and how old it is: `layerlock cooldown` judges
//! only the versions (and files) its bases, or the same lock at an earlier
//! revision, do not already have, from the upload times of exactly the
//! files the lock hashes.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use uv_normalize::PackageName;
use uv_pep440::Version;

use layerlock_dist::{PackageSource, ProjectAnswer, SourceError, Target};
use layerlock_lock::{Lock, LockedPackage};

use crate::{CooldownPolicy, Judgement, Verdict};

/// What the bases, or the lock at a revision, already have: for each
/// version, the sha256s known (`None`: a pin without hashes, the whole
/// version).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Known(BTreeMap<(PackageName, Version), Option<BTreeSet<String>>>);

impl Known {
    /// Count the pins of `there` as already present. Only exact pins
    /// count: a base line `foo>=2` says nothing about which version is
    /// there, and a pin whose marker cannot be shown to hold on `target`
    /// does not count either (fail closed: its package is judged).
    pub fn add(&mut self, there: &Lock, target: Option<&Target>) {
        for p in &there.packages {
            let applies =
                p.marker.is_true() || target.is_some_and(|t| p.marker.evaluate(t.markers(), &[]));
            if !applies {
                continue;
            }
            let hashes: BTreeSet<String> = p.sha256s().collect();
            let slot = self
                .0
                .entry((p.name.clone(), p.version.clone()))
                .or_insert_with(|| Some(BTreeSet::new()));
            match (slot.as_mut(), hashes.is_empty()) {
                (_, true) => *slot = None,
                (Some(known), false) => known.extend(hashes),
                (None, false) => {}
            }
        }
    }

    /// The sha256s of `package` the lock introduces: all of them, or only
    /// the files added to a version that was already there.
    pub fn introduced(&self, package: &LockedPackage) -> BTreeSet<String> {
        let all: BTreeSet<String> = package.sha256s().collect();
        match self.0.get(&(package.name.clone(), package.version.clone())) {
            None => all,
            Some(None) => BTreeSet::new(),
            Some(Some(there)) => all.difference(there).cloned().collect(),
        }
    }
}

/// The targets a lock's header names, those that read.
pub fn lock_targets(lock: &Lock) -> Vec<Target> {
    lock.header
        .targets
        .iter()
        .filter_map(|t| Target::new(&t.python, &t.platform).ok())
        .collect()
}

/// Upload times of exactly the files asked for, from the index.
#[derive(Debug, Clone, PartialEq)]
pub enum UploadTimes {
    /// One per file asked for, in the order of the set asked with.
    Index(Vec<Option<Timestamp>>),
    /// Offline, and the cache has no page for the project.
    NotCached { asked: Vec<String> },
}

#[derive(Debug, thiserror::Error)]
pub enum UploadTimeError {
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("the cached page of {0} cannot be read; the cache is damaged: delete it and run again")]
    Damaged(PackageName),
}

/// When `name` `version` was uploaded, by the index: its earliest file's
/// time. `None` when the index gives no time, lacks the version, or is
/// not at hand (offline and uncached).
pub fn uploaded_at(
    source: &dyn PackageSource,
    name: &PackageName,
    version: &Version,
) -> Option<Timestamp> {
    let answer = source.project(name).ok()?;
    let ProjectAnswer::Found(project) = answer.as_ref() else {
        return None;
    };
    project
        .files()
        .ok()?
        .into_iter()
        .filter(|f| {
            layerlock_dist::version_in_filename(name, &f.filename).as_ref() == Some(version)
        })
        .filter_map(|f| f.upload_time)
        .min()
}

/// The index is the authority on when a file was uploaded: a time a lock
/// records is only a cache of it (a pull request could edit it). The
/// simple API (`source`) is asked first, then `json_api` (sha256 to upload
/// time, for the package's version) for what it lacks.
pub fn upload_times(
    source: &dyn PackageSource,
    package: &LockedPackage,
    wanted: &BTreeSet<String>,
    json_api: impl FnOnce() -> BTreeMap<String, Timestamp>,
) -> Result<UploadTimes, UploadTimeError> {
    let mut times: BTreeMap<String, Option<Timestamp>> =
        wanted.iter().map(|h| (h.clone(), None)).collect();
    match source.project(&package.name)?.as_ref() {
        ProjectAnswer::Found(project) => {
            // A file that cannot be read could be a locked one: its time
            // would then count as missing, which --allow-missing-time passes.
            let files = project
                .files()
                .map_err(|_| UploadTimeError::Damaged(package.name.clone()))?;
            for file in files {
                if let Some(sha) = &file.sha256
                    && let Some(slot) = times.get_mut(sha)
                {
                    *slot = file.upload_time.or(*slot);
                }
            }
        }
        ProjectAnswer::NotCached { asked } => {
            return Ok(UploadTimes::NotCached {
                asked: asked.clone(),
            });
        }
        ProjectAnswer::NotFound { .. } => {}
    }
    if times.values().any(Option::is_none) {
        let fallback = json_api();
        for (sha, slot) in &mut times {
            if slot.is_none() {
                *slot = fallback.get(sha).copied();
            }
        }
    }
    Ok(UploadTimes::Index(times.into_values().collect()))
}

/// The upload times a pylock.toml records for the files `wanted` names
/// (`None` for each it does not).
pub fn recorded_times(
    package: &LockedPackage,
    wanted: &BTreeSet<String>,
) -> Vec<Option<Timestamp>> {
    wanted
        .iter()
        .map(|sha| {
            package
                .files
                .iter()
                .find(|f| f.sha256.as_ref() == Some(sha))
                .and_then(|f| f.upload_time)
        })
        .collect()
}

/// One introduced version, judged.
#[derive(Debug, Clone, PartialEq)]
pub struct Aged {
    pub name: PackageName,
    pub version: Version,
    pub judgement: Judgement,
}

/// The judgements of one lock, and the moment all of it is eligible.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct LockAges {
    pub packages: Vec<Aged>,
    pub failed: bool,
    latest: Option<Timestamp>,
    /// A failing version has no eligible date (its time is unknown).
    undated: bool,
}

impl LockAges {
    /// Judge `package`, of which the files `introduced` (of all its
    /// hashed files) were uploaded at `times`.
    pub fn judge(
        &mut self,
        policy: &CooldownPolicy,
        package: &LockedPackage,
        introduced: usize,
        times: &[Option<Timestamp>],
    ) {
        let mut judged = policy.judge(&package.name, &package.version, times);
        self.failed |= judged.verdict.fails();
        match judged.eligible {
            Some(e) if judged.verdict != Verdict::Exempt => {
                self.latest = Some(self.latest.map_or(e, |l| l.max(e)));
            }
            None if judged.verdict.fails() => self.undated = true,
            _ => {}
        }
        if introduced < package.hashes.len() {
            let added = "files added to a version that was already there";
            judged.note = Some(
                judged
                    .note
                    .map_or(added.to_string(), |n| format!("{added}; {n}")),
            );
        }
        self.packages.push(Aged {
            name: package.name.clone(),
            version: package.version.clone(),
            judgement: judged,
        });
    }

    /// When every introduced version is old enough: `None` when one can
    /// never be (its upload time is unknown), or nothing has a date.
    pub fn eligible_on(&self) -> Option<Timestamp> {
        if self.undated { None } else { self.latest }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use jiff::SignedDuration;

    use super::*;

    const A: &str = "aa";
    const B: &str = "bb";

    fn lock(text: &str) -> Lock {
        Lock::parse_pins(Path::new("lock.txt"), text).unwrap()
    }

    fn package<'a>(lock: &'a Lock, name: &str) -> &'a LockedPackage {
        lock.packages
            .iter()
            .find(|p| p.name.as_ref() == name)
            .unwrap()
    }

    fn hashed(name: &str, version: &str, hashes: &[&str]) -> String {
        let hashes: String = hashes
            .iter()
            .map(|h| format!(" --hash=sha256:{}", h.repeat(32)))
            .collect();
        format!("{name}=={version}{hashes}\n")
    }

    #[test]
    fn only_what_the_bases_lack_is_introduced() {
        let mut known = Known::default();
        known.add(&lock(&hashed("app", "1.0", &[A])), None);
        // Not a lock: its exact pins are read, without hashes.
        known.add(&lock("plain==2.0\nloose>=1\n"), None);
        let layer = lock(
            &(hashed("app", "1.0", &[A, B])
                + &hashed("plain", "2.0", &[A])
                + &hashed("loose", "1.0", &[A])
                + &hashed("app2", "1.0", &[A])),
        );
        let got: Vec<usize> = layer
            .packages
            .iter()
            .map(|p| known.introduced(p).len())
            .collect();
        // app: the one file added; plain: pinned without hashes, the whole
        // version is there; loose: a range says nothing; app2: new.
        let by_name: BTreeMap<String, usize> = layer
            .packages
            .iter()
            .map(|p| p.name.to_string())
            .zip(got)
            .collect();
        assert_eq!(by_name["app"], 1);
        assert_eq!(by_name["plain"], 0);
        assert_eq!(by_name["loose"], 1);
        assert_eq!(by_name["app2"], 1);
    }

    #[test]
    fn a_base_pin_under_a_marker_counts_only_where_it_holds() {
        let text = format!(
            "app==1.0 ; sys_platform == 'win32' --hash=sha256:{}\n",
            A.repeat(32)
        );
        let layer = lock(&hashed("app", "1.0", &[A]));
        let app = package(&layer, "app");
        let linux = Target::new("3.11", "x86_64-manylinux_2_28").unwrap();
        let mut on_linux = Known::default();
        on_linux.add(&lock(&text), Some(&linux));
        assert_eq!(on_linux.introduced(app).len(), 1);
        // No target known: the marker cannot be shown to hold.
        let mut unknown = Known::default();
        unknown.add(&lock(&text), None);
        assert_eq!(unknown.introduced(app).len(), 1);
    }

    #[test]
    fn the_eligible_date_is_the_latest_and_unknown_if_any_cannot_be() {
        let now: Timestamp = "2026-11-10T00:00:00Z".parse().unwrap();
        let policy = CooldownPolicy {
            min_age: SignedDuration::from_hours(7 * 24),
            now,
            exemptions: Vec::new(),
            allow_missing_time: false,
        };
        let layer = lock(&(hashed("old", "1.0", &[A]) + &hashed("new", "1.0", &[A, B])));
        let day = |d: i64| Some(now - SignedDuration::from_hours(24 * d));
        let (old, new) = (package(&layer, "old"), package(&layer, "new"));
        let mut ages = LockAges::default();
        ages.judge(&policy, old, 1, &[day(30)]);
        ages.judge(&policy, new, 1, &[day(2)]);
        assert!(ages.failed);
        assert_eq!(
            ages.eligible_on(),
            day(2).map(|t| t + SignedDuration::from_hours(7 * 24))
        );
        let note = ages.packages[1].judgement.note.as_deref().unwrap_or("");
        assert!(note.starts_with("files added to a version"), "{note}");
        ages.judge(&policy, old, 1, &[None]);
        assert_eq!(ages.eligible_on(), None);
    }
}
