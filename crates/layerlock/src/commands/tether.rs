//! `layerlock tether`: every test file is run by some CI step.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use layerlock_audit::{
    NotChecked, check_tether, collect_runs, explain, inventory, parse_tether_allowlist,
};

use crate::cli::FormatArg;
use crate::settings::TetherSettings;

pub fn run(settings: &TetherSettings) -> Result<ExitCode> {
    let mut options = settings.options.clone();
    options.scan.targets = layerlock_audit::tether_targets(&options.scan.root, &settings.pipelines);
    let options = &options;
    let root = &options.scan.root;
    let (runs, errors) = collect_runs(options);
    for e in &errors {
        diag!("error: {}:{}:{}: {}", e.path, e.line, e.column, e.message);
    }
    let tests = inventory(root, &options.test_roots);
    if tests.is_empty() && settings.explain.is_none() {
        // Fail closed: checking nothing is not a pass.
        bail!(
            "no test files (test_*.py, *_test.py) under {} in {}; set [tether] test-roots, or run from the repository",
            options.test_roots.join(", "),
            root.display()
        );
    }
    if let Some(file) = &settings.explain {
        let given = &file.given;
        match fs_err::metadata(&file.path) {
            Err(_) => bail!("{given} does not exist"),
            Ok(meta) if !meta.is_file() => bail!("{given} is not a regular file"),
            Ok(_) => {}
        }
        let real = fs_err::canonicalize(&file.path)?;
        if !real.starts_with(root) {
            bail!("{given} is outside the repository ({})", root.display());
        }
        for line in explain(&file.relative, &runs, &tests) {
            outln!("{line}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let allowlist = match &settings.allowlist {
        Some(file) => {
            let text = layerlock_lock::read_text(&file.path)?;
            parse_tether_allowlist(&text, &file.shown)
                .context("the tethering allowlist cannot be read")?
        }
        None => Vec::new(),
    };
    if let Some(files) = &settings.only {
        let roots = options.test_roots.join(", ");
        let (skipped, none) = layerlock_audit::not_checked(files, &tests, root);
        for (file, why) in skipped {
            match why {
                NotChecked::Missing => diag!("note: {file} does not exist"),
                NotChecked::NotATestFile => diag!(
                    "note: {file} is not a test file (test_*.py, *_test.py) under the test roots ({roots}); not checked"
                ),
            }
        }
        // Fail closed: files were named and none of them was checked.
        if none {
            bail!(
                "none of the {} given file{} is a test file under the test roots ({roots}); set [tether] test-roots to include {}",
                files.len(),
                if files.len() == 1 { "" } else { "s" },
                if files.len() == 1 { "it" } else { "them" }
            );
        }
    }
    let report = check_tether(&tests, settings.only.as_deref(), &runs, &allowlist, root);
    match settings.format {
        FormatArg::Json => outln!("{}", serde_json::to_string_pretty(&report)?),
        FormatArg::Text => print_text(settings, &report, &runs, root),
    }
    if !errors.is_empty() {
        return Ok(ExitCode::from(2));
    }
    Ok(if report.fails(settings.all) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The report as text: the untethered files (or, when nearly all are and
/// nothing is configured, the likely cause and the first ten), stale
/// allowlist entries, and a summary line.
fn print_text(
    settings: &TetherSettings,
    report: &layerlock_audit::TetherReport,
    runs: &[layerlock_audit::StepRun],
    root: &std::path::Path,
) {
    // With no configuration and nearly nothing tethered, the cause
    // is almost always where steps run: say that, not every file.
    let hints = if !settings.configured && report.mostly_untethered() {
        layerlock_audit::diagnose(runs, root)
    } else {
        Vec::new()
    };
    let shown = if hints.is_empty() {
        report.untethered.len()
    } else {
        report.untethered.len().min(10)
    };
    if !hints.is_empty() {
        outln!(
            "note: {} of {} test files are untethered, and there is no [tether] configuration: the CI's test paths do not resolve from the repository root",
            report.untethered.len(),
            report.checked
        );
        for hint in &hints {
            outln!("hint: {hint}");
        }
    }
    for file in &report.untethered[..shown] {
        outln!("untethered: {file} (no CI step runs it; `layerlock tether --explain {file}`)");
    }
    if shown < report.untethered.len() {
        outln!(
            "… and {} more untethered (configure as hinted above; --format json lists them all)",
            report.untethered.len() - shown
        );
    }
    for stale in &report.stale {
        outln!(
            "{}: stale allowlist entry {}: {}",
            if settings.all { "error" } else { "note" },
            stale.path,
            stale.why
        );
    }
    outln!(
        "{} test file{} checked: {} tethered, {} allowlisted, {} untethered, {} stale allowlist entr{}; {} CI test commands",
        report.checked,
        if report.checked == 1 { "" } else { "s" },
        report.tethered.len(),
        report.allowed.len(),
        report.untethered.len(),
        report.stale.len(),
        if report.stale.len() == 1 { "y" } else { "ies" },
        runs.len()
    );
}
