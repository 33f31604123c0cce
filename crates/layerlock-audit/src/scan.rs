//! The scanner: finds CI files under the given paths, extracts the scripts
//! their jobs run, parses the shell, follows the scripts it calls (mapping
//! container paths into the repository), and runs every rule on every
//! command. Unreadable or unparsable files are reported; the scan goes on.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use layerlock_ci::{Layout, Phase, Script, buildkite, dockerfile, github, gitlab, yaml};
use layerlock_lock::RequirementsFile;
use layerlock_shell::Context;

use crate::finding::{Finding, FindingBuilder, Location, Severity};
use crate::install::{Arg, RequirementFiles, strip_wrappers};
use crate::rules::{CommandSite, registry};

impl ScanOptions {
    /// Apply `--path-map` to a path as written in CI.
    pub fn map(&self, path: &str) -> PathBuf {
        let mut best: Option<(&String, &PathBuf)> = None;
        for (prefix, target) in &self.path_map {
            let matches = path == prefix
                || path
                    .strip_prefix(prefix.as_str())
                    .is_some_and(|rest| rest.starts_with('/'));
            if matches && best.is_none_or(|(p, _)| prefix.len() > p.len()) {
                best = Some((prefix, target));
            }
        }
        match best {
            Some((prefix, target)) => target.join(path[prefix.len()..].trim_start_matches('/')),
            None => PathBuf::from(path),
        }
    }

    /// Where a path named in a command is in the tree: mapped, then relative
    /// to the command's directory, then to the root.
    pub fn resolve(&self, path: &str, cwd: Option<&Path>) -> Option<PathBuf> {
        let mapped = self.map(path);
        let candidates: Vec<PathBuf> = if mapped.is_absolute() {
            vec![mapped]
        } else {
            let mut c = Vec::new();
            if let Some(cwd) = cwd {
                c.push(cwd.join(&mapped));
            }
            c.push(self.root.join(&mapped));
            c
        };
        candidates.into_iter().find(|c| c.is_file())
    }
}

#[derive(Debug, Clone, Default)]
pub struct ScanOptions {
    /// Paths in findings are relative to this.
    pub root: PathBuf,
    /// Files or directories to scan (absolute).
    pub targets: Vec<PathBuf>,
    /// Container path prefix → directory in the repository (absolute),
    /// e.g. `/vllm-workspace` → the repository root.
    pub path_map: Vec<(String, PathBuf)>,
    /// Where CI jobs run when they do not say (vLLM: `/vllm-workspace/tests`),
    /// already mapped into the tree.
    pub default_working_dir: Option<PathBuf>,
}

/// A file that could not be read or parsed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileError {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

#[derive(Debug, Default)]
pub struct ScanResult {
    pub findings: Vec<Finding>,
    pub errors: Vec<FileError>,
    /// CI files and scripts read, relative to the root.
    pub files: BTreeSet<String>,
}

const SKIP_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
    ".tox",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Yaml,
    Dockerfile,
    Shell,
}

fn kind_of(path: &Path, explicit: bool) -> Option<Kind> {
    let name = path.file_name()?.to_str()?;
    if name.ends_with(".yml") || name.ends_with(".yaml") {
        return Some(Kind::Yaml);
    }
    if name == "Dockerfile"
        || name == "Containerfile"
        || name.starts_with("Dockerfile.")
        || name.ends_with(".Dockerfile")
        || name.ends_with(".dockerfile")
    {
        return Some(Kind::Dockerfile);
    }
    if explicit {
        return Some(Kind::Shell);
    }
    None
}

fn walk_dir(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        // Symlinked directories are not followed: they can loop.
        let is_link = fs_err::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
        if path.is_dir() && is_link {
            continue;
        }
        if path.is_dir() {
            if !SKIP_DIRS.contains(&name) {
                walk_dir(&path, out);
            }
        } else if kind_of(&path, false).is_some() {
            out.push(path);
        }
    }
}

/// What the walker reports to whoever drives it: every command (with where
/// it runs), and every script call it could not follow.
pub trait Visitor {
    fn command(&mut self, site: &CommandSite<'_>);
    fn missing_script(&mut self, _call: &str, _site: &CommandSite<'_>) {}
}

/// Runs every audit rule on every command; notes missing scripts.
struct RuleVisitor {
    findings: Vec<Finding>,
}

impl Visitor for RuleVisitor {
    fn command(&mut self, site: &CommandSite<'_>) {
        for rule in registry() {
            self.findings
                .extend(rule.check(site).into_iter().map(FindingBuilder::build));
        }
    }

    fn missing_script(&mut self, call: &str, site: &CommandSite<'_>) {
        self.findings.push(
            FindingBuilder::new("script-not-found", Severity::Info, site.location.clone())
                .job(site.job.map(str::to_string))
                .command(site.text)
                .via(site.via.to_vec())
                .message(format!(
                    "`{call}` is not in the scanned tree, so its commands were not audited{}",
                    if call.starts_with('/') && site.mapped_paths == 0 {
                        " (map container paths with --path-map /workspace=.)"
                    } else {
                        ""
                    }
                ))
                .build(),
        );
    }
}

struct Files<'a> {
    options: &'a ScanOptions,
    cwd: Option<PathBuf>,
}

impl RequirementFiles for Files<'_> {
    fn read(&self, path: &str) -> Option<(String, RequirementsFile)> {
        let real = self.options.resolve(path, self.cwd.as_deref())?;
        let parsed = RequirementsFile::read(&real).ok()?;
        let shown = real
            .strip_prefix(&self.options.root)
            .unwrap_or(&real)
            .display()
            .to_string();
        Some((shown, parsed))
    }
}

struct Scanner<'a> {
    options: &'a ScanOptions,
    result: ScanResult,
    visitor: &'a mut dyn Visitor,
}

/// One script plus where it runs.
struct Run<'a> {
    text: &'a str,
    layout: Layout,
    file: String,
    job: Option<String>,
    phase: Phase,
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    via: Vec<String>,
    stack: Vec<PathBuf>,
}

impl<'a> Scanner<'a> {
    fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.options.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    fn error(&mut self, path: &str, line: usize, column: usize, message: String) {
        self.result.errors.push(FileError {
            path: path.to_string(),
            line,
            column,
            message,
        });
    }

    fn scan_file(&mut self, path: &Path, explicit: bool) {
        let Some(kind) = kind_of(path, explicit) else {
            return;
        };
        let rel = self.relative(path);
        let text = match fs_err::read(path) {
            Ok(bytes) if bytes.contains(&0) => {
                self.error(
                    &rel,
                    1,
                    1,
                    "a binary file, not a CI file or script".to_string(),
                );
                return;
            }
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => {
                self.error(&rel, 1, 1, format!("cannot read: {e}"));
                return;
            }
        };
        let scripts = match kind {
            Kind::Dockerfile => dockerfile::scripts(&text),
            Kind::Shell => Ok(vec![Script {
                text: text.clone(),
                layout: Layout::Lines {
                    start: yaml::Pos { line: 1, column: 1 },
                },
                job: None,
                phase: Phase::JobTime,
                env: BTreeMap::new(),
                working_dir: None,
            }]),
            Kind::Yaml => {
                let docs = match yaml::parse(&text) {
                    Ok(docs) => docs,
                    Err(e) => {
                        // Only files that are CI files matter; a broken YAML
                        // file in a CI location is reported.
                        if rel.contains(".buildkite")
                            || rel.contains(".github")
                            || rel.contains("gitlab-ci")
                            || explicit
                        {
                            self.error(
                                &rel,
                                e.line,
                                e.column,
                                format!("cannot parse YAML: {}", e.message),
                            );
                        }
                        return;
                    }
                };
                let is_gitlab = rel.ends_with(".gitlab-ci.yml")
                    || rel.ends_with("gitlab-ci.yaml")
                    || rel.contains(".gitlab/");
                let is_workflow = rel.contains(".github/workflows/");
                if is_gitlab {
                    Ok(gitlab::scripts_in(&docs))
                } else if is_workflow
                    || docs.iter().any(github::looks_like_action)
                    || docs
                        .iter()
                        .any(|d| github::looks_like_workflow(d) && d.get("on").is_some())
                {
                    Ok(github::scripts_in(&docs))
                } else if docs.iter().any(|d| {
                    buildkite::looks_like_pipeline(d)
                        || matches!(d, yaml::Node::Seq { .. }) && rel.contains(".buildkite")
                }) {
                    Ok(buildkite::scripts_in(&docs))
                } else {
                    return;
                }
            }
        };
        let scripts = match scripts {
            Ok(s) => s,
            Err(e) => {
                self.error(&rel, e.line, e.column, e.message);
                return;
            }
        };
        self.result.files.insert(rel.clone());
        for script in scripts {
            let cwd = script
                .working_dir
                .as_deref()
                .map(|d| self.options.map(d))
                .map(|d| {
                    if d.is_absolute() {
                        d
                    } else {
                        self.options.root.join(d)
                    }
                })
                .or_else(|| {
                    (script.phase == Phase::JobTime && script.job.is_some())
                        .then(|| self.options.default_working_dir.clone())
                        .flatten()
                });
            let run = Run {
                text: &script.text,
                layout: script.layout,
                file: rel.clone(),
                job: script.job.clone(),
                phase: script.phase,
                env: script.env.clone(),
                cwd,
                via: Vec::new(),
                stack: vec![path.to_path_buf()],
            };
            self.run(&run);
        }
    }

    fn run(&mut self, run: &Run<'_>) {
        let parsed = match layerlock_shell::parse(run.text) {
            Ok(p) => p,
            Err(e) => {
                let pos = run.layout.map(e.line, e.column);
                self.error(
                    &run.file,
                    pos.line,
                    pos.column,
                    format!("cannot parse shell: {}", e.message),
                );
                return;
            }
        };
        let mut vars = run.env.clone();
        let mut cwd = run.cwd.clone();
        let mut previous: Option<Vec<Arg>> = None;
        for command in &parsed.commands {
            let top = command.context.is_empty();
            for (name, word) in &command.assignments {
                if top
                    && command.words.is_empty()
                    && let Some(v) = word.value.clone().or_else(|| word.expand(&vars))
                {
                    vars.insert(name.clone(), v);
                }
            }
            let args: Vec<Arg> = command
                .words
                .iter()
                .map(|w| Arg {
                    value: w.value.clone().or_else(|| w.expand(&vars)),
                    raw: w.raw.clone(),
                })
                .collect();
            if top {
                track_env_and_cwd(&args, &mut vars, &mut cwd, self);
            }
            let pos = run.layout.map(command.line, command.column);
            let location = Location {
                path: run.file.clone(),
                line: pos.line,
                column: pos.column,
            };
            let options = self.options;
            let files = Files {
                options,
                cwd: cwd.clone(),
            };
            let site = CommandSite {
                args: &args,
                text: &command.text,
                location: location.clone(),
                job: run.job.as_deref(),
                phase: run.phase,
                via: &run.via,
                files: &files,
                cwd: cwd.as_deref(),
                root: &options.root,
                previous: previous.as_deref(),
                mapped_paths: options.path_map.len(),
            };
            self.visitor.command(&site);
            let call = if matches!(command.context.last(), Some(Context::Substitution)) {
                None
            } else {
                script_call(&args)
            };
            if let Some(call) = call {
                match options.resolve(&call, cwd.as_deref()) {
                    None => self.visitor.missing_script(&call, &site),
                    Some(real) => self.follow(run, real, &location, cwd.as_deref()),
                }
            }
            previous = Some(args);
        }
    }

    fn follow(&mut self, run: &Run<'_>, real: PathBuf, location: &Location, cwd: Option<&Path>) {
        if run.stack.contains(&real) || run.stack.len() > 32 {
            return;
        }
        let Ok(bytes) = fs_err::read(&real) else {
            let rel = self.relative(&real);
            self.error(&rel, 0, 0, "cannot read".to_string());
            return;
        };
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let rel = self.relative(&real);
        self.result.files.insert(rel.clone());
        let mut via = run.via.clone();
        via.push(format!("{}:{}", location.path, location.line));
        let mut stack = run.stack.clone();
        stack.push(real.clone());
        let child = Run {
            text: &text,
            layout: Layout::Lines {
                start: yaml::Pos { line: 1, column: 1 },
            },
            file: rel,
            job: run.job.clone(),
            phase: run.phase,
            env: run.env.clone(),
            cwd: cwd.map(Path::to_path_buf).or_else(|| run.cwd.clone()),
            via,
            stack,
        };
        self.run(&child);
    }
}

/// `export A=b`, `cd DIR` at the top level of a script change what later
/// commands see.
fn track_env_and_cwd(
    args: &[Arg],
    vars: &mut BTreeMap<String, String>,
    cwd: &mut Option<PathBuf>,
    scanner: &Scanner<'_>,
) {
    let Some(first) = args.first().and_then(|a| a.value.as_deref()) else {
        return;
    };
    match first {
        "export" => {
            for arg in &args[1..] {
                if let Some((k, v)) = arg.value.as_deref().and_then(|a| a.split_once('=')) {
                    vars.insert(k.to_string(), v.to_string());
                }
            }
        }
        "cd" => {
            if let Some(dir) = args.get(1).and_then(|a| a.value.as_deref()) {
                let mapped = scanner.options.map(dir);
                *cwd = Some(if mapped.is_absolute() {
                    mapped
                } else {
                    cwd.clone()
                        .unwrap_or_else(|| scanner.options.root.clone())
                        .join(mapped)
                });
            }
        }
        _ => {}
    }
}

/// The script a command runs, if it runs one: `bash x.sh`, `sh -e x.sh`,
/// `source x.sh`, `. x.sh`, `./x.sh`, `path/to/x.sh`.
fn script_call(args: &[Arg]) -> Option<String> {
    let args = strip_wrappers(args);
    let first = args.first()?.value.as_deref()?;
    let program = first.rsplit('/').next().unwrap_or(first);
    if matches!(program, "bash" | "sh" | "dash" | "zsh") {
        let mut i = 1;
        while let Some(a) = args.get(i) {
            let v = a.value.as_deref()?;
            if v == "-c" || (v.starts_with('-') && !v.starts_with("--") && v.contains('c')) {
                return None;
            }
            if v == "-o" || v == "+o" {
                i += 2;
                continue;
            }
            if !v.starts_with('-') && !v.starts_with('+') {
                return Some(v.to_string());
            }
            i += 1;
        }
        return None;
    }
    if first == "source" || first == "." {
        return args.get(1)?.value.clone();
    }
    if first.ends_with(".sh") || first.starts_with("./") {
        return Some(first.to_string());
    }
    None
}

/// Walk every CI file and script under the options' targets, telling the
/// visitor about each command.
pub fn walk(options: &ScanOptions, visitor: &mut dyn Visitor) -> ScanResult {
    let mut scanner = Scanner {
        options,
        result: ScanResult::default(),
        visitor,
    };
    for target in &options.targets {
        if target.is_dir() {
            let mut files = Vec::new();
            walk_dir(target, &mut files);
            for file in files {
                scanner.scan_file(&file, false);
            }
        } else if target.is_file() {
            scanner.scan_file(target, true);
        } else {
            let rel = scanner.relative(target);
            scanner.error(&rel, 1, 1, "no such file or directory".to_string());
        }
    }
    scanner.result
}

/// The audit: every rule on every command.
pub fn scan(options: &ScanOptions) -> ScanResult {
    let mut visitor = RuleVisitor {
        findings: Vec::new(),
    };
    let mut result = walk(options, &mut visitor);
    let mut seen = BTreeSet::new();
    result.findings = visitor
        .findings
        .into_iter()
        .filter(|f| seen.insert((f.location.clone(), f.job.clone(), f.rule)))
        .collect();
    result
        .findings
        .sort_by(|a, b| (&a.location, &a.job, a.rule).cmp(&(&b.location, &b.job, b.rule)));
    result
}
