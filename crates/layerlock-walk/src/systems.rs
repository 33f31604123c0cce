//! CI systems the walk does not read. A repository whose jobs are defined
//! in a `.travis.yml` or `.drone.yml` runs installs the walk never sees; the audit names each such file (a `ci-not-read` finding that
//! fails it until allowlisted), so that never passes in silence.

use std::path::Path;

/// How deep below a scanned directory CI files are looked for, and how many
/// directory entries are read at most: a bound on a hostile tree.
const DEPTH: usize = 4;
const ENTRIES: usize = 200_000;

/// pre-commit.ci runs a repository's hooks when its config has a `ci:`
/// table; a config without one is only a developer's tool.
const PRE_COMMIT_CI: &str = "pre-commit.ci";

/// Whether the pre-commit config at `path` (read up to 256 KiB) has a
/// top-level `ci:` table.
fn uses_pre_commit_ci(path: &Path) -> bool {
    use std::io::Read;
    let mut text = String::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(256 * 1024).read_to_string(&mut text));
    read.is_ok() && text.lines().any(|l| l.starts_with("ci:"))
}

/// The CI system a file configures, by its path relative to the scanned
/// directory, when the walk does not model that system.
pub fn system_of(relative: &str) -> Option<&'static str> {
    // Jenkins, CircleCI, Azure Pipelines and AppVeyor are read
    // (`layerlock_ci::System`).
    let by_path: &[(&str, &str)] = &[
        (".travis.yml", "Travis CI"),
        (".drone.yml", "Drone"),
        (".woodpecker.yml", "Woodpecker"),
        (".woodpecker.yaml", "Woodpecker"),
        ("bitbucket-pipelines.yml", "Bitbucket Pipelines"),
        (".cirrus.yml", "Cirrus CI"),
        (".semaphore/semaphore.yml", "Semaphore"),
        ("cloudbuild.yaml", "Google Cloud Build"),
        ("cloudbuild.yml", "Google Cloud Build"),
        ("codefresh.yml", "Codefresh"),
        (".pre-commit-config.yaml", PRE_COMMIT_CI),
    ];
    if let Some((_, system)) = by_path.iter().find(|(path, _)| *path == relative) {
        return Some(system);
    }
    let in_dir = |dir: &str| {
        relative
            .strip_prefix(dir)
            .is_some_and(|rest| rest.ends_with(".yml") || rest.ends_with(".yaml"))
    };
    if in_dir(".woodpecker/") {
        return Some("Woodpecker");
    }
    if in_dir(".tekton/") {
        return Some("Tekton");
    }
    None
}

/// Every file below `dir` (at most [`DEPTH`] levels, [`ENTRIES`] entries)
/// that configures a CI system the walk does not read, as
/// `(path relative to dir, system)`, sorted.
pub fn unread_ci_files(dir: &Path) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    each_file(dir, DEPTH, &mut |relative, path| {
        if let Some(system) = system_of(relative)
            && (system != PRE_COMMIT_CI || uses_pre_commit_ci(path))
        {
            out.push((relative.to_string(), system));
        }
    });
    out.sort();
    out
}

/// Each regular file below `dir`, at most `depth` levels down and
/// [`ENTRIES`] directory entries in all, with its path relative to `dir`;
/// the walk's skipped folders and installed packages are not entered, and
/// no symlink is followed.
pub(crate) fn each_file(dir: &Path, depth: usize, visit: &mut dyn FnMut(&str, &Path)) {
    let mut budget = ENTRIES;
    look(dir, "", depth, &mut budget, visit);
}

fn look(
    dir: &Path,
    prefix: &str,
    depth: usize,
    budget: &mut usize,
    visit: &mut dyn FnMut(&str, &Path),
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        if *budget == 0 {
            return;
        }
        *budget -= 1;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let relative = format!("{prefix}{name}");
        // The entry's own type: a symlink is never followed.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            let skipped =
                crate::walker::SKIP_DIRS.contains(&name.as_str()) || name == "site-packages";
            if depth > 1 && !skipped {
                look(
                    &entry.path(),
                    &format!("{relative}/"),
                    depth - 1,
                    budget,
                    visit,
                );
            }
        } else if kind.is_file() {
            visit(&relative, &entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_of_systems_the_walk_does_not_read_are_known() {
        for (path, system) in [
            (".travis.yml", "Travis CI"),
            (".drone.yml", "Drone"),
            (".woodpecker/test.yml", "Woodpecker"),
            (".tekton/pr.yaml", "Tekton"),
        ] {
            assert_eq!(system_of(path), Some(system), "{path}");
        }
        for path in [
            "Jenkinsfile",
            "ci/Jenkinsfile.gpu",
            ".circleci/config.yml",
            "azure-pipelines.yml",
            ".appveyor.yml",
            ".github/workflows/ci.yml",
            ".gitlab-ci.yml",
            ".buildkite/pipeline.yml",
            "docs/travis.yml",
            "src/jenkinsfile_parser.py",
        ] {
            assert_eq!(system_of(path), None, "{path}");
        }
    }

    #[test]
    fn a_tree_is_searched_within_its_bounds() {
        let dir = tempfile::tempdir().unwrap();
        let write = |p: &str| {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        };
        write(".travis.yml");
        write(".woodpecker/ci.yml");
        write("Jenkinsfile");
        write("node_modules/x/.travis.yml");
        write("a/b/c/d/e/.drone.yml");
        assert_eq!(
            unread_ci_files(dir.path()),
            [
                (".travis.yml".to_string(), "Travis CI"),
                (".woodpecker/ci.yml".to_string(), "Woodpecker")
            ]
        );
    }
}
