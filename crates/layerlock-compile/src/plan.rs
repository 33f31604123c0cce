//! What one layer asks to compile, as the binary resolved it from flags,
//! the config file and the environment: paths opened and shown, targets,
//! index and cooldown. No flag or printer type reaches past here.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use layerlock_lock::LockFormat;
use layerlock_resolve::{CooldownPolicy, HashSelection, Prerelease};

/// A path as the user wrote it (for headers and messages) and as we open it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserPath {
    pub shown: String,
    pub path: PathBuf,
}

impl UserPath {
    /// `shown`, read from `root`.
    pub fn new(shown: &str, root: &Path) -> Self {
        Self {
            shown: shown.to_string(),
            path: root.join(shown),
        }
    }

    /// A path from the command line: opened as given, shown from `root`
    /// (so the same file reads the same from any subdirectory).
    pub fn from_arg(path: &Path, cwd: &Path, root: &Path) -> Self {
        Self {
            shown: shown_from(path, cwd, root),
            path: path.to_path_buf(),
        }
    }
}

/// `path` (relative to `cwd`) as shown from `root`: `../in.txt` run from
/// `root/sub` is `in.txt`, and a relative path outside `root` is written
/// from it with `..`, so it reads the same from any directory. An
/// absolute path outside `root` is shown as given.
pub fn shown_from(path: &Path, cwd: &Path, root: &Path) -> String {
    let absolute = layerlock_lock::normalize(&cwd.join(path));
    let root = layerlock_lock::normalize(&cwd.join(root));
    match absolute.strip_prefix(&root) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        Ok(_) => ".".to_string(),
        Err(_) if path.is_absolute() => path.display().to_string(),
        Err(_) => layerlock_lock::relative_path(&absolute, &root)
            .display()
            .to_string(),
    }
}

/// An interpreter: a path (relative to `base`), or a bare name looked up
/// on PATH when it runs.
pub fn interpreter_path(path: &Path, base: &Path, root: &Path) -> UserPath {
    if path.components().count() == 1 && !base.join(path).exists() {
        return UserPath {
            shown: path.display().to_string(),
            path: path.to_path_buf(),
        };
    }
    let mut found = UserPath::from_arg(path, base, root);
    if let Some(python) = venv_python(&found.path) {
        found.shown = format!("{}/{}", found.shown.trim_end_matches('/'), python.1);
        found.path = python.0;
    }
    found
}

/// The interpreter of a virtual environment given by its directory (as uv
/// takes `--python .venv`): its `bin/python`, `bin/python3` or
/// `Scripts/python.exe`, and that part of the path.
pub fn venv_python(dir: &Path) -> Option<(PathBuf, &'static str)> {
    if !dir.is_dir() {
        return None;
    }
    ["bin/python", "bin/python3", "Scripts/python.exe"]
        .into_iter()
        .map(|rel| (dir.join(rel), rel))
        .find(|(p, _)| p.is_file())
}

/// An output name with `{python}` and `{platform}` filled in.
pub fn fill_output(output: &str, python: &str, platform: &str) -> String {
    output
        .replace("{python}", python)
        .replace("{platform}", platform)
}

/// The indexes a layer asks.
#[derive(Debug, Clone, Default)]
pub struct IndexPlan {
    /// Asked in order; they may carry credentials, which never print.
    pub index_urls: Vec<layerlock_index::SecretUrl>,
    pub find_links: Vec<PathBuf>,
}

/// One target of a layer: its Python and platform, and what the image
/// there already has.
#[derive(Debug, Clone)]
pub struct TargetPlan {
    pub python_version: String,
    pub platform: String,
    pub bases: Vec<UserPath>,
    pub base_env: Option<UserPath>,
    pub owned: Vec<String>,
    /// Its own index (and whether it was named), when it names one.
    pub index: Option<(IndexPlan, bool)>,
}

impl TargetPlan {
    pub fn lock_target(&self) -> layerlock_lock::LockTarget {
        layerlock_lock::LockTarget {
            python: self.python_version.clone(),
            platform: self.platform.clone(),
        }
    }
}

/// A cooldown: the policy, and how the user wrote its age.
#[derive(Debug, Clone)]
pub struct CooldownPlan {
    pub policy: CooldownPolicy,
    /// As written (`7 days`), for messages.
    pub min_age_text: String,
}

/// One layer to compile: its inputs, the image under it, its targets and
/// where its lock goes.
#[derive(Debug, Clone)]
pub struct LayerPlan {
    /// The config layer's name; `None` when given on the command line.
    pub name: Option<String>,
    pub inputs: Vec<UserPath>,
    /// `-c` files: they narrow versions, never pull a package in.
    pub constraints: Vec<UserPath>,
    /// `--override` files: their versions replace every requirement on
    /// the packages they name.
    pub overrides: Vec<UserPath>,
    /// What a `pyproject.toml` input contributes beside `dependencies`.
    pub project: layerlock_lock::ProjectParts,
    /// Packages that must come as wheels.
    pub only_binary: layerlock_resolve::OnlyBinary,
    /// Packages that may be taken older than newer releases whose
    /// dependencies only a build could say, with a note (`:all:` for any).
    pub allow_walk_back: layerlock_resolve::OnlyBinary,
    /// The first target's (the only one's, in a one-target layer) bases;
    /// `targets` has every target's.
    pub bases: Vec<UserPath>,
    /// `--base-env`: an interpreter whose installed distributions are
    /// base pins.
    pub base_env: Option<UserPath>,
    pub output: Option<UserPath>,
    /// How the lock is written.
    pub format: LockFormat,
    pub python_version: String,
    pub platform: String,
    pub owned: Vec<String>,
    /// Which hashes the lock keeps, when asked; `None`: the format's
    /// default (see [`LayerPlan::hash_selection`]).
    pub hashes: Option<HashSelection>,
    pub prerelease: Prerelease,
    pub exclude_newer: Option<Timestamp>,
    pub index: IndexPlan,
    /// Whether the index options came from flags/config (else input files
    /// may set them).
    pub index_explicit: bool,
    /// The command that regenerates this layer, for the lock header.
    pub command: String,
    /// Paths in the lock and in messages are shown relative to this: the
    /// repository (or working directory), or the config file's directory
    /// for config layers.
    pub display_root: PathBuf,
    /// The working directory relative paths are opened from.
    pub cwd: PathBuf,
    pub cooldown: Option<CooldownPlan>,
    /// `--allow-missing-time`: files without an upload time pass
    /// `--exclude-newer` (and the cooldown).
    pub allow_missing_time: bool,
    /// Every target the layer serves (at least one); the fields above
    /// that a target sets are the first one's.
    pub targets: Vec<TargetPlan>,
    /// The image's packages the layer replaces on purpose (`--replace`):
    /// their files may be written over, and the lock says so.
    pub replace: Vec<uv_normalize::PackageName>,
    /// `--owned-over NAME==VERSION`: the image installs this version over
    /// the one its own lock pins, said on purpose.
    pub owned_over: Vec<String>,
    /// `--require-checked`: a distribution whose files cannot be listed is
    /// an error, not a name in the lock's header.
    pub require_checked: bool,
}

impl LayerPlan {
    /// Whether each target is written to a file of its own: an output
    /// name with `{python}` or `{platform}` in it.
    pub fn splits_output(&self) -> bool {
        self.output
            .as_ref()
            .is_some_and(|o| o.shown.contains("{python}") || o.shown.contains("{platform}"))
    }

    /// The layer as compiled for `target` alone (its own output, when the
    /// output's name has `{python}` or `{platform}` in it).
    pub fn for_target(&self, target: &TargetPlan) -> LayerPlan {
        let mut one = self.clone();
        if self.splits_output()
            && let Some(output) = &mut one.output
        {
            let fill = |text: &str| fill_output(text, &target.python_version, &target.platform);
            output.shown = fill(&output.shown);
            output.path = PathBuf::from(fill(&output.path.to_string_lossy()));
        }
        one.python_version = target.python_version.clone();
        one.platform = target.platform.clone();
        one.bases = target.bases.clone();
        one.base_env = target.base_env.clone();
        one.owned = target.owned.clone();
        if let Some((index, explicit)) = &target.index {
            one.index = index.clone();
            one.index_explicit = *explicit;
        }
        one.targets = vec![target.clone()];
        one
    }

    /// The layer with `targets` as its targets.
    pub fn with_targets(mut self, targets: Vec<TargetPlan>) -> Self {
        self.targets = targets;
        self
    }

    /// The layer once per target.
    pub fn per_target(&self) -> Vec<LayerPlan> {
        self.targets.iter().map(|t| self.for_target(t)).collect()
    }

    /// Which files' hashes the lock keeps: as asked, else every file for a
    /// requirements lock (an installer picks among them) and the target's
    /// for a `pylock.toml` (whose `environments` name the target: other
    /// platforms' files are noise there).
    pub fn hash_selection(&self) -> HashSelection {
        match (self.hashes, self.format) {
            (Some(asked), _) => asked,
            (None, LockFormat::Pylock) => HashSelection::TargetAndSdist,
            (None, LockFormat::Requirements) => HashSelection::All,
        }
    }

    /// `path` as the layer's lock and messages show it.
    pub fn show(&self, path: &Path) -> String {
        shown_from(path, &self.cwd, &self.display_root)
    }

    /// The folder the lock's relative paths (find-links files, project
    /// directories) are written from: the output's, else the display root.
    pub fn lock_directory(&self) -> PathBuf {
        match &self.output {
            Some(o) => layerlock_lock::normalize(&self.cwd.join(&o.path))
                .parent()
                .map_or_else(|| self.display_root.clone(), Path::to_path_buf),
            None => self.display_root.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_show_from_a_relative_root_too() {
        // `--config examples/x/layerlock.toml`: the config root is relative.
        let cwd = Path::new("/repo");
        let root = Path::new("examples/x");
        assert_eq!(
            shown_from(Path::new("examples/x/in.txt"), cwd, root),
            "in.txt"
        );
        assert_eq!(
            shown_from(Path::new("/repo/examples/x/a/b.txt"), cwd, root),
            "a/b.txt"
        );
        assert_eq!(
            shown_from(Path::new("/elsewhere/c.txt"), cwd, root),
            "/elsewhere/c.txt"
        );
        // Outside the root, relative: written from the root, from anywhere.
        let root = Path::new("/repo");
        assert_eq!(
            shown_from(
                Path::new("../../outside/base.txt"),
                Path::new("/repo/sub"),
                root
            ),
            shown_from(Path::new("../outside/base.txt"), Path::new("/repo"), root),
        );
        assert_eq!(
            shown_from(Path::new("../outside/base.txt"), Path::new("/repo"), root),
            "../outside/base.txt"
        );
    }
}
