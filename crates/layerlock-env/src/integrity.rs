//! `verify --integrity`: every file a distribution's RECORD lists still has
//! the recorded sha256. pip and uv match installed packages by version
//! alone, so a tampered or half-overwritten package passes them.

use std::path::Path;

use base64::Engine;
use serde::Serialize;

use crate::installed::{Installed, read_record};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IntegrityProblem {
    pub name: String,
    pub path: String,
    pub what: String,
}

/// Check one distribution's files against its RECORD.
pub fn check(dist: &Installed) -> Vec<IntegrityProblem> {
    let problem = |path: &str, what: String| IntegrityProblem {
        name: dist.name.clone(),
        path: path.to_string(),
        what,
    };
    if dist.egg_info {
        return vec![problem(
            &dist.path.display().to_string(),
            "an egg-info distribution has no RECORD to check".to_string(),
        )];
    }
    let record = match read_record(&dist.path) {
        Ok(r) => r,
        Err(e) => return vec![problem("RECORD", format!("cannot read RECORD: {e}"))],
    };
    let mut problems = Vec::new();
    for entry in record {
        let Some(expected) = &entry.sha256 else {
            continue;
        };
        let file = dist.site.join(Path::new(&entry.path));
        match fs_err::symlink_metadata(&file) {
            Err(_) => {
                problems.push(problem(&entry.path, "missing".to_string()));
                continue;
            }
            // A FIFO or device where a file should be is never opened.
            Ok(meta) if !meta.is_file() && !meta.file_type().is_symlink() => {
                problems.push(problem(&entry.path, "not a regular file".to_string()));
                continue;
            }
            Ok(_) => {}
        }
        match crate::read::sha256_file(&file) {
            Ok(digest) => {
                let actual = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
                if actual != expected.trim_end_matches('=') {
                    problems.push(problem(
                        &entry.path,
                        "content differs from RECORD".to_string(),
                    ));
                }
            }
            Err(e) => problems.push(problem(&entry.path, e)),
        }
    }
    problems
}
