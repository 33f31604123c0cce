//! `layerlock --version` names the commit it was built from, when it was
//! built from a git checkout (a wheel or sdist built elsewhere says only
//! the version).

use std::path::Path;
use std::process::Command;

fn main() {
    let git = Path::new("../../.git");
    let mut suffix = String::new();
    if git.exists() {
        // Rebuild when HEAD moves (a commit, a checkout). The reflog grows
        // with every move, whatever HEAD named when this last ran: a build
        // while HEAD was detached (as during a rebase) watched HEAD alone,
        // and later commits on the branch left `--version` naming an old
        // one.
        println!("cargo:rerun-if-changed=../../.git/HEAD");
        if git.join("logs/HEAD").is_file() {
            println!("cargo:rerun-if-changed=../../.git/logs/HEAD");
        }
        if let Ok(head) = std::fs::read_to_string(git.join("HEAD"))
            && let Some(reference) = head.trim().strip_prefix("ref: ")
        {
            println!("cargo:rerun-if-changed=../../.git/{reference}");
        }
        let commit = Command::new("git")
            .args(["rev-parse", "--short=9", "HEAD"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_hexdigit()));
        if let Some(commit) = commit {
            suffix = format!(" ({commit})");
        }
    }
    println!("cargo:rustc-env=LAYERLOCK_VERSION_SUFFIX={suffix}");
}
