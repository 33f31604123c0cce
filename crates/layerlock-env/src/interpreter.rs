//! Inspecting a Python interpreter once: version, platform, libc and the
//! directories its distributions live in.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

use crate::EnvError;

const INSPECT: &str = include_str!("inspect.py");

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Interpreter {
    pub executable: PathBuf,
    pub version: (u8, u8, u8),
    pub implementation: String,
    pub sys_platform: String,
    pub platform_machine: String,
    /// `glibc` on glibc systems, empty elsewhere (musl, macOS, Windows).
    pub libc: String,
    pub libc_version: String,
    /// Where new distributions are installed.
    pub purelib: PathBuf,
    pub prefix: PathBuf,
    /// Every directory on the interpreter's path, site-packages included.
    pub paths: Vec<PathBuf>,
}

impl Interpreter {
    /// Run `python -I` with the inspection script.
    pub fn inspect(python: &Path) -> Result<Self, EnvError> {
        let output = Command::new(python)
            .args(["-I", "-c", INSPECT])
            .output()
            .map_err(|source| EnvError::Spawn {
                program: python.display().to_string(),
                source,
            })?;
        if !output.status.success() {
            return Err(EnvError::Inspect {
                python: python.display().to_string(),
                message: String::from_utf8_lossy(&output.stderr).trim().to_string(),
            });
        }
        serde_json::from_slice(&output.stdout).map_err(|e| EnvError::Inspect {
            python: python.display().to_string(),
            message: format!("unreadable inspection output: {e}"),
        })
    }

    /// `3.12`.
    pub fn python_short(&self) -> String {
        format!("{}.{}", self.version.0, self.version.1)
    }

    /// Why this interpreter cannot run a lock made for `python` on
    /// `platform`, or `None` when it can.
    pub fn mismatch(&self, python: &str, platform: &str) -> Option<String> {
        let mut problems = Vec::new();
        if python != self.python_short() {
            problems.push(format!(
                "the lock is for Python {python}, the interpreter is Python {}",
                self.python_short()
            ));
        }
        if let Some(why) = self.platform_mismatch(platform) {
            problems.push(why);
        }
        (!problems.is_empty()).then(|| problems.join("; "))
    }

    fn platform_mismatch(&self, platform: &str) -> Option<String> {
        let here = self.describe_platform();
        let (arch, rest) = platform.split_once('-')?;
        let machine = normalise_arch(&self.platform_machine);
        if normalise_arch(arch) != machine {
            return Some(format!(
                "the lock is for {platform}, the interpreter runs on {here}"
            ));
        }
        let os_matches = if let Some(v) = rest.strip_prefix("manylinux_") {
            // A manylinux_X_Y wheel runs on glibc X.Y or newer.
            self.sys_platform == "linux"
                && self.libc == "glibc"
                && version_at_least(&self.libc_version, v)
        } else if rest.starts_with("musllinux_") {
            self.sys_platform == "linux" && self.libc.is_empty()
        } else if rest == "apple-darwin" {
            self.sys_platform == "darwin"
        } else if rest == "pc-windows-msvc" {
            self.sys_platform == "win32"
        } else {
            true
        };
        (!os_matches).then(|| format!("the lock is for {platform}, the interpreter runs on {here}"))
    }

    pub fn describe_platform(&self) -> String {
        let libc = if self.libc.is_empty() {
            String::new()
        } else {
            format!(" with {} {}", self.libc, self.libc_version)
        };
        format!("{} {}{libc}", self.sys_platform, self.platform_machine)
    }
}

fn normalise_arch(arch: &str) -> String {
    match arch.to_ascii_lowercase().as_str() {
        "amd64" | "x86_64" => "x86_64".to_string(),
        "arm64" | "aarch64" => "aarch64".to_string(),
        other => other.to_string(),
    }
}

/// `2.35` ≥ `2_28`?
fn version_at_least(have: &str, want: &str) -> bool {
    let parse = |s: &str| -> Vec<u32> {
        s.split(['.', '_'])
            .map(|p| p.parse().unwrap_or(0))
            .collect()
    };
    parse(have) >= parse(want)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interp(machine: &str, libc_version: &str) -> Interpreter {
        Interpreter {
            executable: PathBuf::from("python3"),
            version: (3, 12, 3),
            implementation: "cpython".into(),
            sys_platform: "linux".into(),
            platform_machine: machine.into(),
            libc: "glibc".into(),
            libc_version: libc_version.into(),
            purelib: PathBuf::new(),
            prefix: PathBuf::new(),
            paths: Vec::new(),
        }
    }

    #[test]
    fn target_checks() {
        let i = interp("x86_64", "2.35");
        assert_eq!(i.mismatch("3.12", "x86_64-manylinux_2_28"), None);
        assert!(i.mismatch("3.11", "x86_64-manylinux_2_28").is_some());
        assert!(i.mismatch("3.12", "aarch64-manylinux_2_28").is_some());
        assert!(
            interp("x86_64", "2.17")
                .mismatch("3.12", "x86_64-manylinux_2_28")
                .is_some()
        );
        assert_eq!(
            interp("arm64", "2.39").mismatch("3.12", "aarch64-manylinux_2_28"),
            None
        );
    }
}
