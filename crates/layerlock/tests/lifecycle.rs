//! A lock that lives: pins kept across regenerations, upgrades on purpose,
//! and what changed said. Each step runs over the output of the one before
//! it, against a real index whose releases span several dates.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use common::{Index, Work, pins, run};

const OLD: &str = "2024-02-01T00:00:00Z";
const LATER: &str = "2025-01-01T00:00:00Z";

fn index() -> Index {
    Index::start(&["lifecycle.toml"], &[])
}

/// `compile in.txt -o lock.txt` at `cutoff`, ages measured at `LATER`,
/// with `extra` flags.
fn compile(work: &Work, index: &Index, cutoff: &str, extra: &[&str]) -> (i32, String, String) {
    compile_at(work, index, cutoff, LATER, extra)
}

/// [`compile`] with ages measured at `now`.
fn compile_at(
    work: &Work,
    index: &Index,
    cutoff: &str,
    now: &str,
    extra: &[&str],
) -> (i32, String, String) {
    let mut args = vec![
        "in.txt",
        "-o",
        "lock.txt",
        "--exclude-newer",
        cutoff,
        "--now",
        now,
    ];
    args.extend_from_slice(extra);
    run(work.compile(&index.json(), &args))
}

fn locked(work: &Work) -> Vec<String> {
    pins(&work.read("lock.txt"))
}

/// Steps 1 and 2: a lock made at an old cutoff, then made again at a later
/// one: every pin is kept, though newer versions exist.
fn old_lock(work: &Work, index: &Index) {
    work.write("in.txt", "web\n");
    let (code, _, stderr) = compile(work, index, OLD, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        locked(work),
        ["certifi==2024.1.1", "urllib3==1.26.0", "web==1.0.0"]
    );
}

#[test]
fn a_later_cutoff_keeps_every_pin() {
    let (index, work) = (index(), Work::new());
    old_lock(&work, &index);
    let before = work.read("lock.txt");
    let (code, stdout, stderr) = compile(&work, &index, LATER, &["--diff"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        locked(&work),
        ["certifi==2024.1.1", "urllib3==1.26.0", "web==1.0.0"]
    );
    assert!(
        stdout.starts_with("changes no package, keeps 3"),
        "{stdout}"
    );
    // Only the cutoff in the header differs.
    let differs: Vec<&str> = before
        .lines()
        .zip(work.read("lock.txt").lines())
        .filter(|(a, b)| a != b)
        .map(|(a, _)| a)
        .collect();
    assert_eq!(differs.len(), 1, "{differs:?}");
    // And a `--check` at the later cutoff finds the kept lock fresh.
    let (code, _, stderr) = compile(&work, &index, LATER, &["--check"]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_new_requirement_adds_only_its_closure() {
    let (index, work) = (index(), Work::new());
    old_lock(&work, &index);
    work.write("in.txt", "web\nplugin\n");
    let (code, stdout, stderr) = compile(&work, &index, LATER, &["--diff"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        locked(&work),
        [
            "certifi==2024.1.1",
            "helperlib==1.2.0",
            "plugin==1.0.0",
            "urllib3==1.26.0",
            "web==1.0.0"
        ]
    );
    assert!(stdout.starts_with("adds 2 packages, keeps 3"), "{stdout}");
    assert!(
        stdout
            .contains("added      helperlib 1.2.0, uploaded 2024-06-01 (214 days old), via plugin"),
        "{stdout}"
    );
}

#[test]
fn upgrade_package_moves_only_it_and_what_it_forces() {
    let (index, work) = (index(), Work::new());
    old_lock(&work, &index);
    // urllib3 alone: web 1.0.0 allows 1.26.5.
    let (code, stdout, stderr) = compile(&work, &index, LATER, &["-P", "urllib3", "--diff"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        locked(&work),
        ["certifi==2024.1.1", "urllib3==1.26.5", "web==1.0.0"]
    );
    assert!(
        stdout.contains("upgraded   urllib3 1.26.0 -> 1.26.5")
            && stdout.contains("freed by --upgrade-package urllib3"),
        "{stdout}"
    );
    // web: 1.1.0 needs urllib3>=2, so urllib3 moves with it and says why;
    // certifi, which nothing forces, stays.
    let (code, stdout, stderr) = compile(
        &work,
        &index,
        LATER,
        &["--upgrade-package", "web", "--diff"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        locked(&work),
        ["certifi==2024.1.1", "urllib3==2.0.0", "web==1.1.0"]
    );
    assert!(
        stdout.contains("urllib3 1.26.5 -> 2.0.0")
            && stdout.contains("web==1.1.0 needs urllib3>=2"),
        "{stdout}"
    );
}

#[test]
fn upgrade_package_to_a_version_moves_it_there() {
    let (index, work) = (index(), Work::new());
    old_lock(&work, &index);
    let (code, _, stderr) = compile(&work, &index, LATER, &["-P", "urllib3==1.26.5"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        locked(&work),
        ["certifi==2024.1.1", "urllib3==1.26.5", "web==1.0.0"]
    );
    // Down as well as up, with a Markdown report to paste.
    let (code, _, stderr) = compile(
        &work,
        &index,
        LATER,
        &["-P", "urllib3==1.26.0", "--report", "changes.md"],
    );
    assert_eq!(code, 0, "{stderr}");
    let report = work.read("changes.md");
    assert!(
        report.starts_with("**Downgrades 1 package, keeps 2.**"),
        "{report}"
    );
    assert!(
        report.contains("| downgraded | `urllib3` | 1.26.5 -> 1.26.0 | 2024-01-01 (366 days old) | web | freed by --upgrade-package urllib3==1.26.0 |"),
        "{report}"
    );
}

#[test]
fn upgrade_frees_every_pin() {
    let (index, work) = (index(), Work::new());
    old_lock(&work, &index);
    let (code, _, stderr) = compile(&work, &index, LATER, &["-U", "--report", "changes.json"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        locked(&work),
        ["certifi==2024.6.1", "urllib3==2.0.0", "web==1.1.0"]
    );
    let report: serde_json::Value = serde_json::from_str(&work.read("changes.json")).unwrap();
    assert_eq!(report["counts"]["upgraded"], 3, "{report}");
    assert_eq!(
        report["changes"][0]["why"], "freed by --upgrade",
        "{report}"
    );
    assert_eq!(report["changes"][0]["new_uploaded"], "2024-06-01T00:00:00Z");
    // The regenerate command never records a one-off upgrade.
    assert!(
        !work.read("lock.txt").contains("-U"),
        "{}",
        work.read("lock.txt")
    );
}

#[test]
fn a_kept_pin_a_new_base_forbids_is_replaced_and_named() {
    let (index, work) = (index(), Work::new());
    old_lock(&work, &index);
    work.write("base.txt", "urllib3==2.0.0\n");
    let (code, stdout, stderr) = compile(&work, &index, LATER, &["--base", "base.txt", "--diff"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(locked(&work), ["certifi==2024.1.1", "web==1.1.0"]);
    assert!(
        stdout.starts_with(
            "upgrades 1 package, removes 1, keeps 1; changes none of the image's 1 package"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("removed    urllib3 1.26.0, via web: the image has it now (base.txt:1)"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "web==1.0.0 needs urllib3>=1, <2, but the image pins urllib3==2.0.0 (base.txt:1)"
        ) || stdout.contains(
            "web==1.0.0 needs urllib3>=1,<2, but the image pins urllib3==2.0.0 (base.txt:1)"
        ),
        "{stdout}"
    );
}

#[test]
fn a_constraint_that_excludes_a_kept_pin_is_named() {
    let (index, work) = (index(), Work::new());
    old_lock(&work, &index);
    work.write("constraints.txt", "urllib3>=1.26.5\n");
    let (code, stdout, stderr) =
        compile(&work, &index, LATER, &["-c", "constraints.txt", "--diff"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        locked(&work),
        ["certifi==2024.1.1", "urllib3==1.26.5", "web==1.0.0"]
    );
    assert!(
        stdout.contains("constraints.txt:1 asks for urllib3>=1.26.5"),
        "{stdout}"
    );
}

#[test]
fn an_override_replaces_a_dependency_s_requirement() {
    let (index, work) = (index(), Work::new());
    work.write("in.txt", "web==1.0.0\n");
    // web 1.0.0 says urllib3<2; the override says otherwise, as uv's does.
    work.write("overrides.txt", "urllib3>=2\n");
    let (code, _, stderr) = compile(&work, &index, LATER, &["--override", "overrides.txt"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        locked(&work),
        ["certifi==2024.6.1", "urllib3==2.0.0", "web==1.0.0"]
    );
    assert!(
        work.read("lock.txt").contains("--override overrides.txt"),
        "{}",
        work.read("lock.txt")
    );
}

#[test]
fn a_pin_outside_the_closure_or_in_the_image_cannot_be_upgraded() {
    let (index, work) = (index(), Work::new());
    old_lock(&work, &index);
    let before = work.read("lock.txt");
    let (code, _, stderr) = compile(&work, &index, LATER, &["-P", "nothere"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--upgrade-package nothere: nothere is not in the layer"),
        "{stderr}"
    );
    work.write("base.txt", "certifi==2024.1.1\n");
    let (code, _, stderr) = compile(
        &work,
        &index,
        LATER,
        &["-P", "certifi", "--base", "base.txt"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("certifi is the image's (base.txt:1)"),
        "{stderr}"
    );
    assert_eq!(work.read("lock.txt"), before, "nothing written");
}

#[test]
fn an_unreadable_lock_is_refused_with_its_line_unless_upgrading() {
    let (index, work) = (index(), Work::new());
    old_lock(&work, &index);
    let broken = format!("{}garbage ===\n", work.read("lock.txt"));
    work.write("lock.txt", &broken);
    let (code, _, stderr) = compile(&work, &index, LATER, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("lock.txt:"), "{stderr}");
    assert!(stderr.contains("its pins are kept"), "{stderr}");
    assert!(stderr.contains("--upgrade"), "{stderr}");
    assert_eq!(work.read("lock.txt"), broken, "nothing written");
    let (code, _, stderr) = compile(&work, &index, LATER, &["--upgrade"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("warning: lock.txt cannot be read as a lock"),
        "{stderr}"
    );
}

#[test]
fn another_tool_s_pins_are_kept_and_a_pin_written_twice_is_named() {
    let (index, work) = (index(), Work::new());
    work.write("in.txt", "web\n");
    // Pins by hand beside a range: not a lock, but its pins are kept.
    work.write(
        "lock.txt",
        "urllib3==1.26.5\n    # via web\ncertifi==2024.1.1\nweb>=1\n",
    );
    let (code, _, stderr) = compile(&work, &index, LATER, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("its 2 exact pins are kept"), "{stderr}");
    // web was not pinned: its newest needs urllib3>=2, so only certifi's
    // pin holds.
    assert_eq!(
        locked(&work),
        ["certifi==2024.1.1", "urllib3==2.0.0", "web==1.1.0"]
    );
    work.write("lock.txt", "urllib3==1.26.0\nurllib3==1.26.5\n");
    let (code, _, stderr) = compile(&work, &index, LATER, &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("urllib3 is pinned twice"), "{stderr}");
    assert!(
        stderr.contains("lock.txt:1") && stderr.contains("lock.txt:2"),
        "{stderr}"
    );
}

#[test]
fn diff_tells_two_locks_apart_in_every_form() {
    let (index, work) = (index(), Work::new());
    old_lock(&work, &index);
    let old = work.read("lock.txt");
    work.write("old.txt", &old);
    let (code, _, stderr) = compile(&work, &index, LATER, &["-U", "--format", "pylock.toml"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(work.compile(
        &index.json(),
        &["in.txt", "-o", "pylock.toml", "--exclude-newer", LATER],
    ));
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = run(work.layerlock(&[
        "diff",
        "old.txt",
        "pylock.toml",
        "--now",
        LATER,
        "--exit-code",
    ]));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stdout.starts_with("upgrades 3 packages, keeps 0"),
        "{stdout}"
    );
    // pylock.toml records upload times, so the new side has them.
    assert!(
        stdout.contains("upgraded   web 1.0.0 -> 1.1.0, uploaded 2024-06-01 (214 days old)"),
        "{stdout}"
    );
    let (code, stdout, _) =
        run(work.layerlock(&["diff", "old.txt", "old.txt", "--format", "json"]));
    assert_eq!(code, 0);
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["counts"]["kept"], 3, "{report}");
    let (code, stdout, _) =
        run(work.layerlock(&["diff", "old.txt", "pylock.toml", "--format", "markdown"]));
    assert_eq!(code, 0);
    assert!(
        stdout.starts_with("**Upgrades 3 packages, keeps 0.**"),
        "{stdout}"
    );
    // Every column shown is filled by some row: upload times from the
    // pylock side, what asks for each package from the lock's `via`.
    assert!(
        stdout.contains("| change | package | version | uploaded | via |\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("| upgraded | `web` | 1.0.0 -> 1.1.0 | 2024-06-01"),
        "{stdout}"
    );
    // Two requirements files know no upload times: no empty column.
    let (_, stdout, _) =
        run(work.layerlock(&["diff", "old.txt", "old.txt", "--format", "markdown"]));
    assert!(!stdout.contains("|  |"), "{stdout}");
}

#[test]
fn a_pyproject_is_an_input_with_extras_and_groups() {
    let (index, work) = (index(), Work::new());
    work.write(
        "pyproject.toml",
        "[project]\nname = \"svc\"\nversion = \"1\"\ndependencies = [\"web\"]\n\n[project.optional-dependencies]\nplugins = [\"plugin\"]\n\n[dependency-groups]\ncerts = [\"certifi<2024.6\"]\n",
    );
    let (code, _, stderr) = run(work.compile(
        &index.json(),
        &[
            "pyproject.toml",
            "-o",
            "lock.txt",
            "--exclude-newer",
            LATER,
            "--extra",
            "plugins",
            "--group",
            "certs",
        ],
    ));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        locked(&work),
        [
            "certifi==2024.1.1",
            "helperlib==1.2.0",
            "plugin==1.0.0",
            "urllib3==2.0.0",
            "web==1.1.0"
        ]
    );
    let lock = work.read("lock.txt");
    assert!(lock.contains("--extra plugins --group certs"), "{lock}");
    work.write(
        "pyproject.toml",
        "[project]\nname = \"svc\"\nversion = \"1\"\ndynamic = [\"dependencies\"]\n",
    );
    let (code, _, stderr) =
        run(work.compile(&index.json(), &["pyproject.toml", "--exclude-newer", LATER]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("dynamic") && stderr.contains("never runs"),
        "{stderr}"
    );
}

#[test]
fn check_from_a_subdirectory_judges_content_not_spelling() {
    let (index, work) = (index(), Work::new());
    std::fs::create_dir_all(work.path().join(".git")).unwrap();
    work.write("in.txt", "web\n");
    let (code, _, stderr) = compile(&work, &index, LATER, &[]);
    assert_eq!(code, 0, "{stderr}");
    work.write("sub/keep", "");
    let mut cmd = work.compile(
        &index.json(),
        &[
            "../in.txt",
            "-o",
            "../lock.txt",
            "--exclude-newer",
            LATER,
            "--now",
            LATER,
            "--check",
        ],
    );
    cmd.current_dir(work.path().join("sub"));
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

#[test]
fn the_cooldown_holds_back_what_moves_and_names_young_kept_pins() {
    let (index, work) = (index(), Work::new());
    old_lock(&work, &index);
    // Two days after web 1.1.0 came out: -P web may not take it yet.
    let young = ["--min-age", "7d"];
    let now = "2024-06-03T00:00:00Z";
    let (code, _, stderr) = compile_at(
        &work,
        &index,
        LATER,
        now,
        &["-P", "web", young[0], young[1]],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        locked(&work),
        ["certifi==2024.1.1", "urllib3==1.26.0", "web==1.0.0"]
    );
    assert!(
        stderr.contains("web: 1.0.0 instead of 1.1.0 (eligible at 2024-06-08 00:00 UTC)"),
        "{stderr}"
    );
    // Pins taken before the policy are kept, and named while young.
    let (code, _, stderr) = compile(&work, &index, LATER, &["-U"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = compile_at(&work, &index, LATER, now, &young);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        locked(&work),
        ["certifi==2024.6.1", "urllib3==2.0.0", "web==1.1.0"]
    );
    assert!(
        stderr.contains("kept 3 pins younger than the cooldown"),
        "{stderr}"
    );
    assert!(
        stderr.contains("web==1.1.0 (eligible at 2024-06-08 00:00 UTC)"),
        "{stderr}"
    );
}

#[test]
fn constraints_overrides_extras_and_groups_come_from_the_config_too() {
    let (index, work) = (index(), Work::new());
    work.write(
        "pyproject.toml",
        "[project]\nname = \"svc\"\nversion = \"1\"\ndependencies = [\"web==1.0.0\"]\n\n[project.optional-dependencies]\nplugins = [\"plugin\"]\n\n[dependency-groups]\ncerts = [\"certifi\"]\n",
    );
    work.write("c.txt", "helperlib<1.2\n");
    work.write("o.txt", "urllib3>=2\n");
    work.write(
        "layerlock.toml",
        &format!(
            "python-version = \"3.12\"\nplatform = \"x86_64-manylinux_2_28\"\nexclude-newer = \"{LATER}\"\nindex-url = \"{}\"\n\n[[layer]]\nname = \"svc\"\ninputs = [\"pyproject.toml\"]\nextras = [\"plugins\"]\ngroups = [\"certs\"]\nconstraints = [\"c.txt\"]\noverrides = [\"o.txt\"]\noutput = \"lock.txt\"\n",
            index.json()
        ),
    );
    let (code, _, stderr) = run(work.layerlock(&["compile"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        locked(&work),
        [
            "certifi==2024.6.1",
            "helperlib==1.0.0",
            "plugin==1.0.0",
            "urllib3==2.0.0",
            "web==1.0.0"
        ]
    );
}
