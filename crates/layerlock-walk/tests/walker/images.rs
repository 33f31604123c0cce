//! Images and containers: Dockerfiles in the tree and those CI builds
//! (named with `-f`, written by the job, named by bake and Compose files),
//! what an image holds of the repository, and commands run in containers.

use layerlock_ci::Phase;

use crate::step_and;
use crate::support::tree;

#[test]
fn a_dockerfile_run_is_read_as_an_image_build() {
    let t = tree(&[("Dockerfile", "FROM python:3.12\nRUN pip install x\n")]);
    let found = t.walk();
    found.assert_reach("pip install x", &["Dockerfile:2"]);
    let pip = found.one("pip install x");
    assert_eq!(
        (pip.seen.phase, pip.job.as_deref()),
        (Phase::ImageBuild, None)
    );
}

#[test]
fn a_dockerfile_by_another_of_its_names_is_read() {
    let t = tree(&[
        ("docker/Dockerfile.ci", "FROM python\nRUN pip install a\n"),
        (
            "docker/gpu.containerfile",
            "FROM python\nRUN pip install b\n",
        ),
    ]);
    let found = t.walk();
    found.assert_reach("pip install a", &["docker/Dockerfile.ci:2"]);
    found.assert_reach("pip install b", &["docker/gpu.containerfile:2"]);
}

#[test]
fn a_continued_run_line_reports_each_command_at_its_own_line() {
    let t = tree(&[(
        "Dockerfile",
        "FROM python\nRUN apt-get update && \\\n    pip install x\n",
    )]);
    let found = t.walk();
    found.assert_reach("pip install x", &["Dockerfile:3"]);
    assert_eq!(found.one("pip install x").seen.column, 5);
}

#[test]
fn a_script_copied_into_the_image_is_followed_from_its_run_line() {
    let t = tree(&[
        (
            "Dockerfile",
            "FROM python\nCOPY ci/setup.sh /opt/setup.sh\nRUN bash /opt/setup.sh\n",
        ),
        ("ci/setup.sh", "pip install x\n"),
    ]);
    let found = t.walk();
    found.assert_reach("pip install x", &["ci/setup.sh:1 via Dockerfile:3"]);
    assert_eq!(found.one("pip install x").seen.phase, Phase::ImageBuild);
}

#[test]
fn a_path_relative_to_the_image_workdir_is_found_in_what_was_copied() {
    let t = tree(&[
        (
            "Dockerfile",
            "FROM python\nWORKDIR /app\nCOPY . .\nRUN ./ci/setup.sh\n",
        ),
        ("ci/setup.sh", "#!/bin/sh\npip install x\n"),
    ]);
    let found = t.walk();
    found.assert_reach("pip install x", &["ci/setup.sh:2 via Dockerfile:4"]);
    assert_eq!(found.one("./ci/setup.sh").seen.cwd.as_deref(), Some("."));
}

#[test]
fn a_requirements_file_copied_into_the_image_is_read_from_the_repository() {
    let t = tree(&[
        (
            "Dockerfile",
            "FROM python\nCOPY requirements.txt /tmp/\nRUN pip install -r /tmp/requirements.txt\n",
        ),
        ("requirements.txt", "requests==2.32.3\n"),
    ]);
    let found = t.walk();
    assert_eq!(
        found
            .one("pip install -r /tmp/requirements.txt")
            .seen
            .looked_up,
        [(
            "/tmp/requirements.txt".to_string(),
            Some("requirements.txt".to_string())
        )]
    );
}

#[test]
fn a_dockerfile_built_with_dash_f_is_read_whatever_its_name() {
    let t = step_and(
        "docker build -f docker/ci.df -t x .",
        &[("docker/ci.df", "FROM python\nRUN pip install x\n")],
    );
    let found = t.walk();
    found.assert_reach("pip install x", &["docker/ci.df:2"]);
    assert_eq!(found.one("pip install x").seen.phase, Phase::ImageBuild);
}

#[test]
fn a_dockerfile_on_standard_input_is_built_at_job_time() {
    let t = step_and(
        "|\n          docker build -f - . <<'EOF'\n          FROM python\n          RUN pip install x\n          EOF",
        &[],
    );
    let found = t.walk();
    found.assert_reach("pip install x", &[".github/workflows/ci.yml:9"]);
    assert_eq!(found.one("pip install x").seen.phase, Phase::JobTime);
}

#[test]
fn a_dockerfile_the_job_writes_and_builds_is_read_in_its_heredoc() {
    let t = step_and(
        "|\n          cat > Dockerfile.gen <<'EOF'\n          FROM python\n          RUN pip install x\n          EOF\n          docker build -f Dockerfile.gen .",
        &[],
    );
    let found = t.walk();
    found.assert_reach("pip install x", &[".github/workflows/ci.yml:9"]);
    assert_eq!(found.one("pip install x").seen.phase, Phase::JobTime);
}

#[test]
fn a_dockerfile_a_compose_file_names_is_read_when_the_job_builds_it() {
    let t = step_and(
        "docker compose build app",
        &[
            (
                "compose.yaml",
                "services:\n  app:\n    build:\n      context: .\n      dockerfile: docker/app.df\n",
            ),
            ("docker/app.df", "FROM python\nRUN pip install x\n"),
        ],
    );
    t.walk().assert_reach("pip install x", &["docker/app.df:2"]);
}

#[test]
fn a_bake_call_with_no_bake_file_where_it_runs_is_noted() {
    let t = step_and("docker buildx bake app", &[]);
    t.walk().assert_not_followed(&[
        ".github/workflows/ci.yml:6: no bake or Compose file is where this command runs, so the images it builds were not read",
    ]);
}

#[test]
fn a_shell_string_run_in_a_container_is_read_where_it_is_written() {
    let t = step_and("docker run --rm python:3.12 bash -c \"pip install x\"", &[]);
    t.walk()
        .assert_reach("pip install x", &[".github/workflows/ci.yml:6"]);
}

#[test]
fn a_script_in_a_mounted_workdir_of_a_container_is_followed() {
    let t = step_and(
        "docker run -v \"$PWD\":/work -w /work python:3.12 bash ci/test.sh",
        &[("ci/test.sh", "pip install x\n")],
    );
    let found = t.walk();
    found.assert_reach(
        "pip install x",
        &["ci/test.sh:1 via .github/workflows/ci.yml:6"],
    );
    assert_eq!(found.one("pip install x").seen.cwd.as_deref(), Some("."));
}

#[test]
fn a_container_path_under_a_volume_maps_to_the_repository() {
    let t = step_and(
        "docker run -v \"$GITHUB_WORKSPACE\":/src python:3.12 bash /src/ci/test.sh",
        &[("ci/test.sh", "pip install x\n")],
    );
    t.walk().assert_reach(
        "pip install x",
        &["ci/test.sh:1 via .github/workflows/ci.yml:6"],
    );
}

#[test]
fn a_variable_a_container_command_sets_is_seen_by_the_string_it_runs() {
    let t = step_and(
        "docker run -e NEXT=ci/test.sh python bash -c 'bash $NEXT'",
        &[("ci/test.sh", "pip install x\n")],
    );
    t.walk().assert_reach(
        "pip install x",
        &["ci/test.sh:1 via .github/workflows/ci.yml:6"],
    );
}

#[test]
fn kubectl_exec_runs_the_command_after_the_dashes() {
    let t = step_and(
        "kubectl exec -n ci runner -- bash ci/test.sh",
        &[("ci/test.sh", "pip install x\n")],
    );
    t.walk().assert_reach(
        "pip install x",
        &["ci/test.sh:1 via .github/workflows/ci.yml:6"],
    );
}

#[test]
fn a_script_forwarding_its_arguments_into_a_container_is_reported_at_the_caller() {
    let t = step_and(
        "bash ci/in-docker.sh pip install x",
        &[("ci/in-docker.sh", "C=runner\ndocker exec \"$C\" \"$@\"\n")],
    );
    let found = t.walk();
    // today: the call into the script is replaced by the script's path with
    // the caller's line (ci/in-docker.sh has two lines); a shell string
    // handed on the same way gets the line that runs it (ci/in-docker.sh:2,
    // see `a_command_line_handed_to_a_script_is_reported_where_the_caller_wrote_it`).
    found.assert_reach(
        "docker exec runner pip install x",
        &[".github/workflows/ci.yml:6 via ci/in-docker.sh:6"],
    );
    assert_eq!(
        found.one("docker exec runner pip install x").seen.column,
        35
    );
}

#[test]
fn a_build_that_names_its_context_outranks_the_guess() {
    // `install.sh` is at the root and in `sub/`: the build's context
    // (`sub`) says which one the image copies.
    let t = tree(&[
        (
            ".github/workflows/ci.yml",
            "on: push\njobs:\n  b:\n    runs-on: x\n    steps:\n      - run: docker build -f sub/Dockerfile sub\n",
        ),
        (
            "sub/Dockerfile",
            "FROM python\nCOPY install.sh .\nRUN bash install.sh\n",
        ),
        ("sub/install.sh", "pip install from-sub\n"),
        ("install.sh", "pip install from-root\n"),
    ]);
    let found = t.walk();
    found.assert_reach(
        "pip install from-sub",
        &["sub/install.sh:1 via sub/Dockerfile:3"],
    );
    assert!(found.commands("pip install from-root").is_empty());
}
