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
//! Git runs through [`git::Git`], every call bounded in output and time.

pub mod blocks;
pub mod junit;
mod lexer;
pub mod pyimports;
pub mod render;
pub mod triage;
pub mod xfail;

pub use layerlock_walk::git;

use layerlock_walk::git::{Git, GitError};

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
