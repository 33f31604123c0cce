//! A layer's inputs read and checked for one target: its requirements,
//! constraints and overrides, the image's pins under it (base files,
//! `--base-env`, `--owned`) and its sources by URL, ready to resolve.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use layerlock_dist::Target;
use layerlock_env::{BaseEnvError, Interpreter, Snapshot};
use layerlock_lock::{Bases, Entry, IndexOptions, RequirementsFile};
use layerlock_resolve::{BasePin, Direct, ResolveRequest};
use uv_normalize::PackageName;

use crate::CompileError;
use crate::plan::{LayerPlan, UserPath};

/// Inputs read and checked, ready to resolve.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub request: ResolveRequest,
    /// The index options lines of the input files.
    pub input_options: IndexOptions,
    /// The `.dist-info` of each distribution `--base-env` holds at the
    /// version the image pins: its RECORD and files on disk are what the
    /// file check compares with.
    pub installed: BTreeMap<PackageName, PathBuf>,
}

/// What an existing lock keeps: its pins, tried first, and the exact
/// versions `--upgrade-package PKG==VER` moves packages to.
#[derive(Debug, Clone, Default)]
pub struct Keep {
    pub preferences: BTreeMap<PackageName, uv_pep440::Version>,
    /// The versions the layer's other targets took (tried first, held to
    /// the cooldown).
    pub shared: BTreeMap<PackageName, uv_pep440::Version>,
    pub moves: Vec<Direct>,
}

/// Base files read once for every target of a layer, by path.
pub type BaseFiles = BTreeMap<PathBuf, Arc<layerlock_lock::BaseFile>>;

/// The layer's inputs for its target, over `keep`'s pins.
pub fn prepare(layer: &LayerPlan, keep: &Keep) -> Result<Prepared, CompileError> {
    prepare_with(layer, keep, &mut BaseFiles::new())
}

/// [`prepare`], with the base files other targets of the layer read.
pub fn prepare_with(
    layer: &LayerPlan,
    keep: &Keep,
    files: &mut BaseFiles,
) -> Result<Prepared, CompileError> {
    let target = Target::new(&layer.python_version, &layer.platform)?;
    let (base, installed) = read_bases(layer, &target, files)?;
    let mut constraints = narrowing(&layer.constraints, "--constraint", layer)?;
    // `-c` lines inside the inputs narrow versions too, and a URL there
    // is refused like one in a `--constraint` file.
    constraints.extend(keep.moves.iter().cloned());
    let overrides = narrowing(&layer.overrides, "--override", layer)?;
    let inputs = read_inputs(layer)?;
    constraints.extend(inputs.constraints);
    let fixed = crate::sources::fixed_sources(&inputs.by_url, layer)?;
    Ok(Prepared {
        installed,
        request: ResolveRequest {
            direct: inputs.direct,
            constraints,
            overrides,
            preferences: keep.preferences.clone(),
            shared: keep.shared.clone(),
            fixed,
            base,
            target,
            exclude_newer: layer.exclude_newer,
            prerelease: layer.prerelease,
            cooldown: layer.cooldown.as_ref().map(|c| c.policy.for_resolver()),
            allow_missing_time: layer.allow_missing_time,
            only_binary: layer.only_binary.clone(),
            // One dynamic release more than a fall-back may skip settles
            // the refusal: older sdists are not downloaded.
            dynamic_reads: Some(crate::walk_back::reads(layer)),
        },
        input_options: inputs.options,
    })
}

/// What the layer's input files ask.
#[derive(Default)]
struct Inputs {
    direct: Vec<Direct>,
    /// `-c` lines inside the inputs.
    constraints: Vec<Direct>,
    /// Every requirement, with the folder its relative paths are from.
    by_url: Vec<(Direct, PathBuf)>,
    options: IndexOptions,
}

/// Read every input file of `layer` (requirements files and
/// `pyproject.toml`s).
fn read_inputs(layer: &LayerPlan) -> Result<Inputs, CompileError> {
    let mut out = Inputs::default();
    let folder = |path: &Path| {
        layer
            .cwd
            .join(path)
            .parent()
            .map_or_else(|| layer.cwd.clone(), Path::to_path_buf)
    };
    for input in &layer.inputs {
        if layerlock_lock::is_pyproject(&input.path) {
            let reqs = project_input(input, layer)?;
            out.by_url
                .extend(reqs.iter().map(|d| (d.clone(), folder(&input.path))));
            out.direct.extend(reqs);
            continue;
        }
        let parsed = RequirementsFile::read(&input.path)?;
        if parsed.entries.is_empty()
            && parsed.constraints.is_empty()
            && parsed.unnamed_editables.is_empty()
        {
            return Err(CompileError::Input(format!(
                "{}: no requirements (the file is empty or only comments and options); a layer needs at least one",
                input.shown
            )));
        }
        for (origin, value) in &parsed.unnamed_editables {
            let at = format!("{}:{}", layer.show(&origin.path), origin.line);
            let d = crate::sources::unnamed_project(value, &folder(&origin.path), &at, layer)?;
            out.by_url.push((d.clone(), folder(&origin.path)));
            out.direct.push(d);
        }
        let entries = direct(&parsed.entries, layer);
        for (d, e) in entries.iter().zip(&parsed.entries) {
            out.by_url.push((d.clone(), folder(&e.origin.path)));
        }
        out.direct.extend(entries);
        versions_only(
            &parsed.constraints,
            "a constraint takes versions, not a URL; ask for the package by URL in the requirements instead",
            layer,
        )?;
        out.constraints.extend(direct(&parsed.constraints, layer));
        out.options.add(parsed.options);
    }
    Ok(out)
}

/// What the image's packages are (base files, `--base-env`, `--owned`),
/// and where `--base-env` holds them.
type ImagePins = (
    BTreeMap<PackageName, BasePin>,
    BTreeMap<PackageName, PathBuf>,
);

/// The image's packages: base files, `--base-env`, `--owned`.
fn read_bases(
    layer: &LayerPlan,
    target: &Target,
    files: &mut BaseFiles,
) -> Result<ImagePins, CompileError> {
    let mut bases = Bases::default();
    for file in &layer.bases {
        let read = match files.get(&file.path) {
            Some(read) => read.clone(),
            None => {
                let shown = layer.show(&file.path);
                let read = Arc::new(layerlock_lock::BaseFile::read(&file.path, &shown)?);
                files.insert(file.path.clone(), read.clone());
                read
            }
        };
        bases.add_base(&read, target.markers())?;
        same_target(&read.targets, &layer.show(&file.path), target)?;
    }
    let mut installed = BTreeMap::new();
    if let Some(python) = &layer.base_env {
        installed = add_environment(&mut bases, python, target)?;
    }
    for owned in &layer.owned {
        bases.add_owned(owned)?;
    }
    for spec in &layer.owned_over {
        bases.add_owned_over(spec)?;
    }
    // Only what is installed at the version the image pins speaks for it.
    installed.retain(|name, (version, _)| {
        bases
            .pins
            .get(name)
            .is_some_and(|pin| pin.version.as_ref() == Some(version))
    });
    let installed = installed
        .into_iter()
        .map(|(name, (_, path))| (name, path))
        .collect();
    Ok((bases.pins, installed))
}

/// A base lock layerlock wrote for other targets (its header says) does
/// not describe this image: its pins hold for another Python or platform.
fn same_target(
    written: &[layerlock_lock::LockTarget],
    shown: &str,
    target: &Target,
) -> Result<(), CompileError> {
    let theirs: Vec<Target> = written
        .iter()
        .filter_map(|w| Target::new(&w.python, &w.platform).ok())
        .collect();
    if theirs.is_empty() {
        return Ok(());
    }
    let same = |t: &Target| {
        t.python_short() == target.python_short() && t.platform_name() == target.platform_name()
    };
    if !theirs.iter().any(same) {
        return Err(CompileError::hinted(
            format!(
                "--base {shown} was compiled for {}, but this layer is for {}: its pins need not hold here",
                layerlock_lock::describe_targets(written),
                target.describe()
            ),
            "pass the lock of the image this layer goes on (compiled for its target), or compile the layer for the base's target",
        ));
    }
    Ok(())
}

/// Every distribution installed for `python` becomes a base pin; the
/// interpreter must be the layer's target. Returns each one's version and
/// `.dist-info`.
fn add_environment(
    bases: &mut Bases,
    python: &UserPath,
    target: &Target,
) -> Result<BTreeMap<PackageName, (uv_pep440::Version, PathBuf)>, CompileError> {
    let interpreter = Interpreter::inspect(&python.path).map_err(|e| {
        CompileError::outside(format!("--base-env: cannot inspect {}", python.shown), e)
    })?;
    if let Some(why) = interpreter.mismatch(&target.python_short(), target.platform_name()) {
        return Err(CompileError::hinted(
            format!(
                "--base-env {} is not an environment for {}: {why}",
                python.shown,
                target.describe()
            ),
            "give the image's interpreter, or compile for its target (--python-version, --platform)",
        ));
    }
    let snapshot = Snapshot::scan(&interpreter.paths);
    let pins = snapshot.base_pins().map_err(|e| match e {
        // Fail closed: a distribution we cannot read could be any version.
        BaseEnvError::Unreadable(bad) => CompileError::Input(format!(
            "--base-env {}: cannot read {}: {}",
            python.shown,
            bad.path.display(),
            bad.why
        )),
        BaseEnvError::BadPin {
            path,
            name,
            version,
        } => CompileError::Input(format!(
            "--base-env {}: {} has the unreadable name or version `{name} {version}`",
            python.shown,
            path.display()
        )),
    })?;
    let origin = format!("the environment ({})", python.shown);
    let mut installed = BTreeMap::new();
    // Every disagreement is listed: an image that drifted from its lock
    // usually drifted in more than one package.
    let mut drifted = Vec::new();
    for (name, version) in pins {
        // Egg-info distributions have no RECORD: their files are listed
        // from the index like a base file's pins.
        if let Some(dist) = snapshot.dists.get(name.as_ref())
            && !dist.egg_info
        {
            installed.insert(name.clone(), (version.clone(), dist.path.clone()));
        }
        if let Err(err) = bases.add_installed(name, version, &origin) {
            drifted.push(err.to_string());
        }
    }
    match drifted.as_slice() {
        [] => Ok(installed),
        [one] => Err(CompileError::hinted(
            one.clone(),
            "the image's environment has drifted from its lock: fix the image (or the lock), then compile again",
        )),
        many => Err(CompileError::hinted(
            format!(
                "--base-env {} disagrees with the bases in {} packages:\n  {}",
                python.shown,
                many.len(),
                many.join("\n  ")
            ),
            "the image's environment has drifted from its lock: fix the image (or the lock), then compile again",
        )),
    }
}

/// `entries` as the resolver's requests, named by file and line.
fn direct(entries: &[Entry], layer: &LayerPlan) -> Vec<Direct> {
    entries
        .iter()
        .map(|e| Direct {
            requirement: e.requirement.clone(),
            via: format!("-r {}", layer.show(&e.origin.path)),
            origin: format!("{}:{}", layer.show(&e.origin.path), e.origin.line),
        })
        .collect()
}

/// The requirements of a `pyproject.toml` input (static metadata only).
fn project_input(input: &UserPath, layer: &LayerPlan) -> Result<Vec<Direct>, CompileError> {
    let entries = layerlock_lock::read_project(&input.path, &layer.project)?;
    if entries.is_empty() {
        return Err(CompileError::Input(format!(
            "{}: no requirements in what was asked of it ([project] dependencies, --extra, --group); a layer needs at least one",
            input.shown
        )));
    }
    // pip-compile says `via NAME (pyproject.toml)`; the file is enough.
    Ok(direct(&entries, layer)
        .into_iter()
        .map(|d| Direct {
            via: input.shown.clone(),
            ..d
        })
        .collect())
}

/// The requirements of `-c` or `--override` files: every entry, and the
/// constraints they include.
fn narrowing(
    files: &[UserPath],
    flag: &str,
    layer: &LayerPlan,
) -> Result<Vec<Direct>, CompileError> {
    let mut out = Vec::new();
    for file in files {
        let parsed = RequirementsFile::read(&file.path)
            .map_err(|e| CompileError::from(e).context(format!("{flag} {}", file.shown)))?;
        versions_only(
            parsed.entries.iter().chain(&parsed.constraints),
            &format!("{flag} takes versions, not URLs"),
            layer,
        )?;
        out.extend(direct(&parsed.entries, layer));
        out.extend(direct(&parsed.constraints, layer));
    }
    Ok(out)
}

/// An error naming the first of `entries` that asks by URL, with `why`.
fn versions_only<'e>(
    entries: impl IntoIterator<Item = &'e Entry>,
    why: &str,
    layer: &LayerPlan,
) -> Result<(), CompileError> {
    let by_url = entries.into_iter().find(|e| {
        !matches!(
            e.requirement.version_or_url,
            None | Some(uv_pep508::VersionOrUrl::VersionSpecifier(_))
        )
    });
    match by_url {
        Some(entry) => Err(CompileError::Input(format!(
            "{}:{}: {why} (`{}`)",
            layer.show(&entry.origin.path),
            entry.origin.line,
            entry.requirement
        ))),
        None => Ok(()),
    }
}
