//! `layerlock compile`: write (or `--check`) a hash-pinned lock of what the
//! bases lack. The compiling is `layerlock_compile`'s; this prints.

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use serde_json::{Value, json};

use layerlock_compile::{Clients, CompileOptions, Compiled, LayerPlan, Note};
use layerlock_lock::{Changes, Lock, comparable, write_atomic};
use layerlock_resolve::Resolution;

use crate::cli::ReportFormat;
use crate::printer::Spinner;
use crate::settings::CompileSettings;

pub fn run(settings: &CompileSettings) -> Result<ExitCode> {
    let mut stale = false;
    let mut stats = Vec::new();
    let mut compiled = Vec::new();
    let options = CompileOptions {
        freed: settings.freed.clone(),
        check: settings.check,
        changes: settings.diff || settings.report.is_some(),
        cwd: settings.run.cwd.clone(),
        check_files: true,
    };
    // Every layer is resolved before any is written: an error in the
    // last (a `-P` that names nothing) leaves every lock as it was.
    for layer in &settings.layers {
        let label = layer.name.clone().unwrap_or_else(|| "compile".to_string());
        let spinner = Spinner::new(settings.run.quiet, &label);
        let clients = Clients {
            settings: settings.run.client_settings(),
            progress: spinner.progress(),
        };
        let started = Instant::now();
        let outcome = layerlock_compile::compile_layer(layer, &options, &clients);
        let took = started.elapsed();
        spinner.finish();
        let layer_out = match outcome {
            Ok(ok) => ok,
            Err(failed) => {
                tell(&failed.notes, settings.run.quiet);
                // The stats are wanted most when the compile fails.
                if let Some(fetched) = &failed.fetched {
                    let mut failed = layerlock_compile::layer_stats(
                        &label,
                        took,
                        &Resolution::default(),
                        fetched,
                    );
                    failed["failed"] = json!(true);
                    stats.push(failed);
                }
                write_stats(settings, stats)?;
                let err = crate::printer::compile_error(failed.error);
                return Err(match &layer.name {
                    Some(name) => err.context(format!("layer `{name}`")),
                    None => err,
                });
            }
        };
        tell(&layer_out.notes, settings.run.quiet);
        let first = &layer_out.resolved[0].resolution;
        stats.push(layerlock_compile::layer_stats(
            &label,
            took,
            first,
            &layer_out.fetched(),
        ));
        compiled.push(layer_out);
    }
    let mut reports = Vec::new();
    for out in compiled.iter().flat_map(|c: &Compiled| &c.written) {
        let layer = &out.layer;
        warn_freeze_tools(layer, &out.lock, settings.run.quiet);
        let shown = layer.output.as_ref().map_or("LOCK", |o| o.shown.as_str());
        let text = out.lock.render(layer.format, shown);
        match (&layer.output, settings.check) {
            (Some(output), true) => {
                stale |= is_stale(layer, output, &text, settings.run.quiet)?;
            }
            (Some(output), false) => {
                write_atomic(&output.path, &text)
                    .with_context(|| format!("cannot write {}", output.shown))?;
                if !settings.run.quiet {
                    tell_written(&output.shown, &out.lock);
                }
            }
            (None, _) => out!("{text}"),
        }
        if let Some(changes) = &out.changes {
            reports.push((layer, changes));
        }
    }
    report_changes(settings, &reports)?;
    write_stats(settings, stats)?;
    Ok(if stale {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// What compiling a layer had to say, unless quiet.
fn tell(notes: &[Note], quiet: bool) {
    if quiet {
        return;
    }
    for line in notes.iter().flat_map(Note::lines) {
        diag!("{line}");
    }
}

/// `wrote FILE: N packages for TARGET`.
fn tell_written(shown: &str, lock: &Lock) {
    let count = lock.packages.len();
    diag!(
        "wrote {}: {} package{} for {}",
        shown,
        count,
        if count == 1 { "" } else { "s" },
        lock.header.description.as_deref().unwrap_or("the target")
    );
}

/// `--stats FILE`: every layer's, written whether or not the compile
/// succeeded.
fn write_stats(settings: &CompileSettings, stats: Vec<Value>) -> Result<()> {
    if let Some(path) = &settings.stats {
        let report = layerlock_compile::stats_report(stats);
        let text = serde_json::to_string_pretty(&report)? + "\n";
        write_atomic(&path.path, &text).with_context(|| format!("cannot write {}", path.shown))?;
    }
    Ok(())
}

/// `--diff` (stdout when the lock went to a file, else stderr) and
/// `--report FILE`.
fn report_changes(settings: &CompileSettings, reports: &[(&LayerPlan, &Changes)]) -> Result<()> {
    let now = Some(settings.now);
    let titled = |layer: &LayerPlan, body: String| match (&layer.name, reports.len()) {
        (Some(name), n) if n > 1 => format!("layer `{name}`: {body}"),
        _ => body,
    };
    if settings.diff {
        for (layer, changes) in reports {
            let text = titled(layer, changes.text(now));
            if layer.output.is_some() {
                out!("{text}");
            } else {
                diag!("{}", text.trim_end());
            }
        }
    }
    if let Some((path, format)) = &settings.report {
        let text = match format {
            ReportFormat::Json if reports.len() == 1 => reports[0].1.json(now),
            ReportFormat::Json => {
                let layers: Vec<Value> = reports
                    .iter()
                    .map(|(layer, changes)| {
                        let mut v: Value =
                            serde_json::from_str(&changes.json(now)).unwrap_or_default();
                        v["layer"] = json!(layer.name);
                        v
                    })
                    .collect();
                serde_json::to_string_pretty(&json!({"layerlock_changes": 1, "layers": layers}))?
                    + "\n"
            }
            ReportFormat::Markdown => reports
                .iter()
                .map(|(layer, changes)| titled(layer, changes.markdown(now)))
                .collect::<Vec<_>>()
                .join("\n"),
            ReportFormat::Text => reports
                .iter()
                .map(|(layer, changes)| titled(layer, changes.text(now)))
                .collect(),
        };
        let text = if reports.is_empty() {
            "no lock to compare with: every output was new\n".to_string()
        } else {
            text
        };
        write_atomic(&path.path, &text).with_context(|| format!("cannot write {}", path.shown))?;
    }
    Ok(())
}

/// `--check`: whether the lock at `output` differs from `text` (ignoring
/// how the regenerate command was spelled), saying so with a diff and the
/// command that regenerates it.
fn is_stale(
    layer: &LayerPlan,
    output: &crate::settings::UserPath,
    text: &str,
    quiet: bool,
) -> Result<bool> {
    // Bounded, and only a regular file (`-o /dev/zero --check` must not
    // read forever).
    let current = match layerlock_lock::read_text(&output.path) {
        Ok(current) => current,
        Err(layerlock_lock::LockError::Missing { .. }) => {
            diag!(
                "{} does not exist; create it with:\n    {}",
                output.shown,
                layer.command
            );
            return Ok(true);
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", output.shown)),
    };
    // The regenerate command is how, not what: a lock made by another
    // spelling of the same command is up to date.
    if comparable(&current) == comparable(text) {
        if !quiet {
            diag!("{} is up to date", output.shown);
        }
        return Ok(false);
    }
    let diff = similar::TextDiff::from_lines(current.as_str(), text);
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
    // Made by another command (flags --check does not take from a file):
    // that command is how to check it as it was made.
    let recorded = layerlock_lock::Lock::read(&output.path)
        .ok()
        .and_then(|lock| lock.header.command)
        .filter(|recorded| *recorded != layer.command);
    if let Some(recorded) = recorded {
        diag!(
            "hint: it was made with `{recorded}`; add --check to that command to judge it as made"
        );
    }
    Ok(true)
}

/// A layer over bases that pins pip, setuptools or wheel when no base names
/// it: the usual cause is a base made with plain `pip freeze`.
fn warn_freeze_tools(layer: &LayerPlan, lock: &Lock, quiet: bool) {
    if quiet {
        return;
    }
    let left_out = crate::commands::install::FREEZE_LEAVES_OUT;
    let pinned = layerlock_compile::freeze_tools_pinned(layer, lock, left_out);
    if !pinned.is_empty() {
        let them = if pinned.len() == 1 { "it" } else { "them" };
        diag!(
            "warning: the layer pins {} and no base names {them}: if the image has {them} (plain `pip freeze` leaves {them} out), make the base with `pip freeze --all`, or compile with --base-env PYTHON",
            pinned.join(", "),
        );
    }
}
