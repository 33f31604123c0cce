//! Rule ids: the stable kebab-case names reports, SARIF, inline ignores and
//! allowlist entries use. Renaming one breaks every allowlist that names it.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// Every rule id, registry rules and scanner notes alike.
///
/// Variants are declared in the order of their names, so the derived `Ord`
/// sorts findings as the names do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RuleId {
    /// A file of a CI system the audit does not read.
    CiNotRead,
    /// An image build installs packages without a hash-pinned lock.
    ImageBuildInstall,
    /// A CI job installs packages when it runs.
    JobTimeInstall,
    /// A command runs further commands the audit could not read.
    NotFollowed,
    /// A CI command calls a script that is not in the scanned tree.
    ScriptNotFound,
    /// An install-looking line the census found that no finding accounts
    /// for.
    UnexplainedInstall,
}

impl RuleId {
    /// Every id, in the order of their names.
    pub const ALL: [Self; 6] = [
        Self::CiNotRead,
        Self::ImageBuildInstall,
        Self::JobTimeInstall,
        Self::NotFollowed,
        Self::ScriptNotFound,
        Self::UnexplainedInstall,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::CiNotRead => "ci-not-read",
            Self::ImageBuildInstall => "image-build-install",
            Self::JobTimeInstall => "job-time-install",
            Self::NotFollowed => "not-followed",
            Self::ScriptNotFound => "script-not-found",
            Self::UnexplainedInstall => "unexplained-install",
        }
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`, so `{id:<22}` lines rule lists up.
        f.pad(self.as_str())
    }
}

/// A name that is no rule's id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown rule id `{0}`; `layerlock audit --list-rules` lists them")]
pub struct UnknownRuleId(pub String);

impl FromStr for RuleId {
    type Err = UnknownRuleId;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|id| id.as_str() == text)
            .ok_or_else(|| UnknownRuleId(text.to_string()))
    }
}

/// The rules an allowlist entry or inline ignore names: one, or `*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleSelector {
    /// `*`: every rule.
    Any,
    Rule(RuleId),
}

impl RuleSelector {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Any => "*",
            Self::Rule(id) => id.as_str(),
        }
    }

    pub fn matches(self, rule: RuleId) -> bool {
        match self {
            Self::Any => true,
            Self::Rule(id) => id == rule,
        }
    }
}

impl fmt::Display for RuleSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl FromStr for RuleSelector {
    type Err = UnknownRuleId;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "*" => Ok(Self::Any),
            _ => text.parse().map(Self::Rule),
        }
    }
}

impl Serialize for RuleSelector {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_sort_as_written() {
        for id in RuleId::ALL {
            assert_eq!(id.as_str().parse::<RuleId>(), Ok(id));
            assert_eq!(
                serde_json::to_value(id).ok(),
                Some(serde_json::Value::from(id.as_str()))
            );
            assert_eq!(id.to_string(), id.as_str());
        }
        // Findings at one place sort by rule id; the derived order must be
        // the order of the names, as it was when ids were strings.
        let mut by_name = RuleId::ALL;
        by_name.sort_by_key(|id| id.as_str());
        assert_eq!(by_name, RuleId::ALL);
        let mut by_ord = RuleId::ALL;
        by_ord.sort();
        assert_eq!(by_ord, RuleId::ALL);
    }

    #[test]
    fn selectors_name_one_rule_or_all() {
        assert_eq!("*".parse(), Ok(RuleSelector::Any));
        assert_eq!(
            "job-time-install".parse(),
            Ok(RuleSelector::Rule(RuleId::JobTimeInstall))
        );
        assert_eq!(
            "no-such-rule"
                .parse::<RuleSelector>()
                .map_err(|e| e.to_string()),
            Err("unknown rule id `no-such-rule`; `layerlock audit --list-rules` lists them".into())
        );
        assert!(RuleSelector::Any.matches(RuleId::ScriptNotFound));
        assert!(!RuleSelector::Rule(RuleId::JobTimeInstall).matches(RuleId::ImageBuildInstall));
    }
}
