//! What the walker tells a visitor, written down: a visitor that keeps
//! every command, missing script and note with each path that reaches it,
//! and a tree of files written into a temporary directory to walk.

use std::path::{Path, PathBuf};

use layerlock_ci::Phase;
use layerlock_walk::{CommandSite, Reach, ScanOptions, Visitor, Walked, walk};

/// A tree of files in a temporary directory, removed when dropped.
pub struct Tree {
    _dir: tempfile::TempDir,
    /// The tree's directory, canonical (the walk compares real paths).
    pub root: PathBuf,
}

/// Write `files` (path relative to the root, text) into a new tree.
pub fn tree(files: &[(&str, &str)]) -> Tree {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = fs_err::canonicalize(dir.path()).expect("the tree's real path");
    for (path, text) in files {
        let path = root.join(path);
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent).expect("a folder of the tree");
        }
        fs_err::write(&path, text).expect("a file of the tree");
    }
    Tree { _dir: dir, root }
}

impl Tree {
    /// The options of a walk of the whole tree.
    pub fn options(&self) -> ScanOptions {
        ScanOptions {
            root: self.root.clone(),
            targets: vec![self.root.clone()],
            ..ScanOptions::default()
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Walk the whole tree.
    pub fn walk(&self) -> Found {
        self.walk_with(&self.options())
    }

    pub fn walk_with(&self, options: &ScanOptions) -> Found {
        let mut visitor = Recorder::default();
        let walked = walk(options, &mut visitor);
        Found {
            reached: visitor.reached,
            walked,
        }
    }
}

/// What the walker told the visitor about a place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum What {
    Command,
    /// A script call the walker could not find, with the call.
    Missing(String),
    /// A command whose further commands were not read, with why.
    NotFollowed(String),
}

/// One item, as the visitor made it of a command site.
#[derive(Debug, Clone)]
pub struct Seen {
    pub what: What,
    /// `path:line` of the command.
    pub at: String,
    pub column: usize,
    pub text: String,
    /// The arguments: each value, or the word as written when computed.
    pub args: Vec<String>,
    /// The directory it runs in, relative to the root.
    pub cwd: Option<String>,
    pub phase: Phase,
    /// What the command's files answer: `cat F`, `-f F`, `--config F` (read as text),
    /// `-r F` (a requirements file), `printenv V` and `uv sync` (the
    /// project file): what was asked, and the answer.
    pub looked_up: Vec<(String, Option<String>)>,
    /// The arguments of the command before it in the same script.
    pub previous: Option<Vec<String>>,
}

/// One path to an item.
#[derive(Debug, Clone)]
pub struct Reached {
    pub seen: Seen,
    pub job: Option<String>,
    pub via: Vec<String>,
}

impl Reached {
    /// `path:line`, then ` via ` and the calls on the way joined by ` > `.
    pub fn shown(&self) -> String {
        if self.via.is_empty() {
            self.seen.at.clone()
        } else {
            format!("{} via {}", self.seen.at, self.via.join(" > "))
        }
    }
}

/// The test visitor: every item, once for every path that reaches it.
#[derive(Default)]
struct Recorder {
    reached: Vec<Reached>,
}

fn words(args: &[layerlock_walk::Arg]) -> Vec<String> {
    args.iter()
        .map(|a| a.value.clone().unwrap_or_else(|| a.raw.clone()))
        .collect()
}

impl Recorder {
    fn seen(what: What, site: &CommandSite<'_>) -> Seen {
        let args = words(site.args);
        let files = site.files;
        let mut looked_up = Vec::new();
        for pair in args.windows(2) {
            let (flag, value) = (pair[0].as_str(), pair[1].clone());
            let answer = match flag {
                "cat" | "-f" | "--file" | "--config" => {
                    files.read_text(&value).map(|(shown, _)| shown)
                }
                "-r" => files.read(&value).map(|(shown, _)| shown),
                "printenv" => files.env_var(&value),
                _ => continue,
            };
            looked_up.push((value, answer));
        }
        if args.iter().map(String::as_str).eq(["uv", "sync"]) {
            let answer = files.project_file(None, "pyproject.toml");
            looked_up.push(("pyproject.toml".to_string(), answer));
        }
        Seen {
            what,
            at: format!("{}:{}", site.location.path, site.location.line),
            column: site.location.column,
            text: site.text.to_string(),
            args,
            cwd: site.cwd.map(|d| shown(d, site.root)),
            phase: site.phase,
            looked_up,
            previous: site.previous.map(words),
        }
    }
}

/// A directory as a test names it: relative to the root, `.` for the root.
fn shown(dir: &Path, root: &Path) -> String {
    match dir.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => dir.display().to_string(),
    }
}

impl Visitor for Recorder {
    type Item = Seen;

    fn command(&mut self, site: &CommandSite<'_>, out: &mut Vec<Seen>) {
        out.push(Self::seen(What::Command, site));
    }

    fn missing_script(&mut self, call: &str, site: &CommandSite<'_>, out: &mut Vec<Seen>) {
        out.push(Self::seen(What::Missing(call.to_string()), site));
    }

    fn not_followed(&mut self, why: &str, site: &CommandSite<'_>, out: &mut Vec<Seen>) {
        out.push(Self::seen(What::NotFollowed(why.to_string()), site));
    }

    fn reached(&mut self, item: &Seen, reach: &Reach<'_>) {
        self.reached.push(Reached {
            seen: item.clone(),
            job: reach.job.map(str::to_string),
            via: reach.via.to_vec(),
        });
    }
}

/// Everything a walk told the visitor, and what it read.
pub struct Found {
    pub reached: Vec<Reached>,
    pub walked: Walked,
}

impl Found {
    /// The paths to the command whose arguments are `command` (words
    /// joined by spaces), each as `path:line`, then ` via ` and the calls
    /// on the way joined by ` > `.
    pub fn reach(&self, command: &str) -> Vec<String> {
        self.commands(command)
            .into_iter()
            .map(Reached::shown)
            .collect()
    }

    /// Assert the paths to a command, showing everything found if not.
    #[track_caller]
    pub fn assert_reach(&self, command: &str, expected: &[&str]) {
        assert_eq!(self.reach(command), expected, "\n{}", self.dump());
    }

    /// The paths to the command whose arguments are `command`.
    pub fn commands(&self, command: &str) -> Vec<&Reached> {
        self.reached
            .iter()
            .filter(|r| r.seen.what == What::Command && r.seen.args.join(" ") == command)
            .collect()
    }

    /// The one path to the command whose arguments are `command`.
    #[track_caller]
    pub fn one(&self, command: &str) -> &Reached {
        let found = self.commands(command);
        assert_eq!(found.len(), 1, "one path to `{command}`:\n{}", self.dump());
        found[0]
    }

    /// Each script call not found: `call at path:line`, with the calls on
    /// the way as [`Found::reach`] shows them.
    pub fn missing(&self) -> Vec<String> {
        self.reached
            .iter()
            .filter_map(|r| match &r.seen.what {
                What::Missing(call) => Some(format!("{call} at {}", r.shown())),
                _ => None,
            })
            .collect()
    }

    #[track_caller]
    pub fn assert_missing(&self, expected: &[&str]) {
        assert_eq!(self.missing(), expected, "\n{}", self.dump());
    }

    /// Each note of what was not followed: `path:line: why`.
    pub fn not_followed(&self) -> Vec<String> {
        self.reached
            .iter()
            .filter_map(|r| match &r.seen.what {
                What::NotFollowed(why) => Some(format!("{}: {why}", r.seen.at)),
                _ => None,
            })
            .collect()
    }

    #[track_caller]
    pub fn assert_not_followed(&self, expected: &[&str]) {
        assert_eq!(self.not_followed(), expected, "\n{}", self.dump());
    }

    /// The errors, as `path:line: message`.
    pub fn errors(&self) -> Vec<String> {
        self.walked
            .errors
            .iter()
            .map(|e| format!("{}:{}: {}", e.path, e.line, e.message))
            .collect()
    }

    #[track_caller]
    pub fn assert_errors(&self, expected: &[&str]) {
        assert_eq!(self.errors(), expected, "\n{}", self.dump());
    }

    /// The files read.
    pub fn files(&self) -> Vec<&str> {
        self.walked.files.iter().map(String::as_str).collect()
    }

    /// Every path to every item, one a line, for a failing assertion.
    pub fn dump(&self) -> String {
        let mut out = String::new();
        for r in &self.reached {
            out.push_str(&format!(
                "{:?} {} col {} job {:?} via {:?} args {:?} cwd {:?} {:?} looked {:?}\n",
                r.seen.what,
                r.seen.at,
                r.seen.column,
                r.job,
                r.via,
                r.seen.args,
                r.seen.cwd,
                r.seen.phase,
                r.seen.looked_up
            ));
        }
        for e in self.errors() {
            out.push_str(&format!("error {e}\n"));
        }
        out
    }
}
