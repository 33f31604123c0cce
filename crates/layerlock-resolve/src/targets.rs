//! Several targets resolved as one layer: the one version per package each
//! target is asked to take (as a preference, so a target that cannot take
//! it says why and keeps its own), and what stayed apart.

use std::collections::BTreeMap;

use uv_normalize::PackageName;
use uv_pep440::Version;

use crate::{BasePin, Resolution};

/// One target's answer: its label ("Python 3.12 on aarch64-…"), its
/// resolution and its base pins.
pub struct TargetPins<'a> {
    pub label: String,
    pub resolution: &'a Resolution,
    pub base: &'a BTreeMap<PackageName, BasePin>,
}

impl TargetPins<'_> {
    /// Every version this target has: the layer's, then the base's pins
    /// (a base version is one the image already carries).
    pub fn versions(&self) -> BTreeMap<PackageName, Version> {
        let mut out: BTreeMap<PackageName, Version> = self
            .base
            .iter()
            .filter_map(|(name, pin)| Some((name.clone(), pin.version.clone()?)))
            .collect();
        for (name, r) in &self.resolution.packages {
            out.insert(name.clone(), r.version.clone());
        }
        out
    }

    /// Why this target has `name` at the version it has, when it was asked
    /// for another.
    fn why(&self, name: &PackageName) -> Option<String> {
        if let Some(pin) = self.base.get(name)
            && !self.resolution.packages.contains_key(name)
        {
            return Some(format!("its base pins it ({})", pin.origin));
        }
        self.resolution.replaced.get(name).cloned()
    }
}

/// Per package, the version every target is asked for: the one they all
/// took, else the lowest any took. The lowest is one a target could take
/// (its only wheels, its base's pin, its other pins allowed it), so it is
/// the likeliest to serve all; a target that cannot take it says why.
pub fn shared_preferences(targets: &[TargetPins]) -> BTreeMap<PackageName, Version> {
    let mut out: BTreeMap<PackageName, Version> = BTreeMap::new();
    for t in targets {
        for (name, version) in t.versions() {
            out.entry(name)
                .and_modify(|v| {
                    if version < *v {
                        *v = version.clone();
                    }
                })
                .or_insert(version);
        }
    }
    out
}

/// A package whose version differs between the targets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    pub name: PackageName,
    /// Each target that has it: its label, its version, and why it did not
    /// take the version the others were asked for (when it says).
    pub versions: Vec<(String, Version, Option<String>)>,
}

/// The packages the targets ended up holding at different versions.
pub fn divergences(targets: &[TargetPins]) -> Vec<Divergence> {
    let versions: Vec<BTreeMap<PackageName, Version>> =
        targets.iter().map(TargetPins::versions).collect();
    let mut names: Vec<&PackageName> = targets
        .iter()
        .flat_map(|t| t.resolution.packages.keys())
        .collect();
    names.sort();
    names.dedup();
    let mut out = Vec::new();
    for name in names {
        let held: Vec<(String, Version, Option<String>)> = targets
            .iter()
            .zip(&versions)
            .filter_map(|(t, v)| Some((t.label.clone(), v.get(name)?.clone(), t.why(name))))
            .collect();
        let first = &held[0].1;
        if held.iter().any(|(_, v, _)| v != first) {
            out.push(Divergence {
                name: name.clone(),
                versions: held,
            });
        }
    }
    out
}

/// A package a target holds lower than it would alone, to share a version
/// with another target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldTogether {
    pub name: PackageName,
    pub target: String,
    pub version: Version,
    /// What the target took resolved alone.
    pub alone: Version,
    /// The target whose version it shares.
    pub with: String,
}

/// Each package that a target holds lower than `alone` (its resolution on
/// its own), and the target it shares the version with.
pub fn held_together(
    alone: &[BTreeMap<PackageName, Version>],
    targets: &[TargetPins],
) -> Vec<HeldTogether> {
    let versions: Vec<BTreeMap<PackageName, Version>> =
        targets.iter().map(TargetPins::versions).collect();
    let mut out = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        for (name, r) in &t.resolution.packages {
            let Some(own) = alone.get(i).and_then(|a| a.get(name)) else {
                continue;
            };
            if r.version >= *own {
                continue;
            }
            let with = targets
                .iter()
                .zip(&versions)
                .enumerate()
                .find(|(j, (_, v))| *j != i && v.get(name) == Some(&r.version))
                .map_or_else(String::new, |(_, (other, _))| other.label.clone());
            out.push(HeldTogether {
                name: name.clone(),
                target: t.label.clone(),
                version: r.version.clone(),
                alone: own.clone(),
                with,
            });
        }
    }
    out
}

/// The versions of a resolution, as `held_together` compares them.
pub fn versions_of(resolution: &Resolution) -> BTreeMap<PackageName, Version> {
    resolution
        .packages
        .iter()
        .map(|(n, r)| (n.clone(), r.version.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    use crate::Resolved;

    fn name(n: &str) -> PackageName {
        PackageName::from_str(n).unwrap()
    }

    fn v(s: &str) -> Version {
        Version::from_str(s).unwrap()
    }

    fn resolution(pins: &[(&str, &str)], replaced: &[(&str, &str)]) -> Resolution {
        Resolution {
            packages: pins
                .iter()
                .map(|(n, ver)| {
                    (
                        name(n),
                        Resolved {
                            version: v(ver),
                            files: Vec::new(),
                            via: Default::default(),
                            direct: None,
                        },
                    )
                })
                .collect(),
            replaced: replaced
                .iter()
                .map(|(n, why)| (name(n), why.to_string()))
                .collect(),
            ..Resolution::default()
        }
    }

    fn base(pins: &[(&str, &str)]) -> BTreeMap<PackageName, BasePin> {
        pins.iter()
            .map(|(n, ver)| {
                (
                    name(n),
                    BasePin {
                        version: Some(v(ver)),
                        origin: format!("base.txt ({n})"),
                        source: layerlock_lock::BaseSource::Pinned,
                    },
                )
            })
            .collect()
    }

    /// An x86 target and an arm one.
    fn two<'a>(
        x86: &'a Resolution,
        arm: &'a Resolution,
        x86_base: &'a BTreeMap<PackageName, BasePin>,
        arm_base: &'a BTreeMap<PackageName, BasePin>,
    ) -> [TargetPins<'a>; 2] {
        [
            TargetPins {
                label: "x86".into(),
                resolution: x86,
                base: x86_base,
            },
            TargetPins {
                label: "arm".into(),
                resolution: arm,
                base: arm_base,
            },
        ]
    }

    #[test]
    fn the_lowest_version_any_target_took_is_asked_of_all() {
        let x86 = resolution(&[("nixl", "0.7.1"), ("six", "1.17.0")], &[]);
        let arm = resolution(&[("nixl", "0.6.0"), ("six", "1.17.0")], &[]);
        let (bx, ba) = (base(&[("numpy", "2.2.0")]), base(&[]));
        let targets = two(&x86, &arm, &bx, &ba);
        let shared = shared_preferences(&targets);
        assert_eq!(shared[&name("nixl")], v("0.6.0"));
        assert_eq!(shared[&name("six")], v("1.17.0"));
        assert_eq!(shared[&name("numpy")], v("2.2.0"));
    }

    #[test]
    fn what_stayed_apart_says_why_and_what_was_held_names_the_other_target() {
        let x86 = resolution(
            &[("nixl", "0.7.1"), ("numpy", "2.2.0")],
            &[("nixl", "no wheel of nixl 0.6.0 for the target")],
        );
        let arm = resolution(&[("nixl", "0.6.0")], &[]);
        let (bx, ba) = (base(&[]), base(&[("numpy", "1.26.4")]));
        let targets = two(&x86, &arm, &bx, &ba);
        let apart = divergences(&targets);
        assert_eq!(apart.len(), 2);
        assert_eq!(apart[0].name, name("nixl"));
        assert_eq!(
            apart[0].versions[0].2.as_deref(),
            Some("no wheel of nixl 0.6.0 for the target")
        );
        assert_eq!(apart[1].name, name("numpy"));
        assert_eq!(
            apart[1].versions[1].2.as_deref(),
            Some("its base pins it (base.txt (numpy))")
        );
    }

    #[test]
    fn a_target_held_below_its_own_answer_names_the_target_it_shares_with() {
        let x86 = resolution(&[("nixl", "0.6.0")], &[]);
        let arm = resolution(&[("nixl", "0.6.0")], &[]);
        let none = base(&[]);
        let targets = two(&x86, &arm, &none, &none);
        let alone = [
            BTreeMap::from([(name("nixl"), v("0.7.1"))]),
            BTreeMap::from([(name("nixl"), v("0.6.0"))]),
        ];
        let held = held_together(&alone, &targets);
        assert_eq!(held.len(), 1);
        assert_eq!(
            (held[0].target.as_str(), held[0].with.as_str()),
            ("x86", "arm")
        );
        assert_eq!(held[0].alone, v("0.7.1"));
        assert!(divergences(&targets).is_empty());
    }
}
