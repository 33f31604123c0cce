//! What the image already has: pins from base locks (requirements files,
//! `pip freeze` output, `pylock.toml`), `--owned` names and the
//! distributions of a live environment, merged into one set. Two sources
//! that disagree on a version are an error: that is drift to see at
//! compile time, not at image build.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use uv_distribution_filename::{SourceDistExtension, SourceDistFilename, WheelFilename};
use uv_normalize::PackageName;
use uv_pep440::Version;
use uv_pep508::{MarkerEnvironment, Requirement, VerbatimUrl, VersionOrUrl};

use crate::error::LockError;
use crate::model::{LockFormat, exact_version};
use crate::parse::RequirementsFile;

/// Where a base pin comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseSource {
    /// `name==version` in a base lock (or `pip freeze` output).
    Pinned,
    /// `name @ URL` in a base lock: present, at the version its file name
    /// says when it says one.
    Url,
    /// `-e …` in `pip freeze` output: a local project, taken as present.
    Editable,
    /// `--owned NAME[==VERSION]`.
    Owned,
    /// A distribution installed in the environment given by `--base-env`.
    Environment,
}

/// A package the image has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BasePin {
    /// `None`: present at a version nobody wrote down; any requirement on
    /// it is taken as met.
    pub version: Option<Version>,
    /// `base.txt:40`, `--owned`, or `the environment (.venv/bin/python)`.
    pub origin: String,
    pub source: BaseSource,
}

#[derive(Debug, thiserror::Error)]
pub enum BaseError {
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error(
        "{origin}: the base entry `{requirement}` is not pinned with ==; a base lock pins exact versions (for a package the image provides at an unknown version, pass --owned {name})"
    )]
    NotPinned {
        origin: String,
        requirement: String,
        name: PackageName,
    },
    #[error(
        "{origin}: `-e {value}` names no package; keep the `# Editable install … (NAME==VERSION)` comment `pip freeze` writes above it, or pass --owned NAME"
    )]
    UnnamedEditable { origin: String, value: String },
    #[error(
        "{count} base entries are not pinned with ==; a base lock pins exact versions:\n{list}\n(for packages the image provides at versions nobody wrote down, pass {owned})"
    )]
    NotPinnedMany {
        count: usize,
        /// One `  origin: requirement` line for each.
        list: String,
        /// `--owned a --owned b`.
        owned: String,
    },
    #[error(
        "the bases disagree on {name}: {first} pins {first_version}, {second} pins {second_version}"
    )]
    Disagree {
        name: PackageName,
        first: String,
        first_version: String,
        second: String,
        second_version: String,
    },
    #[error("the environment has {name} {installed}; {origin} pins {pinned}")]
    Drift {
        name: PackageName,
        installed: String,
        origin: String,
        pinned: String,
    },
    #[error("--owned `{0}`: give a name, or a name with ==VERSION (no extras, no markers)")]
    Owned(String),
}

/// Every package the image has, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bases {
    pub pins: BTreeMap<PackageName, BasePin>,
}

/// pip freeze's names of unnamed editables, by line.
type EditableNames = BTreeMap<usize, (PackageName, Option<Version>)>;

/// A base file read and parsed once, to add for each target of a layer
/// (and to say which targets its header names).
#[derive(Debug)]
pub struct BaseFile {
    path: PathBuf,
    shown: String,
    text: String,
    /// A requirements file's entries and the names of its unnamed
    /// editables (pip freeze's comments); `None` for a `pylock.toml`,
    /// whose entries depend on the target's environment.
    parsed: Option<(RequirementsFile, EditableNames)>,
    /// The targets its header names (layerlock's locks say them).
    pub targets: Vec<crate::LockTarget>,
}

impl BaseFile {
    pub fn read(path: &Path, shown: &str) -> Result<Self, BaseError> {
        let text = crate::parse::read_text(path)?;
        let (parsed, targets) = if LockFormat::from_path(path) == LockFormat::Pylock {
            let targets = crate::Lock::parse(path, &text)
                .map(|l| l.header.targets)
                .unwrap_or_default();
            (None, targets)
        } else {
            let parsed = RequirementsFile::parse(path, &text)?;
            let named = freeze_editable_names(&text);
            (
                Some((parsed, named)),
                crate::requirements::header_targets(&text),
            )
        };
        Ok(Self {
            path: path.to_path_buf(),
            shown: shown.to_string(),
            text,
            parsed,
            targets,
        })
    }
}

impl Bases {
    /// Add a base file, in the format its name says. `shown` is how
    /// messages name it; entries whose markers are false for `markers`
    /// do not apply.
    pub fn add_file(
        &mut self,
        path: &Path,
        shown: &str,
        markers: &MarkerEnvironment,
    ) -> Result<(), BaseError> {
        self.add_base(&BaseFile::read(path, shown)?, markers)
    }

    /// [`Bases::add_file`] of a file read once ([`BaseFile::read`]), for
    /// one target of several.
    pub fn add_base(
        &mut self,
        file: &BaseFile,
        markers: &MarkerEnvironment,
    ) -> Result<(), BaseError> {
        let (path, shown) = (file.path.as_path(), file.shown.as_str());
        let Some((parsed, named)) = &file.parsed else {
            for entry in crate::pylock::base_entries(path, &file.text, Some(markers))? {
                if !entry.marker.evaluate(markers, &[]) {
                    continue;
                }
                self.add(
                    entry.name,
                    BasePin {
                        version: entry.version,
                        origin: format!("{shown}:{}", entry.line),
                        source: BaseSource::Pinned,
                    },
                )?;
            }
            return Ok(());
        };
        let origin_of = |file: &Path, line: usize| {
            let file = if file == path {
                shown.to_string()
            } else {
                file.display().to_string()
            };
            format!("{file}:{line}")
        };
        for (origin, value) in &parsed.unnamed_editables {
            let at = origin_of(&origin.path, origin.line);
            let Some((name, version)) = (origin.path == path)
                .then(|| named.get(&origin.line))
                .flatten()
            else {
                return Err(BaseError::UnnamedEditable {
                    origin: at,
                    value: value.clone(),
                });
            };
            self.add(
                name.clone(),
                BasePin {
                    version: version.clone(),
                    origin: at,
                    source: BaseSource::Editable,
                },
            )?;
        }
        // Every unpinned entry is reported at once, not only the first.
        let mut unpinned: Vec<(String, String, PackageName)> = Vec::new();
        for entry in &parsed.entries {
            if !entry.requirement.marker.evaluate(markers, &[]) {
                continue;
            }
            let origin = origin_of(&entry.origin.path, entry.origin.line);
            let (version, source) = match &entry.requirement.version_or_url {
                Some(VersionOrUrl::Url(url)) => {
                    let version = version_from_url(url, &entry.requirement.name);
                    let source = if entry.editable {
                        BaseSource::Editable
                    } else {
                        BaseSource::Url
                    };
                    (version, source)
                }
                _ => match exact_version(&entry.requirement) {
                    Some(v) => (
                        Some(v),
                        if entry.editable {
                            BaseSource::Editable
                        } else {
                            BaseSource::Pinned
                        },
                    ),
                    None => {
                        unpinned.push((
                            origin,
                            entry.requirement.to_string(),
                            entry.requirement.name.clone(),
                        ));
                        continue;
                    }
                },
            };
            self.add(
                entry.requirement.name.clone(),
                BasePin {
                    version,
                    origin,
                    source,
                },
            )?;
        }
        match unpinned.len() {
            0 => Ok(()),
            1 => {
                let (origin, requirement, name) = unpinned.remove(0);
                Err(BaseError::NotPinned {
                    origin,
                    requirement,
                    name,
                })
            }
            count => Err(BaseError::NotPinnedMany {
                count,
                list: unpinned
                    .iter()
                    .map(|(origin, requirement, _)| format!("  {origin}: {requirement}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
                owned: unpinned
                    .iter()
                    .map(|(_, _, name)| format!("--owned {name}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            }),
        }
    }

    /// `--owned NAME` or `--owned NAME==VERSION`: a package the image has
    /// outside its locks. It never overrides what a base lock or the
    /// environment knows: a version that disagrees is an error, and a bare
    /// name leaves a known version in place.
    /// `--owned-over NAME==VERSION`: the image installs this version over
    /// the one its own lock pins (vLLM's image puts a newer NCCL over its
    /// lock's). Said on purpose, it replaces the base pin, and the origin
    /// names both.
    pub fn add_owned_over(&mut self, spec: &str) -> Result<(), BaseError> {
        let requirement = Requirement::<VerbatimUrl>::from_str(spec)
            .map_err(|_| BaseError::Owned(spec.chars().take(80).collect()))?;
        let Some(version) = exact_version(&requirement) else {
            return Err(BaseError::Owned(spec.to_string()));
        };
        if !requirement.extras.is_empty() || !requirement.marker.is_true() {
            return Err(BaseError::Owned(spec.to_string()));
        }
        let origin = match self.pins.get(&requirement.name) {
            Some(BasePin {
                version: Some(was),
                origin,
                ..
            }) => format!("--owned-over, over {was} ({origin})"),
            _ => "--owned-over".to_string(),
        };
        self.pins.insert(
            requirement.name,
            BasePin {
                version: Some(version),
                origin,
                source: BaseSource::Owned,
            },
        );
        Ok(())
    }

    pub fn add_owned(&mut self, spec: &str) -> Result<(), BaseError> {
        // `NAME` or `NAME==VERSION` has no marker; a heavy one is refused
        // before the marker parser sees it.
        if layerlock_dist::MarkerWeight::of_requirement(spec)
            .refusal()
            .is_some()
        {
            return Err(BaseError::Owned(spec.chars().take(80).collect()));
        }
        let requirement = Requirement::<VerbatimUrl>::from_str(spec)
            .map_err(|_| BaseError::Owned(spec.to_string()))?;
        let version = exact_version(&requirement);
        if (requirement.version_or_url.is_some() && version.is_none())
            || !requirement.extras.is_empty()
            || !requirement.marker.is_true()
        {
            return Err(BaseError::Owned(spec.to_string()));
        }
        let pin = BasePin {
            version,
            origin: "--owned".to_string(),
            source: BaseSource::Owned,
        };
        match self.pins.get(&requirement.name) {
            Some(known) if known.version.is_some() => self.add(requirement.name, pin),
            _ => {
                self.pins.insert(requirement.name, pin);
                Ok(())
            }
        }
    }

    /// A distribution installed in the base environment.
    pub fn add_installed(
        &mut self,
        name: PackageName,
        version: Version,
        origin: &str,
    ) -> Result<(), BaseError> {
        self.add(
            name,
            BasePin {
                version: Some(version),
                origin: origin.to_string(),
                source: BaseSource::Environment,
            },
        )
    }

    /// Add one pin; the same package twice must agree on its version.
    fn add(&mut self, name: PackageName, pin: BasePin) -> Result<(), BaseError> {
        let Some(previous) = self.pins.get(&name) else {
            self.pins.insert(name, pin);
            return Ok(());
        };
        if previous.source == BaseSource::Owned && previous.version.is_none() {
            return Ok(());
        }
        // A version nobody wrote down agrees with any; the known one wins.
        match (&previous.version, &pin.version) {
            (_, None) => return Ok(()),
            (None, Some(_)) => {
                self.pins.insert(name, pin);
                return Ok(());
            }
            (Some(a), Some(b)) if a == b => return Ok(()),
            _ => {}
        }
        let shown = |p: &BasePin| {
            p.version
                .as_ref()
                .map_or("it".to_string(), ToString::to_string)
        };
        let (env, other) = match (previous.source, pin.source) {
            (BaseSource::Environment, _) => (Some(previous), &pin),
            (_, BaseSource::Environment) => (Some(&pin), previous),
            _ => (None, &pin),
        };
        Err(match env {
            Some(env) => BaseError::Drift {
                name,
                installed: shown(env),
                origin: other.origin.clone(),
                pinned: shown(other),
            },
            None => BaseError::Disagree {
                first: previous.origin.clone(),
                first_version: shown(previous),
                second: pin.origin.clone(),
                second_version: shown(&pin),
                name,
            },
        })
    }
}

/// `pip freeze` writes a local editable install as a comment naming it,
/// then `-e PATH`:
///
/// ```text
/// # Editable install with no version control (demo==0.1)
/// -e /src/demo
/// ```
///
/// Map the `-e` line's number to the name and version in that comment.
fn freeze_editable_names(text: &str) -> EditableNames {
    let mut out = BTreeMap::new();
    let mut pending = None;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(comment) = line.strip_prefix('#') {
            pending = comment
                .trim()
                .starts_with("Editable")
                .then(|| {
                    let inside = comment.rsplit_once('(')?.1.strip_suffix(')')?;
                    let (name, version) = inside.split_once("==")?;
                    Some((
                        PackageName::from_str(name.trim()).ok()?,
                        Version::from_str(version.trim()).ok(),
                    ))
                })
                .flatten();
            continue;
        }
        if line.starts_with("-e") || line.starts_with("--editable") {
            if let Some(named) = pending.take() {
                out.insert(i + 1, named);
            }
        } else if !line.is_empty() {
            pending = None;
        }
    }
    out
}

/// The version in a wheel or sdist file name at the end of a URL
/// (`name @ file:///wheels/demo-1.2-py3-none-any.whl`).
fn version_from_url(url: &VerbatimUrl, name: &PackageName) -> Option<Version> {
    let file = url.path().rsplit('/').next()?;
    if file.ends_with(".whl") {
        return WheelFilename::from_str(file).ok().map(|w| w.version);
    }
    let ext = SourceDistExtension::from_path(file).ok()?;
    SourceDistFilename::parse(file, ext, name)
        .ok()
        .map(|s| s.version)
}

#[cfg(test)]
mod tests {
    use super::*;
    use layerlock_dist::Target;

    fn bases(files: &[(&str, &str)]) -> Result<Bases, BaseError> {
        let dir = tempfile::tempdir().unwrap();
        let target = Target::new("3.12", "x86_64-manylinux_2_28").unwrap();
        let mut bases = Bases::default();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            bases.add_file(&path, name, target.markers())?;
        }
        Ok(bases)
    }

    fn version(bases: &Bases, name: &str) -> Option<String> {
        bases.pins[&PackageName::from_str(name).unwrap()]
            .version
            .as_ref()
            .map(ToString::to_string)
    }

    #[test]
    fn reads_pip_freeze_output() {
        let freeze = "\
demo-pinned==1.0
local-wheel @ file:///wheels/local_wheel-2.3-py3-none-any.whl
vcs-thing @ git+https://example.com/vcs-thing@abc123
# Editable install with no version control (editable-demo==0.1)
-e /src/editable-demo
-e git+https://example.com/egg-demo@abc#egg=egg-demo
";
        let b = bases(&[("freeze.txt", freeze)]).unwrap();
        assert_eq!(version(&b, "demo-pinned").as_deref(), Some("1.0"));
        assert_eq!(version(&b, "local-wheel").as_deref(), Some("2.3"));
        assert_eq!(version(&b, "vcs-thing"), None);
        assert_eq!(version(&b, "editable-demo").as_deref(), Some("0.1"));
        assert_eq!(version(&b, "egg-demo"), None);
        let pin = &b.pins[&PackageName::from_str("editable-demo").unwrap()];
        assert_eq!(pin.origin, "freeze.txt:5");
        assert_eq!(pin.source, BaseSource::Editable);
    }

    #[test]
    fn an_unnamed_editable_says_what_to_do() {
        let err = bases(&[("freeze.txt", "-e /src/mystery\n")]).unwrap_err();
        assert!(err.to_string().starts_with("freeze.txt:1:"), "{err}");
        assert!(err.to_string().contains("--owned"), "{err}");
    }

    #[test]
    fn a_range_in_a_base_is_refused() {
        let err = bases(&[("base.txt", "foo>=2\n")]).unwrap_err();
        assert!(err.to_string().contains("not pinned with =="), "{err}");
    }

    #[test]
    fn disagreement_and_drift_are_errors() {
        let err = bases(&[("a.txt", "nvtx==0.2.13\n"), ("b.txt", "nvtx==0.2.14\n")]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the bases disagree on nvtx: a.txt:1 pins 0.2.13, b.txt:1 pins 0.2.14"
        );
        let mut b = bases(&[("base.txt", "x==1\nnvtx==0.2.13\n")]).unwrap();
        let err = b
            .add_installed(
                PackageName::from_str("nvtx").unwrap(),
                Version::from_str("0.2.14").unwrap(),
                "the environment",
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the environment has nvtx 0.2.14; base.txt:2 pins 0.2.13"
        );
    }

    #[test]
    fn owned_never_overrides_a_known_version() {
        let mut b = bases(&[("base.txt", "beta==1.0.0\n")]).unwrap();
        b.add_owned("beta").unwrap();
        assert_eq!(version(&b, "beta").as_deref(), Some("1.0.0"));
        b.add_owned("beta==1.0.0").unwrap();
        let err = b.add_owned("beta==1.1.0").unwrap_err();
        assert!(err.to_string().contains("disagree on beta"), "{err}");
        b.add_owned("gamma==2").unwrap();
        assert_eq!(version(&b, "gamma").as_deref(), Some("2"));
    }

    #[test]
    fn a_pylock_base_counts_like_a_requirements_base() {
        let pylock = "lock-version = \"1.0\"\n\n[[packages]]\nname = \"torch\"\nversion = \"2.9.0\"\nwheels = [{ url = \"https://x/torch-2.9.0-py3-none-any.whl\", hashes = { sha256 = \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\" } }]\n\n[[packages]]\nname = \"pywin\"\nversion = \"1\"\nmarker = \"sys_platform == 'win32'\"\nwheels = [{ url = \"https://x/pywin-1-py3-none-any.whl\", hashes = { sha256 = \"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\" } }]\n";
        let b = bases(&[("pylock.base.toml", pylock)]).unwrap();
        assert_eq!(version(&b, "torch").as_deref(), Some("2.9.0"));
        assert!(
            !b.pins
                .contains_key(&PackageName::from_str("pywin").unwrap())
        );
        assert_eq!(
            b.pins[&PackageName::from_str("torch").unwrap()].origin,
            "pylock.base.toml:3"
        );
    }

    #[test]
    fn a_version_the_image_installs_over_its_lock_is_said_on_purpose() {
        let mut bases = bases(&[("cuda.txt", "nvidia-nccl-cu13==2.28.9\n")]).unwrap();
        assert!(bases.clone().add_owned("nvidia-nccl-cu13==2.30.7").is_err());
        bases.add_owned_over("nvidia-nccl-cu13==2.30.7").unwrap();
        let pin = &bases.pins[&PackageName::from_str("nvidia-nccl-cu13").unwrap()];
        assert_eq!(pin.version.as_ref().unwrap().to_string(), "2.30.7");
        assert_eq!(pin.origin, "--owned-over, over 2.28.9 (cuda.txt:1)");
        assert!(bases.add_owned_over("nvidia-nccl-cu13").is_err());
    }
}
