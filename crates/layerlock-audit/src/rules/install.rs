//! The finding both install rules make: the command classified, at its
//! place, with a severity that depends on the class.

use layerlock_walk::CommandSite;

use super::RuleId;
use crate::finding::{FindingBuilder, Severity};
use crate::install::{Class, classify};

pub(crate) fn install_finding(
    rule: RuleId,
    site: &CommandSite<'_>,
    severity: fn(Class) -> Severity,
) -> Vec<FindingBuilder> {
    let Some(install) = classify(site.args, site.files) else {
        return Vec::new();
    };
    vec![
        FindingBuilder::new(rule, severity(install.class), site.location.clone())
            .class(install.class)
            .command(site.text)
            .message(format!(
                "{} at {}: {} ({})",
                install.tool,
                if rule == RuleId::JobTimeInstall {
                    "job time"
                } else {
                    "image build"
                },
                install.class.as_str(),
                install.why
            )),
    ]
}
