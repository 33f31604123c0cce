//! `[steps]` of layerlock.toml: the table as written.

use serde::Deserialize;

/// `[steps]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct StepsConfig {
    /// The files or folders of one pipeline.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Pipelines checked apart (keys are unique within each); overrides
    /// the `.buildkite/ci_config*.yaml` discovery.
    #[serde(default)]
    pub pipelines: Vec<String>,
    /// Keys defined by pipelines not checked, which `depends_on` may name.
    #[serde(default)]
    pub external_keys: Vec<String>,
    pub no_groups: Option<bool>,
}

impl StepsConfig {
    /// The table's keys, as a config file spells them.
    pub const KEYS: &[&str] = &["paths", "pipelines", "external-keys", "no-groups"];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_reads_its_keys_and_refuses_others() {
        let steps: StepsConfig =
            toml::from_str("pipelines = [\"a.yaml\", \"b.yaml\"]\nno-groups = true\n").unwrap();
        assert_eq!(steps.pipelines.len(), 2);
        assert_eq!(steps.no_groups, Some(true));
        assert!(toml::from_str::<StepsConfig>("external_keys = []\n").is_err());
    }
}
