//! The CI systems beyond GitHub, Buildkite and GitLab: CircleCI, Azure
//! Pipelines (with its templates), AppVeyor, Jenkinsfiles, and batch files
//! run by cmd.

use crate::support::tree;
use crate::workflow;

const INSTALL: (&str, &str) = ("ci/install.sh", "#!/bin/sh\npip install foo\n");

#[test]
fn a_circleci_job_runs_its_script() {
    let config = "version: 2.1\njobs:\n  test:\n    docker:\n      - image: cimg/python:3.12\n    steps:\n      - checkout\n      - run: ./ci/install.sh\n";
    let t = tree(&[(".circleci/config.yml", config), INSTALL]);
    let found = t.walk();
    found.assert_reach(
        "pip install foo",
        &["ci/install.sh:2 via .circleci/config.yml:8"],
    );
    assert_eq!(found.one("pip install foo").job.as_deref(), Some("test"));
}

#[test]
fn a_circleci_orb_is_a_note_not_followed() {
    let config = "version: 2.1\norbs:\n  python: circleci/python@2\njobs:\n  test:\n    steps:\n      - python/install-packages\n";
    let t = tree(&[(".circleci/config.yml", config)]);
    t.walk().assert_not_followed(&[
        ".circleci/config.yml:7: `python/install-packages` is a CircleCI orb's: its commands are not in the repository, so they were not audited",
    ]);
}

#[test]
fn an_azure_job_runs_its_script() {
    let pipeline = "trigger: [main]\njobs:\n- job: linux\n  steps:\n  - script: ./ci/install.sh\n";
    let t = tree(&[("azure-pipelines.yml", pipeline), INSTALL]);
    let found = t.walk();
    found.assert_reach(
        "pip install foo",
        &["ci/install.sh:2 via azure-pipelines.yml:5"],
    );
    assert_eq!(found.one("pip install foo").job.as_deref(), Some("linux"));
}

#[test]
fn an_azure_steps_template_is_read_with_the_job_that_names_it() {
    let pipeline = "jobs:\n- job: linux\n  steps:\n  - template: ci/steps.yml\n";
    let steps = "parameters:\n- name: x\n  default: y\nsteps:\n- bash: |\n    ./ci/install.sh\n- template: steps.yml\n- template: missing.yml\n";
    let t = tree(&[
        ("azure-pipelines.yml", pipeline),
        ("ci/steps.yml", steps),
        INSTALL,
    ]);
    let found = t.walk();
    found.assert_reach("pip install foo", &["ci/install.sh:2 via ci/steps.yml:6"]);
    assert_eq!(found.one("pip install foo").job.as_deref(), Some("linux"));
    found.assert_not_followed(&[
        "ci/steps.yml:8: the template `missing.yml` is not in the tree or cannot be read, so what it runs was not read",
    ]);
}

#[test]
fn an_appveyor_install_runs_its_script() {
    let config = "image: Ubuntu2204\ninstall:\n  - sh: ./ci/install.sh\n";
    let t = tree(&[("appveyor.yml", config), INSTALL]);
    let found = t.walk();
    found.assert_reach("pip install foo", &["ci/install.sh:2 via appveyor.yml:3"]);
    assert_eq!(found.one("pip install foo").job.as_deref(), Some("install"));
}

#[test]
fn a_jenkinsfile_stage_runs_its_script() {
    let jenkinsfile = "pipeline {\n  agent any\n  stages {\n    stage('Deps') {\n      steps {\n        // sh 'pip install commented'\n        sh 'bash ci/x.sh'\n      }\n    }\n  }\n}\n";
    let t = tree(&[
        ("Jenkinsfile", jenkinsfile),
        ("ci/x.sh", "pip install foo\n"),
    ]);
    let found = t.walk();
    found.assert_reach("pip install foo", &["ci/x.sh:1 via Jenkinsfile:7"]);
    assert_eq!(found.one("pip install foo").job.as_deref(), Some("Deps"));
    assert!(found.reach("pip install commented").is_empty());
}

#[test]
fn a_batch_file_called_from_a_cmd_step_is_read_as_cmd() {
    let steps = "      - run: call ci\\setup.bat\n        shell: cmd\n";
    let setup = "@echo off\r\nrem it's the setup\r\nset PKG=foo\r\npip install %PKG%\r\n";
    let t = tree(&[
        (".github/workflows/ci.yml", &workflow(steps)),
        ("ci/setup.bat", setup),
    ]);
    let found = t.walk();
    found.assert_reach(
        "pip install foo",
        &["ci/setup.bat:4 via .github/workflows/ci.yml:6"],
    );
}
