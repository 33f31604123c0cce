//! `layerlock verify`: at job time, prove the locked packages are present at
//! their pinned versions and intact. Never installs, never resolves.

use std::process::ExitCode;

use anyhow::Result;
use serde::Serialize;

use layerlock_env::{
    Clash, IMPORT_LIMIT, ImportResult, Installed, IntegrityProblem, Interpreter, Mismatch,
    ScanOptions, Snapshot, check_integrity_all, clashes, compare, import_modules,
};

use crate::cli::FormatArg;
use crate::environment;
use crate::settings::VerifySettings;

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
    /// The image's pins the layer relies on that are absent or at another
    /// version.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    base: Vec<String>,
    unreadable: Vec<String>,
}

/// What verify reads of each distribution: it reports neither installers
/// nor direct URLs, and its clash and integrity checks use the RECORDs.
const SCAN: ScanOptions = ScanOptions {
    provenance: false,
    keep_records: true,
};

pub fn run(settings: &VerifySettings) -> Result<ExitCode> {
    // A venv whose inspection is cached is scanned while the lock is read:
    // on a large image each is a good part of the time. Nothing is run
    // before the lock has been read (a broken lock never starts the
    // interpreter), and the lock's errors come first.
    let python = settings.python.clone();
    let cache = super::usable_cache(settings.cache_dir.as_deref());
    let cache_dir = cache.clone();
    let early = std::thread::spawn(move || {
        Interpreter::from_cache(&python, cache.as_deref()).map(|interpreter| {
            let scan = Snapshot::scan_with(&interpreter.paths, SCAN);
            (interpreter, scan)
        })
    });
    let lock = environment::read_lock(&settings.lock)?;
    let early = early
        .join()
        .map_err(|_| anyhow::anyhow!("scanning {} failed", settings.python.display()))?;
    let (interpreter, entries, (snapshot, records)) = match early {
        Some((interpreter, scan)) => {
            let (interpreter, entries) = environment::accept(interpreter, &lock)?;
            (interpreter, entries, scan)
        }
        None => {
            let (interpreter, entries) =
                environment::inspect(&settings.python, cache_dir.as_deref(), &lock)?;
            let scan = Snapshot::scan_with(&interpreter.paths, SCAN);
            (interpreter, entries, scan)
        }
    };
    let (missing, different) = compare(&entries, &snapshot);
    let integrity = if settings.integrity {
        let dists: Vec<&Installed> = entries
            .iter()
            .filter_map(|entry| snapshot.dists.get(&entry.wanted.name))
            .collect();
        check_integrity_all(&dists, &records)
    } else {
        Vec::new()
    };
    let imports = import_modules(&interpreter.executable, &settings.imports, IMPORT_LIMIT)?;
    let clashes = clashes(&snapshot, &records);
    let base = layerlock_env::missing_base(&lock.base_used, &snapshot);
    let ok = missing.is_empty()
        && base.is_empty()
        && different.is_empty()
        && integrity.is_empty()
        && imports.iter().all(|i| i.ok)
        && clashes.is_empty();
    let report = Report {
        version: 1,
        ok,
        lock: settings.lock.display().to_string(),
        python: interpreter.executable.display().to_string(),
        target: environment::target_of(&lock),
        checked: entries.len(),
        missing,
        different,
        integrity,
        imports,
        clashes,
        base,
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
    // The process ends next and the OS takes its memory back whole; freeing
    // a large lock and environment allocation by allocation first took
    // about 10 ms of verify's time on 10,000 distributions.
    std::mem::forget((lock, entries, snapshot, records));
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
    for b in &report.base {
        outln!("base       {b}; the layer relies on it");
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
