//! Findings: built with a required primary location, carrying the job and
//! the chain of scripts that led to them (set for each path that reaches
//! the command, after the rules ran once on it).

use std::fmt;
use std::rc::Rc;
use std::str::FromStr;

use serde::Serialize;

use crate::install::Class;
use crate::rules::RuleId;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Low,
    Medium,
    High,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// A name that is no severity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown severity `{0}`; the severities are info, low, medium and high")]
pub struct UnknownSeverity(pub String);

impl FromStr for Severity {
    type Err = UnknownSeverity;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(match text {
            "info" => Self::Info,
            "low" => Self::Low,
            "medium" => Self::Medium,
            "high" => Self::High,
            _ => return Err(UnknownSeverity(text.to_string())),
        })
    }
}

pub use layerlock_walk::{Location, Via};

/// One finding for one path to its command. A chain reached by thousands
/// of pipelines repeats each of its findings for every job: what does not
/// depend on the path (command, message) and the job's name are shared,
/// not copied. Reports (`report.rs`) say how it is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub rule: RuleId,
    pub severity: Severity,
    pub class: Option<Class>,
    pub location: Location,
    pub job: Option<Rc<str>>,
    pub command: Rc<str>,
    pub message: Rc<str>,
    /// How the command was reached: `path:line` of each call, outermost
    /// first (shared by the findings of one path).
    pub via: Via,
}

/// Builds a finding; a primary location is required up front.
pub struct FindingBuilder {
    finding: Finding,
}

impl FindingBuilder {
    pub fn new(rule: RuleId, severity: Severity, location: Location) -> Self {
        Self {
            finding: Finding {
                rule,
                severity,
                class: None,
                location,
                job: None,
                command: "".into(),
                message: "".into(),
                via: Via::default(),
            },
        }
    }

    pub fn class(mut self, class: Class) -> Self {
        self.finding.class = Some(class);
        self
    }

    pub fn command(mut self, command: &str) -> Self {
        self.finding.command = command.into();
        self
    }

    pub fn message(mut self, message: String) -> Self {
        self.finding.message = message.into();
        self
    }

    pub fn build(self) -> Finding {
        self.finding
    }
}
