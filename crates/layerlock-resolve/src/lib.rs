//! Resolution of a layer against fixed base pins, for one target, with
//! PubGrub, and the release-age policy it applies: cooldown ages,
//! exemptions and verdicts (`policy`), what a lock introduced and when
//! (`introduced`), and a resolution told against the same request without
//! its cooldown ([`resolve_under_cooldown`]). The resolver asks a
//! `PackageSource` and never touches the network or a file.

mod candidates;
mod explain;
mod introduced;
mod keep;
mod lock;
mod lookahead;
#[cfg(feature = "memory")]
pub mod memory;
mod policy;
mod provider;
mod request;
mod solve;
mod targets;
mod walk_back;

use std::collections::{BTreeMap, BTreeSet};

use pubgrub::PubGrubError;
use uv_normalize::PackageName;

use layerlock_dist::{PackageSource, SourceError};

pub use candidates::{
    Candidate, Candidates, CandidatesMemo, CooldownFilter, Exclusion, Filters, candidates,
    speculative_wheel,
};
pub use explain::Cause;
pub use introduced::{
    Aged, Known, LockAges, UploadTimeError, UploadTimes, lock_targets, recorded_times,
    upload_times, uploaded_at,
};
pub use keep::{Freed, check_freed, explain_changes, explain_changes_across, preferences};
pub use lock::{HashSelection, LockSpec, UnhashedFile, to_lock};
pub use lookahead::{Guess, Lookahead};
pub use policy::{
    CooldownPolicy, Exemption, HeldBack, Judgement, PolicyTextError, Verdict, eligible_on,
    exempt_target, held_back, parse_age, parse_cutoff, parse_timestamp, young_kept,
};
pub use request::{
    BasePin, Cooldown, Direct, DynamicReads, Fixed, OnlyBinary, Prerelease, Resolution,
    ResolveRequest, Resolved,
};

pub use walk_back::{Skipped, Unread, WalkedBack, released};

pub use targets::{
    Divergence, HeldTogether, TargetPins, divergences, held_together, shared_preferences,
    versions_of,
};

use provider::{Pkg, Provider};

#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error("no layer satisfies the requirements:\n{report}")]
    NoSolution {
        report: String,
        hints: Vec<String>,
        causes: Vec<Cause>,
        /// Packages whose older sdists were not downloaded once enough
        /// newer releases needed a build ([`ResolveRequest::dynamic_reads`]):
        /// the resolution failed on what was not read.
        unread: Vec<Unread>,
    },
    #[error("while looking up {package}")]
    Source {
        package: String,
        #[source]
        source: SourceError,
    },
}

/// Resolve `request` with packages from `source`.
pub fn resolve(
    source: &dyn PackageSource,
    request: &ResolveRequest,
) -> Result<Resolution, ResolveError> {
    resolve_sharing(source, request, &CandidatesMemo::default())
}

/// A resolution under a cooldown, told against the same request without
/// it.
pub struct UnderCooldown {
    pub outcome: Result<Resolution, ResolveError>,
    /// `None` without a cooldown, after an error other than no solution,
    /// or when the request has no solution without the cooldown either.
    /// Otherwise, for a resolution: each version the cooldown held back
    /// (what was chosen instead); for no solution, the cooldown alone is
    /// why, and these are the versions the free resolution uses that are
    /// not eligible yet (`chosen` is `None`, `eligible` when they will be).
    pub held: Option<Vec<HeldBack>>,
}

/// [`resolve_sharing`], and under a cooldown the same request without it,
/// to say what the cooldown held back or that it alone made the request
/// unsolvable.
pub fn resolve_under_cooldown(
    source: &dyn PackageSource,
    request: &ResolveRequest,
    memo: &CandidatesMemo,
) -> UnderCooldown {
    let outcome = resolve_sharing(source, request, memo);
    let Some(cooldown) = &request.cooldown else {
        return UnderCooldown {
            outcome,
            held: None,
        };
    };
    let free = || {
        let mut free = request.clone();
        free.cooldown = None;
        resolve_sharing(source, &free, memo).ok()
    };
    let held = match &outcome {
        Ok(with) => free().map(|without| held_back(with, &without, cooldown)),
        Err(ResolveError::NoSolution { .. }) => free().map(|without| {
            without
                .packages
                .iter()
                .filter_map(|(name, r)| {
                    let when = eligible_on(r, cooldown).filter(|w| *w > cooldown.now)?;
                    Some(HeldBack {
                        name: name.clone(),
                        chosen: None,
                        skipped: r.version.clone(),
                        eligible: Some(when),
                    })
                })
                .collect()
        }),
        Err(_) => None,
    };
    UnderCooldown { outcome, held }
}

/// Each kept pin the resolution `chosen` passed over, with why.
fn replaced(
    provider: &Provider,
    request: &ResolveRequest,
    chosen: &BTreeMap<Pkg, uv_pep440::Version>,
) -> BTreeMap<PackageName, String> {
    let passed_over = provider.state.borrow().passed_over.clone();
    let mut out = BTreeMap::new();
    for (name, preferred) in request.all_preferred() {
        if chosen.get(&Pkg::Name(name.clone())) == Some(preferred) {
            continue;
        }
        let why = match passed_over.get(name) {
            None => continue,
            Some(Some(why)) => why.clone(),
            Some(None) => provider
                .conflict_of(name, preferred, chosen)
                .unwrap_or_else(|| {
                    format!("{name}=={preferred} no longer fits with the other pins")
                }),
        };
        out.insert(name.clone(), why);
    }
    out
}

/// [`resolve`], with each project's versions sorted and judged in `memo`,
/// which a [`Lookahead`] on the same source may share.
pub fn resolve_sharing(
    source: &dyn PackageSource,
    request: &ResolveRequest,
    memo: &CandidatesMemo,
) -> Result<Resolution, ResolveError> {
    let provider = Provider::new(source, request, memo);
    let solution = match solve::solve(&provider) {
        Ok(solution) => solution,
        Err(PubGrubError::NoSolution(tree)) => {
            // The tree is not collapsed: its "no versions" leaves are where
            // base pins and platform exclusions get named.
            let (report, hints, causes) = explain::explain(&provider, &tree);
            let unread = walk_back::unread(&provider.state.borrow());
            return Err(ResolveError::NoSolution {
                report,
                hints,
                causes,
                unread,
            });
        }
        Err(PubGrubError::ErrorChoosingVersion { package, source }) => {
            return Err(ResolveError::Source {
                package: package.to_string(),
                source,
            });
        }
        Err(PubGrubError::ErrorRetrievingDependencies {
            package,
            version,
            source,
        }) => {
            return Err(ResolveError::Source {
                package: format!("{package}=={version}"),
                source,
            });
        }
        Err(PubGrubError::ErrorInShouldCancel(source)) => {
            return Err(ResolveError::Source {
                package: "the resolution".to_string(),
                source,
            });
        }
    };

    let chosen: BTreeMap<Pkg, _> = solution.into_iter().collect();
    let state = provider.state.borrow();
    // Who asked for whom: edges of every chosen node, extras folded into
    // their package.
    let mut via: BTreeMap<PackageName, BTreeSet<String>> = BTreeMap::new();
    for (pkg, version) in &chosen {
        let Some(children) = state.edges.get(&(pkg.clone(), version.clone())) else {
            continue;
        };
        for child in children {
            let label = match pkg {
                Pkg::Root => continue,
                Pkg::Name(n) | Pkg::Extra(n, _) => n.to_string(),
            };
            if Some(child) == pkg.name() {
                continue;
            }
            via.entry(child.clone()).or_default().insert(label);
        }
    }
    for direct in &request.direct {
        if direct
            .requirement
            .marker
            .evaluate(request.target.markers(), &[])
        {
            via.entry(direct.requirement.name.clone())
                .or_default()
                .insert(direct.via.clone());
        }
    }

    let mut resolution = Resolution {
        warnings: state.warnings.iter().cloned().collect(),
        ..Resolution::default()
    };
    drop(state);
    resolution.replaced = replaced(&provider, request, &chosen);
    let state = provider.state.borrow();
    for (pkg, version) in &chosen {
        let Pkg::Name(name) = pkg else { continue };
        let asked_by = via.get(name).cloned().unwrap_or_default();
        if request.base.contains_key(name) {
            resolution.base_used.insert(name.clone(), asked_by);
            continue;
        }
        let files = state
            .candidates
            .get(name)
            .and_then(|c| c.get(version))
            .map(|c| c.files.clone())
            .unwrap_or_default();
        if let Some(dynamic) = state.dynamic_versions.get(name)
            && let Some(walked) = walk_back::walked_back(
                name,
                version,
                &files,
                dynamic,
                state.not_read.get(name),
                state.candidates.get(name).map(|c| &**c),
            )
        {
            resolution.walked_back.insert(name.clone(), walked);
        }
        resolution.packages.insert(
            name.clone(),
            Resolved {
                version: version.clone(),
                files,
                via: asked_by,
                direct: request.fixed.get(name).map(|f| f.source.clone()),
            },
        );
    }
    Ok(resolution)
}
