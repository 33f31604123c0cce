//! One file per subcommand.

pub mod audit;
pub mod blocks;
pub mod compile;
pub mod cooldown;
pub mod covers;
pub mod diff;
pub mod docs;
pub mod graph;
pub mod install;
pub mod steps;
pub mod tether;
pub mod triage;
pub mod verify;

/// Files and folders (absolute) as paths from the root of `git`'s work tree,
/// for the history checks; one outside it is an error naming `reader`.
fn repo_relative(
    git: &layerlock_git::Git,
    paths: &[std::path::PathBuf],
    prefix: &str,
    reader: &str,
) -> anyhow::Result<Vec<String>> {
    let root = fs_err::canonicalize(git.root())?;
    let mut out = Vec::new();
    for path in paths {
        let real = fs_err::canonicalize(path).unwrap_or_else(|_| layerlock_lock::normalize(path));
        match real.strip_prefix(&root) {
            Ok(rel) if rel.as_os_str().is_empty() => {}
            Ok(rel) => out.push(rel.to_string_lossy().replace('\\', "/")),
            Err(_) => anyhow::bail!(
                "{prefix}{} is outside the repository at {}; {reader} reads only the repository's own CI files",
                path.display(),
                root.display()
            ),
        }
    }
    Ok(out)
}

/// The cache folder when it can serve, else `None` and a warning (once a
/// run): a `--cache-dir` that is a file, a device or a folder nobody may
/// write makes the run slower, never silently.
pub fn usable_cache(dir: Option<&std::path::Path>) -> Option<std::path::PathBuf> {
    static WARNED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    let dir = dir?;
    match layerlock_index::cache_unusable(dir) {
        None => Some(dir.to_path_buf()),
        Some(why) => {
            if WARNED.set(()).is_ok() {
                diag!("warning: the cache cannot be used ({why}); running without it");
            }
            None
        }
    }
}
