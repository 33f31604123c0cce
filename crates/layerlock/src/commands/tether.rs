//! `layerlock tether`: every test file is run by some CI step.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use layerlock_audit::{
    ScanOptions, TetherOptions, check_tether, collect_runs, explain, inventory,
    parse_tether_allowlist,
};

use crate::cli::{FormatArg, TetherArgs};
use crate::config::Config;
use crate::settings::Environment;

fn path_maps(raw: &[String], base: &Path) -> Result<Vec<(String, PathBuf)>> {
    raw.iter()
        .map(|m| {
            let Some((container, dir)) = m
                .split_once('=')
                .filter(|(c, d)| c.starts_with('/') && c.len() > 1 && !d.is_empty())
            else {
                bail!("path map `{m}` is not CONTAINER=DIR with an absolute container path (e.g. /vllm-workspace=.)");
            };
            let dir = base.join(dir);
            Ok((
                container.trim_end_matches('/').to_string(),
                fs_err::canonicalize(&dir).unwrap_or(dir),
            ))
        })
        .collect()
}

pub fn run(args: &TetherArgs, env: &Environment) -> Result<ExitCode> {
    let config = Config::find(args.config.as_deref(), &env.cwd)?;
    let tether = config
        .as_ref()
        .and_then(|c| c.file.tether.clone())
        .unwrap_or_default();
    let audit = config
        .as_ref()
        .and_then(|c| c.file.audit.clone())
        .unwrap_or_default();
    let root = config
        .as_ref()
        .map(|c| env.cwd.join(&c.root))
        .unwrap_or_else(|| env.cwd.clone());
    let root = fs_err::canonicalize(&root).unwrap_or(root);
    let mut maps = path_maps(&args.path_map, &env.cwd)?;
    let configured = if tether.path_map.is_empty() {
        &audit.path_map
    } else {
        &tether.path_map
    };
    maps.extend(path_maps(configured, &root)?);
    let pipelines: Vec<String> = if !tether.pipelines.is_empty() {
        tether.pipelines.clone()
    } else {
        let discovered = layerlock_audit::pipelines::discover(&root);
        let mut p = layerlock_audit::pipelines::all_paths(&discovered);
        p.extend(layerlock_audit::pipelines::loose_files(&root, &discovered));
        p.extend([
            ".github/workflows".to_string(),
            ".gitlab-ci.yml".to_string(),
        ]);
        p
    };
    let targets: Vec<PathBuf> = pipelines
        .iter()
        .map(|p| root.join(p))
        .filter(|p| p.exists())
        .collect();
    let mut scan = ScanOptions {
        root: root.clone(),
        targets,
        path_map: maps,
        default_working_dir: None,
    };
    let default_working_dir = tether.default_working_dir.as_deref().map(|d| {
        let mapped = scan.map(d);
        if mapped.is_absolute() {
            mapped
        } else {
            root.join(mapped)
        }
    });
    scan.default_working_dir = default_working_dir.clone();
    let options = TetherOptions {
        scan,
        test_roots: if tether.test_roots.is_empty() {
            vec!["tests".to_string()]
        } else {
            tether.test_roots.clone()
        },
        default_working_dir,
    };
    let (runs, errors) = collect_runs(&options);
    for e in &errors {
        diag!("error: {}:{}:{}: {}", e.path, e.line, e.column, e.message);
    }
    let tests = inventory(&root, &options.test_roots);
    if tests.is_empty() && args.explain.is_none() {
        // Fail closed: checking nothing is not a pass.
        bail!(
            "no test files (test_*.py, *_test.py) under {} in {}; set [tether] test-roots, or run from the repository",
            options.test_roots.join(", "),
            root.display()
        );
    }
    if let Some(file) = &args.explain {
        let path = env.cwd.join(file);
        match fs_err::metadata(&path) {
            Err(_) => bail!("{file} does not exist"),
            Ok(meta) if !meta.is_file() => bail!("{file} is not a regular file"),
            Ok(_) => {}
        }
        let real = fs_err::canonicalize(&path)?;
        if !real.starts_with(&root) {
            bail!("{file} is outside the repository ({})", root.display());
        }
        let rel = relative(&path, &root);
        for line in explain(&rel, &runs, &tests) {
            outln!("{line}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let allowlist_path = args
        .allowlist
        .as_ref()
        .map(|p| env.cwd.join(p))
        .or_else(|| tether.allowlist.as_ref().map(|p| root.join(p)));
    let allowlist = match &allowlist_path {
        Some(path) => {
            let text = layerlock_lock::read_text(path)?;
            parse_tether_allowlist(&text, &relative(path, &root))
                .context("the tethering allowlist cannot be read")?
        }
        None => Vec::new(),
    };
    let only: Option<Vec<String>> = (!args.files.is_empty() && !args.all).then(|| {
        args.files
            .iter()
            .map(|f| relative(&env.cwd.join(f), &root))
            .collect()
    });
    if let Some(files) = &only {
        for file in files {
            if !root.join(file).exists() {
                diag!("note: {file} does not exist");
            }
        }
    }
    let report = check_tether(&tests, only.as_deref(), &runs, &allowlist, &root);
    match args.format {
        FormatArg::Json => outln!("{}", serde_json::to_string_pretty(&report)?),
        FormatArg::Text => {
            // With no configuration and nearly nothing tethered, the cause
            // is almost always where steps run: say that, not every file.
            let unconfigured = config
                .as_ref()
                .and_then(|c| c.file.tether.as_ref())
                .is_none();
            let mostly = report.checked >= 20 && report.untethered.len() * 10 >= report.checked * 9;
            let hints = if unconfigured && mostly {
                layerlock_audit::diagnose(&runs, &root)
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
                outln!(
                    "untethered: {file} (no CI step runs it; `layerlock tether --explain {file}`)"
                );
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
                    if args.all { "error" } else { "note" },
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
    }
    if !errors.is_empty() {
        return Ok(ExitCode::from(2));
    }
    Ok(
        if !report.untethered.is_empty() || (args.all && !report.stale.is_empty()) {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        },
    )
}

fn relative(path: &Path, root: &Path) -> String {
    let path = fs_err::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    path.strip_prefix(root)
        .unwrap_or(&path)
        .display()
        .to_string()
}
