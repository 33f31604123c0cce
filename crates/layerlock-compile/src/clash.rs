//! A layer proven installable file by file: every wheel it picks for a
//! target, listed from its zip directory, against the files of the image's
//! distributions (their own wheels for the target) and against each other.
//! A path two distributions write with the same bytes (CRC-32 and size) is
//! no clash; what cannot be listed is named, never passed in silence.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use layerlock_dist::{IndexFile, LockedFiles, ProjectAnswer, Target, WheelListing};
use layerlock_lock::Lock;
use layerlock_resolve::BasePin;
use uv_normalize::PackageName;

use crate::source::LayerSource;

/// Two distributions that write the same files with different bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    /// The layer's package, `name==version`.
    pub layer: String,
    /// What it writes over, `name==version`.
    pub other: String,
    /// Whether `other` is the image's (else another of the layer's).
    pub image: bool,
    /// How many files differ.
    pub files: usize,
    /// The first of them, as the site directory names it.
    pub example: String,
}

/// What the check could see, for one target.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileReport {
    pub clashes: Vec<Clash>,
    /// `name==version (why)`: what could not be listed.
    pub unchecked: Vec<String>,
    /// `name==version`: the image's distributions the layer replaces on
    /// purpose (and whose files it may write).
    pub replaced: Vec<String>,
    /// How many of the image's distributions were compared file by file.
    pub image_checked: usize,
}

/// One distribution to list: whose, and where its wheel comes from.
struct Job {
    label: String,
    name: PackageName,
    image: bool,
    pick: Pick,
}

enum Pick {
    /// The lock's hashes choose the wheel.
    Locked(Vec<String>),
    /// The image's pin: its version's wheel for the target.
    Version(uv_pep440::Version),
}

/// A distribution's listing, or why there is none.
type Listed = Result<Arc<WheelListing>, String>;

/// A distribution's files by where they land: `(crc32, size)` each.
type Landing = BTreeMap<String, (u32, u64)>;

/// Check `lock` (one target's) over `base` on `target`, the packages of
/// `replace` taken out of the image on purpose, listing wheels through
/// `source`.
pub fn check_files(
    lock: &Lock,
    base: &BTreeMap<PackageName, BasePin>,
    replace: &[PackageName],
    target: &Target,
    source: &dyn LayerSource,
) -> FileReport {
    let mut report = FileReport::default();
    let mut jobs = Vec::new();
    for package in &lock.packages {
        let label = format!("{}=={}", package.name, package.version);
        if package.direct.is_some() {
            report.unchecked.push(format!(
                "{label} (built from its source: its files are known once installed)"
            ));
            continue;
        }
        jobs.push(Job {
            label,
            name: package.name.clone(),
            image: false,
            pick: Pick::Locked(package.hashes.clone()),
        });
    }
    for (name, pin) in base {
        let Some(version) = &pin.version else {
            report
                .unchecked
                .push(format!("{name} (the image's, at no version a lock names)"));
            continue;
        };
        let label = format!("{name}=={version}");
        if replace.contains(name) {
            report.replaced.push(label);
            continue;
        }
        jobs.push(Job {
            label,
            name: name.clone(),
            image: true,
            pick: Pick::Version(version.clone()),
        });
    }
    // A layer with nothing of its own to list writes over nothing: the
    // image's files are not needed.
    if !jobs.iter().any(|j| !j.image) {
        report.unchecked.sort();
        return report;
    }
    let listed = list_all(&jobs, target, source);
    let fold = fold_case(target);
    let mut image: BTreeMap<String, (usize, (u32, u64))> = BTreeMap::new();
    let mut layer: BTreeMap<String, (usize, (u32, u64))> = BTreeMap::new();
    let mut found: BTreeMap<(usize, usize), (usize, String)> = BTreeMap::new();
    // The image's files first: each of the layer's is compared with them
    // and with the layer's before it.
    let order = (0..jobs.len())
        .filter(|&i| jobs[i].image)
        .chain((0..jobs.len()).filter(|&i| !jobs[i].image));
    for i in order {
        let (job, outcome) = (&jobs[i], &listed[i]);
        let landing = match outcome {
            Ok(listing) => landing(listing, fold),
            Err(why) => {
                report.unchecked.push(format!("{} ({why})", job.label));
                continue;
            }
        };
        if job.image {
            report.image_checked += 1;
            for (path, content) in landing {
                image.entry(path).or_insert((i, content));
            }
            continue;
        }
        for (path, content) in landing {
            let others = [image.get(&path), layer.get(&path)];
            for (other, theirs) in others.into_iter().flatten() {
                if *theirs != content {
                    let slot = found.entry((i, *other)).or_insert((0, path.clone()));
                    slot.0 += 1;
                }
            }
            layer.entry(path).or_insert((i, content));
        }
    }
    report.clashes = found
        .into_iter()
        .map(|((mine, theirs), (files, example))| Clash {
            layer: jobs[mine].label.clone(),
            other: jobs[theirs].label.clone(),
            image: jobs[theirs].image,
            files,
            example: example.replace("bin:", "bin/"),
        })
        .collect();
    report.unchecked.sort();
    report
}

/// Whether paths compare without case on `target` (macOS and Windows file
/// systems do).
fn fold_case(target: &Target) -> bool {
    let platform = target.platform_name();
    platform.contains("apple-darwin") || platform.contains("windows")
}

/// Where a listing's files land, each with its content: members as
/// `site_path` keys them, generated scripts as `bin:NAME` (their content is
/// the function they run).
fn landing(listing: &WheelListing, fold: bool) -> Landing {
    let key = |path: &str| {
        if fold {
            path.to_lowercase()
        } else {
            path.to_string()
        }
    };
    let mut out = Landing::new();
    for file in &listing.files {
        if let Some(path) = layerlock_env::site_path(&file.path) {
            out.insert(key(&path), (file.crc32, file.size));
        }
    }
    for (name, runs) in &listing.scripts {
        let crc = crc32fast::hash(runs.as_bytes());
        out.insert(key(&format!("bin:{name}")), (crc, u64::MAX));
    }
    out
}

/// Each job's listing, or why there is none, in the jobs' order: many at
/// a time (a wheel's directory is one small range read, or none when
/// cached; the client bounds what runs at once).
fn list_all(jobs: &[Job], target: &Target, source: &dyn LayerSource) -> Vec<Listed> {
    const WORKERS: usize = 32;
    let next = Mutex::new(0usize);
    let out: Mutex<Vec<Option<Listed>>> = Mutex::new(jobs.iter().map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..WORKERS.min(jobs.len()) {
            scope.spawn(|| {
                loop {
                    let i = {
                        let Ok(mut next) = next.lock() else { return };
                        let i = *next;
                        *next += 1;
                        i
                    };
                    let Some(job) = jobs.get(i) else { return };
                    let listed = list_one(job, target, source);
                    if let Ok(mut out) = out.lock() {
                        out[i] = Some(listed);
                    }
                }
            });
        }
    });
    out.into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|o| o.unwrap_or_else(|| Err("not listed".to_string())))
        .collect()
}

/// One distribution's listing: its wheel for the target, by the lock's
/// hashes or the image's version.
fn list_one(
    job: &Job,
    target: &Target,
    source: &dyn LayerSource,
) -> Result<Arc<WheelListing>, String> {
    if let Pick::Version(version) = &job.pick
        && let Some(Ok(files)) = source.version_files(&job.name, version)
    {
        let refs: Vec<&IndexFile> = files.iter().collect();
        return match layerlock_dist::best_wheel(&refs, target) {
            Some(wheel) => source
                .wheel_listing(&job.name, wheel)
                .map_err(|e| format!("its wheel cannot be listed: {e}")),
            None if refs.iter().any(|f| f.filename.ends_with(".whl")) => Err(format!(
                "no wheel for {} on the indexes asked",
                target.describe()
            )),
            None => Err("an sdist only: its files are known once built".to_string()),
        };
    }
    let answer = source
        .project(&job.name)
        .map_err(|e| format!("its index page cannot be read: {e}"))?;
    let files = match answer.as_ref() {
        ProjectAnswer::Found(project) => project
            .files()
            .map_err(|_| "its index page cannot be read".to_string())?,
        ProjectAnswer::NotFound { .. } | ProjectAnswer::NotCached { .. } => {
            return Err("not on the indexes asked".to_string());
        }
    };
    let wheel = match &job.pick {
        Pick::Locked(hashes) => match layerlock_dist::locked_files(&files, hashes, Some(target)) {
            LockedFiles::Wheels(wheels) => layerlock_dist::best_wheel(&wheels, target),
            LockedFiles::NoWheel => {
                return Err("an sdist: its files are known once built".to_string());
            }
            LockedFiles::None => return Err("no file on the index has a locked hash".to_string()),
        },
        Pick::Version(version) => {
            let of_version: Vec<&IndexFile> = files
                .iter()
                .filter(|f| {
                    layerlock_dist::version_in_filename(&job.name, &f.filename).as_ref()
                        == Some(version)
                })
                .collect();
            if of_version.is_empty() {
                return Err("this version is not on the indexes asked".to_string());
            }
            if !of_version.iter().any(|f| f.filename.ends_with(".whl")) {
                return Err("an sdist only: its files are known once built".to_string());
            }
            layerlock_dist::best_wheel(&of_version, target)
        }
    };
    let Some(wheel) = wheel else {
        return Err(format!(
            "no wheel for {} on the indexes asked",
            target.describe()
        ));
    };
    source
        .wheel_listing(&job.name, wheel)
        .map_err(|e| format!("its wheel cannot be listed: {e}"))
}

/// The clashes of `report`, worded: one line each, with a count and an
/// example path.
pub fn clash_lines(clashes: &[Clash]) -> Vec<String> {
    clashes
        .iter()
        .map(|c| {
            format!(
                "{} writes over {} file{} of {}{} (e.g. {})",
                c.layer,
                c.files,
                if c.files == 1 { "" } else { "s" },
                if c.image {
                    "the image's "
                } else {
                    "the layer's "
                },
                c.other,
                c.example
            )
        })
        .collect()
}

/// The ways out of `clashes`, as hints.
pub fn clash_hints(clashes: &[Clash]) -> Vec<String> {
    let mut hints = Vec::new();
    let layer_names: BTreeSet<&str> = clashes
        .iter()
        .filter_map(|c| c.layer.split("==").next())
        .collect();
    // Between two of the layer's own packages, either may be the one to
    // keep out.
    let layer_names: BTreeSet<&str> = layer_names
        .into_iter()
        .chain(
            clashes
                .iter()
                .filter(|c| !c.image)
                .filter_map(|c| c.other.split("==").next()),
        )
        .collect();
    for name in &layer_names {
        hints.push(format!(
            "keep {name} out of the layer: put `{name} ; sys_platform == \"never\"` in an --override file (an override whose marker never holds drops the requirement)"
        ));
    }
    let image: BTreeSet<&str> = clashes
        .iter()
        .filter(|c| c.image)
        .filter_map(|c| c.other.split("==").next())
        .collect();
    for name in &image {
        hints.push(format!(
            "or replace the image's {name} on purpose: --replace {name} (in the config: replace = [\"{name}\"]); the lock records it and install removes it first"
        ));
    }
    hints.push("or pin a version of the package whose files do not overlap".to_string());
    hints
}
