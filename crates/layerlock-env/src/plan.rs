//! Plan, then act: what an environment keeps, lacks and would have to
//! change for a lock; and afterwards, the drift guard that proves nothing
//! else changed.

use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;

use serde::Serialize;
use uv_pep440::Version;

use crate::install::HashedPin;
use crate::installed::{Installed, Snapshot, normalise};
use crate::select::LockEntry;

/// A lock entry as the plan sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Wanted {
    /// Normalised name.
    pub name: String,
    #[serde(serialize_with = "as_text")]
    pub version: Version,
    /// `lock.txt:12`.
    pub origin: String,
}

/// A version in a report: as PEP 440 writes it.
fn as_text<S: serde::Serializer>(version: &Version, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(version)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict {
    pub wanted: Wanted,
    pub installed: Installed,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// Present at the pinned version.
    pub keep: Vec<Wanted>,
    /// Missing: to install.
    pub install: Vec<Wanted>,
    /// Present at another version and not allowed to change: refused.
    pub conflicts: Vec<Conflict>,
    /// Present at another version, allowed by `--allow-change`: reinstalled.
    pub change: Vec<Conflict>,
    /// The image's distributions the lock replaces on purpose (its header's
    /// `layerlock-replaces`): removed before the install, and their removal
    /// is the one change the drift guard accepts for them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remove: Vec<Wanted>,
}

impl Plan {
    pub fn is_noop(&self) -> bool {
        self.install.is_empty()
            && self.change.is_empty()
            && self.conflicts.is_empty()
            && self.remove.is_empty()
    }

    /// Take the lock's replacements (`name==version`) into the plan: one
    /// installed at that version is removed; one installed at another is an
    /// error (the lock was made for another image); one absent is nothing
    /// to do.
    pub fn replacing(&mut self, replaces: &[String], snapshot: &Snapshot) -> Result<(), String> {
        for text in replaces {
            // A lock of several targets names the targets after it.
            let pin = text.split(" (for ").next().unwrap_or(text);
            let Some((name, version)) = pin.split_once("==") else {
                return Err(format!("`{text}` is not name==version"));
            };
            let name = normalise(name);
            let version =
                Version::from_str(version.trim()).map_err(|e| format!("`{text}`: {e}"))?;
            match snapshot.dists.get(&name) {
                None => {}
                Some(have) if is_version(&have.version, &version) => self.remove.push(Wanted {
                    name,
                    version,
                    origin: "layerlock-replaces".to_string(),
                }),
                Some(have) => {
                    return Err(format!(
                        "the lock replaces {name}=={version}, but the environment has {name} {}: it was made for another image",
                        have.version
                    ));
                }
            }
        }
        Ok(())
    }

    /// The entries the installer is given.
    pub fn to_install(&self) -> impl Iterator<Item = &Wanted> {
        self.install
            .iter()
            .chain(self.change.iter().map(|c| &c.wanted))
    }

    /// What the installer is given: each entry to install with its hashes
    /// from `entries` (the lock the plan was made from), in plan order.
    pub fn pins<'a>(&self, entries: &'a [LockEntry]) -> Vec<HashedPin<'a>> {
        // By name once: a lock of thousands of entries stays linear.
        let by_name: BTreeMap<&str, &LockEntry> = entries
            .iter()
            .map(|e| (e.wanted.name.as_str(), e))
            .collect();
        self.to_install()
            .filter_map(|w| by_name.get(w.name.as_str()).copied())
            .map(|e| HashedPin {
                name: &e.wanted.name,
                version: &e.wanted.version,
                hashes: &e.hashes,
                source: e.source.as_deref(),
            })
            .collect()
    }

    /// The installed distributions new wheels may write over: those the
    /// plan changes, those being repaired, and those `--allow-change`
    /// names. Every other one the plan keeps must keep its files.
    pub fn spared(&self, repair: &[String], allow_change: &[String]) -> BTreeSet<String> {
        self.change
            .iter()
            .map(|c| c.installed.name.clone())
            .chain(repair.iter().cloned())
            .chain(allow_change.iter().map(|n| normalise(n)))
            .chain(self.remove.iter().map(|r| r.name.clone()))
            .collect()
    }
}

/// The first name `allow_change` gives (normalised) that is neither
/// installed nor locked: a typo, which would let nothing through.
pub fn unknown_allowance(
    allow_change: &[String],
    wanted: &[Wanted],
    snapshot: &Snapshot,
) -> Option<String> {
    allow_change
        .iter()
        .map(|n| normalise(n))
        .find(|name| !snapshot.dists.contains_key(name) && !wanted.iter().any(|w| &w.name == name))
}

/// Whether an installed distribution's version (as its metadata spells
/// it) is the `wanted` one, by PEP 440 equality (`1.0` is `1.0.0`).
pub fn is_version(installed: &str, wanted: &Version) -> bool {
    Version::from_str(installed).is_ok_and(|v| &v == wanted)
}

/// PEP 440 equality (`1.0` is `1.0.0`), falling back to text.
pub fn same_version(a: &str, b: &str) -> bool {
    // The same text is the same version either way, and nearly every
    // installed version is spelled as its lock spells it: no parsing.
    if a == b {
        return true;
    }
    match (Version::from_str(a), Version::from_str(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

pub fn plan(wanted: &[Wanted], snapshot: &Snapshot, allow_change: &[String]) -> Plan {
    let mut plan = Plan::default();
    for want in wanted {
        match snapshot.dists.get(&want.name) {
            None => plan.install.push(want.clone()),
            Some(have) if is_version(&have.version, &want.version) => plan.keep.push(want.clone()),
            Some(have) => {
                let conflict = Conflict {
                    wanted: want.clone(),
                    installed: have.clone(),
                };
                if allow_change.iter().any(|a| normalise(a) == want.name) {
                    plan.change.push(conflict);
                } else {
                    plan.conflicts.push(conflict);
                }
            }
        }
    }
    plan
}

/// The base pins a layer relies on (its lock's trailer) that `snapshot`
/// lacks or has at another version, each worded with where the base pins
/// it: a layer installed without them would not work, whatever the
/// install says.
pub fn missing_base(used: &[layerlock_lock::BaseUse], snapshot: &Snapshot) -> Vec<String> {
    // A lock of several targets names each target's pin: one of them is
    // the one this environment needs.
    let mut by_name: BTreeMap<String, Vec<(&Version, &str)>> = BTreeMap::new();
    // Those at no version written down (`--owned NAME`, or what a base
    // pin needs that the base does not pin): any version will do, but
    // not none.
    let mut any: BTreeMap<String, &str> = BTreeMap::new();
    for pin in used {
        match &pin.version {
            Some(version) => by_name
                .entry(normalise(pin.name.as_ref()))
                .or_default()
                .push((version, &pin.origin)),
            None => {
                any.entry(normalise(pin.name.as_ref()))
                    .or_insert(&pin.origin);
            }
        }
    }
    let mut out = Vec::new();
    for (name, pins) in by_name {
        let have = snapshot.dists.get(&name);
        if have.is_some_and(|have| pins.iter().any(|(v, _)| is_version(&have.version, v))) {
            continue;
        }
        let wanted: Vec<String> = pins
            .iter()
            .map(|(v, origin)| format!("{name}=={v} ({origin})"))
            .collect();
        out.push(match have {
            None => format!("{} is not installed", wanted.join(" or ")),
            Some(have) => format!("{} is installed at {}", wanted.join(" or "), have.version),
        });
    }
    for (name, origin) in any {
        if !snapshot.dists.contains_key(&name) {
            out.push(format!("{name} ({origin}) is not installed"));
        }
    }
    out.sort();
    out
}

/// One difference the drift guard found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub name: String,
    pub before: Option<String>,
    pub after: Option<String>,
    pub what: String,
}

fn label(dist: &Installed) -> String {
    if dist.installer.is_empty() {
        dist.version.clone()
    } else {
        format!("{} (installed by {})", dist.version, dist.installer)
    }
}

/// Compare the environment before and after installing: everything present
/// before is unchanged unless planned, and what is new is exactly the plan.
pub fn guard(before: &Snapshot, after: &Snapshot, plan: &Plan) -> Vec<Change> {
    let planned = |name: &str| plan.to_install().find(|w| w.name == name);
    let mut changes = Vec::new();
    for (name, old) in &before.dists {
        if plan.remove.iter().any(|r| r.name == *name) {
            // Replaced on purpose: gone is right, anything else is not.
            if let Some(new) = after.dists.get(name) {
                changes.push(Change {
                    name: name.clone(),
                    before: Some(label(old)),
                    after: Some(label(new)),
                    what: "the lock replaces it, but it is still installed".to_string(),
                });
            }
            continue;
        }
        if let Some(want) = planned(name) {
            match after.dists.get(name) {
                Some(new) if is_version(&new.version, &want.version) => {}
                Some(new) => changes.push(Change {
                    name: name.clone(),
                    before: Some(label(old)),
                    after: Some(label(new)),
                    what: format!("the lock wants {}", want.version),
                }),
                None => changes.push(Change {
                    name: name.clone(),
                    before: Some(label(old)),
                    after: None,
                    what: "removed".to_string(),
                }),
            }
            continue;
        }
        match after.dists.get(name) {
            None => changes.push(Change {
                name: name.clone(),
                before: Some(label(old)),
                after: None,
                what: "removed".to_string(),
            }),
            Some(new) if !same_version(&new.version, &old.version) => changes.push(Change {
                name: name.clone(),
                before: Some(label(old)),
                after: Some(label(new)),
                what: "version changed".to_string(),
            }),
            Some(new) if new.record_digest != old.record_digest => changes.push(Change {
                name: name.clone(),
                before: Some(label(old)),
                after: Some(label(new)),
                what: "reinstalled (RECORD differs)".to_string(),
            }),
            Some(_) => {}
        }
    }
    for (name, new) in &after.dists {
        if before.dists.contains_key(name) {
            continue;
        }
        match planned(name) {
            Some(want) if is_version(&new.version, &want.version) => {}
            Some(want) => changes.push(Change {
                name: name.clone(),
                before: None,
                after: Some(label(new)),
                what: format!("the lock wants {}", want.version),
            }),
            None => changes.push(Change {
                name: name.clone(),
                before: None,
                after: Some(label(new)),
                what: "not in the plan".to_string(),
            }),
        }
    }
    changes.sort_by(|a, b| a.name.cmp(&b.name));
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::wanted;

    /// `(name, version)` installed, each with a RECORD digest of its own.
    fn snapshot(dists: &[(&str, &str)]) -> Snapshot {
        let with_records: Vec<(&str, &str, &str)> =
            dists.iter().map(|(n, v)| (*n, *v, "r")).collect();
        crate::testing::snapshot(&with_records)
    }

    #[test]
    fn base_pins_the_layer_relies_on_must_be_there() {
        let used = |name: &str, version: Option<&str>, origin: &str| layerlock_lock::BaseUse {
            name: name.parse().unwrap(),
            version: version.map(|v| v.parse().unwrap()),
            origin: origin.to_string(),
            via: vec!["layer-pkg".to_string()],
        };
        let lock = [
            used("httpx", Some("0.28.1"), "base.txt:13"),
            used("anyio", None, "not pinned by the base"),
            used("idna", None, "not pinned by the base"),
        ];
        // At any version, what the base does not pin will do.
        let image = snapshot(&[("httpx", "0.28.1"), ("anyio", "3.0"), ("idna", "2.0")]);
        assert_eq!(missing_base(&lock, &image), Vec::<String>::new());
        let image = snapshot(&[("httpx", "0.27.0"), ("anyio", "3.0")]);
        assert_eq!(
            missing_base(&lock, &image),
            [
                "httpx==0.28.1 (base.txt:13) is installed at 0.27.0",
                "idna (not pinned by the base) is not installed",
            ]
        );
    }

    #[test]
    fn pins_follow_the_plan_and_carry_the_locks_hashes() {
        let before = snapshot(&[("alpha", "1.0"), ("gamma", "1.0")]);
        let locked = [
            wanted("alpha", "1.0"),
            wanted("beta", "2.0"),
            wanted("gamma", "2.0"),
        ];
        let entries: Vec<LockEntry> = locked
            .iter()
            .map(|w| LockEntry {
                wanted: w.clone(),
                hashes: vec![format!("sha256:{}", w.name)],
                source: None,
            })
            .collect();
        let plan = plan(&locked, &before, &["Gamma".to_string()]);
        let pins = plan.pins(&entries);
        let named: Vec<(&str, String, &str)> = pins
            .iter()
            .map(|p| (p.name, p.version.to_string(), p.hashes[0].as_str()))
            .collect();
        assert_eq!(
            named,
            [
                ("beta", "2.0".to_string(), "sha256:beta"),
                ("gamma", "2.0".to_string(), "sha256:gamma")
            ]
        );
        let spared = plan.spared(&["delta".to_string()], &["Epsilon_X".to_string()]);
        let spared: Vec<&str> = spared.iter().map(String::as_str).collect();
        assert_eq!(spared, ["delta", "epsilon-x", "gamma"]);
    }

    #[test]
    fn an_allowance_for_a_package_neither_installed_nor_locked_is_named() {
        let before = snapshot(&[("alpha", "1.0")]);
        let locked = [wanted("beta", "2.0")];
        let ok = ["Alpha".to_string(), "beta".to_string()];
        assert_eq!(unknown_allowance(&ok, &locked, &before), None);
        let typo = ["alpha".to_string(), "Betta".to_string()];
        assert_eq!(
            unknown_allowance(&typo, &locked, &before).as_deref(),
            Some("betta")
        );
    }

    #[test]
    fn a_replaced_distribution_is_removed_and_its_removal_is_no_drift() {
        let before = snapshot(&[("cupy-cuda12x", "13.6.0"), ("numpy", "2.0.0")]);
        let mut plan = plan(&[wanted("cupy-cuda13x", "14.0.1")], &before, &[]);
        plan.replacing(&["cupy-cuda12x==13.6.0".to_string()], &before)
            .unwrap();
        assert_eq!(plan.remove.len(), 1);
        assert!(plan.spared(&[], &[]).contains("cupy-cuda12x"));
        let after = snapshot(&[("cupy-cuda13x", "14.0.1"), ("numpy", "2.0.0")]);
        assert_eq!(guard(&before, &after, &plan), []);
        // Still there afterwards: the guard says so.
        let kept = snapshot(&[
            ("cupy-cuda12x", "13.6.0"),
            ("cupy-cuda13x", "14.0.1"),
            ("numpy", "2.0.0"),
        ]);
        assert_eq!(guard(&before, &kept, &plan)[0].name, "cupy-cuda12x");
    }

    #[test]
    fn a_replacement_of_another_version_is_refused() {
        let before = snapshot(&[("cupy-cuda12x", "13.5.0")]);
        let mut plan = plan(&[], &before, &[]);
        let err = plan
            .replacing(&["cupy-cuda12x==13.6.0".to_string()], &before)
            .unwrap_err();
        assert!(err.contains("made for another image"), "{err}");
        // Absent: nothing to remove.
        let mut plan = super::plan(&[], &snapshot(&[]), &[]);
        plan.replacing(&["cupy-cuda12x==13.6.0".to_string()], &snapshot(&[]))
            .unwrap();
        assert!(plan.remove.is_empty());
    }
}
