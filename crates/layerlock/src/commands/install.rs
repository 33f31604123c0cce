//! `layerlock install`: install only the lock entries an environment lacks,
//! hash-checked and without resolution; refuse conflicts before touching
//! anything, and prove afterwards that nothing else changed. The work is
//! `layerlock_env`'s (plan, lock, journal, installer, drift guard); this
//! file turns settings into its calls and its outcome into messages, a
//! report and an exit code.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, bail};
use serde::Serialize;

use layerlock_env::{
    Build, Change, HashedPin, InstallLock, InstallOutcome, InstallRequest, InstallStatus,
    Installer, InstallerCommand, InstallerProgram, Journal, Plan, Runs, Snapshot, UninstallRequest,
    plan,
};

use crate::environment;
use crate::printer::Hinted;
use crate::settings::InstallSettings;

#[derive(Serialize)]
struct Report<'a> {
    version: u32,
    lock: String,
    python: String,
    target: Option<&'a (String, String)>,
    installer: Installer,
    plan: &'a Plan,
    outcome: InstallOutcome,
}

fn print_plan(plan: &Plan) {
    for w in &plan.install {
        outln!("install  {}=={}", w.name, w.version);
    }
    for c in &plan.change {
        outln!(
            "change   {}=={} (has {}, allowed by --allow-change)",
            c.wanted.name,
            c.wanted.version,
            c.installed.version
        );
    }
    for c in &plan.conflicts {
        outln!(
            "conflict {}=={} (has {}{})",
            c.wanted.name,
            c.wanted.version,
            c.installed.version,
            by(&c.installed.installer)
        );
    }
    for w in &plan.remove {
        outln!("remove   {}=={} (the lock replaces it)", w.name, w.version);
    }
    for w in &plan.keep {
        outln!("keep     {}=={}", w.name, w.version);
    }
}

fn by(installer: &str) -> String {
    if installer.is_empty() {
        String::new()
    } else {
        format!(", installed by {installer}")
    }
}

fn drift_table(changes: &[Change]) -> String {
    let mut out = String::from(
        "  package                         before                    after                     what\n",
    );
    for c in changes {
        out.push_str(&format!(
            "  {:<31} {:<25} {:<25} {}\n",
            c.name,
            c.before.as_deref().unwrap_or("-"),
            c.after.as_deref().unwrap_or("-"),
            c.what
        ));
    }
    out
}

pub fn run(settings: &InstallSettings) -> Result<ExitCode> {
    let lock = environment::read_lock(&settings.lock)?;
    check_inputs(settings, &lock)?;
    let (interpreter, entries) = environment::inspect(
        &settings.python,
        super::usable_cache(settings.cache_dir.as_deref()).as_deref(),
        &lock,
    )?;
    let target = environment::target_of(&lock);
    // Held while planning and installing, so two runs at once cannot
    // interleave; a dry run changes nothing and needs no lock.
    let _lock = if settings.dry_run {
        None
    } else {
        Some(InstallLock::acquire(&interpreter.purelib, || {
            if !settings.quiet {
                diag!(
                    "waiting for another layerlock install on {}",
                    interpreter.purelib.display()
                );
            }
        })?)
    };
    let before = Snapshot::scan(&interpreter.paths);
    for bad in &before.unreadable {
        diag!("warning: cannot read {}: {}", bad.path.display(), bad.why);
    }
    check_base(settings, &lock, &before)?;
    let journal = Journal::in_site(&interpreter.purelib);
    let (mut plan, repair) = make_plan(settings, &entries, &before, &journal)?;
    plan.replacing(&lock.header.replaces, &before)
        .map_err(|why| anyhow::anyhow!("{}: {why}", settings.lock.display()))?;
    // Write the report, if asked for, and give the exit code.
    let finish = |outcome: InstallOutcome| -> Result<ExitCode> {
        let code = exit_code(outcome.status);
        let Some(path) = &settings.report else {
            return Ok(code);
        };
        let report = Report {
            version: 1,
            lock: settings.lock.display().to_string(),
            python: interpreter.executable.display().to_string(),
            target: target.as_ref(),
            installer: settings.installer,
            plan: &plan,
            outcome,
        };
        let text = serde_json::to_string_pretty(&report)? + "\n";
        fs_err::write(path, text)?;
        Ok(code)
    };

    if !plan.conflicts.is_empty() {
        print_refusal(&settings.lock, &plan);
        return finish(InstallOutcome::refused());
    }
    if plan.is_noop() {
        if !settings.dry_run {
            journal.clear();
        }
        if !settings.quiet {
            diag!(
                "nothing to do: all {} locked packages are present at their pinned versions",
                plan.keep.len()
            );
        }
        return finish(InstallOutcome::nothing_to_do());
    }
    let to_install = plan.pins(&entries);
    // The wheels' files are checked before anything is written; what the
    // lock pins to an sdist, a git commit or a directory is built by the
    // installer in a run of its own, and checked once written.
    let hashed: Vec<HashedPin> = to_install
        .iter()
        .filter(|p| !p.hashes.is_empty())
        .copied()
        .collect();
    let spared = plan.spared(&repair, &settings.allow_change);
    let no_wheel = match check_files(settings, target.as_ref(), &hashed, &before, &spared) {
        Ok(no_wheel) => no_wheel,
        Err(refused) => return finish(refused),
    };
    let runs = Runs::split(&to_install, &no_wheel);
    if !runs.sources.is_empty() && !settings.quiet {
        let names: Vec<&str> = runs.sources.iter().map(|p| p.name).collect();
        diag!(
            "note: {} {} built from {} source by the installer; what {} writes is checked once installed",
            names.join(", "),
            if names.len() == 1 { "is" } else { "are" },
            if names.len() == 1 { "its" } else { "their" },
            if names.len() == 1 { "it" } else { "each" }
        );
    }
    if settings.dry_run {
        print_plan(&plan);
        return finish(InstallOutcome::dry_run());
    }
    // Recorded before anything is touched, removed once all is done.
    journal.record(&plan)?;
    let mut exit = remove_replaced(settings, &interpreter.executable, &plan)?;
    if exit == 0 {
        exit = run_installers(settings, &interpreter.executable, &runs, &repair)?;
    }
    let after = Snapshot::scan(&interpreter.paths);
    let outcome = InstallOutcome::settle(&plan, &before, &after, exit);
    print_outcome(&outcome, plan.keep.len(), settings.quiet);
    if outcome.leaves_nothing_pending(&before, &after) {
        journal.clear();
    }
    finish(outcome)
}

/// The image's pins the layer relies on (its lock's trailer) are there:
/// a layer installed without them would not work, whatever else passes.
fn check_base(
    settings: &InstallSettings,
    lock: &layerlock_lock::Lock,
    before: &Snapshot,
) -> Result<()> {
    let missing = layerlock_env::missing_base(&lock.base_used, before);
    if !missing.is_empty() {
        Err(Hinted {
            message: format!(
                "{} relies on the image's {}; the layer would not work here",
                settings.lock.display(),
                missing.join("; ")
            ),
            hints: vec![
                "install onto the image the lock was compiled for (its base lock first), or compile the layer against this environment with --base-env".to_string(),
            ],
        }
        .into())
    } else {
        Ok(())
    }
}

/// Remove what the lock replaces on purpose, before installing: the
/// installer's exit code (0 when there was nothing to remove).
fn remove_replaced(settings: &InstallSettings, python: &Path, plan: &Plan) -> Result<i32> {
    if plan.remove.is_empty() {
        return Ok(0);
    }
    let names: Vec<String> = plan.remove.iter().map(|r| r.name.clone()).collect();
    let program = program(settings)?;
    if !settings.quiet {
        let pins: Vec<String> = plan
            .remove
            .iter()
            .map(|r| format!("{}=={}", r.name, r.version))
            .collect();
        diag!(
            "removing {} first: the lock replaces {} on purpose",
            pins.join(", "),
            if pins.len() == 1 { "it" } else { "them" }
        );
    }
    let command = UninstallRequest {
        program,
        python,
        names: &names,
        quiet: settings.quiet,
    }
    .prepare();
    Ok(command.run()?)
}

/// Each installer run in turn until one fails: its exit code (0 when all
/// succeeded).
fn run_installers(
    settings: &InstallSettings,
    python: &Path,
    runs: &Runs,
    repair: &[String],
) -> Result<i32> {
    let mut first = true;
    for (pins, build) in runs.in_order() {
        if pins.is_empty() {
            continue;
        }
        let installer = match installer(settings, python, pins, repair, build) {
            Ok(installer) => installer,
            // After a run that changed the environment, what it did is
            // still settled and reported: the failure is the installer's.
            Err(e) if !first => return Ok(failed_to_start(&e)),
            Err(e) => return Err(e),
        };
        if !settings.quiet {
            diag!(
                "installing {} package{} with {}{}",
                pins.len(),
                if pins.len() == 1 { "" } else { "s" },
                installer.installer(),
                match build {
                    Build::Nothing => "",
                    Build::Sdists => " (building their sdists, which are hash-checked)",
                    Build::Sources => ", from source",
                }
            );
        }
        let exit = match installer.run() {
            Ok(exit) => exit,
            Err(e) if !first => return Ok(failed_to_start(&e.into())),
            Err(e) => return Err(e.into()),
        };
        if exit != 0 {
            return Ok(exit);
        }
        first = false;
    }
    Ok(0)
}

/// A later installer run that could not start: said, and counted as the
/// installer failing (exit 2), so the earlier runs' work is settled.
fn failed_to_start(e: &anyhow::Error) -> i32 {
    diag!("error: {e:#}");
    2
}

/// Before the environment is looked at: the lock is hash-pinned, and the
/// report has somewhere to go.
fn check_inputs(settings: &InstallSettings, lock: &layerlock_lock::Lock) -> Result<()> {
    if let Some(p) = lock
        .packages
        .iter()
        .find(|p| p.hashes.is_empty() && p.direct.is_none())
    {
        return Err(Hinted {
            message: format!(
                "{}: {}=={} has no --hash; install takes hash-pinned locks only",
                p.origin, p.name, p.version
            ),
            hints: vec![
                "make one with `layerlock compile … -o LOCK` (every entry gets its sha256 hashes)"
                    .to_string(),
            ],
        }
        .into());
    }
    if let Some(report) = &settings.report {
        let dir = report.parent().filter(|d| !d.as_os_str().is_empty());
        if dir.is_some_and(|d| !d.is_dir()) {
            bail!(
                "--report {}: its directory does not exist",
                report.display()
            );
        }
    }
    Ok(())
}

/// The plan for `entries` in the environment `before`, with what an
/// interrupted install left damaged moved into it (and named, to be
/// reinstalled).
fn make_plan(
    settings: &InstallSettings,
    entries: &[layerlock_env::LockEntry],
    before: &Snapshot,
    journal: &Journal,
) -> Result<(Plan, Vec<String>)> {
    let wanted: Vec<_> = entries.iter().map(|e| e.wanted.clone()).collect();
    if let Some(name) = layerlock_env::unknown_allowance(&settings.allow_change, &wanted, before) {
        bail!(
            "--allow-change {name}: no package of that name is installed or in {}; name a package the install may change",
            settings.lock.display()
        );
    }
    let mut plan = plan(&wanted, before, &settings.allow_change);
    // An install that was interrupted (killed, out of memory) left its plan
    // behind: what it was installing may be half-written though present at
    // the right version. Check those files; reinstall what is damaged.
    let repair = journal.repairs(before, &mut plan);
    if !repair.is_empty() && !settings.quiet {
        diag!(
            "an interrupted install left {} damaged; reinstalling {}",
            repair.join(", "),
            if repair.len() == 1 { "it" } else { "them" }
        );
    }
    Ok((plan, repair))
}

/// What the new wheels would write over, before anything is written: the
/// refusal, when a distribution the plan keeps would lose its files or the
/// file lists cannot be had (fail closed).
fn check_files(
    settings: &InstallSettings,
    target: Option<&(String, String)>,
    to_install: &[HashedPin],
    before: &Snapshot,
    spared: &std::collections::BTreeSet<String>,
) -> Result<Vec<String>, InstallOutcome> {
    let lookup = layerlock_compile::WheelLookup {
        index_urls: match &settings.index_url {
            Some(url) => std::iter::once(url.clone())
                .chain(settings.extra_index_urls.iter().cloned())
                .collect(),
            None => settings.default_index_urls.clone(),
        },
        find_links: settings.find_links.clone(),
        netrc: settings.netrc.clone(),
    };
    let connect = || {
        let cache_dir = super::usable_cache(settings.cache_dir.as_deref());
        Ok(lookup.client(cache_dir)?)
    };
    let found = layerlock_compile::find_overwrites(to_install, target, before, spared, connect);
    let (overwrites, unlisted) = match found {
        Ok(found) => found,
        Err(e) => {
            diag!(
                "error: refusing to install {}: {:#}",
                settings.lock.display(),
                anyhow::Error::from(e)
            );
            diag!("(nothing was touched)");
            // The index cannot give what the lock says: the job could not
            // be done (2), which is not a check that failed (1).
            return Err(InstallOutcome::unavailable());
        }
    };
    if !overwrites.is_empty() {
        print_overwrites(&settings.lock, &overwrites);
        return Err(InstallOutcome::refused());
    }
    if !unlisted.is_empty() && !settings.quiet {
        diag!(
            "note: {} {} no wheel among its hashes: the installer builds {} from the hash-checked sdist, and what {} writes is checked once installed",
            unlisted.join(", "),
            if unlisted.len() == 1 { "has" } else { "have" },
            if unlisted.len() == 1 { "it" } else { "them" },
            if unlisted.len() == 1 { "it" } else { "each" }
        );
    }
    Ok(unlisted)
}

/// New wheels that would write over installed distributions' files: why
/// nothing was touched, on stderr.
fn print_overwrites(lock: &Path, found: &[layerlock_env::Overwrite]) {
    diag!(
        "error: refusing to install {}: {} would write over files of installed package{} (nothing was touched)",
        lock.display(),
        if found.len() == 1 {
            "a new package"
        } else {
            "new packages"
        },
        if found.len() == 1 { "" } else { "s" }
    );
    for o in found {
        diag!(
            "  {} holds {} file{} of {}=={} (e.g. {})",
            o.new,
            o.files,
            if o.files == 1 { "" } else { "s" },
            o.existing,
            o.existing_version,
            o.example
        );
    }
    let names: Vec<&str> = found.iter().map(|o| o.existing.as_str()).collect();
    diag!(
        "hint: two distributions that install the same module cannot both be intact; drop one from the layer, or if {} may be written over, name it with --allow-change {}",
        names.join(", "),
        names.join(" --allow-change ")
    );
}

/// Why nothing was touched, on stderr.
fn print_refusal(lock: &Path, plan: &Plan) {
    diag!(
        "error: refusing to install {}: {} installed package{} would change (nothing was touched)",
        lock.display(),
        plan.conflicts.len(),
        if plan.conflicts.len() == 1 { "" } else { "s" }
    );
    for c in &plan.conflicts {
        diag!(
            "  {} ({}): the lock wants {}=={}, the environment has {}=={}{}",
            c.wanted.name,
            c.wanted.origin,
            c.wanted.name,
            c.wanted.version,
            c.installed.name,
            c.installed.version,
            by(&c.installed.installer)
        );
    }
    // `pip freeze` leaves these out: a base made with it does not say the
    // image has them, so the layer pinned its own.
    let tools: Vec<&str> = plan
        .conflicts
        .iter()
        .map(|c| c.wanted.name.as_str())
        .filter(|n| FREEZE_LEAVES_OUT.contains(n))
        .collect();
    if !tools.is_empty() {
        diag!(
            "hint: {} {} in the environment but not in the layer's bases: `pip freeze` leaves out {}; make the base with `pip freeze --all` (or compile with --base-env PYTHON) and compile the layer again, so it keeps the image's",
            tools.join(", "),
            if tools.len() == 1 { "is" } else { "are" },
            FREEZE_LEAVES_OUT.join(", ")
        );
    }
    diag!("hint: if a change is intended, name it with --allow-change PKG");
}

/// What `pip freeze` omits unless given `--all`.
pub const FREEZE_LEAVES_OUT: &[&str] = &["pip", "setuptools", "wheel", "distribute"];

/// What an installer run came to, on stderr.
fn print_outcome(outcome: &InstallOutcome, kept: usize, quiet: bool) {
    match outcome.status {
        InstallStatus::InstallerFailed => {
            diag!(
                "error: the installer failed (exit {}); installed: {}; not installed: {}",
                // Always there once the installer ran; -1 as for a signal.
                outcome.installer_exit.unwrap_or(-1),
                list(&outcome.installed),
                list(&outcome.not_installed)
            );
            if !outcome.drift.is_empty() {
                diag!(
                    "and the environment changed:\n{}",
                    drift_table(&outcome.drift)
                );
            }
        }
        InstallStatus::Incomplete => {
            diag!(
                "error: the installer succeeded but these planned packages are not installed at their pinned versions: {}",
                list(&outcome.not_installed)
            );
        }
        InstallStatus::Drift => {
            diag!(
                "error: the environment changed beyond the plan (drift guard):\n{}",
                drift_table(&outcome.drift)
            );
        }
        InstallStatus::Installed => {
            if !quiet {
                diag!(
                    "installed {} package{} ({} already present); nothing else changed",
                    outcome.installed.len(),
                    if outcome.installed.len() == 1 {
                        ""
                    } else {
                        "s"
                    },
                    kept
                );
            }
        }
        // Only a run that never started the installer ends so; it was
        // reported above.
        InstallStatus::Refused
        | InstallStatus::Unavailable
        | InstallStatus::DryRun
        | InstallStatus::NothingToDo => {}
    }
}

/// The installer for `pins`, ready to run; `reinstall` names those present
/// at their version that must be rewritten.
fn installer(
    settings: &InstallSettings,
    python: &Path,
    pins: &[HashedPin],
    reinstall: &[String],
    build: Build,
) -> Result<InstallerCommand> {
    let program = program(settings)?;
    let extra_index_urls: Vec<&str> = settings
        .extra_index_urls
        .iter()
        .map(|u| u.expose())
        .collect();
    let command = InstallRequest {
        program,
        python,
        pins,
        reinstall,
        index_url: settings.index_url.as_ref().map(|u| u.expose()),
        extra_index_urls: &extra_index_urls,
        find_links: &settings.find_links,
        quiet: settings.quiet,
        build,
    }
    .prepare()?;
    Ok(command)
}

/// The installer `--installer` names: uv must be on PATH.
fn program(settings: &InstallSettings) -> Result<InstallerProgram<'_>> {
    Ok(match (&settings.installer, &settings.uv) {
        (Installer::Uv, Some(uv)) => InstallerProgram::Uv(uv),
        (Installer::Uv, None) => bail!("--installer uv, but uv is not on PATH"),
        (Installer::Pip, _) => InstallerProgram::Pip,
    })
}

/// 0: the environment holds the lock; 1: it does not, or would not (a dry
/// run with work left, a refusal, drift); 2: the installer failed, or the
/// index cannot give what the lock names.
fn exit_code(status: InstallStatus) -> ExitCode {
    match status {
        InstallStatus::NothingToDo | InstallStatus::Installed => ExitCode::SUCCESS,
        InstallStatus::Refused
        | InstallStatus::DryRun
        | InstallStatus::Incomplete
        | InstallStatus::Drift => ExitCode::from(1),
        InstallStatus::InstallerFailed | InstallStatus::Unavailable => ExitCode::from(2),
    }
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_string()
    } else {
        items.join(", ")
    }
}
