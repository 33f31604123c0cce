//! `layerlock blocks`: CI steps in the working tree against a revision, or
//! against their definition before the commit that disabled them.

use std::process::ExitCode;

use anyhow::Result;

use layerlock_ci::jobs::Value;
use layerlock_git::Git;
use layerlock_history::blocks::{
    self, Baseline, BlocksOptions, BlocksReport, FieldChange, Status, StepReport,
};
use layerlock_history::render::{html, md_code, md_fence, md_text, terminal};
use layerlock_history::{ForkPoint, short_id};

use super::repo_relative;

use crate::cli::HistoryFormat;
use crate::settings::BlocksSettings;

pub fn run(settings: &BlocksSettings) -> Result<ExitCode> {
    let git = Git::open(&settings.dir)?;
    let paths = repo_relative(&git, &settings.paths, "", "blocks")?;
    let baseline = match &settings.baseline {
        Baseline::Restored { since } if since.is_empty() => Baseline::Restored {
            since: ForkPoint::find(&git, settings.main.as_deref(), "HEAD")?.merge_base,
        },
        other => other.clone(),
    };
    let options = BlocksOptions {
        paths,
        only: settings.only.clone(),
        edits: settings.edits.clone(),
    };
    // Errors quote repository text (file names, job ids).
    let report = blocks::blocks(&git, &baseline, &options)
        .map_err(|e| anyhow::anyhow!("{}", terminal(&e.to_string())))?;
    let listing_unchanged = !matches!(baseline, Baseline::Since(_));
    match settings.format {
        HistoryFormat::Json => outln!("{}", serde_json::to_string_pretty(&report)?),
        HistoryFormat::Text => print_text(&report, listing_unchanged),
        HistoryFormat::Markdown => print_markdown(&report, listing_unchanged),
    }
    for problem in &report.problems {
        diag!(
            "layerlock: {}",
            terminal(&format!(
                "{}{}: {}",
                problem.path,
                problem
                    .commit
                    .as_deref()
                    .map(|c| format!(" at {}", short_id(c)))
                    .unwrap_or_default(),
                problem.message
            ))
        );
    }
    Ok(if !report.problems.is_empty() {
        ExitCode::from(2)
    } else if report.has_differences() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn shown_value(value: Option<&Value>) -> String {
    match value {
        None => "(absent)".to_string(),
        Some(Value::Scalar(s)) => format!("{s:?}"),
        Some(Value::List(items)) => format!("[{}]", items.join(", ")),
    }
}

/// A multi-line field (an inline script, a long description) as a diff
/// under its path; `None` for one-line values.
fn field_diff(change: &FieldChange) -> Option<String> {
    let text = |v: &Option<Value>| match v {
        Some(Value::Scalar(s)) => Some(s.clone()),
        _ => None,
    };
    let (old, new) = (text(&change.old), text(&change.new));
    if !old.iter().chain(new.iter()).any(|s| s.contains('\n')) {
        return None;
    }
    let (old, new) = (old.unwrap_or_default(), new.unwrap_or_default());
    Some(
        similar::TextDiff::from_lines(&old, &new)
            .unified_diff()
            .context_radius(2)
            .header("before", "now")
            .to_string(),
    )
}

/// A field change in words: list items added and removed, else old → new.
fn field_line(change: &FieldChange) -> String {
    if field_diff(change).is_some() {
        return format!("{}: (several lines; diff below)", change.path);
    }
    if let (Some(Value::List(old)), Some(Value::List(new))) = (&change.old, &change.new) {
        let added: Vec<&String> = new.iter().filter(|i| !old.contains(i)).collect();
        let removed: Vec<&String> = old.iter().filter(|i| !new.contains(i)).collect();
        if !added.is_empty() || !removed.is_empty() {
            let mut parts: Vec<String> = added.iter().map(|i| format!("+ {i}")).collect();
            parts.extend(removed.iter().map(|i| format!("- {i}")));
            return format!("{}: {}", change.path, parts.join(", "));
        }
        return format!("{}: same items, new order", change.path);
    }
    format!(
        "{}: {} → {}",
        change.path,
        shown_value(change.old.as_ref()),
        shown_value(change.new.as_ref())
    )
}

fn site(step: &StepReport) -> String {
    match (&step.new, &step.old) {
        (Some(new), Some(old)) => format!(
            "{}:{} (was {}:{} at {})",
            new.path,
            new.line,
            old.path,
            old.line,
            old.commit.as_deref().map(short_id).unwrap_or("?")
        ),
        (Some(new), None) => format!("{}:{}", new.path, new.line),
        (None, Some(old)) => format!(
            "{}:{} at {}",
            old.path,
            old.line,
            old.commit.as_deref().map(short_id).unwrap_or("?")
        ),
        (None, None) => String::new(),
    }
}

/// One line of text output, whatever the repository put in it.
fn say(line: &str) {
    outln!("{}", terminal(line));
}

fn print_text(report: &BlocksReport, listing_unchanged: bool) {
    say(&format!("compared with {}", report.baseline));
    for step in &report.steps {
        if step.status == Status::Unchanged && !listing_unchanged {
            continue;
        }
        say(&format!(
            "{}: {} {}",
            step.status.as_str(),
            step.id,
            site(step)
        ));
        if let Some(by) = &step.disabled_by {
            say(&format!(
                "  disabled by {} {}",
                short_id(&by.id),
                by.subject
            ));
        }
        if !step.edits_applied.is_empty() {
            say(&format!(
                "  declared edits: {}",
                step.edits_applied.join("; ")
            ));
        }
        if let Some(diff) = &step.commands_diff {
            say("  commands:");
            for line in diff.lines() {
                say(&format!("    {line}"));
            }
        }
        for change in &step.fields {
            say(&format!("  {}", field_line(change)));
            if let Some(diff) = field_diff(change) {
                for line in diff.lines() {
                    say(&format!("    {line}"));
                }
            }
        }
    }
    say(&summary(report));
}

fn summary(report: &BlocksReport) -> String {
    let count = |status: Status| report.steps.iter().filter(|s| s.status == status).count();
    let parts: Vec<String> = [
        Status::Changed,
        Status::Edited,
        Status::Unchanged,
        Status::Added,
        Status::Removed,
    ]
    .into_iter()
    .filter(|s| count(*s) > 0)
    .map(|s| format!("{} {}", count(s), s.as_str()))
    .collect();
    let n = report.steps.len();
    format!(
        "{n} step{} compared: {}",
        if n == 1 { "" } else { "s" },
        if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(", ")
        }
    )
}

fn print_markdown(report: &BlocksReport, listing_unchanged: bool) {
    outln!("### layerlock blocks");
    outln!();
    outln!(
        "Compared with {}. {}.",
        md_text(&report.baseline),
        summary(report)
    );
    outln!();
    outln!("| Step | Status | Where | Disabled by |");
    outln!("|---|---|---|---|");
    for step in &report.steps {
        if step.status == Status::Unchanged && !listing_unchanged {
            continue;
        }
        let mark = match step.status {
            Status::Unchanged => "✅ unchanged",
            Status::Edited => "✅ edited as declared",
            Status::Changed => "❌ changed",
            Status::Added => "➕ added",
            Status::Removed => "➖ removed",
        };
        let by = step
            .disabled_by
            .as_ref()
            .map(|c| format!("`{}` {}", short_id(&c.id), md_text(&c.subject)))
            .unwrap_or_default();
        outln!(
            "| {} | {mark} | {} | {by} |",
            md_code(step.id.value(), true),
            md_text(&site(step)),
        );
    }
    for step in report
        .steps
        .iter()
        .filter(|s| s.status == Status::Changed || s.status == Status::Edited)
    {
        outln!();
        outln!(
            "<details><summary><code>{}</code>: {}</summary>",
            html(step.id.value()),
            step.status.as_str()
        );
        outln!();
        if !step.edits_applied.is_empty() {
            for edit in &step.edits_applied {
                outln!("- declared edit: {}", md_text(edit));
            }
            outln!();
        }
        if let Some(diff) = &step.commands_diff {
            let body: Vec<String> = diff.trim_end().lines().map(terminal).collect();
            let body = body.join("\n");
            let fence = md_fence(&body);
            outln!("{fence}diff");
            outln!("{body}");
            outln!("{fence}");
            outln!();
        }
        for change in &step.fields {
            outln!("- {}", md_code(&field_line(change), false));
            if let Some(diff) = field_diff(change) {
                let body: Vec<String> = diff.trim_end().lines().map(terminal).collect();
                let body = body.join("\n");
                let fence = md_fence(&body);
                outln!();
                outln!("{fence}diff");
                outln!("{body}");
                outln!("{fence}");
            }
        }
        outln!();
        outln!("</details>");
    }
}
