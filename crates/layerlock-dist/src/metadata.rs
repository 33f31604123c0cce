//! Core metadata (the `METADATA` file of a wheel): the fields resolution needs.

use std::str::FromStr;

use uv_normalize::{ExtraName, PackageName};
use uv_pep440::{Version, VersionSpecifiers};
use uv_pep508::{Requirement, VerbatimUrl};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    #[error("METADATA has no `{0}` field")]
    Missing(&'static str),
    #[error("METADATA field `{field}` is invalid: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    #[error("METADATA is not UTF-8")]
    NotUtf8,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreMetadata {
    pub name: PackageName,
    pub version: Version,
    pub requires_dist: Vec<Requirement<VerbatimUrl>>,
    pub requires_python: Option<VersionSpecifiers>,
    pub provides_extra: Vec<ExtraName>,
    /// `Requires-Dist` lines that could not be read, kept for warnings.
    pub unreadable: Vec<String>,
}

impl CoreMetadata {
    /// Parse the header part of a METADATA file (RFC 822 style fields up to
    /// the first blank line; continuation lines start with whitespace).
    pub fn parse(bytes: &[u8]) -> Result<Self, MetadataError> {
        let text = std::str::from_utf8(bytes).map_err(|_| MetadataError::NotUtf8)?;
        let mut fields: Vec<(String, String)> = Vec::new();
        for line in text.lines() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.is_empty() {
                break;
            }
            if line.starts_with([' ', '\t']) {
                if let Some((_, value)) = fields.last_mut() {
                    value.push(' ');
                    value.push_str(line.trim());
                }
                continue;
            }
            if let Some((key, value)) = line.split_once(':') {
                fields.push((key.trim().to_ascii_lowercase(), value.trim().to_string()));
            }
        }
        let get = |key: &str| {
            fields
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        let name = get("name").ok_or(MetadataError::Missing("Name"))?;
        let name = PackageName::from_str(name).map_err(|e| MetadataError::Invalid {
            field: "Name",
            message: e.to_string(),
        })?;
        let version = get("version").ok_or(MetadataError::Missing("Version"))?;
        let version = Version::from_str(version).map_err(|e| MetadataError::Invalid {
            field: "Version",
            message: e.to_string(),
        })?;
        let requires_python = match get("requires-python") {
            Some(v) if !v.is_empty() => {
                Some(
                    VersionSpecifiers::from_str(v).map_err(|e| MetadataError::Invalid {
                        field: "Requires-Python",
                        message: e.to_string(),
                    })?,
                )
            }
            _ => None,
        };
        let mut requires_dist = Vec::new();
        let mut unreadable = Vec::new();
        for (_, value) in fields.iter().filter(|(k, _)| k == "requires-dist") {
            // The marker parser recurses per parenthesis: hostile METADATA
            // nesting thousands deep must not overflow the stack.
            if paren_depth(value) > MAX_MARKER_DEPTH {
                unreadable.push(value.clone());
                continue;
            }
            match Requirement::<VerbatimUrl>::from_str(value) {
                Ok(req) => requires_dist.push(req),
                Err(_) => unreadable.push(value.clone()),
            }
        }
        let provides_extra = fields
            .iter()
            .filter(|(k, _)| k == "provides-extra")
            .filter_map(|(_, v)| ExtraName::from_str(v).ok())
            .collect();
        Ok(Self {
            name,
            version,
            requires_dist,
            requires_python,
            provides_extra,
            unreadable,
        })
    }
}

/// Deepest parenthesis nesting read in a requirement's markers: the marker
/// parser recurses per parenthesis, so deeper hostile input is refused
/// before it is parsed (requirements files and METADATA alike).
pub const MAX_MARKER_DEPTH: usize = 64;

/// How deep parentheses nest in `text`.
pub fn paren_depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deeply_nested_markers_are_unreadable_not_a_stack_overflow() {
        let deep = format!(
            "Metadata-Version: 2.1\nName: a\nVersion: 1\nRequires-Dist: b; {}python_version > '3'{}\n",
            "(".repeat(10_000),
            ")".repeat(10_000)
        );
        let meta = CoreMetadata::parse(deep.as_bytes()).expect("parses");
        assert!(meta.requires_dist.is_empty());
        assert_eq!(meta.unreadable.len(), 1);
    }

    #[test]
    fn parses_fields_and_continuations() {
        let meta = CoreMetadata::parse(
            b"Metadata-Version: 2.1\nName: Foo_Bar\nVersion: 1.0\nRequires-Python: >=3.8\nRequires-Dist: baz>=1;\n  extra == 'x'\nRequires-Dist: qux\nProvides-Extra: x\n\nRequires-Dist: body-is-ignored\n",
        )
        .unwrap();
        assert_eq!(meta.name.as_ref(), "foo-bar");
        assert_eq!(meta.requires_dist.len(), 2);
        assert_eq!(meta.provides_extra.len(), 1);
        assert!(meta.requires_python.is_some());
    }
}
