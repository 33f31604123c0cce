//! The target a layer is compiled for: a Python version and a platform, with
//! the PEP 425 tags and PEP 508 marker values that follow from them.

use std::ops::Bound;
use std::str::FromStr;

use uv_pep440::{LowerBound, Version, VersionSpecifiers, release_specifiers_to_ranges};
use uv_pep508::{MarkerEnvironment, MarkerEnvironmentBuilder};
use uv_platform_tags::{Arch, Os, Platform, Tags, TagsOptions};

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error(
        "unknown platform `{0}`; use e.g. x86_64-manylinux_2_28, aarch64-manylinux_2_28, x86_64-musllinux_1_2, aarch64-apple-darwin, x86_64-pc-windows-msvc or linux"
    )]
    Platform(String),
    #[error(
        "`{0}` names an Android, iOS or WebAssembly target; layerlock compiles layers for Linux, macOS and Windows images"
    )]
    Unsupported(String),
    /// A C library version no release has had: almost always a typo.
    #[error(
        "`{given}` names {library} {version}, which does not exist (the newest is {newest}); did you mean `{suggestion}`?"
    )]
    NoSuchLibc {
        given: String,
        library: &'static str,
        version: String,
        newest: String,
        suggestion: String,
    },
    #[error("`{0}` is not a Python version like 3.12 (or 3.12.4)")]
    PythonVersion(String),
    #[error("cannot compute tags for the target: {0}")]
    Tags(String),
}

/// Python version and platform, with their tags and marker environment.
#[derive(Debug, Clone)]
pub struct Target {
    python: Version,
    /// Whether the patch was given (`3.12.4`), or only `3.12`.
    python_patch: bool,
    python_minor: (u8, u8),
    platform_name: String,
    tags: Tags,
    markers: MarkerEnvironment,
}

impl Target {
    /// `python_version` is `3.12` or `3.12.4`; `platform` is a name such as
    /// `x86_64-manylinux_2_28` (the names `uv pip compile --python-platform` takes).
    pub fn new(python_version: &str, platform: &str) -> Result<Self, TargetError> {
        let bad = || TargetError::PythonVersion(python_version.to_string());
        let parts: Vec<u8> = python_version
            .split('.')
            .map(|p| p.parse::<u8>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        let (major, minor, patch) = match parts.as_slice() {
            [major, minor] => (*major, *minor, None),
            [major, minor, patch] => (*major, *minor, Some(*patch)),
            _ => return Err(bad()),
        };
        if major != 3 {
            return Err(bad());
        }
        let (os, arch, canonical) = parse_platform(platform)?;
        let tags = Tags::from_env(
            Platform::new(os.clone(), arch),
            (major, minor),
            "cpython",
            (major, minor),
            TagsOptions {
                manylinux_compatible: matches!(os, Os::Manylinux { .. }),
                gil_disabled: false,
                debug_enabled: false,
                is_cross: true,
            },
        )
        .map_err(|e| TargetError::Tags(e.to_string()))?;
        let full = format!("{major}.{minor}.{}", patch.unwrap_or(0));
        let short = format!("{major}.{minor}");
        let (os_name, sys_platform, system, machine) = match (&os, arch) {
            (Os::Windows, Arch::Aarch64) => ("nt", "win32", "Windows", "ARM64"),
            (Os::Windows, Arch::X86) => ("nt", "win32", "Windows", "x86"),
            (Os::Windows, _) => ("nt", "win32", "Windows", "AMD64"),
            (Os::Macos { .. }, Arch::Aarch64) => ("posix", "darwin", "Darwin", "arm64"),
            (Os::Macos { .. }, _) => ("posix", "darwin", "Darwin", "x86_64"),
            (_, arch) => ("posix", "linux", "Linux", arch.name()),
        };
        let markers = MarkerEnvironment::try_from(MarkerEnvironmentBuilder {
            implementation_name: "cpython",
            implementation_version: &full,
            os_name,
            platform_machine: machine,
            platform_python_implementation: "CPython",
            platform_release: "",
            platform_system: system,
            platform_version: "",
            python_full_version: &full,
            python_version: &short,
            sys_platform,
        })
        .map_err(|e| TargetError::Tags(e.to_string()))?;
        Ok(Self {
            python: Version::from_str(&full).map_err(|_| bad())?,
            python_patch: patch.is_some(),
            python_minor: (major, minor),
            platform_name: canonical,
            tags,
            markers,
        })
    }

    /// The full Python version (`3.12.0` when only `3.12` was given), used
    /// for requires-python checks.
    pub fn python(&self) -> &Version {
        &self.python
    }

    /// Whether the patch was given: then requires-python is judged against
    /// the exact version.
    pub fn python_exact(&self) -> bool {
        self.python_patch
    }

    /// Whether a requires-python admits the target's Python.
    ///
    /// Given `3.9.4`, the version is exact: the specifier must contain it.
    /// Given a bare `3.9`, the target is a minor series, not `3.9.0`, and
    /// the judgment is uv's (`RequiresPython::is_contained_by` in
    /// uv-distribution-types, with `--python-version 3.9` as `>=3.9`): the
    /// specifier's lowest admitted version must be at most `3.9`; a hole
    /// (`!=3.9.0`) or an upper bound (`<3.9.5`) does not refuse, because
    /// requires-python is how packages drop old Pythons, and a lock for
    /// "3.9" that refused `!=3.9.0,!=3.9.1` would refuse what every later
    /// 3.9 runs (`cryptography` 45).
    pub fn allows_python(&self, requires_python: &VersionSpecifiers) -> bool {
        if self.python_patch {
            return requires_python.contains(&self.python);
        }
        let series = Version::new([
            u64::from(self.python_minor.0),
            u64::from(self.python_minor.1),
        ]);
        let lowest = release_specifiers_to_ranges(requires_python.clone())
            .bounding_range()
            .map_or(Bound::Unbounded, |(lower, _)| lower.cloned());
        LowerBound::new(lowest).contains(&series)
    }

    /// `3.12`.
    pub fn python_short(&self) -> String {
        format!("{}.{}", self.python_minor.0, self.python_minor.1)
    }

    pub fn platform_name(&self) -> &str {
        &self.platform_name
    }

    pub fn tags(&self) -> &Tags {
        &self.tags
    }

    pub fn markers(&self) -> &MarkerEnvironment {
        &self.markers
    }

    /// "Python 3.12 on x86_64-manylinux_2_28".
    pub fn describe(&self) -> String {
        format!("Python {} on {}", self.python_short(), self.platform_name)
    }
}

fn parse_arch(text: &str) -> Option<Arch> {
    Some(match text {
        "x86_64" | "amd64" => Arch::X86_64,
        "aarch64" | "arm64" => Arch::Aarch64,
        "i686" | "x86" => Arch::X86,
        "ppc64le" | "powerpc64le" => Arch::Powerpc64Le,
        "s390x" => Arch::S390X,
        "riscv64" => Arch::Riscv64,
        _ => return None,
    })
}

/// `manylinux2014` and its elders, as the glibc version they stand for.
fn legacy_glibc(tag: &str) -> Option<(u16, u16)> {
    match tag {
        "manylinux2014" => Some((2, 17)),
        "manylinux2010" => Some((2, 12)),
        "manylinux1" => Some((2, 5)),
        _ => None,
    }
}

fn parse_glibc(text: &str) -> Option<(u16, u16)> {
    let (major, minor) = text.split_once('_')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The newest glibc (2.x, a release each February and August: 2.44 in
/// August 2026) and musl (1.x) released: a target past them is a
/// typo (`manylinux_2_82` for `_2_28`), never a real image.
const NEWEST_GLIBC_MINOR: u16 = 44;
const NEWEST_MUSL_MINOR: u16 = 2;

/// The error for a libc version that does not exist, suggesting the one
/// with its digits swapped when that exists, else the newest.
fn no_such_libc(
    name: &str,
    library: &'static str,
    (major, minor): (u16, u16),
    (_, newest): (u16, u16),
) -> TargetError {
    let swapped: String = minor.to_string().chars().rev().collect();
    let near = swapped
        .parse::<u16>()
        .ok()
        .filter(|m| *m <= newest && (library == "musl" || *m >= 5))
        .unwrap_or(newest);
    let (from, to) = (format!("_{major}_{minor}"), format!("_{major}_{near}"));
    TargetError::NoSuchLibc {
        given: name.to_string(),
        library,
        version: format!("{major}.{minor}"),
        newest: format!("{major}.{newest}"),
        suggestion: name.replacen(&from, &to, 1),
    }
}

/// Platform names, as `uv pip compile --python-platform` spells them, plus
/// `{arch}-manylinux_X_Y` / `{arch}-musllinux_X_Y` for any glibc/musl version.
fn parse_platform(name: &str) -> Result<(Os, Arch, String), TargetError> {
    let err = || TargetError::Platform(name.to_string());
    let alias = match name {
        "linux" => "x86_64-manylinux_2_28",
        "macos" => "aarch64-apple-darwin",
        "windows" => "x86_64-pc-windows-msvc",
        "x86_64-unknown-linux-gnu" => "x86_64-manylinux_2_28",
        "aarch64-unknown-linux-gnu" => "aarch64-manylinux_2_28",
        "x86_64-unknown-linux-musl" => "x86_64-musllinux_1_2",
        "aarch64-unknown-linux-musl" => "aarch64-musllinux_1_2",
        // uv's RISC-V target assumes the glibc of the first distributions
        // that shipped for it.
        "riscv64-unknown-linux" | "riscv64-unknown-linux-gnu" => "riscv64-manylinux_2_39",
        other => other,
    };
    // The legacy manylinux names (PEPs 513, 571, 599) are glibc versions.
    let legacy;
    let alias = if let Some((arch, tag)) = alias.split_once('-')
        && let Some((major, minor)) = legacy_glibc(tag)
    {
        legacy = format!("{arch}-manylinux_{major}_{minor}");
        legacy.as_str()
    } else {
        alias
    };
    if ["-linux-android", "-apple-ios", "wasm32-"]
        .iter()
        .any(|part| alias.contains(part))
    {
        return Err(TargetError::Unsupported(name.to_string()));
    }
    let (arch, rest) = alias.split_once('-').ok_or_else(err)?;
    let arch = parse_arch(arch).ok_or_else(err)?;
    let os = if let Some(v) = rest.strip_prefix("manylinux_") {
        let (major, minor) = parse_glibc(v).ok_or_else(err)?;
        // PEP 600: glibc 2.5 (manylinux1) is the oldest there is.
        if major != 2 || minor < 5 {
            return Err(err());
        }
        if minor > NEWEST_GLIBC_MINOR {
            return Err(no_such_libc(
                name,
                "glibc",
                (major, minor),
                (2, NEWEST_GLIBC_MINOR),
            ));
        }
        Os::Manylinux { major, minor }
    } else if let Some(v) = rest.strip_prefix("musllinux_") {
        let (major, minor) = parse_glibc(v).ok_or_else(err)?;
        if major != 1 {
            return Err(err());
        }
        if minor > NEWEST_MUSL_MINOR {
            return Err(no_such_libc(
                name,
                "musl",
                (major, minor),
                (1, NEWEST_MUSL_MINOR),
            ));
        }
        Os::Musllinux { major, minor }
    } else if rest == "apple-darwin" {
        // uv's default deployment targets: 13.0 on Apple silicon, 12.0 on Intel.
        match arch {
            Arch::Aarch64 => Os::Macos {
                major: 13,
                minor: 0,
            },
            _ => Os::Macos {
                major: 12,
                minor: 0,
            },
        }
    } else if rest == "pc-windows-msvc" {
        Os::Windows
    } else {
        return Err(err());
    };
    Ok((os, arch, alias.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use uv_distribution_filename::WheelFilename;

    fn compatible(target: &Target, file: &str) -> bool {
        WheelFilename::from_str(file)
            .unwrap()
            .is_compatible(target.tags())
    }

    fn allows(python: &str, spec: &str) -> bool {
        let target = Target::new(python, "linux").unwrap();
        target.allows_python(&VersionSpecifiers::from_str(spec).unwrap())
    }

    /// A bare 3.9 is judged by the specifier's lowest admitted version, as
    /// uv does; these are the vectors the online differential suite checks
    /// against uv.
    #[test]
    fn a_bare_minor_is_judged_by_the_lowest_version_as_uv_does() {
        for (spec, allowed) in [
            ("!=3.9.0", true),
            (">=3.7,!=3.9.0,!=3.9.1", true),
            (">=3.9.1", false),
            ("<3.9.5", true),
            (">=3.9", true),
            ("==3.9.*", true),
            (">3.9", false),
            (">=3.10", false),
            ("<3.9", true),
        ] {
            assert_eq!(allows("3.9", spec), allowed, "3.9 against {spec}");
        }
    }

    #[test]
    fn a_given_patch_is_exact() {
        for (spec, allowed) in [
            ("!=3.9.0", false),
            (">=3.9.1", false),
            ("<3.9.5", true),
            (">=3.9", true),
            ("==3.9.*", true),
            (">3.9", false),
        ] {
            assert_eq!(allows("3.9.0", spec), allowed, "3.9.0 against {spec}");
        }
        assert!(allows("3.9.4", ">=3.9.1"));
        assert!(!allows("3.9.6", "<3.9.5"));
    }

    #[test]
    fn manylinux_target_accepts_older_glibc_and_abi3() {
        let t = Target::new("3.12", "x86_64-manylinux_2_28").unwrap();
        assert!(compatible(
            &t,
            "a-1-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
        ));
        assert!(compatible(&t, "a-1-cp38-abi3-manylinux_2_28_x86_64.whl"));
        assert!(compatible(&t, "a-1-py3-none-any.whl"));
        assert!(!compatible(&t, "a-1-cp312-cp312-manylinux_2_34_x86_64.whl"));
        assert!(!compatible(&t, "a-1-cp311-cp311-manylinux_2_17_x86_64.whl"));
        assert!(!compatible(&t, "a-1-cp312-cp312-musllinux_1_2_x86_64.whl"));
        assert!(!compatible(&t, "a-1-cp312-cp312-win_amd64.whl"));
        assert_eq!(t.describe(), "Python 3.12 on x86_64-manylinux_2_28");
    }

    #[test]
    fn uv_platform_spellings_mean_what_uv_means() {
        for (uv, ours) in [
            ("x86_64-unknown-linux-gnu", "x86_64-manylinux_2_28"),
            ("aarch64-unknown-linux-gnu", "aarch64-manylinux_2_28"),
            ("aarch64-unknown-linux-musl", "aarch64-musllinux_1_2"),
            ("x86_64-unknown-linux-musl", "x86_64-musllinux_1_2"),
            ("x86_64-manylinux2014", "x86_64-manylinux_2_17"),
            ("aarch64-manylinux2014", "aarch64-manylinux_2_17"),
            ("i686-manylinux2010", "i686-manylinux_2_12"),
            ("riscv64-unknown-linux", "riscv64-manylinux_2_39"),
            ("linux", "x86_64-manylinux_2_28"),
            ("macos", "aarch64-apple-darwin"),
            ("i686-pc-windows-msvc", "i686-pc-windows-msvc"),
        ] {
            let t = Target::new("3.12", uv).unwrap();
            assert_eq!(t.platform_name(), ours, "{uv}");
        }
        let t = Target::new("3.12", "x86_64-manylinux2014").unwrap();
        assert!(compatible(&t, "a-1-cp312-cp312-manylinux2014_x86_64.whl"));
        assert!(!compatible(&t, "a-1-cp312-cp312-manylinux_2_28_x86_64.whl"));
        let err = Target::new("3.12", "aarch64-linux-android").unwrap_err();
        assert!(err.to_string().contains("Android"), "{err}");
    }

    #[test]
    fn unknown_platform_is_explained() {
        let err = Target::new("3.12", "sparc-solaris").unwrap_err();
        assert!(err.to_string().contains("x86_64-manylinux_2_28"));
    }

    #[test]
    fn a_glibc_or_musl_that_does_not_exist_is_refused_with_the_near_one() {
        let err = Target::new("3.12", "x86_64-manylinux_2_82")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "`x86_64-manylinux_2_82` names glibc 2.82, which does not exist (the newest is 2.44); did you mean `x86_64-manylinux_2_28`?"
        );
        let err = Target::new("3.12", "aarch64-manylinux_2_99")
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("did you mean `aarch64-manylinux_2_44`?"),
            "{err}"
        );
        let err = Target::new("3.12", "x86_64-musllinux_1_3")
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("did you mean `x86_64-musllinux_1_2`?"),
            "{err}"
        );
        // uv's spellings and real levels keep working.
        for ok in [
            "x86_64-manylinux_2_17",
            "aarch64-manylinux_2_39",
            "riscv64-unknown-linux",
            "x86_64-musllinux_1_1",
        ] {
            assert!(Target::new("3.12", ok).is_ok(), "{ok}");
        }
    }
}
