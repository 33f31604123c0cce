//! The distribution model shared by the index client and the resolver: the
//! target (Python version + platform), files an index lists, core metadata,
//! and the `PackageSource` trait the resolver asks. No I/O.

mod files;
mod metadata;
mod source;
mod target;

pub use files::{DistKind, IndexFile, ProjectFiles};
pub use metadata::{CoreMetadata, MetadataError};
pub use source::{PackageSource, ProjectAnswer, SourceError};
pub use target::{Target, TargetError};
