//! `[audit]` of layerlock.toml: the table as written. The command line
//! goes over it (`--allowlist`, `--min-severity`, …); merging the two is
//! the binary's settings.

use serde::Deserialize;

use crate::finding::Severity;

/// `[audit]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct AuditConfig {
    /// `CONTAINER=REPO` mappings, relative to the config's folder.
    #[serde(default)]
    pub path_map: Vec<String>,
    pub allowlist: Option<String>,
    pub min_severity: Option<Severity>,
    /// Where CI jobs run when a step does not say (a container path).
    pub default_working_dir: Option<String>,
}

impl AuditConfig {
    /// The table's keys, as a config file spells them (unknown keys are
    /// errors that name the nearest of these).
    pub const KEYS: &[&str] = &[
        "path-map",
        "allowlist",
        "min-severity",
        "default-working-dir",
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_reads_its_keys_and_refuses_others() {
        let table: AuditConfig =
            toml::from_str("min-severity = \"medium\"\npath-map = [\"/w=.\"]\n").unwrap();
        assert_eq!(table.min_severity, Some(Severity::Medium));
        assert_eq!(table.path_map, ["/w=."]);
        assert!(toml::from_str::<AuditConfig>("min-severty = \"high\"\n").is_err());
        assert!(toml::from_str::<AuditConfig>("min-severity = \"urgent\"\n").is_err());
    }
}
