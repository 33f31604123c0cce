//! Other index servers and hostile answers: a real pypiserver (installed by
//! .ci/run), and a wheel whose bytes do not match the listed hash.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Index, Work, pins, run};

#[test]
fn hash_mismatch_on_a_downloaded_wheel_is_a_hard_error() {
    let index = Index::start(&["tampered.toml"], &["--no-range"]);
    let work = Work::new();
    work.write("in.txt", "tampered\n");
    work.write("out.txt", "kept\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt", "-o", "out.txt"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("sha256 of http://127.0.0.1:"), "{stderr}");
    assert!(stderr.contains("but the index says"), "{stderr}");
    assert_eq!(work.read("out.txt"), "kept\n");
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// pypiserver serves PEP 503 HTML only, with sha256 fragments: the kind of
/// private mirror CI images are built from.
#[test]
fn compiles_against_a_real_pypiserver() {
    let Ok(found) = Command::new("pypi-server").arg("--version").output() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "pypi-server is not on PATH; .ci/run installs it"
        );
        eprintln!("skipped: pypi-server is not installed (bash .ci/run installs it)");
        return;
    };
    assert!(found.status.success());
    let work = Work::new();
    let packages = work.path().join("packages");
    let status = Command::new("python3")
        .arg(common::repo_root().join("tests/harness/pyindex.py"))
        .arg("build")
        .arg(common::scenario("layer.toml"))
        .arg(&packages)
        .status()
        .expect("build wheels");
    assert!(status.success());
    let port = free_port();
    let mut server = Command::new("pypi-server")
        .args([
            "run",
            "-p",
            &port.to_string(),
            "-i",
            "127.0.0.1",
            "-a",
            ".",
            "-P",
            ".",
        ])
        .args(["--hash-algo", "sha256", "--log-stream", "none"])
        .arg(&packages)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start pypi-server");
    let url = format!("http://127.0.0.1:{port}/simple/");
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "pypi-server did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    work.write("base.txt", "lib==1.5.0\n");
    work.write("in.txt", "app\ntool-extra[fast]\nnometa\n");
    let (code, _, stderr) =
        run(work.compile(&url, &["in.txt", "--base", "base.txt", "-o", "out.txt"]));
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        pins(&work.read("out.txt")),
        vec![
            "app==1.0.0",
            "linuxonly==1.0.0",
            "nometa==1.0.0",
            "speedy==1.0.0",
            "tool-extra==1.0.0",
            "util==1.0.0"
        ]
    );
}

#[test]
fn a_wheel_that_is_not_a_zip_is_reported_not_a_crash() {
    let work = Work::new();
    let extra = work.path().join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    std::fs::write(
        extra.join("junk-1.0.0-py3-none-any.whl"),
        b"this is not a zip archive at all",
    )
    .unwrap();
    let index = Index::start(&[], &["--extra-dir", extra.to_str().unwrap()]);
    work.write("in.txt", "junk\n");
    let (code, _, stderr) = run(work.compile(&index.json(), &["in.txt"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("junk-1.0.0-py3-none-any.whl"), "{stderr}");
    assert!(stderr.contains("not a zip file"), "{stderr}");
}

#[test]
fn a_cold_compile_looks_the_index_host_up_once() {
    let index = Index::start(&["layer.toml", "sdists.toml"], &[]);
    let work = Work::new();
    work.write("in.txt", "app\ns-middle\ns-pyproject\n");
    // By name, so the host is looked up at all (an IP address never is).
    let url = index.json().replace("127.0.0.1", "localhost");
    let args = ["in.txt", "-o", "out.txt", "--stats", "stats.json"];
    let (code, _, stderr) = run(work.compile(&url, &args));
    assert_eq!(code, 0, "{stderr}");
    let stats: serde_json::Value = serde_json::from_str(&work.read("stats.json")).unwrap();
    let requests = &stats["requests"];
    let sent: u64 = ["page", "metadata", "range", "sdist"]
        .iter()
        .map(|kind| requests[kind]["count"].as_u64().unwrap_or_default())
        .sum();
    assert!(sent > 10, "{stats}");
    let host = &stats["hosts"]["localhost"];
    assert_eq!(host["dns_lookups"], 1, "{stats}");
    // Connections are pooled: far fewer than the requests.
    let connections = host["connections"].as_u64().unwrap();
    assert!((1..sent).contains(&connections), "{stats}");
    assert_eq!(stats["layers"][0]["hosts"], stats["hosts"], "{stats}");
}
