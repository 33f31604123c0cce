//! `layerlock compile`: write (or `--check`) a hash-pinned lock of what the
//! bases lack.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use layerlock_index::{Fetch, FetchStats, Traffic};
use serde_json::{Value, json};

use layerlock_lock::{Changes, Lock, comparable, write_atomic};
use layerlock_resolve::{LockSpec, Resolution, to_lock};

use crate::cli::ReportFormat;
use crate::layer::{self, Prepared};
use crate::printer::Spinner;
use crate::settings::{CompileSettings, LayerSettings};

pub fn run(settings: &CompileSettings) -> Result<ExitCode> {
    let mut stale = false;
    let mut stats = Vec::new();
    let mut compiled = Vec::new();
    // Every layer is resolved before any is written: an error in the
    // last (a `-P` that names nothing) leaves every lock as it was.
    for layer in &settings.layers {
        let label = layer.name.clone().unwrap_or_else(|| "compile".to_string());
        let spinner = Spinner::new(settings.run.quiet, &label);
        let started = Instant::now();
        let mut fetched = None;
        let outcome = compile_layer(layer, settings, &spinner, &mut fetched);
        let took = started.elapsed();
        spinner.finish();
        let layer_out = match outcome {
            Ok(ok) => ok,
            Err(err) => {
                // The stats are wanted most when the compile fails.
                if let Some(fetched) = &fetched {
                    let mut failed = layer_stats(&label, took, &Resolution::default(), fetched);
                    failed["failed"] = json!(true);
                    stats.push(failed);
                }
                write_stats(settings, stats)?;
                return Err(match &layer.name {
                    Some(name) => err.context(format!("layer `{name}`")),
                    None => err,
                });
            }
        };
        stats.push(layer_stats(
            &label,
            took,
            &layer_out.resolved.resolution,
            &layer_out.resolved.stats,
        ));
        compiled.push((layer, layer_out));
    }
    let mut reports = Vec::new();
    for (layer, out) in &compiled {
        let resolution = &out.resolved.resolution;
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
                    diag!(
                        "wrote {}: {} package{} for {}",
                        output.shown,
                        resolution.packages.len(),
                        if resolution.packages.len() == 1 {
                            ""
                        } else {
                            "s"
                        },
                        out.resolved.prepared.request.target.describe()
                    );
                }
            }
            (None, _) => out!("{text}"),
        }
        if let Some(changes) = &out.changes {
            reports.push((*layer, changes));
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

/// `--stats FILE`: every layer's, written whether or not the compile
/// succeeded.
fn write_stats(settings: &CompileSettings, stats: Vec<Value>) -> Result<()> {
    if let Some(path) = &settings.stats {
        let text = serde_json::to_string_pretty(&stats_report(stats))? + "\n";
        write_atomic(&path.path, &text).with_context(|| format!("cannot write {}", path.shown))?;
    }
    Ok(())
}

/// One layer compiled: its resolution, its lock, and what changed against
/// the output it replaces (when there was one).
struct Compiled {
    resolved: layer::Resolved,
    lock: Lock,
    changes: Option<Changes>,
}

/// Resolve one layer over the pins of its existing output, and say what
/// moved.
fn compile_layer(
    layer: &LayerSettings,
    settings: &CompileSettings,
    spinner: &Spinner,
    fetched_on_failure: &mut Option<layerlock_index::FetchStats>,
) -> Result<Compiled> {
    let old = previous(layer, &settings.freed, settings.run.quiet)?;
    let target = layerlock_dist::Target::new(&layer.python_version, &layer.platform)?;
    let keep = layer::Keep {
        preferences: match &old {
            Some(old) => layerlock_resolve::preferences(old, &target, &settings.freed)
                .map_err(|e| anyhow::anyhow!(e))?,
            None => BTreeMap::new(),
        },
        moves: moves(&settings.freed),
    };
    let resolved = layer::resolve(layer, &settings.run, spinner, &keep, fetched_on_failure)?;
    let request = &resolved.prepared.request;
    layerlock_resolve::check_freed(&settings.freed, request, &resolved.resolution)
        .map_err(|e| anyhow::anyhow!(e))?;
    if let Some(cooldown) = &request.cooldown {
        let young =
            layerlock_resolve::young_kept(&resolved.resolution, &keep.preferences, cooldown);
        if !young.is_empty() && !settings.run.quiet {
            spinner.finish();
            diag!(
                "kept {} pin{} younger than the cooldown (kept pins are not newly introduced; free one with --upgrade-package PKG):",
                young.len(),
                if young.len() == 1 { "" } else { "s" }
            );
            for y in &young {
                diag!(
                    "  {}=={} (eligible at {})",
                    y.name,
                    y.skipped,
                    y.eligible
                        .map_or("an unknown time".to_string(), layer::moment)
                );
            }
        }
    }
    let lock = lock(layer, &resolved.prepared, &resolved.resolution)?;
    // What changed is told only when asked: it may ask the index for
    // upload times.
    let told = settings.diff || settings.report.is_some();
    let changes = old.filter(|_| told).map(|old| {
        let mut changes = layerlock_lock::changes(&old, &lock);
        layerlock_resolve::explain_changes(
            &mut changes,
            request,
            &resolved.resolution,
            &settings.freed,
            &*resolved.client,
        );
        changes
    });
    Ok(Compiled {
        resolved,
        lock,
        changes,
    })
}

/// The lock the output holds now, whose pins are kept: `None` when there
/// is none. One that cannot be read is an error (its pins would be lost
/// without a word), unless `--upgrade` frees them all anyway.
fn previous(
    layer: &LayerSettings,
    freed: &layerlock_resolve::Freed,
    quiet: bool,
) -> Result<Option<Lock>> {
    let Some(output) = &layer.output else {
        return Ok(None);
    };
    // Read once. Another tool's lock (pip-compile's, one without hashes
    // or files) is still a list of pins: its exact pins are kept, and it
    // is said so.
    let strict = layerlock_lock::read_text(&output.path).and_then(|text| {
        match Lock::parse(&output.path, &text) {
            Err(
                err @ (layerlock_lock::LockError::Invalid { .. }
                | layerlock_lock::LockError::Syntax { .. }),
            ) => {
                let Ok(pins) = Lock::parse_pins(&output.path, &text) else {
                    return Err(err);
                };
                if !quiet && !freed.all {
                    diag!(
                        "warning: {} is not a lock layerlock wrote ({err}); its {} exact pin{} are kept, anything else in it is not",
                        output.shown,
                        pins.packages.len(),
                        if pins.packages.len() == 1 { "" } else { "s" }
                    );
                }
                Ok(pins)
            }
            other => other,
        }
    });
    match strict {
        Ok(lock) => Ok(Some(lock)),
        Err(layerlock_lock::LockError::Missing { .. }) => Ok(None),
        Err(err) if freed.all => {
            if !quiet {
                diag!(
                    "warning: {} cannot be read as a lock ({err}); --upgrade resolves afresh, and what changed cannot be told",
                    output.shown
                );
            }
            Ok(None)
        }
        Err(err) => Err(crate::printer::Hinted {
            message: format!(
                "{} is the output, and its pins are kept, but it cannot be read as a lock: {err}",
                output.shown
            ),
            hints: vec![
                "fix the line, or pass --upgrade to resolve afresh (every pin is then freed)"
                    .to_string(),
            ],
        }
        .into()),
    }
}

/// `--upgrade-package PKG==VER` as a constraint: the package moves to
/// exactly that version, or the resolution says why it cannot.
fn moves(freed: &layerlock_resolve::Freed) -> Vec<layerlock_resolve::Direct> {
    freed
        .packages
        .iter()
        .filter_map(|(name, version)| {
            let text = format!("{name}=={}", version.as_ref()?);
            Some(layerlock_resolve::Direct {
                requirement: text.parse().ok()?,
                via: format!("--upgrade-package {text}"),
                origin: format!("--upgrade-package {text}"),
            })
        })
        .collect()
}

/// `--diff` (stdout when the lock went to a file, else stderr) and
/// `--report FILE`.
fn report_changes(
    settings: &CompileSettings,
    reports: &[(&LayerSettings, &Changes)],
) -> Result<()> {
    let now = Some(settings.now);
    let titled = |layer: &LayerSettings, body: String| match (&layer.name, reports.len()) {
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
    layer: &LayerSettings,
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
    Ok(true)
}

/// A layer over bases that pins pip, setuptools or wheel when no base names
/// it: the usual cause is a base made with plain `pip freeze`, which leaves
/// them out although the image has them; installing the layer then changes
/// the image's copy (and `install` refuses).
fn warn_freeze_tools(layer: &LayerSettings, lock: &Lock, quiet: bool) {
    // Without bases there is no image to speak of; an environment base
    // names everything installed.
    if quiet || layer.bases.is_empty() || layer.base_env.is_some() {
        return;
    }
    let pinned: Vec<String> = lock
        .packages
        .iter()
        .filter(|e| crate::commands::install::FREEZE_LEAVES_OUT.contains(&e.name.as_ref()))
        .map(|e| format!("{}=={}", e.name, e.version))
        .collect();
    if !pinned.is_empty() {
        diag!(
            "warning: the layer pins {} and no base names {}: if the image has {} (plain `pip freeze` leaves {} out), make the base with `pip freeze --all`, or compile with --base-env PYTHON",
            pinned.join(", "),
            if pinned.len() == 1 { "it" } else { "them" },
            if pinned.len() == 1 { "it" } else { "them" },
            if pinned.len() == 1 { "it" } else { "them" }
        );
    }
}

fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 10_000.0).round() / 10.0
}

/// Requests and bytes by kind, as the stats file shows them.
fn traffic_json(traffic: &BTreeMap<Fetch, Traffic>) -> Value {
    let mut out = serde_json::Map::new();
    for (kind, t) in traffic {
        out.insert(
            kind.name().to_string(),
            json!({
                "count": t.requests,
                "bytes": t.bytes,
                "busy_ms": millis(t.busy),
                "slowest_ms": millis(t.slowest),
            }),
        );
    }
    Value::Object(out)
}

/// One layer's `--stats`: what it fetched, and when each level of its
/// dependency tree had its pages and metadata.
fn layer_stats(
    label: &str,
    took: Duration,
    resolution: &Resolution,
    fetched: &FetchStats,
) -> Value {
    let mut levels: BTreeMap<usize, (usize, Duration, Duration)> = BTreeMap::new();
    let mut arrivals = serde_json::Map::new();
    for (name, depth) in resolution.depths() {
        let arrived = fetched.arrivals.get(&name).copied().unwrap_or_default();
        arrivals.insert(
            name.to_string(),
            json!({
                "depth": depth,
                "page_ms": arrived.page.map(millis),
                "metadata_ms": arrived.metadata.map(millis),
            }),
        );
        let level = levels.entry(depth).or_default();
        level.0 += 1;
        level.1 = level.1.max(arrived.page.unwrap_or_default());
        level.2 = level.2.max(arrived.metadata.unwrap_or_default());
    }
    json!({
        "layer": label,
        "packages": resolution.packages.len(),
        "wall_ms": millis(took),
        "requests": traffic_json(&fetched.traffic),
        "pages_cached": fetched.pages_cached,
        "metadata_cached": fetched.metadata_cached,
        "resolver_waits": fetched.waits,
        "resolver_wait_ms": millis(fetched.waited),
        "longest_waits": fetched
            .longest_waits
            .iter()
            .map(|(what, waited)| json!({"for": what, "ms": millis(*waited)}))
            .collect::<Vec<_>>(),
        "levels": levels
            .into_iter()
            .map(|(level, (packages, page, metadata))| {
                json!({
                    "level": level,
                    "packages": packages,
                    "pages_done_ms": millis(page),
                    "metadata_done_ms": millis(metadata),
                })
            })
            .collect::<Vec<_>>(),
        "arrivals": arrivals,
    })
}

/// Every layer's stats, and the requests of all of them together.
fn stats_report(layers: Vec<Value>) -> Value {
    let mut total: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for layer in &layers {
        if let Some(requests) = layer["requests"].as_object() {
            for (kind, t) in requests {
                let slot = total.entry(kind.clone()).or_default();
                slot.0 += t["count"].as_u64().unwrap_or_default();
                slot.1 += t["bytes"].as_u64().unwrap_or_default();
            }
        }
    }
    json!({
        "layerlock_stats": 1,
        "requests": total
            .into_iter()
            .map(|(kind, (count, bytes))| (kind, json!({"count": count, "bytes": bytes})))
            .collect::<serde_json::Map<_, _>>(),
        "layers": layers,
    })
}

/// The lock of one resolved layer.
fn lock(layer: &LayerSettings, prepared: &Prepared, resolution: &Resolution) -> Result<Lock> {
    let mut bases: Vec<String> = layer.bases.iter().map(|b| b.shown.clone()).collect();
    if let Some(python) = &layer.base_env {
        bases.push(format!("--base-env {}", python.shown));
    }
    let spec = LockSpec {
        hashes: layer.hash_selection(),
        format: layer.format,
        path: layer
            .output
            .as_ref()
            .map_or_else(Default::default, |o| o.path.clone()),
        bases,
        owned: layer.owned.clone(),
        command: layer.command.clone(),
        directory: layer::lock_directory(layer),
    };
    Ok(to_lock(&prepared.request, resolution, spec)?)
}
