//! A GitLab pipeline across its files: the file CI starts from and the
//! local files it includes (recursively), read together so that `extends`
//! and `!reference` resolve across them and every job of an included file
//! is reported at its own lines. A file that the tree's `.gitlab-ci.yml`
//! includes is read as part of that pipeline, not on its own. What cannot
//! be read (an include of another project, a remote, a template, a path
//! with a variable, a missing file; a template no file defines) is a
//! `not-followed` note at its line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use layerlock_ci::gitlab::{self, Include};
use layerlock_ci::{Script, yaml};

use super::{Scanner, Visitor};
use crate::paths::{confined_file, normalize};
use crate::read::read_bounded;
use crate::site::{CommandSite, Location};
use crate::via::{Hops, Via};

/// At most this many files make one pipeline (GitLab allows 150 includes).
const MAX_FILES: usize = 150;
/// Includes nest at most this deep.
const MAX_NESTING: usize = 100;
/// A glob include matches at most this many files in a directory walk.
const MAX_GLOB_ENTRIES: usize = 10_000;

/// One file of a pipeline, parsed.
struct PipelineFile {
    rel: Rc<str>,
    text: String,
    docs: Vec<yaml::Node>,
}

/// What a pipeline's files run, and what could not be read.
pub(super) struct GitlabRead {
    /// Each script with the file (as reports show it) its text is in.
    pub(super) scripts: Vec<(Rc<str>, Script)>,
    /// Each include or template not followed.
    pub(super) notes: Vec<FileNote>,
}

/// Something a file names that the walk could not read: where, the text
/// that names it, and why.
pub(super) struct FileNote {
    pub(super) file: Rc<str>,
    pub(super) line: usize,
    pub(super) text: String,
    pub(super) why: String,
}

/// A command site for a file's note has no files to read.
struct NoFiles;

impl crate::site::RequirementFiles for NoFiles {
    fn read(&self, _: &str) -> Option<(String, layerlock_lock::RequirementsFile)> {
        None
    }
}

impl<V: Visitor> Scanner<'_, V> {
    /// Whether the tree's own `.gitlab-ci.yml` includes this file: then it
    /// is read with that pipeline.
    pub(super) fn included_by_root_pipeline(&mut self, path: &Path) -> bool {
        if self.gitlab_included.is_none() {
            let root = self.options.root.join(".gitlab-ci.yml");
            let mut included = BTreeSet::new();
            if let Some(real) = confined_file(&root, &self.options.root)
                && let Some(first) = self.parse_pipeline_file(&real)
            {
                let (files, _) = self.pipeline_files(&real, first);
                included.extend(files.into_iter().skip(1).map(|(path, _)| path));
            }
            self.gitlab_included = Some(included);
        }
        let path = normalize(path);
        self.gitlab_included
            .as_ref()
            .is_some_and(|set| set.contains(&path))
    }

    /// A GitLab file's pipeline: it and its local includes.
    pub(super) fn gitlab_pipeline(
        &mut self,
        path: &Path,
        rel: &str,
        text: String,
        docs: Vec<yaml::Node>,
    ) -> GitlabRead {
        let first = PipelineFile {
            rel: rel.into(),
            text,
            docs,
        };
        let (files, mut notes) = self.pipeline_files(&normalize(path), first);
        let all: Vec<&[yaml::Node]> = files.iter().map(|(_, f)| f.docs.as_slice()).collect();
        let pipeline = gitlab::pipeline(&all);
        for (index, line, job, templates) in &pipeline.unresolved {
            let names: Vec<String> = templates.iter().map(|t| format!("`{t}`")).collect();
            notes.push(FileNote {
                file: Rc::clone(&files[*index].1.rel),
                line: *line,
                text: format!("extends: {}", templates.join(", ")),
                why: format!(
                    "job `{job}` extends {}, which no file of this pipeline defines (an include that was not read?), so what it inherits was not read",
                    names.join(", ")
                ),
            });
        }
        for (_, file) in files.iter().skip(1) {
            self.result.files.insert(file.rel.to_string());
        }
        let lines: Vec<layerlock_ci::SourceLines> = files
            .iter()
            .map(|(_, f)| layerlock_ci::SourceLines::new(&f.text))
            .collect();
        let scripts = pipeline
            .scripts
            .into_iter()
            .map(|(index, mut script)| {
                script.layout = script.layout.refine(&script.text, &lines[index]);
                (Rc::clone(&files[index].1.rel), script)
            })
            .collect();
        GitlabRead { scripts, notes }
    }

    fn parse_pipeline_file(&mut self, real: &Path) -> Option<PipelineFile> {
        let rel = self.relative(real);
        let bytes = read_bounded(real, &self.options.root).ok()?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let docs = yaml::parse(&text).ok()?;
        Some(PipelineFile {
            rel: rel.into(),
            text,
            docs,
        })
    }

    /// The starting file and every local file it includes, in GitLab's
    /// order (depth first), each once; and notes for what was not read.
    fn pipeline_files(
        &mut self,
        start: &Path,
        first: PipelineFile,
    ) -> (Vec<(PathBuf, PipelineFile)>, Vec<FileNote>) {
        let mut files = vec![(start.to_path_buf(), first)];
        let mut notes = Vec::new();
        let mut seen: BTreeSet<PathBuf> = [start.to_path_buf()].into();
        // (index of the including file, depth)
        let mut queue = vec![(0usize, 0usize)];
        while let Some((index, depth)) = queue.pop() {
            let includes = gitlab::includes(&files[index].1.docs);
            let from = Rc::clone(&files[index].1.rel);
            for include in includes.into_iter().rev() {
                match include {
                    Include::Elsewhere { what, line } => notes.push(FileNote {
                        file: Rc::clone(&from),
                        line,
                        why: format!("the include `{what}` is not in this repository, so its jobs and templates were not read"),
                        text: format!("include: {what}"),
                    }),
                    Include::Local { path, line } => {
                        let note = |why: String| FileNote {
                            file: Rc::clone(&from),
                            line,
                            text: format!("include: {path}"),
                            why,
                        };
                        let found = match self.local_include(&path) {
                            Ok(found) => found,
                            Err(why) => {
                                notes.push(note(why));
                                continue;
                            }
                        };
                        for real in found {
                            if !seen.insert(real.clone()) {
                                continue;
                            }
                            if files.len() >= MAX_FILES || depth >= MAX_NESTING {
                                notes.push(note(format!("the pipeline includes more than {MAX_FILES} files; `{path}` was not read")));
                                break;
                            }
                            match self.parse_pipeline_file(&real) {
                                Some(file) => {
                                    files.push((real, file));
                                    queue.push((files.len() - 1, depth + 1));
                                }
                                None => notes.push(note(format!("the include `{path}` could not be read or parsed, so its jobs and templates were not read"))),
                            }
                        }
                    }
                }
            }
        }
        (files, notes)
    }

    /// The files a `local:` include names, from the repository root; a
    /// glob (`/ci/*.yml`, `**`) matches files in the tree.
    fn local_include(&self, path: &str) -> Result<Vec<PathBuf>, String> {
        if path.contains('$') {
            return Err(format!(
                "the include `{path}` is named by a variable, so what it holds was not read"
            ));
        }
        let root = &self.options.root;
        let relative = path.trim_start_matches('/');
        if !layerlock_ci::glob::is_glob(relative) {
            return confined_file(&normalize(&root.join(relative)), root)
                .map(|p| vec![p])
                .ok_or_else(|| {
                    format!(
                        "the include `{path}` is not in the tree, so what it holds was not read"
                    )
                });
        }
        // The literal folders before the first pattern, then every file
        // below that the pattern matches.
        let literal: Vec<&str> = relative
            .split('/')
            .take_while(|s| !layerlock_ci::glob::is_glob(s))
            .collect();
        let base = normalize(&root.join(literal.join("/")));
        let mut found = Vec::new();
        let mut stack = vec![base];
        let mut looked = 0;
        while let Some(dir) = stack.pop() {
            let Ok(entries) = fs_err::read_dir(&dir) else {
                continue;
            };
            let mut entries: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
            entries.sort();
            for entry in entries {
                looked += 1;
                if looked > MAX_GLOB_ENTRIES {
                    return Err(format!(
                        "the include `{path}` matches more files than are read ({MAX_GLOB_ENTRIES} looked at)"
                    ));
                }
                let Ok(rel) = entry.strip_prefix(root) else {
                    continue;
                };
                let rel = rel.to_string_lossy().replace('\\', "/");
                if entry.is_dir() && !entry.is_symlink() {
                    stack.push(entry);
                } else if glob_matches(relative, &rel)
                    && let Some(real) = confined_file(&entry, root)
                {
                    found.push(real);
                }
            }
        }
        found.sort();
        Ok(found)
    }
}

impl<V: Visitor> Scanner<'_, V> {
    /// Tell the visitor of what a file names that could not be read, at its
    /// line, as no job's (the file's own).
    pub(super) fn file_notes(&mut self, notes: Vec<FileNote>) {
        let root = self.options.root.clone();
        for note in notes {
            let mut stack = vec![PathBuf::from(&*note.file)];
            let frame = self.analyse(&stack, &BTreeMap::new(), |scanner| {
                let site = CommandSite {
                    args: &[],
                    text: &note.text,
                    location: Location {
                        path: Rc::clone(&note.file),
                        line: note.line,
                        column: 1,
                    },
                    phase: layerlock_ci::Phase::JobTime,
                    files: &NoFiles,
                    cwd: None,
                    root: &root,
                    previous: None,
                    mapped_paths: 0,
                };
                let mut items = Vec::new();
                scanner.visitor.not_followed(&note.why, &site, &mut items);
                scanner.keep(items, &Hops::default());
            });
            let env = Rc::new(BTreeMap::new());
            let replay = super::Replay {
                job: None,
                via: &Via::default(),
                env: &env,
            };
            self.replay(&frame, &replay, &mut stack);
        }
    }
}

/// GitLab's include globs: `*` within a folder, `**` across folders.
fn glob_matches(pattern: &str, path: &str) -> bool {
    if pattern.contains("**") {
        layerlock_ci::glob::fnmatch(pattern, path)
    } else {
        layerlock_ci::glob::matches(pattern, path)
    }
}
