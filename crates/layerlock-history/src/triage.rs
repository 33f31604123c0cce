//! Failures against history: for each failing test of a job that was dark
//! (disabled, or unable to run) for a while, the commits that touched the
//! test file or the in-repository modules it imports, split into those that
//! landed on the main line while the job was dark (latent) and those of the
//! branch under test (this change). Strict XPASS results lead to their
//! `xfail` marker and to what changed under test since it was added.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use layerlock_git::{Commit, Git, GitError};
use serde::Serialize;

use crate::blocks::{self, CommitRef};
use crate::junit::{self, Outcome, TestCase};
use crate::pyimports::{self, ClosureOptions};
use crate::xfail::{self, NodeId, XfailMarker};

use crate::junit::MAX_REPORT_BYTES;
use crate::plural;

mod fixes;
mod main_run;
mod since;

pub use fixes::{DEFAULT_FIX_REFS, PossibleFix, RefsRead};
pub use main_run::{MainStatus, OnMain};
pub use since::{FixedSince, Previous};
/// Commits listed per failure before "and N more".
const MAX_COMMITS_SHOWN: usize = 10;

#[derive(Debug, thiserror::Error)]
pub enum TriageError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Blocks(#[from] blocks::BlocksError),
    #[error("{path}: {message}")]
    Report { path: String, message: String },
    #[error("{path}:{line}: {message}")]
    ReportAt {
        path: String,
        line: usize,
        message: String,
    },
    #[error(
        "--dark-since {0}: neither a revision of this repository nor a date (YYYY-MM-DD or RFC 3339)"
    )]
    DarkSince(String),
    #[error(
        "cannot tell when job {job} went dark: no commit reachable from {main} removed its step; pass --dark-since REV|DATE"
    )]
    NoDisablingCommit { job: String, main: String },
    #[error(
        "--dark-since {rev} is not on the main line ({main}): pass the commit of {main} that disabled the job, or a date"
    )]
    DarkOffMain { rev: String, main: String },
    #[error(
        "{path}, the file of failing test {node}, cannot be read: {why}; triage reads the imports of each failing test from its file in the work tree"
    )]
    TestFile {
        path: String,
        node: String,
        why: String,
    },
}

/// One report file and the job it belongs to.
#[derive(Debug, Clone)]
pub struct ReportInput {
    pub job: Option<String>,
    pub path: PathBuf,
    /// How the path is shown.
    pub shown: String,
}

/// When the jobs went dark.
#[derive(Debug, Clone)]
pub enum DarkSince {
    /// A revision on the main line (the commit that disabled the job).
    Rev(String),
    /// A date; commits on the main line after it.
    Date(String),
    /// For each job (its key), the last commit that removed its step.
    FromBlocks { paths: Vec<String> },
}

#[derive(Debug, Clone)]
pub struct TriageOptions {
    pub reports: Vec<ReportInput>,
    pub dark_since: DarkSince,
    /// The main line; `None`: the first of origin/main, main, origin/master,
    /// master that exists.
    pub main: Option<String>,
    /// The branch under test.
    pub head: String,
    /// How deep imports are followed from a test file.
    pub depth: usize,
    /// The same jobs' reports on the main line (`--main-report`).
    pub main_reports: Vec<ReportInput>,
    /// Where likely fixes are looked for: ref patterns (`--fix-refs`);
    /// `None` looks nowhere.
    pub fix_refs: Option<Vec<String>>,
    /// An earlier run to tell what was fixed since (`--previous`).
    pub previous: Option<Previous>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    /// Commits touching the test or its modules landed on the main line
    /// while the job was dark, before the branch.
    Latent,
    /// The branch's own commits touch them.
    ThisChange,
    /// An `xfail(strict=True)` test passed: the marker is stale.
    StaleXfail,
    /// Neither: flaky, the environment, or something outside the files read.
    Unexplained,
}

impl Cause {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Latent => "latent",
            Self::ThisChange => "this change",
            Self::StaleXfail => "stale xfail",
            Self::Unexplained => "unexplained",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CommitInfo {
    pub id: String,
    /// `YYYY-MM-DD`, committer date in UTC.
    pub date: String,
    pub subject: String,
    pub pr: Option<u64>,
    /// The files read for this failure that the commit touched.
    pub touched: Vec<String>,
    /// How near the nearest of them is to the test: 0 the test file, 1 a
    /// module it imports or a conftest.py above it, 2 a module those import, …
    pub distance: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct XfailInfo {
    pub path: String,
    pub line: usize,
    pub strict: Option<bool>,
    pub reason: Option<String>,
    /// The commit that wrote the marker's line.
    pub added: Option<CommitInfo>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    pub job: String,
    pub node_id: String,
    /// The test file in the repository, when one was found.
    pub file: Option<String>,
    pub outcome: Outcome,
    pub message: Option<String>,
    pub cause: Cause,
    /// Why the cause was given, in words.
    pub note: String,
    pub latent: Vec<CommitInfo>,
    pub this_change: Vec<CommitInfo>,
    pub more_commits: usize,
    pub xfail: Option<XfailInfo>,
    /// Reports it came from (`path:line`).
    pub seen_in: Vec<String>,
    /// The same test in main's run of the job, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_main: Option<OnMain>,
    /// Commits of unmerged refs that touch what the test reads, nearest
    /// first.
    pub possible_fixes: Vec<PossibleFix>,
}

#[derive(Debug, Clone, Serialize)]
pub struct JobWindow {
    pub job: String,
    /// The commit the job went dark at, or the date.
    pub dark_since: String,
    pub disabled_by: Option<CommitRef>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TriageReport {
    pub version: u32,
    pub main: String,
    pub merge_base: String,
    pub head: String,
    pub windows: Vec<JobWindow>,
    pub failures: Vec<Failure>,
    /// Counts of every outcome read, merged across shards.
    pub totals: BTreeMap<String, usize>,
    /// Failures of the earlier run (`--previous`) that pass now, with the
    /// commits since its head that touched what they read.
    pub fixed: Vec<FixedSince>,
    /// The earlier run's head.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_head: Option<String>,
    /// The refs read for likely fixes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix_refs: Option<RefsRead>,
}

impl TriageReport {
    pub fn by_job_and_cause(&self) -> BTreeMap<&str, BTreeMap<Cause, Vec<&Failure>>> {
        let mut out: BTreeMap<&str, BTreeMap<Cause, Vec<&Failure>>> = BTreeMap::new();
        for f in &self.failures {
            out.entry(&f.job)
                .or_default()
                .entry(f.cause)
                .or_default()
                .push(f);
        }
        out
    }
}

/// A test's results across every report of its job.
struct Merged {
    job: String,
    case: TestCase,
    outcomes: Vec<Outcome>,
    seen_in: Vec<String>,
}

fn is_bad(outcome: Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Failed | Outcome::Error | Outcome::XPassStrict
    )
}

/// The PR number a subject names: `… (#123)` or `Merge pull request #123`.
pub fn pr_number(subject: &str) -> Option<u64> {
    if let Some(rest) = subject.strip_prefix("Merge pull request #") {
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        return digits.parse().ok();
    }
    let open = subject.rfind("(#")?;
    let rest = &subject[open + 2..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    rest[digits.len()..]
        .starts_with(')')
        .then(|| digits.parse().ok())?
}

fn info(commit: &Commit, relevant: &Relevant) -> CommitInfo {
    let touched: Vec<String> = commit
        .paths
        .iter()
        .filter(|p| relevant.contains_key(*p))
        .cloned()
        .collect();
    let distance = touched
        .iter()
        .filter_map(|p| relevant.get(p))
        .min()
        .copied()
        .unwrap_or(0);
    CommitInfo {
        id: commit.id.clone(),
        date: crate::date(commit.time),
        subject: commit.subject.clone(),
        pr: pr_number(&commit.subject),
        touched,
        distance,
    }
}

/// The files a failing test reads, each with its import distance.
type Relevant = BTreeMap<String, usize>;

/// The commits among `commits` that touched what the test reads, nearest
/// first, newest first within a distance.
fn touching(commits: &[Commit], relevant: &Relevant) -> Vec<CommitInfo> {
    let mut found: Vec<CommitInfo> = commits
        .iter()
        .filter(|c| c.paths.iter().any(|p| relevant.contains_key(p)))
        .map(|c| info(c, relevant))
        .collect();
    // Stable: git's newest-first order is kept within a distance.
    found.sort_by_key(|c| c.distance);
    found
}

/// `3 on the test file, 2 on modules it imports, 40 further down`.
fn by_distance(commits: &[CommitInfo]) -> String {
    let count = |keep: &dyn Fn(usize) -> bool| commits.iter().filter(|c| keep(c.distance)).count();
    let parts: Vec<String> = [
        (count(&|d| d == 0), "on the test file"),
        (
            count(&|d| d == 1),
            "on modules it imports or its conftest.py",
        ),
        (count(&|d| d >= 2), "further down its imports"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    parts.join(", ")
}

/// The most dotted names of a module path a report's classname is matched
/// against (`a.b.test_x` is three).
const MAX_MODULE_PARTS: usize = 32;

/// Test files by every dotted suffix, to find the file a JUnit classname
/// names wherever the tests ran from.
struct TestFiles {
    tracked: BTreeSet<String>,
    by_module: HashMap<String, Vec<String>>,
}

impl TestFiles {
    fn new(tracked: Vec<String>) -> Self {
        let mut by_module: HashMap<String, Vec<String>> = HashMap::new();
        let tracked: BTreeSet<String> =
            tracked.into_iter().filter(|p| p.ends_with(".py")).collect();
        for path in &tracked {
            let module = path.trim_end_matches(".py").replace('/', ".");
            let parts: Vec<&str> = module.split('.').collect();
            // The last few names only: a path thousands of folders deep
            // would otherwise cost the square of its length.
            for start in parts.len().saturating_sub(MAX_MODULE_PARTS)..parts.len() {
                by_module
                    .entry(parts[start..].join("."))
                    .or_default()
                    .push(path.clone());
            }
        }
        Self { tracked, by_module }
    }

    /// The file and the class (if any) a test case names.
    fn locate(&self, case: &TestCase) -> (Option<String>, Option<String>) {
        if let Some(file) = &case.file {
            let file = file.trim_start_matches("./").to_string();
            if self.tracked.contains(&file) {
                let class = case
                    .classname
                    .rsplit('.')
                    .next()
                    .filter(|c| c.chars().next().is_some_and(char::is_uppercase));
                return (Some(file), class.map(str::to_string));
            }
            if let Some(found) = self.unique(&file.trim_end_matches(".py").replace('/', ".")) {
                return (Some(found), None);
            }
        }
        // `a.b.test_x.TestClass` → the longest prefix that names one file
        // (no longer than the names a file is indexed by).
        let parts: Vec<&str> = case.classname.split('.').collect();
        for end in (1..=parts.len().min(MAX_MODULE_PARTS)).rev() {
            if let Some(found) = self.unique(&parts[..end].join(".")) {
                let class = parts[end..].last().map(|c| (*c).to_string());
                return (Some(found), class);
            }
        }
        (None, None)
    }

    fn unique(&self, module: &str) -> Option<String> {
        match self.by_module.get(module).map(Vec::as_slice) {
            Some([one]) => Some(one.clone()),
            _ => None,
        }
    }
}

fn node_id(case: &TestCase, file: Option<&str>, class: Option<&str>) -> String {
    match file {
        Some(file) => match class {
            Some(class) => format!("{file}::{class}::{}", case.name),
            None => format!("{file}::{}", case.name),
        },
        None => format!("{}::{}", case.classname, case.name),
    }
}

/// A report's test cases, and the commit its run tested when it says.
fn read_report(input: &ReportInput) -> Result<(Vec<TestCase>, Option<String>), TriageError> {
    let bytes = read_limited(&input.path).map_err(|message| TriageError::Report {
        path: input.shown.clone(),
        message,
    })?;
    let text = decode(&bytes);
    let cases = junit::parse_report(&text).map_err(|e| TriageError::ReportAt {
        path: input.shown.clone(),
        line: e.line,
        message: e.message,
    })?;
    Ok((cases, junit::report_commit(&text)))
}

/// A report file's bytes: a regular file (checked before it is opened:
/// opening a FIFO waits for a writer) of at most [`MAX_REPORT_BYTES`]; else
/// what is wrong, in words.
fn read_limited(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            "no such file (pass the report the tests wrote, e.g. pytest's --junitxml)".to_string()
        }
        _ => e.to_string(),
    })?;
    if !meta.is_file() {
        return Err(
            "not a regular file (a folder, FIFO or device); pass the report file".to_string(),
        );
    }
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err("not a regular file".to_string());
    }
    let mut bytes = Vec::new();
    file.take(MAX_REPORT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() > MAX_REPORT_BYTES {
        return Err(format!(
            "over {} MiB; split the report",
            MAX_REPORT_BYTES >> 20
        ));
    }
    Ok(bytes)
}

/// A report's text: UTF-16 when it starts with a UTF-16 byte-order mark
/// (some JUnit writers save it so), else UTF-8.
fn decode(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    let units = |big: bool| {
        bytes[2..].chunks(2).map(move |pair| match pair {
            [a, b] if big => u16::from_be_bytes([*a, *b]),
            [a, b] => u16::from_le_bytes([*a, *b]),
            _ => 0xfffd,
        })
    };
    let utf16 = |big: bool| {
        char::decode_utf16(units(big))
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect::<String>()
    };
    match bytes {
        [0xff, 0xfe, ..] => utf16(false).into(),
        [0xfe, 0xff, ..] => utf16(true).into(),
        _ => String::from_utf8_lossy(bytes),
    }
}

/// A `--dark-since` date as git takes it, checked strictly first (git
/// itself reads almost anything as some date).
fn checked_date(text: &str) -> Option<String> {
    if let Ok(ts) = text.parse::<jiff::Timestamp>() {
        return Some(ts.to_string());
    }
    let date: jiff::civil::Date = text.parse().ok()?;
    Some(format!("{date}T00:00:00Z"))
}

/// How one job's dark window is walked: `DARK..MERGE_BASE`, or since a date.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Window {
    After(String),
    SinceDate(String),
}

fn resolve_windows(
    git: &Git,
    dark_since: &DarkSince,
    jobs: &BTreeSet<String>,
    main: &str,
    main_commit: &str,
) -> Result<BTreeMap<String, (Window, JobWindow)>, TriageError> {
    let window = |job: &str, w: Window, shown: String, by: Option<CommitRef>| {
        (
            job.to_string(),
            (
                w,
                JobWindow {
                    job: job.to_string(),
                    dark_since: shown,
                    disabled_by: by,
                },
            ),
        )
    };
    let same_for_all = |w: Window, shown: String| {
        jobs.iter()
            .map(|job| window(job, w.clone(), shown.clone(), None))
            .collect()
    };
    match dark_since {
        DarkSince::Rev(rev) => match git.commit(rev) {
            // Off the main line, `REV..merge-base` would walk nothing (a
            // commit of the branch) or the wrong commits.
            Ok(commit) if !git.is_ancestor(&commit, main_commit)? => {
                Err(TriageError::DarkOffMain {
                    rev: rev.clone(),
                    main: main.to_string(),
                })
            }
            Ok(commit) => Ok(same_for_all(Window::After(commit.clone()), commit)),
            Err(GitError::UnknownRevision { .. }) => {
                let date = checked_date(rev).ok_or_else(|| TriageError::DarkSince(rev.clone()))?;
                Ok(same_for_all(Window::SinceDate(date.clone()), date))
            }
            Err(e) => Err(e.into()),
        },
        DarkSince::Date(text) => {
            let date = checked_date(text).ok_or_else(|| TriageError::DarkSince(text.clone()))?;
            Ok(same_for_all(Window::SinceDate(date.clone()), date))
        }
        DarkSince::FromBlocks { paths } => {
            let found = blocks::disabling_commits(git, paths, main_commit, jobs)?;
            jobs.iter()
                .map(|job| {
                    let by = found
                        .get(job)
                        .ok_or_else(|| TriageError::NoDisablingCommit {
                            job: job.clone(),
                            main: main.to_string(),
                        })?;
                    Ok(window(
                        job,
                        Window::After(by.id.clone()),
                        by.id.clone(),
                        Some(by.clone()),
                    ))
                })
                .collect()
        }
    }
}

fn outcome_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Passed => "passed",
        Outcome::Failed => "failed",
        Outcome::Error => "error",
        Outcome::Skipped => "skipped",
        Outcome::XFailed => "xfailed",
        Outcome::XPassStrict => "xpass-strict",
    }
}

/// One failing test, located.
struct Located {
    merged: Merged,
    file: Option<String>,
    class: Option<String>,
    relevant: Relevant,
    worst: Outcome,
    flaky: bool,
}

pub fn triage(git: &Git, options: &TriageOptions) -> Result<TriageReport, TriageError> {
    let Merge {
        failing,
        totals,
        tests,
        ..
    } = merge_reports(&options.reports)?;
    let main_run = if options.main_reports.is_empty() {
        None
    } else {
        Some(merge_reports(&options.main_reports)?)
    };
    let crate::ForkPoint {
        main,
        main_commit,
        head,
        merge_base,
    } = crate::ForkPoint::find(git, options.main.as_deref(), &options.head)?;
    let jobs: BTreeSet<String> = failing.iter().map(|f| f.merged.job.clone()).collect();
    let windows = resolve_windows(git, &options.dark_since, &jobs, &main, &main_commit)?;
    let files = TestFiles::new(git.tracked(&[])?);
    let main_run = main_run.as_ref().map(|m| main_run::MainRun::new(m, &files));
    let located = locate(git, &files, failing, options.depth)?;
    let walks = Walks::of(git, &located, &windows, &merge_base, &head)?;
    let (fixes, fix_refs) = match &options.fix_refs {
        Some(patterns) if !located.is_empty() => {
            let all = all_relevant(&located);
            let (fixes, read) = fixes::Fixes::find(git, patterns, &all, &main_commit, &head)?;
            (Some(fixes), Some(read))
        }
        _ => (None, None),
    };
    let mut starts: HashMap<Window, i64> = HashMap::new();
    let mut xfails = Xfails::new(git, &head);
    xfails.prepare(&located)?;
    let mut failures = Vec::new();
    for l in located {
        let window = &windows[&l.merged.job].0;
        let node = node_id(&l.merged.case, l.file.as_deref(), l.class.as_deref());
        let on_main = main_run.as_ref().map(|m| m.of(&l.merged.job, &node));
        let possible_fixes = match &fixes {
            Some(fixes) => {
                let since = match starts.get(window) {
                    Some(t) => *t,
                    None => {
                        let t = window_start(git, window)?;
                        starts.insert(window.clone(), t);
                        t
                    }
                };
                fixes.of(&l.relevant, since)
            }
            None => Vec::new(),
        };
        let mut failure = classify(l, window, &walks, &mut xfails, &main)?;
        if let Some(on) = &on_main
            && on.status == MainStatus::OnlyHere
            && failure.cause == Cause::Latent
        {
            failure.note.push_str(
                "; but main's run passes it: worth a second look (the commits may not be why)",
            );
        }
        failure.on_main = on_main;
        failure.possible_fixes = possible_fixes;
        failures.push(failure);
    }
    failures.sort_by(|a, b| (&a.job, a.cause, &a.node_id).cmp(&(&b.job, b.cause, &b.node_id)));
    let (fixed, previous_head) = match &options.previous {
        Some(previous) => {
            let (fixed, old) =
                since::fixed_since(git, previous, &tests, &files, &head, options.depth)?;
            (fixed, Some(old))
        }
        None => (Vec::new(), None),
    };
    Ok(TriageReport {
        version: 1,
        main,
        merge_base,
        head,
        windows: windows.into_values().map(|(_, w)| w).collect(),
        failures,
        totals,
        fixed,
        previous_head,
        fix_refs,
    })
}

/// Every file any failing test reads.
fn all_relevant(located: &[Located]) -> Vec<String> {
    located
        .iter()
        .flat_map(|l| l.relevant.keys().cloned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// When a dark window began, in seconds: its disabling commit's time, or
/// its date.
fn window_start(git: &Git, window: &Window) -> Result<i64, TriageError> {
    match window {
        Window::After(commit) => {
            let found = git.log(&["-1".to_string(), commit.clone()], &[], false)?;
            Ok(found.first().map_or(0, |c| c.time))
        }
        Window::SinceDate(date) => Ok(date
            .parse::<jiff::Timestamp>()
            .map_or(0, jiff::Timestamp::as_second)),
    }
}

/// A failing test before it is located: its cases merged across shards,
/// its worst outcome, and whether it also passed somewhere.
struct Failing {
    merged: Merged,
    worst: Outcome,
    flaky: bool,
}

/// A test by job, classname and name.
type TestKey = (String, String, String);

/// One test's results across the reports of its job.
struct TestRun {
    case: TestCase,
    worst: Outcome,
    seen_in: Vec<String>,
}

/// Reports merged by (job, test) across shards.
struct Merge {
    /// The failing tests.
    failing: Vec<Failing>,
    /// How many tests ended each way.
    totals: BTreeMap<String, usize>,
    /// Every test, failing or not.
    tests: BTreeMap<TestKey, TestRun>,
    /// The commit a job's reports say their run tested.
    commits: BTreeMap<String, String>,
}

/// Every report, merged by (job, test) across shards.
fn merge_reports(reports: &[ReportInput]) -> Result<Merge, TriageError> {
    let mut merged: BTreeMap<TestKey, Merged> = BTreeMap::new();
    let mut commits: BTreeMap<String, String> = BTreeMap::new();
    for input in reports {
        let job = input.job.clone().unwrap_or_else(|| ALL_JOBS.to_string());
        let (cases, commit) = read_report(input)?;
        if let Some(commit) = commit {
            commits.entry(job.clone()).or_insert(commit);
        }
        for case in cases {
            let key = (job.clone(), case.classname.clone(), case.name.clone());
            let entry = merged.entry(key).or_insert_with(|| Merged {
                job: job.clone(),
                case: case.clone(),
                outcomes: Vec::new(),
                seen_in: Vec::new(),
            });
            if is_bad(case.outcome) && !is_bad(entry.case.outcome) {
                entry.case = case.clone();
            }
            entry.outcomes.push(case.outcome);
            entry.seen_in.push(format!("{}:{}", input.shown, case.line));
        }
    }
    let mut totals: BTreeMap<String, usize> = BTreeMap::new();
    let mut failing = Vec::new();
    let mut tests = BTreeMap::new();
    for (key, m) in merged {
        let worst = m
            .outcomes
            .iter()
            .copied()
            .find(|o| is_bad(*o))
            .unwrap_or(m.case.outcome);
        *totals.entry(outcome_name(worst).to_string()).or_default() += 1;
        tests.insert(
            key,
            TestRun {
                case: m.case.clone(),
                worst,
                seen_in: m.seen_in.clone(),
            },
        );
        if is_bad(worst) {
            let flaky = m.outcomes.contains(&Outcome::Passed);
            failing.push(Failing {
                merged: m,
                worst,
                flaky,
            });
        }
    }
    Ok(Merge {
        failing,
        totals,
        tests,
        commits,
    })
}

/// Each failing test's file and class, and the in-repository files it
/// reads (its import closure, `depth` deep).
fn locate(
    git: &Git,
    files: &TestFiles,
    failing: Vec<Failing>,
    depth: usize,
) -> Result<Vec<Located>, TriageError> {
    let closure_options = ClosureOptions {
        depth,
        ..ClosureOptions::default()
    };
    let mut closures: HashMap<String, Relevant> = HashMap::new();
    let mut located = Vec::new();
    let root = fs_err::canonicalize(git.root()).unwrap_or_else(|_| git.root().to_path_buf());
    let mut readable: BTreeSet<String> = BTreeSet::new();
    for Failing {
        merged,
        worst,
        flaky,
    } in failing
    {
        let (file, class) = files.locate(&merged.case);
        // What the test imports is unknown when its file cannot be read:
        // that is no "nothing it imports changed".
        if let Some(file) = &file
            && !readable.contains(file)
        {
            if let Err(why) = layerlock_walk::read_bounded(&root.join(file), &root) {
                return Err(TriageError::TestFile {
                    path: file.clone(),
                    node: node_id(&merged.case, Some(file), class.as_deref()),
                    why: why.to_string(),
                });
            }
            readable.insert(file.clone());
        }
        let relevant = match &file {
            Some(file) => closures
                .entry(file.clone())
                .or_insert_with(|| {
                    pyimports::closure(git.root(), std::slice::from_ref(file), &closure_options)
                        .depth
                })
                .clone(),
            None => Relevant::new(),
        };
        located.push(Located {
            merged,
            file,
            class,
            relevant,
            worst,
            flaky,
        });
    }
    Ok(located)
}

/// The commits that touched any file a failure reads: one walk per dark
/// window, one for the branch.
struct Walks {
    windows: HashMap<Window, Vec<Commit>>,
    branch: Vec<Commit>,
}

impl Walks {
    fn of(
        git: &Git,
        located: &[Located],
        windows: &BTreeMap<String, (Window, JobWindow)>,
        merge_base: &str,
        head: &str,
    ) -> Result<Self, TriageError> {
        let all_relevant = all_relevant(located);
        let mut walks: HashMap<Window, Vec<Commit>> = HashMap::new();
        let branch: Vec<Commit> = if all_relevant.is_empty() || head == merge_base {
            Vec::new()
        } else {
            git.log(&[format!("{merge_base}..{head}")], &all_relevant, true)?
        };
        for (window, _) in windows.values() {
            if walks.contains_key(window) || all_relevant.is_empty() {
                continue;
            }
            let range = match window {
                Window::After(dark) => vec![
                    "--first-parent".to_string(),
                    format!("{dark}..{merge_base}"),
                ],
                Window::SinceDate(date) => vec![
                    "--first-parent".to_string(),
                    format!("--since={date}"),
                    merge_base.to_string(),
                ],
            };
            walks.insert(window.clone(), git.log(&range, &all_relevant, true)?);
        }
        Ok(Self {
            windows: walks,
            branch,
        })
    }
}

/// What explains one located failure: the commits that touched what it
/// reads while its job was dark (`latent`) and on the branch, nearest
/// first, or a stale xfail, or nothing.
fn classify(
    l: Located,
    window: &Window,
    walks: &Walks,
    xfails: &mut Xfails,
    main: &str,
) -> Result<Failure, TriageError> {
    let mut latent = touching(
        walks
            .windows
            .get(window)
            .map(Vec::as_slice)
            .unwrap_or_default(),
        &l.relevant,
    );
    let mut this_change = touching(&walks.branch, &l.relevant);
    let mut xfail_info = None;
    let node = node_id(&l.merged.case, l.file.as_deref(), l.class.as_deref());
    let (cause, note) = if l.worst == Outcome::XPassStrict {
        let stale = xfails.stale(&l, window)?;
        xfail_info = stale.marker;
        if let Some(since_added) = stale.since_added {
            latent = since_added;
            this_change.clear();
        }
        (Cause::StaleXfail, stale.note)
    } else {
        explain(&l, &latent, &this_change, main)
    };
    let more = latent.len().saturating_sub(MAX_COMMITS_SHOWN)
        + this_change.len().saturating_sub(MAX_COMMITS_SHOWN);
    latent.truncate(MAX_COMMITS_SHOWN);
    this_change.truncate(MAX_COMMITS_SHOWN);
    Ok(Failure {
        job: l.merged.job.clone(),
        node_id: node,
        file: l.file.clone(),
        outcome: l.worst,
        message: l.merged.case.message.clone(),
        cause,
        note,
        latent,
        this_change,
        more_commits: more,
        xfail: xfail_info,
        seen_in: l.merged.seen_in.clone(),
        on_main: None,
        possible_fixes: Vec::new(),
    })
}

/// The cause of a failure that is no strict XPASS, and the note that says
/// why: flaky, nothing to compare, the branch's own change when it is as
/// near as anything that landed while dark, else what landed, else nothing.
fn explain(
    l: &Located,
    latent: &[CommitInfo],
    this_change: &[CommitInfo],
    main: &str,
) -> (Cause, String) {
    if l.flaky {
        return (
            Cause::Unexplained,
            "flaky: it also passed in another report of this job".to_string(),
        );
    }
    if l.file.is_none() {
        return (
            Cause::Unexplained,
            format!(
                "no tracked test file matches `{}`; nothing to compare with history",
                l.merged.case.classname
            ),
        );
    }
    if !this_change.is_empty()
        && latent
            .first()
            .is_none_or(|l| this_change[0].distance <= l.distance)
    {
        // The branch's own change is the nearer suspect (or as near).
        return (
            Cause::ThisChange,
            format!(
                "{} commit{} of this branch: {}{}",
                this_change.len(),
                plural(this_change.len()),
                by_distance(this_change),
                if latent.is_empty() {
                    String::new()
                } else {
                    format!("; also {} while the job was dark", latent.len())
                }
            ),
        );
    }
    if !latent.is_empty() {
        return (
            Cause::Latent,
            format!(
                "{} commit{} landed on {} while the job was dark: {}{}",
                latent.len(),
                plural(latent.len()),
                main,
                by_distance(latent),
                if this_change.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; this branch touches only files further away ({})",
                        this_change.len()
                    )
                }
            ),
        );
    }
    (
        Cause::Unexplained,
        format!(
            "nothing touched the test or the {} in-repository file{} it imports while the job was dark: flaky or the environment",
            l.relevant.len().saturating_sub(1),
            plural(l.relevant.len().saturating_sub(1))
        ),
    )
}

/// The job name used when a report names none.
pub const ALL_JOBS: &str = "(all)";

/// What a strict XPASS leads to.
struct StaleXfail {
    marker: Option<XfailInfo>,
    /// The commits since the marker was added that touched the code under
    /// test; `None` when the marker was not found.
    since_added: Option<Vec<CommitInfo>>,
    note: String,
}

/// What strict XPASS failures read, each once however many there are:
/// each test file's markers, each marker line's blame, each walk.
struct Xfails<'g> {
    git: &'g Git,
    head: String,
    indexes: HashMap<String, Option<xfail::XfailIndex>>,
    blamed: HashMap<(String, usize), Option<Commit>>,
    logs: HashMap<(Vec<String>, Vec<String>), Vec<Commit>>,
    ancestry: HashMap<(String, String), bool>,
}

impl<'g> Xfails<'g> {
    fn new(git: &'g Git, head: &str) -> Self {
        Self {
            git,
            head: head.to_string(),
            indexes: HashMap::new(),
            blamed: HashMap::new(),
            logs: HashMap::new(),
            ancestry: HashMap::new(),
        }
    }

    /// The marker of a failure's node, its file scanned once.
    fn marker(&mut self, l: &Located) -> Option<XfailMarker> {
        let file = l.file.as_ref()?;
        let root = self.git.root();
        let index = self
            .indexes
            .entry(file.clone())
            .or_insert_with(|| read_source(root, file).map(|s| xfail::XfailIndex::new(&s)));
        let node = NodeId::parse(&l.merged.case.name, l.class.as_deref());
        index.as_ref().and_then(|index| index.find(&node))
    }

    /// Blame every marker line of the strict XPASS failures, one `git
    /// blame` per file.
    fn prepare(&mut self, located: &[Located]) -> Result<(), TriageError> {
        let mut lines: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
        for l in located.iter().filter(|l| l.worst == Outcome::XPassStrict) {
            if let (Some(file), Some(marker)) = (&l.file, self.marker(l)) {
                lines.entry(file.clone()).or_default().insert(marker.line);
            }
        }
        for (file, lines) in lines {
            let found = blame_lines(self.git, &self.head, &file, &lines)?;
            for line in lines {
                self.blamed
                    .insert((file.clone(), line), found.get(&line).cloned());
            }
        }
        Ok(())
    }

    fn log(&mut self, range: Vec<String>, paths: Vec<String>) -> Result<&[Commit], TriageError> {
        let key = (range, paths);
        if !self.logs.contains_key(&key) {
            let commits = self.git.log(&key.0, &key.1, true)?;
            self.logs.insert(key.clone(), commits);
        }
        Ok(&self.logs[&key])
    }

    /// Did `commit` land after `dark` (is it in `dark..head`)?
    fn after_dark(&mut self, dark: &str, commit: &str) -> Result<bool, TriageError> {
        let key = (dark.to_string(), commit.to_string());
        if let Some(known) = self.ancestry.get(&key) {
            return Ok(*known);
        }
        let answer = in_range(self.git, dark, &self.head, commit)?;
        self.ancestry.insert(key, answer);
        Ok(answer)
    }

    /// For a strict XPASS: the xfail marker, the commit that added it, and the
    /// commits since then that touched the code under test (the test file
    /// itself excluded).
    ///
    /// The walk starts at the later of the marker and the dark window: while
    /// the job ran, the test did fail as marked, so what made the marker stale
    /// landed after both.
    fn stale(&mut self, l: &Located, window: &Window) -> Result<StaleXfail, TriageError> {
        let head = self.head.clone();
        let Some(file) = &l.file else {
            return Ok(StaleXfail {
                marker: None,
                since_added: None,
                note: "an xfail(strict=True) test passed; its test file was not found".to_string(),
            });
        };
        let Some(marker) = self.marker(l) else {
            return Ok(StaleXfail {
                marker: None,
                since_added: None,
                note: format!(
                    "an xfail(strict=True) test passed; no xfail marker for it was found in {file}"
                ),
            });
        };
        let added = match self.blamed.get(&(file.clone(), marker.line)) {
            Some(added) => added.clone(),
            None => blame_line(self.git, &head, file, marker.line)?,
        };
        let under_test: Vec<String> = l.relevant.keys().filter(|p| *p != file).cloned().collect();
        let mut from_marker = true;
        let since = if under_test.is_empty() {
            Vec::new()
        } else {
            let range = match (window, &added) {
                (Window::After(dark), Some(added)) if self.after_dark(dark, &added.id)? => {
                    vec![format!("{}..{head}", added.id)]
                }
                (Window::After(dark), _) => {
                    from_marker = false;
                    vec![format!("{dark}..{head}")]
                }
                (Window::SinceDate(date), added) => {
                    let after_marker = added.as_ref().map(|c| c.time.to_string());
                    let since = match (jiff::Timestamp::from_str(date), after_marker) {
                        (Ok(dark), Some(t)) if t.parse::<i64>().unwrap_or(0) > dark.as_second() => {
                            format!("--since={t}")
                        }
                        _ => {
                            from_marker = false;
                            format!("--since={date}")
                        }
                    };
                    vec![since, head.to_string()]
                }
            };
            self.log(range, under_test)?.to_vec()
        };
        let relevant: Relevant = l
            .relevant
            .iter()
            .filter(|(p, _)| *p != file)
            .map(|(p, d)| (p.clone(), *d))
            .collect();
        let since: Vec<CommitInfo> = touching(&since, &relevant);
        // The likeliest fix: nearest to the test first; among those, the oldest
        // commit that says it fixes something, else the oldest change (what came
        // first made the test pass first).
        let nearest = since.first().map(|c| c.distance);
        let near: Vec<&CommitInfo> = since
            .iter()
            .filter(|c| Some(c.distance) == nearest)
            .collect();
        let likely = near
            .iter()
            .rev()
            .find(|c| c.subject.to_ascii_lowercase().contains("fix"))
            .or(near.last())
            .copied();
        let note = match likely {
            Some(likely) => format!(
                "stale xfail at {file}:{}: {} commit{} since {} touched the code under test, likely fixed by {} {}",
                marker.line,
                since.len(),
                plural(since.len()),
                if from_marker {
                    "it was added"
                } else {
                    "the job went dark"
                },
                crate::short_id(&likely.id),
                likely.subject
            ),
            None => format!(
                "stale xfail at {file}:{}: nothing under test changed since {}; the pass may be the environment",
                marker.line,
                if from_marker {
                    "it was added"
                } else {
                    "the job went dark"
                }
            ),
        };
        let info_ = XfailInfo {
            path: file.clone(),
            line: marker.line,
            strict: marker.strict,
            reason: marker.reason.clone(),
            added: added.map(|c| info(&c, &Relevant::new())),
        };
        Ok(StaleXfail {
            marker: Some(info_),
            since_added: Some(since),
            note,
        })
    }
}

/// Is `commit` in `from..to`? Listing the window is bounded by its size;
/// asking `merge-base --is-ancestor` about a commit far older than `from`
/// walks the whole history to say no.
fn in_range(git: &Git, from: &str, to: &str, commit: &str) -> Result<bool, GitError> {
    let listed = git.run(&["rev-list", &format!("{from}..{to}")], None)?;
    Ok(listed
        .split(|b| *b == b'\n')
        .any(|line| line == commit.as_bytes()))
}

fn read_source(root: &Path, file: &str) -> Option<String> {
    let root = fs_err::canonicalize(root).ok()?;
    layerlock_walk::read_bounded(&root.join(file), &root)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// The commit that last wrote line `line` of `file` at `head`.
fn blame_line(
    git: &Git,
    head: &str,
    file: &str,
    line: usize,
) -> Result<Option<Commit>, TriageError> {
    let range = format!("{line},{line}");
    let out = match git.run(
        &["blame", "--porcelain", "-L", &range, head, "--", file],
        None,
    ) {
        Ok(out) => out,
        Err(GitError::Failed { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let text = String::from_utf8_lossy(&out);
    let mut lines = text.lines();
    let Some(id) = lines.next().and_then(|l| l.split(' ').next()) else {
        return Ok(None);
    };
    git.not_cut_off([id], &format!("blame -L {range} {head} -- {file}"))?;
    let mut time = 0;
    let mut subject = String::new();
    for l in lines {
        if let Some(t) = l.strip_prefix("committer-time ") {
            time = t.trim().parse().unwrap_or(0);
        } else if let Some(s) = l.strip_prefix("summary ") {
            subject = s.to_string();
        }
    }
    Ok(Some(Commit {
        id: id.to_string(),
        time,
        subject,
        paths: Vec::new(),
    }))
}

/// The commits that last wrote `lines` of `file` at `head`, in one `git
/// blame`; a line git cannot blame (past the end of the file at `head`)
/// has none. When the batch fails, each line is blamed alone.
fn blame_lines(
    git: &Git,
    head: &str,
    file: &str,
    lines: &BTreeSet<usize>,
) -> Result<BTreeMap<usize, Commit>, TriageError> {
    let ranges: Vec<String> = lines.iter().map(|l| format!("{l},{l}")).collect();
    let mut args = vec!["blame", "--porcelain"];
    for range in &ranges {
        args.extend(["-L", range.as_str()]);
    }
    args.extend([head, "--", file]);
    let out = match git.run(&args, None) {
        Ok(out) => out,
        Err(GitError::Failed { .. }) => {
            let mut found = BTreeMap::new();
            for &line in lines {
                if let Some(commit) = blame_line(git, head, file, line)? {
                    found.insert(line, commit);
                }
            }
            return Ok(found);
        }
        Err(e) => return Err(e.into()),
    };
    let shown = args.join(" ");
    // `--porcelain`: a header `COMMIT ORIG-LINE FINAL-LINE [N]` per line,
    // the commit's details after its first header only, the line's text
    // after a tab.
    let text = String::from_utf8_lossy(&out);
    let mut by_line: BTreeMap<usize, String> = BTreeMap::new();
    let mut details: HashMap<String, (i64, String)> = HashMap::new();
    let mut current = String::new();
    for row in text.lines() {
        if row.starts_with('\t') {
            continue;
        }
        let mut words = row.split(' ');
        let first = words.next().unwrap_or_default();
        let is_commit =
            matches!(first.len(), 40 | 64) && first.bytes().all(|b| b.is_ascii_hexdigit());
        if is_commit {
            current = first.to_string();
            if let Some(line) = words.nth(1).and_then(|w| w.parse().ok()) {
                by_line.insert(line, current.clone());
            }
        } else if let Some(time) = row.strip_prefix("committer-time ") {
            details.entry(current.clone()).or_default().0 = time.trim().parse().unwrap_or(0);
        } else if let Some(subject) = row.strip_prefix("summary ") {
            details.entry(current.clone()).or_default().1 = subject.to_string();
        }
    }
    // In a shallow clone, lines older than the cut are blamed on the
    // boundary commit: that is no answer.
    git.not_cut_off(by_line.values().map(String::as_str), &shown)?;
    Ok(by_line
        .into_iter()
        .map(|(line, id)| {
            let (time, subject) = details.get(&id).cloned().unwrap_or_default();
            (
                line,
                Commit {
                    id,
                    time,
                    subject,
                    paths: Vec::new(),
                },
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_index_a_bounded_number_of_module_names() {
        // A tracked path thousands of folders deep (git's index takes it,
        // no checkout could): each dotted suffix would be a key.
        let deep = format!("{}test_x.py", "a/".repeat(5_000));
        let files = TestFiles::new(vec![deep.clone(), "tests/test_y.py".to_string()]);
        let keys: usize = files.by_module.keys().map(String::len).sum();
        assert!(
            files.by_module.len() <= 2 * MAX_MODULE_PARTS,
            "{}",
            files.by_module.len()
        );
        assert!(keys < 100_000, "{keys} bytes of keys");
        // Still found by the names a report gives.
        assert_eq!(files.unique("a.a.test_x"), Some(deep));
        assert_eq!(
            files.unique("tests.test_y").as_deref(),
            Some("tests/test_y.py")
        );
        // A report's classname of very many names is matched in bounded
        // time too.
        let case = TestCase {
            classname: format!("tests.test_y.{}", "C.".repeat(50_000)),
            name: "test".to_string(),
            file: None,
            line: 1,
            outcome: Outcome::Failed,
            message: None,
            suite: None,
        };
        let started = std::time::Instant::now();
        assert_eq!(files.locate(&case).0.as_deref(), Some("tests/test_y.py"));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }
}
