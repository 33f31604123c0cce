//! `layerlock tether` and `layerlock steps`, on fixture repositories built
//! here and on vLLM's pipelines and tethering allowlist.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use std::path::Path;
use std::process::Command;

use common::{Work, run};

fn touch(root: &Path, path: &str) {
    let p = root.join(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, "def test_x():\n    pass\n").unwrap();
}

fn git(root: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(root)
        .status()
        .unwrap();
    assert!(status.success());
}

/// A repository exercising every mapping rule.
fn fixture(work: &Work) {
    let root = work.path();
    for file in [
        "tests/unit/test_a.py",
        "tests/unit/test_b.py",
        "tests/unit/slow/test_slow.py",
        "tests/unit/conftest.py",
        "tests/unit/__init__.py",
        "tests/node/test_node.py",
        "tests/glob/test_g1.py",
        "tests/glob/test_skipme.py",
        "tests/found/x_test.py",
        "tests/exec/test_e.py",
        "tests/script/test_run_me.py",
        "tests/coverage/test_cov.py",
        "tests/torch/test_dist.py",
        "tests/deselected/test_d.py",
        "tests/cd/test_cd.py",
        "tests/env/test_env.py",
        "tests/gh/test_gh.py",
        "tests/orphan/test_orphan.py",
        "tests/allowed/test_allowed.py",
        "tests/called/test_called.py",
    ] {
        touch(root, file);
    }
    std::fs::create_dir_all(root.join(".buildkite")).unwrap();
    std::fs::write(
        root.join(".buildkite/pipeline.yml"),
        r#"steps:
  - key: unit
    working_dir: /ci/tests
    commands:
      - pytest -v -s -m 'not slow' unit --ignore=unit/slow
      - pytest node/test_node.py::test_x -k thing
      - python -m pytest glob --ignore-glob='*skipme*'
  - key: finds
    commands:
      - find tests/found -name '*_test.py' | xargs pytest -v
      - find tests/exec -name 'test_*.py' -exec pytest -q {} +
      - python tests/script/test_run_me.py
      - coverage run --source=. -m pytest tests/coverage
      - torchrun --nproc-per-node=2 -m pytest tests/torch/test_dist.py
      - pytest tests/deselected --deselect tests/deselected/test_d.py
  - key: moves
    env:
      DIR: tests/env
    commands:
      - cd tests/cd && pytest test_cd.py
      - pytest $DIR
      - bash /ci/scripts/run.sh
"#,
    )
    .unwrap();
    std::fs::create_dir_all(root.join("scripts")).unwrap();
    std::fs::write(
        root.join("scripts/run.sh"),
        "#!/bin/bash\npytest tests/called\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join(".github/workflows")).unwrap();
    std::fs::write(
        root.join(".github/workflows/ci.yml"),
        "on: [push]\njobs:\n  gh-tests:\n    runs-on: x\n    steps:\n      - run: pytest tests/gh\n",
    )
    .unwrap();
    std::fs::write(
        root.join("allow.txt"),
        "tests/allowed/test_allowed.py  # needs 8 GPUs\ntests/unit/test_a.py  # once untethered\ntests/gone/test_gone.py  # deleted\n",
    )
    .unwrap();
    std::fs::write(
        root.join("layerlock.toml"),
        "[tether]\npath-map = [\"/ci=.\"]\nallowlist = \"allow.txt\"\n",
    )
    .unwrap();
    git(root, &["init", "-q"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "fixture"]);
}

#[test]
fn every_mapping_rule_tethers_its_files() {
    let work = Work::new();
    fixture(&work);
    let (code, stdout, stderr) = run(work.layerlock(&["tether", "--format", "json"]));
    assert_eq!(code, 1, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    insta::assert_json_snapshot!(report);
}

#[test]
fn all_makes_stale_entries_errors_and_files_limit_the_check() {
    let work = Work::new();
    fixture(&work);
    let (code, stdout, _) = run(work.layerlock(&["tether", "--all"]));
    assert_eq!(code, 1);
    assert!(
        stdout.contains("untethered: tests/orphan/test_orphan.py"),
        "{stdout}"
    );
    assert!(
        stdout.contains("error: stale allowlist entry tests/unit/test_a.py: now run by unit"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "error: stale allowlist entry tests/gone/test_gone.py: the file no longer exists"
        ),
        "{stdout}"
    );
    // Pre-commit passes changed files: only those count.
    let (code, stdout, _) = run(work.layerlock(&["tether", "tests/unit/test_b.py", "README.md"]));
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("1 test file checked: 1 tethered"),
        "{stdout}"
    );
}

#[test]
fn explain_names_the_steps_or_the_reason() {
    let work = Work::new();
    fixture(&work);
    let (_, stdout, _) =
        run(work.layerlock(&["tether", "--explain", "tests/unit/slow/test_slow.py"]));
    assert!(
        stdout.contains(
            "covered by unit at .buildkite/pipeline.yml:5 but excluded by --ignore tests/unit/slow"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("no CI step runs tests/unit/slow/test_slow.py"),
        "{stdout}"
    );
    let (_, stdout, _) =
        run(work.layerlock(&["tether", "--explain", "tests/called/test_called.py"]));
    assert!(
        stdout.contains("run by moves at scripts/run.sh:2: pytest tests/called"),
        "{stdout}"
    );
}

#[test]
fn steps_need_stable_unique_keys() {
    let work = Work::new();
    std::fs::create_dir_all(work.path().join(".buildkite")).unwrap();
    std::fs::write(
        work.path().join(".buildkite/a.yml"),
        "steps:\n  - label: Keyless\n    command: make\n  - key: build\n    command: make\n  - block: Release?\n    key: release-gate\n    depends_on: build\n  - key: deploy\n    trigger: deploy-pipeline\n    depends_on: [release-gate, external-key]\n",
    )
    .unwrap();
    std::fs::write(
        work.path().join(".buildkite/b.yml"),
        "steps:\n  - key: build\n    command: again\n  - group: G\n    steps:\n      - key: inner\n        command: x\n        depends_on: nowhere\n",
    )
    .unwrap();
    let (code, stdout, _) = run(work.layerlock(&["steps", "--no-groups"]));
    assert_eq!(code, 1);
    insta::assert_snapshot!(stdout);
    work.write(
        "layerlock.toml",
        "[steps]\nexternal-keys = [\"external-key\", \"nowhere\"]\n",
    );
    let (_, stdout, _) = run(work.layerlock(&["steps", "--format", "json"]));
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["version"], 1);
    assert_eq!(report["problems"].as_array().unwrap().len(), 2, "{stdout}");
}

/// vLLM's pipelines and tethering allowlist, on a tree holding the test
/// files they name (the corpus has no tests/).
#[test]
fn vllm_pipelines_and_allowlist() {
    let Some(corpus) = common::vllm_corpus("vllm_pipelines_and_allowlist") else {
        return;
    };
    let work = Work::new();
    let root = work.path();
    let copy = |from: &str| {
        let src = corpus.join(from);
        let dst = root.join(from);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(src, dst).unwrap();
    };
    for f in [
        ".buildkite/ci_config.yaml",
        ".buildkite/image_build/image_build.yaml",
        ".buildkite/test_areas/disaggregated.yaml",
        ".buildkite/test_areas/disaggregated_ec.yaml",
        ".buildkite/test_areas/disaggregated_mooncake.yaml",
        ".buildkite/test_areas/distributed.yaml",
        ".buildkite/test_areas/misc.yaml",
        "tools/pre_commit/test_tethering_allowlist.txt",
    ] {
        copy(f);
    }
    let allowlist =
        std::fs::read_to_string(root.join("tools/pre_commit/test_tethering_allowlist.txt"))
            .unwrap();
    let allowed: Vec<&str> = allowlist
        .lines()
        .filter(|l| l.starts_with("tests/"))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(allowed.len(), 40);
    for path in &allowed {
        touch(root, path);
    }
    // Files the pipelines run (working_dir /vllm-workspace/tests by default).
    for path in [
        "tests/v1/sample/test_sampler.py",
        "tests/v1/test_oracle.py",
        "tests/v1/core/test_scheduler.py",
        "tests/entrypoints/openai/correctness/test_lmeval.py",
        "tests/test_regression.py",
        "tests/new_area/test_forgotten.py",
    ] {
        touch(root, path);
    }
    std::fs::write(
        root.join("layerlock.toml"),
        "[tether]\npath-map = [\"/vllm-workspace=.\"]\ndefault-working-dir = \"/vllm-workspace/tests\"\nallowlist = \"tools/pre_commit/test_tethering_allowlist.txt\"\n",
    )
    .unwrap();
    git(root, &["init", "-q"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "corpus"]);
    let (code, stdout, stderr) = run(work.layerlock(&["tether", "--all", "--format", "json"]));
    assert_eq!(code, 1, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        report["untethered"],
        serde_json::json!(["tests/new_area/test_forgotten.py"])
    );
    let tethered = report["tethered"].as_object().unwrap();
    assert_eq!(
        tethered["tests/v1/sample/test_sampler.py"],
        serde_json::json!(["v1-sample-logits"])
    );
    assert_eq!(
        tethered["tests/v1/test_oracle.py"],
        serde_json::json!(["v1-sample-logits"])
    );
    assert_eq!(
        tethered["tests/test_regression.py"],
        serde_json::json!(["regression"])
    );
    assert!(
        tethered["tests/v1/core/test_scheduler.py"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("v1-core-kv-metrics"))
    );
    // Every allowlist entry is a real, untethered file here: nothing stale.
    assert_eq!(report["stale"], serde_json::json!([]), "{stdout}");

    let (code, stdout, _) = run(work.layerlock(&["steps", ".buildkite"]));
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("42 steps in 6 pipeline files; 0 problems"),
        "{stdout}"
    );
}
