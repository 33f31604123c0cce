//! Recognising a package install in one command's argv and classifying what
//! it can resolve: `hash-locked`, `pinned`, `run-time`, `may-resolve` or
//! `unpinned`. Project managers (uv's project commands, poetry, pdm,
//! pipenv, hatch, conda environment files, tox and nox) are in
//! `projects.rs`.

mod projects;

use std::str::FromStr;

use serde::Serialize;
use uv_pep508::{Requirement, VerbatimUrl, VersionOrUrl};

/// How much an install can change from run to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// `--require-hashes`, or a `-r` file whose every entry is hashed.
    HashLocked,
    /// Exact versions or commit-pinned URLs, without hashes.
    Pinned,
    /// What is installed is known only when the job runs: a version, file
    /// or URL held in a variable the repository does not set.
    RunTime,
    /// A project manager installs its lock, but re-locks first when the
    /// lock no longer matches the project (`uv sync` without `--locked`).
    MayResolve,
    /// Can resolve arbitrary versions.
    Unpinned,
}

impl Class {
    /// Every class, in the order of their names.
    pub const ALL: [Self; 5] = [
        Self::HashLocked,
        Self::MayResolve,
        Self::Pinned,
        Self::RunTime,
        Self::Unpinned,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::HashLocked => "hash-locked",
            Self::Pinned => "pinned",
            Self::RunTime => "run-time",
            Self::MayResolve => "may-resolve",
            Self::Unpinned => "unpinned",
        }
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// A recognised install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Install {
    /// `pip install`, `uv pip install`, `uvx`, `conda install`, …
    pub tool: String,
    pub class: Class,
    /// Why that class, in words: the first thing that made it so.
    pub why: String,
}

/// A word as quoted in a message: its first line, at most 60 characters.
fn short(raw: &str) -> String {
    let first = raw.lines().next().unwrap_or("");
    let mut out: String = first.chars().take(60).collect();
    if out.len() < raw.len() {
        out.push('…');
    }
    out
}

pub use layerlock_walk::{Arg, RequirementFiles};
use layerlock_walk::{
    RUN_VALUE_OPTIONS, is_python, program, project_runner, run_command_start, strip_to_runner,
};

fn is_pip(name: &str) -> bool {
    name == "pip"
        || name
            .strip_prefix("pip")
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Options taking a value, across pip, uv, pipx and conda: their values are
/// not requirements.
const VALUE_OPTIONS: &[&str] = &[
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--only-binary",
    "--no-binary",
    "--progress-bar",
    "--src",
    "--upgrade-strategy",
    "-C",
    "--config-settings",
    "--global-option",
    "--install-option",
    "--trusted-host",
    "--cache-dir",
    "--log",
    "--proxy",
    "--timeout",
    "--retries",
    "--cert",
    "--client-cert",
    "--python",
    "-p",
    "--index-strategy",
    "--torch-backend",
    "--exclude-newer",
    "--extra",
    "--group",
    "--resolution",
    "--prerelease",
    "--keyring-provider",
    "--index",
    "--default-index",
    "--link-mode",
    "--python-platform",
    "--directory",
    "--project",
    "--reinstall-package",
    "--no-build-isolation-package",
    "--refresh-package",
    "--upgrade-package",
    "-P",
    "--compile-bytecode-timeout",
    "-n",
    "--name",
    "-c",
    "--channel",
    "--override",
    "--build-constraint",
    "--package",
    "--suffix",
    "--pip-args",
    "--spec",
    "--env",
    "--with-editable",
    "--from",
    "--python-preference",
    "-d",
    "--dest",
    "--dist-dir",
    "--requirements-txt",
    "--prefix-path",
    "--override-file",
];

/// Whether a requirement string is an exact pin (`a==1.0`, a fixed URL).
fn requirement_pinned(text: &str) -> bool {
    layerlock_dist::MarkerWeight::of_requirement(text)
        .refusal()
        .is_none()
        && Requirement::<VerbatimUrl>::from_str(text).is_ok_and(|r| exact(&r))
}

fn exact(requirement: &Requirement<VerbatimUrl>) -> bool {
    match &requirement.version_or_url {
        Some(VersionOrUrl::VersionSpecifier(_)) => {
            layerlock_lock::exact_version(requirement).is_some()
        }
        Some(VersionOrUrl::Url(url)) => url_pinned(&url.to_string()),
        None => false,
    }
}

/// A VCS URL is pinned at a full commit; an archive URL names one file.
fn url_pinned(url: &str) -> bool {
    let url = url.split('#').next().unwrap_or(url);
    if url.starts_with("git+")
        || url.starts_with("hg+")
        || url.starts_with("svn+")
        || url.starts_with("bzr+")
    {
        let Some((_, rev)) = url.rsplit_once('@') else {
            return false;
        };
        return rev.len() >= 40 && rev.chars().all(|c| c.is_ascii_hexdigit());
    }
    if let Some(rev) = archive_ref(url) {
        return fixed_ref(rev);
    }
    url.ends_with(".whl") || url.ends_with(".tar.gz") || url.ends_with(".zip")
}

/// The revision a code host's archive URL is made from, whatever it is:
/// `…/archive/main.zip`, `…/archive/refs/heads/dev.tar.gz`,
/// `…/-/archive/v1.0/x-v1.0.tar.gz` (GitLab), `…/tarball/main`,
/// `codeload.github.com/o/r/zip/refs/heads/main`. Tags keep their
/// `refs/tags/` so they read as tags.
fn archive_ref(url: &str) -> Option<&str> {
    let path = url.split_once("://")?.1;
    let rest = if let Some((_, rest)) = path.split_once("/-/archive/") {
        rest.split('/').next()?
    } else if let Some((_, rest)) = path.split_once("/archive/") {
        rest.trim_end_matches(".tar.gz")
            .trim_end_matches(".tar.bz2")
            .trim_end_matches(".zip")
            .trim_end_matches(".tgz")
    } else if let Some((_, rest)) = path
        .split_once("/tarball/")
        .or_else(|| path.split_once("/zipball/"))
    {
        rest
    } else if path.starts_with("codeload.github.com/") {
        let mut parts = path.splitn(5, '/');
        parts.nth(4)?
    } else {
        return None;
    };
    Some(rest)
}

/// Whether an archive's revision is fixed: a full commit, or a tag (named
/// `refs/tags/…`, or shaped like a version: `v1.2`, `1.2.3`). A branch
/// (`main`, `refs/heads/…`) moves.
fn fixed_ref(rev: &str) -> bool {
    if rev.starts_with("refs/heads/") {
        return false;
    }
    if rev
        .strip_prefix("refs/tags/")
        .is_some_and(|tag| !tag.is_empty())
    {
        return true;
    }
    let commit = rev.len() >= 40 && rev.chars().all(|c| c.is_ascii_hexdigit());
    let version = rev
        .strip_prefix('v')
        .unwrap_or(rev)
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit());
    commit || version
}

/// Classify one requirement argument.
fn classify_spec(arg: &Arg, no_deps: bool) -> (Class, String) {
    let Some(value) = &arg.value else {
        return classify_computed(&arg.raw);
    };
    // `/install/*.whl` is whatever files are there when it runs; with
    // `--no-deps` at least nothing else is resolved.
    // (`[` is an extra, not a glob, in `pkg[extra]==1.0`.)
    let glob = value.contains(['*', '?']) || (value.contains('/') && value.contains('['));
    if !value.contains("://") && glob {
        return if no_deps {
            (
                Class::Pinned,
                format!("`{value}` installs the files there, with --no-deps"),
            )
        } else {
            (
                Class::Unpinned,
                format!(
                    "`{value}` matches any number of files, and without --no-deps their dependencies resolve freely"
                ),
            )
        };
    }
    if value == "." || value.starts_with("./") || value.starts_with('/') || value.ends_with('/') {
        if value.ends_with(".whl") {
            return (Class::Pinned, format!("`{value}` is one wheel file"));
        }
        return (
            Class::Unpinned,
            format!("`{value}` is a local project: its dependencies are resolved"),
        );
    }
    if value.ends_with(".whl") && !value.contains("://") {
        return (Class::Pinned, format!("`{value}` is one wheel file"));
    }
    if value.contains("://") && !value.contains(" @ ") {
        return if url_pinned(value) {
            (Class::Pinned, format!("`{value}` is pinned"))
        } else {
            (
                Class::Unpinned,
                format!("`{value}` follows a branch or tag, not a commit"),
            )
        };
    }
    // uvx's `tool@1.2.3` form.
    if let Some((name, version)) = value.split_once('@')
        && !name.contains(' ')
        && !version.contains("://")
        && !version.is_empty()
    {
        return if version == "latest" {
            (Class::Unpinned, format!("`{value}` asks for the latest"))
        } else {
            (Class::Pinned, format!("`{value}` is pinned"))
        };
    }
    // A marker past the parser's limits (thousands of parentheses, hundreds
    // of comparisons) is not a pin, and must not be parsed.
    if layerlock_dist::MarkerWeight::of_requirement(value)
        .refusal()
        .is_some()
    {
        return (
            Class::Unpinned,
            format!("`{}` is not an exact pin", short(value)),
        );
    }
    match Requirement::<VerbatimUrl>::from_str(value) {
        Ok(requirement) if exact(&requirement) => (Class::Pinned, format!("`{value}` is pinned")),
        Ok(_) => (
            Class::Unpinned,
            format!("`{value}` can resolve to any matching version"),
        ),
        Err(_) => (Class::Unpinned, format!("`{value}` is not an exact pin")),
    }
}

/// A requirement only known at run time. Held in variables the repository
/// does not set (a workflow input, an ARG without a default, a runner's
/// variable): `run-time`, naming them, whatever part of the requirement
/// they are (`pkg==${VERSION}`, `$WHEEL`, `git+…@${COMMIT}`). Made by a
/// command (`$(cat reqs.txt)`): nothing says what it installs.
fn classify_computed(raw: &str) -> (Class, String) {
    if raw.contains("$(") || raw.contains('`') {
        return (
            Class::Unpinned,
            format!("`{}` is computed at run time", short(raw)),
        );
    }
    let names = variables(raw);
    if names.is_empty() {
        return (
            Class::Unpinned,
            format!("`{}` is computed at run time", short(raw)),
        );
    }
    let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    (
        Class::RunTime,
        format!(
            "`{}` is known only at run time: {} {} not set in the repository",
            short(raw),
            names.join(", "),
            if names.len() == 1 { "is" } else { "are" }
        ),
    )
}

/// The variables a word expands: `$NAME`, `${NAME}`, `${NAME:-x}`.
pub(crate) fn variables(raw: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let braced = bytes.get(i + 1) == Some(&b'{');
        let start = i + 1 + usize::from(braced);
        let end = raw[start..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(raw.len(), |n| start + n);
        let name = &raw[start..end];
        if !name.is_empty() && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
        i = end.max(i + 1);
    }
    out
}

/// Conda specs: `pkg==1.2.3` or `pkg=1.2.3[=build]` with a full version.
fn classify_conda(arg: &Arg) -> (Class, String) {
    let Some(value) = &arg.value else {
        return classify_computed(&arg.raw);
    };
    let version = value
        .split_once("==")
        .map(|(_, v)| v)
        .or_else(|| value.split_once('=').map(|(_, v)| v));
    match version {
        Some(v)
            if v.split('=')
                .next()
                .is_some_and(|v| v.split('.').count() >= 3 && !v.contains('*')) =>
        {
            (Class::Pinned, format!("`{value}` is pinned"))
        }
        _ => (
            Class::Unpinned,
            format!("`{value}` can resolve to any matching version"),
        ),
    }
}

/// How deep `{include-group = …}` entries are followed.
const GROUP_DEPTH: usize = 8;

/// `--group [PATH:]NAME` (pip 25.1, uv): the dependency group NAME of
/// `pyproject.toml` (at PATH, else the project's), judged by its entries.
fn group_class(group: &Arg, files: &dyn RequirementFiles) -> (Class, String) {
    let Some(spec) = group.value.as_deref() else {
        let (c, why) = classify_computed(&group.raw);
        return (c, format!("dependency group {why}"));
    };
    let (path, name) = match spec.rsplit_once(':') {
        Some((path, name)) => (Some(path), name),
        None => (None, spec),
    };
    let text = match path {
        Some(path) => files.read_text(path),
        None => files
            .project_file(None, "pyproject.toml")
            .and_then(|p| files.read_text(&p)),
    };
    let unread = || {
        (
            Class::Unpinned,
            format!(
                "`--group {spec}`: its dependency group cannot be read, so nothing proves it pinned"
            ),
        )
    };
    let Some((shown, text)) = text else {
        return unread();
    };
    let Ok(table) = toml::from_str::<toml::Table>(&text) else {
        return unread();
    };
    let Some(groups) = table
        .get("dependency-groups")
        .and_then(toml::Value::as_table)
    else {
        return unread();
    };
    let mut entries = Vec::new();
    if !group_entries(groups, name, 0, &mut entries) {
        return unread();
    }
    for entry in &entries {
        let pinned = Requirement::<VerbatimUrl>::from_str(entry).is_ok_and(|r| exact(&r));
        if !pinned {
            return (
                Class::Unpinned,
                format!("{shown}: `{entry}` of dependency group `{name}` is not an exact pin"),
            );
        }
    }
    (
        Class::Pinned,
        format!("{shown}: dependency group `{name}` pins exact versions without hashes"),
    )
}

/// The requirement strings of dependency group `name`, its included
/// groups' too; `false` when one is missing or not a list of them.
fn group_entries(groups: &toml::Table, name: &str, depth: usize, out: &mut Vec<String>) -> bool {
    let Some(items) = groups.get(name).and_then(toml::Value::as_array) else {
        return false;
    };
    for item in items {
        match item {
            toml::Value::String(entry) => out.push(entry.clone()),
            toml::Value::Table(t) => {
                let Some(included) = t.get("include-group").and_then(toml::Value::as_str) else {
                    return false;
                };
                if depth >= GROUP_DEPTH || !group_entries(groups, included, depth + 1, out) {
                    return false;
                }
            }
            _ => return false,
        }
    }
    true
}

/// Classify a requirements file's entries.
fn classify_file(path: &str, files: &dyn RequirementFiles) -> (Class, String) {
    let Some((shown, file)) = files.read(path) else {
        return (
            Class::Unpinned,
            format!("requirements file `{path}` could not be read, so nothing proves it pinned"),
        );
    };
    let mut class = Class::HashLocked;
    let mut why = format!("every entry of {shown} is hashed");
    for entry in &file.entries {
        let pinned = exact(&entry.requirement);
        let entry_class = if !pinned {
            Class::Unpinned
        } else if entry.hashes.is_empty() {
            Class::Pinned
        } else {
            Class::HashLocked
        };
        if entry_class > class {
            class = entry_class;
            why = match entry_class {
                Class::Unpinned => format!(
                    "{shown}:{} `{}` is not an exact pin",
                    entry.origin.line, entry.requirement
                ),
                _ => format!("{shown} pins exact versions without hashes"),
            };
        }
    }
    for (origin, url) in &file.unnamed_urls {
        // No name and no hash: at best a fixed revision, never locked.
        let (entry_class, said) = if url_pinned(url) {
            (
                Class::Pinned,
                "names no package (a fixed revision, without a hash)",
            )
        } else {
            (Class::Unpinned, "names no package and moves")
        };
        if entry_class > class || class == Class::HashLocked {
            class = entry_class;
            why = format!("{shown}:{} `{url}` {said}", origin.line);
        }
    }
    if file.entries.is_empty() && file.unnamed_urls.is_empty() {
        return (Class::Pinned, format!("{shown} lists nothing"));
    }
    (class, why)
}

/// Is this argv an install? How pinned? Wrappers are looked through; a
/// project runner on the way (`uv run pip install x`) may install too, and
/// the worse of the two is the command's.
pub fn classify(args: &[Arg], files: &dyn RequirementFiles) -> Option<Install> {
    let fed = args;
    let mut args = strip_to_runner(args);
    let mut found: Option<Install> = None;
    while let Some(skip) = project_runner(args) {
        let runner = &args[..skip];
        let own = match runner.first().and_then(program) {
            // With the command it runs: a script's inline metadata counts.
            Some("uv") => uv_run(&args[1..], files),
            Some("hatch") => projects::classify("hatch", runner, files).flatten(),
            _ => None,
        };
        found = worse(found, own);
        args = strip_to_runner(&args[skip..]);
    }
    let own = classify_command(args, files).or_else(|| fed_by_xargs(fed, args, files));
    worse(found, own)
}

/// `"$PY" -m pip install x`, `python${V} -m pip …`: a program known only
/// at run time that runs pip as a module is an interpreter.
fn interpreter_in_variable(args: &[Arg]) -> Option<&'static str> {
    let first = args.first()?;
    let module = match (args.get(1)?.value.as_deref()?, args.get(2)) {
        ("-m", Some(next)) => next.value.as_deref()?,
        (attached, _) => attached.strip_prefix("-m")?,
    };
    (first.value.is_none() && is_pip(module)).then_some("python")
}

/// `… | xargs pip install`: the requirements come from xargs's input, so
/// what is installed is known only at run time. `fed` is the command as
/// written, `args` what runs once wrappers are stripped.
fn fed_by_xargs(fed: &[Arg], args: &[Arg], files: &dyn RequirementFiles) -> Option<Install> {
    if !fed.iter().any(|a| a.is("xargs")) {
        return None;
    }
    let mut with_input = args.to_vec();
    with_input.push(Arg {
        value: None,
        raw: "$XARGS_INPUT".to_string(),
        at: None,
        script_at: None,
    });
    let mut found = classify_command(&with_input, files)?;
    found.why = "xargs adds the requirements from its input, known only at run time".to_string();
    Some(found)
}

/// The more changeable of two installs (the first on a tie).
fn worse(a: Option<Install>, b: Option<Install>) -> Option<Install> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.class > a.class { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// One command, wrappers stripped.
fn classify_command(args: &[Arg], files: &dyn RequirementFiles) -> Option<Install> {
    let first = program(args.first()?).or_else(|| interpreter_in_variable(args))?;
    if let Some(found) = projects::classify(first, args, files) {
        return found;
    }
    let (tool, rest, conda) = if is_pip(first) {
        pip_subcommand(first, &args[1..])?
    } else if is_python(first) {
        if let Some(found) = projects::setup_py(args) {
            return Some(found);
        }
        // python [-u -I …] -m pip install …, or -mpip with no space.
        let (module, after) = python_module(args)?;
        match module {
            "pip" => pip_subcommand("python -m pip", &args[after..])?,
            "uv" => return uv(&args[after..], files),
            "tox" | "nox" => {
                let mut named = vec![Arg::lit(module)];
                named.extend_from_slice(&args[after..]);
                return projects::classify(module, &named, files)?;
            }
            _ => return None,
        }
    } else if first == "uv" {
        return uv(&args[1..], files);
    } else if first == "uvx" {
        ("uvx".to_string(), tool_run_args(&args[1..]), false)
    } else if first == "pipx" {
        let sub = args.get(1).and_then(|a| a.value.as_deref())?;
        match sub {
            "install" => ("pipx install".to_string(), args[2..].to_vec(), false),
            "run" => ("pipx run".to_string(), tool_run_args(&args[2..]), false),
            _ => return None,
        }
    } else if matches!(first, "conda" | "mamba" | "micromamba") {
        let sub = args.get(1).and_then(|a| a.value.as_deref())?;
        if !matches!(sub, "install" | "create" | "update" | "upgrade") {
            return None;
        }
        (format!("{first} {sub}"), args[2..].to_vec(), true)
    } else if first == "easy_install" {
        ("easy_install".to_string(), args[1..].to_vec(), false)
    } else {
        return None;
    };
    judge(tool, &rest, conda, files)
}

/// The module `python -m MODULE` runs (also spelt `-mMODULE`) and where
/// its own arguments start.
fn python_module(args: &[Arg]) -> Option<(&str, usize)> {
    let mut takes_value = false;
    for (i, arg) in args.iter().enumerate().skip(1) {
        let value = arg.value.as_deref()?;
        if std::mem::take(&mut takes_value) {
            continue;
        }
        if matches!(value, "-W" | "-X") {
            takes_value = true;
            continue;
        }
        if value == "-c" {
            return None;
        }
        if value == "-m" {
            return Some((args.get(i + 1)?.value.as_deref()?, i + 2));
        }
        if let Some(module) = value.strip_prefix("-m")
            && !module.is_empty()
            && !module.starts_with('-')
        {
            return Some((module, i + 1));
        }
        if !value.starts_with('-') {
            // `python script.py -m pip` runs the script, not a module.
            return None;
        }
    }
    None
}

/// `uv …` (its own words, past `uv`).
fn uv(args: &[Arg], files: &dyn RequirementFiles) -> Option<Install> {
    let i = subcommand_index(args)?;
    match args.get(i)?.value.as_deref()? {
        "sync" => projects::uv_sync("sync", args, files),
        "run" => uv_run(args, files),
        "lock" => projects::relock("uv lock", &args[i + 1..]),
        _ => {
            let (tool, rest, conda) = uv_subcommand(args)?;
            judge(tool, &rest, conda, files)
        }
    }
}

/// `uv run`'s own installs (its words past `uv`, up to the command it
/// runs): the project sync, and what `--with` adds.
fn uv_run(args: &[Arg], files: &dyn RequirementFiles) -> Option<Install> {
    let with = uv_subcommand(args).and_then(|(tool, rest, conda)| judge(tool, &rest, conda, files));
    worse(projects::uv_sync("run", args, files), with)
}

/// Where the subcommand is, past global options and their values; `None`
/// when a word before it is computed at run time.
fn subcommand_index(args: &[Arg]) -> Option<usize> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let v = a.value.as_deref()?;
        if !v.starts_with('-') {
            break;
        }
        i += if VALUE_OPTIONS.contains(&v) { 2 } else { 1 };
    }
    Some(i)
}

/// `pip [global options] install|download …`.
fn pip_subcommand(name: &str, args: &[Arg]) -> Option<(String, Vec<Arg>, bool)> {
    let i = subcommand_index(args)?;
    let sub = args.get(i)?.value.as_deref()?;
    if !matches!(sub, "install" | "download") {
        return None;
    }
    Some((format!("{name} {sub}"), args[i + 1..].to_vec(), false))
}

/// `uv pip install|sync`, `uv add`, `uv run --with`, `uv tool install|run`.
fn uv_subcommand(args: &[Arg]) -> Option<(String, Vec<Arg>, bool)> {
    let i = subcommand_index(args)?;
    let sub = args.get(i)?.value.as_deref()?;
    let next = args.get(i + 1).and_then(|a| a.value.as_deref());
    match (sub, next) {
        ("pip", Some(s @ ("install" | "sync"))) => {
            Some((format!("uv pip {s}"), args[i + 2..].to_vec(), false))
        }
        ("add", _) => Some(("uv add".to_string(), args[i + 1..].to_vec(), false)),
        ("tool", Some("install")) => {
            Some(("uv tool install".to_string(), args[i + 2..].to_vec(), false))
        }
        ("tool", Some("run")) => Some((
            "uv tool run".to_string(),
            tool_run_args(&args[i + 2..]),
            false,
        )),
        ("run", _) => {
            // What `--with` adds; the sync `uv run` does first is judged
            // apart (`uv_run`).
            let end = run_command_start(args, i + 1).unwrap_or(args.len());
            let options = &args[i + 1..end];
            let mut with = Vec::new();
            let mut j = 0;
            while j < options.len() {
                let v = options[j].value.as_deref().unwrap_or("");
                if v == "--with" || v == "--with-requirements" || v == "--with-editable" {
                    if let Some(next) = options.get(j + 1) {
                        if v == "--with-requirements" {
                            with.push(Arg::lit("-r"));
                        } else if v == "--with-editable" {
                            with.push(Arg::lit("-e"));
                        }
                        with.push(next.clone());
                    }
                    j += 2;
                    continue;
                }
                if let Some(value) = v.strip_prefix("--with=") {
                    with.push(Arg::lit(value));
                }
                j += if RUN_VALUE_OPTIONS.contains(&v) { 2 } else { 1 };
            }
            if with.is_empty() {
                None
            } else {
                // `--with a,b` lists several.
                let split = with
                    .into_iter()
                    .flat_map(|a| match &a.value {
                        Some(v) if v.contains(',') => {
                            v.split(',').map(Arg::lit).collect::<Vec<_>>()
                        }
                        _ => vec![a],
                    })
                    .collect();
                Some(("uv run --with".to_string(), split, false))
            }
        }
        _ => None,
    }
}

/// For `uvx`/`uv tool run`/`pipx run`: the tool spec is the first positional
/// (or `--from SPEC`); the rest are the tool's own arguments.
fn tool_run_args(args: &[Arg]) -> Vec<Arg> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let v = a.value.as_deref().unwrap_or("");
        if v == "--from" || v == "--spec" || v == "--with" {
            if let Some(next) = args.get(i + 1) {
                out.push(next.clone());
            }
            i += 2;
            continue;
        }
        if v.starts_with('-') && a.value.is_some() {
            i += if VALUE_OPTIONS.contains(&v) { 2 } else { 1 };
            continue;
        }
        if out.is_empty() {
            out.push(a.clone());
        }
        break;
    }
    out
}

fn judge(tool: String, args: &[Arg], conda: bool, files: &dyn RequirementFiles) -> Option<Install> {
    let mut class: Option<(Class, String)> = None;
    // pip and uv refuse every requirement without a hash in this mode, so
    // whatever a `-r` file holds the install is hash-locked or fails.
    let truthy = |name: &str| {
        files
            .env_var(name)
            .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"))
    };
    let mut require_hashes = truthy("PIP_REQUIRE_HASHES") || truthy("UV_REQUIRE_HASHES");
    let no_deps = args
        .iter()
        .any(|a| a.is("--no-deps") || a.is("--no-dependencies"));
    let raise = |c: Class, why: String, class: &mut Option<(Class, String)>| {
        if class.as_ref().is_none_or(|(old, _)| c > *old) {
            *class = Some((c, why));
        }
    };
    let installs_groups = tool.ends_with("pip install");
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let Some(v) = arg.value.as_deref() else {
            let (c, why) = classify_computed(&arg.raw);
            raise(c, why, &mut class);
            i += 1;
            continue;
        };
        match v {
            "--require-hashes" => require_hashes = true,
            "-r" | "--requirement" | "-c" | "--constraint" | "--file" | "--requirements" => {
                if let Some(file) = args.get(i + 1) {
                    let constraint = v == "-c" || v == "--constraint";
                    match &file.value {
                        Some(path) if !constraint => {
                            let (c, why) = classify_file(path, files);
                            raise(c, why, &mut class);
                        }
                        Some(_) => {}
                        None => {
                            let (c, why) = classify_computed(&file.raw);
                            raise(c, format!("requirements file {why}"), &mut class);
                        }
                    }
                }
                i += 2;
                continue;
            }
            // pip's and `uv pip install`'s `--group` installs a dependency
            // group (`uv add --group` only names where to add).
            "--group" if installs_groups => {
                if let Some(group) = args.get(i + 1) {
                    let (c, why) = group_class(group, files);
                    raise(c, why, &mut class);
                }
                i += 2;
                continue;
            }
            "-e" | "--editable" => {
                if let Some(target) = args.get(i + 1) {
                    raise(
                        Class::Unpinned,
                        format!(
                            "`-e {}` installs a project whose dependencies are resolved",
                            short(&target.raw)
                        ),
                        &mut class,
                    );
                }
                i += 2;
                continue;
            }
            _ => {}
        }
        if let Some(group) = v.strip_prefix("--group=").filter(|_| installs_groups) {
            let (c, why) = group_class(&Arg::lit(group), files);
            raise(c, why, &mut class);
            i += 1;
            continue;
        }
        // `--requirement=FILE` and `-rFILE`.
        let attached = v.strip_prefix("--requirement=").or_else(|| {
            v.strip_prefix("-r")
                .filter(|p| !p.is_empty() && !v.starts_with("--"))
        });
        if let Some(path) = attached {
            let (c, why) = classify_file(path, files);
            raise(c, why, &mut class);
            i += 1;
            continue;
        }
        if v.starts_with('-') {
            let takes_value = VALUE_OPTIONS.contains(&v);
            i += if takes_value { 2 } else { 1 };
            continue;
        }
        let (c, why) = if conda {
            classify_conda(arg)
        } else {
            classify_spec(arg, no_deps)
        };
        raise(c, why, &mut class);
        i += 1;
    }
    let (mut class, mut why) = class?;
    if require_hashes && class != Class::HashLocked {
        class = Class::HashLocked;
        why = "hashes are required: every requirement must carry one".to_string();
    }
    Some(Install { tool, class, why })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoFiles;
    impl RequirementFiles for NoFiles {
        fn read(&self, _: &str) -> Option<(String, layerlock_lock::RequirementsFile)> {
            None
        }
    }

    fn words(text: &str) -> Vec<Arg> {
        text.split_whitespace()
            .map(|w| {
                if w.contains('$') {
                    Arg {
                        value: None,
                        raw: w.to_string(),
                        at: None,
                        script_at: None,
                    }
                } else {
                    Arg::lit(w)
                }
            })
            .collect()
    }

    fn class(text: &str) -> Option<Class> {
        classify(&words(text), &NoFiles).map(|i| i.class)
    }

    #[test]
    fn python_runs_pip_as_a_module_however_it_is_spelt() {
        for text in [
            "python -m pip install requests",
            "python -mpip install requests",
            "python3 -u -mpip install requests",
            "python -W ignore -m pip install requests",
            "python -X utf8 -m pip install requests",
        ] {
            assert_eq!(class(text), Some(Class::Unpinned), "{text}");
        }
        for text in [
            "python script.py -m pip install requests",
            "python -c 'x' -m pip install requests",
            "python -mpytest -k install",
        ] {
            assert_eq!(class(text), None, "{text}");
        }
    }

    #[test]
    fn archives_of_a_branch_move_and_of_a_commit_or_tag_do_not() {
        let pinned = |url: &str| url_pinned(url);
        assert!(!pinned("https://github.com/a/b/archive/main.zip"));
        assert!(!pinned(
            "https://github.com/a/b/archive/refs/heads/v2.tar.gz"
        ));
        assert!(!pinned(
            "https://gitlab.com/a/b/-/archive/master/b-master.tar.gz"
        ));
        assert!(!pinned("https://github.com/a/b/tarball/develop"));
        assert!(!pinned(
            "https://codeload.github.com/a/b/zip/refs/heads/main"
        ));
        assert!(pinned("https://github.com/a/b/archive/v1.2.3.tar.gz"));
        assert!(pinned(
            "https://github.com/a/b/archive/refs/tags/release.zip"
        ));
        assert!(pinned(
            "https://github.com/a/b/archive/0123456789abcdef0123456789abcdef01234567.zip"
        ));
        assert!(pinned("https://files.example.org/pkgs/b-1.0.tar.gz"));
    }

    #[test]
    fn recognises_installs_and_classes() {
        assert_eq!(class("pip install modelscope"), Some(Class::Unpinned));
        assert_eq!(class("pip3 install -U x==1.0"), Some(Class::Pinned));
        assert_eq!(
            class("python3.12 -m pip install --no-deps a==1 b==2"),
            Some(Class::Pinned)
        );
        assert_eq!(
            class("sudo -E python -m pip install a>=1"),
            Some(Class::Unpinned)
        );
        assert_eq!(
            class("uv pip install --system -r /x/reqs.txt"),
            Some(Class::Unpinned)
        );
        assert_eq!(
            class("uv pip install --python .venv/bin/python $REQ"),
            Some(Class::RunTime)
        );
        assert_eq!(
            class("pip install --require-hashes a==1"),
            Some(Class::HashLocked)
        );
        assert_eq!(
            class("pip install -U git+https://github.com/a/b.git@streaming-api"),
            Some(Class::Unpinned)
        );
        assert_eq!(
            class(
                "pip install git+https://github.com/a/b.git@0123456789abcdef0123456789abcdef01234567"
            ),
            Some(Class::Pinned)
        );
        assert_eq!(class("pip install ."), Some(Class::Unpinned));
        assert_eq!(class("pip install -e ."), Some(Class::Unpinned));
        assert_eq!(class("uvx ruff@0.6.0 check"), Some(Class::Pinned));
        assert_eq!(class("uvx ruff check"), Some(Class::Unpinned));
        assert_eq!(class("uv tool install pre-commit"), Some(Class::Unpinned));
        assert_eq!(
            class("uv run --with pytest==8.0.0 pytest"),
            Some(Class::Pinned)
        );
        assert_eq!(class("uv run pytest"), None);
        assert_eq!(class("pypy3.11 -m pip install x"), Some(Class::Unpinned));
        assert_eq!(class("pip install pkg==${VERSION}"), Some(Class::RunTime));
        assert_eq!(class("pip install $WHEEL"), Some(Class::RunTime));
        assert_eq!(class("xargs pip install"), Some(Class::RunTime));
        assert_eq!(class("\"$PY\" -m pip install x"), Some(Class::Unpinned));
        assert_eq!(class("python${V} -mpip install x==1"), Some(Class::Pinned));
        assert_eq!(
            class("C:\\Python311\\python.exe -m pip install x"),
            Some(Class::Unpinned)
        );
        assert_eq!(class("\"$PY\" -m pytest"), None);
        assert_eq!(class("xargs -r pip install"), Some(Class::RunTime));
        assert_eq!(class("xargs rm -f"), None);
        assert_eq!(class("pip install -r $REQS"), Some(Class::RunTime));
        assert_eq!(class("uv add httpx"), Some(Class::Unpinned));
        assert_eq!(class("pipx install black==24.1.0"), Some(Class::Pinned));
        assert_eq!(
            class("conda install -y -c conda-forge numpy=1.26.4"),
            Some(Class::Pinned)
        );
        assert_eq!(
            class("conda create -n env python=3.12"),
            Some(Class::Unpinned)
        );
        assert_eq!(class("conda create -n env"), None);
        assert_eq!(class("easy_install foo"), Some(Class::Unpinned));
        assert_eq!(class("timeout 600 pip download x"), Some(Class::Unpinned));
        assert_eq!(class("pip install /install/*.whl"), Some(Class::Unpinned));
        let deep = format!("pip install a;{}", "(".repeat(5_000));
        assert_eq!(class(&deep), Some(Class::Unpinned));
        assert_eq!(
            class("pip install gpt-oss[eval]==0.0.5"),
            Some(Class::Pinned)
        );
        assert_eq!(
            class("pip install --no-deps /install/*.whl"),
            Some(Class::Pinned)
        );
        assert_eq!(
            class("pip install --require-hashes -r missing.txt"),
            Some(Class::HashLocked)
        );
        assert_eq!(
            class("docker exec $C pip install av"),
            Some(Class::Unpinned)
        );
    }

    #[test]
    fn not_installs() {
        assert_eq!(class("echo pip install foo"), None);
        assert_eq!(class("pip list"), None);
        assert_eq!(class("pip freeze"), None);
        assert_eq!(class("python -c import pip"), None);
        assert_eq!(class("uv pip compile x.in"), None);
        assert_eq!(class("pip install"), None);
        assert_eq!(class("uv venv .venv"), None);
    }
}
