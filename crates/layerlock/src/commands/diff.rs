//! `layerlock diff OLD NEW`: what changed between two locks of any format.

use std::process::ExitCode;

use anyhow::{Context, Result};

use layerlock_lock::Lock;

use crate::cli::ReportFormat;
use crate::settings::DiffSettings;

pub fn run(settings: &DiffSettings) -> Result<ExitCode> {
    let read = |path: &std::path::Path| {
        Lock::read(path).with_context(|| format!("cannot read {} as a lock", path.display()))
    };
    let (old, new) = (read(&settings.old)?, read(&settings.new)?);
    let now = Some(settings.now);
    let changes = layerlock_lock::changes(&old, &new);
    let text = match settings.format {
        ReportFormat::Text => changes.text(now),
        ReportFormat::Json => changes.json(now),
        ReportFormat::Markdown => changes.markdown(now),
    };
    out!("{text}");
    Ok(if settings.exit_code && !changes.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
