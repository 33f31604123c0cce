//! Audit output: text with source snippets, versioned JSON, SARIF 2.1.0 and
//! GitHub workflow annotations. The same findings give the same bytes.

use std::fmt::Write as _;

use serde_json::json;

use crate::finding::{Finding, Severity};
use crate::policy::Sorted;
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
) -> String {
    let mut out = String::new();
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
        let _ = writeln!(
            out,
            "{}: {} {}{class}{job}",
            f.location,
            f.severity.as_str(),
            f.rule
        );
        let _ = writeln!(out, "  {}", f.message);
        if let Some(source) =
            lines(&f.location.path).and_then(|l| l.get(f.location.line.saturating_sub(1)).cloned())
        {
            let _ = writeln!(out, "  {:>5} | {}", f.location.line, source.trim_end());
        }
        for step in f.via.iter() {
            let _ = writeln!(out, "  via {step}");
        }
    }
    for e in errors {
        let _ = writeln!(
            out,
            "{}:{}:{}: error: {}",
            e.path, e.line, e.column, e.message
        );
    }
    for s in &sorted.stale {
        let _ = writeln!(
            out,
            "{}: note: stale allowlist entry `{}` {}",
            s.origin, s.entry, s.why
        );
    }
    let count = |sev: Severity| sorted.reported.iter().filter(|f| f.severity == sev).count();
    let _ = writeln!(
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
    );
    out
}

fn finding_json(f: &Finding) -> serde_json::Value {
    json!({
        "rule": f.rule,
        "severity": f.severity.as_str(),
        "class": f.class.map(|c| c.as_str()),
        "path": f.location.path,
        "line": f.location.line,
        "column": f.location.column,
        "job": f.job,
        "command": f.command,
        "message": f.message,
        "via": f.via,
    })
}

pub fn json(sorted: &Sorted, errors: &[FileError]) -> String {
    let value = json!({
        "version": 1,
        "findings": sorted.reported.iter().map(finding_json).collect::<Vec<_>>(),
        "allowed": sorted.allowed.iter().map(|e| {
            let mut v = finding_json(&e.finding);
            v["reason"] = json!(e.reason);
            v["by"] = json!(e.by);
            v
        }).collect::<Vec<_>>(),
        "suppressed": sorted.suppressed.iter().map(|e| {
            let mut v = finding_json(&e.finding);
            v["reason"] = json!(e.reason);
            v["by"] = json!(e.by);
            v
        }).collect::<Vec<_>>(),
        "stale": sorted.stale,
        "errors": errors,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
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
            let mut message = f.message.clone();
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
                    "job": f.job,
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
