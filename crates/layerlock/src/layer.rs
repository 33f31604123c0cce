//! The machinery `compile` and `covers` share: read bases and inputs, set up
//! the index client for the target, resolve.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use uv_normalize::PackageName;

use layerlock_dist::Target;
use layerlock_env::{BaseEnvError, Interpreter, Snapshot};
use layerlock_index::{FetchStats, IndexClient, IndexConfig};
use layerlock_lock::{Bases, Entry, IndexOptions, RequirementsFile};
use layerlock_resolve::{
    BasePin, CandidatesMemo, Direct, Fixed, Lookahead, Resolution, ResolveError, ResolveRequest,
    UnderCooldown,
};

use crate::printer::{Hinted, Spinner, Unsolvable};
use crate::settings::{LayerSettings, RunSettings, UserPath};

/// Inputs read and checked, ready to resolve.
pub struct Prepared {
    pub request: ResolveRequest,
    pub input_options: IndexOptions,
}

/// `path` as the layer's lock and messages show it.
pub fn show(path: &Path, layer: &LayerSettings) -> String {
    crate::settings::shown_from(path, &layer.cwd, &layer.display_root)
}

/// The folder the lock's relative paths (find-links files, project
/// directories) are written from: the output's, else the display root.
pub fn lock_directory(layer: &LayerSettings) -> std::path::PathBuf {
    match &layer.output {
        Some(o) => layerlock_lock::normalize(&layer.cwd.join(&o.path))
            .parent()
            .map_or_else(|| layer.display_root.clone(), Path::to_path_buf),
        None => layer.display_root.clone(),
    }
}

/// The layer's requirements by URL, fetched or read: each one's static
/// metadata and where the lock says it comes from. A git revision is
/// fetched alone; a directory is read in place; nothing is built.
fn fixed_sources(
    direct: &[(Direct, std::path::PathBuf)],
    layer: &LayerSettings,
) -> Result<BTreeMap<PackageName, Fixed>> {
    let mut out = BTreeMap::new();
    for (d, dir) in direct {
        let Some(uv_pep508::VersionOrUrl::Url(url)) = &d.requirement.version_or_url else {
            continue;
        };
        let name = &d.requirement.name;
        let raw = url.given().map_or_else(|| url.to_string(), str::to_string);
        let given = layerlock_index::redact_text(&raw);
        let at = if d.origin.is_empty() {
            d.via.clone()
        } else {
            d.origin.clone()
        };
        let fixed = fixed_source(&raw, dir, layer)
            .map_err(|why| anyhow::anyhow!("{at}: {name} @ {given}: {why}"))?;
        if fixed.metadata.name != *name {
            bail!(
                "{at}: {name} @ {given} holds the project {}, not {name}; fix the name",
                fixed.metadata.name
            );
        }
        if let Some(other) = out.get(name).map(|f: &Fixed| f.source.clone())
            && other != fixed.source
        {
            bail!(
                "{at}: {name} is asked for from two sources ({} and {}); keep one",
                other.url(),
                fixed.source.url()
            );
        }
        out.insert(name.clone(), fixed);
    }
    Ok(out)
}

/// `-e ./dir` (a project directory by path alone): named by its static
/// metadata, asked for by URL.
fn unnamed_project(value: &str, dir: &Path, at: &str, layer: &LayerSettings) -> Result<Direct> {
    let fixed = fixed_source(value, dir, layer)
        .map_err(|why| anyhow::anyhow!("{at}: `-e {value}`: {why}"))?;
    let layerlock_lock::DirectRequest::Directory(path) =
        layerlock_lock::DirectRequest::parse(value, dir)
            .map_err(|why| anyhow::anyhow!("{at}: {why}"))?
    else {
        bail!(
            "{at}: `-e {value}`: an editable git URL needs `#egg=NAME`; write `NAME @ {value}` instead"
        );
    };
    let text = format!("{} @ file://{}", fixed.metadata.name, path.display());
    let requirement = text
        .parse()
        .map_err(|e| anyhow::anyhow!("{at}: `-e {value}`: {e}"))?;
    Ok(Direct {
        requirement,
        via: format!("-e {value}"),
        origin: at.to_string(),
    })
}

/// The largest pyproject.toml read from a source.
const MAX_PROJECT_FILE: usize = 4 << 20;

/// One source's static metadata: a git revision fetched alone, or a
/// directory read in place.
fn fixed_source(
    given: &str,
    dir: &Path,
    layer: &LayerSettings,
) -> std::result::Result<Fixed, String> {
    let (source, text, shown) = match layerlock_lock::DirectRequest::parse(given, dir)? {
        layerlock_lock::DirectRequest::Git {
            url,
            rev,
            subdirectory,
        } => {
            let fetched = layerlock_git::Fetched::fetch(&url, rev.as_deref())
                .map_err(|e| format!("cannot fetch it: {e}"))?;
            let file = match &subdirectory {
                Some(sub) => format!("{sub}/pyproject.toml"),
                None => "pyproject.toml".to_string(),
            };
            let bytes = fetched
                .file(&file, MAX_PROJECT_FILE)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("commit {} has no {file}: its metadata is its build backend's to say, and layerlock never runs one", fetched.commit))?;
            let text = String::from_utf8(bytes).map_err(|_| format!("{file} is not UTF-8"))?;
            let source = layerlock_lock::DirectSource::Git {
                url,
                requested: rev,
                commit: fetched.commit.clone(),
                subdirectory,
            };
            (source, text, format!("{file} at {}", fetched.commit))
        }
        layerlock_lock::DirectRequest::Directory(path) => {
            let file = path.join("pyproject.toml");
            let text = layerlock_lock::read_text(&file).map_err(|e| match e {
                layerlock_lock::LockError::Missing { .. } => format!(
                    "{} has no pyproject.toml: its metadata is its build backend's to say, and layerlock never runs one",
                    path.display()
                ),
                e => e.to_string(),
            })?;
            let relative = layerlock_lock::relative_path(&path, &lock_directory(layer));
            let source = layerlock_lock::DirectSource::Directory {
                path: relative.to_string_lossy().replace('\\', "/"),
            };
            (source, text, file.display().to_string())
        }
    };
    let written =
        layerlock_lock::static_metadata(Path::new(&shown), &text).map_err(|e| e.to_string())?;
    let metadata = layerlock_dist::CoreMetadata::parse(written.as_bytes())
        .map_err(|e| format!("{shown}: {e}"))?;
    Ok(Fixed {
        metadata: Arc::new(metadata),
        source,
    })
}

/// Base files read once for every target of a layer, by path.
pub type BaseFiles = BTreeMap<std::path::PathBuf, Arc<layerlock_lock::BaseFile>>;

/// The image's packages: base files, `--base-env`, `--owned`.
fn read_bases(
    layer: &LayerSettings,
    target: &Target,
    files: &mut BaseFiles,
) -> Result<BTreeMap<PackageName, BasePin>> {
    let mut bases = Bases::default();
    for file in &layer.bases {
        let read = match files.get(&file.path) {
            Some(read) => read.clone(),
            None => {
                let shown = show(&file.path, layer);
                let read = Arc::new(layerlock_lock::BaseFile::read(&file.path, &shown)?);
                files.insert(file.path.clone(), read.clone());
                read
            }
        };
        bases.add_base(&read, target.markers())?;
        same_target(&read.targets, &show(&file.path, layer), target)?;
    }
    if let Some(python) = &layer.base_env {
        add_environment(&mut bases, python, target)?;
    }
    for owned in &layer.owned {
        bases.add_owned(owned)?;
    }
    Ok(bases.pins)
}

/// A base lock layerlock wrote for other targets (its header says) does
/// not describe this image: its pins hold for another Python or platform.
fn same_target(written: &[layerlock_lock::LockTarget], shown: &str, target: &Target) -> Result<()> {
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
        return Err(Hinted {
            message: format!(
                "--base {shown} was compiled for {}, but this layer is for {}: its pins need not hold here",
                layerlock_lock::describe_targets(written),
                target.describe()
            ),
            hints: vec![
                "pass the lock of the image this layer goes on (compiled for its target), or compile the layer for the base's target".to_string(),
            ],
        }
        .into());
    }
    Ok(())
}

/// Every distribution installed for `python` becomes a base pin; the
/// interpreter must be the layer's target.
fn add_environment(bases: &mut Bases, python: &UserPath, target: &Target) -> Result<()> {
    let interpreter = Interpreter::inspect(&python.path)
        .with_context(|| format!("--base-env: cannot inspect {}", python.shown))?;
    if let Some(why) = interpreter.mismatch(&target.python_short(), target.platform_name()) {
        return Err(Hinted {
            message: format!(
                "--base-env {} is not an environment for {}: {why}",
                python.shown,
                target.describe()
            ),
            hints: vec![
                "give the image's interpreter, or compile for its target (--python-version, --platform)".to_string(),
            ],
        }
        .into());
    }
    let pins = Snapshot::scan(&interpreter.paths)
        .base_pins()
        .map_err(|e| match e {
            // Fail closed: a distribution we cannot read could be any version.
            BaseEnvError::Unreadable(bad) => anyhow::anyhow!(
                "--base-env {}: cannot read {}: {}",
                python.shown,
                bad.path.display(),
                bad.why
            ),
            BaseEnvError::BadPin {
                path,
                name,
                version,
            } => anyhow::anyhow!(
                "--base-env {}: {} has the unreadable name or version `{name} {version}`",
                python.shown,
                path.display()
            ),
        })?;
    let origin = format!("the environment ({})", python.shown);
    for (name, version) in pins {
        bases.add_installed(name, version, &origin).map_err(|err| Hinted {
            message: err.to_string(),
            hints: vec![
                "the image's environment has drifted from its lock: fix the image (or the lock), then compile again".to_string(),
            ],
        })?;
    }
    Ok(())
}

fn direct(entries: &[Entry], layer: &LayerSettings) -> Vec<Direct> {
    entries
        .iter()
        .map(|e| Direct {
            requirement: e.requirement.clone(),
            via: format!("-r {}", show(&e.origin.path, layer)),
            origin: format!("{}:{}", show(&e.origin.path, layer), e.origin.line),
        })
        .collect()
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

/// The requirements of a `pyproject.toml` input (static metadata only).
fn project_input(input: &UserPath, layer: &LayerSettings) -> Result<Vec<Direct>> {
    let entries = layerlock_lock::read_project(&input.path, &layer.project)?;
    if entries.is_empty() {
        bail!(
            "{}: no requirements in what was asked of it ([project] dependencies, --extra, --group); a layer needs at least one",
            input.shown
        );
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
fn narrowing(files: &[UserPath], flag: &str, layer: &LayerSettings) -> Result<Vec<Direct>> {
    let mut out = Vec::new();
    for file in files {
        let parsed =
            RequirementsFile::read(&file.path).with_context(|| format!("{flag} {}", file.shown))?;
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
    layer: &LayerSettings,
) -> Result<()> {
    let by_url = entries.into_iter().find(|e| {
        !matches!(
            e.requirement.version_or_url,
            None | Some(uv_pep508::VersionOrUrl::VersionSpecifier(_))
        )
    });
    match by_url {
        Some(entry) => bail!(
            "{}:{}: {why} (`{}`)",
            show(&entry.origin.path, layer),
            entry.origin.line,
            entry.requirement
        ),
        None => Ok(()),
    }
}

pub fn prepare(layer: &LayerSettings, keep: &Keep) -> Result<Prepared> {
    prepare_with(layer, keep, &mut BaseFiles::new())
}

/// [`prepare`], with the base files other targets of the layer read.
pub fn prepare_with(layer: &LayerSettings, keep: &Keep, files: &mut BaseFiles) -> Result<Prepared> {
    let target = Target::new(&layer.python_version, &layer.platform)?;
    let base = read_bases(layer, &target, files)?;
    let mut direct_reqs = Vec::new();
    let mut constraints = narrowing(&layer.constraints, "--constraint", layer)?;
    // `-c` lines inside the inputs narrow versions too, and a URL there
    // is refused like one in a `--constraint` file.
    constraints.extend(keep.moves.iter().cloned());
    let overrides = narrowing(&layer.overrides, "--override", layer)?;
    let mut input_options = IndexOptions::default();
    // Requirements by URL, with the folder their relative paths are from.
    let mut by_url = Vec::new();
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
            by_url.extend(reqs.iter().map(|d| (d.clone(), folder(&input.path))));
            direct_reqs.extend(reqs);
            continue;
        }
        let parsed = RequirementsFile::read(&input.path)?;
        if parsed.entries.is_empty()
            && parsed.constraints.is_empty()
            && parsed.unnamed_editables.is_empty()
        {
            bail!(
                "{}: no requirements (the file is empty or only comments and options); a layer needs at least one",
                input.shown
            );
        }
        for (origin, value) in &parsed.unnamed_editables {
            let at = format!("{}:{}", show(&origin.path, layer), origin.line);
            let d = unnamed_project(value, &folder(&origin.path), &at, layer)?;
            by_url.push((d.clone(), folder(&origin.path)));
            direct_reqs.push(d);
        }
        let entries = direct(&parsed.entries, layer);
        for (d, e) in entries.iter().zip(&parsed.entries) {
            by_url.push((d.clone(), folder(&e.origin.path)));
        }
        direct_reqs.extend(entries);
        versions_only(
            &parsed.constraints,
            "a constraint takes versions, not a URL; ask for the package by URL in the requirements instead",
            layer,
        )?;
        constraints.extend(direct(&parsed.constraints, layer));
        input_options.add(parsed.options);
    }
    let fixed = fixed_sources(&by_url, layer)?;
    Ok(Prepared {
        request: ResolveRequest {
            direct: direct_reqs,
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
        },
        input_options,
    })
}

/// The index client of `layer` as `prepared` (its inputs' options lines)
/// names the index. Targets that ask the same index share one.
pub fn new_client(
    layer: &LayerSettings,
    run: &RunSettings,
    prepared: &Prepared,
) -> Result<IndexClient> {
    let mut index_urls = layer.index.index_urls.clone();
    let mut find_links = layer.index.find_links.clone();
    if !layer.index_explicit {
        // Options lines in the input files count when no flag or config
        // entry names an index, as with pip.
        let o = &prepared.input_options;
        if let Some(urls) = o.index_urls(crate::settings::DEFAULT_INDEX) {
            index_urls = urls
                .into_iter()
                .map(layerlock_index::SecretUrl::new)
                .collect();
        }
        find_links.extend(o.find_links.iter().map(|p| run.cwd.join(p)));
    }
    let client = IndexClient::new(&IndexConfig {
        index_urls,
        find_links,
        cache_dir: crate::commands::usable_cache(run.cache_dir.as_deref()),
        offline: run.offline,
        netrc: run.netrc.clone(),
        timeout: run.timeout,
        retries: 3,
        concurrency: 48,
    })
    .context("cannot set up the package index client")?;
    Ok(client)
}

/// Point `client` at one resolution (beside any other it serves): its
/// lookahead guesses for `prepared`'s target, until the answer is dropped;
/// its progress on `spinner`.
fn aim(
    client: &IndexClient,
    run: &RunSettings,
    prepared: &Prepared,
    spinner: &Spinner,
    memo: &Arc<CandidatesMemo>,
) -> layerlock_index::Aimed {
    // As a page comes in, its versions are sorted and the newest judged on
    // the client's threads, and that version's metadata read: the
    // resolver shares the sorted versions (`memo`) and takes the metadata
    // as it asks, so even from the cache alone this is work moved off its
    // thread, not work added.
    let lookahead = Arc::new(Lookahead::new(
        Arc::new(prepared.request.clone()),
        memo.clone(),
    ));
    let speculating = lookahead.clone();
    let speculator: layerlock_index::Speculator =
        Arc::new(move |name, project, below| speculating.wheel(name, project, below));
    // Walking the tree ahead hides round trips; from the cache alone it
    // only costs reading what the resolver may never ask for.
    let expander: Option<layerlock_index::Expander> = (!run.offline).then(|| {
        Arc::new(
            move |name: &PackageName, metadata: &layerlock_dist::CoreMetadata| {
                let guess = lookahead.next(name, metadata);
                layerlock_index::Ahead {
                    projects: guess.projects,
                    rejected: guess.rejected,
                    also_rejected: guess.also_rejected,
                }
            },
        ) as layerlock_index::Expander
    });
    client.set_progress(spinner.progress());
    client.aim(speculator, expander)
}

/// A moment as reports show it: `2026-11-09 22:49 UTC`.
pub fn moment(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%d %H:%M UTC").to_string()
}

/// Resolve one layer; a resolution failure becomes an error with hints.
/// Under a cooldown, the layer is also resolved without it, to say what
/// was held back (or that the cooldown made it unsolvable).
pub fn resolve(
    layer: &LayerSettings,
    run: &RunSettings,
    spinner: &Spinner,
    keep: &Keep,
    fetched_on_failure: &mut Option<FetchStats>,
) -> Result<Resolved> {
    let prepared = prepare(layer, keep)?;
    let client = Arc::new(new_client(layer, run, &prepared)?);
    resolve_on(layer, run, spinner, prepared, client, fetched_on_failure)
}

/// Resolve `prepared` through `client` (which other targets of the layer
/// may share: its pages and metadata are read once for all).
pub fn resolve_on(
    layer: &LayerSettings,
    run: &RunSettings,
    spinner: &Spinner,
    prepared: Prepared,
    client: Arc<IndexClient>,
    fetched_on_failure: &mut Option<FetchStats>,
) -> Result<Resolved> {
    let memo = Arc::default();
    let aimed = aim(&client, run, &prepared, spinner, &memo);
    let UnderCooldown { outcome, held } =
        layerlock_resolve::resolve_under_cooldown(&*client, &prepared.request, &memo);
    // Resolved: no more guessing for it.
    drop(aimed);
    let resolution = match outcome {
        Ok(r) => r,
        Err(err) => {
            // What the failed run fetched is kept for --stats.
            *fetched_on_failure = Some(client.stats());
            discard(client);
            return Err(failure(layer, &prepared, err, held.as_deref()));
        }
    };
    for warning in &resolution.warnings {
        spinner.warn(warning);
    }
    if let (Some(settings), Some(held)) = (&layer.cooldown, &held)
        && !held.is_empty()
        && !run.quiet
    {
        spinner.finish();
        diag!(
            "the cooldown ({}) held back {} package{}:",
            settings.min_age_text,
            held.len(),
            if held.len() == 1 { "" } else { "s" }
        );
        for h in held {
            diag!(
                "  {}: {} instead of {} (eligible at {})",
                h.name,
                h.chosen
                    .as_ref()
                    .map_or("not needed".to_string(), ToString::to_string),
                h.skipped,
                h.eligible.map_or("an unknown time".to_string(), moment)
            );
        }
    }
    let stats = client.stats();
    Ok(Resolved {
        prepared,
        resolution,
        stats,
        client: Discarded(Some(client)),
    })
}

/// A layer resolved, with the index client that read it (its pages stay
/// at hand for what the caller asks next, such as upload times).
pub struct Resolved {
    pub prepared: Prepared,
    pub resolution: Resolution,
    pub stats: FetchStats,
    pub client: Discarded<Arc<IndexClient>>,
}

/// A value dropped on a thread of its own: freeing the pages and metadata
/// a resolution read takes milliseconds nobody needs to wait for.
pub struct Discarded<T: Send + 'static>(Option<T>);

impl<T: Send + 'static> std::ops::Deref for Discarded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.0.as_ref().expect("present until dropped")
    }
}

impl<T: Send + 'static> Drop for Discarded<T> {
    fn drop(&mut self) {
        if let Some(value) = self.0.take() {
            discard(value);
        }
    }
}

/// A resolution that failed, worded for the user: the conflict (or that
/// the cooldown alone causes it, with when each held version becomes
/// eligible), or the index's failure, with what to do.
fn failure(
    layer: &LayerSettings,
    prepared: &Prepared,
    err: ResolveError,
    held: Option<&[layerlock_resolve::HeldBack]>,
) -> anyhow::Error {
    match err {
        ResolveError::NoSolution {
            report,
            mut hints,
            causes,
        } => {
            let mut message = format!(
                "no layer for {} satisfies the requirements with the base fixed:\n{}",
                prepared.request.target.describe(),
                indent(&report)
            );
            if let (Some(cooldown), Some(settings), Some(held)) =
                (&prepared.request.cooldown, &layer.cooldown, held)
            {
                message = format!(
                    "the cooldown ({} before {}) makes this layer unsolvable:\n{}",
                    settings.min_age_text,
                    cooldown.now.strftime("%Y-%m-%d %H:%M UTC"),
                    indent(&report)
                );
                for h in held {
                    hints.push(format!(
                        "without the cooldown {}=={} would be used; it becomes eligible at {}",
                        h.name,
                        h.skipped,
                        h.eligible.map_or("an unknown time".to_string(), moment)
                    ));
                }
                hints.push("wait, or exempt a package with --min-age-exempt PKG (in the config: [cooldown] exempt, with a reason)".to_string());
            }
            Unsolvable {
                hinted: Hinted { message, hints },
                causes,
            }
            .into()
        }
        err @ ResolveError::Source { .. } => {
            let mut hints = Vec::new();
            // Only for what the cache lacks: a damaged entry says itself
            // what to do, and a run online would be told the same.
            if let ResolveError::Source {
                source: layerlock_dist::SourceError::Offline { .. },
                ..
            } = &err
            {
                hints.push("run once without --offline to fill the cache".to_string());
            }
            if let ResolveError::Source {
                source:
                    layerlock_dist::SourceError::Status {
                        status: 401 | 403, ..
                    },
                ..
            } = &err
            {
                hints.push("the index wants credentials: put them in the index URL (https://user:token@host/simple/) or in ~/.netrc (or $NETRC)".to_string());
            }
            Hinted {
                message: format!("{:#}", anyhow::Error::from(err)),
                hints,
            }
            .into()
        }
    }
}

/// Drop `value` on a thread of its own: freeing the pages and metadata a
/// resolution read takes milliseconds nobody needs to wait for.
fn discard<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new()
        .name("discard".to_string())
        .spawn(move || drop(value));
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
