//! The lock model every command reads and writes: what a layer pins, with
//! its hashes and, when known, the files behind them. Formats (a pip
//! requirements file, PEP 751 `pylock.toml`) are readers and writers of it.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use uv_normalize::PackageName;
use uv_pep440::{Operator, Version};
use uv_pep508::{MarkerEnvironment, MarkerTree, Requirement, VerbatimUrl, VersionOrUrl};

use crate::error::LockError;

/// How a lock is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockFormat {
    /// A pip requirements file (`name==version --hash=…`).
    Requirements,
    /// PEP 751 `pylock.toml`.
    Pylock,
}

impl LockFormat {
    /// PEP 751 names lock files `pylock.toml` or `pylock.NAME.toml`; every
    /// other name is a requirements file.
    pub fn from_path(path: &Path) -> Self {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let pylock = name == "pylock.toml"
            || name
                .strip_prefix("pylock.")
                .and_then(|rest| rest.strip_suffix(".toml"))
                .is_some_and(|middle| !middle.is_empty() && !middle.contains('.'));
        if pylock {
            Self::Pylock
        } else {
            Self::Requirements
        }
    }
}

/// The target a layer was compiled for, as its header names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockTarget {
    /// `3.12`.
    pub python: String,
    /// `x86_64-manylinux_2_28`.
    pub platform: String,
}

impl LockTarget {
    /// "Python 3.12 on x86_64-manylinux_2_28".
    pub fn describe(&self) -> String {
        format!("Python {} on {}", self.python, self.platform)
    }
}

/// Several targets as a message lists them: "Python 3.12 on x86_64-…
/// and Python 3.12 on aarch64-…".
pub fn describe_targets(targets: &[LockTarget]) -> String {
    let shown: Vec<String> = targets.iter().map(LockTarget::describe).collect();
    match shown.as_slice() {
        [] => "no target".to_string(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// What a lock says about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Header {
    /// The targets it was compiled for: one, or each of a layer that
    /// serves several images (its packages then carry markers).
    pub targets: Vec<LockTarget>,
    /// The base locks it was layered on, as written.
    pub bases: Vec<String>,
    /// Packages the image provides at versions no lock names (`--owned`).
    pub owned: Vec<String>,
    /// The image's distributions this layer replaces on purpose
    /// (`name==version`): `install` removes them first, and its drift
    /// guard accepts exactly that change.
    pub replaces: Vec<String>,
    /// What the file check could not see into (`name==version (why)`):
    /// base pins with no wheel on the indexes asked, entries from sdists,
    /// git or directories.
    pub unchecked: Vec<String>,
    /// Packages taken older than newer releases whose dependencies only
    /// a build could say, allowed on purpose (`--allow-walk-back`):
    /// `name==old (why)`, so a reader of the lock sees the fall-back.
    pub walked_back: Vec<String>,
    /// The command that regenerates it.
    pub command: Option<String>,
    /// "Python 3.12 on x86_64-manylinux_2_28", for the first comment line.
    pub description: Option<String>,
    /// PEP 751 `environments`: where the lock may be installed (empty: not
    /// said).
    pub environments: Vec<MarkerTree>,
    /// PEP 751 `requires-python`, as read (a written lock derives it from
    /// the target).
    pub requires_python: Option<String>,
}

/// One file of a locked package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockedFile {
    pub name: String,
    /// Where it is downloaded from (no credentials).
    pub url: Option<String>,
    /// A local file, relative to the lock's directory (PEP 751 `path`):
    /// a find-links wheel, so the lock names no machine's absolute path.
    pub path: Option<String>,
    pub size: Option<u64>,
    pub upload_time: Option<Timestamp>,
    /// Lower-case hex.
    pub sha256: Option<String>,
}

impl LockedFile {
    pub fn is_wheel(&self) -> bool {
        self.name.ends_with(".whl")
    }
}

/// One package of a lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockedPackage {
    pub name: PackageName,
    pub version: Version,
    /// When the package applies; true for every package layerlock writes.
    pub marker: MarkerTree,
    /// `sha256:HEX` values, sorted.
    pub hashes: Vec<String>,
    /// The files behind the hashes, when the format records them.
    pub files: Vec<LockedFile>,
    /// What pulled the package in: package names or `-r FILE`.
    pub via: Vec<String>,
    /// `lock.txt:12`, for messages.
    pub origin: String,
    /// Where it comes from when not from an index (`None`: the files and
    /// hashes above).
    pub direct: Option<DirectSource>,
}

/// A package locked from its source rather than an index: a git commit or
/// a local project directory. Its metadata was read statically; the
/// installer builds it at install time.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum DirectSource {
    /// A repository at one commit (the lock pins the commit, whatever
    /// branch or tag was asked for).
    Git {
        /// The repository URL, without `git+` and without a revision.
        url: String,
        /// The revision asked for, when one was (a branch, tag or commit).
        requested: Option<String>,
        /// The full commit id it was at.
        commit: String,
        /// The project's folder inside the repository.
        subdirectory: Option<String>,
    },
    /// A project directory, as written (its content is whatever the
    /// checkout holds when it is installed: nothing pins it).
    Directory { path: String },
}

impl DirectSource {
    /// The PEP 508 URL a requirements file gives for it.
    pub fn url(&self) -> String {
        match self {
            Self::Git {
                url,
                commit,
                subdirectory,
                ..
            } => match subdirectory {
                Some(sub) => format!("git+{url}@{commit}#subdirectory={sub}"),
                None => format!("git+{url}@{commit}"),
            },
            Self::Directory { path } if path.starts_with('/') => {
                format!("file://{}", escape_path(path))
            }
            Self::Directory { path } if path.starts_with('.') => {
                format!("file:{}", escape_path(path))
            }
            Self::Directory { path } => format!("file:./{}", escape_path(path)),
        }
    }

    /// Read back a URL [`DirectSource::url`] wrote: `git+URL@COMMIT` with a
    /// full commit id, or a `file:` directory.
    pub fn from_url(text: &str) -> Option<Self> {
        if let Some(rest) = text.strip_prefix("git+") {
            let (rest, subdirectory) = match rest.split_once('#') {
                Some((rest, fragment)) => (
                    rest,
                    fragment
                        .split('&')
                        .find_map(|kv| kv.strip_prefix("subdirectory="))
                        .map(str::to_string),
                ),
                None => (rest, None),
            };
            let (url, commit) = split_revision(rest);
            let commit = commit?;
            if commit.len() != 40 || !commit.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            return Some(Self::Git {
                url: url.to_string(),
                requested: None,
                commit: commit.to_ascii_lowercase(),
                subdirectory,
            });
        }
        let path = match text.strip_prefix("file://") {
            Some(absolute) => absolute,
            None => text.strip_prefix("file:")?,
        };
        let path = unescape_path(path.strip_prefix("./").unwrap_or(path))?;
        if path.chars().any(char::is_control) {
            return None;
        }
        Some(Self::Directory { path })
    }
}

/// What a requirement asks for by URL, before it is fetched or read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirectRequest {
    /// `git+URL[@REV][#subdirectory=DIR]`.
    Git {
        url: String,
        rev: Option<String>,
        subdirectory: Option<String>,
    },
    /// A project directory (`file:` URL or path), absolute.
    Directory(PathBuf),
}

impl DirectRequest {
    /// Classify a requirement's URL as written (`given`), relative paths
    /// taken from `dir`. Archives, other version control systems and
    /// remote files are refused with what to do instead.
    pub fn parse(given: &str, dir: &Path) -> Result<Self, String> {
        if let Some(rest) = given.strip_prefix("git+") {
            let (rest, fragment) = match rest.split_once('#') {
                Some((rest, fragment)) => (rest, Some(fragment)),
                None => (rest, None),
            };
            let mut subdirectory = None;
            for kv in fragment.into_iter().flat_map(|f| f.split('&')) {
                match kv.split_once('=') {
                    Some(("subdirectory", sub)) => {
                        let clean = !sub.is_empty()
                            && !sub.starts_with('/')
                            && sub.split('/').all(|part| part != "..");
                        if !clean {
                            return Err(format!(
                                "`#subdirectory={sub}` must name a folder inside the repository"
                            ));
                        }
                        subdirectory = Some(sub.trim_end_matches('/').to_string());
                    }
                    Some(("egg", _)) => {}
                    _ => {
                        return Err(format!(
                            "`#{kv}` is not a fragment layerlock reads (only subdirectory=)"
                        ));
                    }
                }
            }
            let (url, rev) = split_revision(rest);
            if url.starts_with('-') || rev.is_some_and(|r| r.is_empty() || r.starts_with('-')) {
                return Err("the URL or revision starts with `-`".to_string());
            }
            if let Some(why) = unsafe_source_text(rest) {
                return Err(why);
            }
            // A password or token written into the URL would be written
            // into the lock with it.
            if url.split_once("://").is_some_and(|(_, after)| {
                after.split('/').next().is_some_and(|host| {
                    host.contains('@')
                        && host
                            .split('@')
                            .next()
                            .is_some_and(|user| user.contains(':') || !["git"].contains(&user))
                })
            }) {
                return Err("the URL carries credentials, which the lock would keep; let git find them (a credential helper, ~/.netrc or an ssh key) and write the URL without them".to_string());
            }
            return Ok(Self::Git {
                url: url.to_string(),
                rev: rev.map(str::to_string),
                subdirectory,
            });
        }
        let path = if let Some(rest) = given.strip_prefix("file://") {
            PathBuf::from(rest.strip_prefix("localhost").unwrap_or(rest))
        } else if let Some(rest) = given.strip_prefix("file:") {
            PathBuf::from(rest)
        } else if !given.contains("://") {
            PathBuf::from(given)
        } else {
            return Err(format!(
                "`{given}` is neither a git URL nor a local project directory; layerlock locks those, and released versions from an index (an archive URL: put the file in a --find-links folder and ask for its version)"
            ));
        };
        let path = normalize(&dir.join(path));
        let lower = path.to_string_lossy().to_lowercase();
        if [".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2"]
            .iter()
            .any(|ext| lower.ends_with(ext))
        {
            return Err(format!(
                "{} is an archive; put it in a --find-links folder and ask for its version, so the lock pins it by hash",
                path.display()
            ));
        }
        Ok(Self::Directory(path))
    }
}

/// A path as a `file:` URL writes it: bytes other than letters, digits and
/// `-._~/` percent-encoded (a space is `%20`).
fn escape_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// [`escape_path`] undone; `None` for a broken escape or bytes that are
/// not UTF-8.
fn unescape_path(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Why a source's URL or path cannot be written into a lock or handed to
/// an installer: white space or control characters would end its line
/// and start another.
pub fn unsafe_source_text(text: &str) -> Option<String> {
    text.chars()
        .any(|c| c.is_whitespace() || c.is_control())
        .then(|| "it holds white space or a control character".to_string())
}

/// `URL@REV` split at the revision's `@`: the last `@` after the host, so
/// `ssh://git@host/repo@v1` keeps its user.
pub fn split_revision(url: &str) -> (&str, Option<&str>) {
    let path_start = match url.find("://") {
        Some(at) => url[at + 3..].find('/').map_or(url.len(), |p| at + 3 + p),
        None => 0,
    };
    match url[path_start..].rfind('@') {
        Some(at) => {
            let at = path_start + at;
            (&url[..at], Some(&url[at + 1..]))
        }
        None => (url, None),
    }
}

impl LockedPackage {
    /// The sha256 digests the lock allows, lower-case hex.
    pub fn sha256s(&self) -> impl Iterator<Item = String> + '_ {
        self.hashes
            .iter()
            .filter_map(|h| h.strip_prefix("sha256:"))
            .map(str::to_ascii_lowercase)
    }
}

/// A base package the layer leaned on (written as a comment, not installed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseUse {
    pub name: PackageName,
    pub version: Option<Version>,
    /// Where the base pins it.
    pub origin: String,
    /// Who needed it.
    pub via: Vec<String>,
}

/// A lock: header, packages sorted by name, and the base packages it uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lock {
    pub path: PathBuf,
    pub format: LockFormat,
    pub header: Header,
    pub packages: Vec<LockedPackage>,
    pub base_used: Vec<BaseUse>,
}

impl Lock {
    /// Read a lock in the format its name says.
    pub fn read(path: &Path) -> Result<Self, LockError> {
        let text = crate::parse::read_text(path)?;
        Self::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Self, LockError> {
        match LockFormat::from_path(path) {
            LockFormat::Requirements => crate::requirements::read(path, text),
            LockFormat::Pylock => crate::pylock::read(path, text),
        }
    }

    /// The exact pins of a lock or of any requirements file: what a file
    /// says is there. Ranges and URLs pin nothing and are skipped (`foo>=2`
    /// says what is allowed, not which version is installed).
    pub fn parse_pins(path: &Path, text: &str) -> Result<Self, LockError> {
        if let Ok(lock) = Self::parse(path, text) {
            return Ok(lock);
        }
        if LockFormat::from_path(path) == LockFormat::Pylock {
            // A pylock.toml of an environment (a project from a directory,
            // a VCS package): its versioned packages, without hashes.
            let packages = crate::pylock::base_entries(path, text, None)?
                .into_iter()
                .filter_map(|e| {
                    Some(LockedPackage {
                        version: e.version?,
                        name: e.name,
                        marker: e.marker,
                        hashes: Vec::new(),
                        files: Vec::new(),
                        via: Vec::new(),
                        origin: format!("{}:{}", path.display(), e.line),
                        direct: None,
                    })
                })
                .collect();
            return Ok(Self {
                path: path.to_path_buf(),
                format: LockFormat::Pylock,
                header: Header::default(),
                packages,
                base_used: Vec::new(),
            });
        }
        let parsed = crate::parse::RequirementsFile::parse(path, text)?;
        let packages = parsed
            .entries
            .iter()
            .filter_map(|e| {
                Some(LockedPackage {
                    name: e.requirement.name.clone(),
                    version: exact_version(&e.requirement)?,
                    marker: e.requirement.marker,
                    hashes: Vec::new(),
                    files: Vec::new(),
                    via: Vec::new(),
                    origin: format!("{}:{}", e.origin.path.display(), e.origin.line),
                    direct: None,
                })
            })
            .collect();
        Ok(Self {
            path: path.to_path_buf(),
            format: LockFormat::Requirements,
            header: Header::default(),
            packages,
            base_used: Vec::new(),
        })
    }

    /// Render in `format`; the same lock gives the same bytes.
    pub fn render(&self, format: LockFormat, output: &str) -> String {
        match format {
            LockFormat::Requirements => crate::requirements::render(self, output),
            LockFormat::Pylock => crate::pylock::render(self, output),
        }
    }

    /// The packages that apply in `markers` (all of them when a package
    /// carries no marker).
    pub fn applicable<'a>(
        &'a self,
        markers: Option<&'a MarkerEnvironment>,
    ) -> impl Iterator<Item = &'a LockedPackage> + 'a {
        self.packages.iter().filter(move |p| match markers {
            Some(env) => p.marker.evaluate(env, &[]),
            None => true,
        })
    }
}

/// A lock's text as `compile --check` compares it: what it holds and the
/// settings it records, not how its header words them. In the leading
/// comment block only the `# layerlock-…:` records count (a sentence, the
/// regenerate command or the install hint reworded never makes a lock
/// stale; comments install nothing); in `pylock.toml`, `command = …`
/// inside `[tool.layerlock]` is skipped. Every line after the leading
/// comments is compared, wherever it is.
pub fn comparable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut header = true;
    let mut table = "";
    for line in text.lines() {
        header &= line.starts_with('#');
        if header && !line.starts_with("# layerlock-") {
            continue;
        }
        if line.starts_with('[') {
            table = line.trim();
        }
        if table == "[tool.layerlock]" && line.starts_with("command = ") {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `text` on one line: control characters (a newline in a file name or a
/// custom command) are written as escapes, so a value can never start a
/// line of its own in a lock.
pub(crate) fn one_line(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `a/./b/../c` as `a/c`, without touching the disk (a lock's paths are
/// names, and may not exist yet). `..` above the start of a relative path
/// is kept, above `/` dropped; nothing left is `.`.
pub fn normalize(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component<'_>> = Vec::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(component),
            },
            other => out.push(other),
        }
    }
    if out.is_empty() {
        return PathBuf::from(".");
    }
    out.iter().collect()
}

/// `path` relative to `dir` (both absolute and normalised), with `..`
/// where needed: how a lock names a file beside it.
pub fn relative_path(path: &Path, dir: &Path) -> PathBuf {
    let to: Vec<_> = path.components().collect();
    let from: Vec<_> = dir.components().collect();
    let common = to.iter().zip(&from).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for part in &to[common..] {
        out.push(part.as_os_str());
    }
    out
}

/// The single version a requirement pins with `==V` or `===V`, if any.
/// `foo>=2` pins nothing: it says what is allowed, not what is there.
pub fn exact_version(requirement: &Requirement<VerbatimUrl>) -> Option<Version> {
    let Some(VersionOrUrl::VersionSpecifier(specs)) = &requirement.version_or_url else {
        return None;
    };
    match specs.iter().collect::<Vec<_>>().as_slice() {
        // `==2.*` is another operator (a range), so it is not here.
        [spec] if matches!(spec.operator(), Operator::Equal | Operator::ExactEqual) => {
            Some(spec.version().clone())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn paths_normalize_without_the_disk() {
        for (path, want) in [
            ("a/./b/../c", "a/c"),
            ("../../x", "../../x"),
            ("a/../../x", "../x"),
            ("/../x", "/x"),
            ("/a/b/..", "/a"),
            ("./", "."),
            ("a/..", "."),
        ] {
            assert_eq!(normalize(Path::new(path)), PathBuf::from(want), "{path}");
        }
    }

    #[test]
    fn pylock_names_follow_pep_751() {
        for (name, format) in [
            ("pylock.toml", LockFormat::Pylock),
            ("pylock.kv.toml", LockFormat::Pylock),
            ("dir/pylock.ci-tools.toml", LockFormat::Pylock),
            ("pylock.a.b.toml", LockFormat::Requirements),
            ("pylock..toml", LockFormat::Requirements),
            ("kv.lock.txt", LockFormat::Requirements),
            ("pyproject.toml", LockFormat::Requirements),
        ] {
            assert_eq!(LockFormat::from_path(Path::new(name)), format, "{name}");
        }
    }

    #[test]
    fn pins_of_a_loose_file_are_its_exact_pins() {
        let lock = Lock::parse_pins(
            Path::new("base.txt"),
            "foo>=2.0.0\nbar==1.0\nbaz @ https://example.com/baz-1.0.tar.gz\n",
        )
        .unwrap();
        let pins: Vec<String> = lock
            .packages
            .iter()
            .map(|p| format!("{}=={}", p.name, p.version))
            .collect();
        assert_eq!(pins, ["bar==1.0"]);
    }

    #[test]
    fn comparable_keeps_records_and_entries_not_wording() {
        let lock =
            "# x\n# It holds … To regenerate it, run:\n#    layerlock compile a\n# tail\nfoo==1\n";
        let other = lock.replace("compile a", "compile ./a");
        assert_eq!(comparable(lock), comparable(&other));
        // A live line where the command was is a difference.
        let injected = lock.replace(
            "#    layerlock compile a",
            "--extra-index-url https://evil/",
        );
        assert_ne!(comparable(lock), comparable(&injected));
        // After the header, the same comment text protects nothing.
        let late = format!("{lock}# To regenerate it, run:\nbar==1\n");
        assert!(comparable(&late).contains("bar==1"));
        // The header's sentences may change; its records may not.
        let reworded = lock.replace("# x", "# Made by layerlock");
        assert_eq!(comparable(lock), comparable(&reworded));
        let recorded = "# layerlock-base: a.txt\nfoo==1\n";
        let other_base = "# layerlock-base: b.txt\nfoo==1\n";
        assert_ne!(comparable(recorded), comparable(other_base));
        let pylock = "lock-version = \"1.0\"\n[[packages]]\ncommand = \"x\"\n[tool.layerlock]\ncommand = \"y\"\n";
        assert!(comparable(pylock).contains("command = \"x\""));
        assert!(!comparable(pylock).contains("command = \"y\""));
    }

    #[test]
    fn only_equality_is_an_exact_version() {
        let exact = |s: &str| exact_version(&Requirement::from_str(s).unwrap());
        assert_eq!(exact("foo==2").unwrap().to_string(), "2");
        assert_eq!(exact("foo===2.0").unwrap().to_string(), "2.0");
        assert!(exact("foo>=2").is_none());
        assert!(exact("foo==2.*").is_none());
        assert!(exact("foo~=2.0").is_none());
        assert!(exact("foo==2,<3").is_none());
        assert!(exact("foo").is_none());
    }
}
