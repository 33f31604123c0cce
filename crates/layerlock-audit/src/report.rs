//! Audit output: text with source snippets, versioned JSON, SARIF 2.1.0 and
//! GitHub workflow annotations. The same findings give the same bytes.
//! Text and JSON are written as they are made: a tree reached by thousands
//! of pipelines has a report of hundreds of megabytes.

use std::fmt::Write as _;
use std::io::{self, Write};

use serde::Serialize;
use serde_json::json;

use crate::finding::{Finding, Severity, Via};
use crate::policy::{Excused, Sorted, Stale};
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

pub fn text(
    sorted: &Sorted,
    errors: &[FileError],
    lines: &dyn Fn(&str) -> Option<std::rc::Rc<Vec<String>>>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(1 << 16, out);
    for f in &sorted.reported {
        let class = f
            .class
            .map(|c| format!(" [{}]", c.as_str()))
            .unwrap_or_default();
        let job = f
            .job
            .as_ref()
            .map(|j| format!(" job={j}"))
            .unwrap_or_default();
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
        "{} finding{} ({} high, {} medium, {} low, {} info); {} allowed, {} suppressed, {} stale allowlist entr{}",
        sorted.reported.len(),
        if sorted.reported.len() == 1 { "" } else { "s" },
        count(Severity::High),
        count(Severity::Medium),
        count(Severity::Low),
        count(Severity::Info),
        sorted.allowed.len(),
        sorted.suppressed.len(),
        sorted.stale.len(),
        if sorted.stale.len() == 1 { "y" } else { "ies" }
    )?;
    out.flush()
}

/// The JSON report, version 1. Every object's keys are in alphabetical
/// order, as they were when the report was built as a `serde_json::Value`
/// (whose maps sort): the fields below are declared in that order.
#[derive(Serialize)]
struct JsonReport<'a> {
    allowed: Excuses<'a>,
    errors: Errors<'a>,
    findings: Findings<'a>,
    stale: &'a [Stale],
    suppressed: Excuses<'a>,
    version: u32,
}

#[derive(Serialize)]
struct FindingJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    by: Option<&'a str>,
    class: Option<&'static str>,
    column: usize,
    command: &'a str,
    job: Option<&'a str>,
    line: usize,
    message: &'a str,
    path: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
    rule: RuleId,
    severity: &'static str,
    via: &'a Via,
}

impl<'a> FindingJson<'a> {
    fn new(f: &'a Finding, excused: Option<&'a Excused>) -> Self {
        Self {
            by: excused.map(|e| e.by.as_str()),
            class: f.class.map(|c| c.as_str()),
            column: f.location.column,
            command: &f.command,
            job: f.job.as_deref(),
            line: f.location.line,
            message: &f.message,
            path: &f.location.path,
            reason: excused.map(|e| e.reason.as_str()),
            rule: f.rule,
            severity: f.severity.as_str(),
            via: &f.via,
        }
    }
}

/// Serialized one at a time, never collected.
struct Findings<'a>(&'a [Finding]);

impl Serialize for Findings<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|f| FindingJson::new(f, None)))
    }
}

struct Excuses<'a>(&'a [Excused]);

impl Serialize for Excuses<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|e| FindingJson::new(&e.finding, Some(e))))
    }
}

#[derive(Serialize)]
struct ErrorJson<'a> {
    column: usize,
    line: usize,
    message: &'a str,
    path: &'a str,
}

struct Errors<'a>(&'a [FileError]);

impl Serialize for Errors<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|e| ErrorJson {
            column: e.column,
            line: e.line,
            message: &e.message,
            path: &e.path,
        }))
    }
}

/// `{"version":1,"findings":[…],"allowed":[…],"suppressed":[…],"stale":[…],"errors":[…]}`,
/// pretty-printed, with a final newline.
pub fn json(sorted: &Sorted, errors: &[FileError], out: &mut dyn Write) -> io::Result<()> {
    let report = JsonReport {
        allowed: Excuses(&sorted.allowed),
        errors: Errors(errors),
        findings: Findings(&sorted.reported),
        stale: &sorted.stale,
        suppressed: Excuses(&sorted.suppressed),
        version: 1,
    };
    let mut out = io::BufWriter::with_capacity(1 << 16, out);
    serde_json::to_writer_pretty(&mut out, &report)?;
    out.write_all(b"\n")?;
    out.flush()
}

fn sarif_level(severity: Severity) -> &'static str {
    match severity {
        Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "note",
    }
}

pub fn sarif(sorted: &Sorted) -> String {
    let rules: Vec<_> = rule_list()
        .iter()
        .map(|(id, description)| {
            json!({
                "id": id,
                "shortDescription": {"text": description},
            })
        })
        .collect();
    let ids: Vec<RuleId> = rule_list().iter().map(|(id, _)| *id).collect();
    let results: Vec<_> = sorted
        .reported
        .iter()
        .map(|f| {
            let mut message = f.message.to_string();
            if let Some(job) = &f.job {
                message.push_str(&format!(" (job {job})"));
            }
            for step in f.via.iter() {
                message.push_str(&format!(" via {step}"));
            }
            json!({
                "ruleId": f.rule,
                "ruleIndex": ids.iter().position(|id| *id == f.rule).unwrap_or(0),
                "level": sarif_level(f.severity),
                "message": {"text": message},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.location.path},
                        "region": {
                            "startLine": f.location.line.max(1),
                            "startColumn": f.location.column.max(1),
                        },
                    },
                }],
                "properties": {
                    "severity": f.severity.as_str(),
                    "class": f.class.map(|c| c.as_str()),
                    "job": f.job.as_deref(),
                },
            })
        })
        .collect();
    let value = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "layerlock",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
        }],
    });
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
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
    for f in &sorted.reported {
        let level = match f.severity {
            Severity::High => "error",
            Severity::Medium => "warning",
            _ => "notice",
        };
        let _ = writeln!(
            out,
            "::{level} file={},line={},col={},title={}::{}",
            prop(&f.location.path),
            f.location.line,
            f.location.column,
            prop(f.rule.as_str()),
            escape(&f.message)
        );
    }
    out
}
