//! Checks against git history: restored CI steps and failure triage.
//!
//! - [`blocks`]: CI jobs in the working tree against a revision, or against
//!   their definition before the commit that disabled them;
//! - [`triage`]: failing tests of jobs that were dark, against the commits
//!   that landed meanwhile on the files they read.
//!
//! And what triage reads without running any of it:
//! - [`junit`]: JUnit XML and Buildkite Test Engine JSON reports, as test cases
//!   with outcomes and the line of each case in its report;
//! - [`pyimports`]: the static imports of Python files, and the in-repository
//!   files a test file reaches through them;
//! - [`xfail`]: the `xfail` marker that applies to one pytest node.
//!
//! [`render`] makes their text inert for a terminal and for Markdown.
//!
//! Git runs through [`layerlock_git::Git`], every call bounded in output
//! and time.

pub mod blocks;
pub mod junit;
mod lexer;
pub mod pyimports;
pub mod render;
pub mod triage;
pub mod xfail;

use layerlock_git::{Git, GitError};

/// A commit id as reports show it: its first 12 characters.
pub fn short_id(id: &str) -> &str {
    &id[..id.len().min(12)]
}

/// A commit's date, `YYYY-MM-DD` in UTC, from seconds since the epoch.
pub fn date(time: i64) -> String {
    jiff::Timestamp::from_second(time)
        .map(|t| t.strftime("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Where a branch left the main line.
#[derive(Debug, Clone)]
pub struct ForkPoint {
    /// The main line's ref, as given or found.
    pub main: String,
    pub main_commit: String,
    pub head: String,
    /// The merge base of `head` and the main line (the main line's tip when
    /// they share no history).
    pub merge_base: String,
}

impl ForkPoint {
    pub fn find(git: &Git, main: Option<&str>, head: &str) -> Result<Self, GitError> {
        let main = main_line(git, main)?;
        let head = git.commit(head)?;
        let main_commit = git.commit(&main)?;
        let merge_base = git
            .merge_base(&head, &main_commit)?
            .unwrap_or_else(|| main_commit.clone());
        Ok(Self {
            main,
            main_commit,
            head,
            merge_base,
        })
    }
}

/// The main line's ref: `given`, else the first of origin/main, main,
/// origin/master and master that exists.
pub fn main_line(git: &Git, given: Option<&str>) -> Result<String, GitError> {
    if let Some(given) = given {
        git.commit(given)?;
        return Ok(given.to_string());
    }
    const TRIED: [&str; 4] = ["origin/main", "main", "origin/master", "master"];
    for candidate in TRIED {
        if git.commit(candidate).is_ok() {
            return Ok(candidate.to_string());
        }
    }
    Err(GitError::UnknownRevision {
        rev: format!("{} (none exists; pass --main REF)", TRIED.join(", ")),
    })
}
