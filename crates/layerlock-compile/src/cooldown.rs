//! The cooldown check of one lock: which of its files it introduces
//! (relative to its bases, and to the same file at a git revision), when
//! the index says each was uploaded, and the policy's verdict on each
//! version, returned as the report the binary prints.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::Serialize;

use layerlock_dist::{PackageSource, Target};
use layerlock_index::IndexClient;
use layerlock_lock::{Lock, LockTarget, LockedPackage};
use layerlock_resolve::{
    CooldownPolicy, Known, LockAges, UploadTimes, Verdict, lock_targets, recorded_times,
    upload_times,
};
use uv_normalize::PackageName;

use crate::plan::IndexPlan;

/// What the cooldown check of a lock is told, its paths resolved.
#[derive(Debug, Clone)]
pub struct CooldownInput {
    /// `--base` files, for every lock; when there are none, the config's
    /// bases of the lock's own layer count.
    pub bases: Vec<PathBuf>,
    /// Each config layer's output (absolute, normalised): its layer's
    /// index, and each target's bases.
    pub layers: BTreeMap<PathBuf, LayerOutput>,
    /// `--since REV`: what the lock already had at that revision counts
    /// as there.
    pub since: Option<String>,
    pub policy: CooldownPolicy,
    /// The flags' index (the config's top level under them), for a lock
    /// no config layer writes.
    pub index: IndexPlan,
    /// Lock paths are relative to it; the config's outputs are keyed
    /// absolute.
    pub cwd: PathBuf,
}

/// What the config says of one lock it writes.
#[derive(Debug, Clone)]
pub struct LayerOutput {
    pub index: IndexPlan,
    /// Each target the lock holds, with its bases.
    pub targets: Vec<(LockTarget, Vec<PathBuf>)>,
}

/// Where the upload times of a lock's files come from: an index's pages,
/// and for files a page gives no time, PyPI's JSON API. The index client
/// is one; a test's in-memory source is another.
pub trait UploadSource {
    /// The index's pages.
    fn pages(&self) -> &dyn PackageSource;

    /// The upload times of `name` `version`'s files by sha256, as the
    /// JSON API tells them (none when it cannot).
    fn json_api(&self, _name: &PackageName, _version: &str) -> BTreeMap<String, Timestamp> {
        BTreeMap::new()
    }
}

impl UploadSource for IndexClient {
    fn pages(&self) -> &dyn PackageSource {
        self
    }

    fn json_api(&self, name: &PackageName, version: &str) -> BTreeMap<String, Timestamp> {
        self.json_api_upload_times(name, version)
    }
}

/// Why a lock could not be judged.
#[derive(Debug, thiserror::Error)]
pub enum CooldownError {
    /// A pin without `--hash`: there is no file to ask the time of.
    #[error(
        "{origin}: {name}=={version} has no --hash; the cooldown reads the upload times of the hashed files (make the lock with `layerlock compile`)"
    )]
    Unhashed {
        origin: String,
        name: String,
        version: String,
    },
    /// The lock at `--since` is no text.
    #[error("{} at {rev} is not UTF-8 text", .path.display())]
    NotText { path: PathBuf, rev: String },
    /// Git would not give the lock at `--since`.
    #[error("{} at {rev}: {why}", .path.display())]
    Refused {
        path: PathBuf,
        rev: String,
        why: String,
    },
    /// Offline, and neither the cache nor the lock has a time.
    #[error(
        "--offline, and the cache holds no page for {name} (asked: {}); run once online, or drop --offline",
        .asked.join(", ")
    )]
    NotCached { name: String, asked: Vec<String> },
    #[error(transparent)]
    Lock(#[from] layerlock_lock::LockError),
    #[error(transparent)]
    Git(#[from] layerlock_git::GitError),
    #[error(transparent)]
    Client(#[from] layerlock_index::ClientError),
    #[error(transparent)]
    UploadTime(#[from] layerlock_resolve::UploadTimeError),
}

/// One introduced version in the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CooldownRow {
    pub name: String,
    pub version: String,
    pub uploaded: Option<String>,
    pub age_days: Option<f64>,
    pub eligible_on: Option<String>,
    #[serde(serialize_with = "verdict_name")]
    pub status: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A verdict by its stable report name.
fn verdict_name<S: serde::Serializer>(verdict: &Verdict, out: S) -> Result<S::Ok, S::Error> {
    out.serialize_str(verdict.as_str())
}

/// The report of one lock (JSON version 1).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CooldownReport {
    pub version: u32,
    pub min_age_seconds: i64,
    pub now: String,
    pub packages: Vec<CooldownRow>,
    pub eligible_on: Option<String>,
}

impl CooldownReport {
    /// The report as a table whose columns fit their longest cell, then a
    /// summary: how many versions pass, fail and why, and when the lock
    /// becomes eligible.
    pub fn text(&self) -> String {
        let minute = |t: &str| {
            std::str::FromStr::from_str(t)
                .map(|t: Timestamp| t.strftime("%Y-%m-%d %H:%M").to_string())
                .unwrap_or_else(|_| t.to_string())
        };
        let rows: Vec<[String; 6]> = self
            .packages
            .iter()
            .map(|r| {
                let note = r
                    .note
                    .as_ref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default();
                [
                    r.name.clone(),
                    r.version.clone(),
                    r.uploaded
                        .as_deref()
                        .map_or("-".to_string(), |u| u.chars().take(10).collect()),
                    r.age_days.map_or("-".to_string(), |a| format!("{a:.1}")),
                    r.eligible_on.as_deref().map_or("-".to_string(), minute),
                    format!("{}{note}", r.status.as_str()),
                ]
            })
            .collect();
        let titles = [
            "package",
            "version",
            "uploaded",
            "age (d)",
            "eligible at (UTC)",
            "status",
        ];
        let mut width: Vec<usize> = titles.iter().map(|t| t.chars().count()).collect();
        for row in &rows {
            for (w, cell) in width.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: [&str; 6]| {
            let mut out = String::new();
            for (i, cell) in cells.iter().enumerate() {
                let pad = width[i].saturating_sub(cell.chars().count());
                match i {
                    // The age is a number: right-aligned.
                    3 => out.push_str(&format!("{}{cell} ", " ".repeat(pad))),
                    5 => out.push_str(cell),
                    _ => out.push_str(&format!("{cell}{} ", " ".repeat(pad))),
                }
            }
            out.push('\n');
            out
        };
        let mut out = line(titles);
        for row in &rows {
            out.push_str(&line(std::array::from_fn(|i| row[i].as_str())));
        }
        out.push_str(&self.summary());
        out.push('\n');
        match &self.eligible_on {
            Some(t) => out.push_str(&format!("eligible from {} UTC\n", minute(t))),
            None if self.packages.is_empty() => out.push_str("nothing introduced\n"),
            None => out.push_str("eligible date unknown\n"),
        }
        out
    }

    /// `12 versions introduced: 10 ok, 1 exempt, 1 too young`.
    fn summary(&self) -> String {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for row in &self.packages {
            *counts.entry(row.status.as_str()).or_default() += 1;
        }
        let n = self.packages.len();
        let parts: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
        format!(
            "{n} version{} introduced{}{}",
            if n == 1 { "" } else { "s" },
            if parts.is_empty() { "" } else { ": " },
            parts.join(", ")
        )
    }
}

/// One lock judged.
#[derive(Debug, Clone, PartialEq)]
pub struct CooldownOutcome {
    pub report: CooldownReport,
    /// Some version failed the policy.
    pub failed: bool,
    /// Some upload times are the ones the lock records (`--offline`,
    /// nothing cached): no index confirmed them.
    pub recorded_times: bool,
}

/// What the bases of each target (and the lock at `--since`) already
/// have, as [`already_there`] finds it.
pub type AlreadyThere = Vec<(Option<Target>, Known)>;

/// The pins of `lock` locked from a source (a git commit or a directory),
/// taken out of it: no release, so the policy, which judges what an index
/// published, leaves them to the lock's pin. Each as `name (url)`.
pub fn take_from_source(lock: &mut Lock) -> Vec<String> {
    let from_source = lock
        .packages
        .iter()
        .filter_map(|p| Some(format!("{} ({})", p.name, p.direct.as_ref()?.url())))
        .collect();
    lock.packages.retain(|p| p.direct.is_none());
    from_source
}

/// Judge `lock` (its pins from source already taken out): the versions it
/// introduces, their upload times from the source `connect` makes for the
/// lock's index, and the policy's verdicts.
pub fn check_cooldown<S: UploadSource>(
    input: &CooldownInput,
    lock: &Lock,
    connect: impl FnOnce(&IndexPlan) -> Result<S, CooldownError>,
) -> Result<CooldownOutcome, CooldownError> {
    if let Some(p) = lock.packages.iter().find(|p| p.hashes.is_empty()) {
        return Err(CooldownError::Unhashed {
            origin: p.origin.to_string(),
            name: p.name.to_string(),
            version: p.version.to_string(),
        });
    }
    let known = already_there(input, lock)?;
    // The lock's own layer's index when the config writes it.
    let index = input
        .layers
        .get(&absolute(input, &lock.path))
        .map_or(&input.index, |l| &l.index);
    let source = connect(index)?;
    let policy = &input.policy;
    let mut ages = LockAges::default();
    let mut trusted_lock = false;
    for package in &lock.packages {
        let new = introduced_files(&known, package);
        if new.is_empty() {
            continue;
        }
        let json_api = || source.json_api(&package.name, &package.version.to_string());
        let times = match upload_times(source.pages(), package, &new, json_api)? {
            UploadTimes::Index(times) => times,
            // Offline with nothing cached: a pylock.toml's own times are
            // all there is, and the report says so.
            UploadTimes::NotCached { asked } => {
                let recorded = recorded_times(package, &new);
                if recorded.iter().any(Option::is_none) {
                    return Err(CooldownError::NotCached {
                        name: package.name.to_string(),
                        asked,
                    });
                }
                trusted_lock = true;
                recorded
            }
        };
        ages.judge(policy, package, new.len(), &times);
    }
    Ok(CooldownOutcome {
        report: report(policy, &ages),
        failed: ages.failed,
        recorded_times: trusted_lock,
    })
}

/// The report of `ages`, judged under `policy`.
fn report(policy: &CooldownPolicy, ages: &LockAges) -> CooldownReport {
    let rows = ages.packages.iter().map(|aged| {
        let judged = &aged.judgement;
        CooldownRow {
            name: aged.name.to_string(),
            version: aged.version.to_string(),
            uploaded: judged.uploaded.map(|t| t.to_string()),
            age_days: judged.age_days,
            eligible_on: judged.eligible.map(|t| t.to_string()),
            status: judged.verdict,
            note: judged.note.clone(),
        }
    });
    CooldownReport {
        version: 1,
        min_age_seconds: policy.min_age.as_secs(),
        now: policy.now.to_string(),
        packages: rows.collect(),
        eligible_on: ages.eligible_on().map(|t| t.to_string()),
    }
}

/// What the bases, and the lock at `--since`, already have: for each
/// target the lock names (with that target's own bases when the config
/// says them), or once when it names none.
pub fn already_there(input: &CooldownInput, lock: &Lock) -> Result<AlreadyThere, CooldownError> {
    let lock_path = &lock.path;
    let layer = input.layers.get(&absolute(input, lock_path));
    let since = match &input.since {
        Some(rev) => since_pins(rev, lock_path)?,
        None => None,
    };
    let targets: Vec<Option<Target>> = match lock_targets(lock) {
        none if none.is_empty() => vec![None],
        some => some.into_iter().map(Some).collect(),
    };
    let mut out = Vec::new();
    for target in targets {
        // The flags' bases for every target; else the config's for this
        // one.
        let bases = if input.bases.is_empty() {
            layer
                .and_then(|l| {
                    l.targets.iter().find(|(t, _)| {
                        target.as_ref().is_none_or(|target| {
                            t.python == target.python_short()
                                && t.platform == target.platform_name()
                        })
                    })
                })
                .map(|(_, bases)| bases.clone())
                .unwrap_or_default()
        } else {
            input.bases.clone()
        };
        let mut known = Known::default();
        for base in &bases {
            let text = layerlock_lock::read_text(base)?;
            known.add(&Lock::parse_pins(base, &text)?, target.as_ref());
        }
        if let Some(pins) = &since {
            known.add(pins, target.as_ref());
        }
        out.push((target, known));
    }
    Ok(out)
}

/// The lock at `--since REV`: `None` when it did not exist then (it
/// introduces everything).
fn since_pins(rev: &str, lock_path: &Path) -> Result<Option<Lock>, CooldownError> {
    let dir = lock_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let git = layerlock_git::Git::open(dir)?;
    match git.file_at(rev, lock_path, layerlock_lock::MAX_FILE_BYTES as usize)? {
        layerlock_git::Blob::Bytes(bytes) => {
            let text = String::from_utf8(bytes).map_err(|_| CooldownError::NotText {
                path: lock_path.to_path_buf(),
                rev: rev.to_string(),
            })?;
            Ok(Some(Lock::parse_pins(lock_path, &text)?))
        }
        layerlock_git::Blob::Missing => Ok(None),
        layerlock_git::Blob::Refused(why) => Err(CooldownError::Refused {
            path: lock_path.to_path_buf(),
            rev: rev.to_string(),
            why,
        }),
    }
}

/// The files of `package` that some target it serves has not had: each
/// target its marker selects judges it against what that target's image
/// (and the lock at `--since`) had; one it selects on no target is new.
pub fn introduced_files(
    known: &[(Option<Target>, Known)],
    package: &LockedPackage,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut judged = false;
    for (target, k) in known {
        let applies = target
            .as_ref()
            .is_none_or(|t| package.marker.evaluate(t.markers(), &[]));
        if applies {
            judged = true;
            out.extend(k.introduced(package));
        }
    }
    if !judged {
        return package.sha256s().collect();
    }
    out
}

/// `path` made absolute from the working directory, as the config's
/// outputs are keyed.
fn absolute(input: &CooldownInput, path: &Path) -> PathBuf {
    layerlock_lock::normalize(&input.cwd.join(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, status: Verdict) -> CooldownRow {
        CooldownRow {
            name: name.to_string(),
            version: "1.0.0".to_string(),
            uploaded: Some("2026-11-27T12:00:00Z".to_string()),
            age_days: Some(2.5),
            eligible_on: Some("2026-12-04T12:00:00Z".to_string()),
            status,
            note: None,
        }
    }

    #[test]
    fn the_table_fits_a_long_name_and_ends_with_a_summary() {
        let long = "nvidia-cuda-nvrtc-cu12-with-a-very-long-name-indeed";
        let report = CooldownReport {
            version: 1,
            min_age_seconds: 604_800,
            now: "2026-11-30T00:00:00Z".to_string(),
            packages: vec![row(long, Verdict::TooYoung), row("six", Verdict::Ok)],
            eligible_on: Some("2026-12-04T12:00:00Z".to_string()),
        };
        let text = report.text();
        let lines: Vec<&str> = text.lines().collect();
        // Every row's version starts where the header's does.
        let at = lines[0].find("version").expect("header");
        assert_eq!(lines[1].find("1.0.0"), Some(at), "{text}");
        assert_eq!(lines[2].find("1.0.0"), Some(at), "{text}");
        assert_eq!(lines[3], "2 versions introduced: 1 ok, 1 too young");
        assert_eq!(lines[4], "eligible from 2026-12-04 12:00 UTC");
    }
}
