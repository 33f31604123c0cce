//! The files of pinned wheels and what they would write over, in-process:
//! an index of the test's (pages and zip directories) and a site
//! directory written in the test.

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use layerlock_compile::{FilesError, PinFiles, find_overwrites, wheel_files};
use layerlock_dist::{
    CoreMetadata, IndexFile, PackageSource, ProjectAnswer, ProjectFiles, SourceError,
};
use layerlock_env::{HashedPin, Snapshot};
use uv_normalize::PackageName;
use uv_pep440::Version;

/// An index of the test's: files by project, zip members by file name.
#[derive(Default)]
struct Index {
    files: BTreeMap<String, Vec<IndexFile>>,
    members: BTreeMap<String, Vec<String>>,
    /// How many zip directories were read.
    read: AtomicUsize,
}

impl Index {
    /// `filename` on the index, with its sha256 (when given) and, for a
    /// wheel, the names in its zip.
    fn with(mut self, project: &str, filename: &str, sha: Option<&str>, members: &[&str]) -> Self {
        self.files
            .entry(project.to_string())
            .or_default()
            .push(IndexFile {
                filename: filename.to_string(),
                url: format!("https://index.example/files/{filename}"),
                sha256: sha.map(str::to_string),
                requires_python: None,
                yanked: None,
                upload_time: None,
                size: None,
                core_metadata: None,
                listed_by: "https://index.example/simple/".to_string(),
            });
        self.members.insert(
            filename.to_string(),
            members.iter().map(|m| (*m).to_string()).collect(),
        );
        self
    }
}

impl PackageSource for Index {
    fn project(&self, name: &PackageName) -> Result<Arc<ProjectAnswer>, SourceError> {
        let asked = vec!["https://index.example/simple/".to_string()];
        Ok(Arc::new(match self.files.get(name.as_ref()) {
            Some(files) => ProjectAnswer::Found(ProjectFiles::new(files.clone(), None, asked)),
            None => ProjectAnswer::NotFound { asked },
        }))
    }

    fn metadata(
        &self,
        _name: &PackageName,
        _file: &IndexFile,
    ) -> Result<Arc<CoreMetadata>, SourceError> {
        unreachable!("file lists read no metadata")
    }

    fn wheel_listing(
        &self,
        _name: &PackageName,
        file: &IndexFile,
    ) -> Result<Arc<layerlock_dist::WheelListing>, SourceError> {
        self.read.fetch_add(1, Ordering::Relaxed);
        let files = self.members[&file.filename]
            .iter()
            .map(|path| layerlock_dist::ListedFile {
                path: path.clone(),
                crc32: crc32fast::hash(path.as_bytes()),
                size: path.len() as u64,
            })
            .collect();
        Ok(Arc::new(layerlock_dist::WheelListing {
            files,
            scripts: Vec::new(),
        }))
    }
}

/// The names of a listing.
fn names(files: PinFiles) -> Option<Vec<String>> {
    match files {
        PinFiles::Listed { members, .. } => Some(members),
        PinFiles::NoWheel => None,
    }
}

fn hex(byte: &str) -> String {
    byte.repeat(32)
}

/// Check `name==version` against the locked `hashes`.
fn check(
    index: &Index,
    name: &str,
    version: &str,
    hashes: &[String],
) -> Result<PinFiles, FilesError> {
    let version: Version = version.parse().unwrap();
    let pin = HashedPin {
        name,
        version: &version,
        hashes,
        source: None,
    };
    wheel_files(index, &pin, None)
}

fn locked(hex: &str) -> String {
    format!("sha256:{hex}")
}

/// Install `name` 1.0 into `site` with a RECORD that lists `files`.
fn install(site: &Path, name: &str, files: &[&str]) {
    let info = format!("{name}-1.0.dist-info");
    std::fs::create_dir_all(site.join(&info)).unwrap();
    let mut record = String::new();
    for path in files {
        let file = site.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "").unwrap();
        record.push_str(&format!("{path},,\n"));
    }
    record.push_str(&format!("{info}/RECORD,,\n"));
    std::fs::write(
        site.join(&info).join("METADATA"),
        format!("Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"),
    )
    .unwrap();
    std::fs::write(site.join(&info).join("INSTALLER"), "pip\n").unwrap();
    std::fs::write(site.join(&info).join("RECORD"), record).unwrap();
}

#[test]
fn locked_wheels_members_are_listed_sorted_once() {
    let index = Index::default()
        .with(
            "foo",
            "foo-1.0-py3-none-any.whl",
            Some(&hex("aa")),
            &["foo/b.py", "foo/a.py"],
        )
        .with(
            "foo",
            "foo-1.0-cp312-cp312-manylinux_2_28_x86_64.whl",
            Some(&hex("bb")),
            &["foo/a.py", "foo/_speed.so"],
        )
        .with(
            "foo",
            "foo-1.0-cp311-cp311-manylinux_2_28_x86_64.whl",
            Some(&hex("cc")),
            &["foo/other.py"],
        );
    let listed = check(
        &index,
        "foo",
        "1.0",
        &[locked(&hex("aa")), locked(&hex("bb"))],
    )
    .unwrap();
    assert_eq!(
        names(listed).unwrap(),
        ["foo/_speed.so", "foo/a.py", "foo/b.py"]
    );
    // The unlocked wheel is never read.
    assert_eq!(index.read.load(Ordering::Relaxed), 2);
}

#[test]
fn pin_with_only_an_sdist_has_no_wheel_to_list() {
    let index = Index::default().with("foo", "foo-1.0.tar.gz", Some(&hex("aa")), &[]);
    let listed = check(&index, "foo", "1.0", &[locked(&hex("aa"))]).unwrap();
    assert_eq!(listed, PinFiles::NoWheel);
    assert_eq!(index.read.load(Ordering::Relaxed), 0);
}

#[test]
fn file_of_the_pinned_version_without_a_sha256_fails_closed() {
    let index = Index::default()
        .with("foo", "foo-1.0-py3-none-any.whl", Some(&hex("aa")), &[])
        .with("foo", "foo-1.0.tar.gz", None, &[]);
    let err = check(&index, "foo", "1.0", &[locked(&hex("aa"))]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot list the files of foo==1.0: the index lists foo-1.0.tar.gz without a sha256; install checks what a package would write over before it writes anything (pass the index the wheels are on with --index-url or --find-links)"
    );
}

#[test]
fn unhashed_file_of_another_version_does_not_matter() {
    let index = Index::default()
        .with(
            "foo",
            "foo-1.0-py3-none-any.whl",
            Some(&hex("aa")),
            &["foo.py"],
        )
        .with("foo", "foo-0.9.tar.gz", None, &[]);
    let listed = check(&index, "foo", "1.0", &[locked(&hex("aa"))]).unwrap();
    assert_eq!(names(listed).unwrap(), ["foo.py"]);
}

#[test]
fn no_file_with_a_locked_hash_says_the_lock_is_stale() {
    let index = Index::default().with("foo", "foo-1.0-py3-none-any.whl", Some(&hex("aa")), &[]);
    let err = check(&index, "foo", "1.0", &[locked(&hex("dd"))]).unwrap_err();
    assert!(
        err.to_string().contains(
            "no file on the index has a hash the lock gives (the lock is stale, or the index serves other files)"
        ),
        "{err}"
    );
}

#[test]
fn project_no_index_knows_names_the_indexes_asked() {
    let err = check(&Index::default(), "foo", "1.0", &[locked(&hex("aa"))]).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "cannot list the files of foo==1.0: no index knows it (https://index.example/simple/);"
        ),
        "{err}"
    );
}

#[test]
fn nothing_to_install_makes_no_index() {
    let found = find_overwrites(
        &[],
        None,
        &Snapshot::default(),
        &BTreeSet::new(),
        || -> Result<Index, FilesError> { panic!("no index is made for no pins") },
    )
    .unwrap();
    assert_eq!(found, (Vec::new(), Vec::new()));
}

#[test]
fn wheel_writing_over_a_kept_distribution_is_found_unless_spared() {
    let site = tempfile::tempdir().unwrap();
    install(site.path(), "pyjwt", &["jwt/__init__.py", "jwt/api.py"]);
    let before = Snapshot::scan(&[site.path().to_path_buf()]);
    let index = || {
        Ok(Index::default()
            .with(
                "jwt",
                "jwt-1.0-py3-none-any.whl",
                Some(&hex("aa")),
                &["jwt/__init__.py", "jwt-1.0.dist-info/RECORD"],
            )
            .with("six", "six-1.0.tar.gz", Some(&hex("bb")), &[]))
    };
    let version: Version = "1.0".parse().unwrap();
    let jwt_hashes = [locked(&hex("aa"))];
    let six_hashes = [locked(&hex("bb"))];
    let pins = [
        HashedPin {
            name: "jwt",
            version: &version,
            hashes: &jwt_hashes,
            source: None,
        },
        HashedPin {
            name: "six",
            version: &version,
            hashes: &six_hashes,
            source: None,
        },
    ];
    let (found, unlisted) = find_overwrites(&pins, None, &before, &BTreeSet::new(), index).unwrap();
    assert_eq!(unlisted, ["six==1.0"]);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].new, "jwt==1.0");
    assert_eq!(found[0].existing, "pyjwt");
    assert_eq!(found[0].files, 1);
    assert_eq!(found[0].example, "jwt/__init__.py");

    let spared = BTreeSet::from(["pyjwt".to_string()]);
    let (found, _) = find_overwrites(&pins, None, &before, &spared, index).unwrap();
    assert!(found.is_empty());
}

#[test]
fn pin_that_is_no_package_name_is_refused() {
    let err = check(&Index::default(), "not a name!", "1.0", &[]).unwrap_err();
    assert_eq!(err.to_string(), "`not a name!` is not a package name");
}
