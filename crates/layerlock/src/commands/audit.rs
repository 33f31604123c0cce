//! `layerlock audit`: find job-time installs in CI configuration and report
//! them through the allowlist and inline ignores.

use std::process::ExitCode;

use anyhow::{Context, Result};

use layerlock_audit::{Coverage, apply, parse_allowlist, scan};

use crate::cli::AuditFormat;
use crate::printer::stream_stdout;
use crate::settings::AuditSettings;

pub fn run(settings: &AuditSettings) -> Result<ExitCode> {
    let allowlist = match &settings.allowlist {
        Some(file) => {
            let text =
                layerlock_lock::read_text(&file.path).context("cannot read the allowlist")?;
            parse_allowlist(&text, &file.shown)
                .with_context(|| format!("the allowlist {} cannot be read", file.shown))?
        }
        None => Vec::new(),
    };
    let result = scan(&settings.scan);
    // Fail closed: a walk that read nothing audited nothing (unless what it
    // found is a CI system it does not read: that is named below).
    if result.files.is_empty() && result.errors.is_empty() && result.findings.is_empty() {
        anyhow::bail!(
            "no CI file or script found in {} (looked for .buildkite/, .github/workflows/ and actions, .gitlab-ci.yml, Dockerfiles, and the scripts they run); run it from the repository, or name the files",
            settings
                .scan
                .targets
                .iter()
                .map(|t| t.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    // Each file is read once, however many findings it has.
    let source = layerlock_audit::SourceLines::new(&settings.scan.root);
    let lines = |path: &str| source.get(path);
    let sorted = apply(result.findings, &allowlist, &lines);
    if let Some(file) = &settings.write_baseline {
        let text = layerlock_audit::baseline(&sorted.reported);
        layerlock_lock::write_atomic(file, &text)
            .with_context(|| format!("cannot write the baseline {}", file.display()))?;
        let n = text.lines().filter(|l| !l.starts_with('#')).count();
        diag!(
            "wrote {n} entr{} to {} (point --allowlist at it, or name it .layerlock-allowlist)",
            if n == 1 { "y" } else { "ies" },
            file.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let coverage = Coverage::new(result.commands, &sorted);
    match settings.format {
        AuditFormat::Text => stream_stdout(|out| {
            layerlock_audit::text(&sorted, coverage, &result.errors, &lines, out)
        }),
        AuditFormat::Json => {
            stream_stdout(|out| layerlock_audit::json(&sorted, coverage, &result.errors, out))
        }
        AuditFormat::Sarif => stream_stdout(|out| layerlock_audit::sarif(&sorted, out)),
        AuditFormat::Github => out!("{}", layerlock_audit::github(&sorted)),
    }
    if !matches!(settings.format, AuditFormat::Text) {
        // The text report ends with this; the others say it on stderr, so
        // a machine-readable report never hides how little was read.
        diag!("{}", coverage.said());
        for e in &result.errors {
            diag!("error: {}:{}:{}: {}", e.path, e.line, e.column, e.message);
        }
    }
    if !result.errors.is_empty() {
        return Ok(ExitCode::from(2));
    }
    let failing = sorted
        .reported
        .iter()
        .any(|f| f.severity >= settings.min_severity);
    Ok(
        if failing || (settings.strict && !sorted.stale.is_empty()) {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        },
    )
}
