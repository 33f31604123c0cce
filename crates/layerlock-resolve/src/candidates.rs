//! Which versions of a project are usable on the target, and why the others
//! are not: wheels only, tag-compatible, requires-python, yanked, upload time.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use jiff::Timestamp;
use uv_distribution_filename::WheelFilename;
use uv_normalize::PackageName;
use uv_pep440::Version;
use uv_platform_tags::TagCompatibility;

use layerlock_dist::{DistKind, IndexFile, ProjectFiles, Target, VersionFiles};

/// Why a version cannot be used, in words a user reads in an explanation.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exclusion {
    /// Every file was uploaded after `--exclude-newer`.
    TooNew,
    /// Only source distributions (or none for the target), and
    /// `--only-binary` refuses them for this package.
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
    /// A file's line in the cached page cannot be read: the cache is
    /// damaged. Never passed over: the resolver stops on it.
    Damaged,
}

impl std::fmt::Display for Exclusion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::TooNew => write!(f, "uploaded after --exclude-newer"),
            Self::SdistOnly => write!(
                f,
                "no wheel for the target, and --only-binary refuses its source distribution"
            ),
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
            Self::Damaged => write!(f, "its entry in the cached page cannot be read"),
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
    /// Without such a wheel: the source distribution, whose metadata is
    /// read from its archive (never built) and which the installer builds.
    pub sdist: Option<IndexFile>,
    /// Set when the version cannot be chosen (yanked ones still can, if pinned).
    pub exclusion: Option<Exclusion>,
}

/// Every version of one project, newest last. A version is judged the
/// first time it is looked at: a resolution looks at a few versions of each
/// project, and popular projects list thousands of files.
///
/// Files are sorted into versions by name alone
/// ([`layerlock_dist::version_in_filename`]), which passes names that
/// [`IndexFile::kind`] refuses (a wheel's build tag or tags, its project
/// name). A version none of whose files is a wheel or source distribution
/// is no version at all: it is left out wherever versions are listed or
/// looked up, as if its files had never been sorted into it.
#[derive(Debug, Clone, Default)]
pub struct Candidates {
    versions: BTreeMap<Version, Slot>,
    judge: Option<Judge>,
}

/// One version's files (indexes into the project's) and, once judged, the
/// verdict: `None` when no file of it is a distribution.
#[derive(Debug, Clone, Default)]
struct Slot {
    files: VersionFiles,
    judged: OnceLock<Option<Candidate>>,
}

/// What judging a version needs.
#[derive(Debug, Clone)]
struct Judge {
    name: PackageName,
    project: ProjectFiles,
    target: Target,
    filters: Filters,
}

impl Candidates {
    /// `version`, judged; `None` when the project has no such version.
    pub fn get(&self, version: &Version) -> Option<&Candidate> {
        let slot = self.versions.get(version)?;
        self.judged(version, slot)
    }

    /// Every version, oldest first, each judged as the iteration reaches it.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Version, &Candidate)> {
        self.iter_where(|_| true)
    }

    /// The versions `keep` accepts, oldest first; only those are judged.
    pub fn iter_where<'a>(
        &'a self,
        keep: impl Fn(&Version) -> bool + 'a,
    ) -> impl DoubleEndedIterator<Item = (&'a Version, &'a Candidate)> {
        self.versions
            .iter()
            .filter(move |(version, _)| keep(version))
            .filter_map(|(version, slot)| Some((version, self.judged(version, slot)?)))
    }

    fn judged<'a>(&'a self, version: &Version, slot: &'a Slot) -> Option<&'a Candidate> {
        slot.judged
            .get_or_init(|| self.judge.as_ref()?.judge(version, &slot.files))
            .as_ref()
    }
}

impl Judge {
    /// `None` when no file of the version is a distribution.
    fn judge(&self, version: &Version, indexes: &VersionFiles) -> Option<Candidate> {
        let mut files: Vec<(IndexFile, Option<WheelFilename>)> = Vec::new();
        for i in indexes.iter() {
            let Some(file) = self.project.file(i as usize) else {
                return Some(Candidate::excluded(Exclusion::Damaged));
            };
            match file.kind(&self.name) {
                DistKind::Wheel(wheel) => files.push((file, Some(wheel))),
                DistKind::Sdist(_) => files.push((file, None)),
                DistKind::Other => {}
            }
        }
        if files.is_empty() {
            return None;
        }
        let cooldown = self
            .filters
            .cooldown
            .filter(|_| !self.filters.cooldown_exempt.contains(version));
        Some(judge(files, &self.target, &self.filters, cooldown))
    }
}

impl Candidate {
    fn excluded(exclusion: Exclusion) -> Self {
        Self {
            files: Vec::new(),
            best_wheel: None,
            sdist: None,
            exclusion: Some(exclusion),
        }
    }

    /// The file whose metadata stands for the version: its best wheel,
    /// else its source distribution.
    pub fn metadata_file(&self) -> Option<&IndexFile> {
        self.best_wheel.as_ref().or(self.sdist.as_ref())
    }
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
    /// `--only-binary`: a version without a wheel for the target is not
    /// usable, though it has a source distribution.
    pub only_binary: bool,
}

/// Sort `project`'s files into versions, to be judged for `target` when
/// looked at.
pub fn candidates(
    name: &PackageName,
    project: &ProjectFiles,
    target: &Target,
    filters: Filters,
) -> Candidates {
    let versions = project
        .versions(name)
        .into_iter()
        .map(|(version, files)| {
            let slot = Slot {
                files,
                judged: OnceLock::new(),
            };
            (version, slot)
        })
        .collect();
    Candidates {
        versions,
        judge: Some(Judge {
            name: name.clone(),
            project: project.clone(),
            target: target.clone(),
            filters,
        }),
    }
}

/// Each project's versions, sorted and judged once for every reader that
/// asks with the same target and filters: the lookahead (on the index
/// client's threads) and the resolver share one [`Candidates`], so a
/// version the lookahead judged is not judged again on the resolver's
/// thread. Keyed by name: the pages of one resolution's client do not
/// change under it.
#[derive(Debug, Default)]
pub struct CandidatesMemo {
    by_name: Mutex<HashMap<PackageName, Vec<Memo>>>,
}

#[derive(Debug)]
struct Memo {
    python: Version,
    python_exact: bool,
    platform: String,
    filters: Filters,
    candidates: Arc<Candidates>,
}

impl Memo {
    fn fits(&self, target: &Target, filters: &Filters) -> bool {
        self.python == *target.python()
            && self.python_exact == target.python_exact()
            && self.platform == target.platform_name()
            && self.filters == *filters
    }
}

impl CandidatesMemo {
    /// `name`'s versions on `target` under `filters`, sorted once. Sorting
    /// happens outside the lock; two readers that race both sort, and the
    /// first one kept is the one both use.
    pub fn get(
        &self,
        name: &PackageName,
        project: &ProjectFiles,
        target: &Target,
        filters: Filters,
    ) -> Arc<Candidates> {
        let find = |memos: &HashMap<PackageName, Vec<Memo>>| {
            memos
                .get(name)?
                .iter()
                .find(|m| m.fits(target, &filters))
                .map(|m| m.candidates.clone())
        };
        if let Some(found) = self.by_name.lock().ok().and_then(|m| find(&m)) {
            return found;
        }
        let made = Arc::new(candidates(name, project, target, filters.clone()));
        let Ok(mut memos) = self.by_name.lock() else {
            return made;
        };
        if let Some(found) = find(&memos) {
            return found;
        }
        memos.entry(name.clone()).or_default().push(Memo {
            python: target.python().clone(),
            python_exact: target.python_exact(),
            platform: target.platform_name().to_string(),
            filters,
            candidates: made.clone(),
        });
        made
    }
}

fn judge(
    files: Vec<(IndexFile, Option<WheelFilename>)>,
    target: &Target,
    filters: &Filters,
    cooldown: Option<CooldownFilter>,
) -> Candidate {
    let excluded = Candidate::excluded;
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
    let files = match cooldown {
        None => files,
        Some(c) => match old_enough(files, c) {
            Ok(files) => files,
            Err(exclusion) => return excluded(exclusion),
        },
    };
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
            && !target.allows_python(spec)
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
    let (sdist, sdist_python) = if best_wheel.is_some() || filters.only_binary {
        (None, None)
    } else {
        source_distribution(&live, target)
    };
    let exclusion = if best_wheel.is_some() || sdist.is_some() {
        all_yanked.then(|| {
            Exclusion::Yanked(
                live.first()
                    .and_then(|(f, _)| f.yanked.clone())
                    .unwrap_or_default(),
            )
        })
    } else if let Some(spec) = sdist_python {
        Some(Exclusion::RequiresPython(spec))
    } else if !any_wheel && filters.only_binary {
        Some(Exclusion::SdistOnly)
    } else if !any_wheel {
        // Nothing but files of kinds layerlock does not read.
        Some(Exclusion::NoCompatibleWheel)
    } else if !any_compatible && filters.only_binary && live.iter().any(|(_, w)| w.is_none()) {
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
        sdist,
        exclusion,
    }
}

/// The cooldown: files count once they are old enough; a file without an
/// upload time fails closed unless allowed. When none is left, why.
fn old_enough(
    files: Vec<(IndexFile, Option<WheelFilename>)>,
    c: CooldownFilter,
) -> Result<Vec<(IndexFile, Option<WheelFilename>)>, Exclusion> {
    let mut eligible: Option<Timestamp> = None;
    let mut missing_time = false;
    let files: Vec<_> = files
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
        .collect();
    if files.is_empty() {
        return Err(match eligible {
            Some(eligible) => Exclusion::TooYoung { eligible },
            None if missing_time => Exclusion::NoUploadTime,
            None => Exclusion::TooNew,
        });
    }
    Ok(files)
}

/// With no wheel for the target, the source distribution that serves (one
/// per version; the first listed if an index lists more), or the
/// requires-python of the one that would but for the target's Python.
fn source_distribution(
    live: &[(IndexFile, Option<WheelFilename>)],
    target: &Target,
) -> (Option<IndexFile>, Option<String>) {
    let mut python = None;
    let sdist = live
        .iter()
        .filter(|(_, wheel)| wheel.is_none())
        .map(|(f, _)| f)
        .find(|f| match &f.requires_python {
            Some(spec) if !target.allows_python(spec) => {
                python = Some(spec.to_string());
                false
            }
            _ => true,
        })
        .cloned();
    (sdist, python)
}

/// The wheel whose metadata is worth fetching before the resolver asks: the
/// newest usable, non-pre-release version's best wheel (below `below`, when
/// given).
pub fn speculative_wheel(candidates: &Candidates, below: Option<&Version>) -> Option<IndexFile> {
    candidates
        .iter_where(|v| !v.any_prerelease() && below.is_none_or(|b| v < b))
        .rev()
        .find(|(_, c)| c.exclusion.is_none())
        .and_then(|(_, c)| c.best_wheel.clone())
}
