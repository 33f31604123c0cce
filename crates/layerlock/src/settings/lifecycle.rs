//! The settings of the commands that read a lock after compile writes it:
//! `diff`.

use std::path::PathBuf;

use anyhow::Result;
use jiff::Timestamp;

use crate::cli::{DiffArgs, ReportFormat};
use crate::settings::{Environment, parse_timestamp};

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
