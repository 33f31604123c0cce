//! Direct references: a layer that asks for a project by git URL or by
//! directory, as CI files clone and `pip install -e` them. The lock pins
//! the commit; the metadata is read statically, never by building; the
//! install builds it from source apart from the hash-checked wheels.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Index, Work, host_python, pins, repo_root, run, venv};

const LATER: &str = "2025-01-01T00:00:00Z";

fn index() -> Index {
    Index::start(&["lifecycle.toml"], &[])
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.email=t@example.test", "-c", "user.name=t"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A project folder that pip can build offline: static `[project]`
/// metadata, and the harness's in-tree backend (no setuptools to fetch).
fn project(dir: &Path, name: &str, version: &str, project_extra: &str) {
    std::fs::create_dir_all(dir.join(name)).unwrap();
    let backend = Command::new("python3")
        .arg("-c")
        .arg(format!(
            "import sys; sys.path.insert(0, {:?}); import pyindex; sys.stdout.write(pyindex.SDIST_BACKEND)",
            repo_root().join("tests/harness").display().to_string()
        ))
        .output()
        .unwrap();
    assert!(backend.status.success());
    std::fs::write(dir.join("_pyindex_backend.py"), backend.stdout).unwrap();
    std::fs::write(
        dir.join("PKG-INFO"),
        format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"),
    )
    .unwrap();
    std::fs::write(dir.join(name).join("__init__.py"), "").unwrap();
    std::fs::write(
        dir.join("pyproject.toml"),
        format!(
            "[build-system]\nrequires = []\nbuild-backend = \"_pyindex_backend\"\nbackend-path = [\".\"]\n\n[project]\nname = \"{name}\"\nversion = \"{version}\"\n{project_extra}"
        ),
    )
    .unwrap();
}

/// A git repository holding one project, tagged `v1`; its first commit.
fn repository(work: &Work) -> (PathBuf, String) {
    let repo = work.path().join("proj-repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    project(
        &repo,
        "proj",
        "0.3.0",
        "dependencies = [\"web\", \"certifi<2024.6\"]\n\n[project.optional-dependencies]\nplug = [\"plugin\"]\n",
    );
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "one"]);
    git(&repo, &["tag", "v1"]);
    let commit = git(&repo, &["rev-parse", "HEAD"]);
    (repo, commit)
}

fn compile(work: &Work, index: &Index, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["--exclude-newer", LATER];
    all.extend_from_slice(args);
    run(work.compile(&index.json(), &all))
}

#[test]
fn a_git_revision_is_locked_at_its_commit_with_its_static_dependencies() {
    let (index, work) = (index(), Work::new());
    let (repo, commit) = repository(&work);
    work.write(
        "in.txt",
        &format!("proj[plug] @ git+file://{}@v1\n", repo.display()),
    );
    let (code, _, stderr) = compile(&work, &index, &["in.txt", "-o", "lock.txt"]);
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("lock.txt");
    assert!(
        lock.contains(&format!(
            "proj @ git+file://{}@{commit}\n    # version 0.3.0\n",
            repo.display()
        )),
        "{lock}"
    );
    // Its dependencies and its extra's, from the index, hash-pinned.
    assert_eq!(
        pins(&lock),
        [
            "certifi==2024.1.1",
            "helperlib==1.2.0",
            "plugin==1.0.0",
            "urllib3==2.0.0",
            "web==1.1.0"
        ]
    );
    assert!(lock.contains("#    layerlock install lock.txt"), "{lock}");
    // Regenerated, the lock reads back and is current.
    let (code, _, stderr) = compile(&work, &index, &["in.txt", "-o", "lock.txt", "--check"]);
    assert_eq!(code, 0, "{stderr}");
    // pylock.toml: a vcs package pinned by commit-id.
    let (code, _, stderr) = compile(&work, &index, &["in.txt", "-o", "pylock.toml"]);
    assert_eq!(code, 0, "{stderr}");
    let pylock = work.read("pylock.toml");
    assert!(
        pylock.contains(&format!(
            "[packages.vcs]\ntype = \"git\"\nurl = \"file://{}\"\nrequested-revision = \"v1\"\ncommit-id = \"{commit}\"\n",
            repo.display()
        )),
        "{pylock}"
    );
    let (code, _, stderr) = compile(&work, &index, &["in.txt", "-o", "pylock.toml", "--check"]);
    assert_eq!(code, 0, "{stderr}");
    // The tag moves to a new commit: the lock follows it, and says so.
    std::fs::write(repo.join("proj/__init__.py"), "VERSION = 1\n").unwrap();
    git(&repo, &["commit", "-qam", "two"]);
    git(&repo, &["tag", "-f", "v1"]);
    let moved = git(&repo, &["rev-parse", "HEAD"]);
    let (code, stdout, stderr) = compile(&work, &index, &["in.txt", "-o", "lock.txt", "--diff"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.starts_with("moves the source of 1 package, keeps 5"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "@{commit}) -> 0.3.0 (git+file://{}@{moved})",
            repo.display()
        )),
        "{stdout}"
    );
}

#[test]
fn a_project_with_dynamic_metadata_is_refused_never_built() {
    let (index, work) = (index(), Work::new());
    let dir = work.path().join("dyn");
    project(&dir, "dynproj", "1.0", "");
    let text = std::fs::read_to_string(dir.join("pyproject.toml")).unwrap();
    std::fs::write(
        dir.join("pyproject.toml"),
        text.replace("version = \"1.0\"\n", "dynamic = [\"version\"]\n"),
    )
    .unwrap();
    work.write("in.txt", "-e ./dyn\n");
    let (code, _, stderr) = compile(&work, &index, &["in.txt"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("in.txt:1"), "{stderr}");
    assert!(stderr.contains("`version` as dynamic"), "{stderr}");
    assert!(stderr.contains("never runs"), "{stderr}");
    // Nothing was built: no wheel, no build folder.
    assert!(!dir.join("build").exists());
}

#[test]
fn a_url_layerlock_cannot_pin_is_refused_with_what_to_do() {
    let (index, work) = (index(), Work::new());
    let marker = work.path().join("ran");
    for (line, says) in [
        (
            "proj @ https://example.test/proj-1.0.tar.gz\n",
            "neither a git URL",
        ),
        (
            "proj @ file:///nowhere/proj-1.0-py3-none-any.whl\n",
            "--find-links",
        ),
        (
            &format!("proj @ git+ext::sh -c touch% {}\n", marker.display()) as &str,
            "white space",
        ),
        ("proj @ git+ext::/bin/true\n", "cannot fetch it"),
        ("proj @ git+http://example.test/repo\n", "cannot fetch it"),
        (
            "proj @ git+https://me:s3cret@example.test/repo\n",
            "carries credentials",
        ),
        ("proj @ git+file:///nowhere/repo@v1\n", "cannot fetch it"),
    ] {
        work.write("in.txt", line);
        let (code, _, stderr) = compile(&work, &index, &["in.txt"]);
        assert_eq!(code, 2, "{line}: {stderr}");
        assert!(stderr.contains("in.txt:1"), "{line}: {stderr}");
        assert!(stderr.contains(says), "{line}: {stderr}");
        assert!(!stderr.contains("s3cret"), "{stderr}");
    }
    // A URL in a constraint file an input includes is no constraint.
    work.write("c.txt", "proj @ git+https://example.test/repo\n");
    work.write("in.txt", "web\n-c c.txt\n");
    let (code, _, stderr) = compile(&work, &index, &["in.txt"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("c.txt:1: a constraint takes versions, not a URL"),
        "{stderr}"
    );
    assert!(!marker.exists(), "git's ext:: transport ran a command");
}

#[test]
fn the_wrong_name_for_a_project_is_an_error() {
    let (index, work) = (index(), Work::new());
    let (repo, _) = repository(&work);
    work.write(
        "in.txt",
        &format!("other @ git+file://{}\n", repo.display()),
    );
    let (code, _, stderr) = compile(&work, &index, &["in.txt"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("holds the project proj, not other"),
        "{stderr}"
    );
}

#[test]
fn git_and_directory_projects_install_from_source_beside_hashed_wheels() {
    let (index, work) = (index(), Work::new());
    let (repo, _) = repository(&work);
    project(
        &work.path().join("services/local"),
        "localthing",
        "1.0",
        "dependencies = [\"helperlib<1.2\"]\n",
    );
    work.write(
        "reqs/in.txt",
        &format!(
            "proj @ git+file://{}@v1\n-e ../services/local\n",
            repo.display()
        ),
    );
    std::fs::create_dir_all(work.path().join("locks")).unwrap();
    // For this machine's Python, to install it here.
    let mut cmd = work.layerlock(&["compile", "reqs/in.txt", "-o", "locks/lock.txt"]);
    cmd.args([
        "--python-version",
        &host_python(),
        "--platform",
        "x86_64-manylinux_2_28",
    ])
    .args(["--index-url", &index.json(), "--exclude-newer", LATER]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    let lock = work.read("locks/lock.txt");
    // The directory is written from the lock's folder.
    assert!(
        lock.contains("localthing @ file:../services/local\n    # version 1.0\n    # via -e ../services/local\n"),
        "{lock}"
    );
    // uv: pip before 23.3 refuses a `git+file:///` URL (no host).
    let python = venv(&work, "venv", false);
    let mut cmd = work.layerlock(&["install", "locks/lock.txt", "--installer", "uv"]);
    cmd.arg("--python")
        .arg(&python)
        .args(["--index-url", &index.json()]);
    let (code, _, stderr) = run(cmd);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("localthing, proj are built from their source"),
        "{stderr}"
    );
    assert!(stderr.contains("with uv, from source"), "{stderr}");
    let mut cmd = work.layerlock(&["verify", "locks/lock.txt"]);
    cmd.arg("--python").arg(&python);
    let (code, stdout, stderr) = run(cmd);
    assert_eq!(code, 0, "{stdout}{stderr}");
}
