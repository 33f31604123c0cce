//! One lock for several targets: each target's own lock merged into one
//! whose packages carry markers for the targets they serve, as PEP 751
//! allows (`environments` names every target) and as a requirements file
//! can say with a marker on each line.

use std::collections::BTreeMap;
use std::str::FromStr;

use uv_normalize::PackageName;
use uv_pep440::Version;
use uv_pep508::MarkerTree;

use layerlock_dist::Target;

use crate::{BaseUse, DirectSource, Header, Lock, LockTarget, LockedFile, LockedPackage};

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("a lock of one target was expected, and one names {0} targets")]
    NotOneTarget(usize),
    #[error("{0}: the target does not read: {1}")]
    Target(String, String),
    #[error(
        "{name}: {file} is listed by two indexes with different sha256 ({first} and {second}); a lock cannot pin both under one name: give the targets one index, or compile them as separate layers"
    )]
    Conflict {
        name: String,
        file: String,
        first: String,
        second: String,
    },
    #[error(
        "{0} and {1} have the same markers (Python version, OS and machine): a lock cannot tell which of them an interpreter is; compile them as separate layers"
    )]
    Alike(String, String),
}

/// The marker values a target is told apart by, in the order markers name
/// them.
const DIMENSIONS: [&str; 3] = ["python_version", "sys_platform", "platform_machine"];

fn values(target: &Target) -> [String; 3] {
    let m = target.markers();
    [
        target.python_short(),
        m.sys_platform().to_string(),
        m.platform_machine().to_string(),
    ]
}

/// The marker values `marker_for` tells a target apart by, when it reads.
pub fn target_values(target: &LockTarget) -> Option<[String; 3]> {
    Target::new(&target.python, &target.platform)
        .ok()
        .map(|t| values(&t))
}

/// Refuse two targets no marker tells apart (two glibc versions of one
/// machine): a lock with markers could not choose between their entries.
pub fn check_distinct(targets: &[LockTarget]) -> Result<(), MergeError> {
    let mut seen: BTreeMap<[String; 3], &LockTarget> = BTreeMap::new();
    for t in targets {
        let target = Target::new(&t.python, &t.platform)
            .map_err(|e| MergeError::Target(t.describe(), e.to_string()))?;
        if let Some(first) = seen.insert(values(&target), t) {
            return Err(MergeError::Alike(first.describe(), t.describe()));
        }
    }
    Ok(())
}

/// The shortest marker that holds for exactly the targets in `chosen` of
/// `all` (`values` of each): the fewest marker names that tell them apart,
/// `TRUE` when `chosen` is all of them.
pub fn marker_for(all: &[[String; 3]], chosen: &[bool]) -> MarkerTree {
    if chosen.iter().all(|c| *c) {
        return MarkerTree::TRUE;
    }
    // Subsets of the three names, fewest first.
    let mut subsets: Vec<u8> = (1..8).collect();
    subsets.sort_by_key(|s| s.count_ones());
    for subset in subsets {
        let project = |v: &[String; 3]| -> Vec<(usize, String)> {
            (0..3)
                .filter(|i| subset & (1 << i) != 0)
                .map(|i| (i, v[i].clone()))
                .collect()
        };
        let mut inside: Vec<Vec<(usize, String)>> = Vec::new();
        for (v, c) in all.iter().zip(chosen) {
            if *c && !inside.contains(&project(v)) {
                inside.push(project(v));
            }
        }
        // The names tell the chosen apart when no other target projects
        // onto a chosen one's values.
        let tells = all
            .iter()
            .zip(chosen)
            .all(|(v, c)| *c || !inside.contains(&project(v)));
        if !tells {
            continue;
        }
        let terms: Vec<String> = inside
            .iter()
            .map(|values| {
                values
                    .iter()
                    .map(|(i, v)| format!("{} == '{v}'", DIMENSIONS[*i]))
                    .collect::<Vec<_>>()
                    .join(" and ")
            })
            .map(|t| {
                if inside.len() > 1 {
                    format!("({t})")
                } else {
                    t
                }
            })
            .collect();
        if let Ok(marker) = MarkerTree::from_str(&terms.join(" or ")) {
            return marker;
        }
    }
    MarkerTree::FALSE
}

/// A package as one target's lock has it, keyed to merge with the same
/// pin of the other targets.
type Key = (PackageName, Version, Option<String>);

fn key(p: &LockedPackage) -> Key {
    (
        p.name.clone(),
        p.version.clone(),
        p.direct.as_ref().map(DirectSource::url),
    )
}

/// Merge each target's lock (as `to_lock` writes one: one target, one
/// environment) into one lock: a pin every target shares has no marker;
/// one that only some targets take carries the marker that selects them;
/// the files and hashes are those of every target that takes it.
pub fn merge_targets(parts: &[Lock]) -> Result<Lock, MergeError> {
    let mut targets = Vec::new();
    for part in parts {
        match part.header.targets.as_slice() {
            [one] => targets.push(one.clone()),
            other => return Err(MergeError::NotOneTarget(other.len())),
        }
    }
    check_distinct(&targets)?;
    let all: Vec<[String; 3]> = targets
        .iter()
        .map(|t| Target::new(&t.python, &t.platform).map(|t| values(&t)))
        .collect::<Result<_, _>>()
        .map_err(|e| MergeError::Target(String::new(), e.to_string()))?;
    let mut merged: BTreeMap<Key, (LockedPackage, Vec<bool>)> = BTreeMap::new();
    for (i, part) in parts.iter().enumerate() {
        for p in &part.packages {
            let (into, serves) = merged
                .entry(key(p))
                .or_insert_with(|| (p.clone(), vec![false; parts.len()]));
            serves[i] = true;
            add_files(into, p)?;
        }
    }
    let packages = merged
        .into_values()
        .map(|(mut p, serves)| {
            p.marker = marker_for(&all, &serves);
            p
        })
        .collect();
    Ok(Lock {
        path: parts.first().map(|p| p.path.clone()).unwrap_or_default(),
        format: parts
            .first()
            .map_or(crate::LockFormat::Requirements, |p| p.format),
        header: header(parts, targets),
        packages,
        base_used: base_used(parts),
    })
}

/// `from`'s files, hashes and via added to `into` (the same pin). A file
/// of one name with two hashes (two indexes) is an error, never one of
/// them dropped.
fn add_files(into: &mut LockedPackage, from: &LockedPackage) -> Result<(), MergeError> {
    for f in &from.files {
        match into.files.iter().find(|g: &&LockedFile| g.name == f.name) {
            None => into.files.push(f.clone()),
            Some(g) if g.sha256 == f.sha256 => {}
            Some(g) => {
                return Err(MergeError::Conflict {
                    name: into.name.to_string(),
                    file: f.name.clone(),
                    first: g.sha256.clone().unwrap_or_default(),
                    second: f.sha256.clone().unwrap_or_default(),
                });
            }
        }
    }
    into.files.sort_by(|a, b| a.name.cmp(&b.name));
    into.hashes.extend(from.hashes.iter().cloned());
    into.hashes.sort();
    into.hashes.dedup();
    into.via.extend(from.via.iter().cloned());
    into.via.sort();
    into.via.dedup();
    Ok(())
}

/// The base packages any target leans on, each pin once.
fn base_used(parts: &[Lock]) -> Vec<BaseUse> {
    let mut out: BTreeMap<(PackageName, Option<Version>, String), BaseUse> = BTreeMap::new();
    for b in parts.iter().flat_map(|p| &p.base_used) {
        let slot = out
            .entry((b.name.clone(), b.version.clone(), b.origin.clone()))
            .or_insert_with(|| BaseUse {
                via: Vec::new(),
                ..b.clone()
            });
        slot.via.extend(b.via.iter().cloned());
        slot.via.sort();
        slot.via.dedup();
    }
    out.into_values().collect()
}

/// The merged header: every target and environment; a base or owned
/// package every target shares as it is, one only some have with the
/// targets named.
fn header(parts: &[Lock], targets: Vec<LockTarget>) -> Header {
    let first = parts.first().map(|p| p.header.clone()).unwrap_or_default();
    let per_target = |pick: fn(&Header) -> &Vec<String>| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for part in parts {
            for item in pick(&part.header) {
                let holders: Vec<LockTarget> = parts
                    .iter()
                    .filter(|p| pick(&p.header).contains(item))
                    .flat_map(|p| p.header.targets.clone())
                    .collect();
                let shown = if holders.len() == parts.len() {
                    item.clone()
                } else {
                    format!("{item} (for {})", crate::describe_targets(&holders))
                };
                if !out.contains(&shown) {
                    out.push(shown);
                }
            }
        }
        out
    };
    Header {
        environments: parts
            .iter()
            .flat_map(|p| p.header.environments.iter().cloned())
            .collect(),
        description: Some(describe_matrix(&targets)),
        bases: per_target(|h| &h.bases),
        owned: per_target(|h| &h.owned),
        replaces: per_target(|h| &h.replaces),
        unchecked: per_target(|h| &h.unchecked),
        walked_back: per_target(|h| &h.walked_back),
        targets,
        requires_python: None,
        command: first.command,
    }
}

/// "Python 3.12 and 3.13 on x86_64-manylinux_2_28 and aarch64-…" when
/// the targets are every pairing of their Pythons and platforms; else
/// each target.
pub fn describe_matrix(targets: &[LockTarget]) -> String {
    let mut pythons: Vec<&str> = Vec::new();
    let mut platforms: Vec<&str> = Vec::new();
    for t in targets {
        if !pythons.contains(&t.python.as_str()) {
            pythons.push(&t.python);
        }
        if !platforms.contains(&t.platform.as_str()) {
            platforms.push(&t.platform);
        }
    }
    if pythons.len() * platforms.len() != targets.len() {
        return crate::describe_targets(targets);
    }
    let and = |items: &[&str]| match items {
        [rest @ .., last] if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => items.join(""),
    };
    format!("Python {} on {}", and(&pythons), and(&platforms))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LockFormat;

    fn target(python: &str, platform: &str) -> LockTarget {
        LockTarget {
            python: python.into(),
            platform: platform.into(),
        }
    }

    fn part(t: LockTarget, pins: &[(&str, &str, &str)]) -> Lock {
        let env = Target::new(&t.python, &t.platform).unwrap();
        let m = env.markers();
        let environment = MarkerTree::from_str(&format!(
            "python_version == '{}' and sys_platform == '{}' and platform_machine == '{}'",
            env.python_short(),
            m.sys_platform(),
            m.platform_machine()
        ))
        .unwrap();
        Lock {
            path: "kv.txt".into(),
            format: LockFormat::Requirements,
            header: Header {
                bases: vec![format!("base-{}.txt", t.platform)],
                command: Some("layerlock compile --layer kv".into()),
                targets: vec![t],
                environments: vec![environment],
                ..Header::default()
            },
            packages: pins
                .iter()
                .map(|(name, version, hash)| LockedPackage {
                    name: PackageName::from_str(name).unwrap(),
                    version: Version::from_str(version).unwrap(),
                    marker: MarkerTree::TRUE,
                    hashes: vec![format!("sha256:{}", hash.repeat(32))],
                    files: Vec::new(),
                    via: vec!["-r in.txt".into()],
                    origin: String::new(),
                    direct: None,
                })
                .collect(),
            base_used: Vec::new(),
        }
    }

    const X86: &str = "x86_64-manylinux_2_28";
    const ARM: &str = "aarch64-manylinux_2_28";

    #[test]
    fn shared_pins_carry_no_marker_and_the_others_name_their_targets() {
        let merged = merge_targets(&[
            part(
                target("3.12", X86),
                &[("six", "1.17.0", "aa"), ("nixl", "0.7.1", "b1")],
            ),
            part(
                target("3.12", ARM),
                &[("six", "1.17.0", "aa"), ("nixl", "0.6.0", "c1")],
            ),
        ])
        .unwrap();
        let text = merged.render(LockFormat::Requirements, "kv.txt");
        assert!(text.contains("six==1.17.0 \\"), "{text}");
        assert!(
            text.contains("nixl==0.7.1 ; platform_machine == 'x86_64'"),
            "{text}"
        );
        assert!(
            text.contains("nixl==0.6.0 ; platform_machine == 'aarch64'"),
            "{text}"
        );
        assert!(text.contains("# layerlock-target: python=3.12 platform=aarch64-manylinux_2_28"));
        assert!(text.contains(
            "# layerlock-base: base-aarch64-manylinux_2_28.txt (for Python 3.12 on aarch64-manylinux_2_28)"
        ));
        assert!(text.contains(
            "generated by layerlock for Python 3.12 on x86_64-manylinux_2_28 and aarch64-manylinux_2_28"
        ));
        let back = Lock::parse(std::path::Path::new("kv.txt"), &text).unwrap();
        assert_eq!(back.header.targets.len(), 2);
        assert_eq!(back.packages.len(), 3);
    }

    #[test]
    fn the_fewest_marker_names_that_tell_the_targets_apart() {
        let all: Vec<[String; 3]> = [("3.12", X86), ("3.12", ARM), ("3.13", X86), ("3.13", ARM)]
            .iter()
            .map(|(p, t)| values(&Target::new(p, t).unwrap()))
            .collect();
        let shown = |chosen: &[bool]| {
            marker_for(&all, chosen)
                .contents()
                .map_or("TRUE".to_string(), |m| m.to_string())
        };
        assert_eq!(shown(&[true, true, true, true]), "TRUE");
        assert_eq!(
            shown(&[true, false, true, false]),
            "platform_machine == 'x86_64'"
        );
        assert_eq!(
            shown(&[false, false, true, true]),
            "python_full_version == '3.13.*'"
        );
        assert_eq!(
            shown(&[true, false, false, false]),
            "python_full_version == '3.12.*' and platform_machine == 'x86_64'"
        );
    }

    #[test]
    fn one_file_with_two_hashes_is_an_error_never_one_dropped() {
        let file = |sha: &str| LockedFile {
            name: "six-1.17.0-py3-none-any.whl".into(),
            url: Some("https://x/six-1.17.0-py3-none-any.whl".into()),
            path: None,
            size: None,
            upload_time: None,
            sha256: Some(sha.repeat(64)),
        };
        let mut x86 = part(target("3.12", X86), &[("six", "1.17.0", "a")]);
        let mut arm = part(target("3.12", ARM), &[("six", "1.17.0", "b")]);
        x86.packages[0].files = vec![file("a")];
        arm.packages[0].files = vec![file("b")];
        let err = merge_targets(&[x86, arm]).unwrap_err();
        assert!(err.to_string().contains("different sha256"), "{err}");
    }

    #[test]
    fn targets_no_marker_tells_apart_are_refused() {
        let err = merge_targets(&[
            part(target("3.12", "x86_64-manylinux_2_17"), &[]),
            part(target("3.12", X86), &[]),
        ])
        .unwrap_err();
        assert!(err.to_string().contains("the same markers"), "{err}");
    }
}
