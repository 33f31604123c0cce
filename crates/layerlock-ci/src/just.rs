//! justfiles: the lines `just RECIPE ARGS` runs, each at its place, with
//! `{{…}}` interpolations of the recipe's parameters and the file's
//! variables put in.
//!
//! Recipes (`name param="default" +rest: dep (dep2 "arg") && after`), their
//! indented bodies (the `@` and `-` prefixes blanked), shebang recipes (one
//! script run by the interpreter named; the shebang itself when it is not a
//! shell, since `#!/usr/bin/env -S uv run --script` installs), attributes,
//! aliases and `name := "literal"` assignments. An expression that is not a
//! literal is left to the shell as `${name}`; a backtick is a command
//! substitution.

use std::collections::{BTreeMap, BTreeSet};

use crate::script::{Layout, ModelError, Phase, Script};
use crate::yaml::Pos;

/// One body line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct BodyLine {
    text: String,
    line: usize,
}

/// A recipe's parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Param {
    name: String,
    default: Option<String>,
    /// `+name` or `*name`: takes every argument left.
    variadic: bool,
}

/// One recipe.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Recipe {
    name: String,
    params: Vec<Param>,
    /// Recipes run before (with their arguments) and after (`&&`).
    before: Vec<Vec<String>>,
    after: Vec<Vec<String>>,
    body: Vec<BodyLine>,
}

/// A justfile's recipes and variables.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Justfile {
    recipes: BTreeMap<String, Recipe>,
    aliases: BTreeMap<String, String>,
    vars: BTreeMap<String, String>,
    /// The first recipe: what `just` alone runs.
    first: Option<String>,
    /// The shell of its recipe lines: `set shell := ["bash", "-c"]`, or
    /// just's own `sh`.
    shell: String,
}

/// How deep dependencies are followed.
const MAX_DEPTH: usize = 32;

/// Read a justfile. Only the shape of recipes is checked: an indented line
/// before any recipe is an error.
pub fn read(text: &str) -> Result<Justfile, ModelError> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut file = Justfile {
        shell: "sh".to_string(),
        ..Justfile::default()
    };
    let mut current: Option<String> = None;
    for (i, line) in lines.iter().enumerate() {
        let number = i + 1;
        let trimmed = line.trim();
        let indented = line.starts_with([' ', '\t']);
        if indented && !trimmed.is_empty() {
            let Some(name) = &current else {
                if trimmed.starts_with('#') {
                    continue;
                }
                return Err(ModelError {
                    line: number,
                    column: 1,
                    message: "an indented line comes before the first recipe".to_string(),
                });
            };
            if let Some(recipe) = file.recipes.get_mut(name) {
                recipe.body.push(BodyLine {
                    text: line.to_string(),
                    line: number,
                });
            }
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('[') {
            continue;
        }
        current = None;
        if let Some(shell) = shell_setting(trimmed) {
            file.shell = shell;
            continue;
        }
        if trimmed.starts_with("set ")
            || trimmed.starts_with("import ")
            || trimmed.starts_with("mod ")
        {
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("alias ") {
            if let Some((alias, target)) = rest.split_once(":=") {
                file.aliases
                    .insert(alias.trim().to_string(), target.trim().to_string());
            }
            continue;
        }
        let assignment = trimmed.strip_prefix("export ").unwrap_or(trimmed);
        if let Some((name, value)) = assignment.split_once(":=")
            && is_name(name.trim())
        {
            file.vars
                .insert(name.trim().to_string(), literal(value.trim(), name.trim()));
            continue;
        }
        if let Some(recipe) = header(trimmed) {
            if file.first.is_none() {
                file.first = Some(recipe.name.clone());
            }
            current = Some(recipe.name.clone());
            file.recipes.insert(recipe.name.clone(), recipe);
        }
    }
    Ok(file)
}

fn is_name(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A literal string expression's value; anything else is the shell's
/// `${name}` (a backtick: its command's output).
fn literal(expression: &str, name: &str) -> String {
    let e = expression.trim();
    for quote in ['"', '\''] {
        if e.len() >= 2
            && e.starts_with(quote)
            && e.ends_with(quote)
            && !e[1..e.len() - 1].contains(quote)
        {
            return e[1..e.len() - 1].to_string();
        }
    }
    if e.len() >= 2 && e.starts_with('`') && e.ends_with('`') {
        return format!("$({})", &e[1..e.len() - 1]);
    }
    format!("${{{}}}", name.replace('-', "_"))
}

/// `@name a b="x" +c: dep (dep2 "y") && after`.
fn header(line: &str) -> Option<Recipe> {
    let line = line.strip_prefix('@').unwrap_or(line);
    let colon = header_colon(line)?;
    let (signature, deps) = (&line[..colon], &line[colon + 1..]);
    let mut words = signature.split_whitespace();
    let name = words.next()?.to_string();
    if !is_name(&name) {
        return None;
    }
    let mut params = Vec::new();
    for word in words {
        let variadic = word.starts_with(['+', '*']);
        let word = word.trim_start_matches(['+', '*', '$']);
        let (name, default) = match word.split_once('=') {
            Some((n, d)) => (n, Some(literal(d, n))),
            None => (word, None),
        };
        params.push(Param {
            name: name.to_string(),
            default,
            variadic,
        });
    }
    let deps = deps.split('#').next().unwrap_or("");
    let (before, after) = match deps.split_once("&&") {
        Some((b, a)) => (b, a),
        None => (deps, ""),
    };
    Some(Recipe {
        name,
        params,
        before: dependencies(before),
        after: dependencies(after),
        body: Vec::new(),
    })
}

/// The recipe's colon: not `:=`, outside quotes.
fn header_colon(line: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let bytes = line.as_bytes();
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == ':' && bytes.get(i + 1) != Some(&b'=') => return Some(i),
            None => {}
        }
    }
    None
}

/// `a (b "x" y) c` → [[a], [b, x, ${y}], [c]].
fn dependencies(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('(') {
            let end = inner.find(')').unwrap_or(inner.len());
            // The recipe, then its arguments: a quoted literal, or a name
            // whose value the caller's parameters and variables give.
            let words: Vec<String> = inner[..end]
                .split_whitespace()
                .enumerate()
                .map(|(k, w)| {
                    if k == 0 {
                        w.to_string()
                    } else if w.starts_with(['"', '\'']) {
                        literal(w, w)
                    } else {
                        format!("{{{{{w}}}}}")
                    }
                })
                .collect();
            if !words.is_empty() {
                out.push(words);
            }
            rest = inner.get(end + 1..).unwrap_or("").trim_start();
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            out.push(vec![rest[..end].to_string()]);
            rest = rest[end..].trim_start();
        }
    }
    out
}

impl Justfile {
    fn recipe(&self, name: &str) -> Option<&Recipe> {
        let name = self.aliases.get(name).map_or(name, String::as_str);
        self.recipes.get(name)
    }

    /// Whether `name` is a recipe (or an alias of one).
    pub fn has_recipe(&self, name: &str) -> bool {
        self.recipe(name).is_some()
    }

    /// `just A x B`: which words name recipes, each with its arguments.
    fn invocations(&self, words: &[String]) -> (Vec<Vec<String>>, Vec<String>) {
        let mut out = Vec::new();
        let mut unknown = Vec::new();
        if words.is_empty() {
            out.extend(self.first.iter().map(|f| vec![f.clone()]));
            return (out, unknown);
        }
        let mut i = 0;
        while i < words.len() {
            let Some(recipe) = self.recipe(&words[i]) else {
                unknown.push(words[i].clone());
                i += 1;
                continue;
            };
            let takes = if recipe.params.iter().any(|p| p.variadic) {
                words.len() - i - 1
            } else {
                recipe.params.len().min(words.len() - i - 1)
            };
            out.push(words[i..=i + takes].to_vec());
            i += takes + 1;
        }
        (out, unknown)
    }

    /// The words of `just WORDS` that name no recipe.
    pub fn unknown(&self, words: &[String]) -> Vec<String> {
        self.invocations(words).1
    }

    /// The lines `just WORDS` runs, dependencies first, as scripts.
    pub fn scripts(&self, words: &[String]) -> Vec<Script> {
        let mut out = Vec::new();
        let mut done = BTreeSet::new();
        for invocation in self.invocations(words).0 {
            self.visit(&invocation, &mut done, &mut out, 0);
        }
        out
    }

    fn visit(
        &self,
        invocation: &[String],
        done: &mut BTreeSet<Vec<String>>,
        out: &mut Vec<Script>,
        depth: usize,
    ) {
        if depth > MAX_DEPTH || !done.insert(invocation.to_vec()) {
            return;
        }
        let Some(recipe) = self.recipe(&invocation[0]) else {
            return;
        };
        let args = &invocation[1..];
        let mut values = self.vars.clone();
        for (k, param) in recipe.params.iter().enumerate() {
            let value = if param.variadic {
                Some(args.get(k..).unwrap_or(&[]).join(" "))
            } else {
                args.get(k).cloned().or_else(|| param.default.clone())
            };
            values.insert(
                param.name.clone(),
                value.unwrap_or_else(|| format!("${{{}}}", param.name)),
            );
        }
        for dep in &recipe.before {
            let dep: Vec<String> = dep.iter().map(|w| interpolate(w, &values)).collect();
            self.visit(&dep, done, out, depth + 1);
        }
        out.extend(body_scripts(&recipe.body, &values, &self.shell));
        for dep in &recipe.after {
            let dep: Vec<String> = dep.iter().map(|w| interpolate(w, &values)).collect();
            self.visit(&dep, done, out, depth + 1);
        }
    }
}

/// Ends a shebang recipe's body given as a heredoc.
const BODY_END: &str = "LAYERLOCK_RECIPE_BODY";

/// `set shell := ["bash", "-uc"]`: the program.
fn shell_setting(line: &str) -> Option<String> {
    let rest = line
        .strip_prefix("set")?
        .trim_start()
        .strip_prefix("shell")?;
    let list = rest.trim_start().strip_prefix(":=")?.trim();
    let first = list.strip_prefix('[')?.trim_start();
    let quote = first.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let name = first[1..].split(quote).next()?;
    Some(name.to_string())
}

/// A recipe body: one script per line, or, under a shebang, the whole body
/// as one script (a shell's) or the shebang's own command (another
/// interpreter's).
fn body_scripts(body: &[BodyLine], values: &BTreeMap<String, String>, shell: &str) -> Vec<Script> {
    let script = |text: String, line: usize| Script {
        text,
        layout: Layout::Lines {
            start: Pos { line, column: 1 },
        },
        job: None,
        phase: Phase::JobTime,
        env: BTreeMap::new(),
        working_dir: None,
        mounts: Vec::new(),
        shell: Some(shell.to_string()),
    };
    let Some(first) = body.first() else {
        return Vec::new();
    };
    let indent = first.text.len() - first.text.trim_start().len();
    if let Some(shebang) = first.text.trim_start().strip_prefix("#!") {
        let command = shebang
            .trim()
            .strip_prefix("/usr/bin/env")
            .map_or(shebang.trim(), |rest| {
                rest.trim_start().strip_prefix("-S").unwrap_or(rest).trim()
            });
        let program = command.split_whitespace().next().unwrap_or("");
        let shell = matches!(
            program.rsplit('/').next(),
            Some("bash" | "sh" | "dash" | "zsh")
        );
        if !shell {
            // just runs the body as a file given to the interpreter; here it
            // is the interpreter's standard input, so what reads the file
            // (`uv run --script` and its inline metadata) reads it.
            let mut text = format!(
                "{}{} - <<'{BODY_END}'\n",
                " ".repeat(indent),
                interpolate(command, values)
            );
            for l in &body[1..] {
                text.push_str(l.text.get(indent..).unwrap_or(l.text.trim_start()));
                text.push('\n');
            }
            text.push_str(BODY_END);
            return vec![script(text, first.line)];
        }
        let mut text = String::new();
        let mut line = first.line;
        for l in body {
            while line < l.line {
                text.push('\n');
                line += 1;
            }
            text.push_str(&interpolate(&l.text, values));
        }
        return vec![script(text, first.line)];
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let line = &body[i];
        // `\` continues a line into the next.
        let mut text = blank_prefix(&line.text);
        while text.ends_with('\\') && i + 1 < body.len() {
            i += 1;
            text.push('\n');
            text.push_str(&body[i].text);
        }
        i += 1;
        if text.trim_start().starts_with('#') {
            continue;
        }
        out.push(script(interpolate(&text, values), line.line));
    }
    out
}

fn blank_prefix(text: &str) -> String {
    let lead = text.len() - text.trim_start().len();
    let rest = &text[lead..];
    let prefix = rest.len() - rest.trim_start_matches(['@', '-']).len();
    format!("{}{}", " ".repeat(lead + prefix), &rest[prefix..])
}

/// `{{ name }}` → its value (unknown expressions: `${…}` for the shell);
/// `{{{{` is a literal `{{`.
fn interpolate(text: &str, values: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("{{") {
        out.push_str(&rest[..at]);
        if rest[at..].starts_with("{{{{") {
            out.push_str("{{");
            rest = &rest[at + 4..];
            continue;
        }
        let Some(end) = rest[at + 2..].find("}}") else {
            out.push_str(&rest[at..]);
            return out;
        };
        let expression = rest[at + 2..at + 2 + end].trim();
        match values.get(expression) {
            Some(v) => out.push_str(v),
            None if is_name(expression) => {
                out.push_str(&format!("${{{}}}", expression.replace('-', "_")))
            }
            None => out.push_str(&literal(expression, "just_expression")),
        }
        rest = &rest[at + 2 + end + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const JUSTFILE: &str = "\
# the default
default:
    @just --list

python := \"3.12\"

[group('ci')]
ci-check *args: (lock \"--check\")
    uv run --python {{ python }} pytest {{ args }}
    -echo done

lock flag='':
    uv lock {{ flag }}

alias t := test
test: ci-check && report
    #!/usr/bin/env bash
    set -e
    pip install x

report:
    #!/usr/bin/env -S uv run --script
    print('hi')
";

    fn run(words: &[&str]) -> Vec<(usize, String)> {
        let file = read(JUSTFILE).unwrap();
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        file.scripts(&words)
            .into_iter()
            .map(|s| {
                let Layout::Lines { start } = s.layout else {
                    panic!("lines")
                };
                (start.line, s.text)
            })
            .collect()
    }

    #[test]
    fn recipes_run_dependencies_first_with_arguments() {
        assert_eq!(
            run(&["ci-check", "-m", "core"]),
            vec![
                (13, "    uv lock --check".to_string()),
                (9, "    uv run --python 3.12 pytest -m core".to_string()),
                (10, "     echo done".to_string()),
            ]
        );
        let t = run(&["t"]);
        assert_eq!(t.len(), 5, "{t:?}");
        assert_eq!(
            t[3],
            (
                17,
                "    #!/usr/bin/env bash\n    set -e\n    pip install x".to_string()
            )
        );
        // The body is the interpreter's standard input.
        assert_eq!(
            t[4],
            (
                22,
                format!("    uv run --script - <<'{BODY_END}'\nprint('hi')\n{BODY_END}")
            )
        );
        assert_eq!(run(&[]), vec![(3, "     just --list".to_string())]);
    }

    #[test]
    fn unknown_recipes_and_bad_files() {
        let file = read(JUSTFILE).unwrap();
        assert_eq!(
            file.unknown(&["nope".to_string()]),
            vec!["nope".to_string()]
        );
        assert!(
            file.unknown(&["lock".to_string(), "x".to_string()])
                .is_empty()
        );
        assert_eq!(read("  echo x\n").unwrap_err().line, 1);
        let cyclic = "a: b\n  echo a\nb: a\n  echo b\n";
        assert_eq!(read(cyclic).unwrap().scripts(&["a".to_string()]).len(), 2);
    }
}
