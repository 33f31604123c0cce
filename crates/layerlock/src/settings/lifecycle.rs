//! The settings of the commands that read a lock after compile writes it:
//! `diff`, `install`, `verify`, `cooldown`.

use std::path::PathBuf;

use anyhow::Result;
use jiff::Timestamp;

use layerlock_env::Installer;

use crate::cli::{DiffArgs, FormatArg, ReportFormat};
use crate::settings::{CooldownPlan, Environment, IndexPlan, RunSettings, parse_timestamp};

pub use layerlock_compile::LayerOutput;

/// `layerlock diff OLD NEW`.
#[derive(Debug, Clone)]
pub struct DiffSettings {
    pub old: PathBuf,
    pub new: PathBuf,
    pub format: ReportFormat,
    /// The time ages are measured at (`--now`, else now).
    pub now: Timestamp,
    /// `--exit-code`: exit 1 when the locks differ.
    pub exit_code: bool,
}

impl DiffSettings {
    pub fn resolve(args: &DiffArgs, env: &Environment) -> Result<Self> {
        Ok(Self {
            old: args.old.clone(),
            new: args.new.clone(),
            format: args.format,
            now: match args.now.as_deref() {
                Some(now) => parse_timestamp(now)?,
                None => env.now,
            },
            exit_code: args.exit_code,
        })
    }
}

/// `layerlock install LOCK`.
#[derive(Debug, Clone)]
pub struct InstallSettings {
    pub lock: PathBuf,
    pub python: PathBuf,
    pub installer: Installer,
    /// The uv executable, when the installer is uv.
    pub uv: Option<PathBuf>,
    pub allow_change: Vec<String>,
    pub dry_run: bool,
    pub report: Option<PathBuf>,
    pub index_url: Option<layerlock_index::SecretUrl>,
    pub extra_index_urls: Vec<layerlock_index::SecretUrl>,
    pub find_links: Vec<PathBuf>,
    pub quiet: bool,
    /// Where interpreter inspections are cached.
    pub cache_dir: Option<PathBuf>,
    /// Where the wheels' file lists are looked up when no --index-url is
    /// given: the installer's own index (PIP_INDEX_URL, UV_INDEX_URL,
    /// UV_DEFAULT_INDEX and their extras), else PyPI.
    pub default_index_urls: Vec<layerlock_index::SecretUrl>,
    pub netrc: Option<PathBuf>,
}

/// `layerlock verify LOCK`.
#[derive(Debug, Clone)]
pub struct VerifySettings {
    pub lock: PathBuf,
    pub python: PathBuf,
    pub imports: Vec<String>,
    pub integrity: bool,
    pub format: FormatArg,
    /// Where interpreter inspections are cached.
    pub cache_dir: Option<PathBuf>,
}

/// `layerlock cooldown LOCK...`.
#[derive(Debug, Clone)]
pub struct CooldownCheck {
    /// Each checked in turn.
    pub locks: Vec<PathBuf>,
    /// `--base` files, for every lock.
    pub bases: Vec<PathBuf>,
    /// Each config layer's output (absolute): its layer's index, and each
    /// target's bases (used without `--base`).
    pub layers: std::collections::BTreeMap<PathBuf, LayerOutput>,
    pub since: Option<String>,
    pub cooldown: CooldownPlan,
    pub format: FormatArg,
    /// The flags' index (the config's top level under them).
    pub index: IndexPlan,
    pub run: RunSettings,
}
