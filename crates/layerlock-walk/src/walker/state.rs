//! What one script has done so far, as the walker reads it command by
//! command: its variables (and which of them it set itself), its
//! arguments, its directory, the arrays it built, the files it wrote with a
//! heredoc, and the variables a container command set for the shell string
//! it runs. The walker asks it for each command's arguments and tells it
//! what each command changed; it knows nothing of following or reporting.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use layerlock_shell::{Command, Context, Word};

use super::commands::{set_positional, track_env_and_cwd};
use super::{Run, ScanOptions, Vars};
use crate::arrays::Arrays;
use crate::branches::{Branches, Value};
use crate::loops::Binding;
use crate::paths::Here;
use crate::place::Place;
use crate::site::Arg;

/// How a word's value is found: static, from the variables, or from a
/// directory idiom (`$(dirname "$0")`); the walker's own rule.
pub(super) type WordValue<'v> =
    dyn Fn(&Word, &BTreeMap<String, String>, &Here<'_>) -> Option<String> + 'v;

pub(super) struct ScriptState {
    pub(super) vars: Vars,
    /// The script's arguments (`shift` drops the first ones).
    pub(super) positional: Vec<Arg>,
    /// Variables made from the arguments (`CMDS=("$@")`): not known
    /// exactly, but one of them.
    derived: BTreeSet<String>,
    /// Of those, the ones an unknown step changed (`c=$(requote "$c")`):
    /// the variable → the step's first line and its text. What runs is
    /// made from the arguments, not one of them as written.
    transformed: BTreeMap<String, (usize, String)>,
    /// Variables made from a known command line by a step not run
    /// (`c2=$(echo "$c" | sed …)`): the text it was made from, the step's
    /// line and the step.
    made_from: BTreeMap<String, (String, usize, String)>,
    pub(super) place: Place,
    /// The command before this one (`cd x && make`).
    pub(super) previous: Option<Vec<Arg>>,
    /// Variables a container command sets (`docker run -e CMDS=…`) for the
    /// shell string it runs: its context, and the variables.
    scoped: Option<(Vec<Context>, BTreeMap<String, String>)>,
    /// The variables as they were before entering that string.
    outer: Option<Vars>,
    /// Arrays built so far (`args=(uv run …)`), run as `"${args[@]}"`.
    arrays: Arrays,
    /// Variables the bodies of an `if` set to different values.
    branches: Branches,
    /// Files a heredoc was written to: path → (body, its first line).
    pub(super) written: BTreeMap<PathBuf, (String, usize)>,
    /// Variables the rules asked for, for the frame's validity.
    pub(super) reads: RefCell<BTreeSet<String>>,
    /// Whether the script was called with arguments of its own (a script
    /// or function), not run as a CI step.
    called: bool,
}

impl ScriptState {
    pub(super) fn new(run: &Run<'_>, ifs: &[layerlock_shell::If]) -> Self {
        let mut vars = Vars {
            values: run.env.clone(),
            set_here: BTreeSet::new(),
        };
        let called = run.call_site.is_some();
        set_positional(&mut vars.values, &run.positional, called);
        let mut derived: BTreeSet<String> = ["@", "*"].iter().map(|s| s.to_string()).collect();
        derived.extend((1..=9).map(|i| i.to_string()));
        Self {
            vars,
            positional: run.positional.clone(),
            derived,
            transformed: BTreeMap::new(),
            made_from: BTreeMap::new(),
            place: run.place.clone(),
            previous: None,
            scoped: None,
            outer: None,
            arrays: Arrays::default(),
            branches: Branches::new(ifs),
            written: BTreeMap::new(),
            reads: RefCell::new(BTreeSet::new()),
            called,
        }
    }

    /// Before a command: the loop variables of this pass, and the
    /// variables of the container string it is inside, if any.
    pub(super) fn enter(&mut self, command: &Command, binding: Binding) {
        for (name, value) in binding {
            match value {
                Some(value) => self.vars.values.insert(name, value),
                None => self.vars.values.remove(&name),
            };
        }
        let inside = self.scoped.as_ref().is_some_and(|(ctx, _)| {
            command.context.len() > ctx.len() && command.context.starts_with(ctx)
        });
        match &self.scoped {
            Some((_, extra)) if inside => {
                self.outer = Some(self.vars.clone());
                for (k, v) in extra.clone() {
                    self.vars.set(k, v);
                }
            }
            _ => self.scoped = None,
        }
    }

    /// A command's leading `NAME=value` with no command after them set the
    /// script's variables and arrays. An assignment word carries no place
    /// of its own: the command's is the assignment's.
    pub(super) fn assign(
        &mut self,
        command: &Command,
        run: &Run<'_>,
        root: &Path,
        value: &WordValue<'_>,
    ) {
        if !command.words.is_empty() {
            return;
        }
        let at = run.pos(command.line, command.column);
        let at = (at.line, at.column);
        let cwd = self.place.cwd.clone();
        let here = Here {
            root,
            script: run.script.as_deref(),
            cwd: cwd.as_deref(),
        };
        for (name, word) in &command.assignments {
            self.derive(name, word, at.0);
            let before = self.value_of(name);
            let append = command.text.contains(&format!("{name}+=("));
            if !self.arrays.assign(name, &word.raw, append, at) {
                let v = value(word, &self.vars.values, &here);
                if self.arrays.assign_element(name, v.clone(), at) {
                    continue;
                }
                match v {
                    Some(v) => {
                        self.transformed.remove(name);
                        self.made_from.remove(name);
                        self.vars.set(name.clone(), v);
                    }
                    // Not known: no earlier value holds any more.
                    None => {
                        self.vars.values.remove(name);
                    }
                }
            }
            let after = self.value_of(name);
            self.branches.assigned(name, command, before, after);
        }
    }

    /// `name=word` where the word is made from the arguments: `name` is
    /// too; through a step the walk does not run (a command substitution,
    /// a function) it is a transformation of them, which is remembered.
    fn derive(&mut self, name: &str, word: &Word, line: usize) {
        // The variables of `$(step "$x")` are inside its text.
        let inside = if word.has_substitution {
            referenced(&word.raw)
        } else {
            Vec::new()
        };
        // `CMD="$CMD scipy"` reads what CMD was made from before.
        let own = self.made_from.remove(name);
        let made = |v: &String| {
            if v == name {
                own.clone()
            } else {
                self.made_from.get(v).cloned()
            }
        };
        // Made from the arguments: they are run as the caller wrote them
        // (`runs_an_argument`).
        let from_arguments = self.called
            && word
                .variables
                .iter()
                .chain(&inside)
                .any(|v| self.derived.contains(v));
        let step = substitution_step(&word.raw).filter(|_| !from_arguments);
        if let Some(step) = step {
            let known = inside.iter().find_map(|v| {
                self.vars
                    .values
                    .get(v)
                    .filter(|text| text.contains(' '))
                    .map(|text| (text.clone(), line, step.clone()))
                    .or_else(|| made(v))
            });
            if let Some(known) = known {
                self.made_from.insert(name.to_string(), known);
            }
        } else if !from_arguments && let Some(earlier) = word.variables.iter().find_map(made) {
            self.made_from.insert(name.to_string(), earlier);
        } else if !from_arguments
            && let Some(text) = word.variables.iter().find_map(|v| self.command_line_in(v))
        {
            // `CMD="${CMD} patsy ${BLAS}"` with BLAS unknown: the known
            // command line with the rest known only at run time. Dropped
            // if the whole value turns out known.
            self.made_from
                .insert(name.to_string(), (text, line, word.raw.clone()));
        }
        let Some(from) = word
            .variables
            .iter()
            .chain(&inside)
            .find(|v| self.derived.contains(*v))
        else {
            return;
        };
        let from = from.clone();
        self.derived.insert(name.to_string());
        if let Some(step) = substitution_step(&word.raw) {
            self.transformed.insert(name.to_string(), (line, step));
        } else if let Some(earlier) = self.transformed.get(&from).cloned() {
            self.transformed.insert(name.to_string(), earlier);
        }
    }

    /// A command line (a value with a space) a variable holds now, or
    /// holds after one of the arms of an earlier `if`.
    fn command_line_in(&self, name: &str) -> Option<String> {
        let line = |v: &String| v.contains(' ').then(|| v.clone());
        self.vars.values.get(name).and_then(line).or_else(|| {
            self.branches
                .alternatives(name)
                .into_iter()
                .find_map(|value| match value {
                    Value::Scalar(v) => line(&v),
                    _ => None,
                })
        })
    }

    /// The transformation a command's variables went through, if any of
    /// them is made from the arguments by a step not run.
    pub(super) fn transformation(&self, command: &Command) -> Option<&(usize, String)> {
        command
            .words
            .iter()
            .flat_map(|w| &w.variables)
            .find_map(|v| self.transformed.get(v))
    }

    /// The command line a variable was made from by a step not run, with
    /// the step's line and text, when `raw` is that one variable.
    pub(super) fn made_from(&self, raw: &str) -> Option<&(String, usize, String)> {
        let name = referenced(raw);
        match name.as_slice() {
            [one] if !self.vars.values.contains_key(one) => self.made_from.get(one),
            _ => None,
        }
    }

    /// A variable's value now.
    fn value_of(&self, name: &str) -> Value {
        match (self.arrays.get(name), self.vars.values.get(name)) {
            (Some(elements), _) => Value::Array(elements.clone()),
            (None, Some(v)) => Value::Scalar(v.clone()),
            (None, None) => Value::Unset,
        }
    }

    /// The readings of a command whose variables depend on the branch an
    /// earlier `if` took (see `branches.rs`).
    pub(super) fn branch_passes(&self, command: &Command) -> Vec<Vec<(String, Value)>> {
        self.branches.passes(command)
    }

    /// Give the variables a reading's values; returns what they were.
    pub(super) fn apply(&mut self, pass: &[(String, Value)]) -> Vec<(String, Value)> {
        let saved = pass
            .iter()
            .map(|(name, _)| (name.clone(), self.value_of(name)))
            .collect();
        self.set_values(pass);
        saved
    }

    pub(super) fn set_values(&mut self, values: &[(String, Value)]) {
        for (name, value) in values {
            match value {
                Value::Unset => {
                    self.arrays.set(name, None);
                    self.vars.values.remove(name);
                }
                Value::Scalar(v) => {
                    self.arrays.set(name, None);
                    self.vars.values.insert(name.clone(), v.clone());
                }
                Value::Array(elements) => {
                    self.arrays.set(name, Some(elements.clone()));
                }
            }
        }
    }

    /// The command's arguments as they run: `"$@"` as the script's
    /// arguments, `"${args[@]}"` as the array's elements, an unquoted
    /// expansion split into words.
    pub(super) fn args(
        &self,
        command: &Command,
        run: &Run<'_>,
        root: &Path,
        value: &WordValue<'_>,
    ) -> Vec<Arg> {
        let here = Here {
            root,
            script: run.script.as_deref(),
            cwd: self.place.cwd.as_deref(),
        };
        let mut args: Vec<Arg> = Vec::new();
        for word in &command.words {
            let at = run.pos(word.line, word.column);
            if word.is_all_arguments() && self.called && !word.raw.contains("\"$*") {
                args.extend(self.positional.iter().cloned());
                continue;
            }
            if let Some(elements) = self.arrays.expand(&word.raw) {
                args.extend(elements.iter().map(|element| Arg {
                    value: element.value.clone(),
                    raw: word.raw.clone(),
                    at: Some(element.at),
                    script_at: Some((word.line, word.column)),
                }));
                continue;
            }
            let v = value(word, &self.vars.values, &here);
            // `$PIP_CMD install x` with PIP_CMD="uv pip" runs `uv pip
            // install x`.
            let unquoted = word.value.is_none() && !word.raw.contains(['"', '\'']);
            let arg = |value: Option<String>| Arg {
                value,
                raw: word.raw.clone(),
                at: Some((at.line, at.column)),
                script_at: Some((word.line, word.column)),
            };
            match v {
                Some(v) if unquoted && v.split_whitespace().count() > 1 => {
                    args.extend(v.split_whitespace().map(|part| arg(Some(part.to_string()))));
                }
                v => args.push(arg(v)),
            }
        }
        args
    }

    /// What a command at the top level changes for the commands after it:
    /// `export`, `cd`, and an unconditional `shift` (an option loop's
    /// `shift 2` depends on what the options are).
    pub(super) fn track(&mut self, command: &Command, args: &[Arg], options: &ScanOptions) {
        if args.first().is_some_and(|a| {
            ["export", "local", "declare", "typeset", "readonly"]
                .iter()
                .any(|w| a.is(w))
        }) {
            let line = args[0].at.map_or(command.line, |(line, _)| line);
            for word in &command.words[1..] {
                if let Some((name, _)) = word.raw.split_once('=')
                    && is_name(name)
                {
                    self.derive(name, word, line);
                }
            }
        }
        track_env_and_cwd(args, &mut self.vars, &mut self.place, options);
        if command.conditional || !args.first().is_some_and(|a| a.is("shift")) {
            return;
        }
        let n = args
            .get(1)
            .and_then(|a| a.value.as_deref())
            .map_or(Some(1), |n| n.parse::<usize>().ok());
        if let Some(n) = n {
            self.positional.drain(..n.min(self.positional.len()));
            set_positional(&mut self.vars.values, &self.positional, self.called);
        }
    }

    /// `${COMMANDS[$node]}` or `eval "$cmd"` with a value made from the
    /// arguments but not known exactly: it is one of them, so each argument
    /// that is a command line runs.
    pub(super) fn runs_an_argument(&self, command: &Command, args: &[Arg], inner: &[Arg]) -> bool {
        let from_arguments =
            |w: &Word| w.value.is_none() && w.variables.iter().any(|v| self.derived.contains(v));
        let first = command.words.first().is_some_and(|w| {
            from_arguments(w)
                && !w.is_all_arguments()
                && inner.first().is_some_and(|a| a.value.is_none())
        });
        let eval = args.first().is_some_and(|a| a.is("eval"))
            && command.words.iter().any(from_arguments)
            && args[1..].iter().any(|a| a.value.is_none());
        self.called && (first || eval)
    }

    /// The arguments that are command lines (they hold a space).
    pub(super) fn command_arguments(&self) -> impl Iterator<Item = &Arg> {
        self.positional
            .iter()
            .filter(|a| a.value.as_deref().is_some_and(|v| v.contains(' ')))
    }

    /// After a command: it becomes the previous one; leaving a container
    /// string restores the variables; a container command's own variables
    /// hold for the string it runs.
    pub(super) fn leave(
        &mut self,
        command: &Command,
        args: Vec<Arg>,
        container_env: BTreeMap<String, String>,
    ) {
        self.previous = Some(args);
        if let Some(saved) = self.outer.take() {
            self.vars = saved;
        }
        if !container_env.is_empty() {
            self.scoped = Some((command.context.clone(), container_env));
        }
    }
}

/// A shell variable's name.
fn is_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The names of the variables `$x` and `${x…}` in shell text, in order.
fn referenced(raw: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = raw;
    while let Some(at) = rest.find('$') {
        rest = &rest[at + 1..];
        let body = rest.strip_prefix('{').unwrap_or(rest);
        let end = body
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(body.len());
        let name = &body[..end];
        if is_name(name) || (!name.is_empty() && name.chars().all(|c| c.is_ascii_digit())) {
            out.push(name.to_string());
        } else if let Some(special) = body.chars().next().filter(|c| matches!(c, '@' | '*')) {
            out.push(special.to_string());
        }
    }
    out
}

/// The step a command substitution runs (`$(requote "$c")` →
/// `requote "$c"`), when a word is one.
fn substitution_step(raw: &str) -> Option<String> {
    let raw = raw.trim_matches('"');
    let inner = raw
        .strip_prefix("$(")
        .and_then(|r| r.strip_suffix(')'))
        .or_else(|| raw.strip_prefix('`').and_then(|r| r.strip_suffix('`')))?;
    Some(inner.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use layerlock_ci::{Layout, Phase, yaml};
    use std::rc::Rc;

    fn run_of(text: &str) -> Run<'_> {
        Run {
            text,
            layout: Layout::Lines {
                start: yaml::Pos { line: 1, column: 1 },
            },
            outer: Vec::new(),
            file: Rc::from("ci.sh"),
            script: None,
            grammar: layerlock_shell::Grammar::Bash,
            phase: Phase::JobTime,
            env: BTreeMap::new(),
            own_env: false,
            place: Place::default(),
            positional: vec![Arg::lit("pytest -q"), Arg::lit("two")],
            call_site: Some(crate::site::Location {
                path: Rc::from("caller.sh"),
                line: 3,
                column: 1,
            }),
            call_layout: None,
            via: Default::default(),
            stack: Vec::new(),
        }
    }

    fn static_value(word: &Word, vars: &BTreeMap<String, String>, _: &Here<'_>) -> Option<String> {
        word.value.clone().or_else(|| word.expand(vars))
    }

    /// Reads `text` command by command as the walker does and returns the
    /// arguments of the last command.
    fn last_args(text: &str) -> (ScriptState, Vec<Option<String>>) {
        let run = run_of(text);
        let parsed = layerlock_shell::parse(text).unwrap();
        let mut state = ScriptState::new(&run, &parsed.ifs);
        let root = PathBuf::from("/repo");
        let options = ScanOptions {
            root: root.clone(),
            ..Default::default()
        };
        let mut last = Vec::new();
        for command in &parsed.commands {
            state.enter(command, Vec::new());
            state.assign(command, &run, &root, &static_value);
            let args = state.args(command, &run, &root, &static_value);
            state.track(command, &args, &options);
            last = args.iter().map(|a| a.value.clone()).collect();
            state.leave(command, args, BTreeMap::new());
        }
        (state, last)
    }

    #[test]
    fn assignments_arrays_and_splitting_build_the_arguments() {
        let (_, args) =
            last_args("PIP='uv pip'\nopts=(--quiet -r req.txt)\n$PIP install \"${opts[@]}\"\n");
        let args: Vec<_> = args.into_iter().map(Option::unwrap).collect();
        assert_eq!(args, ["uv", "pip", "install", "--quiet", "-r", "req.txt"]);
    }

    #[test]
    fn shift_drops_arguments_and_all_arguments_expand_to_the_rest() {
        let (state, args) = last_args("shift\nrun \"$@\"\n");
        assert_eq!(args, [Some("run".to_string()), Some("two".to_string())]);
        assert_eq!(state.positional.len(), 1);
    }

    #[test]
    fn cd_and_export_change_what_later_commands_see() {
        let (state, _) =
            last_args("cd sub/dir\nexport PIP_INDEX_URL=https://example.org/simple\ntrue\n");
        assert_eq!(state.place.cwd.as_deref(), Some(Path::new("/repo/sub/dir")));
        assert!(state.vars.set_here.contains("PIP_INDEX_URL"));
    }

    #[test]
    fn a_value_made_from_the_arguments_runs_one_of_them() {
        let text = "CMD=\"$1\"\n$CMD\n";
        let run = run_of(text);
        let parsed = layerlock_shell::parse(text).unwrap();
        let mut state = ScriptState::new(&run, &parsed.ifs);
        let root = PathBuf::from("/repo");
        state.assign(&parsed.commands[0], &run, &root, &|_, _, _| None);
        let command = &parsed.commands[1];
        let args = state.args(command, &run, &root, &|_, _, _| None);
        assert!(state.runs_an_argument(command, &args, &args));
        let lines: Vec<_> = state
            .command_arguments()
            .filter_map(|a| a.value.clone())
            .collect();
        assert_eq!(lines, ["pytest -q"]);
    }
}
