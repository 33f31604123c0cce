//! `layerlock compile`: write (or `--check`) a hash-pinned lock of what the
//! bases lack.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use layerlock_index::{Fetch, FetchStats, IndexClient, Traffic};
use serde_json::{Value, json};
use uv_normalize::PackageName;
use uv_pep440::Version;

use layerlock_lock::{Changes, Lock, comparable, write_atomic};
use layerlock_resolve::{LockSpec, Resolution, ResolveRequest, to_lock};

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
        // The targets of a layer share their clients: the client's stats
        // now hold what all of them fetched.
        let first = &layer_out.resolved[0];
        let fetched = if layer_out.resolved.len() > 1 {
            first.client.stats()
        } else {
            first.stats.clone()
        };
        stats.push(layer_stats(&label, took, &first.resolution, &fetched));
        compiled.push((layer, layer_out));
    }
    let mut reports = Vec::new();
    for w in compiled.iter().flat_map(|(_, out)| &out.written) {
        let (layer, out) = (&w.layer, w);
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
                    let count = out.lock.packages.len();
                    diag!(
                        "wrote {}: {} package{} for {}",
                        output.shown,
                        count,
                        if count == 1 { "" } else { "s" },
                        out.lock
                            .header
                            .description
                            .as_deref()
                            .unwrap_or("the target")
                    );
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

/// `--stats FILE`: every layer's, written whether or not the compile
/// succeeded.
fn write_stats(settings: &CompileSettings, stats: Vec<Value>) -> Result<()> {
    if let Some(path) = &settings.stats {
        let text = serde_json::to_string_pretty(&stats_report(stats))? + "\n";
        write_atomic(&path.path, &text).with_context(|| format!("cannot write {}", path.shown))?;
    }
    Ok(())
}

/// One layer compiled: each target's resolution, and what it writes.
struct Compiled {
    /// One per target, in the layer's order.
    resolved: Vec<layer::Resolved>,
    /// One lock for every target, or one per target (`splits_output`).
    written: Vec<Written>,
}

/// A lock to write, with the layer (or the target's view of it) whose
/// output it goes to, and what changed against the lock it replaces (when
/// there was one and it was asked).
struct Written {
    layer: LayerSettings,
    lock: Lock,
    changes: Option<Changes>,
}

/// A target's request, resolution and index, as change reports read them.
type Across<'a> = (
    &'a ResolveRequest,
    &'a Resolution,
    &'a dyn layerlock_dist::PackageSource,
);

/// Index clients by the index they ask: targets that ask the same one
/// share its pages and metadata.
type Clients = Vec<(String, Arc<IndexClient>)>;

/// Resolve one layer over the pins of its existing output, for each of
/// its targets (asked to share versions), and say what moved.
fn compile_layer(
    layer: &LayerSettings,
    settings: &CompileSettings,
    spinner: &Spinner,
    fetched_on_failure: &mut Option<layerlock_index::FetchStats>,
) -> Result<Compiled> {
    let views = layer.per_target();
    // One file per target: each keeps its own pins.
    let split = views.len() > 1 && layer.splits_output();
    let olds: Vec<Option<Lock>> = if split {
        views
            .iter()
            .map(|v| previous(v, &settings.freed, settings.run.quiet))
            .collect::<Result<_>>()?
    } else {
        vec![previous(layer, &settings.freed, settings.run.quiet)?]
    };
    let mut clients = Clients::new();
    let mut files = layer::BaseFiles::new();
    let mut keeps = Vec::new();
    // Every target's inputs read and its client made before any resolves.
    let mut jobs = Vec::new();
    for (i, view) in views.iter().enumerate() {
        let target = layerlock_dist::Target::new(&view.python_version, &view.platform)?;
        let old = if split { &olds[i] } else { &olds[0] };
        let keep = layer::Keep {
            preferences: match old {
                Some(old) => layerlock_resolve::preferences(old, &target, &settings.freed)
                    .map_err(|e| anyhow::anyhow!(e))?,
                None => BTreeMap::new(),
            },
            shared: BTreeMap::new(),
            moves: moves(&settings.freed),
        };
        let prepared = layer::prepare_with(view, &keep, &mut files)?;
        let client = client_for(view, settings, &prepared, &mut clients)?;
        jobs.push((view, prepared, client));
        keeps.push(keep);
    }
    let mut resolved = resolve_together(jobs, settings, spinner, fetched_on_failure)?;
    let alone: Vec<_> = resolved
        .iter()
        .map(|r| layerlock_resolve::versions_of(&r.resolution))
        .collect();
    if views.len() > 1 {
        share_versions(
            &views,
            settings,
            spinner,
            &keeps,
            (&mut clients, &mut files),
            &mut resolved,
            fetched_on_failure,
        )?;
    }
    check_freed(&settings.freed, &resolved)?;
    let mut parts = Vec::new();
    for ((view, r), keep) in views.iter().zip(&resolved).zip(&keeps) {
        tell_young_kept(r, keep, views.len() > 1, spinner, settings.run.quiet);
        parts.push(lock(view, &r.prepared, &r.resolution)?);
    }
    // `--check` says only whether the lock is current.
    if views.len() > 1 && !settings.run.quiet && !settings.check {
        spinner.finish();
        tell_targets(&resolved, &alone);
    }
    // What changed is told only when asked: it may ask the index for
    // upload times.
    let told = settings.diff || settings.report.is_some();
    let explain = |old: Option<Lock>, lock: &Lock, across: &[Across]| {
        old.filter(|_| told).map(|old| {
            let mut changes = layerlock_lock::changes(&old, lock);
            layerlock_resolve::explain_changes_across(&mut changes, across, &settings.freed);
            changes
        })
    };
    let across: Vec<Across> = resolved
        .iter()
        .map(|r| {
            let source: &dyn layerlock_dist::PackageSource = &**r.client;
            (&r.prepared.request, &r.resolution, source)
        })
        .collect();
    let written = if split {
        let mut written = Vec::new();
        for (i, ((view, lock), old)) in views.into_iter().zip(parts).zip(olds).enumerate() {
            let changes = explain(old, &lock, &across[i..=i]);
            let target = resolved[i].prepared.request.target.describe();
            let layer = LayerSettings {
                name: Some(match &view.name {
                    Some(name) => format!("{name}, {target}"),
                    None => target,
                }),
                ..view
            };
            written.push(Written {
                layer,
                lock,
                changes,
            });
        }
        written
    } else {
        let lock = match parts.as_slice() {
            [_] => parts.pop().expect("one part"),
            _ => layerlock_lock::merge_targets(&parts)?,
        };
        let old = olds.into_iter().next().flatten();
        let changes = explain(old, &lock, &across);
        vec![Written {
            layer: layer.clone(),
            lock,
            changes,
        }]
    };
    Ok(Compiled { resolved, written })
}

/// The client of `view`'s index: one the layer's other targets made for
/// the same index, else a new one.
fn client_for(
    view: &LayerSettings,
    settings: &CompileSettings,
    prepared: &layer::Prepared,
    clients: &mut Clients,
) -> Result<Arc<IndexClient>> {
    // The key never prints: the URLs may carry credentials.
    let key = format!(
        "{:?} {:?} {}",
        view.index
            .index_urls
            .iter()
            .map(layerlock_index::SecretUrl::expose)
            .collect::<Vec<_>>(),
        view.index.find_links,
        view.index_explicit
    );
    if let Some((_, client)) = clients.iter().find(|(k, _)| *k == key) {
        return Ok(client.clone());
    }
    let client = Arc::new(layer::new_client(view, &settings.run, prepared)?);
    clients.push((key, client.clone()));
    Ok(client)
}

/// Resolve each target on a thread of its own, at once: their waits on the
/// index overlap, and what one fetched the others find at hand.
fn resolve_together(
    jobs: Vec<(&LayerSettings, layer::Prepared, Arc<IndexClient>)>,
    settings: &CompileSettings,
    spinner: &Spinner,
    fetched_on_failure: &mut Option<layerlock_index::FetchStats>,
) -> Result<Vec<layer::Resolved>> {
    let outcomes: Vec<_> = std::thread::scope(|scope| {
        let running: Vec<_> = jobs
            .into_iter()
            .map(|(view, prepared, client)| {
                scope.spawn(move || {
                    let mut fetched = None;
                    let outcome = layer::resolve_on(
                        view,
                        &settings.run,
                        spinner,
                        prepared,
                        client,
                        &mut fetched,
                    );
                    (outcome, fetched)
                })
            })
            .collect();
        running
            .into_iter()
            .map(|r| r.join().expect("a target's resolution panicked"))
            .collect()
    });
    let mut resolved = Vec::new();
    for (outcome, fetched) in outcomes {
        match outcome {
            Ok(r) => resolved.push(r),
            Err(err) => {
                // The failure told is the first target's that failed, with
                // what its run fetched.
                *fetched_on_failure = fetched;
                return Err(err);
            }
        }
    }
    Ok(resolved)
}

/// Resolve one target again, through the client of its index.
fn resolve_target(
    view: &LayerSettings,
    settings: &CompileSettings,
    spinner: &Spinner,
    keep: &layer::Keep,
    (clients, files): (&mut Clients, &mut layer::BaseFiles),
    fetched_on_failure: &mut Option<layerlock_index::FetchStats>,
) -> Result<layer::Resolved> {
    let prepared = layer::prepare_with(view, keep, files)?;
    let client = client_for(view, settings, &prepared, clients)?;
    layer::resolve_on(
        view,
        &settings.run,
        spinner,
        prepared,
        client,
        fetched_on_failure,
    )
}

/// The most rounds of asking the targets to share versions: each round
/// re-resolves only a target asked for a version it has not been asked
/// for yet, so this bounds what a target that cannot move costs.
const SHARING_ROUNDS: usize = 3;

/// Ask every target for the version the others took (the lowest any
/// took, `shared_preferences`), over its own kept pins; a target that
/// cannot take one keeps its own and says why.
fn share_versions(
    views: &[LayerSettings],
    settings: &CompileSettings,
    spinner: &Spinner,
    keeps: &[layer::Keep],
    (clients, files): (&mut Clients, &mut layer::BaseFiles),
    resolved: &mut [layer::Resolved],
    fetched_on_failure: &mut Option<layerlock_index::FetchStats>,
) -> Result<()> {
    let mut asked: Vec<BTreeMap<_, _>> = keeps.iter().map(|k| k.preferences.clone()).collect();
    for _ in 0..SHARING_ROUNDS {
        let shared = layerlock_resolve::shared_preferences(&pins(resolved));
        let mut again = false;
        for (i, view) in views.iter().enumerate() {
            let wants = shared.iter().any(|(name, version)| {
                resolved[i]
                    .resolution
                    .packages
                    .get(name)
                    .is_some_and(|r| r.version != *version)
                    && asked[i].get(name) != Some(version)
            });
            if !wants {
                continue;
            }
            let mut keep = keeps[i].clone();
            keep.shared = shared.clone();
            resolved[i] = resolve_target(
                view,
                settings,
                spinner,
                &keep,
                (&mut *clients, &mut *files),
                fetched_on_failure,
            )?;
            asked[i] = keep.shared;
            again = true;
        }
        if !again {
            break;
        }
    }
    Ok(())
}

/// Each target's answer, labelled, as the sharing decisions read them.
fn pins(resolved: &[layer::Resolved]) -> Vec<layerlock_resolve::TargetPins<'_>> {
    resolved
        .iter()
        .map(|r| layerlock_resolve::TargetPins {
            label: r.prepared.request.target.describe(),
            resolution: &r.resolution,
            base: &r.prepared.request.base,
        })
        .collect()
}

/// `--upgrade-package` must name a package of the layer: of any target.
fn check_freed(freed: &layerlock_resolve::Freed, resolved: &[layer::Resolved]) -> Result<()> {
    // Each package on its own: one may be on one target only, another on
    // another.
    for package in &freed.packages {
        let one = layerlock_resolve::Freed {
            all: false,
            packages: vec![package.clone()],
        };
        let mut first_error = None;
        for r in resolved {
            match layerlock_resolve::check_freed(&one, &r.prepared.request, &r.resolution) {
                Ok(()) => {
                    first_error = None;
                    break;
                }
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_error {
            return Err(anyhow::anyhow!(e));
        }
    }
    Ok(())
}

/// Kept pins younger than the cooldown, said once per target.
fn tell_young_kept(
    r: &layer::Resolved,
    keep: &layer::Keep,
    several: bool,
    spinner: &Spinner,
    quiet: bool,
) {
    let Some(cooldown) = &r.prepared.request.cooldown else {
        return;
    };
    let young = layerlock_resolve::young_kept(&r.resolution, &keep.preferences, cooldown);
    if young.is_empty() || quiet {
        return;
    }
    spinner.finish();
    diag!(
        "kept {} pin{} younger than the cooldown{} (kept pins are not newly introduced; free one with --upgrade-package PKG):",
        young.len(),
        if young.len() == 1 { "" } else { "s" },
        if several {
            format!(" for {}", r.prepared.request.target.describe())
        } else {
            String::new()
        }
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

/// What sharing versions between the targets did: the packages that stayed
/// apart, and why; the packages a target holds lower than it would alone.
fn tell_targets(resolved: &[layer::Resolved], alone: &[BTreeMap<PackageName, Version>]) {
    let pins = pins(resolved);
    let apart = layerlock_resolve::divergences(&pins);
    if !apart.is_empty() {
        diag!(
            "{} differ between the targets:",
            if apart.len() == 1 {
                "1 package's versions".to_string()
            } else {
                format!("{} packages' versions", apart.len())
            }
        );
        for d in &apart {
            let each: Vec<String> = d
                .versions
                .iter()
                .map(|(label, version, why)| match why {
                    Some(why) => format!("{version} on {label} ({why})"),
                    None => format!("{version} on {label}"),
                })
                .collect();
            diag!("  {}: {}", d.name, each.join("; "));
        }
    }
    let held = layerlock_resolve::held_together(alone, &pins);
    if !held.is_empty() {
        diag!(
            "{} package{} held to the version another target takes:",
            held.len(),
            if held.len() == 1 { " is" } else { "s are" }
        );
        for h in &held {
            diag!(
                "  {} {} on {} (alone it would take {}; {} takes {})",
                h.name,
                h.version,
                h.target,
                h.alone,
                if h.with.is_empty() {
                    "another target"
                } else {
                    &h.with
                },
                h.version
            );
        }
    }
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
