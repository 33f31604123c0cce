//! `layerlock cooldown`: every package version a lock introduces (relative
//! to its bases, or to the same file at a git revision) must have been
//! uploaded at least the minimum age ago. Ages come from the upload times of
//! exactly the files whose hashes the lock lists.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use layerlock_compile::{CooldownInput, CooldownReport, check_cooldown, take_from_source};
use layerlock_lock::Lock;

use crate::cli::FormatArg;
use crate::settings::CooldownCheck;

pub fn run(settings: &CooldownCheck) -> Result<ExitCode> {
    let input = CooldownInput {
        bases: settings.bases.clone(),
        layers: settings.layers.clone(),
        since: settings.since.clone(),
        policy: settings.cooldown.policy.clone(),
        index: settings.index.clone(),
        cwd: settings.run.cwd.clone(),
    };
    let mut reports = Vec::new();
    let mut failed = false;
    for path in &settings.locks {
        let (report, bad) = check(settings, &input, path)?;
        failed |= bad;
        reports.push((path, report));
    }
    match settings.format {
        // One lock: the report; several: an array of them.
        FormatArg::Json => match reports.as_slice() {
            [(_, report)] => outln!("{}", serde_json::to_string_pretty(report)?),
            many => {
                let all: Vec<&CooldownReport> = many.iter().map(|(_, r)| r).collect();
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
fn check(
    settings: &CooldownCheck,
    input: &CooldownInput,
    path: &Path,
) -> Result<(CooldownReport, bool)> {
    let mut lock = Lock::read(path)?;
    crate::environment::refuse_empty(path, &lock)?;
    let from_source = take_from_source(&mut lock);
    if !from_source.is_empty() && !settings.run.quiet {
        diag!(
            "note: {}: not judged, locked from source rather than released on an index: {}",
            path.display(),
            from_source.join(", ")
        );
    }
    let judged = check_cooldown(input, &lock, |index| {
        Ok(settings
            .run
            .client_settings()
            .client(index.index_urls.clone(), index.find_links.clone())?)
    })?;
    if judged.recorded_times && !settings.run.quiet {
        diag!(
            "warning: upload times are the ones {} records (--offline, nothing cached); an index was not asked to confirm them",
            path.display()
        );
    }
    Ok((judged.report, judged.failed))
}

fn print_text(report: &CooldownReport) {
    out!("{}", report.text());
}
