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
