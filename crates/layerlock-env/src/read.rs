//! Reading files of an environment safely: a RECORD may list a FIFO or
//! `/dev/zero`, a dist-info may hold a device where METADATA should be.
//! Only regular files are read, and small ones whole.

use std::io::Read;
use std::path::Path;

/// Largest METADATA, RECORD or INSTALLER read whole.
pub(crate) const MAX_SMALL_FILE: u64 = 64 * 1024 * 1024;

/// The bytes of a regular file of at most `MAX_SMALL_FILE` bytes.
pub(crate) fn read_small(path: &Path) -> Result<Vec<u8>, String> {
    let meta = fs_err::metadata(path).map_err(|e| e.to_string())?;
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
    let mut bytes = Vec::new();
    fs_err::File::open(path)
        .map_err(|e| e.to_string())?
        .take(MAX_SMALL_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// The sha256 of a regular file, read in blocks (installed files can be
/// gigabytes).
pub(crate) fn sha256_file(path: &Path) -> Result<[u8; 32], String> {
    use sha2::{Digest, Sha256};
    let meta = fs_err::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".to_string());
    }
    let mut file = fs_err::File::open(path).map_err(|e| e.to_string())?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buffer).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hasher.finalize().into())
}
