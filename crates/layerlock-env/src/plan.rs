//! Plan, then act: what an environment keeps, lacks and would have to
//! change for a lock; and afterwards, the drift guard that proves nothing
//! else changed.

use std::str::FromStr;

use serde::Serialize;
use uv_pep440::Version;

use crate::installed::{Installed, Snapshot};

/// A lock entry as the plan sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Wanted {
    /// Normalised name.
    pub name: String,
    pub version: String,
    /// `lock.txt:12`.
    pub origin: String,
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
}

impl Plan {
    pub fn is_noop(&self) -> bool {
        self.install.is_empty() && self.change.is_empty() && self.conflicts.is_empty()
    }

    /// The entries the installer is given.
    pub fn to_install(&self) -> impl Iterator<Item = &Wanted> {
        self.install
            .iter()
            .chain(self.change.iter().map(|c| &c.wanted))
    }
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
            Some(have) if same_version(&have.version, &want.version) => {
                plan.keep.push(want.clone())
            }
            Some(have) => {
                let conflict = Conflict {
                    wanted: want.clone(),
                    installed: have.clone(),
                };
                if allow_change
                    .iter()
                    .any(|a| crate::installed::normalise(a) == want.name)
                {
                    plan.change.push(conflict);
                } else {
                    plan.conflicts.push(conflict);
                }
            }
        }
    }
    plan
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
        if let Some(want) = planned(name) {
            match after.dists.get(name) {
                Some(new) if same_version(&new.version, &want.version) => {}
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
            Some(want) if same_version(&new.version, &want.version) => {}
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
