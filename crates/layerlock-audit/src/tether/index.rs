//! Tether's index of CI runs by the paths they name. Checking a test file
//! costs one lookup for the file and one for each folder above it, plus the
//! few patterns filed under those folders, instead of a match against every
//! run: linear in runs plus files (issue 14: 3,000 steps × 20,000 files).
//!
//! It answers what [`StepRun::runs`] answers, which stays the reference
//! (`explain` uses it for one file); a test holds the two equal.

use std::collections::HashMap;

use layerlock_ci::glob::{fnmatch, is_glob, matches as glob_matches};

use super::{StepRun, ignore_glob_hits, under_glob};

/// A selection that needs a match, not a lookup. Filed under the folder its
/// literal leading segments name, so only files under that folder try it.
enum Pattern<'r> {
    /// `tests/k/test_fused_*.py`, segment by segment.
    File(&'r str),
    /// `tests/*/unit`: the file's leading segments.
    Dir(&'r str),
    /// `find DIR -name NAME`: the file name, and the file under DIR when
    /// DIR is a glob (a literal DIR is where the pattern is filed).
    Find {
        glob_dir: Option<&'r str>,
        name: &'r str,
    },
}

impl Pattern<'_> {
    fn matches(&self, file: &str, name: &str) -> bool {
        match self {
            Pattern::File(glob) => glob_matches(glob, file),
            Pattern::Dir(glob) => under_glob(glob, file),
            Pattern::Find {
                glob_dir,
                name: pattern,
            } => glob_dir.is_none_or(|dir| under_glob(dir, file)) && fnmatch(pattern, name),
        }
    }
}

/// What the runs say about one path. Run numbers are indexes into the runs.
#[derive(Default)]
struct Entry<'r> {
    /// Runs naming this exact file.
    files: Vec<usize>,
    /// Runs naming this folder: they cover every file below it.
    dirs: Vec<usize>,
    /// Patterns whose literal leading folder is this one.
    patterns: Vec<(usize, Pattern<'r>)>,
    /// Runs with `--ignore` of this path: it and everything below it.
    ignored: Vec<usize>,
    /// Runs with `--deselect` of this exact file.
    deselected: Vec<usize>,
}

pub(super) struct RunIndex<'r> {
    paths: HashMap<&'r str, Entry<'r>>,
    /// Runs of the whole tree (pytest with no path at the root, `.`).
    everywhere: Vec<usize>,
    /// Patterns with no literal leading folder (`*/test_x.py`, `find .`):
    /// every file tries them.
    anywhere: Vec<(usize, Pattern<'r>)>,
    runs: &'r [StepRun],
}

impl<'r> RunIndex<'r> {
    pub(super) fn new(runs: &'r [StepRun]) -> Self {
        let mut index = Self {
            paths: HashMap::new(),
            everywhere: Vec::new(),
            anywhere: Vec::new(),
            runs,
        };
        for (run, step) in runs.iter().enumerate() {
            for file in &step.files {
                if is_glob(file) {
                    index.pattern(file, run, Pattern::File(file));
                } else {
                    index.entry(file).files.push(run);
                }
            }
            for dir in &step.dirs {
                if is_glob(dir) {
                    index.pattern(dir, run, Pattern::Dir(dir));
                } else if is_whole_tree(dir) {
                    index.everywhere.push(run);
                } else {
                    index.entry(dir).dirs.push(run);
                }
            }
            for (dir, name) in &step.finds {
                if is_glob(dir) {
                    let glob_dir = Some(dir.as_str());
                    index.pattern(dir, run, Pattern::Find { glob_dir, name });
                } else {
                    let find = Pattern::Find {
                        glob_dir: None,
                        name,
                    };
                    if is_whole_tree(dir) {
                        index.anywhere.push((run, find));
                    } else {
                        index.entry(dir).patterns.push((run, find));
                    }
                }
            }
            for path in &step.ignore {
                index.entry(path).ignored.push(run);
            }
            for path in &step.deselect {
                index.entry(path).deselected.push(run);
            }
        }
        index
    }

    fn entry(&mut self, path: &'r str) -> &mut Entry<'r> {
        self.paths.entry(path).or_default()
    }

    /// File a pattern under the folder its literal segments name.
    fn pattern(&mut self, glob: &'r str, run: usize, pattern: Pattern<'r>) {
        match literal_folder(glob) {
            Some(folder) => self.entry(folder).patterns.push((run, pattern)),
            None => self.anywhere.push((run, pattern)),
        }
    }

    /// The runs that run `file` (cover it and do not exclude it), in the
    /// order of `runs`.
    pub(super) fn running(&self, file: &str) -> Vec<&'r StepRun> {
        let name = file.rsplit('/').next().unwrap_or(file);
        let mut covering = self.everywhere.clone();
        let mut excluded = Vec::new();
        let matching = |patterns: &[(usize, Pattern)], covering: &mut Vec<usize>| {
            for (run, pattern) in patterns {
                if pattern.matches(file, name) {
                    covering.push(*run);
                }
            }
        };
        matching(&self.anywhere, &mut covering);
        if let Some(entry) = self.paths.get(file) {
            covering.extend(&entry.files);
            excluded.extend(&entry.ignored);
            excluded.extend(&entry.deselected);
        }
        // Every folder above the file: the text before each `/`. These are
        // exactly the `d` for which `file` starts with `d/`, the test the
        // reference applies to folders and `--ignore`.
        for (slash, _) in file.match_indices('/') {
            if let Some(entry) = self.paths.get(&file[..slash]) {
                covering.extend(&entry.dirs);
                matching(&entry.patterns, &mut covering);
                excluded.extend(&entry.ignored);
            }
        }
        covering.sort_unstable();
        covering.dedup();
        excluded.sort_unstable();
        covering
            .into_iter()
            .filter(|run| excluded.binary_search(run).is_err())
            .map(|run| &self.runs[run])
            .filter(|step| !step.ignore_glob.iter().any(|g| ignore_glob_hits(g, file)))
            .collect()
    }
}

/// A folder that stands for the whole tree (pytest run at the root).
fn is_whole_tree(dir: &str) -> bool {
    dir.is_empty() || dir == "."
}

/// The folder every match of `glob` is under: its segments before the first
/// one holding a glob character (`tests/k` for `tests/k/test_*.py`), or
/// `None` when the first segment holds one. Globs match segment by segment
/// and literal segments only themselves, so a file the glob matches starts
/// with this folder and a `/`.
fn literal_folder(glob: &str) -> Option<&str> {
    let mut end = None;
    let mut start = 0;
    for segment in glob.split('/') {
        if is_glob(segment) {
            break;
        }
        end = Some(start + segment.len());
        start += segment.len() + 1;
    }
    end.map(|end| &glob[..end])
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use layerlock_walk::Arg;

    use super::*;
    use crate::pytest::selection;
    use crate::tether::check;

    /// SplitMix64: a fixed seed gives the same trees on every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn pick<'a>(&mut self, items: &'a [String]) -> &'a str {
            &items[self.below(items.len())]
        }
    }

    /// Folders up to four deep under `tests`, and test files in them.
    fn tree(rng: &mut Rng) -> (Vec<String>, Vec<String>) {
        let mut dirs = vec!["tests".to_string()];
        for i in 0..80 {
            let parent = rng.pick(&dirs).to_string();
            if parent.matches('/').count() < 4 {
                dirs.push(format!("{parent}/{}{i}", ["unit", "e2e", "k"][i % 3]));
            }
        }
        let mut files: Vec<String> = (0..400)
            .map(|i| {
                let dir = rng.pick(&dirs);
                match i % 4 {
                    0 => format!("{dir}/{i}_test.py"),
                    _ => format!("{dir}/test_{}{i}.py", ["a", "b", "ab"][i % 3]),
                }
            })
            .collect();
        files.sort();
        files.dedup();
        (dirs, files)
    }

    /// A glob made from a real path: one segment, or part of one, replaced.
    fn globbed(rng: &mut Rng, path: &str) -> String {
        let mut segments: Vec<String> = path.split('/').map(str::to_string).collect();
        let at = rng.below(segments.len());
        segments[at] = match rng.below(4) {
            0 => "*".to_string(),
            1 => format!("{}*", &segments[at][..segments[at].len().min(2)]),
            2 => segments[at].replacen('t', "?", 1),
            _ => segments[at].replacen('e', "[ae]", 1),
        };
        segments.join("/")
    }

    /// A target a command line names: a file (perhaps with a node id), a
    /// folder, a glob of either, or an odd path; the whole tree only when
    /// `broad` (else every file would be run).
    fn target(rng: &mut Rng, dirs: &[String], files: &[String], broad: bool) -> String {
        let file = rng.pick(files).to_string();
        // `dirs[0]` is `tests`, the whole tree.
        let dir = rng.pick(if broad { dirs } else { &dirs[1..] }).to_string();
        match rng.below(if broad { 12 } else { 9 }) {
            0..=2 => file,
            3 => format!("{file}::test_x"),
            4 => format!("{file}::TestCase::test_y[a-1]"),
            5..=6 => dir,
            7 => globbed(rng, &file),
            8 => globbed(rng, &dir),
            9 => ["", "./"][rng.below(2)].to_string() + ["tests/", "tests", "."][rng.below(3)],
            10 => ["/ci/tests", "/ci/tests/test_a0.py", "other"][rng.below(3)].to_string(),
            _ => ["*.py", "*/*/test_*.py", "tests/*", "test_*.py"][rng.below(4)].to_string(),
        }
    }

    /// A pytest command line over the tree: targets (or none), `-k`, `-m`,
    /// `--ignore`, `--ignore-glob`, `--deselect` of files and of nodes; or
    /// `find … -exec pytest`.
    fn command(rng: &mut Rng, dirs: &[String], files: &[String], broad: bool) -> String {
        let mut words: Vec<String> = Vec::new();
        let find = rng.below(6) == 0;
        if find {
            words.push("find".to_string());
            for _ in 0..1 + rng.below(2) {
                words.push(match rng.below(4) {
                    0 if broad => ".".to_string(),
                    1 => {
                        let dir = rng.pick(dirs).to_string();
                        globbed(rng, &dir)
                    }
                    _ => rng.pick(dirs).to_string(),
                });
            }
            let name = ["test_*.py", "*_test.py", "test_a*", "*.py"][rng.below(4)];
            words.extend(["-name", name, "-exec", "pytest", "-q"].map(str::to_string));
        } else {
            let program = ["pytest -v -s", "python -m pytest", "coverage run -m pytest"];
            words.push(program[rng.below(3)].to_string());
            // No target at all is pytest in its folder: the whole tree.
            let targets = if broad {
                rng.below(4)
            } else {
                1 + rng.below(3)
            };
            for _ in 0..targets {
                words.push(target(rng, dirs, files, broad));
            }
        }
        for _ in 0..rng.below(5) {
            let option = match rng.below(8) {
                0 => format!("--ignore={}", rng.pick(dirs)),
                1 => format!("--ignore {}", rng.pick(files)),
                2 => format!("--ignore {}", ["tests/", ".", "other"][rng.below(3)]),
                3 => format!(
                    "--ignore-glob={}",
                    ["*/e2e*/*", "test_b*.py", "*_test.py", "tests/k*"][rng.below(4)]
                ),
                4 => format!("--deselect {}", rng.pick(files)),
                5 => format!("--deselect {}::test_x", rng.pick(files)),
                6 => "-k not_slow".to_string(),
                _ => "-m gpu".to_string(),
            };
            words.push(option);
        }
        if find {
            words.push("{} +".to_string());
        }
        words.join(" ")
    }

    /// The positions in `runs` of the runs found.
    fn positions(runs: &[StepRun], found: &[&StepRun]) -> Vec<usize> {
        found
            .iter()
            .filter_map(|f| runs.iter().position(|r| std::ptr::eq(r, *f)))
            .collect()
    }

    #[test]
    fn index_runs_what_matching_every_run_runs() {
        let mut rng = Rng(14);
        let (mut compared, mut untethered) = (0, 0);
        for _ in 0..16 {
            let (dirs, inventory) = tree(&mut rng);
            // Sparse trees leave files untethered; broad ones exercise
            // exclusions from whole-tree runs.
            let broad = rng.below(3) == 0;
            let mut runs = Vec::new();
            for n in 0..60 {
                let line = command(&mut rng, &dirs, &inventory, broad);
                let args: Vec<Arg> = line.split_whitespace().map(Arg::lit).collect();
                let Some(sel) = selection(&args, None) else {
                    panic!("not a pytest command: {line}");
                };
                let mut run = StepRun::new(format!("job-{}", n % 23), format!("p.yml:{n}"), line);
                // Run from the root, `.` resolves to the empty path.
                let from_root = rng.below(2) == 0;
                run.select(sel, |path| match path {
                    "." if from_root => String::new(),
                    _ => path.to_string(),
                });
                runs.push(run);
            }
            let index = RunIndex::new(&runs);
            // Test files, and paths an allowlist might name: folders, files
            // outside the tree, absolute paths.
            let extra = [
                "tests",
                "tests/unit1",
                "other/test_a.py",
                "/ci/tests/test_a0.py",
            ];
            let mut tethered = BTreeMap::new();
            for file in inventory.iter().map(String::as_str).chain(extra) {
                let brute: Vec<&StepRun> = runs.iter().filter(|r| r.runs(file)).collect();
                let found = index.running(file);
                assert_eq!(positions(&runs, &found), positions(&runs, &brute), "{file}");
                compared += brute.len();
                let mut jobs: Vec<String> = brute.iter().map(|r| r.job.clone()).collect();
                jobs.sort();
                jobs.dedup();
                if !jobs.is_empty() && inventory.iter().any(|f| f == file) {
                    tethered.insert(file.to_string(), jobs);
                }
            }
            let report = check(&inventory, None, &runs, &[], Path::new("/nonexistent"));
            assert_eq!(report.tethered, tethered);
            assert_eq!(report.untethered.len() + tethered.len(), inventory.len());
            untethered += report.untethered.len();
        }
        // Neither so sparse that nothing runs anything, nor so dense that
        // every file runs.
        assert!(compared > 20_000, "{compared}");
        assert!(untethered > 200, "{untethered}");
    }

    #[test]
    fn literal_folders_of_globs() {
        assert_eq!(literal_folder("tests/k/test_*.py"), Some("tests/k"));
        assert_eq!(literal_folder("tests/*/unit"), Some("tests"));
        assert_eq!(literal_folder("/ci/t?sts"), Some("/ci"));
        assert_eq!(literal_folder("/*.py"), Some(""));
        assert_eq!(literal_folder("*/test_x.py"), None);
        assert_eq!(literal_folder("test_[ab].py"), None);
    }
}
