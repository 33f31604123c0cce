//! The audit rules: small units behind one trait, listed in one registry.
//! Rules see one command at a time and never read policy.

use layerlock_ci::Phase;

use crate::finding::{FindingBuilder, Location, Severity};
use crate::install::{Arg, Class, RequirementFiles, classify};

/// What a rule sees of one command.
pub struct CommandSite<'a> {
    pub args: &'a [Arg],
    pub text: &'a str,
    pub location: Location,
    pub job: Option<&'a str>,
    pub phase: Phase,
    pub via: &'a [String],
    pub files: &'a dyn RequirementFiles,
    /// The directory the command runs in (mapped into the tree), if known.
    pub cwd: Option<&'a std::path::Path>,
    /// The scan root.
    pub root: &'a std::path::Path,
    /// The previous command of the same script (for `find … | xargs …`).
    pub previous: Option<&'a [Arg]>,
    /// How many `--path-map` entries are in force.
    pub mapped_paths: usize,
}

pub trait Rule: Sync {
    fn id(&self) -> &'static str;
    fn description(&self) -> &'static str;
    /// Findings for one command.
    fn check(&self, site: &CommandSite<'_>) -> Vec<FindingBuilder>;
}

/// Installs in CI jobs: they resolve at job time.
struct JobTimeInstall;

/// Installs while building an image: reported apart, lower severity.
struct ImageBuildInstall;

fn install_finding(
    rule: &'static str,
    site: &CommandSite<'_>,
    severity: fn(Class) -> Severity,
) -> Vec<FindingBuilder> {
    let Some(install) = classify(site.args, site.files) else {
        return Vec::new();
    };
    vec![
        FindingBuilder::new(rule, severity(install.class), site.location.clone())
            .class(install.class)
            .job(site.job.map(str::to_string))
            .command(site.text)
            .via(site.via.to_vec())
            .message(format!(
                "{} at {}: {} ({})",
                install.tool,
                if rule == "job-time-install" {
                    "job time"
                } else {
                    "image build"
                },
                install.class.as_str(),
                install.why
            )),
    ]
}

impl Rule for JobTimeInstall {
    fn id(&self) -> &'static str {
        "job-time-install"
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
            Class::Pinned => Severity::Medium,
            Class::HashLocked => Severity::Low,
        })
    }
}

impl Rule for ImageBuildInstall {
    fn id(&self) -> &'static str {
        "image-build-install"
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
            Class::Pinned => Severity::Low,
            Class::HashLocked => Severity::Info,
        })
    }
}

/// Every rule, in a fixed order.
pub fn registry() -> Vec<&'static dyn Rule> {
    vec![&JobTimeInstall, &ImageBuildInstall]
}

/// Findings the scanner itself makes, listed so their ids are stable too.
/// (Unparsable files go to the report's `errors`, stale allowlist entries
/// to its `stale` list: neither is a finding.)
pub const SCANNER_RULES: &[(&str, &str)] = &[(
    "script-not-found",
    "A CI command calls a shell script that is not in the scanned tree",
)];
