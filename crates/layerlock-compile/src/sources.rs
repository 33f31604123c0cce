//! Requirements by URL: a git revision fetched alone, or a project
//! directory read in place, named by their static metadata. Nothing is
//! built: a source whose metadata only its build backend can say is an
//! error that says so.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use layerlock_lock::{DirectRequest, DirectSource, LockError};
use layerlock_resolve::{Direct, Fixed};
use uv_normalize::PackageName;

use crate::CompileError;
use crate::plan::LayerPlan;

/// The largest pyproject.toml read from a source.
const MAX_PROJECT_FILE: usize = 4 << 20;

/// Why one source's metadata cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceProblem {
    /// The URL or path is not a source layerlock reads.
    #[error("{0}")]
    Request(String),
    #[error("cannot fetch it: {0}")]
    Fetch(String),
    /// The commit or folder has no `pyproject.toml`.
    #[error(
        "{place} has no {file}: its metadata is its build backend's to say, and layerlock never runs one"
    )]
    NoProject { place: String, file: String },
    #[error("{0} is not UTF-8")]
    NotUtf8(String),
    /// The project file cannot be read, or says nothing static.
    #[error("{0}")]
    Read(String),
}

/// A requirement by URL that cannot be used, with where it was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FixedSourceError {
    /// `at: name @ given: why`.
    #[error("{at}: {name} @ {given}: {why}")]
    Unreadable {
        at: String,
        name: PackageName,
        given: String,
        why: SourceProblem,
    },
    #[error("{at}: {name} @ {given} holds the project {holds}, not {name}; fix the name")]
    OtherName {
        at: String,
        name: PackageName,
        given: String,
        holds: PackageName,
    },
    #[error("{at}: {name} is asked for from two sources ({first} and {second}); keep one")]
    TwoSources {
        at: String,
        name: PackageName,
        first: String,
        second: String,
    },
    /// `-e ./dir` that cannot be read.
    #[error("{at}: `-e {value}`: {why}")]
    Editable {
        at: String,
        value: String,
        why: SourceProblem,
    },
}

/// The layer's requirements by URL, fetched or read: each one's static
/// metadata and where the lock says it comes from. A git revision is
/// fetched alone; a directory is read in place; nothing is built.
pub(crate) fn fixed_sources(
    direct: &[(Direct, PathBuf)],
    layer: &LayerPlan,
) -> Result<BTreeMap<PackageName, Fixed>, FixedSourceError> {
    let mut out = BTreeMap::new();
    for (d, dir) in direct {
        let Some(uv_pep508::VersionOrUrl::Url(url)) = &d.requirement.version_or_url else {
            continue;
        };
        let name = &d.requirement.name;
        let raw = url.given().map_or_else(|| url.to_string(), str::to_string);
        let given = layerlock_index::redact_text(&raw);
        let at = if d.origin.is_empty() {
            d.via.clone()
        } else {
            d.origin.clone()
        };
        let fixed = fixed_source(&raw, dir, layer).map_err(|why| FixedSourceError::Unreadable {
            at: at.clone(),
            name: name.clone(),
            given: given.clone(),
            why,
        })?;
        if fixed.metadata.name != *name {
            return Err(FixedSourceError::OtherName {
                at,
                name: name.clone(),
                given,
                holds: fixed.metadata.name.clone(),
            });
        }
        if let Some(other) = out.get(name).map(|f: &Fixed| f.source.clone())
            && other != fixed.source
        {
            return Err(FixedSourceError::TwoSources {
                at,
                name: name.clone(),
                first: other.url(),
                second: fixed.source.url(),
            });
        }
        out.insert(name.clone(), fixed);
    }
    Ok(out)
}

/// `-e ./dir` (a project directory by path alone): named by its static
/// metadata, asked for by URL.
pub(crate) fn unnamed_project(
    value: &str,
    dir: &Path,
    at: &str,
    layer: &LayerPlan,
) -> Result<Direct, CompileError> {
    let editable = |why: SourceProblem| FixedSourceError::Editable {
        at: at.to_string(),
        value: value.to_string(),
        why,
    };
    let fixed = fixed_source(value, dir, layer).map_err(editable)?;
    let DirectRequest::Directory(path) = DirectRequest::parse(value, dir)
        .map_err(|why| CompileError::Input(format!("{at}: {why}")))?
    else {
        return Err(CompileError::Input(format!(
            "{at}: `-e {value}`: an editable git URL needs `#egg=NAME`; write `NAME @ {value}` instead"
        )));
    };
    let text = format!("{} @ file://{}", fixed.metadata.name, path.display());
    let requirement = text
        .parse()
        .map_err(|e| CompileError::Input(format!("{at}: `-e {value}`: {e}")))?;
    Ok(Direct {
        requirement,
        via: format!("-e {value}"),
        origin: at.to_string(),
    })
}

/// One source's static metadata: a git revision fetched alone, or a
/// directory read in place.
fn fixed_source(given: &str, dir: &Path, layer: &LayerPlan) -> Result<Fixed, SourceProblem> {
    let (source, text, shown) =
        match DirectRequest::parse(given, dir).map_err(SourceProblem::Request)? {
            DirectRequest::Git {
                url,
                rev,
                subdirectory,
            } => git_project(url, rev, subdirectory)?,
            DirectRequest::Directory(path) => {
                let file = path.join("pyproject.toml");
                let text = layerlock_lock::read_text(&file).map_err(|e| match e {
                    LockError::Missing { .. } => SourceProblem::NoProject {
                        place: path.display().to_string(),
                        file: "pyproject.toml".to_string(),
                    },
                    e => SourceProblem::Read(e.to_string()),
                })?;
                let relative = layerlock_lock::relative_path(&path, &layer.lock_directory());
                let source = DirectSource::Directory {
                    path: relative.to_string_lossy().replace('\\', "/"),
                };
                (source, text, file.display().to_string())
            }
        };
    let written = layerlock_lock::static_metadata(Path::new(&shown), &text)
        .map_err(|e| SourceProblem::Read(e.to_string()))?;
    let metadata = layerlock_dist::CoreMetadata::parse(written.as_bytes())
        .map_err(|e| SourceProblem::Read(format!("{shown}: {e}")))?;
    Ok(Fixed {
        metadata: Arc::new(metadata),
        source,
    })
}

/// A git revision's `pyproject.toml`, fetched alone: its source, its text
/// and how messages name it.
fn git_project(
    url: String,
    rev: Option<String>,
    subdirectory: Option<String>,
) -> Result<(DirectSource, String, String), SourceProblem> {
    let fetched = layerlock_git::Fetched::fetch(&url, rev.as_deref())
        .map_err(|e| SourceProblem::Fetch(e.to_string()))?;
    let file = match &subdirectory {
        Some(sub) => format!("{sub}/pyproject.toml"),
        None => "pyproject.toml".to_string(),
    };
    let bytes = fetched
        .file(&file, MAX_PROJECT_FILE)
        .map_err(|e| SourceProblem::Read(e.to_string()))?
        .ok_or_else(|| SourceProblem::NoProject {
            place: format!("commit {}", fetched.commit),
            file: file.clone(),
        })?;
    let text = String::from_utf8(bytes).map_err(|_| SourceProblem::NotUtf8(file.clone()))?;
    let source = DirectSource::Git {
        url,
        requested: rev,
        commit: fetched.commit.clone(),
        subdirectory,
    };
    Ok((source, text, format!("{file} at {}", fetched.commit)))
}
