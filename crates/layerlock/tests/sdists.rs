//! Source distributions: a version with no wheel for the target is locked
//! from its sdist when the sdist says statically what it needs (PKG-INFO
//! 2.2, a static pyproject.toml, a declarative setup.cfg), refused with
//! why when only a build could say, and built by the installer, hash
//! checked, at install time. Nothing is built while resolving.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use common::{Index, Work, host_python, pins, run, venv};

fn index() -> Index {
    Index::start(&["sdists.toml"], &[])
}

fn compile(work: &Work, index: &Index, input: &str, extra: &[&str]) -> (i32, String, String) {
    work.write("in.txt", input);
    let mut args = vec!["in.txt", "-o", "lock.txt"];
    args.extend_from_slice(extra);
    run(work.compile(&index.json(), &args))
}

#[test]
fn every_static_kind_of_sdist_is_locked_with_its_dependencies() {
    let (index, work) = (index(), Work::new());
    for name in ["s-static", "s-pyproject", "s-setupcfg"] {
        let (code, _, stderr) = compile(&work, &index, &format!("{name}\n"), &[]);
        assert_eq!(code, 0, "{name}: {stderr}");
        let lock = work.read("lock.txt");
        assert_eq!(
            pins(&lock),
            ["s-dep==1.0.0", &format!("{name}==1.0.0")],
            "{lock}"
        );
    }
    // The sdist was read, never built: the index served the archive, and
    // no build left anything behind.
    assert!(
        index.requests().contains("s_static-1.0.0.tar.gz"),
        "{}",
        index.requests()
    );
}

#[test]
fn an_sdist_in_the_middle_of_a_closure_and_a_target_without_a_wheel() {
    let (index, work) = (index(), Work::new());
    let (code, _, stderr) = compile(
        &work,
        &index,
        "s-middle\ns-nowheel\n",
        &["--hashes", "target"],
    );
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("lock.txt");
    assert_eq!(
        pins(&lock),
        [
            "s-dep==1.0.0",
            "s-middle==1.0.0",
            "s-nowheel==1.0.0",
            "s-static==1.0.0"
        ]
    );
    // `--hashes target` keeps the sdist where no wheel fits: s-nowheel has
    // one hash (its sdist), not its Windows wheel's.
    let entry = lock.split("s-nowheel==1.0.0").nth(1).unwrap();
    let hashes = entry
        .split("# via")
        .next()
        .unwrap()
        .matches("--hash=")
        .count();
    assert_eq!(hashes, 1, "{lock}");
}

#[test]
fn dynamic_dependencies_are_refused_with_why_and_what_to_do() {
    let (index, work) = (index(), Work::new());
    for (name, why) in [
        ("s-dynamic", "declares `requires-dist` Dynamic"),
        ("s-setuppy", "computes `install_requires`"),
    ] {
        let (code, _, stderr) = compile(&work, &index, &format!("{name}\n"), &["-q"]);
        assert_eq!(code, 2, "{name}: {stderr}");
        // A long hint wraps onto indented lines; read it whole.
        let stderr = stderr.replace("\n  ", " ");
        assert!(stderr.contains(&format!("hint: {name}==1.0.0")), "{stderr}");
        assert!(stderr.contains(why), "{stderr}");
        assert!(
            stderr.contains("pin a version that has a wheel"),
            "{stderr}"
        );
    }
}

/// One fresh release skipped for an older wheel (the sdist is out, its
/// wheels are not yet): taken, and said.
#[test]
fn one_fresh_dynamic_release_is_passed_over_with_a_note() {
    let (index, work) = (index(), Work::new());
    let (code, _, stderr) = compile(
        &work,
        &index,
        "s-fallback\n",
        &["--exclude-newer", "2024-01-20T00:00:00Z"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pins(&work.read("lock.txt")), ["s-fallback==1.0.0"]);
    let stderr = stderr.replace("\n  ", " ");
    assert!(
        stderr.contains("s-fallback==1.0.0 (uploaded 2024-01-01) taken: 1 newer release is an sdist with dynamic metadata, newest 2.0.0"),
        "{stderr}"
    );
    // Not allowed on purpose: no record in the lock.
    assert!(!work.read("lock.txt").contains("layerlock-walked-back"));
}

/// The same release, skipped when it is more than 14 days old, is refused:
/// its wheels are not coming.
#[test]
fn one_old_dynamic_release_is_refused() {
    let (index, work) = (index(), Work::new());
    let (code, _, stderr) = compile(
        &work,
        &index,
        "s-fallback\n",
        &["--exclude-newer", "2024-01-25T00:00:00Z"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "s-fallback: 1 newer release skipped, the newest 2.0.0 (uploaded 2024-01-10)"
        ),
        "{stderr}"
    );
}

/// Many releases skipped: refused with the newest, why it cannot be read,
/// the fall-back and its date, and the ways out; `--allow-walk-back` takes
/// it, says so and records it in the lock.
#[test]
fn a_walk_back_past_many_dynamic_releases_is_refused_unless_allowed() {
    let (index, work) = (index(), Work::new());
    let (code, _, stderr) = compile(&work, &index, "s-walkback\n", &[]);
    assert_eq!(code, 2, "{stderr}");
    let stderr = stderr.replace("\n  ", " ");
    // Two dynamic releases settle the refusal: the third sdist is never
    // downloaded.
    let sdists = |log: &str, version: &str| {
        log.lines()
            .filter(|l| {
                l.contains(&format!("s_walkback-{version}.tar.gz"))
                    || l.contains(&format!("s-walkback-{version}.tar.gz"))
            })
            .count()
    };
    // The newest dynamic release is stale: it settles the refusal alone,
    // and no older sdist is downloaded.
    let log = index.requests();
    assert!(sdists(&log, "1.3.0") > 0, "{log}");
    assert_eq!(sdists(&log, "1.2.0") + sdists(&log, "1.1.0"), 0, "{log}");
    for said in [
        "s-walkback: 1 newer release skipped and 2 older sdist-only not downloaded, the newest 1.3.0",
        "declares `requires-dist` Dynamic",
        "it would fall back to 1.0.0 (uploaded 2023-01-01)",
        "`s-walkback==1.0.0`",
        "--find-links",
        "--only-binary s-walkback",
        "--allow-walk-back s-walkback",
    ] {
        assert!(stderr.contains(said), "{said}: {stderr}");
    }
    assert!(!work.path().join("lock.txt").exists());

    let (code, _, stderr) = compile(
        &work,
        &index,
        "s-walkback\n",
        &["--allow-walk-back", "s-other,s-walkback"],
    );
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("lock.txt");
    assert_eq!(pins(&lock), ["s-walkback==1.0.0"]);
    assert!(
        lock.contains("# layerlock-walked-back: s-walkback==1.0.0 (3 newer releases are sdists with dynamic metadata, newest 1.3.0)\n"),
        "{lock}"
    );
    assert!(stderr.contains("(--allow-walk-back)"), "{stderr}");

    // `--only-binary` takes the wheel on purpose: nothing to refuse.
    let (code, _, stderr) = compile(
        &work,
        &index,
        "s-walkback\n",
        &["--only-binary", "s-walkback"],
    );
    assert_eq!(code, 0, "{stderr}");
}

/// The opt-in from a layer's config.
#[test]
fn the_walk_back_opt_in_is_a_layer_key() {
    let (index, work) = (index(), Work::new());
    work.write("in.txt", "s-walkback\n");
    work.write(
        "layerlock.toml",
        "[[layer]]\nname = \"app\"\ninputs = [\"in.txt\"]\noutput = \"lock.txt\"\nallow-walk-back = [\":all:\"]\n",
    );
    let (code, _, stderr) = run(work.compile(&index.json(), &[]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        work.read("lock.txt")
            .contains("# layerlock-walked-back: s-walkback==1.0.0")
    );
}

#[test]
fn only_binary_keeps_an_image_wheels_only() {
    let (index, work) = (index(), Work::new());
    let (code, _, stderr) = compile(&work, &index, "s-middle\n", &["--only-binary", ":all:"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("s-static versions ruled out on Python 3.12 on x86_64-manylinux_2_28: 1.0.0: no wheel for the target, and --only-binary refuses its source distribution"),
        "{stderr}"
    );
    // Per package, comma-separated as pip and uv take it.
    let (code, _, stderr) = compile(
        &work,
        &index,
        "s-middle\n",
        &["--only-binary", "s-dep,s-middle"],
    );
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = compile(&work, &index, "s-middle\n", &["--only-binary", "s-static"]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn sdists_install_built_by_the_installer_and_hash_checked() {
    let (index, work) = (index(), Work::new());
    work.write("in.txt", "s-middle\ns-pyproject\n");
    let mut cmd = work.layerlock(&["compile", "in.txt", "-o", "lock.txt"]);
    cmd.args([
        "--python-version",
        &host_python(),
        "--platform",
        "x86_64-manylinux_2_28",
    ])
    .args(["--index-url", &index.json()]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    for installer in ["pip", "uv"] {
        let python = venv(&work, &format!("venv-{installer}"), installer == "pip");
        let mut cmd = work.layerlock(&["install", "lock.txt", "--installer", installer]);
        cmd.arg("--python")
            .arg(&python)
            .args(["--index-url", &index.json()]);
        let (code, _, stderr) = run(cmd);
        assert_eq!(code, 0, "{installer}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "installing 2 packages with {installer} (building their sdists, which are hash-checked)"
            )),
            "{installer}: {stderr}"
        );
        let mut cmd = work.layerlock(&["verify", "lock.txt", "--integrity"]);
        cmd.arg("--python").arg(&python);
        let (code, stdout, stderr) = run(cmd);
        assert_eq!(code, 0, "{installer}: {stdout}{stderr}");
    }
}

#[test]
fn a_pylock_keeps_the_sdist() {
    let (index, work) = (index(), Work::new());
    let (code, _, stderr) = compile(&work, &index, "s-static\n", &["--format", "pylock.toml"]);
    assert_eq!(code, 0, "{stderr}");
    let pylock = work.read("lock.txt");
    assert!(
        pylock.contains("[packages.sdist]\nname = \"s_static-1.0.0.tar.gz\""),
        "{pylock}"
    );
}

#[test]
fn stats_are_written_when_the_compile_fails() {
    let (index, work) = (index(), Work::new());
    let (code, _, stderr) = compile(&work, &index, "s-dynamic\n", &["--stats", "stats.json"]);
    assert_eq!(code, 2, "{stderr}");
    let stats: serde_json::Value = serde_json::from_str(&work.read("stats.json")).unwrap();
    assert_eq!(stats["layers"][0]["failed"], true, "{stats}");
    assert!(
        stats["requests"]["sdist"]["count"].as_u64().unwrap() >= 1,
        "{stats}"
    );
}

/// No wheel for the target and a dynamic sdist, but wheels for other
/// platforms: their METADATA gives the dependencies, it is said, and the
/// sdist is locked for the installer to build.
#[test]
fn a_dynamic_sdist_takes_its_dependencies_from_sibling_wheels() {
    let (index, work) = (index(), Work::new());
    work.write("in.txt", "s-sibling\n");
    let mut cmd = work.layerlock(&["compile", "in.txt", "-o", "lock.txt"]);
    cmd.args([
        "--python-version",
        "3.12",
        "--platform",
        "aarch64-apple-darwin",
    ])
    .args(["--index-url", &index.json(), "--hashes", "target"]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("lock.txt");
    assert_eq!(pins(&lock), ["s-dep==1.0.0", "s-sibling==1.0.0"], "{lock}");
    let stderr = stderr.replace("\n  ", " ");
    assert!(
        stderr.contains("s-sibling==1.0.0: dependencies read from its wheel"),
        "{stderr}"
    );
    // The sdist is what the target installs: its one hash.
    let entry = lock.split("s-sibling==1.0.0").nth(1).unwrap();
    assert_eq!(
        entry
            .split("# via")
            .next()
            .unwrap()
            .matches("--hash=")
            .count(),
        1,
        "{lock}"
    );
}

/// The cache's metadata folder (inside the folder of its layout's number).
fn metadata_dir(work: &Work) -> std::path::PathBuf {
    let layout = std::fs::read_dir(&work.cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("metadata").is_dir())
        .unwrap();
    layout.join("metadata")
}

/// Write a metadata cache entry `key` as the cache seals it.
fn put_cached(work: &Work, key: &str, body: &[u8]) {
    let mut entry = format!("crc32 {:08x}\n", crc32fast::hash(body)).into_bytes();
    entry.extend_from_slice(body);
    std::fs::write(metadata_dir(work).join(format!("{key}.METADATA")), entry).unwrap();
}

#[test]
fn a_dynamic_verdict_of_an_older_reader_is_not_trusted() {
    let (index, work) = (index(), Work::new());
    let (code, _, stderr) = compile(&work, &index, "s-static\n", &[]);
    assert_eq!(code, 0, "{stderr}");
    // The answer is kept under the reader's number and the sdist's sha256.
    let entries: Vec<String> = std::fs::read_dir(metadata_dir(&work))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("sdist-"))
        .collect();
    let [entry] = entries.as_slice() else {
        panic!("one sdist answer: {entries:?}")
    };
    let (number, key) = entry
        .strip_prefix("sdist-")
        .and_then(|rest| rest.split_once('-'))
        .unwrap();
    let number: u32 = number.parse().unwrap();
    let key = key.strip_suffix(".METADATA").unwrap();
    assert!(key.starts_with("sha256-"), "{entry}");
    std::fs::remove_file(metadata_dir(&work).join(entry)).unwrap();
    let dynamic = b"\0layerlock-dynamic\nan older reader could not tell";
    put_cached(&work, &format!("sdist-{}-{key}", number - 1), dynamic);
    let (code, _, stderr) = compile(&work, &index, "s-static\n", &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        pins(&work.read("lock.txt")),
        ["s-dep==1.0.0", "s-static==1.0.0"]
    );
    // The same verdict under the reader's own number is the answer: the
    // entry above was one the cache reads.
    put_cached(&work, &format!("sdist-{number}-{key}"), dynamic);
    let (code, _, stderr) = compile(&work, &index, "s-static\n", &["-q"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr
            .replace("\n  ", " ")
            .contains("an older reader could not tell"),
        "{stderr}"
    );
}

/// `NAME-1.0.tar.gz` in `dir`, as setuptools orders it: PKG-INFO (its
/// text `pkg_info`), then `mib` MiB of random bytes, then a setup.py.
fn large_sdist(dir: &std::path::Path, name: &str, pkg_info: &str, mib: u32) {
    let script = r#"
import io, os, sys, tarfile
folder, name, pkg_info, mib = sys.argv[1:]
top = f"{name}-1.0"
def add(tar, member, data):
    info = tarfile.TarInfo(f"{top}/{member}")
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))
with tarfile.open(os.path.join(folder, f"{top}.tar.gz"), "w:gz", compresslevel=1) as tar:
    add(tar, "PKG-INFO", pkg_info.encode())
    add(tar, f"{name}/data.bin", os.urandom(int(mib) << 20))
    add(tar, "setup.py", b"from setuptools import setup\nsetup()\n")
"#;
    let status = std::process::Command::new("python3")
        .args(["-c", script, dir.to_str().unwrap(), name, pkg_info])
        .arg(mib.to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_static_pkg_info_ahead_of_a_large_tree_is_all_that_is_downloaded() {
    let files = tempfile::tempdir().unwrap();
    let pkg_info = "Metadata-Version: 2.2\nName: bigstatic\nVersion: 1.0\nRequires-Dist: s-dep\n";
    large_sdist(files.path(), "bigstatic", pkg_info, 16);
    let extra = ["--extra-dir", files.path().to_str().unwrap()];
    let (index, work) = (Index::start(&["sdists.toml"], &extra), Work::new());
    let (code, _, stderr) = compile(&work, &index, "bigstatic\n", &["--stats", "stats.json"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        pins(&work.read("lock.txt")),
        ["bigstatic==1.0", "s-dep==1.0.0"]
    );
    let stats: serde_json::Value = serde_json::from_str(&work.read("stats.json")).unwrap();
    let received = stats["requests"]["sdist"]["bytes"].as_u64().unwrap();
    // A few pieces of the body at most, not its 16 MiB.
    assert!(received < 2 << 20, "{stats}");
}

/// No release readable without a build (pyspark's shape): the newest is
/// stale, which settles the refusal, so no older sdist is downloaded; the
/// refusal says so and how to read on.
#[test]
fn a_package_of_dynamic_sdists_only_is_refused_after_one_stale_read() {
    let (index, work) = (index(), Work::new());
    let (code, _, stderr) = compile(&work, &index, "s-allsdist\n", &[]);
    assert_eq!(code, 2, "{stderr}");
    let stderr = stderr.replace("\n  ", " ");
    for said in [
        "error: s-allsdist for Python 3.12 on x86_64-manylinux_2_28 cannot be locked at a release layerlock can read",
        "s-allsdist: 1.3.0 needs a build, the newest 1.3.0",
        "declares `requires-dist` Dynamic",
        "3 older sdist-only releases were not downloaded, since a fall-back past 1.3.0 is refused anyway",
        "hint: --allow-walk-back s-allsdist (or `allow-walk-back = [\"s-allsdist\"]`",
    ] {
        assert!(stderr.contains(said), "{said}: {stderr}");
    }
    let log = index.requests();
    let got = |v: &str| {
        log.lines()
            .filter(|l| l.contains(&format!("-{v}.tar.gz")))
            .count()
    };
    assert!(got("1.3.0") > 0, "{log}");
    assert_eq!(got("1.2.0") + got("1.1.0") + got("1.0.0"), 0, "{log}");
}

/// `NAME-1.0.zip` in `dir`: `mib` MiB of random bytes (stored, so they
/// stay that large) ahead of a PKG-INFO of an old metadata version and a
/// setup.py that names its dependencies as a literal.
fn large_zip_sdist(dir: &std::path::Path, name: &str, mib: u32) {
    let script = r#"
import os, sys, zipfile
folder, name, mib = sys.argv[1:]
top = f"{name}-1.0"
with zipfile.ZipFile(os.path.join(folder, f"{top}.zip"), "w") as z:
    z.writestr(f"{top}/{name}/data.bin", os.urandom(int(mib) << 20), zipfile.ZIP_STORED)
    z.writestr(f"{top}/PKG-INFO", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", zipfile.ZIP_DEFLATED)
    z.writestr(f"{top}/setup.py", f"from setuptools import setup\nsetup(name='{name}', version='1.0', install_requires=['s-dep'])\n", zipfile.ZIP_DEFLATED)
"#;
    let status = std::process::Command::new("python3")
        .args(["-c", script, dir.to_str().unwrap(), name])
        .arg(mib.to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

/// A zip sdist is read like a wheel: its directory from the end, then
/// only the members wanted, however large the archive.
#[test]
fn a_large_zip_sdist_is_read_by_range() {
    let files = tempfile::tempdir().unwrap();
    large_zip_sdist(files.path(), "bigzip", 80);
    let extra = ["--extra-dir", files.path().to_str().unwrap()];
    let (index, work) = (Index::start(&["sdists.toml"], &extra), Work::new());
    let (code, _, stderr) = compile(&work, &index, "bigzip\n", &["--stats", "stats.json"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        pins(&work.read("lock.txt")),
        ["bigzip==1.0", "s-dep==1.0.0"]
    );
    let stats: serde_json::Value = serde_json::from_str(&work.read("stats.json")).unwrap();
    let ranges = stats["requests"]["range"]["bytes"].as_u64().unwrap_or(0);
    let whole = stats["requests"]["sdist"]["bytes"].as_u64().unwrap_or(0)
        + stats["requests"]["wheel"]["bytes"].as_u64().unwrap_or(0);
    assert!(ranges < 1 << 20, "{stats}");
    assert_eq!(whole, 0, "{stats}");
}

/// pyspark's shape: a PKG-INFO that says its dependencies are dynamic,
/// then a tree of many MiB, then the setup.py that would say them. Only
/// the archive's head is read; the refusal says why.
#[test]
fn a_setup_py_behind_a_large_tree_is_not_downloaded() {
    let files = tempfile::tempdir().unwrap();
    let pkg_info = "Metadata-Version: 2.4\nName: bigdyn\nVersion: 1.0\nDynamic: requires-dist\n";
    large_sdist(files.path(), "bigdyn", pkg_info, 40);
    let extra = ["--extra-dir", files.path().to_str().unwrap()];
    let (index, work) = (Index::start(&["sdists.toml"], &extra), Work::new());
    let (code, _, stderr) = compile(&work, &index, "bigdyn\n", &["--stats", "stats.json"]);
    assert_eq!(code, 2, "{stderr}");
    let stderr = stderr.replace("\n  ", " ");
    assert!(
        stderr.contains(
            "its pyproject.toml, setup.cfg or setup.py, if any, lies past the first 4 MiB of a 41 MiB archive; \
             layerlock does not download more of an archive that large to read it"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("--read-whole-sdist bigdyn reads it to its end"),
        "{stderr}"
    );
    let stats: serde_json::Value = serde_json::from_str(&work.read("stats.json")).unwrap();
    let received = stats["requests"]["sdist"]["bytes"].as_u64().unwrap();
    assert!(received <= 4 << 20, "{stats}");
    // Asked for, the whole archive is read (and its verdict kept apart
    // from the head's): its setup.py names nothing, so it locks; the lock
    // records the flag, so its command makes it again.
    let (code, _, stderr) = compile(
        &work,
        &index,
        "bigdyn\n",
        &["--read-whole-sdist", "bigdyn", "--stats", "stats.json"],
    );
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("lock.txt");
    assert_eq!(pins(&lock), ["bigdyn==1.0"]);
    assert!(lock.contains("--read-whole-sdist bigdyn"), "{lock}");
    let stats: serde_json::Value = serde_json::from_str(&work.read("stats.json")).unwrap();
    let received = stats["requests"]["sdist"]["bytes"].as_u64().unwrap();
    assert!(received > 40 << 20, "{stats}");
    // Without the flag, the head's verdict stands.
    let (code, _, stderr) = compile(&work, &index, "bigdyn\n", &[]);
    assert_eq!(code, 2, "{stderr}");
}

/// `sibdis-1.0` in `dir`: a dynamic sdist and two wheels for other
/// platforms whose METADATA disagree (a setup.py that looked at
/// `sys.platform` when each was built), each `(platform tag, requires)`.
fn disagreeing_siblings(dir: &std::path::Path, wheels: &[(&str, &str)]) {
    let script = r#"
import io, os, sys, tarfile, zipfile
folder = sys.argv[1]
for arg in sys.argv[2:]:
    tag, requires = arg.split("=", 1)
    meta = "Metadata-Version: 2.1\nName: sibdis\nVersion: 1.0\n"
    meta += "".join(f"Requires-Dist: {r}\n" for r in requires.split(",") if r)
    with zipfile.ZipFile(os.path.join(folder, f"sibdis-1.0-py3-none-{tag}.whl"), "w") as z:
        z.writestr("sibdis/__init__.py", "")
        z.writestr("sibdis-1.0.dist-info/METADATA", meta)
        z.writestr("sibdis-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr("sibdis-1.0.dist-info/RECORD", "")
def add(tar, member, data):
    info = tarfile.TarInfo(f"sibdis-1.0/{member}")
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))
with tarfile.open(os.path.join(folder, "sibdis-1.0.tar.gz"), "w:gz") as tar:
    add(tar, "PKG-INFO", b"Metadata-Version: 2.4\nName: sibdis\nVersion: 1.0\nDynamic: requires-dist\n")
    add(tar, "setup.py", b"import sys\nfrom setuptools import setup\nsetup(install_requires=deps(sys.platform))\n")
"#;
    let mut cmd = std::process::Command::new("python3");
    cmd.args(["-c", script, dir.to_str().unwrap()]);
    for (tag, requires) in wheels {
        cmd.arg(format!("{tag}={requires}"));
    }
    assert!(cmd.status().unwrap().success());
}

fn compile_sibdis(wheels: &[(&str, &str)]) -> (i32, String, String) {
    let files = tempfile::tempdir().unwrap();
    disagreeing_siblings(files.path(), wheels);
    let extra = ["--extra-dir", files.path().to_str().unwrap()];
    let (index, work) = (Index::start(&["sdists.toml"], &extra), Work::new());
    work.write("in.txt", "sibdis\n");
    let mut cmd = work.layerlock(&["compile", "in.txt", "-o", "lock.txt"]);
    cmd.args(["--python-version", "3.12"])
        .args(["--platform", "x86_64-pc-windows-msvc"])
        .args(["--index-url", &index.json()]);
    let (code, _, stderr) = run(cmd);
    let lock = if code == 0 {
        work.read("lock.txt")
    } else {
        String::new()
    };
    (code, lock, stderr.replace("\n  ", " "))
}

/// Every wheel of the version is read: one platform's wheel that needs
/// something the others do not makes none of them stand for the target.
#[test]
fn sibling_wheels_that_disagree_are_refused_and_ones_that_agree_are_used() {
    let (code, _, stderr) = compile_sibdis(&[
        ("macosx_11_0_arm64", "s-dep"),
        ("manylinux_2_17_aarch64", "s-dep"),
        ("manylinux_2_17_x86_64", "s-dep,s-static"),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "sibdis==1.0: no wheel for the target, its sdist's dependencies are dynamic, and its \
             wheels for other platforms disagree on them (sibdis-1.0-py3-none-macosx_11_0_arm64.whl \
             and sibdis-1.0-py3-none-manylinux_2_17_x86_64.whl)"
        ),
        "{stderr}"
    );
    let (code, lock, stderr) = compile_sibdis(&[
        ("macosx_11_0_arm64", "s-dep"),
        ("manylinux_2_17_aarch64", "s-dep"),
        ("manylinux_2_17_x86_64", "s-dep"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pins(&lock), ["s-dep==1.0.0", "sibdis==1.0"], "{lock}");
    assert!(
        stderr.contains(
            "sibdis==1.0: dependencies read from its wheel \
             sibdis-1.0-py3-none-macosx_11_0_arm64.whl's metadata, which its 2 other wheels agree with"
        ),
        "{stderr}"
    );
}
