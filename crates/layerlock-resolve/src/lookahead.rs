//! Guessing what the resolver will ask for next, so that the index client
//! can fetch it first: the dependency tree of the newest versions, walked
//! as fast as metadata arrives instead of at the resolver's pace.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use uv_normalize::{ExtraName, PackageName};
use uv_pep440::{Version, VersionSpecifiers};
use uv_pep508::{Requirement, VerbatimUrl, VersionOrUrl};

use layerlock_dist::{CoreMetadata, IndexFile, ProjectFiles};

use crate::{Candidates, CandidatesMemo, ResolveRequest, speculative_wheel};

/// The pages and metadata worth fetching before the resolver asks. A guess:
/// the resolver fetches whatever else it needs itself.
pub struct Lookahead {
    request: Arc<ResolveRequest>,
    /// Versions sorted and judged, shared with the resolver.
    memo: Arc<CandidatesMemo>,
    seen: Mutex<Seen>,
}

/// What [`Lookahead::next`] guesses from one wheel's metadata.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Guess {
    /// Projects whose pages the resolver will want.
    pub projects: Vec<PackageName>,
    /// The resolver will reject this version.
    pub rejected: bool,
    /// Versions read earlier that the resolver will reject now too: each
    /// needs a version of this project that this rejection leaves none of.
    pub also_rejected: Vec<(PackageName, Version)>,
}

#[derive(Default)]
struct Seen {
    /// The extras asked of each package so far.
    extras: HashMap<PackageName, BTreeSet<ExtraName>>,
    /// The requirements of each package whose metadata came in.
    requires: HashMap<PackageName, Vec<Requirement<VerbatimUrl>>>,
    /// Each project's versions, from its page.
    candidates: HashMap<PackageName, Arc<Candidates>>,
    /// Versions read and found unusable.
    rejected: HashSet<(PackageName, Version)>,
    /// Per project, the versions read that need it, and the range they need.
    needed_by: HashMap<PackageName, Vec<(PackageName, Version, VersionSpecifiers)>>,
}

impl Seen {
    /// Whether every usable, stable version of `project` that `specs`
    /// allows was read and rejected (`false` while its page is not in).
    fn none_left(&self, project: &PackageName, specs: &VersionSpecifiers) -> bool {
        let Some(candidates) = self.candidates.get(project) else {
            return false;
        };
        let mut usable = candidates
            .iter_where(|v| !v.any_prerelease() && specs.contains(v))
            .filter(|(_, c)| c.exclusion.is_none())
            .peekable();
        usable.peek().is_some()
            && usable.all(|(v, _)| self.rejected.contains(&(project.clone(), v.clone())))
    }

    /// Record `project==version` as rejected, and with it every version
    /// read that needed it and now has nothing left; returns those.
    fn reject(&mut self, project: PackageName, version: Version) -> Vec<(PackageName, Version)> {
        let mut out = Vec::new();
        let mut queue = vec![(project, version)];
        while let Some((project, version)) = queue.pop() {
            if !self.rejected.insert((project.clone(), version.clone())) {
                continue;
            }
            let needers = self.needed_by.get(&project).cloned().unwrap_or_default();
            for (needer, at, specs) in needers {
                if specs.contains(&version)
                    && !self.rejected.contains(&(needer.clone(), at.clone()))
                    && self.none_left(&project, &specs)
                {
                    out.push((needer.clone(), at.clone()));
                    queue.push((needer, at));
                }
            }
        }
        out
    }
}

impl Lookahead {
    pub fn new(request: Arc<ResolveRequest>, memo: Arc<CandidatesMemo>) -> Self {
        let mut seen = Seen::default();
        for direct in &request.direct {
            let r = &direct.requirement;
            if !r.extras.is_empty() {
                seen.extras
                    .entry(r.name.clone())
                    .or_default()
                    .extend(r.extras.iter().cloned());
            }
        }
        Self {
            request,
            memo,
            seen: Mutex::new(seen),
        }
    }

    /// The projects `name`'s requirements need on the target, under the
    /// extras asked of it so far, that the bases do not provide. An extra
    /// asked of a package whose metadata came in earlier brings what that
    /// extra needs too. And whether the resolver will reject this version:
    /// it needs another Python, or a version of a base package other than
    /// the pinned one.
    pub fn next(&self, name: &PackageName, metadata: &CoreMetadata) -> Guess {
        let Ok(mut seen) = self.seen.lock() else {
            return Guess::default();
        };
        let version = &metadata.version;
        let mut rejected = !self.request.base.contains_key(name) && self.rejects(metadata);
        // What this version needs of the projects the bases do not hold: if
        // every usable version in a range it needs was read and rejected,
        // it will be rejected too (lock-step families such as a plugin
        // pinned `==` to a core the base holds back).
        for r in &metadata.requires_dist {
            let Some(VersionOrUrl::VersionSpecifier(specs)) = &r.version_or_url else {
                continue;
            };
            if r.name == *name
                || self.request.base.contains_key(&r.name)
                || !self.applies(r, &[], true)
            {
                continue;
            }
            seen.needed_by.entry(r.name.clone()).or_default().push((
                name.clone(),
                version.clone(),
                specs.clone(),
            ));
            rejected |= seen.none_left(&r.name, specs);
        }
        let also_rejected = if rejected {
            seen.reject(name.clone(), version.clone())
        } else {
            Vec::new()
        };
        seen.requires
            .insert(name.clone(), metadata.requires_all().cloned().collect());
        let asked: Vec<ExtraName> = seen
            .extras
            .get(name)
            .map(|e| e.iter().cloned().collect())
            .unwrap_or_default();
        let mut out = Vec::new();
        // (package, extras to read its requirements under, and whether its
        // plain requirements count too); each extra of a package is queued
        // once, when first asked, so this ends.
        let mut queue = vec![(name.clone(), asked, true)];
        while let Some((package, extras, plain)) = queue.pop() {
            let Some(requires) = seen.requires.get(&package).cloned() else {
                continue;
            };
            for r in &requires {
                // The bases' own dependencies are closed; only an extra
                // asked of a base package needs its metadata.
                if !self.applies(r, &extras, plain)
                    || r.name == package
                    || (self.request.base.contains_key(&r.name) && r.extras.is_empty())
                {
                    continue;
                }
                let wanted = seen.extras.entry(r.name.clone()).or_default();
                let new: Vec<ExtraName> = r
                    .extras
                    .iter()
                    .filter(|e| wanted.insert((*e).clone()))
                    .cloned()
                    .collect();
                if !new.is_empty() && seen.requires.contains_key(&r.name) {
                    queue.push((r.name.clone(), new, false));
                }
                out.push(r.name.clone());
            }
        }
        out.sort();
        out.dedup();
        Guess {
            projects: out,
            rejected,
            also_rejected,
        }
    }

    /// Whether `metadata`'s version cannot be part of the layer, whatever
    /// else is chosen.
    fn rejects(&self, metadata: &CoreMetadata) -> bool {
        let target = &self.request.target;
        if metadata
            .requires_python
            .as_ref()
            .is_some_and(|spec| !target.allows_python(spec))
        {
            return true;
        }
        metadata.requires_dist.iter().any(|r| {
            let Some(VersionOrUrl::VersionSpecifier(specs)) = &r.version_or_url else {
                return false;
            };
            let pinned = self
                .request
                .base
                .get(&r.name)
                .and_then(|p| p.version.as_ref());
            pinned.is_some_and(|v| !specs.contains(v)) && self.applies(r, &[], true)
        })
    }

    /// The wheel whose metadata to fetch as soon as `name`'s page is in:
    /// the newest usable version's (below `below`, when given), or for a
    /// base package asked with extras, its pinned version's.
    pub fn wheel(
        &self,
        name: &PackageName,
        project: &ProjectFiles,
        below: Option<&Version>,
    ) -> Option<IndexFile> {
        let request = &self.request;
        let sorted = || {
            self.memo
                .get(name, project, &request.target, request.filters(name))
        };
        let Some(pin) = request.base.get(name) else {
            // Sorted and judged once a project, for the resolver too; kept
            // here for `none_left`.
            let candidates = sorted();
            // A kept pin is what the resolver tries first.
            let kept = request
                .preferred(name)
                .filter(|_| below.is_none())
                .and_then(|v| candidates.get(v))
                .and_then(|c| c.best_wheel.clone());
            let pick = kept.or_else(|| speculative_wheel(&candidates, below));
            self.seen
                .lock()
                .ok()?
                .candidates
                .entry(name.clone())
                .or_insert(candidates);
            return pick;
        };
        let with_extras = self
            .seen
            .lock()
            .is_ok_and(|seen| seen.extras.get(name).is_some_and(|e| !e.is_empty()));
        if !with_extras {
            return None;
        }
        sorted().get(pin.version.as_ref()?)?.best_wheel.clone()
    }

    fn applies(&self, r: &Requirement<VerbatimUrl>, extras: &[ExtraName], plain: bool) -> bool {
        let env = self.request.target.markers();
        (plain && r.marker.evaluate(env, &[]))
            || extras
                .iter()
                .any(|extra| r.marker.evaluate(env, std::slice::from_ref(extra)))
    }
}
