//! What a resolution is asked to do, and what it answers.

use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;

use jiff::Timestamp;
use uv_normalize::PackageName;
use uv_pep440::Version;
use uv_pep508::{Requirement, VerbatimUrl};

use layerlock_dist::{IndexFile, Target};

/// A requirement of the layer, with the label `# via` shows for it.
#[derive(Debug, Clone)]
pub struct Direct {
    pub requirement: Requirement<VerbatimUrl>,
    /// e.g. `-r requirements/kv_connectors.txt`.
    pub via: String,
    /// Where it is written (`requirements/kv_connectors.txt:3`), for
    /// errors; empty when it is written nowhere.
    pub origin: String,
}

/// A package the image already has (the lock model's: a base lock pin, an
/// installed distribution or an `--owned` package).
pub use layerlock_lock::BasePin;

/// When pre-releases may be chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Prerelease {
    Disallow,
    Allow,
    /// Only when no stable version fits: stable versions are tried first,
    /// then pre-releases (uv's default since 0.12).
    #[default]
    IfNecessary,
}

#[derive(Debug, Clone)]
pub struct ResolveRequest {
    pub direct: Vec<Direct>,
    /// `-c` constraints: they narrow a package's versions when it is needed
    /// but never pull it in.
    pub constraints: Vec<Direct>,
    /// `--override`s: wherever a requirement names one of these packages
    /// (the layer's or a dependency's), its version specifier is replaced
    /// by the override's, as uv does. An override never pulls a package in.
    pub overrides: Vec<Direct>,
    /// Versions an existing lock pins, tried before any other (pins are
    /// kept). A preferred version is not newly introduced, so the cooldown
    /// does not hold it back; one the request no longer allows is passed
    /// over, and [`Resolution::replaced`] says why.
    pub preferences: BTreeMap<PackageName, Version>,
    /// Versions the other targets of the layer took, tried first (before
    /// `preferences`) so that one version serves every target where one
    /// can; unlike a kept pin, such a version is held to the cooldown.
    pub shared: BTreeMap<PackageName, Version>,
    /// Packages locked from their source (a git commit, a project
    /// directory): one version, whose metadata was read statically. Fixed
    /// like base pins, but part of the layer.
    pub fixed: BTreeMap<PackageName, Fixed>,
    pub base: BTreeMap<PackageName, BasePin>,
    pub target: Target,
    pub exclude_newer: Option<Timestamp>,
    pub prerelease: Prerelease,
    /// The release-age policy; base pins are never subject to it.
    pub cooldown: Option<Cooldown>,
    /// Files without an upload time count under `exclude_newer`.
    pub allow_missing_time: bool,
    /// `--only-binary`: packages that must come as wheels (`all`: every
    /// one), as images that may hold no compiler demand.
    pub only_binary: OnlyBinary,
    /// When to stop downloading a package's older sdists once newer
    /// releases were found to need a build (dynamic sdists): past that a
    /// fall-back is refused anyway, so reading sixty more archives would
    /// learn nothing. `None` reads on.
    pub dynamic_reads: Option<DynamicReads>,
}

/// What settles a walk-back refusal, so no older sdist need be read.
#[derive(Debug, Clone, Default)]
pub struct DynamicReads {
    /// This many releases needing a build settle it.
    pub limit: usize,
    /// So does one uploaded before this moment (or with no upload time):
    /// a stale release is not the usual gap before its wheels.
    pub stale_before: Option<Timestamp>,
    /// Packages read on whatever the count (`--allow-walk-back`).
    pub allow: OnlyBinary,
}

/// Which packages must come as wheels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OnlyBinary {
    pub all: bool,
    pub packages: Vec<PackageName>,
}

impl OnlyBinary {
    pub fn covers(&self, name: &PackageName) -> bool {
        self.all || self.packages.contains(name)
    }
}

/// A package from its source, as the layer asks for it by URL.
#[derive(Debug, Clone)]
pub struct Fixed {
    pub metadata: std::sync::Arc<layerlock_dist::CoreMetadata>,
    pub source: layerlock_lock::DirectSource,
}

/// Nothing newly introduced may be younger than `min_age` at `now`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cooldown {
    pub now: Timestamp,
    pub min_age: jiff::SignedDuration,
    /// Packages exempt from it: every version (`None`) or one.
    pub exempt: Vec<(PackageName, Option<Version>)>,
    pub allow_missing_time: bool,
}

impl ResolveRequest {
    /// The version tried first for `name`: another target's, else the
    /// kept pin.
    pub fn preferred(&self, name: &PackageName) -> Option<&Version> {
        self.shared.get(name).or_else(|| self.preferences.get(name))
    }

    /// Every version tried first, by name (another target's over a kept
    /// pin).
    pub fn all_preferred(&self) -> BTreeMap<&PackageName, &Version> {
        let mut out: BTreeMap<&PackageName, &Version> = self.preferences.iter().collect();
        out.extend(self.shared.iter());
        out
    }

    /// The filters that apply to `name`'s files.
    pub fn filters(&self, name: &PackageName) -> crate::Filters {
        crate::Filters {
            exclude_newer: self.exclude_newer,
            allow_missing_time: self.allow_missing_time,
            only_binary: self.only_binary.covers(name),
            cooldown: self
                .cooldown
                .as_ref()
                .filter(|c| !c.exempt.iter().any(|(n, v)| n == name && v.is_none()))
                .map(|c| crate::CooldownFilter {
                    cutoff: c.now.checked_sub(c.min_age).unwrap_or(c.now),
                    min_age: c.min_age,
                    allow_missing_time: c.allow_missing_time,
                }),
            cooldown_exempt: self
                .cooldown
                .iter()
                .flat_map(|c| &c.exempt)
                .filter(|(n, _)| n == name)
                .filter_map(|(_, v)| v.clone())
                .chain(
                    self.cooldown
                        .as_ref()
                        .and(self.preferences.get(name).cloned()),
                )
                .collect(),
        }
    }
}

/// One package the layer adds.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub version: Version,
    /// The files of that version that count (see `Candidate::files`).
    pub files: Vec<IndexFile>,
    /// Package names and `-r FILE` labels that asked for it.
    pub via: BTreeSet<String>,
    /// Where it comes from when the layer asks for it by URL.
    pub direct: Option<layerlock_lock::DirectSource>,
}

impl Resolution {
    /// How far each package is from the requirements: 1 for a requirement
    /// of the layer, 2 for what those need, and so on (the shortest way).
    pub fn depths(&self) -> BTreeMap<PackageName, usize> {
        let mut depths: BTreeMap<PackageName, usize> = BTreeMap::new();
        for (name, resolved) in &self.packages {
            let direct = resolved.via.iter().any(|v| {
                PackageName::from_str(v).map_or(true, |p| !self.packages.contains_key(&p))
            });
            if direct {
                depths.insert(name.clone(), 1);
            }
        }
        // Each pass settles one more level; a cycle adds none.
        for _ in 0..self.packages.len() {
            let mut changed = false;
            for (name, resolved) in &self.packages {
                let best = resolved
                    .via
                    .iter()
                    .filter_map(|v| PackageName::from_str(v).ok())
                    .filter_map(|p| depths.get(&p))
                    .min()
                    .map(|d| d + 1);
                if let Some(best) = best
                    && depths.get(name).is_none_or(|d| best < *d)
                {
                    depths.insert(name.clone(), best);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        depths
    }
}

#[derive(Debug, Clone, Default)]
pub struct Resolution {
    /// Only packages the base does not provide.
    pub packages: BTreeMap<PackageName, Resolved>,
    /// Base packages the layer's packages depend on, with who asked.
    pub base_used: BTreeMap<PackageName, BTreeSet<String>>,
    pub warnings: Vec<String>,
    /// Preferred versions (kept pins) that were passed over, with why the
    /// last one was: a package the layer still has at another version.
    pub replaced: BTreeMap<PackageName, String>,
    /// Packages taken older than newer releases whose dependencies only a
    /// build could say (see [`crate::WalkedBack`]).
    pub walked_back: BTreeMap<PackageName, crate::WalkedBack>,
}
