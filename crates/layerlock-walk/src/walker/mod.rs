//! The walker: finds CI files under the given paths, extracts the scripts
//! their jobs run, parses the shell, follows what those run (scripts with
//! their arguments, functions that run their arguments, shell strings,
//! containers, Dockerfiles written and built by a job), maps image and
//! container paths back into the repository, and tells a visitor about
//! every command. Unreadable or unparsable files are reported; the walk
//! goes on. Every file read is confined to the root.
//!
//! A script is analysed once per context and replayed for every path that
//! reaches it (see `frame.rs`): a chain of scripts called from thousands of
//! pipelines costs what its findings cost, not the pipelines times the
//! chain.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use std::rc::Rc;

use crate::frame::Recipes;
use layerlock_ci::dockerfile::{self, Mount};
use layerlock_ci::{Layout, Phase, Script, System, yaml};
use layerlock_lock::RequirementsFile;
use layerlock_shell::{Context, Grammar, ShellRun};

mod azure;
mod commands;
mod discovery;
mod docker;
mod gitlab;
mod recipe_files;
mod state;

use commands::{
    WORKSPACE_VARS, computed_installer, computed_script, heredoc_target, is_activation,
    is_lone_variable, is_positional, program_lookup, script_call,
};
use discovery::{Kind, kind_of, walk_dir};
pub(crate) use discovery::{SKIP_DIRS, is_dockerfile_name};
use recipe_files::RecipeFile;
use state::ScriptState;

use crate::frame::{self, Analysis, Call, Event, Frame, Frames, Inherited, MAX_CHAIN, Mapping};
use crate::path_map::PathMap;
use crate::paths::{Here, confined_file, eval_dir, normalize, strip_quotes};
use crate::place::{Image, Place};
use crate::read::read_bounded;
use crate::recipes;
use crate::site::{Arg, CommandSite, Location, Reach, RequirementFiles};
use crate::via::{Hops, Via};
use crate::wrappers::{Container, unwrap};

impl ScanOptions {
    /// Where a path named in a command is in the tree: mapped, then relative
    /// to the command's directory, then to the root. Only files inside the
    /// root (symlinks resolved) are found.
    pub fn resolve(&self, path: &str, cwd: Option<&Path>) -> Option<PathBuf> {
        let mapped = self.path_map.map(path);
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
        candidates
            .into_iter()
            .find_map(|c| confined_file(&c, &self.root))
    }

    /// A path as reports show it: relative to the root, normalised.
    pub fn shown(&self, path: &Path) -> String {
        let path = normalize(path);
        path.strip_prefix(&self.root)
            .unwrap_or(&path)
            .display()
            .to_string()
    }

    /// A path named in a command at `place`, in the tree (it need not
    /// exist).
    fn place_dir(&self, place: &Place, dir: &str) -> PathBuf {
        let mapped = self.path_map.map(dir);
        normalize(
            &place
                .cwd
                .clone()
                .unwrap_or_else(|| self.root.clone())
                .join(mapped),
        )
    }

    /// A path named in a command at `place`: through the image's mounts
    /// first (image builds, containers), then as [`ScanOptions::resolve`].
    fn locate(&self, path: &str, place: &Place) -> Option<PathBuf> {
        if let Some(image) = &place.image
            && let Some(found) = image.find(path, &self.root)
        {
            return Some(found);
        }
        self.resolve(path, place.cwd.as_deref())
    }
}

#[derive(Debug, Clone, Default)]
pub struct ScanOptions {
    /// Paths in findings are relative to this.
    pub root: PathBuf,
    /// Files or directories to scan (absolute).
    pub targets: Vec<PathBuf>,
    /// Container paths → directories of the repository, e.g.
    /// `/vllm-workspace` → the repository root.
    pub path_map: PathMap,
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

/// What a walk read, and what it could not.
#[derive(Debug, Default)]
pub struct Walked {
    pub errors: Vec<FileError>,
    /// CI files and scripts read, relative to the root.
    pub files: BTreeSet<String>,
    /// Commands read: each command of each script, once for every context
    /// it was analysed in.
    pub commands: usize,
    /// The Dockerfiles CI builds (relative to the root), each with the
    /// stage it builds as written (`--target`, a bake or Compose
    /// `target`); `None` is the last stage.
    pub builds: BTreeSet<(String, Option<String>)>,
    /// Builds whose Dockerfile is known only at run time, each as
    /// `path:line` of the command and the file as written.
    pub unknown_builds: BTreeSet<(String, String)>,
}

/// What the walker reports to whoever drives it: every command (with where
/// it runs), and every script call it could not follow.
///
/// A script reached by many paths is analysed once in each context, so a
/// visitor answers in two steps: what it makes of a command, whatever the
/// path ([`Visitor::command`], once per analysis), and then each of those
/// items again for every path that reaches the command ([`Visitor::reached`],
/// with the path's job and via chain), in the order of a plain walk.
pub trait Visitor {
    /// What the visitor makes of one command (a finding, a test run).
    type Item;

    fn command(&mut self, site: &CommandSite<'_>, out: &mut Vec<Self::Item>);

    fn missing_script(&mut self, _call: &str, _site: &CommandSite<'_>, _out: &mut Vec<Self::Item>) {
    }

    /// A command that runs more commands the walk cannot read: a Python
    /// program that starts processes, a recipe no rule makes, a goal
    /// computed at run time. `why` says which, in a sentence.
    fn not_followed(&mut self, _why: &str, _site: &CommandSite<'_>, _out: &mut Vec<Self::Item>) {}

    /// An item, for one path that reaches its command.
    fn reached(&mut self, item: &Self::Item, reach: &Reach<'_>);
}

struct Files<'a> {
    options: &'a ScanOptions,
    place: &'a Place,
    vars: &'a BTreeMap<String, String>,
    /// Variables read, for the frame's validity.
    reads: &'a RefCell<BTreeSet<String>>,
    /// The command's standard input, when it is a heredoc: the file `-`.
    stdin: Option<&'a str>,
}

impl RequirementFiles for Files<'_> {
    fn read(&self, path: &str) -> Option<(String, RequirementsFile)> {
        let real = self.options.locate(path, self.place)?;
        let parsed = RequirementsFile::read_unnamed(&real).ok()?;
        Some((self.options.shown(&real), parsed))
    }

    fn env_var(&self, name: &str) -> Option<String> {
        self.reads.borrow_mut().insert(name.to_string());
        self.vars.get(name).cloned()
    }

    fn project_file(&self, dir: Option<&str>, name: &str) -> Option<String> {
        let root = &self.options.root;
        let start = match dir {
            Some(dir) => self.options.place_dir(self.place, dir),
            None => self.place.cwd.clone().unwrap_or_else(|| root.clone()),
        };
        let mut here = Some(start.as_path());
        while let Some(d) = here.filter(|d| d.starts_with(root)) {
            if let Some(found) = confined_file(&d.join(name), root) {
                return Some(self.options.shown(&found));
            }
            here = d.parent();
        }
        None
    }

    fn read_text(&self, path: &str) -> Option<(String, String)> {
        if path == "-" {
            return self
                .stdin
                .map(|text| ("standard input".to_string(), text.to_string()));
        }
        let real = self.options.locate(path, self.place)?;
        let bytes = read_bounded(&real, &self.options.root).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        Some((self.options.shown(&real), text))
    }
}

struct Scanner<'a, V: Visitor> {
    options: &'a ScanOptions,
    result: Walked,
    visitor: &'a mut V,
    /// Scripts called from many jobs are read and parsed once (for each
    /// grammar they are run with).
    scripts: HashMap<(PathBuf, Grammar), Rc<ScriptFile>>,
    /// ... and Makefiles and justfiles.
    recipe_files: HashMap<PathBuf, Rc<RecipeFile>>,
    /// Calls followed so far, over every path (see [`MAX_FOLLOWED`]).
    followed: usize,
    /// Dockerfiles CI builds (`docker build -f FILE CONTEXT`), with their
    /// context when given: read after the tree, whatever their names.
    built: Vec<(PathBuf, Option<PathBuf>)>,
    /// ... and analysed once per context.
    frames: Frames<V::Item>,
    /// The shell each followed script's shebang names, read once.
    shebangs: HashMap<PathBuf, Option<Grammar>>,
    /// The files the tree's `.gitlab-ci.yml` includes (read with it), once
    /// asked.
    gitlab_included: Option<BTreeSet<PathBuf>>,
    /// The frame being analysed.
    analysis: Analysis<V::Item>,
}

/// A followed script: its text, what parsing it found, and its path as
/// reports show it.
struct ScriptFile {
    text: String,
    parsed: Result<Parsed, layerlock_shell::ShellError>,
    shown: Rc<str>,
}

/// A file's scripts, each with the file (as reports show it) its text is
/// in: a GitLab pipeline's come from the files it includes.
type FileScripts = Vec<(Rc<str>, Script)>;

/// Calls of scripts and recipes one walk follows, over all its paths: the
/// 2,500 pipelines of shared chains in `bench/audit.py` follow 80,000.
const MAX_FOLLOWED: usize = 200_000;

/// What a call runs: a script, or recipes of a Makefile or justfile.
struct Callee {
    script: PathBuf,
    recipes: Option<Rc<Recipes>>,
    /// The shell the call names (`sh x.sh`, `source x.sh`), if it names one.
    shell: Option<Grammar>,
}

/// A run's variables, and which of them it set itself: a script it calls
/// gets the caller's own variables (whatever they are on the path being
/// replayed) with these set over them.
#[derive(Clone, Default)]
struct Vars {
    values: BTreeMap<String, String>,
    set_here: BTreeSet<String>,
}

impl Vars {
    fn set(&mut self, name: String, value: String) {
        self.set_here.insert(name.clone());
        self.values.insert(name, value);
    }
}

/// One path replaying a frame: the job it started from, the calls on the
/// way, and the variables the frame started with.
struct Replay<'p> {
    job: Option<&'p str>,
    via: &'p Via,
    env: &'p Rc<BTreeMap<String, String>>,
}

/// A parsed script and its functions that run their arguments.
struct Parsed {
    script: layerlock_shell::Script,
    runners: Runners,
}

impl Parsed {
    fn new(script: layerlock_shell::Script) -> Self {
        let runners = runner_functions(&script);
        Self { script, runners }
    }
}

/// A call of a function that runs its arguments.
struct FunctionCall<'a> {
    name: &'a str,
    body: &'a layerlock_shell::Script,
    /// The other such functions of the same script, which the body may call.
    runners: &'a Runners,
}

/// Function name → the commands of its body.
type Runners = BTreeMap<String, layerlock_shell::Script>;

/// One script plus where it runs, inside the frame being analysed.
struct Run<'a> {
    text: &'a str,
    layout: Layout,
    /// Applied after `layout`, innermost first: a Dockerfile written by a
    /// heredoc sits at (first body line, layout of the text holding it).
    outer: Vec<(usize, Layout)>,
    file: Rc<str>,
    /// The script file itself, when the text is a whole file.
    script: Option<PathBuf>,
    /// The grammar of the shell that runs the text.
    grammar: Grammar,
    phase: Phase,
    env: BTreeMap<String, String>,
    /// `env` is the run's own (a generated Dockerfile's `ARG` and `ENV`),
    /// not the variables the frame started with.
    own_env: bool,
    place: Place,
    /// The arguments the script was called with, and where the call is.
    positional: Vec<Arg>,
    call_site: Option<Location>,
    /// How the caller's script text maps to its file (for the shell
    /// strings among the arguments).
    call_layout: Option<Rc<Mapping>>,
    /// The calls inside the frame that led here.
    via: Hops,
    /// The markers pushed inside the frame (functions, shell strings,
    /// generated Dockerfiles); the path's own stack is above them.
    stack: Vec<PathBuf>,
}

impl Run<'_> {
    fn pos(&self, line: usize, column: usize) -> yaml::Pos {
        let mut pos = self.layout.map(line, column);
        for (first, layout) in &self.outer {
            pos = layout.map(first + pos.line - 1, pos.column);
        }
        pos
    }
}

/// One command of a run as the walker follows it: its arguments (and
/// those of the program it runs inside wrappers), where it runs, and where
/// it is reported.
#[derive(Clone, Copy)]
struct At<'a> {
    run: &'a Run<'a>,
    command: &'a layerlock_shell::Command,
    args: &'a [Arg],
    inner: &'a [Arg],
    place: &'a Place,
    location: &'a Location,
    via: &'a Hops,
}

impl<V: Visitor> Scanner<'_, V> {
    fn relative(&self, path: &Path) -> String {
        self.options.shown(path)
    }

    fn error(&mut self, path: &str, line: usize, column: usize, message: String) {
        self.result.errors.push(FileError {
            path: path.to_string(),
            line,
            column,
            message,
        });
    }

    /// An error inside the frame being analysed: reported for every path
    /// that replays it, as when each path walked it.
    fn note(&mut self, path: &str, line: usize, column: usize, message: String) {
        self.analysis.events.push(Event::Error(FileError {
            path: path.to_string(),
            line,
            column,
            message,
        }));
    }

    /// Analyse a frame for a path with `stack` (down to the frame's own
    /// script or CI file) whose variables start as `env`. Analyses never
    /// nest: `body` only records the scripts it calls.
    fn analyse(
        &mut self,
        stack: &[PathBuf],
        env: &BTreeMap<String, String>,
        body: impl FnOnce(&mut Self),
    ) -> Frame<V::Item> {
        self.analysis = Analysis::new(stack.len(), stack);
        body(self);
        std::mem::replace(&mut self.analysis, Analysis::new(0, &[])).finish(env)
    }

    /// Whether a run may go deeper (nested strings, functions, calls) after
    /// the command at hand.
    fn within_chain(&mut self, run: &Run<'_>) -> bool {
        self.analysis.within_chain(run.stack.len())
    }

    /// Tell the visitor about everything a frame holds, for one path, and
    /// follow the scripts it calls. `stack` is the path's, down to the
    /// frame's script.
    fn replay(&mut self, frame: &Frame<V::Item>, path: &Replay<'_>, stack: &mut Vec<PathBuf>) {
        for event in &frame.events {
            match event {
                Event::Item(item, hops) => {
                    let via = hops.after(path.via);
                    let reach = Reach {
                        job: path.job,
                        via: &via,
                    };
                    self.visitor.reached(item, &reach);
                }
                Event::Error(error) => self.result.errors.push(error.clone()),
                Event::TooDeep(location, hops) => {
                    let via = hops.after(path.via);
                    let via: Vec<&str> = via.iter().collect();
                    // Fail closed: what runs past the limit was not audited.
                    self.error(
                        &location.path,
                        location.line,
                        location.column,
                        format!(
                            "scripts call scripts more than {MAX_CHAIN} deep here ({}); the rest was not followed",
                            via.join(" -> ")
                        ),
                    );
                }
                Event::Call(call) => self.follow(call, path, stack),
            }
        }
    }

    fn scan_file(&mut self, path: &Path, explicit: bool) {
        let Some(kind) = kind_of(path, explicit) else {
            return;
        };
        self.scan_as(path, kind, explicit, None);
    }

    /// A Dockerfile CI builds, with the build's context when it is known.
    fn scan_dockerfile(&mut self, path: &Path, context: Option<PathBuf>) {
        self.scan_as(path, Kind::Dockerfile, false, context);
    }

    fn scan_as(&mut self, path: &Path, kind: Kind, explicit: bool, context: Option<PathBuf>) {
        let rel = self.relative(path);
        let Some(text) = self.read_ci_file(path, &rel, kind, explicit) else {
            return;
        };
        let Some((scripts, notes)) = self.file_scripts(path, &rel, kind, explicit, text) else {
            return;
        };
        self.result.files.insert(rel.clone());
        self.file_notes(notes);
        let context = (kind == Kind::Dockerfile).then(|| {
            context.unwrap_or_else(|| {
                let plain: Vec<Script> = scripts.iter().map(|(_, s)| s.clone()).collect();
                self.build_context(path, &plain)
            })
        });
        for (file, script) in scripts {
            let place = match &context {
                Some(context) => self.image_place(context.clone(), &script),
                None => Place {
                    cwd: self.job_cwd(&script),
                    image: None,
                },
            };
            let run = Run {
                text: &script.text,
                layout: script.layout,
                outer: Vec::new(),
                file: Rc::clone(&file),
                script: (kind == Kind::Shell).then(|| path.to_path_buf()),
                grammar: grammar_of(&script.text, script.shell.as_deref()),
                phase: script.phase,
                env: script.env.clone(),
                own_env: false,
                place,
                positional: Vec::new(),
                call_site: None,
                call_layout: None,
                via: Hops::default(),
                stack: Vec::new(),
            };
            // A CI file's scripts are its own: analysed and replayed at once.
            let mut stack = vec![path.components().collect()];
            let frame = self.analyse(&stack, &script.env, |scanner| scanner.run(&run));
            let env = Rc::new(script.env);
            let replay = Replay {
                job: script.job.as_deref(),
                via: &Via::default(),
                env: &env,
            };
            self.replay(&frame, &replay, &mut stack);
        }
    }

    /// The text of a CI file to scan, or `None` when it is not one (YAML
    /// that cannot be CI) or cannot be read (reported).
    fn read_ci_file(
        &mut self,
        path: &Path,
        rel: &str,
        kind: Kind,
        explicit: bool,
    ) -> Option<String> {
        // A file named on the command line is read wherever it is; files
        // found in the tree (and everything CI text leads to) only inside
        // the root.
        let allowed = if explicit {
            fs_err::canonicalize(path)
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf))
                .unwrap_or_else(|| self.options.root.clone())
        } else {
            self.options.root.clone()
        };
        let text = match read_bounded(path, &allowed) {
            Ok(bytes) if kind == Kind::Yaml && !explicit && !System::may_be_ci(rel, &bytes) => {
                return None;
            }
            Ok(bytes) if bytes.contains(&0) => {
                self.error(
                    rel,
                    1,
                    1,
                    "a binary file, not a CI file or script".to_string(),
                );
                return None;
            }
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => {
                self.error(rel, 1, 1, e.to_string());
                return None;
            }
        };
        Some(text)
    }

    /// The scripts of a CI file's jobs, each with the file its text is in,
    /// and the notes of what the file names that could not be read; `None`
    /// when the file is not a CI file or cannot be parsed (reported).
    fn file_scripts(
        &mut self,
        path: &Path,
        rel: &str,
        kind: Kind,
        explicit: bool,
        text: String,
    ) -> Option<(FileScripts, Vec<gitlab::FileNote>)> {
        let file: Rc<str> = rel.into();
        let mut notes = Vec::new();
        let of_file = |scripts: Vec<Script>| -> FileScripts {
            scripts.into_iter().map(|s| (Rc::clone(&file), s)).collect()
        };
        let scripts = match kind {
            Kind::Dockerfile => dockerfile::scripts(&text).map(of_file),
            Kind::Jenkinsfile => Ok(of_file(layerlock_ci::jenkins::scripts(&text))),
            Kind::Shell => Ok(vec![Script::job_time(
                text.clone(),
                Layout::Lines {
                    start: yaml::Pos { line: 1, column: 1 },
                },
            )])
            .map(of_file),
            Kind::Yaml => {
                let docs = match yaml::parse(&text) {
                    Ok(docs) => docs,
                    Err(e) => {
                        // Only files that are CI files matter; a broken YAML
                        // file in a CI location is reported.
                        if System::from_path(rel).is_some() || explicit {
                            self.error(
                                rel,
                                e.line,
                                e.column,
                                format!("cannot parse YAML: {}", e.message),
                            );
                        }
                        return None;
                    }
                };
                match System::detect(rel, &docs) {
                    Some(System::Gitlab) => {
                        // An included file is read with the pipeline that
                        // includes it.
                        if !explicit && self.included_by_root_pipeline(path) {
                            return None;
                        }
                        let read = self.gitlab_pipeline(path, rel, text.clone(), docs);
                        notes = read.notes;
                        Ok(read.scripts)
                    }
                    Some(System::AzurePipelines) => {
                        let read = layerlock_ci::azure::read(&docs, None);
                        notes = azure::notes_of(&file, read.notes);
                        let lines = layerlock_ci::SourceLines::new(&text);
                        let mut scripts = of_file(refined(read.scripts, &lines));
                        let (more, more_notes) = self.azure_templates(path, &file, read.templates);
                        scripts.extend(more);
                        notes.extend(more_notes);
                        Ok(scripts)
                    }
                    Some(system) => {
                        notes = azure::notes_of(&file, system.notes(&docs));
                        let lines = layerlock_ci::SourceLines::new(&text);
                        Ok(of_file(
                            system
                                .scripts(&docs)
                                .into_iter()
                                .map(|mut script| {
                                    script.layout = script.layout.refine(&script.text, &lines);
                                    script
                                })
                                .collect(),
                        ))
                    }
                    None => return None,
                }
            }
        };
        let scripts = match scripts {
            Ok(s) => s,
            Err(e) => {
                self.error(rel, e.line, e.column, e.message);
                return None;
            }
        };
        Some((scripts, notes))
    }

    /// The directory a CI job's script runs in.
    fn job_cwd(&self, script: &Script) -> Option<PathBuf> {
        script
            .working_dir
            .as_deref()
            .map(|d| self.options.path_map.map(d))
            .map(|d| normalize(&self.options.root.join(d)))
            .or_else(|| {
                (script.phase == Phase::JobTime && script.job.is_some())
                    .then(|| self.options.default_working_dir.clone())
                    .flatten()
            })
    }

    fn run(&mut self, run: &Run<'_>) {
        match layerlock_shell::parse_as(run.text, run.grammar) {
            Ok(parsed) => {
                let runners = runner_functions(&parsed);
                self.run_parsed(run, &parsed, &runners);
            }
            Err(e) => {
                let pos = run.pos(e.line, e.column);
                self.note(
                    &run.file,
                    pos.line,
                    pos.column,
                    format!("cannot parse shell: {}", e.message),
                );
            }
        }
    }

    fn run_parsed(&mut self, run: &Run<'_>, parsed: &layerlock_shell::Script, runners: &Runners) {
        let mut state = ScriptState::new(run, &parsed.ifs);
        let root = &self.options.root;
        let dir = run.place.cwd.as_deref().unwrap_or(root);
        let loops = crate::loops::expand_globs(&parsed.loops, dir, root);
        for (command, binding) in parsed.commands.iter().flat_map(|command| {
            crate::loops::passes(&loops, command)
                .into_iter()
                .map(move |pass| (command, pass))
        }) {
            state.enter(command, binding);
            // Assignments and `cd` outside a command substitution change
            // what later commands see (in a subshell or `bash -c` string
            // only until it ends, which is not modelled).
            let top = !command.context.contains(&Context::Substitution);
            if top {
                state.assign(command, run, root, &|w, v, h| self.word_value(w, v, h));
            }
            let args = state.args(command, run, root, &|w, v, h| self.word_value(w, v, h));
            if top {
                state.track(command, &args, self.options);
            }
            // Read once for each value an earlier `if` may have left.
            let passes = state.branch_passes(command);
            let container_env = if passes.len() > 1 {
                let mut env = BTreeMap::new();
                for pass in passes {
                    let saved = state.apply(&pass);
                    let args = state.args(command, run, root, &|w, v, h| self.word_value(w, v, h));
                    env = self.command(run, command, &args, &mut state, runners);
                    state.set_values(&saved);
                }
                env
            } else {
                self.command(run, command, &args, &mut state, runners)
            };
            state.leave(command, args, container_env);
        }
        self.analysis.read(&state.reads.into_inner());
    }

    /// One command, with the arguments it runs with: tell the visitor,
    /// then follow what it runs (functions, recipes, scripts, strings,
    /// Dockerfiles) or say why it cannot be followed. Returns the
    /// variables a container command sets for the string it runs.
    fn command(
        &mut self,
        run: &Run<'_>,
        command: &layerlock_shell::Command,
        args: &[Arg],
        state: &mut ScriptState,
        runners: &Runners,
    ) -> BTreeMap<String, String> {
        let options = self.options;
        let (inner, containers) = unwrap(args);
        // A command is reported at the program it runs: `pip` in `A=1
        // sudo -E docker exec "$C" \⏎ pip install x`, not at `A=1`;
        // at a project runner, which installs too (`uv run` syncs), in
        // `uv run --with x \⏎ pytest`.
        let runner = crate::wrappers::strip_to_runner(args);
        let shown = if crate::wrappers::project_runner(runner).is_some() {
            runner
        } else {
            inner
        };
        let pos = match shown.first().and_then(|a| a.at) {
            Some((line, column)) => yaml::Pos { line, column },
            None => run.pos(command.line, command.column),
        };
        let mut location = Location {
            path: run.file.clone(),
            line: pos.line,
            column: pos.column,
        };
        // A command made of the script's arguments (`docker exec C
        // "$@"`) is written where the script was called.
        let mut via = std::borrow::Cow::Borrowed(&run.via);
        if let (Some(site), Some(first)) = (&run.call_site, inner.first())
            && let Some((line, column)) = first.at
            && run.positional.contains(first)
        {
            let via = via.to_mut();
            via.pop();
            via.push(format!("{}:{}", location.path, location.line));
            location = Location {
                path: site.path.clone(),
                line,
                column,
            };
        }
        let site_place = self.container_place(&state.place, &containers, &state.vars.values);
        let container_env: BTreeMap<String, String> = containers
            .iter()
            .flat_map(|c| &c.env)
            .filter_map(|(k, v)| {
                let value = v.clone().or_else(|| {
                    self.analysis.read([k]);
                    state.vars.values.get(k).cloned()
                })?;
                Some((k.clone(), value))
            })
            .collect();
        let files = Files {
            options,
            place: &site_place,
            vars: &state.vars.values,
            reads: &state.reads,
            stdin: command.stdin.as_deref(),
        };
        let site = CommandSite {
            args,
            text: &command.text,
            location: location.clone(),
            phase: run.phase,
            files: &files,
            cwd: site_place.cwd.as_deref(),
            root: &options.root,
            previous: state.previous.as_deref(),
            mapped_paths: options.path_map.len(),
        };
        let mut items = Vec::new();
        self.result.commands += 1;
        self.visitor.command(&site, &mut items);
        self.keep(items, &via);
        if let Some(word) = &command.stdout {
            self.analysis.read(&word.variables);
        }
        if let (Some(body), Some(line)) = (&command.heredoc, command.stdin_line)
            && let Some(target) = heredoc_target(command, inner, &state.vars.values)
        {
            let path = self.place_path(&site_place, &target);
            state.written.insert(path, (body.clone(), line));
        }
        if state.runs_an_argument(command, args, inner) && self.within_chain(run) {
            let lines: Vec<Arg> = state.command_arguments().cloned().collect();
            // Changed by a step not run: reported through that step.
            let step = state
                .transformation(command)
                .map(|(line, step)| format!("{}:{line} (changed by `{step}`)", run.file));
            for arg in &lines {
                self.argument_string(run, arg, &location, &state.place, step.as_deref());
            }
        }
        let at = At {
            run,
            command,
            args,
            inner,
            place: &site_place,
            location: &location,
            via: &via,
        };
        if self.within_chain(run) {
            self.follow_command(&at, &site, state, runners);
        } else if script_call(inner).is_some()
            || recipes::recipe_call(inner).is_some()
            || args.first().is_some_and(|a| a.is("eval"))
        {
            // Reported with the whole chain of each path (see `replay`).
            self.analysis
                .events
                .push(Event::TooDeep(location.clone(), run.via.clone()));
        }
        container_env
    }

    /// What a command runs that the walk reads too: shell strings,
    /// Dockerfiles it writes, functions, recipes, scripts; or why it cannot
    /// be read.
    fn follow_command(
        &mut self,
        at: &At<'_>,
        site: &CommandSite<'_>,
        state: &ScriptState,
        runners: &Runners,
    ) {
        let At {
            run,
            command,
            args,
            inner,
            place: site_place,
            location,
            via,
        } = *at;
        self.nested_string(run, args, location, state);
        if let Some(why) =
            self.generated_dockerfile(run, command, inner, site_place, &state.written)
        {
            let mut items = Vec::new();
            self.visitor.not_followed(&why, site, &mut items);
            self.keep(items, via);
        }
        if let Some(build) = docker::build_files(inner) {
            for why in self.build_file_images(&build, site_place) {
                let mut items = Vec::new();
                self.visitor.not_followed(&why, site, &mut items);
                self.keep(items, via);
            }
        }
        let call = if matches!(command.context.last(), Some(Context::Substitution)) {
            None
        } else {
            script_call(inner).or_else(|| self.shell_program(inner, site_place))
        };
        if let Some((name, body)) = args
            .first()
            .and_then(|a| a.value.as_deref())
            .and_then(|name| runners.get_key_value(name))
        {
            let call = FunctionCall {
                name,
                body,
                runners,
            };
            self.call_function(run, &call, location, args[1..].to_vec());
        } else if let Some(recipe) = recipes::recipe_call(inner) {
            self.recipe_call(run, &recipe, site_place, &state.vars, site, via);
        } else if let Some(raw) = computed_installer(inner) {
            let mut items = Vec::new();
            let why = format!(
                "the program of `{} install …` is known only at run time, so what it installs was not read",
                raw.trim_matches('"')
            );
            self.visitor.not_followed(&why, site, &mut items);
            self.keep(items, via);
        } else if let Some(raw) = computed_script(inner) {
            let mut items = Vec::new();
            let why = format!(
                "the script `{}` is named by a value known only at run time, so its commands were not read",
                raw.trim_matches('"')
            );
            self.visitor.not_followed(&why, site, &mut items);
            self.keep(items, via);
        } else if let Some(why) = self.python_program(inner, site_place) {
            let mut items = Vec::new();
            self.visitor.not_followed(&why, site, &mut items);
            self.keep(items, via);
        } else if let Some((call, call_args)) = call {
            match self.options.locate(&call, site_place) {
                // A virtual environment's activation script is made
                // by the job (`uv venv`, `python -m venv`): nothing
                // of the repository's is missing.
                None if is_activation(&call) => {}
                None => match state.written.get(&self.place_path(site_place, &call)) {
                    // `cat > ci.sh <<EOF … EOF`, then `bash ci.sh`.
                    Some((body, line)) => {
                        let (body, line) = (body.clone(), *line);
                        self.written_script(run, &body, line, site_place);
                    }
                    None => {
                        let mut items = Vec::new();
                        self.visitor.missing_script(&call, site, &mut items);
                        self.keep(items, via);
                    }
                },
                Some(real) => {
                    let child_place = Place {
                        cwd: site_place.cwd.clone(),
                        image: site_place.image.clone(),
                    };
                    let callee = Callee {
                        script: real,
                        recipes: None,
                        shell: shell_of_call(inner, run.grammar),
                    };
                    self.call(run, callee, location, child_place, call_args, &state.vars);
                }
            }
        }
    }

    /// What the visitor made of a command, for the frame.
    fn keep(&mut self, items: Vec<V::Item>, via: &Hops) {
        self.analysis
            .events
            .extend(items.into_iter().map(|item| Event::Item(item, via.clone())));
    }

    /// A call of a function that runs its arguments (`retry() { eval
    /// "$@"; }` … `retry pip install x`): its body runs again with them.
    fn call_function(
        &mut self,
        run: &Run<'_>,
        call: &FunctionCall<'_>,
        location: &Location,
        call_args: Vec<Arg>,
    ) {
        let name = call.name;
        let marker = PathBuf::from(format!("<function {name} in {}>", run.file));
        if self.analysis.on_stack(&run.stack, &marker) {
            return;
        }
        let mut via = run.via.clone();
        via.push(format!("{}:{}", location.path, location.line));
        let mut stack = run.stack.clone();
        stack.push(marker);
        let child = Run {
            text: run.text,
            layout: run.layout.clone(),
            outer: run.outer.clone(),
            file: run.file.clone(),
            script: run.script.clone(),
            grammar: run.grammar,
            phase: run.phase,
            env: run.env.clone(),
            own_env: run.own_env,
            place: run.place.clone(),
            positional: call_args,
            call_site: Some(location.clone()),
            call_layout: Some(Rc::new((run.layout.clone(), run.outer.clone()))),
            via,
            stack,
        };
        self.run_parsed(&child, call.body, call.runners);
    }

    /// A word's value: static, from known variables, or a directory idiom.
    fn word_value(
        &self,
        word: &layerlock_shell::Word,
        vars: &BTreeMap<String, String>,
        here: &Here<'_>,
    ) -> Option<String> {
        if word.value.is_none() {
            self.analysis.read(&word.variables);
        }
        if let Some(v) = word.value.clone().or_else(|| word.expand(vars)) {
            return Some(v);
        }
        if let Some(program) = program_lookup(&word.raw) {
            return Some(program);
        }
        if (word.raw.contains("$(") || word.raw.contains("PWD"))
            && let Some(dir) = eval_dir(&word.raw, here)
            && dir.starts_with(&self.options.root)
        {
            return Some(dir.display().to_string());
        }
        // `$REPO_ROOT/tests/x`: an unknown variable followed by a path that
        // exists from the root stands for the root.
        let (_, rest) = word.leading_variable()?;
        let rest = rest.strip_prefix('/')?;
        let candidate = normalize(&self.options.root.join(rest));
        (!rest.is_empty() && candidate.starts_with(&self.options.root) && candidate.exists())
            .then(|| candidate.display().to_string())
    }

    /// Inside a container, paths go through its volumes and working
    /// directory when they map back into the repository.
    fn container_place(
        &self,
        place: &Place,
        containers: &[Container],
        vars: &BTreeMap<String, String>,
    ) -> Place {
        let mut place = place.clone();
        if containers.is_empty() {
            return place;
        }
        for container in containers {
            let mut mounts = Vec::new();
            for (inside, host) in &container.volumes {
                let host_dir = match host.value.as_deref() {
                    Some(v) => Some(normalize(
                        &place
                            .cwd
                            .clone()
                            .unwrap_or_else(|| self.options.root.clone())
                            .join(v),
                    )),
                    None => {
                        let here = Here {
                            root: &self.options.root,
                            script: None,
                            cwd: place.cwd.as_deref(),
                        };
                        eval_dir(&strip_quotes(&host.raw), &here).or_else(|| {
                            let raw = strip_quotes(&host.raw);
                            let name = raw.trim_start_matches('$').trim_matches(['{', '}']);
                            WORKSPACE_VARS
                                .contains(&name)
                                .then(|| self.options.root.clone())
                                .or_else(|| {
                                    self.analysis.read([&name.to_string()]);
                                    vars.get(name).map(PathBuf::from)
                                })
                        })
                    }
                };
                if let Some(dir) = host_dir.filter(|d| d.starts_with(&self.options.root)) {
                    mounts.push(Mount {
                        target: inside.clone(),
                        source: dir
                            .strip_prefix(&self.options.root)
                            .unwrap_or(&dir)
                            .display()
                            .to_string(),
                        into_dir: false,
                    });
                }
            }
            if mounts.is_empty() {
                continue;
            }
            let image = Image {
                context: self.options.root.clone(),
                mounts,
                workdir: container.workdir.clone().unwrap_or_else(|| "/".to_string()),
            };
            place = Place {
                cwd: image.workdir_in_repo().or(place.cwd),
                image: Some(Rc::new(image)),
            };
        }
        place
    }

    /// A path written in a command, in the repository (it need not exist).
    fn place_path(&self, place: &Place, path: &str) -> PathBuf {
        self.options.place_dir(place, path)
    }

    /// One argument of the script, a command line, run as a shell string
    /// and reported where the caller wrote it.
    fn argument_string(
        &mut self,
        run: &Run<'_>,
        arg: &Arg,
        location: &Location,
        place: &Place,
        step: Option<&str>,
    ) {
        let (Some(text), Some(mut written)) = (&arg.value, in_caller(run, arg, location)) else {
            return;
        };
        if let Some(step) = step {
            // The step ran before the command that runs the text.
            written.via.pop();
            written.via.push(step.to_string());
            written
                .via
                .push(format!("{}:{}", location.path, location.line));
        }
        self.run_string(run, text, written, place.clone(), location, run.grammar);
    }

    /// A script the job wrote with a heredoc and then runs: its body, at
    /// the lines where the heredoc holds it.
    fn written_script(&mut self, run: &Run<'_>, body: &str, line: usize, place: &Place) {
        let marker = PathBuf::from(format!("<script written at {}:{line}>", run.file));
        if run.stack.contains(&marker) {
            return;
        }
        let mut stack = run.stack.clone();
        stack.push(marker);
        let mut outer = vec![(line, run.layout.clone())];
        outer.extend(run.outer.iter().cloned());
        let child = Run {
            text: body,
            layout: Layout::Lines {
                start: yaml::Pos { line: 1, column: 1 },
            },
            outer,
            file: run.file.clone(),
            script: run.script.clone(),
            grammar: Grammar::of_shebang(body).unwrap_or(run.grammar),
            phase: run.phase,
            env: run.env.clone(),
            own_env: run.own_env,
            place: place.clone(),
            positional: Vec::new(),
            call_site: None,
            call_layout: None,
            via: run.via.clone(),
            stack,
        };
        self.run(&child);
    }

    /// Run `text` as a shell string found at `location`, reported at
    /// `written`.
    fn run_string(
        &mut self,
        run: &Run<'_>,
        text: &str,
        written: Written,
        place: Place,
        location: &Location,
        grammar: Grammar,
    ) {
        let mut stack = run.stack.clone();
        stack.push(PathBuf::from(format!("<string at {location}>")));
        let child = Run {
            text,
            layout: written.layout,
            outer: written.outer,
            file: written.file,
            script: run.script.clone(),
            grammar,
            phase: run.phase,
            env: run.env.clone(),
            own_env: run.own_env,
            place,
            positional: Vec::new(),
            call_site: None,
            call_layout: None,
            via: written.via,
            stack,
        };
        self.run(&child);
    }

    /// `bash -c "$*"`, `eval "$@"`, `docker run … bash -c "$cmd"`: a shell
    /// string known only once the variables are: parse its value. The shell
    /// crate already parsed strings that have literal text of their own.
    fn nested_string(
        &mut self,
        run: &Run<'_>,
        args: &[Arg],
        location: &Location,
        state: &ScriptState,
    ) {
        let is_eval = args.first().is_some_and(|a| a.is("eval"));
        // Only a shell or `eval` runs a string: most commands stop here.
        let runs_shell = args.iter().any(|a| {
            a.value.as_deref().is_some_and(|v| {
                matches!(v.rsplit('/').next(), Some("bash" | "sh" | "dash" | "zsh"))
            })
        });
        if !is_eval && !runs_shell {
            return;
        }
        let values: Vec<Option<&str>> = args.iter().map(|a| a.value.as_deref()).collect();
        let text: Vec<&str> = match layerlock_shell::shell_run(&values) {
            // Only a string that is one variable: the shell crate already
            // parsed strings with literal text of their own.
            Some(ShellRun::String(i))
                if is_lone_variable(&args[i].raw) || run.positional.contains(&args[i]) =>
            {
                args[i].value.as_deref().into_iter().collect()
            }
            _ if is_eval => args[1..]
                .iter()
                .filter_map(|a| a.value.as_deref())
                .collect(),
            _ => return,
        };
        if text.is_empty() {
            self.made_string(run, args, location, state);
            return;
        }
        let text = text.join(" ");
        // Report where the text is written: at the caller's argument when
        // the script was handed it, else at this command.
        let from_caller = run.positional.iter().find(|a| {
            a.value
                .as_deref()
                .is_some_and(|v| !v.is_empty() && text.contains(v))
        });
        let written = from_caller
            .and_then(|arg| in_caller(run, arg, location))
            .unwrap_or_else(|| {
                let column = if is_eval {
                    eval_column(args, location)
                } else {
                    location.column
                };
                Written::here(location, column, run.via.clone())
            });
        // `sh -c "$cmd"` is read as sh reads it; `eval` as the script's
        // own shell does.
        let grammar = args
            .iter()
            .find_map(|a| Grammar::of_program(a.value.as_deref()?))
            .filter(|_| !is_eval)
            .unwrap_or(run.grammar);
        self.run_string(run, &text, written, run.place.clone(), location, grammar);
    }

    /// `eval "$c2"` or `bash -c "$c2"` where `c2` was made from a known
    /// command line by a step not run: that line's commands, reported
    /// where they run through the step that changed them.
    fn made_string(
        &mut self,
        run: &Run<'_>,
        args: &[Arg],
        location: &Location,
        state: &ScriptState,
    ) {
        let Some((text, line, step)) = args
            .iter()
            .filter(|a| a.value.is_none())
            .find_map(|a| state.made_from(&a.raw))
        else {
            return;
        };
        let mut via = run.via.clone();
        via.push(format!("{}:{line} (changed by `{step}`)", run.file));
        let written = Written::here(location, eval_column(args, location), via);
        let text = text.clone();
        self.run_string(
            run,
            &text,
            written,
            run.place.clone(),
            location,
            run.grammar,
        );
    }

    /// `python x.py` (not `-m`, `-c`): a program in the tree that starts
    /// processes of its own runs commands the walk does not read.
    /// `/opt/setup/run-tests` or `tools/setup.bash`: a program in the tree
    /// run by its path whose shebang names a shell is a script call.
    fn shell_program(&self, args: &[Arg], place: &Place) -> Option<(String, Vec<Arg>)> {
        let first = args.first()?.value.as_deref()?;
        if !first.contains('/') {
            return None;
        }
        let real = self.options.locate(first, place)?;
        shebang_of(&real)?;
        Some((first.to_string(), args[1..].to_vec()))
    }

    fn python_program(&self, args: &[Arg], place: &Place) -> Option<String> {
        let first = crate::wrappers::program(args.first()?)?;
        if !crate::wrappers::is_python(first) {
            return None;
        }
        let script = args[1..]
            .iter()
            .map(|a| a.value.as_deref())
            .find(|v| v.is_none_or(|v| !v.starts_with('-') || v == "-"))??;
        if !script.ends_with(".py") || script.rsplit('/').next() == Some("setup.py") {
            return None;
        }
        let real = self.options.locate(script, place)?;
        let text = read_bounded(&real, &self.options.root).ok()?;
        let text = String::from_utf8_lossy(&text);
        const STARTS: &[&str] = &[
            "subprocess",
            "os.system",
            "os.popen",
            "os.exec",
            "os.spawn",
            "pty.spawn",
        ];
        STARTS.iter().any(|s| text.contains(s)).then(|| {
            format!(
                "`{}` is a Python program that starts commands of its own; they were not read",
                self.relative(&real)
            )
        })
    }

    /// A script this one runs, kept in the frame as a call: each path that
    /// replays the frame follows it with its own stack and variables.
    fn call(
        &mut self,
        run: &Run<'_>,
        callee: Callee,
        location: &Location,
        place: Place,
        args: Vec<Arg>,
        vars: &Vars,
    ) {
        // A called script inherits what was exported (a sourced one shares
        // every variable): both are taken as the caller's variables.
        let inherited = |name: &String| !is_positional(name);
        let env = if run.own_env {
            Inherited::Own(
                vars.values
                    .iter()
                    .filter(|(k, _)| inherited(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            )
        } else {
            Inherited::Changed(
                vars.set_here
                    .iter()
                    .filter(|k| inherited(k))
                    .filter_map(|k| Some((k.clone(), vars.values.get(k)?.clone())))
                    .collect(),
            )
        };
        let context = frame::Context {
            script: callee.script,
            phase: run.phase,
            place: Place {
                cwd: place.cwd.or_else(|| run.place.cwd.clone()),
                image: place.image,
            },
            args,
            call_site: location.clone(),
            caller_layout: Rc::new((run.layout.clone(), run.outer.clone())),
            recipes: callee.recipes,
            shell: callee.shell,
            caller_grammar: run.grammar,
        };
        self.analysis.events.push(Event::Call(Box::new(Call {
            at: format!("{}:{}", location.path, location.line).into(),
            context,
            env,
            stack: run.stack.clone(),
            via: run.via.clone(),
            last: RefCell::default(),
        })));
    }

    /// Follow a call for one path: the script is read and parsed once, its
    /// frame analysed once for every context, and replayed.
    fn follow(&mut self, call: &Call<V::Item>, path: &Replay<'_>, stack: &mut Vec<PathBuf>) {
        let key = call.context.key();
        let real = &key;
        // The stack holds paths as their components give them (scripts
        // normalised, the CI file rebuilt from its components) and markers,
        // which are not absolute: comparing bytes is comparing paths there,
        // without `Path`'s parsing both at every call of every path.
        let on_stack = |p: &PathBuf| p.as_os_str() == real.as_os_str();
        if stack.iter().any(on_stack)
            || call.stack.iter().any(on_stack)
            || stack.len() + call.stack.len() > MAX_CHAIN
        {
            return;
        }
        // Paths multiply: a script (or recipe) calling the next one twice,
        // 25 deep, is 2^25 paths. Past the budget the walk stops and says
        // so, failing closed.
        self.followed += 1;
        if self.followed > MAX_FOLLOWED {
            if self.followed == MAX_FOLLOWED + 1 {
                let at = &call.context.call_site;
                self.error(
                    &at.path,
                    at.line,
                    at.column,
                    format!(
                        "the walk followed {MAX_FOLLOWED} calls of scripts and recipes (paths multiply here); the rest was not followed"
                    ),
                );
            }
            return;
        }
        if let Some(recipes) = &call.context.recipes {
            self.follow_recipes(call, recipes, path, stack);
            return;
        }
        let real = &call.context.script;
        let grammar = self.call_grammar(&call.context);
        let file = match self.scripts.get(&(real.clone(), grammar)) {
            Some(file) => Rc::clone(file),
            None => {
                let shown = self.relative(real);
                let bytes = match read_bounded(real, &self.options.root) {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        self.error(&shown, 1, 1, e.to_string());
                        return;
                    }
                };
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let parsed = layerlock_shell::parse_as(&text, grammar).map(Parsed::new);
                if let Err(e) = &parsed {
                    // Reported once, however many jobs call the script.
                    self.error(
                        &shown,
                        e.line,
                        e.column,
                        format!("cannot parse shell: {}", e.message),
                    );
                }
                let file = Rc::new(ScriptFile {
                    text,
                    parsed,
                    shown: shown.into(),
                });
                self.scripts
                    .insert((real.clone(), grammar), Rc::clone(&file));
                file
            }
        };
        let Ok(parsed) = &file.parsed else {
            return;
        };
        if !self.result.files.contains(&*file.shown) {
            self.result.files.insert(file.shown.to_string());
        }
        let location = &call.context.call_site;
        self.enter(call, path, stack, key, |scanner, env| {
            let run = Run {
                text: &file.text,
                layout: Layout::Lines {
                    start: yaml::Pos { line: 1, column: 1 },
                },
                outer: Vec::new(),
                file: Rc::clone(&file.shown),
                script: Some(real.clone()),
                grammar,
                phase: call.context.phase,
                env: env.clone(),
                own_env: false,
                place: call.context.place.clone(),
                positional: call.context.args.clone(),
                call_site: Some(location.clone()),
                call_layout: Some(Rc::clone(&call.context.caller_layout)),
                via: Hops::default(),
                stack: Vec::new(),
            };
            scanner.run_parsed(&run, &parsed.script, &parsed.runners);
        });
    }

    /// The grammar a called script is read with: the shell the call
    /// names, else its shebang's, else the caller's (a shell runs a script
    /// without one itself).
    fn call_grammar(&mut self, context: &frame::Context) -> Grammar {
        if let Some(named) = context.shell {
            return named;
        }
        // cmd runs a batch file whatever the caller is.
        let extension = context.script.extension().and_then(|e| e.to_str());
        if extension.is_some_and(|e| e.eq_ignore_ascii_case("bat") || e.eq_ignore_ascii_case("cmd"))
        {
            return Grammar::Cmd;
        }
        let shebang = *self
            .shebangs
            .entry(context.script.clone())
            .or_insert_with(|| shebang_of(&context.script));
        shebang.unwrap_or(context.caller_grammar)
    }

    /// Enter a followed call for one path with `key` on the stack: its
    /// frame (analysed by `body` with the variables the path gives it, or
    /// one kept from an earlier path) is replayed.
    fn enter(
        &mut self,
        call: &Call<V::Item>,
        path: &Replay<'_>,
        stack: &mut Vec<PathBuf>,
        key: PathBuf,
        body: impl FnOnce(&mut Self, &BTreeMap<String, String>),
    ) {
        let via = call.via.after(path.via).then(Rc::clone(&call.at));
        let env = match &call.env {
            Inherited::Changed(set) if set.is_empty() => Rc::clone(path.env),
            Inherited::Changed(set) => {
                let mut env = BTreeMap::clone(path.env);
                env.extend(set.iter().map(|(k, v)| (k.clone(), v.clone())));
                Rc::new(env)
            }
            Inherited::Own(own) => Rc::new(own.clone()),
        };
        let above = stack.len();
        stack.extend(call.stack.iter().cloned());
        stack.push(key);
        let frame = match call.frame(&self.frames, stack, &env) {
            Some(frame) => frame,
            None => {
                let frame = self.analyse(stack, &env, |scanner| body(scanner, &env));
                let frame = Rc::new(frame);
                self.frames.keep(call.context.clone(), Rc::clone(&frame));
                call.remember(&frame);
                frame
            }
        };
        let replay = Replay {
            job: path.job,
            via: &via,
            env: &env,
        };
        self.replay(&frame, &replay, stack);
        stack.truncate(above);
    }
}

/// The functions of a script whose bodies use all of their arguments
/// (`"$@"`, `$*`): calling one runs what it is given. Each with the
/// commands of its body.
fn runner_functions(parsed: &layerlock_shell::Script) -> Runners {
    let mut out = BTreeMap::new();
    for function in &parsed.functions {
        let commands: Vec<layerlock_shell::Command> = parsed
            .commands
            .iter()
            .filter(|c| function.contains(c.line, c.column))
            .cloned()
            .collect();
        let uses_all = commands.iter().any(|c| {
            c.words
                .iter()
                .chain(c.assignments.iter().map(|(_, w)| w))
                .any(|w| {
                    ["$@", "$*", "${@}", "${*}"]
                        .iter()
                        .any(|p| w.raw.contains(p))
                })
        });
        if uses_all {
            let script = layerlock_shell::Script {
                commands,
                functions: Vec::new(),
                loops: parsed
                    .loops
                    .iter()
                    .filter(|l| function.contains(l.start.0, l.start.1))
                    .cloned()
                    .collect(),
                ifs: parsed
                    .ifs
                    .iter()
                    .filter(|i| function.contains(i.start.0, i.start.1))
                    .cloned()
                    .collect(),
            };
            out.insert(function.name.clone(), script);
        }
    }
    out
}

/// Scripts with their folded text found back in the file's lines.
fn refined(scripts: Vec<Script>, lines: &layerlock_ci::SourceLines<'_>) -> Vec<Script> {
    scripts
        .into_iter()
        .map(|mut script| {
            script.layout = script.layout.refine(&script.text, lines);
            script
        })
        .collect()
}

/// The grammar a text is read with: its shebang's, else that of the shell
/// that runs it, else bash's.
fn grammar_of(text: &str, shell: Option<&str>) -> Grammar {
    Grammar::of_shebang(text)
        .or_else(|| shell.and_then(|s| Grammar::of_program(s.split_whitespace().next()?)))
        .unwrap_or_default()
}

/// The shell a file's shebang names (its first 512 bytes are read; only a
/// regular file is opened, so a FIFO cannot hold the walk).
fn shebang_of(path: &Path) -> Option<Grammar> {
    use std::io::{BufRead, Read};
    if !fs_err::metadata(path).ok()?.is_file() {
        return None;
    }
    let file = fs_err::File::open(path).ok()?;
    let mut line = String::new();
    std::io::BufReader::new(file.take(512))
        .read_line(&mut line)
        .ok()?;
    Grammar::of_shebang(&line)
}

/// The shell a script call names: `sh x.sh` (sh, whatever the shebang),
/// `source x.sh` (the caller's own). `./x.sh` names none: its shebang says.
fn shell_of_call(args: &[Arg], caller: Grammar) -> Option<Grammar> {
    let first = args.first()?.value.as_deref()?;
    if first == "source" || first == "." {
        return Some(caller);
    }
    Grammar::of_program(first)
}

/// Where a shell string is written, and how its text maps there.
struct Written {
    file: Rc<str>,
    layout: Layout,
    outer: Vec<(usize, Layout)>,
    via: Hops,
}

/// An argument the script was called with, as written in the caller (its
/// line and column through the caller's own layout, so a string spread over
/// folded YAML lines is reported on the line it is on), run by the command
/// at `location`.
/// Where the string `eval` runs starts: its first argument.
fn eval_column(args: &[Arg], location: &Location) -> usize {
    args.get(1)
        .and_then(|a| a.at)
        .map_or(location.column, |(_, c)| c)
}

impl Written {
    /// A string written at `location` (from `column` on its line).
    fn here(location: &Location, column: usize, via: Hops) -> Self {
        Self {
            file: location.path.clone(),
            layout: Layout::Folded {
                start: yaml::Pos {
                    line: location.line,
                    column,
                },
            },
            outer: Vec::new(),
            via,
        }
    }
}

fn in_caller(run: &Run<'_>, arg: &Arg, location: &Location) -> Option<Written> {
    let (line, column) = arg.script_at?;
    let site = run.call_site.as_ref()?;
    let (caller_layout, caller_outer) = &**run.call_layout.as_ref()?;
    let mut via = run.via.clone();
    via.pop();
    via.push(format!("{}:{}", location.path, location.line));
    let mut outer = vec![(1, caller_layout.clone())];
    outer.extend(caller_outer.iter().cloned());
    Some(Written {
        file: site.path.clone(),
        layout: Layout::Lines {
            start: yaml::Pos { line, column },
        },
        outer,
        via,
    })
}

/// Walk every CI file and script under the options' targets, telling the
/// visitor about each command.
pub fn walk<V: Visitor>(options: &ScanOptions, visitor: &mut V) -> Walked {
    let mut scanner = Scanner {
        options,
        result: Walked::default(),
        visitor,
        scripts: HashMap::new(),
        recipe_files: HashMap::new(),
        built: Vec::new(),
        gitlab_included: None,
        shebangs: HashMap::new(),
        followed: 0,
        frames: Frames::default(),
        analysis: Analysis::new(0, &[]),
    };
    // Dockerfiles found by the tree walk are read last: a CI file that
    // builds one says its context (`docker build -f sub/Dockerfile sub`),
    // which outranks a guess.
    let mut found_dockerfiles = Vec::new();
    for target in &options.targets {
        if target.is_dir() {
            let mut files = Vec::new();
            walk_dir(target, &mut files);
            for file in files {
                if kind_of(&file, false) == Some(Kind::Dockerfile) {
                    found_dockerfiles.push(file);
                } else {
                    scanner.scan_file(&file, false);
                }
            }
        } else if target.is_file() {
            scanner.scan_file(target, true);
        } else {
            let rel = scanner.relative(target);
            scanner.error(&rel, 1, 1, "no such file or directory".to_string());
        }
    }
    // Dockerfiles CI builds, with the context each build names (other
    // names too, or outside the paths given); a build may lead to another.
    // Then those the tree walk found that no build named.
    let mut next = 0;
    let mut found = found_dockerfiles.into_iter();
    loop {
        let (path, context) = match scanner.built.get(next) {
            Some(built) => {
                next += 1;
                built.clone()
            }
            None => match found.next() {
                Some(path) => (path, None),
                None => break,
            },
        };
        let rel = scanner.relative(&path);
        if !scanner.result.files.contains(&rel) {
            scanner.scan_dockerfile(&path, context);
        }
    }
    scanner.result
}
