//! What `install` and `verify` share: reading a lock (requirements file or
//! `pylock.toml`), inspecting the interpreter, the target check that fails
//! fast on the wrong image, and choosing the lock's packages for it.

use std::path::Path;
use std::str::FromStr;

use anyhow::{Context, Result, bail};
use uv_pep440::{Version, VersionSpecifiers};

use layerlock_env::{Interpreter, Wanted};

use crate::printer::Hinted;

/// One lock entry: what to have, and its hashes.
#[derive(Debug, Clone)]
pub struct LockEntry {
    pub wanted: Wanted,
    pub hashes: Vec<String>,
}

pub struct Lock {
    /// Every package of the lock until [`inspect`] keeps those whose
    /// markers hold for the interpreter.
    pub entries: Vec<LockEntry>,
    /// (python, platform) from the header.
    pub target: Option<(String, String)>,
    model: layerlock_lock::Lock,
}

fn entry(p: &layerlock_lock::LockedPackage) -> LockEntry {
    LockEntry {
        wanted: Wanted {
            name: p.name.to_string(),
            version: p.version.to_string(),
            origin: p.origin.clone(),
        },
        hashes: p.hashes.clone(),
    }
}

/// Read a lock for `install` and `verify`.
pub fn read_lock(path: &Path) -> Result<Lock> {
    let model = layerlock_lock::Lock::read(path)?;
    refuse_empty(path, &model)?;
    Ok(Lock {
        entries: model.packages.iter().map(entry).collect(),
        target: model
            .header
            .target
            .as_ref()
            .map(|t| (t.python.clone(), t.platform.clone())),
        model,
    })
}

/// A lock with no package that layerlock did not write (no target header):
/// the file is empty or only comments, or not the lock meant. Checking or
/// installing nothing is no pass. (A layer the base covers whole is an
/// empty lock with its header: nothing to do, rightly.)
pub fn refuse_empty(path: &Path, lock: &layerlock_lock::Lock) -> Result<()> {
    if lock.packages.is_empty() && lock.header.target.is_none() {
        anyhow::bail!(
            "{}: no packages (the file is empty or only comments); pass the lock `layerlock compile` wrote",
            path.display()
        );
    }
    Ok(())
}

/// Inspect `python`, refuse at once when the lock names another target (or
/// PEP 751 `environments` / `requires-python` that exclude it), and keep
/// the packages whose markers hold for this interpreter.
pub fn inspect(
    python: &Path,
    cache: Option<&Path>,
    lock: &mut Lock,
    lock_path: &Path,
) -> Result<Interpreter> {
    if python.is_dir() {
        return Err(Hinted {
            message: format!(
                "--python {} is a directory with no bin/python in it, not a Python interpreter",
                python.display()
            ),
            hints: vec![
                "pass the interpreter (…/bin/python) or a virtual environment's directory"
                    .to_string(),
            ],
        }
        .into());
    }
    let interpreter = Interpreter::inspect_cached(python, cache)
        .with_context(|| format!("cannot inspect the interpreter {}", python.display()))?;
    accept(interpreter, python, lock, lock_path)
}

/// The checks of [`inspect`] on an interpreter inspected already (`verify`
/// takes a cached inspection while the lock is read).
pub fn accept(
    interpreter: Interpreter,
    python: &Path,
    lock: &mut Lock,
    lock_path: &Path,
) -> Result<Interpreter> {
    // `{lock} {what}, but {python} is Python X on P: {why}`, with what to do.
    let refuse = |what: String, why: String| -> anyhow::Error {
        Hinted {
            message: format!(
                "{} {what}, but {} is Python {} on {}: {why}",
                lock_path.display(),
                interpreter.executable.display(),
                interpreter.python_short(),
                interpreter.describe_platform()
            ),
            hints: vec![
                "compile a layer for this image's target (layerlock compile --python-version … --platform …), or run on the image the lock was made for".to_string(),
            ],
        }
        .into()
    };
    if let Some((py, platform)) = &lock.target
        && let Some(why) = interpreter.mismatch(py, platform)
    {
        return Err(refuse(
            format!("was compiled for Python {py} on {platform}"),
            why,
        ));
    }
    let not_here = |why: String| refuse("cannot be installed here".to_string(), why);
    let header = &lock.model.header;
    let needs_markers =
        !header.environments.is_empty() || lock.model.packages.iter().any(|p| !p.marker.is_true());
    if needs_markers {
        let (major, minor, patch) = interpreter.version;
        // Markers are judged for the interpreter itself (its full Python
        // version, OS and machine), not for what the lock says it targets.
        let platform = interpreter.marker_platform().ok_or_else(|| {
            not_here(format!(
                "the lock has markers and layerlock cannot tell the marker values of {}",
                interpreter.describe_platform()
            ))
        })?;
        let here = layerlock_dist::Target::new(&format!("{major}.{minor}.{patch}"), &platform)
            .with_context(|| format!("the marker values of {}", python.display()))?;
        let markers = here.markers();
        if !header.environments.is_empty()
            && !header.environments.iter().any(|m| m.evaluate(markers, &[]))
        {
            let envs: Vec<String> = header
                .environments
                .iter()
                .filter_map(|m| m.try_to_string())
                .collect();
            return Err(not_here(format!(
                "its environments ({}) do not include this interpreter",
                envs.join("; ")
            )));
        }
        let mut chosen: Vec<LockEntry> = Vec::new();
        let mut seen = std::collections::BTreeMap::new();
        for p in lock.model.applicable(Some(markers)) {
            if let Some(first) = seen.insert(p.name.clone(), p.origin.clone()) {
                bail!(
                    "{}: {} applies twice on this interpreter (also at {first}); a lock pins each package once per environment",
                    p.origin,
                    p.name
                );
            }
            chosen.push(entry(p));
        }
        lock.entries = chosen;
    }
    if let Some(spec) = &header.requires_python {
        let (major, minor, patch) = interpreter.version;
        let version = Version::new([u64::from(major), u64::from(minor), u64::from(patch)]);
        let specifiers = VersionSpecifiers::from_str(spec)
            .with_context(|| format!("{}: requires-python `{spec}`", lock_path.display()))?;
        if !specifiers.contains(&version) {
            return Err(not_here(format!("it requires Python {spec}")));
        }
    }
    Ok(interpreter)
}
