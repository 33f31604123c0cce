//! The distributions installed on an interpreter's path: `*.dist-info`
//! (PEP 376/627) and, as well as can be done, `*.egg-info`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::Serialize;
use sha2::{Digest, Sha256};
use uv_normalize::PackageName;

/// One installed distribution.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Installed {
    pub name: String,
    pub version: String,
    /// `pip`, `uv`, … from the INSTALLER file; empty when absent.
    pub installer: String,
    /// sha256 of the RECORD file: any reinstall or in-place upgrade changes it.
    pub record_digest: Option<String>,
    pub direct_url: bool,
    /// The `.dist-info` or `.egg-info` path.
    pub path: PathBuf,
    /// The site directory it lives in.
    pub site: PathBuf,
    pub egg_info: bool,
}

/// A metadata directory that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unreadable {
    pub path: PathBuf,
    pub why: String,
}

/// Every distribution found, by normalised name. When a name is found twice
/// (two site directories), the first on the path wins, as at import time;
/// the shadowed one is kept in `shadowed`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    pub dists: BTreeMap<String, Installed>,
    pub shadowed: Vec<Installed>,
    pub unreadable: Vec<Unreadable>,
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Name and Version from the head of a METADATA / PKG-INFO file.
fn name_version(text: &str) -> Option<(String, String)> {
    let mut name = None;
    let mut version = None;
    for line in text.lines() {
        if line.trim().is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Name:") {
            name = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("Version:") {
            version = Some(v.trim().to_string());
        }
        if name.is_some() && version.is_some() {
            break;
        }
    }
    Some((name?, version?))
}

pub fn normalise(name: &str) -> String {
    PackageName::from_str(name)
        .map(|n| n.to_string())
        .unwrap_or_else(|_| name.to_ascii_lowercase())
}

fn read_dist(site: &Path, path: &Path, egg: bool) -> Result<Installed, String> {
    let metadata_file = if egg {
        if path.is_dir() {
            path.join("PKG-INFO")
        } else {
            path.to_path_buf()
        }
    } else {
        path.join("METADATA")
    };
    let text = crate::read::read_small(&metadata_file)?;
    let text = String::from_utf8_lossy(&text);
    let (name, version) =
        name_version(&text).ok_or_else(|| "no Name or Version in its metadata".to_string())?;
    let record_digest = if egg {
        None
    } else {
        crate::read::read_small(&path.join("RECORD"))
            .ok()
            .map(|bytes| hex(&Sha256::digest(&bytes)))
    };
    let installer = crate::read::read_small(&path.join("INSTALLER"))
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    Ok(Installed {
        name: normalise(&name),
        version,
        installer,
        record_digest,
        direct_url: path.join("direct_url.json").is_file(),
        path: path.to_path_buf(),
        site: site.to_path_buf(),
        egg_info: egg,
    })
}

impl Snapshot {
    /// Scan `paths` in order.
    pub fn scan(paths: &[PathBuf]) -> Self {
        let mut snapshot = Self::default();
        for site in paths {
            let Ok(entries) = fs_err::read_dir(site) else {
                continue;
            };
            let mut found: Vec<PathBuf> =
                entries.filter_map(Result::ok).map(|e| e.path()).collect();
            // Sorted so that the result does not depend on directory order.
            found.sort();
            for path in found {
                let Some(file_name) = path.file_name().and_then(|f| f.to_str()) else {
                    continue;
                };
                let egg = file_name.ends_with(".egg-info");
                if !(file_name.ends_with(".dist-info") || egg) {
                    continue;
                }
                match read_dist(site, &path, egg) {
                    Ok(dist) => {
                        if snapshot.dists.contains_key(&dist.name) {
                            snapshot.shadowed.push(dist);
                        } else {
                            snapshot.dists.insert(dist.name.clone(), dist);
                        }
                    }
                    Err(why) => snapshot.unreadable.push(Unreadable { path, why }),
                }
            }
        }
        snapshot
    }
}

/// One RECORD line: path, `sha256=…` digest (urlsafe base64, no padding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordEntry {
    pub path: String,
    pub sha256: Option<String>,
}

/// Parse a RECORD file (CSV: path,hash,size; paths may be quoted).
pub fn read_record(dist_info: &Path) -> Result<Vec<RecordEntry>, String> {
    let bytes = crate::read::read_small(&dist_info.join("RECORD"))?;
    let text = String::from_utf8(bytes).map_err(|_| "RECORD is not UTF-8".to_string())?;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        let fields = split_csv(line);
        let Some(path) = fields.first() else { continue };
        let sha256 = fields
            .get(1)
            .and_then(|h| h.strip_prefix("sha256="))
            .map(str::to_string);
        out.push(RecordEntry {
            path: path.clone(),
            sha256,
        });
    }
    Ok(out)
}

fn split_csv(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                current.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    fields.push(current);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_with_quotes() {
        assert_eq!(
            split_csv(r#""a,b.py",sha256=xx,12"#),
            vec!["a,b.py", "sha256=xx", "12"]
        );
    }

    #[test]
    fn scans_dist_info_and_egg_info_and_reports_broken_ones() {
        let dir = std::env::temp_dir().join(format!("ll-scan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("Foo_Bar-1.0.dist-info")).unwrap();
        std::fs::write(
            dir.join("Foo_Bar-1.0.dist-info/METADATA"),
            "Name: Foo_Bar\nVersion: 1.0\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("Foo_Bar-1.0.dist-info/RECORD"),
            "foo/__init__.py,,\n",
        )
        .unwrap();
        std::fs::write(dir.join("Foo_Bar-1.0.dist-info/INSTALLER"), "uv\n").unwrap();
        std::fs::create_dir_all(dir.join("old.egg-info")).unwrap();
        std::fs::write(
            dir.join("old.egg-info/PKG-INFO"),
            "Name: old\nVersion: 0.1\n",
        )
        .unwrap();
        std::fs::create_dir_all(dir.join("broken-1.0.dist-info")).unwrap();
        let snapshot = Snapshot::scan(std::slice::from_ref(&dir));
        assert_eq!(snapshot.dists["foo-bar"].version, "1.0");
        assert_eq!(snapshot.dists["foo-bar"].installer, "uv");
        assert!(snapshot.dists["foo-bar"].record_digest.is_some());
        assert!(snapshot.dists["old"].egg_info);
        assert_eq!(snapshot.unreadable.len(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
