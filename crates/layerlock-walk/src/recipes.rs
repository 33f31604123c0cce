//! Build-tool recipes a command runs: `make [-C DIR] [-f FILE] [VAR=x]
//! GOALS` and `just [-f FILE] [-d DIR] RECIPE ARGS`. Which file, which
//! recipes, with what; the walker follows them as it follows scripts.

use std::collections::BTreeMap;

use crate::site::Arg;
use crate::wrappers::program;

/// Which build tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Tool {
    Make,
    Just,
    Nox,
    Tox,
}

impl Tool {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Make => "make",
            Self::Just => "just",
            Self::Nox => "nox",
            Self::Tox => "tox",
        }
    }

    /// The file names the tool looks for in its directory, in its order.
    pub(crate) fn default_files(self) -> &'static [&'static str] {
        match self {
            Self::Make => &["GNUmakefile", "makefile", "Makefile"],
            Self::Just => &["justfile", "Justfile", ".justfile"],
            Self::Nox => &["noxfile.py"],
            Self::Tox => &["tox.ini"],
        }
    }
}

/// A call of a build tool, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RecipeCall {
    pub(crate) tool: Tool,
    /// `-C DIR` / `--directory DIR` (make), `-d DIR` / `--working-directory`
    /// (just).
    pub(crate) dir: Option<String>,
    /// `-f FILE` / `--file` / `--makefile` / `--justfile`.
    pub(crate) file: Option<String>,
    /// Goals (make) or the recipe and its arguments (just).
    pub(crate) goals: Vec<String>,
    /// `VAR=value` on the command line.
    pub(crate) vars: BTreeMap<String, String>,
    /// A goal computed at run time, as written.
    pub(crate) computed: Option<String>,
}

impl RecipeCall {
    fn new(tool: Tool) -> Self {
        Self {
            tool,
            dir: None,
            file: None,
            goals: Vec::new(),
            vars: BTreeMap::new(),
            computed: None,
        }
    }
}

/// Options of make that take a value.
const MAKE_VALUE_OPTIONS: &[&str] = &[
    "-C",
    "--directory",
    "-f",
    "--file",
    "--makefile",
    "-I",
    "--include-dir",
    "-j",
    "--jobs",
    "-l",
    "--load-average",
    "-o",
    "--old-file",
    "-W",
    "--what-if",
    "--eval",
    "-O",
    "--output-sync",
];

/// Options of just that take a value.
const JUST_VALUE_OPTIONS: &[&str] = &[
    "-f",
    "--justfile",
    "-d",
    "--working-directory",
    "--set",
    "--shell",
    "--shell-arg",
    "--color",
    "--dotenv-filename",
    "--dotenv-path",
    "--command-color",
    "--chooser",
    "--list-heading",
    "--list-prefix",
];

/// `make …` or `just …`, if `args` (wrappers stripped) is one. A dry run
/// (`make -n`, `just --dry-run`) or a listing runs nothing.
pub(crate) fn recipe_call(args: &[Arg]) -> Option<RecipeCall> {
    let first = program(args.first()?)?;
    // `python -m nox`, `uvx tox`, `pipx run nox`.
    let module = (first.starts_with("python") && args.get(1)?.is("-m"))
        .then_some(2)
        .or_else(|| (first == "uvx").then_some(1))
        .or_else(|| (first == "pipx" && args.get(1)?.is("run")).then_some(2));
    if let Some(at) = module
        && args.get(at).is_some_and(|a| a.is("nox") || a.is("tox"))
    {
        return recipe_call(&args[at..]);
    }
    let tool = match first {
        "make" | "gmake" => Tool::Make,
        "just" => Tool::Just,
        "nox" => Tool::Nox,
        "tox" => Tool::Tox,
        _ => return None,
    };
    if matches!(tool, Tool::Nox | Tool::Tox) {
        return Some(session_call(tool, args));
    }
    let mut call = RecipeCall::new(tool);
    let mut i = 1;
    let mut options_done = false;
    while let Some(arg) = args.get(i) {
        i += 1;
        let Some(v) = arg.value.as_deref() else {
            call.computed_word(arg);
            continue;
        };
        if !options_done && v == "--" {
            options_done = true;
            continue;
        }
        if !options_done && v.starts_with('-') && v.len() > 1 {
            if runs_nothing(tool, v) {
                return None;
            }
            i = call.option(v, args, i);
            continue;
        }
        if tool == Tool::Make
            && let Some((name, value)) = v.split_once('=')
            && !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            call.vars.insert(name.to_string(), value.to_string());
            continue;
        }
        call.goals.push(v.to_string());
        // just's recipe takes the rest as its arguments.
        if tool == Tool::Just {
            options_done = true;
        }
    }
    Some(call)
}

/// An option of make or just that runs no recipe: a dry run, a listing,
/// help (make's `-s` is silent and `-l` a load limit: they run recipes).
fn runs_nothing(tool: Tool, option: &str) -> bool {
    matches!(
        option,
        "-n" | "--dry-run"
            | "--just-print"
            | "--recon"
            | "-q"
            | "--question"
            | "-p"
            | "--print-data-base"
            | "-l"
            | "--list"
            | "--summary"
            | "--show"
            | "-s"
            | "--evaluate"
            | "--dump"
            | "--help"
            | "-h"
            | "--version"
            | "-V"
            | "--choose"
            | "--edit"
            | "--init"
            | "--fmt"
            | "--variables"
    ) && !(tool == Tool::Make && matches!(option, "-s" | "-l"))
}

impl RecipeCall {
    /// The options of its tool that take a value, name its directory and
    /// name its file.
    fn option_names(
        &self,
    ) -> (
        &'static [&'static str],
        &'static [&'static str],
        &'static [&'static str],
    ) {
        match self.tool {
            Tool::Make => (
                MAKE_VALUE_OPTIONS,
                &["-C", "--directory"],
                &["-f", "--file", "--makefile"],
            ),
            Tool::Just | Tool::Nox | Tool::Tox => (
                JUST_VALUE_OPTIONS,
                &["-d", "--working-directory"],
                &["-f", "--justfile"],
            ),
        }
    }

    /// A word known only at run time.
    fn computed_word(&mut self, arg: &Arg) {
        // An argument of a recipe already named is the recipe's
        // business: its parameter is known only at run time.
        if self.tool == Tool::Make && is_computed_jobs(&arg.raw) {
            // `-j$(nproc)`, `--jobs=$N`: how many at once, not a goal.
        } else if self.tool == Tool::Just && !self.goals.is_empty() {
            self.goals.push("$JUST_ARGUMENT".to_string());
        } else if let Some(name) = assigned_name(&arg.raw).filter(|_| self.tool == Tool::Make) {
            // `ARGS=$(or $(ARGS),it/)`: the variable's value is known
            // only at run time; the goals still are.
            self.vars.insert(name.to_string(), format!("${{{name}}}"));
        } else if self.computed.is_none() {
            self.computed = Some(arg.raw.clone());
        }
    }

    /// The option `v`, followed by `args[i..]`: the directory or file it
    /// names, or the value it skips. Returns where the next word is.
    fn option(&mut self, v: &str, args: &[Arg], mut i: usize) -> usize {
        let tool = self.tool;
        let (value_options, dir_names, file_names) = self.option_names();
        let (name, attached) = match v.split_once('=') {
            Some((n, a)) if n.starts_with("--") => (n, Some(a.to_string())),
            _ => (v, None),
        };
        let value = || {
            attached.clone().or_else(|| {
                let short = &name[..2.min(name.len())];
                // `-Cdocs`, `-fMakefile.ci`.
                (!name.starts_with("--") && name.len() > 2 && (short == "-C" || short == "-f"))
                    .then(|| name[2..].to_string())
            })
        };
        if dir_names.contains(&name)
            || (tool == Tool::Make && name.starts_with("-C") && name.len() > 2)
        {
            self.dir = value().or_else(|| {
                let next = args.get(i)?;
                i += 1;
                // `-C "$SUB"`: which directory is known only at run time.
                if next.value.is_none() && self.computed.is_none() {
                    self.computed = Some(next.raw.clone());
                }
                next.value.clone()
            });
        } else if file_names.contains(&name)
            || (tool == Tool::Make && name.starts_with("-f") && name.len() > 2)
        {
            self.file = value().or_else(|| {
                let next = args.get(i)?;
                i += 1;
                if next.value.is_none() && self.computed.is_none() {
                    self.computed = Some(next.raw.clone());
                }
                next.value.clone()
            });
        } else if value_options.contains(&name) && attached.is_none() {
            // make's `-j` takes an optional number, perhaps one known only
            // at run time (`-j $(nproc)`).
            let takes = !(tool == Tool::Make && matches!(name, "-j" | "--jobs"))
                || args.get(i).is_some_and(|a| match a.value.as_deref() {
                    Some(n) => n.chars().all(|c| c.is_ascii_digit()),
                    None => a.raw.starts_with('$') || a.raw.starts_with("`"),
                });
            if takes {
                i += 1;
            }
        }
        i
    }
}

/// make's `-j` or `--jobs` with a count known only at run time, in one
/// word: `-j$(nproc)`, `--jobs=$N`, `-j"$N"`.
fn is_computed_jobs(raw: &str) -> bool {
    let count = raw
        .strip_prefix("--jobs=")
        .or_else(|| raw.strip_prefix("-j"))
        .map(|rest| rest.trim_start_matches(['"', '\'']));
    count.is_some_and(|c| c.starts_with('$') || c.starts_with('`'))
}

/// `nox [-s NAME…] [-f FILE]`, `tox [run] [-e A,B] [-c FILE]`: the
/// sessions selected; every one when the selection is computed or made by
/// keyword, tag or label.
fn session_call(tool: Tool, args: &[Arg]) -> RecipeCall {
    let mut call = RecipeCall::new(tool);
    let all = || vec![layerlock_ci::nox::ALL.to_string()];
    let mut i = 1;
    let mut selecting = false;
    while let Some(arg) = args.get(i) {
        i += 1;
        let Some(v) = arg.value.as_deref() else {
            if selecting {
                call.goals = all();
            }
            continue;
        };
        if v == "--" {
            break;
        }
        if v.starts_with('-') {
            selecting = false;
            match v {
                "-s" | "--session" | "--sessions" | "-e" | "--env"
                    if tool == Tool::Nox || v == "-e" =>
                {
                    selecting = true;
                }
                "-f" | "--noxfile" | "-c" | "--conf" => {
                    call.file = args.get(i).and_then(|a| a.value.clone());
                    i += 1;
                }
                "-k" | "-t" | "--tags" | "-m" | "--labels" | "-f=" => {
                    call.goals = all();
                    i += 1;
                }
                _ => {}
            }
            continue;
        }
        if selecting && call.goals != all() {
            call.goals
                .extend(v.split(',').filter(|n| !n.is_empty()).map(str::to_string));
        }
    }
    call
}

/// `NAME=…` as written: the name of a variable a command line sets.
fn assigned_name(raw: &str) -> Option<&str> {
    let (name, _) = raw.split_once('=')?;
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(text: &str) -> Option<RecipeCall> {
        recipe_call(&Arg::words(text))
    }

    #[test]
    fn make_and_just_calls() {
        let c = call("make -C docs -j 4 PY=3.12 html lint").unwrap();
        assert_eq!(c.tool, Tool::Make);
        assert_eq!(c.dir.as_deref(), Some("docs"));
        assert_eq!(c.goals, vec!["html", "lint"]);
        assert_eq!(c.vars["PY"], "3.12");
        for text in [
            "make -j$(nproc) html",
            "make -j $(nproc) html",
            "make --jobs=\"$N\" html",
        ] {
            let c = call(text).unwrap();
            assert_eq!(c.goals, ["html"], "{text}");
            assert!(c.computed.is_none(), "{text}");
        }
        let c = call("make -j -fMakefile.ci --directory=sub").unwrap();
        assert_eq!(c.file.as_deref(), Some("Makefile.ci"));
        assert_eq!(c.dir.as_deref(), Some("sub"));
        assert!(c.goals.is_empty());
        assert_eq!(call("make -n install"), None);
        assert_eq!(
            call("make $TARGET").unwrap().computed.as_deref(),
            Some("$TARGET")
        );
        // A variable known only at run time leaves the goals known.
        let c = call("make test ARGS=$ARGS").unwrap();
        assert_eq!(
            (c.goals.clone(), c.computed.clone()),
            (vec!["test".to_string()], None)
        );
        assert_eq!(c.vars["ARGS"], "${ARGS}");
        let c = call("just --justfile ci/justfile test -m core --x").unwrap();
        assert_eq!(c.tool, Tool::Just);
        assert_eq!(c.file.as_deref(), Some("ci/justfile"));
        assert_eq!(c.goals, vec!["test", "-m", "core", "--x"]);
        assert_eq!(call("just --list"), None);
        let c = call("python -m nox -s test-3.12 lint --no-venv").unwrap();
        assert_eq!(c.tool, Tool::Nox);
        assert_eq!(c.goals, vec!["test-3.12", "lint"]);
        let c = call("tox run -e py311,lint -c ci/tox.ini").unwrap();
        assert_eq!(c.goals, vec!["py311", "lint"]);
        assert_eq!(c.file.as_deref(), Some("ci/tox.ini"));
        assert_eq!(
            call("nox -s $S").unwrap().goals,
            vec![layerlock_ci::nox::ALL]
        );
        assert_eq!(call("echo make"), None);
    }
}
