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
                filename: format!("{}-{v}-py3-none-any.whl", name.as_dist_info_name()),
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
}

/// 64 hex digits made from `text`: distinct pins get distinct hashes.
fn digest(text: &str) -> String {
    let mut hex: String = text.bytes().map(|b| format!("{b:02x}")).collect();
    hex.truncate(64);
    format!("{hex:0<64}")
}
