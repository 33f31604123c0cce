//! `layerlock cooldown`: every package version a lock introduces (relative
//! to its bases, or to the same file at a git revision) must have been
//! uploaded at least the minimum age ago. Ages come from the upload times of
//! exactly the files whose hashes the lock lists.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;

use anyhow::{Result, anyhow, bail};
use jiff::Timestamp;
use serde::Serialize;

use layerlock_index::{IndexClient, IndexConfig};
use layerlock_lock::Lock;
use layerlock_resolve::{
    Known, LockAges, UploadTimes, Verdict, lock_target, recorded_times, upload_times,
};

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
    #[serde(serialize_with = "verdict_name")]
    status: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

/// A verdict by its stable report name.
fn verdict_name<S: serde::Serializer>(verdict: &Verdict, out: S) -> Result<S::Ok, S::Error> {
    out.serialize_str(verdict.as_str())
}

#[derive(Debug, Serialize)]
struct Report {
    version: u32,
    min_age_seconds: i64,
    now: String,
    packages: Vec<Row>,
    eligible_on: Option<String>,
}

/// What the bases, and the lock at `--since`, already have.
fn already_there(settings: &CooldownCheck, lock: &Lock) -> Result<Known> {
    let lock_path = &lock.path;
    let target = lock_target(lock);
    let mut known = Known::default();
    for base in &settings.bases {
        let text = layerlock_lock::read_text(base)?;
        known.add(&Lock::parse_pins(base, &text)?, target.as_ref());
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
                known.add(&Lock::parse_pins(lock_path, &text)?, target.as_ref());
            }
            // A lock that did not exist at the revision introduces
            // everything.
            layerlock_git::Blob::Missing => {}
            layerlock_git::Blob::Refused(why) => {
                bail!("{} at {rev}: {why}", lock_path.display())
            }
        }
    }
    Ok(known)
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
    let mut lock = Lock::read(path)?;
    crate::environment::refuse_empty(path, &lock)?;
    // A git commit or a directory is no release: the policy judges what
    // an index published, and says which it left to the lock's pin.
    let from_source: Vec<String> = lock
        .packages
        .iter()
        .filter_map(|p| Some(format!("{} ({})", p.name, p.direct.as_ref()?.url())))
        .collect();
    if !from_source.is_empty() && !settings.run.quiet {
        diag!(
            "note: {}: not judged, locked from source rather than released on an index: {}",
            path.display(),
            from_source.join(", ")
        );
    }
    lock.packages.retain(|p| p.direct.is_none());
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
    let mut ages = LockAges::default();
    let mut trusted_lock = false;
    for package in &lock.packages {
        let new = known.introduced(package);
        if new.is_empty() {
            continue;
        }
        let json_api = || client.json_api_upload_times(&package.name, &package.version.to_string());
        let times = match upload_times(&client, package, &new, json_api)? {
            UploadTimes::Index(times) => times,
            // Offline with nothing cached: a pylock.toml's own times are
            // all there is, and the report says so.
            UploadTimes::NotCached { asked } => {
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
        ages.judge(policy, package, new.len(), &times);
    }
    if trusted_lock && !settings.run.quiet {
        diag!(
            "warning: upload times are the ones {} records (--offline, nothing cached); an index was not asked to confirm them",
            path.display()
        );
    }
    let rows = ages.packages.iter().map(|aged| {
        let judged = &aged.judgement;
        Row {
            name: aged.name.to_string(),
            version: aged.version.to_string(),
            uploaded: judged.uploaded.map(|t| t.to_string()),
            age_days: judged.age_days,
            eligible_on: judged.eligible.map(|t| t.to_string()),
            status: judged.verdict,
            note: judged.note.clone(),
        }
    });
    let report = Report {
        version: 1,
        min_age_seconds: policy.min_age.as_secs(),
        now: policy.now.to_string(),
        packages: rows.collect(),
        eligible_on: ages.eligible_on().map(|t| t.to_string()),
    };
    Ok((report, ages.failed))
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
