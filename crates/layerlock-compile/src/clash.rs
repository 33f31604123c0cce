//! A layer proven installable file by file: every wheel it picks for a
//! target, listed from its zip directory, against the files of the image's
//! distributions (their own wheels for the target) and against each other.
//! A path two distributions write with the same bytes (CRC-32 and size) is
//! no clash; what cannot be listed is named, never passed in silence.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
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
    /// Another version of the layer's package whose wheel writes over
    /// nothing, when one was found: `name==version`.
    pub avoided_by: Option<String>,
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
    /// How many of the image's distributions could not be listed (named
    /// in `unchecked`).
    pub image_unlisted: usize,
}

/// One distribution to list: whose, and where its wheel comes from.
struct Job {
    label: String,
    name: PackageName,
    image: bool,
    pick: Pick,
}

enum Pick {
    /// The files the resolution chose for the version (the wheel that fits
    /// the target best among them).
    Chosen(Vec<IndexFile>),
    /// The lock's hashes choose the wheel.
    Locked(Vec<String>),
    /// The image's pin: its version's wheel for the target.
    Version(uv_pep440::Version),
    /// The image's pin as `--base-env` holds it: its `.dist-info`.
    Installed(PathBuf),
}

/// A distribution's files by where they land: `(crc32, size)` each.
type Landing = BTreeMap<String, (u32, u64)>;

/// What the image holds at a path: a wheel member's CRC-32 and size, or an
/// installed file (its `.dist-info` and the path its RECORD names), whose
/// bytes are read only when a layer's wheel writes the same path.
#[derive(Clone)]
enum Held {
    Sum((u32, u64)),
    Disk(Arc<PathBuf>, String),
}

impl Held {
    /// Whether `content` is other bytes than what is held.
    fn differs(&self, content: (u32, u64)) -> bool {
        match self {
            Held::Sum(sum) => *sum != content,
            Held::Disk(dist_info, path) => !layerlock_env::same_bytes(dist_info, path, content),
        }
    }
}

/// The image a layer goes on, for the file check.
pub struct Image<'a> {
    pub base: &'a BTreeMap<PackageName, BasePin>,
    /// Pins `--base-env` holds, by `.dist-info` (their RECORDs list them).
    pub installed: &'a BTreeMap<PackageName, PathBuf>,
    /// Taken out of the image on purpose.
    pub replace: &'a [PackageName],
}

/// Check `lock` (one target's, whose packages' files the resolution
/// `chosen`) over `image` on `target`, listing wheels through `source`.
pub fn check_files(
    lock: &Lock,
    chosen: &BTreeMap<PackageName, Vec<IndexFile>>,
    image: &Image<'_>,
    target: &Target,
    source: &dyn LayerSource,
) -> FileReport {
    let mut report = FileReport::default();
    let jobs = jobs_of(lock, chosen, image, &mut report);
    // A layer with nothing of its own to list writes over nothing: the
    // image's files are not needed.
    if !jobs.iter().any(|j| !j.image) {
        report.unchecked.sort();
        return report;
    }
    let fold = fold_case(target);
    // The layer's own wheels first; an image wheel that shares no top-level
    // name with them cannot share a file, and a warm run knows its names
    // without reading its listing.
    let layer_landing = layer_landings(&jobs, target, source, fold, &mut report);
    let tops: BTreeSet<&str> = layer_landing
        .iter()
        .flat_map(|(_, l)| l.keys().map(|p| top(p)))
        .collect();
    let mut held = installed_held(&jobs, fold, &mut report);
    listed_held(&jobs, target, source, &tops, fold, &mut held, &mut report);
    report.clashes = clashes_of(&jobs, &held, &layer_landing, target, source, fold);
    report.unchecked.sort();
    report
}

/// The distributions to list: the lock's packages (those built from
/// source are named as unchecked) and the image's pins (those replaced on
/// purpose, or at no known version, set apart in `report`).
fn jobs_of(
    lock: &Lock,
    chosen: &BTreeMap<PackageName, Vec<IndexFile>>,
    image: &Image<'_>,
    report: &mut FileReport,
) -> Vec<Job> {
    let mut jobs = Vec::new();
    for package in &lock.packages {
        let label = format!("{}=={}", package.name, package.version);
        if package.direct.is_some() {
            report.unchecked.push(format!(
                "{label} (built from its source: its files are known once installed)"
            ));
            continue;
        }
        let pick = match chosen.get(&package.name) {
            Some(files) => Pick::Chosen(files.clone()),
            None => Pick::Locked(package.hashes.clone()),
        };
        jobs.push(Job {
            label,
            name: package.name.clone(),
            image: false,
            pick,
        });
    }
    for (name, pin) in image.base {
        let Some(version) = &pin.version else {
            report
                .unchecked
                .push(format!("{name} (the image's, at no version a lock names)"));
            report.image_unlisted += 1;
            continue;
        };
        let label = format!("{name}=={version}");
        if image.replace.contains(name) {
            report.replaced.push(label);
            continue;
        }
        let pick = match image.installed.get(name) {
            Some(dist_info) => Pick::Installed(dist_info.clone()),
            None => Pick::Version(version.clone()),
        };
        jobs.push(Job {
            label,
            name: name.clone(),
            image: true,
            pick,
        });
    }
    jobs
}

/// Where the layer's own wheels land, by job; what cannot be listed is
/// named in `report`.
fn layer_landings(
    jobs: &[Job],
    target: &Target,
    source: &dyn LayerSource,
    fold: bool,
    report: &mut FileReport,
) -> Vec<(usize, Landing)> {
    let mine: Vec<usize> = (0..jobs.len()).filter(|&i| !jobs[i].image).collect();
    let listed = list_all(
        mine.len(),
        |_| false,
        |k| list_fresh(&jobs[mine[k]], target, source),
    );
    let mut out = Vec::new();
    for (k, outcome) in listed.iter().enumerate() {
        match outcome {
            Ok(listing) => out.push((mine[k], landing(listing, fold))),
            Err(why) => report
                .unchecked
                .push(format!("{} ({why})", jobs[mine[k]].label)),
        }
    }
    out
}

/// What the image holds, by path: each path with the job that holds it.
type ImageHeld = BTreeMap<String, (usize, Held)>;

/// The files of the image's pins that `--base-env` holds, from their
/// RECORDs.
fn installed_held(jobs: &[Job], fold: bool, report: &mut FileReport) -> ImageHeld {
    let mut held = ImageHeld::new();
    for (i, job) in jobs.iter().enumerate() {
        let Pick::Installed(dist_info) = &job.pick else {
            continue;
        };
        match layerlock_env::installed_files(dist_info) {
            Ok(files) => {
                report.image_checked += 1;
                let dist_info = Arc::new(dist_info.clone());
                for (key, path) in files {
                    let key = if fold { key.to_lowercase() } else { key };
                    held.entry(key)
                        .or_insert((i, Held::Disk(dist_info.clone(), path)));
                }
            }
            Err(why) => {
                report.image_unlisted += 1;
                report
                    .unchecked
                    .push(format!("{} (its RECORD cannot be read: {why})", job.label));
            }
        }
    }
    held
}

/// The files of the other image pins, from their own wheels for the
/// target, into `held`. What every pin's wheel is is remembered as one
/// note for this image and target: a warm run reads it once, and reads no
/// listing whose top-level names meet none of the layer's (`tops`).
fn listed_held(
    jobs: &[Job],
    target: &Target,
    source: &dyn LayerSource,
    tops: &BTreeSet<&str>,
    fold: bool,
    held: &mut ImageHeld,
    report: &mut FileReport,
) {
    let theirs: Vec<usize> = (0..jobs.len())
        .filter(|&i| jobs[i].image && !matches!(jobs[i].pick, Pick::Installed(_)))
        .collect();
    let image_key = format!(
        "image-wheels 2 {} {} {}",
        target.python_short(),
        target.platform_name(),
        theirs
            .iter()
            .map(|&i| jobs[i].label.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let known = source
        .remembered(&image_key)
        .map(|text| notes_by_label(&text))
        .unwrap_or_default();
    let note_of = |k: usize| {
        known
            .get(jobs[theirs[k]].label.as_str())
            .map(String::as_str)
    };
    // What a remembered note settles (no listing to read) is answered here,
    // not on a thread of its own.
    let settled = |k: usize| note_of(k).is_some_and(|note| settled_by(note, tops));
    let listed = list_all(theirs.len(), settled, |k| {
        Ok(list_image(
            &jobs[theirs[k]],
            target,
            source,
            tops,
            fold,
            note_of(k),
        ))
    });
    if known.len() != theirs.len() {
        let mut summary = String::new();
        for (k, outcome) in listed.iter().enumerate() {
            if let Ok((_, Some(note))) = outcome {
                summary.push_str(&format!("== {}\n{note}", jobs[theirs[k]].label));
            }
        }
        source.remember(&image_key, &summary);
    }
    for (k, outcome) in listed.iter().enumerate() {
        let outcome = match outcome {
            Ok((outcome, _)) => outcome,
            Err(why) => &Err(why.clone()),
        };
        match outcome {
            Ok(listing) => {
                report.image_checked += 1;
                for (path, content) in listing.iter().flat_map(|l| landing(l, fold)) {
                    held.entry(path).or_insert((theirs[k], Held::Sum(content)));
                }
            }
            Err(why) => {
                report.image_unlisted += 1;
                report
                    .unchecked
                    .push(format!("{} ({why})", jobs[theirs[k]].label));
            }
        }
    }
}

/// Each pair of distributions whose files differ where the layer's land,
/// with another version of the layer's package that writes over nothing,
/// when one is found.
fn clashes_of(
    jobs: &[Job],
    image: &ImageHeld,
    layer_landing: &[(usize, Landing)],
    target: &Target,
    source: &dyn LayerSource,
    fold: bool,
) -> Vec<Clash> {
    let mut layer: ImageHeld = BTreeMap::new();
    let mut found: BTreeMap<(usize, usize), (usize, String)> = BTreeMap::new();
    for (i, landing) in layer_landing {
        for (path, content) in landing {
            let others = [image.get(path), layer.get(path)];
            for (other, theirs) in others.into_iter().flatten() {
                if theirs.differs(*content) {
                    let slot = found.entry((*i, *other)).or_insert((0, path.clone()));
                    slot.0 += 1;
                }
            }
            layer
                .entry(path.clone())
                .or_insert((*i, Held::Sum(*content)));
        }
    }
    // The layer's packages that clash, each tried at other versions: one
    // whose wheel writes over nothing is named as a way out.
    let clashing: BTreeSet<usize> = found.keys().map(|(mine, _)| *mine).collect();
    let avoided: BTreeMap<usize, String> = clashing
        .iter()
        .filter_map(|&i| {
            let writes_over = |landing: &Landing| {
                landing.iter().any(|(path, content)| {
                    image.get(path).is_some_and(|(_, h)| h.differs(*content))
                        || layer_landing
                            .iter()
                            .filter(|(j, _)| *j != i)
                            .any(|(_, l)| l.get(path).is_some_and(|c| c != content))
                })
            };
            avoiding_version(&jobs[i], target, source, fold, &writes_over).map(|v| (i, v))
        })
        .collect();
    found
        .into_iter()
        .map(|((mine, theirs), (files, example))| Clash {
            layer: jobs[mine].label.clone(),
            other: jobs[theirs].label.clone(),
            image: jobs[theirs].image,
            files,
            example: example.replace("bin:", "bin/"),
            avoided_by: avoided.get(&mine).cloned(),
        })
        .collect()
}

/// How many other versions of a clashing package are listed, newest
/// first, in search of one that writes over nothing.
const OTHER_VERSIONS: usize = 6;

/// Another version of `job`'s package (newest first, at most
/// [`OTHER_VERSIONS`] tried) whose wheel for `target` does not
/// `write_over`, as `name==version`.
fn avoiding_version(
    job: &Job,
    target: &Target,
    source: &dyn LayerSource,
    fold: bool,
    writes_over: &dyn Fn(&Landing) -> bool,
) -> Option<String> {
    let answer = source.project(&job.name).ok()?;
    let ProjectAnswer::Found(project) = answer.as_ref() else {
        return None;
    };
    let files = project.files().ok()?;
    let mut by_version: BTreeMap<uv_pep440::Version, Vec<&IndexFile>> = BTreeMap::new();
    for file in &files {
        if file.yanked.is_some() {
            continue;
        }
        if let Some(version) = layerlock_dist::version_in_filename(&job.name, &file.filename) {
            by_version.entry(version).or_default().push(file);
        }
    }
    let current = job.label.split_once("==").map(|(_, v)| v.to_string());
    by_version
        .iter()
        .rev()
        .filter(|(v, _)| Some(v.to_string()) != current && !v.any_prerelease())
        .filter_map(|(v, files)| Some((v, layerlock_dist::best_wheel(files, target)?)))
        .take(OTHER_VERSIONS)
        .find_map(|(v, wheel)| {
            let listing = source.wheel_listing(&job.name, wheel).ok()?;
            (!writes_over(&landing(&listing, fold))).then(|| format!("{}=={v}", job.name))
        })
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

/// `count` answers of `one`, in order: many at a time (a wheel's
/// directory is one small range read, or none when cached; the client
/// bounds what runs at once). Those `quick` says need nothing read are
/// answered on this thread.
pub(crate) fn list_all<T: Send>(
    count: usize,
    quick: impl Fn(usize) -> bool,
    one: impl Fn(usize) -> Result<T, String> + Sync,
) -> Vec<Result<T, String>> {
    const WORKERS: usize = 48;
    let mut out: Vec<Option<Result<T, String>>> = (0..count).map(|_| None).collect();
    let mut slow = Vec::new();
    for (i, slot) in out.iter_mut().enumerate() {
        if quick(i) {
            *slot = Some(one(i));
        } else {
            slow.push(i);
        }
    }
    let next = Mutex::new(0usize);
    let out = Mutex::new(out);
    std::thread::scope(|scope| {
        for _ in 0..WORKERS.min(slow.len()) {
            scope.spawn(|| {
                loop {
                    let i = {
                        let Ok(mut next) = next.lock() else { return };
                        let i = *next;
                        *next += 1;
                        i
                    };
                    let Some(&i) = slow.get(i) else {
                        return;
                    };
                    let answer = one(i);
                    if let Ok(mut out) = out.lock() {
                        out[i] = Some(answer);
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

/// A landing key's top-level name (`cupy` of `cupy/_core.so`).
fn top(path: &str) -> &str {
    path.split('/').next().unwrap_or(path)
}

/// An image pin's listing (see [`image_listing`]) and the note that
/// says where its wheel is, for the image's summary.
type ImageListed = (Result<Option<Arc<WheelListing>>, String>, Option<String>);

/// [`image_listing`], with the note it read or made.
fn list_image(
    job: &Job,
    target: &Target,
    source: &dyn LayerSource,
    tops: &BTreeSet<&str>,
    fold: bool,
    note: Option<&str>,
) -> ImageListed {
    let mut made = None;
    let outcome = image_listing(job, target, source, tops, fold, note, &mut made);
    (outcome, made.or_else(|| note.map(str::to_string)))
}

/// The notes of an image's summary, by label.
fn notes_by_label(text: &str) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(label) = line.strip_prefix("== ") {
            current = Some(label.to_string());
            out.entry(label.to_string()).or_default();
        } else if let Some(label) = &current {
            let note = out.entry(label.clone()).or_default();
            note.push_str(line);
            note.push('\n');
        }
    }
    out
}

/// Whether a remembered `note` answers alone: no wheel, or one that
/// shares no top-level name with the layer's (`tops`).
fn settled_by(note: &str, tops: &BTreeSet<&str>) -> bool {
    match note.lines().collect::<Vec<_>>().as_slice() {
        ["wheel", _, _, _, names] => !names.split('/').any(|n| tops.contains(n)),
        ["none", _] => true,
        _ => false,
    }
}

/// An image pin's listing, or `None` when its wheel shares no top-level
/// name with the layer's (`tops`). Its wheel for the target is worked out
/// once and remembered with its top-level names (in `made`), so a warm run
/// reads neither its project page nor, mostly, its listing.
fn image_listing(
    job: &Job,
    target: &Target,
    source: &dyn LayerSource,
    tops: &BTreeSet<&str>,
    fold: bool,
    note: Option<&str>,
    made: &mut Option<String>,
) -> Result<Option<Arc<WheelListing>>, String> {
    let Pick::Version(version) = &job.pick else {
        return Err("not an image pin".to_string());
    };
    let shares = |names: &str| names.split('/').any(|n| tops.contains(n));
    if let Some(note) = note {
        match note.lines().collect::<Vec<_>>().as_slice() {
            ["wheel", sha, url, filename, names] => {
                if !shares(names) {
                    return Ok(None);
                }
                let file = IndexFile {
                    filename: (*filename).to_string(),
                    url: (*url).to_string(),
                    sha256: Some((*sha).to_string()),
                    requires_python: None,
                    yanked: None,
                    upload_time: None,
                    size: None,
                    core_metadata: None,
                    listed_by: String::new(),
                };
                if let Ok(listing) = source.wheel_listing(&job.name, &file) {
                    return Ok(Some(listing));
                }
            }
            ["none", why] => return Err((*why).to_string()),
            _ => {}
        }
    }
    let wheel = match installed_wheel(&job.name, version, target, source) {
        Ok(wheel) => wheel,
        Err(why) => {
            // Only answers that hold for good: not a failed read.
            if !why.contains("cannot be read") {
                *made = Some(format!("none\n{why}\n"));
            }
            return Err(why);
        }
    };
    let listing = source
        .wheel_listing(&job.name, &wheel)
        .map_err(|e| format!("its wheel cannot be listed: {e}"))?;
    let names: BTreeSet<String> = landing(&listing, fold)
        .keys()
        .map(|p| top(p).to_string())
        .collect();
    let names: Vec<String> = names.into_iter().collect();
    if let Some(sha) = &wheel.sha256
        && !wheel.url.contains(['\n', '\r'])
        && !wheel.filename.contains(['\n', '\r'])
    {
        *made = Some(format!(
            "wheel\n{sha}\n{}\n{}\n{}\n",
            wheel.url,
            wheel.filename,
            names.join("/")
        ));
    }
    Ok(Some(listing))
}

/// The wheel of the image's `name==version` an installer takes on
/// `target`, or why there is none.
pub(crate) fn installed_wheel(
    name: &PackageName,
    version: &uv_pep440::Version,
    target: &Target,
    source: &dyn LayerSource,
) -> Result<IndexFile, String> {
    let files = match source.version_files(name, version) {
        Some(Ok(files)) => files,
        _ => {
            let answer = source
                .project(name)
                .map_err(|e| format!("its index page cannot be read: {e}"))?;
            match answer.as_ref() {
                ProjectAnswer::Found(project) => project
                    .files()
                    .map_err(|_| "its index page cannot be read".to_string())?
                    .into_iter()
                    .filter(|f| {
                        layerlock_dist::version_in_filename(name, &f.filename).as_ref()
                            == Some(version)
                    })
                    .collect(),
                ProjectAnswer::NotFound { .. } | ProjectAnswer::NotCached { .. } => {
                    return Err("not on the indexes asked".to_string());
                }
            }
        }
    };
    if files.is_empty() {
        return Err("this version is not on the indexes asked".to_string());
    }
    let refs: Vec<&IndexFile> = files.iter().collect();
    match layerlock_dist::best_wheel(&refs, target) {
        Some(wheel) => Ok(wheel.clone()),
        None if refs.iter().any(|f| f.filename.ends_with(".whl")) => Err(format!(
            "no wheel for {} on the indexes asked",
            target.describe()
        )),
        None => Err("an sdist only: its files are known once built".to_string()),
    }
}

/// A layer package's listing: its wheel for the target by the lock's
/// hashes.
fn list_fresh(
    job: &Job,
    target: &Target,
    source: &dyn LayerSource,
) -> Result<Arc<WheelListing>, String> {
    if let Pick::Chosen(files) = &job.pick {
        let refs: Vec<&IndexFile> = files.iter().collect();
        return match layerlock_dist::best_wheel(&refs, target) {
            Some(wheel) => source
                .wheel_listing(&job.name, wheel)
                .map_err(|e| format!("its wheel cannot be listed: {e}")),
            None => Err("an sdist: its files are known once built".to_string()),
        };
    }
    let Pick::Locked(hashes) = &job.pick else {
        return Err("not a locked package".to_string());
    };
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
    let wheel = match layerlock_dist::locked_files(&files, hashes, Some(target)) {
        LockedFiles::Wheels(wheels) => layerlock_dist::best_wheel(&wheels, target),
        LockedFiles::NoWheel => {
            return Err("an sdist: its files are known once built".to_string());
        }
        LockedFiles::None => return Err("no file on the index has a locked hash".to_string()),
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
    let avoided: BTreeSet<&str> = clashes
        .iter()
        .filter_map(|c| c.avoided_by.as_deref())
        .collect();
    for spec in &avoided {
        hints.push(format!(
            "or take {spec}, whose wheel writes over none of these files: put `{spec}` in a --constraint file (if the rest of the layer allows it)"
        ));
    }
    if avoided.is_empty() {
        hints.push(format!(
            "or pin a version of the package whose files do not overlap (of its {OTHER_VERSIONS} newest other versions, none avoids it)"
        ));
    }
    hints
}
