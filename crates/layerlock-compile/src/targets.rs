//! A layer's targets resolved together: each on a thread of its own at
//! once, then asked to share versions for a few rounds, then checked that
//! every `--upgrade-package` names a package of some target.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use layerlock_resolve::Freed;

use crate::CompileError;
use crate::notes::Note;
use crate::plan::LayerPlan;
use crate::prepare::{BaseFiles, Keep, Prepared, prepare_with};
use crate::resolve::{Resolved, Unresolved, resolve_on};
use crate::source::{Connect, LayerSource, Shared};

/// The most rounds of asking the targets to share versions: each round
/// re-resolves only a target asked for a version it has not been asked
/// for yet, so this bounds what a target that cannot move costs.
pub const SHARING_ROUNDS: usize = 3;

/// What resolving a layer's targets needs beside the targets: where
/// sources come from, the sources and base files its targets share, and
/// what was told so far.
pub(crate) struct Together<'a> {
    pub connect: &'a dyn Connect,
    pub cwd: &'a Path,
    pub shared: Shared,
    pub files: BaseFiles,
    pub notes: Vec<Note>,
}

/// A target's view of the layer, its inputs and its source, ready.
pub(crate) type Job<'a> = (&'a LayerPlan, Prepared, Arc<dyn LayerSource>);

impl Together<'_> {
    /// Read `view`'s inputs and find its source.
    pub(crate) fn job<'v>(
        &mut self,
        view: &'v LayerPlan,
        keep: &Keep,
    ) -> Result<Job<'v>, CompileError> {
        let prepared = prepare_with(view, keep, &mut self.files)?;
        let source = self
            .shared
            .source_for(view, &prepared, self.cwd, self.connect)?;
        Ok((view, prepared, source))
    }

    /// Resolve each target on a thread of its own, at once: their waits on
    /// the index overlap, and what one fetched the others find at hand.
    /// The failure told is the first target's that failed.
    pub(crate) fn resolve_all(&mut self, jobs: Vec<Job<'_>>) -> Result<Vec<Resolved>, Unresolved> {
        let outcomes: Vec<_> = std::thread::scope(|scope| {
            let running: Vec<_> = jobs
                .into_iter()
                .map(|(view, prepared, source)| {
                    scope.spawn(move || resolve_on(view, prepared, source))
                })
                .collect();
            running
                .into_iter()
                .map(|r| r.join().expect("a target's resolution panicked"))
                .collect()
        });
        let mut resolved = Vec::new();
        for outcome in outcomes {
            let r = outcome?;
            self.notes.extend(r.notes.iter().cloned());
            resolved.push(r);
        }
        Ok(resolved)
    }

    /// Resolve one target again, through the source of its index.
    fn resolve_one(&mut self, view: &LayerPlan, keep: &Keep) -> Result<Resolved, Unresolved> {
        let (view, prepared, source) = self.job(view, keep)?;
        let r = resolve_on(view, prepared, source)?;
        self.notes.extend(r.notes.iter().cloned());
        Ok(r)
    }

    /// Ask every target for the version the others took (the lowest any
    /// took, `shared_preferences`), over its own kept pins; a target that
    /// cannot take one keeps its own and says why.
    pub(crate) fn share_versions(
        &mut self,
        views: &[LayerPlan],
        keeps: &[Keep],
        resolved: &mut [Resolved],
    ) -> Result<(), Unresolved> {
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
                resolved[i] = self.resolve_one(view, &keep)?;
                asked[i] = keep.shared;
                again = true;
            }
            if !again {
                break;
            }
        }
        Ok(())
    }
}

/// Each target's answer, labelled, as the sharing decisions read them.
pub(crate) fn pins(resolved: &[Resolved]) -> Vec<layerlock_resolve::TargetPins<'_>> {
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
pub(crate) fn check_freed(freed: &Freed, resolved: &[Resolved]) -> Result<(), CompileError> {
    // Each package on its own: one may be on one target only, another on
    // another.
    for package in &freed.packages {
        let one = Freed {
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
            return Err(CompileError::Input(e));
        }
    }
    Ok(())
}

/// What sharing versions between the targets did: the packages that stayed
/// apart, and why; the packages a target holds lower than it would alone.
pub(crate) fn tell_targets(
    resolved: &[Resolved],
    alone: &[BTreeMap<uv_normalize::PackageName, uv_pep440::Version>],
) -> Vec<Note> {
    let pins = pins(resolved);
    let mut notes = Vec::new();
    let apart = layerlock_resolve::divergences(&pins);
    if !apart.is_empty() {
        notes.push(Note::Divergent(apart));
    }
    let held = layerlock_resolve::held_together(alone, &pins);
    if !held.is_empty() {
        notes.push(Note::HeldTogether(held));
    }
    notes
}
