//! Following `make`, `just`, `nox` and `tox` into their files: the file is
//! read and parsed once, goals no rule makes are noted, and each recipe
//! line runs as a script of its own in the tool's directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use layerlock_ci::Script;

use super::{Callee, Replay, Run, Scanner, Vars, Visitor};
use crate::frame::{Call, Recipes};
use crate::paths::confined_file;
use crate::place::{Image, Place};
use crate::read::read_bounded;
use crate::recipes::{RecipeCall, Tool};
use crate::site::CommandSite;
use crate::via::Hops;

/// A Makefile or justfile, read and parsed once.
pub(super) struct RecipeFile {
    model: Option<RecipeModel>,
    shown: Rc<str>,
}

pub(super) enum RecipeModel {
    Make(layerlock_ci::make::Makefile),
    Just(layerlock_ci::just::Justfile),
    Nox(layerlock_ci::nox::Environments),
    Tox(layerlock_ci::nox::Environments),
}

impl RecipeModel {
    fn has(&self, goal: &str) -> bool {
        match self {
            Self::Make(m) => m.has_target(goal),
            Self::Just(j) => j.has_recipe(goal),
            // tox makes an environment it has no section for (`py311`).
            Self::Nox(n) => n.has(goal),
            Self::Tox(_) => true,
        }
    }

    /// The goals no recipe makes (for just, only the first word names a
    /// recipe; the rest are its arguments, or further recipes).
    fn unknown(&self, goals: &[String]) -> Vec<String> {
        match self {
            Self::Just(j) => j.unknown(goals),
            _ => goals.iter().filter(|g| !self.has(g)).cloned().collect(),
        }
    }

    fn scripts(&self, goals: &[String], vars: &BTreeMap<String, String>) -> Vec<Script> {
        match self {
            Self::Make(m) => m.scripts(goals, vars).0,
            Self::Just(j) => j.scripts(goals),
            Self::Nox(n) => n.selected(goals, false),
            Self::Tox(t) => t.selected(goals, true),
        }
    }
}

impl<V: Visitor> Scanner<'_, V> {
    /// `make GOALS` or `just RECIPE`: the file is found and read here (a
    /// goal no rule makes is noted), and its recipes are followed as a
    /// call, in the directory the tool runs them.
    pub(super) fn recipe_call(
        &mut self,
        run: &Run<'_>,
        call: &RecipeCall,
        place: &Place,
        vars: &Vars,
        site: &CommandSite<'_>,
        via: &Hops,
    ) {
        let tool = call.tool.name();
        let not_followed = |scanner: &mut Self, why: String| {
            let mut items = Vec::new();
            scanner.visitor.not_followed(&why, site, &mut items);
            scanner.keep(items, via);
        };
        if let Some(raw) = &call.computed {
            not_followed(
                self,
                format!(
                    "`{tool}` is given `{raw}`, known only at run time, so what it runs was not read"
                ),
            );
            return;
        }
        let Some((real, dir, image)) = self.recipe_file_at(call, place) else {
            let what = call
                .file
                .clone()
                .unwrap_or_else(|| format!("a {tool} file"));
            let at = match &place.image {
                Some(image) => format!(
                    "{} of the image, which holds no such file of the repository",
                    call.dir
                        .as_deref()
                        .map_or_else(|| image.workdir.clone(), |d| image.in_dir(d).workdir)
                ),
                None => format!(
                    "{}, which is not in the scanned tree",
                    self.relative(&self.recipe_dir(call, place))
                ),
            };
            not_followed(self, format!("`{tool}` runs {what} in {at}"));
            return;
        };
        let Some(file) = self.recipe_file(&real, call.tool) else {
            return;
        };
        let Some(model) = &file.model else {
            return;
        };
        for goal in model.unknown(&call.goals) {
            not_followed(
                self,
                format!(
                    "no recipe of {} makes `{goal}`, so what `{tool} {goal}` runs was not read",
                    file.shown
                ),
            );
        }
        let goals: Vec<String> = match call.tool {
            Tool::Just => call.goals.clone(),
            _ => call
                .goals
                .iter()
                .filter(|g| model.has(g))
                .cloned()
                .collect(),
        };
        if call.tool != Tool::Just && goals.is_empty() && !call.goals.is_empty() {
            return;
        }
        let recipes = Rc::new(Recipes {
            tool: call.tool,
            goals,
            vars: call.vars.clone(),
        });
        // make runs recipes where it was started (`-C` first); just, nox
        // and tox, in their file's directory unless told another.
        let cwd = match call.tool {
            Tool::Make => dir,
            _ if call.dir.is_some() => dir,
            _ => real.parent().map_or(dir, Path::to_path_buf),
        };
        let child = Place {
            cwd: Some(cwd),
            image: image.or_else(|| place.image.clone()),
        };
        let callee = Callee {
            script: real,
            recipes: Some(recipes),
            shell: None,
        };
        self.call(run, callee, &site.location, child, Vec::new(), vars);
    }

    /// A Makefile or justfile, read and parsed once; a file that cannot be
    /// read or parsed is reported once.
    /// The tool's directory in the repository, outside an image.
    fn recipe_dir(&self, call: &RecipeCall, place: &Place) -> PathBuf {
        match &call.dir {
            Some(d) => self.place_path(place, d),
            None => place
                .cwd
                .clone()
                .unwrap_or_else(|| self.options.root.clone()),
        }
    }

    /// The file a recipe call reads, the repository directory its recipes
    /// run in, and in an image the image in that directory: there the file
    /// is where the image's copies put it (`COPY server/Makefile-x
    /// Makefile`), and a directory no file was copied to holds none.
    fn recipe_file_at(
        &self,
        call: &RecipeCall,
        place: &Place,
    ) -> Option<(PathBuf, PathBuf, Option<Rc<Image>>)> {
        let names: Vec<&str> = match &call.file {
            Some(f) => vec![f.as_str()],
            None => call.tool.default_files().to_vec(),
        };
        if let Some(image) = &place.image {
            let image = match &call.dir {
                Some(d) => image.in_dir(d),
                None => (**image).clone(),
            };
            let real = names
                .iter()
                .find_map(|n| image.find(n, &self.options.root))?;
            let dir = image
                .workdir_in_repo()
                .or_else(|| real.parent().map(Path::to_path_buf))?;
            return Some((real, dir, Some(Rc::new(image))));
        }
        let dir = self.recipe_dir(call, place);
        let real = names
            .iter()
            .find_map(|n| confined_file(&dir.join(n), &self.options.root))?;
        Some((real, dir, None))
    }

    pub(super) fn recipe_file(&mut self, real: &Path, tool: Tool) -> Option<Rc<RecipeFile>> {
        if let Some(file) = self.recipe_files.get(real) {
            return Some(Rc::clone(file));
        }
        let shown = self.relative(real);
        let text = match read_bounded(real, &self.options.root) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(e) => {
                self.error(&shown, 1, 1, e.to_string());
                return None;
            }
        };
        let model = match tool {
            Tool::Make => layerlock_ci::make::read(&text).map(RecipeModel::Make),
            Tool::Just => layerlock_ci::just::read(&text).map(RecipeModel::Just),
            Tool::Nox => Ok(RecipeModel::Nox(layerlock_ci::nox::read_noxfile(&text))),
            Tool::Tox => Ok(RecipeModel::Tox(layerlock_ci::nox::read_tox_ini(&text))),
        };
        let model = match model {
            Ok(m) => Some(m),
            Err(e) => {
                self.error(
                    &shown,
                    e.line,
                    e.column,
                    format!("cannot read the {}: {}", tool.name(), e.message),
                );
                None
            }
        };
        let file = Rc::new(RecipeFile {
            model,
            shown: shown.into(),
        });
        self.recipe_files
            .insert(real.to_path_buf(), Rc::clone(&file));
        Some(file)
    }

    /// Follow a `make` or `just` call for one path: each recipe line it
    /// runs is a script of its own (make and just start a shell for each),
    /// in the tool's directory, with make's variables expanded.
    pub(super) fn follow_recipes(
        &mut self,
        call: &Call<V::Item>,
        recipes: &Recipes,
        path: &Replay<'_>,
        stack: &mut Vec<PathBuf>,
    ) {
        let real = &call.context.script;
        let Some(file) = self.recipe_files.get(real).cloned() else {
            return;
        };
        let Some(model) = &file.model else {
            return;
        };
        if !self.result.files.contains(&*file.shown) {
            self.result.files.insert(file.shown.to_string());
        }
        let scripts = model.scripts(&recipes.goals, &recipes.vars);
        let key = call.context.key();
        self.enter(call, path, stack, key, |scanner, env| {
            for script in &scripts {
                let run = Run {
                    text: &script.text,
                    layout: script.layout.clone(),
                    outer: Vec::new(),
                    file: Rc::clone(&file.shown),
                    script: None,
                    grammar: super::grammar_of(&script.text, script.shell.as_deref()),
                    phase: call.context.phase,
                    env: env.clone(),
                    own_env: false,
                    place: call.context.place.clone(),
                    positional: Vec::new(),
                    call_site: None,
                    call_layout: None,
                    via: Hops::default(),
                    stack: Vec::new(),
                };
                scanner.run(&run);
            }
        });
    }
}
