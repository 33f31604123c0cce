//! `image-build-install`: an image build installs Python packages without
//! a hash-pinned lock. Reported apart from job-time installs, lower severity.

use layerlock_ci::Phase;
use layerlock_walk::CommandSite;

use super::{Rule, RuleId, install_finding};
use crate::finding::{FindingBuilder, Severity};
use crate::install::Class;

/// Installs while building an image.
pub(crate) struct ImageBuildInstall;

impl Rule for ImageBuildInstall {
    fn id(&self) -> RuleId {
        RuleId::ImageBuildInstall
    }

    fn description(&self) -> &'static str {
        "An image build installs Python packages without a hash-pinned lock"
    }

    fn check(&self, site: &CommandSite<'_>) -> Vec<FindingBuilder> {
        if site.phase != Phase::ImageBuild {
            return Vec::new();
        }
        install_finding(self.id(), site, |class| match class {
            Class::Unpinned => Severity::Medium,
            Class::MayResolve | Class::RunTime | Class::Pinned => Severity::Low,
            Class::HashLocked => Severity::Info,
        })
    }
}
