//! Which files of a tree the walk reads, and as what: YAML CI files,
//! Jenkinsfiles, Dockerfiles by any of their names, shell scripts named on the command
//! line.

use std::path::{Path, PathBuf};

pub(crate) const SKIP_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Yaml,
    /// A Jenkinsfile (Groovy), found by its name.
    Jenkinsfile,
    Dockerfile,
    Shell,
}

pub(super) fn kind_of(path: &Path, explicit: bool) -> Option<Kind> {
    let name = path.file_name()?.to_str()?;
    if name.ends_with(".yml") || name.ends_with(".yaml") {
        return Some(Kind::Yaml);
    }
    if layerlock_ci::is_jenkinsfile(name) {
        return Some(Kind::Jenkinsfile);
    }
    if is_dockerfile_name(name) {
        return Some(Kind::Dockerfile);
    }
    if explicit {
        return Some(Kind::Shell);
    }
    None
}

/// `Dockerfile`, `Containerfile`, `Dockerfile.ci`, `Dockerfile_gpu`,
/// `Dockerfile-dev`, `ci.Dockerfile`, `gpu.containerfile`.
pub(crate) fn is_dockerfile_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    ["dockerfile", "containerfile"].iter().any(|stem| {
        lower == *stem
            || lower
                .strip_prefix(stem)
                .is_some_and(|rest| rest.starts_with(['.', '_', '-']))
            || lower
                .strip_suffix(stem)
                .is_some_and(|rest| rest.ends_with('.'))
    })
}

pub(super) fn walk_dir(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return;
    };
    // The entry's own type (from the directory listing) saves two `stat`s
    // per file of a large tree; only a symlink needs its target's.
    let mut entries: Vec<(PathBuf, Option<std::fs::FileType>)> = entries
        .filter_map(Result::ok)
        .map(|e| (e.path(), e.file_type().ok()))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, file_type) in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let is_link = file_type.is_some_and(|t| t.is_symlink());
        let is_dir = match file_type {
            Some(t) if !t.is_symlink() => t.is_dir(),
            _ => path.is_dir(),
        };
        // Symlinked directories are not followed: they can loop.
        if is_dir && is_link {
            continue;
        }
        if is_dir {
            if !SKIP_DIRS.contains(&name) {
                walk_dir(&path, out);
            }
        } else if kind_of(&path, false).is_some() {
            out.push(path);
        }
    }
}
