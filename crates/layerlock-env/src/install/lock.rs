//! The file lock on an environment: two installs at once would plan against
//! the same snapshot and then interleave their installers, and each drift
//! guard would blame the other's packages.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use super::InstallError;

/// An exclusive lock on an environment, held while planning and
/// installing; released when dropped (or when the process dies, as `flock`
/// locks are).
#[derive(Debug)]
pub struct InstallLock {
    path: PathBuf,
    _file: File,
}

impl InstallLock {
    /// The lock file's name, in the environment's purelib directory.
    pub const FILE_NAME: &str = ".layerlock-install.lock";

    /// Lock the environment whose purelib directory is `site`, waiting for
    /// another holder if need be; `on_wait` is called once before waiting,
    /// so that the caller can say why nothing happens.
    pub fn acquire(site: &Path, on_wait: impl FnOnce()) -> Result<Self, InstallError> {
        let path = site.join(Self::FILE_NAME);
        // Opened for writing but never truncated: the file holds nothing,
        // and another run may hold it right now. Never through a symbolic
        // link, and without waiting: a FIFO put in its place must not
        // hold the install (opening one for writing waits for a reader).
        let mut options = OpenOptions::new();
        options.create(true).truncate(false).write(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
            options.custom_flags(flags.bits() as i32);
        }
        let file = options.open(&path).map_err(|source| {
            if fs_err::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
                InstallError::NotOurs { path: path.clone() }
            } else {
                InstallError::OpenLock {
                    path: path.clone(),
                    source,
                }
            }
        })?;
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            return Err(InstallError::NotOurs { path });
        }
        let locked = match file.try_lock() {
            Ok(()) => Ok(()),
            Err(TryLockError::WouldBlock) => {
                on_wait();
                file.lock()
            }
            Err(TryLockError::Error(e)) => Err(e),
        };
        locked.map_err(|source| InstallError::Lock {
            path: path.clone(),
            source,
        })?;
        Ok(Self { path, _file: file })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn a_free_environment_is_locked_without_waiting() {
        let site = tempfile::tempdir().unwrap();
        let mut waited = false;
        let lock = InstallLock::acquire(site.path(), || waited = true).unwrap();
        assert!(!waited);
        assert_eq!(lock.path(), site.path().join(".layerlock-install.lock"));
        assert!(lock.path().is_file());
    }

    #[test]
    fn a_second_install_waits_for_the_first_and_says_so() {
        let site = tempfile::tempdir().unwrap();
        let first = InstallLock::acquire(site.path(), || panic!("nobody holds it")).unwrap();
        let (waiting, waited) = mpsc::channel();
        let (locked, got_it) = mpsc::channel();
        let dir = site.path().to_path_buf();
        let second = std::thread::spawn(move || {
            let lock = InstallLock::acquire(&dir, || waiting.send(()).unwrap()).unwrap();
            locked.send(()).unwrap();
            drop(lock);
        });
        waited
            .recv_timeout(Duration::from_secs(10))
            .expect("the second install reports that it waits");
        assert!(
            got_it.recv_timeout(Duration::from_millis(200)).is_err(),
            "the second install must not get the lock while the first holds it"
        );
        drop(first);
        got_it
            .recv_timeout(Duration::from_secs(10))
            .expect("the second install gets the lock once the first lets go");
        second.join().unwrap();
    }

    #[test]
    fn a_missing_site_directory_names_the_lock_file() {
        let site = tempfile::tempdir().unwrap();
        let gone = site.path().join("no-such-dir");
        let err = InstallLock::acquire(&gone, || {}).unwrap_err();
        assert!(matches!(err, InstallError::OpenLock { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "cannot open {}",
                gone.join(".layerlock-install.lock").display()
            )
        );
    }

    #[test]
    fn a_fifo_or_link_in_the_locks_place_is_refused_without_waiting() {
        let site = tempfile::tempdir().unwrap();
        let path = site.path().join(InstallLock::FILE_NAME);
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let err = InstallLock::acquire(site.path(), || {}).unwrap_err();
        assert!(matches!(err, InstallError::NotOurs { .. }), "{err:?}");
        std::fs::remove_file(&path).unwrap();
        let target = site.path().join("elsewhere");
        std::fs::write(&target, "kept").unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let err = InstallLock::acquire(site.path(), || {}).unwrap_err();
        assert!(matches!(err, InstallError::NotOurs { .. }), "{err:?}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
    }
}
