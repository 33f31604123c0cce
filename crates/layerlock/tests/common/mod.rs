//! Test support: a real HTTP index (tests/harness/pyindex.py, serving wheels
//! it builds from scenario files), temp workspaces, and the layerlock binary.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};

use assert_cmd::cargo::CommandCargoExt;

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repo root")
}

pub fn scenario(name: &str) -> PathBuf {
    repo_root().join("tests/scenarios").join(name)
}

/// A running test index; killed on drop (and it exits by itself when our
/// end of its stdin closes, so a crashed test leaves nothing behind).
pub struct Index {
    child: Child,
    _stdin: ChildStdin,
    pub url: String,
    pub log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Index {
    pub fn start(scenarios: &[&str], extra: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("requests.log");
        let mut cmd = Command::new("python3");
        cmd.arg(repo_root().join("tests/harness/pyindex.py"))
            .arg("serve");
        for s in scenarios {
            cmd.arg(scenario(s));
        }
        cmd.arg("--root")
            .arg(dir.path().join("files"))
            .arg("--log")
            .arg(&log)
            .arg("--stdin-lifetime")
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("start the test index");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("READY line");
        let url = line
            .trim()
            .strip_prefix("READY ")
            .unwrap_or_else(|| panic!("index did not start: {line:?}"))
            .to_string();
        let stdin = child.stdin.take().expect("stdin");
        Self {
            child,
            _stdin: stdin,
            url,
            log,
            _dir: dir,
        }
    }

    /// The PEP 691 JSON form of the index.
    pub fn json(&self) -> String {
        format!("{}/json/simple/", self.url)
    }

    /// The PEP 503 HTML form of the index.
    pub fn html(&self) -> String {
        format!("{}/html/simple/", self.url)
    }

    /// Every request the index has answered so far.
    pub fn requests(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn port(&self) -> String {
        self.url.rsplit(':').next().unwrap_or_default().to_string()
    }
}

impl Drop for Index {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scratch directory holding a test's requirement files and outputs.
pub struct Work {
    pub dir: tempfile::TempDir,
    pub cache: PathBuf,
}

impl Work {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = dir.path().join(".cache");
        Self { dir, cache }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&path, text).expect("write");
        path
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).expect("read")
    }

    /// `layerlock ARGS` run in the work dir with its own cache.
    pub fn layerlock(&self, args: &[&str]) -> Command {
        let mut cmd = Command::cargo_bin("layerlock").expect("binary");
        cmd.current_dir(self.dir.path())
            .env("LAYERLOCK_CACHE_DIR", &self.cache)
            .env_remove("LAYERLOCK_INDEX_URL")
            .env("NETRC", self.dir.path().join("no-netrc"))
            .args(args);
        cmd
    }

    /// `layerlock compile` for Python 3.12 on x86_64-manylinux_2_28.
    pub fn compile(&self, index: &str, args: &[&str]) -> Command {
        let mut cmd = self.layerlock(&["compile"]);
        cmd.args(args)
            .args([
                "--python-version",
                "3.12",
                "--platform",
                "x86_64-manylinux_2_28",
            ])
            .args(["--index-url", index]);
        cmd
    }
}

/// Run and capture: (exit code, stdout, stderr).
pub fn run(mut cmd: Command) -> (i32, String, String) {
    let out = cmd.output().expect("run layerlock");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Names and versions pinned by a lock, in order: `name==version`.
pub fn pins(lock: &str) -> Vec<String> {
    lock.lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('#') && l.contains("=="))
        .map(|l| l.trim_end_matches(" \\").to_string())
        .collect()
}

/// Insta settings that hide ports and temp paths.
pub fn redactions(work: &Work) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT");
    let path = regex_escape(&work.path().display().to_string());
    settings.add_filter(&path, "[WORK]");
    settings
}

fn regex_escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A lock without its comment lines (header, `# via`, trailer).
pub fn body(lock: &str) -> String {
    lock.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n")
}

/// vLLM's CI corpus beside the checkout (`../shared/corpus/vllm`), when it
/// is there. A fresh clone elsewhere lacks it: the tests that read it say so
/// and skip; everything else uses the repository's own fixtures.
#[allow(dead_code)] // not every test binary reads the corpus
pub fn vllm_corpus(test: &str) -> Option<PathBuf> {
    let corpus = repo_root().join("../shared/corpus/vllm");
    if corpus.is_dir() {
        Some(corpus)
    } else {
        eprintln!(
            "skipped {test}: vLLM's corpus is not beside this checkout (../shared/corpus/vllm)"
        );
        None
    }
}

/// A fresh venv of this machine's python3 (3.11 on x86_64 Linux) in
/// `work/name`, with or without pip; its interpreter.
#[allow(dead_code)] // not every test binary makes environments
pub fn venv(work: &Work, name: &str, with_pip: bool) -> PathBuf {
    let dir = work.path().join(name);
    let mut cmd = std::process::Command::new("python3");
    cmd.args(["-m", "venv"]);
    if !with_pip {
        cmd.arg("--without-pip");
    }
    let status = cmd.arg(&dir).status().expect("python3 -m venv");
    assert!(status.success());
    dir.join("bin/python")
}

/// This machine's python3 as `3.X`.
#[allow(dead_code)] // not every test binary makes environments
pub fn host_python() -> String {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')",
        ])
        .output()
        .expect("python3");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Run `cmd` with its standard output closed at once, as `layerlock … |
/// head` ends early: (exit code, stderr).
#[allow(dead_code)] // not every test binary closes a pipe
pub fn run_reader_gone(cmd: &Command, cwd: &Path) -> (Option<i32>, String) {
    let mut child = std::process::Command::new(cmd.get_program())
        .args(cmd.get_args())
        .envs(
            cmd.get_envs()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
        )
        .current_dir(cwd)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn layerlock");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait for layerlock");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
