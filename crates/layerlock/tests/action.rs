//! The composite action (`action.yml`): its `Run layerlock` step, run by
//! bash as GitHub runs it, with a fake `layerlock` on PATH that prints each
//! argument it is given on a line of its own.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use std::path::Path;
use std::process::Command;

use layerlock_ci::yaml::{self, Node};

fn action() -> Node {
    let text = std::fs::read_to_string(common::repo_root().join("action.yml")).unwrap();
    yaml::parse(&text).unwrap().remove(0)
}

fn step<'a>(action: &'a Node, name: &str) -> &'a Node {
    let steps = action.get("runs").and_then(|r| r.get("steps")).unwrap();
    steps
        .items()
        .iter()
        .find(|s| s.get("name").and_then(Node::as_str) == Some(name))
        .unwrap_or_else(|| panic!("action.yml has no step {name:?}"))
}

/// What one run of the step did.
struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
    /// The SARIF file, when the step wrote one.
    sarif: Option<String>,
    /// What the step appended to `$GITHUB_ENV`.
    github_env: String,
    /// The files in the step's working directory afterwards.
    files: Vec<String>,
}

/// Runs the `Run layerlock` step with `args` as the action's input; the
/// fake layerlock exits with `status`.
fn run_step(args: &str, status: i32) -> Outcome {
    let action = action();
    let script = step(&action, "Run layerlock")
        .get("run")
        .and_then(Node::as_str)
        .unwrap()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let fake = bin.join("layerlock");
    std::fs::write(
        &fake,
        "#!/bin/sh\nfor arg in \"$@\"; do printf '%s\\n' \"$arg\"; done\nexit \"$FAKE_STATUS\"\n",
    )
    .unwrap();
    chmod_x(&fake);
    let runner_temp = dir.path().join("runner-temp");
    std::fs::create_dir(&runner_temp).unwrap();
    let github_env = dir.path().join("github-env");
    std::fs::write(&github_env, "").unwrap();
    let sarif = dir.path().join("out.sarif");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // GitHub runs a `shell: bash` step as `bash --noprofile --norc -eo
    // pipefail FILE`.
    let file = dir.path().join("step.sh");
    std::fs::write(&file, &script).unwrap();
    let out = Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail"])
        .arg(&file)
        .current_dir(dir.path())
        .env("PATH", path)
        .env("LAYERLOCK_ARGS", args)
        .env("LAYERLOCK_SARIF", &sarif)
        .env("RUNNER_TEMP", &runner_temp)
        .env("GITHUB_ENV", &github_env)
        .env("FAKE_STATUS", status.to_string())
        .output()
        .unwrap();
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        sarif: std::fs::read_to_string(&sarif).ok(),
        github_env: std::fs::read_to_string(&github_env).unwrap(),
        files: std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
    }
}

#[cfg(unix)]
fn chmod_x(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[cfg(not(unix))]
fn chmod_x(_: &Path) {}

fn lines(words: &[&str]) -> String {
    words.iter().map(|w| format!("{w}\n")).collect()
}

#[test]
fn quoted_args_reach_layerlock_as_one_word_each() {
    let out = run_step(r#"audit --allowlist "my file" 'it'\''s' a\ b"#, 0);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        lines(&["audit", "--allowlist", "my file", "it's", "a b"])
    );
    assert_eq!(out.sarif, None, "no SARIF was asked for");
    assert_eq!(out.github_env, "");
}

#[test]
fn args_are_split_without_expanding_or_running_anything() {
    let out = run_step(r#"audit "$(touch pwned)" $HOME '*' `id`"#, 0);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        lines(&["audit", "$(touch pwned)", "$HOME", "*", "`id`"])
    );
    assert!(!out.files.iter().any(|f| f == "pwned"), "{:?}", out.files);
}

#[test]
fn an_unclosed_quote_in_args_fails_the_step_without_running_layerlock() {
    let out = run_step(r#"audit --allowlist "my file"#, 0);
    assert_eq!(out.code, 2);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("cannot split args"), "{}", out.stderr);
}

#[test]
fn format_sarif_anywhere_in_args_is_written_to_the_sarif_file() {
    for (args, words) in [
        (
            "audit ci/ --format sarif",
            &["audit", "ci/", "--format", "sarif"][..],
        ),
        (
            "audit --format=sarif --allowlist 'my file'",
            &["audit", "--format=sarif", "--allowlist", "my file"][..],
        ),
        ("audit --format sarif", &["audit", "--format", "sarif"][..]),
    ] {
        let out = run_step(args, 0);
        assert_eq!(out.code, 0, "{args}: {}", out.stderr);
        assert_eq!(out.sarif.as_deref(), Some(lines(words).as_str()), "{args}");
        assert_eq!(out.stdout, "", "{args}: the report goes to the file");
        assert!(
            out.github_env.contains("LAYERLOCK_SARIF_WRITTEN=true\n"),
            "{args}: {}",
            out.github_env
        );
        assert!(
            out.github_env.contains("LAYERLOCK_AUDIT_STATUS=0\n"),
            "{}",
            out.github_env
        );
    }
}

#[test]
fn other_formats_are_not_taken_for_sarif() {
    for args in [
        "audit --format json",
        "audit --format github sarif",
        "compile --check",
    ] {
        let out = run_step(args, 0);
        assert_eq!(out.code, 0, "{args}: {}", out.stderr);
        assert_eq!(out.sarif, None, "{args}");
        assert_eq!(out.github_env, "", "{args}");
    }
}

#[test]
fn sarif_findings_still_upload_and_a_broken_run_fails_the_step() {
    let out = run_step("audit --format sarif", 1);
    assert_eq!(out.code, 0, "findings are reported after the upload");
    assert!(out.github_env.contains("LAYERLOCK_AUDIT_STATUS=1\n"));
    assert!(out.github_env.contains("LAYERLOCK_SARIF_WRITTEN=true\n"));

    let out = run_step("audit --format sarif", 2);
    assert_eq!(out.code, 2);
    assert!(!out.github_env.contains("LAYERLOCK_SARIF_WRITTEN"));

    let out = run_step("compile --check", 1);
    assert_eq!(out.code, 1, "any other command's status is the step's");
}

#[test]
fn the_upload_and_the_failure_follow_what_the_run_step_wrote() {
    let action = action();
    let upload = step(&action, "Upload SARIF")
        .get("if")
        .and_then(Node::as_str)
        .unwrap();
    assert!(
        upload.contains("env.LAYERLOCK_SARIF_WRITTEN == 'true'"),
        "{upload}"
    );
    assert!(!upload.contains("inputs.args"), "{upload}");
    let fail = step(&action, "Fail on findings")
        .get("if")
        .and_then(Node::as_str)
        .unwrap();
    assert!(fail.contains("env.LAYERLOCK_AUDIT_STATUS == '1'"), "{fail}");
}
