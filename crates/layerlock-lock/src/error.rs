//! Errors from reading requirements files, each naming file, line and column.

use std::fmt;
use std::path::PathBuf;

/// Where a line came from: `path:line:column`, one-based.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Origin {
    pub path: PathBuf,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.path.display(), self.line, self.column)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{origin}: {message}\n    {text}")]
    Syntax {
        origin: Origin,
        text: String,
        message: String,
    },
    /// A well-formed line that is not a lock entry (`lock.txt:3: …`).
    #[error("{at}: {message}")]
    Invalid { at: String, message: String },
    #[error("cannot read {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: no such file (a path is relative to the working directory)", path.display())]
    Missing { path: PathBuf },
    #[error("{origin}: the included file {} does not exist (an include is relative to the file that names it)", path.display())]
    MissingInclude { origin: Origin, path: PathBuf },
    #[error("{origin}: cannot read included file {}", path.display())]
    Include {
        origin: Origin,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not a regular file of a sensible size (at most 64 MiB)", path.display())]
    NotRegular { path: PathBuf },
    #[error(
        "{} is not text layerlock reads (UTF-8, or UTF-16 with a byte-order mark): binary data, a NUL byte or another encoding; save it as UTF-8",
        path.display()
    )]
    NotUtf8 { path: PathBuf },
    #[error("{} includes itself (through -r/-c); remove one of the includes", path.display())]
    IncludeCycle { path: PathBuf },
    #[error("{} is reached through more than {depth} nested -r/-c includes; flatten the chain", path.display())]
    IncludeTooDeep { path: PathBuf, depth: usize },
}
