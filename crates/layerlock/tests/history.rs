//! `blocks` and `triage` on real git repositories built here, with dated
//! commits: steps disabled and restored, modules changed while a job was
//! dark, a stale xfail.

mod common;

use std::path::Path;
use std::process::Command as Process;

use common::{Work, run};

/// A git repository in a scratch directory, isolated from the user's and
/// the system's git config.
struct Repo {
    work: Work,
}

impl Repo {
    fn new() -> Self {
        let repo = Self { work: Work::new() };
        repo.git(&["init", "-q", "-b", "main", "."]);
        repo
    }

    fn path(&self) -> &Path {
        self.work.path()
    }

    fn git(&self, args: &[&str]) -> String {
        self.git_at(args, "2026-08-01T00:00:00Z")
    }

    fn git_at(&self, args: &[&str], date: &str) -> String {
        let out = Process::new("git")
            .current_dir(self.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_DATE", date)
            .env("GIT_COMMITTER_DATE", date)
            .args(["-c", "user.name=Dev", "-c", "user.email=dev@example.com"])
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn write(&self, name: &str, text: &str) {
        self.work.write(name, text);
    }

    /// Commit everything at `date` (UTC day) with `subject`; the commit id.
    fn commit(&self, date: &str, subject: &str) -> String {
        let when = format!("{date}T12:00:00Z");
        self.git_at(&["add", "-A"], &when);
        self.git_at(&["commit", "-q", "--allow-empty", "-m", subject], &when);
        self.git(&["rev-parse", "HEAD"])
    }

    fn layerlock(&self, args: &[&str]) -> (i32, String, String) {
        let mut cmd = self.work.layerlock(args);
        cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1");
        run(cmd)
    }
}

const KV_BEFORE: &str = "\
group: KV
steps:
- label: NIXL tests
  key: nixl-tests
  timeout_in_minutes: 30
  source_file_dependencies:
  - vllm/kv/
  - tests/kv/
  commands:
  - bash /w/.buildkite/scripts/install-kv-connectors.sh
  - uv pip install --system -r /w/requirements/kv_connectors.txt
  - pytest -v tests/kv/test_nixl.py
- label: Mooncake tests
  key: mooncake-tests
  timeout_in_minutes: 20
  commands:
  - bash /w/.buildkite/scripts/install-kv-connectors.sh
  - pytest -v tests/kv/test_mooncake.py
- label: Unit
  key: unit
  commands:
  - pytest tests/unit
";

/// NIXL removed outright, Mooncake commented out.
const KV_DISABLED: &str = "\
group: KV
steps:
# - label: Mooncake tests
#   key: mooncake-tests
#   timeout_in_minutes: 20
#   commands:
#   - bash /w/.buildkite/scripts/install-kv-connectors.sh
#   - pytest -v tests/kv/test_mooncake.py
- label: Unit
  key: unit
  commands:
  - pytest tests/unit
";

/// Restored: NIXL with only the declared edits, Mooncake with two more.
const KV_RESTORED: &str = "\
group: KV
steps:
- label: NIXL tests
  key: nixl-tests
  timeout_in_minutes: 30
  source_file_dependencies:
  - vllm/kv/
  - tests/kv/
  commands:
  - bash /w/.buildkite/scripts/check-kv-connectors.sh
  - pytest -v tests/kv/test_nixl.py
- label: Mooncake tests
  key: mooncake-tests
  timeout_in_minutes: 25
  commands:
  - bash /w/.buildkite/scripts/check-kv-connectors.sh
  - pytest -v tests/kv/test_mooncake.py -x
- label: Unit
  key: unit
  commands:
  - pytest -q tests/unit
";

const EDITS: [&str; 4] = [
    "--rewrite",
    "install-kv-connectors.sh=check-kv-connectors.sh",
    "--drop-line",
    "^uv pip install ",
];

/// Steps added, disabled by one commit, other work on main, then restored
/// on a branch. Returns the disabling commit.
fn disabled_and_restored() -> (Repo, String) {
    let repo = Repo::new();
    repo.write(".buildkite/test_areas/kv.yaml", KV_BEFORE);
    repo.commit("2026-08-01", "Add the KV jobs (#100)");
    repo.write(".buildkite/test_areas/kv.yaml", KV_DISABLED);
    let disabling = repo.commit(
        "2026-09-01",
        "Disable jobs with unpinned runtime installs (#63609)",
    );
    repo.write(
        ".buildkite/test_areas/kv.yaml",
        &KV_DISABLED.replace("pytest tests/unit", "pytest -q tests/unit"),
    );
    repo.commit("2026-09-05", "Quieter unit tests (#200)");
    repo.git(&["checkout", "-q", "-b", "restore"]);
    repo.write(".buildkite/test_areas/kv.yaml", KV_RESTORED);
    (repo, disabling)
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

fn status_of<'a>(report: &'a serde_json::Value, id: &str) -> &'a str {
    report["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .find(|s| s["id"].as_object().and_then(|o| o.values().next()) == Some(&id.into()))
        .and_then(|s| s["status"].as_str())
        .unwrap_or_else(|| panic!("no step {id} in {report}"))
}

#[test]
fn restored_steps_match_their_definition_before_the_disabling_commit() {
    let (repo, disabling) = disabled_and_restored();
    // Found automatically: each step new since main, before the commit
    // that removed it (one removed outright, one commented out).
    let mut args = vec!["blocks", "--disabled-by", "auto", "--format", "json"];
    args.extend(EDITS);
    let (code, out, err) = repo.layerlock(&args);
    assert_eq!(code, 1, "{out}{err}");
    let report = json(&out);
    assert_eq!(status_of(&report, "nixl-tests"), "edited");
    assert_eq!(status_of(&report, "mooncake-tests"), "changed");
    let steps = report["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 2, "unit was never disabled: {out}");
    for step in steps {
        assert_eq!(step["disabled_by"]["id"], disabling.as_str());
    }
    let mooncake = steps
        .iter()
        .find(|s| s["id"]["key"] == "mooncake-tests")
        .expect("mooncake");
    let diff = mooncake["commands_diff"].as_str().expect("a command diff");
    assert!(
        diff.contains("-pytest -v tests/kv/test_mooncake.py\n"),
        "{diff}"
    );
    assert!(
        diff.contains("+pytest -v tests/kv/test_mooncake.py -x\n"),
        "{diff}"
    );
    assert_eq!(mooncake["fields"][0]["path"], "timeout_in_minutes");
    assert_eq!(mooncake["fields"][0]["old"], "20");
    assert_eq!(mooncake["fields"][0]["new"], "25");

    // The same with the commit named, one step at a time: NIXL passes.
    let mut args = vec![
        "blocks",
        "--disabled-by",
        &disabling,
        "--step",
        "nixl-tests",
    ];
    args.extend(EDITS);
    let (code, out, err) = repo.layerlock(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("edited as declared: key nixl-tests"), "{out}");
    assert!(
        out.contains(
            "dropped old line: uv pip install --system -r /w/requirements/kv_connectors.txt"
        ),
        "{out}"
    );

    // Without the declared edits both differ.
    let (code, out, _) = repo.layerlock(&["blocks", "--disabled-by", &disabling]);
    assert_eq!(code, 1);
    assert!(out.contains("2 steps compared: 2 changed"), "{out}");
}

#[test]
fn the_markdown_report_is_a_pull_request_comment() {
    let (repo, disabling) = disabled_and_restored();
    let mut args = vec![
        "blocks",
        "--disabled-by",
        &disabling,
        "--format",
        "markdown",
    ];
    args.extend(EDITS);
    let (code, out, err) = repo.layerlock(&args);
    assert_eq!(code, 1, "{err}");
    assert!(out.starts_with("### layerlock blocks\n"), "{out}");
    assert!(out.contains("| `mooncake-tests` | ❌ changed |"), "{out}");
    assert!(
        out.contains("| `nixl-tests` | ✅ edited as declared |"),
        "{out}"
    );
    assert!(out.contains("(#63609)"), "{out}");
    assert!(out.contains("````diff\n--- before\n+++ now\n"), "{out}");
}

#[test]
fn expected_edits_come_from_the_config_too() {
    let (repo, disabling) = disabled_and_restored();
    repo.write(
        "layerlock.toml",
        "[blocks]\nrewrite = [\"install-kv-connectors.sh=check-kv-connectors.sh\"]\ndrop-line = ['^uv pip install ']\n",
    );
    let (code, out, err) = repo.layerlock(&[
        "blocks",
        "--disabled-by",
        &disabling,
        "--step",
        "nixl-tests",
    ]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn since_compares_every_job_of_every_ci_system() {
    let repo = Repo::new();
    repo.write(
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n    - uses: actions/checkout@v4\n    - run: pytest\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n    - run: ruff check\n",
    );
    repo.write(
        ".gitlab-ci.yml",
        "stages: [test]\nunit:\n  stage: test\n  script:\n  - make test\n",
    );
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- label: Build\n  key: build\n  command: make\n",
    );
    let base = repo.commit("2026-08-01", "CI");
    repo.write(
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-24.04\n    steps:\n    - uses: actions/checkout@v4\n    - run: pytest -x\n  docs:\n    runs-on: ubuntu-latest\n    steps:\n    - run: mkdocs build\n",
    );
    let (code, out, err) = repo.layerlock(&["blocks", "--since", &base]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("changed: job test"), "{out}");
    assert!(
        out.contains("runs-on: \"ubuntu-latest\" → \"ubuntu-24.04\""),
        "{out}"
    );
    assert!(out.contains("added: job docs"), "{out}");
    assert!(out.contains("removed: job lint"), "{out}");
    assert!(
        out.contains("5 steps compared: 1 changed, 2 unchanged, 1 added, 1 removed"),
        "{out}"
    );
    // Unchanged jobs are counted, not listed, when comparing everything.
    assert!(!out.contains("unchanged: job unit"), "{out}");
    // Limited to one file.
    let (code, out, _) = repo.layerlock(&["blocks", "--since", &base, ".gitlab-ci.yml"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 step compared: 1 unchanged"), "{out}");
}

#[test]
fn unreadable_history_and_bad_revisions_fail_closed() {
    let repo = Repo::new();
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: a\n  command: [unclosed\n",
    );
    let base = repo.commit("2026-08-01", "broken pipeline");
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: a\n  command: make\n",
    );
    let (code, _, err) = repo.layerlock(&["blocks", "--since", &base]);
    assert_eq!(
        code, 2,
        "a pipeline that cannot be read is not a pass: {err}"
    );
    assert!(err.contains(".buildkite/pipeline.yml at "), "{err}");
    assert!(err.contains("not valid YAML"), "{err}");

    // A revision that is not one, even when it looks like an option.
    let (code, _, err) = repo.layerlock(&["blocks", "--since=--output=owned.txt"]);
    assert_eq!(code, 2);
    assert!(err.contains("is not a commit in this repository"), "{err}");
    assert!(!repo.path().join("owned.txt").exists());

    // A directory outside the repository is refused.
    let (code, _, err) = repo.layerlock(&["blocks", "--since", &base, "/"]);
    assert_eq!(code, 2);
    assert!(err.contains("outside the repository"), "{err}");

    // Not a repository at all.
    let work = Work::new();
    let (code, _, err) = run(work.layerlock(&["blocks", "--since", "HEAD"]));
    assert_eq!(code, 2);
    assert!(err.contains("not inside a git work tree"), "{err}");
}
