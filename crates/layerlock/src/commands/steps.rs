//! `layerlock steps`: every Buildkite step has a stable, unique key.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;

use layerlock_audit::check_steps;

use crate::cli::{FormatArg, StepsArgs};
use crate::config::Config;
use crate::settings::Environment;

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
    let root = fs_err::canonicalize(&root).unwrap_or(root);
    // Each pipeline is checked on its own: keys are unique within one.
    let pipelines: Vec<Vec<PathBuf>> = if !args.paths.is_empty() {
        vec![args.paths.iter().map(|p| env.cwd.join(p)).collect()]
    } else if !steps.pipelines.is_empty() {
        steps.pipelines.iter().map(|p| vec![root.join(p)]).collect()
    } else if !steps.paths.is_empty() {
        vec![steps.paths.iter().map(|p| root.join(p)).collect()]
    } else {
        layerlock_audit::pipelines::discover(&root)
            .into_iter()
            .map(|p| p.paths.iter().map(|d| root.join(d)).collect())
            .collect()
    };
    // Paths are shown as they are from the working directory (or the
    // root, when that is where the config put them).
    let shown_base = fs_err::canonicalize(&env.cwd).unwrap_or_else(|_| env.cwd.clone());
    let mut groups: Vec<Vec<(String, String)>> = Vec::new();
    for roots in &pipelines {
        let (files, errors) = layerlock_audit::pipelines::pipeline_files(roots, &root);
        if let Some((path, message)) = errors.first() {
            anyhow::bail!("cannot read {}: {message}", path.display());
        }
        let mut inputs = Vec::new();
        for (file, text) in files {
            let real = fs_err::canonicalize(&file).unwrap_or(file);
            let shown = real
                .strip_prefix(&shown_base)
                .or_else(|_| real.strip_prefix(&root))
                .unwrap_or(&real)
                .display()
                .to_string();
            inputs.push((shown, text));
        }
        groups.push(inputs);
    }
    let mut report = layerlock_audit::StepsReport {
        version: 1,
        ..Default::default()
    };
    let mut file_count = 0;
    for inputs in &groups {
        file_count += inputs.len();
        let one = check_steps(
            inputs,
            &steps.external_keys,
            args.no_groups || steps.no_groups.unwrap_or(false),
        );
        report.problems.extend(one.problems);
        report.steps.extend(one.steps);
    }
    report
        .problems
        .sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
    report.problems.dedup();
    let inputs_len = file_count;
    match args.format {
        FormatArg::Json => outln!("{}", serde_json::to_string_pretty(&report)?),
        FormatArg::Text => {
            for p in &report.problems {
                outln!("{}:{}:{}: {}", p.path, p.line, p.column, p.message);
            }
            outln!(
                "{} step{} in {} pipeline file{}; {} problem{}",
                report.steps.len(),
                if report.steps.len() == 1 { "" } else { "s" },
                inputs_len,
                if inputs_len == 1 { "" } else { "s" },
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
