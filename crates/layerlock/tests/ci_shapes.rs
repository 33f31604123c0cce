//! Shapes of real CI trees that audit, tether and steps must get right: one
//! small repository per shape, written by the test, with every finding
//! checked at its exact file, line and column.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use common::{Work, run};

/// A finding as (path, line, column, rule, class).
type Found = (String, u64, u64, String, String);

fn repo(files: &[(&str, &str)]) -> Work {
    let work = Work::new();
    for (path, text) in files {
        work.write(path, text);
    }
    work
}

fn audit(work: &Work, extra: &[&str]) -> (Vec<Found>, serde_json::Value) {
    let mut cmd = work.layerlock(&["audit", ".", "--format", "json"]);
    cmd.args(extra);
    let (code, stdout, stderr) = run(cmd);
    assert!(code == 0 || code == 1, "exit {code}: {stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let found = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["column"].as_u64().unwrap(),
                f["rule"].as_str().unwrap().to_string(),
                f["class"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    (found, report)
}

fn f(path: &str, line: u64, column: u64, rule: &str, class: &str) -> Found {
    (
        path.to_string(),
        line,
        column,
        rule.to_string(),
        class.to_string(),
    )
}

const IMAGE: &str = "image-build-install";
const JOB: &str = "job-time-install";

#[test]
fn dockerfile_continuations_keep_every_word_and_exact_positions() {
    let work = repo(&[(
        "Dockerfile",
        "FROM python:3.12\n\
         RUN pip install \\\n    foo bar\n\
         RUN pip install foo==1.0 \\\n    bar\n\
         RUN apt-get update \\\n    # tools come next\n\n    && pip install a==1 \\\n    && uv pip install --system b\n\
         RUN pip install c\n",
    )]);
    let (found, _) = audit(&work, &[]);
    assert_eq!(
        found,
        vec![
            f("Dockerfile", 2, 5, IMAGE, "unpinned"),
            f("Dockerfile", 4, 5, IMAGE, "unpinned"),
            f("Dockerfile", 9, 8, IMAGE, "pinned"),
            f("Dockerfile", 10, 8, IMAGE, "unpinned"),
            f("Dockerfile", 11, 5, IMAGE, "unpinned"),
        ]
    );
}

#[test]
fn dockerfile_copies_map_image_paths_back_to_the_build_context() {
    let work = repo(&[
        ("requirements/test.txt", "a==1.0\nb==2.0\n"),
        ("tools/x.sh", "pip install q==1.0\n"),
        (
            "docker/Dockerfile.ci",
            "FROM python:3.12 AS deps\n\
             COPY requirements/test.txt /opt/ci/t.txt\n\
             COPY tools/x.sh /opt/ci/x.sh\n\
             RUN pip install -r /opt/ci/t.txt\n\
             RUN bash /opt/ci/x.sh\n\
             FROM python:3.12\n\
             COPY --from=deps /opt/ci/t.txt /t.txt\n\
             RUN pip install -r /t.txt\n\
             RUN --mount=type=bind,source=requirements,target=/r pip install -r /r/test.txt\n\
             WORKDIR /app\n\
             COPY . .\n\
             RUN pip install -r requirements/test.txt\n\
             RUN pip install --require-hashes -r /nowhere.txt\n\
             RUN pip install /install/*.whl\n",
        ),
    ]);
    let (found, report) = audit(&work, &[]);
    let df = "docker/Dockerfile.ci";
    assert_eq!(
        found,
        vec![
            f(df, 4, 5, IMAGE, "pinned"),
            f(df, 8, 5, IMAGE, "pinned"),
            f(df, 9, 53, IMAGE, "pinned"),
            f(df, 12, 5, IMAGE, "pinned"),
            f(df, 13, 5, IMAGE, "hash-locked"),
            f(df, 14, 5, IMAGE, "unpinned"),
            f("tools/x.sh", 1, 1, IMAGE, "pinned"),
        ],
        "{report:#}"
    );
}

#[test]
fn commands_handed_to_runner_scripts_and_containers_are_audited() {
    let work = repo(&[
        (
            ".buildkite/test.yaml",
            "steps:\n  - label: intel\n    key: intel\n    commands:\n      - bash ci/run-intel-test.sh 'pip install av && pytest -v tests/a'\n      - bash ci/run-eval.sh \"uv pip install --system lm-eval\"\n      - docker exec \"$C\" pip install x\n      - docker run --rm img:1 pip install y==1.0\n      - docker run --rm img:1 bash -c 'pip install z'\n",
        ),
        (
            "ci/run-intel-test.sh",
            "#!/bin/bash\nset -ex\nimage=intel:ci\ndocker run --rm --device /dev/dri \"$image\" bash -c \"$*\"\n",
        ),
        ("ci/run-eval.sh", "#!/bin/bash\ncmd=\"$1\"\neval \"$cmd\"\n"),
    ]);
    let (found, report) = audit(&work, &[]);
    let yaml = ".buildkite/test.yaml";
    assert_eq!(
        found,
        vec![
            f(yaml, 5, 36, JOB, "unpinned"),
            f(yaml, 6, 30, JOB, "unpinned"),
            f(yaml, 7, 26, JOB, "unpinned"),
            f(yaml, 8, 31, JOB, "pinned"),
            f(yaml, 9, 40, JOB, "unpinned"),
        ],
        "{report:#}"
    );
    let via: Vec<&str> = report["findings"][0]["via"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(via, vec!["ci/run-intel-test.sh:4"]);
}

/// How many scripts the shared chain has: `ci/c0.sh` … `ci/c39.sh`, each
/// calling the next.
const CHAIN_SCRIPTS: usize = 40;

/// A finding as (path, line, column, job, class, via).
type Seen = (String, u64, u64, String, String, Vec<String>);

/// The repository for the shared-chain test: a chain of scripts, six
/// pipelines that run it from its start, and four that start at its tenth
/// script with a variable the scripts read.
fn shared_chain_repo() -> Work {
    let mut files: Vec<(String, String)> = Vec::new();
    for i in 0..6 {
        files.push((
            format!(".buildkite/head{i}.yml"),
            format!("steps:\n  - label: head {i}\n    key: head-{i}\n    commands:\n      - bash ci/c0.sh\n"),
        ));
    }
    for i in 0..4 {
        files.push((
            format!(".buildkite/mid{i}.yml"),
            format!("steps:\n  - label: mid {i}\n    key: mid-{i}\n    env:\n      PKG_SUFFIX: \"==1.{i}\"\n    commands:\n      - bash ci/c10.sh\n"),
        ));
    }
    for j in 0..CHAIN_SCRIPTS {
        let mut text = format!("#!/bin/bash\npip install \"pkg{j}$PKG_SUFFIX\"\n");
        if j + 1 < CHAIN_SCRIPTS {
            text.push_str(&format!("bash ci/c{}.sh\n", j + 1));
        }
        if j == 5 {
            // A function that runs its arguments: one more call on the way.
            text.push_str("retry() { \"$@\"; }\nretry pip install flaky\n");
        }
        files.push((format!("ci/c{j}.sh"), text));
    }
    let work = Work::new();
    for (path, text) in &files {
        work.write(path, text);
    }
    work
}

/// The via chain of a call reached from `pipeline` through scripts
/// `ci/c{from}.sh` up to (not including) `ci/c{to}.sh`.
fn shared_chain_via(pipeline: String, from: usize, to: usize) -> Vec<String> {
    std::iter::once(pipeline)
        .chain((from..to).map(|m| format!("ci/c{m}.sh:3")))
        .collect()
}

/// Every finding of an audit report as [`Seen`], sorted.
fn seen_findings(report: &serde_json::Value) -> Vec<Seen> {
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let mut found: Vec<Seen> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["column"].as_u64().unwrap(),
                f["job"].as_str().unwrap().to_string(),
                f["class"].as_str().unwrap().to_string(),
                strings(&f["via"]),
            )
        })
        .collect();
    found.sort();
    found
}

/// What each pipeline of [`shared_chain_repo`] must be told, sorted.
fn shared_chain_expected() -> Vec<Seen> {
    let mut expected: Vec<Seen> = Vec::new();
    for i in 0..6 {
        let job = format!("head-{i}");
        let pipeline = format!(".buildkite/head{i}.yml:5");
        // The CI file and c0..c30 make 32 calls: c31 is the last followed.
        for j in 0..=31 {
            let via = shared_chain_via(pipeline.clone(), 0, j);
            expected.push((
                format!("ci/c{j}.sh"),
                2,
                1,
                job.clone(),
                // `$PKG_SUFFIX` is set by no pipeline of these.
                "run-time".into(),
                via,
            ));
        }
        let mut via = shared_chain_via(pipeline, 0, 5);
        via.push("ci/c5.sh:5".into());
        expected.push(("ci/c5.sh".into(), 5, 7, job, "unpinned".into(), via));
    }
    for i in 0..4 {
        let job = format!("mid-{i}");
        let pipeline = format!(".buildkite/mid{i}.yml:7");
        for j in 10..CHAIN_SCRIPTS {
            let via = shared_chain_via(pipeline.clone(), 10, j);
            expected.push((
                format!("ci/c{j}.sh"),
                2,
                1,
                job.clone(),
                "pinned".into(),
                via,
            ));
        }
    }
    expected.sort();
    expected
}

/// Issue 14: every pipeline walked the whole chain of scripts it called
/// again; now each script is analysed once per context and replayed for
/// every path. What each pipeline is told must not change: all of its
/// findings, at their places, with its job, its own via chain and its own
/// variables, and the depth limit counted from its own start.
#[test]
fn a_script_chain_shared_by_many_pipelines_is_reported_for_each_of_them() {
    let work = shared_chain_repo();
    let (code, stdout, stderr) = run(work.layerlock(&["audit", ".", "--format", "json"]));
    // Exit 2: the chain is deeper than the walker follows from c0.
    assert_eq!(code, 2, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let found = seen_findings(&report);
    let expected = shared_chain_expected();
    assert_eq!(found.len(), expected.len());
    assert_eq!(found, expected);
    // Each pipeline that starts at c0 hits the limit once, with its chain.
    let errors: Vec<(String, u64, String)> = report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["path"].as_str().unwrap().to_string(),
                e["line"].as_u64().unwrap(),
                e["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, u64, String)> = (0..6)
        .map(|i| {
            let via = shared_chain_via(format!(".buildkite/head{i}.yml:5"), 0, 31).join(" -> ");
            (
                "ci/c31.sh".to_string(),
                3,
                format!(
                    "scripts call scripts more than 32 deep here ({via}); the rest was not followed"
                ),
            )
        })
        .collect();
    assert_eq!(errors, expected);
}

#[test]
fn dockerfiles_written_and_built_by_a_job_are_job_time_installs() {
    let work = repo(&[(
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: |\n          cat <<EOF > Dockerfile.test\n          FROM python:3.12\n          RUN pip install pytest\n          EOF\n          docker build -f Dockerfile.test .\n          docker build -t x -f - . <<'EOF'\n          FROM python:3.12\n          RUN pip install \\\n              ruff==0.6.0\n          EOF\n",
    )]);
    let (found, report) = audit(&work, &[]);
    let yaml = ".github/workflows/ci.yml";
    assert_eq!(
        found,
        vec![
            f(yaml, 9, 15, JOB, "unpinned"),
            f(yaml, 14, 15, JOB, "pinned"),
        ],
        "{report:#}"
    );
}

#[test]
fn piped_installers_and_dotted_paths_are_not_misread() {
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: curl -LsSf https://sh.rustup.rs | sh -s -- -y --profile minimal\n      - run: bash tests/../tools/x.sh\n",
        ),
        ("tools/x.sh", "pip install q\n"),
        ("tests/conftest.py", ""),
    ]);
    let (found, report) = audit(&work, &[]);
    assert_eq!(
        found,
        vec![f("tools/x.sh", 1, 1, JOB, "unpinned")],
        "{report:#}"
    );
    assert_eq!(
        report["findings"][0]["via"][0].as_str(),
        Some(".github/workflows/ci.yml:7")
    );
}

#[test]
fn scripts_outside_the_root_are_not_followed() {
    let outside = Work::new();
    outside.write("evil.sh", "pip install secret-thing\n");
    let work = repo(&[(
        ".github/workflows/ci.yml",
        &format!(
            "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: bash {}/evil.sh\n",
            outside.path().display()
        ),
    )]);
    std::os::unix::fs::symlink(outside.path().join("evil.sh"), work.path().join("link.sh"))
        .unwrap();
    work.write(
        ".buildkite/p.yaml",
        "steps:\n  - key: a\n    command: bash link.sh\n",
    );
    let (found, report) = audit(&work, &[]);
    assert!(
        found
            .iter()
            .all(|(_, _, _, rule, _)| rule == "script-not-found"),
        "{report:#}"
    );
    assert!(!report.to_string().contains("secret-thing"));
}

fn tether(work: &Work, extra: &[&str]) -> (i32, String) {
    let mut cmd = work.layerlock(&["tether", "--all"]);
    cmd.args(extra);
    let (code, stdout, stderr) = run(cmd);
    (code, format!("{stdout}{stderr}"))
}

#[test]
fn tether_follows_launchers_globs_root_variables_and_runner_strings() {
    let mut files: Vec<(&str, &str)> = vec![
        (
            ".buildkite/test.yaml",
            "steps:\n  - key: a\n    commands:\n      - torchrun --nproc-per-node 2 tests/dist/test_d.py\n      - pytest tests/kernels/test_fused_*.py\n      - bash ci/run.sh\n      - bash ci/runner.sh 'pytest -v tests/r/test_r.py'\n",
        ),
        (
            "ci/run.sh",
            "GIT_ROOT=$(git rev-parse --show-toplevel)\npytest \"${GIT_ROOT}\"/tests/x/test_x.py\npytest $REPO_ROOT/tests/y/test_y.py\npytest \"$(git rev-parse --show-toplevel)\"/tests/z/test_z.py\nHERE=$(cd \"$(dirname \"$0\")/..\" && pwd)\npytest \"$HERE/tests/w\"\n",
        ),
        ("ci/runner.sh", "docker run --rm img bash -c \"$1\"\n"),
    ];
    let tests = [
        "tests/dist/test_d.py",
        "tests/kernels/test_fused_a.py",
        "tests/kernels/test_fused_b.py",
        "tests/x/test_x.py",
        "tests/y/test_y.py",
        "tests/z/test_z.py",
        "tests/w/test_w.py",
        "tests/r/test_r.py",
        "tests/kernels/test_other.py",
    ];
    for t in tests {
        files.push((t, "def test_x():\n    pass\n"));
    }
    let work = repo(&files);
    let (code, out) = tether(&work, &["--format", "json"]);
    assert_eq!(code, 1, "{out}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        report["untethered"],
        serde_json::json!(["tests/kernels/test_other.py"]),
        "{report:#}"
    );
}

#[test]
fn tether_says_what_to_configure_when_nothing_resolves() {
    let mut files: Vec<(String, String)> = vec![(
        ".buildkite/test.yaml".to_string(),
        "steps:\n  - key: a\n    commands:\n      - pytest -v v1/core\n      - pytest /vllm-workspace/tests/v1/engine\n"
            .to_string(),
    )];
    for i in 0..30 {
        files.push((
            format!("tests/v1/area{i}/test_{i}.py"),
            "def test_x():\n    pass\n".to_string(),
        ));
    }
    files.push(("tests/v1/core/test_core.py".to_string(), String::new()));
    files.push(("tests/v1/engine/test_engine.py".to_string(), String::new()));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let work = repo(&refs);
    let (code, out) = tether(&work, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("default-working-dir = \"tests\""), "{out}");
    assert!(out.contains("path-map = [\"/vllm-workspace=.\"]"), "{out}");
    assert!(out.contains("and 22 more untethered"), "{out}");
}

#[test]
fn steps_keys_are_unique_within_each_pipeline_and_paths_are_from_the_cwd() {
    let work = repo(&[
        (
            ".buildkite/ci_config.yaml",
            "name: main\njob_dirs:\n  - \".buildkite/test_areas\"\n",
        ),
        (
            ".buildkite/ci_config_intel.yaml",
            "name: intel\njob_dirs:\n  - \".buildkite/intel_jobs\"\n",
        ),
        (
            ".buildkite/test_areas/a.yaml",
            "steps:\n  - key: basic\n    command: x\n  - key: other\n    command: y\n",
        ),
        (
            ".buildkite/test_areas/b.yaml",
            "steps:\n  - key: other\n    command: z\n",
        ),
        (
            ".buildkite/intel_jobs/a.yaml",
            "steps:\n  - key: basic\n    command: x\n",
        ),
    ]);
    let (code, stdout, _) = run(work.layerlock(&["steps"]));
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains(".buildkite/test_areas/b.yaml:2:10: key `other` is already used at .buildkite/test_areas/a.yaml:4"),
        "{stdout}"
    );
    assert!(!stdout.contains("`basic`"), "{stdout}");
    let (code, stdout, _) = run(work.layerlock(&["steps", ".buildkite/intel_jobs"]));
    assert_eq!(code, 0, "{stdout}");
    let (_, stdout, _) = run(work.layerlock(&["steps", ".buildkite/test_areas"]));
    assert!(
        stdout.starts_with(".buildkite/test_areas/b.yaml:2:10"),
        "{stdout}"
    );
}

#[test]
fn functions_that_run_their_arguments_and_inherited_variables_are_followed() {
    let work = repo(&[
        (
            ".github/workflows/ci.yml",
            "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: bash ci/install.sh\n",
        ),
        (
            "ci/install.sh",
            "#!/bin/bash\nretry() {\n  local cmd=\"$@\"\n  eval \"$cmd\"\n}\nretry docker exec ci pip install httpx\nexport PIP_CMD=\"uv pip\"\nbash ci/cache.sh\n",
        ),
        ("ci/cache.sh", "$PIP_CMD install \"flashinfer==${VER}\"\n"),
    ]);
    let (found, report) = audit(&work, &[]);
    assert_eq!(
        found,
        vec![
            f("ci/cache.sh", 1, 1, JOB, "run-time"),
            f("ci/install.sh", 6, 22, JOB, "unpinned"),
        ],
        "{report:#}"
    );
}

#[test]
fn dockerfile_args_and_env_expand_as_docker_expands_them() {
    let work = repo(&[(
        "Dockerfile",
        "ARG FLASHINFER_VERSION=0.6.14\nARG PIP_INSTALL=\"python3 -m pip install --no-cache-dir\"\nFROM base AS one\nARG FLASHINFER_VERSION\nENV FI=${FLASHINFER_VERSION}\nRUN pip install flashinfer-cubin==${FI}\nFROM base\nARG PIP_INSTALL\nRUN ${PIP_INSTALL} torch==2.5.0\n",
    )]);
    let (found, report) = audit(&work, &[]);
    assert_eq!(
        found,
        vec![
            f("Dockerfile", 6, 5, IMAGE, "pinned"),
            f("Dockerfile", 9, 5, IMAGE, "pinned"),
        ],
        "{report:#}"
    );
    let message = report["findings"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("`flashinfer-cubin==0.6.14` is pinned"),
        "{message}"
    );
}

#[test]
fn folded_commands_and_container_environments_keep_exact_lines() {
    let work = repo(&[
        (
            ".buildkite/intel.yaml",
            "steps:\n  - key: misc\n    commands:\n      - >-\n        bash ci/run-intel.sh\n        'export A=1 &&\n        pip install tblib==3.1.0 &&\n        pytest -v tests/x'\n",
        ),
        (
            "ci/run-intel.sh",
            "#!/bin/bash\ncommands=\"$*\"\ndocker run --rm -e \"CMDS=${commands}\" img bash -c 'set -e; eval \"$CMDS\"'\n",
        ),
    ]);
    let (found, report) = audit(&work, &[]);
    assert_eq!(
        found,
        vec![f(".buildkite/intel.yaml", 7, 9, JOB, "pinned")],
        "{report:#}"
    );
}

#[test]
fn runner_arguments_kept_in_arrays_after_shift_are_run() {
    let mut files: Vec<(&str, &str)> = vec![
        (
            ".buildkite/ci_config.yaml",
            "job_dirs:\n  - \".buildkite/test_areas\"\n",
        ),
        (
            ".buildkite/test_areas/dist.yaml",
            "steps:\n  - key: two-nodes\n    commands:\n      - ./ci/multi-node.sh /workspace/tests 2 img \"torchrun x.py && pytest -v distributed/test_a.py\" \"VLLM_MULTI_NODE=1 pytest -v distributed/test_b.py\"\n      - bash ci/sweep.sh\n",
        ),
        (
            ".buildkite/test-amd.yaml",
            "steps:\n  - label: amd\n    commands:\n      - pytest -v tests/rocm/\n",
        ),
        (
            "ci/multi-node.sh",
            "#!/bin/bash\nWORKING_DIR=$1\nshift 3\nCOMMANDS=(\"$@\")\nfor node in 0 1; do\n  docker exec \"node$node\" /bin/bash -c \"cd $WORKING_DIR ; ${COMMANDS[$node]}\"\ndone\n",
        ),
        (
            "ci/sweep.sh",
            "#!/bin/bash\ncfg=(A=1 B=2)\nenv \"${cfg[@]}\" bash tests/run_spec.sh\n",
        ),
        ("tests/run_spec.sh", "pytest -v tests/spec/test_spec.py\n"),
    ];
    for t in [
        "tests/distributed/test_a.py",
        "tests/distributed/test_b.py",
        "tests/spec/test_spec.py",
        "tests/rocm/test_r.py",
        "tests/other/test_o.py",
    ] {
        files.push((t, ""));
    }
    let work = repo(&files);
    std::fs::write(
        work.path().join("layerlock.toml"),
        "[tether]\npath-map = [\"/workspace=.\"]\n",
    )
    .unwrap();
    let (code, out) = tether(&work, &["--format", "json"]);
    assert_eq!(code, 1, "{out}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        report["untethered"],
        serde_json::json!(["tests/other/test_o.py"]),
        "{report:#}"
    );
}

#[test]
fn tether_with_no_test_files_fails_closed() {
    let work = repo(&[(
        ".buildkite/p.yaml",
        "steps:\n  - key: a\n    command: pytest\n",
    )]);
    let (code, out) = tether(&work, &[]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("no test files"), "{out}");
}
