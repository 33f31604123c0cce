//! The audit: every rule on every command the walker finds, and a note for
//! every script call it could not follow.

use std::rc::Rc;

use layerlock_walk::{CommandSite, FileError, Reach, ScanOptions, Visitor, walk};

use crate::finding::{Finding, FindingBuilder, Severity};
use crate::rules::{RuleId, registry};

/// What the audit found, and what it could not read.
#[derive(Debug, Default)]
pub struct ScanResult {
    pub findings: Vec<Finding>,
    pub errors: Vec<FileError>,
    /// CI files and scripts read, relative to the root.
    pub files: std::collections::BTreeSet<String>,
}

/// Runs every audit rule on every command; notes missing scripts.
struct RuleVisitor {
    findings: Vec<Finding>,
    /// The job of the last finding: the next ones mostly share it.
    job: Option<Rc<str>>,
}

impl Visitor for RuleVisitor {
    /// A finding without its job and via chain: those come with each path.
    type Item = Finding;

    fn command(&mut self, site: &CommandSite<'_>, out: &mut Vec<Finding>) {
        for rule in registry() {
            out.extend(rule.check(site).into_iter().map(FindingBuilder::build));
        }
    }

    fn missing_script(&mut self, call: &str, site: &CommandSite<'_>, out: &mut Vec<Finding>) {
        out.push(
            FindingBuilder::new(
                RuleId::ScriptNotFound,
                Severity::Info,
                site.location.clone(),
            )
            .command(site.text)
            .message(format!(
                "`{call}` is not in the scanned tree, so its commands were not audited{}",
                if call.starts_with('/') && site.mapped_paths == 0 {
                    " (map container paths with --path-map /workspace=.)"
                } else {
                    ""
                }
            ))
            .build(),
        );
    }

    fn reached(&mut self, finding: &Finding, reach: &Reach<'_>) {
        let job = reach.job.map(|job| match &self.job {
            Some(last) if **last == *job => Rc::clone(last),
            _ => Rc::from(job),
        });
        self.job.clone_from(&job);
        self.findings.push(Finding {
            job,
            via: reach.via.clone(),
            ..finding.clone()
        });
    }
}

/// The audit: every rule on every command.
pub fn scan(options: &ScanOptions) -> ScanResult {
    let mut visitor = RuleVisitor {
        findings: Vec::new(),
        job: None,
    };
    let walked = walk(options, &mut visitor);
    let mut result = ScanResult {
        findings: Vec::new(),
        errors: walked.errors,
        files: walked.files,
    };
    // One finding per place, job and rule: the first path the walk took to
    // it (the sort is stable, so that one leads its run of equals).
    result.findings = visitor.findings;
    result
        .findings
        .sort_by(|a, b| (&a.location, &a.job, a.rule).cmp(&(&b.location, &b.job, b.rule)));
    result.findings.dedup_by(|later, first| {
        (&later.location, &later.job, later.rule) == (&first.location, &first.job, first.rule)
    });
    result
}
