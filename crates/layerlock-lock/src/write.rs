//! Writing a lock so that nothing is lost: the text goes to a temporary
//! file beside the lock, then is renamed over it. A failed run never leaves
//! a half-written lock.

use std::io::Write as _;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(
        "{} is not a regular file (a directory, FIFO, device or socket); write the lock to a file, or use `-o -` for standard output",
        path.display()
    )]
    NotAFile { path: PathBuf },
    #[error("{}: the directory does not exist; create it, or write the lock elsewhere", dir.display())]
    NoDirectory { dir: PathBuf },
    #[error("{}: permission denied; the lock is written beside itself (a temporary file, then a rename), so the directory must be writable", dir.display())]
    NotWritable { dir: PathBuf },
    #[error("cannot create a temporary file in {}", dir.display())]
    Temp {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Write `text` to `path` atomically. A symlink is written through
/// (repositories keep locks as links; the link stays a link and its target
/// is replaced); a FIFO, device or socket is refused rather than replaced
/// by a file. The lock keeps the mode of the file it replaces, or gets the
/// usual 0644.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), WriteError> {
    let resolved;
    let path = match fs_err::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            // Follow the whole chain; a dangling link gets its target created.
            resolved = match fs_err::canonicalize(path) {
                Ok(real) => real,
                Err(_) => {
                    let target = fs_err::read_link(path)?;
                    path.parent().unwrap_or(Path::new(".")).join(target)
                }
            };
            resolved.as_path()
        }
        _ => path,
    };
    if let Ok(meta) = fs_err::metadata(path)
        && !meta.is_file()
    {
        return Err(WriteError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => WriteError::NoDirectory {
            dir: dir.to_path_buf(),
        },
        std::io::ErrorKind::PermissionDenied => WriteError::NotWritable {
            dir: dir.to_path_buf(),
        },
        _ => WriteError::Temp {
            dir: dir.to_path_buf(),
            source,
        },
    })?;
    tmp.write_all(text.as_bytes())?;
    // A temp file is created 0600.
    let permissions = match fs_err::metadata(path) {
        Ok(meta) => meta.permissions(),
        Err(_) => {
            let mut p = fs_err::metadata(tmp.path())?.permissions();
            set_default_mode(&mut p);
            p
        }
    };
    fs_err::set_permissions(tmp.path(), permissions)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(unix)]
fn set_default_mode(permissions: &mut std::fs::Permissions) {
    use std::os::unix::fs::PermissionsExt;
    permissions.set_mode(0o644);
}

#[cfg(not(unix))]
fn set_default_mode(_: &mut std::fs::Permissions) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_stays_a_link_and_a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        std::fs::write(&real, "old\n").unwrap();
        let link = dir.path().join("lock.txt");
        std::os::unix::fs::symlink("real.txt", &link).unwrap();
        write_atomic(&link, "new\n").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new\n");
        let err = write_atomic(dir.path(), "x").unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
}
