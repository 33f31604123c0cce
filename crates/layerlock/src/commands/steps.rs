//! `layerlock steps`: every Buildkite step has a stable, unique key.

use std::process::ExitCode;

use anyhow::Result;

use layerlock_audit::check_steps;

use crate::cli::FormatArg;
use crate::settings::StepsSettings;

pub fn run(settings: &StepsSettings) -> Result<ExitCode> {
    let root = &settings.root;
    let pipelines = settings.pipelines.clone().unwrap_or_else(|| {
        layerlock_audit::pipelines::discover(root)
            .into_iter()
            .map(|p| p.paths.iter().map(|d| root.join(d)).collect())
            .collect()
    });
    let mut groups: Vec<Vec<(String, String)>> = Vec::new();
    for roots in &pipelines {
        let (files, errors) = layerlock_audit::pipelines::pipeline_files(roots, root);
        if let Some((path, message)) = errors.first() {
            anyhow::bail!("{}: {message}", path.display());
        }
        let mut inputs = Vec::new();
        for (file, text) in files {
            let real = fs_err::canonicalize(&file).unwrap_or(file);
            let shown = real
                .strip_prefix(&settings.shown_base)
                .or_else(|_| real.strip_prefix(root))
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
    // Fail closed: checking no pipeline is no pass.
    if groups.iter().all(Vec::is_empty) {
        anyhow::bail!(
            "no Buildkite pipeline found (YAML with a `steps:` list under .buildkite/, or the files given); run it from the repository, or name the pipeline files"
        );
    }
    let mut file_count = 0;
    for inputs in &groups {
        file_count += inputs.len();
        let one = check_steps(inputs, &settings.external_keys, settings.no_groups);
        report.problems.extend(one.problems);
        report.steps.extend(one.steps);
    }
    report
        .problems
        .sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
    report.problems.dedup();
    let inputs_len = file_count;
    match settings.format {
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
