//! `layerlock audit`: find job-time installs in CI configuration and report
//! them through the allowlist and inline ignores.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};

use layerlock_audit::{ScanOptions, Severity, apply, parse_allowlist, scan};

use crate::cli::AuditFormat;

#[derive(Debug, Clone)]
pub struct AuditSettings {
    /// A container path, mapped through the path map when scanning.
    pub default_working_dir: Option<String>,
    pub root: PathBuf,
    pub targets: Vec<PathBuf>,
    pub path_map: Vec<(String, PathBuf)>,
    pub allowlist: Option<PathBuf>,
    pub format: AuditFormat,
    pub min_severity: Severity,
    pub strict: bool,
}

pub fn run(settings: &AuditSettings) -> Result<ExitCode> {
    let allowlist = match &settings.allowlist {
        Some(path) => {
            let text = layerlock_lock::read_text(path).context("cannot read the allowlist")?;
            let shown = path
                .strip_prefix(&settings.root)
                .unwrap_or(path)
                .display()
                .to_string();
            parse_allowlist(&text, &shown)
                .with_context(|| format!("the allowlist {shown} cannot be read"))?
        }
        None => Vec::new(),
    };
    let mut options = ScanOptions {
        root: settings.root.clone(),
        targets: settings.targets.clone(),
        path_map: settings.path_map.clone(),
        default_working_dir: None,
    };
    options.default_working_dir = settings.default_working_dir.as_deref().map(|d| {
        let mapped = options.map(d);
        if mapped.is_absolute() {
            mapped
        } else {
            options.root.join(mapped)
        }
    });
    let result = scan(&options);
    // Each file is read once, however many findings it has.
    let root = settings.root.clone();
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
    let out = match settings.format {
        AuditFormat::Text => layerlock_audit::text(&sorted, &result.errors, &lines),
        AuditFormat::Json => layerlock_audit::json(&sorted, &result.errors),
        AuditFormat::Sarif => layerlock_audit::sarif(&sorted),
        AuditFormat::Github => layerlock_audit::github(&sorted),
    };
    out!("{out}");
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
