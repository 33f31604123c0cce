//! The distribution model shared by the index client and the resolver: the
//! target (Python version + platform), files an index lists, core metadata,
//! and the `PackageSource` trait the resolver asks. No I/O.

mod files;
mod lines;
mod listing;
mod marker;
mod metadata;
mod python;
mod setup_py;
mod source;
mod source_metadata;
mod target;

pub use files::{
    DistKind, IndexFile, LockedFiles, ProjectFiles, VersionFiles, locked_files, sha256_digest,
    version_in_filename,
};
pub use lines::{Body, PageLines, ReadRange, crc_field, get_field, put_field};
pub use listing::{ListedFile, WheelListing, best_wheel, entry_point_scripts};
pub use marker::{
    MAX_MARKER_COMPARISONS, MAX_MARKER_DEPTH, MAX_MARKER_TERMS, MarkerTooHeavy, MarkerWeight,
    WrittenTooHeavy, written_refusal,
};
pub use metadata::{COMPUTED_EXTRA_FIELD, CoreMetadata, MAX_EXTRAS, MetadataError, header_len};
pub use source::{PackageSource, ProjectAnswer, SourceError};
pub use source_metadata::{
    SOURCE_READER_VERSION, SourceFiles, from_pyproject, from_setup_cfg, sdist_metadata,
    sdist_settled,
};
pub use target::{Target, TargetError};
