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

use layerlock_dist::{PackageSource, ProjectAnswer};
use layerlock_index::{IndexClient, IndexConfig};
use layerlock_lock::RequirementsFile;

use crate::cli::FormatArg;
use crate::environment::{Lock, read_lock};
use crate::layer::date;
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

/// `name==version` pairs pinned by the bases or by the lock at `since`.
fn already_there(settings: &CooldownCheck) -> Result<BTreeSet<(String, String)>> {
    let mut out = BTreeSet::new();
    let mut add = |file: &RequirementsFile| {
        for entry in &file.entries {
            if let Some(uv_pep508::VersionOrUrl::VersionSpecifier(specs)) =
                &entry.requirement.version_or_url
                && let [spec] = specs.iter().collect::<Vec<_>>().as_slice()
            {
                out.insert((
                    entry.requirement.name.to_string(),
                    spec.version().to_string(),
                ));
            }
        }
    };
    for base in &settings.bases {
        add(&RequirementsFile::read(base)?);
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
            add(&RequirementsFile::parse(&settings.lock, &text)?);
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
    let lock: Lock = read_lock(&settings.lock)?;
    if let Some(entry) = lock.entries.iter().find(|e| e.hashes.is_empty()) {
        bail!(
            "{}: {}=={} has no --hash; the cooldown reads the upload times of the hashed files (make the lock with `layerlock compile`)",
            entry.wanted.origin,
            entry.wanted.name,
            entry.wanted.version
        );
    }
    let known = already_there(settings)?;
    let client = IndexClient::new(&IndexConfig {
        index_urls: settings.index.index_urls.clone(),
        find_links: settings.index.find_links.clone(),
        cache_dir: settings.run.cache_dir.clone(),
        offline: settings.run.offline,
        netrc: settings.run.netrc.clone(),
        timeout: settings.run.timeout,
        retries: 3,
        concurrency: 48,
    })?;
    let cooldown = &settings.cooldown;
    let in_force = cooldown.exempt_now();
    let mut rows = Vec::new();
    let mut failed = false;
    let mut latest: Option<Timestamp> = None;
    for entry in &lock.entries {
        let want = &entry.wanted;
        if known.contains(&(want.name.clone(), want.version.clone())) {
            continue;
        }
        let name = PackageName::from_str(&want.name)?;
        let hashes: BTreeSet<String> = entry
            .hashes
            .iter()
            .filter_map(|h| h.strip_prefix("sha256:"))
            .map(str::to_ascii_lowercase)
            .collect();
        let mut times: BTreeMap<String, Option<Timestamp>> =
            hashes.iter().map(|h| (h.clone(), None)).collect();
        match client.project(&name)?.as_ref() {
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
                want.name,
                asked.join(", ")
            ),
            ProjectAnswer::NotFound { .. } => {}
        }
        if times.values().any(Option::is_none) {
            let fallback = client.json_api_upload_times(&name, &want.version);
            for (sha, slot) in &mut times {
                if slot.is_none() {
                    *slot = fallback.get(sha).copied();
                }
            }
        }
        let missing = times.is_empty() || times.values().any(Option::is_none);
        // The set is old enough once its newest file is.
        let uploaded = times.values().flatten().max().copied();
        let eligible = uploaded.and_then(|t| t.checked_add(cooldown.min_age).ok());
        let exemption = cooldown
            .exempt
            .iter()
            .find(|e| PackageName::from_str(&e.package).is_ok_and(|p| p == name));
        let young = eligible.is_some_and(|e| e > cooldown.now);
        let mut note = None;
        let status = if in_force.contains(&name) {
            if let Some(e) = exemption {
                note = Some(e.reason.clone());
            }
            "exempt"
        } else if missing && !settings.cooldown.allow_missing_time {
            failed = true;
            note =
                Some("no upload time for the locked files (simple API and JSON API)".to_string());
            "unknown upload time"
        } else if young {
            failed = true;
            if let Some(e) = exemption {
                note = Some(format!(
                    "exemption expired on {} ({})",
                    e.until.map(date).unwrap_or_default(),
                    e.reason
                ));
                "exemption expired"
            } else {
                "too young"
            }
        } else {
            if let Some(e) = exemption {
                note = Some(format!(
                    "exemption expired on {}; no longer needed",
                    e.until.map(date).unwrap_or_default()
                ));
            }
            "ok"
        };
        if status != "exempt"
            && let Some(e) = eligible
        {
            latest = Some(latest.map_or(e, |l| l.max(e)));
        }
        rows.push(Row {
            name: want.name.clone(),
            version: want.version.clone(),
            uploaded: uploaded.map(|t| t.to_string()),
            age_days: uploaded.map(|t| {
                let secs = cooldown.now.as_second() - t.as_second();
                (secs as f64 / 8640.0).round() / 10.0
            }),
            eligible_on: eligible.map(date),
            status,
            note,
        });
    }
    let report = Report {
        version: 1,
        min_age_seconds: cooldown.min_age.as_secs(),
        now: cooldown.now.to_string(),
        packages: rows,
        eligible_on: latest.map(date),
    };
    match settings.format {
        FormatArg::Json => outln!("{}", serde_json::to_string_pretty(&report)?),
        FormatArg::Text => {
            outln!(
                "{:<32} {:<16} {:<11} {:>7} {:<11} status",
                "package",
                "version",
                "uploaded",
                "age (d)",
                "eligible on"
            );
            for r in &report.packages {
                outln!(
                    "{:<32} {:<16} {:<11} {:>7} {:<11} {}{}",
                    r.name,
                    r.version,
                    r.uploaded.as_deref().map_or("-", |u| &u[..10.min(u.len())]),
                    r.age_days.map_or("-".to_string(), |a| format!("{a:.1}")),
                    r.eligible_on.as_deref().unwrap_or("-"),
                    r.status,
                    r.note
                        .as_ref()
                        .map(|n| format!(" ({n})"))
                        .unwrap_or_default()
                );
            }
            match &report.eligible_on {
                Some(d) => outln!("eligible from {d}"),
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
