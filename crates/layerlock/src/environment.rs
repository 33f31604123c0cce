//! What `install` and `verify` share: reading a layer lock, inspecting the
//! interpreter, and the target check that fails fast on the wrong image.

use std::path::Path;

use anyhow::{Context, Result, bail};

use layerlock_env::{Interpreter, Wanted};

use crate::printer::Hinted;

/// One lock entry: what to have, and its hashes.
#[derive(Debug, Clone)]
pub struct LockEntry {
    pub wanted: Wanted,
    pub hashes: Vec<String>,
}

pub struct Lock {
    pub entries: Vec<LockEntry>,
    /// (python, platform) from the header.
    pub target: Option<(String, String)>,
}

/// Read a lock (requirements file or `pylock.toml`) for `install` and
/// `verify`: the packages that apply to its target.
pub fn read_lock(path: &Path) -> Result<Lock> {
    let model = layerlock_lock::Lock::read(path)?;
    // The target's markers matter only to a package that carries markers
    // (an unknown platform is reported by the target check, with hints).
    let markers = model.packages.iter().any(|p| !p.marker.is_true());
    let target = match &model.header.target {
        Some(t) if markers => Some(
            layerlock_dist::Target::new(&t.python, &t.platform)
                .with_context(|| format!("{}: the lock's target", path.display()))?,
        ),
        _ => None,
    };
    if let Some(package) = model.packages.iter().find(|p| !p.marker.is_true())
        && target.is_none()
    {
        // Fail closed: without a target nothing says whether it applies.
        bail!(
            "{}: {} carries the marker `{}` and the lock names no target, so layerlock cannot tell whether it applies; compile the lock for one target",
            package.origin,
            package.name,
            package.marker.try_to_string().unwrap_or_default()
        );
    }
    let entries = model
        .applicable(target.as_ref().map(layerlock_dist::Target::markers))
        .map(|p| LockEntry {
            wanted: Wanted {
                name: p.name.to_string(),
                version: p.version.to_string(),
                origin: p.origin.clone(),
            },
            hashes: p.hashes.clone(),
        })
        .collect();
    Ok(Lock {
        entries,
        target: model
            .header
            .target
            .as_ref()
            .map(|t| (t.python.clone(), t.platform.clone())),
    })
}

/// Inspect `python`, and refuse at once when the lock names another target.
pub fn inspect(
    python: &Path,
    cache: Option<&Path>,
    lock: &Lock,
    lock_path: &Path,
) -> Result<Interpreter> {
    let interpreter = Interpreter::inspect_cached(python, cache)
        .with_context(|| format!("cannot inspect the interpreter {}", python.display()))?;
    if let Some((py, platform)) = &lock.target
        && let Some(why) = interpreter.mismatch(py, platform)
    {
        return Err(Hinted {
                message: format!(
                    "{} was compiled for Python {py} on {platform}, but {} is Python {} on {}: {why}",
                    lock_path.display(),
                    interpreter.executable.display(),
                    interpreter.python_short(),
                    interpreter.describe_platform()
                ),
                hints: vec![
                    "compile a layer for this image's target (layerlock compile --python-version … --platform …), or run on the image the lock was made for".to_string(),
                ],
            }
            .into());
    }
    Ok(interpreter)
}
