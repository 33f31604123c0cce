//! `layerlock diff OLD NEW`: what changed between two locks of any format.

use std::process::ExitCode;

use anyhow::{Context, Result};

use layerlock_lock::Lock;

use crate::cli::{DiffArgs, ReportFormat};
use crate::settings::{Environment, parse_timestamp};

pub fn run(args: &DiffArgs, env: &Environment) -> Result<ExitCode> {
    let read = |path: &std::path::Path| {
        Lock::read(path).with_context(|| format!("cannot read {} as a lock", path.display()))
    };
    let (old, new) = (read(&args.old)?, read(&args.new)?);
    let now = match args.now.as_deref() {
        Some(now) => parse_timestamp(now)?,
        None => env.now,
    };
    let changes = layerlock_lock::changes(&old, &new);
    let text = match args.format {
        ReportFormat::Text => changes.text(Some(now)),
        ReportFormat::Json => changes.json(Some(now)),
        ReportFormat::Markdown => changes.markdown(Some(now)),
    };
    out!("{text}");
    Ok(if args.exit_code && !changes.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
