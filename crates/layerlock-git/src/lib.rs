//! Git, run as the `git` program with every wait and read bounded: history
//! checks read revisions, logs and blobs of the repository being checked
//! and nothing else. Revisions given by users are checked to be revisions
//! (`--end-of-options`), so `--output=x` can never become an option.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use layerlock_process::{Limits, Stopped};

/// The most a single git command may print before it is stopped: a log of
/// 100,000 commits with file names fits many times over.
pub const MAX_GIT_OUTPUT: usize = 256 << 20;
/// How long one git command may run.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(300);

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("{} is not inside a git work tree; the history checks need the repository's history", .0.display())]
    NotARepository(PathBuf),
    #[error("`git {args}` failed: {stderr}")]
    Failed { args: String, stderr: String },
    #[error("`git {args}` printed more than {limit} MiB; narrow it with paths or a later revision", limit = MAX_GIT_OUTPUT >> 20)]
    TooLarge { args: String },
    #[error("`git {args}` ran longer than {secs} s and was stopped")]
    TimedOut { args: String, secs: u64 },
    #[error("`{rev}` is not a commit in this repository")]
    UnknownRevision { rev: String },
    #[error("{} is not inside the repository at {}", .path.display(), .root.display())]
    Outside { path: PathBuf, root: PathBuf },
    #[error(
        "this clone is shallow and `git {args}` reached the commit where its history is cut off ({boundary}): what came before is missing, so the answer would be wrong; fetch the whole history (`git fetch --unshallow`, or `fetch-depth: 0` with actions/checkout) and run again"
    )]
    Shallow { args: String, boundary: String },
}

/// One repository, found from a directory inside its work tree.
#[derive(Debug, Clone)]
pub struct Git {
    root: PathBuf,
    timeout: Duration,
    /// Where a shallow clone's history is cut off: commits whose parents
    /// are not in the repository (empty for a full clone).
    boundary: Arc<BTreeSet<String>>,
}

/// A file at a commit, as [`Git::blobs`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blob {
    /// Nothing at that path.
    Missing,
    Bytes(Vec<u8>),
    /// What cannot be read, and why: a symlink out of the repository, to
    /// nothing, or in a loop.
    Refused(String),
}

/// One `git log` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    pub id: String,
    /// Committer time, seconds since the epoch.
    pub time: i64,
    pub subject: String,
    /// The paths it changed (only when asked for, and only under the
    /// pathspec the log was limited to).
    pub paths: Vec<String>,
}

impl Git {
    /// The repository whose work tree holds `dir`.
    pub fn open(dir: &Path) -> Result<Self, GitError> {
        let probe = Self::at(dir);
        let out = probe
            .run(
                &[
                    "rev-parse",
                    "--show-toplevel",
                    "--is-shallow-repository",
                    "--git-path",
                    "shallow",
                ],
                None,
            )
            .map_err(|e| match e {
                GitError::Failed { .. } => GitError::NotARepository(dir.to_path_buf()),
                other => other,
            })?;
        let text = String::from_utf8_lossy(&out);
        let mut lines = text.lines();
        let (Some(top), Some(shallow), Some(shallow_file)) =
            (lines.next(), lines.next(), lines.next())
        else {
            return Err(GitError::Failed {
                args: "rev-parse --show-toplevel".to_string(),
                stderr: format!("unexpected output {text:?}"),
            });
        };
        let mut git = Self::at(Path::new(top));
        if shallow == "true" {
            // Relative to the directory git ran in.
            let file = dir.join(shallow_file);
            let ids = read_shallow(&file).map_err(|e| GitError::Failed {
                args: "rev-parse --git-path shallow".to_string(),
                stderr: format!("cannot read {}: {e}", file.display()),
            })?;
            git.boundary = Arc::new(ids);
        }
        Ok(git)
    }

    /// Git run in `dir` as given, without finding the top of its work
    /// tree: paths it prints are relative to `dir`.
    pub fn at(dir: &Path) -> Self {
        Self {
            root: dir.to_path_buf(),
            timeout: GIT_TIMEOUT,
            boundary: Arc::default(),
        }
    }

    /// An error when `commits` reach where a shallow clone's history is
    /// cut off: an answer from there on would be built on missing
    /// commits (every file looks added by the boundary commit).
    pub fn not_cut_off<'a>(
        &self,
        commits: impl IntoIterator<Item = &'a str>,
        args: &str,
    ) -> Result<(), GitError> {
        if self.boundary.is_empty() {
            return Ok(());
        }
        match commits.into_iter().find(|id| self.boundary.contains(*id)) {
            Some(id) => Err(GitError::Shallow {
                args: args.to_string(),
                boundary: id[..id.len().min(12)].to_string(),
            }),
            None => Ok(()),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The commit id `rev` names.
    pub fn commit(&self, rev: &str) -> Result<String, GitError> {
        let spec = format!("{rev}^{{commit}}");
        self.run(
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &spec,
            ],
            None,
        )
        .map(|out| String::from_utf8_lossy(&out).trim().to_string())
        .map_err(|e| match e {
            // Git answered: not a commit. Stopped or not started, it did not.
            GitError::Failed { .. } => GitError::UnknownRevision {
                rev: rev.to_string(),
            },
            other => other,
        })
    }

    /// The commit's first parent, or `None` for a root commit.
    pub fn parent(&self, commit: &str) -> Result<Option<String>, GitError> {
        // A commit at the cut of a shallow clone has parents; they are
        // not here.
        self.not_cut_off([commit], &format!("rev-parse {commit}^1"))?;
        match self.commit(&format!("{commit}^1")) {
            Ok(id) => Ok(Some(id)),
            Err(GitError::UnknownRevision { .. }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Files at `commit` under `paths` (all files when empty).
    pub fn files_at(&self, commit: &str, paths: &[String]) -> Result<Vec<String>, GitError> {
        let mut args = vec![
            "ls-tree",
            "-r",
            "-z",
            "--name-only",
            "--full-tree",
            commit,
            "--",
        ];
        args.extend(paths.iter().map(String::as_str));
        let out = self.run(&args, None)?;
        Ok(split_z(&out))
    }

    /// Files tracked in the work tree under `paths`.
    pub fn tracked(&self, paths: &[String]) -> Result<Vec<String>, GitError> {
        let mut args = vec!["ls-files", "-z", "--full-name", "--"];
        args.extend(paths.iter().map(String::as_str));
        let out = self.run(&args, None)?;
        Ok(split_z(&out))
    }

    /// The contents of `path` at each commit, in one `git cat-file --batch`,
    /// a symlink followed to its target at that commit as a checkout would:
    /// [`Blob::Missing`] where nothing is there, [`Blob::Refused`] where the
    /// link leaves the repository, dangles or loops. Blobs larger than
    /// `max_bytes` are an error.
    pub fn blobs(
        &self,
        wanted: &[(String, String)],
        max_bytes: usize,
    ) -> Result<Vec<Blob>, GitError> {
        if wanted.is_empty() {
            return Ok(Vec::new());
        }
        let mut input = Vec::new();
        for (commit, path) in wanted {
            if path.contains('\n') || commit.contains('\n') {
                return Err(GitError::Failed {
                    args: "cat-file --batch".to_string(),
                    stderr: format!("a path with a line break cannot be read: {path:?}"),
                });
            }
            input.extend_from_slice(format!("{commit}:{path}\n").as_bytes());
        }
        let out = self.run(&["cat-file", "--batch", "--follow-symlinks"], Some(input))?;
        let mut rest = out.as_slice();
        let mut blobs = Vec::with_capacity(wanted.len());
        for (commit, path) in wanted {
            let end = rest
                .iter()
                .position(|b| *b == b'\n')
                .ok_or_else(|| truncated(path))?;
            let header = String::from_utf8_lossy(&rest[..end]).into_owned();
            rest = &rest[end + 1..];
            if header.ends_with(" missing") {
                blobs.push(Blob::Missing);
                continue;
            }
            let fields: Vec<&str> = header.split(' ').collect();
            // `OID TYPE SIZE`, or `symlink|dangling|loop|notdir SIZE` and
            // SIZE bytes naming the link's target.
            let (kind, size) = match fields.as_slice() {
                [_, kind, size] => (*kind, *size),
                [kind, size] => (*kind, *size),
                _ => return Err(truncated(path)),
            };
            let size: usize = size.parse().map_err(|_| truncated(path))?;
            if rest.len() < size + 1 {
                return Err(truncated(path));
            }
            let body = &rest[..size];
            rest = &rest[size + 1..];
            let target = || String::from_utf8_lossy(body).into_owned();
            let refused = match (fields.len(), kind) {
                (3, "blob") => None,
                (3, other) => Some(format!("a link to a {other}, not a file")),
                (_, "symlink") => Some(format!(
                    "a link to {}, outside the repository, so it was not read",
                    target()
                )),
                (_, "dangling") => Some(format!(
                    "a link to {}, which does not exist at this commit",
                    target()
                )),
                (_, "loop") => Some("a link that loops, so it was not read".to_string()),
                (_, "notdir") => Some(format!(
                    "a link through {}, which is not a folder",
                    target()
                )),
                _ => Some(format!("git cat-file answered {header:?}")),
            };
            if let Some(why) = refused {
                blobs.push(Blob::Refused(why));
                continue;
            }
            if size > max_bytes {
                return Err(GitError::Failed {
                    args: format!("cat-file {commit}:{path}"),
                    stderr: format!(
                        "the file is {size} bytes, over the {max_bytes}-byte bound for a CI file"
                    ),
                });
            }
            blobs.push(Blob::Bytes(body.to_vec()));
        }
        Ok(blobs)
    }

    /// The file at `path` (a path on disk inside the work tree) as it was
    /// at `rev`.
    pub fn file_at(&self, rev: &str, path: &Path, max_bytes: usize) -> Result<Blob, GitError> {
        let commit = self.commit(rev)?;
        let relative = self.relative(path)?;
        let mut blobs = self.blobs(&[(commit, relative)], max_bytes)?;
        blobs
            .pop()
            .ok_or_else(|| truncated(&path.display().to_string()))
    }

    /// `path` as git names it: relative to the top of the work tree, with
    /// `/` between its parts.
    fn relative(&self, path: &Path) -> Result<String, GitError> {
        let outside = || GitError::Outside {
            path: path.to_path_buf(),
            root: self.root.clone(),
        };
        let name = path.file_name().ok_or_else(outside)?;
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let dir = std::fs::canonicalize(dir).map_err(|_| outside())?;
        let root = std::fs::canonicalize(&self.root).map_err(|_| outside())?;
        let inside = dir.strip_prefix(&root).map_err(|_| outside())?.join(name);
        let parts: Option<Vec<&str>> = inside.iter().map(|part| part.to_str()).collect();
        Ok(parts.ok_or_else(outside)?.join("/"))
    }

    /// Commits `git log` lists for `range` (revisions and options such as
    /// `A..B`, `--since=…`), limited to `paths`, newest first, with the
    /// paths each changed when `with_paths`.
    pub fn log(
        &self,
        range: &[String],
        paths: &[String],
        with_paths: bool,
    ) -> Result<Vec<Commit>, GitError> {
        // Each commit starts with an empty NUL-terminated field: a subject
        // holds no NUL and a path is never empty, so neither can start a
        // record of its own (a subject may hold any other byte).
        let mut args: Vec<&str> = LOG.to_vec();
        args.push("--format=%x00%H%x00%ct%x00%s");
        if with_paths {
            args.extend(["--name-only", "--no-renames"]);
        }
        args.extend(range.iter().map(String::as_str));
        args.push("--");
        args.extend(paths.iter().map(String::as_str));
        let out = self.run(&args, None)?;
        let commits = parse_log(&out).map_err(|why| GitError::Failed {
            args: args.join(" "),
            stderr: format!("unexpected output ({why})"),
        })?;
        // A log cut to its newest commit walks no further than it was
        // asked; any other that lists a boundary commit went past the
        // history there is.
        if !range.iter().any(|a| a == "-1") {
            self.not_cut_off(commits.iter().map(|c| c.id.as_str()), &args.join(" "))?;
        }
        Ok(commits)
    }

    /// The refs `patterns` match (`git for-each-ref` patterns: a prefix such
    /// as `refs/heads`, or a glob such as `refs/pull/*/head`), each with the
    /// commit it points to, by name. Symbolic refs (`origin/HEAD`) and refs
    /// to anything but a commit are left out, and so is a name git would
    /// not write (a control byte): it is counted in the second value,
    /// never passed on.
    pub fn refs(&self, patterns: &[String]) -> Result<(Vec<(String, String)>, usize), GitError> {
        for p in patterns {
            if !p.starts_with("refs/") || p.chars().any(char::is_control) {
                return Err(GitError::Failed {
                    args: "for-each-ref".to_string(),
                    stderr: format!("{p:?} is no ref pattern (it must start with refs/)"),
                });
            }
        }
        let mut args: Vec<&str> = vec![
            "for-each-ref",
            "--format=%(refname)%00%(objectname)%00%(objecttype)%00%(symref)%00",
        ];
        args.extend(patterns.iter().map(String::as_str));
        let out = self.run(&args, None)?;
        let fields: Vec<&[u8]> = out.split(|b| *b == 0).collect();
        let mut refs = Vec::new();
        let mut unusual = 0;
        for record in fields.chunks(4) {
            let [name, id, kind, symref] = record else {
                break;
            };
            let name = name.strip_prefix(b"\n").unwrap_or(name);
            if name.is_empty() {
                continue;
            }
            let name = lossy(name);
            let id = lossy(id);
            if !symref.is_empty() || kind != b"commit" {
                continue;
            }
            // A part may start with `-` (`refs/heads/-x`): the full name,
            // which starts with `refs/`, is what goes to git.
            let usual = name.starts_with("refs/") && !name.chars().any(char::is_control);
            if !usual || !matches!(id.len(), 40 | 64) || !id.bytes().all(|b| b.is_ascii_hexdigit())
            {
                unusual += 1;
                continue;
            }
            refs.push((name, id));
        }
        Ok((refs, unusual))
    }

    /// Commits reachable from `tips` but from none of `exclude`, limited
    /// to `paths` (with the paths each changed), newest first, each with
    /// the tip it was reached from (`--source`). The revisions go to git
    /// on standard input, so thousands of refs make no command line.
    pub fn log_reached(
        &self,
        tips: &[String],
        exclude: &[String],
        paths: &[String],
    ) -> Result<Vec<(Commit, String)>, GitError> {
        if tips.is_empty() || paths.is_empty() {
            return Ok(Vec::new());
        }
        for rev in tips.iter().chain(exclude) {
            if rev.starts_with('-') || rev.chars().any(char::is_control) {
                return Err(GitError::UnknownRevision { rev: rev.clone() });
            }
        }
        let mut args: Vec<&str> = LOG.to_vec();
        args.extend([
            "--format=%x00%H%x00%ct%x00%S%x1f%s",
            "--name-only",
            "--no-renames",
            "--source",
            "--stdin",
            "--",
        ]);
        args.extend(paths.iter().map(String::as_str));
        let mut input = String::new();
        for tip in tips {
            input.push_str(tip);
            input.push('\n');
        }
        for rev in exclude {
            input.push('^');
            input.push_str(rev);
            input.push('\n');
        }
        let out = self.run(&args, Some(input.into_bytes()))?;
        let shown = "log --source --stdin";
        let commits = parse_log(&out).map_err(|why| GitError::Failed {
            args: shown.to_string(),
            stderr: format!("unexpected output ({why})"),
        })?;
        self.not_cut_off(commits.iter().map(|c| c.id.as_str()), shown)?;
        Ok(commits
            .into_iter()
            .map(|mut c| {
                let (source, subject) = match c.subject.split_once('\u{1f}') {
                    Some((source, subject)) => (source.to_string(), subject.to_string()),
                    None => (String::new(), c.subject.clone()),
                };
                c.subject = subject;
                (c, source)
            })
            .collect())
    }

    /// Is `ancestor` reachable from `descendant`?
    pub fn is_ancestor(&self, ancestor: &str, descendant: &str) -> Result<bool, GitError> {
        match self.run(&["merge-base", "--is-ancestor", ancestor, descendant], None) {
            Ok(_) => Ok(true),
            Err(GitError::Failed { stderr, .. }) if stderr.is_empty() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The best common ancestor of two commits.
    pub fn merge_base(&self, a: &str, b: &str) -> Result<Option<String>, GitError> {
        match self.run(&["merge-base", a, b], None) {
            Ok(out) => Ok(Some(String::from_utf8_lossy(&out).trim().to_string())),
            // In a shallow clone "no common ancestor" may only mean "not
            // fetched".
            Err(GitError::Failed { stderr, .. }) if stderr.is_empty() => {
                let boundary = self.boundary.iter().map(String::as_str).take(1);
                self.not_cut_off(boundary, &format!("merge-base {a} {b}"))?;
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Run `git ARGS` in the repository with stdin fed from `input`, its
    /// output bounded by [`MAX_GIT_OUTPUT`] and its time by the timeout.
    pub fn run(&self, args: &[&str], input: Option<Vec<u8>>) -> Result<Vec<u8>, GitError> {
        let shown = args.join(" ");
        let mut cmd = Command::new("git");
        cmd.arg("-C")
            .arg(&self.root)
            // No pager, no prompts, no configured external diff or colour,
            // no file-system monitor program.
            .args(["-c", "core.quotePath=false", "-c", "color.ui=false"])
            .args(["-c", "core.fsmonitor=false"])
            .args(args)
            // Every path layerlock passes is a file or folder name: a name
            // such as `:(exclude)…` or `*` in the repository is not magic.
            .env("GIT_LITERAL_PATHSPECS", "1")
            // Transports that move bytes and say who they talk to: `ext::`
            // would run a command, plain `git:` and `http:` let anyone on
            // the way choose the commit a branch names.
            .env("GIT_ALLOW_PROTOCOL", "file:https:ssh")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_PAGER", "cat")
            .env_remove("GIT_EXTERNAL_DIFF");
        // `-C` names the repository: one a hook or `rebase -x` points git at
        // through the environment (GIT_DIR, GIT_INDEX_FILE, …) is not it.
        for var in LOCAL_ENV {
            cmd.env_remove(var);
        }
        // ssh never waits for a question nobody will answer.
        if std::env::var_os("GIT_SSH_COMMAND").is_none() {
            cmd.env("GIT_SSH_COMMAND", "ssh -o BatchMode=yes");
        }
        let limits = Limits {
            time: self.timeout,
            stdout: MAX_GIT_OUTPUT,
            stderr: 64 << 10,
        };
        let done = match layerlock_process::run(&mut cmd, input, limits) {
            Ok(done) => done,
            Err(Stopped::Spawn(e)) => return Err(GitError::Spawn(e)),
            Err(Stopped::TooLarge(_)) => return Err(GitError::TooLarge { args: shown }),
            Err(Stopped::TimedOut(limit)) => {
                return Err(GitError::TimedOut {
                    args: shown,
                    secs: limit.as_secs(),
                });
            }
        };
        if !done.status.success() {
            return Err(GitError::Failed {
                args: shown,
                stderr: done.said(),
            });
        }
        Ok(done.stdout)
    }
}

/// How every log starts: plain output, no conversion or external diff,
/// NUL-separated.
const LOG: [&str; 5] = ["log", "--no-color", "--no-textconv", "--no-ext-diff", "-z"];

/// What `git rev-parse --local-env-vars` lists: variables that point git
/// at a repository other than the one `-C` names.
const LOCAL_ENV: [&str; 12] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_GRAFT_FILE",
    "GIT_REPLACE_REF_BASE",
];

/// One commit of a repository, fetched alone (`--depth 1`) into a scratch
/// bare repository to read its files: a git dependency's metadata is read
/// there, never from a checkout and never by building it.
pub struct Fetched {
    git: Git,
    /// The full commit id the revision was at.
    pub commit: String,
    _dir: tempfile::TempDir,
}

impl Fetched {
    /// Fetch `rev` (a branch, tag or commit id; the remote's HEAD when
    /// `None`) of the repository at `url`.
    pub fn fetch(url: &str, rev: Option<&str>) -> Result<Self, GitError> {
        let dir = tempfile::tempdir().map_err(GitError::Spawn)?;
        let git = Git::at(dir.path());
        git.run(&["init", "--quiet", "--bare"], None)?;
        git.run(
            &[
                "fetch",
                "--quiet",
                "--depth",
                "1",
                "--no-tags",
                "--end-of-options",
                url,
                rev.unwrap_or("HEAD"),
            ],
            None,
        )?;
        let out = git.run(
            &[
                "rev-parse",
                "--verify",
                "--end-of-options",
                "FETCH_HEAD^{commit}",
            ],
            None,
        )?;
        let commit = String::from_utf8_lossy(&out).trim().to_string();
        Ok(Self {
            git,
            commit,
            _dir: dir,
        })
    }

    /// The file at `path` (`/`-separated, from the top of the tree) in the
    /// fetched commit, at most `max_bytes`; `None` when there is none.
    pub fn file(&self, path: &str, max_bytes: usize) -> Result<Option<Vec<u8>>, GitError> {
        let mut blobs = self
            .git
            .blobs(&[(self.commit.clone(), path.to_string())], max_bytes)?;
        match blobs.pop() {
            Some(Blob::Bytes(bytes)) => Ok(Some(bytes)),
            Some(Blob::Refused(why)) => Err(GitError::Failed {
                args: format!("cat-file {}:{path}", self.commit),
                stderr: why,
            }),
            Some(Blob::Missing) | None => Ok(None),
        }
    }
}

/// The commit ids of a `shallow` file, one a line; at most a few MiB.
fn read_shallow(path: &Path) -> std::io::Result<BTreeSet<String>> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(16 << 20)
        .read_to_string(&mut text)?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}

/// Commits from `git log -z --format=%x00%H%x00%ct%x00%s [--name-only]`:
/// `\0 ID \0 TIME \0 SUBJECT \0`, then, with names, `\n` and each name
/// NUL-terminated. Anything else is an error, never a commit skipped.
fn parse_log(out: &[u8]) -> Result<Vec<Commit>, String> {
    let fields: Vec<&[u8]> = out.split(|b| *b == 0).collect();
    let mut commits = Vec::new();
    let mut at = 0;
    // The output ends with a NUL, which leaves one empty field last.
    while at + 1 < fields.len() {
        if !fields[at].is_empty() {
            return Err(format!("a record starts with {:?}", lossy(fields[at])));
        }
        let (Some(id), Some(time), Some(subject)) =
            (fields.get(at + 1), fields.get(at + 2), fields.get(at + 3))
        else {
            return Err("a record is cut short".to_string());
        };
        let id = lossy(id);
        if !matches!(id.len(), 40 | 64) || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("{id:?} is not a commit id"));
        }
        let time: i64 = lossy(time)
            .parse()
            .map_err(|_| format!("commit {id} has the time {:?}", lossy(time)))?;
        at += 4;
        let mut paths = Vec::new();
        let mut first = true;
        while let Some(name) = fields.get(at).filter(|f| !f.is_empty()) {
            let name = if first {
                name.strip_prefix(b"\n").unwrap_or(name)
            } else {
                name
            };
            first = false;
            if !name.is_empty() {
                paths.push(lossy(name));
            }
            at += 1;
        }
        commits.push(Commit {
            id,
            time,
            subject: lossy(subject).trim().to_string(),
            paths,
        });
    }
    Ok(commits)
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn truncated(path: &str) -> GitError {
    GitError::Failed {
        args: "cat-file --batch".to_string(),
        stderr: format!("the output for {path} ended early"),
    }
}

fn split_z(out: &[u8]) -> Vec<String> {
    out.split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_log_is_read_record_by_record() {
        let a = "a".repeat(40);
        let b = "b".repeat(40);
        // A subject with the old record separator and a fake id in it, a
        // commit without names, an empty subject.
        let out = format!(
            "\0{a}\0100\0x\u{1e}{b}\0\n.buildkite/p.yml\0tests/t.py\0\0{b}\0200\0\0\0{a}\0300\0merge\0"
        );
        let commits = parse_log(out.as_bytes()).unwrap();
        assert_eq!(commits.len(), 3);
        assert_eq!(commits[0].subject, format!("x\u{1e}{b}"));
        assert_eq!(commits[0].paths, [".buildkite/p.yml", "tests/t.py"]);
        assert_eq!((commits[1].id.as_str(), commits[1].time), (b.as_str(), 200));
        assert!(commits[1].paths.is_empty() && commits[1].subject.is_empty());
        assert_eq!(commits[2].subject, "merge");
        assert!(parse_log(b"").unwrap().is_empty());
        // What git would never print is an error, not a commit skipped.
        assert!(parse_log(format!("\0{a}\0soon\0x\0").as_bytes()).is_err());
        assert!(parse_log(b"\0not-an-id\x00100\0x\0").is_err());
        assert!(parse_log(format!("junk\0{a}\0100\0x\0").as_bytes()).is_err());
        assert!(parse_log(format!("\0{a}\0100").as_bytes()).is_err());
    }

    /// `git ARGS` in `dir`, away from the user's and the system's config.
    fn run_git(dir: &std::path::Path, args: &[&str]) {
        let made = Command::new("git")
            .args(["-c", "user.name=D", "-c", "user.email=d@e"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .unwrap();
        assert!(made.success(), "git {args:?}");
    }

    fn repo() -> (tempfile::TempDir, Git) {
        let dir = tempfile::tempdir().unwrap();
        run_git(dir.path(), &["init", "-q", "."]);
        let git = Git::open(dir.path()).unwrap();
        (dir, git)
    }

    #[test]
    fn only_a_name_git_rejects_is_an_unknown_revision() {
        let (dir, git) = repo();
        for _ in 0..2 {
            run_git(dir.path(), &["commit", "-q", "--allow-empty", "-m", "x"]);
        }
        assert!(matches!(
            git.commit("no-such-branch"),
            Err(GitError::UnknownRevision { .. })
        ));
        // Git stopped (here: at once, unless it was quicker still) is no
        // answer about the revision: never "no such commit", never "a root
        // commit without a parent".
        let stopped = Git {
            timeout: Duration::ZERO,
            ..git.clone()
        };
        for _ in 0..10 {
            let head = stopped.commit("HEAD");
            assert!(
                matches!(head, Ok(_) | Err(GitError::TimedOut { .. })),
                "{head:?}"
            );
            let parent = stopped.parent("HEAD");
            assert!(
                matches!(parent, Ok(Some(_)) | Err(GitError::TimedOut { .. })),
                "{parent:?}"
            );
        }
    }
}
