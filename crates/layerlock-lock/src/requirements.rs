//! A lock as a pip requirements file: `name==version` with `--hash`
//! options, which `pip install --require-hashes --no-deps -r` and
//! `uv pip install` accept, and a `# layerlock-…` header that says what it
//! was compiled for.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::error::{LockError, Origin};
use uv_pep440::Version;

use crate::model::{
    BaseUse, DirectSource, Header, Lock, LockFormat, LockTarget, LockedPackage, exact_version,
    one_line,
};
use crate::parse::RequirementsFile;

/// Read a requirements-file lock: every entry pinned with `==`, each
/// package once.
pub(crate) fn read(path: &Path, text: &str) -> Result<Lock, LockError> {
    let parsed = RequirementsFile::parse(path, text)?;
    if let Some((origin, value)) = parsed.unnamed_editables.first() {
        return Err(invalid(
            origin,
            format!(
                "`-e {value}` is an editable install, not a locked version; a lock pins exact versions"
            ),
        ));
    }
    let mut packages = Vec::with_capacity(parsed.entries.len());
    // Each name once, or once per marker (a lock for several targets):
    // a map keeps a 100,000-line lock linear. Markers that overlap
    // otherwise are found on the interpreter that meets both (`select`).
    let mut seen: BTreeMap<uv_normalize::PackageName, Vec<(uv_pep508::MarkerTree, String)>> =
        BTreeMap::new();
    let lines: Vec<&str> = text.lines().collect();
    for entry in parsed.entries {
        let origin = format!("{}:{}", entry.origin.path.display(), entry.origin.line);
        if entry.origin.path != path
            && matches!(
                entry.requirement.version_or_url,
                Some(uv_pep508::VersionOrUrl::Url(_))
            )
        {
            return Err(invalid(
                &entry.origin,
                "a lock's `name @ URL` entry belongs in the lock itself, not in a file it includes"
                    .to_string(),
            ));
        }
        let direct = direct_entry(&entry, &lines)?;
        let via = if entry.origin.path == path {
            via_of(&lines, entry.origin.line)
        } else {
            Vec::new()
        };
        let version = match &direct {
            Some((_, version)) => Some(version.clone()),
            None => exact_version(&entry.requirement),
        };
        let Some(version) = version else {
            return Err(invalid(
                &entry.origin,
                format!(
                    "`{}` is not pinned with ==; a lock pins exact versions",
                    entry.requirement
                ),
            ));
        };
        let name = entry.requirement.name.clone();
        let marker = entry.requirement.marker;
        let pins = seen.entry(name.clone()).or_default();
        if let Some((_, first)) = pins
            .iter()
            .find(|(m, _)| m.is_true() || marker.is_true() || *m == marker)
        {
            return Err(invalid(
                &entry.origin,
                format!(
                    "{name} is locked twice (also at {first}); a lock pins each package once (once per marker)"
                ),
            ));
        }
        pins.push((marker, origin.clone()));
        let mut hashes = entry.hashes;
        hashes.sort();
        hashes.dedup();
        packages.push(LockedPackage {
            name,
            version,
            marker,
            hashes,
            files: Vec::new(),
            via,
            origin,
            direct: direct.map(|(source, _)| source),
        });
    }
    packages.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Lock {
        path: path.to_path_buf(),
        format: LockFormat::Requirements,
        header: header(text),
        packages,
        base_used: base_used(text),
    })
}

/// The `# via` comments under the entry that starts at 1-based `line`, as
/// [`render`] writes them (`# via a`, or `# via` then `#   a` per line).
fn via_of(lines: &[&str], line: usize) -> Vec<String> {
    let mut at = line.saturating_sub(1);
    // Past the entry's continued lines.
    while lines.get(at).is_some_and(|l| l.trim_end().ends_with('\\')) {
        at += 1;
    }
    let mut out = Vec::new();
    for next in lines.iter().skip(at + 1) {
        let Some(comment) = next.trim_start().strip_prefix('#') else {
            break;
        };
        let comment = comment.trim();
        if let Some(one) = comment.strip_prefix("via ") {
            out.push(one.trim().to_string());
        } else if comment == "via" || comment.starts_with("version ") {
            continue;
        } else if next.starts_with("    #   ") {
            out.push(comment.to_string());
        } else {
            break;
        }
    }
    out
}

/// The line under a direct entry that says its version.
const VERSION_COMMENT: &str = "# version ";

/// A `name @ URL` entry of a lock: its source (a git commit or a directory,
/// as [`DirectSource::url`] writes them) and the version the comment under
/// it records. `None` for an entry pinned by version.
fn direct_entry(
    entry: &crate::parse::Entry,
    lines: &[&str],
) -> Result<Option<(DirectSource, Version)>, LockError> {
    let Some(uv_pep508::VersionOrUrl::Url(url)) = &entry.requirement.version_or_url else {
        return Ok(None);
    };
    let given = url.given().map_or_else(|| url.to_string(), str::to_string);
    let Some(source) = DirectSource::from_url(&given) else {
        return Err(invalid(
            &entry.origin,
            format!(
                "`{given}` is neither a git URL at a full commit id nor a local directory; a lock pins what it installs"
            ),
        ));
    };
    let version = lines
        .iter()
        .skip(entry.origin.line)
        .map(|l| l.trim())
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| l.strip_prefix(VERSION_COMMENT))
        .and_then(|v| v.trim().parse::<Version>().ok());
    let Some(version) = version else {
        return Err(invalid(
            &entry.origin,
            format!(
                "{} is locked from its source but no `{VERSION_COMMENT}X` line under it says at which version",
                entry.requirement.name
            ),
        ));
    };
    Ok(Some((source, version)))
}

fn invalid(origin: &Origin, message: String) -> LockError {
    LockError::Invalid {
        at: format!("{}:{}", origin.path.display(), origin.line),
        message,
    }
}

/// The `# layerlock-…` lines and the regenerate command of a header.
/// The targets a requirements lock's header names (its `# layerlock-target:`
/// lines), without reading the rest.
pub(crate) fn header_targets(text: &str) -> Vec<LockTarget> {
    header(text).targets
}

fn header(text: &str) -> Header {
    let mut header = Header::default();
    let mut command_next = false;
    for line in text.lines() {
        let Some(comment) = line.strip_prefix('#') else {
            if line.trim().is_empty() {
                continue;
            }
            break;
        };
        let comment = comment.trim();
        if command_next {
            header.command = Some(comment.to_string());
            command_next = false;
        } else if comment.ends_with("To regenerate it, run:") {
            command_next = true;
        } else if let Some(rest) = comment.strip_prefix("layerlock-target:") {
            let mut python = None;
            let mut platform = None;
            for part in rest.split_whitespace() {
                if let Some(v) = part.strip_prefix("python=") {
                    python = Some(v.to_string());
                } else if let Some(v) = part.strip_prefix("platform=") {
                    platform = Some(v.to_string());
                }
            }
            if let (Some(python), Some(platform)) = (python, platform) {
                header.targets.push(LockTarget { python, platform });
            }
        } else if let Some(rest) = comment.strip_prefix("layerlock-base:") {
            header.bases.push(rest.trim().to_string());
        } else if let Some(rest) = comment.strip_prefix("layerlock-owned:") {
            header.owned.push(rest.trim().to_string());
        } else if let Some(rest) = comment.strip_prefix("layerlock-replaces:") {
            header.replaces.push(rest.trim().to_string());
        } else if let Some(rest) = comment.strip_prefix("layerlock-unchecked:") {
            header.unchecked.push(rest.trim().to_string());
        } else if let Some(rest) = comment.strip_prefix("layerlock-walked-back:") {
            header.walked_back.push(rest.trim().to_string());
        }
    }
    header
}

/// The trailer's base pins the layer relies on (`#   name==version
/// (origin) via who`), as [`render`] writes them.
fn base_used(text: &str) -> Vec<BaseUse> {
    let Some((_, trailer)) = text.split_once(TRAILER) else {
        return Vec::new();
    };
    trailer
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("#   ")?;
            let (pin, rest) = rest.split_once(" (")?;
            let (origin, via) = rest.rsplit_once(") via ")?;
            let (name, version) = match pin.split_once("==") {
                Some((name, version)) => (name, Some(version.parse().ok()?)),
                None => (pin, None),
            };
            Some(BaseUse {
                name: name.parse().ok()?,
                version,
                origin: origin.to_string(),
                via: via.split(", ").map(str::to_string).collect(),
            })
        })
        .collect()
}

/// The line that opens the trailer of base pins a layer relies on.
const TRAILER: &str = "\n# Provided by the base and needed by this layer (not emitted):\n";

/// Render `lock`; `output` is how the install line names the file.
pub(crate) fn render(lock: &Lock, output: &str) -> String {
    let mut out = String::new();
    let mut comment = |line: &str| {
        if line.is_empty() {
            out.push_str("#\n");
        } else {
            let _ = writeln!(out, "# {}", one_line(line));
        }
    };
    let h = &lock.header;
    if let Some(description) = &h.description {
        comment(&format!(
            "This file was generated by layerlock for {description}."
        ));
        comment("It holds only what the base does not provide. To regenerate it, run:");
        comment(&format!(
            "   {}",
            h.command.as_deref().unwrap_or("layerlock")
        ));
        // layerlock installs only what is missing, checks every hash, and
        // refuses to change what the image already holds (pip would
        // replace it); git and directory lines are pinned by commit.
        comment("Install it with (hash-checked; nothing installed is changed):");
        comment(&format!("   layerlock install {output}"));
    }
    for target in &h.targets {
        comment(&format!(
            "layerlock-target: python={} platform={}",
            target.python, target.platform
        ));
    }
    for base in &h.bases {
        comment(&format!("layerlock-base: {base}"));
    }
    for owned in &h.owned {
        comment(&format!("layerlock-owned: {owned}"));
    }
    for replaced in &h.replaces {
        comment(&format!("layerlock-replaces: {replaced}"));
    }
    for unchecked in &h.unchecked {
        comment(&format!("layerlock-unchecked: {unchecked}"));
    }
    for walked in &h.walked_back {
        comment(&format!("layerlock-walked-back: {walked}"));
    }
    let mut packages: Vec<&LockedPackage> = lock.packages.iter().collect();
    packages.sort_by(|a, b| a.name.cmp(&b.name));
    for package in packages {
        let mut hashes = package.hashes.clone();
        hashes.sort();
        hashes.dedup();
        match &package.direct {
            Some(source) => {
                let _ = write!(out, "{} @ {}", package.name, source.url());
            }
            None => {
                let _ = write!(out, "{}=={}", package.name, package.version);
            }
        }
        if let Some(marker) = package.marker.contents() {
            let _ = write!(out, " ; {marker}");
        }
        for hash in &hashes {
            let _ = write!(out, " \\\n    --hash={hash}");
        }
        out.push('\n');
        if package.direct.is_some() {
            let _ = writeln!(out, "    {VERSION_COMMENT}{}", package.version);
        }
        let mut via = package.via.clone();
        via.sort();
        via.dedup();
        match via.as_slice() {
            [] => {}
            [one] => {
                let _ = writeln!(out, "    # via {}", one_line(one));
            }
            many => {
                out.push_str("    # via\n");
                for item in many {
                    let _ = writeln!(out, "    #   {}", one_line(item));
                }
            }
        }
    }
    if !lock.base_used.is_empty() {
        out.push_str(TRAILER);
        for used in &lock.base_used {
            let version = used
                .version
                .as_ref()
                .map_or(String::new(), |v| format!("=={v}"));
            let _ = writeln!(
                out,
                "#   {}{version} ({}) via {}",
                used.name,
                one_line(&used.origin),
                one_line(&used.via.join(", "))
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;
    use uv_normalize::PackageName;
    use uv_pep440::Version;
    use uv_pep508::MarkerTree;

    fn package(name: &str, version: &str, hashes: &[&str], via: &[&str]) -> LockedPackage {
        LockedPackage {
            name: PackageName::from_str(name).unwrap(),
            version: Version::from_str(version).unwrap(),
            marker: MarkerTree::TRUE,
            hashes: hashes.iter().map(|h| h.to_string()).collect(),
            files: Vec::new(),
            via: via.iter().map(|v| v.to_string()).collect(),
            origin: String::new(),
            direct: None,
        }
    }

    fn sample() -> Lock {
        Lock {
            path: "kv.lock.txt".into(),
            format: LockFormat::Requirements,
            header: Header {
                targets: vec![LockTarget {
                    python: "3.12".into(),
                    platform: "x86_64-manylinux_2_28".into(),
                }],
                bases: vec!["base.txt".into()],
                owned: vec!["torch".into()],
                replaces: vec![],
                unchecked: vec![],
                walked_back: vec![],
                command: Some("layerlock compile in.txt -b base.txt -o kv.lock.txt".into()),
                description: Some("Python 3.12 on x86_64-manylinux_2_28".into()),
                environments: Vec::new(),
                requires_python: None,
            },
            packages: vec![
                package(
                    "zeta",
                    "1.0",
                    &[
                        "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                        "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                    ],
                    &["-r in.txt"],
                ),
                package(
                    "alpha",
                    "2.0",
                    &["sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"],
                    &["zeta", "beta"],
                ),
            ],
            base_used: Vec::new(),
        }
    }

    #[test]
    fn renders_sorted_with_hashes_and_via() {
        insta::assert_snapshot!(sample().render(LockFormat::Requirements, "kv.lock.txt"), @r"
        # This file was generated by layerlock for Python 3.12 on x86_64-manylinux_2_28.
        # It holds only what the base does not provide. To regenerate it, run:
        #    layerlock compile in.txt -b base.txt -o kv.lock.txt
        # Install it with (hash-checked; nothing installed is changed):
        #    layerlock install kv.lock.txt
        # layerlock-target: python=3.12 platform=x86_64-manylinux_2_28
        # layerlock-base: base.txt
        # layerlock-owned: torch
        alpha==2.0 \
            --hash=sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc
            # via
            #   beta
            #   zeta
        zeta==1.0 \
            --hash=sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa \
            --hash=sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
            # via -r in.txt
        ");
    }

    #[test]
    fn reads_back_what_it_writes() {
        let lock = sample();
        let text = lock.render(LockFormat::Requirements, "kv.lock.txt");
        let back = Lock::parse(Path::new("kv.lock.txt"), &text).unwrap();
        assert_eq!(back.header.targets, lock.header.targets);
        assert_eq!(back.header.bases, lock.header.bases);
        assert_eq!(back.header.owned, lock.header.owned);
        assert_eq!(back.header.command, lock.header.command);
        let names: Vec<_> = back.packages.iter().map(|p| p.name.to_string()).collect();
        assert_eq!(names, ["alpha", "zeta"]);
        assert_eq!(
            back.packages[1].hashes,
            [
                "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
            ]
        );
        assert_eq!(back.packages[1].origin, "kv.lock.txt:14");
    }

    #[test]
    fn a_range_or_a_second_pin_is_not_a_lock() {
        let err = Lock::parse(Path::new("l.txt"), "foo>=2\n").unwrap_err();
        assert!(err.to_string().contains("not pinned with =="), "{err}");
        let err = Lock::parse(Path::new("l.txt"), "foo==1\nFoo==1\n").unwrap_err();
        assert!(err.to_string().contains("locked twice"), "{err}");
        let err = Lock::parse(Path::new("l.txt"), "-e ./src\n").unwrap_err();
        assert!(err.to_string().contains("editable"), "{err}");
    }

    #[test]
    fn replaced_and_unchecked_packages_read_back() {
        let text = "# layerlock-target: python=3.12 platform=x86_64-manylinux_2_28\n# layerlock-replaces: cupy-cuda12x==13.6.0\n# layerlock-unchecked: torch==2.11.0+cu130 (no wheel)\n# layerlock-walked-back: dkimpy==0.7.1 (25 newer releases are sdists with dynamic metadata, newest 1.1.8)\nsix==1.16.0 \\\n    --hash=sha256:1e61c37477a1626458e36f7b1d82aa5c9b094fa4802892072e49de9c60c4c926\n";
        let lock = Lock::parse(Path::new("l.txt"), text).unwrap();
        assert_eq!(lock.header.replaces, ["cupy-cuda12x==13.6.0"]);
        assert_eq!(lock.header.unchecked, ["torch==2.11.0+cu130 (no wheel)"]);
        assert_eq!(
            lock.header.walked_back,
            ["dkimpy==0.7.1 (25 newer releases are sdists with dynamic metadata, newest 1.1.8)"]
        );
        let again = render(&lock, "l.txt");
        assert!(
            again.contains("# layerlock-replaces: cupy-cuda12x==13.6.0\n"),
            "{again}"
        );
        assert!(
            again.contains("# layerlock-unchecked: torch==2.11.0+cu130 (no wheel)\n"),
            "{again}"
        );
    }
}
