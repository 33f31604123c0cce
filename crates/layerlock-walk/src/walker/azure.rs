//! Azure Pipelines templates: a `- template: x.yml` of steps, jobs or
//! stages names a file of the repository, read here (inside the root,
//! bounded, at most [`MAX_NESTING`] templates deep, each file once per
//! job) with the job that names it; its scripts are reported at its own
//! lines. A template that cannot be read is a `not-followed` note at the
//! line that names it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use layerlock_ci::azure::{self, Template};
use layerlock_ci::{Note, yaml};

use super::gitlab::FileNote;
use super::{FileScripts, Scanner, Visitor};
use crate::paths::{confined_file, normalize};
use crate::read::read_bounded;

/// Templates nest at most this deep (Azure allows 100 files; cycles stop
/// earlier, at a file already read for the same job).
const MAX_NESTING: usize = 8;

/// A template to read, named by `from` (as reports show it) in `dir`.
struct Pending {
    template: Template,
    from: Rc<str>,
    dir: PathBuf,
    depth: usize,
}

pub(super) fn notes_of(file: &Rc<str>, notes: Vec<Note>) -> Vec<FileNote> {
    notes
        .into_iter()
        .map(|note| FileNote {
            file: Rc::clone(file),
            line: note.line,
            text: note.text,
            why: note.why,
        })
        .collect()
}

impl<V: Visitor> Scanner<'_, V> {
    /// The scripts of every template an Azure file names, through their
    /// own templates, with notes for those not read.
    pub(super) fn azure_templates(
        &mut self,
        path: &Path,
        file: &Rc<str>,
        templates: Vec<Template>,
    ) -> (FileScripts, Vec<FileNote>) {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut queue: Vec<Pending> = templates
            .into_iter()
            .rev()
            .map(|template| Pending {
                template,
                from: Rc::clone(file),
                dir: dir.clone(),
                depth: 1,
            })
            .collect();
        let mut scripts = Vec::new();
        let mut notes = Vec::new();
        let mut seen = BTreeSet::new();
        while let Some(pending) = queue.pop() {
            let Pending {
                template,
                from,
                dir,
                depth,
            } = pending;
            let note = |why: String| FileNote {
                file: Rc::clone(&from),
                line: template.line,
                text: format!("template: {}", template.path),
                why,
            };
            if depth > MAX_NESTING {
                notes.push(note(format!(
                    "templates nest more than {MAX_NESTING} deep here; `{}` was not read",
                    template.path
                )));
                continue;
            }
            let Some((real, docs, text)) = self.template_file(&template.path, &dir) else {
                notes.push(note(format!(
                    "the template `{}` is not in the tree or cannot be read, so what it runs was not read",
                    template.path
                )));
                continue;
            };
            if !seen.insert((real.clone(), template.job.clone())) {
                continue;
            }
            let shown: Rc<str> = self.relative(&real).into();
            self.result.files.insert(shown.to_string());
            let read = azure::read(&docs, template.job.as_deref());
            let lines = layerlock_ci::SourceLines::new(&text);
            for mut script in read.scripts {
                let mut env = template.env.clone();
                env.extend(std::mem::take(&mut script.env));
                script.env = env;
                script.layout = script.layout.refine(&script.text, &lines);
                scripts.push((Rc::clone(&shown), script));
            }
            notes.extend(notes_of(&shown, read.notes));
            let inner_dir = real.parent().map(Path::to_path_buf).unwrap_or_default();
            for inner in read.templates.into_iter().rev() {
                queue.push(Pending {
                    template: inner,
                    from: Rc::clone(&shown),
                    dir: inner_dir.clone(),
                    depth: depth + 1,
                });
            }
        }
        (scripts, notes)
    }

    /// A template's file, its documents and text: relative to the file
    /// that names it, or to the root when it starts with `/`.
    fn template_file(&self, path: &str, dir: &Path) -> Option<(PathBuf, Vec<yaml::Node>, String)> {
        if path.contains("${{") || path.contains("$(") {
            return None;
        }
        let root = &self.options.root;
        let candidate = match path.strip_prefix('/') {
            Some(rest) => root.join(rest),
            None => dir.join(path),
        };
        let real = confined_file(&normalize(&candidate), root)?;
        let bytes = read_bounded(&real, root).ok()?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let docs = yaml::parse(&text).ok()?;
        Some((real, docs, text))
    }
}
