//! CI steps against a git revision: every job in the working tree compared
//! with the same job at a revision (Buildkite steps by key, else label;
//! GitHub Actions and GitLab jobs by id), or with its definition from
//! before the commit that disabled it. Declared edits (a rewrite, a dropped
//! line) are applied first; whatever else differs is reported.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use layerlock_ci::System;
use layerlock_ci::jobs::{self, Job, JobId, Value};
use layerlock_ci::yaml;
use layerlock_walk::git::{Git, GitError};
use regex::Regex;
use serde::Serialize;

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
    pub system: &'static str,
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

/// Jobs of every CI file at one revision (or the working tree), by id.
#[derive(Debug, Default, Clone)]
struct Snapshot {
    jobs: BTreeMap<JobId, (String, Job)>,
    problems: Vec<FileProblem>,
}

impl Snapshot {
    fn build(files: Vec<(String, Result<Vec<u8>, String>)>, commit: Option<&str>) -> Self {
        let mut snapshot = Self::default();
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
            for job in jobs::jobs(system, &docs) {
                let mut id = job.id.clone();
                let mut n = 1;
                while snapshot.jobs.contains_key(&id) {
                    n += 1;
                    id = match &job.id {
                        JobId::Key(v) => JobId::Key(format!("{v} #{n}")),
                        JobId::Label(v) => JobId::Label(format!("{v} #{n}")),
                        JobId::Job(v) => JobId::Job(format!("{path}:{v}")),
                    };
                }
                snapshot.jobs.insert(id, (path.clone(), job));
            }
        }
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
        })
    }

    fn at(&mut self, commit: &str) -> Result<&Snapshot, GitError> {
        if !self.snapshots.contains_key(commit) {
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
            let read = files
                .into_iter()
                .zip(blobs)
                .filter_map(|(path, blob)| blob.map(|b| (path, Ok(b))))
                .collect();
            self.snapshots
                .insert(commit.to_string(), Snapshot::build(read, Some(commit)));
        }
        Ok(&self.snapshots[commit])
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

    fn worktree(&self) -> Result<Snapshot, GitError> {
        let root = self.git.root();
        let mut args = vec![
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
        ];
        args.extend(self.pathspecs.iter().map(String::as_str));
        let out = self.git.run(&args, None)?;
        let mut files: BTreeSet<String> = BTreeSet::new();
        for path in out.split(|b| *b == 0).filter(|p| !p.is_empty()) {
            let path = String::from_utf8_lossy(path).into_owned();
            if self.wanted(&path) {
                files.insert(path);
            }
        }
        let canonical_root = fs_err::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let read = files
            .into_iter()
            .filter(|path| root.join(path).exists())
            .map(|path| {
                let bytes = layerlock_walk::read_bounded(&root.join(&path), &canonical_root)
                    .map_err(|e| e.to_string());
                (path, bytes)
            })
            .collect();
        Ok(Snapshot::build(read, None))
    }

    /// For each job named in `wanted` (a key, label or job id), the newest
    /// commit on the first-parent line from `from` whose change removed it.
    fn disabling_commits(
        &mut self,
        from: &str,
        wanted: &BTreeSet<String>,
    ) -> Result<BTreeMap<String, CommitRef>, GitError> {
        let mut found = BTreeMap::new();
        if wanted.is_empty() {
            return Ok(found);
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
        for commit in candidates.into_iter().take(MAX_DISABLE_CANDIDATES) {
            let Some(parent) = self.git.parent(&commit.id)? else {
                continue;
            };
            let names = |snapshot: &Snapshot| -> BTreeSet<String> {
                snapshot
                    .jobs
                    .keys()
                    .map(|id| id.value().to_string())
                    .collect()
            };
            let after = names(self.at(&commit.id)?);
            let before = names(self.at(&parent)?);
            for id in wanted {
                if !found.contains_key(id) && before.contains(id) && !after.contains(id) {
                    found.insert(
                        id.clone(),
                        CommitRef {
                            id: commit.id.clone(),
                            time: commit.time,
                            subject: commit.subject.clone(),
                        },
                    );
                }
            }
            if found.len() == wanted.len() {
                break;
            }
        }
        Ok(found)
    }
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
    let selected =
        |id: &JobId| options.only.is_empty() || options.only.iter().any(|o| o == id.value());
    let mut steps = Vec::new();
    let (description, pairs): (String, Vec<Pair>) = match baseline {
        Baseline::Since(rev) => {
            let commit = git.commit(rev)?;
            let old = history.at(&commit)?.clone();
            problems.extend(old.problems.iter().cloned());
            let ids: BTreeSet<JobId> = old.jobs.keys().chain(now.jobs.keys()).cloned().collect();
            let pairs = ids
                .into_iter()
                .filter(|id| selected(id))
                .map(|id| {
                    let before = old_job(&old, &id, &commit);
                    (id, before, None)
                })
                .collect();
            (format!("{rev} ({})", short(&commit)), pairs)
        }
        Baseline::DisabledBy(rev) => {
            let commit = git.commit(rev)?;
            let parent = git
                .parent(&commit)?
                .ok_or_else(|| GitError::UnknownRevision {
                    rev: format!("{rev}^ (the commit has no parent)"),
                })?;
            let after: BTreeSet<JobId> = history.at(&commit)?.jobs.keys().cloned().collect();
            let old = history.at(&parent)?.clone();
            problems.extend(old.problems.iter().cloned());
            let subject = git
                .log(&["-1".to_string(), commit.clone()], &[], false)?
                .into_iter()
                .next();
            let disabled = subject.map(|c| CommitRef {
                id: c.id,
                time: c.time,
                subject: c.subject,
            });
            let pairs = old
                .jobs
                .keys()
                .filter(|id| !after.contains(id) && selected(id))
                .cloned()
                .map(|id| {
                    let before = old_job(&old, &id, &parent);
                    (id, before, disabled.clone())
                })
                .collect();
            (
                format!(
                    "the parent of {rev} ({}), for the steps it disabled",
                    short(&commit)
                ),
                pairs,
            )
        }
        Baseline::Restored { since } => {
            let commit = git.commit(since)?;
            let then: BTreeSet<JobId> = history.at(&commit)?.jobs.keys().cloned().collect();
            let back: BTreeSet<JobId> = now
                .jobs
                .keys()
                .filter(|id| !then.contains(id) && selected(id))
                .cloned()
                .collect();
            let names = back.iter().map(|id| id.value().to_string()).collect();
            let disabling = history.disabling_commits(&commit, &names)?;
            let mut pairs = Vec::new();
            for id in back {
                match disabling.get(id.value()) {
                    Some(by) => {
                        let parent = git.parent(&by.id)?.unwrap_or_default();
                        let before = old_job(history.at(&parent)?, &id, &parent);
                        pairs.push((id, before, Some(by.clone())));
                    }
                    None => pairs.push((id, None, None)),
                }
            }
            let since_shown = if since == &commit {
                short(&commit).to_string()
            } else {
                format!("{since} ({})", short(&commit))
            };
            (
                format!(
                    "each step new since {since_shown}, as it was before the commit that removed it"
                ),
                pairs,
            )
        }
    };
    for (id, before, disabled_by) in pairs {
        let after = now.jobs.get(&id).cloned();
        steps.push(compare(&id, before, after, disabled_by, &options.edits));
    }
    steps.sort_by(|a, b| {
        (a.status == Status::Unchanged, &a.id).cmp(&(b.status == Status::Unchanged, &b.id))
    });
    problems.sort_by(|a, b| (&a.path, &a.commit).cmp(&(&b.path, &b.commit)));
    problems.dedup_by(|a, b| a.path == b.path && a.commit == b.commit);
    Ok(BlocksReport {
        version: 1,
        baseline: description,
        steps,
        problems,
    })
}

/// A job to compare: its id, its old definition (file, job, commit) and
/// the commit that disabled it.
type Pair = (JobId, Option<(String, Job, String)>, Option<CommitRef>);

fn old_job(snapshot: &Snapshot, id: &JobId, commit: &str) -> Option<(String, Job, String)> {
    snapshot
        .jobs
        .get(id)
        .map(|(path, job)| (path.clone(), job.clone(), commit.to_string()))
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
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
            .unwrap_or("buildkite"),
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

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
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
/// the CI files under `paths` (every CI file when empty).
pub fn disabling_commits(
    git: &Git,
    paths: &[String],
    from: &str,
    wanted: &BTreeSet<String>,
) -> Result<BTreeMap<String, CommitRef>, GitError> {
    History::new(git, paths)?.disabling_commits(from, wanted)
}
