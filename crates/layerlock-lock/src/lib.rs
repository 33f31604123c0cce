//! The lock model and its formats: reading pip requirements files (inputs,
//! base locks, `pip freeze` output, layer locks) and PEP 751 `pylock.toml`,
//! writing hash-pinned layer locks in either, and merging what the image
//! already has into one set of base pins. No network.

mod bases;
mod changes;
mod error;
mod model;
mod parse;
mod pylock;
mod pyproject;
mod requirements;
mod targets;
mod write;

pub use bases::{BaseError, BaseFile, BasePin, BaseSource, Bases};
pub use changes::{Change, ChangeKind, Changes, ImageFiles, changes, uploaded};
pub use error::{LockError, Origin};
pub use model::{
    BaseUse, DirectRequest, DirectSource, Header, Lock, LockFormat, LockTarget, LockedFile,
    LockedPackage, comparable, describe_targets, exact_version, normalize, relative_path,
    split_revision,
};
pub use parse::{Entry, IndexOptions, MAX_FILE_BYTES, RequirementsFile, names, read_text};
pub use pylock::toml_string;
pub use pyproject::{ProjectParts, is_pyproject, parse_project, read_project, static_metadata};
pub use targets::{MergeError, check_distinct, describe_matrix, marker_for, merge_targets};
pub use write::{WriteError, write_atomic};
