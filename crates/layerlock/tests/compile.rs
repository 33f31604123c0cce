//! `layerlock compile` against a real HTTP index serving harness-built wheels.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use common::{Index, Work, body, pins, redactions, run};

fn layer_index() -> Index {
    Index::start(&["layer.toml"], &[])
}

#[test]
fn chain_resolves_newest_compatible_and_snapshots() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "app\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "out.txt"]));
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("out.txt");
    redactions(&work).bind(|| insta::assert_snapshot!(lock));
}

#[test]
fn html_and_json_indexes_give_the_same_packages_and_hashes() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "app\ntool-extra[fast,api]\nnometa\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "json.txt"]));
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(work.compile(&index.html(), &["in.txt", "-o", "html.txt"]));
    assert_eq!(code, 0, "{stderr}");
    let strip = |t: String| -> String {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(work.read("json.txt")), strip(work.read("html.txt")));
}

#[test]
fn base_pin_makes_the_resolver_pick_an_older_new_package() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "app\n");
    work.write("base.txt", "lib==1.5.0\nutil==1.0.0\n");
    let (code, _, stderr) = run(work.compile(
        &index.json(),
        &["in.txt", "--base", "base.txt", "-o", "out.txt"],
    ));
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("out.txt");
    // app 2.0.0 needs lib>=2.0, which the base rules out; lib and util are
    // the base's and are never emitted, nor are util's dependencies.
    assert_eq!(pins(&lock), vec!["app==1.0.0"]);
    assert!(
        lock.contains("#   lib==1.5.0 (base.txt:1) via app"),
        "{lock}"
    );
}

#[test]
fn base_pins_are_never_fetched_even_from_a_vendor_index() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "tool\n");
    work.write(
        "base.txt",
        "--extra-index-url https://download.pytorch.org/whl/cu130\ntorch==2.11.0+cu130\n    # via -r base.in\nlib==1.0.0\n",
    );
    let (code, _, stderr) = run(work.compile(
        &index.json(),
        &["in.txt", "--base", "base.txt", "-o", "out.txt"],
    ));
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("out.txt");
    assert_eq!(pins(&lock), vec!["tool==1.0.0"]);
    // The resolver never asks for a base pin. After it, the file check
    // and the closure check ask the layer's index for the wheels of the
    // base pins (their zip directory, and the metadata of those the layer
    // uses), and one it cannot find is named, never fetched from the
    // base's own index.
    let requests = index.requests();
    assert!(!requests.contains("pytorch"), "{requests}");
    assert!(
        lock.contains("# layerlock-unchecked: torch==2.11.0+cu130 (not on the indexes asked)"),
        "{lock}"
    );
    assert!(
        stderr.contains("torch==2.11.0+cu130 (not on the indexes asked)"),
        "{stderr}"
    );
}

#[test]
fn conflict_with_a_base_pin_is_explained() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "app>=2\n");
    work.write("base.txt", "# the image\nlib==1.5.0\n");
    work.write("out.txt", "# previous contents\n");
    let (code, _, stderr) = run(work.compile(
        &index.json(),
        &["in.txt", "--base", "base.txt", "-o", "out.txt"],
    ));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("the base pins lib==1.5.0 (base.txt:2)"),
        "{stderr}"
    );
    assert!(stderr.contains("app"), "{stderr}");
    // A failed run leaves the previous output untouched.
    assert_eq!(work.read("out.txt"), "# previous contents\n");
    redactions(&work).bind(|| insta::assert_snapshot!(stderr));
}

#[test]
fn extras_of_new_packages_and_of_base_packages() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "tool-extra[fast]\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "out.txt"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        pins(&work.read("out.txt")),
        vec!["lib==2.0.0", "speedy==1.0.0", "tool-extra==1.0.0"]
    );

    // An extra of a base package: only the extra's dependencies are new, and
    // the base package's metadata is fetched for that alone.
    work.write("base.txt", "tool-extra==1.0.0\nlib==1.0.0\n");
    work.write("in2.txt", "Tool_Extra[api]\n");
    let (code, _, stderr) = run(work.compile(
        &index.json(),
        &["in2.txt", "--base", "base.txt", "-o", "out2.txt"],
    ));
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("out2.txt");
    assert_eq!(pins(&lock), vec!["apiclient==1.1.0"]);
    assert!(lock.contains("# via tool-extra"), "{lock}");
}

#[test]
fn markers_are_evaluated_for_the_target() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "util\nhelper; python_version < '3.8'\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "linux.txt"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        pins(&work.read("linux.txt")),
        vec!["linuxonly==1.0.0", "util==1.0.0"]
    );
    let mut cmd = work.layerlock(&[
        "compile",
        "in.txt",
        "--python-version",
        "3.9",
        "--platform",
        "x86_64-pc-windows-msvc",
        "--index-url",
        &index.json(),
        "-o",
        "win.txt",
    ]);
    cmd.env("LAYERLOCK_CACHE_DIR", work.path().join("c2"));
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("win.txt");
    assert_eq!(
        pins(&lock),
        vec!["helper==1.0.0", "util==1.0.0", "winonly==1.0.0"]
    );
    assert!(
        lock.contains("Python 3.9 on x86_64-pc-windows-msvc"),
        "{lock}"
    );
}

#[test]
fn yanked_versions_are_skipped_unless_pinned() {
    let index = layer_index();
    let work = Work::new();
    work.write("a.txt", "yankee\n");
    work.write("b.txt", "yankee==2.0.0\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["a.txt", "-o", "a.lock"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pins(&work.read("a.lock")), vec!["yankee==1.0.0"]);
    let (code, _, stderr) = run(work.compile(&index.json(), &["b.txt", "-o", "b.lock"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pins(&work.read("b.lock")), vec!["yankee==2.0.0"]);
}

#[test]
fn pre_releases_only_when_no_stable_version_fits_or_allowed() {
    let index = layer_index();
    let work = Work::new();
    work.write("a.txt", "prerel\nonlypre\n");
    work.write("b.txt", "prerel>=2.0.0b1\n");
    // Naming a pre-release does not put it ahead of a stable version that
    // fits (uv's default since 0.12); excluding that version does.
    work.write("d.txt", "prerel>=0.9b1\n");
    work.write("e.txt", "prerel>=0.9b1,!=1.0.0\n");
    for (input, lock, pin) in [
        ("d.txt", "d.lock", "prerel==1.0.0"),
        ("e.txt", "e.lock", "prerel==2.0.0b1"),
    ] {
        let (code, _, stderr) = run(work.compile(&index.json(), &[input, "-o", lock]));
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(pins(&work.read(lock)), vec![pin], "{input}");
    }
    let (code, _, stderr) = run(work.compile(&index.json(), &["a.txt", "-o", "a.lock"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        pins(&work.read("a.lock")),
        vec!["onlypre==0.1.0a1", "prerel==1.0.0"]
    );
    let (code, _, stderr) = run(work.compile(&index.json(), &["b.txt", "-o", "b.lock"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pins(&work.read("b.lock")), vec!["prerel==2.0.0b1"]);
    let (code, _, stderr) = run(work.compile(
        &index.json(),
        &["a.txt", "--prerelease", "allow", "-o", "c.lock"],
    ));
    assert_eq!(code, 0, "{stderr}");
    assert!(pins(&work.read("c.lock")).contains(&"prerel==2.0.0b1".to_string()));
}

#[test]
fn local_versions_follow_pep_440() {
    let index = layer_index();
    let work = Work::new();
    work.write("a.txt", "localv==1.0.0\n");
    work.write("b.txt", "localv==1.0.0+cpu\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["a.txt", "-o", "a.lock"]));
    assert_eq!(code, 0, "{stderr}");
    // `==1.0.0` admits local versions of 1.0.0 (PEP 440); the newest wins.
    assert_eq!(pins(&work.read("a.lock")), vec!["localv==1.0.0+cpu"]);
    let (code, _, stderr) = run(work.compile(&index.json(), &["b.txt", "-o", "b.lock"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pins(&work.read("b.lock")), vec!["localv==1.0.0+cpu"]);
}

#[test]
fn sdist_only_is_refused_under_only_binary_with_the_reason() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "srconly\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "--only-binary", ":all:"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains(
            "0.5.0: no wheel for the target, and --only-binary refuses its source distribution"
        ),
        "{stderr}"
    );
    // Nothing was built: the sdist was never downloaded.
    assert!(
        !index.requests().contains(".tar.gz"),
        "{}",
        index.requests()
    );
}

#[test]
fn platform_specific_wheels_and_target_hashes() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "native\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "all.txt"]));
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(work.compile(
        &index.json(),
        &["in.txt", "--hashes", "target", "-o", "target.txt"],
    ));
    assert_eq!(code, 0, "{stderr}");
    let count = |t: &str| t.matches("--hash=sha256:").count();
    // Five wheels and the sdist; on the target only the cp312 manylinux wheel.
    assert_eq!(count(&work.read("all.txt")), 6);
    assert_eq!(count(&work.read("target.txt")), 1);
    // A pylock.toml names one target in `environments`: the target's wheels
    // (and the sdist, as uv writes it) by default, every platform's only
    // when asked.
    for (args, wheels) in [(&[][..], 1), (&["--hashes", "all"][..], 5)] {
        let mut all = vec!["in.txt", "-o", "pylock.native.toml"];
        all.extend_from_slice(args);
        let (code, _, stderr) = run(work.compile(&index.json(), &all));
        assert_eq!(code, 0, "{stderr}");
        let pylock = work.read("pylock.native.toml");
        assert_eq!(
            pylock.matches("[[packages.wheels]]").count(),
            wheels,
            "{pylock}"
        );
    }

    work.write("new.txt", "glibcnew\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["new.txt"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("no wheel for the target platform"),
        "{stderr}"
    );
}

#[test]
fn requires_python_rules_out_newer_versions() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "newpy\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "out.txt"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pins(&work.read("out.txt")), vec!["newpy==1.0.0"]);
    work.write("pinned.txt", "newpy==2.0.0\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["pinned.txt"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("requires Python >=3.13"), "{stderr}");
}

#[test]
fn owned_packages_are_never_emitted_and_versions_are_checked() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "needsnccl\n");
    let (code, _, stderr) = run(work.compile(
        &index.json(),
        &["in.txt", "--owned", "nccl", "-o", "out.txt"],
    ));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pins(&work.read("out.txt")), vec!["needsnccl==1.0.0"]);
    assert!(!index.requests().contains("/nccl/"));
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "--owned", "nccl==1.9"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("the image owns nccl==1.9 (--owned)"),
        "{stderr}"
    );
}

#[test]
fn exclude_newer_hides_later_uploads() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "late\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "a.txt"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pins(&work.read("a.txt")), vec!["late==2.0.0"]);
    let (code, _, stderr) = run(work.compile(
        &index.json(),
        &["in.txt", "--exclude-newer", "2025-01-01", "-o", "b.txt"],
    ));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pins(&work.read("b.txt")), vec!["late==1.0.0"]);
    assert!(work.read("b.txt").contains("--exclude-newer 2025-01-01"));
}

#[test]
fn exclude_newer_on_an_index_without_upload_times_fails_closed() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "late\n");
    // PEP 503 HTML pages carry no upload times: nothing proves a file old
    // enough, so no file counts unless the user says so.
    let (code, _, stderr) = run(work.compile(
        &index.html(),
        &["in.txt", "--exclude-newer", "2025-01-01", "-o", "b.txt"],
    ));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no upload time on the index"), "{stderr}");
    assert!(stderr.contains("--allow-missing-time"), "{stderr}");
    let (code, _, stderr) = run(work.compile(
        &index.html(),
        &[
            "in.txt",
            "--exclude-newer",
            "2025-01-01",
            "--allow-missing-time",
            "-o",
            "b.txt",
        ],
    ));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pins(&work.read("b.txt")), vec!["late==2.0.0"]);
}

#[test]
fn metadata_comes_from_pep_658_files_without_downloading_wheels() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "app\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt"]));
    assert_eq!(code, 0, "{stderr}");
    let requests = index.requests();
    assert!(requests.contains(".whl.metadata"), "{requests}");
    // A wheel is never downloaded: the file check reads only the end of
    // each locked one, its zip directory.
    assert!(
        !requests.lines().any(|l| {
            let mut words = l.split_whitespace().skip(1);
            words.next().is_some_and(|p| p.ends_with(".whl"))
                && !words.next().is_some_and(|r| r.starts_with("bytes=-"))
        }),
        "{requests}"
    );
}

#[test]
fn metadata_comes_from_range_requests_when_no_metadata_file() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "nometa\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "out.txt"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        pins(&work.read("out.txt")),
        vec!["lib==1.5.0", "nometa==1.0.0"]
    );
    let requests = index.requests();
    assert!(
        requests
            .lines()
            .any(|l| l.contains("nometa-1.0.0-py3-none-any.whl bytes=")),
        "{requests}"
    );
}

#[test]
fn metadata_comes_from_the_whole_wheel_without_range_support() {
    let index = Index::start(&["layer.toml"], &["--no-range"]);
    let work = Work::new();
    work.write("in.txt", "nometa\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "out.txt"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        pins(&work.read("out.txt")),
        vec!["lib==1.5.0", "nometa==1.0.0"]
    );
}

#[test]
fn check_reports_stale_and_current() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "app\n");
    let args = ["in.txt", "-o", "out.txt"];
    let (code, _, stderr) =
        run(work.compile(&index.json(), &["--check", "in.txt", "-o", "out.txt"]));
    assert_eq!(code, 1, "missing output is stale: {stderr}");
    let (code, _, _) = run(work.compile(&index.json(), &args));
    assert_eq!(code, 0);
    let (code, stdout, stderr) =
        run(work.compile(&index.json(), &["in.txt", "--check", "-o", "out.txt"]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.is_empty());
    let edited = work.read("out.txt").replace("util==1.0.0", "util==0.9.0");
    work.write("out.txt", &edited);
    let (code, stdout, _) =
        run(work.compile(&index.json(), &["in.txt", "--check", "-o", "out.txt"]));
    assert_eq!(code, 1);
    assert!(stdout.contains("-util==0.9.0"), "{stdout}");
    assert!(stdout.contains("+util==1.0.0"), "{stdout}");
    // --check wrote nothing.
    assert!(work.read("out.txt").contains("util==0.9.0"));
}

#[test]
fn output_is_byte_identical_across_runs() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "app\ntool-extra[fast,api]\nnative\nnometa\n");
    let (code, _, _) = run(work.compile(&index.json(), &["in.txt", "-o", "out.txt"]));
    assert_eq!(code, 0);
    let first = work.read("out.txt");
    std::fs::remove_file(work.path().join("out.txt")).unwrap();
    // A cold cache and the HTML form of the index: the same bytes.
    let mut cmd = work.compile(&index.html(), &["in.txt", "-o", "out.txt"]);
    cmd.env("LAYERLOCK_CACHE_DIR", work.path().join("other-cache"));
    let (code, _, _) = run(cmd);
    assert_eq!(code, 0);
    let second = work
        .read("out.txt")
        .replace("/html/simple/", "/json/simple/");
    assert_eq!(first, second);
}

#[test]
fn offline_uses_the_cache_alone() {
    let work = Work::new();
    work.write("in.txt", "app\nnometa\n");
    let url;
    {
        let index = layer_index();
        url = index.json();
        let (code, _, stderr) = run(work.compile(&url, &["in.txt", "-o", "online.txt"]));
        assert_eq!(code, 0, "{stderr}");
    }
    // The index is gone now.
    let (code, _, stderr) = run(work.compile(&url, &["in.txt", "--offline", "-o", "offline.txt"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        body(&work.read("online.txt")),
        body(&work.read("offline.txt"))
    );

    let mut cmd = work.compile(&url, &["in.txt", "--offline"]);
    cmd.env("LAYERLOCK_CACHE_DIR", work.path().join("empty-cache"));
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(stderr.contains("--offline"), "{stderr}");
    assert!(
        stderr.contains("hint: run once without --offline"),
        "{stderr}"
    );
}

#[test]
fn unknown_package_names_the_indexes_asked() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "no-such-thing\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("no-such-thing is not on any index asked (http://127.0.0.1:"),
        "{stderr}"
    );
}

#[test]
fn malformed_requirement_names_file_line_and_column() {
    let work = Work::new();
    work.write("in.txt", "app\n# fine\nlib >= = 1\n");
    let (code, _, stderr) = run(work.compile("http://127.0.0.1:9/simple/", &["in.txt"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("in.txt:3:"), "{stderr}");
    assert!(stderr.contains("lib >= = 1"), "{stderr}");
    redactions(&work).bind(|| insta::assert_snapshot!(stderr));
}

#[test]
fn malformed_base_line_is_reported_and_nothing_written() {
    let work = Work::new();
    work.write("in.txt", "app\n");
    work.write("base.txt", "ok==1.0\n--frobnicate\n");
    let (code, _, stderr) = run(work.compile(
        "http://127.0.0.1:9/simple/",
        &["in.txt", "--base", "base.txt", "-o", "out.txt"],
    ));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("base.txt:2:1: unknown option `--frobnicate`"),
        "{stderr}"
    );
    assert!(!work.path().join("out.txt").exists());
}

#[test]
fn transient_server_errors_are_retried() {
    let index = Index::start(&["layer.toml"], &["--fail-first", "2"]);
    let work = Work::new();
    work.write("in.txt", "app\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "out.txt"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(index.requests().contains(" 503"));
}

#[test]
fn unreachable_index_fails_with_the_url_and_no_credentials() {
    let work = Work::new();
    work.write("in.txt", "app\n");
    let (code, _, stderr) =
        run(work.compile("http://someone:s3cret@127.0.0.1:9/simple/", &["in.txt"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("http://127.0.0.1:9/simple/app/"),
        "{stderr}"
    );
    assert!(!stderr.contains("s3cret"), "{stderr}");
}

#[test]
fn credentials_from_the_url_and_from_netrc() {
    let index = Index::start(&["layer.toml"], &["--auth", "ci:t0ken"]);
    let work = Work::new();
    work.write("in.txt", "app\n");
    let with_creds = index.json().replace("http://", "http://ci:t0ken@");
    let (code, _, stderr) = run(work.compile(&with_creds, &["in.txt", "-o", "out.txt"]));
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("out.txt");
    assert!(
        !lock.contains("t0ken"),
        "the header must not carry the password"
    );

    let netrc = work.write("netrc", "machine 127.0.0.1 login ci password t0ken\n");
    let mut cmd = work.compile(&index.json(), &["in.txt", "-o", "out2.txt"]);
    cmd.env("NETRC", &netrc)
        .env("LAYERLOCK_CACHE_DIR", work.path().join("c2"));
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");

    let mut cmd = work.compile(&index.json(), &["in.txt"]);
    cmd.env("LAYERLOCK_CACHE_DIR", work.path().join("c3"));
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2);
    assert!(stderr.contains("401"), "{stderr}");
}

#[test]
fn find_links_directory_without_an_index() {
    let work = Work::new();
    let wheels = work.path().join("wheels");
    let status = std::process::Command::new("python3")
        .arg(common::repo_root().join("tests/harness/pyindex.py"))
        .arg("build")
        .arg(common::scenario("layer.toml"))
        .arg(&wheels)
        .status()
        .expect("build wheels");
    assert!(status.success());
    work.write("in.txt", "app\n");
    let mut cmd = work.layerlock(&[
        "compile",
        "in.txt",
        "--python-version",
        "3.12",
        "--platform",
        "x86_64-manylinux_2_28",
        "--no-index",
        "--find-links",
        "wheels",
        "-o",
        "out.txt",
    ]);
    cmd.env("PIP_FIND_LINKS", "");
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        pins(&work.read("out.txt")),
        vec![
            "app==2.0.0",
            "lib==2.0.0",
            "linuxonly==1.0.0",
            "util==1.0.0"
        ]
    );
}

#[test]
fn constraints_in_inputs_narrow_without_pulling_in() {
    let index = layer_index();
    let work = Work::new();
    work.write("c.txt", "lib<2\nspeedy==1.0.0\n");
    work.write("in.txt", "-c c.txt\napp\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "out.txt"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        pins(&work.read("out.txt")),
        vec![
            "app==1.0.0",
            "lib==1.5.0",
            "linuxonly==1.0.0",
            "util==1.0.0"
        ]
    );
}

#[test]
fn repeated_bases_and_includes() {
    let index = layer_index();
    let work = Work::new();
    work.write("reqs/extra.txt", "tool\n");
    work.write("reqs/in.txt", "-r extra.txt\napp\n");
    work.write("b1.txt", "torch==2.11.0+cu130\n");
    work.write("b2.txt", "lib==1.5.0 \\\n    --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000\n");
    let (code, _, stderr) = run(work.compile(
        &index.json(),
        &[
            "reqs/in.txt",
            "--base",
            "b1.txt",
            "--base",
            "b2.txt",
            "-o",
            "out.txt",
        ],
    ));
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("out.txt");
    assert_eq!(
        pins(&lock),
        vec![
            "app==1.0.0",
            "linuxonly==1.0.0",
            "tool==1.0.0",
            "util==1.0.0"
        ]
    );
    assert!(lock.contains("# via -r reqs/extra.txt"), "{lock}");
}

#[test]
fn an_extra_of_a_base_package_adds_only_what_the_extra_adds() {
    let index = layer_index();
    let work = Work::new();
    // tool-extra depends on lib unconditionally; the base pins tool-extra
    // but not lib (a base may leave packages out). The api extra adds
    // apiclient only: lib is the image's business.
    work.write("base.txt", "tool-extra==1.0.0\n");
    work.write("in.txt", "tool-extra[api]\n");
    let (code, _, stderr) = run(work.compile(
        &index.json(),
        &["in.txt", "--base", "base.txt", "-o", "out.txt"],
    ));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pins(&work.read("out.txt")), vec!["apiclient==1.1.0"]);
}

#[test]
fn the_lock_gets_a_normal_mode_and_dash_means_stdout() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "lib\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "out.txt"]));
    assert_eq!(code, 0, "{stderr}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(work.path().join("out.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644);
    }
    let (code, stdout, _) = run(work.compile(&index.json(), &["in.txt", "-o", "-"]));
    assert_eq!(code, 0);
    assert!(stdout.contains("lib==2.0.0"), "{stdout}");
    assert!(!work.path().join("-").exists());
}

#[test]
fn cached_pages_are_revalidated_not_refetched() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "app\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "a.txt"]));
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "b.txt"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        work.read("a.txt").replace("a.txt", "b.txt"),
        work.read("b.txt")
    );
    let requests = index.requests();
    // Second run: each page answered 304 Not Modified, and no metadata was
    // fetched again (it is cached by the wheel's sha256).
    assert!(
        requests.contains("GET /json/simple/app/ -- 304"),
        "{requests}"
    );
    assert_eq!(
        requests
            .matches("app-2.0.0-py3-none-any.whl.metadata")
            .count(),
        1,
        "{requests}"
    );
}

#[test]
fn check_says_a_missing_output_is_missing_not_stale() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "app\n");
    let (code, stdout, stderr) =
        run(work.compile(&index.json(), &["--check", "in.txt", "-o", "out.txt"]));
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("out.txt does not exist; create it with:"),
        "{stderr}"
    );
    assert!(!stderr.contains("stale"), "{stderr}");
}

#[test]
fn check_ignores_how_the_command_was_spelled_and_where_it_ran() {
    let index = layer_index();
    let work = Work::new();
    std::fs::create_dir(work.path().join(".git")).unwrap();
    std::fs::create_dir(work.path().join("locks")).unwrap();
    work.write("in.txt", "app\n");
    work.write("base.txt", "lib==1.5.0\n");
    let (code, _, stderr) = run(work.compile(
        &index.json(),
        &["in.txt", "--base", "base.txt", "-o", "locks/out.txt"],
    ));
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("locks/out.txt");
    assert!(
        lock.contains("#    layerlock compile in.txt --base base.txt -o locks/out.txt"),
        "{lock}"
    );
    // `./` spellings and `--flag=value` from the root.
    let (code, stdout, stderr) = run(work.compile(
        &index.json(),
        &[
            "--check",
            "./in.txt",
            "--base=./base.txt",
            "-o",
            "./locks/out.txt",
        ],
    ));
    assert_eq!(code, 0, "{stdout}{stderr}");
    // From a subdirectory, and with flags that do not change the lock.
    let mut cmd = work.compile(
        &index.json(),
        &[
            "--check",
            "../in.txt",
            "--base",
            "../base.txt",
            "--output=out.txt",
            "--timeout",
            "10",
        ],
    );
    cmd.current_dir(work.path().join("locks"));
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // Written from there, the lock is byte-identical.
    let mut cmd = work.compile(
        &index.json(),
        &["../in.txt", "--base", "../base.txt", "-o", "out.txt"],
    );
    cmd.current_dir(work.path().join("locks"));
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(work.read("locks/out.txt"), lock);
}

#[test]
fn a_custom_compile_command_goes_into_the_header() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "app\n");
    let mut cmd = work.compile(&index.json(), &["in.txt", "-o", "out.txt"]);
    cmd.env("LAYERLOCK_CUSTOM_COMPILE_COMMAND", "make locks");
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("out.txt");
    assert!(lock.contains("#    make locks\n"), "{lock}");
    assert!(!lock.contains("layerlock compile"), "{lock}");
    // A stale lock names the custom command too.
    work.write("out.txt", &lock.replace("util==1.0.0", "util==0.9.0"));
    let mut cmd = work.compile(
        &index.json(),
        &[
            "--check",
            "in.txt",
            "-o",
            "out.txt",
            "--custom-compile-command",
            "make locks",
        ],
    );
    cmd.env_remove("LAYERLOCK_CUSTOM_COMPILE_COMMAND");
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("regenerate it with:\n    make locks"),
        "{stderr}"
    );
}

#[test]
fn uv_platform_spellings_are_accepted() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "app\n");
    let mut cmd = work.layerlock(&[
        "compile",
        "in.txt",
        "--python-version",
        "3.12",
        "--python-platform",
        "x86_64-unknown-linux-gnu",
        "-o",
        "out.txt",
    ]);
    cmd.args(["--index-url", &index.json()]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        work.read("out.txt")
            .contains("layerlock-target: python=3.12 platform=x86_64-manylinux_2_28"),
        "{}",
        work.read("out.txt")
    );
}

#[test]
fn check_into_a_closed_pipe_ends_quietly() {
    // `layerlock compile --check | head`: the reader goes away mid-diff.
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "app\n");
    let mut stale = String::new();
    for i in 0..50_000 {
        stale.push_str(&format!("p{i}==1.0 --hash=sha256:0000000000000000000000000000000000000000000000000000000000000000\n"));
    }
    work.write("out.txt", &stale);
    let cmd = work.compile(&index.json(), &["--check", "in.txt", "-o", "out.txt"]);
    let (code, stderr) = common::run_reader_gone(&cmd, work.path());
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(code, Some(141), "{stderr}");
}

#[test]
fn check_sees_a_live_line_where_the_header_command_was() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "app\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "out.txt"]));
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("out.txt");
    let command_line = lock.lines().nth(2).unwrap().to_string();
    assert!(command_line.starts_with("#    layerlock compile"), "{lock}");
    work.write(
        "out.txt",
        &lock.replace(
            &command_line,
            "--extra-index-url https://evil.example/simple",
        ),
    );
    let (code, stdout, _) =
        run(work.compile(&index.json(), &["--check", "in.txt", "-o", "out.txt"]));
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("+#    layerlock compile"), "{stdout}");
}

#[test]
fn a_newline_in_a_custom_command_is_refused() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "app\n");
    let mut cmd = work.compile(&index.json(), &["in.txt", "-o", "out.txt"]);
    cmd.env(
        "LAYERLOCK_CUSTOM_COMPILE_COMMAND",
        "make locks\n--extra-index-url https://evil.example/simple",
    );
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("control character"), "{stderr}");
    assert!(!work.path().join("out.txt").exists());
}

#[test]
fn stats_say_what_was_fetched_and_when_and_stay_out_of_the_header() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "app\n");
    let args = ["in.txt", "-o", "out.txt", "--stats", "stats.json"];
    let (code, _, stderr) = run(work.compile(&index.json(), &args));
    assert_eq!(code, 0, "{stderr}");
    assert!(!work.read("out.txt").contains("--stats"));
    let stats: serde_json::Value = serde_json::from_str(&work.read("stats.json")).unwrap();
    assert_eq!(stats["layerlock_stats"], 1);
    let layer = &stats["layers"][0];
    assert!(
        layer["requests"]["page"]["count"].as_u64().unwrap() >= 1,
        "{stats}"
    );
    assert_eq!(
        stats["requests"]["page"]["count"],
        layer["requests"]["page"]["count"]
    );
    assert_eq!(layer["arrivals"]["app"]["depth"], 1, "{stats}");
    assert!(layer["arrivals"]["app"]["page_ms"].is_number(), "{stats}");
    assert_eq!(layer["levels"][0]["level"], 1, "{stats}");
    assert_eq!(layer["pages_cached"], 0, "{stats}");

    // From the cache alone: no request, every page from the cache.
    let offline = [
        "in.txt",
        "-o",
        "again.txt",
        "--stats",
        "stats.json",
        "--offline",
    ];
    let (code, _, stderr) = run(work.compile(&index.json(), &offline));
    assert_eq!(code, 0, "{stderr}");
    let stats: serde_json::Value = serde_json::from_str(&work.read("stats.json")).unwrap();
    let layer = &stats["layers"][0];
    assert_eq!(layer["requests"], serde_json::json!({}), "{stats}");
    assert!(layer["pages_cached"].as_u64().unwrap() >= 1, "{stats}");
    assert_eq!(
        work.read("out.txt"),
        work.read("again.txt").replace("again.txt", "out.txt")
    );
}

#[test]
fn a_wide_wheel_takes_two_ranges_and_the_next_version_one_round_trip() {
    let index = Index::start(&["wide.toml"], &[]);
    let work = Work::new();
    work.write("in.txt", "wide\nupfront\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "out.txt"]));
    assert_eq!(code, 0, "{stderr}");
    // 2.0.0 of each needs a narrow that does not exist: its metadata is
    // read, then 1.0.0's.
    assert_eq!(
        pins(&work.read("out.txt")),
        vec!["upfront==1.0.0", "wide==1.0.0"]
    );
    let requests = index.requests();
    let ranges = |wheel: &str| -> Vec<String> {
        requests
            .lines()
            .filter(|l| l.contains(&format!("/{wheel}-")) && l.contains("bytes="))
            .map(|l| l.split(' ').nth(2).unwrap_or_default().to_string())
            .collect()
    };
    // The directory outgrows the first read: one more range completes it
    // along with the .dist-info ahead of it.
    assert_eq!(ranges("wide-2.0.0").len(), 2, "{requests}");
    // Learnt: one range of the right size.
    assert_eq!(ranges("wide-1.0.0").len(), 1, "{requests}");
    // METADATA first: the directory is in the first read, METADATA takes
    // a second.
    assert_eq!(ranges("upfront-2.0.0").len(), 2, "{requests}");
    // Learnt: the end and the start, sent together.
    let next = ranges("upfront-1.0.0");
    assert_eq!(next.len(), 2, "{requests}");
    assert!(next.iter().any(|r| r.starts_with("bytes=0-")), "{requests}");
}

#[test]
fn a_requirement_that_cannot_be_met_is_named_at_its_line() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "util\napp==1.0.0\napp==2.0.0\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("you require app==1.0.0 (in.txt:2) and app==2.0.0 (in.txt:3) and no version of app is all of them"),
        "{stderr}"
    );
    work.write("missing.txt", "util\nno-such-package\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["missing.txt"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("you require no-such-package (missing.txt:2)"),
        "{stderr}"
    );
}

#[test]
fn a_pin_of_a_version_the_index_lacks_names_the_newest_it_has() {
    let index = layer_index();
    let work = Work::new();
    work.write("in.txt", "lib==2.1.0rc1.dev7\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "out.txt"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("Because lib 2.1.0rc1.dev7 is not on the index and you require lib==2.1.0rc1.dev7 (in.txt:1)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: lib==2.1.0rc1.dev7 is not on the index (its newest is 2.0.0): pin a version it has"),
        "{stderr}"
    );
}

#[test]
fn an_index_that_cannot_be_reached_says_what_to_check() {
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let work = Work::new();
    work.write("in.txt", "lib\n");
    let url = format!("http://user:secret@127.0.0.1:{port}/simple/");
    let (code, _, stderr) = run(work.compile(&url, &["in.txt", "-o", "out.txt", "--timeout", "2"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!(
            "hint: the index at 127.0.0.1:{port} could not be reached: check the URL"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("secret"), "{stderr}");
}
