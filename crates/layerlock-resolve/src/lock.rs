//! A resolution as a lock: each package with the hashes of its files (all
//! of the version's files, or only those installable on the target), the
//! files behind them, and the base packages the layer leans on.

use std::path::PathBuf;
use std::str::FromStr;

use uv_pep508::MarkerTree;

use layerlock_dist::{DistKind, Target};
use layerlock_lock::{
    BaseUse, Header, Lock, LockFormat, LockTarget, LockedFile, LockedPackage, relative_path,
};

use crate::{Resolution, ResolveRequest};

/// Which files' hashes a lock lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashSelection {
    /// Every file of the version (an install elsewhere still verifies).
    All,
    /// Only the wheels installable on the target.
    Target,
    /// The target's wheels and the sdist (a `pylock.toml`'s default, as
    /// uv writes one: its `environments` name the target).
    TargetAndSdist,
}

/// What the lock says about itself besides its packages.
#[derive(Debug, Clone)]
pub struct LockSpec {
    pub hashes: HashSelection,
    pub format: LockFormat,
    /// Where it is written (for the model; empty for stdout).
    pub path: PathBuf,
    /// Its bases as shown in its header.
    pub bases: Vec<String>,
    pub owned: Vec<String>,
    /// The command that regenerates it.
    pub command: String,
    /// The lock's directory, absolute: local (find-links) files are
    /// written relative to it, so no machine's path reaches the lock.
    pub directory: PathBuf,
}

#[derive(Debug, thiserror::Error)]
#[error(
    "{listed_by} lists {filename} without a sha256, so it cannot be hash-pinned; use an index that publishes hashes"
)]
pub struct UnhashedFile {
    pub listed_by: String,
    pub filename: String,
}

/// The lock of `resolution`.
pub fn to_lock(
    request: &ResolveRequest,
    resolution: &Resolution,
    spec: LockSpec,
) -> Result<Lock, UnhashedFile> {
    let target = &request.target;
    let mut packages = Vec::with_capacity(resolution.packages.len());
    for (name, resolved) in &resolution.packages {
        let mut hashes = Vec::new();
        let mut files = Vec::new();
        let installable_wheel = |file: &layerlock_dist::IndexFile| match file.kind(name) {
            DistKind::Wheel(wheel) => {
                wheel.is_compatible(target.tags())
                    && file
                        .requires_python
                        .as_ref()
                        .is_none_or(|r| target.allows_python(r))
            }
            _ => false,
        };
        // Without a wheel for the target, the sdist is what installs.
        let sdist_installs = !resolved.files.iter().any(installable_wheel);
        for file in &resolved.files {
            if spec.hashes != HashSelection::All {
                let installable = match file.kind(name) {
                    DistKind::Wheel(_) => installable_wheel(file),
                    _ => spec.hashes == HashSelection::TargetAndSdist || sdist_installs,
                };
                if !installable {
                    continue;
                }
            }
            let Some(sha) = &file.sha256 else {
                return Err(UnhashedFile {
                    listed_by: file.listed_by.clone(),
                    filename: file.filename.clone(),
                });
            };
            hashes.push(format!("sha256:{sha}"));
            let local = local_path(&file.url)
                .map(|p| relative_path(&p, &spec.directory).display().to_string());
            files.push(LockedFile {
                name: file.filename.clone(),
                url: local.is_none().then(|| public_url(&file.url)),
                path: local,
                size: file.size,
                upload_time: file.upload_time,
                sha256: Some(sha.clone()),
            });
        }
        hashes.sort();
        hashes.dedup();
        packages.push(LockedPackage {
            name: name.clone(),
            version: resolved.version.clone(),
            marker: MarkerTree::TRUE,
            hashes,
            files,
            via: resolved.via.iter().cloned().collect(),
            origin: String::new(),
            direct: resolved.direct.clone(),
        });
    }
    let base_used = resolution
        .base_used
        .iter()
        .filter_map(|(name, via)| {
            let pin = request.base.get(name)?;
            Some(BaseUse {
                name: name.clone(),
                version: pin.version.clone(),
                origin: pin.origin.clone(),
                via: via.iter().cloned().collect(),
            })
        })
        .collect();
    Ok(Lock {
        path: spec.path,
        format: spec.format,
        header: Header {
            targets: vec![LockTarget {
                python: target.python_short(),
                platform: target.platform_name().to_string(),
            }],
            bases: spec.bases,
            owned: spec.owned,
            replaces: Vec::new(),
            unchecked: Vec::new(),
            walked_back: Vec::new(),
            command: Some(spec.command),
            description: Some(target.describe()),
            environments: vec![environment(target)],
            requires_python: None,
        },
        packages,
        base_used,
    })
}

/// PEP 751 `environments`: the target's Python, OS and machine (the glibc
/// version has no marker; the lock's wheels carry it in their tags).
fn environment(target: &Target) -> MarkerTree {
    let m = target.markers();
    let text = format!(
        "python_version == '{}' and sys_platform == '{}' and platform_machine == '{}'",
        target.python_short(),
        m.sys_platform(),
        m.platform_machine()
    );
    MarkerTree::from_str(&text).unwrap_or(MarkerTree::TRUE)
}

/// A file URL as a lock may show it: no user-info and no query (signed
/// URLs carry their secret there), no fragment.
fn public_url(url: &str) -> String {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    format!("{scheme}://{host}{path}")
}

/// The file a `file://` URL names, percent-decoded.
fn local_path(url: &str) -> Option<PathBuf> {
    let encoded = url.strip_prefix("file://")?;
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = encoded.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    Some(PathBuf::from(String::from_utf8(out).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn local_files_are_named_from_the_lock() {
        let path = local_path("file:///repo/wheels/a%20b-1.0-py3-none-any.whl").unwrap();
        assert_eq!(path, Path::new("/repo/wheels/a b-1.0-py3-none-any.whl"));
        assert_eq!(
            relative_path(&path, Path::new("/repo/locks"))
                .display()
                .to_string(),
            "../wheels/a b-1.0-py3-none-any.whl"
        );
        assert_eq!(
            relative_path(&path, Path::new("/repo"))
                .display()
                .to_string(),
            "wheels/a b-1.0-py3-none-any.whl"
        );
        assert!(local_path("https://x/a.whl").is_none());
    }

    #[test]
    fn credentials_in_a_file_url_never_reach_the_lock() {
        assert_eq!(
            public_url("https://tok:secret@files.example/p/a-1.whl?X-Amz-Signature=s#sha256=ab"),
            "https://files.example/p/a-1.whl"
        );
        assert_eq!(
            public_url("https://files.example/a@b/a-1.whl"),
            "https://files.example/a@b/a-1.whl"
        );
    }
}
