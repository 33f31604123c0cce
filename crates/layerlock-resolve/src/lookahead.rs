//! Guessing what the resolver will ask for next, so that the index client
//! can fetch it first: the dependency tree of the newest versions, walked
//! as fast as metadata arrives instead of at the resolver's pace.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use uv_normalize::{ExtraName, PackageName};
use uv_pep440::Version;
use uv_pep508::{Requirement, VerbatimUrl, VersionOrUrl};

use layerlock_dist::{CoreMetadata, IndexFile, ProjectFiles};

use crate::{ResolveRequest, candidates, speculative_wheel};

/// The pages and metadata worth fetching before the resolver asks. A guess:
/// the resolver fetches whatever else it needs itself.
pub struct Lookahead {
    request: Arc<ResolveRequest>,
    seen: Mutex<Seen>,
}

/// What [`Lookahead::next`] guesses from one wheel's metadata.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Guess {
    /// Projects whose pages the resolver will want.
    pub projects: Vec<PackageName>,
    /// The resolver will reject this version.
    pub rejected: bool,
}

#[derive(Default)]
struct Seen {
    /// The extras asked of each package so far.
    extras: HashMap<PackageName, BTreeSet<ExtraName>>,
    /// The requirements of each package whose metadata came in.
    requires: HashMap<PackageName, Vec<Requirement<VerbatimUrl>>>,
}

impl Lookahead {
    pub fn new(request: Arc<ResolveRequest>) -> Self {
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
        let rejected = !self.request.base.contains_key(name) && self.rejects(metadata);
        seen.requires
            .insert(name.clone(), metadata.requires_dist.clone());
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
        }
    }

    /// Whether `metadata`'s version cannot be part of the layer, whatever
    /// else is chosen.
    fn rejects(&self, metadata: &CoreMetadata) -> bool {
        let target = &self.request.target;
        if metadata
            .requires_python
            .as_ref()
            .is_some_and(|spec| !spec.contains(target.python()))
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
        let Some(pin) = request.base.get(name) else {
            return speculative_wheel(name, project, &request.target, request.filters(name), below);
        };
        let with_extras = self
            .seen
            .lock()
            .is_ok_and(|seen| seen.extras.get(name).is_some_and(|e| !e.is_empty()));
        if !with_extras {
            return None;
        }
        candidates(name, project, &request.target, request.filters(name))
            .get(pin.version.as_ref()?)?
            .best_wheel
            .clone()
    }

    fn applies(&self, r: &Requirement<VerbatimUrl>, extras: &[ExtraName], plain: bool) -> bool {
        let env = self.request.target.markers();
        (plain && r.marker.evaluate(env, &[]))
            || extras
                .iter()
                .any(|extra| r.marker.evaluate(env, std::slice::from_ref(extra)))
    }
}
