//! What `install` and `verify` share: reading a lock (requirements file or
//! `pylock.toml`), inspecting the interpreter, and saying why a lock cannot
//! be used on it (`layerlock_env::select` decides, and chooses the lock's
//! packages for it).

use std::path::Path;

use anyhow::{Context, Result};

use layerlock_env::{Interpreter, LockEntry};
use layerlock_lock::Lock;

use crate::printer::Hinted;

/// Read a lock for `install` and `verify`.
pub fn read_lock(path: &Path) -> Result<Lock> {
    let lock = Lock::read(path)?;
    refuse_empty(path, &lock)?;
    Ok(lock)
}

/// (python, platform) from the lock's header, as reports give it: the
/// one target, or every target's joined by ", ".
pub fn target_of(lock: &Lock) -> Option<(String, String)> {
    let targets = &lock.header.targets;
    if targets.is_empty() {
        return None;
    }
    let join = |f: fn(&layerlock_lock::LockTarget) -> &String| {
        let mut seen: Vec<&str> = Vec::new();
        for t in targets {
            if !seen.contains(&f(t).as_str()) {
                seen.push(f(t));
            }
        }
        seen.join(", ")
    };
    Some((join(|t| &t.python), join(|t| &t.platform)))
}

/// A lock with no package that layerlock did not write (no target header):
/// the file is empty or only comments, or not the lock meant. Checking or
/// installing nothing is no pass. (A layer the base covers whole is an
/// empty lock with its header: nothing to do, rightly.)
pub fn refuse_empty(path: &Path, lock: &layerlock_lock::Lock) -> Result<()> {
    if lock.packages.is_empty() && lock.header.targets.is_empty() {
        anyhow::bail!(
            "{}: no packages (the file is empty or only comments); pass the lock `layerlock compile` wrote",
            path.display()
        );
    }
    Ok(())
}

/// Inspect `python`, refuse at once when the lock names another target (or
/// PEP 751 `environments` / `requires-python` that exclude it), and choose
/// the packages whose markers hold for this interpreter.
pub fn inspect(
    python: &Path,
    cache: Option<&Path>,
    lock: &Lock,
) -> Result<(Interpreter, Vec<LockEntry>)> {
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
    accept(interpreter, lock)
}

/// The checks of [`inspect`] on an interpreter inspected already (`verify`
/// takes a cached inspection while the lock is read).
pub fn accept(interpreter: Interpreter, lock: &Lock) -> Result<(Interpreter, Vec<LockEntry>)> {
    let refusal = match layerlock_env::select(&interpreter, lock) {
        Ok(entries) => return Ok((interpreter, entries)),
        Err(refusal) => refusal,
    };
    let lock_path = lock.path.display();
    let Some((what, why)) = refusal.what_and_why() else {
        // The lock is wrong whatever runs it.
        return Err(match refusal {
            layerlock_env::Refusal::Twice { .. } => anyhow::anyhow!("{refusal}"),
            _ => anyhow::anyhow!("{lock_path}: {refusal}"),
        });
    };
    // `{lock} {what}, but {python} is Python X on P: {why}`, with what to do.
    Err(Hinted {
        message: format!(
            "{lock_path} {what}, but {} is Python {} on {}: {why}",
            interpreter.executable.display(),
            interpreter.python_short(),
            interpreter.describe_platform()
        ),
        hints: vec![
            "compile a layer for this image's target (layerlock compile --python-version … --platform …), or run on the image the lock was made for".to_string(),
        ],
    }
    .into())
}
