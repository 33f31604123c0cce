//! Settings of the CI checks (`audit`, `tether`, `steps`), each resolved the
//! same way: `XSettings::resolve(args, config, env)` merges the flags with
//! the config file (found and parsed once, by the caller) and the
//! environment. The commands take these whole and only check and print.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use layerlock_audit::{PathMap, ScanOptions, Severity, TetherOptions};

use super::Environment;
use crate::cli::{AuditArgs, AuditFormat, FormatArg, SeverityArg, StepsArgs, TetherArgs};
use crate::config::Config;

/// An allowlist file: where it is, and its name in messages.
#[derive(Debug, Clone)]
pub struct AllowlistFile {
    pub path: PathBuf,
    pub shown: String,
}

#[derive(Debug, Clone)]
pub struct AuditSettings {
    /// The root, the targets, the path map and the default working
    /// directory (mapped into the tree).
    pub scan: ScanOptions,
    pub allowlist: Option<AllowlistFile>,
    pub format: AuditFormat,
    pub min_severity: Severity,
    pub strict: bool,
    /// `--write-baseline FILE`: where today's findings go as an allowlist.
    pub write_baseline: Option<PathBuf>,
}

#[derive(Debug, Clone)]
pub struct TetherSettings {
    /// `options.scan.root` is the repository root; `options.scan.targets`
    /// are found from `pipelines` when the command runs.
    pub options: TetherOptions,
    /// `[tether] pipelines`; none: the pipelines found under the root.
    pub pipelines: Vec<String>,
    pub allowlist: Option<AllowlistFile>,
    /// The files to check (relative to the root); `None`: every test file.
    pub only: Option<Vec<String>>,
    pub explain: Option<ExplainFile>,
    /// `--all`: stale allowlist entries are errors.
    pub all: bool,
    pub format: FormatArg,
    /// Whether the config has a `[tether]` table; without one, a run that
    /// tethers nearly nothing says what to configure.
    pub configured: bool,
}

/// `tether --explain FILE`.
#[derive(Debug, Clone)]
pub struct ExplainFile {
    /// As given, for messages.
    pub given: String,
    /// From the working directory.
    pub path: PathBuf,
    /// Relative to the root.
    pub relative: String,
}

#[derive(Debug, Clone)]
pub struct StepsSettings {
    pub root: PathBuf,
    /// The files or directories of each pipeline (absolute); each pipeline
    /// is checked on its own, as keys are unique within one. `None`: those
    /// found under the root (`layerlock_audit::pipelines::discover`), when
    /// the command runs.
    pub pipelines: Option<Vec<Vec<PathBuf>>>,
    /// Paths are shown from here (the working directory), else from the
    /// root.
    pub shown_base: PathBuf,
    /// Keys defined by pipelines not checked.
    pub external_keys: Vec<String>,
    pub no_groups: bool,
    pub format: FormatArg,
}

impl AuditSettings {
    pub fn resolve(args: &AuditArgs, config: Option<&Config>, env: &Environment) -> Result<Self> {
        let audit = config
            .and_then(|c| c.file.audit.clone())
            .unwrap_or_default();
        let config_root = config.map(|c| env.cwd.join(&c.root));
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
        let path_map = path_map(
            &args.path_map,
            config.map(|c| {
                (
                    audit.path_map.as_slice(),
                    table(c, "audit"),
                    config_root.clone().unwrap_or_else(|| env.cwd.clone()),
                )
            }),
            env,
        )?;
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
                // An allowlist the repository names (its config, or the
                // default file, maybe a symlink) must be a file of the
                // repository: its lines are printed in reports.
                let exists = fs_err::symlink_metadata(&path).is_ok();
                if exists {
                    let real = fs_err::canonicalize(&path).with_context(|| {
                        format!("the allowlist {} cannot be read", path.display())
                    })?;
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
        let allowlist = allowlist.map(|path| AllowlistFile {
            shown: path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .display()
                .to_string(),
            path,
        });
        let default_working_dir = args
            .default_working_dir
            .as_deref()
            .or(audit.default_working_dir.as_deref())
            .map(|d| path_map.dir_in(d, &root));
        let min_severity = args
            .min_severity
            .map(severity_of)
            .or(audit.min_severity)
            .unwrap_or(Severity::Low);
        Ok(Self {
            scan: ScanOptions {
                root,
                targets,
                path_map,
                default_working_dir,
            },
            allowlist,
            format: args.format,
            min_severity,
            strict: args.strict,
            write_baseline: args.write_baseline.as_ref().map(|p| env.cwd.join(p)),
        })
    }
}

impl TetherSettings {
    pub fn resolve(args: &TetherArgs, config: Option<&Config>, env: &Environment) -> Result<Self> {
        let tether = config
            .and_then(|c| c.file.tether.clone())
            .unwrap_or_default();
        let audit = config
            .and_then(|c| c.file.audit.clone())
            .unwrap_or_default();
        let root = checks_root(config, env);
        // `[tether] path-map`, else the audit's: both describe one CI.
        let (configured_map, table_name) = tether.path_map(&audit);
        let path_map = path_map(
            &args.path_map,
            config.map(|c| (configured_map, table(c, table_name), root.clone())),
            env,
        )?;
        let default_working_dir = tether
            .default_working_dir
            .as_deref()
            .map(|d| path_map.dir_in(d, &root));
        let allowlist = args
            .allowlist
            .as_ref()
            .map(|p| env.cwd.join(p))
            .or_else(|| tether.allowlist.as_ref().map(|p| root.join(p)))
            .map(|path| AllowlistFile {
                shown: relative(&path, &root),
                path,
            });
        let only = (!args.files.is_empty() && !args.all).then(|| {
            args.files
                .iter()
                .map(|f| relative(&env.cwd.join(f), &root))
                .collect()
        });
        let explain = args.explain.as_ref().map(|file| {
            let path = env.cwd.join(file);
            ExplainFile {
                given: file.clone(),
                relative: relative(&path, &root),
                path,
            }
        });
        Ok(Self {
            options: TetherOptions {
                scan: ScanOptions {
                    root,
                    // Found when the command runs, from `pipelines`.
                    targets: Vec::new(),
                    path_map,
                    default_working_dir: default_working_dir.clone(),
                },
                test_roots: tether.test_roots(),
                default_working_dir,
            },
            pipelines: tether.pipelines,
            allowlist,
            only,
            explain,
            all: args.all,
            format: args.format,
            configured: config.is_some_and(|c| c.file.tether.is_some()),
        })
    }
}

impl StepsSettings {
    pub fn resolve(args: &StepsArgs, config: Option<&Config>, env: &Environment) -> Result<Self> {
        let steps = config
            .and_then(|c| c.file.steps.clone())
            .unwrap_or_default();
        let root = checks_root(config, env);
        let pipelines: Option<Vec<Vec<PathBuf>>> = if !args.paths.is_empty() {
            Some(vec![args.paths.iter().map(|p| env.cwd.join(p)).collect()])
        } else if !steps.pipelines.is_empty() {
            Some(steps.pipelines.iter().map(|p| vec![root.join(p)]).collect())
        } else if !steps.paths.is_empty() {
            Some(vec![steps.paths.iter().map(|p| root.join(p)).collect()])
        } else {
            None
        };
        Ok(Self {
            pipelines,
            shown_base: fs_err::canonicalize(&env.cwd).unwrap_or_else(|_| env.cwd.clone()),
            external_keys: steps.external_keys,
            no_groups: args.no_groups || steps.no_groups.unwrap_or(false),
            format: args.format,
            root,
        })
    }
}

/// The root tether and steps work in: the config file's directory, else
/// the working directory.
fn checks_root(config: Option<&Config>, env: &Environment) -> PathBuf {
    let root = config
        .map(|c| env.cwd.join(&c.root))
        .unwrap_or_else(|| env.cwd.clone());
    fs_err::canonicalize(&root).unwrap_or(root)
}

/// A table of the config file, as its errors name it.
fn table(config: &Config, name: &str) -> String {
    if config
        .path
        .file_name()
        .is_some_and(|n| n == "pyproject.toml")
    {
        format!("{}: [tool.layerlock.{name}]", config.path.display())
    } else {
        format!("{}: [{name}]", config.path.display())
    }
}

/// `--path-map` flags (from the working directory), then the config's
/// `path-map` (its mappings, the table naming it, the directory they are
/// relative to).
fn path_map(
    flags: &[String],
    configured: Option<(&[String], String, PathBuf)>,
    env: &Environment,
) -> Result<PathMap> {
    let mut map = PathMap::default();
    for mapping in flags {
        map.add(mapping, &env.cwd)
            .map_err(|e| anyhow::anyhow!("--path-map {e}"))?;
    }
    if let Some((mappings, table, base)) = configured {
        for mapping in mappings {
            map.add(mapping, &base)
                .map_err(|e| anyhow::anyhow!("{table} path-map {e}"))?;
        }
    }
    Ok(map)
}

fn severity_of(arg: SeverityArg) -> Severity {
    match arg {
        SeverityArg::Info => Severity::Info,
        SeverityArg::Low => Severity::Low,
        SeverityArg::Medium => Severity::Medium,
        SeverityArg::High => Severity::High,
    }
}

/// `path` relative to `root` (symlinks resolved when it exists), else as
/// it is.
fn relative(path: &Path, root: &Path) -> String {
    let path = fs_err::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    path.strip_prefix(root)
        .unwrap_or(&path)
        .display()
        .to_string()
}
