//! Flags, config file and environment merged into one typed value per
//! command. Commands take these whole.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use jiff::Timestamp;

use layerlock_lock::LockFormat;
use layerlock_resolve::exempt_target;

use crate::cli::{HashesArg, IndexArgs, LayerArgs, PrereleaseArg, ReportFormat};
use crate::config::{Config, LayerConfig};

mod checks;
mod history;
mod lifecycle;

pub use checks::{AuditSettings, StepsSettings, TetherSettings};
pub use history::{BlocksSettings, TriageSettings};
pub use lifecycle::{CooldownCheck, DiffSettings, InstallSettings, LayerOutput, VerifySettings};

pub use layerlock_compile::{
    CooldownPlan, DEFAULT_INDEX, IndexPlan, LayerPlan, TargetPlan, UserPath, interpreter_path,
    venv_python,
};

/// `--python`: an interpreter, or a virtual environment's directory.
fn python_arg(python: &Path) -> PathBuf {
    venv_python(python).map_or_else(|| python.to_path_buf(), |(p, _)| p)
}

/// Where command-line paths are shown from: the repository the working
/// directory is in (its `.git`), else the working directory.
fn display_root(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// `--hashes` as the config writes it.
fn hash_key(arg: HashesArg) -> layerlock_compile::HashesKey {
    match arg {
        HashesArg::All => layerlock_compile::HashesKey::All,
        HashesArg::Target => layerlock_compile::HashesKey::Target,
    }
}

/// `--prerelease` as the config writes it.
fn prerelease_key(arg: PrereleaseArg) -> layerlock_compile::PrereleaseKey {
    match arg {
        PrereleaseArg::Allow => layerlock_compile::PrereleaseKey::Allow,
        PrereleaseArg::Disallow => layerlock_compile::PrereleaseKey::Disallow,
        PrereleaseArg::IfNecessary => layerlock_compile::PrereleaseKey::IfNecessary,
    }
}

/// Merge cooldown flags with the config's `[cooldown]`.
pub fn cooldown(
    flags: &crate::cli::CooldownFlags,
    config: Option<&crate::config::CooldownConfig>,
    env: &Environment,
) -> Result<Option<CooldownPlan>> {
    let text = layerlock_compile::CooldownFlagText {
        min_age: flags.min_age.as_deref(),
        exempt: &flags.min_age_exempt,
        now: flags.now.as_deref(),
        allow_missing_time: flags.allow_missing_time,
    };
    Ok(crate::config::CooldownConfig::plan(config, text, env.now)?)
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
    /// `--read-whole-sdist`: packages whose large sdists are read whole.
    pub read_whole_sdists: Vec<uv_normalize::PackageName>,
}

impl RunSettings {
    /// How this run's index clients are made: its cache (when usable),
    /// offline, credentials and timeout, resolving's concurrency.
    pub fn client_settings(&self) -> layerlock_index::ClientSettings {
        layerlock_index::ClientSettings {
            cache_dir: crate::commands::usable_cache(self.cache_dir.as_deref()),
            offline: self.offline,
            netrc: self.netrc.clone(),
            timeout: self.timeout,
            concurrency: layerlock_index::ClientSettings::RESOLVING,
            read_whole_sdists: self.read_whole_sdists.clone(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct CompileSettings {
    pub layers: Vec<LayerPlan>,
    pub run: RunSettings,
    pub check: bool,
    /// `--stats FILE`.
    pub stats: Option<UserPath>,
    /// Which pins of the existing output are freed.
    pub freed: layerlock_resolve::Freed,
    /// `--diff`: print what changed.
    pub diff: bool,
    /// `--report FILE` and its form.
    pub report: Option<(UserPath, ReportFormat)>,
    /// The time upload ages are measured at (`--now`, else now).
    pub now: Timestamp,
}

#[derive(Debug, Clone)]
pub struct CoversSettings {
    pub layers: Vec<LayerPlan>,
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

/// [`layerlock_resolve::parse_timestamp`], for settings.
pub fn parse_timestamp(text: &str) -> Result<Timestamp> {
    Ok(layerlock_resolve::parse_timestamp(text)?)
}

fn index_settings(
    args: &IndexArgs,
    layer: Option<&LayerConfig>,
    root: &Path,
    cwd: &Path,
) -> (IndexPlan, bool) {
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
        IndexPlan {
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

fn run_settings(layer: &LayerArgs, env: &Environment) -> Result<RunSettings> {
    let cache_dir = if layer.index.no_cache {
        None
    } else {
        cache_dir(layer.index.cache_dir.as_ref(), env)
    };
    let netrc = env
        .var("NETRC")
        .map(PathBuf::from)
        .or_else(|| env.var("HOME").map(|h| Path::new(h).join(".netrc")));
    let whole = package_set("--read-whole-sdist", &layer.read_whole_sdist)?;
    if whole.all {
        anyhow::bail!(
            "--read-whole-sdist :all: would download any sdist whole, up to 512 MiB each: name the packages"
        );
    }
    Ok(RunSettings {
        cache_dir,
        offline: layer.index.offline,
        timeout: std::time::Duration::from_secs(layer.index.timeout),
        quiet: layer.quiet,
        netrc,
        cwd: env.cwd.clone(),
        read_whole_sdists: whole.packages,
    })
}

/// The layers to handle: from the command line when inputs are given, else
/// from the config file.
pub fn layers(
    args: &LayerArgs,
    config: Option<&Config>,
    output: Option<&Path>,
    hashes: Option<HashesArg>,
    env: &Environment,
) -> Result<Vec<LayerPlan>> {
    if !args.inputs.is_empty() {
        return Ok(vec![command_line_layer(args, config, output, hashes, env)?]);
    }
    let Some(config) = config else {
        bail!(
            "no input files given and no layerlock.toml or [tool.layerlock] found in {} or above; pass requirements files or write a config",
            env.cwd.display()
        );
    };
    let mut out = config_layers(args, config, hashes, env)?;
    if let Some(output) = output {
        redirect_output(&mut out, output, config, env)?;
    }
    Ok(out)
}

/// One table of the config that a layer's keys come from, under the flags:
/// a `[[layer]]`, or the top-level defaults when the inputs are given on the
/// command line.
struct Table<'a> {
    keys: Option<&'a LayerConfig>,
    /// The folder the table's relative paths are read from.
    root: &'a Path,
    /// The folder the flags' paths are shown relative to.
    flags_root: &'a Path,
}

/// What only one of the two ways of naming a layer gives: its name,
/// inputs, output and the command that regenerates it.
struct Own {
    name: Option<String>,
    inputs: Vec<UserPath>,
    output: Option<UserPath>,
    format: LockFormat,
    command: String,
    display_root: PathBuf,
}

/// `--replace`, else the layer's `replace`: package names.
fn replace(args: &LayerArgs, keys: Option<&LayerConfig>) -> Result<Vec<uv_normalize::PackageName>> {
    let names = if args.replace.is_empty() {
        keys.map(|k| k.replace.clone()).unwrap_or_default()
    } else {
        args.replace.clone()
    };
    names
        .iter()
        .map(|n| {
            n.parse()
                .with_context(|| format!("--replace {n}: not a package name"))
        })
        .collect()
}

/// What a `pyproject.toml` input contributes beside `dependencies`:
/// extras and groups, from the flags, else the layer's keys.
fn project_parts(args: &LayerArgs, keys: Option<&LayerConfig>) -> layerlock_lock::ProjectParts {
    let all_extras = args.all_extras || keys.and_then(|k| k.all_extras).unwrap_or(false);
    layerlock_lock::ProjectParts {
        extras: if all_extras {
            None
        } else if args.extras.is_empty() {
            Some(keys.map(|k| k.extras.clone()).unwrap_or_default())
        } else {
            Some(args.extras.clone())
        },
        groups: if args.groups.is_empty() {
            keys.map(|k| k.groups.clone()).unwrap_or_default()
        } else {
            args.groups.clone()
        },
    }
}

/// The keys every target of a layer shares unless it sets its own: bases,
/// `--base-env`, `--owned`, from the flags, else the table.
fn shared_target(args: &LayerArgs, table: &Table, cwd: &Path) -> TargetPlan {
    let keys = table.keys;
    TargetPlan {
        python_version: String::new(),
        platform: String::new(),
        bases: if args.bases.is_empty() {
            keys.map(|k| {
                k.bases
                    .iter()
                    .map(|p| UserPath::new(p, table.root))
                    .collect()
            })
            .unwrap_or_default()
        } else {
            args.bases
                .iter()
                .map(|p| UserPath::from_arg(p, cwd, table.flags_root))
                .collect()
        },
        base_env: match &args.base_env {
            Some(p) => Some(interpreter_path(p, cwd, table.flags_root)),
            None => keys
                .and_then(|k| k.base_env.as_deref())
                .map(|p| interpreter_path(Path::new(p), table.root, table.root)),
        },
        owned: if args.owned.is_empty() {
            keys.map(|k| k.owned.clone()).unwrap_or_default()
        } else {
            args.owned.clone()
        },
        index: None,
    }
}

/// A layer's settings: each key from its flag, else from `table`. A
/// missing target key is the error `missing(flag, key)` words.
fn merge(
    args: &LayerArgs,
    table: &Table,
    own: Own,
    (hashes, config, env): (Option<HashesArg>, Option<&Config>, &Environment),
    missing: impl Fn(&str, &str) -> anyhow::Error,
) -> Result<LayerPlan> {
    let keys = table.keys;
    let (index, index_explicit) = index_settings(&args.index, keys, table.root, &env.cwd);
    let config_cooldown = config.and_then(|c| c.file.cooldown.as_ref());
    let paths = |flag: &[PathBuf], key: Option<&Vec<String>>| -> Vec<UserPath> {
        if flag.is_empty() {
            key.map(|k| k.iter().map(|p| UserPath::new(p, table.root)).collect())
                .unwrap_or_default()
        } else {
            flag.iter()
                .map(|p| UserPath::from_arg(p, &env.cwd, table.flags_root))
                .collect()
        }
    };
    let project = project_parts(args, keys);
    let shared = shared_target(args, table, &env.cwd);
    let targets = targets(args, table, env, &shared, &missing)?;
    layerlock_compile::check_targets(&targets).map_err(|e| {
        let e = crate::printer::compile_error(e);
        match (&own.name, config) {
            (Some(name), Some(c)) => {
                anyhow::anyhow!("{}: layer `{name}`: {e:#}", c.path.display())
            }
            _ => e,
        }
    })?;
    let layer = LayerPlan {
        name: own.name,
        inputs: own.inputs,
        only_binary: package_set(
            "--only-binary",
            if args.only_binary.is_empty() {
                keys.map(|k| k.only_binary.as_slice()).unwrap_or_default()
            } else {
                &args.only_binary
            },
        )?,
        allow_walk_back: package_set(
            "--allow-walk-back",
            if args.allow_walk_back.is_empty() {
                keys.map(|k| k.allow_walk_back.as_slice())
                    .unwrap_or_default()
            } else {
                &args.allow_walk_back
            },
        )?,
        constraints: paths(&args.constraints, keys.map(|k| &k.constraints)),
        overrides: paths(&args.overrides, keys.map(|k| &k.overrides)),
        project,
        bases: shared.bases.clone(),
        base_env: shared.base_env.clone(),
        output: own.output,
        format: own.format,
        python_version: String::new(),
        platform: String::new(),
        owned: shared.owned.clone(),
        hashes: hashes
            .map(hash_key)
            .or(keys.and_then(|k| k.hashes))
            .map(layerlock_compile::HashesKey::selection),
        prerelease: layerlock_compile::PrereleaseKey::policy(
            args.prerelease
                .map(prerelease_key)
                .or(keys.and_then(|k| k.prerelease)),
        ),
        exclude_newer: args
            .exclude_newer
            .clone()
            .or_else(|| keys.and_then(|k| k.exclude_newer.clone()))
            .as_deref()
            .map(layerlock_resolve::parse_cutoff)
            .transpose()?,
        index,
        index_explicit,
        command: own.command,
        display_root: own.display_root,
        cwd: env.cwd.clone(),
        cooldown: cooldown(&args.cooldown, config_cooldown, env)?,
        allow_missing_time: args.cooldown.allow_missing_time
            || config_cooldown
                .and_then(|c| c.allow_missing_time)
                .unwrap_or(false),
        targets: targets.clone(),
        owned_over: if args.owned_over.is_empty() {
            keys.map(|k| k.owned_over.clone()).unwrap_or_default()
        } else {
            args.owned_over.clone()
        },
        replace: replace(args, keys)?,
        require_checked: args.require_checked
            || keys.and_then(|k| k.require_checked).unwrap_or(false),
    };
    layerlock_compile::check_split(&layer)?;
    // The fields a target sets are the first target's; the output stays
    // the layer's (its per-target names are `per_target`'s).
    let several = targets.len() > 1;
    let mut first = layer.for_target(&targets[0]).with_targets(targets);
    if several {
        // The layer's own output and index: each target's view applies its
        // own (`for_target`).
        first.output = layer.output;
        first.index = layer.index;
        first.index_explicit = layer.index_explicit;
    }
    Ok(first)
}

/// The targets a layer serves: the flags' matrix (every pairing of the
/// `--python-version`s and `--platform`s), else the table's
/// `[[layer.target]]`s, else its `python-version` x `platform` matrix.
/// Each takes `shared`'s bases, owned packages and index unless it sets
/// its own.
fn targets(
    args: &LayerArgs,
    table: &Table,
    env: &Environment,
    shared: &TargetPlan,
    missing: &impl Fn(&str, &str) -> anyhow::Error,
) -> Result<Vec<TargetPlan>> {
    let keys = table.keys;
    let from_keys = |k: Option<&crate::config::OneOrMany>| {
        k.map(crate::config::OneOrMany::values).unwrap_or_default()
    };
    let key_pythons = from_keys(keys.and_then(|k| k.python_version.as_ref()));
    let key_platforms = from_keys(keys.and_then(|k| k.platform.as_ref()));
    let tables = keys.map(|k| k.targets.as_slice()).unwrap_or_default();
    let flags = !args.python_version.is_empty() || !args.platform.is_empty();
    if !tables.is_empty() && flags {
        // The tables carry each target's bases and index: flags that
        // replaced them would drop those without a word.
        bail!(
            "the config names this layer's targets in [[layer.target]] tables; --python-version and --platform cannot replace them: drop the flags, or the tables"
        );
    }
    let mut out: Vec<TargetPlan> = Vec::new();
    if !tables.is_empty() {
        let layer = keys.cloned().unwrap_or_default();
        for (i, t) in tables.iter().enumerate() {
            let Some((python_version, platform)) = layer.table_pair(t) else {
                bail!(
                    "[[layer.target]] #{}: name its `python-version` and `platform` (the layer's are taken only when it names one of each)",
                    i + 1
                );
            };
            let index = (t.index_url.is_some()
                || !t.extra_index_url.is_empty()
                || !t.find_links.is_empty()
                || t.no_index.is_some())
            .then(|| {
                // What the target leaves out is the layer's.
                let or = |own: &Vec<String>, theirs: &Vec<String>| {
                    if own.is_empty() { theirs } else { own }.clone()
                };
                let keys = crate::config::LayerConfig {
                    index_url: t.index_url.clone().or_else(|| layer.index_url.clone()),
                    extra_index_url: or(&t.extra_index_url, &layer.extra_index_url),
                    find_links: or(&t.find_links, &layer.find_links),
                    no_index: t.no_index.or(layer.no_index),
                    ..Default::default()
                };
                index_settings(&args.index, Some(&keys), table.root, &env.cwd)
            });
            let paths = |p: &[String]| p.iter().map(|p| UserPath::new(p, table.root)).collect();
            out.push(TargetPlan {
                python_version,
                platform,
                bases: if t.bases.is_empty() {
                    shared.bases.clone()
                } else {
                    paths(&t.bases)
                },
                base_env: match &t.base_env {
                    Some(p) => Some(interpreter_path(Path::new(p), table.root, table.root)),
                    None => shared.base_env.clone(),
                },
                owned: if t.owned.is_empty() {
                    shared.owned.clone()
                } else {
                    t.owned.clone()
                },
                index,
            });
        }
    } else {
        let pythons = if args.python_version.is_empty() {
            key_pythons
        } else {
            args.python_version.clone()
        };
        let platforms = if args.platform.is_empty() {
            key_platforms
        } else {
            args.platform.clone()
        };
        if pythons.is_empty() {
            return Err(missing("--python-version", "python-version"));
        }
        if platforms.is_empty() {
            return Err(missing("--platform", "platform"));
        }
        for platform in &platforms {
            for python in &pythons {
                let same = |t: &TargetPlan| t.python_version == *python && t.platform == *platform;
                if !out.iter().any(same) {
                    out.push(TargetPlan {
                        python_version: python.clone(),
                        platform: platform.clone(),
                        ..shared.clone()
                    });
                }
            }
        }
    }
    Ok(out)
}

/// The one layer whose inputs are on the command line. A config's
/// top-level keys are defaults for it, as for every command; a
/// `[[layer]]`'s own keys are that layer's only.
fn command_line_layer(
    args: &LayerArgs,
    config: Option<&Config>,
    output: Option<&Path>,
    hashes: Option<HashesArg>,
    env: &Environment,
) -> Result<LayerPlan> {
    if !args.layers.is_empty() {
        bail!("--layer selects layers of the config file; it cannot be combined with input files");
    }
    let config_root = config.map_or(env.cwd.clone(), |c| c.root.clone());
    let root = display_root(&env.cwd);
    let arg = |p: &Path| UserPath::from_arg(p, &env.cwd, &root);
    // `-o -` is stdout, as in pip-compile and uv.
    let output = output.filter(|o| *o != Path::new("-")).map(arg);
    let own = Own {
        name: None,
        inputs: args.inputs.iter().map(|p| arg(p)).collect(),
        format: output
            .as_ref()
            .map_or(LockFormat::Requirements, |o| LockFormat::from_path(&o.path)),
        output,
        command: layerlock_compile::regenerate_command(&env.argv, &env.cwd, &root),
        display_root: root.clone(),
    };
    let table = Table {
        keys: config.map(|c| &c.file.defaults),
        root: &config_root,
        flags_root: &root,
    };
    merge(args, &table, own, (hashes, config, env), |flag, key| {
        let message = match config {
            Some(c) => format!(
                "{flag} is required, or `{key}` at the top of {}; a layer is compiled for a target (repeat the flag for several)",
                c.path.display()
            ),
            None => format!(
                "{flag} is required (or set `{key}` in layerlock.toml); a layer is compiled for a target (repeat the flag for several)"
            ),
        };
        anyhow::anyhow!(message)
    })
}

/// The config's layers that `--layer` selects (all of them without it).
fn config_layers(
    args: &LayerArgs,
    config: &Config,
    hashes: Option<HashesArg>,
    env: &Environment,
) -> Result<Vec<LayerPlan>> {
    let all = config.layers();
    if all.is_empty() {
        bail!("{} defines no [[layer]]", config.path.display());
    }
    for wanted in &args.layers {
        if !all.iter().any(|l| l.name.as_deref() == Some(wanted)) {
            let names: Vec<String> = all
                .iter()
                .filter_map(|l| l.name.as_deref())
                .map(|n| format!("`{n}`"))
                .collect();
            bail!(
                "{} has no layer named `{wanted}`; its layers are {}",
                config.path.display(),
                names.join(", ")
            );
        }
    }
    let verb = env.argv.get(1).map_or("compile", String::as_str);
    let root = &config.root;
    let mut out = Vec::new();
    for layer in all {
        let name = layer.name.clone().unwrap_or_default();
        if !args.layers.is_empty() && !args.layers.contains(&name) {
            continue;
        }
        let own = Own {
            inputs: layer
                .inputs
                .iter()
                .map(|p| UserPath::new(p, root))
                .collect(),
            format: layer
                .output
                .as_deref()
                .map_or(LockFormat::Requirements, |o| {
                    LockFormat::from_path(Path::new(o))
                }),
            output: layer.output.as_deref().map(|p| UserPath::new(p, root)),
            command: layerlock_compile::layer_command(&env.argv, &env.cwd, root, verb, &name),
            display_root: root.clone(),
            name: Some(name.clone()),
        };
        let table = Table {
            keys: Some(&layer),
            root,
            flags_root: root,
        };
        out.push(merge(
            args,
            &table,
            own,
            (hashes, Some(config), env),
            |_, key| anyhow::anyhow!("layer `{name}` in {}: no {key}", config.path.display()),
        )?);
    }
    Ok(out)
}

/// `-o` puts the one layer selected elsewhere (`-o -`: stdout).
fn redirect_output(
    layers: &mut [LayerPlan],
    output: &Path,
    config: &Config,
    env: &Environment,
) -> Result<()> {
    let [layer] = layers else {
        let names: Vec<&str> = layers.iter().filter_map(|l| l.name.as_deref()).collect();
        bail!(
            "-o names one file, but {} layers of {} are selected ({}); pick one with --layer NAME",
            layers.len(),
            config.path.display(),
            names.join(", ")
        );
    };
    if output == Path::new("-") {
        layer.output = None;
        return Ok(());
    }
    let path = UserPath::from_arg(output, &env.cwd, &display_root(&env.cwd));
    layer.format = LockFormat::from_path(&path.path);
    layer.command = format!(
        "{} -o {}",
        layer.command,
        layerlock_shell::quote(&output.display().to_string())
    );
    layer.output = Some(path);
    layerlock_compile::check_split(layer)?;
    if let [one] = layer.targets.as_slice() {
        // One target: the name is filled in now.
        layer.output = layer.for_target(one).output;
    }
    Ok(())
}

impl CompileSettings {
    pub fn resolve(
        args: &crate::cli::CompileArgs,
        config: Option<&Config>,
        env: &Environment,
    ) -> Result<Self> {
        compile(args, config, env)
    }
}

fn compile(
    args: &crate::cli::CompileArgs,
    config: Option<&Config>,
    env: &Environment,
) -> Result<CompileSettings> {
    let mut layers = layers(
        &args.layer,
        config,
        args.output.as_deref(),
        args.hashes,
        env,
    )?;
    let recorded_now = match config {
        Some(config) if args.check => with_recorded_flags(&mut layers, config, env)?,
        _ => None,
    };
    for layer in &mut layers {
        match args.format {
            Some(crate::cli::LockFormatArg::Pylock) => layer.format = LockFormat::Pylock,
            Some(crate::cli::LockFormatArg::Requirements) => {
                layer.format = LockFormat::Requirements;
            }
            None => {}
        }
        if let Some(custom) = args
            .custom_compile_command
            .as_deref()
            .filter(|c| !c.is_empty())
        {
            if custom.chars().any(char::is_control) {
                bail!(
                    "--custom-compile-command (or LAYERLOCK_CUSTOM_COMPILE_COMMAND) holds a newline or another control character; the lock header names one command on one line"
                );
            }
            layer.command = layerlock_index::redact_text(custom);
        }
    }
    let arg_path = |p: &Path| UserPath::from_arg(p, &env.cwd, &display_root(&env.cwd));
    let stats = args.stats.as_deref().map(arg_path);
    let report = args.report.as_deref().map(|p| {
        let format = args.report_format.unwrap_or_else(|| report_format_of(p));
        (arg_path(p), format)
    });
    let written: Vec<(&str, &UserPath)> = stats
        .iter()
        .map(|s| ("--stats", s))
        .chain(report.iter().map(|(r, _)| ("--report", r)))
        .collect();
    layerlock_compile::check_outputs(&layers, &written, &env.cwd)?;
    let mut upgrade_packages = Vec::new();
    for text in &args.upgrade_package {
        upgrade_packages.push(exempt_target(text, None, "--upgrade-package")?);
    }
    if args.upgrade && !upgrade_packages.is_empty() {
        bail!(
            "--upgrade frees every pin already; --upgrade-package adds nothing to it (pass one or the other)"
        );
    }
    if args.check && (args.upgrade || !upgrade_packages.is_empty()) {
        bail!(
            "--check compares the output with the lock its inputs give as they stand; an upgrade is a change to make, not to check (drop --upgrade / --upgrade-package)"
        );
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
        run: run_settings(&args.layer, env)?,
        check: args.check,
        stats,
        freed: layerlock_resolve::Freed {
            all: args.upgrade,
            packages: upgrade_packages,
        },
        diff: args.diff,
        report,
        now: match args
            .layer
            .cooldown
            .now
            .as_deref()
            .or(recorded_now.as_deref())
        {
            Some(now) => parse_timestamp(now)?,
            None => env.now,
        },
    })
}

/// `compile --check` of config layers, given no flags of its own, judges
/// each lock with the flags its header records (`--hashes target`,
/// `--now …`: how it is written, never where packages come from), so a
/// lock is compared with what its own command makes. The `--now` taken,
/// if any, is returned.
fn with_recorded_flags(
    layers: &mut [LayerPlan],
    config: &Config,
    env: &Environment,
) -> Result<Option<String>> {
    let verb = env.argv.get(1).map_or("compile", String::as_str);
    let mut now = None;
    for layer in layers.iter_mut() {
        let (Some(name), Some(output)) = (layer.name.clone(), layer.output.as_ref()) else {
            continue;
        };
        let plain = format!("layerlock {verb} --layer {}", layerlock_shell::quote(&name));
        let recorded = layerlock_lock::Lock::read(&output.path)
            .ok()
            .and_then(|lock| lock.header.command);
        let (true, Some(recorded)) = (layer.command == plain, recorded) else {
            continue;
        };
        let layerlock_compile::Recorded::Take(flags) =
            layerlock_compile::recorded_flags(&recorded, verb, &name)
        else {
            continue;
        };
        if flags.is_empty() {
            continue;
        }
        let argv = ["layerlock", verb, "--layer", &name]
            .into_iter()
            .map(str::to_string)
            .chain(flags);
        let crate::cli::Command::Compile(parsed) =
            <crate::cli::Cli as clap::Parser>::try_parse_from(argv)
                .with_context(|| format!("the command {} records: {recorded}", output.shown))?
                .command
        else {
            continue;
        };
        let again = config_layers(&parsed.layer, config, parsed.hashes, env)?;
        let Some(mut one) = again.into_iter().find(|l| l.name.as_deref() == Some(&name)) else {
            continue;
        };
        one.command = recorded;
        one.output = layer.output.clone();
        if let Some(crate::cli::LockFormatArg::Pylock) = parsed.format {
            one.format = LockFormat::Pylock;
        }
        now = now.or(parsed.layer.cooldown.now.clone());
        *layer = one;
    }
    Ok(now)
}

/// `--only-binary` (or `--allow-walk-back`, `flag`) values as pip and uv
/// take them: comma-separated names, `:all:` for every package, `:none:`
/// clearing what came before.
fn package_set(flag: &str, values: &[String]) -> Result<layerlock_resolve::OnlyBinary> {
    let mut out = layerlock_resolve::OnlyBinary::default();
    for item in values.iter().flat_map(|v| v.split(',')).map(str::trim) {
        match item {
            "" => {}
            ":all:" => out.all = true,
            ":none:" => out = layerlock_resolve::OnlyBinary::default(),
            name => out.packages.push(name.parse().map_err(|_| {
                anyhow::anyhow!("{flag} {name}: not a package name (or :all:, :none:)")
            })?),
        }
    }
    Ok(out)
}

/// The report form a file's name asks for: `.json`, `.md`, else text.
fn report_format_of(path: &Path) -> ReportFormat {
    match path.extension().and_then(|e| e.to_str()) {
        Some("json") => ReportFormat::Json,
        Some("md" | "markdown") => ReportFormat::Markdown,
        _ => ReportFormat::Text,
    }
}

impl CoversSettings {
    pub fn resolve(
        args: &crate::cli::CoversArgs,
        config: Option<&Config>,
        env: &Environment,
    ) -> Result<Self> {
        Ok(Self {
            layers: layers(&args.layer, config, None, None, env)?,
            run: run_settings(&args.layer, env)?,
        })
    }
}

/// The first `name` executable on PATH.
fn on_path(env: &Environment, name: &str) -> Option<PathBuf> {
    let path = env.var("PATH")?;
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

// `install` and `verify` run in the image and read no config file: their
// settings come from flags and the environment alone.
impl InstallSettings {
    pub fn resolve(args: &crate::cli::InstallArgs, env: &Environment) -> Self {
        install(args, env)
    }
}

impl VerifySettings {
    pub fn resolve(args: &crate::cli::VerifyArgs, env: &Environment) -> Self {
        verify(args, env)
    }
}

fn install(args: &crate::cli::InstallArgs, env: &Environment) -> InstallSettings {
    use layerlock_env::Installer;
    let uv = on_path(env, "uv");
    let installer = match args.installer {
        Some(crate::cli::InstallerArg::Uv) => Installer::Uv,
        Some(crate::cli::InstallerArg::Pip) => Installer::Pip,
        None if uv.is_some() => Installer::Uv,
        None => Installer::Pip,
    };
    InstallSettings {
        lock: args.lock.clone(),
        python: python_arg(&args.python),
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
        default_index_urls: installer_indexes(env),
        netrc: env
            .var("NETRC")
            .map(PathBuf::from)
            .or_else(|| env.var("HOME").map(|h| Path::new(h).join(".netrc"))),
    }
}

/// The indexes pip and uv install from when no --index-url is given: their
/// environment variables, else PyPI.
fn installer_indexes(env: &Environment) -> Vec<layerlock_index::SecretUrl> {
    let main = ["UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"]
        .iter()
        .find_map(|v| env.var(v))
        .map_or_else(|| DEFAULT_INDEX.to_string(), str::to_string);
    let extras = ["UV_INDEX", "UV_EXTRA_INDEX_URL", "PIP_EXTRA_INDEX_URL"]
        .iter()
        .filter_map(|v| env.var(v))
        .flat_map(|v| {
            v.split_whitespace()
                .map(str::to_string)
                .collect::<Vec<String>>()
        });
    std::iter::once(main)
        .chain(extras)
        .map(layerlock_index::SecretUrl::new)
        .collect()
}

fn verify(args: &crate::cli::VerifyArgs, env: &Environment) -> VerifySettings {
    VerifySettings {
        cache_dir: cache_dir(None, env),
        lock: args.lock.clone(),
        python: python_arg(&args.python),
        imports: args.imports.clone(),
        integrity: args.integrity,
        format: args.format,
    }
}

impl CooldownCheck {
    pub fn resolve(
        args: &crate::cli::CooldownArgs,
        config: Option<&Config>,
        env: &Environment,
    ) -> Result<Self> {
        cooldown_check(args, config, env)
    }
}

fn cooldown_check(
    args: &crate::cli::CooldownArgs,
    config: Option<&Config>,
    env: &Environment,
) -> Result<CooldownCheck> {
    let config_cooldown = config.and_then(|c| c.file.cooldown.clone());
    let Some(cooldown) = cooldown(&args.cooldown, config_cooldown.as_ref(), env)? else {
        bail!("no minimum age: pass --min-age 7d or set [cooldown] min-age in layerlock.toml");
    };
    if let Some(rev) = &args.since
        && (rev.starts_with('-') || rev.contains(':'))
    {
        bail!("--since `{rev}` is not a git revision");
    }
    // Each config layer's outputs: their layer's index, and each target's
    // bases (used when the flags name none).
    let (index, _) = index_settings(
        &args.index,
        config.map(|c| &c.file.defaults),
        config.map_or(env.cwd.as_path(), |c| c.root.as_path()),
        &env.cwd,
    );
    let mut layer_outputs = BTreeMap::new();
    if let Some(c) = config {
        for l in c.layers() {
            let (layer_index, _) = index_settings(&args.index, Some(&l), &c.root, &env.cwd);
            for (output, targets) in l.outputs_by_target() {
                let targets = targets
                    .into_iter()
                    .map(|((python, platform), bases)| {
                        let bases = bases.iter().map(|b| c.root.join(b)).collect();
                        (layerlock_lock::LockTarget { python, platform }, bases)
                    })
                    .collect();
                layer_outputs.insert(
                    layerlock_lock::normalize(&env.cwd.join(c.root.join(output))),
                    LayerOutput {
                        index: layer_index.clone(),
                        targets,
                    },
                );
            }
        }
    }
    let layer_args = LayerArgs {
        index: args.index.clone(),
        ..LayerArgs::default()
    };
    let locks = match &args.lock {
        Some(lock) => vec![lock.clone()],
        None => config
            .map(|c| {
                c.layers()
                    .iter()
                    .flat_map(LayerConfig::outputs_by_target)
                    .map(|(o, _)| c.root.join(o))
                    .collect()
            })
            .unwrap_or_default(),
    };
    if locks.is_empty() {
        bail!(
            "no lock to check: give one (layerlock cooldown LOCK), or run where layerlock.toml names layers with an output"
        );
    }
    Ok(CooldownCheck {
        locks,
        bases: args.bases.clone(),
        layers: layer_outputs,
        since: args.since.clone(),
        cooldown,
        format: args.format,
        index,
        run: run_settings(&layer_args, env)?,
    })
}
