//! Two installed distributions that own the same files (e.g. a package and
//! its `-cuda13` variant): whichever was installed last silently won.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Serialize;

use crate::installed::{Installed, Records, Snapshot, record_lines, record_text};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Clash {
    pub first: String,
    pub second: String,
    /// How many files both claim.
    pub files: usize,
    pub example: String,
    /// Top-level modules or packages both provide.
    pub modules: Vec<String>,
}

fn ignored(path: &str) -> bool {
    path.contains(".dist-info/") || path.contains("__pycache__") || path.ends_with(".pyc")
}

/// Where a site's files are keyed: the outermost site that holds it (its
/// index in the sorted, distinct site names) and the site's path inside
/// that one, `sub/` or empty. A file is one key however it is reached, as
/// it is one `{site}/{path}`: `sub/mod.py` of `/x` is `mod.py` of `/x/sub`.
fn roots(sites: &[String]) -> Vec<(usize, String)> {
    sites
        .iter()
        .enumerate()
        .map(|(own, site)| {
            // Sorted, so the first site that holds this one is the outermost.
            sites
                .iter()
                .enumerate()
                .find_map(|(root, outer)| {
                    let rest = site.strip_prefix(outer.as_str())?.strip_prefix('/')?;
                    Some((root, format!("{rest}/")))
                })
                .unwrap_or((own, String::new()))
        })
        .collect()
}

/// A file's first owner, and the sha256 its RECORD gives.
type Owner<'a> = (&'a str, Option<Cow<'a, str>>);

/// Every pair of distributions sharing files with other bytes (the same
/// bytes, by their RECORDs' sha256, are no clash), sorted. RECORDs come from
/// `records` (what the scan read), else are read now; a distribution whose
/// RECORD cannot be read owns nothing here (`verify --integrity` reports it).
pub fn clashes(snapshot: &Snapshot, records: &Records) -> Vec<Clash> {
    let dists: Vec<(&Installed, Cow<'_, Result<String, String>>)> = snapshot
        .dists
        .values()
        .filter(|d| !d.egg_info)
        .map(|dist| {
            let text = match records.get(dist) {
                Some(text) => Cow::Borrowed(text),
                None => Cow::Owned(record_text(&dist.path)),
            };
            (dist, text)
        })
        .collect();
    // The few site directories, in the order of their names.
    let mut sites: Vec<&Path> = dists.iter().map(|(d, _)| d.site.as_path()).collect();
    sites.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
    sites.dedup_by(|a, b| a.as_os_str() == b.as_os_str());
    let names: Vec<String> = sites.iter().map(|s| s.display().to_string()).collect();
    let roots = roots(&names);
    // The first owner of every file; a file claimed again goes to `shared`
    // under its full path, with all its owners. Nearly every file has one
    // owner, and its key borrows the RECORD's text.
    let mut first: HashMap<(usize, Cow<'_, str>), Owner<'_>> = HashMap::new();
    let mut shared: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for (dist, text) in &dists {
        let Ok(text) = text.as_ref() else {
            continue;
        };
        let Some(index) = sites
            .iter()
            .position(|s| s.as_os_str() == dist.site.as_os_str())
        else {
            continue;
        };
        let (root, inside) = &roots[index];
        for line in record_lines(text) {
            if ignored(&line.path) {
                continue;
            }
            let path = if inside.is_empty() {
                line.path
            } else {
                Cow::Owned(format!("{inside}{}", line.path))
            };
            match first.entry((*root, path)) {
                Entry::Vacant(vacant) => {
                    vacant.insert((dist.name.as_str(), line.sha256));
                }
                // The same bytes (a shared namespace `__init__.py`): no
                // clash, as compile and install judge it.
                Entry::Occupied(occupied)
                    if line.sha256.is_some() && occupied.get().1 == line.sha256 => {}
                Entry::Occupied(occupied) => {
                    let (root, path) = occupied.key();
                    shared
                        .entry(format!("{}/{path}", names[*root]))
                        .or_insert_with(|| vec![occupied.get().0])
                        .push(dist.name.as_str());
                }
            }
        }
    }
    let mut pairs: BTreeMap<(String, String), Clash> = BTreeMap::new();
    for (path, names) in &shared {
        for (i, a) in names.iter().enumerate() {
            for b in &names[i + 1..] {
                if a == b {
                    continue;
                }
                let (first, second) = if a < b { (*a, *b) } else { (*b, *a) };
                let rel = path
                    .rsplit_once("-packages/")
                    .map_or(path.as_str(), |(_, r)| r);
                let clash = pairs
                    .entry((first.to_string(), second.to_string()))
                    .or_insert_with(|| Clash {
                        first: first.to_string(),
                        second: second.to_string(),
                        files: 0,
                        example: rel.to_string(),
                        modules: Vec::new(),
                    });
                clash.files += 1;
                let module = rel.split('/').next().unwrap_or(rel);
                let module = module
                    .strip_suffix(".py")
                    .unwrap_or(module)
                    .split('.')
                    .next()
                    .unwrap_or(module)
                    .to_string();
                if !module.starts_with("..") && !clash.modules.contains(&module) {
                    clash.modules.push(module);
                }
            }
        }
    }
    pairs.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::installed::ScanOptions;
    use crate::testing::install;

    fn scan(sites: &[&Path]) -> (Snapshot, Records) {
        let sites: Vec<_> = sites.iter().map(|s| s.to_path_buf()).collect();
        let options = ScanOptions {
            provenance: false,
            keep_records: true,
        };
        Snapshot::scan_with(&sites, options)
    }

    #[test]
    fn shared_files_make_one_clash_per_pair_with_the_first_path_as_example() {
        let dir = tempfile::tempdir().unwrap();
        let site = &dir.path().join("site-packages");
        install(
            site,
            "engine",
            &[
                ("engine/b.py", "b"),
                ("engine/a.py", "a"),
                ("engine.pth", ""),
            ],
        );
        install(
            site,
            "engine-cuda13",
            &[("engine/a.py", "A"), ("engine/b.py", "B")],
        );
        install(
            site,
            "other",
            &[("other/__init__.py", ""), ("engine.pth", "other")],
        );
        // Listing one file twice is not a clash with itself.
        install(site, "twice", &[("twice.py", ""), ("twice.py", "")]);
        let (snapshot, records) = scan(&[site.as_path()]);
        let found = clashes(&snapshot, &records);
        assert_eq!(
            found,
            vec![
                Clash {
                    first: "engine".into(),
                    second: "engine-cuda13".into(),
                    files: 2,
                    example: "engine/a.py".into(),
                    modules: vec!["engine".into()],
                },
                Clash {
                    first: "engine".into(),
                    second: "other".into(),
                    files: 1,
                    example: "engine.pth".into(),
                    modules: vec!["engine".into()],
                },
            ]
        );
        // The same answer with every RECORD read afresh.
        assert_eq!(clashes(&snapshot, &Records::default()), found);
    }

    #[test]
    fn a_site_inside_another_site_shares_its_files() {
        // `/x/sub/mod.py` is `sub/mod.py` of site `/x` and `mod.py` of site
        // `/x/sub`: one file, two owners.
        let dir = tempfile::tempdir().unwrap();
        let outer = dir.path().join("site-packages");
        let inner = outer.join("vendored");
        install(
            &outer,
            "outer",
            &[("vendored/mod.py", "m"), ("outer.py", "")],
        );
        install(&inner, "inner", &[("mod.py", "M")]);
        let (snapshot, records) = scan(&[&outer, &inner]);
        let found = clashes(&snapshot, &records);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            (found[0].first.as_str(), found[0].second.as_str()),
            ("inner", "outer")
        );
        assert_eq!(found[0].example, "vendored/mod.py");
        // Two sites side by side share nothing.
        let (snapshot, records) = scan(&[&outer, &dir.path().join("elsewhere")]);
        assert!(clashes(&snapshot, &records).is_empty());
    }

    #[test]
    fn sites_are_matched_by_their_whole_name() {
        assert_eq!(
            roots(&["/a".into(), "/a/b".into(), "/a/b/c".into(), "/ab".into()]),
            vec![
                (0, String::new()),
                (0, "b/".into()),
                (0, "b/c/".into()),
                (3, String::new()),
            ]
        );
    }

    #[test]
    fn the_same_bytes_at_one_path_are_no_clash() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("site-packages");
        install(&site, "nsa", &[("ns/__init__.py", ""), ("ns/a.py", "a")]);
        install(&site, "nsb", &[("ns/__init__.py", ""), ("ns/b.py", "b")]);
        let (snapshot, records) = scan(&[site.as_path()]);
        assert_eq!(clashes(&snapshot, &records), vec![]);
    }
}
