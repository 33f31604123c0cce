//! What `install` and `verify` share: reading a layer lock, inspecting the
//! interpreter, and the target check that fails fast on the wrong image.

use std::path::Path;

use anyhow::{Context, Result, bail};
use uv_pep440::Operator;
use uv_pep508::VersionOrUrl;

use layerlock_env::{Interpreter, Wanted, normalise};
use layerlock_lock::{RequirementsFile, header_target};

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

pub fn read_lock(path: &Path) -> Result<Lock> {
    let text = layerlock_lock::read_text(path)?;
    let parsed = RequirementsFile::parse(path, &text)?;
    let mut entries = Vec::new();
    // Each name once; a map keeps a 100,000-line lock linear.
    let mut seen: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    for entry in parsed.entries {
        let origin = format!("{}:{}", entry.origin.path.display(), entry.origin.line);
        let version = match &entry.requirement.version_or_url {
            Some(VersionOrUrl::VersionSpecifier(specs)) => {
                match specs.iter().collect::<Vec<_>>().as_slice() {
                    [spec] if matches!(spec.operator(), Operator::Equal | Operator::ExactEqual) => {
                        spec.version().to_string()
                    }
                    _ => bail!(
                        "{origin}: `{}` is not pinned with ==; a lock pins exact versions",
                        entry.requirement
                    ),
                }
            }
            _ => bail!(
                "{origin}: `{}` is not pinned with ==; a lock pins exact versions",
                entry.requirement
            ),
        };
        let name = normalise(entry.requirement.name.as_ref());
        if let Some(first) = seen.get(&name) {
            bail!(
                "{origin}: {name} is locked twice (also at {first}); a lock pins each package once"
            );
        }
        seen.insert(name.clone(), origin.clone());
        entries.push(LockEntry {
            wanted: Wanted {
                name: normalise(entry.requirement.name.as_ref()),
                version,
                origin,
            },
            hashes: entry.hashes,
        });
    }
    Ok(Lock {
        entries,
        target: header_target(&text),
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
