//! The requirements-file model: reading pip requirements files (inputs, base
//! locks, layer locks) and writing hash-pinned layer locks. No network.

mod error;
mod parse;
mod write;

pub use error::{LockError, Origin};
pub use parse::{Entry, IndexOptions, RequirementsFile, names, read_text};
pub use write::{LockedPackage, header_target, render};
