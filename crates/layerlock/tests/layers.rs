//! `covers`, config-file layers, and installing a compiled lock with real
//! pip and uv.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use std::process::Command;

use common::{Index, Work, pins, run};

#[test]
fn covers_says_fully_covered_including_extras() {
    let index = Index::start(&["layer.toml"], &[]);
    let work = Work::new();
    work.write(
        "base.txt",
        "tool-extra==1.0.0\nlib==2.0.0\napiclient==1.1.0\n",
    );
    work.write("in.txt", "tool-extra[api]\nlib>=1\n");
    let mut cmd = work.layerlock(&["covers", "in.txt", "--base", "base.txt"]);
    cmd.args([
        "--python-version",
        "3.12",
        "--platform",
        "x86_64-manylinux_2_28",
    ])
    .args(["--index-url", &index.json()]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("in.txt: fully covered by base.txt"),
        "{stdout}"
    );
}

#[test]
fn covers_lists_what_is_missing_and_why() {
    let index = Index::start(&["layer.toml"], &[]);
    let work = Work::new();
    // The api extra needs apiclient, which the base lacks.
    work.write("base.txt", "tool-extra==1.0.0\nlib==2.0.0\n");
    work.write("in.txt", "tool-extra[api,fast]\n");
    let mut cmd = work.layerlock(&["covers", "in.txt", "--base", "base.txt"]);
    cmd.args([
        "--python-version",
        "3.12",
        "--platform",
        "x86_64-manylinux_2_28",
    ])
    .args(["--index-url", &index.json()]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 1, "{stderr}");
    insta::assert_snapshot!(stdout, @r"
    in.txt: not covered on Python 3.12 on x86_64-manylinux_2_28; 2 packages are missing from the bases:
      apiclient==1.1.0 (via tool-extra)
      speedy==1.0.0 (via tool-extra)
    ");
}

#[test]
fn covers_reports_a_conflict_with_the_base_as_not_covered() {
    let index = Index::start(&["layer.toml"], &[]);
    let work = Work::new();
    work.write("base.txt", "lib==1.0.0\n");
    work.write("in.txt", "lib>=2\n");
    let mut cmd = work.layerlock(&["covers", "in.txt", "--base", "base.txt"]);
    cmd.args([
        "--python-version",
        "3.12",
        "--platform",
        "x86_64-manylinux_2_28",
    ])
    .args(["--index-url", &index.json()]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stdout.contains("not covered: the bases conflict with it"),
        "{stdout}"
    );
    assert!(
        stderr.contains("the base pins lib==1.0.0 (base.txt:1)"),
        "{stderr}"
    );
    // Nothing was fetched: the requirement is about a base pin.
    assert!(!index.requests().contains("/lib/"));
}

#[test]
fn covers_says_when_a_package_has_no_wheel_for_the_target() {
    let index = Index::start(&["platforms.toml"], &[]);
    let work = Work::new();
    work.write("base.txt", "");
    work.write("in.txt", "srconly\n");
    let mut cmd = work.layerlock(&["covers", "in.txt", "--base", "base.txt"]);
    cmd.args([
        "--python-version",
        "3.12",
        "--platform",
        "x86_64-manylinux_2_28",
        "--only-binary",
        ":all:",
    ])
    .args(["--index-url", &index.json()]);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stdout.contains("in.txt: not covered: no wheel for the target (srconly)"),
        "{stdout}"
    );
    assert!(!stdout.contains("conflict"), "{stdout}");
}

fn write_config(work: &Work, index: &str) {
    work.write("requirements/base.txt", "lib==1.5.0\n");
    work.write("requirements/extra.in", "app\n");
    work.write("requirements/tools.in", "tool-extra[fast]\n");
    work.write(
        "layerlock.toml",
        &format!(
            r#"python-version = "3.12"
platform = "x86_64-manylinux_2_28"
index-url = "{index}"
bases = ["requirements/base.txt"]

[[layer]]
name = "extra"
inputs = ["requirements/extra.in"]
output = "requirements/extra.txt"

[[layer]]
name = "tools"
inputs = ["requirements/tools.in"]
output = "requirements/tools.txt"
hashes = "target"
"#
        ),
    );
}

#[test]
fn config_layers_compile_and_check_with_no_arguments() {
    let index = Index::start(&["layer.toml"], &[]);
    let work = Work::new();
    write_config(&work, &index.json());
    let (code, _, stderr) = run(work.layerlock(&["compile"]));
    assert_eq!(code, 0, "{stderr}");
    let extra = work.read("requirements/extra.txt");
    assert_eq!(
        pins(&extra),
        vec!["app==1.0.0", "linuxonly==1.0.0", "util==1.0.0"]
    );
    assert!(
        extra.contains("#    layerlock compile --layer extra"),
        "{extra}"
    );
    assert!(extra.contains("# via -r requirements/extra.in"), "{extra}");
    assert_eq!(
        pins(&work.read("requirements/tools.txt")),
        vec!["speedy==1.0.0", "tool-extra==1.0.0"]
    );

    let (code, _, stderr) = run(work.layerlock(&["compile", "--check"]));
    assert_eq!(code, 0, "{stderr}");
    // Run from a subdirectory: the config is found above it.
    let mut cmd = work.layerlock(&["compile", "--check", "--layer", "tools"]);
    cmd.current_dir(work.path().join("requirements"));
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");

    work.write("requirements/extra.in", "app\nyankee\n");
    let (code, stdout, _) = run(work.layerlock(&["compile", "--check"]));
    assert_eq!(code, 1);
    assert!(stdout.contains("+yankee==1.0.0"), "{stdout}");
}

#[test]
fn the_configs_top_level_keys_hold_for_inputs_on_the_command_line_too() {
    let index = Index::start(&["layer.toml"], &[]);
    let work = Work::new();
    write_config(&work, &index.json());
    // No --python-version, --platform, --index-url or --base: the config's
    // top level gives them, as for its layers (base.txt pins lib 1.5.0).
    let (code, stdout, stderr) = run(work.layerlock(&["compile", "requirements/extra.in"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        pins(&stdout),
        vec!["app==1.0.0", "linuxonly==1.0.0", "util==1.0.0"]
    );
    // A key the config lacks is named with the config's path.
    work.write(
        "layerlock.toml",
        "[[layer]]\nname = \"x\"\ninputs = [\"requirements/extra.in\"]\n",
    );
    let (code, _, stderr) = run(work.layerlock(&["compile", "requirements/extra.in"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--python-version is required, or `python-version` at the top of"),
        "{stderr}"
    );
    assert!(stderr.contains("layerlock.toml"), "{stderr}");
}

#[test]
fn config_in_pyproject_and_bad_config_errors() {
    let index = Index::start(&["layer.toml"], &[]);
    let work = Work::new();
    work.write("in.txt", "app\n");
    work.write(
        "pyproject.toml",
        &format!(
            "[project]\nname = \"x\"\n\n[tool.layerlock]\npython-version = \"3.12\"\nplatform = \"x86_64-manylinux_2_28\"\nindex-url = \"{}\"\n\n[[tool.layerlock.layer]]\nname = \"only\"\ninputs = [\"in.txt\"]\noutput = \"out.txt\"\n",
            index.json()
        ),
    );
    let (code, _, stderr) = run(work.layerlock(&["compile"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(work.read("out.txt").contains("app==2.0.0"));

    work.write(
        "layerlock.toml",
        "[[layer]]\nname = \"x\"\ninputs = [\"in.txt\"]\nbogus = 1\n",
    );
    let (code, _, stderr) = run(work.layerlock(&["compile"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("layerlock.toml"), "{stderr}");
    assert!(stderr.contains("bogus"), "{stderr}");

    let (code, _, stderr) =
        run(work.layerlock(&["compile", "--layer", "nope", "--config", "pyproject.toml"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("no layer named `nope`"), "{stderr}");
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_lock_installs_with_pip_and_uv_require_hashes_no_deps() {
    let index = Index::start(&["layer.toml"], &[]);
    let work = Work::new();
    work.write("in.txt", "app\ntool-extra[fast]\nnative\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "lock.txt"]));
    assert_eq!(code, 0, "{stderr}");

    // pip, from this interpreter (3.11), into a target directory; the lock
    // is for 3.12 on manylinux_2_28, so pip is told that target.
    let target = work.path().join("pip-target");
    let out = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--require-hashes",
            "--no-deps",
            "--quiet",
        ])
        .args(["--disable-pip-version-check", "--no-cache-dir"])
        .args(["--only-binary", ":all:", "--python-version", "3.12"])
        .args(["--implementation", "cp", "--abi", "cp312"])
        // pip takes explicit platforms literally: name the older glibc too.
        .args([
            "--platform",
            "manylinux_2_28_x86_64",
            "--platform",
            "manylinux_2_17_x86_64",
        ])
        .arg("--target")
        .arg(&target)
        .args(["--index-url", &index.json()])
        .arg("-r")
        .arg(work.path().join("lock.txt"))
        .env("PIP_FIND_LINKS", "")
        .output()
        .expect("pip");
    assert!(
        out.status.success(),
        "pip refused the lock:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(target.join("app").is_dir());

    if !have("uv") {
        panic!("uv is not on PATH; .ci/run installs it");
    }
    let python = common::venv(&work, "venv", false);
    let out = Command::new("uv")
        .args([
            "pip",
            "install",
            "--require-hashes",
            "--no-deps",
            "--python",
        ])
        .arg(&python)
        .args([
            "--python-platform",
            "x86_64-manylinux_2_28",
            "--python-version",
            "3.12",
        ])
        .args(["--index-url", &index.json(), "--cache-dir"])
        .arg(work.path().join("uv-cache"))
        .arg("-r")
        .arg(work.path().join("lock.txt"))
        .env_remove("PIP_FIND_LINKS")
        .output()
        .expect("uv");
    assert!(
        out.status.success(),
        "uv refused the lock:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = pins;
}

#[test]
fn flags_beside_a_config_are_recorded_and_check_judges_with_them() {
    let index = Index::start(&["layer.toml"], &[]);
    let work = Work::new();
    write_config(&work, &index.json());
    let (code, _, stderr) = run(work.layerlock(&[
        "compile",
        "--layer",
        "extra",
        "--hashes",
        "target",
        "--now",
        "2026-12-01T00:00:00Z",
    ]));
    assert_eq!(code, 0, "{stderr}");
    let extra = work.read("requirements/extra.txt");
    let command = "layerlock compile --layer extra --hashes target --now 2026-12-01T00:00:00Z";
    assert!(extra.contains(&format!("#    {command}\n")), "{extra}");
    assert!(
        extra.contains("#    layerlock install requirements/extra.txt"),
        "{extra}"
    );
    // --check with no flags of its own takes them from the lock it checks.
    let (code, _, stderr) = run(work.layerlock(&["compile", "--check", "--layer", "extra"]));
    assert_eq!(code, 0, "{stderr}");
    // Flags that choose where packages come from are never taken from the
    // file: the lock is judged by the config, and the hint names the
    // command it records.
    let other = extra.replace(
        command,
        "layerlock compile --layer extra --index-url https://elsewhere/simple",
    );
    work.write("requirements/extra.txt", &other);
    let (code, _, stderr) = run(work.layerlock(&["compile", "--check", "--layer", "extra"]));
    assert_eq!(code, 0, "{stderr}");
    work.write("requirements/extra.in", "app\nyankee\n");
    let (code, _, stderr) = run(work.layerlock(&["compile", "--check", "--layer", "extra"]));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("regenerate it with:\n    layerlock compile --layer extra\n"),
        "{stderr}"
    );
    assert!(stderr.contains("hint: it was made with `layerlock compile --layer extra --index-url https://elsewhere/simple`"), "{stderr}");
    // The header's wording is not what it holds: a reworded sentence never
    // makes a lock stale.
    work.write("requirements/extra.in", "app\n");
    run(work.layerlock(&["compile", "--layer", "extra"]));
    let reworded = work.read("requirements/extra.txt").replace(
        "It holds only what the base does not provide.",
        "Only what the base lacks.",
    );
    work.write("requirements/extra.txt", &reworded);
    let (code, _, stderr) = run(work.layerlock(&["compile", "--check", "--layer", "extra"]));
    assert_eq!(code, 0, "{stderr}");
}
