//! Plans that cannot be compiled as written, refused before anything is
//! read: targets that are not targets, outputs that collide, a lock written
//! over its own input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::CompileError;
use crate::plan::{LayerPlan, TargetPlan, UserPath};

/// An output split per target names each target's file apart.
pub fn check_split(layer: &LayerPlan) -> Result<(), CompileError> {
    if !layer.splits_output() {
        return Ok(());
    }
    let mut seen: BTreeMap<String, &TargetPlan> = BTreeMap::new();
    for t in &layer.targets {
        let shown = layer
            .for_target(t)
            .output
            .map(|o| o.shown)
            .unwrap_or_default();
        if let Some(first) = seen.insert(shown.clone(), t) {
            return Err(CompileError::Input(format!(
                "{}: Python {} on {} and Python {} on {} would both be written to {shown}; name the output with both {{python}} and {{platform}}",
                layer.output.as_ref().map_or("", |o| o.shown.as_str()),
                first.python_version,
                first.platform,
                t.python_version,
                t.platform
            )));
        }
    }
    Ok(())
}

/// Each target reads, and no two are alike to markers.
pub fn check_targets(targets: &[TargetPlan]) -> Result<(), CompileError> {
    for t in targets {
        if let Err(e) = layerlock_dist::Target::new(&t.python_version, &t.platform) {
            return Err(CompileError::Input(format!(
                "{e} (python-version = \"{}\", platform = \"{}\")",
                t.python_version, t.platform
            )));
        }
    }
    if targets.len() > 1 {
        let named: Vec<_> = targets.iter().map(TargetPlan::lock_target).collect();
        layerlock_lock::check_distinct(&named)?;
    }
    Ok(())
}

/// An output must not be another layer's output, nor any layer's input or
/// base: writing it would destroy an input or make runs flip. Nor may
/// `--stats` name any of them.
pub fn check_outputs(
    layers: &[LayerPlan],
    written: &[(&str, &UserPath)],
    cwd: &Path,
) -> Result<(), CompileError> {
    let canonical = |p: &Path| {
        let absolute = cwd.join(p);
        std::fs::canonicalize(&absolute).unwrap_or(absolute)
    };
    let mut outputs: Vec<(PathBuf, String)> = Vec::new();
    for layer in layers {
        let Some(out) = &layer.output else { continue };
        let path = canonical(&out.path);
        if let Some((_, other)) = outputs.iter().find(|(p, _)| *p == path) {
            return Err(CompileError::Input(format!(
                "layers `{other}` and `{}` both write {}",
                layer.name.as_deref().unwrap_or("compile"),
                out.shown
            )));
        }
        outputs.push((
            path,
            layer.name.clone().unwrap_or_else(|| "compile".to_string()),
        ));
    }
    for layer in layers {
        for input in layer
            .inputs
            .iter()
            .chain(&layer.bases)
            .chain(&layer.constraints)
            .chain(&layer.overrides)
        {
            if outputs.iter().any(|(p, _)| *p == canonical(&input.path)) {
                return Err(CompileError::Input(format!(
                    "{} is both an input (or base) and an output; write the lock to another file",
                    input.shown
                )));
            }
        }
    }
    // `--stats FILE` and `--report FILE` are written last: over an input
    // they would destroy it, over a lock replace it.
    let mut taken_by: Vec<(PathBuf, &str)> = Vec::new();
    for (flag, file) in written {
        let path = canonical(&file.path);
        let taken = outputs.iter().any(|(p, _)| *p == path)
            || taken_by.iter().any(|(p, _)| *p == path)
            || layers
                .iter()
                .flat_map(|l| {
                    l.inputs
                        .iter()
                        .chain(&l.bases)
                        .chain(&l.constraints)
                        .chain(&l.overrides)
                })
                .any(|input| canonical(&input.path) == path);
        if taken {
            return Err(CompileError::Input(format!(
                "{flag} {} names an input, base or output of the compile; write it to another file",
                file.shown
            )));
        }
        taken_by.push((path, flag));
    }
    Ok(())
}
