//! The installer subprocess: uv or pip, given a requirements file holding
//! only the entries to install, each with its hashes (`--require-hashes
//! --no-deps`: nothing is resolved, nothing unhashed is fetched), started so
//! that it dies with us.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde::Serialize;
use tempfile::NamedTempFile;

use super::InstallError;

/// Which installer runs; its name is what reports and messages show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Installer {
    Uv,
    Pip,
}

impl Installer {
    pub fn name(self) -> &'static str {
        match self {
            Self::Uv => "uv",
            Self::Pip => "pip",
        }
    }
}

impl std::fmt::Display for Installer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The installer to run, found: uv needs its executable, pip is run by the
/// target Python itself (`python -m pip`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstallerProgram<'a> {
    Uv(&'a Path),
    Pip,
}

impl InstallerProgram<'_> {
    pub fn installer(&self) -> Installer {
        match self {
            Self::Uv(_) => Installer::Uv,
            Self::Pip => Installer::Pip,
        }
    }
}

/// One requirement handed to the installer: an exact pin and its hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HashedPin<'a> {
    pub name: &'a str,
    pub version: &'a uv_pep440::Version,
    /// `sha256:…`, as the lock has them.
    pub hashes: &'a [String],
    /// A package locked from its source: the URL it is built from.
    pub source: Option<&'a str>,
}

/// The plan's pins sorted into installer runs by what each may build:
/// index wheels (nothing), hash-checked sdists (`no_wheel`: the pins with
/// no wheel among their hashes), and sources (git commits, directories).
/// A pin goes to a run that builds only when it must: one with hashes is
/// never a source run's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runs<'a> {
    pub wheels: Vec<HashedPin<'a>>,
    pub sdists: Vec<HashedPin<'a>>,
    pub sources: Vec<HashedPin<'a>>,
}

impl<'a> Runs<'a> {
    pub fn split(pins: &[HashedPin<'a>], no_wheel: &[String]) -> Self {
        let mut runs = Self::default();
        for pin in pins {
            let named = format!("{}=={}", pin.name, pin.version);
            if pin.source.is_some() && pin.hashes.is_empty() {
                runs.sources.push(*pin);
            } else if no_wheel.contains(&named) {
                runs.sdists.push(*pin);
            } else {
                runs.wheels.push(*pin);
            }
        }
        runs
    }

    /// The runs in the order they go, each with what it may build.
    pub fn in_order(&self) -> [(&[HashedPin<'a>], Build); 3] {
        [
            (&self.wheels, Build::Nothing),
            (&self.sdists, Build::Sdists),
            (&self.sources, Build::Sources),
        ]
    }
}

/// Everything one installer run needs. The index URLs may carry a password,
/// so this type has no `Debug`, and they reach the installer only through
/// its environment.
pub struct InstallRequest<'a> {
    pub program: InstallerProgram<'a>,
    /// The target environment's interpreter.
    pub python: &'a Path,
    /// The entries to install: the plan's, nothing else.
    pub pins: &'a [HashedPin<'a>],
    /// Names among `pins` that are present at their version and must be
    /// rewritten anyway (see [`super::Journal::repairs`]).
    pub reinstall: &'a [String],
    pub index_url: Option<&'a str>,
    pub extra_index_urls: &'a [&'a str],
    pub find_links: &'a [PathBuf],
    /// Pass `--quiet` to the installer.
    pub quiet: bool,
    /// What the installer may build: nothing (wheels only), the pins'
    /// hash-checked source distributions, or their sources (a git commit,
    /// a directory), which carry no hashes.
    pub build: Build,
}

/// What one installer run may build; each kind runs apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Build {
    /// Wheels only: `--no-build` / `--only-binary :all:`.
    #[default]
    Nothing,
    /// The locked sdists, checked by hash like wheels, built by the
    /// installer (at image build time, as before there was a lock).
    Sdists,
    /// Git commits and directories: no hash to check; the commit pins
    /// them.
    Sources,
}

/// An installer run, ready to start: its requirements file written, its
/// command line built.
pub struct InstallerCommand {
    installer: Installer,
    /// The installer's program, as the launcher is given it.
    program: PathBuf,
    command: Command,
    /// Kept until the installer has run; removed when dropped (none for
    /// an uninstall).
    requirements: Option<NamedTempFile>,
}

impl std::fmt::Debug for InstallerCommand {
    // Not the command: its environment holds the index URLs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstallerCommand")
            .field("installer", &self.installer)
            .field(
                "requirements",
                &self.requirements.as_ref().map(NamedTempFile::path),
            )
            .finish_non_exhaustive()
    }
}

impl InstallRequest<'_> {
    /// Write the requirements file and build the command; nothing runs yet.
    pub fn prepare(&self) -> Result<InstallerCommand, InstallError> {
        let installer = self.program.installer();
        let requirements = self.requirements()?;
        let mut cmd = match self.program {
            InstallerProgram::Uv(uv) if self.build != Build::Nothing => {
                let mut cmd = Command::new(uv);
                cmd.args(["pip", "install"]);
                if self.build == Build::Sdists {
                    cmd.arg("--require-hashes");
                }
                cmd.args(["--no-deps", "--python"]).arg(self.python);
                cmd
            }
            InstallerProgram::Uv(uv) => {
                let mut cmd = Command::new(uv);
                // Never build: a source distribution runs its build backend
                // (package code) on the image.
                cmd.args([
                    "pip",
                    "install",
                    "--require-hashes",
                    "--no-deps",
                    "--no-build",
                    "--python",
                ])
                .arg(self.python);
                cmd
            }
            InstallerProgram::Pip if self.build != Build::Nothing => {
                let mut cmd = Command::new(self.python);
                cmd.args(["-m", "pip", "install"]);
                if self.build == Build::Sdists {
                    cmd.arg("--require-hashes");
                }
                cmd.args(["--no-deps", "--disable-pip-version-check"]);
                cmd
            }
            InstallerProgram::Pip => {
                let mut cmd = Command::new(self.python);
                cmd.args([
                    "-m",
                    "pip",
                    "install",
                    "--require-hashes",
                    "--no-deps",
                    "--only-binary",
                    ":all:",
                    "--disable-pip-version-check",
                ]);
                cmd
            }
        };
        // Index URLs (which may carry a password) go through the
        // environment, never the command line, which every user of the
        // machine can read (`ps`).
        let (index_var, extra_var) = match installer {
            Installer::Uv => ("UV_INDEX_URL", "UV_EXTRA_INDEX_URL"),
            Installer::Pip => ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"),
        };
        if let Some(url) = self.index_url {
            cmd.env(index_var, url);
        }
        if !self.extra_index_urls.is_empty() {
            cmd.env(extra_var, self.extra_index_urls.join(" "));
        }
        for dir in self.find_links {
            cmd.arg("--find-links").arg(dir);
        }
        cmd.arg("-r").arg(requirements.path());
        if !self.reinstall.is_empty() {
            match installer {
                Installer::Uv => {
                    for name in self.reinstall {
                        cmd.args(["--reinstall-package", name]);
                    }
                }
                // Every entry of the file is planned, so all may be
                // rewritten.
                Installer::Pip => {
                    cmd.arg("--force-reinstall");
                }
            }
        }
        if self.quiet {
            cmd.arg("--quiet");
        }
        Ok(InstallerCommand {
            installer,
            program: PathBuf::from(cmd.get_program()),
            command: dies_with_us(cmd, self.python),
            requirements: Some(requirements),
        })
    }

    /// A requirements file of `name==version --hash=…` lines.
    fn requirements(&self) -> Result<NamedTempFile, InstallError> {
        let failed = |source| InstallError::Requirements {
            installer: self.program.installer(),
            dir: std::env::temp_dir(),
            source,
        };
        let mut file = tempfile::Builder::new()
            .prefix("layerlock-install-")
            .suffix(".txt")
            .tempfile()
            .map_err(failed)?;
        let mut text = String::new();
        for pin in self.pins {
            if let Some(url) = pin.source {
                // One line a pin: a URL that could end it is never written.
                if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
                    return Err(failed(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "the source of {} holds white space or a control character",
                            pin.name
                        ),
                    )));
                }
                text.push_str(&format!("{} @ {url}\n", pin.name));
                continue;
            }
            text.push_str(&format!("{}=={}", pin.name, pin.version));
            for hash in pin.hashes {
                text.push_str(&format!(" --hash={hash}"));
            }
            text.push('\n');
        }
        file.write_all(text.as_bytes())
            .and_then(|()| file.flush())
            .map_err(failed)?;
        Ok(file)
    }
}

/// Removing the distributions a lock replaces on purpose, before its
/// install: `pip uninstall -y` or `uv pip uninstall`, nothing else.
pub struct UninstallRequest<'a> {
    pub program: InstallerProgram<'a>,
    pub python: &'a Path,
    /// Normalised distribution names.
    pub names: &'a [String],
    pub quiet: bool,
}

impl UninstallRequest<'_> {
    /// Build the command; nothing runs yet.
    pub fn prepare(&self) -> InstallerCommand {
        let installer = self.program.installer();
        let mut cmd = match self.program {
            InstallerProgram::Uv(uv) => {
                let mut cmd = Command::new(uv);
                cmd.args(["pip", "uninstall", "--python"]).arg(self.python);
                cmd
            }
            InstallerProgram::Pip => {
                let mut cmd = Command::new(self.python);
                cmd.args([
                    "-m",
                    "pip",
                    "uninstall",
                    "-y",
                    "--disable-pip-version-check",
                ]);
                cmd
            }
        };
        if self.quiet {
            cmd.arg("--quiet");
        }
        // Names only, after the options: a name never reads as a flag.
        cmd.arg("--");
        cmd.args(self.names);
        InstallerCommand {
            installer,
            program: PathBuf::from(cmd.get_program()),
            command: dies_with_us(cmd, self.python),
            requirements: None,
        }
    }
}

impl InstallerCommand {
    pub fn installer(&self) -> Installer {
        self.installer
    }

    /// Run the installer to its end, its output on our stderr (it is
    /// progress, not data). Returns its exit code, -1 when a signal ended
    /// it; a failing installer is the caller's to report, with what it left.
    pub fn run(mut self) -> Result<i32, InstallError> {
        // The launcher starts whatever it is given; a program named by a
        // path that is not there is said to be so before it runs.
        if self.program.components().count() > 1 && !self.program.is_file() {
            return Err(InstallError::Spawn {
                installer: self.installer,
                program: self.program,
                source: std::io::Error::from(std::io::ErrorKind::NotFound),
            });
        }
        let status = self
            .command
            .status()
            .map_err(|source| InstallError::Spawn {
                installer: self.installer,
                program: self.program.clone(),
                source,
            })?;
        drop(self.requirements);
        Ok(status.code().unwrap_or(-1))
    }
}

/// Starts a command through the target's Python so that it is killed when
/// layerlock dies (Linux `PR_SET_PDEATHSIG`): an installer must not go on
/// changing the environment after the drift guard is gone. If the parent
/// died before the signal was armed, it exits 70 at once. Elsewhere the
/// command just runs.
const LAUNCHER: &str = "import ctypes, os, signal, sys\n\
try:\n    ctypes.CDLL(None).prctl(1, signal.SIGKILL)\n\
except Exception:\n    pass\n\
if os.getppid() == 1:\n    sys.exit(70)\n\
os.execvp(sys.argv[1], sys.argv[1:])\n";

/// The same through util-linux's `setpriv --pdeathsig KILL` and `sh`, which
/// start in a millisecond where Python takes tens (most of what `install`
/// added to the installer's own time): `sh` exits 70 unless its parent is
/// still the layerlock that started it (`$1`), else becomes the command.
const SH_LAUNCHER: &str = "test \"$PPID\" = \"$1\" || exit 70\nshift\nexec \"$@\"\n";

/// `setpriv` and `sh` where they are and `setpriv` can set the parent-death
/// signal (util-linux 2.33 and later), found once.
fn setpriv() -> Option<&'static (PathBuf, PathBuf)> {
    static FOUND: std::sync::OnceLock<Option<(PathBuf, PathBuf)>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            if !cfg!(target_os = "linux") {
                return None;
            }
            let first = |names: &[&str]| names.iter().map(PathBuf::from).find(|p| p.is_file());
            let setpriv = first(&["/usr/bin/setpriv", "/bin/setpriv"])?;
            let sh = first(&["/bin/sh", "/usr/bin/sh"])?;
            knows_pdeathsig(&setpriv).then_some((setpriv, sh))
        })
        .as_ref()
}

/// Whether the `setpriv` program knows `--pdeathsig`: its usage text, which
/// names every option it takes, is in the program. Reading it (80 KB) costs
/// a fraction of starting it with `--help`, which came before every
/// installer's start.
fn knows_pdeathsig(setpriv: &Path) -> bool {
    /// Larger than any `setpriv` (a multi-call binary holding one is a
    /// few MB).
    const MAX_PROGRAM: u64 = 16 * 1024 * 1024;
    const OPTION: &[u8] = b"--pdeathsig";
    let mut program = Vec::new();
    let read = std::fs::File::open(setpriv).and_then(|file| {
        std::io::Read::read_to_end(&mut std::io::Read::take(file, MAX_PROGRAM), &mut program)
    });
    read.is_ok() && program.windows(OPTION.len()).any(|w| w == OPTION)
}

fn dies_with_us(cmd: Command, python: &Path) -> Command {
    let mut wrapped = match setpriv() {
        Some((setpriv, sh)) => {
            let mut wrapped = Command::new(setpriv);
            wrapped
                .args(["--pdeathsig", "KILL", "--"])
                .arg(sh)
                .args(["-c", SH_LAUNCHER, "layerlock-installer"])
                .arg(std::process::id().to_string());
            wrapped
        }
        None => {
            let mut wrapped = Command::new(python);
            wrapped.args(["-I", "-c", LAUNCHER]);
            wrapped
        }
    };
    wrapped.arg(cmd.get_program()).args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    // The installer's output is progress: it goes to stderr with ours.
    wrapped.stdout(Stdio::from(std::io::stderr()));
    wrapped
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::ffi::OsStr;

    const HASHES: &[String] = &[];

    fn args(cmd: &InstallerCommand) -> Vec<String> {
        cmd.command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    /// How many arguments come before the installer's own: the launcher's,
    /// `setpriv … sh -c SCRIPT NAME PID` or `python -I -c SCRIPT`.
    fn launcher_args(cmd: &InstallerCommand) -> usize {
        match setpriv() {
            Some((setpriv, _)) => {
                assert_eq!(cmd.command.get_program(), setpriv.as_os_str());
                8
            }
            None => {
                assert_eq!(cmd.command.get_program(), "/venv/bin/python");
                3
            }
        }
    }

    fn env<'a>(cmd: &'a InstallerCommand, key: &str) -> Option<&'a OsStr> {
        cmd.command
            .get_envs()
            .find(|(k, _)| *k == key)
            .and_then(|(_, v)| v)
    }

    fn request<'a>(program: InstallerProgram<'a>, pins: &'a [HashedPin<'a>]) -> InstallRequest<'a> {
        InstallRequest {
            program,
            python: Path::new("/venv/bin/python"),
            pins,
            reinstall: &[],
            index_url: None,
            extra_index_urls: &[],
            find_links: &[],
            quiet: false,
            build: Build::Nothing,
        }
    }

    #[test]
    fn pins_go_to_the_run_that_builds_least() {
        let (one, hashes) = ("1.0".parse().unwrap(), ["sha256:aa".to_string()]);
        let pin = |name, hashes: &'static [String], source| HashedPin {
            name,
            version: &one,
            hashes,
            source,
        };
        let leaked: &'static [String] = Box::leak(Box::new(hashes));
        let pins = [
            pin("wheel", leaked, None),
            pin("sdist", leaked, None),
            pin("git", &[], Some("git+https://x@abc")),
            // A source with hashes is checked like an index file.
            pin("hashed-source", leaked, Some("file:///x")),
        ];
        let runs = Runs::split(&pins, &["sdist==1.0".to_string()]);
        fn names<'a>(run: &[HashedPin<'a>]) -> Vec<&'a str> {
            run.iter().map(|p| p.name).collect()
        }
        assert_eq!(names(&runs.wheels), ["wheel", "hashed-source"]);
        assert_eq!(names(&runs.sdists), ["sdist"]);
        assert_eq!(names(&runs.sources), ["git"]);
    }

    #[test]
    fn the_requirements_file_holds_each_pin_with_its_hashes() {
        let hashes = ["sha256:aa".to_string(), "sha256:bb".to_string()];
        let (one, two) = ("1.0".parse().unwrap(), "2.0".parse().unwrap());
        let pins = [
            HashedPin {
                name: "alpha",
                version: &one,
                hashes: &hashes,
                source: None,
            },
            HashedPin {
                name: "beta",
                version: &two,
                hashes: HASHES,
                source: None,
            },
        ];
        let cmd = request(InstallerProgram::Pip, &pins).prepare().unwrap();
        assert_eq!(
            std::fs::read_to_string(cmd.requirements.as_ref().unwrap().path()).unwrap(),
            "alpha==1.0 --hash=sha256:aa --hash=sha256:bb\nbeta==2.0\n"
        );
    }

    #[test]
    fn uv_is_launched_through_the_target_python_hash_checked_and_without_deps() {
        let links = [PathBuf::from("wheels")];
        let reinstall = ["alpha".to_string()];
        let mut req = request(InstallerProgram::Uv(Path::new("/bin/uv")), &[]);
        req.find_links = &links;
        req.reinstall = &reinstall;
        req.quiet = true;
        let cmd = req.prepare().unwrap();
        assert_eq!(cmd.installer(), Installer::Uv);
        let launcher = launcher_args(&cmd);
        let requirements = cmd
            .requirements
            .as_ref()
            .unwrap()
            .path()
            .display()
            .to_string();
        assert_eq!(
            args(&cmd)[launcher..],
            [
                "/bin/uv",
                "pip",
                "install",
                "--require-hashes",
                "--no-deps",
                "--no-build",
                "--python",
                "/venv/bin/python",
                "--find-links",
                "wheels",
                "-r",
                &requirements,
                "--reinstall-package",
                "alpha",
                "--quiet",
            ]
        );
    }

    #[test]
    fn pip_runs_as_a_module_of_the_target_and_reinstalls_by_force() {
        let reinstall = ["alpha".to_string()];
        let mut req = request(InstallerProgram::Pip, &[]);
        req.reinstall = &reinstall;
        let cmd = req.prepare().unwrap();
        assert_eq!(cmd.installer(), Installer::Pip);
        let requirements = cmd
            .requirements
            .as_ref()
            .unwrap()
            .path()
            .display()
            .to_string();
        assert_eq!(
            args(&cmd)[launcher_args(&cmd)..],
            [
                "/venv/bin/python",
                "-m",
                "pip",
                "install",
                "--require-hashes",
                "--no-deps",
                "--only-binary",
                ":all:",
                "--disable-pip-version-check",
                "-r",
                &requirements,
                "--force-reinstall",
            ]
        );
    }

    #[test]
    fn index_credentials_go_through_the_environment_not_the_command_line() {
        let secret = "https://ci:s3cret@example.test/simple";
        let extras = [secret, "https://mirror.test/simple"];
        for (program, index_var, extra_var) in [
            (
                InstallerProgram::Uv(Path::new("uv")),
                "UV_INDEX_URL",
                "UV_EXTRA_INDEX_URL",
            ),
            (
                InstallerProgram::Pip,
                "PIP_INDEX_URL",
                "PIP_EXTRA_INDEX_URL",
            ),
        ] {
            let mut req = request(program, &[]);
            req.index_url = Some(secret);
            req.extra_index_urls = &extras;
            let cmd = req.prepare().unwrap();
            assert!(args(&cmd).iter().all(|a| !a.contains("s3cret")));
            assert!(!format!("{cmd:?}").contains("s3cret"));
            assert_eq!(env(&cmd, index_var), Some(OsStr::new(secret)));
            assert_eq!(
                env(&cmd, extra_var),
                Some(OsStr::new(
                    "https://ci:s3cret@example.test/simple https://mirror.test/simple"
                ))
            );
        }
    }

    #[test]
    fn a_python_that_cannot_start_is_named() {
        let python = Path::new("/nonexistent/bin/python");
        let mut req = request(InstallerProgram::Pip, &[]);
        req.python = python;
        let err = req.prepare().unwrap().run().unwrap_err();
        assert!(
            matches!(&err, InstallError::Spawn { installer: Installer::Pip, program, .. } if program == python),
            "{err:?}"
        );
        assert_eq!(err.to_string(), "cannot run \"/nonexistent/bin/python\"");
    }

    /// The launcher hands over to the installer and its exit code comes
    /// back unchanged. Needs a `python3` on PATH, as the CLI tests do.
    #[test]
    fn the_installers_exit_code_comes_back_through_the_launcher() {
        let python = Path::new("python3");
        if Command::new(python).arg("-V").output().is_err() {
            eprintln!("skipped: no python3 on PATH");
            return;
        }
        for (program, code) in [("true", 0), ("false", 1)] {
            let mut req = request(InstallerProgram::Uv(Path::new(program)), &[]);
            req.python = python;
            assert_eq!(req.prepare().unwrap().run().unwrap(), code, "{program}");
        }
    }

    #[test]
    fn installer_names() {
        assert_eq!(Installer::Uv.to_string(), "uv");
        assert_eq!(serde_json::to_string(&Installer::Pip).unwrap(), "\"pip\"");
    }

    #[test]
    fn an_uninstall_names_only_the_replaced_distributions_after_the_options() {
        let names = vec!["cupy-cuda12x".to_string()];
        let cmd = UninstallRequest {
            program: InstallerProgram::Pip,
            python: Path::new("/venv/bin/python"),
            names: &names,
            quiet: true,
        }
        .prepare();
        let args = args(&cmd);
        let tail: Vec<&str> = args.iter().rev().take(2).map(String::as_str).collect();
        assert_eq!(tail, ["cupy-cuda12x", "--"]);
        assert!(args.iter().any(|a| a == "uninstall"), "{args:?}");
        assert!(args.iter().any(|a| a == "-y"), "{args:?}");
        assert!(cmd.requirements.is_none());
    }
}
