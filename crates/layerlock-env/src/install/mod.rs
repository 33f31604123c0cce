//! Acting on a plan: the file lock that keeps two installs out of one
//! environment, the journal an interrupted install leaves behind, the
//! installer subprocess (uv or pip) and the outcome the drift guard settles.
//!
//! The order is the caller's: plan ([`crate::plan()`]), take the
//! [`InstallLock`], let the [`Journal`] repair what an interrupted run left,
//! record the plan, run the [`InstallerCommand`], then [`InstallOutcome::settle`].
//! Nothing here prints; what a person should hear about (a wait for the lock)
//! is handed back through a callback.

mod installer;
mod journal;
mod lock;
mod outcome;

use std::path::PathBuf;

pub use installer::{
    Build, HashedPin, InstallRequest, Installer, InstallerCommand, InstallerProgram, Runs,
    UninstallRequest,
};
pub use journal::Journal;
pub use lock::InstallLock;
pub use outcome::{InstallOutcome, InstallStatus};

/// What can stop an install before its outcome is known. A failing
/// installer is not one of these: it is an [`InstallOutcome`] (status
/// `installer-failed`, with its exit code), because the environment must
/// still be checked and reported.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("cannot open {path}", path = path.display())]
    OpenLock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path} is not a regular file (a FIFO, a symbolic link, a directory?); it is layerlock's own file in site-packages: remove it and run again",
        path = path.display()
    )]
    NotOurs { path: PathBuf },
    #[error("cannot lock {path}", path = path.display())]
    Lock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot record the plan in {path}", path = path.display())]
    Journal {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the requirements file for {installer} in {dir}", dir = dir.display())]
    Requirements {
        installer: Installer,
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `program` is what was started: the target Python, which launches the
    /// installer (see [`InstallerCommand`]).
    #[error("cannot run {program:?}")]
    Spawn {
        installer: Installer,
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
