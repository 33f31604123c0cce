//! A lock that lives: the pins of the existing output kept as preferences,
//! the ones `--upgrade` / `--upgrade-package` free, and why each package of
//! the new lock moved.

use std::collections::BTreeMap;
use std::str::FromStr;

use uv_normalize::PackageName;
use uv_pep440::Version;

use layerlock_dist::{PackageSource, Target};
use layerlock_lock::{ChangeKind, Changes, Lock};

use crate::{Resolution, ResolveRequest, uploaded_at};

/// The pins of an existing output a compile frees.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Freed {
    /// `--upgrade`: every pin.
    pub all: bool,
    /// `--upgrade-package PKG[==VER]`: these; a version moves the package
    /// to exactly that one.
    pub packages: Vec<(PackageName, Option<Version>)>,
}

impl Freed {
    fn frees(&self, name: &PackageName) -> bool {
        self.all || self.packages.iter().any(|(n, _)| n == name)
    }

    fn flag(&self, name: &PackageName) -> Option<String> {
        if self.all {
            return Some("--upgrade".to_string());
        }
        let (n, v) = self.packages.iter().find(|(n, _)| n == name)?;
        Some(match v {
            Some(v) => format!("--upgrade-package {n}=={v}"),
            None => format!("--upgrade-package {n}"),
        })
    }
}

/// The versions `old` pins on `target`, as preferences, less the freed
/// ones. Two entries of one package that both apply on the target are a
/// conflict the lock cannot settle: an error naming both.
pub fn preferences(
    old: &Lock,
    target: &Target,
    freed: &Freed,
) -> Result<BTreeMap<PackageName, Version>, String> {
    let mut out: BTreeMap<PackageName, (Version, &str)> = BTreeMap::new();
    if freed.all {
        return Ok(BTreeMap::new());
    }
    for package in old.applicable(Some(target.markers())) {
        if freed.frees(&package.name) {
            continue;
        }
        if let Some((version, origin)) = out.get(&package.name)
            && *version != package.version
        {
            return Err(format!(
                "{}: {} is pinned twice for {} ({version} at {origin}, {} at {}); keep one, or pass --upgrade-package {} to resolve it afresh",
                old.path.display(),
                package.name,
                target.describe(),
                package.version,
                package.origin,
                package.name
            ));
        }
        out.insert(
            package.name.clone(),
            (package.version.clone(), package.origin.as_str()),
        );
    }
    Ok(out.into_iter().map(|(n, (v, _))| (n, v)).collect())
}

/// Every `--upgrade-package` must name a package of the layer's closure:
/// one the image has is never moved, and a name the closure lacks is
/// most likely a typo. The error names what is wrong.
pub fn check_freed(
    freed: &Freed,
    request: &ResolveRequest,
    resolution: &Resolution,
) -> Result<(), String> {
    for (name, _) in &freed.packages {
        if let Some(pin) = request.base.get(name) {
            return Err(format!(
                "--upgrade-package {name}: {name} is the image's ({}); a layer never moves the image's packages",
                pin.origin
            ));
        }
        if !resolution.packages.contains_key(name) {
            return Err(format!(
                "--upgrade-package {name}: {name} is not in the layer (nothing its requirements need); check the name"
            ));
        }
    }
    Ok(())
}

/// Say why each package moved, and when each version was uploaded: from
/// the locks' files, else from `source` for packages the resolution read
/// (their pages are at hand; a package the layer dropped is not fetched
/// again for its date).
pub fn explain_changes(
    changes: &mut Changes,
    request: &ResolveRequest,
    resolution: &Resolution,
    freed: &Freed,
    source: &dyn PackageSource,
) {
    explain_changes_across(changes, &[(request, resolution, source)], freed);
}

/// [`explain_changes`] for a lock of several targets, each with the index
/// it asked: each change is explained by the first target its marker
/// selects (without a marker, the first that has the package).
pub fn explain_changes_across(
    changes: &mut Changes,
    targets: &[(&ResolveRequest, &Resolution, &dyn PackageSource)],
    freed: &Freed,
) {
    let Some(first) = targets.first() else {
        return;
    };
    for change in &mut changes.changes {
        let selected = |(request, _, _): &&(&ResolveRequest, &Resolution, &dyn PackageSource)| {
            change.marker.as_deref().is_none_or(|m| {
                uv_pep508::MarkerTree::from_str(m)
                    .is_ok_and(|m| m.evaluate(request.target.markers(), &[]))
            })
        };
        let (request, resolution, source) = targets
            .iter()
            .filter(selected)
            .find(|(_, r, _)| r.packages.contains_key(&change.name))
            .or_else(|| targets.iter().find(selected))
            .unwrap_or(first);
        explain_change(change, request, resolution, freed, *source);
    }
    if !first.0.base.is_empty() {
        changes.image = Some(first.0.base.len());
    }
}

fn explain_change(
    change: &mut layerlock_lock::Change,
    request: &ResolveRequest,
    resolution: &Resolution,
    freed: &Freed,
    source: &dyn PackageSource,
) {
    change.why = match change.kind {
        ChangeKind::Added => None,
        ChangeKind::Removed => Some(match request.base.get(&change.name) {
            Some(pin) => format!("the image has it now ({})", pin.origin),
            None => "no longer required".to_string(),
        }),
        ChangeKind::Upgraded | ChangeKind::Downgraded | ChangeKind::SourceChanged => freed
            .flag(&change.name)
            .map(|flag| format!("freed by {flag}"))
            .or_else(|| resolution.replaced.get(&change.name).cloned()),
    };
    if !resolution.packages.contains_key(&change.name) {
        return;
    }
    if change.old_uploaded.is_none()
        && let Some(old) = &change.old
    {
        change.old_uploaded = uploaded_at(source, &change.name, old);
    }
    if change.new_uploaded.is_none()
        && let Some(new) = &change.new
    {
        change.new_uploaded = uploaded_at(source, &change.name, new);
    }
}
