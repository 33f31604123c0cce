//! Regressions from an adversarial review: each test is named after what
//! broke, and checks the clear error (exit 2) that replaced it.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use common::{Index, Work, run};

const NO_INDEX: &str = "http://127.0.0.1:9/simple/";

fn lock(work: &Work) {
    work.write(
        "lock.txt",
        "# layerlock-target: python=3.12 platform=x86_64-manylinux_2_28\nfresh==1.0.0 \\\n    --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000\n",
    );
}

#[test]
fn an_absurd_min_age_is_refused_instead_of_overflowing() {
    let work = Work::new();
    lock(&work);
    for age in ["999999999999999d", "100000000d", "P1M", "-1d", "d", ""] {
        let (code, _, stderr) = run(work.layerlock(&["cooldown", "lock.txt", "--min-age", age]));
        assert_eq!(code, 2, "{age}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn since_cannot_pass_options_to_git() {
    let work = Work::new();
    lock(&work);
    let (code, _, stderr) = run(work.layerlock(&[
        "cooldown",
        "lock.txt",
        "--min-age",
        "7d",
        "--since=--output=/tmp/layerlock-should-not-exist",
    ]));
    assert_eq!(code, 2, "{stderr}");
    assert!(!std::path::Path::new("/tmp/layerlock-should-not-exist:./lock.txt").exists());
}

#[test]
fn an_unpinned_base_entry_is_an_error() {
    let work = Work::new();
    work.write("in.txt", "app\n");
    work.write("base.txt", "lib>=1\n");
    let (code, _, stderr) = run(work.compile(NO_INDEX, &["in.txt", "--base", "base.txt"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("base.txt:1: the base entry `lib>=1` is not pinned with =="),
        "{stderr}"
    );
}

#[test]
fn an_output_that_is_an_input_or_shared_is_refused() {
    let work = Work::new();
    work.write("in.txt", "app\n");
    let (code, _, stderr) = run(work.compile(NO_INDEX, &["in.txt", "-o", "in.txt"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("both an input (or base) and an output"),
        "{stderr}"
    );
    assert_eq!(work.read("in.txt"), "app\n");
    work.write(
        "layerlock.toml",
        "python-version = \"3.12\"\nplatform = \"linux\"\n[[layer]]\nname = \"a\"\ninputs = [\"in.txt\"]\noutput = \"out.txt\"\n[[layer]]\nname = \"b\"\ninputs = [\"in.txt\"]\noutput = \"out.txt\"\n",
    );
    let (code, _, stderr) = run(work.layerlock(&["compile"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("layers `a` and `b` both write out.txt"),
        "{stderr}"
    );
}

#[test]
fn an_include_of_a_device_is_refused_instead_of_hanging() {
    let work = Work::new();
    work.write("in.txt", "-r /dev/zero\n");
    let (code, _, stderr) = run(work.compile(NO_INDEX, &["in.txt"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("/dev/zero is not a regular file"),
        "{stderr}"
    );
}

#[test]
fn deeply_nested_markers_are_refused_not_a_stack_overflow() {
    let work = Work::new();
    let deep = format!(
        "app; {}python_version>\"3\"{}\n",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    work.write("in.txt", &deep);
    let (code, _, stderr) = run(work.compile(NO_INDEX, &["in.txt"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("in.txt:1:1: markers nest 100000 parentheses deep"),
        "{}",
        &stderr[..300.min(stderr.len())]
    );
    assert!(
        stderr.len() < 2_000,
        "the error must not echo the whole line"
    );
}

#[test]
fn undefined_variables_stay_as_written() {
    let work = Work::new();
    work.write("in.txt", "app==${LAYERLOCK_UNDEFINED_VERSION}\n");
    let (code, _, stderr) = run(work.compile(NO_INDEX, &["in.txt"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("${LAYERLOCK_UNDEFINED_VERSION}"),
        "{stderr}"
    );
}

#[test]
fn a_lock_with_a_package_twice_is_refused() {
    let work = Work::new();
    work.write(
        "lock.txt",
        "app==2.0.0 --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000\nlib==1.0 --hash=sha256:1111111111111111111111111111111111111111111111111111111111111111\napp==1.0.0 --hash=sha256:2222222222222222222222222222222222222222222222222222222222222222\n",
    );
    let (code, _, stderr) = run(work.layerlock(&["verify", "lock.txt", "--python", "python3"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("lock.txt:3: app is locked twice (also at lock.txt:1)"),
        "{stderr}"
    );
}

#[test]
fn an_unknown_platform_in_a_lock_header_is_refused() {
    let work = Work::new();
    work.write(
        "lock.txt",
        "# layerlock-target: python=3.11 platform=bogus\napp==2.0.0 --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000\n",
    );
    let (code, _, stderr) = run(work.layerlock(&["verify", "lock.txt", "--python", "python3"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("does not know: `bogus`"), "{stderr}");
}

/// `repo/` with one pipeline holding one install.
fn audit_repo(work: &Work) -> std::path::PathBuf {
    let repo = work.path().join("repo");
    std::fs::create_dir_all(repo.join(".buildkite")).unwrap();
    std::fs::write(
        repo.join(".buildkite/ok.yml"),
        "steps:\n  - key: a\n    command: pip install x\n",
    )
    .unwrap();
    repo
}

#[test]
fn binary_files_and_symlink_loops_in_an_audit() {
    let work = Work::new();
    let repo = audit_repo(&work);
    std::fs::write(repo.join(".buildkite/blob.yml"), b"\x00\x01binary\x00").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("../.buildkite", repo.join(".buildkite/loop")).unwrap();
    let mut cmd = work.layerlock(&["audit", "repo", "--format", "json"]);
    cmd.current_dir(work.path());
    let (code, stdout, _) = run(cmd);
    assert_eq!(code, 2, "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["findings"].as_array().unwrap().len(), 1, "{stdout}");
    assert_eq!(report["errors"][0]["path"], ".buildkite/blob.yml");
}

#[test]
fn allowlist_lines_with_bad_numbers_or_rules_are_errors() {
    let work = Work::new();
    let repo = audit_repo(&work);
    for line in [
        ".buildkite/ok.yml:18446744073709551616 job-time-install  # r",
        ".buildkite/ok.yml:abc job-time-install  # r",
        ".buildkite/ok.yml no-such-rule  # r",
    ] {
        std::fs::write(repo.join(".layerlock-allowlist"), format!("{line}\n")).unwrap();
        let mut cmd = work.layerlock(&["audit", "repo"]);
        cmd.current_dir(work.path());
        let (code, _, stderr) = run(cmd);
        assert_eq!(code, 2, "{line}: {stderr}");
        assert!(stderr.contains(".layerlock-allowlist:1"), "{stderr}");
    }
}

#[test]
fn an_include_chain_thousands_deep_is_an_error_not_a_stack_overflow() {
    let work = Work::new();
    for i in 0..5_000 {
        work.write(&format!("in{i}.txt"), &format!("-r in{}.txt\n", i + 1));
    }
    work.write("in5000.txt", "app\n");
    let (code, _, stderr) = run(work.compile(NO_INDEX, &["in0.txt"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("nested -r/-c includes"), "{stderr}");
}

#[test]
fn a_depends_on_chain_of_forty_thousand_steps_is_checked() {
    let work = Work::new();
    let mut yaml = String::from("steps:\n");
    for i in 0..40_000 {
        yaml.push_str(&format!("  - key: s{i}\n    command: x\n"));
        if i > 0 {
            yaml.push_str(&format!("    depends_on: s{}\n", i - 1));
        }
    }
    yaml.push_str("  - key: s0b\n    command: x\n    depends_on: s39999\n");
    work.write(".buildkite/p.yaml", &yaml);
    let (code, stdout, stderr) = run(work.layerlock(&["steps"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("40001 steps"), "{stdout}");
}

#[test]
fn a_reader_that_goes_away_ends_the_output_quietly() {
    let work = Work::new();
    let mut yaml = String::from("steps:\n");
    for i in 0..2_000 {
        yaml.push_str(&format!("  - key: s{i}\n    command: pip install p{i}\n"));
    }
    work.write(".buildkite/p.yaml", &yaml);
    let cmd = work.layerlock(&["audit"]);
    let (code, stderr) = common::run_reader_gone(&cmd, work.path());
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(code, Some(141), "{stderr}");
}

#[test]
fn a_lock_written_onto_a_symlink_keeps_the_link() {
    let work = Work::new();
    // Covered by the base: a lock of nothing new, with no index asked.
    work.write("empty.txt", "lib\n");
    work.write("base.txt", "lib==1.0.0\n");
    std::os::unix::fs::symlink("locks/real.txt", work.path().join("link.txt")).unwrap();
    std::fs::create_dir_all(work.path().join("locks")).unwrap();
    let (code, _, stderr) = run(work.compile(
        NO_INDEX,
        &["empty.txt", "--base", "base.txt", "-o", "link.txt"],
    ));
    assert_eq!(code, 0, "{stderr}");
    let meta = std::fs::symlink_metadata(work.path().join("link.txt")).unwrap();
    assert!(meta.file_type().is_symlink());
    assert!(
        work.read("locks/real.txt")
            .contains("generated by layerlock")
    );
}

#[test]
fn a_lock_is_never_written_onto_a_fifo() {
    let work = Work::new();
    // Covered by the base: a lock of nothing new, with no index asked.
    work.write("empty.txt", "lib\n");
    work.write("base.txt", "lib==1.0.0\n");
    let fifo = work.path().join("fifo.txt");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let (code, _, stderr) = run(work.compile(
        NO_INDEX,
        &["empty.txt", "--base", "base.txt", "-o", "fifo.txt"],
    ));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is not a regular file"), "{stderr}");
}

#[test]
fn errors_quote_a_bounded_excerpt_of_hostile_input() {
    let work = Work::new();
    work.write("in.txt", &format!("{}==1 ; @@@\n", "a".repeat(1_000_000)));
    let (code, _, stderr) = run(work.compile(NO_INDEX, &["in.txt"]));
    assert_eq!(code, 2);
    assert!(stderr.len() < 4_000, "{} bytes of stderr", stderr.len());
    // A lock entry is quoted by layerlock itself, not by the parser.
    work.write(
        "lock.txt",
        &format!("{}>=1 --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000\n", "b".repeat(1_000_000)),
    );
    let (code, _, stderr) = run(work.layerlock(&["verify", "lock.txt", "--python", "python3"]));
    assert_eq!(code, 2);
    assert!(stderr.len() < 4_000, "{} bytes of stderr", stderr.len());
}

#[test]
fn an_allowlist_outside_the_repository_is_not_read() {
    let outside = Work::new();
    outside.write("secret.txt", "TOKEN=hunter2 job-time-install  # x\n");
    let work = Work::new();
    work.write(
        ".buildkite/p.yaml",
        "steps:\n  - key: a\n    command: pip install x\n",
    );
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        work.path().join(".layerlock-allowlist"),
    )
    .unwrap();
    let (code, stdout, stderr) = run(work.layerlock(&["audit"]));
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("resolves outside the repository"),
        "{stderr}"
    );
    assert!(!format!("{stdout}{stderr}").contains("hunter2"));
}

#[test]
fn fifos_and_device_links_in_a_scanned_tree_are_refused_not_read() {
    let work = Work::new();
    std::fs::create_dir_all(work.path().join(".buildkite")).unwrap();
    assert!(
        std::process::Command::new("mkfifo")
            .arg(work.path().join(".buildkite/fifo.yaml"))
            .status()
            .unwrap()
            .success()
    );
    std::os::unix::fs::symlink("/dev/zero", work.path().join(".buildkite/zero.yml")).unwrap();
    for args in [&["audit"][..], &["steps"][..]] {
        let (code, stdout, stderr) = run(work.layerlock(args));
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
    }
    let (code, _, stderr) = run(work.layerlock(&["tether", "--explain", "missing.py"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("missing.py does not exist"), "{stderr}");
}

#[test]
fn a_remote_index_cannot_point_at_local_files() {
    let index = Index::start(&["layer.toml"], &["--local-file-urls", "file:///dev/zero"]);
    let work = Work::new();
    work.write("in.txt", "late\n");
    for url in [index.json(), index.html()] {
        let (code, _, stderr) = run(work.compile(&url, &["in.txt", "-o", "out.txt"]));
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("not an HTTP(S) URL"), "{stderr}");
    }
}

#[test]
fn cooldown_offline_without_cached_pages_fails_instead_of_asking_the_network() {
    let work = Work::new();
    work.write(
        "lock.txt",
        &format!("app==1.0 --hash=sha256:{}\n", "0".repeat(64)),
    );
    let (code, _, stderr) = run(work.layerlock(&[
        "cooldown",
        "lock.txt",
        "--offline",
        "--min-age",
        "7d",
        "--index-url",
        NO_INDEX,
    ]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("the cache holds no page for app"),
        "{stderr}"
    );
}

#[test]
fn credentials_never_reach_the_lock_or_messages() {
    let work = Work::new();
    // Covered by the base: a lock of nothing new, with no index asked.
    work.write("empty.txt", "lib\n");
    work.write("base.txt", "lib==1.0.0\n");
    let (code, stdout, stderr) = run(work.layerlock(&[
        "compile",
        "empty.txt",
        "--base",
        "base.txt",
        "--index-url=http://user:s3cret@127.0.0.1:9/simple/",
        "--python-version",
        "3.12",
        "--platform",
        "x86_64-manylinux_2_28",
        "-o",
        "-",
    ]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("--index-url http://127.0.0.1:9/simple/"),
        "{stdout}"
    );
    assert!(!format!("{stdout}{stderr}").contains("s3cret"));
    // An invalid port, and an option line of a requirements file.
    work.write("bad.txt", "--index-url https://u:s3cret@h:99999/x\napp\n");
    let (code, stdout, stderr) = run(work.compile(NO_INDEX, &["bad.txt"]));
    assert_eq!(code, 2);
    assert!(!format!("{stdout}{stderr}").contains("s3cret"), "{stderr}");
    // `${VAR}` is reported as written, never expanded, in errors.
    work.write("var.txt", "app==${LAYERLOCK_TEST_SECRET} ; @@\n");
    let mut cmd = work.compile(NO_INDEX, &["var.txt"]);
    cmd.env("LAYERLOCK_TEST_SECRET", "s3cret");
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(stderr.contains("${LAYERLOCK_TEST_SECRET}"), "{stderr}");
    assert!(!format!("{stdout}{stderr}").contains("s3cret"), "{stderr}");
    // `-r /proc/self/environ` is binary to us: refused, never quoted.
    work.write("env.txt", "-r /proc/self/environ\n");
    let mut cmd = work.compile(NO_INDEX, &["env.txt"]);
    cmd.env("LAYERLOCK_TEST_SECRET", "s3cret");
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(!format!("{stdout}{stderr}").contains("s3cret"), "{stderr}");
}

#[test]
fn unknown_config_keys_are_errors_naming_the_nearest_key() {
    let work = Work::new();
    work.write("in.txt", "");
    work.write(
        "layerlock.toml",
        "exclude-newr = \"2025-01-01\"\n[[layer]]\ninputs = [\"in.txt\"]\n",
    );
    let (code, _, stderr) = run(work.layerlock(&["compile"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("unknown key `exclude-newr`; did you mean `exclude-newer`?"),
        "{stderr}"
    );
    work.write("layerlock.toml", "[tether]\ntest-root = [\"tests\"]\n");
    let (code, _, stderr) = run(work.layerlock(&["tether", "--all"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("[tether] (line 2): unknown key `test-root`; did you mean `test-roots`?"),
        "{stderr}"
    );
    std::fs::remove_file(work.path().join("layerlock.toml")).unwrap();
    work.write(
        "pyproject.toml",
        "[tool.layerlock.audit]\nallow-list = \"x\"\n",
    );
    let (code, _, stderr) = run(work.layerlock(&["audit"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("did you mean `allowlist`?"), "{stderr}");
    for config in ["missing.toml", "."] {
        let (code, _, stderr) = run(work.layerlock(&["compile", "in.txt", "--config", config]));
        assert_eq!(code, 2, "{config}: {stderr}");
    }
}

#[test]
fn a_tampered_cache_entry_is_never_used() {
    let index = Index::start(&["layer.toml"], &[]);
    let work = Work::new();
    work.write("in.txt", "app\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "a.txt"]));
    assert_eq!(code, 0, "{stderr}");
    // Add a dependency to every cached METADATA, rewrite every cached page.
    let mut tampered = 0;
    let mut dirs = vec![work.cache.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let mut text = std::fs::read_to_string(&path).unwrap();
                if path.extension().is_some_and(|e| e == "METADATA") {
                    text.push_str("Requires-Dist: evil\n");
                } else {
                    text = text.replace("sha256", "sha512");
                }
                std::fs::write(&path, text).unwrap();
                tampered += 1;
            }
        }
    }
    assert!(tampered > 0);
    let (code, _, stderr) =
        run(work.compile(&index.json(), &["in.txt", "--offline", "-o", "b.txt"]));
    assert_eq!(code, 2, "offline, a tampered cache is no cache: {stderr}");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "b.txt"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        common::body(&work.read("a.txt")),
        common::body(&work.read("b.txt"))
    );
    assert!(!work.read("b.txt").contains("evil"));
}

#[test]
fn an_index_that_hangs_or_drips_is_abandoned() {
    for mode in ["hang", "drip"] {
        let index = Index::start(&["layer.toml"], &["--fault-path", "/app/", "--fault", mode]);
        let work = Work::new();
        work.write("in.txt", "app\n");
        let mut cmd = work.compile(&index.json(), &["in.txt", "-o", "out.txt"]);
        cmd.args(["--timeout", "1"]);
        let (code, _, stderr) = run(cmd);
        assert_eq!(code, 2, "{mode}: {stderr}");
        assert!(stderr.contains("app"), "{mode}: {stderr}");
        assert!(!work.path().join("out.txt").exists());
    }
}

#[test]
fn a_lock_or_config_that_is_a_fifo_is_refused_not_read() {
    let work = Work::new();
    for name in ["lock.txt", "layerlock.toml"] {
        assert!(
            std::process::Command::new("mkfifo")
                .arg(work.path().join(name))
                .status()
                .unwrap()
                .success()
        );
    }
    let (code, _, stderr) = run(work.layerlock(&["verify", "lock.txt", "--python", "python3"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not a regular file"), "{stderr}");
    let (code, _, stderr) = run(work.layerlock(&["steps"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not a regular file"), "{stderr}");
}

#[test]
fn a_misbehaving_index_ends_in_a_clear_error_and_no_output() {
    for (mode, expect) in [
        ("reset", "app"),
        ("truncate", "app"),
        ("redirect-loop", "app"),
        ("giant", "larger than 128 MiB"),
        ("wrong-type", "app"),
    ] {
        let index = Index::start(&["layer.toml"], &["--fault-path", "/app/", "--fault", mode]);
        let work = Work::new();
        work.write("in.txt", "app\n");
        work.write("out.txt", "kept\n");
        let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "out.txt"]));
        assert_eq!(code, 2, "{mode}: {stderr}");
        assert!(stderr.contains(expect), "{mode}: {stderr}");
        assert!(!stderr.contains("panicked"), "{mode}: {stderr}");
        assert_eq!(work.read("out.txt"), "kept\n", "{mode}");
    }
}

#[test]
fn too_many_requests_is_retried_as_the_server_asks() {
    let index = Index::start(
        &["layer.toml"],
        &["--fault-path", "/app/", "--fault", "429"],
    );
    let work = Work::new();
    work.write("in.txt", "app\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "out.txt"]));
    assert_eq!(code, 0, "{stderr}");
    let requests = index.requests();
    let asked = requests.lines().filter(|l| l.contains("/app/")).count();
    assert!(asked >= 2, "{requests}");
}

#[test]
fn script_chains_past_the_limit_are_reported_not_dropped() {
    let work = Work::new();
    work.write(
        ".github/workflows/ci.yml",
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: bash s0.sh\n",
    );
    for i in 0..40 {
        work.write(&format!("s{i}.sh"), &format!("bash s{}.sh\n", i + 1));
    }
    work.write("s40.sh", "pip install deep\n");
    let (code, stdout, stderr) = run(work.layerlock(&["audit"]));
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stdout.contains("more than 32 deep") || stderr.contains("more than 32 deep"),
        "{stdout}{stderr}"
    );
}

#[test]
fn directory_symlink_loops_neither_hang_nor_duplicate_steps() {
    let work = Work::new();
    work.write(
        ".buildkite/p.yaml",
        "steps:\n  - key: a\n    command: pytest tests\n",
    );
    work.write("tests/test_a.py", "");
    std::os::unix::fs::symlink(".", work.path().join(".buildkite/self")).unwrap();
    std::os::unix::fs::symlink("..", work.path().join(".buildkite/up")).unwrap();
    std::os::unix::fs::symlink("..", work.path().join("tests/loop")).unwrap();
    let (code, stdout, stderr) = run(work.layerlock(&["steps"]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("1 step in 1 pipeline file"), "{stdout}");
    let (code, stdout, stderr) = run(work.layerlock(&["tether", "--all"]));
    assert_eq!(code, 0, "{stdout}{stderr}");
}

#[test]
fn metadata_that_names_another_project_is_refused() {
    let index = Index::start(&["lying.toml"], &[]);
    let work = Work::new();
    work.write("in.txt", "liar\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "out.txt"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("names honest instead of liar"), "{stderr}");
    assert!(!work.path().join("out.txt").exists());
}

#[test]
fn a_lock_of_a_hundred_thousand_lines_is_checked_for_duplicates() {
    let work = Work::new();
    let mut lock = String::new();
    for i in 0..100_000 {
        lock.push_str(&format!("p{i}==1.0 --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000\n"));
    }
    lock.push_str(
        "p7==2.0 --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000\n",
    );
    work.write("lock.txt", &lock);
    let (code, _, stderr) = run(work.layerlock(&["verify", "lock.txt", "--python", "python3"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("lock.txt:100001: p7 is locked twice (also at lock.txt:8)"),
        "{stderr}"
    );
}

#[test]
fn a_stats_file_that_is_an_input_or_the_lock_is_refused() {
    let index = Index::start(&["layer.toml"], &[]);
    let work = Work::new();
    work.write("in.txt", "app\n");
    for stats in ["in.txt", "out.txt", "./in.txt"] {
        work.write("out.txt", "kept\n");
        let (code, _, stderr) = run(work.compile(
            &index.json(),
            &["in.txt", "-o", "out.txt", "--stats", stats],
        ));
        assert_eq!(code, 2, "--stats {stats}: {stderr}");
        assert!(stderr.contains("--stats"), "{stderr}");
        assert_eq!(work.read("in.txt"), "app\n", "--stats {stats}");
        assert_eq!(work.read("out.txt"), "kept\n", "--stats {stats}");
    }
    let (code, _, stderr) = run(work.compile(
        &index.json(),
        &["in.txt", "-o", "out.txt", "--stats", "stats.json"],
    ));
    assert_eq!(code, 0, "{stderr}");
    let stats: serde_json::Value = serde_json::from_str(&work.read("stats.json")).unwrap();
    assert_eq!(stats["layerlock_stats"], 1);
}

/// The messages a new user met that did not say where or what (issue 23):
/// each names the file (and line) and what to do.
#[test]
fn errors_name_the_file_the_line_and_what_to_do() {
    let work = Work::new();
    let target = [
        "--python-version",
        "3.12",
        "--platform",
        "x86_64-manylinux_2_28",
    ];
    let compile = |args: &[&str]| {
        let mut all = vec!["compile"];
        all.extend_from_slice(args);
        all.extend_from_slice(&target);
        all.extend_from_slice(&["--index-url", NO_INDEX]);
        run(work.layerlock(&all))
    };
    // A missing input, and a missing include, in plain words.
    let (code, _, stderr) = compile(&["ci/nope.in"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("ci/nope.in: no such file"), "{stderr}");
    assert!(!stderr.contains("failed to query"), "{stderr}");
    work.write("inc.in", "-r missing.txt\n");
    let (code, _, stderr) = compile(&["inc.in"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("inc.in:1:1: the included file missing.txt does not exist"),
        "{stderr}"
    );
    // Every unpinned base line at once, with the --owned that would do.
    work.write("a.in", "app\n");
    work.write("base.txt", "a>=1\nb\nc==1.0\n");
    let (code, _, stderr) = compile(&["a.in", "--base", "base.txt"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("2 base entries are not pinned"), "{stderr}");
    assert!(
        stderr.contains("base.txt:1: a>=1") && stderr.contains("base.txt:2: b"),
        "{stderr}"
    );
    assert!(stderr.contains("--owned a --owned b"), "{stderr}");
    // --layer names the layers there are.
    work.write(
        "layerlock.toml",
        "python-version = \"3.12\"\nplatform = \"linux\"\n[[layer]]\nname = \"gpu\"\ninputs = [\"a.in\"]\n[[layer]]\nname = \"cpu\"\ninputs = [\"a.in\"]\n",
    );
    let (code, _, stderr) = run(work.layerlock(&["compile", "--layer", "nope"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("its layers are `gpu`, `cpu`"), "{stderr}");
    // `steps` on a file that is no pipeline is an error, not "0 steps".
    work.write("README", "# hello\n");
    let (code, _, stderr) = run(work.layerlock(&["steps", "README"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not a Buildkite pipeline"), "{stderr}");
    // Two files checked as one pipeline: the duplicate says how to part them.
    work.write(
        ".buildkite/one.yml",
        "steps:\n  - label: a\n    key: a\n    command: make\n",
    );
    work.write(
        ".buildkite/two.yml",
        "steps:\n  - label: a\n    key: a\n    command: make\n",
    );
    let (code, stdout, _) = run(work.layerlock(&["steps", ".buildkite"]));
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("name each in `[steps] pipelines`"),
        "{stdout}"
    );
}

#[test]
fn tether_of_a_file_outside_the_test_roots_is_no_silent_pass() {
    let work = Work::new();
    work.write("tests/test_a.py", "def test_a():\n    pass\n");
    work.write("other/test_b.py", "def test_b():\n    pass\n");
    work.write(
        ".buildkite/p.yml",
        "steps:\n  - label: t\n    key: t\n    command: pytest tests/test_a.py\n",
    );
    for args in [&["init", "-q"][..], &["add", "-A"]] {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(work.path())
            .status()
            .unwrap();
        assert!(status.success());
    }
    let (code, _, stderr) = run(work.layerlock(&["tether", "other/test_b.py"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("none of the 1 given file is a test file under the test roots (tests)"),
        "{stderr}"
    );
    let (code, _, stderr) = run(work.layerlock(&["tether", "other/test_b.py", "tests/test_a.py"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("other/test_b.py is not a test file"),
        "{stderr}"
    );
}

#[test]
fn python_may_be_a_virtual_environments_directory() {
    let work = Work::new();
    let python = common::venv(&work, "env", false);
    let venv = python.parent().unwrap().parent().unwrap().to_path_buf();
    work.write("lock.txt", "six==1.16.0\n");
    let dir = venv.display().to_string();
    let (code, stdout, stderr) = run(work.layerlock(&["verify", "lock.txt", "--python", &dir]));
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stdout.contains("missing    six==1.16.0 (lock.txt:1)"),
        "{stdout}"
    );
    let bin = venv.join("bin").display().to_string();
    let (code, _, stderr) = run(work.layerlock(&["verify", "lock.txt", "--python", &bin]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("is a directory with no bin/python in it"),
        "{stderr}"
    );
    assert!(!stderr.contains("Permission denied"), "{stderr}");
}

#[test]
fn a_config_error_names_its_line_and_key() {
    let work = Work::new();
    work.write("a.in", "app\n");
    for (text, wanted) in [
        (
            "platform = \"linux\"\npython-version = 3.12\n",
            "layerlock.toml (line 2): `python-version`: invalid type: floating point `3.12`, expected a string",
        ),
        (
            "platform = \"linux\"\n[[layer]]\nname = \"a\"\ninputs = [\"a.in\"]\n[[layer]]\nname = \"b\"\ninputs = \"a.in\"\n",
            "layerlock.toml (line 7): [[layer]] #2: `inputs`: invalid type: string \"a.in\", expected a sequence",
        ),
        (
            "[[layer]]\nname = \"a\"\ninputs = [\"a.in\"]\nbogus = 1\n",
            "layerlock.toml: [[layer]] #1 (line 4): unknown key `bogus`",
        ),
    ] {
        work.write("layerlock.toml", text);
        let (code, _, stderr) = run(work.layerlock(&["compile"]));
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(wanted), "{stderr}");
    }
}

/// A new user's mistakes from a second review (issue 23): nothing checked
/// is no pass, and each error says what is wrong where.
#[test]
fn checking_nothing_fails_and_mistakes_are_named() {
    let work = Work::new();
    let target = [
        "--python-version",
        "3.12",
        "--platform",
        "x86_64-manylinux_2_28",
    ];
    let layerlock = |args: &[&str]| run(work.layerlock(args));
    // No CI at all: audit and steps say so, exit 2.
    let (code, _, stderr) = layerlock(&["audit"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no CI file or script found"), "{stderr}");
    let (code, _, stderr) = layerlock(&["steps"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(".buildkite"), "{stderr}");
    work.write(
        ".buildkite/notes.yml",
        "owner: ci
",
    );
    let (code, _, stderr) = layerlock(&["steps"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no Buildkite pipeline found"), "{stderr}");
    std::fs::remove_dir_all(work.path().join(".buildkite")).unwrap();
    // An input with no requirement, a lock with no package.
    work.write("empty.in", "# nothing yet\n");
    let mut args = vec!["compile", "empty.in"];
    args.extend_from_slice(&target);
    let (code, _, stderr) = layerlock(&args);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("empty.in: no requirements"), "{stderr}");
    let (code, _, stderr) = layerlock(&["cooldown", "empty.in", "--min-age", "7d"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("empty.in: no packages"), "{stderr}");
    // A lock into a directory that does not exist.
    work.write("base.txt", "lib==1.0.0\n");
    work.write("in.txt", "lib\n");
    let mut args = vec![
        "compile",
        "in.txt",
        "--base",
        "base.txt",
        "-o",
        "nodir/out.txt",
    ];
    args.extend_from_slice(&target);
    let (code, _, stderr) = layerlock(&args);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("nodir: the directory does not exist"),
        "{stderr}"
    );
    // A base compiled for another target.
    work.write(
        "mac.txt",
        "# layerlock-target: python=3.12 platform=aarch64-apple-darwin\nlib==1.0.0 \\\n    --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000\n",
    );
    let mut args = vec!["compile", "in.txt", "--base", "mac.txt"];
    args.extend_from_slice(&target);
    let (code, _, stderr) = layerlock(&args);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--base mac.txt was compiled for Python 3.12 on"),
        "{stderr}"
    );
    // [layer] for [[layer]]; a target the config names wrongly.
    work.write(
        "layerlock.toml",
        "[layer]\nname = \"a\"\ninputs = [\"in.txt\"]\n",
    );
    let (code, _, stderr) = layerlock(&["compile"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("(line 1): `layer` is a list of tables"),
        "{stderr}"
    );
    work.write(
        "layerlock.toml",
        "python-version = \"3.x\"\nplatform = \"linux\"\n[[layer]]\nname = \"a\"\ninputs = [\"in.txt\"]\n",
    );
    let (code, _, stderr) = layerlock(&["compile"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("layerlock.toml: layer `a`:"), "{stderr}");
    std::fs::remove_file(work.path().join("layerlock.toml")).unwrap();
    // A program that is no Python.
    let (code, _, stderr) = layerlock(&["verify", "base.txt", "--python", "/bin/false"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is it a Python interpreter?"), "{stderr}");
}

#[test]
fn markers_that_hide_nesting_in_strings_or_multiply_out_are_refused() {
    let work = Work::new();
    let hidden = format!(
        "{}os_name == 'posix'{}",
        "(platform_release == ')' or ".repeat(20_000),
        ")".repeat(20_000)
    );
    let product: Vec<String> = (0..14)
        .map(|i| format!("(extra == 'a{i}' or extra == 'b{i}')"))
        .collect();
    let chain: Vec<String> = (0..2_000).map(|i| format!("extra == 'e{i}'")).collect();
    for (marker, said) in [
        (hidden, "20000 parentheses deep"),
        (product.join(" and "), "16384 terms"),
        (chain.join(" or "), "2000 comparisons"),
    ] {
        work.write("in.txt", &format!("app ; {marker}\n"));
        let (code, _, stderr) = run(work.compile(NO_INDEX, &["in.txt"]));
        assert_eq!(code, 2, "{stderr:.300}");
        assert!(stderr.contains(said), "{said}: {stderr:.300}");
        // The same marker in a pylock.toml given to install.
        work.write(
            "pylock.toml",
            &format!(
                "lock-version = \"1.0\"\nenvironments = [\"{}\"]\n",
                marker.replace('"', "\\\"")
            ),
        );
        let (code, _, stderr) = run(work.layerlock(&["install", "pylock.toml", "--dry-run"]));
        assert_eq!(code, 2, "{stderr:.300}");
        assert!(stderr.contains(said), "{said}: {stderr:.300}");
    }
}

#[test]
fn a_requirement_with_thousands_of_extras_is_refused() {
    let work = Work::new();
    let extras: Vec<String> = (0..50_000).map(|i| format!("e{i}")).collect();
    work.write("in.txt", &format!("app[{}]\n", extras.join(",")));
    let (code, _, stderr) = run(work.compile(NO_INDEX, &["in.txt"]));
    assert_eq!(code, 2, "{stderr:.300}");
    assert!(
        stderr.contains("asks for 50000 extras; at most 128"),
        "{stderr:.300}"
    );
}

#[test]
fn a_malformed_now_is_an_error_even_without_a_cooldown() {
    let work = Work::new();
    work.write("in.txt", "app\n");
    for flags in [
        &["--now", "yesterday"][..],
        &["--min-age-exempt", "not a name!"][..],
    ] {
        let mut args = vec!["in.txt"];
        args.extend_from_slice(flags);
        let (code, _, stderr) = run(work.compile(NO_INDEX, &args));
        assert_eq!(code, 2, "{flags:?}: {stderr}");
    }
}

#[test]
fn a_pylock_base_of_wrong_types_or_other_environments_is_refused() {
    let work = Work::new();
    work.write("in.txt", "app\n");
    let package = "[[packages]]\nname = \"lib\"\nversion = \"1.0\"\n";
    for (head, said) in [
        (
            "requires-python = 3.11\n",
            "`requires-python` is not a string",
        ),
        ("environments = [1, 2]\n", "`environments` is not an array"),
        (
            "environments = [\"sys_platform == 'win32'\"]\n",
            "its `environments` do not include the target",
        ),
    ] {
        work.write(
            "pylock.base.toml",
            &format!("lock-version = \"1.0\"\n{head}{package}"),
        );
        let (code, _, stderr) =
            run(work.compile(NO_INDEX, &["in.txt", "--base", "pylock.base.toml"]));
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(said), "{said}: {stderr}");
    }
}

#[test]
fn control_characters_from_ci_files_reach_stdout_escaped() {
    let work = Work::new();
    let repo = work.path().join("repo");
    std::fs::create_dir_all(repo.join(".github/workflows")).unwrap();
    std::fs::write(
        repo.join(".github/workflows/ci.yml"),
        "jobs:\n  a\x1b]0;title\x07:\n    steps:\n      - run: pip install x\x1b[2J\n",
    )
    .unwrap();
    let mut cmd = work.layerlock(&["audit", "repo"]);
    cmd.current_dir(work.path());
    let (code, stdout, _) = run(cmd);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        !stdout.contains('\x1b') && !stdout.contains('\x07'),
        "{stdout:?}"
    );
    assert!(stdout.contains("pip install x\\x1b[2J"), "{stdout}");
}
