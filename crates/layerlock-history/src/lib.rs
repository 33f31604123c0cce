//! Checks against git history: restored CI steps and failure triage.

pub mod blocks;
pub mod triage;

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
