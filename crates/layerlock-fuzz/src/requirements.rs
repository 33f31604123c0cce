//! The `requirements` target: pip requirements files (inputs, base locks,
//! layer locks) read by layerlock-lock.

use std::hint::black_box;
use std::path::Path;

use layerlock_lock::{RequirementsFile, names};

/// `RequirementsFile::parse` follows `-r`/`-c` includes on disk, relative to
/// the file's directory. This directory does not exist, so relative
/// includes fail with an error instead of reading files; absolute include
/// paths are still read (see fuzz/README.md).
const FAKE_PATH: &str = "/nonexistent/fuzz.txt";

pub fn requirements(data: &[u8]) {
    let text = crate::text(data);
    match RequirementsFile::parse(Path::new(FAKE_PATH), &text) {
        Ok(file) => {
            for entry in file.entries.iter().chain(&file.constraints) {
                // Display is what the lock writer and `# via` lines print.
                black_box(entry.requirement.to_string());
                black_box(entry.requirement.marker.try_to_string());
                black_box(entry.origin.to_string());
                black_box((entry.hashes.len(), entry.editable));
            }
            black_box(names(&file.entries));
            black_box(names(&file.constraints));
            black_box(&file.options);
            black_box(file.files.len());
        }
        Err(error) => crate::render_error(&error),
    }
}

/// The `pylock` target: PEP 751 lock files read by `install`, `verify`,
/// `cooldown` and as bases, then written back (a lock read from anywhere
/// must render without panicking, and its rendering must read again).
pub fn pylock(data: &[u8]) {
    let text = crate::text(data);
    let path = Path::new("/nonexistent/pylock.toml");
    match layerlock_lock::Lock::parse(path, &text) {
        Ok(lock) => {
            for package in &lock.packages {
                black_box(package.sha256s().count());
                black_box(package.marker.try_to_string());
            }
            let written = lock.render(layerlock_lock::LockFormat::Pylock, "pylock.toml");
            if let Err(error) = layerlock_lock::Lock::parse(path, &written) {
                panic!("a rendered pylock.toml does not read back: {error}\n{written}");
            }
            black_box(lock.render(layerlock_lock::LockFormat::Requirements, "lock.txt"));
        }
        Err(error) => crate::render_error(&error),
    }
}
