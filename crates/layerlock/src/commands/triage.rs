//! `layerlock triage`: failing tests of jobs that were dark, against the
//! commits that landed meanwhile on what they read.

use std::process::ExitCode;

use anyhow::Result;

use layerlock_git::Git;
use layerlock_history::{date, short_id};

use super::repo_relative;
use layerlock_history::render::{md_code, md_text, terminal};
use layerlock_history::triage::{
    self, CommitInfo, DarkSince, Failure, TriageOptions, TriageReport,
};

use crate::cli::HistoryFormat;
use crate::settings::TriageSettings;

pub fn run(settings: &TriageSettings) -> Result<ExitCode> {
    let git = Git::open(&settings.dir)?;
    let dark_since = match &settings.dark_since {
        DarkSince::FromBlocks { .. } => DarkSince::FromBlocks {
            paths: repo_relative(
                &git,
                &settings.pipeline_paths,
                "[blocks] paths: ",
                "--dark-since auto",
            )?,
        },
        other => other.clone(),
    };
    let options = TriageOptions {
        reports: settings.reports.clone(),
        dark_since,
        main: settings.main.clone(),
        head: settings.head.clone(),
        depth: settings.depth,
    };
    // Errors quote report and repository text (test names, file names).
    let report = triage::triage(&git, &options)
        .map_err(|e| anyhow::anyhow!("{}", terminal(&e.to_string())))?;
    match settings.format {
        HistoryFormat::Json => outln!("{}", serde_json::to_string_pretty(&report)?),
        HistoryFormat::Text => print_text(&report),
        HistoryFormat::Markdown => print_markdown(&report),
    }
    // Triage explains failures; it fails only when there are failures to
    // explain, so a pipeline can tell "all green" from "read the report".
    Ok(if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn commit_line(c: &CommitInfo) -> String {
    let touched = if c.touched.is_empty() {
        String::new()
    } else {
        format!("  [{}]", c.touched.join(", "))
    };
    format!("{} {} {}{touched}", c.date, short_id(&c.id), c.subject)
}

fn totals(report: &TriageReport) -> String {
    let parts: Vec<String> = report
        .totals
        .iter()
        .map(|(outcome, n)| format!("{n} {outcome}"))
        .collect();
    parts.join(", ")
}

fn window_line(report: &TriageReport, job: &str) -> String {
    match report.windows.iter().find(|w| w.job == job) {
        Some(w) => match &w.disabled_by {
            Some(by) => format!(
                "dark since {} {} ({})",
                short_id(&by.id),
                by.subject,
                date(by.time)
            ),
            // A commit id, shortened; a date, whole.
            None if w.dark_since.bytes().all(|b| b.is_ascii_hexdigit()) => {
                format!("dark since {}", short_id(&w.dark_since))
            }
            None => format!("dark since {}", w.dark_since),
        },
        None => String::new(),
    }
}

/// One line of text output, whatever the reports and the repository put
/// in it.
fn say(line: &str) {
    outln!("{}", terminal(line));
}

fn print_text(report: &TriageReport) {
    say(&format!(
        "main line {} (merge base {}), branch {}; read: {}",
        report.main,
        short_id(&report.merge_base),
        short_id(&report.head),
        totals(report)
    ));
    for (job, causes) in report.by_job_and_cause() {
        outln!();
        say(&format!("job {job}: {}", window_line(report, job)));
        for (cause, failures) in causes {
            say(&format!("  {} ({})", cause.as_str(), failures.len()));
            for f in failures {
                print_failure_text(f);
            }
        }
    }
    if report.failures.is_empty() {
        outln!("no failing test to triage");
    }
}

fn print_failure_text(f: &Failure) {
    say(&format!("    {}", f.node_id));
    if let Some(message) = &f.message {
        say(&format!("      error: {message}"));
    }
    say(&format!("      {}", f.note));
    if let Some(x) = &f.xfail {
        say(&format!(
            "      xfail at {}:{}{}",
            x.path,
            x.line,
            x.added
                .as_ref()
                .map(|c| format!(", added {} in {} {}", c.date, short_id(&c.id), c.subject))
                .unwrap_or_default()
        ));
    }
    let label = if f.xfail.is_some() {
        "since the xfail"
    } else {
        "while dark"
    };
    for c in &f.latent {
        say(&format!("      {label}: {}", commit_line(c)));
    }
    for c in &f.this_change {
        say(&format!("      this branch: {}", commit_line(c)));
    }
    if f.more_commits > 0 {
        say(&format!("      … and {} more commits", f.more_commits));
    }
}

fn commit_cell(c: &CommitInfo) -> String {
    // The subject usually names the PR already.
    let pr = match c.pr {
        Some(n) if !c.subject.contains(&format!("#{n}")) => format!(" (#{n})"),
        _ => String::new(),
    };
    format!(
        "`{}` {} {}{pr}",
        short_id(&c.id),
        c.date,
        md_text(&c.subject)
    )
}

fn print_markdown(report: &TriageReport) {
    outln!("### layerlock triage");
    outln!();
    outln!(
        "Main line {} (merge base `{}`), branch `{}`. Read: {}.",
        md_code(&report.main, false),
        short_id(&report.merge_base),
        short_id(&report.head),
        totals(report)
    );
    for (job, causes) in report.by_job_and_cause() {
        outln!();
        outln!(
            "#### {}: {}",
            md_code(job, false),
            md_text(&window_line(report, job))
        );
        for (cause, failures) in causes {
            outln!();
            outln!("**{}** ({})", cause.as_str(), failures.len());
            outln!();
            outln!("| Test | Error | Why | Commits |");
            outln!("|---|---|---|---|");
            for f in failures {
                let commits: Vec<String> = f
                    .latent
                    .iter()
                    .map(commit_cell)
                    .chain(
                        f.this_change
                            .iter()
                            .map(|c| format!("this branch: {}", commit_cell(c))),
                    )
                    .collect();
                let mut why = md_text(&f.note);
                if let Some(x) = &f.xfail {
                    why = format!(
                        "{why} ({})",
                        md_code(&format!("{}:{}", x.path, x.line), true)
                    );
                }
                outln!(
                    "| {} | {} | {} | {} |",
                    md_code(&f.node_id, true),
                    f.message.as_deref().map(md_text).unwrap_or_default(),
                    why,
                    commits.join("<br>")
                );
            }
        }
    }
}
