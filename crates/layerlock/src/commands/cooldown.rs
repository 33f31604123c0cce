//! `layerlock cooldown`: every package version a lock introduces (relative
//! to its bases, or to the same file at a git revision) must have been
//! uploaded at least the minimum age ago. Ages come from the upload times of
//! exactly the files whose hashes the lock lists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::str::FromStr;

use anyhow::{Context, Result, bail};
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
    pub lock: PathBuf,
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

/// Versions the bases, or the lock at `since`, already have: what this
/// lock does not introduce. Only exact pins count: a base line `foo>=2`
/// says nothing about which version is there.
fn already_there(settings: &CooldownCheck) -> Result<BTreeSet<(PackageName, Version)>> {
    let mut out = BTreeSet::new();
    let mut add = |lock: &Lock| {
        for p in &lock.packages {
            out.insert((p.name.clone(), p.version.clone()));
        }
    };
    for base in &settings.bases {
        let text = layerlock_lock::read_text(base)?;
        add(&Lock::parse_pins(base, &text)?);
    }
    if let Some(rev) = &settings.since {
        let dir = settings
            .lock
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = settings
            .lock
            .file_name()
            .context("the lock path has no file name")?;
        let output = Command::new("git")
            .arg("-C")
            .arg(dir)
            .arg("show")
            .arg(format!("{rev}:./{}", name.to_string_lossy()))
            .output()
            .context("cannot run git")?;
        if output.status.success() {
            let text = String::from_utf8_lossy(&output.stdout);
            add(&Lock::parse_pins(&settings.lock, &text)?);
        } else {
            let stderr = String::from_utf8_lossy(&output.stderr);
            // A lock that did not exist at the revision introduces everything.
            if !(stderr.contains("does not exist") || stderr.contains("exists on disk, but not in"))
            {
                bail!(
                    "git show {rev}:{}: {}",
                    settings.lock.display(),
                    stderr.trim()
                );
            }
        }
    }
    Ok(out)
}

pub fn run(settings: &CooldownCheck) -> Result<ExitCode> {
    let lock = Lock::read(&settings.lock)?;
    if let Some(p) = lock.packages.iter().find(|p| p.hashes.is_empty()) {
        bail!(
            "{}: {}=={} has no --hash; the cooldown reads the upload times of the hashed files (make the lock with `layerlock compile`)",
            p.origin,
            p.name,
            p.version
        );
    }
    let known = already_there(settings)?;
    let introduced: Vec<&layerlock_lock::LockedPackage> = lock
        .packages
        .iter()
        .filter(|p| !known.contains(&(p.name.clone(), p.version.clone())))
        .collect();
    // A pylock.toml records every file's upload time: no index is asked
    // unless a time is missing.
    let complete = |p: &layerlock_lock::LockedPackage| {
        !p.files.is_empty() && p.files.iter().all(|f| f.upload_time.is_some())
    };
    let client = if introduced.iter().all(|p| complete(p)) {
        None
    } else {
        Some(IndexClient::new(&IndexConfig {
            index_urls: settings.index.index_urls.clone(),
            find_links: settings.index.find_links.clone(),
            cache_dir: settings.run.cache_dir.clone(),
            offline: settings.run.offline,
            netrc: settings.run.netrc.clone(),
            timeout: settings.run.timeout,
            retries: 3,
            concurrency: 48,
        })?)
    };
    let policy = &settings.cooldown.policy;
    let mut rows = Vec::new();
    let mut failed = false;
    let mut latest: Option<Timestamp> = None;
    for package in introduced {
        let times: Vec<Option<Timestamp>> = match &client {
            Some(client) if !complete(package) => upload_times(client, package)?,
            _ => package.files.iter().map(|f| f.upload_time).collect(),
        };
        let judged = policy.judge(&package.name, &package.version, &times);
        failed |= judged.verdict.fails();
        if judged.verdict != Verdict::Exempt
            && let Some(e) = judged.eligible
        {
            latest = Some(latest.map_or(e, |l| l.max(e)));
        }
        rows.push(Row {
            name: package.name.to_string(),
            version: package.version.to_string(),
            uploaded: judged.uploaded.map(|t| t.to_string()),
            age_days: judged.age_days,
            eligible_on: judged.eligible.map(|t| t.to_string()),
            status: judged.verdict.as_str(),
            note: judged.note,
        });
    }
    let report = Report {
        version: 1,
        min_age_seconds: policy.min_age.as_secs(),
        now: policy.now.to_string(),
        packages: rows,
        eligible_on: latest.map(|t| t.to_string()),
    };
    match settings.format {
        FormatArg::Json => outln!("{}", serde_json::to_string_pretty(&report)?),
        FormatArg::Text => {
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
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `2026-11-09T22:49:00Z` as `2026-11-09 22:49`.
fn minute(t: &str) -> String {
    Timestamp::from_str(t)
        .map(|t| t.strftime("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|_| t.to_string())
}

/// Upload times of exactly the files whose hashes `package` pins, from the
/// index (simple API, then the JSON API for what it lacks).
fn upload_times(
    client: &IndexClient,
    package: &layerlock_lock::LockedPackage,
) -> Result<Vec<Option<Timestamp>>> {
    let mut times: BTreeMap<String, Option<Timestamp>> =
        package.sha256s().map(|h| (h, None)).collect();
    match client.project(&package.name)?.as_ref() {
        ProjectAnswer::Found(project) => {
            for file in &project.files {
                if let Some(sha) = &file.sha256
                    && let Some(slot) = times.get_mut(sha)
                {
                    *slot = file.upload_time.or(*slot);
                }
            }
        }
        // Fail closed: offline without the data is not a verdict.
        ProjectAnswer::NotCached { asked } => bail!(
            "--offline, and the cache holds no page for {} (asked: {}); run once online, or drop --offline",
            package.name,
            asked.join(", ")
        ),
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
    Ok(times.into_values().collect())
}
