//! `layerlock cooldown`: every package version a lock introduces (relative
//! to its bases, or to the same file at a git revision) must have been
//! uploaded at least the minimum age ago. Ages come from the upload times of
//! exactly the files whose hashes the lock lists.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;

use anyhow::{Result, anyhow, bail};
use jiff::Timestamp;
use serde::Serialize;

use layerlock_dist::Target;
use layerlock_lock::{Lock, LockedPackage};
use layerlock_resolve::{
    Known, LockAges, UploadTimes, Verdict, lock_targets, recorded_times, upload_times,
};

use crate::cli::FormatArg;
use crate::settings::{CooldownPlan, IndexPlan, RunSettings};

#[derive(Debug, Clone)]
pub struct CooldownCheck {
    /// Each checked in turn.
    pub locks: Vec<PathBuf>,
    /// `--base` files, for every lock.
    pub bases: Vec<PathBuf>,
    /// Each config layer's output (absolute): its layer's index, and each
    /// target's bases (used without `--base`).
    pub layers: std::collections::BTreeMap<PathBuf, LayerOutput>,
    pub since: Option<String>,
    pub cooldown: CooldownPlan,
    pub format: FormatArg,
    /// The flags' index (the config's top level under them).
    pub index: IndexPlan,
    pub run: RunSettings,
}

/// What the config says of one lock it writes.
#[derive(Debug, Clone)]
pub struct LayerOutput {
    pub index: IndexPlan,
    /// Each target the lock holds, with its bases.
    pub targets: Vec<(layerlock_lock::LockTarget, Vec<PathBuf>)>,
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

/// What the bases, and the lock at `--since`, already have: for each
/// target the lock names (with that target's own bases when the config
/// says them), or once when it names none.
fn already_there(settings: &CooldownCheck, lock: &Lock) -> Result<Vec<(Option<Target>, Known)>> {
    let lock_path = &lock.path;
    let layer = settings.layers.get(&absolute(settings, lock_path));
    let since = match &settings.since {
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
        let bases = if settings.bases.is_empty() {
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
            settings.bases.clone()
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
fn since_pins(rev: &str, lock_path: &Path) -> Result<Option<Lock>> {
    let dir = lock_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let git = layerlock_git::Git::open(dir)?;
    match git.file_at(rev, lock_path, layerlock_lock::MAX_FILE_BYTES as usize)? {
        layerlock_git::Blob::Bytes(bytes) => {
            let text = String::from_utf8(bytes)
                .map_err(|_| anyhow!("{} at {rev} is not UTF-8 text", lock_path.display()))?;
            Ok(Some(Lock::parse_pins(lock_path, &text)?))
        }
        layerlock_git::Blob::Missing => Ok(None),
        layerlock_git::Blob::Refused(why) => bail!("{} at {rev}: {why}", lock_path.display()),
    }
}

/// The files of `package` that some target it serves has not had: each
/// target its marker selects judges it against what that target's image
/// (and the lock at `--since`) had; one it selects on no target is new.
fn introduced(known: &[(Option<Target>, Known)], package: &LockedPackage) -> BTreeSet<String> {
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
fn absolute(settings: &CooldownCheck, path: &Path) -> PathBuf {
    layerlock_lock::normalize(&settings.run.cwd.join(path))
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
    // The lock's own layer's index when the config writes it.
    let index = settings
        .layers
        .get(&absolute(settings, path))
        .map_or(&settings.index, |l| &l.index);
    let client = settings
        .run
        .client_settings()
        .client(index.index_urls.clone(), index.find_links.clone())?;
    let policy = &settings.cooldown.policy;
    let mut ages = LockAges::default();
    let mut trusted_lock = false;
    for package in &lock.packages {
        let new = introduced(&known, package);
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
