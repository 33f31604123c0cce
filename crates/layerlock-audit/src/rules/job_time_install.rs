//! `job-time-install`: a CI job installs Python packages when it runs, so
//! every run may resolve different versions.

use layerlock_ci::Phase;
use layerlock_walk::CommandSite;

use super::{Rule, RuleId, install_finding};
use crate::finding::{FindingBuilder, Severity};
use crate::install::Class;

/// Installs in CI jobs: they resolve at job time.
pub(crate) struct JobTimeInstall;

impl Rule for JobTimeInstall {
    fn id(&self) -> RuleId {
        RuleId::JobTimeInstall
    }

    fn description(&self) -> &'static str {
        "A CI job installs Python packages when it runs: every run may resolve different versions"
    }

    fn check(&self, site: &CommandSite<'_>) -> Vec<FindingBuilder> {
        if site.phase != Phase::JobTime {
            return Vec::new();
        }
        install_finding(self.id(), site, |class| match class {
            Class::Unpinned => Severity::High,
            Class::MayResolve | Class::RunTime | Class::Pinned => Severity::Medium,
            Class::HashLocked => Severity::Low,
        })
    }
}
