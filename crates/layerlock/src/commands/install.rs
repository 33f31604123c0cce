//! `layerlock install`: install only the lock entries an environment lacks,
//! hash-checked and without resolution; refuse conflicts before touching
//! anything, and prove afterwards that nothing else changed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, Result, bail};
use serde::Serialize;

use layerlock_env::{Change, Plan, Snapshot, guard, plan};

use crate::environment::{self, LockEntry};
use crate::printer::Hinted;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Installer {
    Uv,
    Pip,
}

#[derive(Debug, Clone)]
pub struct InstallSettings {
    pub lock: PathBuf,
    pub python: PathBuf,
    pub installer: Installer,
    /// The uv executable, when the installer is uv.
    pub uv: Option<PathBuf>,
    pub allow_change: Vec<String>,
    pub dry_run: bool,
    pub report: Option<PathBuf>,
    pub index_url: Option<layerlock_index::SecretUrl>,
    pub extra_index_urls: Vec<layerlock_index::SecretUrl>,
    pub find_links: Vec<PathBuf>,
    pub quiet: bool,
    /// Where interpreter inspections are cached.
    pub cache_dir: Option<PathBuf>,
}

#[derive(Serialize)]
struct Report<'a> {
    version: u32,
    lock: String,
    python: String,
    target: Option<&'a (String, String)>,
    installer: Installer,
    plan: &'a Plan,
    outcome: Outcome,
}

#[derive(Serialize, Default)]
struct Outcome {
    /// `refused`, `dry-run`, `nothing-to-do`, `installed`, `installer-failed`,
    /// `incomplete`, `drift`.
    status: String,
    installed: Vec<String>,
    not_installed: Vec<String>,
    installer_exit: Option<i32>,
    drift: Vec<Change>,
}

/// Hold an exclusive lock on the environment while planning and installing,
/// so two runs at once cannot interleave.
fn lock_environment(site: &Path, quiet: bool) -> Result<std::fs::File> {
    let path = site.join(".layerlock-install.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            if !quiet {
                diag!(
                    "waiting for another layerlock install on {}",
                    site.display()
                );
            }
            file.lock()
                .with_context(|| format!("cannot lock {}", path.display()))?;
        }
        Err(std::fs::TryLockError::Error(e)) => {
            return Err(e).with_context(|| format!("cannot lock {}", path.display()));
        }
    }
    Ok(file)
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
    if let Some(entry) = lock.entries.iter().find(|e| e.hashes.is_empty()) {
        return Err(Hinted {
            message: format!(
                "{}: {}=={} has no --hash; install takes hash-pinned locks only",
                entry.wanted.origin, entry.wanted.name, entry.wanted.version
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
    let interpreter = environment::inspect(
        &settings.python,
        settings.cache_dir.as_deref(),
        &lock,
        &settings.lock,
    )?;
    let _guard = if settings.dry_run {
        None
    } else {
        Some(lock_environment(&interpreter.purelib, settings.quiet)?)
    };
    let before = Snapshot::scan(&interpreter.paths);
    for bad in &before.unreadable {
        diag!("warning: cannot read {}: {}", bad.path.display(), bad.why);
    }
    let wanted: Vec<_> = lock.entries.iter().map(|e| e.wanted.clone()).collect();
    let mut plan = plan(&wanted, &before, &settings.allow_change);
    // An install that was interrupted (killed, out of memory) left its plan
    // behind: what it was installing may be half-written though present at
    // the right version. Check those files; reinstall what is damaged.
    let journal = interpreter.purelib.join(JOURNAL);
    let repair = repairs(&journal, &before, &mut plan);
    if !repair.is_empty() && !settings.quiet {
        diag!(
            "an interrupted install left {} damaged; reinstalling {}",
            repair.join(", "),
            if repair.len() == 1 { "it" } else { "them" }
        );
    }
    let mut outcome = Outcome::default();
    let write_report = |outcome: Outcome| -> Result<()> {
        let Some(path) = &settings.report else {
            return Ok(());
        };
        let report = Report {
            version: 1,
            lock: settings.lock.display().to_string(),
            python: interpreter.executable.display().to_string(),
            target: lock.target.as_ref(),
            installer: settings.installer,
            plan: &plan,
            outcome,
        };
        let text = serde_json::to_string_pretty(&report)? + "\n";
        fs_err::write(path, text)?;
        Ok(())
    };

    if !plan.conflicts.is_empty() {
        diag!(
            "error: refusing to install {}: {} installed package{} would change (nothing was touched)",
            settings.lock.display(),
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
        diag!("hint: if a change is intended, name it with --allow-change PKG");
        outcome.status = "refused".to_string();
        write_report(outcome)?;
        return Ok(ExitCode::from(1));
    }
    if plan.is_noop() {
        if !settings.dry_run {
            let _ = fs_err::remove_file(&journal);
        }
        if !settings.quiet {
            diag!(
                "nothing to do: all {} locked packages are present at their pinned versions",
                plan.keep.len()
            );
        }
        outcome.status = "nothing-to-do".to_string();
        write_report(outcome)?;
        return Ok(ExitCode::SUCCESS);
    }
    if settings.dry_run {
        print_plan(&plan);
        outcome.status = "dry-run".to_string();
        write_report(outcome)?;
        return Ok(ExitCode::from(1));
    }

    let to_install: Vec<&LockEntry> = plan
        .to_install()
        .filter_map(|w| lock.entries.iter().find(|e| e.wanted.name == w.name))
        .collect();
    // Recorded before anything is touched, removed once all is done.
    let planned: Vec<String> = plan.to_install().map(|w| w.name.clone()).collect();
    fs_err::write(&journal, serde_json::to_string(&planned)? + "\n")
        .with_context(|| format!("cannot record the plan in {}", journal.display()))?;
    let exit = run_installer(settings, &interpreter.executable, &to_install, &repair)?;
    let after = Snapshot::scan(&interpreter.paths);
    let drift = guard(&before, &after, &plan);
    for w in plan.to_install() {
        let done = after
            .dists
            .get(&w.name)
            .is_some_and(|d| layerlock_env::same_version(&d.version, &w.version));
        let label = format!("{}=={}", w.name, w.version);
        if done {
            outcome.installed.push(label);
        } else {
            outcome.not_installed.push(label);
        }
    }
    outcome.installer_exit = Some(exit);
    outcome.drift = drift.clone();
    if exit != 0 {
        outcome.status = "installer-failed".to_string();
        diag!(
            "error: the installer failed (exit {exit}); installed: {}; not installed: {}",
            list(&outcome.installed),
            list(&outcome.not_installed)
        );
        if !drift.is_empty() {
            diag!("and the environment changed:\n{}", drift_table(&drift));
        }
        write_report(outcome)?;
        return Ok(ExitCode::from(2));
    }
    if !outcome.not_installed.is_empty() {
        diag!(
            "error: the installer succeeded but these planned packages are not installed at their pinned versions: {}",
            list(&outcome.not_installed)
        );
        outcome.status = "incomplete".to_string();
        write_report(outcome)?;
        return Ok(ExitCode::from(1));
    }
    if !drift.is_empty() {
        diag!(
            "error: the environment changed beyond the plan (drift guard):\n{}",
            drift_table(&drift)
        );
        outcome.status = "drift".to_string();
        write_report(outcome)?;
        return Ok(ExitCode::from(1));
    }
    let _ = fs_err::remove_file(&journal);
    if !settings.quiet {
        diag!(
            "installed {} package{} ({} already present); nothing else changed",
            outcome.installed.len(),
            if outcome.installed.len() == 1 {
                ""
            } else {
                "s"
            },
            plan.keep.len()
        );
    }
    outcome.status = "installed".to_string();
    write_report(outcome)?;
    Ok(ExitCode::SUCCESS)
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_string()
    } else {
        items.join(", ")
    }
}

/// Where an install records its plan while it runs (beside the file lock).
const JOURNAL: &str = ".layerlock-install.pending";

/// The planned distributions a previous, interrupted install left damaged
/// (present, but their files no longer match their RECORD): moved from
/// `keep` to `install` so that they are reinstalled and the drift guard
/// expects them to change.
fn repairs(journal: &Path, before: &Snapshot, plan: &mut Plan) -> Vec<String> {
    let Ok(text) = layerlock_lock::read_text(journal) else {
        return Vec::new();
    };
    // An unreadable journal: check everything that is kept.
    let named: Option<Vec<String>> = serde_json::from_str(&text).ok();
    let mut damaged = Vec::new();
    plan.keep.retain(|w| {
        let listed = named.as_ref().is_none_or(|n| n.contains(&w.name));
        let broken = listed
            && before
                .dists
                .get(&w.name)
                .is_some_and(|d| !layerlock_env::check_integrity(d).is_empty());
        if broken {
            damaged.push(w.clone());
        }
        !broken
    });
    let names = damaged.iter().map(|w| w.name.clone()).collect();
    plan.install.extend(damaged);
    names
}

/// Run uv or pip on a requirements file holding only the entries to install;
/// `reinstall` names those present at their version that must be rewritten.
fn run_installer(
    settings: &InstallSettings,
    python: &Path,
    entries: &[&LockEntry],
    reinstall: &[String],
) -> Result<i32> {
    let mut requirements = tempfile::Builder::new()
        .prefix("layerlock-install-")
        .suffix(".txt")
        .tempfile()?;
    for entry in entries {
        write!(
            requirements,
            "{}=={}",
            entry.wanted.name, entry.wanted.version
        )?;
        for hash in &entry.hashes {
            write!(requirements, " --hash={hash}")?;
        }
        writeln!(requirements)?;
    }
    requirements.flush()?;
    let mut cmd = match settings.installer {
        Installer::Uv => {
            let Some(uv) = &settings.uv else {
                bail!("--installer uv, but uv is not on PATH");
            };
            let mut cmd = Command::new(uv);
            cmd.args([
                "pip",
                "install",
                "--require-hashes",
                "--no-deps",
                "--python",
            ])
            .arg(python);
            cmd
        }
        Installer::Pip => {
            let mut cmd = Command::new(python);
            cmd.args([
                "-m",
                "pip",
                "install",
                "--require-hashes",
                "--no-deps",
                "--disable-pip-version-check",
            ]);
            cmd
        }
    };
    // Index URLs (which may carry a password) go through the environment,
    // never the command line, which every user of the machine can read
    // (`ps`).
    let (index_var, extra_var) = match settings.installer {
        Installer::Uv => ("UV_INDEX_URL", "UV_EXTRA_INDEX_URL"),
        Installer::Pip => ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"),
    };
    if let Some(url) = &settings.index_url {
        cmd.env(index_var, url.expose());
    }
    if !settings.extra_index_urls.is_empty() {
        let urls: Vec<&str> = settings
            .extra_index_urls
            .iter()
            .map(|u| u.expose())
            .collect();
        cmd.env(extra_var, urls.join(" "));
    }
    for dir in &settings.find_links {
        cmd.arg("--find-links").arg(dir);
    }
    cmd.arg("-r").arg(requirements.path());
    if !reinstall.is_empty() {
        match settings.installer {
            Installer::Uv => {
                for name in reinstall {
                    cmd.args(["--reinstall-package", name]);
                }
            }
            // Every entry of this file is planned, so all may be rewritten.
            Installer::Pip => {
                cmd.arg("--force-reinstall");
            }
        }
    }
    if settings.quiet {
        cmd.arg("--quiet");
    }
    // The installer's output is progress: it goes to stderr with ours.
    cmd.stdout(Stdio::from(std::io::stderr()));
    if !settings.quiet {
        diag!(
            "installing {} package{} with {}",
            entries.len(),
            if entries.len() == 1 { "" } else { "s" },
            match settings.installer {
                Installer::Uv => "uv",
                Installer::Pip => "pip",
            }
        );
    }
    let mut cmd = dies_with_us(cmd, python);
    let status = cmd
        .status()
        .with_context(|| format!("cannot run {:?}", cmd.get_program()))?;
    Ok(status.code().unwrap_or(-1))
}

/// Starts a command through the target's Python so that it is killed when
/// layerlock dies (Linux `PR_SET_PDEATHSIG`): an installer must not go on
/// changing the environment after the drift guard is gone. Elsewhere the
/// command just runs.
const LAUNCHER: &str = "import ctypes, os, signal, sys\n\
try:\n    ctypes.CDLL(None).prctl(1, signal.SIGKILL)\n\
except Exception:\n    pass\n\
if os.getppid() == 1:\n    sys.exit(70)\n\
os.execvp(sys.argv[1], sys.argv[1:])\n";

fn dies_with_us(cmd: Command, python: &Path) -> Command {
    let mut wrapped = Command::new(python);
    wrapped
        .args(["-I", "-c", LAUNCHER])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped.stdout(Stdio::from(std::io::stderr()));
    wrapped
}
