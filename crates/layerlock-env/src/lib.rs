//! Installed Python environments: inspecting an interpreter, the
//! distributions on its path, the install plan for a lock, carrying it out
//! (file lock, journal, installer), the drift guard, RECORD integrity,
//! file clashes and the files an install would write over.

mod clash;
mod imports;
mod install;
mod installed;
mod integrity;
mod interpreter;
mod overwrite;
mod parallel;
mod plan;
mod read;
mod select;
#[cfg(test)]
mod testing;

pub use clash::{Clash, clashes};
pub use imports::{IMPORT_LIMIT, ImportResult, import_modules};
pub use install::{
    Build, HashedPin, InstallError, InstallLock, InstallOutcome, InstallRequest, InstallStatus,
    Installer, InstallerCommand, InstallerProgram, Journal, Runs, UninstallRequest,
};
pub use installed::{
    BaseEnvError, Installed, RecordEntry, Records, ScanOptions, Snapshot, Unreadable, normalise,
    read_record,
};
pub use integrity::{IntegrityProblem, check as check_integrity, check_all as check_integrity_all};
pub use interpreter::Interpreter;
pub use overwrite::{Overwrite, WheelFiles, installed_files, overwrites, same_bytes, site_path};
pub use plan::{
    Change, Conflict, Plan, Wanted, guard, is_version, missing_base, plan, same_version,
    unknown_allowance,
};
pub use select::{LockEntry, Mismatch, Refusal, compare, select};

#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    #[error("cannot run {program}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot inspect {python}: {message}")]
    Inspect { python: String, message: String },
    #[error("importing {modules} with {python} took over {seconds} s; a module hangs on import")]
    ImportHang {
        modules: String,
        python: String,
        seconds: u64,
    },
}
