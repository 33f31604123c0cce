//! What the resolver asks for, and the answers it accepts. The resolver never
//! touches the network; an index client (or an in-memory table) implements
//! `PackageSource`.

use std::sync::Arc;

use uv_normalize::PackageName;

use crate::{CoreMetadata, IndexFile, ProjectFiles};

/// A project lookup's answer. Not finding a project is data, not an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProjectAnswer {
    Found(ProjectFiles),
    /// No index asked knows the project; `asked` names them (redacted).
    NotFound {
        asked: Vec<String>,
    },
    /// `--offline` and the cache holds no page for it.
    NotCached {
        asked: Vec<String>,
    },
}

/// A failure to reach or read an index; cheap to clone so that one failed
/// request can be shared by everyone waiting on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    #[error("request to {url} failed after {attempts} attempts: {message}")]
    Network {
        url: String,
        attempts: u32,
        message: String,
    },
    #[error("{url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("{url} could not be read: {message}")]
    Invalid { url: String, message: String },
    #[error("sha256 of {url} is {actual}, but the index says {expected}")]
    HashMismatch {
        url: String,
        expected: String,
        actual: String,
    },
    #[error("{url} is not in the cache and --offline forbids fetching it")]
    Offline { url: String },
    #[error("{message}")]
    Other { message: String },
    /// A source distribution whose dependencies only its build can say:
    /// that version cannot be locked (layerlock never builds), but another
    /// may.
    #[error("{message}")]
    Dynamic { message: String },
}

/// Where the resolver gets project listings and core metadata.
pub trait PackageSource: Send + Sync {
    /// The files of a project across all configured indexes.
    fn project(&self, name: &PackageName) -> Result<Arc<ProjectAnswer>, SourceError>;

    /// The core metadata of one wheel.
    fn metadata(
        &self,
        name: &PackageName,
        file: &IndexFile,
    ) -> Result<Arc<CoreMetadata>, SourceError>;

    /// A hint that `project(name)` will be asked soon.
    fn prefetch_project(&self, _name: &PackageName) {}

    /// A hint that `metadata(name, file)` will be asked soon.
    fn prefetch_metadata(&self, _name: &PackageName, _file: &IndexFile) {}

    /// The files of one version, when the source can tell them without its
    /// whole project page (PyPI's JSON API for one release): `None` when it
    /// cannot, and the caller reads the page.
    fn version_files(
        &self,
        _name: &PackageName,
        _version: &uv_pep440::Version,
    ) -> Option<Result<Vec<IndexFile>, SourceError>> {
        None
    }

    /// What installing the wheel `file` writes (its zip directory and the
    /// scripts of its entry points). A source that cannot tell says so:
    /// a file list is never guessed.
    fn wheel_listing(
        &self,
        _name: &PackageName,
        file: &IndexFile,
    ) -> Result<Arc<crate::WheelListing>, SourceError> {
        Err(SourceError::Other {
            message: format!("{}: this source cannot list a wheel's files", file.filename),
        })
    }
}
