//! One layer compiled: the lock its output holds now (whose pins are
//! kept), each target prepared and resolved with the others, the locks to
//! write, what changed, and what was worth telling.

use std::collections::BTreeMap;
use std::path::PathBuf;

use layerlock_index::FetchStats;
use layerlock_lock::{Changes, ImageFiles, Lock, LockError};
use layerlock_resolve::{Freed, LockSpec, Resolution, to_lock};

use crate::CompileError;
use crate::notes::Note;
use crate::plan::LayerPlan;
use crate::prepare::{Keep, Prepared};
use crate::resolve::{Resolved, Unresolved};
use crate::source::Connect;
use crate::targets::{Together, check_freed, tell_targets};

/// How to compile: what `-U`/`-P` free, and what is asked beside the lock.
#[derive(Debug, Clone, Default)]
pub struct CompileOptions {
    /// Which pins of the existing output are freed.
    pub freed: Freed,
    /// `--check`: only whether the lock is current is told.
    pub check: bool,
    /// Whether what changed against the existing lock is wanted (it may
    /// ask the index for upload times).
    pub changes: bool,
    /// The working directory find-links paths of input files are from.
    pub cwd: PathBuf,
    /// Whether every wheel's files are compared with the image's and with
    /// each other (the binary always asks; a test may not need it).
    pub check_files: bool,
}

/// One layer compiled: each target's resolution, and what it writes.
pub struct Compiled {
    /// One per target, in the layer's order.
    pub resolved: Vec<Resolved>,
    /// One lock for every target, or one per target (`splits_output`).
    pub written: Vec<Written>,
    /// What was worth telling, in the order it happened.
    pub notes: Vec<Note>,
}

impl Compiled {
    /// What compiling the layer fetched, its file check included: the
    /// targets share their sources, so the first one's counts hold all.
    pub fn fetched(&self) -> FetchStats {
        self.resolved[0].source.stats()
    }
}

/// A lock to write, with the layer (or the target's view of it) whose
/// output it goes to, and what changed against the lock it replaces (when
/// there was one and it was asked).
pub struct Written {
    pub layer: LayerPlan,
    pub lock: Lock,
    pub changes: Option<Changes>,
}

/// A layer that could not be compiled: why, what its failed run fetched,
/// and what was told before it failed.
#[derive(Debug)]
pub struct Failed {
    pub error: CompileError,
    pub fetched: Option<Box<FetchStats>>,
    pub notes: Vec<Note>,
}

/// Resolve one layer over the pins of its existing output, for each of
/// its targets (asked to share versions), and say what moved.
pub fn compile_layer(
    layer: &LayerPlan,
    options: &CompileOptions,
    connect: &dyn Connect,
) -> Result<Compiled, Box<Failed>> {
    let mut together = Together {
        connect,
        cwd: &options.cwd,
        shared: Default::default(),
        files: Default::default(),
        notes: Vec::new(),
    };
    match compile_with(layer, options, &mut together) {
        Ok((resolved, written)) => Ok(Compiled {
            resolved,
            written,
            notes: together.notes,
        }),
        Err(Unresolved { error, fetched }) => Err(Box::new(Failed {
            error,
            fetched,
            notes: together.notes,
        })),
    }
}

fn compile_with(
    layer: &LayerPlan,
    options: &CompileOptions,
    together: &mut Together<'_>,
) -> Result<(Vec<Resolved>, Vec<Written>), Unresolved> {
    let views = layer.per_target();
    // One file per target: each keeps its own pins.
    let split = views.len() > 1 && layer.splits_output();
    let olds: Vec<Option<Lock>> = if split {
        views
            .iter()
            .map(|v| previous(v, &options.freed, &mut together.notes))
            .collect::<Result<_, _>>()?
    } else {
        vec![previous(layer, &options.freed, &mut together.notes)?]
    };
    let mut keeps = Vec::new();
    // Every target's inputs read and its source found before any resolves.
    let mut jobs = Vec::new();
    for (i, view) in views.iter().enumerate() {
        let keep = keep(
            view,
            if split { &olds[i] } else { &olds[0] },
            &options.freed,
        )?;
        jobs.push(together.job(view, &keep)?);
        keeps.push(keep);
    }
    let mut resolved = together.resolve_all(jobs)?;
    let alone: Vec<_> = resolved
        .iter()
        .map(|r| layerlock_resolve::versions_of(&r.resolution))
        .collect();
    if views.len() > 1 {
        together.share_versions(&views, &keeps, &mut resolved)?;
    }
    check_freed(&options.freed, &resolved)?;
    let mut parts = Vec::new();
    let mut seen = Vec::new();
    for ((view, r), keep) in views.iter().zip(&resolved).zip(&keeps) {
        together.notes.extend(young_kept(r, keep, views.len() > 1));
        let (notes, walked) = crate::walk_back::judge(r, &view.allow_walk_back, views.len() > 1)?;
        together.notes.extend(notes);
        let mut part = lock(view, &r.prepared, &r.resolution)?;
        part.header.walked_back = walked;
        if options.check_files {
            let (notes, files) = files_of(view, r, &mut part, views.len() > 1)?;
            together.notes.extend(notes);
            seen.push(files);
            // After the file check, which has found each pin's wheel.
            together
                .notes
                .extend(closure_of(r, &mut part, views.len() > 1));
        }
        parts.push(part);
    }
    // `--check` says only whether the lock is current.
    if views.len() > 1 && !options.check {
        together.notes.extend(tell_targets(&resolved, &alone));
    }
    let written = if split {
        let mut written = Vec::new();
        for (i, ((view, lock), old)) in views.into_iter().zip(parts).zip(olds).enumerate() {
            let changes = explain(options, old, &lock, &resolved[i..=i])
                .map(|c| with_files(c, seen.get(i..=i).unwrap_or_default()));
            let target = resolved[i].prepared.request.target.describe();
            let layer = LayerPlan {
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
            _ => layerlock_lock::merge_targets(&parts).map_err(CompileError::from)?,
        };
        let old = olds.into_iter().next().flatten();
        let changes = explain(options, old, &lock, &resolved).map(|c| with_files(c, &seen));
        vec![Written {
            layer: layer.clone(),
            lock,
            changes,
        }]
    };
    Ok((resolved, written))
}

/// `changes` with what the file check saw of the image on every target
/// (`seen`, one per target): the fewest compared, the most unlisted.
fn with_files(mut changes: Changes, seen: &[ImageFiles]) -> Changes {
    if let Some(first) = seen.first() {
        let mut all = first.clone();
        for one in &seen[1..] {
            all.compared = all.compared.min(one.compared);
            all.unlisted = all.unlisted.max(one.unlisted);
            for name in &one.replaced {
                if !all.replaced.contains(name) {
                    all.replaced.push(name.clone());
                }
            }
        }
        all.replaced.sort();
        changes.files = Some(all);
    }
    changes
}

/// `part`'s wheels checked file by file against the image and each other:
/// a clash is an error; what could not be listed and what is replaced on
/// purpose are recorded in its header and told.
fn files_of(
    view: &LayerPlan,
    r: &Resolved,
    part: &mut Lock,
    several: bool,
) -> Result<(Vec<Note>, ImageFiles), CompileError> {
    let request = &r.prepared.request;
    let target = request.target.describe();
    let chosen = r
        .resolution
        .packages
        .iter()
        .map(|(name, resolved)| (name.clone(), resolved.files.clone()))
        .collect();
    let image = crate::clash::Image {
        base: &request.base,
        installed: &r.prepared.installed,
        replace: &view.replace,
    };
    let report = crate::clash::check_files(part, &chosen, &image, &request.target, &**r.source);
    if !report.clashes.is_empty() {
        return Err(CompileError::Clashes {
            target,
            clashes: report.clashes,
        });
    }
    if view.require_checked && !report.unchecked.is_empty() {
        return Err(CompileError::Unchecked {
            target,
            unchecked: report.unchecked,
        });
    }
    let seen = ImageFiles {
        compared: report.image_checked,
        unlisted: report.image_unlisted,
        replaced: report.replaced.clone(),
    };
    part.header.unchecked = report.unchecked.clone();
    part.header.replaces = report.replaced.clone();
    let mut notes = Vec::new();
    if !report.replaced.is_empty() {
        notes.push(Note::Replaces(report.replaced));
    }
    if !report.unchecked.is_empty() {
        notes.push(Note::Unchecked {
            target: several.then_some(target),
            items: report.unchecked,
        });
    }
    Ok((notes, seen))
}

/// The base pins `r` uses that do not hold what they need, as a note (see
/// [`crate::closure`]); none when every one was read and holds. What they
/// need is added to `part`'s base pins at no version, so that `install`
/// and `verify` find it there (at any version) before they pass.
fn closure_of(r: &Resolved, part: &mut Lock, several: bool) -> Option<Note> {
    let request = &r.prepared.request;
    let report =
        crate::closure::check_closure(&r.resolution, &request.base, &request.target, &**r.source);
    if report.open.is_empty() && report.unchecked.is_empty() {
        return None;
    }
    part.base_used.extend(crate::closure::assumed(&report));
    part.base_used.sort_by(|a, b| a.name.cmp(&b.name));
    Some(Note::OpenBase {
        target: several.then(|| request.target.describe()),
        report,
    })
}

/// What `view`'s target keeps of `old`: its pins less what `freed` frees,
/// and the versions `-P PKG==VER` moves to.
fn keep(view: &LayerPlan, old: &Option<Lock>, freed: &Freed) -> Result<Keep, CompileError> {
    let target = layerlock_dist::Target::new(&view.python_version, &view.platform)?;
    Ok(Keep {
        preferences: match old {
            Some(old) => {
                layerlock_resolve::preferences(old, &target, freed).map_err(CompileError::Input)?
            }
            None => BTreeMap::new(),
        },
        shared: BTreeMap::new(),
        moves: moves(freed),
    })
}

/// What changed against `old`, when asked, explained by the resolutions
/// that made `lock`.
fn explain(
    options: &CompileOptions,
    old: Option<Lock>,
    lock: &Lock,
    resolved: &[Resolved],
) -> Option<Changes> {
    let old = old.filter(|_| options.changes)?;
    let across: Vec<_> = resolved
        .iter()
        .map(|r| {
            let source: &dyn layerlock_dist::PackageSource = &**r.source;
            (&r.prepared.request, &r.resolution, source)
        })
        .collect();
    let mut changes = layerlock_lock::changes(&old, lock);
    layerlock_resolve::explain_changes_across(&mut changes, &across, &options.freed);
    Some(changes)
}

/// Kept pins younger than the cooldown, said once per target.
fn young_kept(r: &Resolved, keep: &Keep, several: bool) -> Option<Note> {
    let cooldown = r.prepared.request.cooldown.as_ref()?;
    let young = layerlock_resolve::young_kept(&r.resolution, &keep.preferences, cooldown);
    (!young.is_empty()).then(|| Note::YoungKept {
        target: several.then(|| r.prepared.request.target.describe()),
        young,
    })
}

/// The lock the output holds now, whose pins are kept: `None` when there
/// is none. One that cannot be read is an error (its pins would be lost
/// without a word), unless `--upgrade` frees them all anyway.
fn previous(
    layer: &LayerPlan,
    freed: &Freed,
    notes: &mut Vec<Note>,
) -> Result<Option<Lock>, CompileError> {
    let Some(output) = &layer.output else {
        return Ok(None);
    };
    // Read once. Another tool's lock (pip-compile's, one without hashes
    // or files) is still a list of pins: its exact pins are kept, and it
    // is said so.
    let strict = layerlock_lock::read_text(&output.path).and_then(|text| {
        match Lock::parse(&output.path, &text) {
            Err(err @ (LockError::Invalid { .. } | LockError::Syntax { .. })) => {
                let Ok(pins) = Lock::parse_pins(&output.path, &text) else {
                    return Err(err);
                };
                if !freed.all {
                    notes.push(Note::Warning(format!(
                        "{} is not a lock layerlock wrote ({err}); its {} exact pin{} are kept, anything else in it is not",
                        output.shown,
                        pins.packages.len(),
                        if pins.packages.len() == 1 { "" } else { "s" }
                    )));
                }
                Ok(pins)
            }
            other => other,
        }
    });
    match strict {
        Ok(lock) => Ok(Some(lock)),
        Err(LockError::Missing { .. }) => Ok(None),
        Err(err) if freed.all => {
            notes.push(Note::Warning(format!(
                "{} cannot be read as a lock ({err}); --upgrade resolves afresh, and what changed cannot be told",
                output.shown
            )));
            Ok(None)
        }
        Err(err) => Err(CompileError::hinted(
            format!(
                "{} is the output, and its pins are kept, but it cannot be read as a lock: {err}",
                output.shown
            ),
            "fix the line, or pass --upgrade to resolve afresh (every pin is then freed)",
        )),
    }
}

/// `--upgrade-package PKG==VER` as a constraint: the package moves to
/// exactly that version, or the resolution says why it cannot.
fn moves(freed: &Freed) -> Vec<layerlock_resolve::Direct> {
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

/// The lock of one resolved layer.
fn lock(
    layer: &LayerPlan,
    prepared: &Prepared,
    resolution: &Resolution,
) -> Result<Lock, CompileError> {
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
        owned: layer
            .owned
            .iter()
            .cloned()
            .chain(
                layer
                    .owned_over
                    .iter()
                    .map(|o| format!("{o} (installed over the base's pin)")),
            )
            .collect(),
        command: layer.command.clone(),
        directory: layer.lock_directory(),
    };
    Ok(to_lock(&prepared.request, resolution, spec)?)
}

/// The packages a layer pins that plain `pip freeze` leaves out of a
/// base (pip, setuptools, wheel, distribute) when no base names them: the
/// usual cause is a base made with plain `pip freeze`, which leaves them
/// out although the image has them; installing the layer then changes the
/// image's copy (and `install` refuses). Empty without bases, or with an
/// environment base (which names everything installed).
pub fn freeze_tools_pinned(layer: &LayerPlan, lock: &Lock, left_out: &[&str]) -> Vec<String> {
    if layer.bases.is_empty() || layer.base_env.is_some() {
        return Vec::new();
    }
    lock.packages
        .iter()
        .filter(|e| left_out.contains(&e.name.as_ref()))
        .map(|e| format!("{}=={}", e.name, e.version))
        .collect()
}
