//! Flags, config file and environment merged into one typed value per
//! command. Commands take these whole.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{Context, Result, bail};
use jiff::Timestamp;

use layerlock_resolve::Prerelease;

use crate::cli::{HashesArg, IndexArgs, LayerArgs, PrereleaseArg};
use crate::config::{Config, LayerConfig};

pub const DEFAULT_INDEX: &str = "https://pypi.org/simple/";

/// A path as the user wrote it (for headers and messages) and as we open it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserPath {
    pub shown: String,
    pub path: PathBuf,
}

impl UserPath {
    fn new(shown: &str, root: &Path) -> Self {
        Self {
            shown: shown.to_string(),
            path: root.join(shown),
        }
    }

    fn from_arg(path: &Path) -> Self {
        Self {
            shown: path.display().to_string(),
            path: path.to_path_buf(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct IndexSettings {
    /// In the order they are asked.
    /// Asked in order; they may carry credentials, which never print.
    pub index_urls: Vec<layerlock_index::SecretUrl>,
    pub find_links: Vec<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct LayerSettings {
    /// The config layer's name; `None` when given on the command line.
    pub name: Option<String>,
    pub inputs: Vec<UserPath>,
    pub bases: Vec<UserPath>,
    pub output: Option<UserPath>,
    pub python_version: String,
    pub platform: String,
    pub owned: Vec<String>,
    pub hashes: HashesArg,
    pub prerelease: Prerelease,
    pub exclude_newer: Option<Timestamp>,
    pub index: IndexSettings,
    /// Whether the index options came from flags/config (else input files
    /// may set them).
    pub index_explicit: bool,
    /// The command that regenerates this layer, for the lock header.
    pub command: String,
    /// Paths in the lock and in messages are shown relative to this: the
    /// working directory, or the config file's directory for config layers.
    pub display_root: PathBuf,
    pub cooldown: Option<CooldownSettings>,
    /// `--allow-missing-time`: files without an upload time pass
    /// `--exclude-newer` (and the cooldown).
    pub allow_missing_time: bool,
}

/// A package exempt from the cooldown, and until when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exemption {
    pub package: String,
    pub reason: String,
    pub until: Option<Timestamp>,
}

#[derive(Debug, Clone)]
pub struct CooldownSettings {
    pub min_age: jiff::SignedDuration,
    /// As written (`7 days`), for messages.
    pub min_age_text: String,
    pub now: Timestamp,
    pub exempt: Vec<Exemption>,
    pub allow_missing_time: bool,
}

impl CooldownSettings {
    /// Exemptions in force at `now` (an expired one no longer exempts).
    pub fn exempt_now(&self) -> std::collections::BTreeSet<uv_normalize::PackageName> {
        self.exempt
            .iter()
            .filter(|e| e.until.is_none_or(|u| u >= self.now))
            .filter_map(|e| uv_normalize::PackageName::from_str(&e.package).ok())
            .collect()
    }
}

/// `7d`, `7 days`, `1w`, `12h`, `90m`, `P7D`, `PT12H`, `P1W`. Months and
/// years are refused (their length varies), and so is anything past a
/// century.
pub fn parse_age(text: &str) -> Result<jiff::SignedDuration> {
    let bad =
        || anyhow::anyhow!("`{text}` is not an age; write e.g. `7d`, `7 days`, `12h` or `P7D`");
    let t = text.trim().to_ascii_lowercase();
    let split = |s: &str| -> Option<(String, String)> {
        let at = s.find(|c: char| !c.is_ascii_digit())?;
        Some((s[..at].to_string(), s[at..].trim().to_string()))
    };
    let (number, unit) = if let Some(iso) = t.strip_prefix('p') {
        match iso.strip_prefix('t') {
            // PT12H, PT30M: hours and minutes.
            Some(time) => {
                let (n, u) = split(time).ok_or_else(bad)?;
                if !matches!(u.as_str(), "h" | "m") {
                    return Err(bad());
                }
                (n, u)
            }
            // P7D, P1W: days and weeks (P1M would be a month).
            None => {
                let (n, u) = split(iso).ok_or_else(bad)?;
                if !matches!(u.as_str(), "d" | "w") {
                    return Err(bad());
                }
                (n, u)
            }
        }
    } else {
        split(&t).ok_or_else(bad)?
    };
    let n: i64 = number.parse().map_err(|_| bad())?;
    let unit_seconds: i64 = match unit.as_str() {
        "w" | "week" | "weeks" => 7 * 86_400,
        "d" | "day" | "days" => 86_400,
        "h" | "hour" | "hours" => 3_600,
        "m" | "min" | "mins" | "minute" | "minutes" => 60,
        _ => return Err(bad()),
    };
    let seconds = n
        .checked_mul(unit_seconds)
        .filter(|s| *s <= 36_500 * 86_400);
    let Some(seconds) = seconds else {
        bail!("`{text}` is longer than a century; a cooldown is measured in days");
    };
    Ok(jiff::SignedDuration::from_secs(seconds))
}

/// Merge cooldown flags with the config's `[cooldown]`.
pub fn cooldown(
    flags: &crate::cli::CooldownFlags,
    config: Option<&crate::config::CooldownConfig>,
    env: &Environment,
) -> Result<Option<CooldownSettings>> {
    let min_age = flags.min_age.as_deref();
    let exempt = &flags.min_age_exempt;
    let now = flags.now.as_deref();
    let allow_missing_time = flags.allow_missing_time;
    let Some(text) = min_age
        .map(str::to_string)
        .or_else(|| config.and_then(|c| c.min_age.clone()))
    else {
        return Ok(None);
    };
    let mut exemptions: Vec<Exemption> = exempt
        .iter()
        .map(|p| Exemption {
            package: p.clone(),
            reason: "--min-age-exempt".to_string(),
            until: None,
        })
        .collect();
    for e in config.map(|c| c.exempt.as_slice()).unwrap_or_default() {
        exemptions.push(Exemption {
            package: e.package.clone(),
            reason: e.reason.clone(),
            until: e.until.as_deref().map(parse_timestamp).transpose()?,
        });
    }
    Ok(Some(CooldownSettings {
        min_age: parse_age(&text)?,
        min_age_text: text,
        now: match now {
            Some(t) => parse_timestamp(t)?,
            None => env.now,
        },
        exempt: exemptions,
        allow_missing_time: allow_missing_time
            || config.and_then(|c| c.allow_missing_time).unwrap_or(false),
    }))
}

#[derive(Debug, Clone)]
pub struct RunSettings {
    pub cache_dir: Option<PathBuf>,
    pub offline: bool,
    /// `--timeout`: how long an index may stay silent.
    pub timeout: std::time::Duration,
    pub quiet: bool,
    pub netrc: Option<PathBuf>,
    /// The working directory the command runs in.
    pub cwd: PathBuf,
}

#[derive(Debug, Clone)]
pub struct CompileSettings {
    pub layers: Vec<LayerSettings>,
    pub run: RunSettings,
    pub check: bool,
}

#[derive(Debug, Clone)]
pub struct CoversSettings {
    pub layers: Vec<LayerSettings>,
    pub run: RunSettings,
}

/// What the process was started with; passed in so settings stay pure.
pub struct Environment {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub vars: std::collections::BTreeMap<String, String>,
    /// The clock, read once.
    pub now: Timestamp,
}

impl Environment {
    pub fn capture() -> Result<Self> {
        Ok(Self {
            argv: std::env::args().collect(),
            cwd: std::env::current_dir().context("cannot read the working directory")?,
            vars: std::env::vars().collect(),
            now: Timestamp::now(),
        })
    }

    fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

pub fn parse_timestamp(text: &str) -> Result<Timestamp> {
    if let Ok(ts) = Timestamp::from_str(text) {
        return Ok(ts);
    }
    if let Ok(date) = jiff::civil::Date::from_str(text)
        && let Ok(zoned) = date.to_zoned(jiff::tz::TimeZone::UTC)
    {
        return Ok(zoned.timestamp());
    }
    bail!("`{text}` is not a timestamp; use RFC 3339 (2026-01-31T00:00:00Z) or a date (2026-01-31)")
}

fn prerelease(arg: Option<PrereleaseArg>) -> Prerelease {
    match arg {
        Some(PrereleaseArg::Allow) => Prerelease::Allow,
        Some(PrereleaseArg::Disallow) => Prerelease::Disallow,
        Some(PrereleaseArg::IfNecessaryOrExplicit) | None => Prerelease::IfNecessaryOrExplicit,
    }
}

/// Flags that do not change the lock and so stay out of its header.
const VOLATILE_WITH_VALUE: &[&str] = &["--cache-dir", "--config"];
const VOLATILE: &[&str] = &["--check", "--offline", "--no-cache", "--quiet", "-q"];

/// The command line that regenerates the output, without flags that do not
/// change it.
fn regenerate_command(argv: &[String]) -> String {
    let mut out = vec!["layerlock".to_string()];
    let mut skip = false;
    for arg in argv.iter().skip(1) {
        if skip {
            skip = false;
            continue;
        }
        if VOLATILE.contains(&arg.as_str()) {
            continue;
        }
        if VOLATILE_WITH_VALUE.contains(&arg.as_str()) {
            skip = true;
            continue;
        }
        if VOLATILE_WITH_VALUE
            .iter()
            .any(|f| arg.starts_with(&format!("{f}=")))
        {
            continue;
        }
        // An index URL's credentials never reach the lock header, in any
        // spelling (`--index-url URL`, `--index-url=URL`, an invalid URL).
        let arg = layerlock_index::redact_text(arg);
        out.push(shell_quote(&arg));
    }
    out.join(" ")
}

fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%[]".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', "'\\''"))
    }
}

fn index_settings(
    args: &IndexArgs,
    layer: Option<&LayerConfig>,
    root: &Path,
    cwd: &Path,
) -> (IndexSettings, bool) {
    let index_url = args
        .index_url
        .clone()
        .or_else(|| layer.and_then(|l| l.index_url.clone()));
    let extra: Vec<String> = if args.extra_index_url.is_empty() {
        layer.map(|l| l.extra_index_url.clone()).unwrap_or_default()
    } else {
        args.extra_index_url.clone()
    };
    let no_index = args.no_index || layer.and_then(|l| l.no_index).unwrap_or(false);
    let mut find_links: Vec<PathBuf> = args.find_links.iter().map(|p| cwd.join(p)).collect();
    if find_links.is_empty()
        && let Some(l) = layer
    {
        find_links = l.find_links.iter().map(|p| root.join(p)).collect();
    }
    let explicit = index_url.is_some() || !extra.is_empty() || no_index || !find_links.is_empty();
    let mut index_urls = Vec::new();
    if !no_index {
        // Extra indexes are asked first, as uv does.
        index_urls.extend(extra.into_iter().map(layerlock_index::SecretUrl::new));
        index_urls.push(layerlock_index::SecretUrl::new(
            index_url.unwrap_or_else(|| DEFAULT_INDEX.to_string()),
        ));
    }
    (
        IndexSettings {
            index_urls,
            find_links,
        },
        explicit,
    )
}

/// `--cache-dir`, else `$LAYERLOCK_CACHE_DIR` (clap reads it into the flag),
/// else `$XDG_CACHE_HOME/layerlock`, else `~/.cache/layerlock`.
fn cache_dir(flag: Option<&PathBuf>, env: &Environment) -> Option<PathBuf> {
    flag.map(|p| env.cwd.join(p))
        .or_else(|| env.var("LAYERLOCK_CACHE_DIR").map(PathBuf::from))
        .or_else(|| {
            env.var("XDG_CACHE_HOME")
                .map(|d| Path::new(d).join("layerlock"))
        })
        .or_else(|| {
            env.var("HOME")
                .map(|h| Path::new(h).join(".cache").join("layerlock"))
        })
}

fn run_settings(layer: &LayerArgs, env: &Environment) -> RunSettings {
    let cache_dir = if layer.index.no_cache {
        None
    } else {
        cache_dir(layer.index.cache_dir.as_ref(), env)
    };
    let netrc = env
        .var("NETRC")
        .map(PathBuf::from)
        .or_else(|| env.var("HOME").map(|h| Path::new(h).join(".netrc")));
    RunSettings {
        cache_dir,
        offline: layer.index.offline,
        timeout: std::time::Duration::from_secs(layer.index.timeout),
        quiet: layer.quiet,
        netrc,
        cwd: env.cwd.clone(),
    }
}

fn need(value: Option<String>, flag: &str, key: &str) -> Result<String> {
    value.with_context(|| {
        format!("{flag} is required (or set `{key}` in layerlock.toml); a layer is compiled for one target")
    })
}

/// The layers to handle: from the command line when inputs are given, else
/// from the config file.
pub fn layers(
    args: &LayerArgs,
    output: Option<&Path>,
    hashes: Option<HashesArg>,
    env: &Environment,
) -> Result<Vec<LayerSettings>> {
    if !args.inputs.is_empty() {
        if !args.layers.is_empty() {
            bail!(
                "--layer selects layers of the config file; it cannot be combined with input files"
            );
        }
        let (index, index_explicit) = index_settings(&args.index, None, &env.cwd, &env.cwd);
        return Ok(vec![LayerSettings {
            name: None,
            inputs: args.inputs.iter().map(|p| UserPath::from_arg(p)).collect(),
            bases: args.bases.iter().map(|p| UserPath::from_arg(p)).collect(),
            // `-o -` is stdout, as in pip-compile and uv.
            output: output
                .filter(|o| *o != Path::new("-"))
                .map(UserPath::from_arg),
            python_version: need(
                args.python_version.clone(),
                "--python-version",
                "python-version",
            )?,
            platform: need(args.platform.clone(), "--platform", "platform")?,
            owned: args.owned.clone(),
            hashes: hashes.unwrap_or(HashesArg::All),
            prerelease: prerelease(args.prerelease),
            exclude_newer: args
                .exclude_newer
                .as_deref()
                .map(parse_timestamp)
                .transpose()?,
            index,
            index_explicit,
            command: regenerate_command(&env.argv),
            display_root: env.cwd.clone(),
            cooldown: cooldown(
                &args.cooldown,
                Config::find(args.config.as_deref(), &env.cwd)?
                    .and_then(|c| c.file.cooldown)
                    .as_ref(),
                env,
            )?,
            allow_missing_time: args.cooldown.allow_missing_time,
        }]);
    }
    let Some(config) = Config::find(args.config.as_deref(), &env.cwd)? else {
        bail!(
            "no input files given and no layerlock.toml or [tool.layerlock] found in {} or above; pass requirements files or write a config",
            env.cwd.display()
        );
    };
    let all = config.layers();
    if all.is_empty() {
        bail!("{} defines no [[layer]]", config.path.display());
    }
    for wanted in &args.layers {
        if !all.iter().any(|l| l.name.as_deref() == Some(wanted)) {
            bail!("{} has no layer named `{wanted}`", config.path.display());
        }
    }
    let verb = env
        .argv
        .get(1)
        .cloned()
        .unwrap_or_else(|| "compile".to_string());
    let mut out = Vec::new();
    for layer in all {
        let name = layer.name.clone().unwrap_or_default();
        if !args.layers.is_empty() && !args.layers.contains(&name) {
            continue;
        }
        let root = &config.root;
        let (index, index_explicit) = index_settings(&args.index, Some(&layer), root, &env.cwd);
        let context = |key: &str| format!("layer `{name}` in {}", config.path.display()) + key;
        out.push(LayerSettings {
            inputs: layer
                .inputs
                .iter()
                .map(|p| UserPath::new(p, root))
                .collect(),
            bases: if args.bases.is_empty() {
                layer.bases.iter().map(|p| UserPath::new(p, root)).collect()
            } else {
                args.bases.iter().map(|p| UserPath::from_arg(p)).collect()
            },
            output: layer.output.as_deref().map(|p| UserPath::new(p, root)),
            python_version: args
                .python_version
                .clone()
                .or(layer.python_version.clone())
                .with_context(|| context(": no python-version"))?,
            platform: args
                .platform
                .clone()
                .or(layer.platform.clone())
                .with_context(|| context(": no platform"))?,
            owned: if args.owned.is_empty() {
                layer.owned.clone()
            } else {
                args.owned.clone()
            },
            hashes: hashes.or(layer.hashes).unwrap_or(HashesArg::All),
            prerelease: prerelease(args.prerelease.or(layer.prerelease)),
            exclude_newer: args
                .exclude_newer
                .clone()
                .or(layer.exclude_newer.clone())
                .as_deref()
                .map(parse_timestamp)
                .transpose()?,
            index,
            index_explicit,
            command: format!("layerlock {verb} --layer {}", shell_quote(&name)),
            display_root: root.clone(),
            cooldown: cooldown(&args.cooldown, config.file.cooldown.as_ref(), env)?,
            allow_missing_time: args.cooldown.allow_missing_time
                || config
                    .file
                    .cooldown
                    .as_ref()
                    .and_then(|c| c.allow_missing_time)
                    .unwrap_or(false),
            name: Some(name),
        });
    }
    Ok(out)
}

pub fn compile(args: &crate::cli::CompileArgs, env: &Environment) -> Result<CompileSettings> {
    let layers = layers(&args.layer, args.output.as_deref(), args.hashes, env)?;
    // An output must not be another layer's output, nor any layer's input or
    // base: writing it would destroy an input or make runs flip.
    let canonical = |p: &Path| {
        let absolute = env.cwd.join(p);
        fs_err::canonicalize(&absolute).unwrap_or(absolute)
    };
    let mut outputs: Vec<(PathBuf, String)> = Vec::new();
    for layer in &layers {
        let Some(out) = &layer.output else { continue };
        let path = canonical(&out.path);
        if let Some((_, other)) = outputs.iter().find(|(p, _)| *p == path) {
            bail!(
                "layers `{other}` and `{}` both write {}",
                layer.name.as_deref().unwrap_or("compile"),
                out.shown
            );
        }
        outputs.push((
            path,
            layer.name.clone().unwrap_or_else(|| "compile".to_string()),
        ));
    }
    for layer in &layers {
        for input in layer.inputs.iter().chain(&layer.bases) {
            if outputs.iter().any(|(p, _)| *p == canonical(&input.path)) {
                bail!(
                    "{} is both an input (or base) and an output; write the lock to another file",
                    input.shown
                );
            }
        }
    }
    if args.check
        && let Some(layer) = layers.iter().find(|l| l.output.is_none())
    {
        bail!(
            "--check compares with the output file, but {} has none; pass -o FILE",
            layer.name.as_deref().unwrap_or("the layer")
        );
    }
    Ok(CompileSettings {
        layers,
        run: run_settings(&args.layer, env),
        check: args.check,
    })
}

pub fn covers(args: &crate::cli::CoversArgs, env: &Environment) -> Result<CoversSettings> {
    Ok(CoversSettings {
        layers: layers(&args.layer, None, None, env)?,
        run: run_settings(&args.layer, env),
    })
}

/// The first `name` executable on PATH.
fn on_path(env: &Environment, name: &str) -> Option<PathBuf> {
    let path = env.var("PATH")?;
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

pub fn install(
    args: &crate::cli::InstallArgs,
    env: &Environment,
) -> crate::commands::install::InstallSettings {
    use layerlock_env::Installer;
    let uv = on_path(env, "uv");
    let installer = match args.installer {
        Some(crate::cli::InstallerArg::Uv) => Installer::Uv,
        Some(crate::cli::InstallerArg::Pip) => Installer::Pip,
        None if uv.is_some() => Installer::Uv,
        None => Installer::Pip,
    };
    crate::commands::install::InstallSettings {
        lock: args.lock.clone(),
        python: args.python.clone(),
        installer,
        uv,
        allow_change: args.allow_change.clone(),
        dry_run: args.dry_run,
        report: args.report.clone(),
        index_url: args.index_url.clone().map(layerlock_index::SecretUrl::new),
        extra_index_urls: args
            .extra_index_url
            .iter()
            .cloned()
            .map(layerlock_index::SecretUrl::new)
            .collect(),
        find_links: args.find_links.clone(),
        quiet: args.quiet,
        cache_dir: cache_dir(None, env),
    }
}

pub fn verify(
    args: &crate::cli::VerifyArgs,
    env: &Environment,
) -> crate::commands::verify::VerifySettings {
    crate::commands::verify::VerifySettings {
        cache_dir: cache_dir(None, env),
        lock: args.lock.clone(),
        python: args.python.clone(),
        imports: args.imports.clone(),
        integrity: args.integrity,
        format: args.format,
    }
}

pub fn audit(
    args: &crate::cli::AuditArgs,
    env: &Environment,
) -> Result<crate::commands::audit::AuditSettings> {
    let config = Config::find(args.config.as_deref(), &env.cwd)?;
    let audit = config
        .as_ref()
        .and_then(|c| c.file.audit.clone())
        .unwrap_or_default();
    let config_root = config.as_ref().map(|c| env.cwd.join(&c.root));
    let targets: Vec<PathBuf> = if args.paths.is_empty() {
        vec![env.cwd.clone()]
    } else {
        args.paths.iter().map(|p| env.cwd.join(p)).collect()
    };
    let targets: Vec<PathBuf> = targets
        .into_iter()
        .map(|t| fs_err::canonicalize(&t).unwrap_or(t))
        .collect();
    // One directory given: it is the root paths are shown against.
    let root = match targets.as_slice() {
        [one] if one.is_dir() => one.clone(),
        _ => fs_err::canonicalize(&env.cwd).unwrap_or_else(|_| env.cwd.clone()),
    };
    let mut path_map = Vec::new();
    let from_config = audit
        .path_map
        .iter()
        .map(|m| (m, config_root.clone().unwrap_or_else(|| env.cwd.clone())));
    let from_flags = args.path_map.iter().map(|m| (m, env.cwd.clone()));
    for (mapping, base) in from_flags.chain(from_config) {
        let Some((container, dir)) = mapping
            .split_once('=')
            .filter(|(c, d)| c.starts_with('/') && c.len() > 1 && !d.is_empty())
        else {
            bail!(
                "--path-map `{mapping}` is not CONTAINER=DIR with an absolute container path (e.g. /vllm-workspace=.)"
            );
        };
        let dir = base.join(dir);
        let dir = fs_err::canonicalize(&dir).unwrap_or(dir);
        path_map.push((container.trim_end_matches('/').to_string(), dir));
    }
    let allowlist = match (&args.allowlist, &audit.allowlist) {
        (Some(p), _) => Some(env.cwd.join(p)),
        (None, found) => {
            let path = match found {
                Some(p) => config_root
                    .clone()
                    .unwrap_or_else(|| env.cwd.clone())
                    .join(p),
                None => root.join(".layerlock-allowlist"),
            };
            // An allowlist the repository names (its config, or the default
            // file, maybe a symlink) must be a file of the repository: its
            // lines are printed in reports.
            let exists = fs_err::symlink_metadata(&path).is_ok();
            if exists {
                let real = fs_err::canonicalize(&path)
                    .with_context(|| format!("the allowlist {} cannot be read", path.display()))?;
                let inside = config_root
                    .as_deref()
                    .and_then(|c| fs_err::canonicalize(c).ok())
                    .unwrap_or_else(|| root.clone());
                if !real.starts_with(&inside) && !real.starts_with(&root) {
                    bail!(
                        "the allowlist {} resolves outside the repository ({}); refusing to read it",
                        path.display(),
                        real.display()
                    );
                }
                if !fs_err::metadata(&real).is_ok_and(|m| m.is_file()) {
                    bail!("the allowlist {} is not a regular file", path.display());
                }
            }
            (exists || found.is_some()).then_some(path)
        }
    };
    let default_working_dir = args
        .default_working_dir
        .clone()
        .or(audit.default_working_dir.clone());
    let severity = args
        .min_severity
        .or(audit.min_severity)
        .unwrap_or(crate::cli::SeverityArg::Low);
    Ok(crate::commands::audit::AuditSettings {
        default_working_dir,
        root,
        targets,
        path_map,
        allowlist,
        format: args.format,
        min_severity: match severity {
            crate::cli::SeverityArg::Info => layerlock_audit::Severity::Info,
            crate::cli::SeverityArg::Low => layerlock_audit::Severity::Low,
            crate::cli::SeverityArg::Medium => layerlock_audit::Severity::Medium,
            crate::cli::SeverityArg::High => layerlock_audit::Severity::High,
        },
        strict: args.strict,
    })
}

pub fn cooldown_check(
    args: &crate::cli::CooldownArgs,
    env: &Environment,
) -> Result<crate::commands::cooldown::CooldownCheck> {
    let config = Config::find(args.config.as_deref(), &env.cwd)?;
    let config_cooldown = config.as_ref().and_then(|c| c.file.cooldown.clone());
    let Some(cooldown) = cooldown(&args.cooldown, config_cooldown.as_ref(), env)? else {
        bail!("no minimum age: pass --min-age 7d or set [cooldown] min-age in layerlock.toml");
    };
    if let Some(rev) = &args.since
        && (rev.starts_with('-') || rev.contains(':'))
    {
        bail!("--since `{rev}` is not a git revision");
    }
    let (index, _) = index_settings(&args.index, None, &env.cwd, &env.cwd);
    let layer_args = LayerArgs {
        index: args.index.clone(),
        ..LayerArgs::default()
    };
    Ok(crate::commands::cooldown::CooldownCheck {
        lock: args.lock.clone(),
        bases: args.bases.clone(),
        since: args.since.clone(),
        cooldown,
        format: args.format,
        index,
        run: run_settings(&layer_args, env),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regenerate_command_drops_volatile_flags() {
        let argv: Vec<String> = [
            "/abs/target/layerlock",
            "compile",
            "in.txt",
            "--cache-dir",
            "/tmp/x",
            "--check",
            "--owned",
            "nccl==2.1",
            "--exclude-newer",
            "2026-01-01T00:00:00Z",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            regenerate_command(&argv),
            "layerlock compile in.txt --owned nccl==2.1 --exclude-newer 2026-01-01T00:00:00Z"
        );
    }
}
