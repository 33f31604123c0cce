//! The audit: every rule on every command the walker finds, and a note for
//! every script call it could not follow.

use std::rc::Rc;

use layerlock_walk::{CommandSite, FileError, Reach, ScanOptions, Visitor, walk};

use crate::finding::{Finding, FindingBuilder, Severity};
use crate::rules::{RuleId, registry};

pub(crate) mod cfg;

/// What the audit found, and what it could not read.
#[derive(Debug, Default)]
pub struct ScanResult {
    pub findings: Vec<Finding>,
    pub errors: Vec<FileError>,
    /// CI files and scripts read, relative to the root.
    pub files: std::collections::BTreeSet<String>,
    /// Commands read (see [`layerlock_walk::Walked::commands`]).
    pub commands: usize,
    /// Install-looking lines the census checked against the findings.
    pub census: usize,
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

    fn not_followed(&mut self, why: &str, site: &CommandSite<'_>, out: &mut Vec<Finding>) {
        out.push(
            FindingBuilder::new(RuleId::NotFollowed, Severity::Info, site.location.clone())
                .command(site.text)
                .message(why.to_string())
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
        commands: walked.commands,
        census: 0,
    };
    let mut findings = visitor.findings;
    findings.extend(unread_systems(options));
    let hits = layerlock_walk::census(&options.root, &options.targets, &result.files);
    result.census = hits.len();
    let unexplained = crate::census::unexplained(&hits, &findings);
    findings.extend(unexplained);
    result.findings = first_of_each(findings);
    result
}

/// A `ci-not-read` finding for every file of a CI system the walk does not
/// read, below each directory scanned.
fn unread_systems(options: &ScanOptions) -> Vec<Finding> {
    let mut out = Vec::new();
    for dir in options.targets.iter().filter(|t| t.is_dir()) {
        for (relative, system) in layerlock_walk::unread_ci_files(dir) {
            let path = dir.join(&relative);
            let shown = path
                .strip_prefix(&options.root)
                .map(|p| p.to_string_lossy().replace('\\', "/"))
                .unwrap_or(relative);
            let location = crate::finding::Location {
                path: Rc::from(shown.as_str()),
                line: 1,
                column: 1,
            };
            out.push(
                FindingBuilder::new(RuleId::CiNotRead, Severity::Medium, location)
                    .message(format!(
                        "a {system} file: audit does not read {system} yet, so the installs its jobs run are not checked (check it by hand, then allowlist this finding)"
                    ))
                    .build(),
            );
        }
    }
    out
}

/// The findings sorted by place, job and rule, one of each: the first path
/// the walk took to it. A chain reached by thousands of pipelines has a
/// finding at each of its places for every one of them (issue 14), so the
/// sort compares numbers, each path and job ranked once, not the strings
/// of every pair.
fn first_of_each(findings: Vec<Finding>) -> Vec<Finding> {
    let paths = ranks(findings.iter().map(|f| &*f.location.path));
    let jobs = ranks(findings.iter().map(|f| f.job.as_deref()));
    let mut order: Vec<_> = findings
        .iter()
        .zip(paths.into_iter().zip(jobs))
        .enumerate()
        .map(|(i, (f, (path, job)))| {
            let key = (path, f.location.line, f.location.column, job, f.rule);
            // The most changeable install wins (one pass of a loop can be
            // pinned and the next not); then the walk's order breaks ties:
            // the first path leads its run of equals.
            (key, std::cmp::Reverse(f.class), i)
        })
        .collect();
    order.sort_unstable();
    order.dedup_by(|later, first| later.0 == first.0);
    let mut findings: Vec<Option<Finding>> = findings.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter_map(|(_, _, i)| findings[i].take())
        .collect()
}

/// Each value's place among the distinct values in their order, each value
/// hashed once.
fn ranks<T: Ord + std::hash::Hash + Copy>(values: impl Iterator<Item = T>) -> Vec<usize> {
    let mut known = std::collections::HashMap::new();
    let mut distinct = Vec::new();
    let ids: Vec<usize> = values
        .map(|value| {
            *known.entry(value).or_insert_with(|| {
                distinct.push(value);
                distinct.len() - 1
            })
        })
        .collect();
    let mut sorted: Vec<usize> = (0..distinct.len()).collect();
    sorted.sort_unstable_by_key(|&id| distinct[id]);
    let mut rank = vec![0; distinct.len()];
    for (place, id) in sorted.into_iter().enumerate() {
        rank[id] = place;
    }
    ids.into_iter().map(|id| rank[id]).collect()
}
