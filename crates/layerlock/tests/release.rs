//! The release workflow (`.github/workflows/release.yml`): actions pinned by
//! commit, least privilege, tools from their hash-pinned lock (no job-time
//! install, as layerlock's own audit sees it), and the Linux wheel built as
//! `scripts/package-check` builds and tries it.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use common::{Work, run};
use layerlock_ci::yaml::{self, Node};
use regex::Regex;

const WORKFLOW: &str = ".github/workflows/release.yml";

fn read(path: &str) -> String {
    std::fs::read_to_string(common::repo_root().join(path)).unwrap()
}

fn workflow() -> Node {
    yaml::parse(&read(WORKFLOW)).unwrap().remove(0)
}

fn jobs(workflow: &Node) -> Vec<(String, Node)> {
    workflow
        .get("jobs")
        .unwrap()
        .entries()
        .iter()
        .map(|(k, v)| (k.as_str().unwrap().to_string(), v.clone()))
        .collect()
}

/// Every `run:` script of a job, joined.
fn job_scripts(job: &Node) -> String {
    let mut out = String::new();
    for step in job.get("steps").unwrap().items() {
        if let Some(run) = step.get("run").and_then(Node::as_str) {
            out.push_str(run);
            out.push('\n');
        }
    }
    out
}

/// Every `run:` script of the workflow, joined.
fn scripts(workflow: &Node) -> String {
    jobs(workflow)
        .iter()
        .map(|(_, job)| job_scripts(job))
        .collect()
}

#[test]
fn every_action_is_pinned_by_commit_with_its_version_named() {
    let pinned =
        Regex::new(r"^\s*(?:- )?uses: [\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*$").unwrap();
    for file in [WORKFLOW, "action.yml"] {
        let text = read(file);
        let uses: Vec<&str> = text.lines().filter(|l| l.contains("uses:")).collect();
        assert!(!uses.is_empty(), "{file}");
        for line in uses {
            assert!(
                pinned.is_match(line),
                "{file}: not pinned by commit: {line}"
            );
        }
    }
}

#[test]
fn permissions_are_granted_per_job_and_only_publish_gets_id_token() {
    let workflow = workflow();
    let top = workflow.get("permissions").unwrap();
    assert!(
        matches!(top, Node::Map { entries, .. } if entries.is_empty()),
        "the top level grants nothing: {top:?}"
    );
    for (name, job) in jobs(&workflow) {
        let permissions = job
            .get("permissions")
            .unwrap_or_else(|| panic!("{name} has no permissions"));
        for (scope, level) in permissions.entries() {
            let (scope, level) = (scope.as_str().unwrap(), level.as_str().unwrap());
            match (name.as_str(), scope) {
                (_, "contents") => assert_eq!(level, "read", "{name}"),
                ("publish", "id-token" | "attestations") => assert_eq!(level, "write"),
                _ => panic!("{name} is granted {scope}: {level}"),
            }
        }
    }
    let publish = workflow.get("jobs").unwrap().get("publish").unwrap();
    let needs: Vec<&str> = publish
        .get("needs")
        .unwrap()
        .items()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(needs, ["linux", "macos"]);
}

#[test]
fn build_tools_come_from_the_release_tools_lock_by_layerlock_install() {
    let workflow = workflow();
    let scripts = scripts(&workflow);
    assert!(!scripts.contains("pip install"), "{scripts}");
    assert_eq!(
        scripts
            .matches("target/debug/layerlock install scripts/release-tools.lock.txt")
            .count(),
        2,
        "the Linux and the macOS job"
    );
    let lock = read("scripts/release-tools.lock.txt");
    for pin in ["maturin==", "ziglang=="] {
        let line = lock.lines().find(|l| l.starts_with(pin)).unwrap();
        assert!(line.ends_with('\\'), "{pin} has hashes: {line}");
    }
    // The lock the workflow installs is a layer of scripts/layerlock.toml,
    // which scripts/test checks is current.
    assert!(read("scripts/layerlock.toml").contains("output = \"release-tools.lock.txt\""));
}

#[test]
fn layerlock_audit_finds_no_job_time_install_in_the_release_workflow() {
    let work = Work::new();
    let mut cmd = work.layerlock(&["audit", WORKFLOW]);
    cmd.current_dir(common::repo_root());
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("0 findings"), "{stdout}");
}

#[test]
fn the_linux_wheel_is_built_as_package_check_builds_it() {
    let check = read("scripts/package-check");
    let build = check
        .lines()
        .find(|l| l.starts_with("maturin build "))
        .unwrap();
    let flags = build.split(" --out").next().unwrap();
    assert!(
        flags.contains("--zig --compatibility manylinux2014"),
        "{flags}"
    );
    let workflow = workflow();
    let linux = job_scripts(workflow.get("jobs").unwrap().get("linux").unwrap());
    let builds: Vec<&str> = linux
        .lines()
        .filter(|l| l.trim_start().starts_with("maturin build "))
        .collect();
    assert_eq!(builds.len(), 2, "{linux}");
    for line in builds {
        assert!(line.trim_start().starts_with(flags), "{line} vs {flags}");
    }
}
