//! The CI files a walk reads and the scripts their jobs run: GitHub
//! Actions, Buildkite, GitLab, and which files are CI files at all.

use layerlock_ci::Phase;

use crate::support::tree;
use crate::{WF, step_and, workflow};

#[test]
fn a_script_called_from_a_workflow_step_is_followed() {
    let t = step_and("bash ci/test.sh", &[("ci/test.sh", "pip install x\n")]);
    let found = t.walk();
    found.assert_reach("bash ci/test.sh", &[".github/workflows/ci.yml:6"]);
    found.assert_reach(
        "pip install x",
        &["ci/test.sh:1 via .github/workflows/ci.yml:6"],
    );
    let pip = found.one("pip install x");
    assert_eq!(pip.job.as_deref(), Some("test"));
    assert_eq!(pip.seen.phase, Phase::JobTime);
    assert_eq!(found.files(), [WF, "ci/test.sh"]);
}

#[test]
fn a_command_of_a_block_run_step_is_reported_at_its_own_line_and_column() {
    let t = tree(&[(
        WF,
        &workflow("      - run: |\n          echo hi\n          pip install x\n"),
    )]);
    let found = t.walk();
    found.assert_reach("pip install x", &[".github/workflows/ci.yml:8"]);
    let pip = found.one("pip install x");
    assert_eq!(
        (pip.seen.column, pip.seen.text.as_str()),
        (11, "pip install x")
    );
}

#[test]
fn a_step_working_directory_is_where_its_script_is_found_and_run() {
    let t = tree(&[
        (
            WF,
            &workflow("      - run: ./test.sh\n        working-directory: sub\n"),
        ),
        ("sub/test.sh", "#!/bin/bash\npip install x\n"),
    ]);
    let found = t.walk();
    found.assert_reach(
        "pip install x",
        &["sub/test.sh:2 via .github/workflows/ci.yml:6"],
    );
    assert_eq!(found.one("pip install x").seen.cwd.as_deref(), Some("sub"));
}

#[test]
fn a_job_default_working_directory_applies_to_its_run_steps() {
    let text = "on: push\njobs:\n  test:\n    defaults:\n      run:\n        working-directory: sub\n    steps:\n      - run: bash test.sh\n";
    let t = tree(&[(WF, text), ("sub/test.sh", "pip install x\n")]);
    t.walk().assert_reach(
        "pip install x",
        &["sub/test.sh:1 via .github/workflows/ci.yml:8"],
    );
}

#[test]
fn a_literal_matrix_runs_the_job_once_for_each_value() {
    let text = "on: push\njobs:\n  test:\n    strategy:\n      matrix:\n        suite: [unit, e2e]\n    steps:\n      - run: bash ci/${{ matrix.suite }}.sh\n";
    let t = tree(&[
        (WF, text),
        ("ci/unit.sh", "pip install unit\n"),
        ("ci/e2e.sh", "pip install e2e\n"),
    ]);
    let found = t.walk();
    found.assert_reach(
        "pip install unit",
        &["ci/unit.sh:1 via .github/workflows/ci.yml:8"],
    );
    found.assert_reach(
        "pip install e2e",
        &["ci/e2e.sh:1 via .github/workflows/ci.yml:8"],
    );
}

#[test]
fn a_composite_action_runs_its_steps_as_a_job_named_after_it() {
    let action = "name: setup\nruns:\n  using: composite\n  steps:\n    - run: bash ci/setup.sh\n      shell: bash\n";
    let t = tree(&[
        (".github/actions/setup/action.yml", action),
        ("ci/setup.sh", "pip install x\n"),
    ]);
    let found = t.walk();
    found.assert_reach(
        "pip install x",
        &["ci/setup.sh:1 via .github/actions/setup/action.yml:5"],
    );
    assert_eq!(found.one("pip install x").job.as_deref(), Some("setup"));
}

#[test]
fn an_action_input_named_like_a_command_runs_as_a_run_step_would() {
    let t = tree(&[
        (
            WF,
            &workflow(
                "      - uses: nick-fields/retry@v3\n        with:\n          command: bash ci/test.sh\n",
            ),
        ),
        ("ci/test.sh", "pip install x\n"),
    ]);
    t.walk().assert_reach(
        "pip install x",
        &["ci/test.sh:1 via .github/workflows/ci.yml:8"],
    );
}

#[test]
fn a_step_variable_names_the_script_the_step_runs() {
    let t = tree(&[
        (
            WF,
            &workflow(
                "      - run: bash \"$SCRIPT\"\n        env:\n          SCRIPT: ci/test.sh\n",
            ),
        ),
        ("ci/test.sh", "pip install x\n"),
    ]);
    t.walk().assert_reach(
        "pip install x",
        &["ci/test.sh:1 via .github/workflows/ci.yml:6"],
    );
}

#[test]
fn a_workflow_variable_is_what_a_command_of_a_called_script_sees() {
    let text = "on: push\nenv:\n  PIP_INDEX_URL: https://example.org/simple\njobs:\n  test:\n    steps:\n      - run: bash ci/test.sh\n";
    let t = tree(&[(WF, text), ("ci/test.sh", "printenv PIP_INDEX_URL\n")]);
    let found = t.walk();
    let printenv = found.one("printenv PIP_INDEX_URL");
    assert_eq!(
        printenv.seen.looked_up,
        [(
            "PIP_INDEX_URL".to_string(),
            Some("https://example.org/simple".to_string())
        )]
    );
    assert_eq!(printenv.via, [".github/workflows/ci.yml:7"]);
}

#[test]
fn an_image_built_by_build_push_action_is_read_as_a_dockerfile() {
    let t = tree(&[
        (
            WF,
            &workflow(
                "      - uses: docker/build-push-action@v6\n        with:\n          file: docker/ci.df\n          context: .\n",
            ),
        ),
        ("docker/ci.df", "FROM python\nRUN pip install x\n"),
    ]);
    let found = t.walk();
    found.assert_reach("pip install x", &["docker/ci.df:2"]);
    assert_eq!(found.one("pip install x").seen.phase, Phase::ImageBuild);
}

#[test]
fn a_buildkite_command_step_runs_its_script_as_the_steps_job() {
    let t = tree(&[
        (
            ".buildkite/pipeline.yml",
            "steps:\n  - label: Unit tests\n    key: unit\n    command: bash ci/test.sh\n",
        ),
        ("ci/test.sh", "pip install x\n"),
    ]);
    let found = t.walk();
    found.assert_reach(
        "pip install x",
        &["ci/test.sh:1 via .buildkite/pipeline.yml:4"],
    );
    assert_eq!(found.one("pip install x").job.as_deref(), Some("unit"));
}

#[test]
fn each_line_of_a_buildkite_commands_list_runs() {
    let t = tree(&[
        (
            ".buildkite/pipeline.yml",
            "steps:\n  - label: test\n    commands:\n      - bash ci/a.sh\n      - bash ci/b.sh\n",
        ),
        ("ci/a.sh", "pip install a\n"),
        ("ci/b.sh", "pip install b\n"),
    ]);
    let found = t.walk();
    found.assert_reach(
        "pip install a",
        &["ci/a.sh:1 via .buildkite/pipeline.yml:4"],
    );
    found.assert_reach(
        "pip install b",
        &["ci/b.sh:1 via .buildkite/pipeline.yml:5"],
    );
}

#[test]
fn the_docker_plugin_command_of_a_buildkite_step_runs() {
    let text = "steps:\n  - label: test\n    plugins:\n      - docker#v5.9.0:\n          image: python:3.12\n          command: [\"bash\", \"ci/test.sh\"]\n";
    let t = tree(&[
        (".buildkite/pipeline.yml", text),
        ("ci/test.sh", "pip install x\n"),
    ]);
    t.walk().assert_reach(
        "pip install x",
        &["ci/test.sh:1 via .buildkite/pipeline.yml:6"],
    );
}

#[test]
fn a_buildkite_pipeline_variable_names_the_script_a_step_runs() {
    let text = "env:\n  SCRIPT: ci/test.sh\nsteps:\n  - label: test\n    command: bash $SCRIPT\n";
    let t = tree(&[
        (".buildkite/pipeline.yml", text),
        ("ci/test.sh", "pip install x\n"),
    ]);
    t.walk().assert_reach(
        "pip install x",
        &["ci/test.sh:1 via .buildkite/pipeline.yml:5"],
    );
}

#[test]
fn a_gitlab_job_script_is_followed_as_the_jobs() {
    let t = tree(&[
        (
            ".gitlab-ci.yml",
            "test:\n  script:\n    - bash ci/test.sh\n",
        ),
        ("ci/test.sh", "pip install x\n"),
    ]);
    let found = t.walk();
    found.assert_reach("pip install x", &["ci/test.sh:1 via .gitlab-ci.yml:3"]);
    assert_eq!(found.one("pip install x").job.as_deref(), Some("test"));
}

#[test]
fn a_gitlab_before_script_runs_with_the_job() {
    let t = tree(&[(
        ".gitlab-ci.yml",
        "test:\n  before_script:\n    - pip install a\n  script:\n    - pip install b\n",
    )]);
    let found = t.walk();
    found.assert_reach("pip install a", &[".gitlab-ci.yml:3"]);
    found.assert_reach("pip install b", &[".gitlab-ci.yml:5"]);
    assert_eq!(found.one("pip install a").job.as_deref(), Some("test"));
}

#[test]
fn a_gitlab_job_runs_the_script_of_the_template_it_extends() {
    let t = tree(&[(
        ".gitlab-ci.yml",
        ".base:\n  script:\n    - pip install x\ntest:\n  extends: .base\n",
    )]);
    let found = t.walk();
    found.assert_reach("pip install x", &[".gitlab-ci.yml:3"]);
    assert_eq!(found.one("pip install x").job.as_deref(), Some("test"));
}

#[test]
fn a_gitlab_job_runs_what_a_yaml_anchor_merges_into_it() {
    let t = tree(&[(
        ".gitlab-ci.yml",
        ".defaults: &defaults\n  before_script:\n    - pip install x\ntest:\n  <<: *defaults\n  script:\n    - echo hi\n",
    )]);
    let found = t.walk();
    found.assert_reach("pip install x", &[".gitlab-ci.yml:3"]);
    assert_eq!(found.one("pip install x").job.as_deref(), Some("test"));
}

#[test]
fn a_file_the_gitlab_pipeline_includes_is_read_once_with_it() {
    let t = tree(&[
        (".gitlab-ci.yml", "include:\n  - local: .gitlab/jobs.yml\n"),
        (
            ".gitlab/jobs.yml",
            "test:\n  script:\n    - pip install x\n",
        ),
    ]);
    let found = t.walk();
    found.assert_reach("pip install x", &[".gitlab/jobs.yml:3"]);
    assert_eq!(found.files(), [".gitlab-ci.yml", ".gitlab/jobs.yml"]);
}

#[test]
fn a_gitlab_include_of_another_project_is_noted_at_its_line() {
    let t = tree(&[(
        ".gitlab-ci.yml",
        "include:\n  - project: group/shared\n    file: /ci.yml\ntest:\n  script:\n    - echo hi\n",
    )]);
    t.walk().assert_not_followed(&[
        ".gitlab-ci.yml:2: the include `project: group/shared /ci.yml` is not in this repository, so its jobs and templates were not read",
    ]);
}

#[test]
fn a_gitlab_job_extending_a_template_no_file_defines_is_noted() {
    let t = tree(&[(
        ".gitlab-ci.yml",
        "test:\n  extends: .nowhere\n  script:\n    - echo hi\n",
    )]);
    t.walk().assert_not_followed(&[
        ".gitlab-ci.yml:2: job `test` extends `.nowhere`, which no file of this pipeline defines (an include that was not read?), so what it inherits was not read",
    ]);
}

#[test]
fn yaml_that_is_not_a_ci_file_is_not_read() {
    let t = tree(&[
        ("data/config.yml", "name: x\nvalues: [1, 2]\n"),
        ("ci/test.sh", "pip install x\n"),
    ]);
    let found = t.walk();
    assert!(found.reached.is_empty(), "{}", found.dump());
    assert!(found.files().is_empty());
}

#[test]
fn a_workflow_that_does_not_parse_is_reported_and_the_walk_goes_on() {
    let t = tree(&[
        (".github/workflows/broken.yml", "on: [push\njobs: {\n"),
        (WF, &workflow("      - run: pip install x\n")),
    ]);
    let found = t.walk();
    found.assert_reach("pip install x", &[".github/workflows/ci.yml:6"]);
    assert_eq!(found.errors().len(), 1, "{}", found.dump());
    assert!(found.errors()[0].starts_with(".github/workflows/broken.yml:"));
}

#[test]
fn a_shell_script_named_as_a_target_is_walked_on_its_own() {
    let t = tree(&[("ci/test.sh", "pip install x\n")]);
    let options = layerlock_walk::ScanOptions {
        targets: vec![t.path("ci/test.sh")],
        ..t.options()
    };
    let found = t.walk_with(&options);
    found.assert_reach("pip install x", &["ci/test.sh:1"]);
    assert_eq!(found.one("pip install x").job, None);
}

#[test]
fn a_target_that_does_not_exist_is_an_error() {
    let t = tree(&[]);
    let options = layerlock_walk::ScanOptions {
        targets: vec![t.path("nowhere")],
        ..t.options()
    };
    t.walk_with(&options)
        .assert_errors(&["nowhere:1: no such file or directory"]);
}

#[test]
fn a_script_two_workflows_call_is_reported_for_each_of_them() {
    let t = tree(&[
        (WF, &workflow("      - run: bash ci/test.sh\n")),
        (
            ".github/workflows/nightly.yml",
            &workflow("      - run: echo nightly\n      - run: bash ci/test.sh\n"),
        ),
        ("ci/test.sh", "pip install x\n"),
    ]);
    t.walk().assert_reach(
        "pip install x",
        &[
            "ci/test.sh:1 via .github/workflows/ci.yml:6",
            "ci/test.sh:1 via .github/workflows/nightly.yml:7",
        ],
    );
}

#[test]
fn files_in_skipped_folders_are_not_read() {
    let t = tree(&[
        (
            "node_modules/pkg/Dockerfile",
            "FROM node\nRUN pip install x\n",
        ),
        (".venv/lib/Dockerfile", "FROM python\nRUN pip install y\n"),
    ]);
    let found = t.walk();
    assert!(found.reached.is_empty(), "{}", found.dump());
}
