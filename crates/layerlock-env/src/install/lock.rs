//! The file lock on an environment: two installs at once would plan against
//! the same snapshot and then interleave their installers, and each drift
//! guard would blame the other's packages.
//!
//! The lock file lives only while it is held: the holder removes it before
//! letting go, so an install (even a refused one) leaves site-packages as
//! it found it. A waiter that then gets the lock on the removed file sees
//! that the name no longer leads to it and starts again on a fresh one.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use super::InstallError;

/// An exclusive lock on an environment, held while planning and
/// installing; released when dropped (or when the process dies, as `flock`
/// locks are, leaving the empty file for the next install to take).
#[derive(Debug)]
pub struct InstallLock {
    path: PathBuf,
    file: File,
}

/// How often a waiter starts again because the file it locked was removed
/// by the holder it waited for: each round means another install finished,
/// so this is a bound on a hostile loop, not on honest contention.
const MAX_ROUNDS: usize = 1_000;

impl InstallLock {
    /// The lock file's name, in the environment's purelib directory.
    pub const FILE_NAME: &str = ".layerlock-install.lock";

    /// Lock the environment whose purelib directory is `site`, waiting for
    /// another holder if need be; `on_wait` is called once before waiting,
    /// so that the caller can say why nothing happens.
    pub fn acquire(site: &Path, on_wait: impl FnOnce()) -> Result<Self, InstallError> {
        let path = site.join(Self::FILE_NAME);
        let mut on_wait = Some(on_wait);
        for _ in 0..MAX_ROUNDS {
            let file = open(&path)?;
            let locked = match file.try_lock() {
                Ok(()) => Ok(()),
                Err(TryLockError::WouldBlock) => {
                    if let Some(say) = on_wait.take() {
                        say();
                    }
                    file.lock()
                }
                Err(TryLockError::Error(e)) => Err(e),
            };
            locked.map_err(|source| InstallError::Lock {
                path: path.clone(),
                source,
            })?;
            // Still the file the name leads to? A holder we waited for
            // removed it on its way out; lock the one there now.
            if same_file(&file, &path) {
                return Ok(Self { path, file });
            }
        }
        Err(InstallError::Lock {
            path,
            source: std::io::Error::other(format!(
                "the lock file was replaced {MAX_ROUNDS} times while waiting"
            )),
        })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for InstallLock {
    /// Remove the file while it is still held, then let go: a waiter that
    /// wakes on it sees it gone and takes a fresh one. A removal that fails
    /// leaves an empty file that the next install takes as its lock.
    fn drop(&mut self) {
        if same_file(&self.file, &self.path) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Open (creating) the lock file: for writing but never truncated, since
/// another run may hold it right now; never through a symbolic link, and
/// without waiting, since a FIFO put in its place must not hold the install
/// (opening one for writing waits for a reader).
fn open(path: &Path) -> Result<File, InstallError> {
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
        options.custom_flags(flags.bits() as i32);
    }
    let file = options.open(path).map_err(|source| {
        if fs_err::symlink_metadata(path).is_ok_and(|m| !m.is_file()) {
            InstallError::NotOurs {
                path: path.to_path_buf(),
            }
        } else {
            InstallError::OpenLock {
                path: path.to_path_buf(),
                source,
            }
        }
    })?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(InstallError::NotOurs {
            path: path.to_path_buf(),
        });
    }
    Ok(file)
}

/// Whether `path` names the open `file` (same device and inode), not a
/// file made after it was removed, nor nothing.
fn same_file(file: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::symlink_metadata(path)) {
            (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
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
        drop(lock);
        assert!(
            std::fs::read_dir(site.path()).unwrap().next().is_none(),
            "the lock file goes with the lock"
        );
    }

    #[test]
    fn waiters_never_share_the_lock_when_the_holder_removes_its_file() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let site = tempfile::tempdir().unwrap();
        let inside = Arc::new(AtomicUsize::new(0));
        let workers: Vec<_> = (0..6)
            .map(|_| {
                let dir = site.path().to_path_buf();
                let inside = Arc::clone(&inside);
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        let lock = InstallLock::acquire(&dir, || {}).unwrap();
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                        std::thread::sleep(Duration::from_millis(1));
                        inside.fetch_sub(1, Ordering::SeqCst);
                        drop(lock);
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().unwrap();
        }
        assert!(std::fs::read_dir(site.path()).unwrap().next().is_none());
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
