//! The base is the image's lock, and a lock is closed under its own
//! dependencies: the resolver takes a base pin's dependencies to be in the
//! image and never looks at them. A base written by hand (`httpx==0.27`
//! and not what httpx needs) breaks that quietly: the layer then leans on
//! packages at versions nobody wrote down, or not there at all. Each base
//! pin the layer uses is read here (its wheel for the target, as an
//! installer takes it) and its dependencies on the target that neither the
//! base nor the layer holds are named. What cannot be read is named too.

use std::collections::BTreeMap;

use layerlock_dist::Target;
use layerlock_resolve::{BasePin, Resolution};
use uv_normalize::PackageName;

use crate::source::LayerSource;

/// A base pin the layer uses whose dependencies on the target the base
/// does not pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenPin {
    /// Its name.
    pub name: PackageName,
    /// `name==version (origin)`.
    pub pin: String,
    /// What it needs that neither the base nor the layer holds, sorted.
    pub missing: Vec<PackageName>,
}

/// What the check saw on one target.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClosureReport {
    pub open: Vec<OpenPin>,
    /// `name==version (why)`: the base pins used whose dependencies could
    /// not be read.
    pub unchecked: Vec<String>,
}

/// The base pins `resolution` uses, each read for what it needs on
/// `target`; see the module's words.
pub fn check_closure(
    resolution: &Resolution,
    base: &BTreeMap<PackageName, BasePin>,
    target: &Target,
    source: &dyn LayerSource,
) -> ClosureReport {
    // A pin at no known version (`--owned`, an environment's odd entry) is
    // the image's business: there is nothing to read.
    let pins: Vec<(&PackageName, &BasePin, &uv_pep440::Version)> = resolution
        .base_used
        .keys()
        .filter_map(|name| {
            let pin = base.get(name)?;
            Some((name, pin, pin.version.as_ref()?))
        })
        .collect();
    let read = crate::clash::list_all(
        pins.len(),
        |_| false,
        |i| {
            let (name, _, version) = pins[i];
            let wheel = crate::clash::installed_wheel(name, version, target, source)?;
            source
                .metadata(name, &wheel)
                .map_err(|e| format!("its metadata cannot be read: {e}"))
        },
    );
    let held =
        |name: &PackageName| base.contains_key(name) || resolution.packages.contains_key(name);
    let mut report = ClosureReport::default();
    for ((name, pin, version), outcome) in pins.iter().zip(read) {
        let metadata = match outcome {
            Ok(metadata) => metadata,
            Err(why) => {
                report.unchecked.push(format!("{name}=={version} ({why})"));
                continue;
            }
        };
        let mut missing: Vec<PackageName> = metadata
            .requires_dist
            .iter()
            .filter(|r| r.name != **name && r.marker.evaluate(target.markers(), &[]))
            .map(|r| r.name.clone())
            .filter(|needed| !held(needed))
            .collect();
        missing.sort();
        missing.dedup();
        if !missing.is_empty() {
            report.open.push(OpenPin {
                name: (*name).clone(),
                pin: format!("{name}=={version} ({})", pin.origin),
                missing,
            });
        }
    }
    report
}

/// What the open pins of `report` need, as base pins at no version (the
/// lock's trailer: `anyio (not pinned by the base) via httpx`): the layer
/// relies on them being in the image.
pub fn assumed(report: &ClosureReport) -> Vec<layerlock_lock::BaseUse> {
    let mut by_name: BTreeMap<&PackageName, Vec<String>> = BTreeMap::new();
    for open in &report.open {
        for needed in &open.missing {
            by_name
                .entry(needed)
                .or_default()
                .push(open.name.to_string());
        }
    }
    by_name
        .into_iter()
        .map(|(name, via)| layerlock_lock::BaseUse {
            name: name.clone(),
            version: None,
            origin: "not pinned by the base".to_string(),
            via,
        })
        .collect()
}
