//! Reading a CI file or script safely: only regular files, only inside the
//! root once symlinks are resolved, and never more than a cap. A FIFO, a
//! device or a committed symlink to `/dev/zero` is refused, not read.

use std::io::Read;
use std::path::Path;

/// Largest CI file or script read (vLLM's largest pipeline is ~200 KB).
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Why a file was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    Missing(String),
    Outside,
    NotRegular,
    TooLarge(u64),
    Io(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Missing(e) => write!(f, "cannot read: {e}"),
            Self::Outside => write!(
                f,
                "it resolves outside the scanned root (a symlink?), so it was not read"
            ),
            Self::NotRegular => write!(
                f,
                "not a regular file (a FIFO, device or socket), so it was not read"
            ),
            Self::TooLarge(size) => write!(
                f,
                "{size} bytes, over the {MAX_FILE_BYTES}-byte limit for a CI file, so it was not read"
            ),
            Self::Io(e) => write!(f, "cannot read: {e}"),
        }
    }
}

/// The bytes of `path`, a regular file inside `root` (canonical), at most
/// [`MAX_FILE_BYTES`].
pub fn read_bounded(path: &Path, root: &Path) -> Result<Vec<u8>, Refused> {
    let real = fs_err::canonicalize(path).map_err(|e| Refused::Missing(e.to_string()))?;
    if !real.starts_with(root) {
        return Err(Refused::Outside);
    }
    // Checked before opening: opening a FIFO blocks until a writer comes.
    let meta = fs_err::metadata(&real).map_err(|e| Refused::Io(e.to_string()))?;
    if !meta.is_file() {
        return Err(Refused::NotRegular);
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(Refused::TooLarge(meta.len()));
    }
    let file = fs_err::File::open(&real).map_err(|e| Refused::Io(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Refused::Io(e.to_string()))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Refused::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

/// The lines of the tree's files, each read once (bounded, and only inside
/// the root): what reports quote beside a finding.
pub struct SourceLines {
    root: std::path::PathBuf,
    cache: std::cell::RefCell<std::collections::BTreeMap<String, Option<std::rc::Rc<Vec<String>>>>>,
}

impl SourceLines {
    pub fn new(root: &std::path::Path) -> Self {
        Self {
            root: root.to_path_buf(),
            cache: Default::default(),
        }
    }

    /// The lines of `path` (relative to the root), or `None` when it
    /// cannot be read.
    pub fn get(&self, path: &str) -> Option<std::rc::Rc<Vec<String>>> {
        self.cache
            .borrow_mut()
            .entry(path.to_string())
            .or_insert_with(|| {
                let bytes = read_bounded(&self.root.join(path), &self.root).ok()?;
                let text = String::from_utf8_lossy(&bytes);
                Some(std::rc::Rc::new(text.lines().map(str::to_string).collect()))
            })
            .clone()
    }
}
