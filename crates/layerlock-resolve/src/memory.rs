//! An in-memory package source for tests (the `memory` feature): projects,
//! versions and their dependencies given as a table, no network and no
//! files. Each version has one pure-Python wheel, its hash made from its
//! name and version (64 hex digits, as a sha256 reads).

use std::collections::BTreeMap;
use std::sync::Arc;

use layerlock_dist::{
    CoreMetadata, IndexFile, PackageSource, ProjectAnswer, ProjectFiles, SourceError,
};
use uv_normalize::PackageName;

/// A version of a project: its number and its `Requires-Dist` lines.
type Release = (String, Vec<String>);

/// Projects by name, each with its releases, and the upload times of some
/// `name==version` (the rest have none).
#[derive(Debug, Clone, Default)]
pub struct Memory {
    projects: BTreeMap<String, Vec<Release>>,
    uploaded: BTreeMap<String, jiff::Timestamp>,
    requires_python: BTreeMap<String, uv_pep440::VersionSpecifiers>,
    listings: BTreeMap<String, layerlock_dist::WheelListing>,
    sdist_only: std::collections::BTreeSet<String>,
}

impl Memory {
    /// `(name, version, requires-dist)` rows.
    pub fn new(table: &[(&str, &str, &[&str])]) -> Self {
        let mut projects: BTreeMap<String, Vec<Release>> = BTreeMap::new();
        for (name, version, deps) in table {
            projects.entry((*name).to_string()).or_default().push((
                (*version).to_string(),
                deps.iter().map(|d| (*d).to_string()).collect(),
            ));
        }
        Self {
            projects,
            ..Self::default()
        }
    }

    /// The files of `name==version` were uploaded at `when` (RFC 3339).
    pub fn uploaded(mut self, pin: &str, when: &str) -> Self {
        let when = when.parse().expect("an RFC 3339 upload time");
        self.uploaded.insert(pin.to_string(), when);
        self
    }
}

impl Memory {
    /// The files of `name==version` need a Python in `spec` (`>=3.11`).
    pub fn requires_python(mut self, pin: &str, spec: &str) -> Self {
        let spec = spec.parse().expect("a Requires-Python specifier");
        self.requires_python.insert(pin.to_string(), spec);
        self
    }

    /// The wheel of `name==version` holds `files`: `(path, crc32, size)`.
    pub fn files(mut self, pin: &str, files: &[(&str, u32, u64)]) -> Self {
        let listing = self.listings.entry(pin.to_string()).or_default();
        listing.files = files
            .iter()
            .map(|(path, crc32, size)| layerlock_dist::ListedFile {
                path: (*path).to_string(),
                crc32: *crc32,
                size: *size,
            })
            .collect();
        self
    }

    /// The wheel of `name==version` makes the script `name` running
    /// `target` (`module:function`).
    pub fn script(mut self, pin: &str, name: &str, target: &str) -> Self {
        let listing = self.listings.entry(pin.to_string()).or_default();
        listing.scripts.push((name.to_string(), target.to_string()));
        self
    }

    /// `name==version` comes as an sdist only.
    pub fn sdist_only(mut self, pin: &str) -> Self {
        self.sdist_only.insert(pin.to_string());
        self
    }

    /// Another release: `name==version` with its `Requires-Dist` lines.
    pub fn add(&mut self, name: &str, version: &str, deps: &[&str]) {
        self.projects.entry(name.to_string()).or_default().push((
            version.to_string(),
            deps.iter().map(|d| (*d).to_string()).collect(),
        ));
    }
}

impl PackageSource for Memory {
    fn project(&self, name: &PackageName) -> Result<Arc<ProjectAnswer>, SourceError> {
        let Some(versions) = self.projects.get(name.as_ref()) else {
            return Ok(Arc::new(ProjectAnswer::NotFound {
                asked: vec!["memory".to_string()],
            }));
        };
        let files = versions
            .iter()
            .map(|(v, _)| IndexFile {
                filename: if self.sdist_only.contains(&format!("{name}=={v}")) {
                    format!("{}-{v}.tar.gz", name.as_dist_info_name())
                } else {
                    format!("{}-{v}-py3-none-any.whl", name.as_dist_info_name())
                },
                url: format!("mem://{name}/{v}"),
                sha256: Some(digest(&format!("{name}=={v}"))),
                requires_python: self.requires_python.get(&format!("{name}=={v}")).cloned(),
                yanked: None,
                upload_time: self.uploaded.get(&format!("{name}=={v}")).copied(),
                size: None,
                core_metadata: Some(None),
                listed_by: "memory".to_string(),
            })
            .collect();
        Ok(Arc::new(ProjectAnswer::Found(ProjectFiles::new(
            files,
            None,
            vec!["memory".to_string()],
        ))))
    }

    fn metadata(
        &self,
        name: &PackageName,
        file: &IndexFile,
    ) -> Result<Arc<CoreMetadata>, SourceError> {
        let version = file.url.rsplit('/').next().unwrap_or_default();
        let deps = self
            .projects
            .get(name.as_ref())
            .and_then(|releases| releases.iter().find(|(v, _)| v == version))
            .map(|(_, d)| d.clone())
            .unwrap_or_default();
        let mut text = format!("Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n");
        for dep in deps {
            text.push_str(&format!("Requires-Dist: {dep}\n"));
        }
        let metadata = CoreMetadata::parse(text.as_bytes()).expect("metadata the table wrote");
        Ok(Arc::new(metadata))
    }

    fn wheel_listing(
        &self,
        name: &PackageName,
        file: &IndexFile,
    ) -> Result<Arc<layerlock_dist::WheelListing>, SourceError> {
        let version = file.url.rsplit('/').next().unwrap_or_default();
        match self.listings.get(&format!("{name}=={version}")) {
            Some(listing) => Ok(Arc::new(listing.clone())),
            None => Err(SourceError::Other {
                message: format!("{}: no listing in the table", file.filename),
            }),
        }
    }
}

/// 64 hex digits made from `text`: distinct pins get distinct hashes.
fn digest(text: &str) -> String {
    let mut hex: String = text.bytes().map(|b| format!("{b:02x}")).collect();
    hex.truncate(64);
    format!("{hex:0<64}")
}
