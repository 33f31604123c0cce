//! `layerlock verify`: at job time, prove the locked packages are present at
//! their pinned versions and intact. Never installs, never resolves.

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use layerlock_env::{Clash, IntegrityProblem, Snapshot, check_integrity, clashes, same_version};

use crate::cli::FormatArg;
use crate::environment;

#[derive(Debug, Clone)]
pub struct VerifySettings {
    pub lock: PathBuf,
    pub python: PathBuf,
    pub imports: Vec<String>,
    pub integrity: bool,
    pub format: FormatArg,
    /// Where interpreter inspections are cached.
    pub cache_dir: Option<PathBuf>,
}

#[derive(Serialize)]
struct Mismatch {
    name: String,
    want: String,
    have: Option<String>,
    origin: String,
}

#[derive(Serialize, Deserialize, Clone)]
struct ImportResult {
    module: String,
    ok: bool,
    error: Option<String>,
}

#[derive(Serialize)]
struct Report {
    version: u32,
    ok: bool,
    lock: String,
    python: String,
    target: Option<(String, String)>,
    checked: usize,
    missing: Vec<Mismatch>,
    different: Vec<Mismatch>,
    integrity: Vec<IntegrityProblem>,
    imports: Vec<ImportResult>,
    clashes: Vec<Clash>,
    unreadable: Vec<String>,
}

/// Imports each module in turn in one interpreter, reporting the real
/// exception of each failure.
const IMPORT_SCRIPT: &str = r#"
import importlib, json, sys, traceback
results = []
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
        results.append({"module": name, "ok": True, "error": None})
    except BaseException as exc:
        line = traceback.format_exception_only(type(exc), exc)[-1].strip()
        results.append({"module": name, "ok": False, "error": line})
print(json.dumps(results))
"#;

fn run_imports(python: &PathBuf, modules: &[String]) -> Result<Vec<ImportResult>> {
    if modules.is_empty() {
        return Ok(Vec::new());
    }
    // Importing runs package code: bounded, so a module that hangs on
    // import fails the check instead of holding the job.
    let limit = std::time::Duration::from_secs(600);
    let Some(output) = layerlock_env::output_within(
        Command::new(python)
            .args(["-I", "-c", IMPORT_SCRIPT])
            .args(modules),
        limit,
    )
    .with_context(|| format!("cannot run {}", python.display()))?
    else {
        anyhow::bail!(
            "importing {} with {} took over {} s; a module hangs on import",
            modules.join(", "),
            python.display(),
            limit.as_secs()
        );
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    match serde_json::from_str(last) {
        Ok(results) => Ok(results),
        // The interpreter died (a crash in an extension module): every
        // module is reported with what it printed.
        Err(_) => Ok(modules
            .iter()
            .map(|m| ImportResult {
                module: m.clone(),
                ok: false,
                error: Some(format!(
                    "the interpreter exited with {}: {}",
                    output.status,
                    String::from_utf8_lossy(&output.stderr).trim()
                )),
            })
            .collect()),
    }
}

pub fn run(settings: &VerifySettings) -> Result<ExitCode> {
    let lock = environment::read_lock(&settings.lock)?;
    let interpreter = environment::inspect(
        &settings.python,
        settings.cache_dir.as_deref(),
        &lock,
        &settings.lock,
    )?;
    let snapshot = Snapshot::scan(&interpreter.paths);
    let mut missing = Vec::new();
    let mut different = Vec::new();
    for entry in &lock.entries {
        let want = &entry.wanted;
        let mismatch = |have: Option<String>| Mismatch {
            name: want.name.clone(),
            want: want.version.clone(),
            have,
            origin: want.origin.clone(),
        };
        match snapshot.dists.get(&want.name) {
            None => missing.push(mismatch(None)),
            Some(d) if !same_version(&d.version, &want.version) => {
                different.push(mismatch(Some(d.version.clone())));
            }
            Some(_) => {}
        }
    }
    let mut integrity = Vec::new();
    if settings.integrity {
        for entry in &lock.entries {
            if let Some(dist) = snapshot.dists.get(&entry.wanted.name) {
                integrity.extend(check_integrity(dist));
            }
        }
    }
    let imports = run_imports(&interpreter.executable, &settings.imports)?;
    let clashes = clashes(&snapshot);
    let ok = missing.is_empty()
        && different.is_empty()
        && integrity.is_empty()
        && imports.iter().all(|i| i.ok)
        && clashes.is_empty();
    let report = Report {
        version: 1,
        ok,
        lock: settings.lock.display().to_string(),
        python: interpreter.executable.display().to_string(),
        target: lock.target.clone(),
        checked: lock.entries.len(),
        missing,
        different,
        integrity,
        imports,
        clashes,
        unreadable: snapshot
            .unreadable
            .iter()
            .map(|u| format!("{}: {}", u.path.display(), u.why))
            .collect(),
    };
    match settings.format {
        FormatArg::Json => outln!("{}", serde_json::to_string_pretty(&report)?),
        FormatArg::Text => print_text(&report, settings.integrity),
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_text(report: &Report, integrity: bool) {
    for m in &report.missing {
        outln!("missing    {}=={} ({})", m.name, m.want, m.origin);
    }
    for m in &report.different {
        outln!(
            "different  {}=={} is installed, the lock wants {} ({})",
            m.name,
            m.have.as_deref().unwrap_or("?"),
            m.want,
            m.origin
        );
    }
    for p in &report.integrity {
        outln!("tampered   {}: {} {}", p.name, p.path, p.what);
    }
    for i in &report.imports {
        match &i.error {
            None => outln!("import ok  {}", i.module),
            Some(e) => outln!("import err {}: {e}", i.module),
        }
    }
    for c in &report.clashes {
        outln!(
            "clash      {} and {} both install {} file{} (e.g. {}; modules: {})",
            c.first,
            c.second,
            c.files,
            if c.files == 1 { "" } else { "s" },
            c.example,
            c.modules.join(", ")
        );
    }
    for u in &report.unreadable {
        outln!("unreadable {u}");
    }
    if report.ok {
        outln!(
            "ok: {} locked package{} present{}",
            report.checked,
            if report.checked == 1 { "" } else { "s" },
            if integrity { " and intact" } else { "" }
        );
    }
}
