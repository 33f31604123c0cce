//! Where the walk stops: calls back into a script on the way, chains too
//! deep, files outside the root, files that cannot be read or parsed, and
//! the path map and default directory that say where CI paths lead.

use crate::step_and;
use crate::support::tree;

const STEP: &str = ".github/workflows/ci.yml:6";

#[test]
fn a_script_calling_itself_is_read_once() {
    let t = step_and(
        "bash ci/a.sh",
        &[("ci/a.sh", "pip install x\nbash ci/a.sh\n")],
    );
    let found = t.walk();
    found.assert_reach("pip install x", &[&format!("ci/a.sh:1 via {STEP}")]);
    found.assert_errors(&[]);
}

#[test]
fn scripts_calling_each_other_are_each_read_once_per_path() {
    let t = step_and(
        "bash ci/a.sh",
        &[
            ("ci/a.sh", "pip install a\nbash ci/b.sh\n"),
            ("ci/b.sh", "pip install b\nbash ci/a.sh\n"),
        ],
    );
    let found = t.walk();
    found.assert_reach("pip install a", &[&format!("ci/a.sh:1 via {STEP}")]);
    found.assert_reach(
        "pip install b",
        &[&format!("ci/b.sh:1 via {STEP} > ci/a.sh:2")],
    );
}

#[test]
fn a_function_that_runs_its_arguments_calling_itself_stops() {
    let t = step_and(
        "bash ci/a.sh",
        &[(
            "ci/a.sh",
            "retry() {\n  \"$@\" || retry \"$@\"\n}\nretry pip install x\n",
        )],
    );
    let found = t.walk();
    found.assert_errors(&[]);
    found.assert_reach(
        "pip install x",
        &[&format!("ci/a.sh:4 via {STEP} > ci/a.sh:4")],
    );
}

#[test]
fn a_function_that_runs_its_arguments_given_itself_runs_once() {
    let t = step_and(
        "bash ci/a.sh",
        &[("ci/a.sh", "run() {\n  \"$@\"\n}\nrun run pip install x\n")],
    );
    let found = t.walk();
    // today: `run run pip install x` runs `pip install x` in bash, but the
    // guard against a function calling itself stops at the inner `run`.
    found.assert_reach(
        "run pip install x",
        &[&format!("ci/a.sh:4 via {STEP} > ci/a.sh:4")],
    );
    found.assert_reach("pip install x", &[]);
}

#[test]
fn a_chain_of_scripts_past_the_limit_is_reported_and_cut() {
    let mut files: Vec<(String, String)> = (0..40)
        .map(|i| (format!("ci/s{i}.sh"), format!("bash ci/s{}.sh\n", i + 1)))
        .collect();
    files.push(("ci/s40.sh".to_string(), "pip install x\n".to_string()));
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let t = step_and("bash ci/s0.sh", &files);
    let found = t.walk();
    found.assert_reach("pip install x", &[]);
    let errors = found.errors();
    assert_eq!(errors.len(), 1, "{}", found.dump());
    assert!(
        errors[0].contains("scripts call scripts more than 32 deep here"),
        "{}",
        errors[0]
    );
}

#[test]
fn a_script_that_links_outside_the_root_is_not_read() {
    let outside = tempfile::tempdir().expect("a temporary directory");
    let target = outside.path().join("evil.sh");
    fs_err::write(&target, "pip install x\n").expect("the outside script");
    let t = step_and("bash ci/evil.sh", &[]);
    fs_err::create_dir_all(t.path("ci")).expect("ci/");
    std::os::unix::fs::symlink(&target, t.path("ci/evil.sh")).expect("a symlink");
    let found = t.walk();
    found.assert_reach("pip install x", &[]);
    found.assert_missing(&["ci/evil.sh at .github/workflows/ci.yml:6"]);
}

#[test]
fn a_script_named_above_the_root_is_not_read() {
    let t = tree(&[
        (
            "repo/.github/workflows/ci.yml",
            &crate::workflow("      - run: bash ../outside.sh\n"),
        ),
        ("outside.sh", "pip install x\n"),
    ]);
    let root = t.path("repo");
    let options = layerlock_walk::ScanOptions {
        root: root.clone(),
        targets: vec![root],
        ..Default::default()
    };
    let found = t.walk_with(&options);
    found.assert_reach("pip install x", &[]);
    found.assert_missing(&["../outside.sh at .github/workflows/ci.yml:6"]);
}

#[test]
fn a_ci_file_that_links_outside_the_root_is_refused() {
    let outside = tempfile::tempdir().expect("a temporary directory");
    let target = outside.path().join("Dockerfile");
    fs_err::write(&target, "FROM python\nRUN pip install x\n").expect("the outside file");
    let t = tree(&[]);
    std::os::unix::fs::symlink(&target, t.path("Dockerfile")).expect("a symlink");
    let found = t.walk();
    found.assert_reach("pip install x", &[]);
    found.assert_errors(&[
        "Dockerfile:1: it resolves outside the scanned root (a symlink?), so it was not read",
    ]);
}

#[test]
fn a_script_that_does_not_parse_is_reported_once() {
    let t = crate::support::tree(&[
        (
            crate::WF,
            &crate::workflow("      - run: bash ci/bad.sh\n      - run: bash ci/bad.sh\n"),
        ),
        ("ci/bad.sh", "echo ok\necho 'unterminated\n"),
    ]);
    let found = t.walk();
    let errors = found.errors();
    assert_eq!(errors.len(), 1, "{}", found.dump());
    assert!(errors[0].starts_with("ci/bad.sh:"), "{}", errors[0]);
    assert!(errors[0].contains("cannot parse shell"), "{}", errors[0]);
}

#[test]
fn a_binary_file_by_a_ci_name_is_reported() {
    let t = tree(&[("Dockerfile", "FROM python\n\0\0RUN x\n")]);
    t.walk()
        .assert_errors(&["Dockerfile:1: a binary file, not a CI file or script"]);
}

#[test]
fn a_container_path_is_mapped_into_the_repository() {
    let t = step_and(
        "bash /workspace/ci/test.sh",
        &[("ci/test.sh", "pip install x\n")],
    );
    let mut options = t.options();
    options
        .path_map
        .add("/workspace=.", &t.root)
        .expect("a mapping");
    t.walk_with(&options)
        .assert_reach("pip install x", &[&format!("ci/test.sh:1 via {STEP}")]);
}

#[test]
fn an_unmapped_container_path_is_a_missing_script() {
    let t = step_and(
        "bash /workspace/ci/test.sh",
        &[("ci/test.sh", "pip install x\n")],
    );
    t.walk()
        .assert_missing(&["/workspace/ci/test.sh at .github/workflows/ci.yml:6"]);
}

#[test]
fn a_mapped_working_directory_is_where_a_step_runs() {
    let t = crate::support::tree(&[
        (
            crate::WF,
            &crate::workflow(
                "      - run: bash run.sh\n        working-directory: /workspace/tests\n",
            ),
        ),
        ("tests/run.sh", "pip install x\n"),
    ]);
    let mut options = t.options();
    options
        .path_map
        .add("/workspace=.", &t.root)
        .expect("a mapping");
    let found = t.walk_with(&options);
    found.assert_reach("pip install x", &[&format!("tests/run.sh:1 via {STEP}")]);
    assert_eq!(
        found.one("pip install x").seen.cwd.as_deref(),
        Some("tests")
    );
}

#[test]
fn a_job_that_names_no_directory_runs_in_the_default_working_directory() {
    let t = step_and("bash run.sh", &[("tests/run.sh", "pip install x\n")]);
    let options = layerlock_walk::ScanOptions {
        default_working_dir: Some(t.path("tests")),
        ..t.options()
    };
    let found = t.walk_with(&options);
    found.assert_reach("pip install x", &[&format!("tests/run.sh:1 via {STEP}")]);
    assert_eq!(found.one("bash run.sh").seen.cwd.as_deref(), Some("tests"));
}

#[test]
fn a_dockerfile_runs_in_its_image_not_the_default_working_directory() {
    let t = tree(&[("Dockerfile", "FROM python\nRUN pip install x\n")]);
    let options = layerlock_walk::ScanOptions {
        default_working_dir: Some(t.path("tests")),
        ..t.options()
    };
    let found = t.walk_with(&options);
    // `/`, the image's working directory, holds no file of the repository.
    assert_eq!(found.one("pip install x").seen.cwd, None);
}
