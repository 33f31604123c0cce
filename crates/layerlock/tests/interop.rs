//! Lock formats and bases from anywhere: a layer written as PEP 751
//! `pylock.toml` installs with real uv, verifies and passes the cooldown
//! offline; bases given as a `pylock.toml`, as `pip freeze` output or as a
//! live virtual environment give the same layer as a requirements lock.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use std::path::Path;
use std::process::Command;

use common::{Index, Work, body, host_python, run, venv};

/// `layerlock compile` for this machine's Python and platform.
fn compile(work: &Work, index: &Index, args: &[&str]) -> (i32, String, String) {
    let mut cmd = work.layerlock(&["compile"]);
    cmd.args(args)
        .args([
            "--python-version",
            &host_python(),
            "--platform",
            "x86_64-manylinux_2_28",
        ])
        .args(["--index-url", &index.json()]);
    run(cmd)
}

/// Real uv, with its own cache in the work directory.
fn uv(work: &Work, args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new("uv");
    cmd.current_dir(work.path())
        .env("UV_CACHE_DIR", work.path().join("uv-cache"))
        .env("UV_NO_CONFIG", "1")
        .args(args);
    let out = cmd.output().expect("uv on PATH");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `uv pip install -r LOCK` into `python`'s environment: uv's own reader.
fn uv_install(work: &Work, python: &Path, lock: &str) {
    let (code, _, stderr) = uv(
        work,
        &[
            "pip",
            "install",
            "--python",
            python.to_str().unwrap(),
            "-r",
            lock,
        ],
    );
    assert_eq!(code, 0, "uv pip install -r {lock}: {stderr}");
}

#[test]
fn a_pylock_layer_installs_with_uv_verifies_and_passes_the_cooldown_offline() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    work.write("layer.in", "beta\n");
    let (code, _, stderr) = compile(&work, &index, &["layer.in", "-o", "pylock.layer.toml"]);
    assert_eq!(code, 0, "{stderr}");
    let text = work.read("pylock.layer.toml");
    for needle in [
        "lock-version = \"1.0\"",
        "environments = [",
        "created-by = \"layerlock\"",
        "name = \"alpha\"\nversion = \"2.0.0\"",
        "[[packages.wheels]]\nname = \"alpha-2.0.0-py3-none-any.whl\"",
        "upload-time = 2024-01-01T00:00:00Z",
        "size = ",
        "hashes = { sha256 = \"",
        "[tool.layerlock]\ntarget = { python = ",
    ] {
        assert!(text.contains(needle), "no `{needle}` in:\n{text}");
    }
    // The same command writes the same bytes.
    let (code, _, stderr) = compile(&work, &index, &["layer.in", "-o", "pylock.layer.toml"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(work.read("pylock.layer.toml"), text);

    // uv's own reader installs it.
    let python = venv(&work, "uvenv", false);
    uv_install(&work, &python, "pylock.layer.toml");
    let (code, stdout, stderr) = run(work.layerlock(&[
        "verify",
        "pylock.layer.toml",
        "--python",
        python.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{stdout}{stderr}");

    // layerlock's installer takes it too.
    let python = venv(&work, "llenv", false);
    let mut cmd = work.layerlock(&["install", "pylock.layer.toml", "--python"]);
    cmd.arg(&python)
        .args(["--index-url", &index.json()])
        .env("UV_CACHE_DIR", work.path().join("uv-cache"));
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("installed 2 packages (0 already present); nothing else changed"),
        "{stderr}"
    );

    // The cooldown reads the upload times from the file: no index at all.
    let (code, stdout, stderr) = run(work.layerlock(&[
        "cooldown",
        "pylock.layer.toml",
        "--min-age",
        "7d",
        "--now",
        "2026-11-30",
        "--offline",
        "--index-url",
        "http://127.0.0.1:9/simple/",
    ]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("alpha"), "{stdout}");
    assert!(stdout.contains("beta"), "{stdout}");
    // And a lock younger than the policy fails from the file alone.
    let (code, stdout, _) = run(work.layerlock(&[
        "cooldown",
        "pylock.layer.toml",
        "--min-age",
        "7d",
        "--now",
        "2024-01-03",
        "--offline",
    ]));
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("too young"), "{stdout}");
}

/// The base every variant below stands for: alpha 1.0.0.
fn requirements_layer(work: &Work, index: &Index) -> String {
    work.write("layer.in", "beta\n");
    work.write("base.txt", "alpha==1.0.0\n");
    let (code, _, stderr) = compile(
        work,
        index,
        &["layer.in", "--base", "base.txt", "-o", "from-txt.txt"],
    );
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("from-txt.txt");
    assert!(lock.contains("beta==1.0.0"), "{lock}");
    assert!(!lock.contains("\nalpha=="), "alpha is the base's: {lock}");
    lock
}

fn layer_with(work: &Work, index: &Index, base: &[&str], out: &str) -> String {
    let mut args = vec!["layer.in"];
    args.extend_from_slice(base);
    args.extend_from_slice(&["-o", out]);
    let (code, _, stderr) = compile(work, index, &args);
    assert_eq!(code, 0, "{stderr}");
    work.read(out)
}

#[test]
fn bases_from_pylock_freeze_and_a_live_venv_give_the_same_layer() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let expected = body(&requirements_layer(&work, &index));

    // A pylock.toml base.
    work.write("base.in", "alpha==1.0.0\n");
    let (code, _, stderr) = compile(&work, &index, &["base.in", "-o", "pylock.base.toml"]);
    assert_eq!(code, 0, "{stderr}");
    let from_pylock = layer_with(
        &work,
        &index,
        &["--base", "pylock.base.toml"],
        "from-pylock.txt",
    );
    assert_eq!(body(&from_pylock), expected);

    // A live environment holding alpha 1.0.0, installed from the base.
    let python = venv(&work, "image", false);
    uv_install(&work, &python, "pylock.base.toml");
    let from_env = layer_with(
        &work,
        &index,
        &["--base-env", python.to_str().unwrap()],
        "from-env.txt",
    );
    assert_eq!(body(&from_env), expected);
    assert!(
        from_env.contains("alpha==1.0.0 (the environment ("),
        "{from_env}"
    );

    // `pip freeze` output of that environment, with the shapes freeze
    // writes for local and editable installs.
    let (code, freeze, stderr) = uv(
        &work,
        &["pip", "freeze", "--python", python.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(freeze.contains("alpha==1.0.0"), "{freeze}");
    work.write(
        "freeze.txt",
        &format!(
            "{freeze}gamma @ file:///wheels/gamma-1.0.0-py3-none-any.whl\n# Editable install with no version control (engine==0.3.0)\n-e /src/engine\n"
        ),
    );
    let from_freeze = layer_with(&work, &index, &["--base", "freeze.txt"], "from-freeze.txt");
    assert_eq!(body(&from_freeze), expected);
}

#[test]
fn an_environment_that_drifted_from_its_lock_is_seen_at_compile_time() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    work.write("layer.in", "beta\n");
    work.write("base.in", "alpha==1.0.0\nnsa==1.0.0\n");
    let (code, _, stderr) = compile(&work, &index, &["base.in", "-o", "pylock.base.toml"]);
    assert_eq!(code, 0, "{stderr}");
    let python = venv(&work, "image", false);
    uv_install(&work, &python, "pylock.base.toml");
    // The image's lock says alpha 2.0.0 and nsa 2.0.0; its environment
    // has 1.0.0 of both: every mismatch is named, not only the first.
    work.write("base.txt", "gamma==1.0.0\nalpha==2.0.0\nnsa==2.0.0\n");
    let (code, _, stderr) = compile(
        &work,
        &index,
        &[
            "layer.in",
            "--base",
            "base.txt",
            "--base-env",
            python.to_str().unwrap(),
            "-o",
            "out.txt",
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("disagrees with the bases in 2 packages"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the environment has alpha 1.0.0; base.txt:2 pins 2.0.0"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the environment has nsa 1.0.0; base.txt:3 pins 2.0.0"),
        "{stderr}"
    );
    assert!(stderr.contains("hint:"), "{stderr}");
    assert!(!Path::new(&work.path().join("out.txt")).exists());
}

#[test]
fn an_unnamed_editable_base_line_says_what_to_do() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    work.write("layer.in", "beta\n");
    work.write("freeze.txt", "alpha==1.0.0\n-e /src/mystery\n");
    let (code, _, stderr) = compile(
        &work,
        &index,
        &["layer.in", "--base", "freeze.txt", "-o", "out.txt"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("freeze.txt:2: `-e /src/mystery` names no package"),
        "{stderr}"
    );
    assert!(stderr.contains("--owned"), "{stderr}");
}

#[test]
fn find_links_files_are_named_from_the_lock_and_install_with_uv() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    let status = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--index-url",
        ])
        .arg(index.json())
        .args(["-d", "wheels", "alpha==2.0.0", "beta==1.0.0"])
        .current_dir(work.path())
        .status()
        .expect("pip download");
    assert!(status.success());
    std::fs::create_dir(work.path().join("locks")).unwrap();
    work.write("layer.in", "beta\n");
    let mut cmd = work.layerlock(&[
        "compile",
        "layer.in",
        "--no-index",
        "--find-links",
        "wheels",
        "--python-version",
        &host_python(),
        "--platform",
        "x86_64-manylinux_2_28",
        "-o",
        "locks/pylock.local.toml",
    ]);
    cmd.env_remove("LAYERLOCK_INDEX_URL");
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let text = work.read("locks/pylock.local.toml");
    assert!(
        text.contains("path = \"../wheels/alpha-2.0.0-py3-none-any.whl\""),
        "{text}"
    );
    assert!(!text.contains("file://"), "{text}");
    assert!(!text.contains(&work.path().display().to_string()), "{text}");
    let python = venv(&work, "env", false);
    uv_install(&work, &python, "locks/pylock.local.toml");
    let (code, stdout, stderr) = run(work.layerlock(&[
        "verify",
        "locks/pylock.local.toml",
        "--python",
        python.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{stdout}{stderr}");
}

#[test]
fn pylock_markers_and_environments_are_judged_for_the_interpreter() {
    let index = Index::start(&["env.toml"], &[]);
    let work = Work::new();
    work.write("layer.in", "beta\n");
    let (code, _, stderr) = compile(&work, &index, &["layer.in", "-o", "pylock.layer.toml"]);
    assert_eq!(code, 0, "{stderr}");
    let python = venv(&work, "env", false);
    uv_install(&work, &python, "pylock.layer.toml");
    let text = work.read("pylock.layer.toml");
    // A marker on the interpreter's full version: the lock's target says
    // 3.X.0, the interpreter is 3.X.Y; it is the interpreter that counts.
    let (major_minor, patch) = {
        let out = Command::new(&python)
            .args(["-c", "import sys; print(sys.version_info[2])"])
            .output()
            .unwrap();
        (
            host_python(),
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
        )
    };
    let marker = format!("marker = \"python_full_version == '{major_minor}.{patch}'\"");
    work.write(
        "pylock.marked.toml",
        &text.replace(
            "name = \"alpha\"\nversion = \"2.0.0\"",
            &format!("name = \"alpha\"\nversion = \"2.0.0\"\n{marker}"),
        ),
    );
    let (code, stdout, stderr) = run(work.layerlock(&[
        "verify",
        "pylock.marked.toml",
        "--python",
        python.to_str().unwrap(),
        "--format",
        "json",
    ]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["checked"], 2, "{stdout}");
    // Environments that leave this interpreter out are refused.
    let envs_line = text
        .lines()
        .find(|l| l.starts_with("environments = "))
        .unwrap()
        .to_string();
    work.write(
        "pylock.windows.toml",
        &text.replace(&envs_line, "environments = [\"sys_platform == 'win32'\"]"),
    );
    let (code, _, stderr) = run(work.layerlock(&[
        "verify",
        "pylock.windows.toml",
        "--python",
        python.to_str().unwrap(),
    ]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("do not include this interpreter"),
        "{stderr}"
    );
}
