//! The checks on CI configuration: the audit (job-time installs: rules one
//! per file behind a registry, findings, policy, reports), tether (every
//! test file is run by a CI step) and steps (stable, unique step keys).
//! Each is a module with its `cfg.rs`: its table of layerlock.toml, its
//! keys and what a left-out key means. Every CI file they see comes
//! through the walker (`layerlock-walk`); tether lists test files itself
//! (`git ls-files`, names only).

mod audit;
mod census;
mod finding;
mod install;
mod policy;
mod pretty;
mod pytest;
mod report;
mod rules;
mod steps;
mod tether;

pub use audit::cfg::AuditConfig;
pub use audit::{ScanResult, scan};
pub use finding::{Finding, Location, Severity, UnknownSeverity};
pub use install::{Class, Install, classify};
pub use layerlock_walk::{
    Arg, CommandSite, Container, FileError, PathMap, PathMapError, Reach, RequirementFiles,
    ScanOptions, SourceLines, Via, Visitor, pipelines, strip_wrappers, unwrap, walk,
};
pub use policy::{
    AllowEntry, Excused, PolicyError, Sorted, Stale, apply, baseline, parse_allowlist,
};
pub use pytest::{Selection, fnmatch, selection};
pub use report::{Coverage, github, json, rule_list, sarif, text};
pub use rules::{Rule, RuleId, RuleSelector, UnknownRuleId, registry};
pub use steps::cfg::StepsConfig;
pub use steps::{StepInfo, StepKind, StepProblem, StepsReport, check_steps};
pub use tether::cfg::{TetherConfig, targets as tether_targets};
pub use tether::inventory::inventory;
pub use tether::{
    NotChecked, StaleEntry, StepRun, TetherOptions, TetherReport, check as check_tether,
    collect as collect_runs, diagnose, explain, not_checked, parse_tether_allowlist,
};
