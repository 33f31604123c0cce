//! CI steps against a git revision: every job in the working tree compared
//! with the same job at a revision (Buildkite steps by key, else label;
//! GitHub Actions and GitLab jobs by id), or with its definition from
//! before the commit that disabled it. Declared edits (a rewrite, a dropped
//! line) are applied first; whatever else differs is reported.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use layerlock_ci::System;
use layerlock_ci::jobs::{self, Job, JobId, Value};
use layerlock_ci::yaml;
use layerlock_git::{Blob, Git, GitError};
use regex::Regex;
use serde::Serialize;

use crate::{plural, short_id};

/// The largest CI file read from history (the work tree's bound too).
const MAX_CI_FILE: usize = layerlock_walk::MAX_FILE_BYTES as usize;
/// Most candidate commits examined when looking for the one that disabled
/// a step.
const MAX_DISABLE_CANDIDATES: usize = 2_000;

#[derive(Debug, thiserror::Error)]
pub enum BlocksError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("--drop-line `{pattern}` is not a regular expression: {message}")]
    Pattern { pattern: String, message: String },
    #[error("--rewrite `{0}` is not OLD=NEW")]
    Rewrite(String),
    #[error(
        "{path}{at}: {message}; the commit that removed a step cannot be told without it",
        path = .0.path,
        at = .0.commit.as_deref().map(|c| format!(" at {}", short_id(c))).unwrap_or_default(),
        message = .0.message
    )]
    Unreadable(FileProblem),
    #[error(
        "{0} holds no YAML CI file in the working tree or at the revisions compared; give a pipeline or workflow file, or its folder"
    )]
    NoCiFile(String),
    #[error(
        "--step {step} names no step compared with {baseline}; give a key, label or job id that the report lists without --step"
    )]
    UnknownStep { step: String, baseline: String },
    #[error(
        "looked through the {MAX_DISABLE_CANDIDATES} newest commits whose changes mention {names} and found none that removed it; name the commit (blocks --disabled-by COMMIT, triage --dark-since REV)"
    )]
    TooManyCandidates { names: String },
    #[error(
        "--disabled-by {0} removed no step from the CI files compared; name the commit that disabled the steps, or use --disabled-by auto"
    )]
    DisabledNothing(String),
}

/// The edits a restored step is allowed to carry.
#[derive(Debug, Clone, Default)]
pub struct Edits {
    pub rewrites: Vec<(String, String)>,
    pub drop_lines: Vec<Regex>,
}

impl Edits {
    pub fn parse(rewrites: &[String], drop_lines: &[String]) -> Result<Self, BlocksError> {
        let rewrites = rewrites
            .iter()
            .map(|r| match r.split_once('=') {
                Some((old, new)) if !old.is_empty() => Ok((old.to_string(), new.to_string())),
                _ => Err(BlocksError::Rewrite(r.clone())),
            })
            .collect::<Result<_, _>>()?;
        let drop_lines = drop_lines
            .iter()
            .map(|p| {
                Regex::new(p).map_err(|e| BlocksError::Pattern {
                    pattern: p.clone(),
                    message: e.to_string(),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            rewrites,
            drop_lines,
        })
    }

    fn rewrite(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (old, new) in &self.rewrites {
            out = out.replace(old, new);
        }
        out
    }

    fn dropped(&self, line: &str) -> bool {
        self.drop_lines.iter().any(|re| re.is_match(line))
    }
}

/// What the working tree is compared with.
#[derive(Debug, Clone)]
pub enum Baseline {
    /// Every job, against the same job at this revision.
    Since(String),
    /// The jobs this commit removed (or commented out), against their
    /// definition at its parent.
    DisabledBy(String),
    /// The jobs present now but not at `since`: each against its definition
    /// before the last commit (reachable from `since`) that removed it.
    Restored { since: String },
}

#[derive(Debug, Clone, Default)]
pub struct BlocksOptions {
    /// Pathspecs of the CI files (empty: every Buildkite, GitHub Actions and
    /// GitLab file).
    pub paths: Vec<String>,
    /// Only these jobs (key, label or id), when not empty.
    pub only: Vec<String>,
    pub edits: Edits,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Unchanged,
    /// Equal once the declared edits are applied.
    Edited,
    Changed,
    Added,
    Removed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unchanged => "unchanged",
            Self::Edited => "edited as declared",
            Self::Changed => "changed",
            Self::Added => "added",
            Self::Removed => "removed",
        }
    }
}

/// Where one definition of a job is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Site {
    pub path: String,
    pub line: usize,
    /// The commit it was read at; `None`: the working tree.
    pub commit: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    pub path: String,
    pub old: Option<Value>,
    pub new: Option<Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepReport {
    pub id: JobId,
    pub system: layerlock_ci::System,
    pub label: Option<String>,
    pub status: Status,
    pub old: Option<Site>,
    pub new: Option<Site>,
    /// The commit that disabled the step, when the baseline is its parent.
    pub disabled_by: Option<CommitRef>,
    /// Unified diff of the command lines, after the declared edits.
    pub commands_diff: Option<String>,
    pub fields: Vec<FieldChange>,
    /// Declared edits that applied to this step.
    pub edits_applied: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommitRef {
    pub id: String,
    pub time: i64,
    pub subject: String,
}

/// A CI file that could not be read or parsed, at a revision or in the
/// working tree.
#[derive(Debug, Clone, Serialize)]
pub struct FileProblem {
    pub path: String,
    pub commit: Option<String>,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct BlocksReport {
    pub version: u32,
    pub baseline: String,
    pub steps: Vec<StepReport>,
    pub problems: Vec<FileProblem>,
}

impl BlocksReport {
    /// A step that exists on both sides differs beyond the declared edits.
    pub fn has_differences(&self) -> bool {
        self.steps.iter().any(|s| s.status == Status::Changed)
    }
}

/// One definition of a job: its file and the job.
type Def = (String, Job);

/// Jobs of every CI file at one revision (or the working tree), by id:
/// every definition of an id, in file order (GitHub Actions job ids are
/// per workflow, and YAML keeps a key written twice).
#[derive(Debug, Default, Clone)]
struct Snapshot {
    jobs: BTreeMap<JobId, Vec<Def>>,
    problems: Vec<FileProblem>,
}

impl Snapshot {
    fn defs(&self, id: &JobId) -> &[Def] {
        self.jobs.get(id).map(Vec::as_slice).unwrap_or_default()
    }
}

/// Definitions of one id on two sides, matched: those in the same file
/// first (in order), then the rest in order; what is left over stands
/// alone. Indexes into `old` and `new`.
fn pair(old: &[Def], new: &[Def]) -> Vec<(Option<usize>, Option<usize>)> {
    let mut taken = vec![false; new.len()];
    let mut pairs = Vec::new();
    let mut old_left = Vec::new();
    for (i, (path, _)) in old.iter().enumerate() {
        match (0..new.len()).find(|&j| !taken[j] && new[j].0 == *path) {
            Some(j) => {
                taken[j] = true;
                pairs.push((Some(i), Some(j)));
            }
            None => old_left.push(i),
        }
    }
    let new_left: Vec<usize> = (0..new.len()).filter(|&j| !taken[j]).collect();
    for k in 0..old_left.len().max(new_left.len()) {
        pairs.push((old_left.get(k).copied(), new_left.get(k).copied()));
    }
    pairs
}

/// The definitions of `old` that `new` no longer has.
fn gone<'a>(old: &'a [Def], new: &[Def]) -> Vec<&'a Def> {
    pair(old, new)
        .into_iter()
        .filter_map(|(o, n)| match (o, n) {
            (Some(o), None) => Some(&old[o]),
            _ => None,
        })
        .collect()
}

/// The definitions of `new` that `old` does not have.
fn fresh<'a>(old: &[Def], new: &'a [Def]) -> Vec<&'a Def> {
    pair(old, new)
        .into_iter()
        .filter_map(|(o, n)| match (o, n) {
            (None, Some(n)) => Some(&new[n]),
            _ => None,
        })
        .collect()
}

impl Snapshot {
    fn build(files: Vec<(String, Result<Vec<u8>, String>)>, commit: Option<&str>) -> Self {
        let mut snapshot = Self::default();
        // GitLab files make one pipeline: their jobs are read together.
        let mut gitlab = Vec::new();
        for (path, bytes) in files {
            let problem = |message: String| FileProblem {
                path: path.clone(),
                commit: commit.map(str::to_string),
                message,
            };
            let bytes = match bytes {
                Ok(bytes) => bytes,
                Err(message) => {
                    snapshot.problems.push(problem(message));
                    continue;
                }
            };
            let text = String::from_utf8_lossy(&bytes);
            let docs = match yaml::parse(&text) {
                Ok(docs) => docs,
                Err(e) => {
                    snapshot
                        .problems
                        .push(problem(format!("not valid YAML: {e}")));
                    continue;
                }
            };
            let Some(system) = System::detect(&path, &docs) else {
                continue;
            };
            if system == System::Gitlab {
                gitlab.push((path, docs));
                continue;
            }
            for job in jobs::jobs(system, &docs) {
                snapshot
                    .jobs
                    .entry(job.id.clone())
                    .or_default()
                    .push((path.clone(), job));
            }
        }
        let pipeline = jobs::gitlab_pipeline(&gitlab);
        for (path, job) in pipeline.jobs {
            snapshot
                .jobs
                .entry(job.id.clone())
                .or_default()
                .push((path, job));
        }
        snapshot
            .problems
            .extend(
                pipeline
                    .problems
                    .into_iter()
                    .map(|(path, message)| FileProblem {
                        path,
                        commit: commit.map(str::to_string),
                        message,
                    }),
            );
        snapshot
    }
}

/// Where CI files live when the user named none. Literal paths, not
/// pathspec magic: git prunes trees by literal prefixes, so a path-limited
/// walk of 100,000 commits takes well under a second, where `:(glob)**/…`
/// makes it open every tree.
const CI_PLACES: [&str; 4] = [
    ".buildkite",
    ".github/workflows",
    ".gitlab-ci.yml",
    ".gitlab",
];

/// Pathspecs of every CI file (git reads every pathspec literally): the
/// user's, else the usual places plus any nested ones (`sub/.buildkite`)
/// among the work tree's files.
fn ci_pathspecs(git: &Git, paths: &[String]) -> Result<Vec<String>, GitError> {
    if !paths.is_empty() {
        return Ok(paths.to_vec());
    }
    let mut places: BTreeSet<String> = CI_PLACES.iter().map(|p| (*p).to_string()).collect();
    for file in git.tracked(&[])? {
        if System::from_path(&file).is_none() {
            continue;
        }
        let place = CI_PLACES
            .iter()
            .find_map(|marker| {
                file.find(&format!("/{marker}"))
                    .map(|at| &file[..at + 1 + marker.len()])
            })
            .unwrap_or(&file);
        if !CI_PLACES.iter().any(|p| place.starts_with(p)) {
            places.insert(place.to_string());
        }
    }
    Ok(places.into_iter().collect())
}

fn is_yaml(path: &str) -> bool {
    path.ends_with(".yml") || path.ends_with(".yaml")
}

/// Reads CI files at revisions, each revision once.
struct History<'a> {
    git: &'a Git,
    /// The literal pathspecs git is given.
    pathspecs: Vec<String>,
    /// The user's files and folders; empty: every CI file by location.
    paths: Vec<String>,
    snapshots: HashMap<String, Snapshot>,
    /// The problems of every revision read: a file that could not be read
    /// may hide the job looked for.
    problems: Vec<FileProblem>,
    /// Every CI file read, in the work tree or at a revision.
    read: BTreeSet<String>,
}

impl<'a> History<'a> {
    fn new(git: &'a Git, paths: &[String]) -> Result<Self, GitError> {
        Ok(Self {
            git,
            pathspecs: ci_pathspecs(git, paths)?,
            paths: paths
                .iter()
                .map(|p| p.trim_end_matches('/').to_string())
                .collect(),
            snapshots: HashMap::new(),
            problems: Vec::new(),
            read: BTreeSet::new(),
        })
    }

    /// The jobs at `commit`, read once and kept.
    fn at(&mut self, commit: &str) -> Result<&Snapshot, GitError> {
        if !self.snapshots.contains_key(commit) {
            let snapshot = self.read_at(commit)?;
            self.snapshots.insert(commit.to_string(), snapshot);
        }
        Ok(&self.snapshots[commit])
    }

    /// The jobs at `commit`, read and not kept (its problems and files are).
    fn read_at(&mut self, commit: &str) -> Result<Snapshot, GitError> {
        let files: Vec<String> = self
            .git
            .files_at(commit, &self.pathspecs)?
            .into_iter()
            .filter(|p| self.wanted(p))
            .collect();
        let wanted: Vec<(String, String)> = files
            .iter()
            .map(|p| (commit.to_string(), p.clone()))
            .collect();
        let blobs = self.git.blobs(&wanted, MAX_CI_FILE)?;
        self.read.extend(files.iter().cloned());
        let read = files
            .into_iter()
            .zip(blobs)
            .filter_map(|(path, blob)| match blob {
                Blob::Missing => None,
                Blob::Bytes(bytes) => Some((path, Ok(bytes))),
                Blob::Refused(why) => Some((path, Err(why))),
            })
            .collect();
        let snapshot = Snapshot::build(read, Some(commit));
        self.problems.extend(snapshot.problems.iter().cloned());
        Ok(snapshot)
    }

    /// Is `path` (from the root) a CI file this check reads?
    fn wanted(&self, path: &str) -> bool {
        is_yaml(path)
            && if self.paths.is_empty() {
                System::from_path(path).is_some()
            } else {
                self.paths
                    .iter()
                    .any(|p| path == p || path.starts_with(&format!("{p}/")))
            }
    }

    /// The CI files as the working tree has them. Files a sparse checkout
    /// leaves out (skip-worktree) are read from the index, so they count as
    /// present rather than removed; a tracked file deleted from the working
    /// tree is removed.
    fn worktree(&mut self) -> Result<Snapshot, GitError> {
        let root = self.git.root();
        let mut args = vec![
            "ls-files",
            "-z",
            "-t",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
        ];
        args.extend(self.pathspecs.iter().map(String::as_str));
        let out = self.git.run(&args, None)?;
        let mut on_disk: BTreeSet<String> = BTreeSet::new();
        let mut in_index: BTreeSet<String> = BTreeSet::new();
        for entry in out.split(|b| *b == 0).filter(|p| !p.is_empty()) {
            let entry = String::from_utf8_lossy(entry);
            let (tag, path) = entry.split_at(entry.find(' ').map_or(0, |i| i + 1));
            if !self.wanted(path) {
                continue;
            }
            if tag.trim() == "S" {
                in_index.insert(path.to_string());
            } else {
                on_disk.insert(path.to_string());
            }
        }
        in_index.retain(|p| !on_disk.contains(p));
        self.read.extend(on_disk.iter().cloned());
        self.read.extend(in_index.iter().cloned());
        let canonical_root = fs_err::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        // A file deleted from the work tree is gone; a link to nothing is
        // there and cannot be read.
        let mut read: Vec<(String, Result<Vec<u8>, String>)> = on_disk
            .into_iter()
            .filter(|path| fs_err::symlink_metadata(root.join(path)).is_ok())
            .map(|path| {
                let bytes = layerlock_walk::read_bounded(&root.join(&path), &canonical_root)
                    .map_err(|e| e.to_string());
                (path, bytes)
            })
            .collect();
        let sparse: Vec<String> = in_index.into_iter().collect();
        let wanted: Vec<(String, String)> =
            sparse.iter().map(|p| (String::new(), p.clone())).collect();
        for (path, blob) in sparse
            .into_iter()
            .zip(self.git.blobs(&wanted, MAX_CI_FILE)?)
        {
            match blob {
                Blob::Bytes(bytes) => read.push((path, Ok(bytes))),
                Blob::Refused(why) => read.push((path, Err(why))),
                Blob::Missing => {
                    read.push((path, Err("in the index but unreadable".to_string())));
                }
            }
        }
        read.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Snapshot::build(read, None))
    }

    /// For each job named in `wanted` (a key, label or job id), the newest
    /// commit on the first-parent line from `from` whose change removed a
    /// definition of it: one in a file of `prefer[name]` when there is one,
    /// else one in any file.
    fn disabling_commits(
        &mut self,
        from: &str,
        wanted: &BTreeSet<String>,
        prefer: &BTreeMap<String, BTreeSet<String>>,
    ) -> Result<BTreeMap<String, CommitRef>, BlocksError> {
        let mut exact: BTreeMap<String, CommitRef> = BTreeMap::new();
        let mut any: BTreeMap<String, CommitRef> = BTreeMap::new();
        if wanted.is_empty() {
            return Ok(exact);
        }
        // Commits whose diff mentions one of the ids, newest first; each is
        // then proven by reading the jobs before and after it.
        let pattern = wanted
            .iter()
            .map(|id| regex::escape(id))
            .collect::<Vec<_>>()
            .join("|");
        let range = vec![
            "--first-parent".to_string(),
            "-G".to_string(),
            pattern,
            from.to_string(),
        ];
        let candidates = self.git.log(&range, &self.pathspecs.clone(), false)?;
        let cut = candidates.len() > MAX_DISABLE_CANDIDATES;
        for commit in candidates.into_iter().take(MAX_DISABLE_CANDIDATES) {
            let Some(parent) = self.git.parent(&commit.id)? else {
                continue;
            };
            // Read and dropped: the commits looked through may be
            // thousands, each with the whole pipeline.
            let after = self.read_at(&commit.id)?;
            let before = self.read_at(&parent)?;
            for name in wanted {
                if exact.contains_key(name) {
                    continue;
                }
                let (old, new) = (named(&before, name), named(&after, name));
                let removed = gone(&old, &new);
                if removed.is_empty() {
                    continue;
                }
                let by = CommitRef {
                    id: commit.id.clone(),
                    time: commit.time,
                    subject: commit.subject.clone(),
                };
                let preferred = prefer
                    .get(name)
                    .is_none_or(|paths| removed.iter().any(|(path, _)| paths.contains(path)));
                if preferred {
                    exact.insert(name.clone(), by.clone());
                }
                any.entry(name.clone()).or_insert(by);
            }
            if exact.len() == wanted.len() {
                break;
            }
        }
        for (name, by) in any {
            exact.entry(name).or_insert(by);
        }
        // Not found among the commits looked at is no answer when there
        // were more.
        let missing: Vec<&str> = wanted
            .iter()
            .filter(|name| !exact.contains_key(*name))
            .map(String::as_str)
            .collect();
        if cut && !missing.is_empty() {
            return Err(BlocksError::TooManyCandidates {
                names: missing.join(", "),
            });
        }
        Ok(exact)
    }
}

/// Every definition of the jobs whose key, label or id is `name`.
fn named(snapshot: &Snapshot, name: &str) -> Vec<Def> {
    snapshot
        .jobs
        .iter()
        .filter(|(id, _)| id.value() == name)
        .flat_map(|(_, defs)| defs.iter().cloned())
        .collect()
}

/// Compare the working tree's CI jobs with `baseline`.
pub fn blocks(
    git: &Git,
    baseline: &Baseline,
    options: &BlocksOptions,
) -> Result<BlocksReport, BlocksError> {
    let mut history = History::new(git, &options.paths)?;
    let now = history.worktree()?;
    let mut problems = now.problems.clone();
    let (pairs, description) = match baseline {
        Baseline::Since(rev) => since(&mut history, &now, rev)?,
        Baseline::DisabledBy(rev) => disabled_by(&mut history, &now, rev)?,
        Baseline::Restored { since } => restored(&mut history, &now, since)?,
    };
    problems.extend(history.problems);
    for path in &history.paths {
        let holds = |file: &String| file == path || file.starts_with(&format!("{path}/"));
        if !history.read.iter().any(holds) {
            return Err(BlocksError::NoCiFile(path.clone()));
        }
    }
    for step in &options.only {
        if !pairs
            .iter()
            .any(|p| step == p.id.value() || step == p.shown.value())
        {
            return Err(BlocksError::UnknownStep {
                step: step.clone(),
                baseline: description,
            });
        }
    }
    let selected = |shown: &JobId, id: &JobId| {
        options.only.is_empty()
            || options
                .only
                .iter()
                .any(|o| o == id.value() || o == shown.value())
    };
    let mut steps = Vec::new();
    for pair in pairs {
        if selected(&pair.shown, &pair.id) {
            steps.push(compare(
                &pair.shown,
                pair.old,
                pair.new,
                pair.disabled_by,
                &options.edits,
            ));
        }
    }
    steps.sort_by(|a, b| {
        (a.status == Status::Unchanged, &a.id).cmp(&(b.status == Status::Unchanged, &b.id))
    });
    problems
        .sort_by(|a, b| (&a.path, &a.commit, &a.message).cmp(&(&b.path, &b.commit, &b.message)));
    problems.dedup_by(|a, b| a.path == b.path && a.commit == b.commit && a.message == b.message);
    Ok(BlocksReport {
        version: 1,
        baseline: description,
        steps,
        problems,
    })
}

/// `--since REV`: every job as it was at REV against the work tree.
fn since(
    history: &mut History,
    now: &Snapshot,
    rev: &str,
) -> Result<(Vec<Pair>, String), BlocksError> {
    let commit = history.git.commit(rev)?;
    let old = history.at(&commit)?.clone();
    let ids: BTreeSet<&JobId> = old.jobs.keys().chain(now.jobs.keys()).collect();
    let mut pairs = Vec::new();
    for id in ids {
        let (before, after) = (old.defs(id), now.defs(id));
        let qualify = before.len() > 1 || after.len() > 1;
        for (o, n) in pair(before, after) {
            let (o, n) = (o.map(|o| &before[o]), n.map(|n| &after[n]));
            pairs.push(Pair::new(id, qualify, o, n, &commit, None));
        }
    }
    Ok((pairs, format!("{rev} ({})", short_id(&commit))))
}

/// `--disabled-by REV`: what the commit removed, as its parent had it,
/// against what is back in the work tree.
fn disabled_by(
    history: &mut History,
    now: &Snapshot,
    rev: &str,
) -> Result<(Vec<Pair>, String), BlocksError> {
    let git = history.git;
    let commit = git.commit(rev)?;
    let parent = git
        .parent(&commit)?
        .ok_or_else(|| GitError::UnknownRevision {
            rev: format!("{rev}^ (the commit has no parent)"),
        })?;
    let after = history.at(&commit)?.clone();
    let old = history.at(&parent)?.clone();
    let subject = git
        .log(&["-1".to_string(), commit.clone()], &[], false)?
        .into_iter()
        .next();
    let disabled = subject.map(|c| CommitRef {
        id: c.id,
        time: c.time,
        subject: c.subject,
    });
    let mut pairs = Vec::new();
    for (id, defs) in &old.jobs {
        // What the commit removed, against what is back now: the
        // definitions the commit kept are not candidates.
        let removed: Vec<Def> = gone(defs, after.defs(id)).into_iter().cloned().collect();
        if removed.is_empty() {
            continue;
        }
        let back: Vec<Def> = fresh(after.defs(id), now.defs(id))
            .into_iter()
            .cloned()
            .collect();
        let qualify = defs.len() > 1 || now.defs(id).len() > 1;
        for (o, n) in pair(&removed, &back) {
            if let Some(o) = o {
                let n = n.map(|n| &back[n]);
                pairs.push(Pair::new(
                    id,
                    qualify,
                    Some(&removed[o]),
                    n,
                    &parent,
                    disabled.clone(),
                ));
            }
        }
    }
    if pairs.is_empty() && history.problems.is_empty() {
        return Err(BlocksError::DisabledNothing(rev.to_string()));
    }
    let description = format!(
        "the parent of {rev} ({}), for the steps it disabled",
        short_id(&commit)
    );
    Ok((pairs, description))
}

/// `--restored-since REV`: each definition new since REV, against itself
/// before the commit that removed it (found by walking back).
fn restored(
    history: &mut History,
    now: &Snapshot,
    since: &str,
) -> Result<(Vec<Pair>, String), BlocksError> {
    let git = history.git;
    let commit = git.commit(since)?;
    let then = history.at(&commit)?.clone();
    // Each definition new since then, by id.
    let mut back: BTreeMap<&JobId, Vec<Def>> = BTreeMap::new();
    for (id, defs) in &now.jobs {
        let new: Vec<Def> = fresh(then.defs(id), defs).into_iter().cloned().collect();
        if !new.is_empty() {
            back.insert(id, new);
        }
    }
    let names: BTreeSet<String> = back.keys().map(|id| id.value().to_string()).collect();
    let mut prefer: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (id, defs) in &back {
        prefer
            .entry(id.value().to_string())
            .or_default()
            .extend(defs.iter().map(|(path, _)| path.clone()));
    }
    let disabling = history.disabling_commits(&commit, &names, &prefer)?;
    let mut pairs = Vec::new();
    for (id, restored) in back {
        let qualify = restored.len() > 1 || now.defs(id).len() > 1;
        let Some(by) = disabling.get(id.value()) else {
            for def in &restored {
                pairs.push(Pair::new(id, qualify, None, Some(def), &commit, None));
            }
            continue;
        };
        let parent = git.parent(&by.id)?.unwrap_or_default();
        let before = history.at(&parent)?.defs(id).to_vec();
        let removed: Vec<Def> = gone(&before, history.at(&by.id)?.defs(id))
            .into_iter()
            .cloned()
            .collect();
        for (o, n) in pair(&removed, &restored) {
            if let Some(n) = n {
                let o = o.map(|o| &removed[o]);
                let by = o.map(|_| by.clone());
                pairs.push(Pair::new(id, qualify, o, Some(&restored[n]), &parent, by));
            }
        }
    }
    let since_shown = if since == commit {
        short_id(&commit).to_string()
    } else {
        format!("{since} ({})", short_id(&commit))
    };
    let description =
        format!("each step new since {since_shown}, as it was before the commit that removed it");
    Ok((pairs, description))
}

/// A job to compare: its id, its old definition (file, job, commit) and
/// the commit that disabled it.
struct Pair {
    id: JobId,
    /// The id as reported: with its file when the id names more than one
    /// job.
    shown: JobId,
    old: Option<(String, Job, String)>,
    new: Option<Def>,
    disabled_by: Option<CommitRef>,
}

impl Pair {
    fn new(
        id: &JobId,
        qualify: bool,
        old: Option<&Def>,
        new: Option<&Def>,
        commit: &str,
        disabled_by: Option<CommitRef>,
    ) -> Self {
        let shown = match new.or(old) {
            Some((path, _)) if qualify => {
                let value = format!("{} ({path})", id.value());
                match id {
                    JobId::Key(_) => JobId::Key(value),
                    JobId::Label(_) => JobId::Label(value),
                    JobId::Job(_) => JobId::Job(value),
                }
            }
            _ => id.clone(),
        };
        Self {
            id: id.clone(),
            shown,
            old: old.map(|(path, job)| (path.clone(), job.clone(), commit.to_string())),
            new: new.cloned(),
            disabled_by,
        }
    }
}

fn compare(
    id: &JobId,
    before: Option<(String, Job, String)>,
    after: Option<(String, Job)>,
    disabled_by: Option<CommitRef>,
    edits: &Edits,
) -> StepReport {
    let old_site = before.as_ref().map(|(path, job, commit)| Site {
        path: path.clone(),
        line: job.line,
        commit: Some(commit.clone()),
    });
    let new_site = after.as_ref().map(|(path, job)| Site {
        path: path.clone(),
        line: job.line,
        commit: None,
    });
    let mut report = StepReport {
        id: id.clone(),
        system: before
            .as_ref()
            .map(|(_, j, _)| j.system)
            .or(after.as_ref().map(|(_, j)| j.system))
            .unwrap_or(layerlock_ci::System::Buildkite),
        label: after
            .as_ref()
            .and_then(|(_, j)| j.label.clone())
            .or_else(|| before.as_ref().and_then(|(_, j, _)| j.label.clone())),
        status: Status::Unchanged,
        old: old_site,
        new: new_site,
        disabled_by,
        commands_diff: None,
        fields: Vec::new(),
        edits_applied: Vec::new(),
    };
    let (old, new) = match (before, after) {
        (Some((_, old, _)), Some((_, new))) => (old, new),
        (Some(_), None) => {
            report.status = Status::Removed;
            return report;
        }
        (None, _) => {
            report.status = Status::Added;
            return report;
        }
    };
    if old.commands == new.commands && old.fields == new.fields {
        return report;
    }
    // The declared edits: rewrites on the old definition, dropped lines on
    // both sides.
    let rewritten = old.map_strings(|s| edits.rewrite(s));
    for (from, to) in &edits.rewrites {
        let uses = old
            .commands
            .iter()
            .filter(|c| c.contains(from.as_str()))
            .count()
            + old
                .fields
                .values()
                .filter(|v| match v {
                    Value::Scalar(s) => s.contains(from.as_str()),
                    Value::List(items) => items.iter().any(|s| s.contains(from.as_str())),
                })
                .count();
        if uses > 0 {
            report.edits_applied.push(format!(
                "rewrite {from} → {to} ({uses} place{})",
                plural(uses)
            ));
        }
    }
    let keep = |lines: &[String], side: &str, applied: &mut Vec<String>| -> Vec<String> {
        lines
            .iter()
            .filter(|line| {
                let drop = edits.dropped(line);
                if drop {
                    applied.push(format!("dropped {side} line: {}", line.trim()));
                }
                !drop
            })
            .cloned()
            .collect()
    };
    let mut applied = Vec::new();
    let old_commands = keep(&rewritten.commands, "old", &mut applied);
    let new_commands = keep(&new.commands, "new", &mut applied);
    report.edits_applied.extend(applied);
    if old_commands != new_commands {
        report.commands_diff = Some(unified(&old_commands, &new_commands));
    }
    let keys: BTreeSet<&String> = rewritten.fields.keys().chain(new.fields.keys()).collect();
    for key in keys {
        let (a, b) = (rewritten.fields.get(key), new.fields.get(key));
        if a != b {
            report.fields.push(FieldChange {
                path: key.clone(),
                old: a.cloned(),
                new: b.cloned(),
            });
        }
    }
    report.status = if report.commands_diff.is_some() || !report.fields.is_empty() {
        Status::Changed
    } else {
        Status::Edited
    };
    report
}

/// A unified diff of two lists of command lines.
fn unified(old: &[String], new: &[String]) -> String {
    let old = old.join("\n") + "\n";
    let new = new.join("\n") + "\n";
    similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header("before", "now")
        .to_string()
}

/// For each job named in `wanted` (a step key, label or job id), the
/// newest commit on the first-parent line from `from` that removed it from
/// the CI files under `paths` (every CI file when empty). A CI file that
/// could not be read at a commit looked at is an error.
pub fn disabling_commits(
    git: &Git,
    paths: &[String],
    from: &str,
    wanted: &BTreeSet<String>,
) -> Result<BTreeMap<String, CommitRef>, BlocksError> {
    let mut history = History::new(git, paths)?;
    let found = history.disabling_commits(from, wanted, &BTreeMap::new())?;
    match history.problems.into_iter().next() {
        Some(problem) => Err(BlocksError::Unreadable(problem)),
        None => Ok(found),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &std::path::Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(["-c", "user.name=D", "-c", "user.email=d@e"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn looking_for_the_disabling_commit_holds_no_revision_it_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q", "-b", "main", "."]);
        std::fs::create_dir_all(root.join(".buildkite")).unwrap();
        let pipeline = root.join(".buildkite/pipeline.yml");
        std::fs::write(&pipeline, "steps:\n- key: a\n  command: make\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-qm", "add"]);
        std::fs::write(&pipeline, "steps:\n- key: b\n  command: make\n").unwrap();
        git(root, &["commit", "-qam", "remove a"]);
        for i in 0..20 {
            let text = format!("steps:\n- key: b\n  command: make # a {i}\n");
            std::fs::write(&pipeline, text).unwrap();
            git(root, &["commit", "-qam", "edit"]);
        }
        let repo = Git::open(root).unwrap();
        let head = repo.commit("HEAD").unwrap();
        let mut history = History::new(&repo, &[]).unwrap();
        let wanted = BTreeSet::from(["a".to_string()]);
        let found = history
            .disabling_commits(&head, &wanted, &BTreeMap::new())
            .unwrap();
        assert_eq!(found["a"].subject, "remove a");
        // 21 candidates, 42 revisions read; none kept.
        assert!(history.snapshots.is_empty(), "{}", history.snapshots.len());
    }
}
