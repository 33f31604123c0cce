//! Audit output: text with source snippets, versioned JSON, SARIF 2.1.0 and
//! GitHub workflow annotations. The same findings give the same bytes.
//! Text and JSON are written as they are made: a tree reached by thousands
//! of pipelines has a report of hundreds of megabytes.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::finding::{Finding, Severity};
use crate::policy::{Excused, Sorted};
use crate::pretty::Pretty;
use crate::rules::{RuleId, SCANNER_RULES, registry};
use layerlock_walk::FileError;

/// Every rule id with its description, registry first.
pub fn rule_list() -> Vec<(RuleId, &'static str)> {
    let mut out: Vec<_> = registry()
        .iter()
        .map(|r| (r.id(), r.description()))
        .collect();
    out.extend_from_slice(SCANNER_RULES);
    out
}

/// How much the audit read, and how much it could not follow: every
/// report says both, so "0 findings" never hides a walk that saw nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coverage {
    /// Commands read.
    pub commands: usize,
    /// Commands that run more than the audit could read (`not-followed` and
    /// `script-not-found` notes, reported, allowed or suppressed alike).
    pub not_followed: usize,
    /// Install-looking lines no finding accounts for (`unexplained-install`,
    /// reported, allowed or suppressed alike).
    pub unexplained: usize,
}

impl Coverage {
    pub fn new(commands: usize, sorted: &Sorted) -> Self {
        let unread = |rule: RuleId| {
            matches!(
                rule,
                RuleId::NotFollowed | RuleId::ScriptNotFound | RuleId::CiNotRead
            )
        };
        let count = |which: &dyn Fn(RuleId) -> bool| {
            sorted.reported.iter().filter(|f| which(f.rule)).count()
                + sorted
                    .allowed
                    .iter()
                    .chain(&sorted.suppressed)
                    .filter(|e| which(e.finding.rule))
                    .count()
        };
        Self {
            commands,
            not_followed: count(&unread),
            unexplained: count(&|rule| rule == RuleId::UnexplainedInstall),
        }
    }

    /// `412 commands read, 9 not followed, 3 unexplained installs`: what
    /// every format's summary says of how much was read.
    pub fn said(&self) -> String {
        format!(
            "{} command{} read, {} not followed, {} unexplained install{}",
            self.commands,
            if self.commands == 1 { "" } else { "s" },
            self.not_followed,
            self.unexplained,
            if self.unexplained == 1 { "" } else { "s" },
        )
    }
}

/// The findings of one location that say the same thing, and the jobs
/// that reach it.
pub struct Group<'a> {
    /// The first of them (its path to the command stands for all).
    pub first: &'a Finding,
    /// Every job, in report order; empty when no job reaches it.
    pub jobs: Vec<&'a str>,
}

/// `reported` (sorted by place) as one group per location, rule, class
/// and message: a command thousands of jobs reach is one entry, not
/// thousands.
pub fn groups(reported: &[Finding]) -> Vec<Group<'_>> {
    let mut out: Vec<Group<'_>> = Vec::new();
    let mut run_start = 0;
    for f in reported {
        let same_place = out
            .get(run_start)
            .is_some_and(|g| g.first.location == f.location);
        if !same_place {
            run_start = out.len();
        }
        let key = |g: &Finding| (g.rule, g.severity, g.class, g.message.clone());
        match out[run_start..]
            .iter_mut()
            .find(|g| g.first.location == f.location && key(g.first) == key(f))
        {
            Some(group) => group.jobs.extend(f.job.as_deref()),
            None => out.push(Group {
                first: f,
                jobs: f.job.as_deref().into_iter().collect(),
            }),
        }
    }
    out
}

/// How many jobs a text or annotation names before `and N more`.
const JOBS_SHOWN: usize = 5;

/// ` job=a`, ` jobs=a, b, c and 4 more`, or nothing.
fn jobs_said(jobs: &[&str]) -> String {
    match jobs {
        [] => String::new(),
        [one] => format!(" job={one}"),
        _ => {
            let shown = jobs[..jobs.len().min(JOBS_SHOWN)].join(", ");
            let more = jobs.len().saturating_sub(JOBS_SHOWN);
            if more == 0 {
                format!(" jobs={shown}")
            } else {
                format!(" jobs={shown} and {more} more")
            }
        }
    }
}

pub fn text(
    sorted: &Sorted,
    coverage: Coverage,
    errors: &[FileError],
    lines: &dyn Fn(&str) -> Option<std::rc::Rc<Vec<String>>>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(1 << 16, out);
    let grouped = groups(&sorted.reported);
    for group in &grouped {
        let f = group.first;
        let class = f
            .class
            .map(|c| format!(" [{}]", c.as_str()))
            .unwrap_or_default();
        let job = jobs_said(&group.jobs);
        writeln!(
            out,
            "{}: {} {}{class}{job}",
            f.location,
            f.severity.as_str(),
            f.rule
        )?;
        writeln!(out, "  {}", f.message)?;
        if let Some(source) =
            lines(&f.location.path).and_then(|l| l.get(f.location.line.saturating_sub(1)).cloned())
        {
            writeln!(out, "  {:>5} | {}", f.location.line, source.trim_end())?;
        }
        for step in f.via.iter() {
            writeln!(out, "  via {step}")?;
        }
    }
    for e in errors {
        writeln!(
            out,
            "{}:{}:{}: error: {}",
            e.path, e.line, e.column, e.message
        )?;
    }
    for s in &sorted.stale {
        writeln!(
            out,
            "{}: note: stale allowlist entry `{}` {}",
            s.origin, s.entry, s.why
        )?;
    }
    let count = |sev: Severity| sorted.reported.iter().filter(|f| f.severity == sev).count();
    writeln!(
        out,
        "{} finding{}{} ({} high, {} medium, {} low, {} info); {} allowed, {} suppressed, {} stale allowlist entr{}; {}",
        sorted.reported.len(),
        if sorted.reported.len() == 1 { "" } else { "s" },
        if grouped.len() == sorted.reported.len() {
            String::new()
        } else {
            format!(" at {} places", grouped.len())
        },
        count(Severity::High),
        count(Severity::Medium),
        count(Severity::Low),
        count(Severity::Info),
        sorted.allowed.len(),
        sorted.suppressed.len(),
        sorted.stale.len(),
        if sorted.stale.len() == 1 { "y" } else { "ies" },
        coverage.said(),
    )?;
    out.flush()
}

/// The JSON report's shape: 2 added the summary's counts by class and
/// severity, findings and locations; 3 the summary's `unexplained`.
pub const JSON_VERSION: usize = 3;

/// `{"version":2,"findings":[…],"allowed":[…],"suppressed":[…],"stale":[…],"errors":[…]}`,
/// pretty-printed as serde_json prints it, with a final newline. Every
/// object's keys are in alphabetical order, as they were when the report
/// was built as a `serde_json::Value` (whose maps sort).
pub fn json(
    sorted: &Sorted,
    coverage: Coverage,
    errors: &[FileError],
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut json = Pretty::new(out);
    json.begin_object();
    json.key("allowed");
    excuses(&mut json, &sorted.allowed)?;
    json.key("errors");
    json.begin_array();
    for e in errors {
        json.item();
        json.begin_object();
        json.key("column");
        json.number(e.column);
        json.key("line");
        json.number(e.line);
        json.key("message");
        json.string(&e.message);
        json.key("path");
        json.string(&e.path);
        json.end_object();
        json.drain()?;
    }
    json.end_array();
    json.key("findings");
    json.begin_array();
    for f in &sorted.reported {
        finding_json(&mut json, f, None);
        json.drain()?;
    }
    json.end_array();
    json.key("stale");
    json.begin_array();
    for s in &sorted.stale {
        json.item();
        json.begin_object();
        json.key("entry");
        json.string(&s.entry);
        json.key("origin");
        json.string(&s.origin);
        json.key("why");
        json.string(&s.why);
        json.end_object();
    }
    json.end_array();
    json.key("summary");
    json.begin_object();
    json.key("by_class");
    json.begin_object();
    for class in crate::install::Class::ALL {
        json.key(class.as_str());
        json.number(
            sorted
                .reported
                .iter()
                .filter(|f| f.class == Some(class))
                .count(),
        );
    }
    json.end_object();
    json.key("by_severity");
    json.begin_object();
    for severity in [
        Severity::High,
        Severity::Info,
        Severity::Low,
        Severity::Medium,
    ] {
        json.key(severity.as_str());
        json.number(
            sorted
                .reported
                .iter()
                .filter(|f| f.severity == severity)
                .count(),
        );
    }
    json.end_object();
    json.key("commands");
    json.number(coverage.commands);
    json.key("findings");
    json.number(sorted.reported.len());
    json.key("locations");
    json.number(groups(&sorted.reported).len());
    json.key("not_followed");
    json.number(coverage.not_followed);
    json.key("unexplained");
    json.number(coverage.unexplained);
    json.end_object();
    json.key("suppressed");
    excuses(&mut json, &sorted.suppressed)?;
    json.key("version");
    json.number(JSON_VERSION);
    json.end_object();
    json.finish()
}

fn excuses(json: &mut Pretty<'_>, excuses: &[Excused]) -> io::Result<()> {
    json.begin_array();
    for e in excuses {
        finding_json(json, &e.finding, Some(e));
        json.drain()?;
    }
    json.end_array();
    Ok(())
}

/// One finding, as an item of the array being written.
fn finding_json(json: &mut Pretty<'_>, f: &Finding, excused: Option<&Excused>) {
    json.item();
    json.begin_object();
    if let Some(e) = excused {
        json.key("by");
        json.string(&e.by);
    }
    json.key("class");
    json.string_or_null(f.class.map(|class| class.as_str()));
    json.key("column");
    json.number(f.location.column);
    json.key("command");
    json.string(&f.command);
    json.key("job");
    json.string_or_null(f.job.as_deref());
    json.key("line");
    json.number(f.location.line);
    json.key("message");
    json.string(&f.message);
    json.key("path");
    json.string(&f.location.path);
    if let Some(e) = excused {
        json.key("reason");
        json.string(&e.reason);
    }
    json.key("rule");
    json.string(f.rule.as_str());
    json.key("severity");
    json.string(f.severity.as_str());
    json.key("via");
    json.begin_array();
    let Ok(()) = f.via.try_each(&mut |at| {
        json.item();
        json.string(at);
        Ok::<_, std::convert::Infallible>(())
    });
    json.end_array();
    json.end_object();
}

fn sarif_level(severity: Severity) -> &'static str {
    match severity {
        Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "note",
    }
}

/// SARIF 2.1.0, written as it is made (a report of 200,000 findings was
/// 2.3 GB as a JSON value), with serde_json's pretty bytes and sorted keys.
pub fn sarif(sorted: &Sorted, out: &mut dyn Write) -> io::Result<()> {
    let rules = rule_list();
    let mut json = Pretty::new(out);
    json.begin_object();
    json.key("$schema");
    json.string("https://json.schemastore.org/sarif-2.1.0.json");
    json.key("runs");
    json.begin_array();
    json.item();
    json.begin_object();
    json.key("results");
    json.begin_array();
    for f in &sorted.reported {
        sarif_result(&mut json, f, &rules);
        json.drain()?;
    }
    json.end_array();
    json.key("tool");
    json.begin_object();
    json.key("driver");
    json.begin_object();
    json.key("name");
    json.string("layerlock");
    json.key("rules");
    json.begin_array();
    for (id, description) in &rules {
        json.item();
        json.begin_object();
        json.key("id");
        json.string(id.as_str());
        json.key("shortDescription");
        json.begin_object();
        json.key("text");
        json.string(description);
        json.end_object();
        json.end_object();
    }
    json.end_array();
    json.key("version");
    json.string(env!("CARGO_PKG_VERSION"));
    json.end_object();
    json.end_object();
    json.end_object();
    json.end_array();
    json.key("version");
    json.string("2.1.0");
    json.end_object();
    json.finish()
}

fn sarif_result(json: &mut Pretty<'_>, f: &Finding, rules: &[(RuleId, &str)]) {
    let mut message = f.message.to_string();
    if let Some(job) = &f.job {
        let _ = write!(message, " (job {job})");
    }
    for step in f.via.iter() {
        let _ = write!(message, " via {step}");
    }
    json.item();
    json.begin_object();
    json.key("level");
    json.string(sarif_level(f.severity));
    json.key("locations");
    json.begin_array();
    json.item();
    json.begin_object();
    json.key("physicalLocation");
    json.begin_object();
    json.key("artifactLocation");
    json.begin_object();
    json.key("uri");
    json.string(&f.location.path);
    json.end_object();
    json.key("region");
    json.begin_object();
    json.key("startColumn");
    json.number(f.location.column.max(1));
    json.key("startLine");
    json.number(f.location.line.max(1));
    json.end_object();
    json.end_object();
    json.end_object();
    json.end_array();
    json.key("message");
    json.begin_object();
    json.key("text");
    json.string(&message);
    json.end_object();
    json.key("properties");
    json.begin_object();
    json.key("class");
    json.string_or_null(f.class.map(|c| c.as_str()));
    json.key("job");
    json.string_or_null(f.job.as_deref());
    json.key("severity");
    json.string(f.severity.as_str());
    json.end_object();
    json.key("ruleId");
    json.string(f.rule.as_str());
    json.key("ruleIndex");
    json.number(rules.iter().position(|(id, _)| *id == f.rule).unwrap_or(0));
    json.end_object();
}

/// GitHub workflow commands: one annotation a finding.
pub fn github(sorted: &Sorted) -> String {
    let escape = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let prop = |s: &str| escape(s).replace(':', "%3A").replace(',', "%2C");
    let mut out = String::new();
    let grouped = groups(&sorted.reported);
    let mut shown = [0usize; 3];
    for group in &grouped {
        let f = group.first;
        let (level, slot) = match f.severity {
            Severity::High => ("error", 0),
            Severity::Medium => ("warning", 1),
            _ => ("notice", 2),
        };
        // GitHub shows ten annotations of each level a step; the last
        // notice is kept for the summary.
        let cap = if slot == 2 {
            GITHUB_SHOWN - 1
        } else {
            GITHUB_SHOWN
        };
        if shown[slot] >= cap {
            continue;
        }
        shown[slot] += 1;
        let jobs = jobs_said(&group.jobs);
        let jobs = if jobs.is_empty() {
            jobs
        } else {
            format!(" ({})", jobs.trim_start())
        };
        let _ = writeln!(
            out,
            "::{level} file={},line={},col={},title={}::{}{}",
            prop(&f.location.path),
            f.location.line,
            f.location.column,
            prop(f.rule.as_str()),
            escape(&f.message),
            escape(&jobs)
        );
    }
    let annotated: usize = shown.iter().sum();
    let unexplained = sorted
        .reported
        .iter()
        .filter(|f| f.rule == RuleId::UnexplainedInstall)
        .count();
    let _ = writeln!(
        out,
        "::notice title=layerlock audit::{} finding{} at {} place{}, {unexplained} unexplained install{}; {annotated} annotated (GitHub shows {GITHUB_SHOWN} of each level a step){}",
        sorted.reported.len(),
        if sorted.reported.len() == 1 { "" } else { "s" },
        grouped.len(),
        if grouped.len() == 1 { "" } else { "s" },
        if unexplained == 1 { "" } else { "s" },
        if annotated < grouped.len() {
            "; run layerlock audit for the rest"
        } else {
            ""
        }
    );
    out
}

/// Annotations of one level GitHub shows for a step.
const GITHUB_SHOWN: usize = 10;
