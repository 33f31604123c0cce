//! Tethering: every test file is run by some CI step. The CI side shares the
//! audit's walker (pipelines, workflows, scripts, path maps, working dirs);
//! the test side is the files git tracks under the test roots.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use layerlock_ci::glob::{is_glob, matches as glob_matches};

use layerlock_walk::{CommandSite, FileError, Reach, ScanOptions, Visitor, normalize, walk};

use crate::pytest::{Selection, fnmatch, selection};

pub(crate) mod cfg;
mod index;
pub(crate) mod inventory;

use index::RunIndex;

#[derive(Debug, Clone, Default)]
pub struct TetherOptions {
    pub scan: ScanOptions,
    /// Test roots relative to the scan root (default `tests`).
    pub test_roots: Vec<String>,
    /// Where steps run when they do not say (vLLM: `/vllm-workspace/tests`),
    /// already mapped into the tree.
    pub default_working_dir: Option<PathBuf>,
}

/// One step's test selection, resolved to paths relative to the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepRun {
    pub job: String,
    /// `path:line` of the command.
    pub at: String,
    pub command: String,
    pub files: Vec<String>,
    pub dirs: Vec<String>,
    pub finds: Vec<(String, String)>,
    pub ignore: Vec<String>,
    pub ignore_glob: Vec<String>,
    pub deselect: Vec<String>,
}

impl StepRun {
    /// A run of `command` with nothing selected yet.
    fn new(job: String, at: String, command: String) -> Self {
        Self {
            job,
            at,
            command,
            files: Vec::new(),
            dirs: Vec::new(),
            finds: Vec::new(),
            ignore: Vec::new(),
            ignore_glob: Vec::new(),
            deselect: Vec::new(),
        }
    }

    /// Add what a command selects, each path resolved by `resolve` (paths
    /// ending in `.py` are files, others folders; no path at all is the
    /// folder the command runs in).
    fn select(&mut self, selection: Selection, resolve: impl Fn(&str) -> String) {
        let Selection {
            paths,
            finds,
            ignore,
            ignore_glob,
            deselect,
            whole_dir,
            script: _,
            dynamic: _,
        } = selection;
        self.finds
            .extend(finds.iter().map(|(d, p)| (resolve(d), p.clone())));
        self.ignore.extend(ignore.iter().map(|i| resolve(i)));
        self.ignore_glob.extend(ignore_glob);
        self.deselect.extend(deselect.iter().map(|d| resolve(d)));
        for path in paths {
            let resolved = resolve(&path);
            if path.ends_with(".py") || path.ends_with(".py*") {
                self.files.push(resolved);
            } else {
                self.dirs.push(resolved);
            }
        }
        if whole_dir {
            self.dirs.push(resolve("."));
        }
    }

    /// Whether the run's paths take in `file`. With [`StepRun::excludes`],
    /// this is the reference: [`RunIndex`] answers the same for many files.
    fn covers(&self, file: &str) -> bool {
        let under = |dir: &str| {
            if is_glob(dir) {
                return under_glob(dir, file);
            }
            dir.is_empty() || dir == "." || file.starts_with(&format!("{dir}/"))
        };
        self.files
            .iter()
            .any(|f| f == file || (is_glob(f) && glob_matches(f, file)))
            || self.dirs.iter().any(|d| under(d))
            || self
                .finds
                .iter()
                .any(|(d, p)| under(d) && fnmatch(p, file.rsplit('/').next().unwrap_or(file)))
    }

    /// Why this step, though it covers `file`, does not run it.
    fn excludes(&self, file: &str) -> Option<String> {
        if let Some(i) = self
            .ignore
            .iter()
            .find(|i| file == i.as_str() || file.starts_with(&format!("{i}/")))
        {
            return Some(format!("--ignore {i}"));
        }
        if let Some(g) = self.ignore_glob.iter().find(|g| ignore_glob_hits(g, file)) {
            return Some(format!("--ignore-glob {g}"));
        }
        if self.deselect.iter().any(|d| d == file) {
            return Some(format!("--deselect {file}"));
        }
        None
    }

    pub fn runs(&self, file: &str) -> bool {
        self.covers(file) && self.excludes(file).is_none()
    }
}

/// A folder glob (`tests/*/unit`) takes in a file whose leading segments,
/// as many as the glob has, match it.
fn under_glob(dir: &str, file: &str) -> bool {
    let depth = dir.split('/').count();
    // The text before the file's `depth`-th `/`: its first `depth` segments,
    // when it has more than that.
    file.match_indices('/')
        .nth(depth - 1)
        .is_some_and(|(slash, _)| glob_matches(dir, &file[..slash]))
}

/// `--ignore-glob` matches the path or the file name (pytest's fnmatch).
fn ignore_glob_hits(glob: &str, file: &str) -> bool {
    fnmatch(glob, file) || fnmatch(glob, file.rsplit('/').next().unwrap_or(file))
}

struct Collector<'a> {
    options: &'a TetherOptions,
    runs: Vec<StepRun>,
}

impl Collector<'_> {
    /// A path written in a command, relative to the root when it is in the
    /// tree.
    fn resolve(&self, path: &str, cwd: Option<&Path>) -> String {
        let root = &self.options.scan.root;
        let mapped = self.options.scan.path_map.map(path);
        let absolute = if mapped.is_absolute() {
            mapped
        } else {
            cwd.map(Path::to_path_buf)
                .or_else(|| self.options.default_working_dir.clone())
                .unwrap_or_else(|| root.clone())
                .join(mapped)
        };
        let mut normal = normalize(&absolute);
        // Where a step runs is a guess when CI does not say (a default
        // working directory that not every pipeline applies): a relative
        // path that does not exist there but does from the root is that.
        if !Path::new(path).is_absolute() && !normal.exists() && !layerlock_ci::glob::is_glob(path)
        {
            let from_root = normalize(&root.join(path));
            if from_root.starts_with(root) && from_root.exists() {
                normal = from_root;
            }
        }
        normal
            .strip_prefix(root)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| normal.display().to_string())
    }
}

impl Visitor for Collector<'_> {
    /// A run whose job is the command's file until a path gives it one.
    type Item = StepRun;

    fn command(&mut self, site: &CommandSite<'_>, out: &mut Vec<StepRun>) {
        let Some(sel) = selection(site.args, site.previous) else {
            return;
        };
        let mut run = StepRun::new(
            site.location.path.to_string(),
            format!("{}:{}", site.location.path, site.location.line),
            site.text.to_string(),
        );
        run.select(sel, |path| self.resolve(path, site.cwd));
        out.push(run);
    }

    fn reached(&mut self, run: &StepRun, reach: &Reach<'_>) {
        let mut run = run.clone();
        if let Some(job) = reach.job {
            run.job = job.to_string();
        }
        self.runs.push(run);
    }
}

/// Every pytest (or test script) run found in CI, and the files that could
/// not be read.
pub fn collect(options: &TetherOptions) -> (Vec<StepRun>, Vec<FileError>) {
    let mut collector = Collector {
        options,
        runs: Vec::new(),
    };
    let result = walk(&options.scan, &mut collector);
    (collector.runs, result.errors)
}

/// `path  # reason`; the reason is mandatory.
pub fn parse_tether_allowlist(
    text: &str,
    file: &str,
) -> Result<Vec<(String, String, String)>, crate::PolicyError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let origin = format!("{file}:{}", i + 1);
        let Some((path, reason)) = line.split_once('#') else {
            return Err(crate::PolicyError {
                origin,
                message: format!(
                    "`{line}` has no reason; write `{line}  # why no CI step runs it`"
                ),
            });
        };
        let (path, reason) = (path.trim(), reason.trim());
        if path.is_empty() || reason.is_empty() {
            return Err(crate::PolicyError {
                origin,
                message: format!("`{line}` needs a path and a reason"),
            });
        }
        out.push((path.to_string(), reason.to_string(), origin));
    }
    Ok(out)
}

#[derive(Debug, Clone, Serialize)]
pub struct StaleEntry {
    pub path: String,
    pub why: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct TetherReport {
    pub version: u32,
    pub untethered: Vec<String>,
    pub stale: Vec<StaleEntry>,
    pub tethered: BTreeMap<String, Vec<String>>,
    #[serde(skip)]
    pub allowed: Vec<String>,
    #[serde(skip)]
    pub checked: usize,
}

impl TetherReport {
    /// Nearly nothing tethered among enough files: with no configuration,
    /// the cause is almost always where the steps run (their test paths do
    /// not resolve from the repository root), not every file on its own.
    pub fn mostly_untethered(&self) -> bool {
        self.checked >= 20 && self.untethered.len() * 10 >= self.checked * 9
    }

    /// Whether the check fails: an untethered file, or (with `all`) a
    /// stale allowlist entry.
    pub fn fails(&self, all: bool) -> bool {
        !self.untethered.is_empty() || (all && !self.stale.is_empty())
    }
}

/// Why a file named to check (`tether FILE…`) is not checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotChecked {
    Missing,
    NotATestFile,
}

/// The files among `only` that are not checked, and why; and whether none
/// of them is (an error: files were named and nothing was checked).
pub fn not_checked<'a>(
    only: &'a [String],
    inventory: &[String],
    root: &Path,
) -> (Vec<(&'a str, NotChecked)>, bool) {
    let known: std::collections::HashSet<&str> = inventory.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    for file in only {
        if !root.join(file).exists() {
            out.push((file.as_str(), NotChecked::Missing));
        } else if !known.contains(file.as_str()) {
            out.push((file.as_str(), NotChecked::NotATestFile));
        }
    }
    let none = !only.is_empty() && only.iter().all(|f| !known.contains(f.as_str()));
    (out, none)
}

/// Check `files` (or the whole inventory) against the runs and allowlist.
pub fn check(
    inventory: &[String],
    only: Option<&[String]>,
    runs: &[StepRun],
    allowlist: &[(String, String, String)],
    root: &Path,
) -> TetherReport {
    let mut report = TetherReport {
        version: 1,
        ..TetherReport::default()
    };
    let inv: BTreeSet<&str> = inventory.iter().map(String::as_str).collect();
    let selected: Vec<&str> = match only {
        Some(files) => files
            .iter()
            .map(String::as_str)
            .filter(|f| inv.contains(f))
            .collect(),
        None => inventory.iter().map(String::as_str).collect(),
    };
    let allowed: BTreeSet<&str> = allowlist.iter().map(|(p, _, _)| p.as_str()).collect();
    let index = RunIndex::new(runs);
    for file in &selected {
        report.checked += 1;
        let mut jobs: Vec<&str> = index
            .running(file)
            .into_iter()
            .map(|r| r.job.as_str())
            .collect();
        jobs.sort_unstable();
        jobs.dedup();
        if jobs.is_empty() {
            if allowed.contains(file) {
                report.allowed.push((*file).to_string());
            } else {
                report.untethered.push((*file).to_string());
            }
        } else {
            let jobs = jobs.into_iter().map(str::to_string).collect();
            report.tethered.insert((*file).to_string(), jobs);
        }
    }
    // A set: an allowlist of thousands checked against `only`'s thousands.
    let only: Option<BTreeSet<&str>> = only.map(|files| files.iter().map(String::as_str).collect());
    for (path, _, _) in allowlist {
        if only
            .as_ref()
            .is_some_and(|files| !files.contains(path.as_str()))
        {
            continue;
        }
        if !inv.contains(path.as_str()) && !root.join(path).is_file() {
            report.stale.push(StaleEntry {
                path: path.clone(),
                why: "the file no longer exists".to_string(),
            });
        } else if let Some(run) = index.running(path).first() {
            report.stale.push(StaleEntry {
                path: path.clone(),
                why: format!("now run by {} ({})", run.job, run.at),
            });
        }
    }
    report
}

/// Which steps run `file`, or why none does.
pub fn explain(file: &str, runs: &[StepRun], inventory: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    if !inventory.iter().any(|f| f == file) {
        out.push(format!(
            "{file} is not in the test inventory (test_*.py or *_test.py under the test roots, tracked by git)"
        ));
    }
    for run in runs.iter().filter(|r| r.covers(file)) {
        match run.excludes(file) {
            None => out.push(format!("run by {} at {}: {}", run.job, run.at, run.command)),
            Some(why) => out.push(format!(
                "covered by {} at {} but excluded by {why}: {}",
                run.job, run.at, run.command
            )),
        }
    }
    if out.iter().all(|l| !l.starts_with("run by")) {
        let dir = file.rsplit_once('/').map_or("", |(d, _)| d);
        let near: Vec<String> = runs
            .iter()
            .filter(|r| {
                r.dirs.iter().chain(r.files.iter()).any(|p| {
                    let top = dir.split('/').take(2).collect::<Vec<_>>().join("/");
                    !top.is_empty() && p.starts_with(&top)
                })
            })
            .take(5)
            .map(|r| format!("  nearby: {} at {} runs {}", r.job, r.at, r.command))
            .collect();
        out.push(format!(
            "no CI step runs {file}: no pytest target covers it"
        ));
        out.extend(near);
    }
    out
}

/// Why nearly nothing is tethered, when the CI's test paths do not exist
/// from the root: each a line saying what to configure.
pub fn diagnose(runs: &[StepRun], root: &Path) -> Vec<String> {
    let mut working_dirs: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut containers: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let top_dirs: Vec<String> = fs_err::read_dir(root)
        .map(|entries| {
            let mut dirs: Vec<String> = entries
                .filter_map(Result::ok)
                .filter(|e| e.path().is_dir())
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| !n.starts_with('.'))
                .collect();
            dirs.sort();
            dirs
        })
        .unwrap_or_default();
    for run in runs {
        for path in run.files.iter().chain(&run.dirs) {
            if is_glob(path) || root.join(path).exists() {
                continue;
            }
            if path.starts_with('/') {
                // An absolute container path: which prefix, cut off, lands
                // in the tree?
                let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
                for cut in 1..parts.len() {
                    let rest = parts[cut..].join("/");
                    if root.join(&rest).exists() {
                        let prefix = format!("/{}", parts[..cut].join("/"));
                        let entry = containers
                            .entry(prefix)
                            .or_insert((0, format!("{path} ({})", run.at)));
                        entry.0 += 1;
                        break;
                    }
                }
            } else if let Some(dir) = top_dirs.iter().find(|d| root.join(d).join(path).exists()) {
                let entry = working_dirs
                    .entry(dir.clone())
                    .or_insert((0, format!("{path} ({})", run.at)));
                entry.0 += 1;
            }
        }
    }
    let mut out = Vec::new();
    if let Some((dir, (count, example))) = working_dirs.iter().max_by_key(|(_, (n, _))| *n) {
        out.push(format!(
            "{count} test path{} in CI commands exist only under {dir}/, e.g. {example}: the steps run there; set `default-working-dir = \"{dir}\"` under [tether] in layerlock.toml",
            if *count == 1 { "" } else { "s" }
        ));
    }
    for (prefix, (count, example)) in &containers {
        out.push(format!(
            "{count} test path{} start with the container path {prefix}, e.g. {example}: map it with `path-map = [\"{prefix}=.\"]` under [tether] (or --path-map {prefix}=.)",
            if *count == 1 { "" } else { "s" }
        ));
    }
    out
}

#[cfg(test)]
mod decisions {
    use super::*;

    #[test]
    fn named_files_that_are_not_checked_say_why() {
        let root = std::env::temp_dir().join(format!("tether-only-{}", std::process::id()));
        std::fs::create_dir_all(root.join("tests")).unwrap();
        std::fs::write(root.join("tests/test_a.py"), "").unwrap();
        std::fs::write(root.join("tests/helper.py"), "").unwrap();
        let inventory = vec!["tests/test_a.py".to_string()];
        let only = ["tests/test_a.py", "tests/helper.py", "tests/gone.py"].map(String::from);
        let (why, none) = not_checked(&only, &inventory, &root);
        assert_eq!(
            why,
            [
                ("tests/helper.py", NotChecked::NotATestFile),
                ("tests/gone.py", NotChecked::Missing)
            ]
        );
        assert!(!none);
        let (_, none) = not_checked(&only[1..], &inventory, &root);
        assert!(none);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_report_fails_on_untethered_and_with_all_on_stale() {
        let mut report = TetherReport {
            checked: 20,
            untethered: (0..18).map(|i| format!("t{i}")).collect(),
            ..TetherReport::default()
        };
        assert!(report.mostly_untethered() && report.fails(false));
        report.untethered.truncate(17);
        assert!(!report.mostly_untethered());
        report.untethered.clear();
        report.stale.push(StaleEntry {
            path: "x".to_string(),
            why: "gone".to_string(),
        });
        assert!(!report.fails(false) && report.fails(true));
    }
}
