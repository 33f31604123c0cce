//! Likely fixes: commits of refs not merged into the main line (local and
//! remote branches, fetched pull requests) that touch what a failing test
//! reads, newer than its job's dark window. One `git log` walks every ref
//! at once (`--source` says which ref reached each commit), so thousands of
//! fetched pull requests cost one walk, not thousands.

use layerlock_git::{Commit, Git};
use serde::Serialize;

use super::{CommitInfo, Relevant, TriageError, info};

/// Where likely fixes are looked for unless `--fix-refs` says: local
/// branches, remote branches and fetched pull requests.
pub const DEFAULT_FIX_REFS: [&str; 3] = ["refs/heads/", "refs/remotes/", "refs/pull/"];

/// Possible fixes listed per failure.
const MAX_FIXES: usize = 3;

#[derive(Debug, Clone, Serialize)]
pub struct PossibleFix {
    /// The ref as people say it: `feature/x`, `origin/fix`, `pull/123/head`.
    pub ref_name: String,
    /// The pull request: the ref's (`refs/pull/N/head`), else the subject's.
    pub pr: Option<u64>,
    pub commit: CommitInfo,
    /// What it touches, in words.
    pub reason: String,
}

/// What was read to find likely fixes.
#[derive(Debug, Clone, Serialize)]
pub struct RefsRead {
    pub patterns: Vec<String>,
    /// Refs walked (not at the main line's or the branch's commit).
    pub refs: usize,
    /// Refs left out for a name git would not write (a control byte).
    pub skipped: usize,
    /// Unmerged commits that touch any failing test's files.
    pub commits: usize,
}

/// The unmerged commits that touch any failing test's files, with the ref
/// each was reached from.
pub(super) struct Fixes {
    commits: Vec<(Commit, String)>,
}

impl Fixes {
    pub(super) fn find(
        git: &Git,
        patterns: &[String],
        all_relevant: &[String],
        main_commit: &str,
        head: &str,
    ) -> Result<(Self, RefsRead), TriageError> {
        let (refs, skipped) = git.refs(patterns)?;
        // A ref at the main line's commit or the branch's adds nothing.
        let refs: Vec<(String, String)> = refs
            .into_iter()
            .filter(|(_, id)| id != main_commit && id != head)
            .collect();
        let tips: Vec<String> = refs.iter().map(|(name, _)| name.clone()).collect();
        let mut commits = git.log_reached(
            &tips,
            &[main_commit.to_string(), head.to_string()],
            all_relevant,
        )?;
        // A commit several refs point at is named by the one that says
        // most: a pull request, then a remote branch, then a local one.
        let mut at: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
        for (name, id) in &refs {
            let best = at.entry(id.as_str()).or_insert(name.as_str());
            if rank(name) < rank(best) {
                *best = name.as_str();
            }
        }
        for (commit, source) in &mut commits {
            if let Some(best) = at.get(commit.id.as_str()) {
                *source = (*best).to_string();
            }
        }
        let read = RefsRead {
            patterns: patterns.to_vec(),
            refs: tips.len(),
            skipped,
            commits: commits.len(),
        };
        Ok((Self { commits }, read))
    }

    /// The likely fixes of a test that reads `relevant`, whose job went
    /// dark at `since` (seconds): nearest first, newest first within a
    /// distance, at most [`MAX_FIXES`].
    pub(super) fn of(&self, relevant: &Relevant, since: i64) -> Vec<PossibleFix> {
        let mut found: Vec<PossibleFix> = self
            .commits
            .iter()
            .filter(|(c, _)| c.time >= since && c.paths.iter().any(|p| relevant.contains_key(p)))
            .map(|(c, source)| {
                let commit = info(c, relevant);
                let (ref_name, pr_of_ref) = shown_ref(source);
                PossibleFix {
                    pr: pr_of_ref.or(commit.pr),
                    reason: reason(&commit, relevant),
                    ref_name,
                    commit,
                }
            })
            .collect();
        // Stable: git's newest-first order is kept within a distance.
        found.sort_by_key(|f| f.commit.distance);
        found.truncate(MAX_FIXES);
        found
    }
}

/// How much a ref's name says: a pull request first, then a remote
/// branch, then a local one; by name within a kind.
fn rank(name: &str) -> (u8, &str) {
    let kind = if name.starts_with("refs/pull/") {
        0
    } else if name.starts_with("refs/remotes/") {
        1
    } else {
        2
    };
    (kind, name)
}

/// A ref as people say it, and the pull request it is.
fn shown_ref(full: &str) -> (String, Option<u64>) {
    if let Some(rest) = full.strip_prefix("refs/pull/") {
        let number = rest.split('/').next().and_then(|n| n.parse().ok());
        return (format!("pull/{rest}"), number);
    }
    let shown = full
        .strip_prefix("refs/heads/")
        .or_else(|| full.strip_prefix("refs/remotes/"))
        .unwrap_or(full);
    (shown.to_string(), None)
}

/// `touches tests/kv/test_nixl.py (the test file)`, `touches
/// vllm/kv/nixl.py, which the test imports`, `… 2 imports away`.
fn reason(commit: &CommitInfo, relevant: &Relevant) -> String {
    let nearest = commit
        .touched
        .iter()
        .min_by_key(|p| relevant.get(*p).copied().unwrap_or(usize::MAX));
    let Some(path) = nearest else {
        return "touches what the test reads".to_string();
    };
    match commit.distance {
        0 => format!("touches {path} (the test file)"),
        1 => format!("touches {path}, which the test imports (or its conftest.py)"),
        d => format!("touches {path}, {d} imports away"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_are_shown_as_people_say_them() {
        assert_eq!(
            shown_ref("refs/pull/63122/head"),
            ("pull/63122/head".to_string(), Some(63122))
        );
        assert_eq!(
            shown_ref("refs/remotes/origin/fix"),
            ("origin/fix".to_string(), None)
        );
        assert_eq!(shown_ref("refs/heads/wip"), ("wip".to_string(), None));
        assert_eq!(
            super::super::pr_number("Fix nixl handshake (#64661)"),
            Some(64661)
        );
    }
}
