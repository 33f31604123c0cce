//! Files an install would write over: a new wheel that holds a file an
//! installed distribution owns (`jwt` and `pyjwt` both ship `jwt/…`)
//! replaces that file, and pip and uv say nothing. Before anything is
//! written, the plan's wheels (their zip directories) are compared with the
//! RECORDs of what the environment has; after the installer ran, the
//! environment's RECORDs are compared again (the check of last resort:
//! a file list read before may not be what was installed).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::clash::clashes;
use crate::installed::{Records, Snapshot, record_lines, record_text};
use crate::plan::{Change, Plan};

/// One installed distribution whose files a new one would replace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Overwrite {
    /// `name==version` of the new distribution.
    pub new: String,
    /// The installed distribution and its version.
    pub existing: String,
    pub existing_version: String,
    /// How many of its files, and the first of them.
    pub files: usize,
    pub example: String,
}

/// A wheel the plan installs: its distribution and the names its zip holds.
pub struct WheelFiles<'a> {
    pub name: &'a str,
    pub version: &'a str,
    pub members: &'a [String],
    /// Each member's CRC-32 and size, in `members`' order, as its zip
    /// directory says (empty: not known, and every shared path counts).
    pub sums: &'a [(u32, u64)],
}

/// Where a wheel member lands, as RECORD names it relative to the site
/// directory: `pkg/x.py` as it is, `NAME.data/purelib/…` and `…/platlib/…`
/// without that prefix, `NAME.data/scripts/x` as the script `bin/x` (keyed
/// `bin:x`). `None` for what never belongs to another distribution or is
/// made again on install: the `.dist-info`, data and headers, bytecode,
/// directories.
pub fn site_path(member: &str) -> Option<Cow<'_, str>> {
    if member.ends_with('/') || member.contains("__pycache__/") || member.ends_with(".pyc") {
        return None;
    }
    let (first, rest) = member.split_once('/')?;
    if first.ends_with(".dist-info") {
        return None;
    }
    if first.ends_with(".data") {
        let (kind, inner) = rest.split_once('/')?;
        return match kind {
            "purelib" | "platlib" => Some(Cow::Borrowed(inner)),
            "scripts" => Some(Cow::Owned(format!("bin:{inner}"))),
            _ => None,
        };
    }
    Some(Cow::Borrowed(member))
}

/// A RECORD path keyed as [`site_path`] keys a member: a script outside
/// the site directory (`../../../bin/x`) as `bin:x`.
fn record_key(path: &str) -> Option<Cow<'_, str>> {
    // A distribution's own `.dist-info` files are kept: a wheel whose
    // `.data/purelib` holds another's RECORD would write over it.
    if path.contains("__pycache__/") || path.ends_with(".pyc") {
        return None;
    }
    if let Some(rest) = path.strip_prefix("../") {
        let script = rest
            .rsplit_once("/bin/")
            .or_else(|| rest.rsplit_once("/Scripts/"))
            .map(|(_, name)| name)?;
        return Some(Cow::Owned(format!("bin:{script}")));
    }
    Some(Cow::Borrowed(path))
}

/// Which new wheel a path comes from, and its CRC-32 and size when known.
type Landing = (usize, Option<(u32, u64)>);

/// The installed distributions whose files `wheels` would write over,
/// except those `spared` (replaced by the plan, or named with
/// `--allow-change`). Same bytes at the same path (CRC-32 and size) are
/// no overwrite. RECORDs come from `records`, else are read now.
pub fn overwrites(
    snapshot: &Snapshot,
    records: &Records,
    wheels: &[WheelFiles<'_>],
    spared: &dyn Fn(&str) -> bool,
) -> Vec<Overwrite> {
    // The new files by where they land, each with its wheel; two new
    // wheels that write one file overwrite each other too.
    let mut found: BTreeMap<(usize, String), Overwrite> = BTreeMap::new();
    let mut landing: HashMap<Cow<'_, str>, Landing> = HashMap::new();
    for (i, wheel) in wheels.iter().enumerate() {
        for (m, member) in wheel.members.iter().enumerate() {
            let Some(path) = site_path(member) else {
                continue;
            };
            let sum = wheel.sums.get(m).copied();
            match landing.get(&path) {
                // The same bytes at the same path: no overwrite (a shared
                // namespace `__init__.py`), as compile judges it.
                Some(&(_, Some(theirs))) if sum == Some(theirs) => {}
                Some(&(first, _)) if first != i && !spared(wheels[first].name) => {
                    let entry = found
                        .entry((i, wheels[first].name.to_string()))
                        .or_insert_with(|| Overwrite {
                            new: format!("{}=={}", wheel.name, wheel.version),
                            existing: wheels[first].name.to_string(),
                            existing_version: wheels[first].version.to_string(),
                            files: 0,
                            example: path.to_string(),
                        });
                    entry.files += 1;
                }
                Some(_) => {}
                None => {
                    landing.insert(path, (i, sum));
                }
            }
        }
    }
    if landing.is_empty() {
        return Vec::new();
    }
    for dist in snapshot.dists.values().filter(|d| !d.egg_info) {
        if spared(&dist.name) || wheels.iter().any(|w| w.name == dist.name) {
            continue;
        }
        let text = match records.get(dist) {
            Some(text) => Cow::Borrowed(text),
            None => Cow::Owned(record_text(&dist.path)),
        };
        let Ok(text) = text.as_ref() else {
            continue;
        };
        for line in record_lines(text) {
            let Some(key) = record_key(&line.path) else {
                continue;
            };
            let Some(&(wheel, sum)) = landing.get(key.as_ref()) else {
                continue;
            };
            if let Some(sum) = sum
                && same_bytes(&dist.path, &line.path, sum)
            {
                continue;
            }
            let entry = found
                .entry((wheel, dist.name.clone()))
                .or_insert_with(|| Overwrite {
                    new: format!("{}=={}", wheels[wheel].name, wheels[wheel].version),
                    existing: dist.name.clone(),
                    existing_version: dist.version.clone(),
                    files: 0,
                    example: line.path.to_string(),
                });
            entry.files += 1;
        }
    }
    found.into_values().collect()
}

/// The files an installed distribution owns, by where they land (keyed as
/// [`site_path`] keys a wheel member, `bin:NAME` for a script), each with
/// the path its RECORD names: what compile compares a layer's wheels with
/// when the image is a live environment (`--base-env`).
pub fn installed_files(dist_info: &std::path::Path) -> Result<Vec<(String, String)>, String> {
    let text = record_text(dist_info)?;
    Ok(record_lines(&text)
        .filter_map(|line| {
            let key = record_key(&line.path)?.into_owned();
            Some((key, line.path.into_owned()))
        })
        .collect())
}

/// Whether the installed file `path` (as RECORD names it, from the
/// site directory that holds the `.dist-info` at `dist_info`) has the CRC-32
/// and size `sum`: the rule compile uses, so the two never disagree. A
/// file that cannot be read is not the same.
pub fn same_bytes(dist_info: &std::path::Path, path: &str, (crc, size): (u32, u64)) -> bool {
    let Some(site) = dist_info.parent() else {
        return false;
    };
    let file = site.join(path);
    match std::fs::metadata(&file) {
        Ok(meta) if meta.is_file() && meta.len() == size => {}
        _ => return false,
    }
    let Ok(mut reader) = std::fs::File::open(&file) else {
        return false;
    };
    let mut hasher = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut read = 0u64;
    loop {
        match std::io::Read::read(&mut reader, &mut buf) {
            Ok(0) => break,
            Ok(n) => {
                read += n as u64;
                // A file that grows while read is not the one measured.
                if read > size {
                    return false;
                }
                hasher.update(&buf[..n]);
            }
            Err(_) => return false,
        }
    }
    read == size && hasher.finalize() == crc
}

/// After the installer ran: installed distributions the plan kept whose
/// files a distribution of the plan now also owns, as drift.
pub fn overwritten(plan: &Plan, after: &Snapshot) -> Vec<Change> {
    let planned = |name: &str| plan.to_install().any(|w| w.name == name);
    let mut out = Vec::new();
    for clash in clashes(after, &Records::default()) {
        let (kept, new) = match (planned(&clash.first), planned(&clash.second)) {
            (false, true) => (&clash.first, &clash.second),
            (true, false) => (&clash.second, &clash.first),
            _ => continue,
        };
        let Some(dist) = after.dists.get(kept) else {
            continue;
        };
        out.push(Change {
            name: kept.clone(),
            before: Some(dist.version.clone()),
            after: Some(dist.version.clone()),
            what: format!(
                "{} of its files overwritten by {new} (e.g. {})",
                clash.files, clash.example
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::installed::ScanOptions;
    use crate::testing::install;

    #[test]
    fn members_land_where_record_names_them() {
        assert_eq!(site_path("jwt/api.py").as_deref(), Some("jwt/api.py"));
        assert_eq!(
            site_path("x-1.data/purelib/x/a.py").as_deref(),
            Some("x/a.py")
        );
        assert_eq!(
            site_path("x-1.data/scripts/tool").as_deref(),
            Some("bin:tool")
        );
        assert_eq!(site_path("x-1.dist-info/RECORD"), None);
        assert_eq!(site_path("x-1.data/data/share/a"), None);
        assert_eq!(site_path("x/__pycache__/a.cpython-311.pyc"), None);
        assert_eq!(site_path("x/"), None);
        assert_eq!(record_key("../../../bin/tool").as_deref(), Some("bin:tool"));
    }

    #[test]
    fn a_new_wheel_that_holds_an_installed_distributions_files_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path();
        install(
            site,
            "pyjwt",
            &[("jwt/__init__.py", "a"), ("jwt/exceptions.py", "b")],
        );
        install(site, "other", &[("other.py", "")]);
        let options = ScanOptions {
            provenance: false,
            keep_records: true,
        };
        let (snapshot, records) = Snapshot::scan_with(&[site.to_path_buf()], options);
        let members = vec![
            "jwt/__init__.py".to_string(),
            "jwt/exceptions.py".to_string(),
            "jwt-1.3.1.dist-info/RECORD".to_string(),
        ];
        let wheels = [WheelFiles {
            name: "jwt",
            version: "1.3.1",
            members: &members,
            sums: &[],
        }];
        let found = overwrites(&snapshot, &records, &wheels, &|_| false);
        assert_eq!(
            found,
            vec![Overwrite {
                new: "jwt==1.3.1".into(),
                existing: "pyjwt".into(),
                existing_version: "1.0".into(),
                files: 2,
                example: "jwt/__init__.py".into(),
            }]
        );
        // Named with --allow-change, or replaced by the plan: spared.
        assert!(overwrites(&snapshot, &records, &wheels, &|n| n == "pyjwt").is_empty());
    }

    #[test]
    fn after_the_install_a_kept_distribution_sharing_files_is_drift() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path();
        install(site, "pyjwt", &[("jwt/__init__.py", "a")]);
        install(site, "jwt", &[("jwt/__init__.py", "b")]);
        let snapshot = Snapshot::scan(&[site.to_path_buf()]);
        let wanted = [crate::plan::Wanted {
            name: "jwt".into(),
            version: "1.0".parse().unwrap(),
            origin: "lock.txt:1".into(),
        }];
        let plan = crate::plan::plan(&wanted, &Snapshot::default(), &[]);
        let drift = overwritten(&plan, &snapshot);
        assert_eq!(drift.len(), 1, "{drift:?}");
        assert_eq!(drift[0].name, "pyjwt");
        assert!(drift[0].what.contains("overwritten by jwt"), "{drift:?}");
    }
}
