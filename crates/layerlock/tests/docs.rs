//! Shell completions and man pages come from the flags clap parses.

mod common;

use common::{Work, run};

#[test]
fn completions_for_every_shell_name_the_commands() {
    let work = Work::new();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let (code, stdout, stderr) = run(work.layerlock(&["completions", shell]));
        assert_eq!(code, 0, "{shell}: {stderr}");
        for word in ["layerlock", "compile", "cooldown", "base-env"] {
            assert!(stdout.contains(word), "{shell} lacks {word}");
        }
    }
    let (code, _, stderr) = run(work.layerlock(&["completions", "tcsh"]));
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn man_pages_for_the_tool_and_each_command() {
    let work = Work::new();
    let (code, stdout, stderr) = run(work.layerlock(&["man"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(".TH layerlock 1"), "{stdout}");
    assert!(stdout.contains("compile"), "{stdout}");
    std::fs::create_dir(work.path().join("man")).unwrap();
    let (code, _, stderr) = run(work.layerlock(&["man", "--dir", "man"]));
    assert_eq!(code, 0, "{stderr}");
    let page = work.read("man/layerlock-compile.1");
    assert!(page.contains(".TH layerlock-compile 1"), "{page}");
    assert!(page.contains("\\-\\-base\\-env"), "{page}");
    for command in [
        "audit", "cooldown", "covers", "install", "steps", "tether", "verify",
    ] {
        assert!(
            work.path()
                .join(format!("man/layerlock-{command}.1"))
                .is_file(),
            "{command}"
        );
    }
}

#[test]
fn version_names_the_commit_when_built_from_git() {
    let work = Work::new();
    let (code, stdout, _) = run(work.layerlock(&["--version"]));
    assert_eq!(code, 0);
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        stdout.starts_with(&format!("layerlock {version}")),
        "{stdout}"
    );
    if common::repo_root().join(".git").exists() {
        // `layerlock 0.1.0 (abc123def)`.
        let commit = stdout.trim().rsplit(' ').next().unwrap_or_default();
        assert!(
            commit.starts_with('(') && commit.ends_with(')') && commit.len() == 11,
            "{stdout}"
        );
    }
}
