//! `layerlock compile`: write (or `--check`) a hash-pinned lock of what the
//! bases lack.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};

use layerlock_lock::{Lock, comparable, write_atomic};
use layerlock_resolve::{HashSelection, LockSpec, Resolution, to_lock};

use crate::cli::HashesArg;
use crate::layer::{self, Prepared};
use crate::printer::Spinner;
use crate::settings::{CompileSettings, LayerSettings, normalize};

pub fn run(settings: &CompileSettings) -> Result<ExitCode> {
    let mut stale = false;
    for layer in &settings.layers {
        let label = layer.name.clone().unwrap_or_else(|| "compile".to_string());
        let spinner = Spinner::new(settings.run.quiet, &label);
        let outcome = layer::resolve(layer, &settings.run, &spinner);
        spinner.finish();
        let (prepared, resolution) = match (&layer.name, outcome) {
            (_, Ok(ok)) => ok,
            (Some(name), Err(err)) => return Err(err.context(format!("layer `{name}`"))),
            (None, Err(err)) => return Err(err),
        };
        let lock = lock(layer, &prepared, &resolution)?;
        let shown = layer.output.as_ref().map_or("LOCK", |o| o.shown.as_str());
        let text = lock.render(layer.format, shown);
        match (&layer.output, settings.check) {
            (Some(output), true) => {
                // Bounded, and only a regular file (`-o /dev/zero --check`
                // must not read forever).
                let current = match layerlock_lock::read_text(&output.path) {
                    Ok(text) => text,
                    Err(layerlock_lock::LockError::Io { source, .. })
                        if source.kind() == std::io::ErrorKind::NotFound =>
                    {
                        stale = true;
                        diag!(
                            "{} does not exist; create it with:\n    {}",
                            output.shown,
                            layer.command
                        );
                        continue;
                    }
                    Err(e) => {
                        return Err(e).with_context(|| format!("cannot read {}", output.shown));
                    }
                };
                // The regenerate command is how, not what: a lock made by
                // another spelling of the same command is up to date.
                if comparable(&current) == comparable(&text) {
                    if !settings.run.quiet {
                        diag!("{} is up to date", output.shown);
                    }
                } else {
                    stale = true;
                    let diff = similar::TextDiff::from_lines(&current, &text);
                    out!(
                        "{}",
                        diff.unified_diff()
                            .context_radius(2)
                            .header(&output.shown, &format!("{} (regenerated)", output.shown))
                    );
                    diag!(
                        "{} is stale; regenerate it with:\n    {}",
                        output.shown,
                        layer.command
                    );
                }
            }
            (Some(output), false) => {
                write_atomic(&output.path, &text)
                    .with_context(|| format!("cannot write {}", output.shown))?;
                if !settings.run.quiet {
                    diag!(
                        "wrote {}: {} package{} for {}",
                        output.shown,
                        resolution.packages.len(),
                        if resolution.packages.len() == 1 {
                            ""
                        } else {
                            "s"
                        },
                        prepared.request.target.describe()
                    );
                }
            }
            (None, _) => out!("{text}"),
        }
    }
    Ok(if stale {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The lock of one resolved layer.
fn lock(layer: &LayerSettings, prepared: &Prepared, resolution: &Resolution) -> Result<Lock> {
    let mut bases: Vec<String> = layer.bases.iter().map(|b| b.shown.clone()).collect();
    if let Some(python) = &layer.base_env {
        bases.push(format!("--base-env {}", python.shown));
    }
    let spec = LockSpec {
        hashes: match layer.hashes {
            HashesArg::All => HashSelection::All,
            HashesArg::Target => HashSelection::Target,
        },
        format: layer.format,
        path: layer
            .output
            .as_ref()
            .map_or_else(Default::default, |o| o.path.clone()),
        bases,
        owned: layer.owned.clone(),
        command: layer.command.clone(),
        directory: match &layer.output {
            Some(o) => normalize(&layer.cwd.join(&o.path))
                .parent()
                .map_or_else(|| layer.display_root.clone(), Path::to_path_buf),
            None => layer.display_root.clone(),
        },
    };
    Ok(to_lock(&prepared.request, resolution, spec)?)
}
