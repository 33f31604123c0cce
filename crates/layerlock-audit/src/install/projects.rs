//! Project managers: commands that install a project's environment from its
//! lock (or resolve it afresh), classified by what they read. `uv sync`,
//! `uv run` (it syncs first), `poetry install`, `pdm install|sync`,
//! `pipenv install|sync`, `hatch` environments, `conda env create -f`, tox,
//! nox and `setup.py install`.
//!
//! What each tool does with a lock that no longer matches its project,
//! from their documentation:
//! - uv: `sync` and `run` re-lock unless `--locked` (fail instead) or
//!   `--frozen` (use the lock as it is); `UV_LOCKED`/`UV_FROZEN` alike.
//! - poetry 1.8+: `install` refuses an inconsistent `poetry.lock`; without
//!   a lock it resolves and writes one.
//! - pdm: `install` re-locks a stale `pdm.lock` unless `--frozen-lockfile`
//!   or `--check`; `sync` installs the lock only.
//! - pipenv: `install` re-locks a stale `Pipfile.lock` unless `--deploy`
//!   or `--ignore-pipfile`; `sync` installs the lock only.
//! - hatch and tox have no lock: an environment resolves when created.

use layerlock_ci::conda_env::{self, Installer};

use super::{
    Arg, Class, Install, RequirementFiles, classify_conda, classify_file, classify_spec, short,
};

/// A word's static value, or "" when computed.
fn word(args: &[Arg], i: usize) -> &str {
    args.get(i).and_then(|a| a.value.as_deref()).unwrap_or("")
}

fn has(args: &[Arg], flags: &[&str]) -> bool {
    args.iter()
        .any(|a| a.value.as_deref().is_some_and(|v| flags.contains(&v)))
}

/// The value of the first of `names` (`--directory x`, `--directory=x`).
fn value_of<'a>(args: &'a [Arg], names: &[&str]) -> Option<&'a str> {
    for (i, a) in args.iter().enumerate() {
        let Some(v) = a.value.as_deref() else {
            continue;
        };
        if names.contains(&v) {
            return args.get(i + 1).and_then(|a| a.value.as_deref());
        }
        for name in names {
            if let Some(rest) = v.strip_prefix(name).and_then(|r| r.strip_prefix('='))
                && name.starts_with("--")
            {
                return Some(rest);
            }
        }
    }
    None
}

fn truthy(files: &dyn RequirementFiles, name: &str) -> bool {
    files
        .env_var(name)
        .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
}

fn install(tool: &str, class: Class, why: String) -> Option<Install> {
    Some(Install {
        tool: tool.to_string(),
        class,
        why,
    })
}

/// The lock beside the project a command works on: the nearest
/// `pyproject.toml` (or `Pipfile`) from `dir`, and `lock` next to it or,
/// for a uv workspace member, above it.
fn project_lock(
    files: &dyn RequirementFiles,
    dir: Option<&str>,
    manifest: &str,
    lock: &str,
    beside_only: bool,
) -> Result<String, Option<String>> {
    let Some(project) = files.project_file(dir, manifest) else {
        return Err(None);
    };
    let project_dir = project.rsplit_once('/').map_or("", |(d, _)| d);
    match files.project_file(dir, lock) {
        Some(found) => {
            let lock_dir = found.rsplit_once('/').map_or("", |(d, _)| d);
            let above = project_dir == lock_dir
                || (!beside_only
                    && (lock_dir.is_empty() || project_dir.starts_with(&format!("{lock_dir}/"))));
            if above { Ok(found) } else { Err(Some(project)) }
        }
        None => Err(Some(project)),
    }
}

/// The script `uv run` runs as a script: `--script FILE`, or a `.py` file
/// (or standard input) whose text holds inline metadata.
struct UvScript {
    path: String,
    /// Its text, when it could be read.
    text: Option<String>,
}

fn uv_script(args: &[Arg], files: &dyn RequirementFiles) -> Option<UvScript> {
    let flag = has(args, &["--script", "--gui-script"]);
    let run = super::subcommand_index(args)?;
    let operand = layerlock_walk::run_command_start(args, run + 1).and_then(|j| args.get(j));
    let path = operand.and_then(|a| a.value.clone());
    let text = path
        .as_deref()
        .and_then(|p| files.read_text(p))
        .map(|(_, t)| t);
    let script = path
        .as_deref()
        .is_some_and(|p| p.ends_with(".py") || p == "-")
        && text
            .as_deref()
            .is_some_and(|t| inline_dependencies(t).is_some());
    (flag || script).then(|| UvScript {
        path: path.unwrap_or_else(|| operand.map_or_else(String::new, |a| a.raw.clone())),
        text,
    })
}

impl UvScript {
    fn judge(&self, tool: &str, frozen: bool, files: &dyn RequirementFiles) -> Option<Install> {
        let path = short(&self.path);
        if frozen {
            return install(
                tool,
                Class::HashLocked,
                format!("the lock of `{path}` is installed as it is"),
            );
        }
        let Some(text) = &self.text else {
            return install(
                tool,
                Class::Unpinned,
                format!(
                    "`{path}` could not be read, so nothing proves its inline dependencies pinned"
                ),
            );
        };
        let Some(dependencies) = inline_dependencies(text) else {
            // No inline metadata: the script runs with nothing installed.
            return None;
        };
        if files.read_text(&format!("{}.lock", self.path)).is_some() {
            return install(
                tool,
                Class::MayResolve,
                format!(
                    "the lock of `{path}` is re-made when it no longer matches, without --locked or --frozen"
                ),
            );
        }
        match dependencies.iter().find(|d| !super::requirement_pinned(d)) {
            None if dependencies.is_empty() => None,
            None => install(
                tool,
                Class::Pinned,
                format!("the inline dependencies of `{path}` (PEP 723) are pinned"),
            ),
            Some(loose) => install(
                tool,
                Class::Unpinned,
                format!(
                    "the inline dependency `{}` of `{path}` (PEP 723) can resolve to any matching version",
                    short(loose)
                ),
            ),
        }
    }
}

/// The `dependencies` of a script's inline metadata (PEP 723): the TOML of
/// its `# /// script` block. `None` when it has no such block (or its TOML
/// does not parse: then nothing says what it needs).
fn inline_dependencies(text: &str) -> Option<Vec<String>> {
    let mut lines = text.lines().skip_while(|l| l.trim_end() != "# /// script");
    lines.next()?;
    let mut toml_text = String::new();
    for line in lines {
        let line = line.trim_end();
        if line == "# ///" {
            let table: toml::Table = toml::from_str(&toml_text).ok()?;
            let deps = match table.get("dependencies") {
                None => Vec::new(),
                Some(toml::Value::Array(items)) => items
                    .iter()
                    .map(|i| i.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()?,
                Some(_) => return None,
            };
            return Some(deps);
        }
        let content = line.strip_prefix("# ").or_else(|| line.strip_prefix('#'))?;
        toml_text.push_str(content);
        toml_text.push('\n');
    }
    None
}

/// `uv sync` and the sync `uv run` does first. `args` are uv's own and the
/// subcommand's options; `None` when nothing is synced (`--no-sync`, no
/// project).
pub(super) fn uv_sync(sub: &str, args: &[Arg], files: &dyn RequirementFiles) -> Option<Install> {
    let tool = format!("uv {sub}");
    // `uv run`'s own options end where the command it runs starts.
    let script = (sub == "run").then(|| uv_script(args, files)).flatten();
    let args = match super::subcommand_index(args) {
        Some(run) if sub == "run" => {
            &args[..layerlock_walk::run_command_start(args, run + 1).unwrap_or(args.len())]
        }
        _ => args,
    };
    let frozen = has(args, &["--frozen"]) || truthy(files, "UV_FROZEN");
    let locked = has(args, &["--locked"]) || truthy(files, "UV_LOCKED");
    // A script's inline dependencies (PEP 723) are installed with it,
    // from `SCRIPT.lock` when it is frozen or locked.
    if let Some(script) = script {
        return script.judge(&tool, frozen || locked, files);
    }
    if sub == "run"
        && (has(args, &["--no-sync", "--no-project"])
            || truthy(files, "UV_NO_SYNC")
            || truthy(files, "UV_NO_PROJECT"))
    {
        return None;
    }
    let dir = value_of(args, &["--directory", "--project"]);
    let upgrade = has(args, &["--upgrade", "-U", "--upgrade-package", "-P"]);
    match project_lock(files, dir, "pyproject.toml", "uv.lock", false) {
        // `uv run` outside a project runs the command, syncing nothing.
        Err(None) if sub == "run" => None,
        Ok(lock) if frozen || locked => install(
            &tool,
            Class::HashLocked,
            format!(
                "{} installs {lock} as it is, with its hashes",
                if frozen { "--frozen" } else { "--locked" }
            ),
        ),
        _ if frozen || locked => install(
            &tool,
            Class::HashLocked,
            "with --frozen or --locked it installs uv.lock or fails".to_string(),
        ),
        Ok(_) if upgrade => install(
            &tool,
            Class::Unpinned,
            "--upgrade resolves the project's dependencies afresh".to_string(),
        ),
        Ok(lock) => install(
            &tool,
            Class::MayResolve,
            format!(
                "without --locked or --frozen, {tool} re-locks when {lock} no longer matches the project"
            ),
        ),
        Err(Some(project)) => install(
            &tool,
            Class::Unpinned,
            format!("{project} has no uv.lock: {tool} resolves it afresh"),
        ),
        Err(None) => install(
            &tool,
            Class::Unpinned,
            "no pyproject.toml was found, so nothing proves what it installs".to_string(),
        ),
    }
}

/// `uv lock`, `poetry lock`, `pdm lock`, `pipenv lock`: nothing is
/// installed yet, but the lock is made again from what resolves now, so the
/// `--frozen` install after it is no better than a resolution. A check
/// (`--check`, `--locked`, `--dry-run`) changes nothing.
pub(super) fn relock(tool: &str, args: &[Arg]) -> Option<Install> {
    if has(
        args,
        &[
            "--check",
            "--locked",
            "--frozen",
            "--dry-run",
            "--check-exists",
            "--help",
            "-h",
        ],
    ) {
        return None;
    }
    install(
        tool,
        Class::Unpinned,
        format!(
            "{tool} resolves the project afresh, so what a later install of the lock installs is what resolves now"
        ),
    )
}

/// Specs given on the command line (`poetry add x`, `pipenv install x`):
/// classified as pip's are. `None` when there are none.
fn specs(tool: &str, args: &[Arg]) -> Option<Install> {
    let mut worst: Option<(Class, String)> = None;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let v = a.value.as_deref();
        if v.is_some_and(|v| v.starts_with('-')) {
            i += if v.is_some_and(|v| SPEC_VALUE_OPTIONS.contains(&v)) {
                2
            } else {
                1
            };
            continue;
        }
        let (c, why) = classify_spec(a, false);
        if worst.as_ref().is_none_or(|(w, _)| c > *w) {
            worst = Some((c, why));
        }
        i += 1;
    }
    worst.map(|(class, why)| Install {
        tool: tool.to_string(),
        class,
        why,
    })
}

/// Options of poetry, pdm and pipenv subcommands that take a value.
const SPEC_VALUE_OPTIONS: &[&str] = &[
    "-C",
    "--directory",
    "-P",
    "--project",
    "-G",
    "--group",
    "--with",
    "--without",
    "--only",
    "-E",
    "--extras",
    "-p",
    "--python",
    "--source",
    "--categories",
    "-L",
    "--lockfile",
    "-d",
    "--dev-group",
];

/// A lock-driven install: `HashLocked` with a strict flag or a lock-only
/// subcommand, `MayResolve` with a lock that may be re-made first, and
/// `Unpinned` without one.
fn from_lock(
    tool: &str,
    lock: Result<String, Option<String>>,
    strict: Option<&str>,
    loose: &str,
) -> Option<Install> {
    match (lock, strict) {
        (Ok(lock), Some(strict)) => install(
            tool,
            Class::HashLocked,
            format!("{strict}: it installs {lock} as it is, with its hashes"),
        ),
        (Ok(lock), None) => install(tool, Class::MayResolve, format!("{loose} ({lock})")),
        (Err(Some(project)), _) => install(
            tool,
            Class::Unpinned,
            format!("{project} has no lock beside it: {tool} resolves it afresh"),
        ),
        (Err(None), _) => install(
            tool,
            Class::Unpinned,
            "no project file was found, so nothing proves what it installs".to_string(),
        ),
    }
}

/// `poetry install|sync|add|update`.
fn poetry(args: &[Arg], files: &dyn RequirementFiles) -> Option<Option<Install>> {
    let (i, sub) = subcommand(args)?;
    let dir = value_of(args, &["-C", "--directory", "-P", "--project"]);
    let rest = &args[i + 1..];
    Some(match sub {
        "install" | "sync" => {
            let tool = format!("poetry {sub}");
            let lock = project_lock(files, dir, "pyproject.toml", "poetry.lock", true);
            // poetry 1.8+ refuses a lock that does not match the project.
            from_lock(&tool, lock, Some("poetry refuses a stale poetry.lock"), "")
        }
        "add" => specs("poetry add", rest),
        "update" => install(
            "poetry update",
            Class::Unpinned,
            "poetry update resolves the dependencies afresh".to_string(),
        ),
        "lock" => relock("poetry lock", rest),
        _ => return None,
    })
}

/// `pdm install|sync|add|update`.
fn pdm(args: &[Arg], files: &dyn RequirementFiles) -> Option<Option<Install>> {
    let (i, sub) = subcommand(args)?;
    let dir = value_of(args, &["-p", "--project"]);
    let rest = &args[i + 1..];
    let lock = || project_lock(files, dir, "pyproject.toml", "pdm.lock", true);
    Some(match sub {
        "install" => {
            let strict = if has(rest, &["--frozen-lockfile", "--no-lock"]) {
                Some("--frozen-lockfile")
            } else if has(rest, &["--check"]) {
                Some("--check refuses a stale pdm.lock")
            } else {
                None
            };
            from_lock(
                "pdm install",
                lock(),
                strict,
                "without --frozen-lockfile or --check, pdm install re-locks a stale pdm.lock",
            )
        }
        "sync" => from_lock(
            "pdm sync",
            lock(),
            Some("pdm sync installs the lock only"),
            "",
        ),
        "add" => specs("pdm add", rest),
        "update" => install(
            "pdm update",
            Class::Unpinned,
            "pdm update resolves the dependencies afresh".to_string(),
        ),
        "lock" => relock("pdm lock", rest),
        _ => return None,
    })
}

/// `pipenv install [pkgs]|sync|update`.
fn pipenv(args: &[Arg], files: &dyn RequirementFiles) -> Option<Option<Install>> {
    let (i, sub) = subcommand(args)?;
    let rest = &args[i + 1..];
    let lock = || project_lock(files, None, "Pipfile", "Pipfile.lock", true);
    Some(match sub {
        "install" => {
            if let Some(named) = specs("pipenv install", rest) {
                return Some(Some(named));
            }
            let strict = if has(rest, &["--deploy"]) {
                Some("--deploy refuses a stale Pipfile.lock")
            } else if has(rest, &["--ignore-pipfile"]) {
                Some("--ignore-pipfile")
            } else {
                None
            };
            from_lock(
                "pipenv install",
                lock(),
                strict,
                "without --deploy, pipenv install re-locks a stale Pipfile.lock",
            )
        }
        "sync" => from_lock(
            "pipenv sync",
            lock(),
            Some("pipenv sync installs the lock only"),
            "",
        ),
        "update" | "upgrade" => install(
            &format!("pipenv {sub}"),
            Class::Unpinned,
            format!("pipenv {sub} resolves the dependencies afresh"),
        ),
        "lock" => relock("pipenv lock", rest),
        _ => return None,
    })
}

/// `hatch env create`, `hatch run`, `hatch test`, `hatch shell`, `hatch
/// fmt`: each makes its environment first, resolving as it goes.
fn hatch(args: &[Arg]) -> Option<Option<Install>> {
    let (i, sub) = subcommand(args)?;
    let tool = match sub {
        "env" if word(args, i + 1) == "create" => "hatch env create".to_string(),
        "run" | "test" | "shell" | "fmt" => format!("hatch {sub}"),
        _ => return None,
    };
    Some(install(
        &tool,
        Class::Unpinned,
        "hatch installs an environment's dependencies as they resolve when it creates it (no lock)"
            .to_string(),
    ))
}

/// `tox …` and `nox …`: each environment's dependencies are installed when
/// it is created.
fn tox_or_nox(name: &str, args: &[Arg]) -> Option<Option<Install>> {
    // `tox --version`, `nox --list`: nothing is installed.
    if has(
        args,
        &[
            "--version",
            "--help",
            "-h",
            "--list",
            "-l",
            "-a",
            "--listenvs",
        ],
    ) {
        return Some(None);
    }
    let file = if name == "tox" {
        "tox.ini (or its config)"
    } else {
        "noxfile.py"
    };
    Some(install(
        name,
        Class::Unpinned,
        format!("{name} installs each environment's dependencies from {file} when it creates it"),
    ))
}

/// `conda env create|update [-f FILE]`, `micromamba create|install -f
/// FILE.yml`: the environment file's entries, conda's and pip's.
pub(super) fn conda_env_file(
    tool: &str,
    file: Option<&str>,
    files: &dyn RequirementFiles,
) -> Option<Install> {
    let path = file.unwrap_or("environment.yml");
    let Some((shown, text)) = files.read_text(path) else {
        return install(
            tool,
            Class::Unpinned,
            format!(
                "environment file `{}` could not be read, so nothing proves it pinned",
                short(path)
            ),
        );
    };
    let env = match conda_env::read(&text) {
        Ok(env) => env,
        Err(e) => {
            return install(
                tool,
                Class::Unpinned,
                format!("{shown}:{} cannot be read: {}", e.line, e.message),
            );
        }
    };
    let mut worst: Option<(Class, String)> = None;
    let mut pip_entries = false;
    for dep in &env.dependencies {
        let arg = Arg::lit(&dep.spec);
        let (class, why) = match dep.installer {
            // `python=3.12` and `pip` itself are the environment's, not packages
            // from an index that change run to run.
            Installer::Conda if is_interpreter(&dep.spec) => continue,
            Installer::Conda => classify_conda(&arg),
            Installer::Pip => {
                pip_entries = true;
                if let Some(path) = dep.spec.strip_prefix("-r").map(str::trim) {
                    classify_file(path, files)
                } else if dep.spec.starts_with("-e") {
                    (
                        Class::Unpinned,
                        format!("`{}` installs a project", dep.spec),
                    )
                } else if dep.spec.starts_with('-') {
                    continue;
                } else {
                    classify_spec(&arg, false)
                }
            }
        };
        if worst.as_ref().is_none_or(|(w, _)| class > *w) {
            worst = Some((class, format!("{shown}:{} {why}", dep.pos.line)));
        }
    }
    let (class, why) = worst.unwrap_or((Class::Pinned, format!("{shown} lists nothing")));
    let tool = if pip_entries {
        format!("{tool} (with pip:)")
    } else {
        tool.to_string()
    };
    install(&tool, class, why)
}

fn is_interpreter(spec: &str) -> bool {
    let name = spec
        .split(|c: char| "=<>!~ ".contains(c))
        .next()
        .unwrap_or(spec);
    matches!(name, "python" | "pip")
}

/// `conda|mamba env create|update`, or `micromamba|mamba|conda create|install
/// -f FILE.yml`; `None` when the command is not one of them.
fn conda(first: &str, args: &[Arg], files: &dyn RequirementFiles) -> Option<Option<Install>> {
    let (i, sub) = subcommand(args)?;
    let file = value_of(args, &["-f", "--file"]);
    if sub == "env" && matches!(word(args, i + 1), "create" | "update") {
        let tool = format!("{first} env {}", word(args, i + 1));
        return Some(conda_env_file(&tool, file, files));
    }
    let yaml = file.is_some_and(|f| f.ends_with(".yml") || f.ends_with(".yaml"));
    if matches!(sub, "create" | "install" | "update") && yaml {
        return Some(conda_env_file(&format!("{first} {sub}"), file, files));
    }
    None
}

/// The subcommand past global options: (index, name).
fn subcommand(args: &[Arg]) -> Option<(usize, &str)> {
    let mut i = 1;
    while let Some(a) = args.get(i) {
        let v = a.value.as_deref()?;
        if !v.starts_with('-') {
            return Some((i, v));
        }
        i += if SPEC_VALUE_OPTIONS.contains(&v) {
            2
        } else {
            1
        };
    }
    None
}

/// A project manager's install, or `None` when `args` (wrappers stripped)
/// is not one. `Some(None)`: the tool, but a command that installs nothing.
pub(super) fn classify(
    first: &str,
    args: &[Arg],
    files: &dyn RequirementFiles,
) -> Option<Option<Install>> {
    match first {
        "poetry" => poetry(args, files),
        "pdm" => pdm(args, files),
        "pipenv" => pipenv(args, files),
        "hatch" => hatch(args),
        "tox" | "nox" => tox_or_nox(first, args),
        "conda" | "mamba" | "micromamba" => conda(first, args, files),
        "pre-commit" | "prek" => pre_commit(first, args, files),
        _ => None,
    }
}

/// `pre-commit run|install-hooks|try-repo`, `pre-commit install
/// --install-hooks`: every hook repository is cloned at its `rev` and each
/// hook's environment installed, `additional_dependencies` with it.
fn pre_commit(first: &str, args: &[Arg], files: &dyn RequirementFiles) -> Option<Option<Install>> {
    let (_, sub) = subcommand(args)?;
    let installs = match sub {
        "run" | "install-hooks" | "try-repo" => true,
        "install" => has(args, &["--install-hooks"]),
        _ => false,
    };
    if !installs {
        return Some(None);
    }
    let tool = format!("{first} {sub}");
    if sub == "try-repo" {
        return Some(install(
            &tool,
            Class::Unpinned,
            "try-repo installs the hooks of the repository it is given, as they are at its head"
                .to_string(),
        ));
    }
    let config = value_of(args, &["-c", "--config"]).unwrap_or(".pre-commit-config.yaml");
    let found = match value_of(args, &["-c", "--config"]) {
        Some(path) => files.read_text(path),
        None => files
            .project_file(None, config)
            .and_then(|shown| files.read_text(&shown).or_else(|| files.read_text(config))),
    };
    let Some((shown, text)) = found else {
        return Some(install(
            &tool,
            Class::Unpinned,
            format!("`{config}` could not be read, so nothing proves what its hooks install"),
        ));
    };
    let repos = match layerlock_ci::pre_commit::read(&text) {
        Ok(repos) => repos,
        Err(e) => {
            return Some(install(
                &tool,
                Class::Unpinned,
                format!("{shown}:{} cannot be read: {}", e.line, e.message),
            ));
        }
    };
    let mut worst: Option<(Class, String)> = None;
    let mut raise = |class: Class, why: String| {
        if worst.as_ref().is_none_or(|(w, _)| class > *w) {
            worst = Some((class, why));
        }
    };
    for repo in &repos {
        if let Some((rev, pos)) = &repo.rev {
            let commit = rev.len() >= 40 && rev.chars().all(|c| c.is_ascii_hexdigit());
            if !commit {
                raise(
                    Class::Unpinned,
                    format!(
                        "{shown}:{} `rev: {rev}` of {} is a tag or branch, not a commit",
                        pos.line, repo.repo
                    ),
                );
            }
        }
        for (spec, pos) in &repo.dependencies {
            let (class, why) = classify_spec(&Arg::lit(spec), false);
            raise(class, format!("{shown}:{} {why}", pos.line));
        }
    }
    let (class, why) = worst.unwrap_or((
        Class::Pinned,
        format!("every hook of {shown} is pinned to a commit"),
    ));
    Some(install(&tool, class, why))
}

/// `python setup.py install|develop`: setuptools installs `install_requires`
/// as they resolve.
pub(super) fn setup_py(args: &[Arg]) -> Option<Install> {
    let script = args.get(1)?.value.as_deref()?;
    if script.rsplit('/').next() != Some("setup.py") {
        return None;
    }
    let sub = args[2..]
        .iter()
        .filter_map(|a| a.value.as_deref())
        .find(|v| !v.starts_with('-'))?;
    matches!(sub, "install" | "develop").then(|| Install {
        tool: format!("setup.py {sub}"),
        class: Class::Unpinned,
        why: format!("setup.py {sub} installs install_requires as they resolve"),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::super::{Class, classify};
    use super::*;

    /// A tree of files at the root, and the job's variables.
    #[derive(Default)]
    struct Tree {
        files: BTreeMap<&'static str, &'static str>,
        env: BTreeMap<&'static str, &'static str>,
    }

    impl RequirementFiles for Tree {
        fn read(&self, _: &str) -> Option<(String, layerlock_lock::RequirementsFile)> {
            None
        }
        fn env_var(&self, name: &str) -> Option<String> {
            self.env.get(name).map(|v| v.to_string())
        }
        fn project_file(&self, dir: Option<&str>, name: &str) -> Option<String> {
            let mut dir = dir.unwrap_or("").trim_matches('/').to_string();
            loop {
                let path = if dir.is_empty() {
                    name.to_string()
                } else {
                    format!("{dir}/{name}")
                };
                if self.files.contains_key(path.as_str()) {
                    return Some(path);
                }
                if dir.is_empty() {
                    return None;
                }
                dir = dir
                    .rsplit_once('/')
                    .map_or(String::new(), |(d, _)| d.to_string());
            }
        }
        fn read_text(&self, path: &str) -> Option<(String, String)> {
            self.files
                .get(path)
                .map(|t| (path.to_string(), t.to_string()))
        }
    }

    fn tree(files: &[&'static str]) -> Tree {
        Tree {
            files: files.iter().map(|f| (*f, "")).collect(),
            env: BTreeMap::new(),
        }
    }

    fn args(text: &str) -> Vec<Arg> {
        text.split_whitespace().map(Arg::lit).collect()
    }

    fn class(text: &str, tree: &Tree) -> Option<Class> {
        classify(&args(text), tree).map(|i| i.class)
    }

    #[test]
    fn a_dependency_group_is_classed_by_its_entries() {
        let mut project = tree(&[]);
        project.files.insert(
            "pyproject.toml",
            "[dependency-groups]\ntest = [\"pytest==8.3.3\", {include-group = \"lint\"}]\nlint = [\"ruff==0.6.9\"]\ndev = [\"pytest>=8\"]\n",
        );
        assert_eq!(
            class("pip install --group test", &project),
            Some(Class::Pinned)
        );
        assert_eq!(
            class("uv pip install --group=dev", &project),
            Some(Class::Unpinned)
        );
        assert_eq!(
            class("python -m pip install --group pyproject.toml:dev", &project),
            Some(Class::Unpinned)
        );
        // A missing group proves nothing; `uv add --group` adds, it does
        // not install the group.
        assert_eq!(
            class("pip install --group nope", &project),
            Some(Class::Unpinned)
        );
        assert_eq!(
            class("uv add --group dev ruff==0.6.9", &project),
            Some(Class::Pinned)
        );
        let install = classify(&args("pip install --group test --group dev"), &project).unwrap();
        assert!(
            install
                .why
                .contains("`pytest>=8` of dependency group `dev`"),
            "{}",
            install.why
        );
    }

    #[test]
    fn uv_sync_and_run_are_classed_by_their_lock_and_flags() {
        let locked = tree(&["pyproject.toml", "uv.lock"]);
        assert_eq!(class("uv sync", &locked), Some(Class::MayResolve));
        assert_eq!(class("uv sync --locked", &locked), Some(Class::HashLocked));
        assert_eq!(
            class("uv sync --frozen --all-extras", &locked),
            Some(Class::HashLocked)
        );
        assert_eq!(class("uv sync -U", &locked), Some(Class::Unpinned));
        assert_eq!(class("uv run pytest", &locked), Some(Class::MayResolve));
        assert_eq!(
            class("uv run --frozen pytest", &locked),
            Some(Class::HashLocked)
        );
        assert_eq!(class("uv run --no-sync pytest", &locked), None);
        assert_eq!(
            class("uv run --frozen --with pytest-xdist pytest", &locked),
            Some(Class::Unpinned)
        );
        // The runner syncs, and the command it runs installs too.
        assert_eq!(
            class("uv run --frozen pip install x==1.0", &locked),
            Some(Class::Pinned)
        );
        assert_eq!(
            class("uv run --frozen pip install x", &locked),
            Some(Class::Unpinned)
        );
        let unlocked = tree(&["pyproject.toml"]);
        assert_eq!(class("uv sync", &unlocked), Some(Class::Unpinned));
        // Outside a project, `uv run` runs the command, syncing nothing.
        assert_eq!(class("uv run pytest", &tree(&[])), None);
        assert_eq!(
            class("uv run --script x.py", &tree(&[])),
            Some(Class::Unpinned)
        );
        let meta = |deps: &str| {
            format!(
                "# /// script\n# requires-python = \">=3.11\"\n# dependencies = [{deps}]\n# ///\nprint(1)\n"
            )
        };
        let pinned: &'static str = meta("\"dunamai==1.22.0\"").leak();
        let loose: &'static str = meta("\"requests\"").leak();
        let mut scripts = tree(&["pyproject.toml", "uv.lock", "b.py.lock"]);
        scripts.files.insert("a.py", pinned);
        scripts.files.insert("b.py", pinned);
        scripts.files.insert("c.py", loose);
        scripts.files.insert("plain.py", "print(1)\n");
        assert_eq!(class("uv run a.py", &scripts), Some(Class::Pinned));
        assert_eq!(
            class("uv run --script b.py", &scripts),
            Some(Class::MayResolve)
        );
        assert_eq!(
            class("uv run --locked --script b.py", &scripts),
            Some(Class::HashLocked)
        );
        assert_eq!(class("uv run c.py", &scripts), Some(Class::Unpinned));
        // Without inline metadata, a project's `uv run` syncs the project.
        assert_eq!(class("uv run plain.py", &scripts), Some(Class::MayResolve));
        let mut frozen = tree(&["pyproject.toml", "uv.lock"]);
        frozen.env.insert("UV_FROZEN", "1");
        assert_eq!(class("uv run pytest", &frozen), Some(Class::HashLocked));
        frozen.env.insert("UV_FROZEN", "0");
        assert_eq!(class("uv run pytest", &frozen), Some(Class::MayResolve));
        // A workspace member's lock is at the workspace root.
        let workspace = tree(&["pyproject.toml", "uv.lock", "libs/a/pyproject.toml"]);
        assert_eq!(
            class("uv sync --locked --directory libs/a", &workspace),
            Some(Class::HashLocked)
        );
        assert_eq!(
            class("uv --directory libs/a sync", &workspace),
            Some(Class::MayResolve)
        );
    }

    #[test]
    fn poetry_pdm_pipenv_and_hatch() {
        let poetry = tree(&["pyproject.toml", "poetry.lock"]);
        assert_eq!(
            class("poetry install --no-root", &poetry),
            Some(Class::HashLocked)
        );
        assert_eq!(
            class("poetry install", &tree(&["pyproject.toml"])),
            Some(Class::Unpinned)
        );
        assert_eq!(
            class("poetry add requests==2.32.3", &poetry),
            Some(Class::Pinned)
        );
        assert_eq!(class("poetry update", &poetry), Some(Class::Unpinned));
        assert_eq!(class("poetry run pytest", &poetry), None);
        assert_eq!(
            class("poetry run pip install x", &poetry),
            Some(Class::Unpinned)
        );
        assert_eq!(class("poetry lock", &poetry), Some(Class::Unpinned));
        assert_eq!(class("poetry lock --check", &poetry), None);
        assert_eq!(class("uv lock --upgrade", &poetry), Some(Class::Unpinned));
        assert_eq!(class("uv lock --check", &poetry), None);
        let pdm = tree(&["pyproject.toml", "pdm.lock"]);
        assert_eq!(class("pdm install", &pdm), Some(Class::MayResolve));
        assert_eq!(
            class("pdm install --frozen-lockfile", &pdm),
            Some(Class::HashLocked)
        );
        assert_eq!(class("pdm sync -G test", &pdm), Some(Class::HashLocked));
        let pipenv = tree(&["Pipfile", "Pipfile.lock"]);
        assert_eq!(
            class("pipenv install --dev", &pipenv),
            Some(Class::MayResolve)
        );
        assert_eq!(
            class("pipenv install --deploy", &pipenv),
            Some(Class::HashLocked)
        );
        assert_eq!(class("pipenv sync", &pipenv), Some(Class::HashLocked));
        assert_eq!(
            class("pipenv install requests", &pipenv),
            Some(Class::Unpinned)
        );
        assert_eq!(class("hatch run test", &tree(&[])), Some(Class::Unpinned));
        assert_eq!(class("hatch env create", &tree(&[])), Some(Class::Unpinned));
        assert_eq!(class("hatch build", &tree(&[])), None);
        assert_eq!(class("tox -e py311", &tree(&[])), Some(Class::Unpinned));
        assert_eq!(
            class("python -m nox -s tests", &tree(&[])),
            Some(Class::Unpinned)
        );
        assert_eq!(class("tox --version", &tree(&[])), None);
        assert_eq!(
            class("python setup.py develop", &tree(&[])),
            Some(Class::Unpinned)
        );
        assert_eq!(class("python setup.py sdist", &tree(&[])), None);
    }

    #[test]
    fn conda_environment_files_are_read() {
        let mut t = tree(&[]);
        t.files.insert(
            "environment.yml",
            "dependencies:\n  - python=3.11\n  - numpy=1.26.4\n  - pip:\n    - torch==2.5.1\n",
        );
        t.files.insert(
            "ci/env.yml",
            "dependencies:\n  - numpy=1.26.4\n  - pip:\n    - torch\n",
        );
        assert_eq!(class("conda env create", &t), Some(Class::Pinned));
        let found = classify(&args("mamba env update -f ci/env.yml"), &t).unwrap();
        assert_eq!(found.class, Class::Unpinned);
        assert!(found.why.starts_with("ci/env.yml:4 "), "{}", found.why);
        assert_eq!(found.tool, "mamba env update (with pip:)");
        assert_eq!(
            class("micromamba create -y -f ci/env.yml", &t),
            Some(Class::Unpinned)
        );
        assert_eq!(
            class("conda env create -f missing.yml", &t),
            Some(Class::Unpinned)
        );
        assert_eq!(class("conda env list", &t), None);
    }

    #[test]
    fn pre_commit_installs_its_hooks() {
        let mut t = tree(&[".pre-commit-config.yaml"]);
        t.files.insert(
            ".pre-commit-config.yaml",
            "repos:\n  - repo: https://github.com/psf/black\n    rev: 24.1.0\n    hooks: [{id: black}]\n",
        );
        assert_eq!(
            class("pre-commit run --all-files", &t),
            Some(Class::Unpinned)
        );
        assert_eq!(
            class("pre-commit install --install-hooks", &t),
            Some(Class::Unpinned)
        );
        assert_eq!(class("pre-commit install", &t), None);
        t.files.insert(
            ".pre-commit-config.yaml",
            "repos:\n  - repo: https://github.com/psf/black\n    rev: 0123456789abcdef0123456789abcdef01234567\n    hooks: [{id: black, additional_dependencies: [click==8.1.7]}]\n",
        );
        assert_eq!(class("pre-commit run", &t), Some(Class::Pinned));
    }
}
