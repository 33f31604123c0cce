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
        main_reports: settings.main_reports.clone(),
        fix_refs: settings.fix_refs.clone(),
        previous: settings.previous.clone(),
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

/// `; likely fixes looked for in 1,204 unmerged refs`.
fn refs_read(report: &TriageReport) -> String {
    match &report.fix_refs {
        Some(read) if read.skipped > 0 => format!(
            "; likely fixes looked for in {} refs ({} with unusual names left out)",
            read.refs, read.skipped
        ),
        Some(read) => format!("; likely fixes looked for in {} refs", read.refs),
        None => String::new(),
    }
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
        "main line {} (merge base {}), branch {}; read: {}{}",
        report.main,
        short_id(&report.merge_base),
        short_id(&report.head),
        totals(report),
        refs_read(report)
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
    print_fixed_text(report);
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
    if let Some(on) = &f.on_main {
        say(&format!("      {}", main_words(on)));
    }
    for fix in &f.possible_fixes {
        say(&format!(
            "      possible fix: {} {} {}{}: {}",
            fix.ref_name,
            short_id(&fix.commit.id),
            fix.commit.subject,
            pr_suffix(fix),
            fix.reason
        ));
    }
}

/// `also on main (main's run at abc1234)`, `only here (main's run passes
/// it)`, `not in main's run`.
fn main_words(on: &triage::OnMain) -> String {
    let at = on
        .commit
        .as_ref()
        .map(|c| format!(" at {}", short_id(c)))
        .unwrap_or_default();
    match on.status {
        triage::MainStatus::AlsoOnMain => format!("also on main (main's run{at} fails it too)"),
        triage::MainStatus::OnlyHere => format!("only here (main's run{at} passes it)"),
        triage::MainStatus::NotRunOnMain => format!("not in main's run{at}"),
    }
}

/// ` (#123)` when the subject does not name the pull request already.
fn pr_suffix(fix: &triage::PossibleFix) -> String {
    match fix.pr {
        Some(n) if !fix.commit.subject.contains(&format!("#{n}")) => format!(" (#{n})"),
        _ => String::new(),
    }
}

fn print_fixed_text(report: &TriageReport) {
    let Some(old) = &report.previous_head else {
        return;
    };
    outln!();
    say(&format!(
        "fixed since the earlier run at {}: {}",
        short_id(old),
        report.fixed.len()
    ));
    for f in &report.fixed {
        say(&format!("  job {}: {}", f.job, f.node_id));
        say(&format!("    {}", f.note));
        for c in &f.commits {
            say(&format!("    fixed since: {}", commit_line(c)));
        }
        if f.more_commits > 0 {
            say(&format!("    … and {} more commits", f.more_commits));
        }
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

/// Commits shown per list in the Markdown comment, to keep it short.
const MD_COMMITS: usize = 3;

/// The report file a failure was read from first: its shard.
fn shard(f: &Failure) -> &str {
    f.seen_in
        .first()
        .and_then(|s| s.rsplit_once(':'))
        .map_or("", |(path, _)| path)
}

/// Like the triage comment a reviewer writes on a pull request: by job and
/// shard, each failure with its cause, the commits, whether main fails it
/// too, and the likely fixes; what was fixed since the earlier run last.
fn print_markdown(report: &TriageReport) {
    outln!("### layerlock triage");
    outln!();
    outln!(
        "Main line {} (merge base `{}`), branch `{}`. Read: {}{}.",
        md_code(&report.main, false),
        short_id(&report.merge_base),
        short_id(&report.head),
        totals(report),
        md_text(&refs_read(report))
    );
    let mut jobs: std::collections::BTreeMap<
        &str,
        std::collections::BTreeMap<&str, Vec<&Failure>>,
    > = std::collections::BTreeMap::new();
    for f in &report.failures {
        jobs.entry(&f.job)
            .or_default()
            .entry(shard(f))
            .or_default()
            .push(f);
    }
    for (job, shards) in jobs {
        outln!();
        outln!(
            "#### {}: {}",
            md_code(job, false),
            md_text(&window_line(report, job))
        );
        let several = shards.len() > 1;
        for (shard, failures) in shards {
            if several {
                outln!();
                outln!("Shard {}:", md_code(shard, false));
            }
            outln!();
            for f in failures {
                print_failure_markdown(f);
            }
        }
    }
    if report.failures.is_empty() {
        outln!();
        outln!("No failing test to triage.");
    }
    if let Some(old) = &report.previous_head {
        outln!();
        outln!(
            "#### Fixed since the earlier run (`{}`): {}",
            short_id(old),
            report.fixed.len()
        );
        outln!();
        for f in &report.fixed {
            outln!(
                "- {} ({}): {}",
                md_code(&f.node_id, false),
                md_code(&f.job, false),
                md_text(&f.note)
            );
            for c in f.commits.iter().take(MD_COMMITS) {
                outln!("  - fixed since: {}", commit_cell(c));
            }
        }
    }
}

fn print_failure_markdown(f: &Failure) {
    outln!(
        "- {} — **{}**: {}",
        md_code(&f.node_id, false),
        f.cause.as_str(),
        md_text(&f.note)
    );
    if let Some(message) = &f.message {
        outln!("  - error: {}", md_code(message, false));
    }
    if let Some(on) = &f.on_main {
        outln!("  - {}", md_text(&main_words(on)));
    }
    if let Some(x) = &f.xfail {
        outln!(
            "  - xfail at {}",
            md_code(&format!("{}:{}", x.path, x.line), false)
        );
    }
    let label = if f.xfail.is_some() {
        "since the xfail"
    } else {
        "while dark"
    };
    let shown = |list: &[CommitInfo], label: &str| {
        for c in list.iter().take(MD_COMMITS) {
            outln!("  - {label}: {}", commit_cell(c));
        }
        if list.len() > MD_COMMITS {
            outln!("  - … and {} more {label}", list.len() - MD_COMMITS);
        }
    };
    shown(&f.latent, label);
    shown(&f.this_change, "this branch");
    for fix in &f.possible_fixes {
        outln!(
            "  - possible fix: {} `{}` {}{}: {}",
            md_code(&fix.ref_name, false),
            short_id(&fix.commit.id),
            md_text(&fix.commit.subject),
            pr_suffix(fix),
            md_text(&fix.reason)
        );
    }
}
