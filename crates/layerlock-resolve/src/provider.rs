//! The PubGrub dependency provider: base pins are fixed facts, every other
//! package is chosen from the versions usable on the target.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use pubgrub::{Dependencies, DependencyProvider, PackageResolutionStatistics, Ranges};
use uv_normalize::{ExtraName, PackageName};
use uv_pep440::{Operator, Version};
use uv_pep508::{Requirement, VerbatimUrl, VersionOrUrl};

use layerlock_dist::{IndexFile, PackageSource, ProjectAnswer, SourceError};

use crate::candidates::{Candidate, Candidates, CandidatesMemo, Exclusion};
use crate::request::{Prerelease, ResolveRequest};

/// A node of the resolution: the root, a package, or a package with an extra
/// (which depends on the package at the same version, like uv does).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Pkg {
    Root,
    Name(PackageName),
    Extra(PackageName, ExtraName),
}

impl Pkg {
    pub(crate) fn name(&self) -> Option<&PackageName> {
        match self {
            Self::Root => None,
            Self::Name(n) | Self::Extra(n, _) => Some(n),
        }
    }
}

impl fmt::Display for Pkg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Root => write!(f, "your requirements"),
            Self::Name(n) => write!(f, "{n}"),
            Self::Extra(n, e) => write!(f, "{n}[{e}]"),
        }
    }
}

pub(crate) type Range = Ranges<Version>;

/// Decided first: the highest class, then the most conflicts, then the
/// earliest discovered.
pub(crate) type Priority = (u8, u32, Reverse<usize>);

/// The most versions of one package whose metadata is fetched ahead while
/// the resolver backtracks through it.
const MAX_LOOKAHEAD: usize = 16;

#[derive(Default)]
pub(crate) struct State {
    pub(crate) candidates: HashMap<PackageName, Arc<Candidates>>,
    /// Projects no index knows, with the indexes asked.
    pub(crate) not_found: BTreeMap<PackageName, Vec<String>>,
    /// The package names each chosen node depends on (for `# via`).
    pub(crate) edges: HashMap<(Pkg, Version), Vec<PackageName>>,
    order: HashMap<PackageName, usize>,
    /// Versions pinned with `==` (a yanked one may then be used; PEP 592).
    exact_pins: HashMap<PackageName, HashSet<Version>>,
    /// The version last chosen of each package, and how many different
    /// choices it has had (more than one: the resolver is backtracking).
    choices: HashMap<PackageName, (Version, usize)>,
    /// Packages that kept losing conflicts (decided earlier) and that kept
    /// winning them (decided later); see `solve`.
    early: HashSet<Pkg>,
    late: HashSet<Pkg>,
    pub(crate) warnings: BTreeSet<String>,
    /// Why each preferred version was last passed over: `None` when the
    /// range PubGrub asked for left it out (a conflict, told afterwards by
    /// [`Provider::conflict_of`]).
    pub(crate) passed_over: HashMap<PackageName, Option<String>>,
    /// Source distributions whose dependencies only a build could say,
    /// with why (for the hints).
    pub(crate) dynamic: BTreeMap<PackageName, Vec<String>>,
    /// The same, by version: the versions passed over only because a
    /// build would say their dependencies (what a walk-back skipped).
    pub(crate) dynamic_versions: BTreeMap<PackageName, BTreeMap<Version, String>>,
    /// Versions whose sdist was not downloaded because enough newer ones
    /// already needed a build ([`ResolveRequest::dynamic_reads`]).
    pub(crate) not_read: BTreeMap<PackageName, BTreeSet<Version>>,
}

impl State {
    /// `name==version` cannot be used: only a build could say what it
    /// needs, for `why`.
    fn dynamic(&mut self, name: &PackageName, version: &Version, why: String) {
        self.dynamic_versions
            .entry(name.clone())
            .or_default()
            .entry(version.clone())
            .or_insert_with(|| why.clone());
        self.dynamic.entry(name.clone()).or_default().push(why);
    }
}

pub(crate) struct Provider<'a> {
    pub(crate) source: &'a dyn PackageSource,
    pub(crate) request: &'a ResolveRequest,
    /// Versions sorted and judged, shared with the lookahead.
    memo: &'a CandidatesMemo,
    constraints: HashMap<PackageName, Range>,
    pub(crate) state: RefCell<State>,
}

pub(crate) fn root_version() -> Version {
    Version::new([0])
}

impl<'a> Provider<'a> {
    pub(crate) fn new(
        source: &'a dyn PackageSource,
        request: &'a ResolveRequest,
        memo: &'a CandidatesMemo,
    ) -> Self {
        let mut constraints: HashMap<PackageName, Range> = HashMap::new();
        let state = RefCell::new(State::default());
        for c in &request.constraints {
            if let Some(VersionOrUrl::VersionSpecifier(specs)) = &c.requirement.version_or_url {
                if !c.requirement.marker.evaluate(request.target.markers(), &[]) {
                    continue;
                }
                let range = Range::from(specs.clone());
                let entry = constraints
                    .entry(c.requirement.name.clone())
                    .or_insert_with(Range::full);
                *entry = entry.intersection(&range);
            }
        }
        Self {
            source,
            request,
            memo,
            constraints,
            state,
        }
    }

    fn is_base(&self, name: &PackageName) -> bool {
        self.request.base.contains_key(name)
    }

    /// A base pin or a package from its source: one version, known
    /// without the index.
    fn is_fixed(&self, name: &PackageName) -> bool {
        self.is_base(name) || self.request.fixed.contains_key(name)
    }

    /// The project's versions, fetched once.
    pub(crate) fn candidates(&self, name: &PackageName) -> Result<Arc<Candidates>, SourceError> {
        if let Some(c) = self.state.borrow().candidates.get(name) {
            return Ok(c.clone());
        }
        let answer = self.source.project(name)?;
        let result = match answer.as_ref() {
            ProjectAnswer::Found(project) => self.memo.get(
                name,
                project,
                &self.request.target,
                self.request.filters(name),
            ),
            ProjectAnswer::NotFound { asked } => {
                self.state
                    .borrow_mut()
                    .not_found
                    .insert(name.clone(), asked.clone());
                Arc::new(Candidates::default())
            }
            ProjectAnswer::NotCached { asked } => {
                return Err(SourceError::Offline {
                    url: format!("the page of {name} on {}", asked.join(", ")),
                });
            }
        };
        self.state
            .borrow_mut()
            .candidates
            .insert(name.clone(), result.clone());
        Ok(result)
    }

    fn usable(&self, name: &PackageName, version: &Version, candidate: &Candidate) -> bool {
        match &candidate.exclusion {
            None => true,
            Some(Exclusion::Yanked(_)) => self
                .state
                .borrow()
                .exact_pins
                .get(name)
                .is_some_and(|pins| pins.contains(version)),
            Some(_) => false,
        }
    }

    /// Turn one requirement into dependency edges, or say why it cannot be.
    fn edges_of(
        &self,
        requirement: &Requirement<VerbatimUrl>,
        out: &mut BTreeMap<Pkg, Range>,
    ) -> Result<(), String> {
        let name = &requirement.name;
        if let Some(pin) = self.request.base.get(name)
            && pin.version.is_none()
        {
            // Provided by the image at a version we do not know: taken as
            // satisfied. Its extras' dependencies cannot be looked up.
            if !requirement.extras.is_empty() {
                let mut state = self.state.borrow_mut();
                state.warnings.insert(format!(
                        "{name} is provided by {} without a version, so the dependencies of {}[{}] were not checked",
                        pin.origin,
                        name,
                        requirement
                            .extras
                            .iter()
                            .map(ToString::to_string)
                            .collect::<Vec<_>>()
                            .join(",")
                    ));
            }
            return Ok(());
        }
        if self.dropped_by_override(name) {
            return Ok(());
        }
        let overridden = self.overridden(requirement);
        let requirement = overridden.as_ref().unwrap_or(requirement);
        let mut range = match &requirement.version_or_url {
            None => Range::full(),
            Some(VersionOrUrl::VersionSpecifier(specs)) => {
                let mut state = self.state.borrow_mut();
                for spec in specs.iter() {
                    if matches!(spec.operator(), Operator::Equal | Operator::ExactEqual) {
                        state
                            .exact_pins
                            .entry(name.clone())
                            .or_default()
                            .insert(spec.version().clone());
                    }
                }
                Range::from(specs.clone())
            }
            Some(VersionOrUrl::Url(url)) => {
                if self.is_fixed(name) {
                    Range::full()
                } else {
                    return Err(format!(
                        "it asks for {name} by URL ({url}); layerlock resolves from indexes only, so put {name} in the base or pin it by version"
                    ));
                }
            }
        };
        if let Some(constraint) = self.constraints.get(name) {
            range = range.intersection(constraint);
        }
        let mut add = |pkg: Pkg, range: &Range| {
            let entry = out.entry(pkg).or_insert_with(Range::full);
            *entry = entry.intersection(range);
        };
        add(Pkg::Name(name.clone()), &range);
        for extra in requirement.extras.iter() {
            add(Pkg::Extra(name.clone(), extra.clone()), &range);
        }
        let mut state = self.state.borrow_mut();
        let next = state.order.len();
        state.order.entry(name.clone()).or_insert(next);
        Ok(())
    }

    fn finish(
        &self,
        pkg: &Pkg,
        version: &Version,
        deps: BTreeMap<Pkg, Range>,
    ) -> Dependencies<Pkg, Range, String> {
        let names: Vec<PackageName> = deps
            .keys()
            .filter_map(Pkg::name)
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        for name in &names {
            if !self.is_fixed(name) {
                self.source.prefetch_project(name);
            }
        }
        self.state
            .borrow_mut()
            .edges
            .insert((pkg.clone(), version.clone()), names);
        Dependencies::Available(deps.into_iter().collect())
    }

    /// Whether `--override`s name `name` and none holds on the target: every
    /// requirement on it is then dropped, as uv does (`X ; sys_platform ==
    /// "never"` keeps a package out of the layer).
    fn dropped_by_override(&self, name: &PackageName) -> bool {
        let env = self.request.target.markers();
        let mut named = self
            .request
            .overrides
            .iter()
            .filter(|o| o.requirement.name == *name)
            .peekable();
        named.peek().is_some() && !named.any(|o| o.requirement.marker.evaluate(env, &[]))
    }

    /// `requirement` with its version specifier replaced by the
    /// `--override`s of its package that apply on the target (`None` when
    /// none does). Its name, extras and marker stay.
    fn overridden(
        &self,
        requirement: &Requirement<VerbatimUrl>,
    ) -> Option<Requirement<VerbatimUrl>> {
        let env = self.request.target.markers();
        let mut specs: Option<Vec<uv_pep440::VersionSpecifier>> = None;
        for o in &self.request.overrides {
            if o.requirement.name != requirement.name || !o.requirement.marker.evaluate(env, &[]) {
                continue;
            }
            let mine = specs.get_or_insert_with(Vec::new);
            if let Some(VersionOrUrl::VersionSpecifier(given)) = &o.requirement.version_or_url {
                mine.extend(given.iter().cloned());
            }
        }
        let specs = specs?;
        let mut replaced = requirement.clone();
        replaced.version_or_url = (!specs.is_empty())
            .then(|| VersionOrUrl::VersionSpecifier(specs.into_iter().collect()));
        Some(replaced)
    }

    /// The kept pin of `name`, when `range` and the target still allow it;
    /// otherwise why not is recorded and `None` returned.
    fn preferred(
        &self,
        name: &PackageName,
        range: &Range,
        candidates: &Candidates,
    ) -> Result<Option<Version>, SourceError> {
        let Some(preferred) = self.request.preferred(name) else {
            return Ok(None);
        };
        let why = match candidates.get(preferred) {
            Some(c) if c.exclusion == Some(Exclusion::Damaged) => {
                return Err(damaged(name, preferred));
            }
            _ if !range.contains(preferred) => {
                // Told afterwards (`conflict_of`), unless its own metadata
                // already said why.
                self.state
                    .borrow_mut()
                    .passed_over
                    .entry(name.clone())
                    .or_insert(None);
                return Ok(None);
            }
            None => format!("{name}=={preferred} is not on any index asked"),
            Some(_)
                if preferred.any_prerelease()
                    && self.request.prerelease == Prerelease::Disallow =>
            {
                format!("{name}=={preferred} is a pre-release, and pre-releases are not allowed")
            }
            Some(c) if self.usable(name, preferred, c) => return Ok(Some(preferred.clone())),
            Some(c) => format!(
                "{name}=={preferred}: {}",
                c.exclusion
                    .as_ref()
                    .map_or_else(|| "not usable".to_string(), ToString::to_string)
            ),
        };
        self.state
            .borrow_mut()
            .passed_over
            .insert(name.clone(), Some(why));
        Ok(None)
    }

    /// Why `name==preferred` does not fit the resolution `chosen`: a
    /// requirement, constraint or override of the layer that excludes it,
    /// a dependency of it the image's pins rule out, or a chosen package
    /// that needs another version of it. `None` when none of these says.
    pub(crate) fn conflict_of(
        &self,
        name: &PackageName,
        preferred: &Version,
        chosen: &BTreeMap<Pkg, Version>,
    ) -> Option<String> {
        let env = self.request.target.markers();
        let excludes = |r: &Requirement<VerbatimUrl>, v: &Version| {
            r.marker.evaluate(env, &[])
                && matches!(&r.version_or_url, Some(VersionOrUrl::VersionSpecifier(s)) if !s.contains(v))
        };
        let plain = |r: &Requirement<VerbatimUrl>| {
            let mut r = r.clone();
            r.marker = uv_pep508::MarkerTree::TRUE;
            r.to_string()
        };
        let own = self.request.direct.iter().chain(&self.request.constraints);
        for d in own.chain(&self.request.overrides) {
            if d.requirement.name == *name && excludes(&d.requirement, preferred) {
                let at = if d.origin.is_empty() {
                    &d.via
                } else {
                    &d.origin
                };
                return Some(format!("{at} asks for {}", plain(&d.requirement)));
            }
        }
        if let Ok(Ok(metadata)) = self.metadata(name, preferred) {
            for r in &metadata.requires_dist {
                let Some(pin) = self.request.base.get(&r.name) else {
                    continue;
                };
                if let Some(v) = &pin.version
                    && excludes(r, v)
                {
                    return Some(format!(
                        "{name}=={preferred} needs {}, but the image pins {}=={v} ({})",
                        plain(r),
                        r.name,
                        pin.origin
                    ));
                }
            }
        }
        for (pkg, version) in chosen {
            let Pkg::Name(other) = pkg else { continue };
            if other == name || self.is_base(other) {
                continue;
            }
            let Ok(Ok(metadata)) = self.metadata(other, version) else {
                continue;
            };
            if let Some(r) = metadata
                .requires_dist
                .iter()
                .find(|r| r.name == *name && excludes(r, preferred))
            {
                return Some(format!("{other}=={version} needs {}", plain(r)));
            }
        }
        None
    }

    /// Choose the kept pin if it still fits, else the newest usable version
    /// in `range`.
    fn pick(&self, name: &PackageName, range: &Range) -> Result<Option<Version>, SourceError> {
        if let Some(pin) = self.request.base.get(name) {
            return Ok(pin.version.clone().filter(|v| range.contains(v)));
        }
        if let Some(fixed) = self.request.fixed.get(name) {
            return Ok(Some(fixed.metadata.version.clone()).filter(|v| range.contains(v)));
        }
        let candidates = self.candidates(name)?;
        if let Some(kept) = self.preferred(name, range, &candidates)? {
            return Ok(Some(kept));
        }
        let in_range = |v: &Version| range.contains(v);
        // uv's default since 0.12: every usable stable version first, then
        // pre-releases, newest first in each pass. The versions PubGrub
        // knows stay the same; only the order they are tried in changes.
        let passes: &[fn(&Version) -> bool] = match self.request.prerelease {
            Prerelease::Allow => &[|_| true],
            Prerelease::Disallow => &[|v| !v.any_prerelease()],
            Prerelease::IfNecessary => &[|v| !v.any_prerelease(), |v| v.any_prerelease()],
        };
        let mut chosen = None;
        'passes: for pass in passes {
            for (v, c) in candidates.iter_where(|v| pass(v) && in_range(v)).rev() {
                // Fail closed: a damaged cache entry could hide the version
                // that should win.
                if c.exclusion == Some(Exclusion::Damaged) {
                    return Err(damaged(name, v));
                }
                if self.usable(name, v, c) {
                    chosen = Some((v.clone(), *pass));
                    break 'passes;
                }
            }
        }
        let Some((chosen, pass)) = chosen else {
            return Ok(None);
        };
        let choices = {
            let mut state = self.state.borrow_mut();
            let entry = state
                .choices
                .entry(name.clone())
                .or_insert_with(|| (chosen.clone(), 0));
            if entry.1 == 0 || entry.0 != chosen {
                *entry = (chosen.clone(), entry.1 + 1);
            }
            entry.1
        };
        if choices > 1 {
            // Backtracking walks down this package's versions one at a
            // time, each a wait for its metadata: fetch the next few at
            // once, more the longer it goes on.
            let ahead = (choices * 4).min(MAX_LOOKAHEAD);
            for (v, c) in candidates
                .iter_where(|v| v < &chosen && pass(v) && in_range(v))
                .rev()
                .filter(|(v, c)| self.usable(name, v, c))
                .take(ahead)
            {
                if let Some(wheel) = &c.best_wheel
                    && v != &chosen
                {
                    self.source.prefetch_metadata(name, wheel);
                }
            }
        }
        Ok(Some(chosen))
    }

    /// Why `name==version`'s sdist is not downloaded: enough newer
    /// releases of it already needed a build (`dynamic_reads`), so a
    /// fall-back to this one would be refused anyway. `None`: read it.
    fn not_read(&self, name: &PackageName, version: &Version, file: &IndexFile) -> Option<String> {
        let reads = self.request.dynamic_reads.as_ref()?;
        if file.filename.ends_with(".whl") || reads.allow.covers(name) {
            return None;
        }
        let mut state = self.state.borrow_mut();
        let dynamic = state.dynamic_versions.get(name);
        let seen = dynamic.map_or(0, BTreeMap::len);
        // The newest release found dynamic, when it is stale, settles the
        // refusal alone: one skipped may pass only when it is fresh.
        let stale = reads.stale_before.is_some_and(|before| {
            dynamic
                .and_then(|d| d.keys().next_back())
                .and_then(|v| state.candidates.get(name)?.get(v))
                .is_some_and(|c| crate::walk_back::released(&c.files).is_none_or(|t| t < before))
        });
        if seen < reads.limit && !stale {
            return None;
        }
        state
            .not_read
            .entry(name.clone())
            .or_default()
            .insert(version.clone());
        Some(format!(
            "{name}=={version} was not read: newer releases of it already need a build to say what they need, so a fall-back this far is refused anyway (--allow-walk-back {name} reads on)"
        ))
    }

    /// The metadata of `name==version`'s best wheel.
    fn metadata(
        &self,
        name: &PackageName,
        version: &Version,
    ) -> Result<Result<Arc<layerlock_dist::CoreMetadata>, String>, SourceError> {
        if let Some(fixed) = self.request.fixed.get(name) {
            let metadata = &fixed.metadata;
            return Ok(match &metadata.requires_python {
                Some(spec) if !self.request.target.allows_python(spec) => Err(format!(
                    "{name}=={version} ({}) requires Python {spec}",
                    fixed.source.url()
                )),
                _ => Ok(metadata.clone()),
            });
        }
        let candidates = self.candidates(name)?;
        let Some(candidate) = candidates.get(version) else {
            let pin = self.request.base.get(name);
            return Ok(Err(match pin {
                Some(pin) => format!(
                    "its dependencies are needed, but {name}=={version} (pinned by {}) is not on any index asked",
                    pin.origin
                ),
                None => format!("{name}=={version} is not on any index asked"),
            }));
        };
        let Some(file) = candidate.metadata_file() else {
            return Ok(Err(format!(
                "{name}=={version} has {}",
                candidate
                    .exclusion
                    .as_ref()
                    .map_or_else(|| "no usable wheel".to_string(), ToString::to_string)
            )));
        };
        if let Some(why) = self.not_read(name, version, file) {
            return Ok(Err(why));
        }
        let metadata = match self.source.metadata(name, file) {
            Ok(metadata) => metadata,
            // That version cannot be locked; another may.
            Err(SourceError::Dynamic { message }) => {
                match self.sibling(name, version, candidate)? {
                    Some(Ok(metadata)) => metadata,
                    Some(Err(why)) => {
                        self.state.borrow_mut().dynamic(name, version, why.clone());
                        return Ok(Err(why));
                    }
                    None => {
                        self.state.borrow_mut().dynamic(name, version, message);
                        return Ok(Err(format!(
                            "{name}=={version} has no wheel for the target and its sdist's dependencies are dynamic (layerlock never builds)"
                        )));
                    }
                }
            }
            Err(e) => return Err(e),
        };
        if let Some(spec) = &metadata.requires_python
            && !self.request.target.allows_python(spec)
        {
            return Ok(Err(format!("{name}=={version} requires Python {spec}")));
        }
        Ok(Ok(metadata))
    }
}

impl DependencyProvider for Provider<'_> {
    type P = Pkg;
    type V = Version;
    type VS = Range;
    type M = String;
    type Err = SourceError;
    type Priority = Priority;

    fn prioritize(
        &self,
        package: &Pkg,
        range: &Range,
        stats: &PackageResolutionStatistics,
    ) -> Self::Priority {
        self.priority(package, range, stats.conflict_count())
    }

    fn choose_version(&self, package: &Pkg, range: &Range) -> Result<Option<Version>, SourceError> {
        match package {
            Pkg::Root => Ok(Some(root_version())),
            Pkg::Name(name) | Pkg::Extra(name, _) => self.pick(name, range),
        }
    }

    fn get_dependencies(
        &self,
        package: &Pkg,
        version: &Version,
    ) -> Result<Dependencies<Pkg, Range, String>, SourceError> {
        let deps = self.dependencies(package, version)?;
        // A kept pin whose own metadata rules it out says so, not merely
        // that the versions left no longer include it.
        if let (Dependencies::Unavailable(why), Pkg::Name(name)) = (&deps, package)
            && self.request.preferred(name) == Some(version)
        {
            self.state
                .borrow_mut()
                .passed_over
                .insert(name.clone(), Some(why.clone()));
        }
        Ok(deps)
    }
}

impl Provider<'_> {
    /// The dependencies of `package` at `version`, or why it cannot be used.
    fn dependencies(
        &self,
        package: &Pkg,
        version: &Version,
    ) -> Result<Dependencies<Pkg, Range, String>, SourceError> {
        let env = self.request.target.markers();
        let mut deps = BTreeMap::new();
        match package {
            Pkg::Root => {
                for direct in &self.request.direct {
                    if !direct.requirement.marker.evaluate(env, &[]) {
                        continue;
                    }
                    if let Err(why) = self.edges_of(&direct.requirement, &mut deps) {
                        return Ok(Dependencies::Unavailable(why));
                    }
                }
            }
            Pkg::Name(name) => {
                if self.is_base(name) {
                    // The image's pins are closed under their own dependencies.
                    return Ok(self.finish(package, version, deps));
                }
                let metadata = match self.metadata(name, version)? {
                    Ok(m) => m,
                    Err(why) => return Ok(Dependencies::Unavailable(why)),
                };
                for requirement in &metadata.requires_dist {
                    if requirement.name == *name && requirement.extras.is_empty() {
                        continue;
                    }
                    if !requirement.marker.evaluate(env, &[]) {
                        continue;
                    }
                    if let Err(why) = self.edges_of(requirement, &mut deps) {
                        return Ok(Dependencies::Unavailable(why));
                    }
                }
                if let Err(why) = readable(&metadata.unreadable) {
                    return Ok(Dependencies::Unavailable(why));
                }
            }
            Pkg::Extra(name, extra) => {
                let metadata = match self.metadata(name, version)? {
                    Ok(m) => m,
                    Err(why) => return Ok(Dependencies::Unavailable(why)),
                };
                if metadata.computed_extras.contains(extra) {
                    return Ok(Dependencies::Unavailable(
                        self.computed_extra(name, version, extra),
                    ));
                }
                if !metadata.provides_extra.contains(extra) {
                    self.state.borrow_mut().warnings.insert(format!(
                        "{name}=={version} does not provide the extra `{extra}`"
                    ));
                }
                deps.insert(Pkg::Name(name.clone()), Range::singleton(version.clone()));
                if let Err(why) = readable(metadata.unreadable_under_extras()) {
                    return Ok(Dependencies::Unavailable(why));
                }
                for requirement in metadata.requires_all() {
                    // Only what the extra adds: the package's own dependencies
                    // come through `Name(name)` above, and for a base package
                    // they are the image's (closed) business.
                    if !requirement
                        .marker
                        .evaluate(env, std::slice::from_ref(extra))
                        || requirement.marker.evaluate(env, &[])
                    {
                        continue;
                    }
                    if requirement.name == *name && requirement.extras.is_empty() {
                        continue;
                    }
                    if let Err(why) = self.edges_of(requirement, &mut deps) {
                        return Ok(Dependencies::Unavailable(why));
                    }
                }
            }
        }
        Ok(self.finish(package, version, deps))
    }

    /// Why `name[extra]` at `version` cannot be used: its sdist computes
    /// the extra's requirements, which only running its setup.py says. The
    /// reason is kept with the dynamic ones, so the hint names what to do.
    fn computed_extra(&self, name: &PackageName, version: &Version, extra: &ExtraName) -> String {
        self.state.borrow_mut().dynamic(
            name,
            version,
            format!(
                "{name}=={version}: its source distribution's setup.py computes what the extra `{extra}` needs, so only running it could say"
            ),
        );
        format!(
            "{name}[{extra}]=={version} has no wheel for the target and its sdist computes that extra (layerlock never builds)"
        )
    }

    /// The order packages are decided in: the root; packages that kept
    /// losing conflicts; fixed facts (base pins, exact pins); packages that
    /// kept winning them; the rest. Within a class, the most conflicted
    /// first, then the order requirements were discovered in.
    pub(crate) fn priority(&self, package: &Pkg, range: &Range, conflicts: u32) -> Priority {
        let Some(name) = package.name() else {
            return (5, 0, Reverse(0));
        };
        let state = self.state.borrow();
        let class = if state.late.contains(package) {
            2
        } else if state.early.contains(package) {
            4
        } else if self.is_base(name) || range.as_singleton().is_some() {
            3
        } else {
            1
        };
        let order = state.order.get(name).copied().unwrap_or(usize::MAX);
        (class, conflicts, Reverse(order))
    }

    /// `package` keeps being rejected because of another's version.
    pub(crate) fn decide_early(&self, package: &Pkg) {
        let mut state = self.state.borrow_mut();
        if !state.late.contains(package) {
            state.early.insert(package.clone());
        }
    }

    /// `package`'s version keeps rejecting others'; true when that is news.
    pub(crate) fn decide_late(&self, package: &Pkg) -> bool {
        let mut state = self.state.borrow_mut();
        state.early.remove(package);
        state.late.insert(package.clone())
    }
}

impl Provider<'_> {
    /// With no wheel for the target and a dynamic sdist, the dependencies
    /// of `name==version` as its wheels for other platforms say them: the
    /// same release, built by its authors. Every wheel of the version is
    /// read, and all must agree on Requires-Dist and Requires-Python (a
    /// release whose wheels were built to need different things, as a
    /// setup.py that looks at `sys.platform` builds them, cannot be told
    /// from another platform's). `None` when the version has no wheel.
    fn sibling(
        &self,
        name: &PackageName,
        version: &Version,
        candidate: &Candidate,
    ) -> Result<Option<Result<Arc<layerlock_dist::CoreMetadata>, String>>, SourceError> {
        let mut wheels: Vec<&layerlock_dist::IndexFile> = candidate
            .files
            .iter()
            .filter(|f| matches!(f.kind(name), layerlock_dist::DistKind::Wheel(_)))
            .collect();
        wheels.sort_by(|a, b| a.filename.cmp(&b.filename));
        let Some((first, others)) = wheels.split_first() else {
            return Ok(None);
        };
        for other in others {
            self.source.prefetch_metadata(name, other);
        }
        let one = self.source.metadata(name, first)?;
        for other in others {
            let theirs = self.source.metadata(name, other)?;
            if one.requires_dist != theirs.requires_dist
                || one.requires_python != theirs.requires_python
            {
                return Ok(Some(Err(format!(
                    "{name}=={version}: no wheel for the target, its sdist's dependencies are dynamic, and its wheels for other platforms disagree on them ({} and {}), so none can stand for the target",
                    first.filename, other.filename
                ))));
            }
        }
        let agreeing = match others.len() {
            0 => String::new(),
            n => format!(", which its {n} other wheels agree with"),
        };
        self.state.borrow_mut().warnings.insert(format!(
            "{name}=={version}: dependencies read from its wheel {}'s metadata{agreeing} (no wheel for this target; the sdist's are dynamic); the installer builds the sdist",
            first.filename
        ));
        Ok(Some(Ok(one)))
    }
}

/// The cache entry of `name` `version` cannot be read.
fn damaged(name: &PackageName, version: &Version) -> SourceError {
    SourceError::Invalid {
        url: format!("the cached page of {name}"),
        message: format!(
            "the entry of {name} {version} cannot be read; the cache is damaged: delete it and run again"
        ),
    }
}

/// A version whose METADATA holds a Requires-Dist layerlock cannot read
/// (malformed, or past the marker and extras limits) is left out, as uv
/// leaves out a version with invalid metadata: ignoring the line would lock
/// the package without a dependency it declares.
fn readable(unreadable: &[String]) -> Result<(), String> {
    match unreadable.first() {
        None => Ok(()),
        Some(line) => {
            let shown: String = line.chars().take(120).collect();
            let cut = if shown.len() < line.len() { "…" } else { "" };
            Err(format!(
                "its METADATA has a Requires-Dist layerlock cannot read (`{shown}{cut}`)"
            ))
        }
    }
}
