//! Two installed distributions that own the same files (e.g. a package and
//! its `-cuda13` variant): whichever was installed last silently won.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::installed::{Snapshot, read_record};

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

/// Every pair of distributions sharing files, sorted.
pub fn clashes(snapshot: &Snapshot) -> Vec<Clash> {
    let mut owners: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for dist in snapshot.dists.values().filter(|d| !d.egg_info) {
        let Ok(record) = read_record(&dist.path) else {
            continue;
        };
        let site = dist.site.display().to_string();
        for entry in record {
            if ignored(&entry.path) {
                continue;
            }
            owners
                .entry(format!("{site}/{}", entry.path))
                .or_default()
                .push(&dist.name);
        }
    }
    let mut pairs: BTreeMap<(String, String), Clash> = BTreeMap::new();
    for (path, names) in &owners {
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
