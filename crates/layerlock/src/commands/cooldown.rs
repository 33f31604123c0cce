//! `layerlock cooldown`: every package version a lock introduces (relative
//! to its bases, or to the same file at a git revision) must have been
//! uploaded at least the minimum age ago. Ages come from the upload times of
//! exactly the files whose hashes the lock lists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;

use anyhow::{Result, anyhow, bail};
use jiff::Timestamp;
use serde::Serialize;
use uv_normalize::PackageName;

use uv_pep440::Version;

use layerlock_dist::{PackageSource, ProjectAnswer};
use layerlock_index::{IndexClient, IndexConfig};
use layerlock_lock::Lock;
use layerlock_resolve::Verdict;

use crate::cli::FormatArg;
use crate::settings::{CooldownSettings, IndexSettings, RunSettings};

#[derive(Debug, Clone)]
pub struct CooldownCheck {
    /// Each checked in turn.
    pub locks: Vec<PathBuf>,
    pub bases: Vec<PathBuf>,
    pub since: Option<String>,
    pub cooldown: CooldownSettings,
    pub format: FormatArg,
    pub index: IndexSettings,
    pub run: RunSettings,
}

#[derive(Debug, Serialize)]
struct Row {
    name: String,
    version: String,
    uploaded: Option<String>,
    age_days: Option<f64>,
    eligible_on: Option<String>,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

#[derive(Debug, Serialize)]
struct Report {
    version: u32,
    min_age_seconds: i64,
    now: String,
    packages: Vec<Row>,
    eligible_on: Option<String>,
}

/// What the bases, or the lock at `since`, already have: for each version,
/// the sha256s known (`None`: a pin without hashes, the whole version).
type Known = BTreeMap<(PackageName, Version), Option<BTreeSet<String>>>;

/// Versions (and files) the lock does not introduce. Only exact pins count:
/// a base line `foo>=2` says nothing about which version is there, and a
/// pin whose marker cannot be shown to hold on the lock's target does not
/// count either (fail closed: its package is judged).
fn already_there(settings: &CooldownCheck, lock: &Lock) -> Result<Known> {
    let lock_path = &lock.path;
    let target = lock
        .header
        .target
        .as_ref()
        .and_then(|t| layerlock_dist::Target::new(&t.python, &t.platform).ok());
    let mut out = Known::new();
    let mut add = |there: &Lock| {
        for p in &there.packages {
            let applies = p.marker.is_true()
                || target
                    .as_ref()
                    .is_some_and(|t| p.marker.evaluate(t.markers(), &[]));
            if !applies {
                continue;
            }
            let hashes: BTreeSet<String> = p.sha256s().collect();
            let slot = out
                .entry((p.name.clone(), p.version.clone()))
                .or_insert_with(|| Some(BTreeSet::new()));
            match (slot.as_mut(), hashes.is_empty()) {
                (_, true) => *slot = None,
                (Some(known), false) => known.extend(hashes),
                (None, false) => {}
            }
        }
    };
    for base in &settings.bases {
        let text = layerlock_lock::read_text(base)?;
        add(&Lock::parse_pins(base, &text)?);
    }
    if let Some(rev) = &settings.since {
        let dir = lock_path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let git = layerlock_git::Git::open(dir)?;
        match git.file_at(rev, lock_path, layerlock_lock::MAX_FILE_BYTES as usize)? {
            layerlock_git::Blob::Bytes(bytes) => {
                let text = String::from_utf8(bytes)
                    .map_err(|_| anyhow!("{} at {rev} is not UTF-8 text", lock_path.display()))?;
                add(&Lock::parse_pins(lock_path, &text)?);
            }
            // A lock that did not exist at the revision introduces
            // everything.
            layerlock_git::Blob::Missing => {}
            layerlock_git::Blob::Refused(why) => {
                bail!("{} at {rev}: {why}", lock_path.display())
            }
        }
    }
    Ok(out)
}

/// The sha256s of `package` the lock introduces: all of them, or only the
/// files added to a version that was already there.
fn introduced(package: &layerlock_lock::LockedPackage, known: &Known) -> BTreeSet<String> {
    let all: BTreeSet<String> = package.sha256s().collect();
    match known.get(&(package.name.clone(), package.version.clone())) {
        None => all,
        Some(None) => BTreeSet::new(),
        Some(Some(there)) => all.difference(there).cloned().collect(),
    }
}

pub fn run(settings: &CooldownCheck) -> Result<ExitCode> {
    let mut reports = Vec::new();
    let mut failed = false;
    for path in &settings.locks {
        let (report, bad) = check(settings, path)?;
        failed |= bad;
        reports.push((path, report));
    }
    match settings.format {
        // One lock: the report; several: an array of them.
        FormatArg::Json => match reports.as_slice() {
            [(_, report)] => outln!("{}", serde_json::to_string_pretty(report)?),
            many => {
                let all: Vec<&Report> = many.iter().map(|(_, r)| r).collect();
                outln!("{}", serde_json::to_string_pretty(&all)?);
            }
        },
        FormatArg::Text => {
            let several = reports.len() > 1;
            for (path, report) in &reports {
                if several {
                    outln!("== {}", path.display());
                }
                print_text(report);
            }
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Judge one lock: its report, and whether anything failed.
fn check(settings: &CooldownCheck, path: &Path) -> Result<(Report, bool)> {
    let lock = Lock::read(path)?;
    crate::environment::refuse_empty(path, &lock)?;
    if let Some(p) = lock.packages.iter().find(|p| p.hashes.is_empty()) {
        bail!(
            "{}: {}=={} has no --hash; the cooldown reads the upload times of the hashed files (make the lock with `layerlock compile`)",
            p.origin,
            p.name,
            p.version
        );
    }
    let known = already_there(settings, &lock)?;
    let client = IndexClient::new(&IndexConfig {
        index_urls: settings.index.index_urls.clone(),
        find_links: settings.index.find_links.clone(),
        cache_dir: super::usable_cache(settings.run.cache_dir.as_deref()),
        offline: settings.run.offline,
        netrc: settings.run.netrc.clone(),
        timeout: settings.run.timeout,
        retries: 3,
        concurrency: 48,
    })?;
    let policy = &settings.cooldown.policy;
    let mut rows = Vec::new();
    let mut failed = false;
    let mut latest: Option<Timestamp> = None;
    let mut undated = false;
    let mut trusted_lock = false;
    for package in &lock.packages {
        let new = introduced(package, &known);
        if new.is_empty() {
            continue;
        }
        let times = match upload_times(&client, package, &new)? {
            Times::Index(times) => times,
            // Offline with nothing cached: a pylock.toml's own times are
            // all there is, and the report says so.
            Times::NotCached { asked } => {
                let recorded = recorded_times(package, &new);
                if recorded.iter().any(Option::is_none) {
                    bail!(
                        "--offline, and the cache holds no page for {} (asked: {}); run once online, or drop --offline",
                        package.name,
                        asked.join(", ")
                    );
                }
                trusted_lock = true;
                recorded
            }
        };
        let judged = policy.judge(&package.name, &package.version, &times);
        failed |= judged.verdict.fails();
        match judged.eligible {
            Some(e) if judged.verdict != Verdict::Exempt => {
                latest = Some(latest.map_or(e, |l| l.max(e)));
            }
            None if judged.verdict.fails() => undated = true,
            _ => {}
        }
        let mut note = judged.note;
        if new.len() < package.hashes.len() {
            let added = "files added to a version that was already there";
            note = Some(note.map_or(added.to_string(), |n| format!("{added}; {n}")));
        }
        rows.push(Row {
            name: package.name.to_string(),
            version: package.version.to_string(),
            uploaded: judged.uploaded.map(|t| t.to_string()),
            age_days: judged.age_days,
            eligible_on: judged.eligible.map(|t| t.to_string()),
            status: judged.verdict.as_str(),
            note,
        });
    }
    if trusted_lock && !settings.run.quiet {
        diag!(
            "warning: upload times are the ones {} records (--offline, nothing cached); an index was not asked to confirm them",
            path.display()
        );
    }
    // A package that can never become eligible (its time is unknown) has
    // no date to wait for.
    if undated {
        latest = None;
    }
    let report = Report {
        version: 1,
        min_age_seconds: policy.min_age.as_secs(),
        now: policy.now.to_string(),
        packages: rows,
        eligible_on: latest.map(|t| t.to_string()),
    };
    Ok((report, failed))
}

fn print_text(report: &Report) {
    outln!(
        "{:<32} {:<16} {:<11} {:>7} {:<17} status",
        "package",
        "version",
        "uploaded",
        "age (d)",
        "eligible at (UTC)"
    );
    for r in &report.packages {
        outln!(
            "{:<32} {:<16} {:<11} {:>7} {:<17} {}{}",
            r.name,
            r.version,
            r.uploaded.as_deref().map_or("-", |u| &u[..10.min(u.len())]),
            r.age_days.map_or("-".to_string(), |a| format!("{a:.1}")),
            r.eligible_on.as_deref().map_or("-".to_string(), minute),
            r.status,
            r.note
                .as_ref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default()
        );
    }
    match &report.eligible_on {
        Some(t) => outln!("eligible from {} UTC", minute(t)),
        None if report.packages.is_empty() => outln!("nothing introduced"),
        None => outln!("eligible date unknown"),
    }
}

/// `2026-11-09T22:49:00Z` as `2026-11-09 22:49`.
fn minute(t: &str) -> String {
    Timestamp::from_str(t)
        .map(|t| t.strftime("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|_| t.to_string())
}

/// Upload times of exactly the files `wanted` names, from the index.
enum Times {
    Index(Vec<Option<Timestamp>>),
    /// Offline, and the cache has no page for the project.
    NotCached {
        asked: Vec<String>,
    },
}

/// The index is the authority on when a file was uploaded: a time a lock
/// records is only a cache of it (a pull request could edit it). The
/// simple API is asked first, then the JSON API for what it lacks.
fn upload_times(
    client: &IndexClient,
    package: &layerlock_lock::LockedPackage,
    wanted: &BTreeSet<String>,
) -> Result<Times> {
    let mut times: BTreeMap<String, Option<Timestamp>> =
        wanted.iter().map(|h| (h.clone(), None)).collect();
    match client.project(&package.name)?.as_ref() {
        ProjectAnswer::Found(project) => {
            // A file that cannot be read could be a locked one: its time
            // would then count as missing, which --allow-missing-time passes.
            let files = project.files().map_err(|_| {
                anyhow!(
                    "the cached page of {} cannot be read; the cache is damaged: delete it and run again",
                    package.name
                )
            })?;
            for file in files {
                if let Some(sha) = &file.sha256
                    && let Some(slot) = times.get_mut(sha)
                {
                    *slot = file.upload_time.or(*slot);
                }
            }
        }
        ProjectAnswer::NotCached { asked } => {
            return Ok(Times::NotCached {
                asked: asked.clone(),
            });
        }
        ProjectAnswer::NotFound { .. } => {}
    }
    if times.values().any(Option::is_none) {
        let fallback = client.json_api_upload_times(&package.name, &package.version.to_string());
        for (sha, slot) in &mut times {
            if slot.is_none() {
                *slot = fallback.get(sha).copied();
            }
        }
    }
    Ok(Times::Index(times.into_values().collect()))
}

/// The upload times a pylock.toml records for the files `wanted` names.
fn recorded_times(
    package: &layerlock_lock::LockedPackage,
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
