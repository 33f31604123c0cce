//! `[tether]` of layerlock.toml: the table as written, and what it means
//! when a key is left out.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::AuditConfig;

/// `[tether]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct TetherConfig {
    /// Folders of test files, relative to the root; none: `tests`.
    #[serde(default)]
    pub test_roots: Vec<String>,
    /// The CI files whose steps run tests; none: every pipeline found.
    #[serde(default)]
    pub pipelines: Vec<String>,
    pub default_working_dir: Option<String>,
    #[serde(default)]
    pub path_map: Vec<String>,
    pub allowlist: Option<String>,
}

impl TetherConfig {
    /// The table's keys, as a config file spells them.
    pub const KEYS: &[&str] = &[
        "test-roots",
        "pipelines",
        "default-working-dir",
        "path-map",
        "allowlist",
    ];

    /// The test roots: as configured, else `tests`.
    pub fn test_roots(&self) -> Vec<String> {
        if self.test_roots.is_empty() {
            vec!["tests".to_string()]
        } else {
            self.test_roots.clone()
        }
    }

    /// The path map to use and the table it comes from: this table's,
    /// else the audit's (both describe one CI).
    pub fn path_map<'a>(&'a self, audit: &'a AuditConfig) -> (&'a [String], &'static str) {
        if self.path_map.is_empty() {
            (&audit.path_map, "audit")
        } else {
            (&self.path_map, "tether")
        }
    }
}

/// The CI files tether reads under `root`: those `[tether] pipelines`
/// names (`configured`), else every Buildkite pipeline found (and loose
/// pipeline files), GitHub's workflows and GitLab's file; of these, the
/// ones that exist.
pub fn targets(root: &Path, configured: &[String]) -> Vec<PathBuf> {
    let pipelines = if configured.is_empty() {
        let discovered = crate::pipelines::discover(root);
        let mut found = crate::pipelines::all_paths(&discovered);
        found.extend(crate::pipelines::loose_files(root, &discovered));
        found.extend([
            ".github/workflows".to_string(),
            ".gitlab-ci.yml".to_string(),
        ]);
        found
    } else {
        configured.to_vec()
    };
    pipelines
        .iter()
        .map(|p| root.join(p))
        .filter(|p| p.exists())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn left_out_keys_fall_back_to_tests_and_the_audits_path_map() {
        let tether: TetherConfig = toml::from_str("pipelines = [\".buildkite\"]\n").unwrap();
        assert_eq!(tether.test_roots(), ["tests"]);
        let audit = AuditConfig {
            path_map: vec!["/w=.".to_string()],
            ..AuditConfig::default()
        };
        assert_eq!(
            tether.path_map(&audit),
            (&["/w=.".to_string()][..], "audit")
        );
        let own: TetherConfig =
            toml::from_str("test-roots = [\"t\"]\npath-map = [\"/x=.\"]\n").unwrap();
        assert_eq!(own.test_roots(), ["t"]);
        assert_eq!(own.path_map(&audit).1, "tether");
        assert!(toml::from_str::<TetherConfig>("test-root = [\"t\"]\n").is_err());
    }

    #[test]
    fn targets_are_the_configured_files_that_exist_else_those_found() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".github/workflows")).unwrap();
        std::fs::create_dir_all(root.join("ci")).unwrap();
        std::fs::write(root.join("ci/p.yml"), "steps: []\n").unwrap();
        let configured = ["ci/p.yml".to_string(), "ci/gone.yml".to_string()];
        assert_eq!(targets(root, &configured), [root.join("ci/p.yml")]);
        assert_eq!(targets(root, &[]), [root.join(".github/workflows")]);
    }
}
