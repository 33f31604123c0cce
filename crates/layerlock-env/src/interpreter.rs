//! Inspecting a Python interpreter once: version, platform, libc and the
//! directories its distributions live in.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::EnvError;

const INSPECT: &str = include_str!("inspect.py");

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
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

/// A virtual environment's `pyvenv.cfg`, the part we need.
struct VenvConfig {
    root: PathBuf,
    home: PathBuf,
    system_site_packages: bool,
}

fn read_venv_config(python: &Path) -> Option<VenvConfig> {
    // venv/bin/python -> venv/pyvenv.cfg
    let root = python.parent()?.parent()?;
    let text = fs_err::read_to_string(root.join("pyvenv.cfg")).ok()?;
    let mut home = None;
    let mut system = false;
    for line in text.lines() {
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        match key.trim() {
            "home" => home = Some(PathBuf::from(value.trim())),
            "include-system-site-packages" => system = value.trim().eq_ignore_ascii_case("true"),
            _ => {}
        }
    }
    Some(VenvConfig {
        root: root.to_path_buf(),
        home: home?,
        system_site_packages: system,
    })
}

/// Where a virtual environment's inspection is cached, and what turns the
/// cached answer of its base interpreter into its own.
struct Cached {
    venv: VenvConfig,
    /// The venv's interpreter, absolute.
    absolute: PathBuf,
    /// The base interpreter, canonical.
    base: PathBuf,
    entry: PathBuf,
}

impl Cached {
    /// `None` for anything but a venv with a cache to look in: a bare name
    /// (looked up on PATH by the OS, so only Python itself can say which
    /// it is), a base interpreter that cannot be found.
    fn find(python: &Path, cache: Option<&Path>) -> Option<Self> {
        let absolute = if python.is_absolute() {
            python.to_path_buf()
        } else if python.components().count() > 1 {
            std::env::current_dir()
                .map(|d| d.join(python))
                .unwrap_or_else(|_| python.to_path_buf())
        } else {
            return None;
        };
        let cache = cache?;
        let venv = read_venv_config(&absolute)?;
        let base = Interpreter::base_interpreter(&venv)?;
        let key = file_key(&base)?;
        let entry = cache.join("interpreters").join(format!("{key}.json"));
        Some(Self {
            venv,
            absolute,
            base,
            entry,
        })
    }

    /// The venv's inspection from the cached entry, if there is a readable one.
    fn read(&self) -> Option<Interpreter> {
        let bytes = fs_err::read(&self.entry).ok()?;
        let base = serde_json::from_slice::<Interpreter>(&bytes).ok()?;
        Some(base.into_venv(&self.venv, &self.absolute))
    }
}

/// Cache key of an interpreter file: path, size and modification time.
fn file_key(path: &Path) -> Option<String> {
    let meta = fs_err::metadata(path).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos();
    let mut hasher = Sha256::new();
    hasher.update(path.display().to_string().as_bytes());
    hasher.update(meta.len().to_le_bytes());
    hasher.update(modified.to_le_bytes());
    hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
    Some(
        hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

/// How long an interpreter may take to describe itself.
pub const INSPECT_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

impl Interpreter {
    /// Inspect `python`. For a virtual environment, only its base interpreter
    /// is run (once: the answer is cached under `cache`, keyed by the base
    /// executable's path, size and mtime) and the environment's own layout is
    /// read from `pyvenv.cfg`, which saves a Python start-up on every call.
    pub fn inspect_cached(python: &Path, cache: Option<&Path>) -> Result<Self, EnvError> {
        let Some(cached) = Cached::find(python, cache) else {
            return Self::inspect(python);
        };
        if let Some(found) = cached.read() {
            return Ok(found);
        }
        let info = Self::inspect(&cached.base)?;
        if let Ok(bytes) = serde_json::to_vec(&info) {
            let entry = &cached.entry;
            let _ = fs_err::create_dir_all(entry.parent().unwrap_or(entry));
            let tmp = entry.with_extension(format!("tmp{}", std::process::id()));
            if fs_err::write(&tmp, bytes).is_ok() {
                let _ = fs_err::rename(&tmp, entry);
            }
        }
        Ok(info.into_venv(&cached.venv, &cached.absolute))
    }

    /// What [`Interpreter::inspect_cached`] answers when it can answer
    /// without running anything (a virtual environment whose base
    /// interpreter's answer is cached); `None` when it would have to run an
    /// interpreter.
    pub fn from_cache(python: &Path, cache: Option<&Path>) -> Option<Self> {
        Cached::find(python, cache)?.read()
    }

    fn base_interpreter(venv: &VenvConfig) -> Option<PathBuf> {
        ["python3", "python"]
            .iter()
            .map(|n| venv.home.join(n))
            .find(|p| p.is_file())
            .and_then(|p| fs_err::canonicalize(p).ok())
    }

    /// The base interpreter's answer, turned into the venv's: its own
    /// site-packages first, the base's site directories only when the venv
    /// includes them, the standard library as the base has it.
    fn into_venv(self, venv: &VenvConfig, executable: &Path) -> Self {
        let site = venv
            .root
            .join("lib")
            .join(format!("python{}.{}", self.version.0, self.version.1));
        let site =
            fs_err::canonicalize(site.join("site-packages")).unwrap_or(site.join("site-packages"));
        let base_sites: Vec<&PathBuf> = self
            .paths
            .iter()
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n == "site-packages" || n == "dist-packages")
            })
            .collect();
        let mut paths: Vec<PathBuf> = self
            .paths
            .iter()
            .filter(|p| !base_sites.contains(p))
            .cloned()
            .collect();
        paths.push(site.clone());
        if venv.system_site_packages {
            paths.extend(base_sites.into_iter().cloned());
        }
        Self {
            executable: executable.to_path_buf(),
            purelib: site,
            prefix: venv.root.clone(),
            paths,
            ..self
        }
    }

    /// Run `python -I` with the inspection script, for at most
    /// [`INSPECT_LIMIT`].
    pub fn inspect(python: &Path) -> Result<Self, EnvError> {
        let shown = || python.display().to_string();
        let limits = layerlock_process::Limits {
            time: INSPECT_LIMIT,
            // Its answer is a few lines per `sys.path` entry.
            stdout: 1 << 20,
            // Its last words, not a flood of them.
            stderr: 400,
        };
        let inspect_failed = |message: String| EnvError::Inspect {
            python: shown(),
            message,
        };
        let output = match layerlock_process::run(
            Command::new(python).args(["-I", "-c", INSPECT]),
            None,
            limits,
        ) {
            Ok(output) => output,
            Err(layerlock_process::Stopped::Spawn(source)) => {
                return Err(EnvError::Spawn {
                    program: shown(),
                    source,
                });
            }
            Err(layerlock_process::Stopped::TimedOut(_)) => {
                return Err(inspect_failed(format!(
                    "it did not answer within {} s (is it a wrapper waiting for input?)",
                    INSPECT_LIMIT.as_secs()
                )));
            }
            Err(layerlock_process::Stopped::TooLarge(bytes)) => {
                return Err(inspect_failed(format!(
                    "it printed more than {} KiB where Python answers with a few lines: it is not a Python interpreter (pass python3, a venv's bin/python or the venv's directory)",
                    bytes >> 10
                )));
            }
        };
        if !output.status.success() {
            let said = output.said();
            let code = output
                .status
                .code()
                .map_or_else(|| "was killed".to_string(), |c| format!("exited {c}"));
            return Err(inspect_failed(if said.is_empty() {
                format!(
                    "it {code} and said nothing: is it a Python interpreter? (pass python3, a venv's bin/python or the venv's directory)"
                )
            } else {
                format!("it {code}: {said}")
            }));
        }
        Self::parse(&String::from_utf8_lossy(&output.stdout)).ok_or_else(|| EnvError::Inspect {
            python: python.display().to_string(),
            message: "it ran but did not answer as Python does: it is not a Python interpreter (pass python3, a venv's bin/python or the venv's directory)".to_string(),
        })
    }

    fn parse(text: &str) -> Option<Self> {
        let mut interpreter = Self {
            executable: PathBuf::new(),
            version: (0, 0, 0),
            implementation: String::new(),
            sys_platform: String::new(),
            platform_machine: String::new(),
            libc: String::new(),
            libc_version: String::new(),
            purelib: PathBuf::new(),
            prefix: PathBuf::new(),
            paths: Vec::new(),
        };
        for line in text.lines() {
            let (key, value) = line.split_once('\t')?;
            match key {
                "executable" => interpreter.executable = PathBuf::from(value),
                "version" => {
                    let mut parts = value.split('.').map(|p| p.parse::<u8>().ok());
                    interpreter.version = (parts.next()??, parts.next()??, parts.next()??);
                }
                "implementation" => interpreter.implementation = value.to_string(),
                "sys_platform" => interpreter.sys_platform = value.to_string(),
                "platform_machine" => interpreter.platform_machine = value.to_string(),
                // `glibc 2.36`, or empty on musl and elsewhere.
                "libc" => {
                    let (name, version) = value.split_once(' ').unwrap_or((value, ""));
                    interpreter.libc = name.to_string();
                    interpreter.libc_version = version.to_string();
                }
                "prefix" => interpreter.prefix = PathBuf::from(value),
                "path" => interpreter.paths.push(PathBuf::from(value)),
                "purelib" => interpreter.purelib = PathBuf::from(value),
                _ => {}
            }
        }
        if interpreter.purelib.as_os_str().is_empty() {
            interpreter.purelib = interpreter.paths.last()?.clone();
        }
        (interpreter.version.0 != 0).then_some(interpreter)
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
        // The short names a lock header may carry, as compile reads them.
        let platform = match platform {
            "linux" | "x86_64-unknown-linux-gnu" => "x86_64-manylinux_2_28",
            "aarch64-unknown-linux-gnu" => "aarch64-manylinux_2_28",
            "x86_64-unknown-linux-musl" => "x86_64-musllinux_1_2",
            "aarch64-unknown-linux-musl" => "aarch64-musllinux_1_2",
            "macos" => "aarch64-apple-darwin",
            "windows" => "x86_64-pc-windows-msvc",
            other => other,
        };
        let unknown = || {
            Some(format!(
                "the lock names a platform layerlock does not know: `{platform}`"
            ))
        };
        let Some((arch, rest)) = platform.split_once('-') else {
            return unknown();
        };
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
            return unknown();
        };
        (!os_matches).then(|| format!("the lock is for {platform}, the interpreter runs on {here}"))
    }

    /// A platform name whose marker values (`sys_platform`,
    /// `platform_machine`) are this interpreter's, for evaluating a lock's
    /// markers: `x86_64-manylinux_2_17`, `aarch64-apple-darwin`, …. `None`
    /// for a machine layerlock has no name for.
    pub fn marker_platform(&self) -> Option<String> {
        let arch = normalise_arch(&self.platform_machine);
        if !matches!(
            arch.as_str(),
            "x86_64" | "aarch64" | "i686" | "ppc64le" | "s390x" | "riscv64"
        ) {
            return None;
        }
        Some(match self.sys_platform.as_str() {
            "linux" if self.libc.is_empty() => format!("{arch}-musllinux_1_2"),
            "linux" => format!("{arch}-manylinux_2_17"),
            "darwin" => format!("{arch}-apple-darwin"),
            "win32" => format!("{arch}-pc-windows-msvc"),
            _ => return None,
        })
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
