//! `layerlock steps`: every Buildkite step has a stable, unique key.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;

use layerlock_audit::check_steps;

use crate::cli::{FormatArg, StepsArgs};
use crate::config::Config;
use crate::settings::Environment;

fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = fs_err::read_dir(path) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            collect(&entry, out);
        } else if entry.extension().is_some_and(|e| e == "yml" || e == "yaml") {
            out.push(entry);
        }
    }
}

pub fn run(args: &StepsArgs, env: &Environment) -> Result<ExitCode> {
    let config = Config::find(args.config.as_deref(), &env.cwd)?;
    let steps = config
        .as_ref()
        .and_then(|c| c.file.steps.clone())
        .unwrap_or_default();
    let root = config
        .as_ref()
        .map(|c| env.cwd.join(&c.root))
        .unwrap_or_else(|| env.cwd.clone());
    let roots: Vec<PathBuf> = if !args.paths.is_empty() {
        args.paths.iter().map(|p| env.cwd.join(p)).collect()
    } else if !steps.paths.is_empty() {
        steps.paths.iter().map(|p| root.join(p)).collect()
    } else {
        vec![root.join(".buildkite")]
    };
    let shown_root = match roots.as_slice() {
        [one] if one.is_dir() => one
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| root.clone()),
        _ => root.clone(),
    };
    let mut files = Vec::new();
    for r in &roots {
        collect(r, &mut files);
    }
    let mut inputs = Vec::new();
    for file in files {
        let text = fs_err::read_to_string(&file)?;
        // Only pipelines: YAML with steps (a bare list under .buildkite too).
        let is_pipeline = layerlock_ci::yaml::parse(&text)
            .map(|docs| {
                docs.iter().any(|d| {
                    d.get("steps").is_some() || matches!(d, layerlock_ci::yaml::Node::Seq { .. })
                })
            })
            .unwrap_or(true);
        if !is_pipeline {
            continue;
        }
        let shown = file
            .strip_prefix(&shown_root)
            .unwrap_or(&file)
            .display()
            .to_string();
        inputs.push((shown, text));
    }
    let report = check_steps(
        &inputs,
        &steps.external_keys,
        args.no_groups || steps.no_groups.unwrap_or(false),
    );
    match args.format {
        FormatArg::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        FormatArg::Text => {
            for p in &report.problems {
                println!("{}:{}:{}: {}", p.path, p.line, p.column, p.message);
            }
            println!(
                "{} step{} in {} pipeline file{}; {} problem{}",
                report.steps.len(),
                if report.steps.len() == 1 { "" } else { "s" },
                inputs.len(),
                if inputs.len() == 1 { "" } else { "s" },
                report.problems.len(),
                if report.problems.len() == 1 { "" } else { "s" }
            );
        }
    }
    Ok(if report.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
