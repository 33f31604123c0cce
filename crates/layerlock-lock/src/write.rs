//! Writes a layer lock as a pip requirements file that `pip install
//! --require-hashes --no-deps -r` and `uv pip install` accept.

use std::fmt::Write as _;

/// One package of a layer lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockedPackage {
    /// The normalised name (PEP 503).
    pub name: String,
    pub version: String,
    /// `sha256:HEX` values; written sorted.
    pub hashes: Vec<String>,
    /// What pulled the package in: package names or `-r FILE`.
    pub via: Vec<String>,
}

/// Render the lock: `header` lines (written as `# ` comments), then the
/// packages sorted by name. The same input gives the same bytes.
pub fn render(header: &[String], packages: &[LockedPackage]) -> String {
    let mut out = String::new();
    for line in header {
        if line.is_empty() {
            out.push_str("#\n");
        } else {
            let _ = writeln!(out, "# {line}");
        }
    }
    let mut packages: Vec<&LockedPackage> = packages.iter().collect();
    packages.sort_by(|a, b| a.name.cmp(&b.name));
    for package in packages {
        let mut hashes = package.hashes.clone();
        hashes.sort();
        hashes.dedup();
        let _ = write!(out, "{}=={}", package.name, package.version);
        for hash in &hashes {
            let _ = write!(out, " \\\n    --hash={hash}");
        }
        out.push('\n');
        let mut via = package.via.clone();
        via.sort();
        via.dedup();
        match via.as_slice() {
            [] => {}
            [one] => {
                let _ = writeln!(out, "    # via {one}");
            }
            many => {
                out.push_str("    # via\n");
                for item in many {
                    let _ = writeln!(out, "    #   {item}");
                }
            }
        }
    }
    out
}

/// The target a layer lock names in its header
/// (`# layerlock-target: python=3.12 platform=x86_64-manylinux_2_28`).
pub fn header_target(text: &str) -> Option<(String, String)> {
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("# layerlock-target:") else {
            if !line.starts_with('#') {
                break;
            }
            continue;
        };
        let mut python = None;
        let mut platform = None;
        for part in rest.split_whitespace() {
            if let Some(v) = part.strip_prefix("python=") {
                python = Some(v.to_string());
            } else if let Some(v) = part.strip_prefix("platform=") {
                platform = Some(v.to_string());
            }
        }
        return Some((python?, platform?));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_sorted_with_hashes_and_via() {
        let text = render(
            &["generated".to_string(), String::new()],
            &[
                LockedPackage {
                    name: "zeta".into(),
                    version: "1.0".into(),
                    hashes: vec!["sha256:bb".into(), "sha256:aa".into()],
                    via: vec!["-r in.txt".into()],
                },
                LockedPackage {
                    name: "alpha".into(),
                    version: "2.0".into(),
                    hashes: vec!["sha256:cc".into()],
                    via: vec!["zeta".into(), "beta".into()],
                },
            ],
        );
        insta::assert_snapshot!(text, @r"
        # generated
        #
        alpha==2.0 \
            --hash=sha256:cc
            # via
            #   beta
            #   zeta
        zeta==1.0 \
            --hash=sha256:aa \
            --hash=sha256:bb
            # via -r in.txt
        ");
    }
}
