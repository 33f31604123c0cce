//! What a shell script runs: other scripts however they are called, the
//! directory and variables that select them, functions, loops, arrays,
//! branches, wrappers, shell strings, and what cannot be known.

use crate::step_and;

/// The via of a command in a script that the workflow's step calls.
const STEP: &str = ".github/workflows/ci.yml:6";

#[test]
fn a_script_calling_another_script_is_followed_through_both() {
    let t = step_and(
        "bash ci/a.sh",
        &[
            ("ci/a.sh", "echo a\nbash ci/b.sh\n"),
            ("ci/b.sh", "pip install x\n"),
        ],
    );
    t.walk().assert_reach(
        "pip install x",
        &[&format!("ci/b.sh:1 via {STEP} > ci/a.sh:2")],
    );
}

#[test]
fn a_script_run_by_its_path_is_followed() {
    let t = step_and(
        "./ci/test.sh --fast",
        &[("ci/test.sh", "#!/bin/bash\npip install x\n")],
    );
    t.walk()
        .assert_reach("pip install x", &[&format!("ci/test.sh:2 via {STEP}")]);
}

#[test]
fn a_sourced_script_is_followed() {
    let t = step_and("source ci/env.sh", &[("ci/env.sh", "pip install x\n")]);
    t.walk()
        .assert_reach("pip install x", &[&format!("ci/env.sh:1 via {STEP}")]);
}

#[test]
fn a_script_sourced_with_a_dot_is_followed() {
    let t = step_and(". ci/env.sh", &[("ci/env.sh", "pip install x\n")]);
    t.walk()
        .assert_reach("pip install x", &[&format!("ci/env.sh:1 via {STEP}")]);
}

#[test]
fn a_script_run_by_sh_with_options_is_followed() {
    let t = step_and("sh -ex ci/test.sh", &[("ci/test.sh", "pip install x\n")]);
    t.walk()
        .assert_reach("pip install x", &[&format!("ci/test.sh:1 via {STEP}")]);
}

#[test]
fn a_program_of_the_tree_with_a_shell_shebang_is_followed_as_a_script() {
    let t = step_and(
        "tools/run-tests",
        &[("tools/run-tests", "#!/usr/bin/env bash\npip install x\n")],
    );
    t.walk()
        .assert_reach("pip install x", &[&format!("tools/run-tests:2 via {STEP}")]);
}

#[test]
fn a_script_next_to_the_caller_is_found_through_dirname_of_0() {
    let t = step_and(
        "bash ci/a.sh",
        &[
            ("ci/a.sh", "bash \"$(dirname \"$0\")/b.sh\"\n"),
            ("ci/b.sh", "pip install x\n"),
        ],
    );
    t.walk().assert_reach(
        "pip install x",
        &[&format!("ci/b.sh:1 via {STEP} > ci/a.sh:1")],
    );
}

#[test]
fn the_repository_root_named_by_git_rev_parse_is_the_root() {
    let t = step_and(
        "bash ci/a.sh",
        &[
            (
                "ci/a.sh",
                "bash \"$(git rev-parse --show-toplevel)/tools/b.sh\"\n",
            ),
            ("tools/b.sh", "pip install x\n"),
        ],
    );
    t.walk().assert_reach(
        "pip install x",
        &[&format!("tools/b.sh:1 via {STEP} > ci/a.sh:1")],
    );
}

#[test]
fn an_unknown_variable_before_a_path_that_exists_stands_for_the_root() {
    let t = step_and(
        "bash $REPO_ROOT/ci/test.sh",
        &[("ci/test.sh", "pip install x\n")],
    );
    t.walk()
        .assert_reach("pip install x", &[&format!("ci/test.sh:1 via {STEP}")]);
}

#[test]
fn a_variable_the_script_assigns_names_the_script_it_runs() {
    let t = step_and(
        "bash ci/a.sh",
        &[
            ("ci/a.sh", "NEXT=ci/b.sh\nbash \"$NEXT\"\n"),
            ("ci/b.sh", "pip install x\n"),
        ],
    );
    t.walk().assert_reach(
        "pip install x",
        &[&format!("ci/b.sh:1 via {STEP} > ci/a.sh:2")],
    );
}

#[test]
fn a_variable_exported_by_a_script_reaches_the_scripts_it_calls() {
    let t = step_and(
        "bash ci/a.sh",
        &[
            ("ci/a.sh", "export NEXT=ci/c.sh\nbash ci/b.sh\n"),
            ("ci/b.sh", "bash \"$NEXT\"\n"),
            ("ci/c.sh", "pip install x\n"),
        ],
    );
    t.walk().assert_reach(
        "pip install x",
        &[&format!("ci/c.sh:1 via {STEP} > ci/a.sh:2 > ci/b.sh:1")],
    );
}

#[test]
fn an_argument_of_the_call_names_the_script_the_callee_runs() {
    let t = step_and(
        "bash ci/a.sh ci/b.sh",
        &[("ci/a.sh", "bash \"$1\"\n"), ("ci/b.sh", "pip install x\n")],
    );
    t.walk().assert_reach(
        "pip install x",
        &[&format!("ci/b.sh:1 via {STEP} > ci/a.sh:1")],
    );
}

#[test]
fn shift_drops_the_first_argument_of_a_script() {
    let t = step_and(
        "bash ci/a.sh skipped ci/b.sh",
        &[
            ("ci/a.sh", "shift\nbash \"$1\"\n"),
            ("ci/b.sh", "pip install x\n"),
        ],
    );
    t.walk().assert_reach(
        "pip install x",
        &[&format!("ci/b.sh:1 via {STEP} > ci/a.sh:2")],
    );
}

#[test]
fn a_function_body_is_read_where_it_is_written() {
    let t = step_and(
        "bash ci/a.sh",
        &[("ci/a.sh", "setup() {\n  pip install x\n}\nsetup\n")],
    );
    t.walk()
        .assert_reach("pip install x", &[&format!("ci/a.sh:2 via {STEP}")]);
}

#[test]
fn a_function_that_runs_its_arguments_runs_what_it_is_called_with() {
    let t = step_and(
        "bash ci/a.sh",
        &[
            (
                "ci/a.sh",
                "retry() {\n  for i in 1 2 3; do \"$@\" && break; done\n}\nretry bash ci/b.sh\n",
            ),
            ("ci/b.sh", "pip install x\n"),
        ],
    );
    // today: the call of the function (ci/a.sh:4) is replaced by the line
    // of the call again, not by the line of `"$@"` (ci/a.sh:2), so the
    // chain names ci/a.sh:4 twice.
    t.walk().assert_reach(
        "pip install x",
        &[&format!("ci/b.sh:1 via {STEP} > ci/a.sh:4 > ci/a.sh:4")],
    );
}

#[test]
fn a_command_using_a_loop_variable_runs_once_for_each_literal_value() {
    let t = step_and(
        "bash ci/all.sh",
        &[
            (
                "ci/all.sh",
                "for s in unit e2e; do\n  bash ci/$s.sh\ndone\n",
            ),
            ("ci/unit.sh", "pip install unit\n"),
            ("ci/e2e.sh", "pip install e2e\n"),
        ],
    );
    let found = t.walk();
    found.assert_reach(
        "pip install unit",
        &[&format!("ci/unit.sh:1 via {STEP} > ci/all.sh:2")],
    );
    found.assert_reach(
        "pip install e2e",
        &[&format!("ci/e2e.sh:1 via {STEP} > ci/all.sh:2")],
    );
}

#[test]
fn a_loop_over_a_glob_runs_each_file_it_matches() {
    let t = step_and(
        "bash ci/all.sh",
        &[
            (
                "ci/all.sh",
                "for t in ci/tests/*.sh; do\n  bash \"$t\"\ndone\n",
            ),
            ("ci/tests/one.sh", "pip install one\n"),
            ("ci/tests/two.sh", "pip install two\n"),
        ],
    );
    let found = t.walk();
    found.assert_reach(
        "pip install one",
        &[&format!("ci/tests/one.sh:1 via {STEP} > ci/all.sh:2")],
    );
    found.assert_reach(
        "pip install two",
        &[&format!("ci/tests/two.sh:1 via {STEP} > ci/all.sh:2")],
    );
}

#[test]
fn an_array_run_as_a_command_runs_its_elements() {
    let t = step_and(
        "bash ci/a.sh",
        &[
            ("ci/a.sh", "cmd=(bash ci/b.sh)\n\"${cmd[@]}\"\n"),
            ("ci/b.sh", "pip install x\n"),
        ],
    );
    let found = t.walk();
    found.assert_reach(
        "pip install x",
        &[&format!("ci/b.sh:1 via {STEP} > ci/a.sh:1")],
    );
}

#[test]
fn a_variable_set_in_both_branches_of_an_if_is_read_with_each_value() {
    let t = step_and(
        "bash ci/a.sh",
        &[
            (
                "ci/a.sh",
                "if [ -n \"$CI\" ]; then\n  NEXT=ci/b.sh\nelse\n  NEXT=ci/c.sh\nfi\nbash \"$NEXT\"\n",
            ),
            ("ci/b.sh", "pip install b\n"),
            ("ci/c.sh", "pip install c\n"),
        ],
    );
    let found = t.walk();
    found.assert_reach(
        "pip install b",
        &[&format!("ci/b.sh:1 via {STEP} > ci/a.sh:6")],
    );
    found.assert_reach(
        "pip install c",
        &[&format!("ci/c.sh:1 via {STEP} > ci/a.sh:6")],
    );
}

#[test]
fn sudo_runs_the_script_it_is_given() {
    let t = step_and(
        "sudo -E -u ci bash ci/test.sh",
        &[("ci/test.sh", "pip install x\n")],
    );
    t.walk()
        .assert_reach("pip install x", &[&format!("ci/test.sh:1 via {STEP}")]);
}

#[test]
fn env_with_assignments_runs_the_script_it_is_given() {
    let t = step_and(
        "env -u HOME A=1 bash ci/test.sh",
        &[("ci/test.sh", "pip install x\n")],
    );
    t.walk()
        .assert_reach("pip install x", &[&format!("ci/test.sh:1 via {STEP}")]);
}

#[test]
fn timeout_runs_the_script_after_its_duration() {
    let t = step_and(
        "timeout -s KILL 30m bash ci/test.sh",
        &[("ci/test.sh", "pip install x\n")],
    );
    t.walk()
        .assert_reach("pip install x", &[&format!("ci/test.sh:1 via {STEP}")]);
}

#[test]
fn xargs_runs_the_script_it_is_given() {
    let t = step_and(
        "echo a | xargs -n 1 bash ci/test.sh",
        &[("ci/test.sh", "pip install x\n")],
    );
    t.walk()
        .assert_reach("pip install x", &[&format!("ci/test.sh:1 via {STEP}")]);
}

#[test]
fn nix_develop_runs_the_command_after_dash_c() {
    let t = step_and(
        "nix develop .#ci -c bash ci/test.sh",
        &[("ci/test.sh", "pip install x\n")],
    );
    t.walk()
        .assert_reach("pip install x", &[&format!("ci/test.sh:1 via {STEP}")]);
}

#[test]
fn uv_run_runs_the_script_it_is_given() {
    let t = step_and(
        "uv run --with pytest -- bash ci/test.sh",
        &[("ci/test.sh", "pip install x\n")],
    );
    t.walk()
        .assert_reach("pip install x", &[&format!("ci/test.sh:1 via {STEP}")]);
}

#[test]
fn a_command_is_reported_at_the_program_it_runs_past_its_wrappers() {
    let t = step_and("A=1 sudo -E pip install x", &[]);
    let found = t.walk();
    let pip = found.one("sudo -E pip install x");
    assert_eq!(
        (pip.seen.at.as_str(), pip.seen.column),
        (".github/workflows/ci.yml:6", 26)
    );
}

#[test]
fn cd_changes_where_later_scripts_are_found() {
    let t = step_and(
        "bash ci/a.sh",
        &[
            ("ci/a.sh", "cd tools\nbash run.sh\n"),
            ("tools/run.sh", "pip install x\n"),
        ],
    );
    let found = t.walk();
    found.assert_reach(
        "pip install x",
        &[&format!("tools/run.sh:1 via {STEP} > ci/a.sh:2")],
    );
    assert_eq!(
        found.one("pip install x").seen.cwd.as_deref(),
        Some("tools")
    );
}

#[test]
fn pushd_changes_where_later_scripts_are_found() {
    let t = step_and(
        "bash ci/a.sh",
        &[
            ("ci/a.sh", "pushd tools\nbash run.sh\npopd\n"),
            ("tools/run.sh", "pip install x\n"),
        ],
    );
    t.walk().assert_reach(
        "pip install x",
        &[&format!("tools/run.sh:1 via {STEP} > ci/a.sh:2")],
    );
}

#[test]
fn a_shell_string_run_by_bash_c_is_read_where_it_is_written() {
    let t = step_and("bash -c \"pip install x\"", &[]);
    let found = t.walk();
    found.assert_reach("pip install x", &[".github/workflows/ci.yml:6"]);
    assert_eq!(found.one("pip install x").seen.column, 23);
}

#[test]
fn a_shell_string_held_in_a_variable_is_run_by_eval() {
    let t = step_and(
        "bash ci/a.sh",
        &[("ci/a.sh", "CMD=\"pip install x\"\neval \"$CMD\"\n")],
    );
    t.walk()
        .assert_reach("pip install x", &[&format!("ci/a.sh:2 via {STEP}")]);
}

#[test]
fn a_command_line_handed_to_a_script_is_reported_where_the_caller_wrote_it() {
    let t = step_and(
        "bash ci/run.sh \"pip install x\"",
        &[("ci/run.sh", "echo running\nbash -c \"$1\"\n")],
    );
    // The call into the script is replaced by the line that runs the string.
    t.walk().assert_reach(
        "pip install x",
        &[".github/workflows/ci.yml:6 via ci/run.sh:2"],
    );
}

#[test]
fn a_script_the_job_writes_with_a_heredoc_and_runs_is_read_in_the_heredoc() {
    let t = step_and(
        "|\n          cat > gen.sh <<'EOF'\n          pip install x\n          EOF\n          bash gen.sh",
        &[],
    );
    let found = t.walk();
    found.assert_reach("pip install x", &[".github/workflows/ci.yml:8"]);
    found.assert_missing(&[]);
}

#[test]
fn a_heredoc_fed_to_a_shell_is_read_as_its_script() {
    let t = step_and(
        "|\n          bash <<'EOF'\n          pip install x\n          EOF",
        &[],
    );
    t.walk()
        .assert_reach("pip install x", &[".github/workflows/ci.yml:8"]);
}

#[test]
fn a_script_run_in_a_command_substitution_is_not_followed() {
    let t = step_and("V=$(bash ci/test.sh)", &[("ci/test.sh", "pip install x\n")]);
    let found = t.walk();
    // today: the call inside `$(…)` is seen as a command but the script it
    // runs is not followed, though it runs all the same.
    found.assert_reach("bash ci/test.sh", &[".github/workflows/ci.yml:6"]);
    found.assert_reach("pip install x", &[]);
}

#[test]
fn a_script_that_is_not_in_the_tree_is_named() {
    let t = step_and("bash ci/nowhere.sh", &[]);
    t.walk()
        .assert_missing(&["ci/nowhere.sh at .github/workflows/ci.yml:6"]);
}

#[test]
fn a_missing_script_deeper_down_is_named_with_its_chain() {
    let t = step_and("bash ci/a.sh", &[("ci/a.sh", "echo a\n./nowhere.sh\n")]);
    t.walk()
        .assert_missing(&[&format!("./nowhere.sh at ci/a.sh:2 via {STEP}")]);
}

#[test]
fn a_virtual_environment_activation_script_is_not_missing() {
    let t = step_and("source .venv/bin/activate", &[]);
    let found = t.walk();
    found.assert_missing(&[]);
    found.assert_not_followed(&[]);
}

#[test]
fn a_script_named_by_a_value_known_only_at_run_time_is_not_followed() {
    let t = step_and("bash \"ci/run-$SUITE.sh\"", &[]);
    t.walk().assert_not_followed(&[
        ".github/workflows/ci.yml:6: the script `ci/run-$SUITE.sh` is named by a value known only at run time, so its commands were not read",
    ]);
}

#[test]
fn an_installer_held_in_a_variable_nothing_sets_is_not_followed() {
    let t = step_and("$PIP install x", &[]);
    t.walk().assert_not_followed(&[
        ".github/workflows/ci.yml:6: the program of `$PIP install …` is known only at run time, so what it installs was not read",
    ]);
}

#[test]
fn a_python_program_that_starts_processes_is_not_followed() {
    let t = step_and(
        "python ci/run.py",
        &[(
            "ci/run.py",
            "import subprocess\nsubprocess.run(['pip', 'install', 'x'])\n",
        )],
    );
    t.walk().assert_not_followed(&[
        ".github/workflows/ci.yml:6: `ci/run.py` is a Python program that starts commands of its own; they were not read",
    ]);
}

#[test]
fn a_command_is_told_the_command_before_it() {
    let t = step_and("find . -name '*.txt' | xargs pip install", &[]);
    let found = t.walk();
    let xargs = found.one("xargs pip install");
    assert_eq!(
        xargs.seen.previous.as_deref(),
        Some(&["find", ".", "-name", "*.txt"].map(String::from)[..])
    );
}

#[test]
fn a_variable_a_script_exports_is_what_its_later_commands_see() {
    let t = step_and(
        "bash ci/a.sh",
        &[(
            "ci/a.sh",
            "export PIP_INDEX_URL=https://example.org\nprintenv PIP_INDEX_URL\n",
        )],
    );
    let found = t.walk();
    assert_eq!(
        found.one("printenv PIP_INDEX_URL").seen.looked_up,
        [(
            "PIP_INDEX_URL".to_string(),
            Some("https://example.org".to_string())
        )]
    );
}

#[test]
fn a_file_a_command_names_is_read_where_the_command_runs() {
    let t = step_and(
        "bash ci/a.sh",
        &[
            ("ci/a.sh", "cd envs\nconda env create -f environment.yml\n"),
            ("envs/environment.yml", "name: ci\ndependencies:\n  - pip\n"),
        ],
    );
    let found = t.walk();
    assert_eq!(
        found
            .one("conda env create -f environment.yml")
            .seen
            .looked_up,
        [(
            "environment.yml".to_string(),
            Some("envs/environment.yml".to_string())
        )]
    );
}

#[test]
fn a_file_given_on_standard_input_is_the_heredoc() {
    let t = step_and(
        "|\n          conda env create -f - <<'EOF'\n          name: ci\n          EOF",
        &[],
    );
    let found = t.walk();
    assert_eq!(
        found.one("conda env create -f -").seen.looked_up,
        [("-".to_string(), Some("standard input".to_string()))]
    );
}

#[test]
fn a_requirements_file_is_read_from_the_steps_working_directory() {
    let t = crate::support::tree(&[
        (
            crate::WF,
            &crate::workflow(
                "      - run: pip install -r requirements.txt\n        working-directory: sub\n",
            ),
        ),
        ("sub/requirements.txt", "requests==2.32.3\n"),
    ]);
    let found = t.walk();
    assert_eq!(
        found.one("pip install -r requirements.txt").seen.looked_up,
        [(
            "requirements.txt".to_string(),
            Some("sub/requirements.txt".to_string())
        )]
    );
}

#[test]
fn the_project_of_a_command_is_the_nearest_file_up_to_the_root() {
    let t = step_and(
        "bash ci/a.sh",
        &[
            ("ci/a.sh", "cd pkg/src\nuv sync\n"),
            ("pkg/pyproject.toml", "[project]\nname = \"pkg\"\n"),
            ("pkg/src/mod.py", ""),
        ],
    );
    let found = t.walk();
    assert_eq!(
        found.one("uv sync").seen.looked_up,
        [(
            "pyproject.toml".to_string(),
            Some("pkg/pyproject.toml".to_string())
        )]
    );
}

#[test]
fn a_pre_commit_config_is_read_where_the_hooks_run() {
    let t = crate::support::tree(&[
        (
            crate::WF,
            &crate::workflow(
                "      - run: pre-commit run --config .pre-commit-config.yaml --all-files\n        working-directory: pkg\n",
            ),
        ),
        ("pkg/.pre-commit-config.yaml", "repos: []\n"),
    ]);
    let found = t.walk();
    let run = found.one("pre-commit run --config .pre-commit-config.yaml --all-files");
    assert_eq!(
        run.seen.looked_up,
        [(
            ".pre-commit-config.yaml".to_string(),
            Some("pkg/.pre-commit-config.yaml".to_string())
        )]
    );
}

#[test]
fn arguments_changed_by_a_step_not_run_still_reach_eval_through_it() {
    // The shape of a job runner that re-quotes its commands with a
    // function, exports them and runs them with `eval` in a container.
    let script = "commands=\"$*\"\n\
                  commands=$(requote \"$commands\")\n\
                  export CMDS=\"${commands}\"\n\
                  docker run -e CMDS img bash -c 'set -e; eval \"$CMDS\"'\n";
    let t = step_and("bash ci/run.sh \"pip install x\"", &[("ci/run.sh", script)]);
    t.walk().assert_reach(
        "pip install x",
        &[".github/workflows/ci.yml:6 via ci/run.sh:2 (changed by `requote \"$commands\"`) > ci/run.sh:4"],
    );
}

#[test]
fn a_known_string_changed_by_a_step_not_run_reaches_eval_through_it() {
    let script = "CMD=\"pip install x\"\nCMD2=$(echo \"$CMD\" | sed s/a/b/)\neval \"$CMD2\"\n";
    let t = step_and("bash ci/a.sh", &[("ci/a.sh", script)]);
    t.walk().assert_reach(
        "pip install x",
        &[&format!(
            "ci/a.sh:3 via {STEP} > ci/a.sh:2 (changed by `echo \"$CMD\" | sed s/a/b/`)"
        )],
    );
}

#[test]
fn a_command_line_built_up_in_branches_reaches_eval() {
    let script = "if [[ $C == true ]]; then\n  CMD=\"conda install numpy\"\nelse\n  CMD=\"python -m pip install numpy\"\nfi\nif [[ -n ${V} ]]; then CMD=\"$CMD==${V}\"; fi;\nCMD=\"$CMD scipy\"\nCMD=\"${CMD} patsy ${BLAS}\"\neval $CMD\n";
    let t = step_and("bash ci/a.sh", &[("ci/a.sh", script)]);
    let found = t.walk();
    found.assert_reach(
        "python -m pip install numpy",
        // The first step that left the known text behind is named.
        &[&format!(
            "ci/a.sh:9 via {STEP} > ci/a.sh:6 (changed by `\"$CMD==${{V}}\"`)"
        )],
    );
}
