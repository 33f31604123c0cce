//! Fixed since (`--previous`): an earlier run of the same jobs, as the
//! triage result it gave or as its reports and the commit they tested.
//! Each of its failures that passes now names the commits between the two
//! runs' heads that touched what the test reads; the failures still open
//! are triaged as ever.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use layerlock_git::Git;
use serde::Serialize;

use super::{
    CommitInfo, MAX_COMMITS_SHOWN, ReportInput, TestFiles, TestKey, TestRun, TriageError,
    merge_reports, node_id, touching,
};
use crate::junit::Outcome;
use crate::pyimports::{self, ClosureOptions};

/// The earlier run.
#[derive(Debug, Clone)]
pub enum Previous {
    /// `layerlock triage --format json` of the earlier run: its head and
    /// its failures.
    Result { path: PathBuf, shown: String },
    /// The earlier run's reports, and the commit it tested.
    Reports {
        reports: Vec<ReportInput>,
        head: String,
    },
}

#[derive(Debug, Clone, Serialize)]
pub struct FixedSince {
    pub job: String,
    pub node_id: String,
    pub file: Option<String>,
    /// The commits between the earlier run's head and this one's that
    /// touched what the test reads, nearest first.
    pub commits: Vec<CommitInfo>,
    pub more_commits: usize,
    pub note: String,
}

/// An earlier failure: its job, node id and file.
struct Earlier {
    job: String,
    node: String,
    file: Option<String>,
}

/// The earlier run's failures that pass now, and the earlier head.
pub(super) fn fixed_since(
    git: &Git,
    previous: &Previous,
    now: &BTreeMap<TestKey, TestRun>,
    files: &TestFiles,
    head: &str,
    depth: usize,
) -> Result<(Vec<FixedSince>, String), TriageError> {
    let (earlier, old_head) = earlier(git, previous, files)?;
    // This run's outcome of every test, by job and node id.
    let mut outcomes: BTreeMap<(String, String), (Outcome, Option<String>)> = BTreeMap::new();
    for ((job, _, _), run) in now {
        let (file, class) = files.locate(&run.case);
        let node = node_id(&run.case, file.as_deref(), class.as_deref());
        outcomes.insert((job.clone(), node), (run.worst, file));
    }
    let passing: Vec<(Earlier, Option<String>)> = earlier
        .into_iter()
        .filter_map(|e| match outcomes.get(&(e.job.clone(), e.node.clone())) {
            Some((Outcome::Passed, file)) => {
                let file = file.clone().or_else(|| e.file.clone());
                Some((e, file))
            }
            _ => None,
        })
        .collect();
    let options = ClosureOptions {
        depth,
        ..ClosureOptions::default()
    };
    let mut closures: BTreeMap<String, super::Relevant> = BTreeMap::new();
    for (_, file) in &passing {
        if let Some(file) = file
            && !closures.contains_key(file)
        {
            let relevant =
                pyimports::closure(git.root(), std::slice::from_ref(file), &options).depth;
            closures.insert(file.clone(), relevant);
        }
    }
    let all: Vec<String> = closures
        .values()
        .flat_map(|r| r.keys().cloned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let between = if all.is_empty() || old_head == head {
        Vec::new()
    } else {
        git.log(&[format!("{old_head}..{head}")], &all, true)?
    };
    let mut fixed = Vec::new();
    for (e, file) in passing {
        let relevant = file
            .as_ref()
            .and_then(|f| closures.get(f))
            .cloned()
            .unwrap_or_default();
        let mut commits = touching(&between, &relevant);
        let note = if commits.is_empty() {
            "passes now; nothing between the two runs touched what it reads: flaky, or the environment".to_string()
        } else {
            format!(
                "passes now; {} commit{} between the two runs touched what it reads",
                commits.len(),
                crate::plural(commits.len())
            )
        };
        let more = commits.len().saturating_sub(MAX_COMMITS_SHOWN);
        commits.truncate(MAX_COMMITS_SHOWN);
        fixed.push(FixedSince {
            job: e.job,
            node_id: e.node,
            file,
            commits,
            more_commits: more,
            note,
        });
    }
    fixed.sort_by(|a, b| (&a.job, &a.node_id).cmp(&(&b.job, &b.node_id)));
    Ok((fixed, old_head))
}

/// The earlier run's failures and the commit it tested.
fn earlier(
    git: &Git,
    previous: &Previous,
    files: &TestFiles,
) -> Result<(Vec<Earlier>, String), TriageError> {
    match previous {
        Previous::Reports { reports, head } => {
            let merged = merge_reports(reports)?;
            let failures = merged
                .failing
                .iter()
                .map(|f| {
                    let (file, class) = files.locate(&f.merged.case);
                    Earlier {
                        job: f.merged.job.clone(),
                        node: node_id(&f.merged.case, file.as_deref(), class.as_deref()),
                        file,
                    }
                })
                .collect();
            Ok((failures, git.commit(head)?))
        }
        Previous::Result { path, shown } => {
            let bad = |message: String| TriageError::Report {
                path: shown.clone(),
                message,
            };
            let bytes = super::read_limited(path).map_err(bad)?;
            let doc: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
                bad(format!(
                    "not JSON ({e}): pass the file `layerlock triage --format json` wrote"
                ))
            })?;
            let head = doc["head"]
                .as_str()
                .ok_or_else(|| bad("no \"head\": not a triage result".to_string()))?;
            let head = git.commit(head).map_err(|_| {
                bad(format!(
                    "its head {head} is not in this repository: fetch it, or pass the earlier reports with --previous-head"
                ))
            })?;
            let items = doc["failures"]
                .as_array()
                .ok_or_else(|| bad("no \"failures\" list: not a triage result".to_string()))?;
            let mut failures = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let (Some(job), Some(node)) = (item["job"].as_str(), item["node_id"].as_str())
                else {
                    return Err(bad(format!("failure #{} has no job or node_id", i + 1)));
                };
                failures.push(Earlier {
                    job: job.to_string(),
                    node: node.to_string(),
                    file: item["file"].as_str().map(str::to_string),
                });
            }
            Ok((failures, head))
        }
    }
}
