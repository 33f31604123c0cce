//! Reading files of an environment safely: a RECORD may list a FIFO or
//! `/dev/zero`, a dist-info may hold a device where METADATA should be.
//! Only regular files are read, each read is bounded, and small files are
//! read whole.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

/// Largest METADATA, RECORD or INSTALLER read whole.
pub(crate) const MAX_SMALL_FILE: u64 = 64 * 1024 * 1024;

/// At most the first `limit` bytes of a regular file of at most
/// `MAX_SMALL_FILE` bytes, and whether that is the whole file.
pub(crate) fn read_prefix(path: &Path, limit: u64) -> Result<(Vec<u8>, bool), String> {
    // The path is looked at before it is opened: opening a FIFO blocks.
    let meta = std::fs::metadata(path).map_err(|e| io_message(path, &e))?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    if meta.len() > MAX_SMALL_FILE {
        return Err(format!(
            "{} is {} bytes, over the {MAX_SMALL_FILE}-byte limit",
            path.display(),
            meta.len()
        ));
    }
    // The file as it was looked at: at most the length its metadata gave
    // (what is appended later is not read), so a small file takes one read.
    let want = meta.len().min(limit);
    let mut bytes = Vec::with_capacity(usize::try_from(want).unwrap_or(0));
    std::fs::File::open(path)
        .map_err(|e| io_message(path, &e))?
        .take(want)
        .read_to_end(&mut bytes)
        .map_err(|e| io_message(path, &e))?;
    let whole = meta.len() <= limit || (bytes.len() as u64) < want;
    Ok((bytes, whole))
}

/// What went wrong with `path`, in words for a user.
pub(crate) fn io_message(path: &Path, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => format!("{} does not exist", path.display()),
        std::io::ErrorKind::PermissionDenied => {
            format!("{}: permission denied", path.display())
        }
        _ => format!("{}: {e}", path.display()),
    }
}

/// The bytes of a regular file of at most `MAX_SMALL_FILE` bytes.
pub(crate) fn read_small(path: &Path) -> Result<Vec<u8>, String> {
    read_prefix(path, MAX_SMALL_FILE + 1).map(|(bytes, _)| bytes)
}

/// A directory whose files are read many times over (a site directory).
/// On Unix it is opened once and its files are looked up from it: a
/// lookup then walks `x.dist-info/METADATA`, not every component from `/`
/// again (the walks were about an eighth of `verify`'s time on 10,000
/// distributions). Anything out of the ordinary (an error, a file that is
/// not regular) is redone by path, so answers and messages are the same.
pub(crate) struct Dir<'a> {
    path: &'a Path,
    #[cfg(unix)]
    fd: Option<rustix::fd::OwnedFd>,
}

impl<'a> Dir<'a> {
    pub(crate) fn open(path: &'a Path) -> Self {
        #[cfg(unix)]
        let fd = {
            use rustix::fs::{Mode, OFlags};
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            rustix::fs::open(path, flags, Mode::empty()).ok()
        };
        Self {
            path,
            #[cfg(unix)]
            fd,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        self.path
    }

    /// [`read_prefix`] of `relative` in this directory.
    pub(crate) fn read_prefix(
        &self,
        relative: &Path,
        limit: u64,
    ) -> Result<(Vec<u8>, bool), String> {
        #[cfg(unix)]
        if let Some(fd) = &self.fd
            && let Some(read) = read_prefix_at(fd, relative, limit)
        {
            return Ok(read);
        }
        read_prefix(&self.path.join(relative), limit)
    }

    /// [`read_small`] of `relative` in this directory.
    pub(crate) fn read_small(&self, relative: &Path) -> Result<Vec<u8>, String> {
        self.read_prefix(relative, MAX_SMALL_FILE + 1)
            .map(|(bytes, _)| bytes)
    }

    /// `relative` opened for hashing when it is a regular file (not a
    /// link to one), with its length; `None` when it is anything else or
    /// cannot be opened from here, for the caller to look at it by path.
    pub(crate) fn open_regular(&self, relative: &Path) -> Option<(std::fs::File, u64)> {
        #[cfg(unix)]
        {
            use rustix::fs::{AtFlags, FileType, Mode, OFlags};
            let fd = self.fd.as_ref()?;
            let stat = rustix::fs::statat(fd, relative, AtFlags::SYMLINK_NOFOLLOW).ok()?;
            if !FileType::from_raw_mode(stat.st_mode).is_file() {
                return None;
            }
            let len = u64::try_from(stat.st_size).ok()?;
            // NOFOLLOW: what was looked at must be what is opened.
            let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NOFOLLOW;
            let file = rustix::fs::openat(fd, relative, flags, Mode::empty()).ok()?;
            Some((std::fs::File::from(file), len))
        }
        #[cfg(not(unix))]
        {
            let _ = relative;
            None
        }
    }
}

/// [`read_prefix`] from an open directory; `None` for anything but a
/// regular file read without error.
#[cfg(unix)]
fn read_prefix_at(
    dir: &rustix::fd::OwnedFd,
    relative: &Path,
    limit: u64,
) -> Option<(Vec<u8>, bool)> {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    // Looked at before it is opened, as by path: opening a FIFO blocks.
    let stat = rustix::fs::statat(dir, relative, AtFlags::empty()).ok()?;
    if !FileType::from_raw_mode(stat.st_mode).is_file() {
        return None;
    }
    let len = u64::try_from(stat.st_size).ok()?;
    if len > MAX_SMALL_FILE {
        return None;
    }
    let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY;
    let file = rustix::fs::openat(dir, relative, flags, Mode::empty()).ok()?;
    let want = len.min(limit);
    let mut bytes = Vec::with_capacity(usize::try_from(want).ok()?);
    std::fs::File::from(file)
        .take(want)
        .read_to_end(&mut bytes)
        .ok()?;
    let whole = len <= limit || (bytes.len() as u64) < want;
    Some((bytes, whole))
}

/// Hashes files through one buffer, kept for every file a thread checks.
pub(crate) struct FileHasher {
    buffer: Vec<u8>,
}

impl FileHasher {
    /// 128 KiB: few reads for the megabytes of an extension module, and
    /// still in a core's cache while it is hashed.
    const BUFFER: usize = 128 * 1024;

    pub(crate) fn new() -> Self {
        Self {
            buffer: vec![0; Self::BUFFER],
        }
    }

    /// The sha256 of the file at `path`, which its metadata (taken by the
    /// caller, who checked that it is a regular file) says holds `len`
    /// bytes. At most `len + 1` bytes are read (installed files can be
    /// gigabytes, and a file can grow while it is read); `None` when the
    /// file did not hold `len` bytes when it was read: it changed.
    pub(crate) fn sha256(&mut self, path: &Path, len: u64) -> Result<Option<[u8; 32]>, String> {
        let file = fs_err::File::open(path).map_err(|e| e.to_string())?;
        self.sha256_of(file, len)
    }

    /// [`FileHasher::sha256`] of a file opened already.
    pub(crate) fn sha256_of(
        &mut self,
        file: impl Read,
        len: u64,
    ) -> Result<Option<[u8; 32]>, String> {
        let mut file = file.take(len.saturating_add(1));
        let mut hasher = Sha256::new();
        let mut read = 0u64;
        loop {
            let n = match file.read(&mut self.buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.to_string()),
            };
            hasher.update(&self.buffer[..n]);
            read += n as u64;
        }
        Ok((read == len).then(|| hasher.finalize().into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_says_whether_it_is_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("METADATA");
        std::fs::write(&path, "Name: a\nVersion: 1\n").unwrap();
        assert_eq!(
            read_prefix(&path, 8).unwrap(),
            (b"Name: a\n".to_vec(), false)
        );
        assert_eq!(
            read_prefix(&path, 1024).unwrap(),
            (b"Name: a\nVersion: 1\n".to_vec(), true)
        );
        assert_eq!(read_small(&path).unwrap(), b"Name: a\nVersion: 1\n");
    }

    #[test]
    fn a_file_that_is_not_the_size_its_metadata_said_has_no_digest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.py");
        std::fs::write(&path, "x = 1\n").unwrap();
        let mut hasher = FileHasher::new();
        let digest: [u8; 32] = Sha256::digest(b"x = 1\n").into();
        assert_eq!(hasher.sha256(&path, 6).unwrap(), Some(digest));
        // Grown or shrunk since it was looked at: never a digest of part of it.
        assert_eq!(hasher.sha256(&path, 5).unwrap(), None);
        assert_eq!(hasher.sha256(&path, 7).unwrap(), None);
        assert!(hasher.sha256(&dir.path().join("gone.py"), 1).is_err());
    }
}
