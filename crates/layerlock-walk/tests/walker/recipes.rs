//! Build tools a command runs: make, just, tox and nox, followed into
//! their files' recipes, and what they run that cannot be read.

use crate::step_and;

const STEP: &str = ".github/workflows/ci.yml:6";

#[test]
fn make_runs_the_recipe_of_the_goal_it_is_given() {
    let t = step_and(
        "make test",
        &[(
            "Makefile",
            "lint:\n\truff check\n\ntest:\n\tpip install x\n",
        )],
    );
    let found = t.walk();
    found.assert_reach("pip install x", &[&format!("Makefile:5 via {STEP}")]);
    found.assert_reach("ruff check", &[]);
}

#[test]
fn make_with_no_goal_runs_the_first_rule() {
    let t = step_and(
        "make",
        &[(
            "Makefile",
            "all:\n\tpip install x\n\nother:\n\tpip install y\n",
        )],
    );
    let found = t.walk();
    found.assert_reach("pip install x", &[&format!("Makefile:2 via {STEP}")]);
    found.assert_reach("pip install y", &[]);
}

#[test]
fn make_runs_the_prerequisites_of_a_goal_first() {
    let t = step_and(
        "make test",
        &[(
            "Makefile",
            "deps:\n\tpip install deps\n\ntest: deps\n\tpytest\n",
        )],
    );
    let found = t.walk();
    found.assert_reach("pip install deps", &[&format!("Makefile:2 via {STEP}")]);
    found.assert_reach("pytest", &[&format!("Makefile:5 via {STEP}")]);
}

#[test]
fn make_dash_c_reads_the_makefile_of_that_directory_and_runs_there() {
    let t = step_and(
        "make -C docs html",
        &[
            ("docs/Makefile", "html:\n\tbash build.sh\n"),
            ("docs/build.sh", "pip install x\n"),
        ],
    );
    let found = t.walk();
    found.assert_reach(
        "pip install x",
        &[&format!("docs/build.sh:1 via {STEP} > docs/Makefile:2")],
    );
    assert_eq!(found.one("bash build.sh").seen.cwd.as_deref(), Some("docs"));
}

#[test]
fn make_dash_f_reads_the_file_it_names() {
    let t = step_and(
        "make -f ci.mk test",
        &[("ci.mk", "test:\n\tpip install x\n")],
    );
    t.walk()
        .assert_reach("pip install x", &[&format!("ci.mk:2 via {STEP}")]);
}

#[test]
fn a_make_variable_on_the_command_line_reaches_the_recipe() {
    let t = step_and(
        "make test SCRIPT=ci/test.sh",
        &[
            ("Makefile", "test:\n\tbash $(SCRIPT)\n"),
            ("ci/test.sh", "pip install x\n"),
        ],
    );
    t.walk().assert_reach(
        "pip install x",
        &[&format!("ci/test.sh:1 via {STEP} > Makefile:2")],
    );
}

#[test]
fn a_make_recipe_running_make_again_is_followed() {
    let t = step_and(
        "make ci",
        &[(
            "Makefile",
            "ci:\n\t$(MAKE) install\n\ninstall:\n\tpip install x\n",
        )],
    );
    t.walk().assert_reach(
        "pip install x",
        &[&format!("Makefile:5 via {STEP} > Makefile:2")],
    );
}

#[test]
fn a_make_goal_no_rule_makes_is_noted() {
    let t = step_and("make nope", &[("Makefile", "test:\n\tpytest\n")]);
    t.walk().assert_not_followed(&[
        ".github/workflows/ci.yml:6: no recipe of Makefile makes `nope`, so what `make nope` runs was not read",
    ]);
}

#[test]
fn a_make_goal_known_only_at_run_time_is_noted() {
    let t = step_and("make $TARGET", &[("Makefile", "test:\n\tpytest\n")]);
    t.walk().assert_not_followed(&[
        ".github/workflows/ci.yml:6: `make` is given `$TARGET`, known only at run time, so what it runs was not read",
    ]);
}

#[test]
fn make_with_no_makefile_where_it_runs_is_noted() {
    let t = step_and("make -C sub test", &[]);
    t.walk().assert_not_followed(&[
        ".github/workflows/ci.yml:6: `make` runs a make file in sub, which is not in the scanned tree",
    ]);
}

#[test]
fn a_make_dry_run_runs_nothing() {
    let t = step_and("make -n test", &[("Makefile", "test:\n\tpip install x\n")]);
    let found = t.walk();
    found.assert_reach("pip install x", &[]);
    found.assert_not_followed(&[]);
}

#[test]
fn just_runs_the_recipe_it_is_given() {
    let t = step_and(
        "just test",
        &[(
            "justfile",
            "lint:\n    ruff check\n\ntest:\n    pip install x\n",
        )],
    );
    let found = t.walk();
    found.assert_reach("pip install x", &[&format!("justfile:5 via {STEP}")]);
    found.assert_reach("ruff check", &[]);
}

#[test]
fn a_just_recipe_parameter_is_the_argument_it_is_given() {
    let t = step_and(
        "just suite unit",
        &[
            ("justfile", "suite name:\n    bash ci/{{name}}.sh\n"),
            ("ci/unit.sh", "pip install x\n"),
        ],
    );
    t.walk().assert_reach(
        "pip install x",
        &[&format!("ci/unit.sh:1 via {STEP} > justfile:2")],
    );
}

#[test]
fn just_dash_f_reads_the_justfile_it_names_and_runs_in_its_directory() {
    let t = step_and(
        "just -f ci/justfile test",
        &[
            ("ci/justfile", "test:\n    bash run.sh\n"),
            ("ci/run.sh", "pip install x\n"),
        ],
    );
    t.walk().assert_reach(
        "pip install x",
        &[&format!("ci/run.sh:1 via {STEP} > ci/justfile:2")],
    );
}

#[test]
fn tox_runs_the_commands_of_the_environment_it_selects() {
    let t = step_and(
        "tox -e py312",
        &[
            (
                "tox.ini",
                "[testenv]\ndeps = pytest\ncommands = bash ci/test.sh\n",
            ),
            ("ci/test.sh", "pip install x\n"),
        ],
    );
    let found = t.walk();
    found.assert_reach(
        "pip install x",
        &[&format!("ci/test.sh:1 via {STEP} > tox.ini:3")],
    );
}

#[test]
fn nox_runs_the_installs_of_the_session_it_selects() {
    let t = step_and(
        "python -m nox -s tests",
        &[(
            "noxfile.py",
            "import nox\n\n@nox.session\ndef tests(session):\n    session.install(\"pytest\")\n\n@nox.session\ndef lint(session):\n    session.install(\"ruff\")\n",
        )],
    );
    let found = t.walk();
    let installs: Vec<String> = found
        .reached
        .iter()
        .filter(|r| r.seen.at.starts_with("noxfile.py"))
        .map(|r| format!("{} {}", r.shown(), r.seen.args.join(" ")))
        .collect();
    assert_eq!(
        installs,
        [format!("noxfile.py:5 via {STEP} pip install pytest")],
        "{}",
        found.dump()
    );
}
