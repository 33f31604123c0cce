//! `layerlock compile`: write (or `--check`) a hash-pinned lock of what the
//! bases lack.

use std::io::Write;
use std::process::ExitCode;
use std::str::FromStr;

use anyhow::{Context, Result, bail};

use layerlock_dist::DistKind;
use layerlock_lock::{BaseUse, Header, Lock, LockTarget, LockedFile, LockedPackage, comparable};
use layerlock_resolve::Resolution;

use crate::cli::HashesArg;
use crate::layer::{self, Prepared};
use crate::printer::Spinner;
use crate::settings::{CompileSettings, LayerSettings};

pub fn run(settings: &CompileSettings) -> Result<ExitCode> {
    let mut stale = false;
    for layer in &settings.layers {
        let label = layer.name.clone().unwrap_or_else(|| "compile".to_string());
        let spinner = Spinner::new(settings.run.quiet, &label);
        let outcome = layer::resolve(layer, &settings.run, &spinner);
        spinner.finish();
        let (prepared, resolution) = match (&layer.name, outcome) {
            (_, Ok(ok)) => ok,
            (Some(name), Err(err)) => return Err(err.context(format!("layer `{name}`"))),
            (None, Err(err)) => return Err(err),
        };
        let lock = lock(layer, &prepared, &resolution)?;
        let shown = layer.output.as_ref().map_or("LOCK", |o| o.shown.as_str());
        let text = lock.render(layer.format, shown);
        match (&layer.output, settings.check) {
            (Some(output), true) => {
                let current = match fs_err::read_to_string(&output.path) {
                    Ok(text) => text,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        stale = true;
                        diag!(
                            "{} does not exist; create it with:\n    {}",
                            output.shown,
                            layer.command
                        );
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                };
                // The regenerate command is how, not what: a lock made by
                // another spelling of the same command is up to date.
                if comparable(&current) == comparable(&text) {
                    if !settings.run.quiet {
                        diag!("{} is up to date", output.shown);
                    }
                } else {
                    stale = true;
                    let diff = similar::TextDiff::from_lines(&current, &text);
                    out!(
                        "{}",
                        diff.unified_diff()
                            .context_radius(2)
                            .header(&output.shown, &format!("{} (regenerated)", output.shown))
                    );
                    diag!(
                        "{} is stale; regenerate it with:\n    {}",
                        output.shown,
                        layer.command
                    );
                }
            }
            (Some(output), false) => {
                write_atomic(&output.path, &text)
                    .with_context(|| format!("cannot write {}", output.shown))?;
                if !settings.run.quiet {
                    diag!(
                        "wrote {}: {} package{} for {}",
                        output.shown,
                        resolution.packages.len(),
                        if resolution.packages.len() == 1 {
                            ""
                        } else {
                            "s"
                        },
                        prepared.request.target.describe()
                    );
                }
            }
            (None, _) => out!("{text}"),
        }
    }
    Ok(if stale {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The lock of one resolved layer: header, packages with the files behind
/// their hashes, and the base packages it leans on.
pub fn lock(layer: &LayerSettings, prepared: &Prepared, resolution: &Resolution) -> Result<Lock> {
    let target = &prepared.request.target;
    let mut packages = Vec::new();
    for (name, resolved) in &resolution.packages {
        let mut hashes = Vec::new();
        let mut files = Vec::new();
        for file in &resolved.files {
            if layer.hashes == HashesArg::Target {
                let installable = match file.kind(name) {
                    DistKind::Wheel(wheel) => {
                        wheel.is_compatible(target.tags())
                            && file
                                .requires_python
                                .as_ref()
                                .is_none_or(|r| r.contains(target.python()))
                    }
                    _ => false,
                };
                if !installable {
                    continue;
                }
            }
            let Some(sha) = &file.sha256 else {
                bail!(
                    "{} lists {} without a sha256, so it cannot be hash-pinned; use an index that publishes hashes",
                    file.listed_by,
                    file.filename
                );
            };
            hashes.push(format!("sha256:{sha}"));
            files.push(LockedFile {
                name: file.filename.clone(),
                url: Some(file.url.clone()),
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
            marker: uv_pep508::MarkerTree::TRUE,
            hashes,
            files,
            via: resolved.via.iter().cloned().collect(),
            origin: String::new(),
        });
    }
    let base_used = resolution
        .base_used
        .iter()
        .map(|(name, via)| {
            let pin = &prepared.request.base[name];
            BaseUse {
                name: name.clone(),
                version: pin.version.clone(),
                origin: pin.origin.clone(),
                via: via.iter().cloned().collect(),
            }
        })
        .collect();
    let mut bases: Vec<String> = layer.bases.iter().map(|b| b.shown.clone()).collect();
    if let Some(python) = &layer.base_env {
        bases.push(format!("--base-env {}", python.shown));
    }
    Ok(Lock {
        path: layer
            .output
            .as_ref()
            .map_or_else(Default::default, |o| o.path.clone()),
        format: layer.format,
        header: Header {
            target: Some(LockTarget {
                python: target.python_short(),
                platform: target.platform_name().to_string(),
            }),
            bases,
            owned: layer.owned.clone(),
            command: Some(layer.command.clone()),
            description: Some(target.describe()),
            environments: vec![target_environment(target)],
        },
        packages,
        base_used,
    })
}

/// PEP 751 `environments`: the target's Python, OS and machine (the glibc
/// version has no marker; the lock's wheels carry it in their tags).
fn target_environment(target: &layerlock_dist::Target) -> uv_pep508::MarkerTree {
    let m = target.markers();
    let text = format!(
        "python_version == '{}' and sys_platform == '{}' and platform_machine == '{}'",
        target.python_short(),
        m.sys_platform(),
        m.platform_machine()
    );
    uv_pep508::MarkerTree::from_str(&text).unwrap_or(uv_pep508::MarkerTree::TRUE)
}

/// Write to a temp file beside `path`, then rename: a failed run never
/// leaves a half-written lock. A symlink is written through (repositories
/// keep locks as links; the link stays a link and its target is replaced);
/// a FIFO, device or socket is refused rather than replaced by a file.
fn write_atomic(path: &std::path::Path, text: &str) -> Result<()> {
    let resolved;
    let path = match fs_err::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            // Follow the whole chain; a dangling link gets its target created.
            resolved = match fs_err::canonicalize(path) {
                Ok(real) => real,
                Err(_) => {
                    let target = fs_err::read_link(path)?;
                    path.parent()
                        .unwrap_or(std::path::Path::new("."))
                        .join(target)
                }
            };
            resolved.as_path()
        }
        _ => path,
    };
    if let Ok(meta) = fs_err::metadata(path)
        && !meta.is_file()
    {
        anyhow::bail!(
            "{} is not a regular file (a directory, FIFO, device or socket); write the lock to a file, or use `-o -` for standard output",
            path.display()
        );
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    tmp.write_all(text.as_bytes())?;
    // A temp file is created 0600; the lock keeps the mode of the file it
    // replaces, or gets the usual 0644.
    let permissions = match fs_err::metadata(path) {
        Ok(meta) => meta.permissions(),
        Err(_) => {
            let mut p = fs_err::metadata(tmp.path())?.permissions();
            set_default_mode(&mut p);
            p
        }
    };
    fs_err::set_permissions(tmp.path(), permissions)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(unix)]
fn set_default_mode(permissions: &mut std::fs::Permissions) {
    use std::os::unix::fs::PermissionsExt;
    permissions.set_mode(0o644);
}

#[cfg(not(unix))]
fn set_default_mode(_: &mut std::fs::Permissions) {}
