//! The published pre-commit hooks (`.pre-commit-hooks.yaml`): which changed
//! files make each one run, decided as pre-commit decides it.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use layerlock_ci::yaml::{self, Node};
use regex::Regex;

fn hooks() -> Vec<Node> {
    let text = std::fs::read_to_string(common::repo_root().join(".pre-commit-hooks.yaml")).unwrap();
    let doc = yaml::parse(&text).unwrap().remove(0);
    doc.items().to_vec()
}

fn hook(id: &str) -> Node {
    hooks()
        .into_iter()
        .find(|h| h.get("id").and_then(Node::as_str) == Some(id))
        .unwrap_or_else(|| panic!(".pre-commit-hooks.yaml has no hook {id}"))
}

/// Whether pre-commit runs `hook` for a commit that changes only `path`:
/// `always_run`, else `files` (default: everything) searched in the path
/// and `exclude` (default: nothing) not.
fn runs_for(hook: &Node, path: &str) -> bool {
    let key = |k: &str| hook.get(k).and_then(Node::as_str);
    if key("always_run") == Some("true") {
        return true;
    }
    let files = Regex::new(key("files").unwrap_or("")).unwrap();
    let exclude = Regex::new(key("exclude").unwrap_or("^$")).unwrap();
    files.is_match(path) && !exclude.is_match(path)
}

#[test]
fn the_audit_hook_runs_when_the_allowlist_config_or_requirements_change() {
    let audit = hook("layerlock-audit");
    for path in [
        ".layerlock-allowlist",
        "layerlock.toml",
        "pyproject.toml",
        "requirements/ci.txt",
        "requirements/test.in",
        "ci/requirements.lock",
        ".github/workflows/ci.yml",
        ".buildkite/pipeline.yml",
        "docker/Dockerfile.cuda",
        "scripts/run-tests.sh",
        "Makefile",
        "tox.ini",
        "noxfile.py",
    ] {
        assert!(runs_for(&audit, path), "layerlock-audit skips {path}");
    }
}

#[test]
fn every_hook_pattern_compiles_and_the_graph_hook_is_kept() {
    let ids: Vec<String> = hooks()
        .iter()
        .map(|h| h.get("id").and_then(Node::as_str).unwrap().to_string())
        .collect();
    for id in [
        "layerlock-check",
        "layerlock-audit",
        "layerlock-tether",
        "layerlock-steps",
        "layerlock-cooldown",
        "layerlock-graph",
    ] {
        assert!(ids.iter().any(|i| i == id), "{id} missing: {ids:?}");
    }
    for hook in hooks() {
        for key in ["files", "exclude"] {
            if let Some(pattern) = hook.get(key).and_then(Node::as_str) {
                Regex::new(pattern).unwrap_or_else(|e| panic!("{key}: {pattern}: {e}"));
            }
        }
    }
}

#[test]
fn the_check_hook_runs_for_inputs_locks_and_config_only() {
    let check = hook("layerlock-check");
    for path in [
        "requirements/ci.txt",
        "requirements/ci.in",
        "layerlock.toml",
    ] {
        assert!(runs_for(&check, path), "layerlock-check skips {path}");
    }
    assert!(!runs_for(&check, "src/main.rs"));
}
