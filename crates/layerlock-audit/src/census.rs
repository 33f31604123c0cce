//! The census reconciled with the findings: every install-looking line of
//! the census (see [`layerlock_walk::census`]) is a finding's line, a known
//! look-alike, or an `unexplained-install` finding at its own line saying
//! why the walk did not account for it.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use layerlock_walk::{Hit, Origin};

use crate::finding::{Finding, FindingBuilder, Location, Severity};
use crate::rules::RuleId;

/// The `unexplained-install` findings for the census's `hits`, given what
/// the audit found.
pub fn unexplained(hits: &[Hit], findings: &[Finding]) -> Vec<Finding> {
    // Every line a finding's command covers.
    let mut seen: HashSet<(&str, usize)> = HashSet::new();
    // A file audit does not read is named as a whole: each of its
    // installs is still listed.
    for f in findings.iter().filter(|f| f.rule != RuleId::CiNotRead) {
        let lines = f.command.matches('\n').count();
        for line in f.location.line..=f.location.line + lines {
            seen.insert((&f.location.path, line));
        }
    }
    let mut by_path: HashMap<&str, Rc<str>> = HashMap::new();
    let mut out = Vec::new();
    for hit in hits {
        if hit.look_alike.is_some() || seen.contains(&(hit.path.as_str(), hit.line)) {
            continue;
        }
        let path = by_path
            .entry(&hit.path)
            .or_insert_with(|| Rc::from(hit.path.as_str()));
        let (severity, why) = reason(hit);
        out.push(
            FindingBuilder::new(
                RuleId::UnexplainedInstall,
                severity,
                Location {
                    path: Rc::clone(path),
                    line: hit.line,
                    column: 1,
                },
            )
            .command(&hit.text)
            .message(format!(
                "an install the audit did not account for: {why} (check it by hand, then allowlist this finding)"
            ))
            .build(),
        );
    }
    out
}

/// How much an unexplained line matters, and why the walk did not account
/// for it.
fn reason(hit: &Hit) -> (Severity, String) {
    let text = &hit.text;
    match &hit.origin {
        Origin::Unmodelled(system) => (
            Severity::Medium,
            format!("a file of {system}, which audit does not read"),
        ),
        Origin::Named(at) => (
            Severity::Low,
            format!("a script named at {at} that no CI path the walk followed reaches"),
        ),
        Origin::Unread if hit.path.ends_with("pyproject.toml") || hit.path.ends_with("pixi.toml") => (
            Severity::Medium,
            "a task a runner defines (pixi, hatch, poe): audit does not read runners' tasks yet"
                .to_string(),
        ),
        Origin::Unread => (
            Severity::Low,
            "a file no CI path the walk followed reaches".to_string(),
        ),
        _ if text.contains("GITHUB_ENV") => (
            Severity::Medium,
            "a value written to $GITHUB_ENV for later steps, which audit does not carry from a script".to_string(),
        ),
        Origin::Read if text.contains("eval ") || text.contains("-c \"$") => (
            Severity::Medium,
            "it runs only through an eval or shell string of a run-time value".to_string(),
        ),
        Origin::Read if interpreter_in_variable(text) => (
            Severity::Medium,
            "the interpreter or program is in a variable the walk could not know".to_string(),
        ),
        Origin::Read => (
            Severity::Low,
            "a line of a file the walk read that no CI path it followed runs (a function, branch, recipe or job not reached, or a form audit does not read)".to_string(),
        ),
    }
}

/// `"$PY" -m pip install`, `python${V} -m pip`, `$PIP install`.
fn interpreter_in_variable(text: &str) -> bool {
    text.split_whitespace()
        .take_while(|w| !w.ends_with("install"))
        .any(|w| w.contains('$') && !w.contains('='))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(path: &str, line: usize, text: &str, origin: Origin) -> Hit {
        Hit {
            path: path.into(),
            line,
            text: text.into(),
            origin,
            look_alike: None,
        }
    }

    #[test]
    fn a_line_a_finding_covers_is_explained_and_others_are_named() {
        let found = FindingBuilder::new(
            RuleId::JobTimeInstall,
            Severity::High,
            Location {
                path: Rc::from("ci/a.sh"),
                line: 3,
                column: 1,
            },
        )
        .command("pip install \\\n  x")
        .build();
        let hits = [
            hit("ci/a.sh", 4, "x pip install y", Origin::Read),
            hit("ci/a.sh", 9, "\"$PY\" -m pip install z", Origin::Read),
            hit(
                "Jenkinsfile",
                2,
                "sh 'pip install q'",
                Origin::Unmodelled("Jenkins"),
            ),
        ];
        let out = unexplained(&hits, &[found]);
        let said: Vec<(String, usize, Severity)> = out
            .iter()
            .map(|f| (f.location.path.to_string(), f.location.line, f.severity))
            .collect();
        assert_eq!(
            said,
            [
                ("ci/a.sh".to_string(), 9, Severity::Medium),
                ("Jenkinsfile".to_string(), 2, Severity::Medium)
            ]
        );
        assert!(out[0].message.contains("in a variable"));
        assert!(out[1].message.contains("Jenkins"));
    }
}
