//! The audit rules: small units behind one trait, listed in one registry.
//! Rules see one command at a time and never read policy.

use layerlock_walk::CommandSite;

use crate::finding::FindingBuilder;

pub trait Rule: Sync {
    fn id(&self) -> RuleId;
    fn description(&self) -> &'static str;
    /// Findings for one command.
    fn check(&self, site: &CommandSite<'_>) -> Vec<FindingBuilder>;
}

mod id;
mod image_build_install;
mod install;
mod job_time_install;

pub use id::{RuleId, RuleSelector, UnknownRuleId};
use install::install_finding;

/// Every rule, in a fixed order.
pub fn registry() -> &'static [&'static dyn Rule] {
    &[
        &job_time_install::JobTimeInstall,
        &image_build_install::ImageBuildInstall,
    ]
}

/// Findings the scanner itself makes, listed so their ids are stable too.
/// (Unparsable files go to the report's `errors`, stale allowlist entries
/// to its `stale` list: neither is a finding.)
pub const SCANNER_RULES: &[(RuleId, &str)] = &[
    (
        RuleId::CiNotRead,
        "A file of a CI system the audit does not read (Jenkins, CircleCI, Azure Pipelines, AppVeyor, Travis CI, …): the installs its jobs run are not checked",
    ),
    (
        RuleId::NotFollowed,
        "A command runs further commands the audit could not read (a Python program that starts processes, a recipe no rule makes, a goal known only at run time)",
    ),
    (
        RuleId::ScriptNotFound,
        "A CI command calls a shell script that is not in the scanned tree",
    ),
    (
        RuleId::UnexplainedInstall,
        "An install-looking line in a CI file, image, recipe or script that no finding accounts for: the census's check on the walk says why it was not followed",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// `--list-rules` (snapshotted by the binary's tests) is the list users
    /// and allowlists go by: every id is on it, once.
    #[test]
    fn the_rule_list_names_every_rule_id_once() {
        let mut listed: Vec<RuleId> = crate::rule_list().iter().map(|(id, _)| *id).collect();
        listed.sort();
        assert_eq!(listed, RuleId::ALL);
    }
}
