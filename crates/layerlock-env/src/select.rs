//! Which of a lock's packages an interpreter takes, and whether the lock
//! may be used on it at all: the target the header names, PEP 751
//! `environments` and `requires-python`, and each package's marker judged
//! for the interpreter itself (its full Python version, OS and machine).

use std::collections::BTreeMap;
use std::str::FromStr;

use uv_pep440::{Version, VersionSpecifiers};

use layerlock_lock::{Lock, LockedPackage};

use crate::{Interpreter, Wanted};

/// One lock entry: what to have, and its hashes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockEntry {
    pub wanted: Wanted,
    pub hashes: Vec<String>,
    /// For a package locked from its source: the URL the installer builds
    /// it from (a git commit; a directory, made absolute from the lock's
    /// folder). `None`: an index file, checked by `hashes`.
    pub source: Option<String>,
}

impl LockEntry {
    /// The entry of `package` of the lock at `lock_path`.
    pub fn of(package: &LockedPackage, lock_path: &std::path::Path) -> Self {
        Self {
            wanted: Wanted {
                name: package.name.to_string(),
                version: package.version.clone(),
                origin: package.origin.clone(),
            },
            hashes: package.hashes.clone(),
            source: package.direct.as_ref().map(|d| match d {
                layerlock_lock::DirectSource::Directory { path } => {
                    let dir = lock_path.parent().unwrap_or(std::path::Path::new("."));
                    let absolute =
                        std::path::absolute(dir.join(path)).unwrap_or_else(|_| dir.join(path));
                    let absolute = layerlock_lock::normalize(&absolute);
                    layerlock_lock::DirectSource::Directory {
                        path: absolute.to_string_lossy().into_owned(),
                    }
                    .url()
                }
                git => git.url(),
            }),
        }
    }
}

/// Why a lock cannot be used on an interpreter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The header's targets are all other ones.
    #[error("was compiled for {targets}: {why}")]
    OtherTarget { targets: String, why: String },
    #[error(
        "cannot be installed here: the lock has markers and layerlock cannot tell the marker values of {0}"
    )]
    NoMarkerValues(String),
    #[error("cannot be installed here: its environments ({0}) do not include this interpreter")]
    Environments(String),
    #[error("cannot be installed here: it requires Python {0}")]
    RequiresPython(String),
    /// Not the interpreter's fault: the lock is malformed.
    #[error("requires-python `{0}` does not read")]
    BadRequiresPython(String),
    #[error(
        "{origin}: {name} applies twice on this interpreter (also at {first}); a lock pins each package once per environment"
    )]
    Twice {
        origin: String,
        name: String,
        first: String,
    },
}

impl Refusal {
    /// Whether the interpreter is the wrong one for the lock (rather than
    /// the lock being wrong whatever runs it).
    pub fn is_wrong_interpreter(&self) -> bool {
        self.what_and_why().is_some()
    }

    /// A wrong interpreter's refusal in two parts, what the lock is and
    /// why this interpreter is not it, for a message that names the
    /// interpreter between them.
    pub fn what_and_why(&self) -> Option<(String, String)> {
        let here = "cannot be installed here".to_string();
        Some(match self {
            Self::OtherTarget { targets, why } => {
                (format!("was compiled for {targets}"), why.clone())
            }
            Self::NoMarkerValues(platform) => (
                here,
                format!(
                    "the lock has markers and layerlock cannot tell the marker values of {platform}"
                ),
            ),
            Self::Environments(shown) => (
                here,
                format!("its environments ({shown}) do not include this interpreter"),
            ),
            Self::RequiresPython(spec) => (here, format!("it requires Python {spec}")),
            Self::BadRequiresPython(_) | Self::Twice { .. } => return None,
        })
    }
}

/// The entries of `lock` that `interpreter` takes, or why it takes none.
pub fn select(interpreter: &Interpreter, lock: &Lock) -> Result<Vec<LockEntry>, Refusal> {
    let header = &lock.header;
    // A lock for several targets serves an interpreter that is any of
    // them; the refusal names them all, and why this one is not the first.
    let misses: Vec<String> = header
        .targets
        .iter()
        .map_while(|t| interpreter.mismatch(&t.python, &t.platform))
        .collect();
    if !header.targets.is_empty() && misses.len() == header.targets.len() {
        let why = match misses.as_slice() {
            [one] => one.clone(),
            [first, ..] => format!("it is none of them ({first}, …)"),
            [] => String::new(),
        };
        return Err(Refusal::OtherTarget {
            targets: layerlock_lock::describe_targets(&header.targets),
            why,
        });
    }
    let needs_markers =
        !header.environments.is_empty() || lock.packages.iter().any(|p| !p.marker.is_true());
    let entries = if needs_markers {
        chosen_by_markers(interpreter, lock)?
    } else {
        lock.packages
            .iter()
            .map(|p| LockEntry::of(p, &lock.path))
            .collect()
    };
    if let Some(spec) = &header.requires_python {
        let (major, minor, patch) = interpreter.version;
        let version = Version::new([u64::from(major), u64::from(minor), u64::from(patch)]);
        let specifiers = VersionSpecifiers::from_str(spec)
            .map_err(|_| Refusal::BadRequiresPython(spec.clone()))?;
        if !specifiers.contains(&version) {
            return Err(Refusal::RequiresPython(spec.clone()));
        }
    }
    Ok(entries)
}

/// The packages whose markers hold for `interpreter`, once each, after
/// the lock's `environments` are found to include it.
fn chosen_by_markers(interpreter: &Interpreter, lock: &Lock) -> Result<Vec<LockEntry>, Refusal> {
    let (major, minor, patch) = interpreter.version;
    let no_values = || Refusal::NoMarkerValues(interpreter.describe_platform());
    let platform = interpreter.marker_platform().ok_or_else(no_values)?;
    let here = layerlock_dist::Target::new(&format!("{major}.{minor}.{patch}"), &platform)
        .map_err(|_| no_values())?;
    let markers = here.markers();
    let environments = &lock.header.environments;
    if !environments.is_empty() && !environments.iter().any(|m| m.evaluate(markers, &[])) {
        let shown: Vec<String> = environments
            .iter()
            .filter_map(|m| m.try_to_string())
            .collect();
        return Err(Refusal::Environments(shown.join("; ")));
    }
    let mut chosen = Vec::new();
    let mut seen = BTreeMap::new();
    for p in lock.applicable(Some(markers)) {
        if let Some(first) = seen.insert(p.name.clone(), p.origin.clone()) {
            return Err(Refusal::Twice {
                origin: p.origin.clone(),
                name: p.name.to_string(),
                first,
            });
        }
        chosen.push(LockEntry::of(p, &lock.path));
    }
    Ok(chosen)
}

/// A locked package the environment lacks (`have: None`) or holds at
/// another version.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Mismatch {
    pub name: String,
    pub want: String,
    pub have: Option<String>,
    pub origin: String,
}

/// What `verify` finds of `entries` in `snapshot`: the missing, then the
/// ones at another version, each in the lock's order.
pub fn compare(
    entries: &[LockEntry],
    snapshot: &crate::Snapshot,
) -> (Vec<Mismatch>, Vec<Mismatch>) {
    let mut missing = Vec::new();
    let mut different = Vec::new();
    for entry in entries {
        let want = &entry.wanted;
        let mismatch = |have: Option<String>| Mismatch {
            name: want.name.clone(),
            want: want.version.to_string(),
            have,
            origin: want.origin.clone(),
        };
        match snapshot.dists.get(&want.name) {
            None => missing.push(mismatch(None)),
            Some(d) if !crate::plan::is_version(&d.version, &want.version) => {
                different.push(mismatch(Some(d.version.clone())));
            }
            Some(_) => {}
        }
    }
    (missing, different)
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    fn interpreter(version: (u8, u8, u8)) -> Interpreter {
        Interpreter {
            executable: PathBuf::from("python3"),
            version,
            implementation: "cpython".into(),
            sys_platform: "linux".into(),
            platform_machine: "x86_64".into(),
            libc: "glibc".into(),
            libc_version: "2.35".into(),
            purelib: PathBuf::new(),
            prefix: PathBuf::new(),
            paths: Vec::new(),
        }
    }

    fn lock(text: &str) -> Lock {
        Lock::parse(Path::new("lock.txt"), text).unwrap()
    }

    fn names(entries: &[LockEntry]) -> Vec<&str> {
        entries.iter().map(|e| e.wanted.name.as_str()).collect()
    }

    const HASH: &str =
        "--hash=sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

    #[test]
    fn markers_are_judged_for_the_interpreter_itself() {
        let text = format!(
            "a==1 ; python_full_version >= '3.12.3' {HASH}\nb==1 ; sys_platform == 'win32' {HASH}\nc==1 {HASH}\n"
        );
        let lock = lock(&text);
        let chosen = select(&interpreter((3, 12, 3)), &lock).unwrap();
        assert_eq!(names(&chosen), ["a", "c"]);
        let chosen = select(&interpreter((3, 12, 2)), &lock).unwrap();
        assert_eq!(names(&chosen), ["c"]);
    }

    #[test]
    fn a_package_twice_on_one_interpreter_is_refused() {
        // A pylock.toml may list a package once per environment; two of
        // them holding at once is the lock's fault.
        let package = |version: &str, marker: &str| {
            format!(
                "[[packages]]\nname = \"a\"\nversion = \"{version}\"\nmarker = \"{marker}\"\n\
                 [[packages.wheels]]\nurl = \"https://example.org/a-{version}-py3-none-any.whl\"\n\
                 hashes = {{ sha256 = \"{}\" }}\n",
                "a".repeat(64)
            )
        };
        let text = format!(
            "lock-version = \"1.0\"\ncreated-by = \"test\"\n{}{}",
            package("1", "sys_platform == 'linux'"),
            package("2", "python_version >= '3'")
        );
        let lock = Lock::parse(Path::new("pylock.toml"), &text).unwrap();
        let refusal = select(&interpreter((3, 12, 3)), &lock).unwrap_err();
        assert!(matches!(refusal, Refusal::Twice { .. }), "{refusal}");
        assert!(!refusal.is_wrong_interpreter());
    }

    #[test]
    fn the_header_target_must_be_this_interpreter() {
        let text = format!(
            "# layerlock-target: python=3.11 platform=x86_64-manylinux_2_28\nc==1 {HASH}\n"
        );
        let lock = lock(&text);
        assert_eq!(lock.header.targets.len(), 1);
        let refusal = select(&interpreter((3, 12, 3)), &lock).unwrap_err();
        assert!(matches!(refusal, Refusal::OtherTarget { .. }), "{refusal}");
        assert!(refusal.is_wrong_interpreter());
    }
}
