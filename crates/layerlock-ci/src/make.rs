//! Makefiles: the recipes `make TARGET` runs, each recipe line with where it
//! is, after make's own expansion of its variables.
//!
//! What is modelled: rules (`a b: prereqs`, `a:: prereqs`, `a: ; recipe`),
//! their recipe lines (tab-led, `\` continuations, the `@`, `-` and `+`
//! prefixes), variables (`=`, `:=`, `::=`, `?=`, `+=`, with `export` and
//! `override`), `$(MAKE)`, the automatic variables `$@`, `$<`, `$^` and
//! `$*`, pattern rules (`%.o: %.c`; the match-anything `%:` of the Sphinx
//! layout for goals), and the default goal. Conditionals are read through: both branches count,
//! so nothing a branch could run is missed. A variable the Makefile does
//! not set is left to the shell as `${NAME}` (make takes it from the
//! environment); `$(shell …)` becomes a command substitution; other
//! functions expand to nothing.

use std::collections::{BTreeMap, BTreeSet};

use crate::script::{Layout, ModelError, Phase, Script};
use crate::yaml::Pos;

/// One recipe line as the shell gets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeLine {
    /// The text as written, with the prefix characters blanked so columns
    /// stay where they are; continuation lines kept.
    pub text: String,
    pub line: usize,
}

/// One rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub targets: Vec<String>,
    pub prerequisites: Vec<String>,
    pub recipe: Vec<RecipeLine>,
    pub line: usize,
}

/// A Makefile's rules and variables.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Makefile {
    pub rules: Vec<Rule>,
    pub vars: BTreeMap<String, String>,
    /// The first target that does not start with `.`.
    pub default_goal: Option<String>,
    /// `include` lines: (line, what they name), not followed.
    pub includes: Vec<(usize, String)>,
}

/// How deep prerequisites are followed.
const MAX_DEPTH: usize = 32;

/// What a make function, or an expansion past the limits, comes to: a
/// variable the shell does not know, so nothing built from it passes as
/// pinned.
const UNKNOWN: &str = "${make_function}";

/// Marks a goal that is a target as written (its value is computed).
const WRITTEN: &str = "\u{0}written:";

/// How many variable references one expansion may follow: `X = $(X)$(X)`
/// would otherwise double at every level.
const MAX_REFERENCES: usize = 4096;

/// Read a Makefile. Only a recipe line before any rule is an error (make
/// says "recipe commences before first target").
pub fn read(text: &str) -> Result<Makefile, ModelError> {
    let mut reader = Reader {
        lines: text
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect(),
        next: 0,
        make: Makefile::default(),
        current: None,
    };
    while reader.next < reader.lines.len() {
        reader.logical_line()?;
    }
    Ok(reader.make)
}

/// Where [`read`] is in a Makefile, and what it has read so far.
struct Reader<'a> {
    lines: Vec<&'a str>,
    /// The index of the next physical line to read.
    next: usize,
    make: Makefile,
    /// The rule that recipe lines belong to, if one is open.
    current: Option<usize>,
}

impl Reader<'_> {
    /// Reads the logical line at `next` (continuations joined) and moves
    /// past it.
    fn logical_line(&mut self) -> Result<(), ModelError> {
        let i = self.next;
        let line = self.lines[i];
        let number = i + 1;
        let (logical, next) = joined(&self.lines, i);
        self.next = next;
        if let Some(body) = line.strip_prefix('\t') {
            return self.recipe_line(body, &logical, number);
        }
        let trimmed = logical.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            return Ok(());
        }
        let stripped = strip_comment(trimmed);
        if self.directive(stripped, number) {
            return Ok(());
        }
        if let Some((name, op, value)) = assignment(stripped) {
            assign(&mut self.make.vars, name, op, value);
            // A variable between rules ends none: recipes may follow only a
            // rule line, but make allows assignments there (they are not
            // tab-led), so the current rule stays.
            return Ok(());
        }
        if let Some((targets, rest)) = rule_line(stripped) {
            self.rule(line, number, targets, rest);
            return Ok(());
        }
        self.current = None;
        Ok(())
    }

    /// Adds a tab-led line (`body` after the tab, `text` the whole logical
    /// line) to the open rule's recipe; comments are skipped.
    fn recipe_line(&mut self, body: &str, text: &str, number: usize) -> Result<(), ModelError> {
        let Some(rule) = self.current else {
            if body.trim().is_empty() || body.trim_start().starts_with('#') {
                return Ok(());
            }
            return Err(ModelError {
                line: number,
                column: 1,
                message: "a recipe line comes before the first rule".to_string(),
            });
        };
        if body.trim_start().starts_with('#') {
            return Ok(());
        }
        self.make.rules[rule].recipe.push(RecipeLine {
            text: blank_prefix(&format!(" {}", &text[1..])),
            line: number,
        });
        Ok(())
    }

    /// Steps over a directive make reads for itself (conditionals,
    /// `define`, `include`, …); false when the line is not one.
    fn directive(&mut self, stripped: &str, number: usize) -> bool {
        let word = stripped.split_whitespace().next().unwrap_or("");
        match word {
            "ifeq" | "ifneq" | "ifdef" | "ifndef" | "else" | "endif" => true,
            "define" => {
                // A multi-line variable: its body is not a recipe.
                while self.next < self.lines.len() && self.lines[self.next].trim() != "endef" {
                    self.next += 1;
                }
                self.next += 1;
                true
            }
            "include" | "-include" | "sinclude" => {
                let what = stripped[word.len()..].trim().to_string();
                self.make.includes.push((number, what));
                self.current = None;
                true
            }
            "vpath" | "unexport" => true,
            _ => false,
        }
    }

    /// Records the rule on `line` (`targets: rest`, comment stripped) and
    /// opens it for the recipe lines that follow.
    fn rule(&mut self, line: &str, number: usize, targets: &str, rest: &str) {
        let (prerequisites, inline) = match rest.split_once(';') {
            Some((p, r)) => (p, Some(r)),
            None => (rest, None),
        };
        // `target: VAR = value` sets a variable for that target only.
        if assignment(prerequisites.trim()).is_some() {
            self.current = None;
            return;
        }
        let targets: Vec<String> = targets.split_whitespace().map(str::to_string).collect();
        if self.make.default_goal.is_none()
            && let Some(first) = targets
                .iter()
                .find(|t| !t.starts_with('.') && !t.contains('%'))
        {
            self.make.default_goal = Some(first.clone());
        }
        let mut rule = Rule {
            targets,
            prerequisites: prerequisites
                .split('|')
                .flat_map(str::split_whitespace)
                .map(str::to_string)
                .collect(),
            recipe: Vec::new(),
            line: number,
        };
        if let Some(inline) = inline.filter(|r| !r.trim().is_empty()) {
            rule.recipe.push(inline_recipe(line, inline, number));
        }
        self.make.rules.push(rule);
        self.current = Some(self.make.rules.len() - 1);
    }
}

/// The recipe after `;` on a rule line (`a: ; recipe`), with spaces up to
/// the command so it keeps its column.
fn inline_recipe(line: &str, inline: &str, number: usize) -> RecipeLine {
    let after = line.find(';').map_or(0, |c| c + 1);
    let lead = line[after..].len() - line[after..].trim_start().len();
    RecipeLine {
        text: format!(
            "{}{}",
            " ".repeat(after + lead),
            blank_prefix(inline.trim_start())
        ),
        line: number,
    }
}

/// Sets variable `name` as assignment operator `op` does: `?=` only if
/// unset, `+=` appends, `:=`/`::=` expand now, the rest store as written.
fn assign(vars: &mut BTreeMap<String, String>, name: String, op: &str, value: &str) {
    let value = value.trim().to_string();
    match op {
        "?=" => {
            vars.entry(name).or_insert(value);
        }
        "+=" => {
            let entry = vars.entry(name).or_default();
            if !entry.is_empty() {
                entry.push(' ');
            }
            entry.push_str(&value);
        }
        ":=" | "::=" => {
            // Expanded once, now: kept with `$` escaped so that
            // expanding it again gives the same text.
            let expanded = expand(&value, vars, &Auto::default());
            vars.insert(name, expanded.replace('$', "$$"));
        }
        _ => {
            vars.insert(name, value);
        }
    }
}

/// A logical line from `lines[i]`, with `\` continuations joined by
/// newlines (as a recipe's shell sees them); the index after it.
fn joined(lines: &[&str], i: usize) -> (String, usize) {
    let mut text = lines[i].to_string();
    let mut next = i + 1;
    while text.ends_with('\\') && !text.ends_with("\\\\") && next < lines.len() {
        text.push('\n');
        text.push_str(lines[next]);
        next += 1;
    }
    (text, next)
}

/// `@`, `-` and `+` before a recipe's command (after the tab), as spaces.
fn blank_prefix(text: &str) -> String {
    let lead = text.len() - text.trim_start().len();
    let rest = &text[lead..];
    let prefix = rest.len() - rest.trim_start_matches(['@', '-', '+', ' ', '\t']).len();
    format!("{}{}", " ".repeat(lead + prefix), &rest[prefix..])
}

fn strip_comment(line: &str) -> &str {
    match line.find(" #").or_else(|| line.find("\t#")) {
        Some(at) => line[..at].trim_end(),
        None => line,
    }
}

/// `NAME op value` (with `export`/`override` before), not a rule.
fn assignment(line: &str) -> Option<(String, &'static str, &str)> {
    let line = line
        .strip_prefix("export ")
        .or_else(|| line.strip_prefix("override "))
        .unwrap_or(line)
        .trim_start();
    for op in ["::=", ":=", "?=", "+=", "!=", "="] {
        let Some(at) = line.find(op) else { continue };
        let name = line[..at].trim();
        // `a: b=c` is a target-specific variable, read by the caller.
        if name.is_empty() || name.contains([':', ' ', '\t', '$', '(', ')']) {
            continue;
        }
        let op: &'static str = match op {
            "!=" => "=",
            other => other,
        };
        return Some((name.to_string(), op, &line[at + op.len().max(1)..]));
    }
    None
}

/// `targets: rest` or `targets:: rest`.
fn rule_line(line: &str) -> Option<(&str, &str)> {
    let at = colon(line)?;
    let targets = line[..at].trim();
    if targets.is_empty() {
        return None;
    }
    let rest = line[at + 1..].strip_prefix(':').unwrap_or(&line[at + 1..]);
    if rest.starts_with('=') {
        return None;
    }
    Some((targets, rest))
}

/// The rule's colon: the first outside `$(…)`.
fn colon(line: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in line.char_indices() {
        match c {
            '(' | '{' => depth += 1,
            ')' | '}' => depth = depth.saturating_sub(1),
            ':' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

/// The automatic variables of the rule being run.
#[derive(Debug, Default)]
struct Auto<'a> {
    target: &'a str,
    prerequisites: &'a [String],
    /// What `%` matched, for a pattern rule (`$*`).
    stem: &'a str,
}

/// Make's expansion of `text`. `$$` is a `$` for the shell.
fn expand(text: &str, vars: &BTreeMap<String, String>, auto: &Auto<'_>) -> String {
    let mut budget = MAX_REFERENCES;
    expand_within(text, vars, auto, &mut budget, 0)
}

fn expand_within(
    text: &str,
    vars: &BTreeMap<String, String>,
    auto: &Auto<'_>,
    budget: &mut usize,
    depth: usize,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        let Some(&(_, next)) = chars.peek() else {
            out.push('$');
            break;
        };
        match next {
            '$' => {
                chars.next();
                out.push('$');
            }
            '(' | '{' => {
                let close = if next == '(' { ')' } else { '}' };
                let start = i + 2;
                let Some(end) = matching(text, start, next, close) else {
                    out.push_str(&text[i..]);
                    break;
                };
                let inner = &text[start..end];
                while chars.peek().is_some_and(|&(j, _)| j <= end) {
                    chars.next();
                }
                out.push_str(&reference(inner, vars, auto, budget, depth));
            }
            '@' => {
                chars.next();
                out.push_str(auto.target);
            }
            '<' => {
                chars.next();
                out.push_str(auto.prerequisites.first().map_or("", String::as_str));
            }
            '^' | '+' => {
                chars.next();
                out.push_str(&auto.prerequisites.join(" "));
            }
            '*' => {
                chars.next();
                out.push_str(auto.stem);
            }
            c if c.is_ascii_alphanumeric() || c == '_' => {
                chars.next();
                out.push_str(&reference(&c.to_string(), vars, auto, budget, depth));
            }
            _ => out.push('$'),
        }
    }
    out
}

/// What `%` in the target pattern `pattern` matches of `target` (never
/// empty), when it has one `%` and matches.
fn stem_of(pattern: &str, target: &str) -> Option<String> {
    let (prefix, suffix) = pattern.split_once('%')?;
    if suffix.contains('%') || target.len() <= prefix.len() + suffix.len() {
        return None;
    }
    let stem = target.strip_prefix(prefix)?.strip_suffix(suffix)?;
    (!stem.is_empty()).then(|| stem.to_string())
}

/// Where the bracket opened before `start` closes.
fn matching(text: &str, start: usize, open: char, close: char) -> Option<usize> {
    let mut depth = 1usize;
    for (i, c) in text[start..].char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(start + i);
            }
        }
    }
    None
}

/// `$(NAME)`, `$(shell …)`, `$(fn args)`.
fn reference(
    inner: &str,
    vars: &BTreeMap<String, String>,
    auto: &Auto<'_>,
    budget: &mut usize,
    depth: usize,
) -> String {
    if *budget == 0 || depth >= MAX_DEPTH {
        return UNKNOWN.to_string();
    }
    *budget -= 1;
    if let Some(command) = inner.strip_prefix("shell ") {
        return format!(
            "$({})",
            expand_within(command, vars, auto, budget, depth + 1)
        );
    }
    if inner.contains([' ', '\t', ',']) {
        // Another function (`$(if …)`, `$(strip …)`): what it gives is not
        // known here, and the shell sees a value known only at run time.
        return UNKNOWN.to_string();
    }
    match inner {
        "MAKE" => return "make".to_string(),
        "@" => return auto.target.to_string(),
        "*" => return auto.stem.to_string(),
        "CURDIR" => return "$PWD".to_string(),
        _ => {}
    }
    match vars.get(inner) {
        Some(value) => expand_within(value, vars, auto, budget, depth + 1),
        // From the environment, as make reads it.
        None => format!("${{{inner}}}"),
    }
}

impl Makefile {
    /// The rule that makes `target`: an explicit rule with a recipe, else
    /// the first that names it.
    fn rules_for(&self, target: &str, vars: &BTreeMap<String, String>) -> Vec<&Rule> {
        self.rules
            .iter()
            .filter(|r| {
                r.targets.iter().any(|t| {
                    t == target
                        || (t.contains('$')
                            && expand(t, vars, &Auto::default())
                                .split_whitespace()
                                .any(|w| w == target))
                })
            })
            .collect()
    }

    /// The rules that make `target`, each with its stem: the explicit ones
    /// (stem empty), else the pattern rule (`%: Makefile`, `%.o: %.c`)
    /// whose target pattern matches it, with what `%` matched. A pattern
    /// rule never makes one of its own prerequisites (`Makefile` in the
    /// Sphinx layout); a match-anything rule makes only a `goal`.
    fn rules_matching(
        &self,
        target: &str,
        vars: &BTreeMap<String, String>,
        goal: bool,
    ) -> Vec<(&Rule, String)> {
        let explicit = self.rules_for(target, vars);
        if !explicit.is_empty() {
            return explicit.into_iter().map(|r| (r, String::new())).collect();
        }
        // Make takes the pattern rule with a recipe whose stem is shortest
        // (the first of equals).
        let mut best: Option<(&Rule, String)> = None;
        for rule in &self.rules {
            // A match-anything rule (`%`) is taken for a goal, not for a
            // prerequisite (mostly a file of the tree: `x.in`).
            let Some(stem) = rule
                .targets
                .iter()
                .filter(|t| goal || t.as_str() != "%")
                .find_map(|t| stem_of(t, target))
            else {
                continue;
            };
            let own = rule
                .prerequisites
                .iter()
                .any(|p| p.replacen('%', &stem, 1) == target);
            let shorter = best.as_ref().is_none_or(|(_, b)| stem.len() < b.len());
            if !own && !rule.recipe.is_empty() && shorter {
                best = Some((rule, stem));
            }
        }
        best.into_iter().collect()
    }

    /// The rules whose target is written as `raw` (`$(VENV)/bin/activate`):
    /// how a prerequisite whose value make functions compute finds its
    /// rule, since both are the same text.
    fn rules_written(&self, raw: &str) -> Vec<&Rule> {
        self.rules
            .iter()
            .filter(|r| r.targets.iter().any(|t| t == raw))
            .collect()
    }

    /// Whether a rule makes `target` (a pattern rule too).
    pub fn has_target(&self, target: &str) -> bool {
        !self.rules_matching(target, &self.vars, true).is_empty()
    }

    /// The recipes `make GOALS` runs, prerequisites first, each target
    /// once, as scripts at their lines. `overrides` are `VAR=value` from
    /// the command line. Goals no rule makes are returned apart.
    pub fn scripts(
        &self,
        goals: &[String],
        overrides: &BTreeMap<String, String>,
    ) -> (Vec<Script>, Vec<String>) {
        let mut vars = self.vars.clone();
        vars.extend(overrides.iter().map(|(k, v)| (k.clone(), v.clone())));
        let goals: Vec<String> = if goals.is_empty() {
            // `.DEFAULT_GOAL := ci` outranks the first rule.
            match self.vars.get(".DEFAULT_GOAL") {
                Some(goal) => goal.split_whitespace().map(str::to_string).collect(),
                None => self.default_goal.iter().cloned().collect(),
            }
        } else {
            goals.to_vec()
        };
        let mut done = BTreeSet::new();
        let mut out = Vec::new();
        let mut unknown = Vec::new();
        for goal in &goals {
            if self.rules_matching(goal, &vars, true).is_empty() {
                unknown.push(goal.clone());
                continue;
            }
            self.visit(goal, &vars, &mut done, &mut out, 0);
        }
        (out, unknown)
    }

    fn visit(
        &self,
        target: &str,
        vars: &BTreeMap<String, String>,
        done: &mut BTreeSet<String>,
        out: &mut Vec<Script>,
        depth: usize,
    ) {
        if depth > MAX_DEPTH || !done.insert(target.to_string()) {
            return;
        }
        let rules = match target.strip_prefix(WRITTEN) {
            Some(raw) => self
                .rules_written(raw)
                .into_iter()
                .map(|r| (r, String::new()))
                .collect(),
            None => self.rules_matching(target, vars, depth == 0),
        };
        for (rule, stem) in rules {
            // A prerequisite whose value is computed by make functions is
            // followed to the rule written the same way.
            let mut prerequisites: Vec<String> = Vec::new();
            for p in &rule.prerequisites {
                let p = &if stem.is_empty() {
                    p.clone()
                } else {
                    p.replacen('%', &stem, 1)
                };
                let value = expand(p, vars, &Auto::default());
                if value.contains(UNKNOWN) {
                    if !self.rules_written(p).is_empty() {
                        prerequisites.push(format!("{WRITTEN}{p}"));
                    }
                    continue;
                }
                prerequisites.extend(value.split_whitespace().map(str::to_string));
            }
            for p in &prerequisites {
                self.visit(p, vars, done, out, depth + 1);
            }
            let prerequisites: Vec<String> = prerequisites
                .into_iter()
                .filter(|p| !p.starts_with(WRITTEN))
                .collect();
            let auto = Auto {
                target: if target.starts_with(WRITTEN) {
                    UNKNOWN
                } else {
                    target
                },
                prerequisites: &prerequisites,
                stem: &stem,
            };
            for line in &rule.recipe {
                out.push(Script {
                    text: expand(&line.text, vars, &auto),
                    layout: Layout::Lines {
                        start: Pos {
                            line: line.line,
                            column: 1,
                        },
                    },
                    job: None,
                    phase: Phase::JobTime,
                    env: BTreeMap::new(),
                    working_dir: None,
                    mounts: Vec::new(),
                    // make runs each line with `$(SHELL) -c`, `/bin/sh`
                    // unless the Makefile sets it.
                    shell: Some(
                        vars.get("SHELL")
                            .map(|s| expand(s, vars, &auto))
                            .unwrap_or_else(|| "/bin/sh".to_string()),
                    ),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAKEFILE: &str = "\
PIP ?= uv pip
REQS := requirements/ci.txt
export UV_FROZEN = 1

.PHONY: install test lint

install: .uv ## Install
\t@$(PIP) install -r $(REQS)
\tuv sync --frozen \\
\t  --all-extras

.uv:
\t@uv --version

test: install
\t-uv run pytest $(ARGS)
\t$(MAKE) -C docs html

lint: ; uvx ruff@0.6.0 check
ifdef CI
\techo inside
endif
";

    fn texts(goals: &[&str]) -> Vec<(usize, String)> {
        let make = read(MAKEFILE).unwrap();
        let goals: Vec<String> = goals.iter().map(|g| g.to_string()).collect();
        let (scripts, _) = make.scripts(&goals, &BTreeMap::new());
        scripts
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
    fn a_pattern_rule_makes_what_no_explicit_rule_does() {
        // Sphinx's layout: every goal goes to sphinx-build through `%`.
        let text = "SPHINXBUILD ?= sphinx-build\n.PHONY: help Makefile\nhelp:\n\t@$(SPHINXBUILD) -M help src out\ndeps:\n\tpip install -r requirements-docs.txt\n%: Makefile deps\n\t@$(SPHINXBUILD) -M $@ src out\nbuild/%.txt: %.in\n\tpip install $*\n";
        let make = read(text).unwrap();
        let run = |goal: &str| {
            let (scripts, unknown) = make.scripts(&[goal.to_string()], &BTreeMap::new());
            assert!(unknown.is_empty(), "{goal}: {unknown:?}");
            scripts
                .into_iter()
                .map(|s| s.text.trim().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            run("html"),
            [
                "pip install -r requirements-docs.txt",
                "sphinx-build -M html src out"
            ]
        );
        // An explicit rule outranks the pattern.
        assert_eq!(run("help"), ["sphinx-build -M help src out"]);
        // `$*` is the stem.
        assert_eq!(run("build/torch.txt"), ["pip install torch"]);
        assert!(make.has_target("linkcheck"));
    }

    #[test]
    fn a_goal_runs_its_prerequisites_first_with_variables_expanded() {
        assert_eq!(
            texts(&["test"]),
            vec![
                (13, "  uv --version".to_string()),
                (8, "  uv pip install -r requirements/ci.txt".to_string()),
                (9, " uv sync --frozen \\\n\t  --all-extras".to_string()),
                (16, "  uv run pytest ${ARGS}".to_string()),
                (17, " make -C docs html".to_string()),
            ]
        );
        // Both branches of a conditional count.
        assert_eq!(
            texts(&["lint"]),
            vec![
                (19, "        uvx ruff@0.6.0 check".to_string()),
                (21, " echo inside".to_string())
            ]
        );
        // The first target that is not special is the default goal.
        assert_eq!(
            read(MAKEFILE).unwrap().default_goal.as_deref(),
            Some("install")
        );
        assert_eq!(read(MAKEFILE).unwrap().vars["UV_FROZEN"], "1");
    }

    #[test]
    fn unknown_goals_and_bad_files() {
        let make = read(MAKEFILE).unwrap();
        let (_, unknown) = make.scripts(&["nope".to_string()], &BTreeMap::new());
        assert_eq!(unknown, vec!["nope".to_string()]);
        assert_eq!(read("\techo x\n").unwrap_err().line, 1);
        // Deep and cyclic prerequisites end.
        let cyclic = "a: b\n\techo a\nb: a\n\techo b\n";
        let (scripts, _) = read(cyclic)
            .unwrap()
            .scripts(&["a".to_string()], &BTreeMap::new());
        assert_eq!(scripts.len(), 2);
        let recursive = "X = $(X)$(X)\nall:\n\techo $(X)\n";
        let (scripts, _) = read(recursive).unwrap().scripts(&[], &BTreeMap::new());
        assert_eq!(scripts.len(), 1);
    }

    #[test]
    fn functions_and_the_shell() {
        let text = "V := $(shell cat VERSION)\nall:\n\tpip install x==$(V) $(if $(CI),--quiet)\n";
        let (scripts, _) = read(text).unwrap().scripts(&[], &BTreeMap::new());
        assert_eq!(
            scripts[0].text,
            " pip install x==$(cat VERSION) ${make_function}"
        );
        let mut set = BTreeMap::new();
        set.insert("V".to_string(), "1.0".to_string());
        let (scripts, _) = read(text).unwrap().scripts(&[], &set);
        assert_eq!(scripts[0].text, " pip install x==1.0 ${make_function}");
        let goal = ".DEFAULT_GOAL := ci\nlint:\n\truff check\nci:\n\tpip install torch\n";
        let (scripts, _) = read(goal).unwrap().scripts(&[], &BTreeMap::new());
        assert_eq!(scripts[0].text, " pip install torch");
    }

    #[test]
    fn targets_written_with_variables_and_functions_are_made() {
        let make = read("VENV := $(or $(VIRTUAL_ENV),.venv)\nACTIVATE = $(VENV)/bin/activate\nSTAMP = .stamp\nvenv: $(ACTIVATE) $(STAMP)\n$(ACTIVATE):\n\tuv sync --locked\n$(STAMP):\n\ttouch $@\n").unwrap();
        let (scripts, unknown) = make.scripts(&["venv".to_string()], &BTreeMap::new());
        let texts: Vec<&str> = scripts.iter().map(|s| s.text.trim()).collect();
        assert_eq!(texts, ["uv sync --locked", "touch .stamp"]);
        assert!(unknown.is_empty());
        assert!(make.has_target(".stamp"));
    }
}
