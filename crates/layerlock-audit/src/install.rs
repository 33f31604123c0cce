//! Recognising a package install in one command's argv and classifying what
//! it can resolve: `unpinned`, `pinned` or `hash-locked`.

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
    /// Can resolve arbitrary versions.
    Unpinned,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::HashLocked => "hash-locked",
            Self::Pinned => "pinned",
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

use layerlock_walk::program;
pub use layerlock_walk::{Arg, RequirementFiles, strip_wrappers};

fn is_python(name: &str) -> bool {
    name == "python"
        || name == "py"
        || name
            .strip_prefix("python")
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

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
    url.ends_with(".whl") || url.ends_with(".tar.gz") || url.ends_with(".zip")
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
    // The marker parser recurses per parenthesis: CI text nesting
    // thousands deep is not a pin, and must not overflow the stack.
    if layerlock_dist::paren_depth(value) > layerlock_dist::MAX_MARKER_DEPTH {
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

/// A requirement only known at run time: still pinned when the text fixes
/// everything but the value (`pkg==${VERSION}`, one wheel file or wheel URL
/// whose name holds a variable).
fn classify_computed(raw: &str) -> (Class, String) {
    let text: String = raw.chars().filter(|c| *c != '"' && *c != '\'').collect();
    let name_end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || "._-[],".contains(c)))
        .unwrap_or(text.len());
    let exact = text[name_end..].starts_with("==")
        && name_end > 0
        && !text[name_end + 2..].contains([',', ';', '<', '>', '*', ' ']);
    let one_wheel = text.ends_with(".whl") && !text.contains(['*', '?']);
    if exact || one_wheel {
        let what = if exact {
            "is pinned to a version set at run time"
        } else {
            "is one wheel whose name is set at run time"
        };
        return (Class::Pinned, format!("`{}` {what}", short(raw)));
    }
    (
        Class::Unpinned,
        format!("`{}` is computed at run time", short(raw)),
    )
}

/// Conda specs: `pkg==1.2.3` or `pkg=1.2.3[=build]` with a full version.
fn classify_conda(arg: &Arg) -> (Class, String) {
    let Some(value) = &arg.value else {
        return (
            Class::Unpinned,
            format!("`{}` is computed at run time", short(&arg.raw)),
        );
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
    if file.entries.is_empty() {
        return (Class::Pinned, format!("{shown} lists nothing"));
    }
    (class, why)
}

/// Is this argv (wrappers already stripped) an install? How pinned?
pub fn classify(args: &[Arg], files: &dyn RequirementFiles) -> Option<Install> {
    let args = strip_wrappers(args);
    let first = program(args.first()?)?;
    let (tool, rest, conda) = if is_pip(first) {
        pip_subcommand(first, &args[1..])?
    } else if is_python(first) {
        // python [-u -I …] -m pip install …
        let m = args.iter().position(|a| a.is("-m"))?;
        let module = args.get(m + 1).and_then(|a| a.value.as_deref())?;
        if module == "pip" {
            pip_subcommand("python -m pip", &args[m + 2..])?
        } else if module == "uv" {
            uv_subcommand(&args[m + 2..])?
        } else {
            return None;
        }
    } else if first == "uv" {
        uv_subcommand(&args[1..])?
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
        if !matches!(sub, "install" | "create") {
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
            // Only `--with` makes `uv run` install something extra.
            let rest = &args[i + 1..];
            let mut with = Vec::new();
            let mut j = 0;
            while j < rest.len() {
                let v = rest[j].value.as_deref().unwrap_or("");
                if v == "--with" || v == "--with-requirements" {
                    if let Some(next) = rest.get(j + 1) {
                        if v == "--with-requirements" {
                            with.push(Arg::lit("-r"));
                        }
                        with.push(next.clone());
                    }
                    j += 2;
                    continue;
                }
                if let Some(value) = v.strip_prefix("--with=") {
                    with.push(Arg::lit(value));
                }
                if !v.starts_with('-') {
                    break;
                }
                j += 1;
            }
            if with.is_empty() {
                None
            } else {
                // `--with a,b` lists several.
                let split = with
                    .into_iter()
                    .flat_map(|a| match &a.value {
                        Some(v) if v.contains(',') && a.value.as_deref() != Some("-r") => {
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
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let Some(v) = arg.value.as_deref() else {
            let (c, why) = if conda {
                (
                    Class::Unpinned,
                    format!("`{}` is computed at run time", short(&arg.raw)),
                )
            } else {
                classify_computed(&arg.raw)
            };
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
                        None => raise(
                            Class::Unpinned,
                            format!(
                                "requirements file `{}` is computed at run time",
                                short(&file.raw)
                            ),
                            &mut class,
                        ),
                    }
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
                if w.starts_with('$') {
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
            Some(Class::Unpinned)
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
