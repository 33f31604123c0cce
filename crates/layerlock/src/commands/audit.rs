//! `layerlock audit`: find job-time installs in CI configuration and report
//! them through the allowlist and inline ignores.

use std::process::ExitCode;

use anyhow::{Context, Result};

use layerlock_audit::{apply, parse_allowlist, scan};

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
    // Each file is read once, however many findings it has.
    let root = settings.scan.root.clone();
    type Lines = Option<std::rc::Rc<Vec<String>>>;
    let cache: std::cell::RefCell<std::collections::BTreeMap<String, Lines>> =
        std::cell::RefCell::default();
    let lines = move |path: &str| -> Lines {
        cache
            .borrow_mut()
            .entry(path.to_string())
            .or_insert_with(|| {
                let text = fs_err::read_to_string(root.join(path)).ok()?;
                Some(std::rc::Rc::new(text.lines().map(str::to_string).collect()))
            })
            .clone()
    };
    let sorted = apply(result.findings, &allowlist, &lines);
    match settings.format {
        AuditFormat::Text => {
            stream_stdout(|out| layerlock_audit::text(&sorted, &result.errors, &lines, out))
        }
        AuditFormat::Json => {
            stream_stdout(|out| layerlock_audit::json(&sorted, &result.errors, out))
        }
        AuditFormat::Sarif => out!("{}", layerlock_audit::sarif(&sorted)),
        AuditFormat::Github => out!("{}", layerlock_audit::github(&sorted)),
    }
    if !matches!(settings.format, AuditFormat::Text) {
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
