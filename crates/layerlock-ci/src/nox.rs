//! noxfile.py and tox.ini: the installs a `nox` or `tox` run makes, each at
//! its line, as the pip commands they come to.
//!
//! noxfile.py is read, not run: `@nox.session` functions (their names, or
//! `name=`), and in their bodies `session.install(…)` and
//! `session.run("pip"|"uv"|"python", …, "install", …)` with their literal
//! arguments (a computed one is a command substitution, so nothing claims
//! it is pinned). tox.ini: each `[testenv]`/`[testenv:NAME]` section's
//! `deps` (one install per line), `dependency_groups`, `usedevelop` (a
//! named section's `usedevelop = false` or `skip_install = true`
//! overrides the base's) and `commands`.

use crate::script::{Layout, Script};
use crate::yaml::Pos;

/// An install found, as a shell command at its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub text: String,
    pub pos: Pos,
    /// tox's factor conditions (`py312,lint: pytest`): the step holds for
    /// an environment whose name has one of them; empty for all.
    pub factors: Vec<String>,
    /// A tox `deps` line: an environment with `deps` of its own does not
    /// take `[testenv]`'s.
    pub deps: bool,
    /// tox's `usedevelop = true`: an environment that says
    /// `usedevelop = false` or `skip_install = true` does not take
    /// `[testenv]`'s.
    pub develop: bool,
}

/// Sessions (nox) or environments (tox) and their steps, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Environments {
    sessions: Vec<(String, Vec<Step>)>,
    /// `nox.options.sessions` or tox's `envlist`: what runs by default.
    defaults: Option<Vec<String>>,
    /// tox environments that install no project of their own
    /// (`usedevelop = false`, `skip_install = true`).
    no_develop: Vec<String>,
}

/// A computed argument stands for this: the audit sees a command
/// substitution, which nothing calls pinned.
const COMPUTED: &str = "\"$(python-expression)\"";

/// Every session, whatever the selection (`nox -s "$SESSION"`).
pub const ALL: &str = "\u{0}all";

impl Environments {
    /// The steps of sessions named by a command line's selection: every
    /// session for [`ALL`].
    pub fn selected(&self, goals: &[String], tox: bool) -> Vec<Script> {
        let selection = (!goals.iter().any(|g| g == ALL)).then_some(goals);
        if tox {
            self.tox_scripts(selection)
        } else {
            self.scripts(selection)
        }
    }

    /// Whether a selected name matches a session.
    pub fn has(&self, selected: &str) -> bool {
        selected == ALL || self.sessions.iter().any(|(n, _)| matches(selected, n))
    }
}

impl Environments {
    /// The steps of the sessions `selected` names (`test` also selects
    /// `test-3.12`, as nox and tox name parametrized ones); all default
    /// sessions when `selected` is empty; every session when `None` (the
    /// selection is known only at run time).
    pub fn scripts(&self, selected: Option<&[String]>) -> Vec<Script> {
        let chosen = |name: &str| match selected {
            None => true,
            Some([]) => self
                .defaults
                .as_ref()
                .is_none_or(|d| d.iter().any(|s| matches(s, name))),
            Some(names) => names.iter().any(|s| matches(s, name)),
        };
        self.sessions
            .iter()
            .filter(|(name, _)| chosen(name))
            .flat_map(|(_, steps)| steps.iter())
            .map(|step| Script::job_time(step.text.clone(), Layout::Lines { start: step.pos }))
            .collect()
    }

    /// Session names.
    pub fn names(&self) -> Vec<&str> {
        self.sessions.iter().map(|(n, _)| n.as_str()).collect()
    }
}

fn matches(selected: &str, name: &str) -> bool {
    selected == name
        || selected
            .strip_prefix(name)
            .is_some_and(|rest| rest.starts_with('-') || rest.starts_with('('))
}

/// Read a noxfile.
pub fn read_noxfile(text: &str) -> Environments {
    let lines: Vec<&str> = text.lines().collect();
    let mut env = Environments::default();
    let mut pending: Option<Option<String>> = None;
    let mut current: Option<(usize, usize)> = None; // (session index, def indent)
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some((_, def_indent)) = current
            && !trimmed.is_empty()
            && !trimmed.starts_with('#')
            && indent <= def_indent
        {
            current = None;
        }
        if trimmed.starts_with("nox.options.sessions") {
            let (call, _) = gather(&lines, i, trimmed.find('[').map_or(0, |c| indent + c));
            env.defaults = Some(literals(&call).into_iter().flatten().collect());
        }
        if trimmed.starts_with("@nox.session") || trimmed.starts_with("@session") {
            let (decorator, next) = gather(&lines, i, indent);
            pending = Some(keyword(&decorator, "name"));
            i = next;
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix("def ")
            && let Some(named) = pending.take()
        {
            let name = named.unwrap_or_else(|| {
                rest.split(['(', ':'])
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_string()
            });
            env.sessions.push((name, Vec::new()));
            current = Some((env.sessions.len() - 1, indent));
            i += 1;
            continue;
        }
        if !trimmed.starts_with('@') && !trimmed.is_empty() {
            pending = None;
        }
        if let Some((index, _)) = current {
            for (column, call) in calls(line) {
                let (text, _) = gather(&lines, i, column);
                if let Some(step) = step(call, &text) {
                    env.sessions[index].1.push(Step {
                        text: step,
                        pos: Pos {
                            line: i + 1,
                            column: column + 1,
                        },
                        factors: Vec::new(),
                        deps: false,
                        develop: false,
                    });
                }
            }
        }
        i += 1;
    }
    env
}

/// `session.install(` and `session.run(` on a line: (byte column, which).
fn calls(line: &str) -> Vec<(usize, &'static str)> {
    let mut out = Vec::new();
    for name in [
        "install",
        "conda_install",
        "run",
        "run_always",
        "run_install",
    ] {
        let pattern = format!("session.{name}(");
        let mut from = 0;
        while let Some(at) = line[from..].find(&pattern) {
            out.push((from + at, name));
            from += at + pattern.len();
        }
    }
    out.sort_unstable();
    out
}

/// The call's text from `lines[i][column..]` to its closing parenthesis
/// (at most 50 lines), and the index of the line after it.
fn gather(lines: &[&str], i: usize, column: usize) -> (String, usize) {
    let mut text = String::new();
    let mut depth = 0i32;
    let mut opened = false;
    let mut j = i;
    while j < lines.len() && j < i + 50 {
        let part = if j == i {
            lines[j].get(column..).unwrap_or("")
        } else {
            lines[j]
        };
        text.push_str(part);
        text.push('\n');
        for c in part.chars() {
            match c {
                '(' | '[' => {
                    depth += 1;
                    opened = true;
                }
                ')' | ']' => depth -= 1,
                _ => {}
            }
        }
        j += 1;
        if !opened || depth <= 0 {
            break;
        }
    }
    (text, j)
}

/// The positional arguments of a call as literals (`None` where computed),
/// keyword arguments left out.
fn literals(call: &str) -> Vec<Option<String>> {
    let Some(open) = call.find(['(', '[']) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut literal: Option<String> = None;
    let mut other = false;
    let mut finish = |current: &mut String, literal: &mut Option<String>, other: &mut bool| {
        let trimmed = current.trim();
        let keyword = trimmed.split_once('=').is_some_and(|(k, _)| {
            k.trim().chars().all(|c| c.is_alphanumeric() || c == '_') && !k.trim().is_empty()
        });
        if !trimmed.is_empty() && !keyword && !trimmed.starts_with("**") {
            out.push(if *other { None } else { literal.take() });
        }
        current.clear();
        *literal = None;
        *other = false;
    };
    for c in call[open + 1..].chars() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            } else if let Some(l) = literal.as_mut() {
                l.push(c);
            }
            current.push(c);
            continue;
        }
        match c {
            '"' | '\'' if depth == 0 => {
                quote = Some(c);
                if literal.is_some() || !current.trim().is_empty() {
                    other = true;
                }
                literal = Some(String::new());
                current.push(c);
            }
            '(' | '[' | '{' => {
                depth += 1;
                current.push(c);
                other = true;
            }
            ')' | ']' | '}' if depth == 0 => {
                finish(&mut current, &mut literal, &mut other);
                break;
            }
            ')' | ']' | '}' => {
                depth -= 1;
                current.push(c);
            }
            ',' if depth == 0 => finish(&mut current, &mut literal, &mut other),
            c if c.is_whitespace() => current.push(c),
            '#' => {}
            c => {
                current.push(c);
                // A name or a call: computed (but `f"…"` is still text
                // with holes; treated as computed).
                other = true;
            }
        }
    }
    out
}

/// `name="x"` in a decorator.
fn keyword(text: &str, name: &str) -> Option<String> {
    let at = text.find(&format!("{name}="))?;
    let rest = &text[at + name.len() + 1..];
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let end = rest[1..].find(quote)?;
    Some(rest[1..1 + end].to_string())
}

/// The pip command a call comes to, if it installs.
fn step(call: &str, text: &str) -> Option<String> {
    let args = literals(text);
    let words: Vec<String> = args
        .iter()
        .map(|a| {
            a.as_ref()
                .map_or(COMPUTED.to_string(), |v| layerlock_shell::quote(v))
        })
        .collect();
    match call {
        "install" => (!words.is_empty()).then(|| format!("pip install {}", words.join(" "))),
        "conda_install" => {
            (!words.is_empty()).then(|| format!("conda install {}", words.join(" ")))
        }
        _ => {
            // `session.run("pip", "install", …)`, `("uv", "pip", "install",
            // …)`, `("python", "-m", "pip", "install", …)`.
            let values: Vec<&str> = args.iter().map(|a| a.as_deref().unwrap_or("")).collect();
            let installs = values
                .windows(2)
                .any(|w| w[1] == "install" && matches!(w[0], "pip" | "pip3" | "sync"))
                || values.first().is_some_and(|v| *v == "uv" || *v == "uvx");
            installs.then(|| words.join(" "))
        }
    }
}

/// Read a tox.ini: each environment's `deps` lines (factor conditions
/// kept), `commands`, and `usedevelop = true` (the project installed with
/// `-e`), with tox's `{toxinidir}`, `{envpython}` and `{posargs}` put in.
pub fn read_tox_ini(text: &str) -> Environments {
    let mut env = Environments::default();
    let mut section: Option<String> = None;
    let mut key: Option<String> = None;
    let mut base: Vec<Step> = Vec::new();
    let mut named: Vec<(String, Vec<Step>)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') && trimmed.ends_with(']') {
            section = Some(trimmed[1..trimmed.len() - 1].trim().to_string());
            key = None;
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        let continuation = line.starts_with([' ', '\t']);
        let (value, column) = if continuation {
            (trimmed, line.len() - line.trim_start().len())
        } else if let Some((k, v)) = line.split_once('=') {
            key = Some(k.trim().to_string());
            let column = k.len() + 1 + (v.len() - v.trim_start().len());
            (v.trim(), column)
        } else {
            continue;
        };
        let Some(section) = &section else { continue };
        if section == "tox" && key.as_deref() == Some("envlist") {
            let names = value
                .split([',', ' '])
                .filter(|n| !n.is_empty())
                .map(str::to_string);
            env.defaults.get_or_insert_with(Vec::new).extend(names);
            continue;
        }
        let (factors, value, column) = factor_condition(value, column);
        let value = substitute(value);
        let truth = |v: &str| v.eq_ignore_ascii_case("true");
        let no_project = match key.as_deref() {
            Some("usedevelop") => !truth(&value),
            Some("skip_install") => truth(&value),
            _ => false,
        };
        if no_project && factors.is_empty() {
            if let Some(name) = section.strip_prefix("testenv:") {
                env.no_develop.push(name.to_string());
            } else if section == "testenv" {
                base.retain(|s: &Step| !s.develop);
            }
            continue;
        }
        let text = match key.as_deref() {
            Some("deps") if !value.is_empty() => format!("pip install {value}"),
            Some("commands" | "commands_pre") if !value.is_empty() => value,
            Some("usedevelop") if truth(&value) => "pip install -e .".to_string(),
            // tox 4.22: dependency groups of pyproject.toml, by name.
            Some("dependency_groups") if !value.is_empty() => value
                .split([',', ' '])
                .filter(|g| !g.is_empty())
                .map(|g| format!("pip install --group {g}"))
                .collect::<Vec<_>>()
                .join(" && "),
            _ => continue,
        };
        let step = Step {
            text,
            pos: Pos {
                line: i + 1,
                column: column + 1,
            },
            factors,
            deps: key.as_deref() == Some("deps"),
            develop: key.as_deref() == Some("usedevelop"),
        };
        if section == "testenv" {
            base.push(step);
        } else if let Some(name) = section.strip_prefix("testenv:") {
            match named.iter_mut().find(|(n, _)| n == name) {
                Some((_, steps)) => steps.push(step),
                None => named.push((name.to_string(), vec![step])),
            }
        }
    }
    // `[testenv]` holds for every environment; a named one adds its own.
    if !base.is_empty() {
        env.sessions.push((String::new(), base));
    }
    env.sessions.extend(named);
    env
}

/// `py312,lint: pytest` → (["py312", "lint"], "pytest", its column).
fn factor_condition(value: &str, column: usize) -> (Vec<String>, &str, usize) {
    if let Some((factors, rest)) = value.split_once(": ")
        && !factors.is_empty()
        && factors
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.,!-".contains(c))
    {
        let skipped = value.len() - rest.trim_start().len();
        let factors = factors.split(',').map(str::to_string).collect();
        return (factors, rest.trim_start(), column + skipped);
    }
    (Vec::new(), value, column)
}

/// tox's substitutions the audit can make: paths from the tox.ini's
/// folder (where the walker runs its steps), the env's python, no
/// positional arguments.
fn substitute(value: &str) -> String {
    value
        .replace("{toxinidir}/", "")
        .replace("{toxinidir}", ".")
        .replace("{envpython}", "python")
        .replace("{posargs}", "")
        .trim_end()
        .to_string()
}

/// Whether a step with these factor conditions holds for an environment
/// named `env` (`3.12-integration-redis` has factors 3.12, integration,
/// redis).
fn applies(factors: &[String], env: &str) -> bool {
    if factors.is_empty() {
        return true;
    }
    let own: Vec<&str> = env.split('-').collect();
    factors.iter().any(|f| match f.strip_prefix('!') {
        Some(not) => !own.contains(&not),
        None => f.split('-').all(|part| own.contains(&part)),
    })
}

impl Environments {
    /// tox: the base `[testenv]` steps always run with any environment.
    pub fn tox_scripts(&self, selected: Option<&[String]>) -> Vec<Script> {
        let mut out = Vec::new();
        if let Some((name, steps)) = self.sessions.first()
            && name.is_empty()
        {
            // The base steps whose factors one of the environments run has
            // (all of them when which ones run is not known).
            let names: Option<Vec<&str>> = match selected {
                None => None,
                Some([]) => self
                    .defaults
                    .as_ref()
                    .map(|d| d.iter().map(String::as_str).collect()),
                Some(names) => Some(names.iter().map(String::as_str).collect()),
            };
            // An environment that sets `deps` itself replaces the base's.
            let own_deps = |env: &str| {
                self.sessions.iter().any(|(n, steps)| {
                    !n.is_empty() && matches(env, n) && steps.iter().any(|s| s.deps)
                })
            };
            // One that installs no project drops the base's `usedevelop`.
            let no_develop = |env: &str| self.no_develop.iter().any(|n| matches(env, n));
            let keeps = |s: &Step, e: &str| {
                applies(&s.factors, e) && !(s.deps && own_deps(e)) && !(s.develop && no_develop(e))
            };
            let steps = steps
                .iter()
                .filter(|s| names.as_ref().is_none_or(|n| n.iter().any(|e| keeps(s, e))))
                .cloned()
                .collect();
            let base = Environments {
                sessions: vec![(String::new(), steps)],
                defaults: None,
                no_develop: Vec::new(),
            };
            out.extend(base.scripts(None));
        }
        let named = Environments {
            sessions: self
                .sessions
                .iter()
                .filter(|(n, _)| !n.is_empty())
                .cloned()
                .collect(),
            defaults: self.defaults.clone(),
            no_develop: Vec::new(),
        };
        out.extend(named.scripts(selected));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOXFILE: &str = r#"import nox

nox.options.sessions = ["test", "lint"]
INSTALL_ENV = {}

@nox.session(python=["3.9", "3.12"])
def test(session):
    session.install("-e", ".[dev]", env=INSTALL_ENV, silent=False)
    session.run("pytest")

@nox.session()
def lint(session):
    session.install(
        "flake8",
        "black~=25.0",
    )
    session.run("python", "-m", "pip", "install", *EXTRA)
    session.run_always("pip", "install", "rich")

@nox.session(name="docs-build")
def docs(session):
    session.install("sphinx==7.2.6")

def helper(session):
    session.install("not-a-session")
"#;

    fn lines(scripts: &[Script]) -> Vec<(usize, String)> {
        scripts
            .iter()
            .map(|s| {
                let Layout::Lines { start } = s.layout else {
                    panic!("lines")
                };
                (start.line, s.text.clone())
            })
            .collect()
    }

    #[test]
    fn noxfile_sessions_and_their_installs() {
        let nox = read_noxfile(NOXFILE);
        assert_eq!(nox.names(), vec!["test", "lint", "docs-build"]);
        assert_eq!(
            lines(&nox.scripts(Some(&[]))),
            vec![
                // Written back as a shell reads them: `[` is a glob, `~`
                // expands at a word's start.
                (8, "pip install -e '.[dev]'".to_string()),
                (13, "pip install flake8 'black~=25.0'".to_string()),
                (
                    17,
                    "python -m pip install \"$(python-expression)\"".to_string()
                ),
                (18, "pip install rich".to_string()),
            ]
        );
        assert_eq!(
            lines(&nox.scripts(Some(&["docs-build".to_string()]))),
            vec![(22, "pip install sphinx==7.2.6".to_string())]
        );
        assert_eq!(nox.scripts(Some(&["test-3.12".to_string()])).len(), 1);
        assert_eq!(nox.scripts(None).len(), 5);
    }

    #[test]
    fn tox_env_settings_override_the_base_and_groups_install() {
        let tox = read_tox_ini(
            "[testenv]\nusedevelop = true\ncommands = pytest\n\n[testenv:lint]\nskip_install = true\ncommands = ruff check\n\n[testenv:docs]\nusedevelop = false\ndependency_groups =\n    docs\n\n[testenv:py]\ndependency_groups = test, cov\n",
        );
        let run = |env: &str| lines(&tox.tox_scripts(Some(&[env.to_string()])));
        assert_eq!(
            run("lint"),
            vec![(3, "pytest".to_string()), (7, "ruff check".to_string())]
        );
        assert_eq!(
            run("docs"),
            vec![
                (3, "pytest".to_string()),
                (12, "pip install --group docs".to_string())
            ]
        );
        assert_eq!(
            run("py"),
            vec![
                (2, "pip install -e .".to_string()),
                (3, "pytest".to_string()),
                (
                    15,
                    "pip install --group test && pip install --group cov".to_string()
                )
            ]
        );
    }

    #[test]
    fn tox_ini_deps_and_commands() {
        let tox = read_tox_ini(
            "[tox]\nenvlist = py311, lint\n\n[testenv]\ndeps =\n    pytest==8.0.0\n    -r requirements.txt\ncommands = pytest {posargs}\n\n[testenv:lint]\ndeps = ruff\ncommands = ruff check\n\n[testenv:docs]\ndeps = sphinx\n",
        );
        assert_eq!(
            lines(&tox.tox_scripts(Some(&[]))),
            vec![
                (6, "pip install pytest==8.0.0".to_string()),
                (7, "pip install -r requirements.txt".to_string()),
                (8, "pytest".to_string()),
                (11, "pip install ruff".to_string()),
                (12, "ruff check".to_string()),
            ]
        );
        assert_eq!(tox.tox_scripts(Some(&["docs".to_string()])).len(), 2);
        // `[testenv:lint]` has deps of its own: the base's are not its.
        assert_eq!(
            lines(&tox.tox_scripts(Some(&["lint".to_string()]))),
            vec![
                (8, "pytest".to_string()),
                (11, "pip install ruff".to_string()),
                (12, "ruff check".to_string()),
            ]
        );
        let factors = read_tox_ini(
            "[testenv]\ndeps =\n    -r{toxinidir}/requirements/test.txt\n    3.12,pypy3: hypothesis\n    lint: pre-commit\nusedevelop = True\n",
        );
        assert_eq!(
            lines(&factors.tox_scripts(Some(&["3.12-unit".to_string()]))),
            vec![
                (3, "pip install -rrequirements/test.txt".to_string()),
                (4, "pip install hypothesis".to_string()),
                (6, "pip install -e .".to_string()),
            ]
        );
        assert_eq!(factors.tox_scripts(None).len(), 4);
    }
}
