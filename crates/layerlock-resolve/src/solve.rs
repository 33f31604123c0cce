//! PubGrub's solving loop, with one addition: when a package keeps being
//! rejected because of the version chosen for another, the order flips.
//!
//! PubGrub decides packages one at a time and never revisits the order. If
//! `tenacity` is decided first at its newest version and every recent
//! `google-genai` caps it lower, the loop walks down `google-genai` one
//! version (one metadata fetch) at a time until it finds one without the
//! cap, possibly years old. After [`CONFLICTS`] such rejections the package
//! that keeps losing is decided earlier, the one that keeps winning later,
//! and the solution is backtracked to before the winner's decision: both
//! then get recent versions where they exist. uv resolves the same way, so
//! the two agree on such layers.

use std::collections::{HashMap, HashSet};

use pubgrub::{ConflictId, Dependencies, DependencyProvider, Id, PubGrubError, State};
use uv_pep440::Version;

use crate::provider::{Pkg, Provider, Range};

/// Rejections before the order of two packages flips.
pub(crate) const CONFLICTS: u32 = 5;

/// How often each package was rejected because of another's version
/// (affected), and caused another's rejection (culprit).
#[derive(Default)]
struct Conflicts {
    affected: HashMap<Id<Pkg>, u32>,
    culprit: HashMap<Id<Pkg>, u32>,
}

impl Conflicts {
    /// Count a conflict; returns the packages to decide earlier and later.
    fn record<'a>(
        &mut self,
        state: &State<Provider<'a>>,
        affected: Id<Pkg>,
        conflict: &ConflictId<Provider<'a>>,
    ) -> (Vec<Id<Pkg>>, Vec<Id<Pkg>>) {
        let (mut early, mut late) = (Vec::new(), Vec::new());
        let mut real = false;
        for culprit in state.conflict_packages(conflict) {
            if culprit == affected || matches!(state.package_store[culprit], Pkg::Root) {
                continue;
            }
            real = true;
            let count = self.culprit.entry(culprit).or_default();
            *count += 1;
            if *count == CONFLICTS {
                late.push(culprit);
            }
        }
        if real {
            let count = self.affected.entry(affected).or_default();
            *count += 1;
            if *count == CONFLICTS {
                early.push(affected);
            }
        }
        (early, late)
    }

    /// Conflicts `package` took part in, either way.
    fn count(&self, package: Id<Pkg>) -> u32 {
        self.affected.get(&package).copied().unwrap_or_default()
            + self.culprit.get(&package).copied().unwrap_or_default()
    }
}

/// Solve for `provider`'s requirements: the chosen version of every node.
// PubGrub's error is large, and returned once per resolution.
#[allow(clippy::result_large_err)]
pub(crate) fn solve<'a>(
    provider: &Provider<'a>,
) -> Result<Vec<(Pkg, Version)>, PubGrubError<Provider<'a>>> {
    let mut state: State<Provider<'a>> = State::init(Pkg::Root, crate::provider::root_version());
    let mut conflicts = Conflicts::default();
    // Versions whose dependencies are already incompatibilities.
    let mut added: HashSet<(Id<Pkg>, Version)> = HashSet::new();
    let mut next = state.root_package;
    // Packages to decide earlier and later, applied once propagation is done.
    let mut reorder: (Vec<Id<Pkg>>, Vec<Id<Pkg>>) = (Vec::new(), Vec::new());
    loop {
        let causes = state
            .unit_propagation(next)
            .map_err(PubGrubError::NoSolution)?;
        for (affected, conflict) in causes {
            let (early, late) = conflicts.record(&state, affected, &conflict);
            reorder.0.extend(early);
            reorder.1.extend(late);
        }
        // After propagation, before the next choice (as uv does).
        reprioritize(provider, &mut state, std::mem::take(&mut reorder));

        let store = &state.package_store;
        let Some((highest, range)) = state
            .partial_solution
            .pick_highest_priority_pkg(|p, r| provider.priority(&store[p], r, conflicts.count(p)))
        else {
            return Ok(state
                .partial_solution
                .extract_solution()
                .map(|(p, v)| (state.package_store[p].clone(), v))
                .collect());
        };
        next = highest;
        let range = range.clone();
        let package = state.package_store[next].clone();
        let decision = provider
            .choose_version(&package, &range)
            .map_err(|source| PubGrubError::ErrorChoosingVersion {
                package: package.clone(),
                source,
            })?;
        let Some(version) = decision else {
            state.add_no_versions(next, range);
            continue;
        };
        if !range.contains(&version) {
            return Err(PubGrubError::ErrorChoosingVersion {
                package,
                source: layerlock_dist::SourceError::Other {
                    message: format!("{version} was chosen outside {range}"),
                },
            });
        }
        if !added.insert((next, version.clone())) {
            // Its dependencies are incompatibilities already, none unsatisfied.
            state.partial_solution.add_decision(next, version);
            continue;
        }
        let dependencies = provider
            .get_dependencies(&package, &version)
            .map_err(|source| PubGrubError::ErrorRetrievingDependencies {
                package: package.clone(),
                version: version.clone(),
                source,
            })?;
        let dependencies = match dependencies {
            Dependencies::Unavailable(reason) => {
                state.add_unavailable(next, Range::singleton(version), reason);
                continue;
            }
            Dependencies::Available(dependencies) => dependencies,
        };
        let versions = Range::singleton(version.clone());
        if let Some(conflict) =
            state.add_package_version_dependencies(next, version, versions, dependencies)
        {
            let (early, late) = conflicts.record(&state, next, &conflict);
            reorder.0.extend(early);
            reorder.1.extend(late);
        }
    }
}

/// Decide the packages that keep losing earlier and the ones that keep
/// winning later, backtracking to before each winner was decided.
fn reprioritize(
    provider: &Provider<'_>,
    state: &mut State<Provider<'_>>,
    (early, late): (Vec<Id<Pkg>>, Vec<Id<Pkg>>),
) {
    for id in early {
        provider.decide_early(&state.package_store[id]);
    }
    for id in late {
        if provider.decide_late(&state.package_store[id]) {
            state.backtrack_package(id);
        }
    }
}
