//! `layerlock install` and `verify` on real virtual environments, with
//! wheels from the test index, real uv and real pip.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Index, Work, host_python, run, venv};

/// `venv/lib/pythonX.Y/site-packages`.
fn site_packages(venv: PathBuf) -> PathBuf {
    std::fs::read_dir(venv.join("lib"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("site-packages")
}

/// Compile `requirements` into `lock.txt` for this machine's Python.
fn lock(work: &Work, index: &Index, requirements: &str, name: &str) -> PathBuf {
    let input = format!("{name}.in");
    work.write(&input, requirements);
    let out = format!("{name}.txt");
    let mut cmd = work.layerlock(&["compile", &input, "-o", &out]);
    cmd.args([
        "--python-version",
        &host_python(),
        "--platform",
        "x86_64-manylinux_2_28",
    ])
    .args(["--index-url", &index.json()]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    work.path().join(out)
}

/// One lock of `first` and `second`, compiled apart and joined: compile
/// refuses a lock whose packages write over each other's files, but an
/// image made by hand may still hold such a pair.
fn joined_lock(work: &Work, index: &Index, first: &str, second: &str) -> PathBuf {
    let a = std::fs::read_to_string(lock(work, index, first, "first")).unwrap();
    let b = std::fs::read_to_string(lock(work, index, second, "second")).unwrap();
    let packages: String = b
        .lines()
        .skip_while(|l| l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    work.write("layer.txt", &format!("{a}{packages}"));
    work.path().join("layer.txt")
}

fn install(
    work: &Work,
    index: &Index,
    lock: &Path,
    python: &Path,
    extra: &[&str],
) -> (i32, String, String) {
    let mut cmd = work.layerlock(&["install"]);
    cmd.arg(lock)
        .arg("--python")
        .arg(python)
        .args(["--index-url", &index.json()])
        .env("UV_CACHE_DIR", work.path().join("uv-cache"))
        .env("PIP_FIND_LINKS", "")
        .args(extra);
    run(cmd)
}

fn verify(work: &Work, lock: &Path, python: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut cmd = work.layerlock(&["verify"]);
    cmd.arg(lock).arg("--python").arg(python).args(extra);
    run(cmd)
}

/// Install with uv directly, behind layerlock's back.
fn uv_install(work: &Work, index: &Index, python: &Path, what: &[&str]) {
    let status = Command::new("uv")
        .args(["pip", "install", "--no-deps", "--quiet", "--python"])
        .arg(python)
        .args(["--index-url", &index.json()])
        .env("UV_CACHE_DIR", work.path().join("uv-cache"))
        .args(what)
        .status()
        .expect("uv (bash .ci/run installs it)");
    assert!(status.success());
}

#[test]
fn clean_add_then_second_run_is_a_no_op_and_verify_passes() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    let lock = lock(&work, &index, "beta\ngamma\n", "layer");
    let (code, _, stderr) = install(&work, &index, &lock, &python, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("installed 3 packages (0 already present); nothing else changed"),
        "{stderr}"
    );
    let (code, _, stderr) = install(&work, &index, &lock, &python, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("nothing to do: all 3 locked packages are present"),
        "{stderr}"
    );
    let (code, stdout, _) = verify(
        &work,
        &lock,
        &python,
        &["--integrity", "--import", "alpha", "--import", "gamma"],
    );
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("ok: 3 locked packages present and intact"),
        "{stdout}"
    );
}

#[test]
fn only_missing_entries_are_installed() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    uv_install(&work, &index, &python, &["alpha==1.0.0"]);
    let lock = lock(&work, &index, "beta\nalpha==1.0.0\n", "layer");
    let report = work.path().join("report.json");
    let (code, _, stderr) = install(
        &work,
        &index,
        &lock,
        &python,
        &["--report", report.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(report["version"], 1);
    assert_eq!(report["outcome"]["status"], "installed");
    assert_eq!(
        report["outcome"]["installed"],
        serde_json::json!(["beta==1.0.0"])
    );
    assert_eq!(report["plan"]["keep"][0]["name"], "alpha");
}

#[test]
fn conflict_is_refused_before_touching_anything_unless_allowed() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    uv_install(&work, &index, &python, &["alpha==2.0.0"]);
    work.write("layer.in", "alpha==1.0.0\ngamma\n");
    let lock = lock(&work, &index, "alpha==1.0.0\ngamma\n", "layer");
    let (code, _, stderr) = install(&work, &index, &lock, &python, &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("alpha (")
            && stderr.contains(
                "the lock wants alpha==1.0.0, the environment has alpha==2.0.0, installed by uv"
            ),
        "{stderr}"
    );
    // Nothing was touched: gamma is still missing.
    let (code, stdout, _) = verify(&work, &lock, &python, &[]);
    assert_eq!(code, 1);
    assert!(stdout.contains("missing    gamma==1.0.0"), "{stdout}");
    assert!(
        stdout.contains("different  alpha==2.0.0 is installed, the lock wants 1.0.0"),
        "{stdout}"
    );

    let (code, _, stderr) = install(&work, &index, &lock, &python, &["--allow-change", "alpha"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, _) = verify(&work, &lock, &python, &[]);
    assert_eq!(code, 0, "{stdout}");
}

#[test]
fn drift_behind_the_installers_back_is_caught() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    uv_install(&work, &index, &python, &["alpha==1.0.0"]);
    // clobber's wheel overwrites alpha's RECORD: alpha changed although the
    // plan never touched it.
    let lock = lock(&work, &index, "clobber\n", "layer");
    // Its zip says so: refused before anything is written.
    let (code, _, stderr) = install(&work, &index, &lock, &python, &["--installer", "uv"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(
            "clobber==1.0.0 holds 1 file of alpha==1.0.0 (e.g. alpha-1.0.0.dist-info/RECORD)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was touched"), "{stderr}");
    // Let through, the drift guard after the install still sees it.
    let (code, _, stderr) = install(
        &work,
        &index,
        &lock,
        &python,
        &["--installer", "uv", "--allow-change", "alpha"],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("drift guard"), "{stderr}");
    assert!(stderr.contains("reinstalled (RECORD differs)"), "{stderr}");
    assert!(stderr.contains("alpha"), "{stderr}");
}

#[test]
fn hash_mismatch_installs_nothing_from_that_entry() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    let lock = lock(&work, &index, "gamma\n", "layer");
    let text = std::fs::read_to_string(&lock).unwrap();
    let start = text.find("--hash=sha256:").unwrap() + "--hash=sha256:".len();
    let mut bad = text.clone();
    bad.replace_range(start..start + 8, "00000000");
    std::fs::write(&lock, bad).unwrap();
    let report = work.path().join("report.json");
    let site = site_packages(work.path().join("venv"));
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(&site)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let before = listing();
    let (code, _, stderr) = install(
        &work,
        &index,
        &lock,
        &python,
        &["--report", report.to_str().unwrap()],
    );
    // Found before the installer runs: no file of the index has the
    // locked hash, so nothing is touched: not even the install's own lock
    // or journal stays behind. The index cannot give what the lock says:
    // the job could not be done (2), not a check that failed (1).
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(listing(), before);
    assert!(
        stderr.contains("gamma==1.0.0: no file on the index has a hash the lock gives"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was touched"), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(report["outcome"]["status"], "unavailable");
    assert_eq!(report["outcome"]["drift"], serde_json::json!([]));
}

#[test]
fn an_index_that_lacks_the_package_or_refuses_the_password_exits_2() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    let lock = lock(&work, &index, "gamma\n", "layer");
    // Another index, which has no gamma at all.
    let other = Index::start(&["layer.toml"], &[]);
    let (code, _, stderr) = install(&work, &other, &lock, &python, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("nothing was touched"), "{stderr}");
    // The same index behind a password the command does not have.
    let locked = Index::start(&["env.toml"], &["--auth", "ci:right"]);
    let wrong = locked.json().replacen("http://", "http://ci:wrong@", 1);
    let mut cmd = work.layerlock(&["install"]);
    cmd.arg(&lock)
        .arg("--python")
        .arg(&python)
        .args(["--index-url", &wrong])
        .env("PIP_FIND_LINKS", "");
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("nothing was touched"), "{stderr}");
    assert!(!stderr.contains("wrong"), "{stderr}");
}

#[test]
fn wrong_target_fails_fast_and_installs_nothing() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    work.write("layer.in", "gamma\n");
    let mut cmd = work.layerlock(&["compile", "layer.in", "-o", "arm.txt"]);
    cmd.args([
        "--python-version",
        "3.12",
        "--platform",
        "aarch64-manylinux_2_28",
    ])
    .args(["--index-url", &index.json()]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let lock = work.path().join("arm.txt");
    let (code, _, stderr) = install(&work, &index, &lock, &python, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("was compiled for Python 3.12 on aarch64-manylinux_2_28"),
        "{stderr}"
    );
    assert!(stderr.contains("linux x86_64"), "{stderr}");
    let (code, _, stderr) = verify(&work, &lock, &python, &[]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn integrity_finds_a_tampered_file() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    let lock = lock(&work, &index, "alpha\n", "layer");
    let (code, _, stderr) = install(&work, &index, &lock, &python, &[]);
    assert_eq!(code, 0, "{stderr}");
    let site = site_packages(work.path().join("venv"));
    std::fs::write(site.join("alpha/__init__.py"), "print('owned')\n").unwrap();
    // Versions still match: without --integrity this passes, as pip and uv would.
    let (code, _, _) = verify(&work, &lock, &python, &[]);
    assert_eq!(code, 0);
    let (code, stdout, _) = verify(&work, &lock, &python, &["--integrity"]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("tampered   alpha: alpha/__init__.py content differs from RECORD"),
        "{stdout}"
    );
}

#[test]
fn a_new_package_that_would_write_over_an_installed_ones_files_is_refused() {
    // pyjwt and jwt both ship `jwt/`: the image's package must not be
    // written over by a layer's, with "nothing else changed" after.
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    uv_install(&work, &index, &python, &["engine==0.3.0"]);
    let site = site_packages(work.path().join("venv"));
    let before = std::fs::read(site.join("engine/__init__.py")).unwrap();
    let lock = lock(&work, &index, "engine-cuda13\n", "layer");
    for extra in [&[][..], &["--dry-run"]] {
        let (code, _, stderr) = install(&work, &index, &lock, &python, extra);
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains(
                "engine-cuda13==0.3.0 holds 1 file of engine==0.3.0 (e.g. engine/__init__.py)"
            ),
            "{stderr}"
        );
        assert!(stderr.contains("--allow-change engine"), "{stderr}");
    }
    assert_eq!(
        std::fs::read(site.join("engine/__init__.py")).unwrap(),
        before
    );
    assert!(!site.join("engine_cuda13-0.3.0.dist-info").exists());
}

#[test]
fn clashing_distributions_are_reported() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    let lock = joined_lock(&work, &index, "engine\n", "engine-cuda13\n");
    // Two new packages that write one file: refused before anything is
    // written, unless one may be written over.
    let (code, _, stderr) = install(&work, &index, &lock, &python, &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains(
            "engine-cuda13==0.3.0 holds 1 file of engine==0.3.0 (e.g. engine/__init__.py)"
        ),
        "{stderr}"
    );
    let (code, _, stderr) = install(&work, &index, &lock, &python, &["--allow-change", "engine"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, _) = verify(&work, &lock, &python, &["--format", "json"]);
    assert_eq!(code, 1, "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["ok"], false);
    assert_eq!(report["clashes"][0]["first"], "engine");
    assert_eq!(report["clashes"][0]["second"], "engine-cuda13");
    assert_eq!(
        report["clashes"][0]["modules"],
        serde_json::json!(["engine"])
    );
}

#[test]
fn dry_run_prints_the_plan_and_changes_nothing() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    uv_install(&work, &index, &python, &["alpha==1.0.0"]);
    let lock = lock(&work, &index, "beta\nalpha==1.0.0\n", "layer");
    let (code, stdout, _) = install(&work, &index, &lock, &python, &["--dry-run"]);
    assert_eq!(code, 1);
    insta::assert_snapshot!(stdout, @r"
    install  beta==1.0.0
    keep     alpha==1.0.0
    ");
    let (code, _, _) = verify(&work, &lock, &python, &[]);
    assert_eq!(code, 1, "beta must still be missing");
}

#[test]
fn a_lock_without_hashes_is_refused_with_a_hint() {
    let work = Work::new();
    let python = venv(&work, "venv", false);
    let lock = work.write("plain.txt", "alpha==1.0.0\n");
    let mut cmd = work.layerlock(&["install"]);
    cmd.arg(&lock).arg("--python").arg(&python);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("plain.txt:1: alpha==1.0.0 has no --hash"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: make one with `layerlock compile"),
        "{stderr}"
    );
}

#[test]
fn import_canaries_report_the_real_exception() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    let lock = lock(&work, &index, "gamma\n", "layer");
    let (code, _, stderr) = install(&work, &index, &lock, &python, &[]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, _) = verify(
        &work,
        &lock,
        &python,
        &["--import", "gamma", "--import", "no_such_module"],
    );
    assert_eq!(code, 1);
    assert!(stdout.contains("import ok  gamma"), "{stdout}");
    assert!(
        stdout.contains(
            "import err no_such_module: ModuleNotFoundError: No module named 'no_such_module'"
        ),
        "{stdout}"
    );
}

#[test]
fn concurrent_installs_do_not_corrupt_the_environment() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    let lock = lock(&work, &index, "beta\ngamma\nengine\n", "layer");
    let spawn = || {
        let mut cmd = work.layerlock(&["install"]);
        cmd.arg(&lock)
            .arg("--python")
            .arg(&python)
            .args(["--index-url", &index.json()])
            .env("UV_CACHE_DIR", work.path().join("uv-cache"))
            .stderr(std::process::Stdio::piped());
        cmd.spawn().expect("spawn")
    };
    let first = spawn();
    let second = spawn();
    let first = first.wait_with_output().unwrap();
    let second = second.wait_with_output().unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let (code, stdout, _) = verify(&work, &lock, &python, &["--integrity"]);
    assert_eq!(code, 0, "{stdout}");
}

#[test]
fn pip_installs_when_asked() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", true);
    let lock = lock(&work, &index, "beta\n", "layer");
    let (code, _, stderr) = install(&work, &index, &lock, &python, &["--installer", "pip"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("with pip"), "{stderr}");
    let (code, stdout, _) = verify(&work, &lock, &python, &["--integrity"]);
    assert_eq!(code, 0, "{stdout}");
}

#[test]
fn an_unreadable_dist_info_is_reported_not_a_crash() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    let lock = lock(&work, &index, "gamma\n", "layer");
    let (code, _, stderr) = install(&work, &index, &lock, &python, &[]);
    assert_eq!(code, 0, "{stderr}");
    let site = site_packages(work.path().join("venv"));
    std::fs::create_dir_all(site.join("broken-1.0.dist-info")).unwrap();
    let (code, stdout, _) = verify(&work, &lock, &python, &[]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("unreadable"), "{stdout}");
}

/// A `uv` on PATH that runs `body` (a shell script); returns the PATH.
fn uv_wrapper(dir: &Path, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("wrapper-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let wrapper = bin.join("uv");
    std::fs::write(&wrapper, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap())
}

#[test]
fn index_credentials_never_reach_the_installers_command_line() {
    let index = Index::start(&["env.toml"], &["--auth", "ci:s3cret"]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    let with_auth = index.json().replace("http://", "http://ci:s3cret@");
    work.write("layer.in", "beta\n");
    let mut cmd = work.layerlock(&["compile", "layer.in", "-o", "layer.txt"]);
    cmd.args([
        "--python-version",
        &host_python(),
        "--platform",
        "x86_64-manylinux_2_28",
        "--index-url",
        &with_auth,
    ]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    // A real uv, behind a wrapper that records the command line it is given.
    let real_uv = Command::new("sh")
        .args(["-c", "command -v uv"])
        .output()
        .unwrap();
    let real_uv = String::from_utf8_lossy(&real_uv.stdout).trim().to_string();
    assert!(!real_uv.is_empty(), "uv (bash .ci/run installs it)");
    let argv_log = work.path().join("argv.log");
    let path = uv_wrapper(
        work.path(),
        &format!(
            "echo \"$@\" >> '{}'\nexec '{real_uv}' \"$@\"",
            argv_log.display()
        ),
    );
    let mut cmd = work.layerlock(&["install"]);
    cmd.arg(work.path().join("layer.txt"))
        .arg("--python")
        .arg(&python)
        .args(["--index-url", &with_auth])
        .env("PATH", path)
        .env("UV_CACHE_DIR", work.path().join("uv-cache"));
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let argv = std::fs::read_to_string(&argv_log).unwrap();
    assert!(argv.contains("pip install"), "{argv}");
    assert!(!argv.contains("s3cret"), "{argv}");
    assert!(!stderr.contains("s3cret"), "{stderr}");
}

#[test]
fn a_rerun_after_an_interrupted_install_repairs_what_it_left_half_written() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    let lock = lock(&work, &index, "alpha\n", "layer");
    let (code, _, stderr) = install(&work, &index, &lock, &python, &[]);
    assert_eq!(code, 0, "{stderr}");
    // What a run killed mid-install leaves: its plan recorded, a planned
    // package present at its version but with a file cut short.
    let site = site_packages(work.path().join("venv"));
    std::fs::write(site.join(".layerlock-install.pending"), "[\"alpha\"]\n").unwrap();
    std::fs::write(site.join("alpha/__init__.py"), "").unwrap();
    let (code, _, stderr) = install(&work, &index, &lock, &python, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("an interrupted install left alpha damaged"),
        "{stderr}"
    );
    let (code, stdout, _) = verify(&work, &lock, &python, &["--integrity"]);
    assert_eq!(code, 0, "{stdout}");
    assert!(!site.join(".layerlock-install.pending").exists());
}

#[test]
fn the_installer_dies_with_layerlock() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    let lock = lock(&work, &index, "alpha\n", "layer");
    // An installer that takes its time: it records its pid, then waits.
    let pid_file = work.path().join("installer.pid");
    let path = uv_wrapper(
        work.path(),
        &format!("echo $$ > '{}'\nexec sleep 60", pid_file.display()),
    );
    let cmd = work.layerlock(&["install"]);
    let mut child = Command::new(cmd.get_program())
        .args(cmd.get_args())
        .arg(&lock)
        .arg("--python")
        .arg(&python)
        .args(["--index-url", &index.json()])
        .current_dir(work.path())
        .env("PATH", path)
        .env("LAYERLOCK_CACHE_DIR", &work.cache)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut pid = None;
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(&pid_file)
            && !text.trim().is_empty()
        {
            pid = Some(text.trim().to_string());
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let pid = pid.expect("the installer started");
    child.kill().unwrap();
    child.wait().unwrap();
    let mut gone = false;
    for _ in 0..100 {
        let alive = Command::new("kill")
            .args(["-0", &pid])
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap()
            .success();
        if !alive {
            gone = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(gone, "the installer (pid {pid}) outlived layerlock");
}

#[test]
fn integrity_never_opens_a_fifo_or_device_a_record_lists() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    let lock = lock(&work, &index, "alpha\n", "layer");
    let (code, _, stderr) = install(&work, &index, &lock, &python, &[]);
    assert_eq!(code, 0, "{stderr}");
    let site = site_packages(work.path().join("venv"));
    assert!(
        Command::new("mkfifo")
            .arg(site.join("alpha/pipe"))
            .status()
            .unwrap()
            .success()
    );
    std::os::unix::fs::symlink("/dev/zero", site.join("alpha/zero")).unwrap();
    let record = std::fs::read_dir(&site)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".dist-info"))
        .unwrap()
        .join("RECORD");
    let mut text = std::fs::read_to_string(&record).unwrap();
    text.push_str("alpha/pipe,sha256=AAAA,0\nalpha/zero,sha256=AAAA,0\n");
    std::fs::write(&record, text).unwrap();
    let (code, stdout, _) = verify(&work, &lock, &python, &["--integrity"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("alpha/pipe not a regular file"), "{stdout}");
    assert!(stdout.contains("alpha/zero not a regular file"), "{stdout}");
}

#[test]
fn an_interpreter_that_never_answers_is_given_up_on() {
    use std::os::unix::fs::PermissionsExt;
    let work = Work::new();
    work.write(
        "lock.txt",
        &format!("alpha==1.0.0 --hash=sha256:{}\n", "0".repeat(64)),
    );
    // A `--python` that waits for input forever, as a misconfigured wrapper does.
    let python = work.write("python", "#!/bin/sh\nexec sleep 600\n");
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (code, _, stderr) =
        run(work.layerlock(&["verify", "lock.txt", "--python", python.to_str().unwrap()]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("did not answer within 60 s"), "{stderr}");
}

#[test]
fn verify_answers_alike_with_and_without_a_cached_inspection() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let python = venv(&work, "venv", false);
    let lock = joined_lock(&work, &index, "beta\ngamma\nengine\n", "engine-cuda13\n");
    let (code, _, stderr) = install(&work, &index, &lock, &python, &["--allow-change", "engine"]);
    assert_eq!(code, 0, "{stderr}");
    let site = site_packages(work.path().join("venv"));
    std::fs::write(site.join("gamma/__init__.py"), "print('owned')\n").unwrap();
    std::fs::write(site.join("alpha/__init__.py"), "").unwrap();
    std::fs::remove_file(site.join("beta/__init__.py")).unwrap();
    std::fs::create_dir_all(site.join("broken-1.0.dist-info")).unwrap();
    // A fresh cache: the first run inspects the interpreter after the lock is
    // read, the second takes the inspection it cached and scans while the
    // lock is read.
    let cache = work.path().join("fresh-cache");
    let verify = |format: &str| {
        let mut cmd = work.layerlock(&["verify"]);
        cmd.arg(&lock)
            .arg("--python")
            .arg(&python)
            .args(["--integrity", "--format", format])
            .env("LAYERLOCK_CACHE_DIR", &cache);
        run(cmd)
    };
    let (code, cold, _) = verify("text");
    assert!(cache.join("interpreters").is_dir());
    let (warm_code, warm, _) = verify("text");
    assert_eq!((code, &cold), (warm_code, &warm));
    assert_eq!(code, 1, "{cold}");
    // Locked packages in lock order, each one's files in RECORD order.
    let site_text = site.display().to_string();
    // engine and engine-cuda13 write one file; which wrote it last, and so
    // which of the two it no longer matches, is up to the installer.
    let lines: Vec<String> = cold
        .lines()
        .filter(|l| !l.starts_with("tampered   engine"))
        .map(|l| l.replace(&site_text, "SITE"))
        .collect();
    assert_eq!(cold.matches("tampered   engine").count(), 1, "{cold}");
    assert_eq!(
        lines,
        [
            "tampered   alpha: alpha/__init__.py content differs from RECORD",
            "tampered   beta: beta/__init__.py missing",
            "tampered   gamma: gamma/__init__.py content differs from RECORD",
            "clash      engine and engine-cuda13 both install 1 file (e.g. engine/__init__.py; modules: engine)",
            "unreadable SITE/broken-1.0.dist-info: SITE/broken-1.0.dist-info/METADATA does not exist",
        ],
        "{cold}"
    );
    let (_, cold, _) = verify("json");
    let (_, warm, _) = verify("json");
    assert_eq!(cold, warm);
}

#[test]
fn a_broken_lock_never_starts_the_interpreter() {
    use std::os::unix::fs::PermissionsExt;
    let work = Work::new();
    let hash = format!("--hash=sha256:{}", "0".repeat(64));
    work.write("lock.txt", &format!("app==1.0 {hash}\napp==2.0 {hash}\n"));
    // A `--python` that leaves a mark when it is run.
    let mark = work.path().join("ran");
    let python = work.write(
        "python",
        &format!(
            "#!/bin/sh\ntouch '{}'\nexec python3 \"$@\"\n",
            mark.display()
        ),
    );
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (code, _, stderr) =
        run(work.layerlock(&["verify", "lock.txt", "--python", python.to_str().unwrap()]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("app is locked twice"), "{stderr}");
    assert!(
        !mark.exists(),
        "the interpreter was run for a lock that was refused"
    );
}

#[test]
fn a_layer_that_replaces_the_images_package_compiles_installs_and_verifies() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    // The image: a real venv made from its own lock.
    let python = venv(&work, "image", false);
    let base = lock(&work, &index, "engine\nalpha==1.0.0\n", "base");
    let (code, _, stderr) = install(&work, &index, &base, &python, &[]);
    assert_eq!(code, 0, "{stderr}");
    // A layer whose engine build writes over the image's: refused at
    // compile time, naming the pair and the ways out.
    work.write("layer.in", "engine-cuda13\nbeta\nnsa\nnsb\n");
    let compile = |extra: &[&str]| {
        let mut cmd = work.layerlock(&[
            "compile",
            "layer.in",
            "--base",
            "base.txt",
            "-o",
            "layer.txt",
        ]);
        cmd.args([
            "--python-version",
            &host_python(),
            "--platform",
            "x86_64-manylinux_2_28",
        ])
        .args(["--index-url", &index.json()])
        .args(extra);
        run(cmd)
    };
    let (code, _, stderr) = compile(&[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("engine-cuda13==0.3.0 writes over 1 file of the image's engine==0.3.0 (e.g. engine/__init__.py)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: or replace the image's engine on purpose: --replace engine"),
        "{stderr}"
    );
    assert!(!work.path().join("layer.txt").exists());
    // Replaced on purpose: recorded, installed, verified. The two
    // namespace packages write the same `ns/__init__.py`: no clash.
    let (code, _, stderr) = compile(&["--replace", "engine"]);
    assert_eq!(code, 0, "{stderr}");
    let layer = work.read("layer.txt");
    assert!(
        layer.contains("# layerlock-replaces: engine==0.3.0\n"),
        "{layer}"
    );
    let layer = work.path().join("layer.txt");
    let (code, _, stderr) = install(&work, &index, &layer, &python, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("removing engine==0.3.0 first: the lock replaces it on purpose"),
        "{stderr}"
    );
    let (code, stdout, stderr) = verify(&work, &layer, &python, &["--integrity"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("present and intact"), "{stdout}");
    let site = site_packages(work.path().join("image"));
    assert!(!site.join("engine-0.3.0.dist-info").exists());
    assert!(site.join("engine_cuda13-0.3.0.dist-info").exists());
}

#[test]
fn a_layer_installed_without_the_base_pins_it_relies_on_is_refused() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    work.write("base.txt", "alpha==1.0.0\n");
    work.write("layer.in", "beta\n");
    let mut cmd = work.layerlock(&[
        "compile",
        "layer.in",
        "--base",
        "base.txt",
        "-o",
        "layer.txt",
    ]);
    cmd.args([
        "--python-version",
        &host_python(),
        "--platform",
        "x86_64-manylinux_2_28",
    ])
    .args(["--index-url", &index.json()]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let layer = work.path().join("layer.txt");
    let python = venv(&work, "bare", false);
    let (code, _, stderr) = install(&work, &index, &layer, &python, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("relies on the image's alpha==1.0.0 (base.txt:1) is not installed"),
        "{stderr}"
    );
    // With the image's alpha, it installs; verify checks the base too.
    uv_install(&work, &index, &python, &["alpha==1.0.0"]);
    let (code, _, stderr) = install(&work, &index, &layer, &python, &[]);
    assert_eq!(code, 0, "{stderr}");
    uv_install(&work, &index, &python, &["alpha==2.0.0"]);
    let (code, stdout, _) = verify(&work, &layer, &python, &[]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains(
            "base       alpha==1.0.0 (base.txt:1) is installed at 2.0.0; the layer relies on it"
        ),
        "{stdout}"
    );
}
