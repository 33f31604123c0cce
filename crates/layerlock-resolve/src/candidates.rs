//! Which versions of a project are usable on the target, and why the others
//! are not: wheels only, tag-compatible, requires-python, yanked, upload time.

use std::collections::BTreeMap;

use jiff::Timestamp;
use uv_distribution_filename::WheelFilename;
use uv_normalize::PackageName;
use uv_pep440::Version;
use uv_platform_tags::TagCompatibility;

use layerlock_dist::{DistKind, IndexFile, ProjectFiles, Target};

/// Why a version cannot be used, in words a user reads in an explanation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exclusion {
    /// Every file was uploaded after `--exclude-newer`.
    TooNew,
    /// Only source distributions; layerlock never builds.
    SdistOnly,
    /// Wheels exist, none for the target's tags.
    NoCompatibleWheel,
    /// Every compatible wheel requires another Python.
    RequiresPython(String),
    /// Every compatible wheel is yanked (usable only when pinned with `==`).
    Yanked(String),
    /// Uploaded less than the cooldown's minimum age ago.
    TooYoung { eligible: Timestamp },
    /// The index publishes no upload time, so the cooldown cannot clear it.
    NoUploadTime,
}

impl std::fmt::Display for Exclusion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooNew => write!(f, "uploaded after --exclude-newer"),
            Self::SdistOnly => write!(f, "only a source distribution (layerlock never builds)"),
            Self::NoCompatibleWheel => write!(f, "no wheel for the target platform"),
            Self::RequiresPython(spec) => write!(f, "requires Python {spec}"),
            Self::Yanked(reason) if reason.is_empty() => write!(f, "yanked"),
            Self::Yanked(reason) => write!(f, "yanked ({reason})"),
            Self::TooYoung { eligible } => write!(
                f,
                "too young for the cooldown (eligible at {})",
                eligible.strftime("%Y-%m-%d %H:%M UTC")
            ),
            Self::NoUploadTime => write!(
                f,
                "no upload time on the index, so --exclude-newer or the cooldown cannot clear it (pass --allow-missing-time to use such files)"
            ),
        }
    }
}

/// One version of a project with its files.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// Files that count for the lock: not yanked (unless the whole version
    /// is), not newer than `--exclude-newer`.
    pub files: Vec<IndexFile>,
    /// The wheel installers would pick on the target, if any.
    pub best_wheel: Option<IndexFile>,
    /// Set when the version cannot be chosen (yanked ones still can, if pinned).
    pub exclusion: Option<Exclusion>,
}

/// Every version of one project, newest last.
#[derive(Debug, Clone, Default)]
pub struct Candidates {
    pub versions: BTreeMap<Version, Candidate>,
}

/// The release-age policy for one package: files uploaded after `cutoff`
/// (now minus the minimum age) do not count yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CooldownFilter {
    pub cutoff: Timestamp,
    pub min_age: jiff::SignedDuration,
    pub allow_missing_time: bool,
}

/// What narrows the files of a project before versions are judged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filters {
    pub exclude_newer: Option<Timestamp>,
    pub cooldown: Option<CooldownFilter>,
    /// Versions an exemption lifts the cooldown from (an exemption for one
    /// version stops applying once the lock moves on).
    pub cooldown_exempt: Vec<Version>,
    /// A file without an upload time passes `exclude_newer` only when set
    /// (it fails closed otherwise, as uv does).
    pub allow_missing_time: bool,
}

/// Sort `project`'s files into versions and judge each one for `target`.
pub fn candidates(
    name: &PackageName,
    project: &ProjectFiles,
    target: &Target,
    filters: Filters,
) -> Candidates {
    let mut by_version: BTreeMap<Version, Vec<(IndexFile, Option<WheelFilename>)>> =
        BTreeMap::new();
    for file in &project.files {
        let (version, wheel) = match file.kind(name) {
            DistKind::Wheel(wheel) => (wheel.version.clone(), Some(wheel)),
            DistKind::Sdist(version) => (version, None),
            DistKind::Other => continue,
        };
        by_version
            .entry(version)
            .or_default()
            .push((file.clone(), wheel));
    }
    let mut out = Candidates::default();
    for (version, files) in by_version {
        let cooldown = filters
            .cooldown
            .filter(|_| !filters.cooldown_exempt.contains(&version));
        out.versions
            .insert(version, judge(files, target, &filters, cooldown));
    }
    out
}

fn judge(
    files: Vec<(IndexFile, Option<WheelFilename>)>,
    target: &Target,
    filters: &Filters,
    cooldown: Option<CooldownFilter>,
) -> Candidate {
    let excluded = |exclusion| Candidate {
        files: Vec::new(),
        best_wheel: None,
        exclusion: Some(exclusion),
    };
    // PEP 700: a file uploaded after the cutoff does not exist for us, and
    // neither does one whose upload time is unknown (an HTML index).
    let mut untimed = false;
    let files: Vec<_> = files
        .into_iter()
        .filter(|(f, _)| match (filters.exclude_newer, f.upload_time) {
            (Some(cutoff), Some(uploaded)) => uploaded <= cutoff,
            (Some(_), None) if !filters.allow_missing_time => {
                untimed = true;
                false
            }
            _ => true,
        })
        .collect();
    if files.is_empty() {
        return excluded(if untimed {
            Exclusion::NoUploadTime
        } else {
            Exclusion::TooNew
        });
    }
    // The cooldown: files count once they are old enough; a file without an
    // upload time fails closed unless allowed.
    let mut eligible: Option<Timestamp> = None;
    let mut missing_time = false;
    let files: Vec<_> = match cooldown {
        None => files,
        Some(c) => files
            .into_iter()
            .filter(|(f, _)| match f.upload_time {
                Some(t) if t > c.cutoff => {
                    let when = t.checked_add(c.min_age).unwrap_or(t);
                    eligible = Some(eligible.map_or(when, |e| e.min(when)));
                    false
                }
                Some(_) => true,
                None if c.allow_missing_time => true,
                None => {
                    missing_time = true;
                    false
                }
            })
            .collect(),
    };
    if files.is_empty() {
        return excluded(match eligible {
            Some(eligible) => Exclusion::TooYoung { eligible },
            None if missing_time => Exclusion::NoUploadTime,
            None => Exclusion::TooNew,
        });
    }
    let all_yanked = files.iter().all(|(f, _)| f.yanked.is_some());
    // PEP 592: a yanked file is ignored unless the version is pinned exactly,
    // and then only if every file is yanked.
    let live: Vec<_> = files
        .iter()
        .filter(|(f, _)| all_yanked || f.yanked.is_none())
        .cloned()
        .collect();
    let mut best: Option<(uv_platform_tags::TagPriority, IndexFile)> = None;
    let mut any_wheel = false;
    let mut any_compatible = false;
    let mut requires_python = None;
    for (file, wheel) in &live {
        let Some(wheel) = wheel else { continue };
        any_wheel = true;
        let TagCompatibility::Compatible(priority) = wheel.compatibility(target.tags()) else {
            continue;
        };
        any_compatible = true;
        if let Some(spec) = &file.requires_python
            && !spec.contains(target.python())
        {
            requires_python = Some(spec.to_string());
            continue;
        }
        // Highest tag priority wins; ties go to the smaller name so the
        // choice does not depend on listing order.
        let better = match &best {
            None => true,
            Some((p, f)) => priority > *p || (priority == *p && file.filename < f.filename),
        };
        if better {
            best = Some((priority, file.clone()));
        }
    }
    let best_wheel = best.map(|(_, f)| f);
    let exclusion = if best_wheel.is_some() {
        all_yanked.then(|| {
            Exclusion::Yanked(
                live.first()
                    .and_then(|(f, _)| f.yanked.clone())
                    .unwrap_or_default(),
            )
        })
    } else if !any_wheel {
        Some(Exclusion::SdistOnly)
    } else if !any_compatible {
        Some(Exclusion::NoCompatibleWheel)
    } else {
        Some(Exclusion::RequiresPython(
            requires_python.unwrap_or_default(),
        ))
    };
    Candidate {
        files: live.into_iter().map(|(f, _)| f).collect(),
        best_wheel,
        exclusion,
    }
}

/// The wheel whose metadata is worth fetching before the resolver asks: the
/// newest usable, non-pre-release version's best wheel.
pub fn speculative_wheel(
    name: &PackageName,
    project: &ProjectFiles,
    target: &Target,
    filters: Filters,
) -> Option<IndexFile> {
    let candidates = candidates(name, project, target, filters);
    candidates
        .versions
        .iter()
        .rev()
        .filter(|(v, _)| !v.any_prerelease())
        .find(|(_, c)| c.exclusion.is_none())
        .and_then(|(_, c)| c.best_wheel.clone())
}
